/*
 * prog_static_policy.c -- prints the memory policy the kernel has for the
 * mapping that holds a large C static array (.bss): the second word of its
 * /proc/self/numa_maps line ("default", "local", "prefer:0", ...).  Under
 * `pagehome run` with kernel_balancing=exclude (the default) the engine
 * manages the segment alone, so it must be "local" (a first-touch policy
 * of its own, which the kernel's NUMA balancing skips); with
 * kernel_balancing=share, the engine off, or plain, "default".
 * check_static_policy.sh runs it.  Exit 77 when the kernel has no
 * numa_maps (no NUMA support).
 *
 *   prog_static_policy bind     first binds the process's memory to node 0
 *                               itself (set_mempolicy(2), MPOL_BIND): the
 *                               process's policy places the segment, so
 *                               "bind:0" whatever pagehome does;
 *   prog_static_policy default  binds, then goes back to MPOL_DEFAULT: as
 *                               without an argument.
 */
#include <numaif.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N (8u << 20) /* 64 MiB of doubles */

static double grid[N];

int main(int argc, char **argv)
{
    if (argc > 1) {
        unsigned long node0 = 1;
        if (set_mempolicy(MPOL_BIND, &node0, 64) != 0 ||
            (!strcmp(argv[1], "default") && set_mempolicy(MPOL_DEFAULT, NULL, 0) != 0)) {
            perror("prog_static_policy: set_mempolicy");
            return 1;
        }
    }
    double sum = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : sum)
    for (size_t i = 0; i < N; i += 512) {
        grid[i] = (double)i;
        sum += grid[i];
    }
    FILE *f = fopen("/proc/self/numa_maps", "r");
    if (!f) {
        fprintf(stderr, "prog_static_policy: no /proc/self/numa_maps\n");
        return 77;
    }
    char line[4096];
    unsigned long at = (unsigned long)(void *)&grid[N / 2];
    unsigned long best = 0;
    char policy[64] = "";
    while (fgets(line, sizeof line, f)) {
        unsigned long start;
        char pol[64];
        if (sscanf(line, "%lx %63s", &start, pol) != 2)
            continue;
        /* the line of the mapping holding the array's middle: the last
         * one starting at or below it (numa_maps lists mappings in order) */
        if (start <= at && start >= best) {
            best = start;
            snprintf(policy, sizeof policy, "%s", pol);
        }
    }
    fclose(f);
    if (!policy[0]) {
        fprintf(stderr, "prog_static_policy: the array's mapping is not listed\n");
        return 1;
    }
    printf("sum %.0f\npolicy %s\n", sum, policy);
    return 0;
}
