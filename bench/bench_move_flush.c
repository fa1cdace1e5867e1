/*
 * bench_move_flush.c -- what a page migration costs the kernel while the
 * program's other threads run, and what it costs when the page is
 * PROT_NONE at the time.
 *
 * Migrating a page unmaps it, and the kernel must then flush the old
 * translation from the TLB of every CPU the process runs on: one
 * inter-processor interrupt round a page, which waits for each busy CPU.
 * Kernels before 6.4 flush page by page in move_pages(2) and mbind(2);
 * 6.4 batches the flushes of a call ("migrate_pages: batch flushing
 * TLB").  A page whose entry is PROT_NONE cannot be in any TLB (x86:
 * pte_accessible() is false), so the kernel skips its flush: that is how
 * its own NUMA balancing migrates cheaply, on hinting faults from
 * PROT_NONE entries.  move_pages(2) cannot move such a page (it reports
 * -ENOENT for it); mbind(2) with MPOL_MF_MOVE can.
 *
 * Per round, three ranges of `pages` pages, on the first node, each moved
 * to the target node a different way:
 *   move_pages   move_pages(2), the pages accessible (pagehome's mover);
 *   mbind        mbind(MPOL_PREFERRED, MPOL_MF_MOVE) of the accessible range;
 *   mbind-none   mprotect(PROT_NONE), the same mbind, mprotect back (the
 *                time of all three; the mprotects are one flush each).
 * with `spinners` threads busy on the other CPUs (an OpenMP program's
 * threads: each spins on its own buffer, never on the moved pages) and
 * with none.  Every page is checked on the target node afterwards and its
 * contents unchanged.  Prints microseconds per page, medians of the
 * rounds.  Exits 77 on a machine with fewer than two NUMA nodes (run it in
 * the NUMA guest: tests/numa-guest/run -- build/bench/bench_move_flush).
 *
 *   bench_move_flush [--pages N] [--rounds R] [--spinners K]
 *     --pages    pages per range (default 512)
 *     --rounds   rounds (default 3)
 *     --spinners busy threads in the second set (default: one per other CPU)
 */
#include "bench_common.h"

#include "base/clock.h"

#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PG 4096u
#define MAX_ROUNDS 64
#define MAX_SPINNERS 256

enum { M_MOVE_PAGES, M_MBIND, M_MBIND_NONE, M_COUNT };
static const char *const method_name[M_COUNT] = {"move_pages", "mbind", "mbind-none"};

static atomic_int stop_spinning;

typedef struct spinner {
    pthread_t tid;
    int cpu;
    uint64_t sum; /* what it read, so the loop is not optimised away */
} spinner;

static void pin_to(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    (void)sched_setaffinity(0, sizeof set, &set);
}

static void *spin(void *arg)
{
    spinner *s = arg;
    pin_to(s->cpu);
    unsigned char buf[PG];
    memset(buf, 1, sizeof buf);
    uint64_t sum = 0;
    while (!atomic_load_explicit(&stop_spinning, memory_order_relaxed))
        for (size_t i = 0; i < sizeof buf; i += 64)
            sum += ((volatile unsigned char *)buf)[i];
    s->sum = sum;
    return NULL;
}

/* A range of n pages on node `from`, page p filled with byte (p * 7 + salt). */
static unsigned char *range_on(size_t n, int from, unsigned salt)
{
    unsigned char *m = mmap(NULL, n * PG, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    (void)madvise(m, n * PG, MADV_NOHUGEPAGE);
    unsigned long mask = 1ul << from;
    if (mbind(m, n * PG, MPOL_BIND, &mask, sizeof mask * 8, 0) != 0) {
        munmap(m, n * PG);
        return NULL;
    }
    for (size_t p = 0; p < n; p++)
        memset(m + p * PG, (int)((p * 7 + salt) & 0xff), PG);
    (void)mbind(m, n * PG, MPOL_DEFAULT, NULL, 0, 0);
    return m;
}

/* Every page on node `to` and its contents as range_on wrote them. */
static int range_ok(unsigned char *m, size_t n, int to, unsigned salt)
{
    void **pages = malloc(n * sizeof *pages);
    int *status = malloc(n * sizeof *status);
    int ok = pages && status;
    for (size_t p = 0; ok && p < n; p++)
        pages[p] = m + p * PG;
    if (ok && move_pages(0, n, pages, NULL, status, 0) != 0)
        ok = 0;
    for (size_t p = 0; ok && p < n; p++) {
        unsigned char want = (unsigned char)((p * 7 + salt) & 0xff);
        if (status[p] != to || m[p * PG] != want || m[p * PG + PG - 1] != want) {
            fprintf(stderr, "bench_move_flush: page %zu: node %d (want %d), byte %u "
                            "(want %u)\n", p, status[p], to, m[p * PG], want);
            ok = 0;
        }
    }
    free(pages);
    free(status);
    return ok;
}

/* Moves range m (n pages) to node `to` by `method`; returns the seconds it
 * took, or a negative value on failure. */
static double move_range(unsigned char *m, size_t n, int to, int method)
{
    unsigned long mask = 1ul << to;
    uint64_t t0 = ph_now_ns();
    if (method == M_MOVE_PAGES) {
        void **pages = malloc(n * sizeof *pages);
        int *nodes = malloc(n * sizeof *nodes), *status = malloc(n * sizeof *status);
        long rc = -1;
        if (pages && nodes && status) {
            for (size_t p = 0; p < n; p++) {
                pages[p] = m + p * PG;
                nodes[p] = to;
            }
            t0 = ph_now_ns();
            rc = move_pages(0, n, pages, nodes, status, MPOL_MF_MOVE);
        }
        uint64_t t1 = ph_now_ns();
        free(pages);
        free(nodes);
        free(status);
        return rc < 0 ? -1.0 : (double)(t1 - t0) * 1e-9;
    }
    if (method == M_MBIND_NONE && mprotect(m, n * PG, PROT_NONE) != 0)
        return -1.0;
    int rc = mbind(m, n * PG, MPOL_PREFERRED, &mask, sizeof mask * 8, MPOL_MF_MOVE);
    if (method == M_MBIND_NONE && mprotect(m, n * PG, PROT_READ | PROT_WRITE) != 0)
        return -1.0;
    uint64_t t1 = ph_now_ns();
    (void)mbind(m, n * PG, MPOL_DEFAULT, NULL, 0, 0);
    return rc != 0 ? -1.0 : (double)(t1 - t0) * 1e-9;
}

/* One set of rounds with `nspin` spinners; us_page[method] gets the
 * medians.  0, or -1 when a move failed or a page was wrong. */
static int run_set(size_t n, int rounds, int nspin, const int *cpus, int from, int to,
                   double *us_page)
{
    spinner sp[MAX_SPINNERS];
    atomic_store(&stop_spinning, 0);
    int started = 0;
    for (; started < nspin; started++) {
        sp[started].cpu = cpus[started];
        if (pthread_create(&sp[started].tid, NULL, spin, &sp[started]) != 0)
            break;
    }
    usleep(50000); /* the spinners are running */
    double t[M_COUNT][MAX_ROUNDS];
    int rc = started == nspin ? 0 : -1;
    for (int r = 0; rc == 0 && r < rounds; r++) {
        for (int k = 0; rc == 0 && k < M_COUNT; k++) {
            unsigned salt = (unsigned)(r * M_COUNT + k);
            unsigned char *m = range_on(n, from, salt);
            if (!m) {
                perror("bench_move_flush: a range on the first node");
                rc = -1;
                break;
            }
            double s = move_range(m, n, to, k);
            if (s < 0) {
                fprintf(stderr, "bench_move_flush: %s: %s\n", method_name[k],
                        strerror(errno));
                rc = -1;
            } else if (!range_ok(m, n, to, salt)) {
                rc = -1;
            }
            t[k][r] = s * 1e6 / (double)n;
            munmap(m, n * PG);
        }
    }
    atomic_store(&stop_spinning, 1);
    for (int i = 0; i < started; i++)
        pthread_join(sp[i].tid, NULL);
    for (int k = 0; rc == 0 && k < M_COUNT; k++)
        us_page[k] = bench_median(t[k], rounds);
    return rc;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_move_flush [--pages N] [--rounds R] [--spinners K]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    size_t pages = 512, rounds = 3, spinners = SIZE_MAX;
    for (int i = 1; i < argc; i++) {
        size_t *dst = strcmp(argv[i], "--pages") == 0      ? &pages
                      : strcmp(argv[i], "--rounds") == 0   ? &rounds
                      : strcmp(argv[i], "--spinners") == 0 ? &spinners
                                                           : NULL;
        size_t lo = dst == &spinners ? 0 : 1;
        size_t hi = dst == &pages ? 1u << 20 : dst == &rounds ? MAX_ROUNDS : MAX_SPINNERS;
        if (!dst || i + 1 >= argc || bench_parse_count(argv[++i], lo, hi, dst) != 0)
            usage();
    }
    if (numa_available() < 0 || numa_max_node() < 1) {
        printf("skipped: fewer than two NUMA nodes\n");
        return 77;
    }
    /* the first two nodes with memory and a CPU: the main thread on the
     * first one's CPU, the spinners on every other CPU */
    int from = -1, to = -1, self = -1;
    for (int nd = 0; nd <= numa_max_node() && to < 0; nd++) {
        struct bitmask *c = numa_allocate_cpumask();
        if (c && numa_node_to_cpus(nd, c) == 0 && numa_bitmask_weight(c) > 0 &&
            numa_node_size64(nd, NULL) > 0) {
            if (from < 0) {
                from = nd;
                for (unsigned k = 0; k < c->size && self < 0; k++)
                    if (numa_bitmask_isbitset(c, k))
                        self = (int)k;
            } else {
                to = nd;
            }
        }
        numa_free_cpumask(c);
    }
    if (to < 0 || to >= (int)(sizeof(unsigned long) * 8)) {
        printf("skipped: fewer than two NUMA nodes with memory and CPUs\n");
        return 77;
    }
    pin_to(self);
    int cpus[MAX_SPINNERS], ncpus = 0;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    for (int c = 0; c < online && ncpus < MAX_SPINNERS; c++)
        if (c != self)
            cpus[ncpus++] = c;
    if (spinners == SIZE_MAX || spinners > (size_t)ncpus)
        spinners = (size_t)ncpus;
    printf("bench_move_flush: %zu pages of 4 KiB from node %d to node %d, %zu rounds, "
           "main thread on CPU %d\n", pages, from, to, rounds, self);
    printf("us per page (median of the rounds):\n");
    printf("%-10s %12s %12s %12s %12s\n", "spinners", method_name[0], method_name[1],
           method_name[2], "first/last");
    int sets[2] = {0, (int)spinners}, rc = 0;
    for (int s = 0; s < (spinners ? 2 : 1); s++) {
        double us[M_COUNT];
        if (run_set(pages, (int)rounds, sets[s], cpus, from, to, us) != 0) {
            rc = 1;
            break;
        }
        printf("%-10d %12.1f %12.1f %12.1f %11.1fx\n", sets[s], us[M_MOVE_PAGES],
               us[M_MBIND], us[M_MBIND_NONE],
               us[M_MBIND_NONE] > 0 ? us[M_MOVE_PAGES] / us[M_MBIND_NONE] : 0.0);
    }
    if (rc)
        printf("bench_move_flush: FAILED\n");
    return rc;
}
