/*
 * experiments.h -- the seed papers' experiments on simulated machines
 * (`pagehome sim EXPERIMENT`); experiments.c says what each one runs,
 * report.c prints the tables and writes CSV and JSON.
 *
 *   e1  BT-, SP-, CG-like at 16 and 32 threads, placements first-touch /
 *       round-robin / single-node x engines off / IRIX-like / pagehome
 *       iterative (003 Fig. 2, Table 1), with the targets
 *   e2  sampling vs iterative on a long (BT-like) and a short (CG-like)
 *       run (WOMPAT 2000 Fig. 4)
 *   e3  record/replay of the BT-like z phase with the 20 most critical
 *       pages, plain and hybrid, with 1x and 4x longer phases (Fig. 5, 6)
 *   e4  two programs sharing the machine, threads migrated: predictive
 *       criterion vs competitive only (003 Fig. 4)
 *   e5  e1 on epyc-2s-8n and cxl-2tier
 *   e6  large pages (seed 001): "private blocks" and "finely shared" on
 *       epyc-2s-8n from single-node placement, 4 KiB pages / 2 MiB pages
 *       never split / mixed (2 MiB, split when shared), with the TLB term
 */
#ifndef PH_EXPERIMENT_EXPERIMENTS_H
#define PH_EXPERIMENT_EXPERIMENTS_H

#include "experiment/run.h"

#include <stddef.h>
#include <stdio.h>

/* Called after every run of an experiment (the progress line of
 * `pagehome sim`); NULL for none.  Process-wide. */
typedef void (*ph_exp_progress_fn)(const char *group, const char *label,
                                   size_t runs_done);
void ph_exp_set_progress(ph_exp_progress_fn fn);

typedef struct ph_exp_opts {
    const char *machine;   /* preset name; NULL: the experiment's own */
    int threads;           /* > 0: only this thread count */
    int iterations;        /* > 0: instead of the programs' own */
} ph_exp_opts;

typedef struct ph_exp_row {
    ph_exp_cell cell;
    ph_exp_result res;
    char group[48];        /* e4: the workload and program */
    char label[48];        /* the engine as the table names it */
    long baseline;         /* row the times are normalised to (itself: -1
                              never; the baseline row points to itself) */
    double norm_total, norm_last;
} ph_exp_row;

#define PH_EXP_MAX_TARGETS 32
#define PH_EXP_MAX_NOTES 48

typedef struct ph_exp_target {
    char what[128];
    int met;
    char detail[400];
} ph_exp_target;

typedef struct ph_exp_table {
    char name[8];
    char title[200];
    char machines[96];     /* the presets it ran on */
    char baseline[96];     /* what times are normalised to */
    ph_exp_row *rows;
    size_t nrows, cap;
    ph_exp_target targets[PH_EXP_MAX_TARGETS];
    int ntargets;
    char notes[PH_EXP_MAX_NOTES][800];
    int nnotes;
    int thread_migrations[2];  /* e4: node indexes, for the notes */
} ph_exp_table;

/* 1 when name is an experiment (e1..e6). */
int ph_exp_is_experiment(const char *name);

/* Check an experiment's name and options without running it: 0, or
 * -1/EINVAL with a message (a usage error). */
int ph_exp_check(const char *name, const ph_exp_opts *o);

/* Run an experiment.  0, or -1/errno (EINVAL: bad experiment, preset or
 * thread count -- a usage error; others: the run failed) with a
 * message. */
int ph_exp_run(const char *name, const ph_exp_opts *o,
               ph_exp_table *out);
void ph_exp_table_free(ph_exp_table *x);

/* report.c: the aligned tables with targets and notes; CSV (one line per
 * run); JSON (everything, with per-iteration series).  0 or -1/errno. */
int ph_exp_print(const ph_exp_table *x, FILE *out);
int ph_exp_write_csv(const ph_exp_table *x, const char *path);
int ph_exp_write_json(const ph_exp_table *x, const char *path);
/* The presets as a table (`pagehome sim presets`). */
int ph_exp_print_presets(FILE *out);

#endif
