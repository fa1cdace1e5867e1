/*
 * prog_blocks.c -- an unmodified OpenMP program whose data is many
 * separate blocks (patches of an adaptive mesh, blocks of a sparse
 * matrix): NBLOCKS blocks of BLOCK_KIB KiB, each from its own malloc,
 * initialised serially, then STEPS sweeps in which thread t works on the
 * t-th quarter of the blocks (schedule(static)).  Prints a checksum.
 *
 *   prog_blocks [NBLOCKS [BLOCK_KIB [STEPS]]]   defaults 1500 64 40
 */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    long nb = argc > 1 ? atol(argv[1]) : 1500;
    long kib = argc > 2 ? atol(argv[2]) : 64;
    int steps = argc > 3 ? atoi(argv[3]) : 40;
    long n = kib * 1024 / (long)sizeof(double);
    if (nb < 1 || n < 1 || steps < 0)
        return 2;
    double **b = malloc((size_t)nb * sizeof *b);
    if (!b)
        return 3;
    for (long k = 0; k < nb; k++) {
        b[k] = malloc((size_t)n * sizeof **b);
        if (!b[k])
            return 3;
        for (long i = 0; i < n; i++)
            b[k][i] = (double)((k * 7 + i) % 11);
    }
    for (int s = 0; s < steps; s++) {
#pragma omp parallel for schedule(static)
        for (long k = 0; k < nb; k++)
            for (long i = 0; i < n; i++)
                b[k][i] = b[k][i] * 0.5 + 1.0;
    }
    double sum = 0;
    for (long k = 0; k < nb; k++)
        for (long i = 0; i < n; i += 97)
            sum += b[k][i];
    printf("prog_blocks: checksum %.10f\n", sum);
    for (long k = 0; k < nb; k++)
        free(b[k]);
    free(b);
    return 0;
}
