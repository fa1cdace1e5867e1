/*
 * engine.h -- the page migration engine (UPMlib, rebuilt for Linux).
 *
 * One engine owns: the hot areas (hot.h), an access source (sample/
 * source.h) that turns program accesses into samples, the migration criteria
 * (criteria/criteria.h, pure functions), and a mover (move/mover.h) that
 * runs move_pages in batches.  The same engine runs on the real kernel
 * and on the simulated machine: it only sees the ph_os table.
 *
 * Mechanisms (cfg.mech):
 *   ITERATIVE  ph_engine_iteration_end() at the end of each outer
 *              iteration (upmlib_migrate_memory): drain the samples of the
 *              iteration, apply the competitive (or, after a thread
 *              migration, the predictive) criterion to every sampled page
 *              of every area that is not cold, freeze ping-pong pages,
 *              migrate, self-tune, mark cold areas.  Deactivates after
 *              stable_after invocations without a migration; a predictive
 *              trigger re-arms it.
 *   SAMPLING   for programs without iterations: the memory manager wakes
 *              every sample_period_ms, drains, migrates at most
 *              sample_max_moves pages (the most critical first), re-arms.
 *   REPLAY     phases: the first occurrence of a phase records its
 *              accesses (ph_engine_phase_begin/end); later occurrences
 *              replay the derived migrations before the phase and undo
 *              them after (upmlib_record / replay / undo).
 *   HYBRID     ITERATIVE for at least hybrid_iters iterations and until
 *              it has seen the placement whole (every watched page looked
 *              at since it began, and an invocation without a
 *              migration), then phases are recorded and replayed.  Before
 *              the first iteration ends, the memory manager looks at the
 *              samples every early_period_ms (ph_engine_look) and moves
 *              the pages whose evidence is already decisive (early.c), so
 *              that a program with few iterations does not run its whole
 *              first one on a bad placement.
 * Criteria (cfg.criterion): AMORTISED (criteria/amortised.h: a move must
 * pay for itself over the expected rest of the run, from decayed
 * evidence) or COMPETITIVE (UPMlib's eq. 1, one interval against one
 * move).  The expected rest of the run comes from the iterations seen and
 * a total the program gave (cfg.iterations_expected,
 * ph_engine_set_iterations), else conservatively as long again.
 * Where the work runs: on the memory-manager thread (the program's thread
 * only posts a request and goes on, so migration overlaps computation),
 * or on the calling thread when cfg.sync (tests).  Phase replay and undo
 * are always synchronous: the pages must be home before the phase starts.
 *
 * Locking: one mutex per engine guards the areas, the state and the
 * statistics; it is held through an invocation (including its move_pages
 * calls), so unregistering an area waits for the invocation that may be
 * scanning it and never races it.  The source's remove_range waits out
 * its own signal handlers.  The program's threads never take the lock on
 * their fast path (only the calls below do).
 */
#ifndef PH_ENGINE_ENGINE_H
#define PH_ENGINE_ENGINE_H

#include "base/json_write.h"
#include "engine/hot.h"
#include "move/mover.h"
#include "os/os.h"
#include "sample/source.h"
#include "topo/topo.h"

#include <stddef.h>
#include <stdint.h>

typedef enum ph_mechanism {
    PH_MECH_ITERATIVE = 0,
    PH_MECH_SAMPLING = 1,
    PH_MECH_REPLAY = 2,
    PH_MECH_HYBRID = 3,
    PH_MECH_OFF = 4
} ph_mechanism;

typedef enum ph_criterion {
    PH_CRITERION_AMORTISED = 0,   /* criteria/amortised.h */
    PH_CRITERION_COMPETITIVE = 1  /* UPMlib's eq. 1, per interval */
} ph_criterion;

typedef struct ph_engine_cfg {
    ph_mechanism mech;
    int sync;                 /* invocations on the caller's thread */
    int full_snapshot;        /* arm every page at every interval */
    double sample_budget;     /* fraction of run time; 0 = fixed */
    double sample_trap_ns;    /* cost of one sample outside the handler */
    double sample_handler_ns; /* the handler's, as measured at start (0:
                                 not measured); the budget charges the
                                 handler's measured time instead */
    size_t sample_pages;      /* pages watched per interval at start */
    size_t sample_first_pages; /* the first interval's, when more */
    double sample_first_ns;   /* what the first sweep's traps may cost
                                 before its runs are coarsened */
    size_t sample_first_run_pages; /* the coarsest such runs */
    uint32_t sample_weight;   /* accesses one sample stands for (the
                                 synthetic source's counts: 1) */
    int optimistic;           /* competitive criterion without ml */
    double contention_ns;     /* eq. 2 */
    unsigned melt_iters;      /* frozen pages melt after this */
    double tune_step, tune_max;
    unsigned cold_after;      /* 0 = never cold */
    unsigned stable_after;    /* 0 = never deactivate */
    size_t critical_pages;    /* 0 = no limit */
    double critical_threshold;
    unsigned hybrid_iters;
    unsigned sample_period_ms;
    size_t sample_max_moves;  /* 0 = no cap */
    int observe;              /* decide, never move or split */
    double huge_split_share;  /* 0 = never split 2 MiB pages */
    unsigned huge_collapse_after; /* 0 = never collapse */
    int criterion;            /* ph_criterion */
    unsigned long iterations_expected; /* outer iterations in all, 0 =
                                          unknown */
    unsigned early_period_ms; /* hybrid: looks inside the first
                                 iteration, 0 = none */
} ph_engine_cfg;

/* A trap's cost outside the handler where none was measured (the
 * SIGSEGV trap on the machines bench_sampler ran on), ns. */
#define PH_SAMPLE_TRAP_NS_UNMEASURED 3000.0

/* The configuration the tunables describe. */
void ph_engine_cfg_from_options(ph_engine_cfg *cfg);

/* What one invocation did to one area (the statistics log). */
enum ph_inv_kind {
    PH_INV_ITERATIVE = 0, PH_INV_SAMPLING = 1, PH_INV_RECORD = 2,
    PH_INV_REPLAY = 3, PH_INV_UNDO = 4,
    PH_INV_EARLY = 5          /* a look inside the first iteration */
};
typedef struct ph_invocation {
    uint64_t seq;            /* engine invocation number, from 1 */
    uint32_t iteration;      /* program iteration at the invocation */
    int kind;                /* ph_inv_kind */
    int predictive;          /* criterion used: 1 predictive, 0 competitive */
    int area_id;
    int phase;               /* RECORD/REPLAY/UNDO: the phase, else -1 */
    uint64_t scanned, candidates, migrated, failed, frozen, melted;
    uint64_t shared;         /* competitive targets refused: the page is
                                uniformly shared (ph_crit_uniform_shared) */
    uint64_t unsettled;      /* refused: not settled in the page's history
                                (sampling mechanism; pages that ping-ponged) */
    uint64_t failed_busy, failed_nomem, failed_access, failed_fault,
        failed_other;
    uint64_t accesses;        /* estimated: samples x sample_weight */
    uint64_t remote_before, remote_after; /* of those, not at the home */
    uint64_t bytes_moved;
    uint64_t huge_migrated, huge_split, huge_collapsed; /* 2 MiB pages */
    double factor;           /* the area's factor after the invocation */
    double remote_ns;        /* the self-tuning metric */
    uint64_t engine_ns, move_ns, sampler_ns;
} ph_invocation;

/* Totals of an engine (the public statistics). */
typedef ph_engine_stats_t ph_engine_totals;

typedef struct ph_engine ph_engine;

/* A new engine.  It takes ownership of src; topo, os and mover must
 * outlive it.  Starts the memory-manager thread unless cfg->sync.
 * NULL/errno. */
ph_engine *ph_engine_new(const ph_topology *topo, ph_os *os,
                         ph_mover *mover, ph_source *src,
                         const ph_engine_cfg *cfg);
/* Stop the manager (finishing what was posted), lift every protection,
 * free everything. */
void ph_engine_free(ph_engine *e);

/* Hot areas: the whole 4 KiB pages inside [addr, addr+bytes) (EINVAL if
 * none), which must not overlap another area (EEXIST).  Unregister is safe at any time, also
 * while the manager or the sampler works; after it returns the memory may
 * be freed.  ENOENT for an area that is not registered. */
ph_hot *ph_engine_register(ph_engine *e, void *addr, size_t bytes,
                           const char *name);
int ph_engine_unregister(ph_engine *e, ph_hot *h);
/* The area's memory goes out of use (idle 1: a freed block kept for
 * reuse) or into use again (0).  Idle, it leaves the source (no traps,
 * no arms, samples taken in it dropped) and is none of the engine's
 * evidence; in use again, it is as newly registered.  ENOENT for an area
 * that is not registered; -1 when the source refused the range. */
int ph_engine_area_idle(ph_engine *e, ph_hot *h, int idle);
/* The area containing addr (NULL if none).  Lock-free readers must not
 * keep the pointer past an unregister. */
ph_hot *ph_engine_find(ph_engine *e, const void *addr);

/* End of an outer iteration: the iterative mechanism's invocation (posted
 * to the manager, or run here when sync).  Counts the iteration in every
 * mechanism. */
int ph_engine_iteration_end(ph_engine *e);
/* One wake-up of the sampling mechanism, run here (tests drive the
 * mechanism with it; the manager calls it every sample_period_ms). */
int ph_engine_tick(ph_engine *e);
/* One early look (hybrid mechanism, before the first iteration ends):
 * drain the samples so far, move the pages whose evidence is decisive
 * and worth the move, watch the next pages; the counts of the iteration
 * keep growing for its end.  Does nothing in any other state.  The
 * manager calls it every early_period_ms; the simulator at its own
 * clock's.  Returns the pages moved. */
long ph_engine_look(ph_engine *e);
/* The program runs `total` outer iterations in all (0 = unknown): the
 * amortised criterion's expected rest of the run. */
int ph_engine_set_iterations(ph_engine *e, unsigned long total);

/* The program's OpenMP runtime has just started (its tools interface),
 * before its first parallel region.  Whatever the source trapped so far
 * came from serial code -- the initial thread filling arrays that the
 * regions will share out -- and would show every page used from that
 * thread's node: while no iteration has ended, those samples are
 * dropped and the interval starts again, watching the same pages.  (A
 * runtime linked to the program usually starts before its arrays are
 * made; one loaded later with dlopen, an interpreter's extension, after
 * its serial initialisation.)  0 or -1. */
int ph_engine_runtime_started(ph_engine *e);

/* Wait until every posted invocation has run. */
int ph_engine_wait(ph_engine *e);

/* Thread `thread` of `nthreads` was seen on node index `node` at a
 * parallel-region boundary.  A thread seen on a new node at two
 * consecutive boundaries (or a change of nthreads) switches the engine to
 * the predictive criterion and re-arms it. */
int ph_engine_note_thread(ph_engine *e, int thread, int nthreads, int node);

/* Phases (record / replay / undo).  phase in 0..PH_MAX_PHASES-1. */
#define PH_MAX_PHASES 64
int ph_engine_phase_begin(ph_engine *e, int phase);
int ph_engine_phase_end(ph_engine *e, int phase);
/* Migrations recorded for a phase (pages, -1 if none recorded yet). */
long ph_engine_phase_pages(ph_engine *e, int phase);

/* Statistics. */
void ph_engine_get_totals(ph_engine *e, ph_engine_totals *out);
/* How many times the memory manager served posted iteration ends (ends
 * close together are served together: PH_END_LINGER_MS). */
uint64_t ph_engine_manager_serves(ph_engine *e);
/* The same without waiting: -1 when the engine is busy (the lock is
 * taken), for callers on the program's critical path. */
int ph_engine_try_totals(ph_engine *e, ph_engine_totals *out);
/* Copy of an area's counters.  ENOENT if not registered. */
int ph_engine_area_stats(ph_engine *e, const ph_hot *h, ph_hot_stats *out);
/* The invocation log: copies up to max records from index first; returns
 * how many records the log holds in all. */
size_t ph_engine_log(ph_engine *e, size_t first, ph_invocation *out,
                     size_t max);
/* Everything as JSON (engine totals, configuration, every area ever
 * registered with its home strips, log). */
int ph_engine_write_json(ph_engine *e, int fd);
/* The statistics file's format version (its key "pagehome_stats"). */
#define PH_STATS_FORMAT 1
/* Begin a statistics file that holds no engine's statistics (engine off,
 * or a notice written before them): the top-level object opened with the
 * format version and "engine": null; the caller adds the rest. */
void ph_stats_begin_engineless(ph_jw *w);
/* A writer of extra top-level keys of that JSON (transparent mode adds
 * what it found); called inside the top-level object, engine lock held:
 * it must not call the engine.  NULL removes it.  Process-wide. */
struct ph_jw;
typedef void (*ph_engine_report_fn)(struct ph_jw *w);
void ph_engine_set_report_extra(ph_engine_report_fn fn);

/* Change the mechanism while running (transparent mode falls back to
 * sampling when it finds no iteration); starts the memory manager if
 * needed.  EBUSY while a phase is recorded. */
int ph_engine_set_mechanism(ph_engine *e, ph_mechanism mech);

/* fork().  prepare takes the engine's lock (an invocation in progress
 * finishes first) and parent releases it; child runs in the child, where
 * the memory-manager thread does not exist: the engine keeps its areas
 * and counts, its lock and condition variables start afresh (the parent's
 * manager may have been waiting on them), iteration ends not yet served
 * are dropped, and from then on every invocation runs on the calling
 * thread (cfg.sync).  The sampling mechanism then has no timer: the child
 * samples but does not migrate between iteration ends. */
void ph_engine_fork_prepare(ph_engine *e);
void ph_engine_fork_parent(ph_engine *e);
void ph_engine_fork_child(ph_engine *e);

/* The source (tests). */
ph_source *ph_engine_source(ph_engine *e);

#endif
