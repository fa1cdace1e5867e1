/*
 * swim_kernel.h -- the arithmetic of swim's three stencil loops, one row
 * at a time, shared by workloads/swim.c (OpenMP, static arrays) and
 * workloads/cluster/swim_dsm.c (cluster mode, arrays from
 * ph_cluster_alloc): one expression per point in one order, so both
 * programs compute the same doubles, bit for bit, whatever the storage.
 *
 * The grid, the staggering and the scheme are described in swim.c.  An
 * array is a row-major block of doubles with leading dimension `ld` (>= n);
 * row i, column j is a[i * ld + j]; every neighbour index wraps around.
 * The coefficients a loop needs are computed from the model's constants by
 * the swim_coef_* helpers (what the Fortran original computes in each
 * subroutine before its loop).
 */
#ifndef WL_SWIM_KERNEL_H
#define WL_SWIM_KERNEL_H

#include <math.h>
#include <stddef.h>

/* The model's constants (the Fortran original's COMMON /CONS/). */
typedef struct swim_cons {
    int n;
    double dt, dx, dy, alpha;
} swim_cons;

/* The 13 arrays. */
typedef struct swim_arrays {
    double *u, *v, *p, *unew, *vnew, *pnew, *uold, *vold, *pold;
    double *cu, *cv, *z, *h;
    size_t ld;
} swim_arrays;

/* calc1's coefficients, calc2's, calc3's (the leapfrog step tdt: dt for
 * the first step, 2 dt after). */
typedef struct swim_c1 {
    double fsdx, fsdy;
} swim_c1;
typedef struct swim_c2 {
    double tdts8, tdtsdx, tdtsdy;
} swim_c2;
typedef struct swim_c3 {
    double alpha;
    int first;
} swim_c3;

static inline swim_c1 swim_coef1(const swim_cons *m)
{
    swim_c1 c = {4.0 / m->dx, 4.0 / m->dy};
    return c;
}

static inline swim_c2 swim_coef2(const swim_cons *m, double tdt)
{
    swim_c2 c = {tdt / 8.0, tdt / m->dx, tdt / m->dy};
    return c;
}

/* The first step has no filter: old <- current. */
static inline swim_c3 swim_coef3(const swim_cons *m, int first)
{
    swim_c3 c = {first ? 0.0 : m->alpha, first};
    return c;
}

#define SWIM_AT(a, i, j) ((a)[(size_t)(i) * s->ld + (size_t)(j)])

static inline int swim_down(int i, int n)
{
    return i == 0 ? n - 1 : i - 1;
}

static inline int swim_up(int i, int n)
{
    return i == n - 1 ? 0 : i + 1;
}

/* calc1, row i: mass fluxes cu, cv, potential vorticity z, height h. */
static inline void swim_calc1_row(const swim_arrays *s, int n, int i, swim_c1 c)
{
    int im = swim_down(i, n), ip = swim_up(i, n);
    const double *u = s->u, *v = s->v, *p = s->p;
    double *cu = s->cu, *cv = s->cv, *z = s->z, *h = s->h;
    for (int j = 0; j < n; j++) {
        int jm = swim_down(j, n), jp = swim_up(j, n);
        SWIM_AT(cu, i, j) = 0.5 * (SWIM_AT(p, i, j) + SWIM_AT(p, im, j)) * SWIM_AT(u, i, j);
        SWIM_AT(cv, i, j) = 0.5 * (SWIM_AT(p, i, j) + SWIM_AT(p, i, jm)) * SWIM_AT(v, i, j);
        SWIM_AT(z, i, j) = (c.fsdx * (SWIM_AT(v, i, j) - SWIM_AT(v, im, j)) -
                            c.fsdy * (SWIM_AT(u, i, j) - SWIM_AT(u, i, jm))) /
                           (SWIM_AT(p, im, jm) + SWIM_AT(p, i, jm) + SWIM_AT(p, i, j) +
                            SWIM_AT(p, im, j));
        SWIM_AT(h, i, j) = SWIM_AT(p, i, j) +
                           0.25 * (SWIM_AT(u, ip, j) * SWIM_AT(u, ip, j) +
                                   SWIM_AT(u, i, j) * SWIM_AT(u, i, j) +
                                   SWIM_AT(v, i, jp) * SWIM_AT(v, i, jp) +
                                   SWIM_AT(v, i, j) * SWIM_AT(v, i, j));
    }
}

/* calc2, row i: unew, vnew, pnew. */
static inline void swim_calc2_row(const swim_arrays *s, int n, int i, swim_c2 c)
{
    int im = swim_down(i, n), ip = swim_up(i, n);
    const double *z = s->z, *cu = s->cu, *cv = s->cv, *h = s->h;
    const double *uold = s->uold, *vold = s->vold, *pold = s->pold;
    double *unew = s->unew, *vnew = s->vnew, *pnew = s->pnew;
    for (int j = 0; j < n; j++) {
        int jm = swim_down(j, n), jp = swim_up(j, n);
        SWIM_AT(unew, i, j) = SWIM_AT(uold, i, j) +
                              c.tdts8 * (SWIM_AT(z, i, jp) + SWIM_AT(z, i, j)) *
                                  (SWIM_AT(cv, i, jp) + SWIM_AT(cv, im, jp) +
                                   SWIM_AT(cv, im, j) + SWIM_AT(cv, i, j)) -
                              c.tdtsdx * (SWIM_AT(h, i, j) - SWIM_AT(h, im, j));
        SWIM_AT(vnew, i, j) = SWIM_AT(vold, i, j) -
                              c.tdts8 * (SWIM_AT(z, ip, j) + SWIM_AT(z, i, j)) *
                                  (SWIM_AT(cu, ip, j) + SWIM_AT(cu, i, j) +
                                   SWIM_AT(cu, i, jm) + SWIM_AT(cu, ip, jm)) -
                              c.tdtsdy * (SWIM_AT(h, i, j) - SWIM_AT(h, i, jm));
        SWIM_AT(pnew, i, j) = SWIM_AT(pold, i, j) -
                              c.tdtsdx * (SWIM_AT(cu, ip, j) - SWIM_AT(cu, i, j)) -
                              c.tdtsdy * (SWIM_AT(cv, i, jp) - SWIM_AT(cv, i, j));
    }
}

/* calc3, row i: the Robert time filter into uold, vold, pold, then the
 * new values into u, v, p. */
static inline void swim_calc3_row(const swim_arrays *s, int n, int i, swim_c3 c)
{
    double *u = s->u, *v = s->v, *p = s->p;
    double *uold = s->uold, *vold = s->vold, *pold = s->pold;
    const double *unew = s->unew, *vnew = s->vnew, *pnew = s->pnew;
    double a = c.alpha;
    for (int j = 0; j < n; j++) {
        if (c.first) {
            SWIM_AT(uold, i, j) = SWIM_AT(u, i, j);
            SWIM_AT(vold, i, j) = SWIM_AT(v, i, j);
            SWIM_AT(pold, i, j) = SWIM_AT(p, i, j);
        } else {
            SWIM_AT(uold, i, j) = SWIM_AT(u, i, j) +
                                  a * (SWIM_AT(unew, i, j) - 2.0 * SWIM_AT(u, i, j) +
                                       SWIM_AT(uold, i, j));
            SWIM_AT(vold, i, j) = SWIM_AT(v, i, j) +
                                  a * (SWIM_AT(vnew, i, j) - 2.0 * SWIM_AT(v, i, j) +
                                       SWIM_AT(vold, i, j));
            SWIM_AT(pold, i, j) = SWIM_AT(p, i, j) +
                                  a * (SWIM_AT(pnew, i, j) - 2.0 * SWIM_AT(p, i, j) +
                                       SWIM_AT(pold, i, j));
        }
        SWIM_AT(u, i, j) = SWIM_AT(unew, i, j);
        SWIM_AT(v, i, j) = SWIM_AT(vnew, i, j);
        SWIM_AT(p, i, j) = SWIM_AT(pnew, i, j);
    }
}

#define SWIM_P_MEAN 50000.0

/* Stream function at the south-west corner of cell (i, j). */
static inline double swim_stream(const swim_cons *m, int i, int j)
{
    const double amplitude = 1.0e6;
    double di = 6.283185307179586 / (double)m->n;
    return amplitude * sin(((double)i - 0.5) * di) * sin(((double)j - 0.5) * di);
}

/* The initial state of row i: u, v from the stream function, p a
 * periodic bump on P_MEAN, the old values equal to them. */
static inline void swim_init_row(const swim_arrays *s, const swim_cons *m, int i)
{
    int n = m->n;
    double di = 6.283185307179586 / (double)n;
    double el = (double)n * m->dx;
    double pi = 3.141592653589793;
    double pcf = pi * pi * 1.0e12 / (el * el);
    for (int j = 0; j < n; j++) {
        SWIM_AT(s->u, i, j) =
            -(swim_stream(m, i, swim_up(j, n)) - swim_stream(m, i, j)) / m->dy;
        SWIM_AT(s->v, i, j) =
            (swim_stream(m, swim_up(i, n), j) - swim_stream(m, i, j)) / m->dx;
        SWIM_AT(s->p, i, j) =
            pcf * (cos(2.0 * (double)i * di) + cos(2.0 * (double)j * di)) + SWIM_P_MEAN;
        SWIM_AT(s->uold, i, j) = SWIM_AT(s->u, i, j);
        SWIM_AT(s->vold, i, j) = SWIM_AT(s->v, i, j);
        SWIM_AT(s->pold, i, j) = SWIM_AT(s->p, i, j);
    }
}

#undef SWIM_AT

#endif
