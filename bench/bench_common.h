/*
 * bench_common.h -- what the benchmark programs of bench/ share beyond
 * pagehome's base layer: the thread's CPU clock, the median of
 * repetitions, numbers from the command line, and a reader of
 * /proc/self/status.  The wall clock is base/clock.h's ph_now_ns, the
 * comparators base/sort.h's, the hugetlbfs pools os/hugetlb.h's.
 * bench_common links base/ alone (pure helpers), so bench_run_kernel,
 * which is measured plain and under `pagehome run`, takes nothing else of
 * pagehome.
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* ---- clocks ---------------------------------------------------------------- */

/* (Wall-clock nanoseconds: ph_now_ns of base/clock.h.)
 * CPU nanoseconds of the calling thread (CLOCK_THREAD_CPUTIME_ID). */
uint64_t bench_thread_cpu_ns(void);

/* ---- the median of repetitions ----------------------------------------------- */

/* The median of v[0..n) (sorts v; the mean of the two middle values when n
 * is even); 0 when n <= 0. */
double bench_median(double *v, int n);
uint64_t bench_median_u64(uint64_t *v, int n);

/* ---- the command line ------------------------------------------------------- */

/* A whole decimal number in [lo, hi] (no sign, no trailing text): 0 and
 * *out set, or -1. */
int bench_parse_count(const char *s, size_t lo, size_t hi, size_t *out);
/* A size in bytes, "1048576", "64K", "512M", "1G" (binary units, either
 * case); 0 when s is not a size. */
size_t bench_parse_bytes(const char *s);

/* ---- /proc ----------------------------------------------------------------- */

/* A "Name:   N kB" field of /proc/self/status (VmHWM, RssAnon, VmPTE...)
 * in bytes; 0 if unknown. */
size_t bench_status_bytes(const char *name);

#endif
