/*
 * prog_locality.h -- what the prog_* programs share (prog_locality.c):
 * their self-measurement of where their grids' pages are, and reading
 * their numeric arguments.  Part of the programs, not of pagehome.
 */
#ifndef PROG_LOCALITY_H
#define PROG_LOCALITY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

void prog_note_thread(int tid);
void prog_tally(const void *base, size_t unit_bytes, int nunits, int lo, int hi,
                int nthreads);
void prog_report(const char *name, int nthreads);

/* A whole decimal number in [lo, hi]: 0 and *out set, or -1. */
int prog_parse_int(const char *s, int lo, int hi, int *out);

#ifdef __cplusplus
}
#endif

#endif
