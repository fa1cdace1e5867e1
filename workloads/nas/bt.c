/*
 * bt.c -- a BT-like kernel: an alternating-direction implicit (ADI) solver
 * with 5x5 block-tridiagonal line solves on a 3-D grid, modelled on the
 * structure of the NAS Parallel Benchmarks' BT (written from the NPB
 * reports' description, no NPB code).
 *
 * WHAT IT MODELS
 *   Five coupled unknowns per grid point on the unit cube, N points per
 *   direction including the Dirichlet boundary.  The discrete operator is
 *       (A u)(p) = K (sum over the 3 directions of the second difference
 *                  -u(p-e) + 2 u(p) - u(p+e)) / h^2  +  c u(p)
 *   with K a full symmetric positive definite 5x5 matrix (K = Q diag(kappa)
 *   Q, Q a Householder reflection) and c > 0.  BT's approximate
 *   factorisation, a pseudo-time step with step rho, drives u to the
 *   steady state A u = f:
 *       rhs  = rho (f - A u)                                  (compute_rhs)
 *       (I + rho Ax)(I + rho Ay)(I + rho Az) du = rhs      (three sweeps)
 *       u   += du                                                    (add)
 *   where Ad = K (1-D second difference along d) + c/3 I.  Each factor is
 *   block tridiagonal along grid lines: diagonal blocks
 *   (1 + rho c/3) I + 2 rho K / h^2, off-diagonal blocks -rho K / h^2,
 *   solved by the block Thomas algorithm (the 5x5 "lhs" blocks are formed
 *   and factored per point, as BT does, though here they repeat from line
 *   to line).  rho cycles through a geometric set of values (the classical
 *   ADI parameters) so that every error mode is damped.
 *
 * PARALLEL STRUCTURE (5 parallel regions per iteration, all
 * schedule(static); the driver in adi.c runs them, this file supplies the
 * operator and the line solve)
 *   compute_rhs   over k planes
 *   x_sweep       over k planes (lines along i, contiguous)
 *   y_sweep       over k planes (lines along j, stride 5N)
 *   z_sweep       over j (lines along k, stride 5N^2): a different data
 *                 ownership -- the *phase*: each thread touches a slab of
 *                 j rows in every k plane, i.e. pages that the other four
 *                 regions give to other threads
 *   add           over k planes
 *
 * DATA
 *   u (solution), f (forcing), rhs (right-hand side / increment): three
 *   heap arrays of N^3 x 5 doubles, k outermost (u[k][j][i][m]), allocated
 *   with malloc and initialised SERIALLY by the master thread (the
 *   first-touch trap: every page on the master's node; adi.c).
 *
 * VERIFICATION
 *   Manufactured solution: u* is a smooth known field, f = A u* is computed
 *   with the same discrete operator, so u* is the exact discrete solution.
 *   The directional operators commute and share an orthonormal eigenbasis
 *   with known eigenvalues, hence the 2-norm of the error after ITERS
 *   steps is at most B * ||u0 - u*|| where B is the largest product of the
 *   per-step amplification factors over all modes (nas_adi_bound).  The
 *   run passes when ||u - u*|| <= B ||u0 - u*|| (1 + 1e-6) + 1e-10 ||u*||.
 *   With the class's default ITERS, B < 1e-10: u equals the exact solution
 *   to 1e-10 relative.
 *
 *   bt CLASS [ITERS [N]]   CLASS S (N=16), W (N=32), A (N=64)
 */
#include "adi.h"

#include <math.h>
#include <stddef.h>

#define NC NAS_ADI_NC /* unknowns per point */

static int N;           /* points per direction, boundary included */
static double h2inv;    /* 1 / h^2 */
static const nas_adi_grid_t *grid;
static double K[NC * NC];
static const double kappa[NC] = {1.0, 0.8, 1.3, 0.6, 1.6};
static const double creact = 2.0;

static size_t at(int k, int j, int i)
{
    return nas_adi_at(grid, k, j, i);
}

/* K = Q diag(kappa) Q with Q = I - 2 v v^T / (v^T v). */
static void make_k(void)
{
    static const double v[NC] = {1.0, -1.0, 2.0, 1.0, -2.0};
    double vv = 0.0, Q[NC * NC];
    for (int a = 0; a < NC; a++)
        vv += v[a] * v[a];
    for (int a = 0; a < NC; a++)
        for (int b = 0; b < NC; b++)
            Q[a * NC + b] = (a == b) - 2.0 * v[a] * v[b] / vv;
    for (int a = 0; a < NC; a++)
        for (int b = 0; b < NC; b++) {
            double s = 0.0;
            for (int l = 0; l < NC; l++)
                s += Q[a * NC + l] * kappa[l] * Q[l * NC + b];
            K[a * NC + b] = s;
        }
}

static double exact(int m, double x, double y, double z)
{
    const double pi = 3.14159265358979323846;
    return 1.0 + 0.1 * m + cos(pi * (x + 0.2 * m)) * sin(pi * (0.7 * y + 0.1)) * exp(0.5 * z) +
           0.3 * x * y * z;
}

/* out = A u on interior plane k (f == NULL), or out = rho (f - A u). */
static void op_plane(double *out, const double *u, const double *f, double rho, int k)
{
    size_t sj = grid->sj, sk = grid->sk;
    for (int j = 1; j < N - 1; j++)
        for (int i = 1; i < N - 1; i++) {
            size_t p = at(k, j, i);
            double lap[NC];
            for (int m = 0; m < NC; m++) {
                const double *c = u + p + m;
                lap[m] = (6.0 * c[0] - c[-NC] - c[NC] - c[-(long)sj] - c[sj] - c[-(long)sk] -
                          c[sk]) * h2inv;
            }
            for (int m = 0; m < NC; m++) {
                double s = creact * u[p + m];
                for (int l = 0; l < NC; l++)
                    s += K[m * NC + l] * lap[l];
                out[p + m] = f ? rho * (f[p + m] - s) : s;
            }
        }
}

/* Solve the 5x5 system M X = R for 6 right-hand sides in place (R is
 * 5 rows of 6 columns); M is overwritten.  M is symmetric positive
 * definite here (a Schur complement), so no pivoting. */
static void solve5(double *M, double *R)
{
    for (int c = 0; c < NC; c++) {
        double inv = 1.0 / M[c * NC + c];
        for (int r = c + 1; r < NC; r++) {
            double l = M[r * NC + c] * inv;
            if (l == 0.0)
                continue;
            for (int q = c + 1; q < NC; q++)
                M[r * NC + q] -= l * M[c * NC + q];
            for (int q = 0; q < NC + 1; q++)
                R[r * (NC + 1) + q] -= l * R[c * (NC + 1) + q];
        }
    }
    for (int c = NC - 1; c >= 0; c--) {
        double inv = 1.0 / M[c * NC + c];
        for (int q = 0; q < NC + 1; q++) {
            double s = R[c * (NC + 1) + q];
            for (int r = c + 1; r < NC; r++)
                s -= M[c * NC + r] * R[r * (NC + 1) + q];
            R[c * (NC + 1) + q] = s * inv;
        }
    }
}

/* Block Thomas along one line of ns unknown points starting at base
 * (already offset to the first interior point), points `stride` doubles
 * apart; the line's right-hand side is replaced by the solution.  work
 * holds ns * 30 doubles (the eliminated upper blocks and right sides). */
static void line_solve(double *base, size_t stride, int ns, double rho, double *work)
{
    double beta = rho * h2inv, dg = 1.0 + rho * creact / 3.0;
    for (int s = 0; s < ns; s++) {
        double *d = base + (size_t)s * stride;
        double *R = work + (size_t)s * NC * (NC + 1); /* [cp | dp] */
        double M[NC * NC];
        for (int a = 0; a < NC; a++) {
            for (int b = 0; b < NC; b++) {
                M[a * NC + b] = 2.0 * beta * K[a * NC + b] + (a == b ? dg : 0.0);
                R[a * (NC + 1) + b] = -beta * K[a * NC + b]; /* upper block */
            }
            R[a * (NC + 1) + NC] = d[a];
        }
        if (s > 0) {
            /* M -= L cp_prev, v -= L dp_prev with L = -beta K */
            const double *P = R - NC * (NC + 1);
            for (int a = 0; a < NC; a++)
                for (int q = 0; q < NC + 1; q++) {
                    double t = 0.0;
                    for (int l = 0; l < NC; l++)
                        t += K[a * NC + l] * P[l * (NC + 1) + q];
                    if (q < NC)
                        M[a * NC + q] += beta * t;
                    else
                        R[a * (NC + 1) + NC] += beta * t;
                }
        }
        solve5(M, R);
    }
    /* back substitution: w_s = dp_s - cp_s w_{s+1} */
    for (int s = ns - 1; s >= 0; s--) {
        double *d = base + (size_t)s * stride;
        const double *R = work + (size_t)s * NC * (NC + 1);
        for (int a = 0; a < NC; a++) {
            double w = R[a * (NC + 1) + NC];
            if (s < ns - 1)
                for (int b = 0; b < NC; b++)
                    w -= R[a * (NC + 1) + b] * d[stride + (size_t)b];
            d[a] = w;
        }
    }
}

static void setup(const nas_adi_grid_t *g)
{
    grid = g;
    N = g->n;
    h2inv = g->h2inv;
    make_k();
}

/* The 1-D eigenvalues kappa_m mu_p + c/3 (K's eigenvalues are kappa). */
static double eigenvalue(int m, double sn)
{
    return kappa[m] * 4.0 * h2inv * sn * sn + creact / 3.0;
}

int main(int argc, char **argv)
{
    static const nas_adi_solver_t bt = {
        .name = "bt",
        .usage = "bt CLASS [ITERS [N]]  (CLASS = S, W or A; 1 <= ITERS <= 100000; 5 <= N <= 200)",
        .class_n = {16, 32, 64},
        .class_iters = {130, 150, 180},
        .n_min = 5,
        .n_max = 200,
        .static_ld = 0, /* heap arrays of N^3 points */
        .work_per_point = NC * (NC + 1),
        .setup = setup,
        .eigenvalue = eigenvalue,
        .exact = exact,
        .op_plane = op_plane,
        .line_solve = line_solve,
    };
    return nas_adi_run(&bt, argc, argv);
}
