/*
 * prog_fork.c -- an unmodified OpenMP program that forks in the middle of
 * its time steps, written the way programs do it: knows nothing of
 * pagehome.
 *
 *   prog_fork MODE [STEPS]     MODE: exit, _exit, exec, late
 *
 * Two 8 MiB grids are set up serially and swept by the team for STEPS
 * steps (default 12).  After half of them the program forks.  The child
 * checks the grids it inherited, allocates a grid of its own, sweeps it
 * with an OpenMP team, frees it, and ends as MODE says:
 *   exit    exit(7)
 *   _exit   _exit(7)
 *   exec    execs itself as "prog_fork --child-exec", which allocates a
 *           grid, sweeps it with a team and returns 7 from main
 *   late    waits until the parent is gone (its pipe closes), then exit(7):
 *           it ends after its parent, so it would be the last writer of
 *           anything the two share
 * The parent goes on with its steps, waits for the child (except late:
 * then it only checks that the child was started), allocates one more
 * grid, and prints its checksums.  stdout is the same with or without
 * pagehome; stderr says "prog_fork: parent pid N" (and, for late, the
 * child's pid) for the test script.  Exit status 0, or 1 when a check
 * failed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define N ((size_t)1 << 20) /* doubles: 8 MiB */

static double sweep(double *g, size_t n, int step, int team)
{
    double sum = 0;
#pragma omp parallel for schedule(static) reduction(+ : sum) if (team)
    for (size_t i = 0; i < n; i++) {
        g[i] = g[i] * 0.5 + (double)((i + (size_t)step) % 7);
        sum += g[i];
    }
    return sum;
}

static double *grid(unsigned seed)
{
    double *g = malloc(N * sizeof *g);
    if (!g) {
        fprintf(stderr, "prog_fork: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < N; i++) /* serial: the first-touch trap */
        g[i] = (double)((i * seed) % 101);
    return g;
}

/* The child's own work: a grid, a checksum (team: swept by a team, in a
 * fresh process); 0 or 1. */
static int child_work(int team)
{
    double *c = grid(5);
    double s = 0;
    for (int k = 0; k < 3; k++)
        s = sweep(c, N, k, team);
    free(c);
    return s > 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--child-exec") == 0)
        return child_work(1) == 0 ? 7 : 1;
    const char *mode = argc > 1 ? argv[1] : "";
    int steps = argc > 2 ? atoi(argv[2]) : 12;
    if ((strcmp(mode, "exit") && strcmp(mode, "_exit") && strcmp(mode, "exec") &&
         strcmp(mode, "late")) || steps < 2) {
        fprintf(stderr, "usage: prog_fork exit|_exit|exec|late [STEPS>=2]\n");
        return 2;
    }
    fprintf(stderr, "prog_fork: parent pid %ld\n", (long)getpid());
    double *a = grid(3), *b = grid(11);
    double sa = 0, sb = 0;
    int bad = 0;
    pid_t child = -1;
    int gone[2] = {-1, -1}; /* late: the child reads EOF once the parent is gone */
    for (int s = 0; s < steps; s++) {
        sa = sweep(a, N, s, 1);
        sb = sweep(b, N, s + 1, 1);
        if (s != steps / 2)
            continue;
        double check = 0;
        for (size_t i = 0; i < N; i += 512)
            check += a[i] + b[i];
        if (strcmp(mode, "late") == 0 && pipe(gone) != 0)
            return 1;
        fflush(NULL);
        child = fork();
        if (child < 0) {
            perror("prog_fork: fork");
            return 1;
        }
        if (child == 0) {
            double again = 0;
            for (size_t i = 0; i < N; i += 512) /* inherited pages, read and written */
                again += a[i] + b[i];
            a[0] += 1;
            int rc = again == check ? child_work(0) : 1;
            free(a);
            free(b);
            if (strcmp(mode, "exit") == 0)
                exit(rc ? 1 : 7);
            if (strcmp(mode, "_exit") == 0)
                _exit(rc ? 1 : 7);
            if (strcmp(mode, "exec") == 0) {
                execl("/proc/self/exe", argv[0], "--child-exec", (char *)NULL);
                _exit(1);
            }
            close(gone[1]);
            char c;
            while (read(gone[0], &c, 1) < 0 && errno == EINTR)
                ;
            exit(rc ? 1 : 7);
        }
        if (strcmp(mode, "late") == 0) {
            close(gone[0]);
            fprintf(stderr, "prog_fork: late child pid %ld\n", (long)child);
        }
    }
    if (strcmp(mode, "late") != 0) {
        int st = 0;
        while (waitpid(child, &st, 0) < 0 && errno == EINTR)
            ;
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 7) {
            fprintf(stderr, "prog_fork: child status %#x, want exit 7\n", st);
            bad = 1;
        }
    }
    double *c = grid(13);
    double sc = sweep(c, N, 0, 1);
    printf("prog_fork %s: checksums %.6e %.6e %.6e\n", mode, sa, sb, sc);
    free(a);
    free(b);
    free(c);
    return bad;
}
