/*
 * laplace_point.h -- the Laplace problem every Laplace program here solves
 * (workloads/laplace.c, its hand-written MPI version workloads/mpi/, and
 * cluster mode's workloads/cluster/): the initial value of each point and
 * the one expression that computes a point, in one place, so that every
 * program and every variant prints the same checksum bit for bit.
 */
#ifndef WL_LAPLACE_POINT_H
#define WL_LAPLACE_POINT_H

/* Initial value of point (i, j) of an n x n grid; boundary points keep it.
 * Top edge 1, bottom edge 0, the sides fall from 1 to 0 (left linearly,
 * right as a square), the interior starts at 0. */
static inline double wl_laplace_initial(int n, int i, int j)
{
    if (i == 0)
        return 1.0;
    if (i == n - 1)
        return 0.0;
    double s = 1.0 - (double)i / (double)(n - 1);
    if (j == 0)
        return s;
    if (j == n - 1)
        return s * s;
    return 0.0;
}

/* One interior row from the rows above, at and below it: the only place a
 * point is computed. */
static inline void wl_laplace_row(double *restrict dst, const double *up, const double *mid,
                                  const double *down, int n)
{
    for (int j = 1; j < n - 1; j++)
        dst[j] = 0.25 * ((up[j] + down[j]) + (mid[j - 1] + mid[j + 1]));
}

#endif
