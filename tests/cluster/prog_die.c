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
 *   pause RANK  every rank writes its pid into PH_TEST_PAUSE_DIR; rank
 *               RANK stops itself
 *               (SIGSTOP) in the middle of the loop, with the others
 *               reading its page: test_paused_job.sh then stops them too
 *               for longer than the cluster timeout and lets the whole
 *               job go on, as a shell's ^Z and fg would -- it must end
 *               well (60 iterations, checked)
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
    int pause = !strcmp(mode, "pause");
    /* pause: each rank's pid, and the victim's when it stops, in files
     * of PH_TEST_PAUSE_DIR (the launcher forwards output too late) */
    const char *pdir = getenv("PH_TEST_PAUSE_DIR");
    if (pause && pdir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/rank.%d", pdir, me);
        FILE *f = fopen(path, "w");
        if (f) {
            fprintf(f, "%ld\n", (long)getpid());
            fclose(f);
        }
    }
    long bad = 0;
    for (int it = 0; it < (pause ? 60 : 1000000); it++) {
        a[(size_t)me * 512] = it;
        ph_cluster_barrier();
        if (pause && it == 20 && me == victim && pdir) {
            /* right after the barrier, before the others read this rank's
             * page: their read misses wait for it where a get needs the
             * target's progress */
            char path[4096];
            snprintf(path, sizeof path, "%s/paused", pdir);
            FILE *f = fopen(path, "w");
            if (f)
                fclose(f);
            raise(SIGSTOP);
        }
        long s = 0;
        for (int r = 0; r < n; r++)
            s += a[(size_t)r * 512];
        bad += pause && s != (long)n * it;
        if (it == 20 && me == victim && !pause) {
            fprintf(stderr, "victim pid %ld: %s now\n", (long)getpid(), mode);
            fflush(stderr);
            if (!strcmp(mode, "exit")) {
                /* not flushed: exit() must write it before the job ends */
                printf("rank %d: exit(3) at iteration %d\n", me, it);
                exit(3);
            }
            raise(!strcmp(mode, "kill") ? SIGKILL : SIGSTOP);
        }
        ph_cluster_barrier();
        usleep(1000);
    }
    CHECK_EQ(bad, 0);
    return cl_finish("prog_die");
}
