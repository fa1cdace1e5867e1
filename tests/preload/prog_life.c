/*
 * prog_life.c -- an unmodified OpenMP program for the life of a run under
 * `pagehome run`: how it ends, the signals it gets, where it is, what it
 * prints.  Knows nothing of pagehome.
 *
 *   prog_life [--steps N] [--ms M] [--print] [--chdir DIR] [--signals]
 *             [--end exit|_exit|_Exit|quick_exit|return|abort|kill]
 *
 * An 8 MiB grid is set up serially and swept by the team for N steps
 * (default 8), each at least M ms long (default 0: one sweep).
 *   --print    a line "prog_life: step K" on stderr after each step, from
 *              the serial code between steps (as programs print progress)
 *   --chdir    chdir(DIR) before the steps
 *   --signals  SIGINT, SIGTERM and SIGHUP are counted by a handler; the
 *              steps stop at the first one (N may then be large); stdout
 *              gets "prog_life: signals INT=a TERM=b HUP=c", exit status 10
 *   --end      how main ends after printing its checksum: exit(3),
 *              _exit(3), _Exit(3), quick_exit(3), return 3 (default),
 *              abort(), or kill(getpid(), SIGKILL)
 * stdout: "prog_life: checksum X" (the same with and without pagehome).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define N ((size_t)1 << 20) /* doubles: 8 MiB */

static volatile sig_atomic_t got[3];

static void on_signal(int sig)
{
    got[sig == SIGINT ? 0 : sig == SIGTERM ? 1 : 2]++;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int usage(void)
{
    fprintf(stderr, "usage: prog_life [--steps N] [--ms M] [--print] [--chdir DIR] "
                    "[--signals] [--end exit|_exit|_Exit|quick_exit|return|abort|kill]\n");
    return 2;
}

int main(int argc, char **argv)
{
    int steps = 8, ms = 0, print = 0, signals = 0;
    const char *end = "return", *dir = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--print") == 0)
            print = 1;
        else if (strcmp(a, "--signals") == 0)
            signals = 1;
        else if (v && strcmp(a, "--steps") == 0 && (steps = atoi(v), i++, steps > 0))
            ;
        else if (v && strcmp(a, "--ms") == 0 && (ms = atoi(v), i++, ms >= 0))
            ;
        else if (v && strcmp(a, "--chdir") == 0)
            dir = argv[++i];
        else if (v && strcmp(a, "--end") == 0)
            end = argv[++i];
        else
            return usage();
    }
    if (signals) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGHUP, &sa, NULL);
    }
    if (dir && chdir(dir) != 0) {
        perror("prog_life: chdir");
        return 1;
    }
    double *g = malloc(N * sizeof *g);
    if (!g)
        return 1;
    for (size_t i = 0; i < N; i++) /* serial: the first-touch trap */
        g[i] = (double)(i % 101);
    double sum = 0;
    for (int s = 0; s < steps && !(got[0] + got[1] + got[2]); s++) {
        double t0 = now_ms();
        do {
            sum = 0;
#pragma omp parallel for schedule(static) reduction(+ : sum)
            for (size_t i = 0; i < N; i++) {
                g[i] = g[i] * 0.5 + (double)((i + (size_t)s) % 7);
                sum += g[i];
            }
        } while (now_ms() - t0 < ms && !(got[0] + got[1] + got[2]));
        if (print)
            fprintf(stderr, "prog_life: step %d\n", s);
    }
    if (signals) {
        printf("prog_life: signals INT=%d TERM=%d HUP=%d\n", (int)got[0], (int)got[1],
               (int)got[2]);
        fflush(stdout);
        return 10;
    }
    printf("prog_life: checksum %.6e\n", sum);
    fflush(stdout);
    free(g);
    if (strcmp(end, "exit") == 0)
        exit(3);
    if (strcmp(end, "_exit") == 0)
        _exit(3);
    if (strcmp(end, "_Exit") == 0)
        _Exit(3);
    if (strcmp(end, "quick_exit") == 0)
        quick_exit(3);
    if (strcmp(end, "abort") == 0)
        abort();
    if (strcmp(end, "kill") == 0)
        kill(getpid(), SIGKILL);
    return 3;
}
