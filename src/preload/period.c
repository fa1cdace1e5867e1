/*
 * period.c -- the outer iteration of a program, from the sequence of its
 * parallel regions (see period.h for the algorithm).  Pure: no OMPT, no
 * engine, no locking (the caller serialises the feeds).
 */
#include "preload/period.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct ph_period {
    ph_period_cfg cfg;
    uintptr_t *hist;     /* ring: id number i at hist[i % history] */
    uint64_t *mism;      /* ring: `mismatches` after id number i */
    uint32_t *run;       /* run[p], p in 1..max_period */
    uintptr_t *cycle;    /* the locked cycle, anchor first */
    uint64_t n;          /* ids fed */
    /* lock */
    size_t p;            /* 0 = searching */
    uint64_t locked_at;  /* the first id fed under this lock */
    size_t pos;          /* index in cycle of the next expected id */
    int anchor_unique;   /* the anchor occurs once in the cycle */
    unsigned bad;        /* net bad cycles */
    size_t seen, miss;   /* of the current cycle: cycle ids seen, others */
    size_t since_boundary;
    uint64_t unlocked_ids; /* ids fed since the last lock (or start) */
    int early_done;      /* the early boundary was reported */
    /* report */
    uint64_t boundaries, locks, unlocks, mismatches;
    size_t last_period;
    uintptr_t last_anchor;
};

void ph_period_cfg_default(ph_period_cfg *cfg)
{
    cfg->history = 4096;
    cfg->max_period = 256;
    cfg->min_span = 4;
    cfg->lose_after = 4;
    cfg->fallback_after = 64;
    cfg->early = 0;
}

ph_period *ph_period_new_cfg(const ph_period_cfg *cfg)
{
    ph_period_cfg c;
    if (cfg)
        c = *cfg;
    else
        ph_period_cfg_default(&c);
    if (!c.history || !c.max_period || !c.min_span || !c.lose_after ||
        !c.fallback_after || c.history < 2 * c.max_period ||
        c.max_period > UINT32_MAX / 2) {
        errno = EINVAL;
        return NULL;
    }
    ph_period *pd = calloc(1, sizeof *pd);
    if (!pd)
        return NULL;
    pd->cfg = c;
    pd->hist = calloc(c.history, sizeof *pd->hist);
    pd->mism = calloc(c.history, sizeof *pd->mism);
    pd->run = calloc(c.max_period + 1, sizeof *pd->run);
    pd->cycle = calloc(c.max_period, sizeof *pd->cycle);
    if (!pd->hist || !pd->mism || !pd->run || !pd->cycle) {
        ph_period_free(pd);
        errno = ENOMEM;
        return NULL;
    }
    return pd;
}

ph_period *ph_period_new(void)
{
    return ph_period_new_cfg(NULL);
}

void ph_period_free(ph_period *pd)
{
    if (!pd)
        return;
    free(pd->hist);
    free(pd->mism);
    free(pd->run);
    free(pd->cycle);
    free(pd);
}

void ph_period_reset(ph_period *pd)
{
    if (pd->n == 0)
        return;
    memset(pd->run, 0, (pd->cfg.max_period + 1) * sizeof *pd->run);
    pd->n = 0;
    pd->p = pd->pos = 0;
    pd->anchor_unique = 0;
    pd->bad = 0;
    pd->seen = pd->miss = pd->since_boundary = 0;
    pd->unlocked_ids = 0;
    pd->early_done = 0;
    pd->boundaries = pd->locks = pd->unlocks = pd->mismatches = 0;
    pd->last_period = 0;
    pd->last_anchor = 0;
}

static inline uintptr_t hist_at(const ph_period *pd, uint64_t i)
{
    return pd->hist[i % pd->cfg.history];
}

/* Streak a period p needs: k - 1 repetitions after the first cycle, with
 * k = max(2, ceil(min_span / p)). */
static inline size_t need_of(const ph_period *pd, size_t p)
{
    size_t k = (pd->cfg.min_span + p - 1) / p;
    if (k < 2)
        k = 2;
    return (k - 1) * p;
}

/* Lock onto period p, whose streak ends with the last id fed. */
static void lock_on(ph_period *pd, size_t p)
{
    uint64_t s = pd->n - pd->run[p] - p; /* first id of the first cycle */
    /* Anchor: of the ids that occur once in the cycle, the one the
     * program ran first (the loop's first region, also when the lock came
     * late: a cold iteration, or an insert in the first cycles); else the
     * cycle's first id. */
    uint64_t oldest = pd->n > pd->cfg.history ? pd->n - pd->cfg.history : 0;
    size_t a = 0;
    int unique = 0;
    uint64_t first_seen = UINT64_MAX;
    for (size_t j = 0; j < p; j++) {
        uintptr_t v = hist_at(pd, s + j);
        size_t cnt = 0;
        for (size_t m = 0; m < p && cnt < 2; m++)
            cnt += hist_at(pd, s + m) == v;
        if (cnt != 1)
            continue;
        uint64_t f = s + j;
        for (uint64_t i = oldest; i < s + j; i++) {
            if (hist_at(pd, i) == v) {
                f = i;
                break;
            }
        }
        if (f < first_seen) {
            first_seen = f;
            a = j;
            unique = 1;
        }
    }
    for (size_t j = 0; j < p; j++)
        pd->cycle[j] = hist_at(pd, s + (a + j) % p);
    size_t r = (size_t)((pd->n - s) % p); /* raw index of the next id */
    pd->p = p;
    pd->locked_at = pd->n;
    pd->pos = (r + p - a) % p;
    pd->anchor_unique = unique;
    /* On probation: one bad cycle before the first good ones unlocks (a
     * chance repetition in an irregular stream). */
    pd->bad = pd->cfg.lose_after - 1;
    /* The cycle in progress counts as seen so far (the cycle that ends at
     * the first boundary is judged too). */
    pd->seen = pd->pos ? pd->pos : p;
    pd->miss = 0;
    pd->since_boundary = 0;
    pd->locks++;
    pd->last_period = p;
    pd->last_anchor = pd->cycle[0];
}

/* Smallest period whose streak is long enough; lock onto it. */
static void try_lock(ph_period *pd)
{
    size_t maxp = pd->cfg.max_period;
    for (size_t p = 1; p <= maxp; p++) {
        if (pd->run[p] >= need_of(pd, p)) {
            lock_on(pd, p);
            return;
        }
    }
}

/* Period p's streak ending with the last id fed, from the history,
 * counted up to cap. */
static uint32_t streak(const ph_period *pd, size_t p, uint32_t cap)
{
    uint64_t n = pd->n;
    uint64_t oldest = n > pd->cfg.history ? n - pd->cfg.history : 0;
    uint32_t r = 0;
    for (uint64_t i = n; r < cap && i > oldest + p; i--, r++)
        if (hist_at(pd, i - 1) != hist_at(pd, i - 1 - p))
            break;
    return r;
}

/* The pattern changed: recompute every streak from the history and
 * search again. */
static void unlock(ph_period *pd)
{
    pd->p = 0;
    pd->unlocks++;
    pd->unlocked_ids = 0;
    for (size_t p = 1; p <= pd->cfg.max_period; p++)
        pd->run[p] = streak(pd, p, UINT32_MAX);
    try_lock(pd);
}

/* Locked on p, and the cycle that just ended had ids that did not fit.
 * If more than a quarter of the last max(q, 2p) ids did not fit p's
 * cycle while another period q explains them all (q's streak covers its
 * own need and 2p ids), q is the iteration: a longer one p was a part of
 * (a multigrid V-cycle whose up-sweep repeats a few regions at every
 * level), or a shorter one the program changed to.  Relock onto the
 * smallest such q; the old lock counts as dropped.  The ids judged lie
 * under the current lock, whose mismatches are counted.  An irregular
 * region now and then (a convergence check every ten steps) stays under
 * the quarter and keeps p.  Called at doubtful boundaries only, so a lock
 * that fits stays O(1) an id; a call looks at max_period windows' counts
 * and takes the streak of the q whose window had too many mismatches. */
static void try_relock(ph_period *pd)
{
    size_t p = pd->p, maxp = pd->cfg.max_period;
    uint64_t fed = pd->n - pd->locked_at; /* ids under this lock */
    uint64_t last = pd->n - 1;
    if (2 * p > fed)
        return;
    for (size_t q = 1; q <= maxp; q++) {
        size_t span = q > 2 * p ? q : 2 * p;
        if (span > fed)
            break;
        uint64_t off = pd->mismatches - pd->mism[(last - span) % pd->cfg.history];
        if (q == p || 4 * off <= span)
            continue;
        size_t need = need_of(pd, q);
        if (2 * p > q && 2 * p - q > need)
            need = 2 * p - q;
        if (streak(pd, q, (uint32_t)need) >= need) {
            pd->unlocks++;
            pd->unlocked_ids = 0;
            lock_on(pd, q);
            return;
        }
    }
}

/* Locked: match id against the cycle.  Returns 1 at a boundary. */
static int feed_locked(ph_period *pd, uintptr_t id)
{
    size_t p = pd->p;
    int boundary = 0;
    pd->since_boundary++;
    if (id == pd->cycle[pd->pos]) {
        boundary = pd->pos == 0;
        pd->pos = (pd->pos + 1) % p;
        pd->seen++;
    } else {
        pd->mismatches++;
        if (pd->anchor_unique && id == pd->cycle[0]) {
            boundary = 1;
            pd->pos = 1 % p;
            pd->seen++;
        } else {
            /* Resynchronise on the next place of id in the cycle (ids were
             * skipped); an id not in the cycle was inserted: stay. */
            int found = 0;
            for (size_t t = 1; t < p; t++) {
                size_t j = (pd->pos + t) % p;
                if (pd->cycle[j] == id) {
                    boundary = j == 0;
                    pd->pos = (j + 1) % p;
                    pd->seen++;
                    found = 1;
                    break;
                }
            }
            if (!found)
                pd->miss++;
        }
    }
    if (boundary) {
        /* Judge the cycle that ends here (not counting the new anchor). */
        int good = pd->seen - 1 >= p && pd->miss <= p;
        int doubt = !good || pd->miss > 0 || pd->seen - 1 > p;
        if (good)
            pd->bad = pd->bad ? pd->bad - 1 : 0;
        else
            pd->bad++;
        pd->seen = 1;
        pd->miss = 0;
        pd->since_boundary = 0;
        pd->boundaries++;
        if (pd->bad >= pd->cfg.lose_after)
            unlock(pd);
        else if (doubt)
            try_relock(pd);
    } else if (pd->since_boundary > 2 * p + 16) {
        unlock(pd);
    }
    return boundary;
}

int ph_period_feed(ph_period *pd, uintptr_t id)
{
    uint64_t i = pd->n;
    if (pd->p) {
        pd->hist[i % pd->cfg.history] = id;
        pd->n = i + 1;
        int boundary = feed_locked(pd, id);
        pd->mism[i % pd->cfg.history] = pd->mismatches;
        return boundary;
    }
    size_t maxp = pd->cfg.max_period;
    size_t lim = i < maxp ? (size_t)i : maxp;
    uint32_t *run = pd->run;
    int again = 0; /* id was seen within the last max_period ids */
    for (size_t p = 1; p <= lim; p++) {
        if (pd->hist[(i - p) % pd->cfg.history] == id) {
            run[p]++;
            again = 1;
        } else {
            run[p] = 0;
        }
    }
    pd->hist[i % pd->cfg.history] = id;
    pd->n = i + 1;
    pd->mism[i % pd->cfg.history] = pd->mismatches;
    pd->unlocked_ids++;
    try_lock(pd);
    if (again && pd->cfg.early && !pd->early_done && pd->locks == 0) {
        pd->early_done = 1;
        pd->boundaries++;
        return 1;
    }
    return 0;
}

size_t ph_period_length(const ph_period *pd)
{
    return pd->p;
}

uintptr_t ph_period_anchor(const ph_period *pd)
{
    return pd->p ? pd->cycle[0] : 0;
}

int ph_period_fallback(const ph_period *pd)
{
    if (pd->n <= 1)
        return 1;
    return pd->p == 0 && pd->unlocked_ids >= pd->cfg.fallback_after;
}

void ph_period_get_report(const ph_period *pd, ph_period_report *out)
{
    memset(out, 0, sizeof *out);
    out->ids = pd->n;
    out->boundaries = pd->boundaries;
    out->locks = pd->locks;
    out->unlocks = pd->unlocks;
    out->mismatches = pd->mismatches;
    out->period = pd->p;
    out->anchor = ph_period_anchor(pd);
    out->last_period = pd->last_period;
    out->last_anchor = pd->last_anchor;
    out->early = pd->early_done;
    out->fallback = ph_period_fallback(pd);
    if (!pd->p) {
        uint32_t best = 1;
        size_t lim = pd->n < pd->cfg.max_period ? (size_t)pd->n : pd->cfg.max_period;
        for (size_t q = 1; q <= lim; q++)
            if (pd->run[q] > best) {
                best = pd->run[q];
                out->repeating = q;
            }
    }
}
