/*
 * irix.c -- the IRIX-like kernel engine of `pagehome sim` as pure
 * functions (irix.h).
 *
 * What 003 section 2.2 and migration(5) describe, and how it is modelled:
 *   - per-page, per-node reference counters, accumulated by the hardware
 *     while the program runs (the simulation adds each phase's accesses
 *     and checks the touched pages at the end of the phase);
 *   - an interrupt when the accesses of some remote node exceed the local
 *     ones by more than a threshold, a percentage of the counters' range
 *     (sn(1) -t); the handler runs on a CPU of the page's home node and
 *     re-arms the counters;
 *   - dampening: a page migrates only after `dampening` consecutive
 *     interrupts toward the same node (an interrupt toward another node
 *     starts the count again);
 *   - freezing: a page that migrated freeze_after times stays where it is
 *     (interrupts on it are refused) until it melts;
 *   - periodic operations (aging the counters, melting frozen pages) at
 *     one virtual memory page every 10 ms (003), so a page is aged or
 *     melted once every (pages x 10 ms);
 *   - the migration itself runs in the interrupt handler: it is on the
 *     critical path of the program thread on that CPU.
 *
 * Values (IRIX's own defaults could not be checked; these are the model's
 * and are documented in doc/sim-model.md):
 *   threshold     1024 accesses: 50% of the 11-bit counters' range (2047)
 *   dampening     2 consecutive interrupts (50% of the Origin 2000's
 *                 maximum dampening factor of 4, sn(1) -f)
 *   freeze_after  4 migrations
 *   period_ns     10 ms per page (003 section 2.2)
 */
#include "experiment/irix.h"

#include <string.h>

void ph_exp_irix_defaults(ph_exp_irix_params *p)
{
    p->threshold = 1024;
    p->dampening = 2;
    p->freeze_after = 4;
    p->period_ns = 10e6;
}

int ph_exp_irix_check(const ph_exp_irix_params *p, uint32_t *cnt, int n,
                      int home, ph_exp_irix_page *st, int *target)
{
    *target = -1;
    if (home < 0 || home >= n)
        return PH_IRIX_NONE;
    int best = -1;
    for (int i = 0; i < n; i++) {
        if (i == home || cnt[i] <= cnt[home])
            continue;
        if (cnt[i] - cnt[home] > p->threshold &&
            (best < 0 || cnt[i] > cnt[best]))
            best = i;
    }
    if (best < 0)
        return PH_IRIX_NONE;
    *target = best;
    /* the handler re-arms the counters */
    memset(cnt, 0, (size_t)n * sizeof *cnt);
    if (st->frozen)
        return PH_IRIX_FROZEN;
    if (st->damp_node == best) {
        if (st->damp < 255)
            st->damp++;
    } else {
        st->damp_node = (int8_t)best;
        st->damp = 1;
    }
    if (st->damp < p->dampening)
        return PH_IRIX_DAMPENED;
    st->damp = 0;
    st->damp_node = -1;
    if (st->migrations < 255)
        st->migrations++;
    if (p->freeze_after && st->migrations >= p->freeze_after)
        st->frozen = 1;
    return PH_IRIX_MIGRATE;
}

void ph_exp_irix_periodic(uint32_t *cnt, int n, ph_exp_irix_page *st)
{
    for (int i = 0; i < n; i++)
        cnt[i] /= 2;
    if (st->frozen) {
        st->frozen = 0;
        st->migrations = 0;
    }
}
