/*
 * test_threads.c -- cluster mode with an OpenMP team in every rank:
 *   the barrier from inside a parallel region (all threads of all ranks);
 *   ph_cluster_static_range/next: every iteration exactly once over the
 *   global team, in OpenMP's schedule(static[,chunk]) order;
 *   ph_cluster_affinity_range/next: every element exactly once, by a
 *   thread of the rank that is its home;
 *   a lock acquire that invalidates a page another thread of the same
 *   rank is writing at that moment: nothing written is lost.
 * Run with OMP_NUM_THREADS=2 (ctest does).
 */
#include "common.h"

#include <omp.h>
#include <sched.h>

#define PAGE 4096

static int me, n, T;

static void test_barrier(void)
{
    long *slot = ph_cluster_alloc((size_t)n * (size_t)T * PAGE, NULL);
    CHECK(slot != NULL);
    long bad = 0;
#pragma omp parallel reduction(+ : bad)
    {
        int t = omp_get_thread_num();
        for (int round = 0; round < 8; round++) {
            slot[(size_t)(me * T + t) * 512 + (size_t)round % 512] = round + 1;
            ph_cluster_barrier();
            for (int g = 0; g < n * T; g++)
                bad += slot[(size_t)g * 512 + (size_t)round % 512] != round + 1;
            ph_cluster_barrier();
        }
    }
    CHECK_EQ(bad, 0);
    ph_cluster_free(slot);
}

static long expect_owner(long i, long N, long chunk, long G)
{
    if (chunk > 0)
        return (i / chunk) % G;
    long q = N / G, r = N % G;
    if (i < r * (q + 1))
        return i / (q + 1);
    return r + (i - r * (q + 1)) / q;
}

static void test_static(void)
{
    long sizes[] = {1, 7, 100, 1000, 4099};
    long chunks[] = {0, 1, 3, 64};
    long G = (long)n * T;
    int *own = ph_cluster_alloc(4099 * sizeof(int), NULL);
    CHECK(own != NULL);
    CHECK_EQ(ph_cluster_num_threads(), n * T);
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
            long N = sizes[s], chunk = chunks[k];
#pragma omp parallel
            {
                long g = (long)me * T + omp_get_thread_num();
                CHECK_EQ(ph_cluster_thread_num(), g);
                for (long i = 0; i < N; i++)
                    if (i % G == g)
                        own[i] = -1;
                ph_cluster_barrier();
                long b, e;
                for (int rc = ph_cluster_static_range(N, chunk, &b, &e);
                     rc == 0; rc = ph_cluster_static_next(N, chunk, &b, &e))
                    for (long i = b; i < e; i++)
                        own[i] = own[i] == -1 ? (int)g : -2;   /* twice? */
                ph_cluster_barrier();
#pragma omp master
                {
                    long bad = 0;
                    for (long i = 0; i < N; i++)
                        bad += own[i] != expect_owner(i, N, chunk, G);
                    if (bad)
                        fprintf(stderr, "static N=%ld chunk=%ld: %ld wrong\n",
                                N, chunk, bad);
                    CHECK_EQ(bad, 0);
                }
                ph_cluster_barrier();
            }
        }
    ph_cluster_free(own);
}

static void test_affinity(void)
{
    ph_placement_t pl;
    ph_placement_parse(&pl, "cyclic:2");
    size_t E = 10000;                          /* 12-byte elements */
    char *arr = ph_cluster_alloc(E * 12 + 100, &pl);
    int *mark = ph_cluster_alloc(E * sizeof(int), NULL);
    CHECK(arr && mark);
    for (size_t i = (size_t)me; i < E; i += (size_t)n)
        mark[i] = 0;
    ph_cluster_barrier();
    const char *base = arr + 100;             /* not page aligned */
#pragma omp parallel
    {
        long b, e;
        for (int rc = ph_cluster_affinity_range(base, 12, E, &b, &e); rc == 0;
             rc = ph_cluster_affinity_next(base, 12, E, &b, &e))
            for (long i = b; i < e; i++)
#pragma omp atomic
                mark[i] += 1 + me * 10;
        ph_cluster_barrier();
    }
    int *home = malloc(E * sizeof *home);
    int st[64];
    size_t bad = 0;
    for (size_t i = 0; i < E; i++) {
        ph_cluster_homes(base + i * 12, 1, st);
        home[i] = st[0];
        bad += mark[i] != 1 + home[i] * 10;
    }
    if (bad)
        fprintf(stderr, "affinity: %zu elements wrong\n", bad);
    CHECK_EQ(bad, 0);
    free(home);
    ph_cluster_barrier();
    ph_cluster_free(mark);
    ph_cluster_free(arr);
}

static long stat_value(const char *key)
{
    char path[] = "/tmp/ph-threads-stats-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    unlink(path);
    ph_cluster_stats_write(fd);
    lseek(fd, 0, SEEK_SET);
    static char buf[1 << 16];
    ssize_t k = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (k <= 0)
        return -1;
    buf[k] = '\0';
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    char *p = strstr(buf, pat);
    return p ? atol(p + strlen(pat)) : -1;
}

static void test_invalidate_while_writing(void)
{
    if (n < 2 || T < 2)
        return;
    ph_placement_t pl;
    ph_placement_parse(&pl, "node:0");
    long *p = ph_cluster_alloc(PAGE, &pl);     /* one page, home rank 0 */
    CHECK(p != NULL);
    int writer = 1;                            /* thread 1 of rank 1 */
    long inval0 = stat_value("invalidations");
    const int ITER = 300;
    ph_cluster_barrier();
#pragma omp parallel
    {
        int t = omp_get_thread_num();
        if (me == 0 && t == 0) {
            for (int k = 1; k <= ITER; k++) {
                ph_cluster_lock(9);
                p[0] = k;                      /* word B */
                ph_cluster_unlock(9);
                usleep(100);
            }
        } else if (me == writer && t == 1) {
            for (long k = 1; k <= 20 * ITER; k++) {
                p[8 + k % 32] = k;             /* words A, no lock */
                if (k % 16 == 0)
                    sched_yield();
            }
        } else if (me == writer && t == 0) {
            for (int k = 0; k < ITER; k++) {
                ph_cluster_lock(9);
                ph_cluster_unlock(9);
                usleep(100);
            }
        }
        ph_cluster_barrier();
    }
    CHECK_EQ(p[0], ITER);
    for (long j = 0; j < 32; j++) {
        long last = 0;
        for (long k = 1; k <= 20 * ITER; k++)
            if (k % 32 == j)
                last = k;
        CHECK_EQ(p[8 + j], last);
    }
    if (me == writer) {
        long inval1 = stat_value("invalidations");
        CHECK(inval1 > inval0);
        printf("rank %d: %ld invalidations of the page while a thread "
               "wrote it\n", me, inval1 - inval0);
    }
    ph_cluster_barrier();
    ph_cluster_free(p);
}

int main(int argc, char **argv)
{
    cl_init(&argc, &argv);
    me = ph_cluster_rank();
    n = ph_cluster_nranks();
    T = omp_get_max_threads();
    ph_cluster_info_t info;
    ph_cluster_info(&info);
    CHECK_EQ(info.threads, T);
    test_barrier();
    test_static();
    test_affinity();
    test_invalidate_while_writing();
    return cl_finish("threads");
}
