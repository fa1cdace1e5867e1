/*
 * adi.c -- the ADI solvers' driver and convergence bound (see adi.h).
 */
#include "adi.h"
#include "locality_probe.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NC NAS_ADI_NC

int nas_adi_run(const nas_adi_solver_t *s, int argc, char **argv)
{
    if (argc < 2 || argc > 4)
        nas_usage(s->usage);
    int cls = nas_parse_class(argv[1]);
    if (cls < 0)
        nas_usage(s->usage);
    long iters = s->class_iters[cls], nl = s->class_n[cls];
    if ((argc > 2 && nas_parse_long(argv[2], 1, 100000, &iters)) ||
        (argc > 3 && nas_parse_long(argv[3], s->n_min, s->n_max, &nl)))
        nas_usage(s->usage);

    nas_adi_grid_t grid;
    const nas_adi_grid_t *g = &grid;
    grid.n = (int)nl;
    grid.ns = grid.n - 2;
    grid.ld = s->static_ld ? s->static_ld : (size_t)grid.n;
    grid.sj = grid.ld * NC;
    grid.sk = grid.ld * grid.ld * NC;
    grid.h = 1.0 / (grid.n - 1);
    grid.h2inv = 1.0 / (grid.h * grid.h);
    const int N = grid.n, ns = grid.ns;
    const double h = grid.h;
    s->setup(g);

    char size[64];
    snprintf(size, sizeof size, "%d^3 grid x %d unknowns", N, NC);
    nas_header(s->name, cls, size, iters);

    /* ADI parameters from the 1-D eigenvalues. */
    const double pi = 3.14159265358979323846;
    double *lam = nas_malloc((size_t)NC * (size_t)ns * sizeof *lam);
    double lo = 1e300, hi = 0.0;
    for (int m = 0; m < NC; m++)
        for (int p = 0; p < ns; p++) {
            double sn = sin((p + 1) * pi * h / 2.0);
            double l = s->eigenvalue(m, sn);
            lam[m * ns + p] = l;
            lo = l < lo ? l : lo;
            hi = l > hi ? l : hi;
        }
    int ncycle = 1 + (int)ceil(log(hi / lo) / log(10.0));
    double rho[64];
    nas_adi_params(lo, hi, ncycle, rho);

    /* Serial initialisation by the master thread: the first-touch trap
     * (static arrays zeroed whole, as a Fortran code zeroing its COMMON
     * blocks would). */
    size_t total = grid.ld * grid.ld * grid.ld * NC;
    double *u, *f, *rhs;
    if (s->static_ld) {
        u = s->static_u;
        f = s->static_f;
        rhs = s->static_rhs;
        memset(u, 0, total * sizeof *u);
        memset(f, 0, total * sizeof *f);
        memset(rhs, 0, total * sizeof *rhs);
    } else {
        u = nas_malloc(total * sizeof *u);
        f = nas_malloc(total * sizeof *f);
        rhs = nas_malloc(total * sizeof *rhs);
    }
    for (int k = 0; k < N; k++)
        for (int j = 0; j < N; j++)
            for (int i = 0; i < N; i++) {
                int bnd = i == 0 || j == 0 || k == 0 || i == N - 1 || j == N - 1 || k == N - 1;
                for (int m = 0; m < NC; m++) {
                    double e = s->exact(m, i * h, j * h, k * h);
                    rhs[nas_adi_at(g, k, j, i) + m] = e; /* u* for computing f */
                    u[nas_adi_at(g, k, j, i) + m] = bnd ? e : 0.0;
                    f[nas_adi_at(g, k, j, i) + m] = 0.0;
                }
            }
    double e0 = 0.0, xnorm = 0.0;
    for (int k = 1; k < N - 1; k++) {
        s->op_plane(f, rhs, NULL, 0.0, k);
        for (int j = 1; j < N - 1; j++)
            for (int i = 1; i < N - 1; i++)
                for (int m = 0; m < NC; m++) {
                    size_t q = nas_adi_at(g, k, j, i) + m;
                    double d = u[q] - rhs[q];
                    e0 += d * d;
                    xnorm += rhs[q] * rhs[q];
                }
    }
    memset(rhs, 0, total * sizeof *rhs);
    e0 = sqrt(e0);
    xnorm = sqrt(xnorm);

    int nthreads = omp_get_max_threads();
    double **work = nas_malloc((size_t)nthreads * sizeof *work);
    double *part = nas_malloc((size_t)nthreads * NAS_PAD * sizeof *part);
    for (int t = 0; t < nthreads; t++) /* line buffers, one per thread */
        work[t] = nas_malloc((size_t)ns * s->work_per_point * sizeof(double));

    const size_t sj = grid.sj, sk = grid.sk;
    int fault = nas_fault(s->name, "u(N/2, N/2, N/2) += 1e-3 after the last iteration");
    /* WL_LOCALITY=1: owner-local share after every iteration, by the k
     * planes' ownership (four of the five regions); of a static array
     * sized for the largest class, the rows of each plane the loop
     * touches.  u: all N planes, all N rows (the stencil reads the
     * boundary planes and rows beside the interior).  f and rhs: the
     * interior planes' interior rows; their boundary planes and rows are
     * written by the initialisation only, and a page no thread touches in
     * the loop has no owner to be local to. */
    size_t plane_b = grid.sk * sizeof *u, used_b = (size_t)N * grid.sj * sizeof *u;
    size_t inner_b = (size_t)ns * grid.sj * sizeof *u;
    size_t inner0 = nas_adi_at(g, 1, 1, 0);
    wl_probe_units("u", u, plane_b, used_b, N, 1, N - 2);
    wl_probe_units("f", f + inner0, plane_b, inner_b, ns, 0, ns - 1);
    wl_probe_units("rhs", rhs + inner0, plane_b, inner_b, ns, 0, ns - 1);
    wl_probe_begin();
    double t0 = nas_wtime();
    for (long it = 0; it < iters; it++) {
        double r = rho[it % ncycle];
#pragma omp parallel
        { /* compute_rhs */
#pragma omp for schedule(static)
            for (int k = 1; k < N - 1; k++)
                s->op_plane(rhs, u, f, r, k);
        }
#pragma omp parallel
        { /* x_sweep: lines along i, planes k owned by schedule(static) */
            double *w = work[omp_get_thread_num()];
#pragma omp for schedule(static)
            for (int k = 1; k < N - 1; k++)
                for (int j = 1; j < N - 1; j++)
                    s->line_solve(rhs + nas_adi_at(g, k, j, 1), NC, ns, r, w);
        }
#pragma omp parallel
        { /* y_sweep: lines along j, same ownership */
            double *w = work[omp_get_thread_num()];
#pragma omp for schedule(static)
            for (int k = 1; k < N - 1; k++)
                for (int i = 1; i < N - 1; i++)
                    s->line_solve(rhs + nas_adi_at(g, k, 1, i), sj, ns, r, w);
        }
#pragma omp parallel
        { /* z_sweep: lines along k, so parallel over j (another ownership) */
            double *w = work[omp_get_thread_num()];
#pragma omp for schedule(static)
            for (int j = 1; j < N - 1; j++)
                for (int i = 1; i < N - 1; i++)
                    s->line_solve(rhs + nas_adi_at(g, 1, j, i), sk, ns, r, w);
        }
#pragma omp parallel
        { /* add */
#pragma omp for schedule(static)
            for (int k = 1; k < N - 1; k++)
                for (int j = 1; j < N - 1; j++)
                    for (size_t q = nas_adi_at(g, k, j, 1); q < nas_adi_at(g, k, j, N - 1); q++)
                        u[q] += rhs[q];
        }
        if (fault && it == iters - 1)
            u[nas_adi_at(g, N / 2, N / 2, N / 2)] += 1e-3;
        wl_probe_tick(it + 1);
    }
    double secs = nas_wtime() - t0;

    /* Error against the exact solution (deterministic sum). */
    for (int t = 0; t < nthreads; t++)
        part[t * NAS_PAD] = 0.0;
#pragma omp parallel
    {
        double sum = 0.0;
#pragma omp for schedule(static)
        for (int k = 1; k < N - 1; k++)
            for (int j = 1; j < N - 1; j++)
                for (int i = 1; i < N - 1; i++)
                    for (int m = 0; m < NC; m++) {
                        double d = u[nas_adi_at(g, k, j, i) + m] - s->exact(m, i * h, j * h, k * h);
                        sum += d * d;
                    }
        part[omp_get_thread_num() * NAS_PAD] = sum;
    }
    double err = sqrt(nas_sum_partials(part, nthreads));
    double bound = nas_adi_bound(lam, NC, ns, rho, ncycle, iters);
    printf("%s: ADI parameter cycle of %d, error bound factor %.3e\n", s->name, ncycle, bound);
    printf("%s: ||u - u*|| / ||u*|| = %.6e (initial %.6e)\n", s->name, err / xnorm, e0 / xnorm);
    int ok = nas_check_le(s->name, "||u - u*||", err, bound * e0 * (1.0 + 1e-6) + 1e-10 * xnorm);

    for (int t = 0; t < nthreads; t++)
        free(work[t]);
    free(work);
    free(part);
    free(lam);
    if (!s->static_ld) {
        free(u);
        free(f);
        free(rhs);
    }
    return nas_finish(s->name, secs, ok);
}

void nas_adi_params(double lo, double hi, int ncycle, double *rho)
{
    for (int j = 0; j < ncycle; j++) {
        double t = ncycle > 1 ? (double)j / (double)(ncycle - 1) : 0.5;
        double lam = lo * pow(hi / lo, t);
        rho[j] = 0.5 / lam;
    }
}

double nas_adi_bound(const double *lam, int ncomp, int n, const double *rho,
                     int ncycle, long iters)
{
    long cycles = iters / ncycle;
    int rest = (int)(iters % ncycle);
    double worst = 0.0;
#pragma omp parallel for collapse(2) schedule(dynamic, 4) reduction(max : worst)
    for (int m = 0; m < ncomp; m++)
        for (int p = 0; p < n; p++) {
            const double *l = lam + (size_t)m * (size_t)n;
            double a = l[p];
            /* By symmetry in (a, b, c) only q >= p, r >= q are needed. */
            for (int q = p; q < n; q++) {
                double b = l[q];
                for (int r = q; r < n; r++) {
                    double c = l[r], full = 1.0, part = 1.0;
                    for (int j = 0; j < ncycle; j++) {
                        double x = rho[j];
                        double g = 1.0 - x * (a + b + c) /
                                             ((1.0 + x * a) * (1.0 + x * b) * (1.0 + x * c));
                        g = fabs(g);
                        full *= g;
                        if (j < rest)
                            part *= g;
                    }
                    double prod = pow(full, (double)cycles) * part;
                    if (prod > worst)
                        worst = prod;
                }
            }
        }
    return worst;
}
