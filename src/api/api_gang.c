/*
 * api_gang.c -- the public entry points of gangs in one process
 * (pagehome.h, "Gangs"): the OpenMP team split into sub-teams,
 * recursively, with barriers of a gang only, for divide-and-conquer codes
 * (paper 002 section 3).  The mechanism is base/gang.h (meeting points of
 * the gang's threads: a mutex, a generation counter and a futex); here
 * the team is the current OpenMP team, every thread is local, and the
 * nodes the threads run on (ph_current_node at each split) give the gang
 * data's home (ph_gang_place).
 *
 * OpenMP is reached through weak references, as in the cluster layer:
 * libpagehome links no OpenMP runtime; without one, or outside a parallel
 * region, the team is the calling thread.
 */
#include "pagehome.h"

#include "base/error.h"
#include "base/gang.h"
#include "config/options.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

extern int omp_get_thread_num(void) __attribute__((weak));
extern int omp_get_num_threads(void) __attribute__((weak));
extern int omp_in_parallel(void) __attribute__((weak));

static ph_gang_root gang_root;
static pthread_once_t gang_once = PTHREAD_ONCE_INIT;
static int gang_root_ok;
static _Thread_local ph_gang *gang_cur;

static const char *const gang_names[PH_GANG_KINDS] = {
    "ph_gang_split", "ph_gang_barrier", "ph_gang_join"};

static void root_init(void)
{
    gang_root_ok = ph_meet_init(&gang_root.meet) == 0;
}

static int in_team(void)
{
    return omp_in_parallel && omp_get_num_threads && omp_get_thread_num &&
           omp_in_parallel();
}

/* The call's context; -1 when the library cannot start. */
static int call_of(ph_gang_call *k, int need_node)
{
    pthread_once(&gang_once, root_init);
    if (!gang_root_ok)
        return ph_fail(ENOMEM, "gangs: cannot create the team's meeting "
                       "point");
    memset(k, 0, sizeof *k);
    k->root = &gang_root;
    k->cur = &gang_cur;
    k->team = in_team() ? omp_get_num_threads() : 1;
    k->tid = in_team() ? omp_get_thread_num() : 0;
    k->lo = 0;
    k->hi = k->team;
    k->node = need_node ? ph_current_node() : -1;
    k->timeout_ns = (uint64_t)ph_opt_int(PH_OPT_GANG_TIMEOUT_MS) * 1000000u;
    k->names = gang_names;
    return 0;
}

PH_API int ph_gang_split(int count)
{
    ph_gang_call k;
    if (call_of(&k, 1) < 0)
        return -1;
    return ph_gang_split_do(&k, count, "ph_gang_split");
}

PH_API int ph_gang_join(void)
{
    ph_gang_call k;
    if (call_of(&k, 0) < 0)
        return -1;
    return ph_gang_join_do(&k, "ph_gang_join");
}

PH_API int ph_gang_barrier(void)
{
    ph_gang_call k;
    if (call_of(&k, 1) < 0)
        return -1;
    return ph_gang_barrier_do(&k, "ph_gang_barrier");
}

/* The calling thread's gang, for the queries. */
static int current(ph_gang_view *v, int *tid, const char *who)
{
    ph_gang_call k;
    if (call_of(&k, 0) < 0)
        return -1;
    *tid = k.tid;
    return ph_gang_current(&k, v, who);
}

PH_API int ph_gang_num(void)
{
    ph_gang_view v;
    int t;
    return current(&v, &t, "ph_gang_num") < 0 ? -1 : v.num;
}

PH_API int ph_gang_count(void)
{
    ph_gang_view v;
    int t;
    return current(&v, &t, "ph_gang_count") < 0 ? -1 : v.count;
}

PH_API int ph_gang_size(void)
{
    ph_gang_view v;
    int t;
    return current(&v, &t, "ph_gang_size") < 0 ? -1 : v.size;
}

PH_API int ph_gang_thread_num(void)
{
    ph_gang_view v;
    int t;
    return current(&v, &t, "ph_gang_thread_num") < 0 ? -1 : t - v.first;
}

PH_API int ph_gang_level(void)
{
    ph_gang_view v;
    int t;
    return current(&v, &t, "ph_gang_level") < 0 ? -1 : v.level;
}

PH_API int ph_gang_block(size_t n, size_t *begin, size_t *end)
{
    if (!begin || !end)
        return ph_fail(EINVAL, "ph_gang_block: begin or end is NULL");
    ph_gang_call k;
    ph_gang_view v;
    if (call_of(&k, 0) < 0 || ph_gang_current(&k, &v, "ph_gang_block") < 0)
        return -1;
    uint64_t b, e;
    ph_gang_block_of((uint64_t)n, v.first, v.size, k.team, &b, &e);
    *begin = (size_t)b;
    *end = (size_t)e;
    return 0;
}

PH_API int ph_gang_range(size_t n, size_t *begin, size_t *end)
{
    if (!begin || !end)
        return ph_fail(EINVAL, "ph_gang_range: begin or end is NULL");
    ph_gang_view v;
    int t;
    if (current(&v, &t, "ph_gang_range") < 0)
        return -1;
    uint64_t b, e;
    ph_gang_share((uint64_t)n, v.size, t - v.first, &b, &e);
    *begin = (size_t)b;
    *end = (size_t)e;
    return 0;
}

PH_API int ph_gang_place(void *addr, size_t bytes, int *status)
{
    ph_gang_view v;
    int t;
    if (current(&v, &t, "ph_gang_place") < 0)
        return -1;
    ph_placement_t pl;
    if (ph_placement_init(&pl, PH_POLICY_BLOCK) < 0)
        return -1;
    int nodes[64];
    int n = v.nnodes;
    memcpy(nodes, v.nodes, (size_t)n * sizeof *nodes);
    if (n > 0) {
        pl.nodes = nodes;
        pl.nnodes = n;
    }
    int rc = ph_place(addr, bytes, &pl, status);
    if (rc < 0)
        return ph_refail("ph_gang_place");
    return rc;
}

static int fence_args(const char *who, const void *addr, size_t bytes)
{
    if (!addr && bytes)
        return ph_fail(EINVAL, "%s: NULL address", who);
    if ((uintptr_t)addr + bytes < (uintptr_t)addr)
        return ph_fail(EINVAL, "%s: %p + %zu bytes wraps", who, addr, bytes);
    return 0;
}

PH_API int ph_gang_release(const void *addr, size_t bytes)
{
    if (fence_args("ph_gang_release", addr, bytes) < 0)
        return -1;
    atomic_thread_fence(memory_order_release);
    return 0;
}

PH_API int ph_gang_acquire(const void *addr, size_t bytes)
{
    if (fence_args("ph_gang_acquire", addr, bytes) < 0)
        return -1;
    atomic_thread_fence(memory_order_acquire);
    return 0;
}
