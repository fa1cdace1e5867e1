/*
 * test_write_predict.c SEED -- the write paths that do not fault, checked
 * against a sequential reference:
 *   - write prediction (cluster_write_predict): a write fault on a
 *     cached page this rank wrote in its last copy makes the following
 *     cached pages it wrote in their last copies writable too, with
 *     twins, and a write miss so the pages it fetches ahead (a read miss
 *     makes none writable); writes to them are seen by diffing only.  The
 *     array's homes are blocks (block placement), so each rank has runs
 *     of cached pages homed at one other rank;
 *     the pages made writable with a run take no page fault at their
 *     first store (counted by getrusage);
 *   - a page stays writable after ph_cluster_release and after a lock
 *     release (a snapshot becomes its twin); later writes are found by
 *     the next diff.
 * Every page is written by every rank and by several threads of a rank
 * in every round (words interleaved: false sharing across ranks and
 * threads), so each barrier invalidates every copy and the next round
 * refetches it.  In round t the owner of word w reads and rewrites it
 * (x = f(x, t): a read miss, then a write to the page) or writes it blind
 * (a write miss on an invalid page), half of its words, then a
 * ph_cluster_release of the whole array while the other threads of the
 * rank go on writing, then the other half.  Lock-protected accumulators
 * share pages under different locks, each rank adding to them between
 * its writes.  Each round ends with a barrier and random reads checked
 * against the reference; at the end every word and accumulator is
 * checked on every rank, and the statistics must show the predicted
 * installs (none when the tunable is off, or with one rank).
 */
#include "common.h"


#ifdef _OPENMP
#include <omp.h>
#endif

#define PAGE 4096
#define NPAGES 24
#define WORDS (NPAGES * PAGE / 8)
#define ROUNDS 12
#define READS 400
#define NACC 24
#define NLOCKS 5
#define INCS 20

static uint64_t seed;

/* the thread (of G) that owns word w in round t: neighbouring words have
 * different owners, so every page has writers on every rank */
static long owner(size_t w, int t, long G)
{
    return (long)((w * 7 + (size_t)t) % (size_t)G);
}

/* read-modify-write (1) or blind write (0) */
static int rmw(size_t w, int t)
{
    return (cl_h3(seed, 2, (uint64_t)t, (uint64_t)w) & 1) != 0;
}

/* the new value of w in round t, from its value before */
static uint64_t next(size_t w, int t, uint64_t old)
{
    return rmw(w, t) ? cl_mix(old + (uint64_t)t + 1)
                     : cl_h3(seed, 3, (uint64_t)t, (uint64_t)w);
}

int main(int argc, char **argv)
{
    cl_init(&argc, &argv);
    seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 1;
    int me = ph_cluster_rank(), n = ph_cluster_nranks();
    ph_placement_t pl;
    ph_placement_parse(&pl, "block");
    uint64_t *x = ph_cluster_alloc(WORDS * sizeof *x, &pl);
    ph_placement_parse(&pl, "cyclic:1");
    uint64_t *acc = ph_cluster_alloc(NACC * 64, &pl);   /* 8 words apart */
    uint64_t *refv = calloc(WORDS, sizeof *refv);
    CHECK(x && acc && refv);
    if (!x || !acc || !refv)
        return cl_finish("write_predict");
    int threads = cl_max_threads();
    long G = (long)n * threads;
    long bad_reads = 0;
#pragma omp parallel reduction(+ : bad_reads)
    {
        int tid = cl_thread_num();
        long g = (long)me * threads + tid;
        for (int t = 0; t < ROUNDS; t++) {
            size_t mine = 0, done = 0;
            for (size_t w = 0; w < WORDS; w++)
                mine += owner(w, t, G) == g;
            for (size_t w = 0; w < WORDS; w++) {
                if (owner(w, t, G) != g)
                    continue;
                x[w] = next(w, t, rmw(w, t) ? x[w] : 0);
                if (++done == mine / 2) {
                    /* halfway: the whole array released while the other
                     * threads of this rank go on writing */
                    if (ph_cluster_release(x, WORDS * sizeof *x) < 0)
                        bad_reads += 1000000;
                    cl_acc_add(acc, NACC, NLOCKS, INCS, seed, t, g);
                }
            }
            ph_cluster_barrier();
            /* the reference of this round, one thread per rank */
#pragma omp single
            for (size_t w = 0; w < WORDS; w++)
                refv[w] = next(w, t, refv[w]);
            for (int k = 0; k < READS; k++) {
                size_t w = (size_t)(cl_h3(seed, 4, (uint64_t)(t * 1000003 + g),
                                       (uint64_t)k) % WORDS);
                if (x[w] != refv[w])
                    bad_reads++;
            }
            /* nobody writes before everybody has read */
            ph_cluster_barrier();
        }
    }
    CHECK_EQ(bad_reads, 0);
    long bad_final = 0;
    for (size_t w = 0; w < WORDS; w++)
        bad_final += x[w] != refv[w];
    CHECK_EQ(bad_final, 0);
    CHECK_EQ(cl_acc_bad(acc, NACC, INCS, seed, ROUNDS, G), 0);
    /* the predicted installs happened (or not, as the tunable says) */
    char on[16] = "1";
    ph_config_get("cluster_write_predict", on, sizeof on);
    long long predicted = cl_stat_of("twins_predicted");
    if (n > 1 && strtol(on, NULL, 10) != 0)
        CHECK(predicted > 0);
    else
        CHECK_EQ(predicted, 0);
    /* A read miss makes no page writable and no twin; the write fault
     * that follows on a page written before makes the rest of the run
     * writable with it.  One thread per rank: every rank writes its own
     * word of every page (the barrier invalidates every copy), reads a
     * word of every page (read misses), then writes its word again. */
    ph_cluster_barrier();
    uint64_t *mine = x + (size_t)me;
    for (size_t pg = 0; pg < NPAGES; pg++)
        mine[pg * (PAGE / 8)] = cl_h3(seed, 6, pg, (uint64_t)me);
    ph_cluster_barrier();
    long long twins0 = cl_stat_of("twins"), pred0 = cl_stat_of("twins_predicted");
    long long wf0 = cl_stat_of("fault_write_remote");
    uint64_t sum = 0, want_sum = 0;
    int other = (me + 1) % n;
    for (size_t pg = 0; pg < NPAGES; pg++) {
        sum += x[pg * (PAGE / 8) + (size_t)other];
        want_sum += cl_h3(seed, 6, pg, (uint64_t)other);
    }
    CHECK(sum == want_sum);
    CHECK_EQ(cl_stat_of("twins"), twins0);
    CHECK_EQ(cl_stat_of("twins_predicted"), pred0);
    ph_cluster_barrier();      /* everybody has read before anybody writes */
    /* the homes: migration may have moved some (the cost rule weighs
     * measured times, so which ones depends on the machine's load); a
     * write fault predicts at most the rest of a run of remote pages */
    int is_remote[NPAGES];
    for (size_t pg = 0; pg < NPAGES; pg++)
        is_remote[pg] = ph_cluster_home(x + pg * (PAGE / 8)) != me;
    long long remote = 0, runs = 0, in_run = 0, shortest = NPAGES;
    for (size_t pg = 0; pg < NPAGES; pg++) {
        int r = is_remote[pg];
        remote += r;
        runs += r && (in_run == 0 || in_run == 64);
        in_run = r ? (in_run == 64 ? 1 : in_run + 1) : 0;
        int ends = in_run > 0 && (pg + 1 == NPAGES || in_run == 64 ||
                                  !is_remote[pg + 1]);
        if (ends && in_run < shortest)
            shortest = in_run;
    }
    /* this thread's page faults at its stores to remote pages: a page
     * made writable with its run must take none at its first store
     * (under userfaultfd a run of 8 or more is mapped again writable,
     * not just unprotected: the kernel would leave each PTE read-only
     * until a minor fault) */
    long long minflt = 0;
    for (size_t pg = 0; pg < NPAGES; pg++) {
        struct rusage ru0, ru1;
        getrusage(RUSAGE_THREAD, &ru0);
        mine[pg * (PAGE / 8)] = cl_h3(seed, 7, pg, (uint64_t)me);
        getrusage(RUSAGE_THREAD, &ru1);
        if (is_remote[pg])
            minflt += (long long)(ru1.ru_minflt - ru0.ru_minflt);
    }
    long long wf = cl_stat_of("fault_write_remote") - wf0;
    long long pred = cl_stat_of("twins_predicted") - pred0;
    if (n > 1 && strtol(on, NULL, 10) != 0) {
        /* one fault per run of cached pages (block homes) */
        if (runs < remote) {
            CHECK(pred > 0);
            CHECK(wf < remote);
        }
        CHECK_EQ(wf + pred, remote);
        /* the write faults themselves count (each is a fault the kernel
         * retries once resolved: 1-2 each); a userfaultfd for user-mode
         * faults only lifts the protection alone (fault_uffd.c) */
        ph_cluster_info_t info;
        ph_cluster_info(&info);
        int user_only = strstr(info.fault_mechanism, "-user") != NULL;
        if (shortest >= 8 && remote > 0 && !user_only) {
            CHECK(minflt <= 2 * wf);
            /* under userfaultfd, by mapping the runs anew */
            if (strncmp(info.fault_mechanism, "userfaultfd", 11) == 0)
                CHECK(cl_stat_of("pages_remapped") >= pred);
            else
                CHECK_EQ(cl_stat_of("pages_remapped"), 0);
            if (minflt > 2 * wf)
                fprintf(stderr, "rank %d: %lld page faults storing to %lld "
                        "remote pages (%lld write faults, runs of %lld or "
                        "more)\n", me, minflt, remote, wf, shortest);
        }
        if (wf + pred != remote || (runs < remote && pred == 0))
            fprintf(stderr, "rank %d: %lld remote pages in %lld runs: %lld "
                    "write faults, %lld predicted\n", me, remote, runs, wf,
                    pred);
    } else {
        CHECK_EQ(pred, 0);
        CHECK_EQ(wf, remote);
    }
    ph_cluster_barrier();
    long bad_words = 0;
    for (size_t pg = 0; pg < NPAGES; pg++)
        for (int r = 0; r < n; r++)
            bad_words += x[pg * (PAGE / 8) + (size_t)r] !=
                         cl_h3(seed, 7, pg, (uint64_t)r);
    CHECK_EQ(bad_words, 0);
    ph_cluster_barrier();
    ph_cluster_free(acc);
    ph_cluster_free(x);
    free(refv);
    return cl_finish("write_predict");
}
