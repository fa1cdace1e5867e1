/*
 * ompt_chain_prog.c -- an unmodified OpenMP program for the tests of OMPT
 * tool chaining (check_ompt_chain.sh): a time-step loop of 3 parallel
 * regions x 10 steps (30 outermost regions, each an `omp parallel for`)
 * over two 8 MiB heap arrays (hot blocks under pagehome).  Prints one
 * line with an integer checksum, the same with any schedule.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define N ((size_t)1 << 20)
#define STEPS 10

int main(void)
{
    uint64_t *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    if (!a || !b)
        return 1;
    uint64_t sum = 0;
    for (int s = 0; s < STEPS; s++) {
#pragma omp parallel for
        for (size_t i = 0; i < N; i++)
            b[i] = (s ? a[i] : i) * 3 + 1;
#pragma omp parallel for
        for (size_t i = 0; i < N; i++)
            a[i] = (b[i] >> 1) ^ (uint64_t)s;
        uint64_t part = 0;
#pragma omp parallel for reduction(+ : part)
        for (size_t i = 0; i < N; i++)
            part += a[i] & 0xffff;
        sum += part;
    }
    printf("ompt_chain_prog: %d regions, checksum %llu\n", 3 * STEPS,
           (unsigned long long)sum);
    free(a);
    free(b);
    return 0;
}
