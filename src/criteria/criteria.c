/*
 * criteria.c -- the UPMlib migration criteria as pure functions (see
 * criteria.h, which is the contract).
 *
 * In plain words:
 *
 *   Competitive criterion (Nikolopoulos et al., ICS 2000, section 3.1,
 *   eq. 1 and 2).  A page lives on its home node h.  In one interval the
 *   reference counters tell how often each node touched it.  The time the
 *   home node spent on the page is lacc * l (local accesses times the
 *   local latency); the time node i spent is racc(i) * rc(i,h), where the
 *   contended latency rc(i,h) = ru(i,h) + contention_ns * c(h) (eq. 2)
 *   adds a fixed penalty for each node that touches the page more often
 *   than the home does (c(h)).  The page should move to i when i's time
 *   beats the home's time scaled by how much slower a remote access is
 *   (ru(i,h)/l), by the area's selectiveness factor, plus what one move
 *   costs (ml):
 *       racc(i)*rc(i,h) > (ru(i,h)/l) * factor * lacc * l + ml     (eq. 1)
 *   The "optimistic" variant drops ml, betting that early moves pay off
 *   later.  When several nodes qualify, the one with the largest
 *   racc(i)*rc(i,h) / (lacc*l) wins.  For one page the denominator is the
 *   same for every i, so that is simply the largest racc(i)*rc(i,h); this
 *   also covers lacc == 0, where the ratio is infinite for all of them.
 *
 *   Predictive criterion (section 3.2, eq. 3).  When the OS moved threads,
 *   the counters still describe the old placement.  If, between two
 *   intervals, a node i that gained a thread touches the page more often
 *   (racc(i,t) > racc(i,t-1)) while the home touches it less often
 *   (lacc(t) < lacc(t-1)), the page most likely followed the thread and
 *   moves to i at once; among several such nodes the one with the most
 *   accesses in t wins.
 *
 *   Ping-pong prevention (section 3.3).  A page the competitive criterion
 *   wants to send back to the node it came from freezes instead; a frozen
 *   page melts after melt_iters iterations (16-bit wrapping counter).
 *
 *   Self-tuning (section 3.4).  Per area, the sum over its pages of the
 *   largest remote latency max_i racc(i)*rc(i,h) is compared between two
 *   invocations; when it grows, the criterion was too eager and the
 *   factor of eq. 1 goes up by a step (capped).  An area that produced no
 *   candidate for cold_after invocations in a row is cold.
 *
 *   n most critical pages (Nikolopoulos et al., WOMPAT 2000, section 2.2).
 *   A page's criticality is raccmax / lacc (largest remote count over the
 *   local count); pages above a threshold are eligible and, when there
 *   are more than n, only the n highest move.
 *
 * Implementation notes that hold throughout:
 *   - every product or ratio of counts is computed in double, so counts up
 *     to UINT32_MAX never overflow (a double holds a uint32 exactly and
 *     uint32 * small latency stays far below 2^53 for realistic values);
 *   - comparisons are written as "x > y" selections, which are false when
 *     either side is NaN, so a NaN latency, factor or cost can only make a
 *     node *not* qualify -- it never selects anything;
 *   - ties go to the lowest node index (or page index);
 *   - invalid arguments (NULL arrays, n <= 0, home out of range) give the
 *     "nothing to do" answer of each function, documented below.
 */
#include "criteria/criteria.h"

#include "base/sort.h"

#include <math.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------ */

/* home is a valid node index for n nodes. */
static int valid_node(int node, int n)
{
    return n > 0 && node >= 0 && node < n;
}

/* c(h) without argument checks (acc, n, home valid). */
static int contention_count(const uint32_t *acc, int n, int home)
{
    int c = 0;
    for (int i = 0; i < n; i++)
        if (acc[i] > acc[home])
            c++;
    return c;
}

/* ---- competitive -------------------------------------------------------- */

/*
 * Competitive criterion, eq. 1 and 2.
 *
 * Returns -1 (and *ratio_out = 0) when: m, m->lat_ns or acc is NULL;
 * m->nnodes <= 0; home is not in [0, nnodes); the local latency
 * l = ru(h,h) is not a positive finite number (the ratio of eq. 1 is
 * undefined); all counts are 0; or no node qualifies.
 *
 * A node i qualifies when i != home, acc[i] > 0 and
 *     acc[i] * rc(i,h) > factor * ru(i,h) * lacc + ml.
 * The right side is eq. 1 with (ru/l) * lacc * l simplified to ru * lacc:
 * algebraically the same, but exact for integer latencies, so a page with
 * perfectly balanced accesses (equality) reliably does not move instead of
 * depending on how 120/100 rounds.  ml = migrate_ns[h*n+i], or 0 when
 * migrate_ns is NULL or optimistic != 0.  Requiring acc[i] > 0 keeps a
 * node that never touched the page from winning through a negative
 * factor or cost.  NaN anywhere in a node's terms makes it not qualify.
 *
 * The winner is the qualifying node with the highest acc[i]*rc(i,h)
 * (equivalently the highest ratio, the denominator lacc*l being common);
 * ties go to the lowest index.  *ratio_out (may be NULL) gets
 * acc[t]*rc(t,h) / (lacc*l), or INFINITY when lacc == 0.
 */
int ph_crit_competitive(const ph_latency_model *m, const uint32_t *acc,
                        int home, double factor, int optimistic,
                        double *ratio_out)
{
    if (ratio_out)
        *ratio_out = 0.0;
    if (!m || !m->lat_ns || !acc || !valid_node(home, m->nnodes))
        return -1;
    const int n = m->nnodes;
    const double l = m->lat_ns[(size_t)home * (size_t)n + (size_t)home];
    if (!(l > 0.0) || isinf(l))
        return -1;

    const double lacc = (double)acc[home];
    const double cont = m->contention_ns * (double)contention_count(acc, n, home);
    int best = -1;
    double best_lhs = 0.0;
    for (int i = 0; i < n; i++) {
        if (i == home || acc[i] == 0)
            continue;
        const double ru = m->lat_ns[(size_t)i * (size_t)n + (size_t)home];
        const double rc = ru + cont;
        double ml = 0.0;
        if (!optimistic && m->migrate_ns)
            ml = m->migrate_ns[(size_t)home * (size_t)n + (size_t)i];
        const double lhs = (double)acc[i] * rc;
        const double rhs = factor * ru * lacc + ml;
        if (!(lhs > rhs))
            continue; /* also skips NaN */
        if (best < 0 || lhs > best_lhs) {
            best = i;
            best_lhs = lhs;
        }
    }
    if (best >= 0 && ratio_out)
        *ratio_out = lacc > 0.0 ? best_lhs / (lacc * l) : INFINITY;
    return best;
}

/*
 * c(h), the contention factor of eq. 2: how many nodes touched the page
 * strictly more often than its home.  Returns 0 when acc is NULL, n <= 0
 * or home is out of range.
 */
int ph_crit_contention(const uint32_t *acc, int n, int home)
{
    if (!acc || !valid_node(home, n))
        return 0;
    return contention_count(acc, n, home);
}

/*
 * Largest remote latency of one page: max over i != home of
 * acc[i] * rc(i,h).  0 when nothing remote touched it, and 0 on invalid
 * arguments (m / lat_ns / acc NULL, nnodes <= 0, home out of range).
 * Terms that are NaN or negative are ignored (the result never goes below
 * 0 and is never NaN).
 */
double ph_crit_remote_latency_ns(const ph_latency_model *m,
                                 const uint32_t *acc, int home)
{
    if (!m || !m->lat_ns || !acc || !valid_node(home, m->nnodes))
        return 0.0;
    const int n = m->nnodes;
    const double cont = m->contention_ns * (double)contention_count(acc, n, home);
    double best = 0.0;
    for (int i = 0; i < n; i++) {
        if (i == home || acc[i] == 0)
            continue;
        const double ru = m->lat_ns[(size_t)i * (size_t)n + (size_t)home];
        const double v = (double)acc[i] * (ru + cont);
        if (v > best)
            best = v;
    }
    return best;
}

/* ---- predictive --------------------------------------------------------- */

/*
 * Predictive criterion, eq. 3.  Node i qualifies when i != home,
 * gained[i] != 0, acc[i] > acc_prev[i] and acc[home] < acc_prev[home].
 * The home condition does not depend on i, so when the home's count did
 * not drop no node qualifies.  The winner has the most accesses in this
 * interval (acc[i]); ties go to the lowest index.  Returns -1 when nothing
 * qualifies, when any array is NULL (gained == NULL means no node gained
 * a thread), n <= 0, or home is out of range.
 */
int ph_crit_predictive(const uint32_t *acc, const uint32_t *acc_prev,
                       int n, int home, const uint8_t *gained)
{
    if (!acc || !acc_prev || !gained || !valid_node(home, n))
        return -1;
    if (!(acc[home] < acc_prev[home]))
        return -1;
    int best = -1;
    for (int i = 0; i < n; i++) {
        if (i == home || !gained[i] || !(acc[i] > acc_prev[i]))
            continue;
        if (best < 0 || acc[i] > acc[best])
            best = i;
    }
    return best;
}

/* ---- ping-pong ---------------------------------------------------------- */

/*
 * 1 when the move home -> target would send the page back to prev_home,
 * the node it left at its last migration.  Never 1 when prev_home < 0
 * (never moved; in particular target == prev_home == -1 is not a
 * ping-pong), target < 0 (no move), or target == home (not a move).
 */
int ph_crit_pingpong(int home, int prev_home, int target)
{
    if (prev_home < 0 || target < 0 || target == home)
        return 0;
    return target == prev_home;
}

/*
 * 1 when (now - frozen_since) mod 2^16 >= melt_iters.  The elapsed count
 * is taken modulo 2^16, so it is right only while fewer than 65536
 * iterations passed; the engine must test a frozen page at least that
 * often.  melt_iters == 0 melts at once; melt_iters > 65535 never melts.
 */
int ph_crit_melts(uint16_t frozen_since, uint16_t now, unsigned melt_iters)
{
    const unsigned elapsed = (uint16_t)(now - frozen_since);
    return elapsed >= melt_iters;
}

/* ---- self-tuning and cold areas ----------------------------------------- */

/*
 * Self-tuning, section 3.4.  Returns factor unchanged when prev < 0
 * (first invocation), when the metric did not grow strictly
 * (max_remote_ns <= prev), or when any argument is NaN.  Otherwise
 * returns min(factor + step, factor_max), but never less than factor:
 * self-tuning only makes the criterion stricter, so a negative step or a
 * factor already above factor_max leaves the factor as it is.
 */
double ph_crit_selftune(double prev_max_remote_ns, double max_remote_ns,
                        double factor, double step, double factor_max)
{
    if (isnan(prev_max_remote_ns) || isnan(max_remote_ns) || isnan(factor) ||
        isnan(step) || isnan(factor_max))
        return factor;
    if (prev_max_remote_ns < 0.0 || !(max_remote_ns > prev_max_remote_ns))
        return factor;
    double f = factor + step;
    if (f > factor_max)
        f = factor_max;
    if (f < factor)
        f = factor;
    return f;
}

/*
 * Cold areas.  The new streak is streak + 1 when this invocation had no
 * candidate (saturating at UINT_MAX), else 0.  *cold (may be NULL) is
 * always written: 1 when cold_after != 0 and the new streak >= cold_after,
 * else 0 -- the caller keeps an area cold on its own until a predictive
 * switch; a 0 here does not mean "thaw".
 */
unsigned ph_crit_cold(unsigned streak, size_t candidates, unsigned cold_after,
                      int *cold)
{
    unsigned s = 0;
    if (candidates == 0)
        s = streak + 1u != 0u ? streak + 1u : streak;
    if (cold)
        *cold = cold_after != 0u && s >= cold_after;
    return s;
}

/* ---- n most critical ---------------------------------------------------- */

/*
 * Criticality, WOMPAT 2.2: raccmax / lacc with raccmax = max over
 * i != home of acc[i] (lowest index on ties) and lacc = acc[home].
 * raccmax == 0: returns 0 and *target = -1 (nothing remote, whatever
 * lacc is); lacc == 0 < raccmax: INFINITY.  Invalid arguments (acc NULL,
 * n <= 0, home out of range): 0 and -1.  target may be NULL.
 */
double ph_crit_criticality(const uint32_t *acc, int n, int home, int *target)
{
    if (target)
        *target = -1;
    if (!acc || !valid_node(home, n))
        return 0.0;
    int best = -1;
    for (int i = 0; i < n; i++) {
        if (i == home || acc[i] == 0)
            continue;
        if (best < 0 || acc[i] > acc[best])
            best = i;
    }
    if (best < 0)
        return 0.0;
    if (target)
        *target = best;
    if (acc[home] == 0)
        return INFINITY;
    return (double)acc[best] / (double)acc[home];
}

/* The total order of the selection: a before b when its ratio is higher,
 * or equal with a lower index.  Only non-NaN ratios are ever compared. */
static int before(const double *ratio, size_t a, size_t b)
{
    return ratio[a] > ratio[b] || (ratio[a] == ratio[b] && a < b);
}

/*
 * The path that selects every eligible page sorts (key, index) pairs kept
 * side by side (base/sort.h): key[] in scratch, idx[] in order.  The key
 * is the ratio mapped so that unsigned order is numeric order, so the sort
 * reads its two arrays sequentially instead of chasing ratio[idx[j]] -- on
 * 16 M pages that is the difference between seconds and tens of seconds
 * once a compiler turns the comparisons branch-free.  It needs a size_t of
 * 64 bits (PH_SORT_PAIRS); elsewhere the heap path does all the work.
 */

/* Heap of k indexes whose root is the *last* in before() order (the worst
 * kept page): sift the entry at i down. */
static void sift_down(const double *ratio, size_t *h, size_t k, size_t i)
{
    for (;;) {
        const size_t l = 2 * i + 1, r = l + 1;
        size_t w = i;
        if (l < k && before(ratio, h[w], h[l]))
            w = l;
        if (r < k && before(ratio, h[w], h[r]))
            w = r;
        if (w == i)
            return;
        const size_t t = h[i];
        h[i] = h[w];
        h[w] = t;
        i = w;
    }
}

/*
 * n most critical.  Eligible: ratio[i] > thr (NaN ratios and a NaN thr
 * select nothing; +INFINITY is eligible for any finite thr).  Selected:
 * all eligible when n == 0 or there are at most n, else the n first in
 * the order "higher ratio first, lower index first on equal ratios".
 * order[] receives them in that order; the return value is how many.
 * count == 0 or ratio/order NULL returns 0.
 *
 * Buffers: order[] needs room for the result only -- count entries when
 * n == 0, else min(n, count).  scratch[] (count entries) is used only
 * when all eligible pages are selected; it may be NULL (the heap path
 * then does that case too, correct but slower).
 *
 * Cost: a counting pass, then
 *   - all eligible selected (n == 0 or m <= n), 64-bit size_t: the
 *     eligible pages go in as (key, index) pairs, key in scratch[k],
 *     index in order[k], and an introsort orders them: O(m log m) worst
 *     case, sequential memory access;
 *   - otherwise (m > n, or no scratch): a heap of the best pages seen so
 *     far, kept in order[0..k) with the worst at the root, then sorted in
 *     place by popping: O(m log k), k = number returned.
 * Both paths give the same, unique, answer: the order is total.
 * No allocation, no global comparator state.
 */
size_t ph_crit_most_critical(const double *ratio, size_t count, double thr,
                             size_t n, size_t *order, size_t *scratch)
{
    if (!ratio || !order || count == 0)
        return 0;
    size_t m = 0;
    for (size_t i = 0; i < count; i++)
        if (ratio[i] > thr)
            m++;
    if (m == 0)
        return 0;

#ifdef PH_SORT_PAIRS
    if ((n == 0 || m <= n) && scratch) {
        size_t k = 0;
        for (size_t i = 0; i < count; i++) {
            if (ratio[i] > thr) {
                scratch[k] = ph_sort_key_double(ratio[i]);
                order[k++] = i;
            }
        }
        ph_sort_pairs_desc(scratch, order, m);
        return m;
    }
#endif

    const size_t k = (n == 0 || m <= n) ? m : n;
    size_t size = 0;
    for (size_t i = 0; i < count; i++) {
        if (!(ratio[i] > thr))
            continue;
        if (size < k) {
            /* sift up: the parent must not be before the child */
            size_t c = size++;
            order[c] = i;
            while (c > 0) {
                const size_t p = (c - 1) / 2;
                if (!before(ratio, order[p], order[c]))
                    break;
                const size_t t = order[p];
                order[p] = order[c];
                order[c] = t;
                c = p;
            }
        } else if (before(ratio, i, order[0])) {
            order[0] = i;
            sift_down(ratio, order, k, 0);
        }
    }
    /* pop the worst to the end each time: best ends up first */
    for (size_t s = k; s > 1; s--) {
        const size_t t = order[0];
        order[0] = order[s - 1];
        order[s - 1] = t;
        sift_down(ratio, order, s - 1, 0);
    }
    return k;
}

/* ---- huge pages ----------------------------------------------------------- */

int ph_crit_dominant(const uint32_t *acc, int n)
{
    int best = -1;
    for (int i = 0; i < n; i++)
        if (acc[i] && (best < 0 || acc[i] > acc[best]))
            best = i;
    return best;
}

/*
 * Huge pages.  The unit's dominant node is that of the summed counts; the
 * subpages whose own dominant node is another one carry the "foreign"
 * accesses.  In one pass: the sums per node, and the accesses of the
 * subpages grouped by their dominant node (foreign = all the groups but
 * the unit's dominant node's).
 */
void ph_crit_huge_clear(ph_crit_huge_sum *s, int n)
{
    memset(s, 0, sizeof *s);
    s->n = n;
}

/* How far ahead ph_crit_huge_add asks for counts: the distance the
 * engine's own passes use (PH_HOT_AHEAD_BYTES, a layer above; 256 to 2048
 * bytes measured alike there). */
#define HUGE_SUM_AHEAD_BYTES 512

void ph_crit_huge_add(ph_crit_huge_sum *s, const uint32_t *sub, size_t nsub,
                      size_t stride)
{
    const int n = s->n;
    if (!sub || n < 1 || n > PH_CRIT_HUGE_NODES)
        return;
    /* counts HUGE_SUM_AHEAD_BYTES ahead are asked for now (a 2 MiB
     * unit's 512 subpages are summed straight from memory) */
    const size_t ahead = HUGE_SUM_AHEAD_BYTES / (sizeof *sub * (stride ? stride : 1)) + 1;
    for (size_t j = 0; j < nsub; j++) {
        const uint32_t *c = sub + j * stride;
        if (j + ahead < nsub)
            __builtin_prefetch(c + ahead * stride, 0, 3);
        int d = -1;
        uint64_t t = 0;
        for (int k = 0; k < n; k++) {
            s->agg[k] += c[k];
            t += c[k];
            if (c[k] && (d < 0 || c[k] > c[d]))
                d = k;
        }
        s->total += t;
        if (d >= 0) {
            s->prefs++;
            s->by_dom[d] += t;
        }
    }
}

int ph_crit_huge_decide(const ph_latency_model *m, const ph_crit_huge_sum *s,
                        int home, double factor, int optimistic,
                        double split_share, int *target, double *ratio)
{
    *target = -1;
    if (ratio)
        *ratio = 0.0;
    if (!m || !s || m->nnodes < 1 || s->n != m->nnodes)
        return PH_HUGE_KEEP;
    const int n = s->n;
    int dom = ph_crit_dominant(s->agg, n);
    if (dom < 0)
        return PH_HUGE_KEEP;
    uint64_t foreign = 0;
    for (int k = 0; k < n; k++)
        if (k != dom)
            foreign += s->by_dom[k];
    if (s->prefs >= 2 && split_share > 0.0 &&
        (double)foreign >= split_share * (double)s->total)
        return PH_HUGE_SPLIT;
    *target = ph_crit_competitive(m, s->agg, home, factor, optimistic, ratio);
    return *target >= 0 ? PH_HUGE_MOVE : PH_HUGE_KEEP;
}

int ph_crit_huge(const ph_latency_model *m, const uint32_t *sub, size_t nsub,
                 int home, double factor, int optimistic, double split_share,
                 uint32_t *agg, int *target, double *ratio)
{
    *target = -1;
    if (ratio)
        *ratio = 0.0;
    if (!m || !sub || !agg || m->nnodes < 1)
        return PH_HUGE_KEEP;
    const int n = m->nnodes;
    if (n > PH_CRIT_HUGE_NODES)
        return PH_HUGE_KEEP;
    ph_crit_huge_sum s;
    ph_crit_huge_clear(&s, n);
    ph_crit_huge_add(&s, sub, nsub, (size_t)n);
    for (int k = 0; k < n; k++)
        agg[k] = s.agg[k];
    return ph_crit_huge_decide(m, &s, home, factor, optimistic, split_share,
                               target, ratio);
}

int ph_crit_stand_in(const double *lat_ns, int n, uint64_t allowed, int target)
{
    if (!lat_ns || !valid_node(target, n) || n > 64)
        return -1;
    if ((allowed >> target) & 1u)
        return target;
    int best = -1;
    double best_ns = 0.0;
    for (int j = 0; j < n; j++) {
        if (!((allowed >> j) & 1u))
            continue;
        double ns = lat_ns[(size_t)target * (size_t)n + (size_t)j];
        if (isnan(ns))
            ns = INFINITY; /* chosen only when nothing else is allowed */
        if (best < 0 || ns < best_ns) {
            best = j;
            best_ns = ns;
        }
    }
    return best;
}

int ph_crit_one_node(const int *homes, size_t n)
{
    if (n == 0 || homes[0] < 0)
        return -1;
    for (size_t i = 1; i < n; i++)
        if (homes[i] != homes[0])
            return -1;
    return homes[0];
}

int ph_crit_settled(const uint32_t *total, int n, int target, double min_share,
                    uint64_t min_total)
{
    if (target < 0 || target >= n || ph_crit_dominant(total, n) != target)
        return 0;
    uint64_t sum = 0;
    for (int k = 0; k < n; k++)
        sum += total[k];
    return sum && sum >= min_total && (double)total[target] > min_share * (double)sum;
}

/* ---- evidence ------------------------------------------------------------ */

void ph_crit_hood_clear(ph_crit_hood *h)
{
    memset(h, 0, sizeof *h);
    h->last_dom = -1;
}

void ph_crit_hood_add(ph_crit_hood *h, const uint32_t *acc,
                      const uint32_t *now, int n, uint32_t unit)
{
    if (!h || !acc || n <= 0 || n > PH_CRIT_HOOD_NODES)
        return;
    uint64_t sum = 0;
    int nodes = 0;
    for (int i = 0; i < n; i++) {
        h->total[i] += acc[i];
        sum += acc[i];
        nodes += acc[i] != 0;
    }
    if (sum) {
        h->sampled++;
        if (sum >= 2 * (uint64_t)(unit ? unit : 1)) {
            h->multi++;
            h->pure += nodes == 1;
        }
    }
    int d = ph_crit_dominant(now ? now : acc, n);
    if (d < 0)
        return;
    h->now_sampled++;
    h->dom[d]++;
    if (h->last_dom >= 0) {
        h->pairs++;
        h->agree += d == h->last_dom;
    }
    h->last_dom = d;
}

/* Every node has its share of one page's accesses counted in t[0..n):
 * none less than 1/(2n) of them and none more than 2/n (0 when nothing
 * was counted).  A page two nodes share half and half is not uniformly
 * shared on four. */
static int from_every_node(const uint64_t *t, int n)
{
    uint64_t sum = 0, max = 0, min = UINT64_MAX;
    for (int i = 0; i < n; i++) {
        sum += t[i];
        if (t[i] > max)
            max = t[i];
        if (t[i] < min)
            min = t[i];
    }
    if ((double)max * (double)n > 2.0 * (double)sum)
        return 0;
    return sum > 0 && 2.0 * (double)n * (double)min >= (double)sum;
}

double ph_crit_chance(const uint64_t *now, int n)
{
    if (!now || n < 1)
        return 0;
    double sum = 0, sq = 0;
    for (int i = 0; i < n; i++)
        sum += (double)now[i];
    if (sum <= 0)
        return 1.0 / n;
    for (int i = 0; i < n; i++) {
        double p = (double)now[i] / sum;
        sq += p * p;
    }
    return sq;
}

int ph_crit_hood_impure(const ph_crit_hood *h, uint32_t min_pages)
{
    /* at most half the pages with two samples or more are pure */
    return h && h->multi > 0 && h->multi >= min_pages &&
           2 * (uint64_t)h->pure <= (uint64_t)h->multi;
}

int ph_crit_uniform_shared(const ph_crit_hood *h, int n, uint32_t min_pages)
{
    if (!h || n < 2 || n > PH_CRIT_HOOD_NODES || h->pairs == 0 ||
        !ph_crit_hood_impure(h, min_pages))
        return 0;
    /* agreement of neighbours at most halfway between chance and
     * certainty */
    double chance = h->chance > 0 ? h->chance : (double)h->pairs / (double)n;
    if (!(2.0 * (double)h->agree <= (double)h->pairs + chance))
        return 0;
    /* every node at least a quarter of its share of the area */
    double sum = 0, shares = 0;
    for (int i = 0; i < n; i++) {
        sum += (double)h->total[i];
        shares += h->share[i];
    }
    if (sum <= 0)
        return 0;
    for (int i = 0; i < n; i++) {
        double want = shares > 0 ? h->share[i] / shares : 1.0 / n;
        if (4.0 * (double)h->total[i] < want * sum)
            return 0;
    }
    return 1;
}

int ph_crit_page_uniform(const uint32_t *acc, int n, uint32_t unit)
{
    if (!acc || n < 2 || n > PH_CRIT_HOOD_NODES)
        return 0;
    uint64_t t[PH_CRIT_HOOD_NODES], sum = 0;
    for (int i = 0; i < n; i++) {
        t[i] = acc[i];
        sum += acc[i];
    }
    if (sum < 4 * (uint64_t)n * (uint64_t)(unit ? unit : 1))
        return 0;
    return from_every_node(t, n);
}

int ph_crit_shared_steady(const uint32_t *past, const uint32_t *now, int n,
                          int target, uint32_t unit)
{
    if (!past || !now || n < 2 || target < 0 || target >= n)
        return 0;
    uint64_t sum = 0;
    for (int i = 0; i < n; i++)
        sum += past[i];
    if (sum < 4 * (uint64_t)n * (uint64_t)(unit ? unit : 1))
        return 0;
    return ph_crit_dominant(past, n) == target &&
           ph_crit_dominant(now, n) == target;
}

int ph_crit_shared_dominant(const uint32_t *now, int n, int target,
                            uint32_t unit)
{
    if (!now || n < 2 || target < 0 || target >= n)
        return 0;
    const double u = unit ? (double)unit : 1.0;
    double sum = 0, others = 0, max = 0;
    for (int i = 0; i < n; i++) {
        double s = (double)now[i] / u;
        sum += s;
        if (i == target)
            continue;
        others += s;
        if (s > max)
            max = s;
    }
    if (sum < 4.0 * n)
        return 0;
    double m = others / (n - 1), t = (double)now[target] / u;
    return t - max > 4.0 * sqrt(m) && t - max > m / 4.0;
}

int ph_crit_hood_agrees(const ph_crit_hood *h, int n, int target,
                        uint32_t min_pages, double min_share)
{
    if (!h || target < 0 || target >= n || n > PH_CRIT_HOOD_NODES ||
        h->now_sampled == 0 || h->now_sampled < min_pages)
        return 0;
    return (double)h->dom[target] >= min_share * (double)h->now_sampled;
}

unsigned ph_crit_melt_after(unsigned melt_iters, unsigned freezes)
{
    unsigned long long m = melt_iters;
    for (unsigned k = 1; k < freezes && m < 65535u; k++)
        m *= 2;
    return m > 65535u ? 65535u : (unsigned)m;
}

int ph_crit_interval_skewed(const uint64_t *now, const uint64_t *run, int n)
{
    if (!now || !run || n < 2)
        return 0;
    uint64_t sn = 0, sr = 0;
    int top = 0;
    for (int i = 0; i < n; i++) {
        sn += now[i];
        sr += run[i];
        if (now[i] > now[top])
            top = i;
    }
    if (sn == 0 || sr == 0)
        return 0;
    double share_now = (double)now[top] / (double)sn;
    double share_run = (double)run[top] / (double)sr;
    return share_now * (double)n > 2.0 && share_now > 1.5 * share_run;
}

size_t ph_crit_sweep_run_pages(size_t pages, double trap_ns, double bound_ns,
                               size_t max_run)
{
    if (pages == 0 || !(trap_ns > 0) || !(bound_ns > 0) || max_run <= 1)
        return 1;
    /* no coarser than one run for all the pages: it would trap no less */
    size_t r = 1;
    while (r < max_run && r < pages &&
           (double)(pages / r + (pages % r != 0)) * trap_ns > bound_ns)
        r = r * 2 < max_run ? r * 2 : max_run;
    return r;
}
