/*
 * service.c -- the DSM service thread of a rank, and how application
 * threads hand work to it.
 *
 * The service thread owns every MPI call and every table of the cluster
 * layer.  Its loop: resolve pending page faults (userfaultfd messages or
 * SIGSEGV hand-offs), take posted requests (barrier, lock, unlock,
 * selective acquire/release, allocation, free, home queries, statistics),
 * poll the ticket locks still waiting for their turn, and drive MPI
 * progress (MPI_Iprobe) -- remote operations on this rank's windows need
 * it with MPICH and for Open MPI's emulated atomics.  After activity it
 * spins for cluster_spin_us (yielding the CPU each turn: on machines with
 * more threads than cores a busy loop would steal the application's
 * time); then it blocks in ppoll() on the userfaultfd and its eventfd for
 * at most cluster_poll_us, so that an idle rank still answers remote
 * operations within that time.
 *
 * The right to run service code (and so to call MPI) is the `role`
 * mutex: the service thread takes it for each turn of its loop and lets it
 * go when it has nothing to do.  An application thread posts its request
 * (a mutex-protected queue) and, if the role is free, takes it and serves
 * the queue itself: a barrier, lock, release or allocation then costs no
 * thread hand-off (two context switches of a few microseconds each here).
 * Otherwise it wakes the service thread if that sleeps (its eventfd) and
 * waits for the request on a futex, spinning briefly first.  Page faults
 * always go to whoever holds the role (userfaultfd stops the faulting
 * thread in the kernel); those the service thread resolves in its loop
 * are woken after it let the role go (fault_uffd.c), so that the woken
 * thread finds it free for its next request.  Nothing here runs in a
 * signal handler.
 */
#include "cluster/cluster.h"

#include "base/error.h"
#include "base/log.h"
#include "base/thread.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

void ph_dsm_futex_wait(_Atomic int *addr, int val, long spin_us)
{
    uint64_t end = 0;
    int spins = 0;
    while (atomic_load(addr) == val) {
        if (spins < 100) {
            spins++;
            cpu_relax();
            continue;
        }
        if (spin_us > 0) {
            uint64_t now = ph_now_ns();
            if (!end)
                end = now + (uint64_t)spin_us * 1000u;
            if (now < end) {
                sched_yield();
                continue;
            }
        }
        syscall(SYS_futex, (int *)addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL,
                0);
    }
}

void ph_dsm_futex_wake(_Atomic int *addr)
{
    syscall(SYS_futex, (int *)addr, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL,
            0);
}

/* A request's done word: 0 pending, 1 done, 2 pending with its poster
 * asleep on the futex -- the only case that needs a wake-up system call. */
static void req_done(ph_dsm_req *r)
{
    if (atomic_exchange(&r->done, 1) == 2)
        ph_dsm_futex_wake(&r->done);
}

static void req_wait(ph_dsm *c, ph_dsm_req *r)
{
    uint64_t end = 0;
    for (int spins = 0; atomic_load(&r->done) == 0; spins++) {
        if (spins < 100)
            continue;
        uint64_t now = ph_now_ns();
        if (!end)
            end = now + (uint64_t)c->spin_us * 1000u;
        if (now < end) {
            sched_yield();
            continue;
        }
        int zero = 0;
        if (atomic_compare_exchange_strong(&r->done, &zero, 2))
            while (atomic_load(&r->done) == 2)
                syscall(SYS_futex, (int *)&r->done, FUTEX_WAIT_PRIVATE, 2,
                        NULL, NULL, 0);
    }
}

/* ---- the application side ------------------------------------------ */

static int serve_requests(ph_dsm *c);
static void dispatch(ph_dsm *c, ph_dsm_req *r);

/* The role, with its holder's thread id and a sign of life (cluster.h).
 * A holder that faults on a shared page waits for itself: page
 * protection's handler sees that and ends the process with a message; the
 * watchdog (transport.c) sees a userfaultfd one stop showing life. */
static int self_tid(void)
{
    static __thread int tid;
    if (!tid)
        tid = (int)syscall(SYS_gettid);
    return tid;
}

static void role_taken(ph_dsm *c)
{
    atomic_store(&c->role_tid, self_tid());
    ph_dsm_role_beat(c, ph_now_ns());
}

static void role_lock(ph_dsm *c)
{
    pthread_mutex_lock(&c->role);
    role_taken(c);
}

static int role_trylock(ph_dsm *c)
{
    int rc = pthread_mutex_trylock(&c->role);
    if (rc == 0)
        role_taken(c);
    return rc;
}

static void role_unlock(ph_dsm *c)
{
    ph_dsm_role_beat(c, 0);
    atomic_store(&c->role_tid, 0);
    pthread_mutex_unlock(&c->role);
}

int ph_dsm_role_mine(ph_dsm *c)
{
    return atomic_load(&c->role_tid) == self_tid();
}

/* Whoever holds the role may run service code: the service thread, or an
 * application thread that found it free.  Drain the queue while holding
 * it, so that nothing posted meanwhile waits for the next wake-up. */
static void drain(ph_dsm *c)
{
    while (serve_requests(c) > 0)
        ;
}

/* After letting the role go: a request posted while it was held, whose
 * poster found the role taken, is served now (the service thread may be
 * asleep: it does not wait for the role when only its clock woke it). */
static void requeue_check(ph_dsm *c)
{
    while (atomic_load(&c->queued) > 0 &&
           role_trylock(c) == 0) {
        drain(c);
        role_unlock(c);
    }
}

int ph_dsm_call(ph_dsm *c, ph_dsm_req *r)
{
    if (!atomic_load(&c->running))
        return ph_fail(ESHUTDOWN, "cluster mode is not running (ph_cluster_"
                       "finalize was called, or ph_cluster_init failed)");
    atomic_store(&r->done, 0);
    r->ret = 0;
    r->next = NULL;
    /* The service thread idle (not holding the role): do the work here,
     * without waking it -- on this kind of machine a thread hand-off costs
     * more than most requests.  Older requests of other threads first. */
    if (role_trylock(c) == 0) {
        drain(c);
        dispatch(c, r);
        drain(c);
        role_unlock(c);
        requeue_check(c);
    } else {
        pthread_mutex_lock(&c->qlock);
        if (c->qtail)
            c->qtail->next = r;
        else
            c->qhead = r;
        c->qtail = r;
        pthread_mutex_unlock(&c->qlock);
        atomic_fetch_add(&c->queued, 1);
        /* the role may have been let go meanwhile */
        if (role_trylock(c) == 0) {
            drain(c);
            role_unlock(c);
            requeue_check(c);
        }
    }
    if (!atomic_load(&r->done) && atomic_load(&c->svc_sleeping)) {
        uint64_t one = 1;
        ssize_t w = write(c->evfd, &one, sizeof one);
        (void)w;
    }
    req_wait(c, r);
    if (r->ret < 0) {
        ph_fail(r->err, "%s", r->msg);
        return -1;
    }
    return r->ret;
}

/* ---- the service side ----------------------------------------------- */

int ph_dsm_serve_faults(ph_dsm *c)
{
    ph_dsm_fault ev[16];
    int total = 0;
    for (;;) {
        int n = c->fops->read(c, ev, 16);
        if (n < 0)
            ph_dsm_fatal(c, "reading page faults: %s", strerror(errno));
        if (n == 0)
            break;
        for (int i = 0; i < n; i++)
            ph_dsm_handle_fault(c, &ev[i]);
        total += n;
    }
    return total;
}

int ph_dsm_service_idle(ph_dsm *c, uint64_t ns)
{
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000u),
                          .tv_nsec = (long)(ns % 1000000000u)};
    if (!pthread_equal(pthread_self(), c->svc)) {
        /* an application thread waiting inside service code: only faults
         * concern it (the eventfd is the service thread's) */
        int fd = c->fops->fd(c);
        if (fd >= 0) {
            struct pollfd p = {.fd = fd, .events = POLLIN};
            return ppoll(&p, 1, &ts, NULL) > 0;
        }
        nanosleep(&ts, NULL);
        return 0;
    }
    int woken = 1;
    atomic_store(&c->svc_sleeping, 1);
    if (atomic_load(&c->queued) == 0) {
        struct pollfd fds[2] = {{.fd = c->evfd, .events = POLLIN},
                                {.fd = c->fops->fd(c), .events = POLLIN}};
        int nfds = fds[1].fd >= 0 ? 2 : 1;
        int k = ppoll(fds, (nfds_t)nfds, &ts, NULL);
        woken = k != 0;
        if (k > 0 && (fds[0].revents & POLLIN)) {
            uint64_t v;
            ssize_t rd = read(c->evfd, &v, sizeof v);
            (void)rd;
        }
    }
    atomic_store(&c->svc_sleeping, 0);
    return woken;
}

/* Drive MPI progress: MPI_Test of a receive that is never matched (posted
 * at start-up on the layer's own communicator).  MPICH 4.0 serves remote
 * one-sided operations on its windows from that (fetch-and-op 1.9 us when
 * the target tests a request; MPI_Iprobe progresses too little: 30 us, and
 * 120 us with a yield between probes -- measured here). */
static void mpi_progress(ph_dsm *c)
{
    int flag = 0;
    if (c->progress_req != MPI_REQUEST_NULL)
        MPI_Test(&c->progress_req, &flag, MPI_STATUS_IGNORE);
}

void ph_dsm_progress_start(ph_dsm *c)
{
    MPI_Irecv(&c->progress_buf, 1, MPI_INT, MPI_ANY_SOURCE, 0x7ead,
              c->comm, &c->progress_req);
}

void ph_dsm_progress_stop(ph_dsm *c)
{
    if (c->progress_req != MPI_REQUEST_NULL) {
        MPI_Cancel(&c->progress_req);
        MPI_Wait(&c->progress_req, MPI_STATUS_IGNORE);
    }
}

void ph_dsm_progress(ph_dsm *c)
{
    mpi_progress(c);
}

static void write_stats_file(ph_dsm *c)
{
    if (!c->stats_file[0])
        return;
    char path[600];
    size_t w = 0;
    for (const char *s = c->stats_file; *s && w + 12 < sizeof path; s++) {
        if (s[0] == '%' && s[1] == 'r') {
            w += (size_t)snprintf(path + w, sizeof path - w, "%d", c->rank);
            s++;
        } else {
            path[w++] = *s;
        }
    }
    path[w] = '\0';
    FILE *f = fopen(path, "w");
    if (!f) {
        ph_warn("cluster_stats_file: cannot write %s: %s", path,
                strerror(errno));
        return;
    }
    fflush(f);
    if (ph_dsm_stats_json(c, fileno(f)) < 0)
        ph_warn("cluster_stats_file: %s: %s", path, ph_last_error());
    fclose(f);
}

static void dispatch(ph_dsm *c, ph_dsm_req *r)
{
    switch (r->op) {
    case PH_DSM_REQ_BARRIER:
        ph_dsm_do_barrier(c, r);
        req_done(r);
        break;
    case PH_DSM_REQ_LOCK:
        ph_dsm_do_lock(c, r);
        if (ph_dsm_poll_lock(c, r)) {
            req_done(r);
        } else {
            r->next = c->locks_waiting;
            c->locks_waiting = r;
        }
        break;
    case PH_DSM_REQ_UNLOCK:
        ph_dsm_do_unlock(c, r);
        req_done(r);
        break;
    case PH_DSM_REQ_ACQUIRE:
        ph_dsm_do_acquire(c, r);
        req_done(r);
        break;
    case PH_DSM_REQ_RELEASE:
        ph_dsm_do_release(c, r);
        req_done(r);
        break;
    case PH_DSM_REQ_ALLOC:
        ph_dsm_do_alloc(c, r);
        req_done(r);
        break;
    case PH_DSM_REQ_FREE:
        ph_dsm_do_free(c, r);
        req_done(r);
        break;
    case PH_DSM_REQ_HOMES:
        ph_dsm_do_homes(c, r);
        req_done(r);
        break;
    case PH_DSM_REQ_READONLY:
        ph_dsm_do_readonly(c, r);
        req_done(r);
        break;
    case PH_DSM_REQ_GANG:
        ph_dsm_do_gang(c, r);
        req_done(r);
        break;
    case PH_DSM_REQ_STATS:
        if (ph_dsm_stats_json(c, r->fd) < 0)
            ph_dsm_req_fail(r, errno, "%s", ph_last_error());
        else
            r->ret = 0;
        req_done(r);
        break;
    case PH_DSM_REQ_STAT: {
        uint64_t v = 0;
        if (ph_dsm_stat(c, r->addr, &v) < 0) {
            ph_dsm_req_fail(r, ENOENT, "ph_cluster_stat: no counter named "
                            "\"%.64s\" (the names are the keys of the "
                            "faults, traffic, sync, migration and page_classes "
                            "objects of "
                            "ph_cluster_stats_write)", (const char *)r->addr);
        } else {
            *(unsigned long long *)r->result = v;
            r->ret = 0;
        }
        req_done(r);
        break;
    }
    case PH_DSM_REQ_FINALIZE:
        ph_dsm_do_barrier(c, r);
        write_stats_file(c);
        ph_dsm_progress_stop(c);
        ph_dsm_windows_free(c);
        atomic_store(&c->running, 0);
        atomic_store(&c->stop, 1);
        r->ret = 0;
        req_done(r);
        break;
    default:
        ph_dsm_req_fail(r, EINVAL, "cluster: unknown request %d", r->op);
        req_done(r);
        break;
    }
}

static int serve_requests(ph_dsm *c)
{
    if (atomic_load(&c->queued) == 0)
        return 0;
    pthread_mutex_lock(&c->qlock);
    ph_dsm_req *r = c->qhead;
    c->qhead = c->qtail = NULL;
    pthread_mutex_unlock(&c->qlock);
    int n = 0;
    while (r) {
        ph_dsm_req *next = r->next;
        atomic_fetch_sub(&c->queued, 1);
        n++;
        dispatch(c, r);
        r = next;
    }
    return n;
}

/* Poll the locks whose time has come; returns how many were acquired and
 * sets *next_ns to the earliest next poll. */
static int poll_locks(ph_dsm *c, uint64_t *next_ns)
{
    int got = 0;
    uint64_t now = ph_now_ns();
    *next_ns = UINT64_MAX;
    ph_dsm_req **pp = &c->locks_waiting;
    while (*pp) {
        ph_dsm_req *r = *pp;
        if (r->next_poll_ns <= now && ph_dsm_poll_lock(c, r)) {
            *pp = r->next;
            req_done(r);
            got++;
            continue;
        }
        if (r->next_poll_ns < *next_ns)
            *next_ns = r->next_poll_ns;
        pp = &r->next;
    }
    return got;
}

static void *svc_main(void *arg)
{
    ph_dsm *c = arg;
    uint64_t spin_ns = (uint64_t)c->spin_us * 1000u;
    uint64_t poll_ns = (uint64_t)c->poll_us * 1000u;
    uint64_t spin_until = ph_now_ns() + spin_ns;
    int idle_timeout = 0;
    for (;;) {
        /* Woken by the clock alone (no fault, no request) while an
         * application thread holds the role: it serves faults and drives
         * MPI progress itself, so sleep again rather than queue up behind
         * it (its unlock would then have to wake this thread: a system
         * call and a context switch in every barrier of a busy loop). */
        if (idle_timeout && role_trylock(c) != 0) {
            idle_timeout = !ph_dsm_service_idle(c, poll_ns);
            continue;
        }
        if (!idle_timeout)
            role_lock(c);
        idle_timeout = 0;
        if (atomic_load(&c->stop)) {
            role_unlock(c);
            break;
        }
        c->wake_defer_ok = c->fops->flush_wakes != NULL;
        int worked = ph_dsm_serve_faults(c);
        c->wake_defer_ok = 0;
        worked += serve_requests(c);
        uint64_t next_lock = UINT64_MAX;
        int locks_waiting = 0;
        if (!atomic_load(&c->stop)) {
            if (c->locks_waiting)
                worked += poll_locks(c, &next_lock);
            mpi_progress(c);
            locks_waiting = c->locks_waiting != NULL;
        }
        role_unlock(c);
        /* the faulting threads go on now, with the role free */
        if (c->wake_pages.n)
            c->fops->flush_wakes(c);
        if (atomic_load(&c->stop))
            break;
        uint64_t now = ph_now_ns();
        if (worked) {
            spin_until = now + spin_ns;
            continue;
        }
        uint64_t wait = poll_ns;
        if (next_lock != UINT64_MAX)
            wait = next_lock > now ? (next_lock - now < wait ? next_lock - now
                                                             : wait)
                                   : 0;
        /* a lock is waiting for its turn: keep driving progress (the
         * holder's release and our polls need it), yielding each turn */
        if (now < spin_until || wait < 20000 || locks_waiting) {
            sched_yield();
            continue;
        }
        idle_timeout = !ph_dsm_service_idle(c, wait) && !locks_waiting;
    }
    return NULL;
}

int ph_dsm_service_start(ph_dsm *c)
{
    atomic_store(&c->stop, 0);
    atomic_store(&c->running, 1);
    pthread_mutex_init(&c->role, NULL);
    int rc = ph_thread_start(&c->svc, "ph-cluster", svc_main, c);
    if (rc) {
        atomic_store(&c->running, 0);
        return ph_fail(rc, "cluster: cannot start the service thread: %s",
                       strerror(rc));
    }
    return 0;
}

void ph_dsm_service_join(ph_dsm *c)
{
    pthread_join(c->svc, NULL);
    pthread_mutex_destroy(&c->role);
}
