/*
 * prog_signals.c -- signals sent to the whole process reach the program's
 * own threads, never pagehome's (src/base/thread.h).
 *
 * Part 1: a SIGALRM timer every 2 ms while the OpenMP team sweeps an
 * array, with SIGALRM blocked in the main thread (the kernel would
 * otherwise hand most of them to it); the handler notes the thread it ran
 * on, and every one must be a member of the program's team.  Needs two
 * threads or more.
 * Part 2: the sigwait pattern, set up after start-up (pagehome's threads
 * exist by then): SIGUSR1 blocked in every thread of the program, sent to
 * the process, taken with sigtimedwait.  Were it delivered to one of
 * pagehome's threads, its default action would end the process.
 *
 * Part 3, with PROG_SIGNALS_PH_THREADS=1 (under pagehome run): the
 * process has threads named "ph-..." (pagehome's), and none of the
 * program's threads has such a name.
 *
 * Prints "prog_signals: ok" and exits 0, or says what went wrong.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <omp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#define MAX_TIDS 64
#define MAX_HITS 4096

static pid_t known[MAX_TIDS];
static int nknown;
static pid_t hits[MAX_HITS];
static atomic_int nhits;

static pid_t tid(void)
{
    return (pid_t)syscall(SYS_gettid);
}

static void on_alarm(int sig)
{
    (void)sig;
    int k = atomic_fetch_add(&nhits, 1);
    if (k < MAX_HITS)
        hits[k] = tid();
}

/* Threads of the process named "ph-...", -1 when one of the program's
 * has such a name (or the list cannot be read). */
static int ph_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    int n = 0, clash = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], name[32] = {0};
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (!fgets(name, sizeof name, f))
            name[0] = 0;
        fclose(f);
        if (strncmp(name, "ph-", 3) != 0)
            continue;
        pid_t t = (pid_t)atoi(e->d_name);
        for (int k = 0; k < nknown; k++)
            clash |= known[k] == t;
        n++;
    }
    closedir(d);
    return clash ? -1 : n;
}

static double sweep(double *a, size_t n, int reps)
{
    double s = 0;
    for (int r = 0; r < reps; r++) {
#pragma omp parallel for schedule(static) reduction(+ : s)
        for (size_t i = 0; i < n; i++) {
            a[i] = a[i] * 0.5 + 1.0;
            s += a[i];
        }
    }
    return s;
}

int main(void)
{
    const size_t n = (size_t)16 << 20 >> 3; /* 16 MiB: a hot area */
    double *a = malloc(n * sizeof *a);
    if (!a)
        return 2;
    for (size_t i = 0; i < n; i++) /* serial: pages on one node */
        a[i] = 1.0;
    if (omp_get_max_threads() < 2) {
        printf("prog_signals: needs OMP_NUM_THREADS >= 2\n");
        return 2;
    }
    known[nknown++] = tid();
#pragma omp parallel
    {
        pid_t me = tid();
#pragma omp critical
        {
            int seen = 0;
            for (int k = 0; k < nknown; k++)
                seen |= known[k] == me;
            if (!seen && nknown < MAX_TIDS)
                known[nknown++] = me;
        }
    }
    double s = sweep(a, n, 5); /* the engine and its threads start */

    /* part 1 */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGALRM, &sa, NULL) != 0)
        return 2;
    sigset_t alrm;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &alrm, NULL);
    struct itimerval it = {{0, 2000}, {0, 2000}};
    if (setitimer(ITIMER_REAL, &it, NULL) != 0)
        return 2;
    double t0 = omp_get_wtime();
    while (omp_get_wtime() - t0 < 0.6)
        s += sweep(a, n, 1);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    signal(SIGALRM, SIG_IGN); /* one still pending in the main thread */
    pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
    int got = atomic_load(&nhits), bad = 0;
    for (int k = 0; k < got && k < MAX_HITS; k++) {
        int ok = 0;
        for (int j = 0; j < nknown; j++)
            ok |= hits[k] == known[j];
        bad += !ok;
    }
    if (got < 10) {
        printf("prog_signals: only %d SIGALRM handled in 0.6 s\n", got);
        return 1;
    }
    if (bad) {
        printf("prog_signals: %d of %d SIGALRM handlers ran on a thread "
               "that is not the program's\n", bad, got);
        return 1;
    }

    /* part 2 */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
#pragma omp parallel
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    s += sweep(a, n, 2);
    if (kill(getpid(), SIGUSR1) != 0)
        return 2;
    struct timespec wait = {10, 0};
    if (sigtimedwait(&set, NULL, &wait) != SIGUSR1) {
        printf("prog_signals: SIGUSR1 did not come to sigtimedwait\n");
        return 1;
    }
    /* part 3 */
    int ph = -2;
    const char *want = getenv("PROG_SIGNALS_PH_THREADS");
    if (want && *want == '1') {
        ph = ph_threads();
        if (ph <= 0) {
            printf("prog_signals: %s\n",
                   ph < 0 ? "a thread of the program is named ph-..."
                          : "no thread named ph-... under pagehome");
            return 1;
        }
    }
    printf("prog_signals: ok (%d SIGALRM on %d threads of the program; "
           "%d of pagehome's; checksum %.6e)\n", got, nknown, ph < 0 ? 0 : ph, s);
    free(a);
    return 0;
}
