/*
 * period.h -- transparent mode: finding the outer iteration in the stream
 * of parallel regions (period.c), and what the OMPT front end (ompt.c)
 * detected.  Private to src/preload/ and its tests; no OMPT types here.
 *
 * A detector is fed the identities of the regions the program runs, in
 * order (a region's codeptr_ra as uintptr_t, or a barrier's), and answers,
 * for each, whether an outer iteration ended right before it.
 *
 * Algorithm (online, O(max_period) per id while searching, O(1) once
 * locked but at a boundary that ends a cycle with ids that did not fit,
 * no allocation after ph_period_new):
 *   - keep the last `history` ids in a ring, and for every candidate
 *     period p <= max_period the length run[p] of the current streak of
 *     ids equal to the id p positions earlier;
 *   - lock onto the smallest p whose streak covers k repetitions of the
 *     cycle, k = max(2, ceil(min_span / p)) (so "A A" is not yet a period
 *     of 1, "A B A B" is a period of 2);
 *   - the cycle is the first of those repetitions; its anchor is its first
 *     id that occurs only once in the cycle (else its first id): an
 *     iteration boundary is reported each time the anchor comes again;
 *   - while locked, ids are matched against the cycle; an id not in the
 *     cycle (an irregular region: a convergence check every n steps) is
 *     tolerated; after a mismatch the position resynchronises on the next
 *     id found in the cycle;
 *   - a cycle with missing ids costs a point, a complete one earns one
 *     back (a new lock starts one point short of losing it); lose_after
 *     points, or no anchor for 2 * p + 16 ids, drop the
 *     lock and the search restarts on the history (the pattern changed);
 *   - at a boundary ending a cycle with ids that did not fit, a lock
 *     that left more than a quarter of the last max(q, 2p) ids unmatched
 *     while another period q has a streak over them (q's own k
 *     repetitions, and 2p ids; streaks taken from the history) gives way
 *     to the smallest such q (a relock: one unlock, one lock; the id
 *     that triggers it keeps its boundary).  The first lock is often on
 *     a part of the iteration that repeats (a V-cycle's up-sweep runs the
 *     same regions at every level) and would otherwise stay: its good
 *     cycles outweigh the one bad cycle an iteration.
 * A stream that has not locked after fallback_after ids (or has at most
 * one id) has no usable period: ph_period_fallback() says so, and the
 * transparent mode uses the sampling mechanism instead.
 *
 * Early boundary (cfg.early): a lock needs the cycle seen at least twice
 * and over min_span ids, so a loop of one region ("A A A A") locks at its
 * fourth iteration and its first boundary comes at the fifth.  With early
 * set, the first id fed that was seen before (the loop's first region
 * coming round again, after one pass of a candidate cycle) is reported as
 * a boundary too, once, before any lock: the engine then decides on the
 * first iteration's accesses instead of waiting for the lock.  A stream
 * whose first repetition is not an iteration's start ("A A B C") gets one
 * boundary at the wrong place, and its first interval is then a part of
 * an iteration; the lock and its boundaries follow as without it.
 */
#ifndef PH_PRELOAD_PERIOD_H
#define PH_PRELOAD_PERIOD_H

#include <stddef.h>
#include <stdint.h>

typedef struct ph_period ph_period;

typedef struct ph_period_cfg {
    size_t history;        /* ids kept (default 4096) */
    size_t max_period;     /* longest cycle looked for (default 256) */
    unsigned min_span;     /* ids the repetitions must cover (default 4) */
    unsigned lose_after;   /* bad cycles (net) that drop the lock (4) */
    size_t fallback_after; /* ids without a lock => fallback (64) */
    int early;             /* report the stream's first repetition (an id
                              seen before) as a boundary, once, before the
                              first lock (0: off, the default) */
} ph_period_cfg;

/* What a detector has seen. */
typedef struct ph_period_report {
    uint64_t ids;          /* ids fed */
    uint64_t boundaries;   /* iteration boundaries reported */
    uint64_t locks;        /* times a period was locked */
    uint64_t unlocks;      /* times a lock was dropped */
    uint64_t mismatches;   /* ids, while locked, not where expected */
    size_t period;         /* current period, 0 when not locked */
    uintptr_t anchor;      /* current anchor (valid when period > 0) */
    size_t last_period;    /* the period of the most recent lock, 0 never */
    uintptr_t last_anchor;
    int early;             /* the early boundary was reported (cfg.early) */
    int fallback;          /* ph_period_fallback() */
    size_t repeating;      /* not locked: the candidate period whose
                              current streak is longest, when that streak
                              covers at least 2 ids (the stream is
                              repeating itself: a lock may be near); else 0 */
} ph_period_report;

/* The defaults above. */
void ph_period_cfg_default(ph_period_cfg *cfg);
/* A new detector (NULL cfg = defaults); NULL/ENOMEM or EINVAL (a zero
 * field, or history < 2 * max_period). */
ph_period *ph_period_new_cfg(const ph_period_cfg *cfg);
ph_period *ph_period_new(void);
void ph_period_free(ph_period *pd);
/* Forget everything fed (keeps the memory). */
void ph_period_reset(ph_period *pd);

/* Feed the next id: 1 when an iteration boundary is right before it. */
int ph_period_feed(ph_period *pd, uintptr_t id);

/* The locked period (0 when none), its anchor. */
size_t ph_period_length(const ph_period *pd);
uintptr_t ph_period_anchor(const ph_period *pd);
/* 1 when the stream has no usable period so far: at most one id fed, or
 * fallback_after ids fed without ever locking. */
int ph_period_fallback(const ph_period *pd);
void ph_period_get_report(const ph_period *pd, ph_period_report *out);

/* ---- ompt.c ---------------------------------------------------------- */

/* One line describing what the OMPT front end detected ("N regions,
 * period P (anchor 0x...), B iteration boundaries", or the fallback);
 * returns snprintf's count.  Exported from libpagehome_preload.so so tests
 * can dlsym() it. */
__attribute__((visibility("default")))
int ph_preload_ompt_summary(char *buf, size_t len);

#endif
