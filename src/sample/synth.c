/*
 * synth.c -- the simulated machine's access source (see source.h).
 *
 * Instead of trapping accesses, it asks a workload model how often the
 * threads of each node touch each watched page during the interval, so
 * criteria tests see exact, repeatable counts.  With noise p > 0 each
 * access is kept with probability 1-p (a binomial thinning, seeded), which
 * is what sampling does to the counts a real source sees.
 *
 * Watching follows the sampler's budget rule: pages_per_interval pages per
 * arm(), taken round-robin over all ranges from a rotating cursor (0 or
 * full: every page).  Like a watched page of the sampler, which traps on
 * its first touch after arm() and is open after that, a watched page is
 * reported once per arm(): by the first drain() whose model counts for it
 * are not all zero; until then it stays watched (an interval the engine
 * lets go on over several iteration ends sees it when it is used).
 * Ranges are numbered by the order they were added (0, 1, ...), and keep
 * their number when others are removed: that number is the model's
 * `range` argument.
 */
#include "sample/source.h"

#include "base/error.h"
#include "base/rng.h"
#include "topo/topo.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct synth_range {
    uintptr_t base;
    size_t npages;
    size_t id;
} synth_range;

typedef struct synth {
    int nnodes;
    ph_synth_model_fn fn;
    void *model;
    size_t budget;        /* pages per interval, 0 = all */
    double noise;
    uint64_t rng;
    synth_range *r;
    size_t nr, cap, next_id;
    size_t cursor_range, cursor_page; /* rotation */
    int armed, full;
    /* the interval's watched window: from (range, page), count pages */
    size_t win_range, win_page, win_pages;
    /* watched pages reported since arm() (bit k: the k-th watched page) */
    uint64_t *fired;
    size_t fired_bits;
    ph_source_stats st;
} synth;

static double uniform(uint64_t *s)
{
    return ph_rng_unit(ph_splitmix64_next(s));
}

/* Accesses kept out of `count` when each is kept with probability q. */
static uint32_t thin(synth *y, uint32_t count, double q)
{
    if (q >= 1.0 || count == 0)
        return count;
    if (count <= 64) {
        uint32_t k = 0;
        for (uint32_t i = 0; i < count; i++)
            k += uniform(&y->rng) < q;
        return k;
    }
    /* normal approximation of the binomial (Box-Muller) */
    double u1 = uniform(&y->rng), u2 = uniform(&y->rng);
    double z = sqrt(-2.0 * log(u1 > 0 ? u1 : 1e-300)) * cos(6.283185307179586 * u2);
    double v = (double)count * q + z * sqrt((double)count * q * (1 - q));
    if (v < 0)
        v = 0;
    if (v > (double)count)
        v = (double)count;
    return (uint32_t)llround(v);
}

static int s_add(ph_source *s, void *addr, size_t bytes)
{
    synth *y = s->impl;
    if (((uintptr_t)addr & 4095) || (bytes & 4095) || bytes == 0)
        return ph_fail(EINVAL, "synthetic source: range %p +%zu is not "
                       "4 KiB aligned", addr, bytes);
    if (y->nr == y->cap) {
        size_t cap = y->cap ? 2 * y->cap : 8;
        synth_range *n = realloc(y->r, cap * sizeof *n);
        if (!n)
            return ph_fail(ENOMEM, "synthetic source: out of memory");
        y->r = n;
        y->cap = cap;
    }
    y->r[y->nr++] = (synth_range){(uintptr_t)addr, bytes / 4096,
                                  y->next_id++};
    return 0;
}

static int s_remove(ph_source *s, void *addr, size_t bytes)
{
    synth *y = s->impl;
    (void)bytes;
    for (size_t i = 0; i < y->nr; i++)
        if (y->r[i].base == (uintptr_t)addr) {
            memmove(&y->r[i], &y->r[i + 1], (y->nr - i - 1) * sizeof *y->r);
            y->nr--;
            /* the window may name ranges by position: start over */
            y->armed = 0;
            y->cursor_range = 0;
            y->cursor_page = 0;
            return 0;
        }
    return ph_fail(ENOENT, "synthetic source: no range at %p", addr);
}

static size_t total_pages(const synth *y)
{
    size_t t = 0;
    for (size_t i = 0; i < y->nr; i++)
        t += y->r[i].npages;
    return t;
}

/* Room for `bits` fired bits, all clear.  0, or -1 (out of memory: every
 * page then counts as not fired, reported at each drain). */
static int fired_reset(synth *y, size_t bits)
{
    size_t words = (bits + 63) / 64;
    if (bits > y->fired_bits) {
        uint64_t *f = realloc(y->fired, (words ? words : 1) * sizeof *f);
        if (!f)
            return -1;
        y->fired = f;
        y->fired_bits = words * 64;
    }
    if (words)
        memset(y->fired, 0, words * sizeof *y->fired);
    return 0;
}

static int s_arm(ph_source *s, int full)
{
    synth *y = s->impl;
    size_t total = total_pages(y);
    y->armed = 1;
    y->st.intervals++;
    if (fired_reset(y, full || y->budget == 0 || y->budget >= total ? total : y->budget) != 0)
        return ph_fail(ENOMEM, "synthetic source: out of memory");
    if (full || y->budget == 0 || y->budget >= total) {
        y->full = 1;
        y->st.armed_pages += total;
        y->st.swept_pages += total;
        return 0;
    }
    y->full = 0;
    if (y->cursor_range >= y->nr) {
        y->cursor_range = 0;
        y->cursor_page = 0;
    }
    y->win_range = y->cursor_range;
    y->win_page = y->cursor_page;
    y->win_pages = y->budget;
    y->st.armed_pages += y->budget;
    y->st.swept_pages += y->budget;
    /* advance the cursor by the budget */
    size_t left = y->budget;
    while (left) {
        size_t room = y->r[y->cursor_range].npages - y->cursor_page;
        size_t take = left < room ? left : room;
        y->cursor_page += take;
        left -= take;
        if (y->cursor_page == y->r[y->cursor_range].npages) {
            y->cursor_page = 0;
            y->cursor_range = (y->cursor_range + 1) % y->nr;
        }
    }
    return 0;
}

static int s_disarm(ph_source *s)
{
    synth *y = s->impl;
    y->armed = 0;
    return 0;
}

/* Report the k-th watched page, page `page` of range ri, unless it was
 * reported since arm(); flush the batch when full. */
static void report(synth *y, size_t k, size_t ri, size_t page, ph_sample *batch,
                   size_t *nb, ph_sample_fn fn, void *arg, uint32_t *acc,
                   size_t *total)
{
    if (k < y->fired_bits && (y->fired[k / 64] >> (k % 64) & 1))
        return;
    memset(acc, 0, (size_t)y->nnodes * sizeof *acc);
    if (y->fn(y->model, y->r[ri].id, page, acc, y->nnodes) != 0)
        return;
    int any = 0;
    for (int n = 0; n < y->nnodes; n++) {
        uint32_t c = thin(y, acc[n], 1.0 - y->noise);
        if (!c)
            continue;
        any = 1;
        batch[(*nb)++] = (ph_sample){y->r[ri].base + page * 4096, n, c};
        (*total)++;
        if (*nb == 256) {
            fn(arg, batch, *nb);
            *nb = 0;
        }
    }
    if (any && k < y->fired_bits)
        y->fired[k / 64] |= (uint64_t)1 << (k % 64);
}

static size_t s_drain(ph_source *s, ph_sample_fn fn, void *arg)
{
    synth *y = s->impl;
    if (!y->armed || y->nr == 0)
        return 0;
    ph_sample batch[256];
    uint32_t acc[PH_MAX_NODES];
    size_t nb = 0, total = 0;
    if (y->full) {
        size_t k = 0;
        for (size_t ri = 0; ri < y->nr; ri++)
            for (size_t p = 0; p < y->r[ri].npages; p++)
                report(y, k++, ri, p, batch, &nb, fn, arg, acc, &total);
    } else {
        size_t ri = y->win_range, p = y->win_page;
        for (size_t k = 0; k < y->win_pages; k++) {
            report(y, k, ri, p, batch, &nb, fn, arg, acc, &total);
            if (++p == y->r[ri].npages) {
                p = 0;
                ri = (ri + 1) % y->nr;
            }
        }
    }
    if (nb)
        fn(arg, batch, nb);
    y->st.samples += total;
    return total;
}

static void s_stats(ph_source *s, ph_source_stats *out)
{
    synth *y = s->impl;
    *out = y->st;
}

static void s_close(ph_source *s)
{
    if (!s)
        return;
    synth *y = s->impl;
    free(y->r);
    free(y->fired);
    free(y);
    free(s);
}

static int s_set_budget(ph_source *s, size_t pages)
{
    synth *y = s->impl;
    y->budget = pages;
    return 0;
}

static const ph_source_ops synth_ops = {
    .set_budget = s_set_budget,
    .name = "synth",
    .add_range = s_add,
    .remove_range = s_remove,
    .arm = s_arm,
    .disarm = s_disarm,
    .drain = s_drain,
    .stats = s_stats,
    .close = s_close,
};

ph_source *ph_synth_open(const struct ph_topology *topo,
                         ph_synth_model_fn fn, void *model,
                         size_t pages_per_interval, double noise,
                         uint64_t seed)
{
    if (!topo || !fn || !(noise >= 0.0 && noise <= 1.0))
        return ph_fail_null(EINVAL, "synthetic source: %s",
                            !topo ? "no topology"
                            : !fn ? "no workload model"
                                  : "noise must be in [0, 1]");
    ph_source *s = calloc(1, sizeof *s);
    synth *y = calloc(1, sizeof *y);
    if (!s || !y) {
        free(s);
        free(y);
        return ph_fail_null(ENOMEM, "synthetic source: out of memory");
    }
    y->nnodes = topo->nnodes;
    y->fn = fn;
    y->model = model;
    y->budget = pages_per_interval;
    y->noise = noise;
    y->rng = seed ? seed : 1;
    s->ops = &synth_ops;
    s->impl = y;
    return s;
}
