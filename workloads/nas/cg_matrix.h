/*
 * cg_matrix.h -- the CG kernel's matrix, shared by the NUMA program
 * (nas/cg.c) and its cluster port (cluster/cg_dsm.c), so both build the
 * same matrix: the class sizes, the seeds, the CSR layout and the draws
 * of row i's t-th entry (column and value), and the sort of one row.
 * How a program assembles the rows (in parallel, or serially in private
 * memory) stays its own.
 */
#ifndef WL_NAS_CG_MATRIX_H
#define WL_NAS_CG_MATRIX_H

#include "nas_common.h"

#include <stdint.h>

static const long class_na[NAS_NCLASSES] = {1400, 7000, 14000};
static const int class_nonzer[NAS_NCLASSES] = {12, 20, 48};
static const double class_shift[NAS_NCLASSES] = {1.0, 1.0, 1.0};
static const long class_niter[NAS_NCLASSES] = {15, 15, 15};

static const uint64_t SEED_COL = 314159265, SEED_VAL = 271828183;

typedef struct {
    long n;
    long *rowptr; /* n + 1 */
    int *col;
    double *val;
} csr_t;

/* The t-th draw of row i: column and value. */
static inline long draw_col(long i, int t, int nonzer, long n)
{
    return (long)(nas_uniform(SEED_COL, (uint64_t)i * (uint64_t)nonzer + (uint64_t)t) * (double)n);
}

static inline double draw_val(long i, int t, int nonzer)
{
    return 2.0 * nas_uniform(SEED_VAL, (uint64_t)i * (uint64_t)nonzer + (uint64_t)t) - 1.0;
}

/* Insertion sort of one row's entries by (column, value). */
static inline void sort_row(int *c, double *v, long len)
{
    for (long a = 1; a < len; a++) {
        int ck = c[a];
        double vk = v[a];
        long b = a - 1;
        while (b >= 0 && (c[b] > ck || (c[b] == ck && v[b] > vk))) {
            c[b + 1] = c[b];
            v[b + 1] = v[b];
            b--;
        }
        c[b + 1] = ck;
        v[b + 1] = vk;
    }
}

#endif
