/*
 * nas_common.h -- what the NAS-style kernels of workloads/nas/ share:
 * class and number parsing (bad input: one usage line on stderr, exit 2),
 * wall-clock timing, the report (a deterministic stdout: the verification
 * value and "verification: ok|FAILED"; the time goes to stderr so that two
 * runs with the same OMP_NUM_THREADS print identical stdout), a small
 * deterministic random number generator and deterministic parallel sums.
 * The ADI solvers' (bt, sp) scaffolding is adi.h.
 *
 * Written for this project from the NAS Parallel Benchmarks' public
 * descriptions; no NPB code.
 */
#ifndef NAS_COMMON_H
#define NAS_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* ---- arguments ---------------------------------------------------------- */

/* The problem classes: S (small: < 2 s on one slow core), W (workstation),
 * A (NPB class A's order of magnitude, < 2 GB). */
enum { NAS_CLASS_S = 0, NAS_CLASS_W = 1, NAS_CLASS_A = 2, NAS_NCLASSES = 3 };

/* "S", "W" or "A" (exactly one letter, upper or lower case) -> class index;
 * anything else -> -1. */
int nas_parse_class(const char *s);
/* The class letter of an index ('S', 'W', 'A'). */
char nas_class_letter(int cls);
/* A whole decimal number in [lo, hi] (no sign games, no trailing text):
 * 0 and *out set, or -1. */
int nas_parse_long(const char *s, long lo, long hi, long *out);
/* Print "usage: LINE" on stderr and exit(2). */
#if defined(__GNUC__)
__attribute__((noreturn))
#endif
void nas_usage(const char *line);

/* ---- time and report ---------------------------------------------------- */

/* Wall-clock seconds (monotonic). */
double nas_wtime(void);
/* stdout: "PROG: class C, SIZE, ITERS iterations, T threads". */
void nas_header(const char *prog, int cls, const char *size, long iters);
/* stdout: "PROG: NAME = VALUE (must be <= LIMIT)" style line; returns ok. */
int nas_check_le(const char *prog, const char *name, double value,
                 double limit);
/* stderr: "PROG: time S s"; stdout: "verification: ok" or
 * "verification: FAILED".  Returns the exit status (0 ok, 1 failed). */
int nas_finish(const char *prog, double seconds, int ok);

/* WL_FAULT=1 in the environment asks the program to corrupt one value
 * during its run (the workload.nas_fault_* tests: the verification must
 * then fail).  Returns 1, and says WHAT on stderr, when it is set. */
int nas_fault(const char *prog, const char *what);

/* WL_SERIAL_BUILD=1 in the environment asks a program that builds its
 * data in parallel (cg's matrix) to build it on the master thread alone,
 * so that first touch puts all of it on the master's node, as the other
 * programs' serial initialisations do, without a memory policy (the
 * kernel's NUMA balancing may move such pages; it leaves bound ones).
 * The data are the same either way.  Returns 1, and says WHAT on stderr,
 * when it is set. */
int nas_serial_build(const char *prog, const char *what);

/* Allocation that exits with a message when memory runs out. */
void *nas_malloc(size_t bytes);

/* ---- random numbers ----------------------------------------------------- */

/* splitmix64's finaliser: a bijective 64-bit mix. */
uint64_t nas_mix64(uint64_t x);
/* Counter-based uniform double in [0, 1) for (seed, index): the same value
 * whichever thread asks, so parallel initialisation is reproducible. */
double nas_uniform(uint64_t seed, uint64_t index);
/* A sequential stream (splitmix64). */
typedef struct {
    uint64_t state;
} nas_rng_t;
void nas_rng_seed(nas_rng_t *r, uint64_t seed);
uint64_t nas_rng_next(nas_rng_t *r);
/* Uniform in [0, 1). */
double nas_rng_uniform(nas_rng_t *r);
/* Uniform integer in [0, n), n >= 1. */
uint64_t nas_rng_below(nas_rng_t *r, uint64_t n);

/* ---- deterministic sums ------------------------------------------------- */

/* Per-thread partial sums live at part[t * NAS_PAD] (one cache line each);
 * summing them in thread order gives the same bits on every run with the
 * same thread count (an OpenMP reduction clause need not). */
#define NAS_PAD 8
double nas_sum_partials(const double *part, int nthreads);

#endif
