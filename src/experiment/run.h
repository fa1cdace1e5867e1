/*
 * run.h -- one simulated run of `pagehome sim`: a program (workload.h) on
 * a preset machine (presets.h), its pages placed by a policy, under one
 * migration engine, for a number of outer iterations, timed by the cost
 * model (model.h).  run.c describes the loop.
 */
#ifndef PH_EXPERIMENT_RUN_H
#define PH_EXPERIMENT_RUN_H

#include "experiment/presets.h"
#include "topo/topo.h"

#include <stddef.h>
#include <stdint.h>

enum ph_exp_engine {
    PH_EXP_ENG_OFF = 0,          /* no migration */
    PH_EXP_ENG_IRIX = 1,         /* the IRIX-like kernel engine (irix.h) */
    PH_EXP_ENG_ITERATIVE = 2,    /* pagehome iterative, exact counts */
    PH_EXP_ENG_ITER_SAMPLED = 3, /* pagehome iterative, sampled counts */
    PH_EXP_ENG_SAMPLING = 4,     /* pagehome sampling mechanism */
    PH_EXP_ENG_REPLAY = 5,       /* pagehome record/replay */
    PH_EXP_ENG_HYBRID = 6        /* pagehome iterative, then replay */
};

enum ph_exp_placement {
    PH_EXP_FIRST_TOUCH = 0,      /* the initialising thread's node */
    PH_EXP_ROUND_ROBIN = 1,      /* page i on partition node i mod n */
    PH_EXP_SINGLE_NODE = 2       /* every page on the partition's last node */
};

/* The criterion a cell's engine uses. */
enum ph_exp_criterion {
    PH_EXP_CRIT_TUNABLE = 0,     /* the tunable criterion */
    PH_EXP_CRIT_AMORTISED = 1,   /* amortised (criteria/amortised.h) */
    PH_EXP_CRIT_COMPETITIVE = 2  /* UPMlib's per-interval eq. 1 */
};

const char *ph_exp_engine_name(int engine);
const char *ph_exp_placement_name(int placement);

typedef struct ph_exp_cell {
    const ph_exp_preset *preset;
    const ph_topology *topo;  /* the preset's machine */
    int app;                  /* enum ph_exp_app_kind */
    int nthreads;
    int iterations;           /* 0: the program's own (class A) */
    int placement;
    int engine;
    unsigned repeat;          /* 0 or 1: normal phases; 4: 4x longer */
    long critical_pages;      /* < 0: the tunable critical_pages */
    int notes;                /* thread notes reach the engine */
    int keep_active;          /* stable_after = cold_after = 0 (e4 only) */
    int first_cpu;            /* the program's first CPU (e4's second) */
    int migrate_at;           /* iteration of the thread migration (< 0:
                                 none) */
    const int *nodes_after;   /* node index of each thread from then on */
    int huge;                 /* 1: the arrays are mapped with 2 MiB pages
                                 (THP), 0: 4 KiB pages (no THP) */
    int no_split;             /* 1: huge_split_share = 0 for this run (e6's
                                 "2 MiB without splitting"); 0: the
                                 tunable */
    int tlb;                  /* 1: the cost model's TLB term (model.h) */
    int criterion;            /* enum ph_exp_criterion */
                              /* (huge and tlb need arrays of whole 2 MiB
                                 units, as e6's: EINVAL otherwise) */
} ph_exp_cell;

typedef struct ph_exp_result {
    int iterations, nthreads;
    size_t hot_pages;
    /* per iteration */
    double *iter_ns;          /* modelled time, incl. critical migrations */
    double *iter_remote;      /* remote accesses */
    uint64_t *iter_moves;     /* pages moved (decided) in the iteration */
    double *iter_crit_ns;     /* migration time on the critical path */
    double *iter_z_ns;        /* time of the z phase (0 without one) */
    /* totals */
    double total_ns, last_half_ns;  /* all iterations; iterations
                                       [I/2, I) */
    double remote_per_iter;   /* mean over all iterations */
    uint64_t migrated;        /* pages moved (the machine's count) */
    uint64_t eligible;        /* times the policy selected a page */
    uint64_t first2;          /* pages moved in iterations 0 and 1 */
    uint64_t after_migrate;   /* pages moved from migrate_at on */
    double migrate_ns;        /* migration work in all */
    double critical_ns;       /* of it, on the critical path */
    int lanes;                /* most mover lanes an overlapped invocation
                                 ran in side by side (0: none moved) */
    double manager_ns;        /* overlapped invocations: time from each
                                 one's start until its last page arrived,
                                 summed (migrate_ns with one lane) */
    double lanes_loss_ns;     /* of critical_ns: work lanes took from the
                                 program's CPUs (no CPU idle for them) */
    uint64_t replayed, undone;
    long phase_pages;         /* pages the z phase recorded, -1 none */
    uint64_t invocations, predictive_switches;
    uint64_t frozen, melted;  /* pages frozen (ping-pong) / melted */
    /* the competitive criterion's arithmetic at the start, with one
     * iteration's exact counts and the initial homes: pages whose accesses
     * come mostly from another node than their home ("misplaced"), how
     * many of them pass eq. 1 (factor 1), the median and the largest
     * racc(i) * rc(i,h) of a misplaced page, and the cost ml of eq. 1 */
    size_t misplaced, qualify;
    double median_gain_ns, max_gain_ns, ml_ns;
    /* the same for the z phase alone (record/replay's interval): the
     * largest racc(i) * rc(i,h) of any page, 0 without a z phase */
    double z_max_gain_ns;
    /* accesses in all; TLB misses (the TLB term; 0 without it) and their
     * time; the remote share (remote / accesses over the run) */
    double accesses, tlb_misses, tlb_ns, remote_share;
    double *iter_tlb_misses;  /* per iteration */
    /* the engine's 2 MiB statistics: units moved whole, split, collapsed,
     * and 4 KiB page moves (the engine's migrated minus huge_migrated) */
    uint64_t huge_migrated, huge_split, huge_collapsed, moved_4k;
    size_t huge_units_end;    /* 2 MiB units mapped huge at the end */
    /* the run-length calibration (model.h): the factor on every access
     * count and the compute time of one iteration (1 and 0: none) */
    double mem_scale, compute_per_iter_ns;
} ph_exp_result;

/* Run one cell.  0, or -1/errno with a message (result freed). */
int ph_exp_run_cell(const ph_exp_cell *c, ph_exp_result *r);
void ph_exp_result_free(ph_exp_result *r);

#endif
