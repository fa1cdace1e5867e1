/*
 * transport.c -- the cluster layer's use of MPI: start-up, the two
 * windows, remote atomics, collectives that cannot hang, and the watchdog.
 *
 * Threading.  MPI_Init_thread(MPI_THREAD_SERIALIZED) unless the program
 * initialised MPI itself (it must then have asked for at least
 * SERIALIZED).  After ph_cluster_init only the service thread calls MPI.
 * SERIALIZED is what Open MPI 4.1 over TCP accepts (its pt2pt one-sided
 * component refuses MPI_THREAD_MULTIPLE).
 *
 * Windows.  `win` is the window view of the rank's memfd (the whole arena,
 * MPI_Win_create, displacement unit 1: a page's displacement is its offset
 * in the arena).  `cwin` is the control window: liveness word, ticket
 * locks, the notice log (rank 0), first-touch claim words (cluster.h has
 * the layout).  Both are opened once with MPI_Win_lock_all and stay in
 * that passive-target epoch until finalize: every access is an operation
 * plus a flush, never a lock/unlock pair.  Atomics are MPI_Fetch_and_op,
 * MPI_Accumulate and MPI_Get_accumulate only (no MPI_Compare_and_swap: it
 * crashes in Open MPI 4.1's default one-sided component).
 *
 * Never a hang.  Errors return (MPI_ERRORS_RETURN on the communicator and
 * windows) and become a fatal message naming the peer.  Before every
 * blocking call towards a peer the service thread notes what it waits for
 * and since when; a watchdog thread aborts the job when that wait exceeds
 * cluster_timeout_ms ("rank 3 (host b) did not answer a page fetch for
 * 10.0 s: it has probably died").  Collectives are non-blocking and waited
 * for by polling, serving page faults meanwhile; a collective that takes
 * longer than the timeout (a rank computing for a long time is legitimate)
 * makes the service thread probe every other rank's liveness word, and a
 * probe that is not answered trips the watchdog.
 */
#include "cluster/cluster.h"
#include "cluster/watch.h"

#include "base/error.h"
#include "base/log.h"
#include "base/thread.h"
#include "config/launcher.h"
#include "config/options.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

const char *ph_dsm_who(const ph_dsm *c, int rank, char *buf, size_t len)
{
    if (c && c->hosts && rank >= 0 && rank < c->nranks)
        snprintf(buf, len, "rank %d (host %s)", rank, c->hosts[rank]);
    else
        snprintf(buf, len, "rank %d", rank);
    return buf;
}

_Noreturn void ph_dsm_fatal(ph_dsm *c, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char me[96] = "cluster";
    if (c)
        ph_dsm_who(c, c->rank, me, sizeof me);
    fprintf(stderr, "pagehome: %s: %s; aborting the job\n", me, msg);
    fflush(stderr);
    /* MPI_Abort should not return; if it hangs (a broken transport), the
     * alarm's default action ends the process. */
    alarm(5);
    MPI_Abort(c ? c->comm : MPI_COMM_WORLD, 70);
    _exit(70);
}

void ph_dsm_mpi_check(ph_dsm *c, int rc, const char *call, int peer)
{
    if (rc == MPI_SUCCESS)
        return;
    char err[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(rc, err, &len);
    char who[96];
    if (peer >= 0)
        ph_dsm_fatal(c, "%s towards %s failed: %s (that rank has probably "
                  "died)", call, ph_dsm_who(c, peer, who, sizeof who), err);
    ph_dsm_fatal(c, "%s failed: %s (a rank has probably died)", call, err);
}

void ph_dsm_op_begin(ph_dsm *c, const char *what, int peer)
{
    atomic_store(&c->op_what, what);
    atomic_store(&c->op_peer, peer);
    atomic_store(&c->op_since_ns, ph_now_ns());
}

void ph_dsm_op_end(ph_dsm *c)
{
    atomic_store(&c->op_since_ns, 0);
}

/* ---- the watchdog --------------------------------------------------- */

static void *watchdog_main(void *arg)
{
    ph_dsm *c = arg;
    uint64_t limit = (uint64_t)c->timeout_ms * 1000000u;
    uint64_t tick = limit / 8;
    if (tick < 1000000)
        tick = 1000000;
    if (tick > 250000000)
        tick = 250000000;
    /* what the watchdog judges, and why a stop of this process is not a
     * silence: watch.h */
    ph_dsm_watch w;
    ph_dsm_watch_init(&w, ph_now_ns(), tick, limit);
    while (!atomic_load(&c->stop)) {
        struct timespec ts = {.tv_sec = (time_t)(tick / 1000000000u),
                              .tv_nsec = (long)(tick % 1000000000u)};
        nanosleep(&ts, NULL);
        uint64_t since = atomic_load(&c->op_since_ns);
        if (atomic_load(&c->stop))
            continue;
        int verdict = ph_dsm_watch_look(&w, ph_now_ns(), since,
                                        atomic_load(&c->role_beat_ns));
        if (verdict == PH_DSM_WATCH_HOLDER_STUCK)
            /* nothing asked of a peer, yet the role's holder shows no life:
             * it waits in the kernel for a fault of its own, which only the
             * role's holder can serve (a message the MPI library moved into
             * or out of shared memory, from the progress the holder drove,
             * for a call of the program's that pagehome did not see) */
            ph_dsm_fatal(c, "the thread that runs the DSM's service code "
                      "(thread %d) has been stuck for %.1f s outside any "
                      "remote operation: it probably waits for a fault of "
                      "its own on shared memory, taken inside an MPI call "
                      "that moved a message of the program's into or out "
                      "of shared memory (README.md, \"The program's own "
                      "MPI calls\"); cluster_timeout_ms is %ld",
                      atomic_load(&c->role_tid),
                      (double)w.beat_for_ns / 1e9, c->timeout_ms);
        if (verdict == PH_DSM_WATCH_OP_STUCK) {
            const char *what = atomic_load(&c->op_what);
            int peer = atomic_load(&c->op_peer);
            char who[96];
            if (peer >= 0)
                ph_dsm_fatal(c, "%s did not answer %s for %.1f s: it has "
                          "probably died (or hangs); cluster_timeout_ms is "
                          "%ld", ph_dsm_who(c, peer, who, sizeof who),
                          what ? what : "a request",
                          (double)w.op_for_ns / 1e9, c->timeout_ms);
            ph_dsm_fatal(c, "%s did not complete for %.1f s: a rank has "
                      "probably died; cluster_timeout_ms is %ld",
                      what ? what : "a collective operation",
                      (double)w.op_for_ns / 1e9, c->timeout_ms);
        }
    }
    return NULL;
}

int ph_dsm_watchdog_start(ph_dsm *c)
{
    int rc = ph_thread_start(&c->dog, "ph-cl-watchdog", watchdog_main, c);
    if (rc)
        return ph_fail(rc, "cluster: cannot start the watchdog thread: %s",
                       strerror(rc));
    return 0;
}

void ph_dsm_watchdog_stop(ph_dsm *c)
{
    pthread_join(c->dog, NULL);
}

/* ---- start-up ------------------------------------------------------- */

int ph_dsm_transport_init(ph_dsm *c, int *argc, char ***argv)
{
    int inited = 0, finalized = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (finalized)
        return ph_fail(EINVAL, "ph_cluster_init: MPI was already finalized");
    int provided = MPI_THREAD_SINGLE;
    if (!inited) {
        int rc = MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED,
                                 &provided);
        if (rc != MPI_SUCCESS)
            return ph_fail(EIO, "ph_cluster_init: MPI_Init_thread failed "
                           "(%d)", rc);
        c->mpi_ours = 1;
    } else {
        MPI_Query_thread(&provided);
    }
    if (provided < MPI_THREAD_SERIALIZED) {
        int r = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
        return ph_fail(ENOTSUP, "ph_cluster_init: the MPI library provides "
                       "thread level %d, cluster mode needs "
                       "MPI_THREAD_SERIALIZED (%d)%s", provided,
                       MPI_THREAD_SERIALIZED,
                       inited ? ": initialise MPI with MPI_Init_thread("
                                "MPI_THREAD_SERIALIZED) or let "
                                "ph_cluster_init do it" : "");
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &c->comm);
    MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(c->comm, &c->rank);
    MPI_Comm_size(c->comm, &c->nranks);
    c->int64_type = MPI_INT64_T;

    /* A launcher that started several processes whose MPI library each
     * sees alone: the library found no process manager to meet the others
     * through (MPICH under srun without --mpi=pmi2), and every process
     * would run the whole program by itself with its own arena. */
    ph_launcher lz = ph_launcher_get();
    if (c->nranks == 1 && lz.size > 1 && lz.from)
        return ph_fail(ENOTCONN, "ph_cluster_init: %s=%ld of %ld processes, but MPI "
                       "sees 1: it did not reach the launcher (srun needs --mpi=pmix "
                       "for Open MPI, --mpi=pmi2 for MPICH)", lz.from, lz.rank, lz.size);

    /* host names, for messages */
    char host[64] = "";
    gethostname(host, sizeof host - 1);
    c->hosts = calloc((size_t)c->nranks, sizeof *c->hosts);
    if (!c->hosts)
        return ph_fail(ENOMEM, "ph_cluster_init: out of memory");
    MPI_Allgather(host, 64, MPI_CHAR, c->hosts, 64, MPI_CHAR, c->comm);
    int nh = 0;
    for (int r = 0; r < c->nranks; r++) {
        int seen = 0;
        for (int q = 0; q < r && !seen; q++)
            seen = strcmp(c->hosts[q], c->hosts[r]) == 0;
        nh += !seen;
    }
    c->nhosts = nh;
    return 0;
}

void ph_dsm_describe_transport(ph_dsm *c)
{
    char ver[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    MPI_Get_library_version(ver, &len);
    char lib[48] = "MPI";
    const char *p;
    if ((p = strstr(ver, "Open MPI v")) != NULL) {
        char v[16] = "";
        sscanf(p + 10, "%15[0-9.]", v);
        snprintf(lib, sizeof lib, "Open MPI %s", v);
    } else if ((p = strstr(ver, "MPICH Version:")) != NULL) {
        char v[16] = "";
        sscanf(p + 14, " %15[0-9.a-z]", v);
        snprintf(lib, sizeof lib, "MPICH %s", v);
    } else {
        snprintf(lib, sizeof lib, "%.40s", ver);
        char *nl = strchr(lib, '\n');
        if (nl)
            *nl = '\0';
    }
    char extra[64] = "";
    const char *osc = getenv("OMPI_MCA_osc");
    const char *pml = getenv("OMPI_MCA_pml");
    const char *btl = getenv("OMPI_MCA_btl");
    const char *ucx = getenv("UCX_TLS");
    int w = 0;
    if (osc && *osc)
        w += snprintf(extra + w, sizeof extra - (size_t)w, ", osc %s", osc);
    if (pml && *pml && w < (int)sizeof extra)
        w += snprintf(extra + w, sizeof extra - (size_t)w, ", pml %s", pml);
    if (btl && *btl && w < (int)sizeof extra)
        w += snprintf(extra + w, sizeof extra - (size_t)w, ", btl %s", btl);
    if (ucx && *ucx && w < (int)sizeof extra)
        w += snprintf(extra + w, sizeof extra - (size_t)w, ", UCX %s", ucx);
    /* a description: a long one is cut at the field's size */
    w = snprintf(c->transport, sizeof c->transport, "%s (%d host%s%s)", lib,
                 c->nhosts, c->nhosts == 1 ? "" : "s", extra);
    (void)w;
}

static size_t round8(size_t x)
{
    return (x + 7) & ~(size_t)7;
}

int ph_dsm_windows_create(ph_dsm *c)
{
    ph_dsm_ctl_layout *L = &c->ctl;
    size_t n = (size_t)c->nranks;
    size_t off = 64;
    L->heartbeat = 0;
    L->lock_slots = ((size_t)c->nlocks + n - 1) / n;
    L->locks = off;
    off += L->lock_slots * 16;
    L->log_head = round8(off);
    off = L->log_head + 64;
    L->log = off;
    /* the log is used at rank 0 only, but every rank has the same layout
     * (untouched memory costs nothing) */
    off = L->log + (size_t)c->log_size * 8;
    L->dir_slots = (c->npages + n - 1) / n;
    L->dir = round8(off);
    off = L->dir + L->dir_slots * 8;
    L->bytes = (off + PH_DSM_PAGE - 1) & ~(PH_DSM_PAGE - 1);
    c->cbase = mmap(NULL, L->bytes, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (c->cbase == MAP_FAILED) {
        c->cbase = NULL;
        return ph_fail(ENOMEM, "ph_cluster_init: cannot map the control "
                       "window (%zu bytes): %s", L->bytes, strerror(errno));
    }
    if (c->nranks == 1) {
        c->nowin = 1;
        return 0;
    }
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "accumulate_ordering", "none");
    int rc = MPI_Win_create(c->cbase, (MPI_Aint)L->bytes, 1, info, c->comm,
                            &c->cwin);
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_create(c->wview, (MPI_Aint)c->arena_bytes, 1, info,
                            c->comm, &c->win);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS) {
        char err[MPI_MAX_ERROR_STRING] = "";
        int len = 0;
        MPI_Error_string(rc, err, &len);
        /* Open MPI's one-sided component on shared memory needs vader's
         * single copy (measured: none fails here) */
        const char *sc = getenv("OMPI_MCA_btl_vader_single_copy_mechanism");
        if (sc && !strcmp(sc, "none"))
            /* first: the other ranks see 150 characters of it (agree) */
            return ph_fail(EIO, "ph_cluster_init: MPI_Win_create failed: "
                           "OMPI_MCA_btl_vader_single_copy_mechanism=none; "
                           "Open MPI's one-sided component needs vader's "
                           "single copy (%s)", err);
        return ph_fail(EIO, "ph_cluster_init: MPI_Win_create failed: %s "
                       "(with Open MPI over TCP use osc pt2pt "
                       "(--mca osc pt2pt) or UCX)", err);
    }
    MPI_Win_set_errhandler(c->cwin, MPI_ERRORS_RETURN);
    MPI_Win_set_errhandler(c->win, MPI_ERRORS_RETURN);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, c->cwin);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, c->win);
    return 0;
}

void ph_dsm_windows_free(ph_dsm *c)
{
    if (c->win != MPI_WIN_NULL && !c->nowin) {
        MPI_Win_unlock_all(c->win);
        MPI_Win_free(&c->win);
    }
    if (c->cwin != MPI_WIN_NULL && !c->nowin) {
        MPI_Win_unlock_all(c->cwin);
        MPI_Win_free(&c->cwin);
    }
    if (c->cbase) {
        munmap(c->cbase, c->ctl.bytes);
        c->cbase = NULL;
    }
}

/* ---- operations ----------------------------------------------------- */

/* Wait for a request-based operation without MPI's blocking wait: MPICH
 * 4.0's blocking calls poll without ever yielding the CPU, which on a
 * machine with more runnable threads than cores keeps the very thread
 * that must answer (another rank's, or this rank's progress) off the CPU
 * for whole time slices.  MPI_Test, yielding between tests. */
void ph_dsm_wait_req(ph_dsm *c, MPI_Request *q, const char *what, int peer)
{
    uint64_t spin_until = 0;
    for (;;) {
        int done = 0;
        int rc = MPI_Test(q, &done, MPI_STATUS_IGNORE);
        ph_dsm_mpi_check(c, rc, what, peer);
        if (done)
            return;
        /* test without yielding for 20 us (an answer usually comes in a
         * few), then yield between tests */
        uint64_t now = ph_now_ns();
        if (!spin_until)
            spin_until = now + 20000;
        else if (now > spin_until)
            sched_yield();
    }
}

/* With one rank there are no windows (Open MPI 4.1's default one-sided
 * component cannot create one for a single process) and nothing remote:
 * the control memory is operated on with the CPU's atomics. */
static int64_t local_fop(ph_dsm *c, size_t disp, int64_t value, MPI_Op op)
{
    int64_t *p = (int64_t *)((char *)c->cbase + disp);
    if (op == MPI_SUM)
        return __atomic_fetch_add(p, value, __ATOMIC_SEQ_CST);
    if (op == MPI_REPLACE)
        return __atomic_exchange_n(p, value, __ATOMIC_SEQ_CST);
    return __atomic_load_n(p, __ATOMIC_SEQ_CST);         /* MPI_NO_OP */
}

void ph_dsm_put_atomic(ph_dsm *c, int rank, size_t disp, const uint64_t *buf,
                    int count, const char *what)
{
    if (c->nowin) {
        uint64_t *p = (uint64_t *)((char *)c->cbase + disp);
        for (int i = 0; i < count; i++)
            __atomic_store_n(&p[i], buf[i], __ATOMIC_SEQ_CST);
        return;
    }
    ph_dsm_op_begin(c, what, rank);
    int rc = MPI_Accumulate(buf, count, MPI_UINT64_T, rank, (MPI_Aint)disp,
                            count, MPI_UINT64_T, MPI_REPLACE, c->cwin);
    ph_dsm_mpi_check(c, rc, "MPI_Accumulate", rank);
    ph_dsm_op_end(c);
    c->st.rma_calls++;
    c->st.bytes_sent += (uint64_t)count * sizeof *buf;
}

void ph_dsm_get_atomic(ph_dsm *c, int rank, size_t disp, uint64_t *buf, int count,
                    const char *what)
{
    if (c->nowin) {
        const uint64_t *p = (const uint64_t *)((char *)c->cbase + disp);
        for (int i = 0; i < count; i++)
            buf[i] = __atomic_load_n(&p[i], __ATOMIC_SEQ_CST);
        return;
    }
    ph_dsm_op_begin(c, what, rank);
    int rc = MPI_Get_accumulate(buf, count, MPI_UINT64_T, buf, count,
                                MPI_UINT64_T, rank, (MPI_Aint)disp, count,
                                MPI_UINT64_T, MPI_NO_OP, c->cwin);
    ph_dsm_mpi_check(c, rc, "MPI_Get_accumulate", rank);
    ph_dsm_op_end(c);
    c->st.rma_calls++;
}

void ph_dsm_ctl_flush(ph_dsm *c, int rank, const char *what)
{
    if (c->nowin)
        return;
    ph_dsm_op_begin(c, what, rank);
    int rc = MPI_Win_flush(rank, c->cwin);
    ph_dsm_mpi_check(c, rc, "MPI_Win_flush", rank);
    ph_dsm_op_end(c);
    c->st.flushes++;
}

int64_t ph_dsm_fop(ph_dsm *c, int rank, size_t disp, int64_t value, MPI_Op op,
                const char *what)
{
    if (c->nowin)
        return local_fop(c, disp, value, op);
    int64_t result = 0;
    ph_dsm_op_begin(c, what, rank);
    MPI_Request q;
    int rc = MPI_Rget_accumulate(&value, 1, MPI_INT64_T, &result, 1,
                                 MPI_INT64_T, rank, (MPI_Aint)disp, 1,
                                 MPI_INT64_T, op, c->cwin, &q);
    ph_dsm_mpi_check(c, rc, "MPI_Rget_accumulate (fetch-and-op)", rank);
    ph_dsm_wait_req(c, &q, "MPI_Rget_accumulate (fetch-and-op)", rank);
    ph_dsm_op_end(c);
    c->st.rma_calls++;
    c->st.bytes_sent += sizeof value;
    return result;
}

/* Probe every other rank once: a fetch-and-op on its liveness word, which
 * its service thread answers (or the transport completes) even while its
 * application computes.  A dead rank trips the watchdog. */
static void probe_liveness(ph_dsm *c)
{
    for (int r = 0; r < c->nranks; r++) {
        if (r == c->rank)
            continue;
        ph_dsm_fop(c, r, c->ctl.heartbeat, 1, MPI_SUM, "a liveness probe");
    }
}

void ph_dsm_wait_collective(ph_dsm *c, MPI_Request *req, const char *what)
{
    c->st.collectives++;
    ph_dsm_wait_all(c, req, 1, what);
}

void ph_dsm_wait_all(ph_dsm *c, MPI_Request *req, int nreq, const char *what)
{
    uint64_t start = ph_now_ns();
    uint64_t limit = (uint64_t)c->timeout_ms * 1000000u;
    uint64_t next_probe = start + limit;
    uint64_t spin_until = start + (uint64_t)c->spin_us * 1000u;
    for (unsigned turn = 0;; turn++) {
        /* (MPI_Test on each: a completed request becomes
         * MPI_REQUEST_NULL, which tests as done; MPICH's MPI_Testall with
         * MPI_STATUSES_IGNORE trips gcc's -Wstringop-overflow) */
        int done = 1;
        for (int i = 0; i < nreq; i++) {
            int d = 0;
            int rc = MPI_Test(&req[i], &d, MPI_STATUS_IGNORE);
            ph_dsm_mpi_check(c, rc, what, -1);
            done &= d;
        }
        if (done)
            return;
        /* the first 64 turns (a few microseconds: most collectives end
         * within them) test and nothing else -- a clock read is tens of
         * nanoseconds on a virtual machine, a look for faults a system
         * call -- but for a clock read every 16th */
        if (turn < 64 && (turn & 15) != 15)
            continue;
        /* faults of threads outside the barrier: look every 8th turn (a
         * read of the userfaultfd is a system call) */
        int worked = (turn & 7) == 7 && turn >= 63 ? ph_dsm_serve_faults(c)
                                                    : 0;
        uint64_t now = ph_now_ns();
        ph_dsm_role_beat(c, now);
        if (now >= next_probe) {
            probe_liveness(c);
            next_probe = ph_now_ns() + limit;
        }
        if (worked) {
            spin_until = now + (uint64_t)c->spin_us * 1000u;
            continue;
        }
        /* Like MPI's own blocking calls, keep driving progress (MPICH's
         * one-sided operations on this rank's windows need it): for the
         * first microseconds without giving up the CPU (a collective of
         * ranks that arrive together ends within them, and a yield to a
         * runnable thread costs a scheduler slice), then yielding it each
         * turn; after a long wait, nap briefly between turns. */
        if (now - start < 5000u)
            continue;
        if (now < spin_until || now - start < 50000000u)
            sched_yield();
        else
            ph_dsm_service_idle(c, 20000);
    }
}

/*
 * A small allgather by point-to-point messages: Bruck's dissemination
 * algorithm, ceil(log2 n) rounds, in round k every rank sends the blocks
 * it has (its own and the 2^k - 1 after it, in rank order from itself) to
 * rank r - 2^k and receives as many from rank r + 2^k.  MPI's own
 * MPI_Iallgather is a schedule built and freed by the collective library
 * at every call: measured here (2 ranks, 64 bytes each) 1.2 us with Open
 * MPI 4.1 and 2.4 us with MPICH 4.0 against 0.5 us for this and for
 * MPI_Barrier (bench/README.md, "The empty barrier").  Every rank sends a
 * rank exactly one message per call, in the same round, and calls are
 * made in the same order on every rank, so one tag matches them in order
 * (MPI does not let messages between two ranks on one tag overtake).
 */
#define PH_XCHG_TAG 0x7863

void ph_dsm_allgather_small(ph_dsm *c, const void *mine, void *all,
                            size_t bytes, const char *what)
{
    int n = c->nranks, me = c->rank;
    c->st.collectives++;
    if (n == 1 || bytes == 0) {
        memmove(all, mine, bytes);
        return;
    }
    if ((size_t)n * bytes > (size_t)INT_MAX)
        ph_dsm_fatal(c, "%s: %zu bytes a rank is too much to exchange",
                     what, bytes);
    /* blocks in the order me, me+1, ... (mod n) */
    char *tmp = malloc((size_t)n * bytes);
    if (!tmp)
        ph_dsm_fatal(c, "%s: out of memory", what);
    memcpy(tmp, mine, bytes);
    int have = 1;
    /* (not a watched operation: a rank may reach a collective late for a
     * legitimate reason; ph_dsm_wait_all probes liveness instead) */
    for (int s = 1; have < n; s <<= 1) {
        int cnt = have < n - have ? have : n - have;
        int to = (me - s + n) % n, from = (me + s) % n;   /* s < n */
        MPI_Request q[2];
        int rc = MPI_Irecv(tmp + (size_t)have * bytes, (int)(cnt * bytes),
                           MPI_BYTE, from, PH_XCHG_TAG, c->comm, &q[0]);
        ph_dsm_mpi_check(c, rc, "MPI_Irecv", from);
        rc = MPI_Isend(tmp, (int)(cnt * bytes), MPI_BYTE, to, PH_XCHG_TAG,
                       c->comm, &q[1]);
        ph_dsm_mpi_check(c, rc, "MPI_Isend", to);
        c->st.bytes_sent += (uint64_t)cnt * bytes;
        ph_dsm_wait_all(c, q, 2, what);
        have += cnt;
    }
    for (int k = 0; k < n; k++)
        memcpy((char *)all + (size_t)((me + k) % n) * bytes,
               tmp + (size_t)k * bytes, bytes);
    free(tmp);
}

void ph_dsm_win_sync(ph_dsm *c)
{
    if (c->nowin)
        return;
    MPI_Win_sync(c->win);
    MPI_Win_sync(c->cwin);
}
