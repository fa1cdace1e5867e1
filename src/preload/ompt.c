/*
 * ompt.c -- the OpenMP tools interface of the transparent mode.
 *
 * LLVM's OpenMP runtime (libomp) calls ompt_start_tool, which
 * libpagehome_preload.so exports (ompt_chain.c: it also starts another
 * OMPT tool found after this library, and multiplexes the two); pagehome's
 * tool, ph_ompt_own_tool(), registers these callbacks:
 *
 *   implicit_task  begin of an implicit task of the outermost team:
 *                  ph_thread_note(index, team size) (the engine sees thread
 *                  migrations; the thread gets its alternate signal stack).
 *                  Threads of nested teams only get the signal stack.
 *   parallel_begin a region of the outermost level (encountered outside any
 *                  parallel region): its codeptr_ra feeds the region
 *                  detector (period.c); at a boundary, ph_iteration_end()
 *                  runs before the region starts.
 *   sync_region    barriers (every kind: clang reports explicit/implicit
 *                  barriers, gcc code on libomp "implementation" ones),
 *                  counted; while the region detector has no period, the
 *                  master thread of an outermost region feeds its barriers'
 *                  codeptr_ra to a second detector, reset at every
 *                  outermost region: a program that is one big region with
 *                  the time loop inside gets its iteration ends there (at
 *                  the begin of the anchor barrier, while the team waits).
 *   parallel_end   closes the sampler's region gate (outermost regions).
 *   thread_begin,  counted; an initial thread's begin and end tell the
 *   thread_end     sampler which threads run the serial code, whose traps
 *                  between regions are not samples (a library's own
 *                  pthreads working there are sampled).
 *
 * Choosing the mechanism.  The engine is made by the first engine call,
 * which comes early whatever ompt.c does (hot.c registers the program's
 * large allocations, preload.c its static segments), so the mechanism
 * cannot be chosen before the engine exists.  Instead: the engine starts
 * with the configured mechanism (iterative by default); thread notes start
 * at once; when neither detector has locked after OMPT_DECIDE_IDS regions
 * (or that many barriers of one region), the engine is switched to the
 * sampling mechanism at run time through ph_api_engine_switch()
 * (api/transparent.h),
 * but only when `engine` was left at its default -- a mechanism the user
 * chose is kept.  Boundaries found later still call ph_iteration_end(),
 * which counts iterations under every mechanism.
 * By time as well: a program may run one long region without barriers
 * (a Monte Carlo kernel) or take long over its first iterations, and then
 * no callback comes to count.  A watchdog thread, started at the first
 * outermost region, decides the fallback when period_wait_ms have passed
 * since then without a period -- or, while regions and barriers keep
 * coming (slow iterations still showing their period), after up to
 * OMPT_WAIT_ROUNDS such waits (more while the stream is seen repeating
 * itself: watchdog_main); when a period is found after such a
 * fallback, the engine goes back to the iterative mechanism (the
 * sampling mechanism only stood in until the iteration was known).
 *
 * Phases (the hybrid mechanism only, PAGEHOME_ENGINE=hybrid / --migrate
 * hybrid).  While the regions have a period, every distinct outermost
 * region (codeptr_ra, at most OMPT_MAX_PHASES) is a phase:
 * ph_phase_begin at its parallel_begin (after any iteration end), and
 * ph_phase_end at its parallel_end.  The engine ignores the calls during
 * its iterative part, then records each phase once and replays/undoes the
 * migrations it found: a region that accesses the data like the rest of
 * the iteration records none; one with its own pattern (an ADI z sweep)
 * gets its pages moved before it and back after it.  The report lists how
 * many regions became phases.
 *
 * PAGEHOME_ENGINE=off: the callbacks run and count, but no engine function
 * is called (statistics only).
 *
 * The callbacks keep no state in the runtime's ompt_data_t slots (thread,
 * parallel, task data): thread-local variables and code addresses only.
 * When another tool runs beside pagehome the slots are that tool's
 * (ompt_chain.c) and these callbacks get NULL for them.
 *
 * Cost: one mutex and an O(1) match per outermost region once a period is
 * locked (O(max_period) while searching); no allocation after start-up
 * (the detectors are allocated in the initializer).
 */
#include "preload/ompt_chain.h"
#include "preload/period.h"
#include "preload/preload.h"

#include "pagehome.h"
#include "api/transparent.h"
#include "base/clock.h"
#include "base/json_write.h"
#include "base/log.h"
#include "base/thread.h"
#include "config/options.h"
#include "sample/source.h"

#include <dlfcn.h>
#include <omp-tools.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

/* Regions (or barriers of one region) without a period before the engine
 * falls back to the sampling mechanism. */
#define OMPT_DECIDE_IDS 64
/* Distinct parallel regions that can be phases (the engine's limit). */
#define OMPT_MAX_PHASES 64

enum { DECIDE_NONE = 0, DECIDE_PERIOD = 1, DECIDE_FALLBACK = 2 };

static struct {
    pthread_mutex_t lock;
    ph_period *regions;     /* outermost regions */
    ph_period *barriers;    /* barriers of the current outermost region */
    int active;             /* initialised */
    int engine_on;          /* engine calls allowed */
    int may_switch;         /* engine left at its default mechanism */
    int decided;            /* DECIDE_* */
    int switched;           /* the engine now samples */
    uint64_t decided_at;    /* regions when decided */
    int by_time;            /* the fallback came from the watchdog */
    int wait_rounds;        /* the watchdog's waits so far (0: none) */
    uint64_t master_barriers; /* barriers of outermost regions, as the
                               * primary thread met them */
    int switched_back;      /* a period found later: iterative again */
    uint64_t first_region_ns; /* the first outermost region began */
    uint64_t decided_ms;    /* ms after it when the fallback was decided */
    /* watchdog (time fallback) */
    pthread_t watchdog;
    int watchdog_on, watchdog_stop;
    pthread_cond_t watchdog_cv;
    /* counters (under lock unless atomic) */
    uint64_t regions_n, region_boundaries, barrier_boundaries;
    size_t barrier_period;  /* last barrier period found */
    uintptr_t barrier_anchor;
    atomic_ullong nested, barriers_n, barrier_kind[4];
    atomic_ullong threads, notes, note_errors, iter_errors;
    atomic_ullong thread_kind[3];   /* thread_begin: initial, worker, other */
    atomic_uint max_team;           /* largest outermost team seen */
    atomic_int printed;
    char runtime[128];      /* runtime_version given to ompt_start_tool */
    char omp_tool[64];      /* OMP_TOOL's value when it lets no tool start */
    /* hybrid mechanism: outermost regions as phases */
    int hybrid;                        /* engine = hybrid */
    uintptr_t phase_region[OMPT_MAX_PHASES]; /* phase id -> codeptr */
    int nphases;
    int phase_open;                    /* phase of the running region, -1 */
    uint64_t since_boundary;           /* outermost regions since the last
                                          iteration boundary */
    atomic_ullong phase_calls, phase_errors, phase_full;
} st = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Nesting depth of implicit tasks on this thread (0 = outside any region)
 * and the thread's number in its outermost team. */
static _Thread_local int tls_depth;
static _Thread_local unsigned tls_index;

/* ---- decisions --------------------------------------------------------- */

/* Under st.lock: decide once whether the stream has a period.  Returns
 * 1 to fall back to sampling, 2 to go back to the iterative mechanism (a
 * period found after the watchdog's fallback), else 0. */
static int decide_locked(void)
{
    ph_period_report rr, br;
    ph_period_get_report(st.regions, &rr);
    ph_period_get_report(st.barriers, &br);
    if (st.decided == DECIDE_FALLBACK && st.by_time && !st.switched_back &&
        (rr.period || br.period)) {
        st.switched_back = 1;
        return st.switched ? 2 : 0;
    }
    if (st.decided)
        return 0;
    if (rr.period || br.period) {
        st.decided = DECIDE_PERIOD;
        st.decided_at = st.regions_n;
        return 0;
    }
    if ((rr.ids >= OMPT_DECIDE_IDS && rr.fallback) ||
        (br.ids >= OMPT_DECIDE_IDS && br.fallback)) {
        st.decided = DECIDE_FALLBACK;
        st.decided_at = st.regions_n;
        return 1;
    }
    return 0;
}

/* Outside st.lock: the stream has no period (fb 1), or has one after
 * the watchdog's fallback (fb 2). */
static void fall_back(int fb)
{
    char why[96];
    if (st.by_time)
        snprintf(why, sizeof why, "no period %llu ms after the first parallel region",
                 (unsigned long long)st.decided_ms);
    else
        snprintf(why, sizeof why, "no period after %d regions", OMPT_DECIDE_IDS);
    if (fb == 2) {
        if (ph_api_engine_switch("iterative") == 0)
            ph_info("ompt: a period found at last: the iterative mechanism again");
        else
            ph_warn("ompt: cannot switch to the iterative mechanism: %s",
                    ph_last_error());
        return;
    }
    if (!st.engine_on || !st.may_switch) {
        ph_info("ompt: %s%s", why,
                st.engine_on ? "; keeping the configured mechanism" : "");
        return;
    }
    if (ph_api_engine_switch("sampling") == 0) {
        st.switched = 1;
        ph_info("ompt: %s: sampling mechanism%s", why,
                st.by_time ? " until one is found" : "");
    } else {
        ph_warn("ompt: cannot switch to the sampling mechanism: %s",
                ph_last_error());
    }
}

/* Regions and barriers the detectors were fed so far (under st.lock). */
static uint64_t ids_fed_locked(void)
{
    return st.regions_n + st.master_barriers;
}

/* The watchdog: at period_wait_ms after the first outermost region, the
 * fallback when nothing was decided by then -- unless regions or barriers
 * are still coming (at least OMPT_WAIT_PROGRESS in the last wait): a
 * program whose iterations are slow (a few regions a second) is still
 * showing its period, and the sampling mechanism would only stand in for
 * the iterative one meanwhile.  Then it waits again: OMPT_WAIT_ROUNDS
 * waits in all while the stream has not repeated itself yet (its first
 * cycle may be all there is), and up to OMPT_WAIT_ROUNDS_REPEATING while
 * a detector sees it repeating (ph_period_report.repeating: a streak of
 * ids equal to those one candidate period before -- the second cycle of a
 * period in progress; a period of p regions locks after about 2p).  In a
 * guest twice as slow, ft's 6-region period showed after the fourth
 * wait, and the sampling mechanism that stood in left the iterative one
 * too few steps.  A stream that stopped (one long region) falls back at
 * the end of the first wait without new ids; one that keeps coming
 * without a period still falls back by count (OMPT_DECIDE_IDS). */
#define OMPT_WAIT_PROGRESS 2
#define OMPT_WAIT_ROUNDS 4
#define OMPT_WAIT_ROUNDS_REPEATING 16

/* Under st.lock: a detector sees the stream repeating itself. */
static int repeating_locked(void)
{
    ph_period_report rr, br;
    ph_period_get_report(st.regions, &rr);
    ph_period_get_report(st.barriers, &br);
    return rr.repeating || br.repeating;
}
static void *watchdog_main(void *arg)
{
    (void)arg;
    uint64_t wait_ns = (uint64_t)ph_opt_int(PH_OPT_PERIOD_WAIT_MS) * 1000000u;
    pthread_mutex_lock(&st.lock);
    uint64_t due = st.first_region_ns + wait_ns;
    uint64_t seen = ids_fed_locked();
    for (int round = 1;; round++) {
        st.wait_rounds = round;
        struct timespec ts = {.tv_sec = (time_t)(due / 1000000000u),
                              .tv_nsec = (long)(due % 1000000000u)};
        while (!st.watchdog_stop && !st.decided && ph_now_ns() < due)
            pthread_cond_timedwait(&st.watchdog_cv, &st.lock, &ts);
        if (st.watchdog_stop || st.decided || round >= OMPT_WAIT_ROUNDS_REPEATING ||
            (round >= OMPT_WAIT_ROUNDS && !repeating_locked()))
            break;
        uint64_t now_ids = ids_fed_locked();
        if (now_ids - seen < OMPT_WAIT_PROGRESS)
            break;
        seen = now_ids;
        /* the next wait starts now: a look that came late (a loaded
         * machine) must not make the next one come at once, with too few
         * new ids to count as progress */
        due = ph_now_ns() + wait_ns;
    }
    int fb = 0;
    if (!st.watchdog_stop && !st.decided) {
        ph_period_report rr, br;
        ph_period_get_report(st.regions, &rr);
        ph_period_get_report(st.barriers, &br);
        if (!rr.period && !br.period) {
            st.decided = DECIDE_FALLBACK;
            st.decided_at = st.regions_n;
            st.by_time = 1;
            st.decided_ms = (ph_now_ns() - st.first_region_ns) / 1000000u;
            fb = 1;
        }
    }
    pthread_mutex_unlock(&st.lock);
    if (fb)
        fall_back(1);
    return NULL;
}

/* Under st.lock, at the first outermost region: start the watchdog. */
static void watchdog_start_locked(void)
{
    st.first_region_ns = ph_now_ns();
    if (ph_opt_int(PH_OPT_PERIOD_WAIT_MS) <= 0)
        return;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&st.watchdog_cv, &ca);
    pthread_condattr_destroy(&ca);
    /* the watchdog must not take a signal meant for the program's
     * threads (base/thread.h), nor run OMPT callbacks: a plain thread */
    st.watchdog_on =
        ph_thread_start(&st.watchdog, "ph-ompt-watch", watchdog_main, NULL) == 0;
    if (!st.watchdog_on)
        ph_info("ompt: no watchdog thread: the fallback is decided by the "
                "region count only");
}

static void watchdog_stop(void)
{
    pthread_mutex_lock(&st.lock);
    int on = st.watchdog_on;
    st.watchdog_on = 0;
    st.watchdog_stop = 1;
    if (on)
        pthread_cond_signal(&st.watchdog_cv);
    pthread_mutex_unlock(&st.lock);
    if (on)
        pthread_join(st.watchdog, NULL);
}

/* Under st.lock, hybrid mechanism: the phase of an outermost region.
 * Only while the regions have a period (the region is part of the outer
 * iteration); each distinct region (codeptr) is one phase, up to
 * OMPT_MAX_PHASES.  The engine records each one's accesses once its
 * iterative part is over and keeps the migrations that region wants
 * against the placement the iteration as a whole settled on: a region
 * whose pattern matches the rest records none and costs only the calls,
 * one whose pattern differs (an ADI z sweep) gets its pages moved before
 * it and back after it.  -1: not a phase. */
static int phase_of_locked(uintptr_t codeptr)
{
    if (!st.engine_on || ph_period_length(st.regions) == 0)
        return -1;
    for (int i = 0; i < st.nphases; i++)
        if (st.phase_region[i] == codeptr)
            return i;
    if (st.nphases == OMPT_MAX_PHASES) {
        atomic_fetch_add_explicit(&st.phase_full, 1, memory_order_relaxed);
        return -1;
    }
    st.phase_region[st.nphases] = codeptr;
    return st.nphases++;
}

/* The progress line (tunable `progress`; auto: when stderr is a
 * terminal).  The program's own writes to stderr cannot be seen (stdio
 * writes through libc's internal write), so the line is shown only while
 * the program is least likely to write: it is drawn at an iteration
 * boundary (at most every 500 ms), i.e. as the iteration's parallel work
 * starts, and erased ("\r" and erase-to-end-of-line) when the last
 * outermost region of the iteration ends -- before the serial code between
 * iterations, where programs print their per-step lines -- and at exit.
 * So the program's lines start on a clean line; one written from inside
 * a parallel region while the line is shown still follows it.  Each draw
 * also starts with the erase, so nothing of an older, longer line stays. */
static int progress_on(void)
{
    static int on = -1;
    if (on < 0) {
        const char *p = ph_opt_str(PH_OPT_PROGRESS);
        on = strcmp(p, "on") == 0 || (strcmp(p, "auto") == 0 && isatty(2));
    }
    return on;
}

static atomic_int progress_shown;

#define ERASE_LINE "\r\033[K"

static void progress_erase(void)
{
    if (atomic_exchange(&progress_shown, 0) &&
        write(2, ERASE_LINE, sizeof ERASE_LINE - 1) < 0)
        return;
}

static void progress(void)
{
    static _Atomic uint64_t last_ns;
    uint64_t now = ph_now_ns();
    uint64_t prev = atomic_load(&last_ns);
    if (now - prev < 500000000u)
        return;
    ph_engine_stats_t es;
    if (ph_api_engine_try_stats(&es) != 0)
        return; /* busy migrating: the next iteration end tries again */
    if (!atomic_compare_exchange_strong(&last_ns, &prev, now))
        return;
    double remote = es.accesses ? 100.0 * (double)es.remote_accesses_after /
                                      (double)es.accesses : 0.0;
    char line[160];
    int n = snprintf(line, sizeof line,
                     ERASE_LINE "pagehome: iteration %llu, %llu pages migrated, remote "
                     "%.1f%% of samples",
                     (unsigned long long)es.iterations, (unsigned long long)es.migrated,
                     remote);
    if (n > 0 && (size_t)n < sizeof line && write(2, line, (size_t)n) > 0)
        atomic_store(&progress_shown, 1);
}

/* At the end of an outermost region: erase the line when the iteration's
 * last region ended (or the iterations are not periods of regions). */
static void progress_region_end(void)
{
    if (!atomic_load_explicit(&progress_shown, memory_order_relaxed))
        return;
    pthread_mutex_lock(&st.lock);
    size_t period = ph_period_length(st.regions);
    int last = period == 0 || st.since_boundary % period == 0;
    pthread_mutex_unlock(&st.lock);
    if (last)
        progress_erase();
}

static void iteration_end(void)
{
    if (st.engine_on && ph_iteration_end() != 0)
        atomic_fetch_add_explicit(&st.iter_errors, 1, memory_order_relaxed);
    if (st.engine_on && progress_on())
        progress();
}

/* ---- callbacks --------------------------------------------------------- */

static void on_thread_begin(ompt_thread_t type, ompt_data_t *data)
{
    (void)data;
    atomic_fetch_add_explicit(&st.threads, 1, memory_order_relaxed);
    int k = type == ompt_thread_initial ? 0 : type == ompt_thread_worker ? 1 : 2;
    atomic_fetch_add_explicit(&st.thread_kind[k], 1, memory_order_relaxed);
    if (type == ompt_thread_initial)
        ph_sampler_note_serial_thread(1);
}

static void on_thread_end(ompt_data_t *data)
{
    (void)data;
    /* the sampler forgets a thread id only for the thread that noted it */
    ph_sampler_note_serial_thread(0);
}

static void on_parallel_begin(ompt_data_t *task, const ompt_frame_t *frame,
                              ompt_data_t *par, unsigned int requested,
                              int flags, const void *codeptr)
{
    (void)task;
    (void)frame;
    (void)par;
    (void)requested;
    (void)flags;
    if (tls_depth > 0) {
        atomic_fetch_add_explicit(&st.nested, 1, memory_order_relaxed);
        return;
    }
    pthread_mutex_lock(&st.lock);
    if (st.regions_n++ == 0)
        watchdog_start_locked();
    int boundary = ph_period_feed(st.regions, (uintptr_t)codeptr);
    if (boundary) {
        st.region_boundaries++;
        st.since_boundary = 0;
    }
    st.since_boundary++;
    ph_period_reset(st.barriers);
    int fb = decide_locked();
    int phase = st.hybrid ? phase_of_locked((uintptr_t)codeptr) : -1;
    st.phase_open = phase;
    pthread_mutex_unlock(&st.lock);
    if (fb)
        fall_back(fb);
    if (boundary)
        iteration_end();
    if (phase >= 0) {
        atomic_fetch_add_explicit(&st.phase_calls, 1, memory_order_relaxed);
        if (ph_phase_begin(phase) != 0)
            atomic_fetch_add_explicit(&st.phase_errors, 1, memory_order_relaxed);
    }
    if (st.engine_on)
        ph_sampler_gate(1); /* watched pages are protected from here on */
}

static void on_parallel_end(ompt_data_t *par, ompt_data_t *task, int flags,
                            const void *codeptr)
{
    (void)par;
    (void)task;
    (void)flags;
    (void)codeptr;
    if (tls_depth > 0)
        return;
    if (st.engine_on)
        ph_sampler_gate(0); /* serial code never meets a protected page */
    progress_region_end();
    if (!st.hybrid)
        return;
    pthread_mutex_lock(&st.lock);
    int phase = st.phase_open;
    st.phase_open = -1;
    pthread_mutex_unlock(&st.lock);
    if (phase >= 0 && ph_phase_end(phase) != 0)
        atomic_fetch_add_explicit(&st.phase_errors, 1, memory_order_relaxed);
}

static void on_implicit_task(ompt_scope_endpoint_t endpoint,
                             ompt_data_t *par, ompt_data_t *task,
                             unsigned int nthreads, unsigned int index,
                             int flags)
{
    (void)par;
    (void)task;
    if (!(flags & ompt_task_implicit) || (flags & ompt_task_initial))
        return;
    if (endpoint == ompt_scope_end) {
        if (tls_depth > 0)
            tls_depth--;
        return;
    }
    if (endpoint != ompt_scope_begin)
        return;
    if (++tls_depth == 1) {
        tls_index = index;
        unsigned m = atomic_load_explicit(&st.max_team, memory_order_relaxed);
        while (nthreads > m &&
               !atomic_compare_exchange_weak(&st.max_team, &m, nthreads))
            ;
    }
    if (!st.engine_on)
        return;
    if (tls_depth == 1) {
        atomic_fetch_add_explicit(&st.notes, 1, memory_order_relaxed);
        if (ph_thread_note((int)index, (int)nthreads) != 0)
            atomic_fetch_add_explicit(&st.note_errors, 1,
                                      memory_order_relaxed);
    } else {
        ph_sampler_thread_init();
    }
}

static int barrier_kind_index(ompt_sync_region_t kind)
{
    switch ((int)kind) {
    case 1: case 2: case 8: case 9: /* (implicit: deprecated names in 5.1) */
        return 0;
    case ompt_sync_region_barrier_explicit:
        return 1;
    case ompt_sync_region_barrier_implementation:
        return 2;
    case ompt_sync_region_barrier_teams:
        return 3;
    default:
        return -1; /* taskwait, taskgroup, reduction */
    }
}

static void on_sync_region(ompt_sync_region_t kind,
                           ompt_scope_endpoint_t endpoint, ompt_data_t *par,
                           ompt_data_t *task, const void *codeptr)
{
    (void)par;
    (void)task;
    int k = barrier_kind_index(kind);
    if (k < 0 || endpoint != ompt_scope_begin)
        return;
    atomic_fetch_add_explicit(&st.barriers_n, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&st.barrier_kind[k], 1, memory_order_relaxed);
    if (tls_depth != 1 || tls_index != 0 || !codeptr)
        return;
    pthread_mutex_lock(&st.lock);
    st.master_barriers++;
    int boundary = 0;
    if (ph_period_length(st.regions) == 0) {
        boundary = ph_period_feed(st.barriers, (uintptr_t)codeptr);
        if (ph_period_length(st.barriers)) {
            st.barrier_period = ph_period_length(st.barriers);
            st.barrier_anchor = ph_period_anchor(st.barriers);
        }
        if (boundary)
            st.barrier_boundaries++;
    }
    int fb = decide_locked();
    pthread_mutex_unlock(&st.lock);
    if (fb)
        fall_back(fb);
    if (boundary)
        iteration_end();
}

/* ---- fork() (fork.c) ---------------------------------------------------- */

void ph_preload_ompt_fork_prepare(void)
{
    pthread_mutex_lock(&st.lock);
}

void ph_preload_ompt_fork_parent(void)
{
    pthread_mutex_unlock(&st.lock);
}

void ph_preload_ompt_fork_child(void)
{
    pthread_mutex_init(&st.lock, NULL);
}

/* ---- summary ----------------------------------------------------------- */

int ph_preload_ompt_summary(char *buf, size_t len)
{
    if (!st.active)
        return snprintf(buf, len, "ompt: not active");
    pthread_mutex_lock(&st.lock);
    ph_period_report rr;
    ph_period_get_report(st.regions, &rr);
    uint64_t nreg = st.regions_n, rb = st.region_boundaries,
             bb = st.barrier_boundaries;
    size_t bp = st.barrier_period;
    uintptr_t ba = st.barrier_anchor;
    int decided = st.decided, switched = st.switched;
    uint64_t decided_at = st.decided_at;
    char waits[48] = "";
    if (st.wait_rounds > 1)
        snprintf(waits, sizeof waits, "; the watchdog waited %d times",
                 st.wait_rounds);
    pthread_mutex_unlock(&st.lock);

    char what[160];
    if (rr.last_period)
        snprintf(what, sizeof what, "period %zu (anchor %#lx)",
                 rr.last_period, (unsigned long)rr.last_anchor);
    else if (bp)
        snprintf(what, sizeof what, "barrier period %zu (anchor %#lx)", bp,
                 (unsigned long)ba);
    else if (decided == DECIDE_FALLBACK && st.by_time)
        snprintf(what, sizeof what,
                 "no period %llu ms after the first region (%llu regions): "
                 "fallback (%s)",
                 (unsigned long long)st.decided_ms, (unsigned long long)decided_at,
                 !st.engine_on ? "engine off"
                 : switched    ? "sampling mechanism"
                               : "mechanism unchanged");
    else if (decided == DECIDE_FALLBACK)
        snprintf(what, sizeof what,
                 "no period after %llu regions: fallback (%s)",
                 (unsigned long long)decided_at,
                 !st.engine_on ? "engine off"
                 : switched    ? "sampling mechanism"
                               : "mechanism unchanged");
    else
        snprintf(what, sizeof what, "no period (too few regions): fallback");
    return snprintf(buf, len,
                    "ompt: %llu regions, %s, %llu iteration boundaries "
                    "(%llu from barriers); %llu nested regions, %llu "
                    "barriers, %u threads, %llu thread notes (%llu "
                    "failed)%s%s%s%s%s",
                    (unsigned long long)nreg, what,
                    (unsigned long long)(rb + bb), (unsigned long long)bb,
                    (unsigned long long)atomic_load(&st.nested),
                    (unsigned long long)atomic_load(&st.barriers_n),
                    atomic_load(&st.max_team),
                    (unsigned long long)atomic_load(&st.notes),
                    (unsigned long long)atomic_load(&st.note_errors),
                    st.engine_on ? "" : "; engine off (statistics only)",
                    switched ? "; the sampling mechanism stood in" : "",
                    waits, ph_ompt_chain_other() ? "; beside the tool " : "",
                    ph_ompt_chain_other() ? ph_ompt_chain_other() : "");
}

void ph_preload_ompt_report(struct ph_jw *w)
{
    ph_jw_key(w, "openmp");
    ph_jw_object(w, 0);
    ph_jw_key(w, "runtime_seen");
    ph_jw_bool(w, st.active);
    ph_jw_key(w, "omp_tool");
    if (st.omp_tool[0])
        ph_jw_string(w, st.omp_tool);
    else
        ph_jw_null(w);
    if (!st.active) {
        ph_jw_key(w, "note");
        ph_jw_string(w, st.omp_tool[0]
                            ? "OMP_TOOL lets the OpenMP runtime start no tool, this one "
                              "included: no regions were seen"
                            : "no OpenMP runtime with the tools interface (OMPT) "
                              "started this tool: no regions were seen");
        ph_jw_end(w);
        return;
    }
    ph_jw_key(w, "runtime");
    ph_jw_string(w, st.runtime);
    ph_jw_key(w, "other_tool");
    if (ph_ompt_chain_other())
        ph_jw_string(w, ph_ompt_chain_other());
    else
        ph_jw_null(w);
    /* The engine lock is held by our caller and the callbacks take st.lock
     * before calling the engine: never wait for st.lock here. */
    int locked = 0;
    for (int i = 0; i < 1000 && !locked; i++) {
        locked = pthread_mutex_trylock(&st.lock) == 0;
        if (!locked)
            sched_yield();
    }
    if (locked) {
        ph_period_report rr;
        ph_period_get_report(st.regions, &rr);
        ph_jw_key(w, "regions");
        ph_jw_uint(w, st.regions_n);
        ph_jw_key(w, "iteration");
        ph_jw_string(w, rr.last_period        ? "period of the parallel regions"
                        : st.barrier_period   ? "period of one region's barriers"
                        : st.decided == DECIDE_FALLBACK && st.by_time
                            ? "none: fallback after period_wait_ms"
                        : st.decided == DECIDE_FALLBACK ? "none: fallback"
                                                        : "none yet");
        ph_jw_key(w, "fallback");
        ph_jw_string(w, st.decided != DECIDE_FALLBACK ? "none"
                        : st.by_time                  ? "time"
                                                      : "regions");
        ph_jw_key(w, "fallback_after_ms");
        if (st.decided == DECIDE_FALLBACK && st.by_time)
            ph_jw_uint(w, st.decided_ms);
        else
            ph_jw_null(w);
        ph_jw_key(w, "watchdog_waits");
        ph_jw_uint(w, (uint64_t)st.wait_rounds);
        ph_jw_key(w, "back_to_iterative");
        ph_jw_bool(w, st.switched_back && st.switched);
        ph_jw_key(w, "period");
        ph_jw_uint(w, rr.last_period ? rr.last_period : st.barrier_period);
        ph_jw_key(w, "anchor");
        ph_jw_uint(w, rr.last_period ? rr.last_anchor : st.barrier_anchor);
        ph_jw_key(w, "iteration_boundaries");
        ph_jw_uint(w, st.region_boundaries + st.barrier_boundaries);
        ph_jw_key(w, "boundaries_from_barriers");
        ph_jw_uint(w, st.barrier_boundaries);
        ph_jw_key(w, "early_boundary");
        ph_jw_bool(w, rr.early);
        ph_jw_key(w, "period_mismatches");
        ph_jw_uint(w, rr.mismatches);
        ph_jw_key(w, "switched_to_sampling");
        ph_jw_bool(w, st.switched);
        pthread_mutex_unlock(&st.lock);
    }
    ph_jw_key(w, "nested_regions");
    ph_jw_uint(w, atomic_load(&st.nested));
    ph_jw_key(w, "barriers");
    ph_jw_uint(w, atomic_load(&st.barriers_n));
    /* the threads that ran the program's parallel regions: the largest
     * outermost team; the runtime's own threads are counted apart */
    ph_jw_key(w, "threads");
    ph_jw_uint(w, atomic_load(&st.max_team));
    ph_jw_key(w, "runtime_threads");
    ph_jw_object(w, 1);
    ph_jw_key(w, "initial");
    ph_jw_uint(w, atomic_load(&st.thread_kind[0]));
    ph_jw_key(w, "worker");
    ph_jw_uint(w, atomic_load(&st.thread_kind[1]));
    ph_jw_key(w, "other");
    ph_jw_uint(w, atomic_load(&st.thread_kind[2]));
    ph_jw_end(w);
    ph_jw_key(w, "thread_notes");
    ph_jw_uint(w, atomic_load(&st.notes));
    ph_jw_key(w, "engine_calls");
    ph_jw_bool(w, st.engine_on);
    if (st.hybrid) {
        ph_jw_key(w, "phases");
        ph_jw_object(w, 1);
        ph_jw_key(w, "regions_as_phases");
        ph_jw_int(w, st.nphases);
        ph_jw_key(w, "phase_calls");
        ph_jw_uint(w, atomic_load(&st.phase_calls));
        ph_jw_key(w, "phase_errors");
        ph_jw_uint(w, atomic_load(&st.phase_errors));
        ph_jw_key(w, "regions_beyond_limit");
        ph_jw_uint(w, atomic_load(&st.phase_full));
        ph_jw_end(w);
    }
    ph_jw_end(w);
}

static void print_summary(void)
{
    if (atomic_exchange(&st.printed, 1))
        return;
    progress_erase();
    if (!st.active) {
        if (ph_opt_bool(PH_OPT_VERBOSE) && st.omp_tool[0])
            ph_info("ompt: OMP_TOOL=%s: the OpenMP runtime started no tool: no "
                    "parallel region was seen", st.omp_tool);
        else if (ph_opt_bool(PH_OPT_VERBOSE))
            ph_info("ompt: no OpenMP runtime started the tools interface: no "
                    "parallel region was seen (not an OpenMP program, or one on "
                    "a runtime without OMPT)");
        return;
    }
    if (atomic_load(&st.iter_errors))
        ph_warn("ompt: %llu iteration ends failed",
                (unsigned long long)atomic_load(&st.iter_errors));
    if (!ph_opt_bool(PH_OPT_VERBOSE))
        return;
    char line[512];
    ph_preload_ompt_summary(line, sizeof line);
    ph_info("%s", line);
}

/* ---- start-up ---------------------------------------------------------- */

/* What keeps the OpenMP runtime from starting pagehome's tool, known at
 * start-up:
 *  - OMP_TOOL as LLVM's libomp reads it (ompt_pre_init): unset, empty or
 *    "enabled" (in any case) lets a tool start; "disabled" starts none,
 *    and so does any other value (the runtime warns of it);
 *  - GNU libgomp as the program's runtime (GOMP_* without libomp's
 *    __kmpc_* beside it): it has no tools interface.  `pagehome run`
 *    runs such a program on libomp, or with --runtime=gomp chooses the
 *    sampling mechanism itself; this is for a library preloaded by hand.
 * Then no callback ever comes: no iteration for the iterative, hybrid or
 * replay mechanism, no thread notes.  pagehome respects the setting, and
 * the engine left at its default mechanism samples instead -- the
 * mechanism that needs nothing of the runtime.  A mechanism the user
 * chose is kept, with a warning that it will not act. */
void ph_preload_ompt_env(void)
{
    const char *v = getenv("OMP_TOOL");
    char why[160];
    if (v && *v && strcasecmp(v, "enabled") != 0) {
        snprintf(st.omp_tool, sizeof st.omp_tool, "%s", v);
        snprintf(why, sizeof why,
                 "OMP_TOOL=%s lets the OpenMP runtime start no tool, pagehome's included",
                 st.omp_tool);
    } else if (dlsym(RTLD_DEFAULT, "GOMP_parallel") &&
               !dlsym(RTLD_DEFAULT, "__kmpc_fork_call")) {
        snprintf(why, sizeof why,
                 "the program's OpenMP runtime is GNU libgomp, which has no tools "
                 "interface");
    } else {
        return;
    }
    ph_api_openmp_tool_absent();
    const char *mech = ph_opt_str(PH_OPT_ENGINE);
    if (strcmp(mech, "off") == 0 || strcmp(mech, "sampling") == 0)
        return;
    if (ph_opt_source_of(PH_OPT_ENGINE) != PH_SRC_DEFAULT) {
        ph_warn("ompt: %s: the %s mechanism, which needs the program's iterations, "
                "will not act (%s, or use the sampling mechanism)",
                why, mech, st.omp_tool[0] ? "unset OMP_TOOL" : "pagehome run");
        return;
    }
    if (ph_opt_set(PH_OPT_ENGINE, "sampling", PH_SRC_API) != 0) {
        ph_warn("ompt: %s: cannot choose the sampling mechanism: %s", why,
                ph_last_error());
        return;
    }
    ph_warn("ompt: %s, so pagehome cannot see iterations or threads: sampling "
            "mechanism only (%s to let pagehome see them)",
            why, st.omp_tool[0] ? "unset OMP_TOOL" : "pagehome run runs it on LLVM's libomp");
}

static int tool_initialize(ompt_function_lookup_t lookup,
                           int initial_device_num, ompt_data_t *tool_data)
{
    (void)initial_device_num;
    (void)tool_data;
    ompt_set_callback_t set_cb =
        (ompt_set_callback_t)lookup("ompt_set_callback");
    if (!set_cb)
        return 0;
    /* the regions' detector reports the stream's first repetition as a
     * boundary (period.h: early), so that the engine's first decision
     * comes after the first iteration, not at the lock; the barriers'
     * detector starts again in every region, so it would fire in each */
    ph_period_cfg rcfg;
    ph_period_cfg_default(&rcfg);
    rcfg.early = 1;
    st.regions = ph_period_new_cfg(&rcfg);
    st.barriers = ph_period_new();
    if (!st.regions || !st.barriers) {
        ph_warn("ompt: out of memory: no iteration detection");
        ph_period_free(st.regions);
        ph_period_free(st.barriers);
        st.regions = st.barriers = NULL;
        return 0;
    }
    (void)ph_api_engine_one_node(); /* may turn the engine off */
    st.engine_on = strcmp(ph_opt_str(PH_OPT_ENGINE), "off") != 0;
    st.hybrid = strcmp(ph_opt_str(PH_OPT_ENGINE), "hybrid") == 0;
    st.phase_open = -1;
    st.may_switch = ph_opt_source_of(PH_OPT_ENGINE) == PH_SRC_DEFAULT;

    struct {
        ompt_callbacks_t event;
        ompt_callback_t fn;
    } cbs[] = {
        {ompt_callback_thread_begin, (ompt_callback_t)on_thread_begin},
        {ompt_callback_thread_end, (ompt_callback_t)on_thread_end},
        {ompt_callback_parallel_begin, (ompt_callback_t)on_parallel_begin},
        {ompt_callback_parallel_end, (ompt_callback_t)on_parallel_end},
        {ompt_callback_implicit_task, (ompt_callback_t)on_implicit_task},
        {ompt_callback_sync_region, (ompt_callback_t)on_sync_region},
    };
    for (size_t i = 0; i < sizeof cbs / sizeof cbs[0]; i++) {
        ompt_set_result_t r = set_cb(cbs[i].event, cbs[i].fn);
        if (r != ompt_set_always && cbs[i].event != ompt_callback_parallel_end)
            ph_info("ompt: callback %d not always delivered (%d)",
                    (int)cbs[i].event, (int)r);
    }
    st.active = 1;
    if (st.engine_on)
        ph_sampler_gate_enable();
    /* after the gate: the pages watched again wait for the first region.
     * A runtime dlopen()ed after pagehome: the simulated machine asks it
     * for thread numbers through this (a failure leaves every thread on
     * the first node there: nothing to stop for) */
    (void)ph_api_openmp_started((const void *)(uintptr_t)lookup);
    return 1;
}

static void tool_finalize(ompt_data_t *tool_data)
{
    (void)tool_data;
    watchdog_stop();
    print_summary();
}

/* When the runtime does not finalize the tool (exit with live threads). */
__attribute__((destructor)) static void ompt_at_unload(void)
{
    print_summary();
}

ompt_start_tool_result_t *ph_ompt_own_tool(unsigned int omp_version,
                                           const char *runtime_version)
{
    (void)omp_version;
    snprintf(st.runtime, sizeof st.runtime, "%s",
             runtime_version ? runtime_version : "unknown");
    static ompt_start_tool_result_t result = {
        .initialize = tool_initialize,
        .finalize = tool_finalize,
        .tool_data = {.value = 0},
    };
    return &result;
}
