/*
 * adi.h -- the scaffolding the two ADI solvers (bt.c, sp.c) share: the
 * driver that parses the arguments, sizes the grid, derives the ADI
 * parameter cycle from the 1-D eigenvalues, initialises u, f and rhs
 * serially (the first-touch trap), runs the iterations (compute_rhs, the
 * x, y and z sweeps, the update) and checks the error against the
 * manufactured solution and the convergence bound.  A solver supplies what
 * makes it BT or SP: its operator on one plane, its line solve, its 1-D
 * eigenvalues, its exact solution, its classes, and where its arrays live
 * (heap arrays of the problem's size, or static arrays sized for the
 * largest class).
 *
 * The parallel structure (each its own parallel region, schedule(static)):
 *   compute_rhs   over k planes
 *   x_sweep       over k planes (lines along i, contiguous)
 *   y_sweep       over k planes (lines along j, stride sj)
 *   z_sweep       over j (lines along k, stride sk): another data
 *                 ownership -- the *phase*: each thread touches a slab of
 *                 j rows in every k plane, pages that the other four
 *                 regions give to other threads
 *   add           over k planes: u += rhs
 *
 * The convergence bound: the ADI solvers iterate e <- (I - rho_t P_t^-1 A) e
 * with A = A1 + A2 + A3 and P_t = (I + rho_t A1)(I + rho_t A2)(I + rho_t A3),
 * where the three direction operators are symmetric, commute and share one
 * orthonormal eigenbasis.  On the eigenvector with direction eigenvalues
 * (a, b, c) one step multiplies the error by
 *
 *     g = 1 - rho (a + b + c) / ((1 + rho a)(1 + rho b)(1 + rho c))
 *
 * (0 <= g < 1 when a, b, c > 0), so after `iters` steps with parameters
 * rho[t mod ncycle] the 2-norm of the error has shrunk by at most the
 * largest product of g over all eigenvectors.  A run passes when
 * ||u - u*|| <= B ||u0 - u*|| (1 + 1e-6) + 1e-10 ||u*||.
 *
 * Written for this project from the NAS Parallel Benchmarks' public
 * descriptions; no NPB code.
 */
#ifndef NAS_ADI_H
#define NAS_ADI_H

#include <stddef.h>

#include "nas_common.h"

#define NAS_ADI_NC 5 /* unknowns per grid point */

/* The grid of one run. */
typedef struct {
    int n;         /* points per direction, boundary included */
    int ns;        /* unknown (interior) points per line: n - 2 */
    size_t ld;     /* the arrays' points per direction: n, or the static size */
    size_t sj, sk; /* strides of j and k, in doubles */
    double h;      /* 1 / (n - 1) */
    double h2inv;  /* 1 / h^2 */
} nas_adi_grid_t;

/* Offset of component 0 of point (k, j, i): u[k][j][i][m], k outermost. */
static inline size_t nas_adi_at(const nas_adi_grid_t *g, int k, int j, int i)
{
    return (((size_t)k * g->ld + (size_t)j) * g->ld + (size_t)i) * NAS_ADI_NC;
}

/* What makes a solver BT or SP. */
typedef struct {
    const char *name;  /* the output lines' prefix: "bt" */
    const char *usage; /* the usage line (after "usage: ") */
    int class_n[NAS_NCLASSES];
    long class_iters[NAS_NCLASSES];
    long n_min, n_max; /* the range of an explicit N */
    /* Static arrays of static_ld^3 points (u, f, rhs), zeroed whole by the
     * master thread; static_ld 0: heap arrays of n^3 points (malloc). */
    size_t static_ld;
    double *static_u, *static_f, *static_rhs;
    /* doubles of line-solve work space per unknown point of a line */
    size_t work_per_point;
    /* Called once the grid is known, before anything else uses it. */
    void (*setup)(const nas_adi_grid_t *g);
    /* The 1-D eigenvalue of component m's direction operator (plus c/3)
     * for the mode with sn = sin((p + 1) pi h / 2), p = 0..ns-1. */
    double (*eigenvalue)(int m, double sn);
    /* The manufactured solution u*, component m at (x, y, z). */
    double (*exact)(int m, double x, double y, double z);
    /* out = A v on interior plane k (g == NULL), or out = rho (g - A v). */
    void (*op_plane)(double *out, const double *v, const double *g, double rho, int k);
    /* Solve (I + rho Ad) w = r in place along one line of ns unknown points
     * starting at base, points `stride` doubles apart, all components. */
    void (*line_solve)(double *base, size_t stride, int ns, double rho, double *work);
} nas_adi_solver_t;

/* The whole program: returns main's exit status (0 verified, 1 failed);
 * bad arguments print the usage line and exit 2. */
int nas_adi_run(const nas_adi_solver_t *s, int argc, char **argv);

/* The largest product of the per-step amplification factors over all
 * eigenvectors.  The eigenvectors are indexed by a component m
 * (0 <= m < ncomp; the directions share it) and three 1-D indices p, q, r
 * in [0, n): lam[m * n + p] is the 1-D eigenvalue.  Parallel over m, p. */
double nas_adi_bound(const double *lam, int ncomp, int n, const double *rho,
                     int ncycle, long iters);
/* The parameter cycle: ncycle values geometrically spaced so that
 * rho * lambda = 1/2 for lambda geometrically spaced in [lo, hi]. */
void nas_adi_params(double lo, double hi, int ncycle, double *rho);

#endif
