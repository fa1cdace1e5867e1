/*
 * gang.c -- gangs over the cluster's team (pagehome.h, ph_cluster_gang_*):
 * the threads of every rank, numbered rank * team + thread, split into
 * gangs of contiguous numbers, recursively (paper 002 section 3).
 *
 * The gang records and the meeting of a gang's threads inside one rank
 * are base/gang.h's, as in NUMA mode.  What this file adds is the part
 * between ranks, run by the last thread of the rank to arrive (the hook
 * of base/gang.h) and carried out by the service thread
 * (PH_DSM_REQ_GANG):
 *
 *   1. RELEASE: everything this rank wrote goes home and its write
 *      notices go into the job's notice log -- exactly what a lock release
 *      does (ph_dsm_release_all), so a later lock acquire anywhere sees
 *      them too (lock transitivity survives gangs);
 *   2. MEET: the gang's ranks are the contiguous ranks holding its
 *      threads; each sends its record (call, count, gang shape) to the
 *      gang's first rank, which compares them and answers every member
 *      with the verdict (point to point, tag PH_GANG_TAG, waits that serve
 *      faults meanwhile: no blocking MPI call);
 *   3. ACQUIRE: each member reads the notice log from where it last read
 *      and drops its copies of pages other ranks wrote (ph_dsm_read_notices).
 *
 * A gang of the whole team (the top split and the last join: every thread
 * of every rank is in the call) is a cluster barrier instead of 1 and 3:
 * after the meeting (2) the ranks exchange their write notices and flush
 * as a barrier does (sync.c), so a page only one rank wrote goes home
 * whole rather than as exact byte runs, home pages written at every
 * interval stay untracked instead of being write-protected at every
 * release, and homes may move.  Only there may a page go whole: in a gang
 * of some ranks, another gang may write other bytes of the same page at
 * the same time (its own data: race free), which a whole page would undo
 * at the home.
 *
 * THE CONSISTENCY CONTRACT (stated in pagehome.h).  Writes before a gang
 * synchronisation are visible after it to every thread of the gang: their
 * diffs are home before the first rank answers, and each member drops the
 * copies the log names before its threads go on.  The notices reach only
 * the log and the gang's members read it; a rank of another gang keeps
 * its copies until it synchronises itself (its own gang synchronisation
 * reads the same log, so it may drop copies another gang wrote: a
 * refetch, never a stale read; a lock acquire reads the log; a cluster
 * barrier exchanges every page written in the interval anyway).  So a
 * program whose gangs touch disjoint data between split and join, and
 * share data only across a join or a cluster barrier, is data-race free
 * and gets the single-process result.  A gang living on one rank needs
 * none of this: its threads share the rank's memory, and its barrier is
 * the meeting point alone.
 *
 * Two gangs in flight on one rank (threads of the rank in two gangs) are
 * served one after the other by the service thread; consecutive gangs
 * share at most one rank (numbers are contiguous), so the waits of their
 * first ranks form a chain, never a cycle.
 */
#include "cluster/cluster.h"

#include "base/error.h"
#include "base/gang.h"
#include "config/options.h"

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern int omp_get_thread_num(void) __attribute__((weak));
extern int omp_get_num_threads(void) __attribute__((weak));
extern int omp_in_parallel(void) __attribute__((weak));

#define PH_GANG_TAG 0x6a6e
#define GANG_MAGIC 0x67616e67          /* "gang" */

static ph_gang_root croot;
static pthread_once_t croot_once = PTHREAD_ONCE_INIT;
static int croot_ok;
static _Thread_local ph_gang *ccur;

static const char *const cgang_names[PH_GANG_KINDS] = {
    "ph_cluster_gang_split", "ph_cluster_gang_barrier",
    "ph_cluster_gang_join"};

static void croot_init(void)
{
    croot_ok = ph_meet_init(&croot.meet) == 0;
}

static int in_team(void)
{
    return omp_in_parallel && omp_get_num_threads && omp_get_thread_num &&
           omp_in_parallel();
}

static ph_dsm *gang_ctx(const char *who)
{
    ph_dsm *c = ph_dsm_g;
    if (!c || !atomic_load(&c->running)) {
        ph_fail(EINVAL, "%s: cluster mode is not running (call "
                "ph_cluster_init first)", who);
        return NULL;
    }
    return c;
}

/* ---- between ranks (the hook; the service thread) -------------------- */

static int gang_remote(void *arg, const ph_gang_sync *s)
{
    ph_dsm *c = arg;
    ph_dsm_req r = {.op = PH_DSM_REQ_GANG, .addr = s};
    return ph_dsm_call(c, &r) < 0 ? -1 : 0;
}

enum { H_MAGIC, H_KIND, H_ARG, H_FIRST, H_SIZE, H_LEVEL, H_TEAM, H_N };
enum { V_ERR, V_RANK, V_KIND, V_ARG, V_N };

static const char *kind_text(int64_t k)
{
    return k >= 0 && k < PH_GANG_KINDS ? cgang_names[k]
                                       : "a mismatched gang call";
}

void ph_dsm_do_gang(ph_dsm *c, ph_dsm_req *r)
{
    const ph_gang_sync *s = r->addr;
    int team = s->team / c->nranks;
    if (team < 1 || s->team != team * c->nranks) {
        ph_dsm_req_fail(r, EPROTO, "%s: %d threads in the cluster's team "
                        "are not %d ranks x the same team", kind_text(s->kind),
                        s->team, c->nranks);
        return;
    }
    int r0 = s->first / team, r1 = (s->first + s->size - 1) / team;
    /* the whole team: every thread of every rank is here, as in a barrier */
    int whole = s->first == 0 && s->size == s->team && s->kind >= 0;
    uint64_t t0 = ph_now_ns();
    c->st.gang_syncs++;
    if (s->kind >= 0 && !whole)
        ph_dsm_release_all(c);
    int64_t h[H_N] = {GANG_MAGIC, s->kind, s->arg, s->first, s->size,
                      s->level, s->team};
    int64_t v[V_N] = {0, -1, 0, 0};
    MPI_Request q[2];
    int rc;
    if (c->rank == r0) {
        int n = r1 - r0;
        int64_t *in = malloc((size_t)n * H_N * sizeof *in);
        MPI_Request *rq = malloc((size_t)n * sizeof *rq);
        if (!in || !rq)
            ph_dsm_fatal(c, "a gang barrier: out of memory");
        for (int i = 0; i < n; i++) {
            rc = MPI_Irecv(in + (size_t)i * H_N, H_N, MPI_INT64_T, r0 + 1 + i,
                           PH_GANG_TAG, c->comm, &rq[i]);
            ph_dsm_mpi_check(c, rc, "MPI_Irecv (a gang barrier)", r0 + 1 + i);
        }
        for (int i = 0; i < n; i++)
            ph_dsm_wait_collective(c, &rq[i], "a gang barrier");
        for (int i = 0; i < n && !v[V_ERR]; i++) {
            const int64_t *o = in + (size_t)i * H_N;
            if (o[H_MAGIC] != GANG_MAGIC || o[H_FIRST] != h[H_FIRST] ||
                o[H_SIZE] != h[H_SIZE] || o[H_LEVEL] != h[H_LEVEL] ||
                o[H_TEAM] != h[H_TEAM] || o[H_KIND] != h[H_KIND] ||
                o[H_ARG] != h[H_ARG] || h[H_KIND] < 0) {
                v[V_ERR] = EPROTO;
                v[V_RANK] = r0 + 1 + i;
                v[V_KIND] = o[H_KIND];
                v[V_ARG] = o[H_ARG];
            }
        }
        for (int i = 0; i < n; i++) {
            rc = MPI_Isend(v, V_N, MPI_INT64_T, r0 + 1 + i, PH_GANG_TAG,
                           c->comm, &rq[i]);
            ph_dsm_mpi_check(c, rc, "MPI_Isend (a gang barrier)", r0 + 1 + i);
            c->st.bytes_sent += V_N * sizeof(int64_t);
        }
        for (int i = 0; i < n; i++)
            ph_dsm_wait_req(c, &rq[i], "MPI_Isend (a gang barrier)",
                            r0 + 1 + i);
        free(in);
        free(rq);
    } else {
        rc = MPI_Irecv(v, V_N, MPI_INT64_T, r0, PH_GANG_TAG, c->comm, &q[1]);
        ph_dsm_mpi_check(c, rc, "MPI_Irecv (a gang barrier)", r0);
        rc = MPI_Isend(h, H_N, MPI_INT64_T, r0, PH_GANG_TAG, c->comm, &q[0]);
        ph_dsm_mpi_check(c, rc, "MPI_Isend (a gang barrier)", r0);
        c->st.bytes_sent += H_N * sizeof(int64_t);
        ph_dsm_wait_req(c, &q[0], "MPI_Isend (a gang barrier)", r0);
        ph_dsm_wait_collective(c, &q[1], "a gang barrier");
    }
    if (v[V_ERR]) {
        char w0[96], w1[96];
        ph_dsm_req_fail(r, (int)v[V_ERR], "%s is in %s(%" PRId64 ") while "
                        "%s is in %s(%" PRId64 ") (threads %d-%d): every "
                        "thread of a gang makes the same gang calls in the "
                        "same order", ph_dsm_who(c, r0, w0, sizeof w0),
                        kind_text(h[H_KIND]), h[H_ARG],
                        ph_dsm_who(c, (int)v[V_RANK], w1, sizeof w1),
                        kind_text(v[V_KIND]), v[V_ARG], s->first,
                        s->first + s->size - 1);
        return;
    }
    if (whole) {
        /* the barrier's exchange (its own barrier_ns; the meeting's is
         * counted here) */
        c->st.barrier_ns += ph_now_ns() - t0;
        ph_dsm_gang_barrier(c, r);
        return;
    }
    ph_dsm_read_notices(c);
    c->st.barrier_ns += ph_now_ns() - t0;
    r->ret = 0;
}

/* ---- the calls ------------------------------------------------------- */

static int call_of(ph_gang_call *k, ph_dsm **cp, const char *who)
{
    ph_dsm *c = gang_ctx(who);
    if (!c)
        return -1;
    pthread_once(&croot_once, croot_init);
    if (!croot_ok)
        return ph_fail(ENOMEM, "%s: cannot create the team's meeting point",
                       who);
    int team = in_team() ? omp_get_num_threads() : 1;
    int t = in_team() ? omp_get_thread_num() : 0;
    memset(k, 0, sizeof *k);
    k->root = &croot;
    k->cur = &ccur;
    k->team = c->nranks * team;
    k->tid = c->rank * team + t;
    k->lo = c->rank * team;
    k->hi = k->lo + team;
    k->node = -1;
    k->timeout_ns = (uint64_t)ph_opt_int(PH_OPT_GANG_TIMEOUT_MS) * 1000000u;
    k->names = cgang_names;
    k->remote = gang_remote;
    k->remote_arg = c;
    if (cp)
        *cp = c;
    return 0;
}

int ph_cluster_gang_split(int count)
{
    ph_gang_call k;
    if (call_of(&k, NULL, "ph_cluster_gang_split") < 0)
        return -1;
    return ph_gang_split_do(&k, count, "ph_cluster_gang_split");
}

int ph_cluster_gang_join(void)
{
    ph_gang_call k;
    if (call_of(&k, NULL, "ph_cluster_gang_join") < 0)
        return -1;
    return ph_gang_join_do(&k, "ph_cluster_gang_join");
}

int ph_cluster_gang_barrier(void)
{
    ph_gang_call k;
    if (call_of(&k, NULL, "ph_cluster_gang_barrier") < 0)
        return -1;
    return ph_gang_barrier_do(&k, "ph_cluster_gang_barrier");
}

static int current(ph_gang_call *k, ph_gang_view *v, const char *who)
{
    if (call_of(k, NULL, who) < 0)
        return -1;
    return ph_gang_current(k, v, who);
}

int ph_cluster_gang_num(void)
{
    ph_gang_call k;
    ph_gang_view v;
    return current(&k, &v, "ph_cluster_gang_num") < 0 ? -1 : v.num;
}

int ph_cluster_gang_count(void)
{
    ph_gang_call k;
    ph_gang_view v;
    return current(&k, &v, "ph_cluster_gang_count") < 0 ? -1 : v.count;
}

int ph_cluster_gang_size(void)
{
    ph_gang_call k;
    ph_gang_view v;
    return current(&k, &v, "ph_cluster_gang_size") < 0 ? -1 : v.size;
}

int ph_cluster_gang_thread_num(void)
{
    ph_gang_call k;
    ph_gang_view v;
    return current(&k, &v, "ph_cluster_gang_thread_num") < 0
               ? -1
               : k.tid - v.first;
}

int ph_cluster_gang_level(void)
{
    ph_gang_call k;
    ph_gang_view v;
    return current(&k, &v, "ph_cluster_gang_level") < 0 ? -1 : v.level;
}

static int check_n(const char *who, long n, long *begin, long *end)
{
    if (!begin || !end)
        return ph_fail(EINVAL, "%s: begin or end is NULL", who);
    if (n < 0)
        return ph_fail(EINVAL, "%s: n is %ld", who, n);
    return 0;
}

int ph_cluster_gang_block(long n, long *begin, long *end)
{
    ph_gang_call k;
    ph_gang_view v;
    if (check_n("ph_cluster_gang_block", n, begin, end) < 0 ||
        current(&k, &v, "ph_cluster_gang_block") < 0)
        return -1;
    uint64_t b, e;
    ph_gang_block_of((uint64_t)n, v.first, v.size, k.team, &b, &e);
    *begin = (long)b;
    *end = (long)e;
    return 0;
}

int ph_cluster_gang_range(long n, long *begin, long *end)
{
    ph_gang_call k;
    ph_gang_view v;
    if (check_n("ph_cluster_gang_range", n, begin, end) < 0 ||
        current(&k, &v, "ph_cluster_gang_range") < 0)
        return -1;
    uint64_t b, e;
    ph_gang_share((uint64_t)n, v.size, k.tid - v.first, &b, &e);
    *begin = (long)b;
    *end = (long)e;
    return 0;
}

/* 1 when the calling thread's gang has threads on other ranks */
static int gang_spans(const char *who)
{
    ph_gang_call k;
    ph_gang_view v;
    if (current(&k, &v, who) < 0)
        return -1;
    return v.first < k.lo || v.first + v.size > k.hi;
}

int ph_cluster_gang_release(const void *addr, size_t bytes)
{
    int s = gang_spans("ph_cluster_gang_release");
    if (s < 0)
        return -1;
    if (!addr && bytes)
        return ph_fail(EINVAL, "ph_cluster_gang_release: NULL address");
    atomic_thread_fence(memory_order_release);
    return s ? ph_cluster_release(addr, bytes) : 0;
}

int ph_cluster_gang_acquire(const void *addr, size_t bytes)
{
    int s = gang_spans("ph_cluster_gang_acquire");
    if (s < 0)
        return -1;
    if (!addr && bytes)
        return ph_fail(EINVAL, "ph_cluster_gang_acquire: NULL address");
    atomic_thread_fence(memory_order_acquire);
    return s ? ph_cluster_acquire(addr, bytes) : 0;
}
