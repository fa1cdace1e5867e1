/*
 * ft.c -- an FT-like kernel: a 3-D complex FFT with transposes and a
 * spectral time evolution, modelled on the structure of the NAS Parallel
 * Benchmarks' FT (written from the NPB reports' description, no NPB code).
 *
 * WHAT IT MODELS
 *   u0 is an NX x NY x NZ complex array of random values (layout
 *   [z][y][x], x fastest).  The forward 3-D FFT (unnormalised,
 *   exp(-2 pi i k.x / n)) gives U = FFT(u0), kept in the transposed layout
 *   [y][x][z].  Then, for t = 1 .. NITER, the spectrum is evolved by
 *   multiplying each mode by exp(-4 alpha pi^2 |kbar|^2) (kbar the folded
 *   frequencies, alpha = 1e-6), the result transformed back (normalised
 *   inverse FFT) and a checksum of 1024 scattered elements printed.
 *
 *   One 3-D FFT = 1-D radix-2 FFTs along x and y inside each z plane, a
 *   global transpose [z][y][x] -> [y][x][z], then 1-D FFTs along z
 *   (contiguous after the transpose); the inverse runs the same steps
 *   backwards.
 *
 * PARALLEL STRUCTURE (all omp for schedule(static))
 *   fft_xy      over z planes of [z][y][x] (x lines in place; y lines
 *               gathered 16 at a time into a thread buffer)
 *   transpose   over y slabs of [y][x][z]: each thread writes its slab and
 *               reads a piece of EVERY z plane -- the all-to-all data
 *               movement, a phase whose reads cross every other thread's
 *               data; the z FFTs follow in the same region
 *   evolve      over y slabs
 *   inverse     z FFTs over y slabs, then the transpose back over z
 *               planes (reading every y slab: all-to-all again), then the
 *               x and y FFTs over z planes
 *
 * DATA
 *   u0, w (xyz-layout work), u1, u2 (spectral layout) complex arrays and
 *   the evolution factors, allocated with malloc and initialised IN
 *   PARALLEL (random values from a counter-based generator, so the data
 *   do not depend on the thread count).
 *
 * VERIFICATION (all relative, tolerance 1e-10)
 *   - Parseval: sum |U|^2 = N sum |u0|^2 for the forward transform, and
 *     sum |u_t|^2 = sum |U_t|^2 / N at every step;
 *   - round trip: inverse(forward(u0)) = u0 (max error / max |u0|);
 *   - direct DFT: U at 4 random frequencies equals the O(N) sum
 *     sum_x u0(x) exp(-2 pi i k.x / n), and at every step the DFT of the
 *     evolved u_t at those frequencies equals U(k) exp(-4 alpha pi^2
 *     |kbar|^2 t) computed from the formula (this checks the frequency
 *     ordering, the transposes and the evolution, which Parseval cannot);
 *   - the energy sum |u_t|^2 does not increase from step to step.
 *
 *   ft CLASS [NITER [NX NY NZ]]   CLASS S (64x64x64), W (128x128x32),
 *                                 A (256x256x128), 6 steps each; sizes
 *                                 powers of two, 4 .. 1024, product <= 2^27
 */
#include "nas_common.h"

#include <complex.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef double complex cplx;

#define BLK 16  /* lines per gather in the strided FFTs */
#define NSPOT 4 /* direct-DFT spot frequencies */

static const int class_dims[NAS_NCLASSES][3] = {{64, 64, 64}, {128, 128, 32}, {256, 256, 128}};
static const long class_niter[NAS_NCLASSES] = {6, 6, 6};
static const double ALPHA = 1e-6;
static const double TOL = 1e-10;
static const double PI = 3.14159265358979323846;

static int nx, ny, nz;
static cplx *tw[3]; /* per dimension: exp(-2 pi i k / n), k < n/2 */

static void make_twiddles(cplx **t, int n)
{
    *t = nas_malloc((size_t)(n / 2 > 0 ? n / 2 : 1) * sizeof(cplx));
    for (int k = 0; k < n / 2; k++)
        (*t)[k] = cexp(-2.0 * PI * I * (double)k / (double)n);
}

/* In-place radix-2 FFT of a[0 .. n-1] (unit stride); sign -1 forward
 * (twiddles as stored), +1 inverse (conjugated); unnormalised. */
static void fft1(cplx *a, int n, const cplx *t, int inverse)
{
    for (int i = 1, j = 0; i < n; i++) { /* bit reversal */
        int bit = n >> 1;
        for (; j & bit; bit >>= 1)
            j ^= bit;
        j ^= bit;
        if (i < j) {
            cplx s = a[i];
            a[i] = a[j];
            a[j] = s;
        }
    }
    for (int len = 2; len <= n; len <<= 1) {
        int half = len >> 1, step = n / len;
        for (int b = 0; b < n; b += len)
            for (int k = 0; k < half; k++) {
                cplx w = t[k * step];
                if (inverse)
                    w = conj(w);
                cplx x = a[b + k], y = a[b + k + half] * w;
                a[b + k] = x + y;
                a[b + k + half] = x - y;
            }
    }
}

/* FFTs along x and y of plane z of a ([z][y][x]); buf holds BLK * ny. */
static void fft_xy_plane(cplx *a, int z, int inverse, cplx *buf)
{
    cplx *p = a + (size_t)z * (size_t)ny * (size_t)nx;
    for (int y = 0; y < ny; y++)
        fft1(p + (size_t)y * nx, nx, tw[0], inverse);
    for (int x0 = 0; x0 < nx; x0 += BLK) {
        int nb = nx - x0 < BLK ? nx - x0 : BLK;
        for (int y = 0; y < ny; y++)
            for (int b = 0; b < nb; b++)
                buf[(size_t)b * ny + y] = p[(size_t)y * nx + x0 + b];
        for (int b = 0; b < nb; b++)
            fft1(buf + (size_t)b * ny, ny, tw[1], inverse);
        for (int y = 0; y < ny; y++)
            for (int b = 0; b < nb; b++)
                p[(size_t)y * nx + x0 + b] = buf[(size_t)b * ny + y];
    }
}

/* Forward 3-D FFT: src ([z][y][x], unchanged) -> dst ([y][x][z]) through
 * the work array w ([z][y][x]). */
static void fft3_forward(const cplx *src, cplx *w, cplx *dst, cplx **bufs)
{
    size_t plane = (size_t)nx * ny;
#pragma omp parallel
    { /* fft_xy over z planes */
        cplx *buf = bufs[omp_get_thread_num()];
#pragma omp for schedule(static)
        for (int z = 0; z < nz; z++) {
            memcpy(w + (size_t)z * plane, src + (size_t)z * plane, plane * sizeof(cplx));
            fft_xy_plane(w, z, 0, buf);
        }
    }
#pragma omp parallel
    { /* transpose over y slabs (reads every z plane), then z FFTs */
#pragma omp for schedule(static)
        for (int y = 0; y < ny; y++) {
            for (int x0 = 0; x0 < nx; x0 += BLK) {
                int nb = nx - x0 < BLK ? nx - x0 : BLK;
                for (int z = 0; z < nz; z++)
                    for (int b = 0; b < nb; b++)
                        dst[((size_t)y * nx + (size_t)(x0 + b)) * nz + (size_t)z] =
                            w[(size_t)z * plane + (size_t)y * nx + (size_t)(x0 + b)];
            }
            for (int x = 0; x < nx; x++)
                fft1(dst + ((size_t)y * nx + (size_t)x) * nz, nz, tw[2], 0);
        }
    }
}

/* Normalised inverse 3-D FFT: src ([y][x][z], unchanged) -> dst
 * ([z][y][x]) through tmp ([y][x][z]). */
static void fft3_inverse(const cplx *src, cplx *tmp, cplx *dst, cplx **bufs)
{
    size_t plane = (size_t)nx * ny;
    double scale = 1.0 / ((double)nx * ny * nz);
#pragma omp parallel
    { /* z FFTs over y slabs */
#pragma omp for schedule(static)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++) {
                size_t o = ((size_t)y * nx + (size_t)x) * nz;
                memcpy(tmp + o, src + o, (size_t)nz * sizeof(cplx));
                fft1(tmp + o, nz, tw[2], 1);
            }
    }
#pragma omp parallel
    { /* transpose back over z planes (reads every y slab), x and y FFTs */
        cplx *buf = bufs[omp_get_thread_num()];
#pragma omp for schedule(static)
        for (int z = 0; z < nz; z++) {
            for (int y = 0; y < ny; y++)
                for (int x = 0; x < nx; x++)
                    dst[(size_t)z * plane + (size_t)y * nx + (size_t)x] =
                        tmp[((size_t)y * nx + (size_t)x) * nz + (size_t)z] * scale;
            fft_xy_plane(dst, z, 1, buf);
        }
    }
}

static int fold(int k, int n)
{
    return k < n / 2 ? k : k - n;
}

static double kbar2(int kx, int ky, int kz)
{
    double a = fold(kx, nx), b = fold(ky, ny), c = fold(kz, nz);
    return a * a + b * b + c * c;
}

/* Deterministic parallel sum of |a|^2 over n elements. */
static double energy(const cplx *a, size_t n, double *part)
{
    int nt = omp_get_max_threads();
    for (int t = 0; t < nt; t++)
        part[t * NAS_PAD] = 0.0;
#pragma omp parallel
    {
        double s = 0.0;
#pragma omp for schedule(static)
        for (size_t q = 0; q < n; q++)
            s += creal(a[q]) * creal(a[q]) + cimag(a[q]) * cimag(a[q]);
        part[omp_get_thread_num() * NAS_PAD] = s;
    }
    return nas_sum_partials(part, nt);
}

/* Direct DFT of a ([z][y][x]) at frequencies k[s][3], s < NSPOT:
 * out[s] = sum a(x) exp(-2 pi i k.x / n).  Deterministic. */
static void direct_dft(const cplx *a, int k[NSPOT][3], cplx *out, double *part)
{
    int nt = omp_get_max_threads();
    for (int t = 0; t < nt * NAS_PAD; t++)
        part[t] = 0.0;
    cplx *ex = nas_malloc((size_t)NSPOT * (size_t)(nx + ny + nz) * sizeof(cplx));
    for (int s = 0; s < NSPOT; s++) {
        cplx *e = ex + (size_t)s * (size_t)(nx + ny + nz);
        for (int x = 0; x < nx; x++)
            e[x] = cexp(-2.0 * PI * I * (double)((long)k[s][0] * x % nx) / nx);
        for (int y = 0; y < ny; y++)
            e[nx + y] = cexp(-2.0 * PI * I * (double)((long)k[s][1] * y % ny) / ny);
        for (int z = 0; z < nz; z++)
            e[nx + ny + z] = cexp(-2.0 * PI * I * (double)((long)k[s][2] * z % nz) / nz);
    }
#pragma omp parallel
    {
        cplx acc[NSPOT] = {0};
#pragma omp for schedule(static)
        for (int z = 0; z < nz; z++)
            for (int y = 0; y < ny; y++) {
                const cplx *row = a + ((size_t)z * ny + (size_t)y) * nx;
                for (int s = 0; s < NSPOT; s++) {
                    const cplx *e = ex + (size_t)s * (size_t)(nx + ny + nz);
                    cplx r = 0.0;
                    for (int x = 0; x < nx; x++)
                        r += row[x] * e[x];
                    acc[s] += r * e[nx + y] * e[nx + ny + z];
                }
            }
        double *mine = part + omp_get_thread_num() * NAS_PAD;
        for (int s = 0; s < NSPOT; s++) {
            mine[2 * s] = creal(acc[s]);
            mine[2 * s + 1] = cimag(acc[s]);
        }
    }
    for (int s = 0; s < NSPOT; s++)
        out[s] = nas_sum_partials(part + 2 * s, nt) + I * nas_sum_partials(part + 2 * s + 1, nt);
    free(ex);
}

static int ilog2(long v)
{
    int l = 0;
    while ((1L << l) < v)
        l++;
    return (1L << l) == v ? l : -1;
}

int main(int argc, char **argv)
{
    const char *usage = "ft CLASS [NITER [NX NY NZ]]  (CLASS = S, W or A; 1 <= NITER <= 1000; "
                        "NX, NY, NZ powers of two in [4, 1024], NX*NY*NZ <= 2^27)";
    if (argc < 2 || argc > 6 || argc == 4 || argc == 5)
        nas_usage(usage);
    int cls = nas_parse_class(argv[1]);
    if (cls < 0)
        nas_usage(usage);
    long niter = class_niter[cls], d[3] = {class_dims[cls][0], class_dims[cls][1], class_dims[cls][2]};
    if (argc > 2 && nas_parse_long(argv[2], 1, 1000, &niter))
        nas_usage(usage);
    if (argc == 6)
        for (int q = 0; q < 3; q++)
            if (nas_parse_long(argv[3 + q], 4, 1024, &d[q]) || ilog2(d[q]) < 0)
                nas_usage(usage);
    if (d[0] * d[1] * d[2] > (1L << 27))
        nas_usage(usage);
    nx = (int)d[0];
    ny = (int)d[1];
    nz = (int)d[2];
    size_t n = (size_t)nx * ny * nz;

    char size[64];
    snprintf(size, sizeof size, "%dx%dx%d complex grid", nx, ny, nz);
    nas_header("ft", cls, size, niter);

    make_twiddles(&tw[0], nx);
    make_twiddles(&tw[1], ny);
    make_twiddles(&tw[2], nz);
    int nthreads = omp_get_max_threads();
    double *part = nas_malloc((size_t)nthreads * NAS_PAD * sizeof *part);
    cplx **bufs = nas_malloc((size_t)nthreads * sizeof *bufs);
    cplx *u0 = nas_malloc(n * sizeof *u0), *w = nas_malloc(n * sizeof *w);
    cplx *u1 = nas_malloc(n * sizeof *u1), *u2 = nas_malloc(n * sizeof *u2);
    double *ex = nas_malloc(n * sizeof *ex);

    /* Parallel initialisation: every array first touched by the thread
     * owning its planes (xyz arrays) or slabs (spectral arrays). */
    for (int t = 0; t < nthreads; t++) /* gather buffers, one per thread */
        bufs[t] = nas_malloc((size_t)BLK * (size_t)ny * sizeof(cplx));
#pragma omp parallel
    {
#pragma omp for schedule(static)
        for (int z = 0; z < nz; z++)
            for (size_t q = (size_t)z * nx * ny; q < (size_t)(z + 1) * nx * ny; q++) {
                u0[q] = nas_uniform(1, 2 * q) + I * nas_uniform(1, 2 * q + 1);
                w[q] = 0.0;
            }
#pragma omp for schedule(static)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++)
                for (int z = 0; z < nz; z++) {
                    size_t q = ((size_t)y * nx + (size_t)x) * nz + (size_t)z;
                    ex[q] = exp(-4.0 * ALPHA * PI * PI * kbar2(x, y, z));
                    u1[q] = u2[q] = 0.0;
                }
    }
    /* spot frequencies */
    int spot[NSPOT][3];
    nas_rng_t rng;
    nas_rng_seed(&rng, 27182818);
    for (int s = 0; s < NSPOT; s++) {
        spot[s][0] = (int)nas_rng_below(&rng, (uint64_t)nx);
        spot[s][1] = (int)nas_rng_below(&rng, (uint64_t)ny);
        spot[s][2] = (int)nas_rng_below(&rng, (uint64_t)nz);
    }

    int ok = 1;
    int fault = nas_fault("ft", "u(N/3) += 1 after the inverse transform of step 2");
    double t0 = nas_wtime(), tcheck = 0.0;

    /* forward transform */
    fft3_forward(u0, w, u1, bufs);
    double tc = nas_wtime();
    double e0 = energy(u0, n, part), e1 = energy(u1, n, part);
    double maxu0 = 0.0;
    for (size_t q = 0; q < n; q++)
        maxu0 = cabs(u0[q]) > maxu0 ? cabs(u0[q]) : maxu0;
    ok &= nas_check_le("ft", "Parseval |sum|U|^2/N - sum|u0|^2| / sum|u0|^2",
                       fabs(e1 / (double)n - e0) / e0, TOL);
    cplx spotU[NSPOT], direct[NSPOT];
    direct_dft(u0, spot, direct, part);
    double spoterr = 0.0;
    for (int s = 0; s < NSPOT; s++) {
        spotU[s] = u1[((size_t)spot[s][1] * nx + (size_t)spot[s][0]) * nz + (size_t)spot[s][2]];
        double e = cabs(spotU[s] - direct[s]);
        spoterr = e > spoterr ? e : spoterr;
    }
    ok &= nas_check_le("ft", "max |FFT - direct DFT| / ||u0|| at 4 frequencies", spoterr / sqrt(e0),
                       TOL);
    tcheck += nas_wtime() - tc;

    /* round trip */
    fft3_inverse(u1, u2, w, bufs);
    tc = nas_wtime();
    double rt = 0.0;
    for (size_t q = 0; q < n; q++)
        rt = cabs(w[q] - u0[q]) > rt ? cabs(w[q] - u0[q]) : rt;
    ok &= nas_check_le("ft", "round trip max |u0 - IFFT(FFT(u0))| / max |u0|", rt / maxu0, TOL);
    tcheck += nas_wtime() - tc;

    /* time steps: u2 = U * ex^t (evolve), w = IFFT(u2), u1 is scratch */
    memcpy(u2, u1, n * sizeof *u2);
    double eprev = e0, worst_pars = 0.0, worst_spot = 0.0;
    int mono = 1;
    for (long t = 1; t <= niter; t++) {
#pragma omp parallel
        { /* evolve over y slabs */
#pragma omp for schedule(static)
            for (int y = 0; y < ny; y++)
                for (size_t q = (size_t)y * nx * nz; q < (size_t)(y + 1) * nx * nz; q++)
                    u2[q] *= ex[q];
        }
        fft3_inverse(u2, u1, w, bufs);
        if (fault && t == 2)
            w[n / 3] += 1.0;
        cplx sum = 0.0;
        for (int j = 1; j <= 1024; j++) {
            size_t x = (size_t)j % (size_t)nx, y = (size_t)(3 * j) % (size_t)ny,
                   z = (size_t)(5 * j) % (size_t)nz;
            sum += w[(z * ny + y) * nx + x];
        }
        printf("ft: step %2ld checksum %.10e %+.10e i\n", t, creal(sum), cimag(sum));

        tc = nas_wtime();
        double eu = energy(w, n, part), es = energy(u2, n, part) / (double)n;
        double pe = fabs(eu - es) / eu;
        worst_pars = pe > worst_pars ? pe : worst_pars;
        if (!(eu <= eprev * (1.0 + TOL)))
            mono = 0;
        eprev = eu;
        direct_dft(w, spot, direct, part);
        for (int s = 0; s < NSPOT; s++) {
            double f = exp(-4.0 * ALPHA * PI * PI * kbar2(spot[s][0], spot[s][1], spot[s][2]) *
                           (double)t);
            double e = cabs(direct[s] - spotU[s] * f) / sqrt(e0);
            worst_spot = e > worst_spot ? e : worst_spot;
        }
        tcheck += nas_wtime() - tc;
    }
    double secs = nas_wtime() - t0 - tcheck;
    ok &= nas_check_le("ft", "max over steps Parseval |sum|u|^2 - sum|U|^2/N| / sum|u|^2", worst_pars,
                       TOL);
    ok &= nas_check_le("ft", "max over steps |DFT(u_t) - U exp(-4 alpha pi^2 k^2 t)| / ||u0||",
                       worst_spot, TOL);
    printf("ft: energy non-increasing over the steps: %s\n", mono ? "yes" : "NO");
    ok &= mono;

    for (int t = 0; t < nthreads; t++)
        free(bufs[t]);
    free(bufs);
    for (int q = 0; q < 3; q++)
        free(tw[q]);
    free(part);
    free(u0);
    free(w);
    free(u1);
    free(u2);
    free(ex);
    return nas_finish("ft", secs, ok);
}
