/*
 * fft_dsm.c -- the 1D FFT of paper 002 section 3 on cluster mode's
 * distributed shared memory: implementations 0-4 (workloads/fft_gangs.h)
 * over ph_cluster_gang_*, the gangs of the cluster's team (ranks x
 * OMP_NUM_THREADS).
 *
 *   fft_dsm IMPL LOG2N [CACHE_KB] [--reps R] [--no-check] [--stats PREFIX]
 *
 * IMPL as fft_gangs: 0 (rank 0 alone, sequential hybrid, pages homed on
 * rank 0), 1 and 2 (round-robin homes, cyclic:1), 3 and 4 (block homes),
 * flat (no gangs: every stage of the iterative transform shared by the
 * whole team, a cluster barrier after each; block homes).  S and T come
 * from ph_cluster_alloc; the twiddles are private to each rank (the same
 * values everywhere).  The input is written by the threads whose block
 * holds it (block homes: by the home) before the clock starts.
 *
 * Prints on rank 0, per repetition and then the median:
 *   fft_dsm impl=I N=n ranks=R threads=T rep=k seconds=S fetched=P gets=G
 * (S: wall time of the transform between two cluster barriers; P: pages
 * fetched by all ranks during it, on faults and by barriers' refreshes,
 * G: the gets that fetched them, from the DSM's statistics), then the
 * verdict: rank 0 computes the sequential hybrid transform of the same
 * input in private memory and compares every point (equal bit for bit);
 * --no-check skips it.  WL_FAULT=1 corrupts one shared value first.
 * --stats PREFIX: every rank writes its DSM statistics to
 * PREFIX.rR.begin.json and PREFIX.rR.end.json at the two barriers around
 * the last repetition's transform (dsm_stats.h), so that one transform's
 * own counts are the differences (bench/cluster/fft_table2.py).
 */
#include "common.h"
#include "dsm_stats.h"
#include "fft_gangs.h"

#include <omp.h>
#include <pagehome.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PROG "fft_dsm"
#define USAGE PROG " 0|1|2|3|4|flat LOG2N [CACHE_KB] [--reps R] [--no-check]" \
                   " [--stats PREFIX]" \
                   "  (3 <= LOG2N <= 26, 1 <= CACHE_KB <= 1048576, 1 <= R <= 100)"

static const char *const impls[] = {"0", "1", "2", "3", "4", "flat"};

static int gang_range(size_t n, size_t *b, size_t *e)
{
    long lb, le;
    int rc = ph_cluster_gang_range((long)n, &lb, &le);
    *b = (size_t)lb;
    *e = (size_t)le;
    return rc;
}

static int team_range(size_t n, size_t *b, size_t *e)
{
    long lb, le;
    int rc = ph_cluster_static_range((long)n, 0, &lb, &le);
    *b = (size_t)lb;
    *e = (size_t)le;
    return rc;
}

static const fg_ops dsm_ops = {ph_cluster_gang_split, ph_cluster_gang_join,
                               ph_cluster_gang_barrier, ph_cluster_gang_size,
                               gang_range, ph_cluster_barrier, team_range};

/* One of this rank's counters so far (the DSM's statistics). */
static long dsm_stat(const char *name)
{
    unsigned long long v = 0;
    if (ph_cluster_stat(name, &v) < 0)
        wl_die(PROG, "cannot read the DSM statistics");
    return (long)v;
}

/* Pages fetched so far, on faults and by barriers' refreshes; the gets. */
static long dsm_fetched(void)
{
    return dsm_stat("pages_fetched") + dsm_stat("pages_refreshed");
}

static long dsm_gets(void)
{
    return dsm_stat("fetch_calls") + dsm_stat("refresh_calls");
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (ph_cluster_init(&argc, &argv) < 0)
        wl_die(PROG, ph_last_error());
    long log2n, cache_kb = 256, reps = 1;
    int check = 1, npos = 0;
    const char *pos[3] = {0}, *stats = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--no-check"))
            check = 0;
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            if (wl_parse_long(argv[++i], 1, 100, &reps) != 0)
                wl_usage(USAGE);
        } else if (!strcmp(argv[i], "--stats") && i + 1 < argc) {
            stats = argv[++i];
        } else if (npos < 3)
            pos[npos++] = argv[i];
        else
            wl_usage(USAGE);
    }
    if (npos < 2)
        wl_usage(USAGE);
    int impl = wl_parse_name(pos[0], impls, 6);
    if (impl < 0 || wl_parse_long(pos[1], 3, 26, &log2n) != 0 ||
        (npos == 3 && wl_parse_long(pos[2], 1, 1L << 20, &cache_kb) != 0))
        wl_usage(USAGE);
    int me = ph_cluster_rank(), nr = ph_cluster_nranks();
    size_t n = (size_t)1 << log2n, bytes = n * sizeof(fg_cplx);

    const char *ptext = impl == 0 ? "node:0"
                        : (impl == 1 || impl == 2) ? "cyclic:1" : "block";
    ph_placement_t pl;
    if (ph_placement_parse(&pl, ptext) != 0)
        wl_die(PROG, ph_last_error());
    fg_cplx *S = ph_cluster_alloc(bytes, &pl), *T = ph_cluster_alloc(bytes, &pl);
    /* per rank: pages fetched, then gets (fetch calls) */
    long *fetched = ph_cluster_alloc((size_t)nr * 2 * sizeof(long), NULL);
    fg_cplx *w = malloc(n / 2 * sizeof *w);
    if (!S || !T || !fetched || !w)
        wl_die(PROG, ph_last_error());
    fg_twiddles(w, n, 0, n / 2);
    fg_plan p = {w, n, ((size_t)cache_kb << 10) / sizeof(fg_cplx),
                 impl == 2 || impl == 4, &dsm_ops, 0};

    double *secs = malloc((size_t)reps * sizeof *secs);
    long total_fetched = 0, total_gets = 0;
    if (!secs)
        wl_die(PROG, "out of memory");
    for (long rep = 0; rep < reps; rep++) {
        /* the input, written where its block is */
#pragma omp parallel
        {
            size_t b, e;
            team_range(n, &b, &e);
            for (size_t k = b; k < e; k++)
                S[k] = fg_input(k);
            ph_cluster_barrier();
        }
        long f0 = dsm_fetched(), g0 = dsm_gets();
        const int last = rep == reps - 1;
        ph_cluster_barrier();
        if (last)
            wl_dsm_stats_snapshot(PROG, stats, me, "begin");
        double t0 = wl_wtime_s();
        if (impl == 0) {
            if (me == 0)
                fg_hybrid(S, T, n, &p);
        } else {
#pragma omp parallel
            {
                if (impl == 5)
                    fg_flat(S, T, n, &p);
                else
                    fg_impl(S, T, n, &p);
            }
        }
        ph_cluster_barrier();
        double dt = wl_wtime_s() - t0;
        if (last)
            wl_dsm_stats_snapshot(PROG, stats, me, "end");
        fetched[2 * me] = dsm_fetched() - f0;
        fetched[2 * me + 1] = dsm_gets() - g0;
        ph_cluster_barrier();
        total_fetched = total_gets = 0;
        for (int r = 0; r < nr; r++) {
            total_fetched += fetched[2 * r];
            total_gets += fetched[2 * r + 1];
        }
        secs[rep] = dt;
        if (me == 0)
            printf("%s impl=%s N=%zu ranks=%d threads=%d homes=%s rep=%ld "
                   "seconds=%.4f fetched=%ld gets=%ld\n", PROG, impls[impl], n,
                   nr, omp_get_max_threads(), ptext, rep, dt, total_fetched,
                   total_gets);
        ph_cluster_barrier();
    }
    qsort(secs, (size_t)reps, sizeof *secs, cmp_double);
    if (me == 0)
        printf("%s impl=%s N=%zu ranks=%d threads=%d homes=%s median_seconds=%.4f "
               "fetched=%ld gets=%ld\n", PROG, impls[impl], n, nr,
               omp_get_max_threads(), ptext, secs[reps / 2], total_fetched,
               total_gets);
    if (me == 0 && wl_fault_injected())
        S[n / 3].re += 1e-6;

    int status = 0;
    if (me == 0) {
        if (check) {
            fg_cplx *rs = malloc(bytes), *rt = malloc(bytes);
            if (!rs || !rt)
                wl_die(PROG, "out of memory for the reference");
            for (size_t k = 0; k < n; k++)
                rs[k] = fg_input(k);
            fg_hybrid(rs, rt, n, &p);
            size_t same;
            double e = fg_compare(S, rs, n, &same);
            char how[200];
            snprintf(how, sizeof how, "%zu of %zu points equal to the "
                     "sequential hybrid FFT, relative error %.3g%s", same, n, e,
                     p.failed ? ", a gang call FAILED" : "");
            status = wl_verdict(!p.failed && same == n, how);
            free(rs);
            free(rt);
        } else {
            printf("verification: skipped (--no-check)\n");
        }
        fflush(stdout);
    }
    ph_cluster_barrier();
    free(secs);
    free(w);
    ph_cluster_free(fetched);
    ph_cluster_free(T);
    ph_cluster_free(S);
    if (ph_cluster_finalize() < 0)
        wl_die(PROG, ph_last_error());
    return status;
}
