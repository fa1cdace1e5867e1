/*
 * swim_dsm.c -- workloads/swim.c's shallow-water model on cluster mode's
 * distributed shared memory: the SPEC OMP swim that paper 004 runs on the
 * JIAJIA DSM (its Tables 1, 3 and 4), written against pagehome's cluster
 * API.
 *
 *   swim_dsm N STEPS [PLACEMENT] [--private] [--no-check]
 *
 * Data.  The 13 N x N arrays come from ph_cluster_alloc with PLACEMENT
 * (default block; round-robin, first-touch, cyclic:K, node:R ... any
 * cluster placement); leading dimension N.  As in the Fortran original
 * compiled for a DSM (paper 004 section 4.1, Table 2), the small data live
 * in shared pages of their own at rank 0 (placement node:0): the
 * constants (COMMON /CONS/: n, dt, dx, dy, alpha) on one page, and the
 * coefficients each loop's subroutine computes before its loop (SHALLOW's
 * calc3 filter, CALC1's fsdx and fsdy, CALC2's tdt/8, tdt/dx, tdt/dy) on
 * one page each.
 *   default      the master thread (thread 0 of rank 0) writes a loop's
 *                coefficients into their shared page before the loop and
 *                every thread reads them there: the page's copies on the
 *                other ranks are invalidated by the write notices and
 *                fetched again for every loop (the three pages "referenced
 *                by all the threads frequently" of paper 004 section 4.2)
 *   --private    paper 004's data privatisation: the coefficients are
 *                FIRSTPRIVATE (each thread computes them from the
 *                constants), and the constants page, written once before
 *                the time loop, is declared with ph_cluster_readonly (the
 *                COPYIN of a THREADPRIVATE /CONS/): fetched once by each
 *                rank, never invalidated, never fetched again.
 *
 * Parallel structure, as the OpenMP version: each step is calc1, calc2,
 * calc3, each a parallel loop over the rows, every thread of the global
 * team (ranks x OMP_NUM_THREADS) taking its rows from
 * ph_cluster_static_range (schedule(static) over all threads); a loop is a
 * fork (ph_cluster_barrier after what the master wrote before it) and a
 * join (ph_cluster_barrier): 6 barriers per step, in both modes.  One
 * OpenMP parallel region per rank around the whole run.  The initial state
 * is written in parallel, each thread its own rows (so that first-touch
 * homes and home migration put them where they are computed; swim.c's
 * serial initialisation would make every page rank 0's first).
 *
 * Every point is computed by swim_kernel.h, shared with swim.c: the
 * checksums (sums of absolute values of u, v, p, %.17g) equal
 * `swim N STEPS`'s bit for bit, whatever the ranks, threads and homes.
 *
 * Prints on rank 0
 *   swim_dsm: N=.. steps=.. ranks=R threads=T placement=P private=0|1
 *     checksum_u=.. checksum_v=.. checksum_p=.. time_s=S
 * (S: wall time of the steps between two cluster barriers), then
 * "verification: ok (HOW)" or "verification: FAILED (HOW)" (exit 1 on
 * every rank): the mass drift bound of swim.c, and (unless --no-check)
 * rank 0 runs the same steps sequentially on private arrays and compares
 * u, v and p value for value.  WL_FAULT=1 corrupts one shared value first.
 */
#include "common.h"
#include "swim_kernel.h"

#include <omp.h>
#include <pagehome.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROG "swim_dsm"
#define SWIM_NMAX 4096
#define USAGE PROG " N STEPS [PLACEMENT] [--private] [--no-check]  " \
                   "(8 <= N <= 4096, 1 <= STEPS <= 1000000)"

/* The small shared data, one page each (see the top comment). */
typedef struct swim_small {
    swim_cons *cons;   /* /CONS/ */
    swim_c3 *c3;       /* SHALLOW's: the filter of the step */
    swim_c1 *c1;       /* CALC1's */
    swim_c2 *c2;       /* CALC2's */
} swim_small;

typedef struct swim_run_cfg {
    int n;
    long steps;
    int priv;
} swim_run_cfg;

static double *shared_array(size_t bytes, const ph_placement_t *pl)
{
    double *a = ph_cluster_alloc(bytes, pl);
    if (!a)
        wl_die(PROG, ph_last_error());
    return a;
}

/* The steps, by every thread of every rank (inside the parallel region). */
static void run_steps(const swim_arrays *s, const swim_small *sm, const swim_run_cfg *cfg,
                      long b, long e)
{
    int n = cfg->n;
    int master = ph_cluster_thread_num() == 0;
    for (long step = 0; step < cfg->steps; step++) {
        double tdt = step == 0 ? sm->cons->dt : 2.0 * sm->cons->dt;
        swim_c1 c1 = {0, 0};
        swim_c2 c2 = {0, 0, 0};
        swim_c3 c3 = {0, 0};
        if (cfg->priv) {
            /* FIRSTPRIVATE coefficients from the read-only constants */
            c1 = swim_coef1(sm->cons);
            c2 = swim_coef2(sm->cons, tdt);
            c3 = swim_coef3(sm->cons, step == 0);
        }

        if (!cfg->priv && master)
            *sm->c1 = swim_coef1(sm->cons);
        ph_cluster_barrier();
        if (!cfg->priv)
            c1 = *sm->c1;
        for (long i = b; i < e; i++)
            swim_calc1_row(s, n, (int)i, c1);
        ph_cluster_barrier();

        if (!cfg->priv && master)
            *sm->c2 = swim_coef2(sm->cons, tdt);
        ph_cluster_barrier();
        if (!cfg->priv)
            c2 = *sm->c2;
        for (long i = b; i < e; i++)
            swim_calc2_row(s, n, (int)i, c2);
        ph_cluster_barrier();

        if (!cfg->priv && master)
            *sm->c3 = swim_coef3(sm->cons, step == 0);
        ph_cluster_barrier();
        if (!cfg->priv)
            c3 = *sm->c3;
        for (long i = b; i < e; i++)
            swim_calc3_row(s, n, (int)i, c3);
        ph_cluster_barrier();
    }
}

/* The same steps, sequentially, on private arrays: the reference. */
static swim_arrays reference(const swim_cons *m, long steps)
{
    int n = m->n;
    size_t nn = (size_t)n * (size_t)n;
    double *blk = calloc(13 * nn, sizeof *blk);
    if (!blk)
        wl_die(PROG, "out of memory for the reference arrays");
    swim_arrays s = {blk,          blk + nn,     blk + 2 * nn,  blk + 3 * nn, blk + 4 * nn,
                     blk + 5 * nn, blk + 6 * nn, blk + 7 * nn,  blk + 8 * nn, blk + 9 * nn,
                     blk + 10 * nn, blk + 11 * nn, blk + 12 * nn, (size_t)n};
    for (int i = 0; i < n; i++)
        swim_init_row(&s, m, i);
    for (long step = 0; step < steps; step++) {
        double tdt = step == 0 ? m->dt : 2.0 * m->dt;
        swim_c1 c1 = swim_coef1(m);
        swim_c2 c2 = swim_coef2(m, tdt);
        swim_c3 c3 = swim_coef3(m, step == 0);
        for (int i = 0; i < n; i++)
            swim_calc1_row(&s, n, i, c1);
        for (int i = 0; i < n; i++)
            swim_calc2_row(&s, n, i, c2);
        for (int i = 0; i < n; i++)
            swim_calc3_row(&s, n, i, c3);
    }
    return s;
}

/* The sum of p - P_MEAN, in long double. */
static long double mass_anomaly(const double *p, int n)
{
    long double s = 0.0L;
    for (size_t k = 0; k < (size_t)n * (size_t)n; k++)
        s += (long double)p[k] - (long double)SWIM_P_MEAN;
    return s;
}

/* The sum of p - P_MEAN of the initial state, in long double. */
static long double initial_mass(const swim_cons *m)
{
    int n = m->n;
    size_t nn = (size_t)n * (size_t)n;
    double *blk = malloc(6 * nn * sizeof *blk);
    if (!blk)
        wl_die(PROG, "out of memory for the initial state");
    swim_arrays s = {0};
    s.u = blk;
    s.v = blk + nn;
    s.p = blk + 2 * nn;
    s.uold = blk + 3 * nn;
    s.vold = blk + 4 * nn;
    s.pold = blk + 5 * nn;
    s.ld = (size_t)n;
    for (int i = 0; i < n; i++)
        swim_init_row(&s, m, i);
    long double r = mass_anomaly(s.p, n);
    free(blk);
    return r;
}

/* swim.c's checksum: the sum of absolute values in row order. */
static double sum_of(const double *a, int n)
{
    double s = 0.0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            s += fabs(a[(size_t)i * (size_t)n + (size_t)j]);
    return s;
}

static size_t differing(const double *a, const double *b, int n)
{
    size_t bad = 0;
    for (size_t k = 0; k < (size_t)n * (size_t)n; k++)
        bad += memcmp(&a[k], &b[k], sizeof a[k]) != 0;
    return bad;
}

int main(int argc, char **argv)
{
    long n_l = 0, steps = 0;
    const char *place = "block";
    int check = 1, priv = 0, pos = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--no-check"))
            check = 0;
        else if (!strcmp(argv[i], "--private"))
            priv = 1;
        else if (pos == 0 && wl_parse_long(argv[i], 8, SWIM_NMAX, &n_l) == 0)
            pos = 1;
        else if (pos == 1 && wl_parse_long(argv[i], 1, 1000000, &steps) == 0)
            pos = 2;
        else if (pos == 2 && argv[i][0] != '-') {
            place = argv[i];
            pos = 3;
        } else
            wl_usage(USAGE);
    }
    if (pos < 2)
        wl_usage(USAGE);
    int n = (int)n_l;
    if (ph_cluster_init(&argc, &argv) < 0)
        wl_die(PROG, ph_last_error());
    int me = ph_cluster_rank(), ranks = ph_cluster_nranks();
    ph_placement_t pl, at0;
    if (ph_placement_parse(&pl, place) < 0 || ph_placement_parse(&at0, "node:0") < 0)
        wl_die(PROG, ph_last_error());

    size_t bytes = (size_t)n * (size_t)n * sizeof(double);
    swim_arrays s;
    double **slot[13] = {&s.u,    &s.v,    &s.p,    &s.unew, &s.vnew, &s.pnew, &s.uold,
                         &s.vold, &s.pold, &s.cu,   &s.cv,   &s.z,    &s.h};
    for (int k = 0; k < 13; k++)
        *slot[k] = shared_array(bytes, &pl);
    s.ld = (size_t)n;

    long pg = sysconf(_SC_PAGESIZE);
    if (pg < (long)sizeof(swim_cons) || pg < (long)sizeof(swim_c2))
        pg = 4096;
    char *small = ph_cluster_alloc(4 * (size_t)pg, &at0);
    if (!small)
        wl_die(PROG, ph_last_error());
    swim_small sm = {(swim_cons *)small, (swim_c3 *)(small + pg), (swim_c1 *)(small + 2 * pg),
                     (swim_c2 *)(small + 3 * pg)};
    swim_cons m0 = {n, 90.0, 1.0e5, 1.0e5, 0.001};
    if (me == 0)
        *sm.cons = m0;
    ph_cluster_barrier();
    if (priv && ph_cluster_readonly(sm.cons, (size_t)pg) < 0)
        wl_die(PROG, ph_last_error());

    swim_run_cfg cfg = {n, steps, priv};
    int threads = omp_get_max_threads();
    double seconds = 0;
#pragma omp parallel
    {
        long b, e;
        ph_cluster_static_range(n, 0, &b, &e);
        for (long i = b; i < e; i++)
            swim_init_row(&s, sm.cons, (int)i);
        ph_cluster_barrier();
        double t0 = wl_wtime_s();
        run_steps(&s, &sm, &cfg, b, e);
#pragma omp master
        seconds = wl_wtime_s() - t0;
    }
    if (wl_fault_injected() && me == ranks - 1)
        s.p[(size_t)(n / 2) * (size_t)n + (size_t)(n / 2)] += 1.0;
    ph_cluster_barrier();

    int status = 0;
    if (me == 0) {
        double su = sum_of(s.u, n), sv = sum_of(s.v, n), sp = sum_of(s.p, n);
        printf("%s: N=%d steps=%ld ranks=%d threads=%d placement=%s private=%d "
               "checksum_u=%.17g checksum_v=%.17g checksum_p=%.17g time_s=%.6f\n",
               PROG, n, steps, ranks, threads, place, priv, su, sv, sp, seconds);
        fflush(stdout);
        /* swim.c's bound: a lost row or a race moves the mass by far more */
        double drift = fabs((double)(mass_anomaly(s.p, n) - initial_mass(&m0)));
        double bound = 1e-9 * (double)n * (double)(steps + 1);
        int ok = drift <= bound;
        char how[320];
        int len = snprintf(how, sizeof how, "mass drift %.3g, bound %.3g", drift, bound);
        if (check) {
            swim_arrays ref = reference(&m0, steps);
            size_t bad = differing(ref.u, s.u, n) + differing(ref.v, s.v, n) +
                         differing(ref.p, s.p, n);
            ok = ok && bad == 0;
            snprintf(how + len, sizeof how - (size_t)len,
                     "; sequential rerun: %zu of %zu values of u, v, p differ, bit for bit; "
                     "placement %s%s", bad, 3 * (size_t)n * (size_t)n, place,
                     priv ? ", private" : "");
            free(ref.u);
        } else {
            snprintf(how + len, sizeof how - (size_t)len, "; --no-check: no sequential rerun");
        }
        status = wl_verdict(ok, how);
    }
    /* everybody learns the verdict (the constants' page is read-only
     * after --private: the verdict goes through the next page) */
    int *verdict = (int *)(small + pg);
    ph_cluster_barrier();
    if (me == 0)
        verdict[64] = status;
    ph_cluster_barrier();
    status = verdict[64];
    ph_cluster_barrier();
    ph_cluster_free(small);
    for (int k = 12; k >= 0; k--)
        ph_cluster_free(*slot[k]);
    ph_cluster_finalize();
    return status;
}
