/*
 * common.h -- what the workload programs of workloads/ share: argument
 * parsing (bad input: one "usage:" line on stderr, exit status 2), a
 * wall clock, the verification verdict line, fault injection for the
 * self-tests, and a counter-based random number generator (the value for
 * index i does not depend on which thread asks, so results do not depend
 * on the thread count).
 */
#ifndef WL_COMMON_H
#define WL_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* A whole decimal number in [lo, hi]: digits only (an optional leading
 * '+' or '-'), no trailing text.  0 and *out set, or -1. */
int wl_parse_long(const char *s, long lo, long hi, long *out);
/* Index of s in names[0..count), or -1. */
int wl_parse_name(const char *s, const char *const *names, int count);
/* "usage: LINE" on stderr, then exit(2). */
_Noreturn void wl_usage(const char *line);
/* "PROG: WHAT" on stderr, then exit(1) (out of memory, library errors). */
_Noreturn void wl_die(const char *prog, const char *what);

/* Monotonic wall-clock seconds. */
double wl_wtime_s(void);

/* WL_FAULT=1 in the environment: the program corrupts one value of its
 * parallel result before verifying it, so that the tests can show that
 * the verification fails when the result is wrong. */
int wl_fault_injected(void);
/* stdout: "verification: ok (HOW)" or "verification: FAILED (HOW)";
 * returns the exit status (0 or 1). */
int wl_verdict(int ok, const char *how);

/* splitmix64's finaliser: a bijective mix of 64 bits. */
uint64_t wl_mix64(uint64_t x);
/* Uniform double in [0, 1) from the top 53 bits of x. */
double wl_unit(uint64_t x);
/* The k-th value of the stream `seed` (counter based: any order). */
uint64_t wl_random(uint64_t seed, uint64_t k);

#endif
