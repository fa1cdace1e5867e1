/*
 * prog_thp.c -- an unmodified OpenMP program with one array of MIB MiB
 * from malloc, initialised serially, then STEPS sweeps split by
 * schedule(static).  It prints how much of the array the kernel maps
 * with 2 MiB entries (the AnonHugePages of its mapping in
 * /proc/self/smaps, in kB) after the initialisation and after the
 * sweeps, then a checksum.
 *
 *   prog_thp [MIB [STEPS]]   defaults 8 400
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* AnonHugePages of the mapping holding p, kB; -1 when not found. */
static long anon_huge_kb(const void *p)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    char line[512];
    int in = 0;
    long kb = -1;
    uintptr_t a = (uintptr_t)p;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char c;
        /* a mapping's first line: "lo-hi perms ..." */
        if (sscanf(line, "%lx-%lx%c", &lo, &hi, &c) == 3 && c == ' ') {
            in = a >= lo && a < hi;
            continue;
        }
        if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
            break;
    }
    fclose(f);
    return kb;
}

int main(int argc, char **argv)
{
    long mib = argc > 1 ? atol(argv[1]) : 8;
    int steps = argc > 2 ? atoi(argv[2]) : 400;
    if (mib < 1 || steps < 0)
        return 2;
    size_t n = (size_t)mib << 17; /* doubles */
    double *a = malloc(n * sizeof *a);
    if (!a)
        return 3;
    for (size_t i = 0; i < n; i++)
        a[i] = (double)(i % 7);
    printf("start: AnonHugePages %ld kB\n", anon_huge_kb(a));
    double sum = 0;
    for (int s = 0; s < steps; s++) {
#pragma omp parallel for schedule(static) reduction(+ : sum)
        for (size_t i = 0; i < n; i++) {
            a[i] = a[i] * 0.5 + 1.0;
            sum += a[i];
        }
    }
    printf("end: AnonHugePages %ld kB\n", anon_huge_kb(a));
    printf("checksum %.6e\n", sum);
    free(a);
    return 0;
}
