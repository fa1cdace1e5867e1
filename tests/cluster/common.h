/*
 * common.h -- helpers of the cluster-mode MPI tests (tests/cluster/).
 *
 * Each test is an SPMD program started by run.sh on N ranks.  CHECK
 * failures print the rank and go on; cl_finish() makes every rank agree
 * (a failure anywhere fails the job: exit 1 on every rank) and prints
 * "PASS name (N checks)" on rank 0.  cl_skip() exits 77 on every rank.
 */
#ifndef PH_TESTS_CLUSTER_COMMON_H
#define PH_TESTS_CLUSTER_COMMON_H

#include <pagehome.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <stdatomic.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* The tests' seeded hashes: cl_mix is splitmix64's finaliser, cl_h3 a
 * hash of three numbers under a seed (the same on every rank). */
static inline uint64_t cl_mix(uint64_t x)
{
    uint64_t z = x + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline uint64_t cl_h3(uint64_t seed, uint64_t a, uint64_t b, uint64_t c)
{
    return cl_mix(cl_mix(cl_mix(seed ^ a) ^ b) ^ c);
}

/* A numeric tunable's value in effect (ph_config_get), -1 when unknown. */
static inline long cl_tunable(const char *name)
{
    char buf[64];
    if (ph_config_get(name, buf, sizeof buf) < 0)
        return -1;
    return strtol(buf, NULL, 10);
}

/* A counter of this rank's statistics by name (ph_cluster_stat), -1 when
 * there is none. */
static inline long long cl_stat_of(const char *key)
{
    unsigned long long v = 0;
    return ph_cluster_stat(key, &v) == 0 ? (long long)v : -1;
}

/* Lock-protected accumulators: `nacc` counters 64 bytes apart (acc[i *
 * 8]) under `nlocks` locks.  cl_acc_add: global thread g's `incs`
 * additions of round t, each under its counter's lock.  cl_acc_bad: the
 * counters that differ from the sum of every thread's additions over
 * `rounds` rounds (G threads in all). */
static inline uint64_t cl_acc_step(uint64_t seed, int t, long g, int k)
{
    return cl_h3(seed, 5, (uint64_t)t * 1000003u + (uint64_t)g, (uint64_t)k);
}

static inline void cl_acc_add(uint64_t *acc, int nacc, int nlocks, int incs,
                              uint64_t seed, int t, long g)
{
    for (int k = 0; k < incs; k++) {
        uint64_t h = cl_acc_step(seed, t, g, k);
        size_t i = (size_t)(h % (uint64_t)nacc);
        ph_cluster_lock((int)(i % (size_t)nlocks));
        acc[i * 8] += (h >> 32) % 100 + 1;
        ph_cluster_unlock((int)(i % (size_t)nlocks));
    }
}

static inline long cl_acc_bad(const uint64_t *acc, int nacc, int incs,
                              uint64_t seed, int rounds, long G)
{
    uint64_t *want = calloc((size_t)nacc, sizeof *want);
    if (!want)
        return nacc;
    for (int t = 0; t < rounds; t++)
        for (long g = 0; g < G; g++)
            for (int k = 0; k < incs; k++) {
                uint64_t h = cl_acc_step(seed, t, g, k);
                want[h % (uint64_t)nacc] += (h >> 32) % 100 + 1;
            }
    long bad = 0;
    for (int i = 0; i < nacc; i++)
        bad += acc[(size_t)i * 8] != want[i];
    free(want);
    return bad;
}

/* The OpenMP team's size and this thread's number (1 and 0 without
 * OpenMP). */
static inline int cl_max_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

static inline int cl_thread_num(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

/* atomic: CHECK runs in OpenMP threads too */
static _Atomic int cl_fail_, cl_pass_;

#define CHECK(cond)                                                          \
    do {                                                                     \
        if (cond) {                                                          \
            cl_pass_++;                                                      \
        } else {                                                             \
            cl_fail_++;                                                      \
            fprintf(stderr, "rank %d: %s:%d: CHECK failed: %s (%s)\n",       \
                    ph_cluster_rank(), __FILE__, __LINE__, #cond,            \
                    ph_last_error());                                        \
        }                                                                    \
    } while (0)

#define CHECK_EQ(a, b)                                                       \
    do {                                                                     \
        long long a_ = (long long)(a), b_ = (long long)(b);                  \
        if (a_ == b_) {                                                      \
            cl_pass_++;                                                      \
        } else {                                                             \
            cl_fail_++;                                                      \
            fprintf(stderr, "rank %d: %s:%d: CHECK_EQ failed: %s == %s "     \
                    "(%lld vs %lld)\n", ph_cluster_rank(), __FILE__,         \
                    __LINE__, #a, #b, a_, b_);                               \
        }                                                                    \
    } while (0)

#define CHECK_MSG(needle)                                                    \
    do {                                                                     \
        const char *m_ = ph_last_error();                                    \
        if (m_ && strstr(m_, (needle))) {                                    \
            cl_pass_++;                                                      \
        } else {                                                             \
            cl_fail_++;                                                      \
            fprintf(stderr, "rank %d: %s:%d: message \"%s\" lacks \"%s\"\n", \
                    ph_cluster_rank(), __FILE__, __LINE__, m_ ? m_ : "",     \
                    (needle));                                               \
        }                                                                    \
    } while (0)

/* Note this process in the runner's pid directory (run.sh kills what is
 * left of a job by pid). */
static inline void cl_note_pid(void)
{
    const char *d = getenv("PH_TEST_PIDDIR");
    if (!d || !*d)
        return;
    char path[512];
    snprintf(path, sizeof path, "%s/pid.%ld", d, (long)getpid());
    FILE *f = fopen(path, "w");
    if (f)
        fclose(f);
}

/* Start cluster mode or fail the test loudly. */
static inline void cl_init(int *argc, char ***argv)
{
    cl_note_pid();
    if (ph_cluster_init(argc, argv) < 0) {
        fprintf(stderr, "ph_cluster_init failed: %s\n", ph_last_error());
        exit(1);
    }
}

/* Skip the test (every rank must call it alike). */
static inline void cl_skip(const char *why)
{
    if (ph_cluster_rank() == 0)
        printf("SKIP: %s\n", why);
    fflush(stdout);
    ph_cluster_finalize();
    exit(77);
}

/* Every rank agrees on the outcome; finalize; exit status. */
static inline int cl_finish(const char *name)
{
    /* agree through shared memory: one int per rank */
    int n = ph_cluster_nranks(), me = ph_cluster_rank();
    int *fails = ph_cluster_alloc((size_t)n * sizeof(int), NULL);
    int total = cl_fail_;
    if (fails) {
        fails[me] = cl_fail_;
        ph_cluster_barrier();
        total = 0;
        for (int r = 0; r < n; r++)
            total += fails[r];
        ph_cluster_barrier();
        ph_cluster_free(fails);
    }
    if (me == 0)
        printf("%s %s (%d checks on rank 0, %d failures in all)\n",
               total ? "FAIL" : "PASS", name, cl_pass_ + cl_fail_, total);
    fflush(stdout);
    if (ph_cluster_finalize() < 0) {
        fprintf(stderr, "ph_cluster_finalize failed: %s\n", ph_last_error());
        return 1;
    }
    return total ? 1 : 0;
}

#endif
