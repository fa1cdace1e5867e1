/*
 * swim.c -- a shallow-water model in the style of SPEC OMP's swim (the
 * finite-difference weather model of Sadourny): velocities u, v and
 * geopotential p on a staggered periodic N x N grid, advanced by leapfrog
 * steps with a Robert time filter.  Each step is three stencil loops,
 * each an OpenMP `parallel for` over the rows:
 *   calc1  mass fluxes cu, cv, potential vorticity z and height h from
 *          u, v, p
 *   calc2  new values unew, vnew, pnew from the old ones and calc1's
 *   calc3  the time filter (uold, vold, pold) and u, v, p <- new values
 * on 13 arrays.  Grid (my own staggering): p[i][j] at the cell centre,
 * u[i][j] on its west face, v[i][j] on its south face, z[i][j] at its
 * south-west corner; i is x, j is y, every neighbour index wraps around.
 *
 *   swim N STEPS        (8 <= N <= SWIM_NMAX = 1024)
 *
 * The arithmetic of the three loops and of the initial state is
 * swim_kernel.h, one row at a time (shared with cluster/swim_dsm.c).
 *
 * Data, as in the Fortran original: all 13 arrays are static globals of a
 * compile-time maximum size SWIM_NMAX x SWIM_NMAX (in .bss, leading
 * dimension SWIM_NMAX whatever N is), initialised serially by the master
 * thread -- the first-touch trap in its purest form.
 *
 * Verification: the total mass (sum of p) is an invariant of the scheme
 * (the p update is in flux form on a periodic grid and the filter keeps
 * sums), so its change must stay within a rounding bound; and for
 * N <= 256 the same code runs again sequentially (the `if` clause of
 * every parallel loop) from the same initial state, and u, v, p must be
 * equal value for value (so are the printed checksums, sums of absolute
 * values).  For N > 256 the checksums of u, v, p are printed for
 * comparison by hand.
 */
#include "common.h"
#include "locality_probe.h"
#include "swim_kernel.h"

#include <omp.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "swim"
#define SWIM_NMAX 1024
#define USAGE PROG " N STEPS  (8 <= N <= 1024, 1 <= STEPS <= 1000000)"
#define SEQ_CHECK_MAX_N 256
#define P_MEAN SWIM_P_MEAN

static double u[SWIM_NMAX][SWIM_NMAX], v[SWIM_NMAX][SWIM_NMAX],
    p[SWIM_NMAX][SWIM_NMAX];
static double unew[SWIM_NMAX][SWIM_NMAX], vnew[SWIM_NMAX][SWIM_NMAX],
    pnew[SWIM_NMAX][SWIM_NMAX];
static double uold[SWIM_NMAX][SWIM_NMAX], vold[SWIM_NMAX][SWIM_NMAX],
    pold[SWIM_NMAX][SWIM_NMAX];
static double cu[SWIM_NMAX][SWIM_NMAX], cv[SWIM_NMAX][SWIM_NMAX],
    z[SWIM_NMAX][SWIM_NMAX], h[SWIM_NMAX][SWIM_NMAX];

typedef swim_cons model;

static swim_arrays arrays(void)
{
    swim_arrays s = {&u[0][0],    &v[0][0],    &p[0][0],    &unew[0][0], &vnew[0][0],
                     &pnew[0][0], &uold[0][0], &vold[0][0], &pold[0][0], &cu[0][0],
                     &cv[0][0],   &z[0][0],    &h[0][0],    SWIM_NMAX};
    return s;
}

/* Serial, by the master thread. */
static void init(const model *m)
{
    swim_arrays s = arrays();
    for (int i = 0; i < m->n; i++)
        swim_init_row(&s, m, i);
}

static void calc1(const model *m, int par)
{
    int n = m->n;
    swim_arrays s = arrays();
    swim_c1 c = swim_coef1(m);
#pragma omp parallel for schedule(static) if(par)
    for (int i = 0; i < n; i++)
        swim_calc1_row(&s, n, i, c);
}

static void calc2(const model *m, double tdt, int par)
{
    int n = m->n;
    swim_arrays s = arrays();
    swim_c2 c = swim_coef2(m, tdt);
#pragma omp parallel for schedule(static) if(par)
    for (int i = 0; i < n; i++)
        swim_calc2_row(&s, n, i, c);
}

static void calc3(const model *m, int first, int par)
{
    int n = m->n;
    swim_arrays s = arrays();
    swim_c3 c = swim_coef3(m, first);
#pragma omp parallel for schedule(static) if(par)
    for (int i = 0; i < n; i++)
        swim_calc3_row(&s, n, i, c);
}

static void run(const model *m, long steps, int par)
{
    double tdt = m->dt;
    for (long s = 0; s < steps; s++) {
        calc1(m, par);
        calc2(m, tdt, par);
        calc3(m, s == 0, par);
        tdt = 2.0 * m->dt;
        if (par)
            wl_probe_tick(s + 1);
    }
}

/* WL_LOCALITY=1: the rows 0..n-1 of every array, split by schedule(static). */
static void probe_arrays(int n)
{
    static const char *const names[] = {"u",    "v",    "p",  "unew", "vnew", "pnew", "uold",
                                        "vold", "pold", "cu", "cv",   "z",    "h"};
    swim_arrays s = arrays();
    const double *a[] = {s.u,    s.v,    s.p,  s.unew, s.vnew, s.pnew, s.uold,
                         s.vold, s.pold, s.cu, s.cv,   s.z,    s.h};
    for (int i = 0; i < 13; i++)
        wl_probe_units(names[i], a[i], SWIM_NMAX * sizeof(double), (size_t)n * sizeof(double),
                       n, 0, n - 1);
    wl_probe_begin();
}

/* Checksum: the sum of absolute values (u and v sum to about 0). */
static double sum_of(double (*a)[SWIM_NMAX], int n)
{
    double s = 0.0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            s += fabs(a[i][j]);
    return s;
}

/* Sum of p - P_MEAN, accumulated in long double. */
static long double mass_anomaly(int n)
{
    long double s = 0.0L;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            s += (long double)p[i][j] - (long double)P_MEAN;
    return s;
}

static double *save(double (*a)[SWIM_NMAX], int n)
{
    double *c = malloc((size_t)n * (size_t)n * sizeof *c);
    if (!c)
        wl_die(PROG, "out of memory for the reference copy");
    for (int i = 0; i < n; i++)
        memcpy(c + (size_t)i * (size_t)n, a[i], (size_t)n * sizeof *c);
    return c;
}

static int same_as(double (*a)[SWIM_NMAX], const double *c, int n)
{
    for (int i = 0; i < n; i++)
        if (memcmp(c + (size_t)i * (size_t)n, a[i], (size_t)n * sizeof *c) != 0)
            return 0;
    return 1;
}

int main(int argc, char **argv)
{
    long n_l, steps;
    if (argc != 3 || wl_parse_long(argv[1], 8, SWIM_NMAX, &n_l) != 0 ||
        wl_parse_long(argv[2], 1, 1000000, &steps) != 0)
        wl_usage(USAGE);
    model m = {(int)n_l, 90.0, 1.0e5, 1.0e5, 0.001};
    int n = m.n;

    init(&m);
    long double mass0 = mass_anomaly(n);
    probe_arrays(n);
    double t0 = wl_wtime_s();
    run(&m, steps, 1);
    double time_s = wl_wtime_s() - t0;
    if (wl_fault_injected())
        p[n / 2][n / 2] += 1.0;

    double su = sum_of(u, n), sv = sum_of(v, n), sp = sum_of(p, n);
    printf("%s: N=%d steps=%ld threads=%d checksum_u=%.17g checksum_v=%.17g "
           "checksum_p=%.17g time_s=%.6f\n", PROG, n, steps, omp_get_max_threads(),
           su, sv, sp, time_s);

    /* rounding of about one ulp of p per point and step, with a wide
     * margin; a lost row or a race moves the mass by far more */
    double drift = fabs((double)(mass_anomaly(n) - mass0));
    double bound = 1e-9 * (double)n * (double)(steps + 1);
    int ok = drift <= bound;
    char how[200];
    int len = snprintf(how, sizeof how, "mass drift %.3g, bound %.3g", drift, bound);
    if (n <= SEQ_CHECK_MAX_N) {
        double *cu_ = save(u, n), *cv_ = save(v, n), *cp_ = save(p, n);
        init(&m);
        run(&m, steps, 0);
        int same = sum_of(u, n) == su && sum_of(v, n) == sv && sum_of(p, n) == sp &&
                   same_as(u, cu_, n) && same_as(v, cv_, n) && same_as(p, cp_, n);
        ok = ok && same;
        snprintf(how + len, sizeof how - (size_t)len,
                 "; sequential rerun: u, v, p %s", same ? "equal" : "DIFFERENT");
        free(cu_);
        free(cv_);
        free(cp_);
    } else {
        snprintf(how + len, sizeof how - (size_t)len,
                 "; N > %d: no sequential rerun", SEQ_CHECK_MAX_N);
    }
    return wl_verdict(ok, how);
}
