/*
 * api_engine.c -- the public entry points of the migration engine.
 *
 * The process has one engine, made on first use over the process
 * machine (topology, OS table, mover) with the SIGSEGV sampler as its
 * access source and the tunables as its configuration.  ph_finalize()
 * destroys it for good: later engine calls fail with EINVAL (a program
 * that finalizes and then registers an area has a bug worth hearing
 * about), while placement calls keep working.
 */
#include "pagehome.h"

#include "api/stats_file.h"
#include "api/transparent.h"
#include "base/error.h"
#include "base/log.h"
#include "config/options.h"
#include "engine/engine.h"
#include "machine/machine.h"
#include "sample/probe.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static pthread_mutex_t eng_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(ph_engine *) eng_ptr;
static atomic_int finalized;
static int atexit_done;
/* fork(): the preload library takes the locks in its own order and calls
 * the ph_api_fork_* functions itself (api/transparent.h); otherwise they
 * are registered with pthread_atfork when the engine is made. */
static atomic_int fork_by_caller;

/* ---- a machine with one node -------------------------------------------- */

/* No page can move on a machine with one node, so there the engine would
 * only cost: its first sweep alone traps every hot page once (0.1 s a
 * 64 MiB array with mprotect, 0.6 s with userfaultfd, in a VM).  Unless
 * one_node_engine is set, the rule turns it off, as engine=off would: no
 * sampling, no migration, placement and interposition unchanged.  Applied
 * wherever the mechanism is about to be read -- ph_init, the making of the
 * engine, the OpenMP tool's start -- so that an `engine` set in between
 * (ph_config_set) is turned off too. */
static atomic_int one_node_off;

int ph_api_engine_one_node(void)
{
    ph_machine *m = ph_machine_get();
    if (m && m->topo->nnodes == 1 && !ph_opt_bool(PH_OPT_ONE_NODE_ENGINE) &&
        strcmp(ph_opt_str(PH_OPT_ENGINE), "off") != 0) {
        if (ph_opt_set(PH_OPT_ENGINE, "off", PH_SRC_API) != 0)
            ph_warn("one NUMA node: cannot turn the engine off: %s", ph_last_error());
        else if (!atomic_exchange(&one_node_off, 1))
            ph_info("one NUMA node (topology from %s): no page can move, so the "
                    "engine is off, no sampling and no migration (one_node_engine=1 "
                    "runs it)", m->topo->source);
    }
    return atomic_load(&one_node_off);
}

static void at_exit(void)
{
    ph_engine *e = atomic_load(&eng_ptr);
    if (e) {
        ph_engine_wait(e);
        ph_statsfile_write(e);
    }
}

void ph_api_fork_external(void)
{
    atomic_store(&fork_by_caller, 1);
}

void ph_api_fork_prepare(void)
{
    pthread_mutex_lock(&eng_lock);
    ph_engine *e = atomic_load(&eng_ptr);
    if (e)
        ph_engine_fork_prepare(e);
}

void ph_api_fork_parent(void)
{
    ph_engine *e = atomic_load(&eng_ptr);
    if (e)
        ph_engine_fork_parent(e);
    pthread_mutex_unlock(&eng_lock);
}

void ph_api_fork_child(void)
{
    pthread_mutex_init(&eng_lock, NULL);
    ph_engine *e = atomic_load(&eng_ptr);
    if (e)
        ph_engine_fork_child(e);
}

void ph_api_fork_prepare_machine(void)
{
    ph_machine_fork_prepare();
}

void ph_api_fork_parent_machine(void)
{
    ph_machine_fork_parent();
}

void ph_api_fork_child_machine(void)
{
    ph_machine_fork_child();
}

/* Registered when the preload library does not order the locks itself:
 * the engine's, then the machine's (innermost). */
static void atfork_prepare(void)
{
    ph_api_fork_prepare();
    ph_machine_fork_prepare();
}

static void atfork_parent(void)
{
    ph_machine_fork_parent();
    ph_api_fork_parent();
}

static void atfork_child(void)
{
    ph_machine_fork_child();
    ph_api_fork_child();
}

int ph_api_exit_stats_due(void)
{
    return atomic_load(&eng_ptr) && !atomic_load(&finalized) &&
           ph_statsfile_owned();
}

int ph_api_exit_stats(void)
{
    if (!ph_api_exit_stats_due())
        return 0;
    ph_engine *e = atomic_load(&eng_ptr);
    ph_engine_wait(e);
    return ph_statsfile_write(e) == 0 ? 1 : -1;
}

int ph_api_write_stats_doc(struct ph_jw *w)
{
    ph_statsfile_init();
    return ph_statsfile_write_doc(w);
}

/* A limit on the process's address space or data (ulimit -v, -d), or 0.
 * The userfaultfd mechanism reserves as much address space again as the
 * arrays it watches (each area's stash, sample/uffd_service.c): a
 * program sized to its limit would run out of it. */
static unsigned long long space_limit_mib(const char **which)
{
    struct rlimit as, data;
    unsigned long long mib = 0;
    if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
        mib = (unsigned long long)as.rlim_cur >> 20;
        *which = "RLIMIT_AS (ulimit -v)";
    }
    if (getrlimit(RLIMIT_DATA, &data) == 0 && data.rlim_cur != RLIM_INFINITY &&
        (!mib || ((unsigned long long)data.rlim_cur >> 20) < mib)) {
        mib = (unsigned long long)data.rlim_cur >> 20;
        *which = "RLIMIT_DATA (ulimit -d)";
    }
    return mib;
}

static atomic_int openmp_tool_absent;

void ph_api_openmp_tool_absent(void)
{
    atomic_store(&openmp_tool_absent, 1);
}

/* The simulated machine (the machine that tracks first touches itself)
 * places a thread by its OpenMP thread number, which only the thread can
 * ask; the userfaultfd mechanism's service thread relies on the notes
 * threads leave at their implicit tasks, and without an OpenMP tool
 * nobody leaves them. */
static int places_unnoted(void)
{
    if (!atomic_load(&openmp_tool_absent))
        return 0;
    ph_machine *m = ph_machine_get();
    return m && ph_os_tracks_touch(m->os);
}

/* userfaultfd moves 4 KiB pages of private anonymous memory: with 2 MiB
 * pages (THP or hugetlbfs) the mprotect mechanism stays, and so it does
 * under a limit on the address space unless userfaultfd is asked for,
 * and on the simulated machine without an OpenMP tool (places_unnoted). */
static int uffd_wanted(void)
{
    const char *mech = ph_opt_str(PH_OPT_SAMPLE_MECHANISM), *which = "";
    return strcmp(mech, "userfaultfd") == 0 ||
           (strcmp(mech, "auto") == 0 && ph_opt_int(PH_OPT_PAGESIZE) == 4096 &&
            space_limit_mib(&which) == 0 && !places_unnoted());
}

int ph_api_sampler_protects(void)
{
    if (ph_opt_int(PH_OPT_ENGINE) == 4 /* off */)
        return 0;
    return !uffd_wanted() || !ph_sampler_uffd_usable();
}

/* The threads the program's parallel regions will run, as OpenMP picks
 * its default team: the first number of OMP_NUM_THREADS (its nesting
 * levels are comma-separated), else one a CPU; never more than the CPUs.
 * Read where the engine is made: it only tells the probe how many of the
 * program's threads to keep busy while it times a trap. */
static int team_guess(int ncpus)
{
    int team = ncpus > 0 ? ncpus : 1;
    const char *v = getenv("OMP_NUM_THREADS");
    if (v) {
        char *end;
        errno = 0;
        long n = strtol(v, &end, 10);
        if (errno == 0 && end != v && (*end == '\0' || *end == ',') && n >= 1 && n < team)
            team = (int)n;
    }
    return team;
}

static ph_engine *make_engine(ph_machine *c)
{
    ph_engine_cfg cfg;
    ph_engine_cfg_from_options(&cfg);
    /* a thread's ring holds what it may trap in one interval: up to the
     * first sweep's pages (touched rings are what costs memory) */
    size_t ring = cfg.sample_first_pages > cfg.sample_pages
                      ? cfg.sample_first_pages
                      : cfg.sample_pages;
    ring = ring < 8192 ? 8192 : ring > 65536 ? 65536 : ring;
    ph_sampler_opts so = {
        .pages_per_interval = cfg.sample_pages,
        .max_runs = (size_t)ph_opt_int(PH_OPT_SAMPLE_MAX_RUNS),
        .run_pages = (size_t)ph_opt_int(PH_OPT_SAMPLE_RUN_PAGES),
        .ring_samples = ring,
        /* the simulator learns who touches a page first from the traps */
        .first_touch = ph_os_tracks_touch(c->os),
        .mechanism = PH_SAMPLER_MPROTECT,
    };
    ph_source *src = NULL;
    int want_uffd = strcmp(ph_opt_str(PH_OPT_SAMPLE_MECHANISM), "userfaultfd") == 0;
    const char *which = "";
    unsigned long long limit_mib = space_limit_mib(&which);
    if (limit_mib && want_uffd)
        ph_warn("sample_mechanism=userfaultfd under %s of %llu MiB: watching takes as "
                "much address space again as the watched arrays",
                which, limit_mib);
    else if (limit_mib && strcmp(ph_opt_str(PH_OPT_SAMPLE_MECHANISM), "auto") == 0)
        ph_info("sampler: %s is %llu MiB: the mprotect mechanism, which takes no "
                "address space to watch (userfaultfd takes as much again as the "
                "watched arrays)",
                which, limit_mib);
    else if (strcmp(ph_opt_str(PH_OPT_SAMPLE_MECHANISM), "auto") == 0 && places_unnoted())
        ph_info("sampler: no OpenMP tool notes the threads' places, which on the "
                "simulated machine only the threads themselves can ask: the mprotect "
                "mechanism (its traps run in the faulting thread)");
    if (uffd_wanted()) {
        so.mechanism = PH_SAMPLER_USERFAULTFD;
        src = ph_sampler_open(c->os, &so);
        if (!src) {
            if (want_uffd)
                ph_warn("sample_mechanism=userfaultfd: %s: using mprotect",
                        ph_error_message());
            else
                ph_info("sampler: userfaultfd not usable (%s): mprotect",
                        ph_error_message());
        }
    }
    if (!src) {
        so.mechanism = PH_SAMPLER_MPROTECT;
        src = ph_sampler_open(c->os, &so);
    }
    if (!src)
        return NULL;
    ph_info("sampler: %s mechanism", src->ops->name);
    /* What a sample costs outside the handler, measured with this source
     * before it has any range (the simulator's touches cost what the real
     * machine's do, and would tell it first touches it must not see). */
    if (ph_opt_double(PH_OPT_SAMPLE_TRAP_NS) == 0 && !ph_os_tracks_touch(c->os) &&
        !cfg.full_snapshot) {
        ph_sampler_note_node(ph_os_current_node(c->os));
        double handler_ns = 0;
        /* with the program's team busy on the other CPUs */
        int busy = team_guess(c->topo->ncpus) - 1;
        int ran = 0;
        double trap_ns =
            ph_source_probe_trap_ns(src, 16, so.run_pages, busy, &handler_ns, &ran);
        if (trap_ns >= 0) {
            cfg.sample_trap_ns = trap_ns;
            cfg.sample_handler_ns = handler_ns;
            ph_info("sampler: a trap costs %.0f ns besides the handler's time (%.0f ns), "
                    "measured beside %d busy threads", trap_ns, handler_ns, ran);
        }
    }
    return ph_engine_new(c->topo, c->os, c->mover, src, &cfg);
}

/* The engine, made if needed; NULL with errno and a message. */
static ph_engine *engine(const char *fn)
{
    if (atomic_load(&finalized))
        return ph_fail_null(EINVAL, "%s: called after ph_finalize()", fn);
    ph_engine *e = atomic_load_explicit(&eng_ptr, memory_order_acquire);
    if (e)
        return e;
    ph_machine *c = ph_machine_get();
    if (!c)
        return NULL;
    pthread_mutex_lock(&eng_lock);
    e = atomic_load(&eng_ptr);
    if (!e && !atomic_load(&finalized)) {
        (void)ph_api_engine_one_node(); /* may turn the engine off */
        e = make_engine(c);
        if (e) {
            atomic_store_explicit(&eng_ptr, e, memory_order_release);
            if (!atexit_done) {
                atexit(at_exit);
                at_quick_exit(at_exit);
                if (!atomic_load(&fork_by_caller))
                    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
                atexit_done = 1;
            }
            ph_statsfile_notice();
        }
    }
    pthread_mutex_unlock(&eng_lock);
    if (!e && atomic_load(&finalized))
        return ph_fail_null(EINVAL, "%s: called after ph_finalize()", fn);
    return e;
}

PH_API ph_hotarea_t *ph_area_register(void *addr, size_t bytes,
                                      const char *name)
{
    ph_engine *e = engine("ph_area_register");
    if (!e)
        return NULL;
    /* The registering thread's node, for the userfaultfd mechanism's
     * service thread (it cannot ask current_node() for another thread; on
     * the simulated machine the CPU a thread last ran on says nothing).
     * OpenMP threads note theirs again at every implicit task. */
    ph_sampler_note_node(ph_os_current_node(ph_machine_get()->os));
    return ph_engine_register(e, addr, bytes, name);
}

PH_API int ph_area_unregister(ph_hotarea_t *area)
{
    ph_engine *e = engine("ph_area_unregister");
    if (!e)
        return -1;
    if (!area)
        return ph_fail(EINVAL, "ph_area_unregister: NULL area");
    return ph_engine_unregister(e, area);
}

int ph_api_area_idle(ph_hotarea_t *area, int idle)
{
    ph_engine *e = engine("area idle");
    if (!e)
        return -1;
    if (!area)
        return ph_fail(EINVAL, "area idle: NULL area");
    return ph_engine_area_idle(e, area, idle != 0);
}

PH_API int ph_iteration_end(void)
{
    ph_engine *e = engine("ph_iteration_end");
    return e ? ph_engine_iteration_end(e) : -1;
}

PH_API int ph_iterations_expected(long total)
{
    if (total < 0)
        return ph_fail(EINVAL, "ph_iterations_expected: %ld iterations", total);
    ph_engine *e = engine("ph_iterations_expected");
    return e ? ph_engine_set_iterations(e, (unsigned long)total) : -1;
}

PH_API int ph_thread_note(int thread_num, int nthreads)
{
    ph_engine *e = engine("ph_thread_note");
    if (!e)
        return -1;
    ph_sampler_thread_init();
    ph_machine *c = ph_machine_get();
    int os_node = ph_os_current_node(c->os);
    ph_sampler_note_node(os_node);
    int idx = ph_topo_node_index(c->topo, os_node);
    if (idx < 0)
        return ph_fail(EIO, "ph_thread_note: cannot tell the node of the "
                       "calling thread");
    return ph_engine_note_thread(e, thread_num, nthreads, idx);
}

PH_API int ph_phase_begin(int phase)
{
    ph_engine *e = engine("ph_phase_begin");
    return e ? ph_engine_phase_begin(e, phase) : -1;
}

PH_API int ph_phase_end(int phase)
{
    ph_engine *e = engine("ph_phase_end");
    return e ? ph_engine_phase_end(e, phase) : -1;
}

PH_API int ph_engine_flush(void)
{
    ph_engine *e = engine("ph_engine_flush");
    return e ? ph_engine_wait(e) : -1;
}

PH_API int ph_engine_stats(ph_engine_stats_t *out)
{
    if (!out)
        return ph_fail(EINVAL, "ph_engine_stats: NULL output");
    ph_engine *e = engine("ph_engine_stats");
    if (!e)
        return -1;
    ph_engine_get_totals(e, out);
    return 0;
}

PH_API int ph_area_stats(const ph_hotarea_t *area, ph_area_stats_t *out)
{
    if (!area || !out)
        return ph_fail(EINVAL, "ph_area_stats: NULL %s",
                       !area ? "area" : "output");
    ph_engine *e = engine("ph_area_stats");
    return e ? ph_engine_area_stats(e, area, out) : -1;
}

PH_API int ph_stats_write(int fd)
{
    ph_engine *e = engine("ph_stats_write");
    return e ? ph_engine_write_json(e, fd) : -1;
}

/* Not public: api/transparent.h (src/preload/ompt.c). */
int ph_api_engine_switch(const char *name)
{
    static const char *const names[] = {"iterative", "sampling", "replay",
                                        "hybrid", "off"};
    ph_engine *e = engine("engine switch");
    if (!e)
        return -1;
    for (int m = 0; m <= PH_MECH_OFF; m++)
        if (name && strcmp(name, names[m]) == 0)
            return ph_engine_set_mechanism(e, (ph_mechanism)m);
    return ph_fail(EINVAL, "engine switch: no mechanism \"%s\"",
                   name ? name : "(null)");
}

/* Not public: api/transparent.h (src/preload/ompt.c's progress line,
 * which must not wait for a migration in progress). */
int ph_api_engine_try_stats(ph_engine_stats_t *out)
{
    ph_engine *e = atomic_load(&eng_ptr);
    if (!e || atomic_load(&finalized))
        return -1;
    return ph_engine_try_totals(e, out);
}

/* Not public: api/transparent.h (src/preload/signals.c). */
int ph_api_thread_start(void)
{
    /* Not current_node(): on the simulated machine it asks the OpenMP
     * runtime, which would adopt this thread as a new initial thread.
     * The userfaultfd sampler finds an unnoted thread's CPU itself. */
    return atomic_load(&finalized) ? 0 : ph_sampler_thread_init();
}

/* Not public: api/transparent.h (src/preload/ompt.c).  The simulated
 * machine asks the runtime itself for a thread's place (on Linux the
 * kernel knows the thread's CPU); the engine, if there is one yet, drops
 * what serial code trapped before.  Never makes the engine. */
int ph_api_openmp_started(const void *runtime_addr)
{
    int rc = ph_sim_find_openmp(runtime_addr);
    ph_engine *e = atomic_load(&eng_ptr);
    if (e && !atomic_load(&finalized) && ph_engine_runtime_started(e) != 0)
        rc = -1;
    return rc;
}

PH_API int ph_finalize(void)
{
    pthread_mutex_lock(&eng_lock);
    if (atomic_exchange(&finalized, 1)) {
        pthread_mutex_unlock(&eng_lock);
        return ph_fail(EINVAL, "ph_finalize: called twice");
    }
    ph_engine *e = atomic_exchange(&eng_ptr, NULL);
    pthread_mutex_unlock(&eng_lock);
    if (e) {
        ph_engine_wait(e);
        ph_statsfile_write(e);
        ph_engine_free(e);
    }
    return 0;
}
