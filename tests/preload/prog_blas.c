/*
 * prog_blas.c -- a dense kernel as our users write it: OpenBLAS's dgemm
 * (Debian's default build runs it on OpenBLAS's own pthreads, threads
 * neither the program nor its OpenMP runtime started, and keeps a large
 * buffer of its own from mmap) between parallel loops of the program's
 * own on malloc'd matrices.  Run under `pagehome run` by check_libs.sh.
 *
 * Usage: prog_blas N REPS.  C = A B with A = 2 I, then B = C / 2: B must
 * come back exactly (every product is exact in binary floating point).
 * stdout holds no timing; "verification: ok" or exit 1.
 */
#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 512, reps = argc > 2 ? atoi(argv[2]) : 10;
    if (n < 16 || n > 8192 || reps < 1) {
        fprintf(stderr, "usage: prog_blas N REPS\n");
        return 2;
    }
    size_t nn = (size_t)n * (size_t)n;
    double *A = malloc(nn * sizeof *A), *B = malloc(nn * sizeof *B), *C = malloc(nn * sizeof *C);
    if (!A || !B || !C)
        return 2;
#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            A[(size_t)i * n + j] = i == j ? 2.0 : 0.0;
            B[(size_t)i * n + j] = sin(i + 0.5 * j);
        }
    double t0 = omp_get_wtime();
    for (int r = 0; r < reps; r++) {
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, A, n, B, n,
                    0.0, C, n);
#pragma omp parallel for schedule(static)
        for (size_t k = 0; k < nn; k++)
            B[k] = 0.5 * C[k];
    }
    double t = omp_get_wtime() - t0;
    size_t bad = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            bad += B[(size_t)i * n + j] != sin(i + 0.5 * j);
    fprintf(stderr, "prog_blas: %d products of %d x %d in %.3f s, %zu wrong\n", reps, n, n, t,
            bad);
    printf("prog_blas: n=%d reps=%d verification: %s\n", n, reps, bad ? "FAILED" : "ok");
    free(A);
    free(B);
    free(C);
    return bad ? 1 : 0;
}
