/*
 * prog_sigsegv.c -- an unmodified OpenMP program in the first-touch trap
 * (like prog_trap.c) that also uses SIGSEGV itself: before any of its work
 * it installs its own handler (sigaction, SA_SIGINFO), and during the run
 * it now and then protects one private page PROT_NONE and reads it.  Its
 * handler checks that the fault is an access fault on that page, makes the
 * page readable again and counts; the read is retried and must see the
 * page's contents.  A fault anywhere else is not the program's: its
 * handler restores the default disposition and returns, so the access
 * faults again and the program dies by SIGSEGV, as such programs do.
 *
 * The page is tripped by the master between steps (even steps) and by the
 * last thread inside the parallel region (steps 1, 4, 7, ...).  At the end
 * it prints its checksum and its fault count to stdout (the count must be
 * the expected one: exit 1 otherwise) and the share of the grids' pages on
 * their owner's node to stderr (prog_locality.c).
 *
 * Under `pagehome run`, pagehome's sampler installs its own SIGSEGV
 * handler when the first hot area appears (the first large malloc, after
 * ours): it must pass every fault that is not a sampling trap on to this
 * program's handler.
 *
 *   prog_sigsegv [ROWS [STEPS]]    defaults 512 rows of 1024 doubles, 8 steps
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "prog_locality.h"

#include <omp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define COLS 1024
#define MAGIC 0x5eed

static volatile int *priv;   /* the private page */
static long page_size;
static atomic_int faults;    /* faults on the private page, by the handler */
static atomic_int bad_trips; /* trips that read the wrong value */

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
    (void)ctx;
    uintptr_t addr = (uintptr_t)si->si_addr, lo = (uintptr_t)priv;
    if (si->si_code == SEGV_ACCERR && addr >= lo && addr < lo + (uintptr_t)page_size &&
        mprotect((void *)lo, (size_t)page_size, PROT_READ | PROT_WRITE) == 0) {
        atomic_fetch_add(&faults, 1);
        return;
    }
    static const char msg[] = "prog_sigsegv: a fault that is not mine: dying\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
}

/* Protect the page, read it (one fault, handled above), check it. */
static void trip(void)
{
    if (mprotect((void *)priv, (size_t)page_size, PROT_NONE) != 0) {
        perror("prog_sigsegv: mprotect");
        exit(1);
    }
    if (priv[0] != MAGIC)
        atomic_fetch_add(&bad_trips, 1);
}

int main(int argc, char **argv)
{
    int rows = 512, steps = 8;
    if (argc > 3 || (argc > 1 && prog_parse_int(argv[1], 8, 1 << 20, &rows) != 0) ||
        (argc > 2 && prog_parse_int(argv[2], 1, 1000000, &steps) != 0)) {
        fprintf(stderr, "usage: prog_sigsegv [ROWS>=8 [STEPS>=1]]\n");
        return 2;
    }
    /* Our own SIGSEGV handler, before any of the work. */
    page_size = sysconf(_SC_PAGESIZE);
    void *pg = mmap(NULL, (size_t)page_size, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pg == MAP_FAILED) {
        perror("prog_sigsegv: mmap");
        return 1;
    }
    priv = pg;
    priv[0] = MAGIC;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, NULL) != 0) {
        perror("prog_sigsegv: sigaction");
        return 1;
    }
    trip(); /* once before the grids exist */
    int expected = 1;

    size_t n = (size_t)rows * COLS;
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    if (!a || !b)
        return 1;
    for (size_t k = 0; k < n; k++) { /* serial: the first-touch trap */
        a[k] = (double)((k * 7) % 101);
        b[k] = 0;
    }
    int nthreads = omp_get_max_threads();
    for (int s = 0; s < steps; s++) {
        if (s % 2 == 0) {
            trip();
            expected++;
        }
        if (s % 3 == 1)
            expected++;
#pragma omp parallel
        {
            if (s % 3 == 1 && omp_get_thread_num() == omp_get_num_threads() - 1)
                trip();
#pragma omp for schedule(static)
            for (int i = 1; i < rows - 1; i++) {
                prog_note_thread(omp_get_thread_num());
                for (int j = 1; j < COLS - 1; j++) {
                    size_t k = (size_t)i * COLS + (size_t)j;
                    b[k] = 0.25 * (a[k - COLS] + a[k + COLS] + a[k - 1] + a[k + 1]);
                }
            }
        }
        double *t = a;
        a = b;
        b = t;
    }
    double sum = 0;
    for (size_t k = 0; k < n; k++)
        sum += a[k] * (double)(k % 7 + 1);
    int got = atomic_load(&faults), bad = atomic_load(&bad_trips);
    printf("prog_sigsegv: checksum %.17g\n", sum);
    printf("prog_sigsegv: %d faults handled by the program's own handler\n", got);
    prog_tally(a, COLS * sizeof *a, rows, 1, rows - 2, nthreads);
    prog_tally(b, COLS * sizeof *b, rows, 1, rows - 2, nthreads);
    prog_report("prog_sigsegv", nthreads);
    free(a);
    free(b);
    if (got != expected || bad) {
        fprintf(stderr, "prog_sigsegv: FAILED: %d faults handled, %d expected, %d bad reads\n",
                got, expected, bad);
        return 1;
    }
    return 0;
}
