/*
 * cluster_api.c -- the public entry points of cluster mode (pagehome.h,
 * "Cluster mode"), run by application threads: argument checks, the local
 * half of the barrier, local serialisation of locks, work sharing; all the
 * rest is handed to the service thread (service.c).
 *
 * OpenMP is reached through weak references (omp_get_thread_num,
 * omp_get_num_threads, omp_in_parallel, omp_get_max_threads): the library
 * links no OpenMP runtime and works with libgomp or libomp; without one,
 * a rank is one thread.
 */
#include "cluster/cluster.h"
#include "cluster/schedule.h"

#include "base/error.h"
#include "base/log.h"
#include "config/options.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

extern int omp_get_thread_num(void) __attribute__((weak));
extern int omp_get_num_threads(void) __attribute__((weak));
extern int omp_in_parallel(void) __attribute__((weak));
extern int omp_get_max_threads(void) __attribute__((weak));

ph_dsm *ph_dsm_g;
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
volatile sig_atomic_t ph_dsm_forked;

/* In a child of fork() (not vfork or posix_spawn, which run no atfork
 * handler and share the parent's memory until exec): see cluster.h.  Only
 * async-signal-safe calls. */
static void forked_child(void)
{
    ph_dsm *c = ph_dsm_g;
    ph_dsm_forked = 1;
    atomic_store(&ph_dsm_kernel_prep, NULL);
    if (c && c->arena)
        mprotect(c->arena, c->arena_bytes, PROT_NONE);
}

static void atfork_register(void)
{
    pthread_atfork(NULL, NULL, forked_child);
}

static int team_size(void)
{
    if (omp_in_parallel && omp_get_num_threads && omp_in_parallel())
        return omp_get_num_threads();
    return 1;
}

static int team_thread(void)
{
    if (omp_in_parallel && omp_get_thread_num && omp_in_parallel())
        return omp_get_thread_num();
    return 0;
}

static ph_dsm *ctx(const char *who)
{
    ph_dsm *c = ph_dsm_g;
    if (!c || !atomic_load(&c->running)) {
        ph_fail(EINVAL, "%s: cluster mode is not running (call "
                "ph_cluster_init first)", who);
        return NULL;
    }
    return c;
}

/* ---- init / finalize ------------------------------------------------ */

static void read_tunables(ph_dsm *c)
{
    ph_dsm_sync_tunables();
    c->arena_bytes = (size_t)ph_opt_int(PH_OPT_CLUSTER_ARENA_SIZE);
    c->arena_bytes &= ~(PH_DSM_PAGE - 1);
    c->nlocks = (long)ph_opt_int(PH_OPT_CLUSTER_LOCKS);
    c->timeout_ms = (long)ph_opt_int(PH_OPT_CLUSTER_TIMEOUT_MS);
    c->fetch_pages = (long)ph_opt_int(PH_OPT_CLUSTER_FETCH_PAGES);
    c->fetch_max_pages = (long)ph_opt_int(PH_OPT_CLUSTER_FETCH_MAX_PAGES);
    if (c->fetch_max_pages < c->fetch_pages)
        c->fetch_max_pages = c->fetch_pages;
    c->whole_share = ph_opt_double(PH_OPT_CLUSTER_DIFF_WHOLE_SHARE);
    c->log_size = (uint64_t)ph_opt_int(PH_OPT_CLUSTER_NOTICE_LOG);
    c->spin_us = (long)ph_opt_int(PH_OPT_CLUSTER_SPIN_US);
    c->poll_us = (long)ph_opt_int(PH_OPT_CLUSTER_POLL_US);
    c->home_untrack_after = (long)ph_opt_int(PH_OPT_CLUSTER_HOME_UNTRACK_AFTER);
    c->home_recheck = (long)ph_opt_int(PH_OPT_CLUSTER_HOME_RECHECK);
    c->mig.on = ph_opt_bool(PH_OPT_CLUSTER_MIGRATE);
    c->write_predict = ph_opt_bool(PH_OPT_CLUSTER_WRITE_PREDICT);
    c->refresh = ph_opt_bool(PH_OPT_CLUSTER_REFRESH);
    c->pristine_on = ph_opt_bool(PH_OPT_CLUSTER_PRISTINE);
    c->mig.min_intervals =
        (uint32_t)ph_opt_int(PH_OPT_CLUSTER_MIGRATE_MIN_INTERVALS);
    c->cost.on = c->mig.on && ph_opt_bool(PH_OPT_CLUSTER_MIGRATE_READS);
    c->cost.melt_intervals =
        (uint32_t)ph_opt_int(PH_OPT_CLUSTER_MIGRATE_MELT_INTERVALS);
    snprintf(c->stats_file, sizeof c->stats_file, "%s",
             ph_opt_str(PH_OPT_CLUSTER_STATS_FILE));
}

/* The steps every rank takes alone; -1 with a message on failure. */
static int local_setup(ph_dsm *c)
{
    c->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (c->evfd < 0)
        return ph_fail(errno, "eventfd: %s", strerror(errno));
    const char *mech = ph_opt_str(PH_OPT_CLUSTER_FAULT);
    char why[256] = "";
    int map_wp = 0;
    if (!strcmp(mech, "sigsegv")) {
        c->fops = &ph_dsm_fault_sigsegv;
    } else if (ph_dsm_uffd_usable(why, sizeof why, &map_wp)) {
        c->fops = &ph_dsm_fault_uffd;
        /* read-only mappings in two steps on a kernel without
         * UFFDIO_CONTINUE_MODE_WP, or when asked (fault_uffd.c) */
        c->uffd_map_wp = map_wp && strcmp(mech, "userfaultfd-compat") != 0;
    } else if (!strcmp(mech, "userfaultfd") ||
               !strcmp(mech, "userfaultfd-compat")) {
        return ph_fail(ENOTSUP, "cluster_fault=%s: %s", mech, why);
    } else {
        ph_info("cluster: userfaultfd is not usable here (%s): page "
                "protection (sigsegv) catches the faults; system calls on "
                "shared memory other than read, write, fread, ... (which "
                "are wrapped) may fail with EFAULT", why);
        c->fops = &ph_dsm_fault_sigsegv;
    }
    if (ph_dsm_arena_create(c) < 0)
        return -1;
    c->logbuf = malloc((size_t)c->log_size * sizeof *c->logbuf);
    c->lock_word = calloc((size_t)c->nlocks, sizeof *c->lock_word);
    c->lock_holder = calloc((size_t)c->nlocks, sizeof *c->lock_holder);
    if (!c->logbuf || !c->lock_word || !c->lock_holder)
        return ph_fail(ENOMEM, "out of memory");
    return ph_dsm_coherence_init(c);
}

/* Every rank learns whether all succeeded; the failing rank's message is
 * broadcast to the others.  0 when all did. */
static int agree(ph_dsm *c, int ok, char *msg)
{
    int first = ok ? c->nranks : c->rank, lowest = c->nranks;
    MPI_Allreduce(&first, &lowest, 1, MPI_INT, MPI_MIN, c->comm);
    if (lowest == c->nranks)
        return 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", msg);
    MPI_Bcast(buf, sizeof buf, MPI_CHAR, lowest, c->comm);
    if (lowest != c->rank) {
        char who[96];
        snprintf(msg, 256, "%s failed: %.150s", ph_dsm_who(c, lowest, who,
                                                        sizeof who), buf);
    }
    return -1;
}

static void teardown(ph_dsm *c)
{
    if (c->fops)
        c->fops->fini(c);
    ph_dsm_arena_destroy(c);
    ph_dsm_coherence_fini(c);
    if (c->evfd >= 0)
        close(c->evfd);
    free(c->logbuf);
    free(c->lock_holder);
    free((void *)c->lock_word);
    free(c->hosts);
    for (size_t i = 0; i < c->ranges.n; i++) {
        ph_dsm_alloc *a = c->ranges.r[i].data;
        ph_dsm_placement_release(&a->pl);
        free(a);
    }
    ph_dsm_ranges_destroy(&c->ranges);
    ph_dsm_stats_free(c);
    free(c->last_segs);
    pthread_mutex_destroy(&c->qlock);
}

int ph_cluster_init(int *argc, char ***argv)
{
    pthread_mutex_lock(&init_lock);
    if (ph_dsm_g) {
        pthread_mutex_unlock(&init_lock);
        return ph_fail(EBUSY, "ph_cluster_init: already initialised");
    }
    ph_dsm *c = calloc(1, sizeof *c);
    if (!c) {
        pthread_mutex_unlock(&init_lock);
        return ph_fail(ENOMEM, "ph_cluster_init: out of memory");
    }
    c->memfd = -1;
    c->evfd = -1;
    c->uffd = -1;
    c->win = MPI_WIN_NULL;
    c->cwin = MPI_WIN_NULL;
    c->progress_req = MPI_REQUEST_NULL;
    pthread_mutex_init(&c->qlock, NULL);
    read_tunables(c);
    if (ph_dsm_transport_init(c, argc, argv) < 0) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s", ph_last_error());
        teardown(c);
        free(c);
        pthread_mutex_unlock(&init_lock);
        return ph_fail(errno ? errno : EIO, "%s", msg);
    }
    c->threads = omp_get_max_threads ? omp_get_max_threads() : 1;
    if (c->threads < 1)
        c->threads = 1;
    ph_dsm_ranges_init(&c->ranges, 0);
    char msg[256] = "";
    int err = 0;

    /* the same arena size everywhere */
    uint64_t mine = c->arena_bytes, lo = 0, hi = 0;
    MPI_Allreduce(&mine, &lo, 1, MPI_UINT64_T, MPI_MIN, c->comm);
    MPI_Allreduce(&mine, &hi, 1, MPI_UINT64_T, MPI_MAX, c->comm);
    if (lo != hi) {
        snprintf(msg, sizeof msg, "ph_cluster_init: the ranks have "
                 "different cluster_arena_size (%llu to %llu bytes): set "
                 "PAGEHOME_CLUSTER_ARENA_SIZE alike on every rank",
                 (unsigned long long)lo, (unsigned long long)hi);
        err = EINVAL;
        goto fail;
    }
    ph_dsm_ranges_init(&c->ranges, c->arena_bytes >> PH_DSM_PAGE_SHIFT);
    int ok = local_setup(c) == 0;
    if (!ok) {
        snprintf(msg, sizeof msg, "ph_cluster_init: %s", ph_last_error());
        err = errno ? errno : EIO;
    }
    if (agree(c, ok, msg) < 0) {
        err = err ? err : EIO;
        goto fail;
    }
    if (ph_dsm_arena_place(c) < 0) {
        snprintf(msg, sizeof msg, "ph_cluster_init: %s", ph_last_error());
        err = ENOMEM;
        goto fail;
    }
    ok = c->fops->init(c) == 0;
    if (!ok) {
        snprintf(msg, sizeof msg, "ph_cluster_init: %s fault mechanism: %s",
                 c->fops->name, ph_last_error());
        err = errno ? errno : EIO;
    }
    if (agree(c, ok, msg) < 0) {
        err = err ? err : EIO;
        goto fail;
    }
    ok = ph_dsm_windows_create(c) == 0;
    if (!ok) {
        snprintf(msg, sizeof msg, "%s", ph_last_error());
        err = EIO;
    }
    if (agree(c, ok, msg) < 0) {
        err = err ? err : EIO;
        goto fail;
    }
    /* the network cost model of home migration by cost (every rank
     * measures; the largest agreed) and whether every rank has it on */
    ph_dsm_netcost_measure(c, &c->cost.net);
    {
        int on = c->cost.on && c->cost.net.fetch_ns > 0, all_on = 0;
        MPI_Allreduce(&on, &all_on, 1, MPI_INT, MPI_MIN, c->comm);
        c->cost.on = all_on;
    }
    ph_dsm_describe_transport(c);
    ph_dsm_progress_start(c);
    if (ph_dsm_service_start(c) < 0 || ph_dsm_watchdog_start(c) < 0) {
        snprintf(msg, sizeof msg, "%s", ph_last_error());
        ph_dsm_fatal(c, "ph_cluster_init: %s", msg);
    }
    static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
    pthread_once(&atfork_once, atfork_register);
    __atomic_store_n(&ph_dsm_g, c, __ATOMIC_RELEASE);
    if (c->fops == &ph_dsm_fault_sigsegv || c->uffd_user_only)
        atomic_store_explicit(&ph_dsm_kernel_prep, c, memory_order_release);
    pthread_mutex_unlock(&init_lock);
    ph_info("cluster: rank %d of %d on %s, %d thread(s), arena %p (%zu "
            "bytes), %s, faults by %s", c->rank, c->nranks,
            c->hosts[c->rank], c->threads, (void *)c->arena, c->arena_bytes,
            c->transport, c->fault_name);
    if (!ph_dsm_mpi_calls_found())
        ph_info("cluster: the program's MPI calls reach the MPI library "
                "first, not pagehome's cluster library: shared buffers given "
                "to them are not made accessible first (link pagehome's "
                "cluster library before MPI; README.md, \"The program's own "
                "MPI calls\")");
    return 0;

fail:
    ph_dsm_windows_free(c);
    if (c->comm != MPI_COMM_NULL && c->comm != 0)
        MPI_Comm_free(&c->comm);
    if (c->mpi_ours)
        MPI_Finalize();
    teardown(c);
    free(c);
    pthread_mutex_unlock(&init_lock);
    return ph_fail(err, "%s", msg);
}

int ph_cluster_init_noargs(void)
{
    return ph_cluster_init(NULL, NULL);
}

int ph_cluster_finalize(void)
{
    pthread_mutex_lock(&init_lock);
    ph_dsm *c = ph_dsm_g;
    if (!c || !atomic_load(&c->running)) {
        pthread_mutex_unlock(&init_lock);
        return ph_fail(EINVAL, "ph_cluster_finalize: cluster mode is not "
                       "running");
    }
    atomic_store_explicit(&ph_dsm_kernel_prep, NULL, memory_order_release);
    ph_dsm_req r = {.op = PH_DSM_REQ_FINALIZE};
    int rc = ph_dsm_call(c, &r);
    ph_dsm_service_join(c);
    atomic_store(&c->stop, 1);
    ph_dsm_watchdog_stop(c);
    MPI_Comm_free(&c->comm);
    if (c->mpi_ours)
        MPI_Finalize();
    __atomic_store_n(&ph_dsm_g, NULL, __ATOMIC_RELEASE);
    teardown(c);
    free(c);
    pthread_mutex_unlock(&init_lock);
    return rc < 0 ? -1 : 0;
}

int ph_cluster_info(ph_cluster_info_t *out)
{
    ph_dsm *c = ctx("ph_cluster_info");
    if (!c)
        return -1;
    if (!out)
        return ph_fail(EINVAL, "ph_cluster_info: out is NULL");
    memset(out, 0, sizeof *out);
    out->rank = c->rank;
    out->nranks = c->nranks;
    out->threads = c->threads;
    out->arena = c->arena;
    out->arena_bytes = c->arena_bytes;
    out->used_bytes = atomic_load(&c->used_bytes);
    out->page_bytes = PH_DSM_PAGE;
    snprintf(out->transport, sizeof out->transport, "%s", c->transport);
    snprintf(out->host, sizeof out->host, "%s", c->hosts[c->rank]);
    snprintf(out->fault_mechanism, sizeof out->fault_mechanism, "%s",
             c->fault_name);
    return 0;
}

int ph_cluster_rank(void)
{
    ph_dsm *c = ctx("ph_cluster_rank");
    return c ? c->rank : -1;
}

int ph_cluster_nranks(void)
{
    ph_dsm *c = ctx("ph_cluster_nranks");
    return c ? c->nranks : -1;
}

/* ---- allocation ----------------------------------------------------- */

void *ph_cluster_alloc(size_t bytes, const ph_placement_t *pl)
{
    ph_dsm *c = ctx("ph_cluster_alloc");
    if (!c)
        return NULL;
    ph_dsm_placement *p = calloc(1, sizeof *p);
    if (!p)
        return ph_fail_null(ENOMEM, "ph_cluster_alloc: out of memory");
    ph_dsm_req r = {.op = PH_DSM_REQ_ALLOC, .bytes = bytes};
    if (!pl)
        ph_dsm_sync_tunables();            /* cluster_placement, as set now */
    if (ph_dsm_placement_make(p, pl, c->nranks) == 0) {
        r.pl = p;
    } else {
        snprintf(r.msg, sizeof r.msg, "ph_cluster_alloc: %s",
                 ph_last_error());
        r.pl = NULL;
    }
    int rc = ph_dsm_call(c, &r);
    if (rc < 0) {
        int e = errno;
        ph_dsm_placement_release(p);
        free(p);
        errno = e;
        return NULL;
    }
    free(p);                /* the service thread keeps its contents */
    return r.result;
}

int ph_cluster_free(void *ptr)
{
    ph_dsm *c = ctx("ph_cluster_free");
    if (!c)
        return -1;
    ph_dsm_req r = {.op = PH_DSM_REQ_FREE, .addr = ptr};
    return ph_dsm_call(c, &r) < 0 ? -1 : 0;
}

int ph_cluster_homes(const void *addr, size_t bytes, int *status)
{
    ph_dsm *c = ctx("ph_cluster_homes");
    if (!c)
        return -1;
    if (!status)
        return ph_fail(EINVAL, "ph_cluster_homes: status is NULL");
    if (bytes == 0)
        return 0;
    uintptr_t a = (uintptr_t)addr & ~(uintptr_t)(PH_DSM_PAGE - 1);
    uintptr_t e = (uintptr_t)addr + bytes;
    if (e < (uintptr_t)addr)
        return ph_fail(EINVAL, "ph_cluster_homes: %p + %zu bytes wraps",
                       addr, bytes);
    size_t npages = (e - a + PH_DSM_PAGE - 1) >> PH_DSM_PAGE_SHIFT;
    /* A status array in shared memory is filled through a private copy:
     * the service code must never touch the arena view itself -- a fault
     * taken by the thread holding the service role waits for that role,
     * i.e. for itself (userfaultfd or SIGSEGV alike: a hang). */
    uintptr_t s0 = (uintptr_t)status, s1 = s0 + npages * sizeof *status;
    uintptr_t a0 = (uintptr_t)c->arena, a1 = a0 + c->arena_bytes;
    int *out = status;
    if (s0 < a1 && s1 > a0) {
        out = malloc(npages * sizeof *out);
        if (!out)
            return ph_fail(ENOMEM, "ph_cluster_homes: out of memory");
    }
    ph_dsm_req r = {.op = PH_DSM_REQ_HOMES, .addr = (void *)a, .bytes = npages,
                 .status = out};
    int rc = ph_dsm_call(c, &r);
    if (out != status) {
        int e_ = errno;
        memcpy(status, out, npages * sizeof *out);
        free(out);
        errno = e_;
    }
    return rc;
}

int ph_cluster_home(const void *addr)
{
    ph_dsm *c = ctx("ph_cluster_home");
    if (!c)
        return -1;
    int st = 0;
    if (ph_cluster_homes(addr, 1, &st) < 0)
        return -1;
    if (st == -ENOENT)
        return ph_fail(ENOENT, "ph_cluster_home: the first-touch page at %p "
                       "has not been touched yet", addr);
    if (st < 0)
        return ph_fail(EINVAL, "ph_cluster_home: %p is not in memory from "
                       "ph_cluster_alloc", addr);
    return st;
}

/* ---- synchronisation ------------------------------------------------ */

int ph_cluster_barrier(void)
{
    ph_dsm *c = ctx("ph_cluster_barrier");
    if (!c)
        return -1;
    int team = team_size();
    ph_dsm_req r = {.op = PH_DSM_REQ_BARRIER};
    if (team == 1)
        return ph_dsm_call(c, &r) < 0 ? -1 : 0;
    unsigned gen = atomic_load(&c->bar_gen);
    if (atomic_fetch_add(&c->bar_count, 1) + 1 == team) {
        atomic_store(&c->bar_count, 0);
        int rc = ph_dsm_call(c, &r);
        c->bar_ret = rc;
        c->bar_err = rc < 0 ? errno : 0;
        if (rc < 0)
            snprintf(c->bar_msg, sizeof c->bar_msg, "%s", ph_last_error());
        atomic_fetch_add(&c->bar_gen, 1);
        if (atomic_load(&c->bar_sleepers) > 0)
            ph_dsm_futex_wake((_Atomic int *)&c->bar_gen);
    } else {
        uint64_t end = ph_now_ns() + (uint64_t)c->spin_us * 1000u;
        while (atomic_load(&c->bar_gen) == gen && ph_now_ns() < end)
            sched_yield();
        if (atomic_load(&c->bar_gen) == gen) {
            atomic_fetch_add(&c->bar_sleepers, 1);
            ph_dsm_futex_wait((_Atomic int *)&c->bar_gen, (int)gen, 0);
            atomic_fetch_sub(&c->bar_sleepers, 1);
        }
    }
    if (c->bar_ret < 0)
        return ph_fail(c->bar_err, "%s", c->bar_msg);
    return 0;
}

static long my_tid(void)
{
    return (long)syscall(SYS_gettid);
}

/* A small futex mutex per lock id (0 free, 1 held, 2 held + waiters). */
static void local_lock(_Atomic int *w)
{
    int z = 0;
    if (atomic_compare_exchange_strong(w, &z, 1))
        return;
    while (atomic_exchange(w, 2) != 0)
        syscall(SYS_futex, (int *)w, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
}

static void local_unlock(_Atomic int *w)
{
    if (atomic_exchange(w, 0) == 2)
        syscall(SYS_futex, (int *)w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static _Atomic int *lock_word(ph_dsm *c, int id)
{
    return &c->lock_word[id];
}

int ph_cluster_lock(int lock_id)
{
    ph_dsm *c = ctx("ph_cluster_lock");
    if (!c)
        return -1;
    if (lock_id < 0 || lock_id >= c->nlocks)
        return ph_fail(EINVAL, "ph_cluster_lock: lock %d does not exist "
                       "(0-%ld; tunable cluster_locks)", lock_id,
                       c->nlocks - 1);
    long me = my_tid();
    if (atomic_load(&c->lock_holder[lock_id]) == me)
        return ph_fail(EDEADLK, "ph_cluster_lock: this thread holds lock "
                       "%d already", lock_id);
    local_lock(lock_word(c, lock_id));
    ph_dsm_req r = {.op = PH_DSM_REQ_LOCK, .arg = lock_id};
    if (ph_dsm_call(c, &r) < 0) {
        local_unlock(lock_word(c, lock_id));
        return -1;
    }
    atomic_store(&c->lock_holder[lock_id], me);
    return 0;
}

int ph_cluster_unlock(int lock_id)
{
    ph_dsm *c = ctx("ph_cluster_unlock");
    if (!c)
        return -1;
    if (lock_id < 0 || lock_id >= c->nlocks)
        return ph_fail(EINVAL, "ph_cluster_unlock: lock %d does not exist "
                       "(0-%ld; tunable cluster_locks)", lock_id,
                       c->nlocks - 1);
    if (atomic_load(&c->lock_holder[lock_id]) != my_tid())
        return ph_fail(EPERM, "ph_cluster_unlock: this thread does not hold "
                       "lock %d", lock_id);
    ph_dsm_req r = {.op = PH_DSM_REQ_UNLOCK, .arg = lock_id};
    int rc = ph_dsm_call(c, &r);
    atomic_store(&c->lock_holder[lock_id], 0);
    local_unlock(lock_word(c, lock_id));
    return rc < 0 ? -1 : 0;
}

static int range_call(int op, const char *who, const void *addr,
                      size_t bytes)
{
    ph_dsm *c = ctx(who);
    if (!c)
        return -1;
    if (!addr && bytes)
        return ph_fail(EINVAL, "%s: NULL address", who);
    if (bytes == 0)
        return 0;
    ph_dsm_req r = {.op = op, .addr = addr, .bytes = bytes};
    return ph_dsm_call(c, &r) < 0 ? -1 : 0;
}

int ph_cluster_readonly(const void *addr, size_t bytes)
{
    ph_dsm *c = ctx("ph_cluster_readonly");
    if (!c)
        return -1;
    /* collective: a bad range is refused on every rank by the service
     * thread (every rank learns of it), not here */
    ph_dsm_req r = {.op = PH_DSM_REQ_READONLY, .addr = addr, .bytes = bytes};
    return ph_dsm_call(c, &r) < 0 ? -1 : 0;
}

int ph_cluster_acquire(const void *addr, size_t bytes)
{
    return range_call(PH_DSM_REQ_ACQUIRE, "ph_cluster_acquire", addr, bytes);
}

int ph_cluster_release(const void *addr, size_t bytes)
{
    return range_call(PH_DSM_REQ_RELEASE, "ph_cluster_release", addr, bytes);
}

/* ---- work sharing --------------------------------------------------- */

int ph_cluster_thread_num(void)
{
    ph_dsm *c = ctx("ph_cluster_thread_num");
    if (!c)
        return -1;
    int t = omp_get_thread_num ? omp_get_thread_num() : 0;
    return c->rank * c->threads + t;
}

int ph_cluster_num_threads(void)
{
    ph_dsm *c = ctx("ph_cluster_num_threads");
    if (!c)
        return -1;
    return c->nranks * c->threads;
}

static int global_team(ph_dsm *c, long *T, long *t)
{
    long team = team_size();
    *T = (long)c->nranks * team;
    *t = (long)c->rank * team + team_thread();
    return 0;
}

int ph_cluster_static_range(long n, long chunk, long *begin, long *end)
{
    ph_dsm *c = ctx("ph_cluster_static_range");
    if (!c)
        return -1;
    long T, t;
    global_team(c, &T, &t);
    return ph_dsm_static_first(n, chunk, T, t, begin, end);
}

int ph_cluster_static_next(long n, long chunk, long *begin, long *end)
{
    ph_dsm *c = ctx("ph_cluster_static_next");
    if (!c)
        return -1;
    long T, t;
    global_team(c, &T, &t);
    return ph_dsm_static_next(n, chunk, T, t, begin, end);
}

static int affinity(const char *who, const void *base, size_t elem_bytes,
                    size_t n, size_t from, long *begin, long *end)
{
    ph_dsm *c = ctx(who);
    if (!c)
        return -1;
    if (!base || elem_bytes == 0 || !begin || !end)
        return ph_fail(EINVAL, "%s: base %p, elem_bytes %zu", who, base,
                       elem_bytes);
    if (n == 0)
        return ph_fail(ENOENT, "%s: no elements", who);
    if (n > SIZE_MAX / elem_bytes || n > (size_t)LONG_MAX)
        return ph_fail(EINVAL, "%s: %zu elements of %zu bytes overflow", who,
                       n, elem_bytes);
    uintptr_t b = (uintptr_t)base;
    uintptr_t first_page = b & ~(uintptr_t)(PH_DSM_PAGE - 1);
    size_t total = n * elem_bytes;
    size_t npages = (b + total - first_page + PH_DSM_PAGE - 1) / PH_DSM_PAGE;
    int *st = malloc(npages * sizeof *st);
    ph_dsm_erun *runs = malloc((npages + 1) * sizeof *runs);
    if (!st || !runs) {
        free(st);
        free(runs);
        return ph_fail(ENOMEM, "%s: out of memory", who);
    }
    if (ph_cluster_homes(base, total, st) < 0) {
        free(st);
        free(runs);
        return -1;
    }
    size_t nruns = 0;
    for (size_t k = 0; k < npages; k++) {
        if (st[k] == -EINVAL) {
            free(st);
            free(runs);
            return ph_fail(EINVAL, "%s: %p (%zu elements of %zu bytes) is "
                           "not in memory from ph_cluster_alloc", who, base,
                           n, elem_bytes);
        }
        if (st[k] != c->rank)
            continue;
        /* elements whose first byte is in page k */
        uintptr_t ps = first_page + k * PH_DSM_PAGE, pe = ps + PH_DSM_PAGE;
        size_t i0 = ps <= b ? 0 : (size_t)((ps - b + elem_bytes - 1) /
                                           elem_bytes);
        size_t i1 = (size_t)((pe - b + elem_bytes - 1) / elem_bytes);
        if (i1 > n)
            i1 = n;
        if (i0 >= i1)
            continue;
        if (nruns && runs[nruns - 1].end == i0)
            runs[nruns - 1].end = i1;
        else
            runs[nruns++] = (ph_dsm_erun){i0, i1};
    }
    free(st);
    size_t sb = 0, se = 0;
    int rc = ph_dsm_affinity_share(runs, nruns, team_size(), team_thread(),
                                from, &sb, &se);
    free(runs);
    if (rc < 0)
        return -1;
    *begin = (long)sb;
    *end = (long)se;
    return 0;
}

int ph_cluster_affinity_range(const void *base, size_t elem_bytes, size_t n,
                              long *begin, long *end)
{
    return affinity("ph_cluster_affinity_range", base, elem_bytes, n, 0,
                    begin, end);
}

int ph_cluster_affinity_next(const void *base, size_t elem_bytes, size_t n,
                             long *begin, long *end)
{
    if (!end)
        return ph_fail(EINVAL, "ph_cluster_affinity_next: end is NULL");
    if (*end < 0)
        return ph_fail(EINVAL, "ph_cluster_affinity_next: *end is %ld",
                       *end);
    return affinity("ph_cluster_affinity_next", base, elem_bytes, n,
                    (size_t)*end, begin, end);
}

int ph_cluster_stat(const char *name, unsigned long long *value)
{
    ph_dsm *c = ctx("ph_cluster_stat");
    if (!c)
        return -1;
    if (!name || !value)
        return ph_fail(EINVAL, "ph_cluster_stat: name or value is NULL");
    ph_dsm_req r = {.op = PH_DSM_REQ_STAT, .addr = name, .result = value};
    return ph_dsm_call(c, &r) < 0 ? -1 : 0;
}

int ph_cluster_stats_write(int fd)
{
    ph_dsm *c = ctx("ph_cluster_stats_write");
    if (!c)
        return -1;
    if (fd < 0)
        return ph_fail(EBADF, "ph_cluster_stats_write: fd %d", fd);
    ph_dsm_req r = {.op = PH_DSM_REQ_STATS, .fd = fd};
    return ph_dsm_call(c, &r) < 0 ? -1 : 0;
}
