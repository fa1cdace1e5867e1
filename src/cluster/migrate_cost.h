/*
 * migrate_cost.h -- home migration by cost (ours, beyond JIAJIA's rule):
 * a page whose remote traffic costs more, over the run expected to be left,
 * than moving its home, moves to the rank that pays most for it.  A pure
 * function of the barrier's exchanged lists and per-page state that every
 * rank has alike, so every rank computes the same moves (migrate.h's
 * agreement), and tests drive it without MPI.
 *
 * WHY.  JIAJIA's rule (migrate.h) homes a page at its single writer, if
 * that writer holds the current copy.  Pages two or more ranks write
 * (false sharing, a shared reduction buffer) never move under it, wherever
 * their home is -- on a rank that does not touch them every writer pays a
 * diff, and a fetch after the others' writes; nor do pages whose single
 * writer dropped its copy, nor pages read after every write elsewhere
 * (a producer's buffer read by a consumer in the next interval) whose
 * home does not use them.
 *
 * WHAT STAYS.  A page whose home wrote it in this interval or at the
 * exchange before stays with its writer: its readers fetch after every write
 * wherever the home is, and elsewhere the home's own writes would cost it
 * write faults, twins, diffs and the barrier's wait for them.  Measured
 * here: moving Laplace's boundary rows from their writers to the
 * neighbours that read them (what a per-page fetch-against-diff
 * comparison asks for) made four Laplace variants up to 1.6x slower at 2
 * ranks.  So the rule weighs only pages whose home did not write them.

 * THE EVIDENCE.  Every remote fault is a sample, for free: at a barrier
 * every rank adds to the exchange of write notices the pages it fetched
 * since the last exchange (as ranges; a barrier where nobody wrote has no
 * exchange, and its fetches wait for the next one -- measured: an
 * exchange of its own at every such barrier made Laplace's naive variant,
 * two barriers an iteration, 1.3x slower).  Then per page, with h its home:
 *   traffic(r)   what rank r != h paid this interval: recurring * F(r) +
 *                wrote * D(r), where a fetch recurs when another rank
 *                wrote the page in this interval or anybody at the
 *                exchange before (a first read of data nobody writes is
 *                not fetched again: no saving in moving it), F(r) what one page fetched on a fault costs
 *                rank r, D(r) what writing a page it does not home costs
 *                it: the write fault that makes the twin and the diff sent
 *                home at the barrier (THE COSTS, below);
 *   after(t)     what the old home (not a writer: WHAT STAYS) would pay
 *                with the page on t: F(h) if it reads the page (a *reader
 *                home*, below) and another rank wrote it (its copy would
 *                be dropped), else 0.  A home's reads fault nowhere, so they are not
 *                seen; a home the cost rule chose because it read the page
 *                is known to read it.  Other homes are assumed not to read
 *                (as JIAJIA's rule assumes);
 *   S(t)         = traffic(t) - after(t), the interval's saving of a move
 *                to t; the best t (lowest rank on ties) with S(t) > 0.
 * The evidence E of a page is an exponentially weighted mean of S (decay
 * 1/2 per barrier interval, also over intervals without traffic, lazily:
 * the page's last update is stamped), for one target at a time: S for
 * another target replaces the target when it beats the decayed evidence
 * (and then counts half: one interval against a history).
 *
 * THE COSTS are the DSM's own measurements.  At start-up every rank
 * measures raw transfers (netcost.c): a 4 KiB get, a 256-byte get in a
 * batch, a barrier; the ranks agree on the largest.  From then on every
 * rank keeps running means of what its remote read faults cost per page
 * fetched (from the fault's arrival to the thread's wake-up: the
 * faulting thread's stall, not the wire's), of what its write faults on
 * cached copies cost per page twinned, and of what its barrier flushes
 * cost per page diffed, and puts F and D in the record every
 * barrier exchanges anyway, so every rank weighs every rank's costs alike;
 * a rank without a sample of a cost yet is weighed with the largest any
 * rank measured (a rank that homes everything it writes has never paid a
 * diff, but would pay what the others do), or with the start-up model
 * while nobody has one (whose D has no write fault in it).
 *
 * THE DECISION, pagehome's own criteria (src/criteria/): a page moves to
 * its target t when E * R > F(t), with R = ph_crit_remaining (the run is
 * expected to last as long again as it has: after ten barriers, a move
 * is worth ten intervals of its saving) and the move charged one page
 * fetch (the new home fetches the
 * current copy unless its own is valid).  JIAJIA's threshold between two
 * moves of a page applies (ph_dsm_migrate_allowed).  Ping-pong: a page
 * the cost rule would move back to the rank it left at its previous
 * cost-rule move freezes instead (ph_crit_pingpong) and melts after
 * melt_intervals barriers (after which it may go back).  A move to a rank
 * that did not write the page makes it a reader home (a home's reads are
 * not seen, but this one read the page); a page moved by JIAJIA's rule
 * loses its evidence and that mark.
 *
 * DATA.  A move by cost carries data: after the barrier's diffs landed and
 * stale copies were dropped, a new home whose copy is not valid fetches
 * the page from the old home, and the barrier ends with one more
 * MPI_Ibarrier (nobody reads the new home before it holds the page, and
 * the old home changes nothing before it was read).
 */
#ifndef PH_CLUSTER_MIGRATE_COST_H
#define PH_CLUSTER_MIGRATE_COST_H

#include "cluster/migrate.h"
#include "cluster/notice.h"

#include <stddef.h>
#include <stdint.h>

/* The network cost model, measured by the DSM at start-up (netcost.c) and
 * agreed (the largest of every rank's measurements), in ns. */
typedef struct ph_dsm_netcost {
    double fetch_ns;   /* F: one page fetched from another rank */
    double diff_ns;    /* D: one page's diff sent home */
    double sync_ns;    /* one MPI barrier (reported; a carrying move ends
                          its barrier with one) */
} ph_dsm_netcost;

typedef struct ph_dsm_cost_cfg {
    int on;                   /* cluster_migrate_reads (and cluster_migrate) */
    uint32_t melt_intervals;  /* cluster_migrate_melt_intervals, >= 1 */
    ph_dsm_netcost net;       /* the start-up model (cost.on: measured) */
} ph_dsm_cost_cfg;

/* Per arena page, the same on every rank. */
typedef struct ph_dsm_evid {
    float gain_ns;      /* E, for target `to` */
    int32_t to;         /* -1: none (meaningless while at == 0) */
    int32_t prev;       /* the home it left at its last cost move + 1,
                           0: none (zeroed memory is a page never seen) */
    uint32_t at;        /* barrier of E's last update + 1, 0: none */
    uint32_t frozen_at; /* barrier it froze at + 1, 0: not frozen */
    uint32_t home_wrote_at; /* barrier of the last interval its home wrote
                               it + 1 (exact for pages weighed then; a
                               move clears it) */
    uint32_t flags;     /* PH_DSM_EV_* */
} ph_dsm_evid;
#define PH_DSM_EV_READER_HOME 0x1u

/* One rank's costs, in ns (THE COSTS above). */
typedef struct ph_dsm_rank_cost {
    double fetch_ns, diff_ns;
} ph_dsm_rank_cost;

/* The home of a page before this barrier's moves (< 0: none yet). */
typedef int (*ph_dsm_home_fn)(void *ctx, uint64_t page);

/* Outcome counters of one plan. */
typedef struct ph_dsm_cost_counts {
    uint64_t pages;      /* pages with traffic weighed */
    uint64_t moves;      /* pages moved */
    uint64_t frozen;     /* pages frozen (ping-pong) */
} ph_dsm_cost_counts;

/* What a barrier's exchange gave every rank alike.  Range lists are
 * (start, length) pairs, sorted and disjoint within a list; rank r's lists
 * are at pairs[2 Xdispls[r] ..) with Xcounts[r] ranges. */
typedef struct ph_dsm_cost_in {
    const ph_dsm_seg *segs;       /* this barrier's merged notices */
    size_t nsegs;
    const ph_dsm_seg *prev;       /* the last exchange's before this one
                                     (NULL, 0: none) */
    size_t nprev;
    uint32_t prev_at;             /* its barrier + 1 (0: none) */
    const uint64_t *pairs;
    const int *ccounts, *cdispls; /* written, homed elsewhere, copy valid
                                     (JIAJIA's candidates) */
    const int *xcounts, *xdispls; /* written, homed elsewhere, no valid copy */
    const int *fcounts, *fdispls; /* fetched since the last exchange */
    int nranks;
    const ph_dsm_rank_cost *rc;   /* the ranks' costs; a rank whose
                                     fetch_ns is not > 0: the rule is off */
    ph_dsm_home_fn home;
    void *home_ctx;
} ph_dsm_cost_in;

/* The cost moves of barrier `interval`.  The pages weighed are those a
 * rank wrote away from their home, those fetched, and those several ranks
 * wrote; a page only its home wrote is not visited (the home wrote a page
 * when its writers in the notices outnumber the ranks that list it as a
 * remote write).  moved_at and mig as for ph_dsm_migrate_plan (pages
 * JIAJIA's plan moved at this barrier, stamped interval + 1, lose their
 * evidence and do not move again).  ev[0..npages) is updated.  *out
 * (malloc'd, NULL when none) gets the moves (carry = 1) in page order.
 * Returns their number, or -1/ENOMEM; *counts (may be NULL) is added to. */
long ph_dsm_migrate_cost_plan(const ph_dsm_cost_in *in,
                              const ph_dsm_migrate_cfg *mig,
                              const ph_dsm_cost_cfg *cfg, uint32_t interval,
                              uint32_t *moved_at, ph_dsm_evid *ev,
                              size_t npages, ph_dsm_move **out,
                              ph_dsm_cost_counts *counts);

/* The evidence of a page updated with one interval's best saving `s_ns`
 * (<= 0: none) for target `t` at barrier `interval` (the rule above). */
void ph_dsm_evid_update(ph_dsm_evid *e, int t, double s_ns, uint32_t interval);

#endif
