/*
 * prog_die.c MODE -- a cluster program that ends badly on purpose:
 *   kill RANK   rank RANK kills itself (SIGKILL) in the middle of a loop
 *               of barriers and remote reads; the others must end within
 *               a bounded time with a message naming it
 *   stop RANK   rank RANK stops answering (SIGSTOP): only the cluster
 *               layer's timeouts can notice
 *   exit RANK   rank RANK calls exit(3) in the middle of the loop, before
 *               ph_cluster_finalize, with a line in stdout's buffer: the
 *               job must end at once with status 3 and that line
 *   segv        a real segfault at a non-shared address after init: the
 *               process must die of SIGSEGV
 *   freed       an access to shared memory after it was freed: SIGSEGV
 */
#include "common.h"

#include <signal.h>

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int victim = argc > 2 ? atoi(argv[2]) : 1;
    cl_init(&argc, &argv);
    int me = ph_cluster_rank(), n = ph_cluster_nranks();
    ph_placement_t pl;
    ph_placement_parse(&pl, "cyclic:1");
    long *a = ph_cluster_alloc((size_t)n * 4096, &pl);
    if (!strcmp(mode, "segv")) {
        ph_cluster_barrier();
        fprintf(stderr, "rank %d: about to segfault\n", me);
        /* an address the program never mapped (from the environment, so
         * the compiler cannot see it) */
        const char *e = getenv("PH_TEST_BAD_ADDRESS");
        volatile long *bad = (volatile long *)(uintptr_t)strtoull(
            e ? e : "16", NULL, 0);
        *bad = 1;
        return 0;
    }
    if (!strcmp(mode, "freed")) {
        a[me * 512] = 1;
        ph_cluster_barrier();
        ph_cluster_free(a);
        fprintf(stderr, "rank %d: about to touch freed memory\n", me);
        ((volatile long *)a)[me * 512] = 2;
        return 0;
    }
    for (int it = 0; it < 1000000; it++) {
        a[(size_t)me * 512] = it;
        ph_cluster_barrier();
        long s = 0;
        for (int r = 0; r < n; r++)
            s += a[(size_t)r * 512];
        (void)s;
        if (it == 20 && me == victim) {
            fprintf(stderr, "victim pid %ld: %s now\n", (long)getpid(), mode);
            fflush(stderr);
            if (!strcmp(mode, "exit")) {
                /* not flushed: exit() must write it before the job ends */
                printf("rank %d: exit(3) at iteration %d\n", me, it);
                exit(3);
            }
            raise(!strcmp(mode, "stop") ? SIGSTOP : SIGKILL);
        }
        ph_cluster_barrier();
        usleep(1000);
    }
    return cl_finish("prog_die");
}
