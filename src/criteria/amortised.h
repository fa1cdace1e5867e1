/*
 * amortised.h -- a migration criterion that amortises the move over the
 * rest of the run (ours; UPMlib's per-interval competitive criterion is
 * criteria.h's ph_crit_competitive and stays available by name).
 *
 * UPMlib's eq. 1 weighs ONE interval's remote latency of a page against
 * the whole cost of moving it.  Where a move is expensive next to an
 * interval (the Origin2000: 1.1 ms a page against tens of microseconds of
 * remote latency per page and iteration) no page ever qualifies, although
 * the page will be read remotely in every interval to come.  This
 * criterion asks what the move is worth over the rest of the run:
 *
 *   rate r(i)   the page's accesses per interval from node i: the
 *               evidence of past intervals (an exponentially weighted
 *               mean, decay 1/2, kept by the engine in place of the last
 *               interval's counts) joined with this interval's counts,
 *               r = (avg + cur) / 2, or cur alone while the page has no
 *               past (avg all zero).  Old phases fade: an access pattern
 *               that stopped k intervals ago weighs 2^-k.
 *   cost(x)     what one interval's accesses cost with the page on x:
 *               sum over i of r(i) * lat(i, x), where a remote access
 *               (i != x) pays the contended latency ru(i,x) + cont * c(x)
 *               of eq. 2 and x's own accesses the local latency.
 *   saving B(t) cost(home) - cost(t), with the home's own accesses
 *               counted factor times (factor: the area's selectiveness,
 *               raised by self-tuning; 1 = the plain saving).
 *   remaining R the intervals the run is expected to have left
 *               (ph_crit_remaining).
 *   move to t   when B(t) * R > ml(home, t), the cost of one migration;
 *               among several targets the largest B(t) * R - ml wins.
 *
 * The expected remaining run comes from what the engine knows.  With a
 * count of iterations the program gave (ph_iterations_expected) and
 * iterations seen, the intervals left are in proportion; without one the
 * run is conservatively expected to last as long again as it has so far
 * (at least one interval): a program that ran one interval is trusted for
 * one more, one that ran a hundred for a hundred.
 *
 * Decisive evidence (ph_crit_decisive) is the rule for moves made inside
 * the first iteration (the hybrid mechanism's early looks): a remote node
 * made at least min_share of the page's accesses, with at least
 * min_samples samples of its own.
 *
 * Phases replayed on the critical path (record/replay) pay the move there
 * and back at every occurrence while the program's threads wait: a page is
 * worth it when one occurrence's saving exceeds 2 * ml * threads
 * (ph_crit_phase_remaining gives the R that says so to ph_crit_amortised).
 *
 * Pure functions: no globals, no clock, no allocation.  Node arguments are
 * node indexes.  NaN anywhere makes a target not qualify.
 */
#ifndef PH_CRITERIA_AMORTISED_H
#define PH_CRITERIA_AMORTISED_H

#include "criteria/criteria.h"

#include <stddef.h>
#include <stdint.h>

/* Nodes the amortised criterion handles (topo.h's PH_MAX_NODES). */
#define PH_CRIT_AMORTISED_MAX_NODES 64

/* Intervals the run is expected to have left.
 *   intervals_seen  intervals the evidence covers so far (< 1 counts as 1);
 *   iters_seen      outer iterations completed;
 *   iters_total     iterations the program said it runs (0: unknown).
 * Known total: intervals_seen * (iters_total - iters_seen) / iters_seen,
 * or, before the first iteration ended, intervals_seen * (iters_total - 1)
 * (every later iteration lasts at least as long as what was seen of the
 * first); 0 when the program is at or past its total.  Unknown total:
 * intervals_seen (as long again).  Never negative, never NaN (NaN
 * arguments count as unknown / 1). */
double ph_crit_remaining(double intervals_seen, double iters_seen,
                         double iters_total);

/* The amortised criterion for one page.  cur[0..n): this interval's
 * accesses per node; avg[0..n): the page's evidence of past intervals
 * (NULL or all zero: none).  Returns the target node or -1 (invalid
 * arguments, no access, nothing worth its move).  *value_out (may be
 * NULL) gets the winner's B(t) * R - ml in ns (0 when none): the order
 * in which capped moves are kept. */
int ph_crit_amortised(const ph_latency_model *m, const uint32_t *cur,
                      const uint32_t *avg, int home, double factor,
                      double remaining, double *value_out);

/* The per-interval saving B(t) of moving a page from home to t (ns, may
 * be negative); NaN on invalid arguments.  rate[0..n) as above, already
 * joined. */
double ph_crit_saving_ns(const ph_latency_model *m, const double *rate,
                         int home, int t, double factor);

/* The rate the criterion uses: r = (avg + cur) / 2, or cur when avg is
 * NULL or all zero.  out[0..n). */
void ph_crit_rate(const uint32_t *cur, const uint32_t *avg, int n,
                  double *out);

/* The engine's evidence update at the end of an interval (in place of
 * the previous interval's counts): avg = cur when avg is all zero, else
 * floor((avg + cur) / 2), per node. */
static inline void ph_crit_evidence_roll(uint32_t *avg, const uint32_t *cur,
                                         int n)
{
    /* inline: the engine rolls every page with counts at every interval */
    uint32_t past = 0;
    for (int i = 0; i < n; i++)
        past |= avg[i];
    for (int i = 0; i < n; i++)
        avg[i] = past ? (uint32_t)(((uint64_t)avg[i] + cur[i]) / 2u) : cur[i];
}

/* Decisive evidence: the node t != home that made at least min_share of
 * the page's accesses and at least min_samples * unit of them (unit: the
 * accesses one sample stands for, >= 1); -1 when none. */
int ph_crit_decisive(const uint32_t *acc, int n, int home, uint32_t unit,
                     uint32_t min_samples, double min_share);

/* Moves that go in batches (one move call for up to batch_pages pages to
 * one node, each call costing call_ns besides its pages): a batch of
 * `pages` moves whose values (ph_crit_amortised's B * R - ml, per-page
 * cost only) sum to value_sum is worth its calls when value_sum exceeds
 * ceil(pages / batch_pages) * call_ns.  1 worth, 0 not (also for NaN). */
int ph_crit_batch_worth(double value_sum, size_t pages, size_t batch_pages,
                        double call_ns);

/* The order in which to issue n moves that one memory manager makes one
 * after the other while the program runs on (a page is used at its old
 * home until its move is done), so that what they save arrives first
 * where the program waits longest.  The threads of a program meet at
 * barriers, so a phase lasts as long as its slowest node's accesses: the
 * moves are dealt out by target node, water-filling -- the next move goes
 * to the node with the most saving still to come (saving_ns summed over
 * its moves not yet dealt; ties: the lower node index) -- and each node's
 * own moves go in bit-reversed order of their place in the list.  For a
 * list in address order that spreads the pages moved so far evenly over
 * the node's data, so the threads that share the node (each with its own
 * block) gain together instead of one after the other.
 *   saving_ns[i]  move i's saving per interval (ph_crit_saving_ns; NaN
 *                 or negative counts as 0);
 *   target[i]     its node index, in [0, nnodes), nnodes <=
 *                 PH_CRIT_AMORTISED_MAX_NODES;
 *   order[0..n)   gets the move indexes, the first to issue first;
 *   scratch[0..n) work.
 * Returns 0; -1 (order[i] = i) when an argument is invalid. */
int ph_crit_move_order(const double *saving_ns, const int *target, size_t n,
                       int nnodes, size_t *order, size_t *scratch);

/* The remaining-run value that makes ph_crit_amortised accept a phase
 * migration only when one occurrence's saving exceeds the round trip
 * (2 * ml) times the threads that wait for it: 1 / (2 * threads). */
double ph_crit_phase_remaining(int threads);

#endif
