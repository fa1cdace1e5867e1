/*
 * bench_cost_rule.c -- what home migration by cost (src/cluster/
 * migrate_cost.h) buys where JIAJIA's rule cannot act: pages written by
 * several ranks (false sharing) and homed at a rank that does not touch
 * them.  An array of --pages pages is homed at rank 0 (node:0); in every
 * round ranks 1..N-1 each write their own interleaved words of every page
 * (word w belongs to rank 1 + w % (N-1)), then all meet in a barrier;
 * the last writer checks its view of every word, and a second barrier
 * ends the round.  Rank 0 only waits.  Without the rule every writer fetches every page
 * (the others' writes dropped its copy) and sends a diff, every round;
 * with it the pages move to rank 1 and rank 1's share of that traffic
 * goes.
 *
 *   bench_cost_rule [--pages P] [--rounds R]      (3 ranks or more)
 *
 * Output (rank 0): one line
 *   cost-rule ranks=N pages=P rounds=R reads=0|1 first_us=.. last_us=..
 *     moves_cost=.. fetched_r1=..
 * first_us / last_us: the median time of a round over the first and the
 * last quarter of the rounds (rank 0's clock: round start to the first
 * barrier's exit); moves_cost: pages moved by cost; fetched_r1: pages rank 1
 * fetched in the last quarter.  Run it with cluster_migrate_reads=0 and
 * =1 alternately and compare the ratios of one run (bench/README.md).
 */
#include <pagehome.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>

#define PAGE 4096
#define WPP (PAGE / 8)

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return v[n / 2];
}

/* one counter of this rank by name */
static long long stat_of(const char *key)
{
    unsigned long long v = 0;
    return ph_cluster_stat(key, &v) == 0 ? (long long)v : -1;
}

int main(int argc, char **argv)
{
    long pages = 64, rounds = 200;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--pages") && i + 1 < argc)
            pages = atol(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atol(argv[++i]);
    }
    if (ph_cluster_init(&argc, &argv) != 0) {
        fprintf(stderr, "bench_cost_rule: %s\n", ph_last_error());
        return 1;
    }
    int n = ph_cluster_nranks(), me = ph_cluster_rank();
    if (n < 3 || pages < 1 || rounds < 8) {
        if (me == 0)
            fprintf(stderr, "bench_cost_rule: needs 3 ranks or more, "
                    "--pages >= 1, --rounds >= 8\n");
        ph_cluster_finalize();
        return 2;
    }
    ph_placement_t pl;
    ph_placement_parse(&pl, "node:0");
    uint64_t *a = ph_cluster_alloc((size_t)pages * PAGE, &pl);
    if (!a) {
        fprintf(stderr, "bench_cost_rule: %s\n", ph_last_error());
        return 1;
    }
    double *t = malloc((size_t)rounds * sizeof *t);
    long bad = 0;
    long long f_last = 0;
    long q = rounds / 4;
    for (long r = 0; r < rounds; r++) {
        if (r == rounds - q)
            f_last = stat_of("pages_fetched");
        double t0 = now_us();
        if (me > 0)
            for (long p = 0; p < pages; p++)
                for (long w = me - 1; w < WPP; w += n - 1)
                    a[p * WPP + w] = (uint64_t)r * 1000003u + (uint64_t)(p * WPP + w);
        ph_cluster_barrier();
        t[r] = now_us() - t0;
        if (me == n - 1)
            for (long p = 0; p < pages; p++)
                for (long w = 0; w < WPP; w++)
                    bad += a[p * WPP + w] !=
                           (uint64_t)r * 1000003u + (uint64_t)(p * WPP + w);
        ph_cluster_barrier();            /* the check before the next writes */
    }
    f_last = stat_of("pages_fetched") - f_last;
    long long fetched[2] = {f_last, 0};
    /* rank 1's fetches to rank 0: through the arena (a word each) */
    uint64_t *box = ph_cluster_alloc(PAGE, &pl);
    if (me == 1)
        box[0] = (uint64_t)fetched[0];
    if (me == n - 1)
        box[1] = (uint64_t)bad;
    ph_cluster_barrier();
    if (me == 0) {
        char reads[8] = "?";
        ph_config_get("cluster_migrate_reads", reads, sizeof reads);
        double first = median(t, (int)q), last = median(t + rounds - q, (int)q);
        printf("cost-rule ranks=%d pages=%ld rounds=%ld reads=%s first_us=%.1f "
               "last_us=%.1f moves_cost=%lld fetched_r1=%llu wrong=%llu\n", n,
               pages, rounds, reads, first, last, stat_of("migrations_cost"),
               (unsigned long long)box[0], (unsigned long long)box[1]);
    }
    int rc = box[1] == 0 ? 0 : 1;
    ph_cluster_barrier();
    ph_cluster_free(box);
    ph_cluster_free(a);
    free(t);
    ph_cluster_finalize();
    return rc;
}
