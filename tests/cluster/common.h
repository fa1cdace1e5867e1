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
#include <unistd.h>

#include <stdatomic.h>

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
