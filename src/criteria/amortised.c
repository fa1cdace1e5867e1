/*
 * amortised.c -- the amortised migration criterion (amortised.h is the
 * contract; this file says how).
 *
 * In plain words: a page's accesses per interval are estimated from its
 * evidence (past intervals, decaying by half each interval) and this
 * interval; what one interval of those accesses costs is computed with
 * the page at its home and at every other node (remote accesses pay the
 * contended latency of UPMlib's eq. 2, the holder's own the local one);
 * the difference is what a move saves per interval, and over the
 * intervals the run is expected to have left it must beat what the move
 * costs.  The saving is in ns of the program's threads' memory time, the
 * cost in ns of the mover's: both are what eq. 1 compares too.
 *
 * Notes that hold throughout: arithmetic in double (counts up to
 * UINT32_MAX times latencies stay far below 2^53); every selection is
 * written "x > y", false for NaN, so NaN can only make a node not
 * qualify; ties go to the lowest node index.
 */
#include "criteria/amortised.h"

#include <math.h>

/* A valid node index for n nodes. */
static int valid(int node, int n)
{
    return n > 0 && node >= 0 && node < n;
}

double ph_crit_remaining(double intervals_seen, double iters_seen,
                         double iters_total)
{
    double s = intervals_seen >= 1.0 ? intervals_seen : 1.0; /* NaN: 1 */
    if (!(iters_total > 0.0)) /* unknown (0, negative or NaN) */
        return s;
    double i = iters_seen >= 0.0 ? iters_seen : 0.0;
    if (!(iters_total > i))
        return 0.0;
    if (i >= 1.0)
        return s * (iters_total - i) / i;
    return s * (iters_total - 1.0 > 0.0 ? iters_total - 1.0 : 0.0);
}

void ph_crit_rate(const uint32_t *cur, const uint32_t *avg, int n,
                  double *out)
{
    int past = 0;
    for (int i = 0; avg && i < n; i++)
        past |= avg[i] != 0;
    for (int i = 0; i < n; i++)
        out[i] = past ? ((double)avg[i] + (double)cur[i]) / 2.0
                      : (double)cur[i];
}

/* c(x): nodes whose rate exceeds x's. */
static int contention(const double *rate, int n, int x)
{
    int c = 0;
    for (int i = 0; i < n; i++)
        c += rate[i] > rate[x];
    return c;
}

/* The latency node i pays for one access to a page held by x. */
static double access_ns(const ph_latency_model *m, int i, int x, int cx)
{
    const int n = m->nnodes;
    double ru = m->lat_ns[(size_t)i * (size_t)n + (size_t)x];
    return i == x ? ru : ru + m->contention_ns * (double)cx;
}

double ph_crit_saving_ns(const ph_latency_model *m, const double *rate,
                         int home, int t, double factor)
{
    if (!m || !m->lat_ns || !rate || !valid(home, m->nnodes) ||
        !valid(t, m->nnodes))
        return NAN;
    const int n = m->nnodes;
    if (t == home)
        return 0.0;
    int ch = contention(rate, n, home), ct = contention(rate, n, t);
    double b = 0.0;
    for (int i = 0; i < n; i++) {
        if (!(rate[i] > 0.0))
            continue;
        double d = access_ns(m, i, home, ch) - access_ns(m, i, t, ct);
        b += i == home ? factor * rate[i] * d : rate[i] * d;
    }
    return b;
}

int ph_crit_amortised(const ph_latency_model *m, const uint32_t *cur,
                      const uint32_t *avg, int home, double factor,
                      double remaining, double *value_out)
{
    if (value_out)
        *value_out = 0.0;
    if (!m || !m->lat_ns || !cur || !valid(home, m->nnodes) ||
        m->nnodes > PH_CRIT_AMORTISED_MAX_NODES)
        return -1;
    const int n = m->nnodes;
    double rate[PH_CRIT_AMORTISED_MAX_NODES];
    ph_crit_rate(cur, avg, n, rate);
    int best = -1;
    double best_v = 0.0;
    for (int t = 0; t < n; t++) {
        if (t == home || !(rate[t] > 0.0))
            continue; /* a node that does not use the page gains nothing */
        double b = ph_crit_saving_ns(m, rate, home, t, factor);
        if (!(b > 0.0))
            continue;
        double ml = m->migrate_ns
                        ? m->migrate_ns[(size_t)home * (size_t)n + (size_t)t]
                        : 0.0;
        double v = b * remaining - ml;
        if (!(v > 0.0))
            continue; /* also NaN */
        if (best < 0 || v > best_v) {
            best = t;
            best_v = v;
        }
    }
    if (best >= 0 && value_out)
        *value_out = best_v;
    return best;
}

int ph_crit_decisive(const uint32_t *acc, int n, int home, uint32_t unit,
                     uint32_t min_samples, double min_share)
{
    if (!acc || n <= 0)
        return -1;
    uint64_t total = 0;
    int top = -1;
    for (int i = 0; i < n; i++) {
        total += acc[i];
        if (acc[i] && (top < 0 || acc[i] > acc[top]))
            top = i;
    }
    if (top < 0 || top == home)
        return -1;
    uint64_t need = (uint64_t)(unit ? unit : 1u) * (uint64_t)min_samples;
    if ((uint64_t)acc[top] < need)
        return -1;
    if (!((double)acc[top] >= min_share * (double)total))
        return -1;
    return top;
}

double ph_crit_phase_remaining(int threads)
{
    return 1.0 / (2.0 * (double)(threads > 1 ? threads : 1));
}

int ph_crit_batch_worth(double value_sum, size_t pages, size_t batch_pages,
                        double call_ns)
{
    if (pages == 0)
        return 0;
    size_t b = batch_pages ? batch_pages : 1;
    double calls = (double)((pages + b - 1) / b);
    return value_sum > calls * (call_ns > 0 ? call_ns : 0.0);
}

/* i's lowest `bits` bits reversed. */
static size_t bit_reverse(size_t i, int bits)
{
    size_t r = 0;
    for (int b = 0; b < bits; b++, i >>= 1)
        r = (r << 1) | (i & 1u);
    return r;
}

int ph_crit_move_order(const double *saving_ns, const int *target, size_t n,
                       int nnodes, size_t *order, size_t *scratch)
{
    if (!order)
        return -1;
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    if (n == 0)
        return 0;
    if (!saving_ns || !target || !scratch || nnodes < 1 ||
        nnodes > PH_CRIT_AMORTISED_MAX_NODES)
        return -1;
    size_t count[PH_CRIT_AMORTISED_MAX_NODES] = {0};
    size_t start[PH_CRIT_AMORTISED_MAX_NODES], dealt[PH_CRIT_AMORTISED_MAX_NODES];
    double left[PH_CRIT_AMORTISED_MAX_NODES] = {0};
    for (size_t i = 0; i < n; i++) {
        if (!valid(target[i], nnodes))
            return -1;
        count[target[i]]++;
        if (saving_ns[i] > 0.0)
            left[target[i]] += saving_ns[i];
    }
    /* scratch: the moves grouped by node, in list order */
    size_t at = 0;
    for (int d = 0; d < nnodes; d++) {
        start[d] = dealt[d] = at;
        at += count[d];
    }
    for (size_t i = 0; i < n; i++)
        scratch[dealt[target[i]]++] = i;
    /* order: each group in bit-reversed order of its places */
    for (int d = 0; d < nnodes; d++) {
        int bits = 0;
        while (((size_t)1 << bits) < count[d])
            bits++;
        size_t k = start[d];
        for (size_t j = 0; j < ((size_t)1 << bits); j++) {
            size_t r = bit_reverse(j, bits);
            if (r < count[d])
                order[k++] = scratch[start[d] + r];
        }
        dealt[d] = 0;
    }
    /* scratch: the groups dealt out, water-filling */
    for (size_t k = 0; k < n; k++) {
        int best = -1;
        for (int d = 0; d < nnodes; d++)
            if (dealt[d] < count[d] && (best < 0 || left[d] > left[best]))
                best = d;
        size_t i = order[start[best] + dealt[best]++];
        scratch[k] = i;
        if (saving_ns[i] > 0.0)
            left[best] -= saving_ns[i];
    }
    for (size_t k = 0; k < n; k++)
        order[k] = scratch[k];
    return 0;
}
