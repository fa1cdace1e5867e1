/*
 * workload.h -- the programs `pagehome sim` runs: BT-, SP- and CG-like
 * models of the bundled kernels workloads/nas/{bt,sp,cg}.c (class A), and
 * e6's two synthetic layouts for large pages ("private blocks", "finely
 * shared").
 *
 * A program is a set of arrays (the hot areas, in registration order) laid
 * end to end as one page index space, and the phases of one outer
 * iteration, each a list of (page, thread, accesses) entries: how many
 * cache lines each thread moves from each page in one occurrence of the
 * phase.  Every phase ends at a barrier.  workload.c says which counts
 * are used and why.
 */
#ifndef PH_EXPERIMENT_WORKLOAD_H
#define PH_EXPERIMENT_WORKLOAD_H

#include "experiment/model.h"

#include <stddef.h>
#include <stdint.h>

enum ph_exp_app_kind {
    PH_EXP_BT = 0, PH_EXP_SP = 1, PH_EXP_CG = 2,
    PH_EXP_PRIVATE = 3,      /* e6: each thread owns contiguous blocks */
    PH_EXP_SHARED = 4        /* e6: threads interleave at 4-64 KiB */
};
#define PH_EXP_LAST_APP PH_EXP_SHARED

/* e6's programs: each thread owns this much data (4096 pages). */
#define PH_EXP_E6_THREAD_BYTES ((size_t)16 << 20)

#define PH_EXP_MAX_ARRAYS 8
#define PH_EXP_MAX_PHASES 64

typedef struct ph_exp_array {
    const char *name;
    size_t first, npages;     /* pages [first, first + npages) */
} ph_exp_array;

typedef struct ph_exp_phase {
    const char *name;
    int z;                    /* 1: the phase with its own ownership (the
                                 record/replay phase: BT's z_solve) */
    ph_exp_access *acc;      /* sorted by page, then thread */
    ph_exp_switches *sw;     /* per entry of acc: its page-switching
                                 accesses (the TLB term); NULL: the
                                 program has no TLB model (BT, SP, CG) */
    size_t nacc;
    int alias;                /* acc belongs to an earlier phase (a step
                                 repeated: CG's 25 steps) */
} ph_exp_phase;

typedef struct ph_exp_app {
    int kind;
    const char *name;         /* "BT", "SP", "CG" */
    int nthreads;
    unsigned line_bytes;
    unsigned repeat;          /* work of the repeated phases, x1 or x4 */
    size_t npages;
    int narrays;
    ph_exp_array arrays[PH_EXP_MAX_ARRAYS];
    int nphases;
    ph_exp_phase phases[PH_EXP_MAX_PHASES];
    int zphase;               /* index of the z phase, -1 none */
    uint32_t *first_toucher;  /* per page: the thread whose parallel
                                 initialisation touches it first */
    int iterations;           /* outer iterations at class A */
} ph_exp_app;

/* Kind by name ("BT", "SP", "CG", "private blocks", "finely shared",
 * any case), -1 if none. */
int ph_exp_app_find(const char *name);
const char *ph_exp_app_name(int kind);
/* The kind's outer iterations at class A (bt 180, sp 200, cg 15; e6's
 * synthetic programs: 20). */
int ph_exp_app_iterations(int kind);

/* Build a program for nthreads threads on a machine whose accesses move
 * line_bytes each; repeat (>= 1) multiplies the work of every phase but
 * the right-hand side (the 4x-longer-phases experiment of WOMPAT 2000,
 * Fig. 6).  0, or -1/errno (EINVAL, ENOMEM) with a message. */
int ph_exp_app_build(ph_exp_app *a, int kind, int nthreads,
                     unsigned line_bytes, unsigned repeat);
void ph_exp_app_free(ph_exp_app *a);

#endif
