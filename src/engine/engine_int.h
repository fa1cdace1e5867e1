/*
 * engine_int.h -- the engine's state, shared by the files of src/engine/
 * (engine.c lifecycle and mechanisms, invoke.c the migration algorithm,
 * threads.c thread tracking, phase.c record/replay/undo, stats.c
 * statistics).  Not for use outside src/engine/.
 */
#ifndef PH_ENGINE_ENGINE_INT_H
#define PH_ENGINE_ENGINE_INT_H

#include "engine/engine.h"
#include "criteria/criteria.h"

#include <pthread.h>
#include <stdatomic.h>

#define PH_MAX_THREADS 1024

typedef struct ph_thread_track {
    int stable;      /* node index the thread is known to run on, -1 */
    int cand;        /* node index it was last seen on, if != stable */
    int cand_seen;   /* consecutive boundaries seen on cand */
} ph_thread_track;

/* One migration of a phase: page to node, and where it was. */
typedef struct ph_phase_move {
    uintptr_t page;
    int to;          /* node index */
    int from;        /* node index before the replay, -1 unknown */
} ph_phase_move;

typedef struct ph_phase {
    int recorded;    /* moves[] is valid */
    int in_progress; /* between begin and end */
    int recording;   /* this occurrence records */
    int replayed;    /* this occurrence replayed (its end undoes) */
    ph_phase_move *moves;
    size_t nmoves;
} ph_phase;

/* A sample buffered while a phase is being recorded. */
typedef struct ph_rec_sample {
    uintptr_t page;
    int node;
    uint32_t count;
} ph_rec_sample;

/* What the report keeps of one hot area (history.c). */
#define PH_STRIP_MAX 256
#define PH_HISTORY_MAX 4096
typedef struct ph_area_rec {
    char name[PH_HOT_NAME_MAX];
    int id;
    uintptr_t base;
    size_t npages;
    int64_t registered_iter, removed_iter; /* -1: still registered */
    ph_hot_stats st;
    size_t nstart, nend;                   /* buckets taken, 0 = none */
    int8_t strip_start[PH_STRIP_MAX];      /* node index per bucket, -1 */
    int8_t strip_end[PH_STRIP_MAX];
    /* at the end: pages ever sampled, those of them on the node that
     * sampled them most (queried), pages moved twice or more; and of the
     * sampled pages whose home the engine found before moving any, those
     * whose first home was that node (the owner-local share at start) */
    uint64_t sampled_pages, sampled_local, moved_twice;
    uint64_t start_pages, start_local;
} ph_area_rec;

/* The first sweep: when the hot areas' pages fit in
 * cfg.sample_first_pages, the source watches up to that many pages an
 * interval (when that is more than sample_pages), so that a wrong
 * initial placement is seen whole in one interval; then the budget
 * is budget_pages again.  It ends with the first invocation whose
 * interval sampled at least PH_SWEEP_SEEN_SHARE of the pages it watched,
 * or with its PH_SWEEP_MAX_INVOCATIONS-th: a first interval cut short
 * (an iteration boundary found too early, inside the first iteration)
 * saw too little of the sweep to end it, and one armed before the
 * program registered all its areas did not see them -- unless the hot
 * areas no longer fit in sample_first_pages. */
#define PH_SWEEP_SEEN_SHARE 0.125
#define PH_SWEEP_MAX_INVOCATIONS 2
/* Intervals of the first sweep whose only traps were serial code's (a
 * program's set-up before its iterations) are counted apart: at most
 * PH_SWEEP_MAX_SERIAL of them, so that the iterations still get
 * PH_SWEEP_MAX_INVOCATIONS of their own, and serial code between every
 * iteration ends the sweep as soon as before. */
#define PH_SWEEP_MAX_SERIAL 2
/* The samples, as a share of the watched pages, that the quiet
 * invocations must hold before the placement is called stable. */
#define PH_STABLE_SEEN_SHARE 0.125
#define PH_TOUCHED_UNKNOWN SIZE_MAX
typedef enum ph_first_sweep {
    PH_FIRST_PENDING = 0,   /* not armed yet */
    PH_FIRST_ON = 1,        /* the source has the first budget */
    PH_FIRST_OVER = 2       /* never, or done */
} ph_first_sweep;

/* The fewest pages an adapted interval watches; beyond, the engine
 * pauses between intervals instead (arm_after_ns). */
#define PH_BUDGET_FLOOR_PAGES 64
/* 2 MiB units mapped whole again per serve of the manager, at most
 * (huge.c; a collapse that copies takes 0.1-0.2 ms) */
#define PH_REMAP_UNITS 32
/* The longest pause between intervals, ns. */
#define PH_BUDGET_MAX_PAUSE_NS 10000000000ull
/* The sampling budget is a bucket of sampling time: it fills at
 * sample_budget of the wall time and holds sample_budget of
 * PH_BUDGET_BURST_NS (10 ms at 1%), full at the start.  A program whose
 * iterations are shorter than the floor's cost samples from it before the
 * engine pauses (a 10 ms run is sampled, not paused from its second
 * interval on); a long run averages sample_budget. */
#define PH_BUDGET_BURST_NS 1000000000ull

struct ph_engine {
    pthread_mutex_t lock;
    const ph_topology *topo;
    ph_os *os;
    ph_mover *mover;
    ph_source *src;
    ph_engine_cfg cfg;
    int nnodes;
    ph_latency_model lat;
    double *lat_ns;          /* nnodes^2 */
    double *mig_ns;          /* nnodes^2 */

    ph_hot **hots;           /* sorted by base */
    size_t nhots, cap_hots;
    int next_id;

    uint32_t iteration;      /* program iterations seen */
    uint64_t seq;            /* invocations */
    int armed;
    size_t budget_pages;     /* pages watched per interval now */
    int first_sweep;         /* ph_first_sweep: the first interval's
                                budget (engine.c, ph_engine_arm) */
    unsigned sweep_invocations; /* invocations under the sweep so far */
    unsigned sweep_serial;   /* its intervals that only serial code trapped */
    int sweep_again;         /* a mechanism switch asked for a second
                                sweep (at most one) */
    size_t sweep_hot_pages;  /* the hot areas' pages at its last arm */
    size_t sweep_run_pages;  /* the runs it watches (1: page-exact;
                                ph_crit_sweep_run_pages), while on */
    size_t sweep_run_max;    /* the most it ever used (the report) */
    uint64_t interval_ns;    /* when the interval began */
    ph_source_stats last_ss; /* source counters at that moment */
    uint64_t end_ns;         /* when the program signalled its latest
                                iteration end (before taking the lock) */
    /* Sampling paused: when even PH_BUDGET_FLOOR_PAGES cost more than
     * sample_budget of the interval (a costly mechanism, short
     * intervals) and the bucket (PH_BUDGET_BURST_NS) is empty, no
     * interval is armed before arm_after_ns, when it has filled again
     * (adapt_budget). */
    double credit_ns;        /* sampling time in the bucket (< 0: owed) */
    uint64_t credit_at_ns;   /* when it was last filled */
    uint64_t arm_after_ns;
    uint64_t pause_ns;       /* the last pause asked for (0: none) */
    uint64_t paused_arms;    /* arms skipped because of it */
    int active;              /* iterative mechanism running */
    /* HYBRID: its iterative part ends at an iteration end from
     * hybrid_iters on, once its arms have passed every watched page
     * since it began and its last invocation moved nothing (or it
     * stopped by itself); phases are on from then (hybrid_phases, set by
     * whoever runs the invocations, under the lock).  Switching at
     * hybrid_iters whatever was seen recorded the phases over a placement
     * the engine knew a part of: watching 4096 pages an interval, half of
     * a hot set of 16384 pages. */
    int hybrid_phases;
    int hybrid_waited;       /* a phase call waited once for the manager
                                at the first end that could switch */
    uint64_t hybrid_mark;    /* source's swept_pages, less look_swept,
                                when the iterative part began */
    uint64_t look_swept;     /* swept_pages of the early looks' arms */
    unsigned quiet;          /* invocations without migrations (each with
                                samples: evidence) */
    /* Evidence (engine.c): stability is concluded only from samples.  An
     * interval that trapped nothing is not an invocation: it goes on
     * over up to PH_EMPTY_EXTEND iteration ends, then the next pages are
     * watched.  The placement is stable after stable_after quiet
     * invocations *and* a full sweep of the watched pages since the last
     * migration *and* quiet samples for PH_STABLE_SEEN_SHARE of them. */
    uint64_t interval_samples; /* samples ingested since the last arm */
    uint64_t interval_armed;   /* pages the last arm watched */
    unsigned empty_ends;       /* iteration ends the interval went on */
    uint64_t stable_mark;      /* source's swept_pages at the last
                                  migration (or new area) */
    uint64_t quiet_samples;    /* samples of the quiet invocations */
    size_t quiet_touched;      /* the source's touched pages at the quiet
                                  streak's last look (PH_TOUCHED_UNKNOWN) */
    uint64_t empty_intervals;  /* intervals that trapped nothing */
    uint64_t last_arm_ns;      /* when the source was last armed */
    int predictive;
    uint8_t gained[PH_MAX_NODES];
    /* stand_in[t]: where a page wanted on node index t goes -- t, or the
     * nearest node the process may use (ph_crit_stand_in) */
    int8_t stand_in[PH_MAX_NODES];
    uint64_t allowed_mask; /* the allowed set stand_in was planned for
                              (0 before the first plan: a set is never
                              empty, os.h) */
    int nthreads;
    int first_team;          /* the largest team of two or more threads
                                reported before the first invocation, or
                                the first after it (0: none yet) */
    ph_thread_track thr[PH_MAX_THREADS];

    ph_phase phases[PH_MAX_PHASES];
    int recording;           /* phase being recorded, -1 */
    ph_rec_sample *rec;
    size_t nrec, cap_rec;

    ph_engine_totals tot;
    ph_area_rec *hist;       /* every area registered (history.c) */
    size_t nhist, cap_hist;
    uint64_t hist_dropped;   /* areas beyond PH_HISTORY_MAX */
    ph_invocation *log;
    size_t nlog, cap_log;
    struct ph_work *work;    /* invoke.c's arrays, kept between invocations */
    uint64_t fast_blocks;    /* blocks invoke.c's fast path took */
    int general_only;        /* tests: no fast path (the general one is the
                                reference it is checked against) */
    ph_hot *last_hot;        /* the area the last sample fell in */
    /* the amortised criterion's view of the run (decide.c) */
    uint64_t intervals;      /* invocations that ended an interval */
    unsigned long iters_total; /* iterations in all, 0 = unknown */
    double remaining;        /* intervals expected to be left, set at
                                each invocation */
    uint64_t looks;          /* early looks (early.c) */
    uint64_t huge_remapped;  /* 2 MiB units mapped whole again when the
                                engine stopped watching them (huge.c) */

    /* memory-manager thread */
    pthread_t mgr;
    int has_mgr;
    pthread_cond_t cv;       /* requests / stop */
    pthread_cond_t done_cv;  /* pending reached 0 */
    unsigned pending;        /* iteration ends posted, not yet run */
    int busy;
    int lingering;           /* served less than PH_END_LINGER_MS ago:
                              * posts need not wake the manager */
    uint64_t serves;         /* times the manager served posted ends */
    int stop;
};

/* After serving iteration ends the memory manager waits this long for
 * more before it sleeps until woken; ends posted meanwhile do not wake it
 * (engine.c, manager_main).  A program with iterations of a few
 * microseconds (small parallel regions, each an iteration) would
 * otherwise wake it, a context switch, at every one of them. */
#define PH_END_LINGER_MS 1u

/* invoke.c: the migration algorithm over every area (lock held).  kind is
 * PH_INV_ITERATIVE or PH_INV_SAMPLING; max_moves 0 = no cap.  Returns the
 * number of pages migrated. */
uint64_t ph_engine_invoke(ph_engine *e, int kind, size_t max_moves,
                          uint64_t sampler_ns);
/* Free invoke.c's kept arrays (ph_engine_free). */
void ph_engine_invoke_free(ph_engine *e);
/* The area holding addr, NULL (lock held). */
ph_hot *ph_engine_find_locked(const ph_engine *e, uintptr_t addr);
/* Move pages (4 KiB addresses) to node indexes; status[i] gets the node
 * *index* reached or a negative errno.  Fills the failure fields of inv.
 * Returns pages moved. */
uint64_t ph_engine_move(ph_engine *e, size_t n, void **pages,
                        const int *to_idx, int *status, ph_invocation *inv);
/* inv's failure fields += the mover's figures (a page outvoted in a 2 MiB
 * page counts as failed_other). */
void ph_engine_add_failures(ph_invocation *inv, const ph_move_stats *ms);
/* Current homes (node indexes, or negative errno) of n pages. */
int ph_engine_query(ph_engine *e, size_t n, void **pages, int *home);

/* decide.c: the target of the page of h whose counts are cnt (cur,
 * evidence, cumulative) at home, by the configured criterion (lock
 * held); *value the order of capped moves.  -1 none. */
int ph_engine_decide(const ph_engine *e, const ph_hot *h, const uint32_t *cnt,
                     int home, double *value);
/* decide.c: the target a decision for a page at home gives, after the
 * nodes the process may use (stand_in): -1 when target < 0 or its stand-in
 * is home (or none). */
int ph_engine_stand_in(const ph_engine *e, int target, int home);
/* decide.c: fill e->stand_in from the machine's allowed nodes (at start,
 * and again when they changed: called by every invocation and early
 * look). */
void ph_engine_plan_stand_ins(ph_engine *e);
/* decide.c: e->remaining for an invocation that ends an interval. */
void ph_engine_plan_remaining(ph_engine *e);
/* early.c: one early look (lock held). */
long ph_engine_look_locked(ph_engine *e);
/* early.c: 1 when the manager should look now and then (lock held). */
int ph_engine_early_on(const ph_engine *e);

/* huge.c: moves of whole 2 MiB units queued by ph_engine_huge_unit. */
typedef struct ph_huge_moves {
    size_t n, cap;
    void **addr;     /* the units' first pages */
    int *to, *st, *from;
    size_t *unit;
} ph_huge_moves;
/* huge.c: unit u of area h, whose sampled pages are the n entries
 * idx/home (page order; homes are node indexes or negative errno): decided
 * as a whole (a move is queued on mv), split or collapsed.  Returns 1 when
 * the entries leave the 4 KiB algorithm, 0 when it gets them. */
int ph_engine_huge_unit(ph_engine *e, ph_hot *h, size_t u, size_t n,
                        const size_t *idx, const int *home,
                        ph_huge_moves *mv, ph_invocation *inv);
/* huge.c: unit u is 4 KiB pages and not due for another look, so
 * ph_engine_huge_unit would leave its entries to the 4 KiB algorithm
 * without reading them (invoke.c's fast path may then skip the list). */
int ph_engine_huge_passive(const ph_hot *h, size_t u);
/* huge.c: the moves queued on mv, in one batch; mv is emptied. */
void ph_engine_huge_moves(ph_engine *e, ph_hot *h, ph_huge_moves *mv,
                          ph_invocation *inv);
void ph_huge_moves_free(ph_huge_moves *mv);
/* huge.c: the engine watches area h no more (it went cold, or the
 * iterative mechanism stopped): its units that are one 2 MiB page, and
 * those of 4 KiB pages all on one node that khugepaged would collapse by
 * itself, are to be mapped whole again (ph_os_huge_split, split = 0):
 * the sampler's watch made the kernel map them with 4 KiB entries, or
 * split them.  The work is done by ph_engine_huge_remap_some. */
void ph_engine_huge_remap(ph_hot *h);
/* huge.c: the remaps under way, at most max_units units (a collapse
 * copies up to 2 MiB with the engine lock held); an area watched again
 * meanwhile is dropped.  Returns the units the OS took. */
size_t ph_engine_huge_remap_some(ph_engine *e, size_t max_units);

/* engine.c: drain the source into the areas (or into the phase buffer
 * while recording).  Returns the time spent, ns. */
uint64_t ph_engine_drain(ph_engine *e);
void ph_engine_arm(ph_engine *e);
/* An area's range out of the source (cold, idle, going away) or back in
 * (lock held): each does nothing when the range already is where it is
 * asked to be; 0, or -1 when the source refused (h->watched unchanged). */
int ph_engine_unwatch(ph_engine *e, ph_hot *h);
int ph_engine_rewatch(ph_engine *e, ph_hot *h);
/* Arm again when the last arm watched no page (lock held; threads.c calls
 * it at region boundaries). */
void ph_engine_rearm_if_empty(ph_engine *e);
void ph_engine_disarm(ph_engine *e);
/* Disarm and arm again outside an iteration's own arms (an early look,
 * the runtime's start): cold areas and self-tuning count sweeps by the
 * pages armed, and the hybrid mechanism its part's sweeps, so their
 * marks (armed_mark, sweep_mark, look_swept) move past this arm.  Lock
 * held. */
void ph_engine_arm_aside(ph_engine *e);
/* Ends the interval after its drain: lifts the watch, then drains what
 * was trapped between that drain and the lift -- the program runs on
 * while the engine decides, and its traps belong to this interval, not
 * to the next one's evidence and sampling cost (the synthetic source,
 * whose samples are made at the drain, has none).  Returns the drain's
 * time, ns (lock held). */
uint64_t ph_engine_close(ph_engine *e);

/* The source's armed_pages counter (cold areas count sweeps with it). */
uint64_t ph_engine_armed_pages(ph_engine *e);
/* The source's swept_pages counter (stability counts sweeps with it). */
uint64_t ph_engine_swept_pages(ph_engine *e);

/* stats.c */
void ph_engine_log_add(ph_engine *e, const ph_invocation *inv);

/* history.c (lock held): a record for a new area; start strips for
 * areas that have none; the end of an area (after its protections are
 * lifted); end strips and statistics of the live areas. */
void ph_history_add(ph_engine *e, ph_hot *h);
void ph_history_start_strips(ph_engine *e);
void ph_history_retire(ph_engine *e, const ph_hot *h);
void ph_history_refresh(ph_engine *e);
void ph_history_free(ph_engine *e);

/* phase.c */
void ph_engine_phases_free(ph_engine *e);

#endif
