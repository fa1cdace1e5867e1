/*
 * sp.c -- an SP-like kernel: an alternating-direction implicit (ADI)
 * solver with scalar pentadiagonal line solves on a 3-D grid, modelled on
 * the structure of the NAS Parallel Benchmarks' SP (written from the NPB
 * reports' description, no NPB code).
 *
 * WHAT IT MODELS
 *   Five unknowns per grid point on the unit cube, N points per direction
 *   including the Dirichlet boundary.  As in SP, whose block systems are
 *   diagonalised into five scalar ones, each component m has its own
 *   scalar operator
 *       (A u)_m = kappa_m sum over the 3 directions of L_d u_m  +  c u_m,
 *       L_d = T_d + sigma h^2 T_d^2,
 *   T_d the 1-D second difference (-1 2 -1)/h^2 and T_d^2 its square, the
 *   fourth difference (1 -4 6 -4 1)/h^4, with rows (5 -4 1) next to the
 *   boundary: SP's fourth-order artificial dissipation, which is what makes
 *   its line systems pentadiagonal.  The approximate factorisation drives
 *   u to the steady state A u = f:
 *       rhs  = rho (f - A u)                                  (compute_rhs)
 *       (I + rho Ax)(I + rho Ay)(I + rho Az) du = rhs      (three sweeps)
 *       u   += du                                                    (add)
 *   with Ad = kappa_m L_d + c/3: along every grid line and for every
 *   component one scalar pentadiagonal system, formed per line and solved
 *   by banded Gaussian elimination.  rho cycles through a geometric set of
 *   ADI parameters.
 *
 * PARALLEL STRUCTURE (5 parallel regions per iteration, all
 * schedule(static); the driver in adi.c runs them, this file supplies the
 * operator and the line solve)
 *   compute_rhs   over k planes (13-point stencil)
 *   x_sweep       over k planes (lines along i)
 *   y_sweep       over k planes (lines along j)
 *   z_sweep       over j (lines along k): a different data ownership --
 *                 the *phase*, as in bt.c
 *   add           over k planes
 *
 * DATA
 *   u, f and rhs are STATIC arrays (.bss, like NPB's Fortran COMMON
 *   blocks) sized for the largest class: NMAX^3 x 5 doubles each with
 *   NMAX = 64 (class A), 10.5 MB each, 31.5 MB in all, whatever the class;
 *   smaller grids use the leading corner with NMAX strides, as a Fortran
 *   code compiled for the largest size would.  Initialised SERIALLY by the
 *   master thread (the first-touch trap).
 *
 * VERIFICATION
 *   As bt.c: manufactured exact discrete solution u*, commuting directional
 *   operators with known eigenvalues kappa_m (mu_p + sigma h^2 mu_p^2) +
 *   c/3, so the error after ITERS steps is bounded by B ||u0 - u*||
 *   (nas_adi_bound).  Passes when ||u - u*|| <= B ||u0 - u*|| (1 + 1e-6) +
 *   1e-10 ||u*||; with the class's default ITERS, B < 1e-10.
 *
 *   sp CLASS [ITERS [N]]   CLASS S (N=16), W (N=32), A (N=64); N <= 64
 */
#include "adi.h"

#include <math.h>
#include <stddef.h>

#define NC NAS_ADI_NC /* unknowns per point */
#define NMAX 64       /* the largest class's grid: the static arrays' size */

static double u[(size_t)NMAX * NMAX * NMAX * NC];
static double f[(size_t)NMAX * NMAX * NMAX * NC];
static double rhs[(size_t)NMAX * NMAX * NMAX * NC];

static int N;        /* points per direction, boundary included */
static double h2inv; /* 1 / h^2 */
static const nas_adi_grid_t *grid;
static const double kappa[NC] = {1.0, 0.7, 1.4, 0.5, 1.9};
static const double creact = 2.0;
static const double sigma = 0.25; /* dissipation weight */

static size_t at(int k, int j, int i)
{
    return nas_adi_at(grid, k, j, i);
}

static double exact(int m, double x, double y, double z)
{
    const double pi = 3.14159265358979323846;
    return 2.0 - 0.2 * m + sin(pi * (0.8 * x + 0.1 * m)) * cos(pi * (0.6 * y - 0.2)) * exp(0.4 * z) +
           0.2 * x * y * (1.0 - z);
}

/* h^2 L u along one direction at interior index i of a line of N points:
 * c[s] is the value s points away from i (s = -2..2), valid ones only. */
static double l1d(const double *c, long s, int i)
{
    double d2 = 2.0 * c[0] - c[-s] - c[s], d4;
    if (i == 1)
        d4 = 5.0 * c[0] - 2.0 * c[-s] - 4.0 * c[s] + c[2 * s];
    else if (i == N - 2)
        d4 = 5.0 * c[0] - 2.0 * c[s] - 4.0 * c[-s] + c[-2 * s];
    else
        d4 = c[-2 * s] - 4.0 * c[-s] + 6.0 * c[0] - 4.0 * c[s] + c[2 * s];
    return d2 + sigma * d4;
}

/* out = A u on interior plane k (g == NULL), or out = rho (g - A u). */
static void op_plane(double *out, const double *v, const double *g, double rho, int k)
{
    long sj = (long)grid->sj, sk = (long)grid->sk;
    for (int j = 1; j < N - 1; j++)
        for (int i = 1; i < N - 1; i++) {
            size_t p = at(k, j, i);
            for (int m = 0; m < NC; m++) {
                const double *c = v + p + m;
                double s = kappa[m] * (l1d(c, NC, i) + l1d(c, sj, j) + l1d(c, sk, k)) * h2inv +
                           creact * c[0];
                out[p + m] = g ? rho * (g[p + m] - s) : s;
            }
        }
}

/* One line of ns points from base, `stride` doubles apart, all NC
 * components: form the pentadiagonal (I + rho (kappa_m L + c/3)) for each
 * component and solve it in place by banded elimination (symmetric
 * positive definite: no pivoting).  work holds 4 * ns * NC doubles. */
static void line_solve(double *base, size_t stride, int ns, double rho, double *work)
{
    double *D = work, *U1 = D + (size_t)ns * NC, *U2 = U1 + (size_t)ns * NC,
           *L1 = U2 + (size_t)ns * NC;
    /* form the lhs */
    for (int s = 0; s < ns; s++)
        for (int m = 0; m < NC; m++) {
            double a = rho * kappa[m] * h2inv;
            int end = s == 0 || s == ns - 1;
            D[s * NC + m] = 1.0 + rho * creact / 3.0 + a * (2.0 + (end ? 5.0 : 6.0) * sigma);
            U1[s * NC + m] = L1[s * NC + m] = a * (-1.0 - 4.0 * sigma);
            U2[s * NC + m] = a * sigma;
        }
    /* forward elimination */
    for (int s = 0; s < ns; s++) {
        double *r = base + (size_t)s * stride;
        for (int m = 0; m < NC; m++) {
            double piv = D[s * NC + m];
            if (s + 1 < ns) {
                double l = L1[(s + 1) * NC + m] / piv;
                D[(s + 1) * NC + m] -= l * U1[s * NC + m];
                U1[(s + 1) * NC + m] -= l * U2[s * NC + m];
                r[stride + (size_t)m] -= l * r[m];
            }
            if (s + 2 < ns) {
                double l = U2[s * NC + m] / piv; /* the lower band mirrors U2 */
                L1[(s + 2) * NC + m] -= l * U1[s * NC + m];
                D[(s + 2) * NC + m] -= l * U2[s * NC + m];
                r[2 * stride + (size_t)m] -= l * r[m];
            }
        }
    }
    /* back substitution */
    for (int s = ns - 1; s >= 0; s--) {
        double *r = base + (size_t)s * stride;
        for (int m = 0; m < NC; m++) {
            double x = r[m];
            if (s + 1 < ns)
                x -= U1[s * NC + m] * r[stride + (size_t)m];
            if (s + 2 < ns)
                x -= U2[s * NC + m] * r[2 * stride + (size_t)m];
            r[m] = x / D[s * NC + m];
        }
    }
}

static void setup(const nas_adi_grid_t *g)
{
    grid = g;
    N = g->n;
    h2inv = g->h2inv;
}

/* The 1-D eigenvalues kappa_m (mu_p + sigma h^2 mu_p^2) + c/3. */
static double eigenvalue(int m, double sn)
{
    double mu = 4.0 * h2inv * sn * sn;
    return kappa[m] * (mu + sigma * mu * mu / h2inv) + creact / 3.0;
}

int main(int argc, char **argv)
{
    static const nas_adi_solver_t sp = {
        .name = "sp",
        .usage = "sp CLASS [ITERS [N]]  (CLASS = S, W or A; 1 <= ITERS <= 100000; 6 <= N <= 64)",
        .class_n = {16, 32, NMAX},
        .class_iters = {140, 170, 200},
        .n_min = 6,
        .n_max = NMAX,
        .static_ld = NMAX, /* the static arrays, NMAX^3 points each */
        .static_u = u,
        .static_f = f,
        .static_rhs = rhs,
        .work_per_point = 4 * NC,
        .setup = setup,
        .eigenvalue = eigenvalue,
        .exact = exact,
        .op_plane = op_plane,
        .line_solve = line_solve,
    };
    return nas_adi_run(&sp, argc, argv);
}
