/*
 * mg.c -- an MG-like kernel: V-cycle multigrid for a 3-D Poisson problem
 * on a periodic grid, modelled on the structure of the NAS Parallel
 * Benchmarks' MG (written from the NPB reports' description, no NPB code).
 *
 * WHAT IT MODELS
 *   Solve A u = v on an n x n x n periodic grid (n a power of two), where
 *   v is zero except for ten +1 and ten -1 point charges at random
 *   positions (fixed seed) and A is the 27-point discrete Laplacian with
 *   the NPB report's coefficients (centre -8/3, faces 0, edges 1/6,
 *   corners 1/12).  Each iteration is one V-cycle followed by the residual
 *   r = v - A u:
 *       down:  r_{k-1} = P r_k            (restrict: 27-point full
 *                                          weighting 1/2, 1/4, 1/8, 1/16)
 *       bottom: u_1 = S r_1               (smooth)
 *       up:    u_k = Q u_{k-1}            (prolongate: trilinear)
 *              r_k = r_k - A u_k          (residual)
 *              u_k = u_k + S r_k          (smooth)
 *       finest: u += Q u_coarse; r = v - A u; u += S r
 *   with the smoother S of the report's classes S, W, A (centre -3/8,
 *   faces 1/32, edges -1/64, corners 0).  Every grid has one layer of
 *   ghost points holding periodic copies, refreshed after every operator.
 *
 * PARALLEL STRUCTURE
 *   Every operator is its own parallel region: `omp for schedule(static)`
 *   over the k planes of the level it writes (restriction and
 *   prolongation over the coarse planes, so a thread's fine and coarse
 *   planes lie at the same place of their grids), then the ghost copy:
 *   x and y faces over k planes, the two z ghost planes over j (a small
 *   exchange between the first and the last thread).  Coarse levels have
 *   fewer planes than a big machine has threads.
 *
 * DATA
 *   u and r for every level and v, allocated with malloc and initialised
 *   IN PARALLEL (zeroed by the thread owning the planes); the twenty
 *   charges are then set by the master thread.  Built with
 *   -DMG_ONE_ARRAY (the program mg_one) every level of u and r and v are
 *   carved out of ONE allocation, finest level first, as Fortran codes
 *   keep a V-cycle's grids at offsets in one big array: one hot area
 *   whose parts are touched by different parallel regions of different
 *   sizes (the coarse levels by few threads, and briefly).
 *
 * VERIFICATION
 *   The residual norm ||r||_2 (root mean square) after each V-cycle must
 *   fall by at least a factor 2 per cycle until it reaches the round-off
 *   floor 1e-12 ||r_0||, and the final residual must be at most
 *   max(2^-NIT, 1e-12) ||r_0||.  Multigrid's convergence does not depend
 *   on the grid size: this V-cycle (one smoothing step per level, as in
 *   NPB MG) gains a factor 8 on the first cycle and about 2.7 to 3 per
 *   cycle afterwards on every size tried (16^3 to 256^3); smoothing
 *   without a working coarse-grid correction gains almost nothing on the
 *   smooth error.  Round-off stops the residual near 1e-16 ||r_0||.
 *
 *   mg CLASS [NIT [N]]   CLASS S (32^3, 4 cycles), W (128^3, 4), A (256^3, 4);
 *                        N a power of two, 4 <= N <= 512
 */
#include "nas_common.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef MG_ONE_ARRAY
#define MG_PROG "mg_one"
#else
#define MG_PROG "mg"
#endif

#define MAXN 512
#define LEVELS 10 /* 2^1 .. 2^9 */

static const int class_n[NAS_NCLASSES] = {32, 128, 256};
static const long class_nit[NAS_NCLASSES] = {4, 4, 4};

static const double acoef[4] = {-8.0 / 3.0, 0.0, 1.0 / 6.0, 1.0 / 12.0};
static const double ccoef[4] = {-3.0 / 8.0, 1.0 / 32.0, -1.0 / 64.0, 0.0};

static const double FACTOR = 2.0;  /* required residual reduction per cycle */
static const double FLOOR = 1e-12; /* round-off floor relative to ||r_0|| */

typedef struct {
    int m;     /* interior points per direction */
    double *a; /* (m + 2)^3, stored [k][j][i] */
} grid_t;

static size_t gi(int m, int k, int j, int i)
{
    size_t s = (size_t)m + 2;
    return ((size_t)k * s + (size_t)j) * s + (size_t)i;
}

/* Periodic ghost copy (called inside a parallel region). */
static void comm3(grid_t g)
{
    int m = g.m;
    double *a = g.a;
#pragma omp for schedule(static)
    for (int k = 1; k <= m; k++) {
        for (int j = 1; j <= m; j++) {
            a[gi(m, k, j, 0)] = a[gi(m, k, j, m)];
            a[gi(m, k, j, m + 1)] = a[gi(m, k, j, 1)];
        }
        for (int i = 0; i <= m + 1; i++) {
            a[gi(m, k, 0, i)] = a[gi(m, k, m, i)];
            a[gi(m, k, m + 1, i)] = a[gi(m, k, 1, i)];
        }
    }
#pragma omp for schedule(static)
    for (int j = 0; j <= m + 1; j++)
        for (int i = 0; i <= m + 1; i++) {
            a[gi(m, 0, j, i)] = a[gi(m, m, j, i)];
            a[gi(m, m + 1, j, i)] = a[gi(m, 1, j, i)];
        }
}

/* For line (k, j) of grid a: s1[i] = the 4 neighbours in the j-k plane
 * sharing a face, s2[i] = the 4 sharing an edge, for i = 0 .. m + 1. */
static void line_sums(const double *a, int m, int k, int j, double *s1, double *s2)
{
    const double *jm = a + gi(m, k, j - 1, 0), *jp = a + gi(m, k, j + 1, 0);
    const double *km = a + gi(m, k - 1, j, 0), *kp = a + gi(m, k + 1, j, 0);
    const double *mm = a + gi(m, k - 1, j - 1, 0), *mp = a + gi(m, k - 1, j + 1, 0);
    const double *pm = a + gi(m, k + 1, j - 1, 0), *pp = a + gi(m, k + 1, j + 1, 0);
    for (int i = 0; i <= m + 1; i++) {
        s1[i] = jm[i] + jp[i] + km[i] + kp[i];
        s2[i] = mm[i] + mp[i] + pm[i] + pp[i];
    }
}

/* out = in(centre) - A u  (resid: r = v - A u; out may be in). */
static void resid(grid_t out, const double *in, grid_t u)
{
    int m = u.m;
#pragma omp parallel
    {
        double s1[MAXN + 2], s2[MAXN + 2];
#pragma omp for schedule(static)
        for (int k = 1; k <= m; k++)
            for (int j = 1; j <= m; j++) {
                line_sums(u.a, m, k, j, s1, s2);
                const double *c = u.a + gi(m, k, j, 0);
                for (int i = 1; i <= m; i++) {
                    double au = acoef[0] * c[i] + acoef[1] * (c[i - 1] + c[i + 1] + s1[i]) +
                                acoef[2] * (s2[i] + s1[i - 1] + s1[i + 1]) +
                                acoef[3] * (s2[i - 1] + s2[i + 1]);
                    out.a[gi(m, k, j, i)] = in[gi(m, k, j, i)] - au;
                }
            }
        comm3(out);
    }
}

/* u = u + S r (psinv). */
static void smooth(grid_t u, grid_t r)
{
    int m = u.m;
#pragma omp parallel
    {
        double s1[MAXN + 2], s2[MAXN + 2];
#pragma omp for schedule(static)
        for (int k = 1; k <= m; k++)
            for (int j = 1; j <= m; j++) {
                line_sums(r.a, m, k, j, s1, s2);
                const double *c = r.a + gi(m, k, j, 0);
                for (int i = 1; i <= m; i++)
                    u.a[gi(m, k, j, i)] += ccoef[0] * c[i] +
                                           ccoef[1] * (c[i - 1] + c[i + 1] + s1[i]) +
                                           ccoef[2] * (s2[i] + s1[i - 1] + s1[i + 1]) +
                                           ccoef[3] * (s2[i - 1] + s2[i + 1]);
            }
        comm3(u);
    }
}

/* coarse = P fine (rprj3): coarse point I sits on fine point 2I - 1
 * (stored indices). */
static void restrict_to(grid_t coarse, grid_t fine)
{
    int mc = coarse.m, mf = fine.m;
#pragma omp parallel
    {
        double s1[MAXN + 2], s2[MAXN + 2];
#pragma omp for schedule(static)
        for (int K = 1; K <= mc; K++)
            for (int J = 1; J <= mc; J++) {
                int k = 2 * K - 1, j = 2 * J - 1;
                line_sums(fine.a, mf, k, j, s1, s2);
                const double *c = fine.a + gi(mf, k, j, 0);
                for (int I = 1; I <= mc; I++) {
                    int i = 2 * I - 1;
                    coarse.a[gi(mc, K, J, I)] = 0.5 * c[i] + 0.25 * (c[i - 1] + c[i + 1] + s1[i]) +
                                                0.125 * (s2[i] + s1[i - 1] + s1[i + 1]) +
                                                0.0625 * (s2[i - 1] + s2[i + 1]);
                }
            }
        comm3(coarse);
    }
}

/* fine += Q coarse (interp, trilinear): fine 2I - 1 takes coarse I, fine
 * 2I the mean of coarse I and I + 1, in each direction. */
static void prolongate(grid_t fine, grid_t coarse)
{
    int mc = coarse.m, mf = fine.m;
#pragma omp parallel
    {
#pragma omp for schedule(static)
        for (int K = 1; K <= mc; K++)
            for (int J = 1; J <= mc; J++)
                for (int I = 1; I <= mc; I++)
                    for (int ek = 0; ek <= 1; ek++)
                        for (int ej = 0; ej <= 1; ej++)
                            for (int ei = 0; ei <= 1; ei++) {
                                double s = 0.0;
                                for (int dk = 0; dk <= ek; dk++)
                                    for (int dj = 0; dj <= ej; dj++)
                                        for (int di = 0; di <= ei; di++)
                                            s += coarse.a[gi(mc, K + dk, J + dj, I + di)];
                                fine.a[gi(mf, 2 * K - 1 + ek, 2 * J - 1 + ej, 2 * I - 1 + ei)] +=
                                    s / (double)(1 << (ek + ej + ei));
                            }
        comm3(fine);
    }
}

static void zero(grid_t g)
{
    int m = g.m;
#pragma omp parallel for schedule(static)
    for (int k = 0; k <= m + 1; k++)
        for (size_t q = gi(m, k, 0, 0); q < gi(m, k + 1, 0, 0); q++)
            g.a[q] = 0.0;
}

/* Root mean square of the interior (deterministic). */
static double rms(grid_t g, double *part)
{
    int m = g.m, nt = omp_get_max_threads();
    for (int t = 0; t < nt; t++)
        part[t * NAS_PAD] = 0.0; /* a thread the team may lack adds 0 */
#pragma omp parallel
    {
        double s = 0.0;
#pragma omp for schedule(static)
        for (int k = 1; k <= m; k++)
            for (int j = 1; j <= m; j++)
                for (int i = 1; i <= m; i++) {
                    double x = g.a[gi(m, k, j, i)];
                    s += x * x;
                }
        part[omp_get_thread_num() * NAS_PAD] = s;
    }
    return sqrt(nas_sum_partials(part, nt) / ((double)m * m * m));
}

int main(int argc, char **argv)
{
    const char *usage = "mg CLASS [NIT [N]]  (CLASS = S, W or A; 1 <= NIT <= 1000; N a power of two, 4 <= N <= 512)";
    if (argc < 2 || argc > 4)
        nas_usage(usage);
    int cls = nas_parse_class(argv[1]);
    if (cls < 0)
        nas_usage(usage);
    long nit = class_nit[cls], nl = class_n[cls];
    if ((argc > 2 && nas_parse_long(argv[2], 1, 1000, &nit)) ||
        (argc > 3 && (nas_parse_long(argv[3], 4, MAXN, &nl) || (nl & (nl - 1)))))
        nas_usage(usage);
    int n = (int)nl, lt = 0;
    while ((1 << lt) < n)
        lt++;

    char size[64];
    snprintf(size, sizeof size, "%d^3 periodic grid, %d levels", n, lt);
    nas_header(MG_PROG, cls, size, nit);

    /* Levels 1 .. lt (level k has 2^k points per direction), all zeroed
     * in parallel: first touch by the planes' owners. */
    grid_t u[LEVELS], r[LEVELS], v;
#ifdef MG_ONE_ARRAY
    size_t total = 0;
    for (int k = 1; k <= lt; k++) {
        size_t s = (size_t)(1 << k) + 2;
        total += 2 * s * s * s;
    }
    total += (size_t)(n + 2) * (n + 2) * (n + 2);
    double *all = nas_malloc(total * sizeof(double)), *at = all;
    for (int k = lt; k >= 1; k--) { /* finest first: u levels, then r */
        size_t s = (size_t)(1 << k) + 2;
        u[k].a = at;
        at += s * s * s;
    }
    for (int k = lt; k >= 1; k--) {
        size_t s = (size_t)(1 << k) + 2;
        r[k].a = at;
        at += s * s * s;
    }
    v.a = at;
#endif
    for (int k = 1; k <= lt; k++) {
        size_t s = (size_t)(1 << k) + 2;
        u[k].m = r[k].m = 1 << k;
#ifndef MG_ONE_ARRAY
        u[k].a = nas_malloc(s * s * s * sizeof(double));
        r[k].a = nas_malloc(s * s * s * sizeof(double));
#else
        (void)s;
#endif
        zero(u[k]);
        zero(r[k]);
    }
    v.m = n;
#ifndef MG_ONE_ARRAY
    v.a = nas_malloc((size_t)(n + 2) * (n + 2) * (n + 2) * sizeof(double));
#endif
    zero(v);
    /* twenty charges at distinct random points: ten +1, ten -1 */
    nas_rng_t rng;
    nas_rng_seed(&rng, 314159265);
    for (int c = 0; c < 20;) {
        int k = 1 + (int)nas_rng_below(&rng, (uint64_t)n), j = 1 + (int)nas_rng_below(&rng, (uint64_t)n),
            i = 1 + (int)nas_rng_below(&rng, (uint64_t)n);
        double *p = v.a + gi(n, k, j, i);
        if (*p != 0.0)
            continue;
        *p = c < 10 ? 1.0 : -1.0;
        c++;
    }
#pragma omp parallel
    comm3(v);

    double *part = nas_malloc((size_t)omp_get_max_threads() * NAS_PAD * sizeof *part);
    double *norms = nas_malloc((size_t)(nit + 1) * sizeof *norms);
    resid(r[lt], v.a, u[lt]); /* u = 0: r = v */
    norms[0] = rms(r[lt], part);

    int fault = nas_fault(MG_PROG, "u(n/2, n/2, n/2) += 1 before the last residual");
    double t0 = nas_wtime();
    for (long it = 0; it < nit; it++) {
        /* down */
        for (int k = lt; k > 1; k--)
            restrict_to(r[k - 1], r[k]);
        /* bottom */
        zero(u[1]);
        smooth(u[1], r[1]);
        /* up */
        for (int k = 2; k < lt; k++) {
            zero(u[k]);
            prolongate(u[k], u[k - 1]);
            resid(r[k], r[k].a, u[k]);
            smooth(u[k], r[k]);
        }
        if (lt > 1)
            prolongate(u[lt], u[lt - 1]);
        resid(r[lt], v.a, u[lt]);
        smooth(u[lt], r[lt]);
        if (fault && it == nit - 1)
            u[lt].a[gi(n, n / 2, n / 2, n / 2)] += 1.0;
        /* the iteration's residual */
        resid(r[lt], v.a, u[lt]);
        norms[it + 1] = rms(r[lt], part);
    }
    double secs = nas_wtime() - t0;

    int ok = 1;
    double floor = FLOOR * norms[0];
    printf(MG_PROG ": ||r_0|| = %.12e\n", norms[0]);
    for (long it = 1; it <= nit; it++) {
        int good = norms[it] <= norms[it - 1] / FACTOR || norms[it] <= floor;
        if (it <= 5 || it == nit || !good)
            printf(MG_PROG ": cycle %3ld: ||r|| = %.12e, reduction %.3g%s\n", it, norms[it],
                   norms[it - 1] / norms[it], good ? "" : " (too small)");
        ok = ok && good;
    }
    double want = pow(FACTOR, -(double)nit);
    ok = nas_check_le(MG_PROG, "||r|| / ||r_0||", norms[nit] / norms[0], want > FLOOR ? want : FLOOR) &&
         ok;

#ifdef MG_ONE_ARRAY
    free(all);
#else
    for (int k = 1; k <= lt; k++) {
        free(u[k].a);
        free(r[k].a);
    }
    free(v.a);
#endif
    free(part);
    free(norms);
    return nas_finish(MG_PROG, secs, ok);
}
