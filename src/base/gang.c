/*
 * gang.c -- gangs: split, join and barrier over meeting points (gang.h).
 */
#include "base/gang.h"

#include "base/error.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- arithmetic ------------------------------------------------------ */

void ph_gang_shape(int S, int G, int g, int *first, int *gsize)
{
    int q = S / G, r = S % G;
    *gsize = q + (g < r);
    *first = g * q + (g < r ? g : r);
}

int ph_gang_of(int S, int G, int t)
{
    int q = S / G, r = S % G;
    int big = r * (q + 1);             /* threads in the larger gangs */
    if (t < big)
        return t / (q + 1);
    return r + (t - big) / q;
}

/* floor(n * k / T) without overflow (k <= T) */
static uint64_t scale(uint64_t n, int k, int T)
{
    uint64_t t = (uint64_t)T;
    return (n / t) * (uint64_t)k + ((n % t) * (uint64_t)k) / t;
}

void ph_gang_block_of(uint64_t n, int first, int size, int T, uint64_t *b,
                      uint64_t *e)
{
    *b = scale(n, first, T);
    *e = scale(n, first + size, T);
}

void ph_gang_share(uint64_t n, int S, int t, uint64_t *b, uint64_t *e)
{
    uint64_t q = n / (uint64_t)S, r = n % (uint64_t)S, ut = (uint64_t)t;
    *b = ut * q + (ut < r ? ut : r);
    *e = *b + q + (ut < r);
}

/* ---- views ----------------------------------------------------------- */

static void view_root(const ph_gang_call *k, ph_gang_view *v)
{
    ph_gang_root *r = k->root;
    *v = (ph_gang_view){0, k->team, 0, 1, 0, &r->meet, NULL, &r->children,
                        &r->nchildren, r->nodes, r->nnodes};
}

static void view_of(const ph_gang_call *k, ph_gang *g, ph_gang_view *v)
{
    if (!g) {
        view_root(k, v);
        return;
    }
    *v = (ph_gang_view){g->first, g->size, g->num, g->count, g->level,
                        &g->meet, g, &g->children, &g->nchildren, g->nodes,
                        g->nnodes};
}

int ph_gang_current(const ph_gang_call *k, ph_gang_view *v, const char *who)
{
    ph_gang *g = *k->cur;
    if (g && (g->team != k->team || k->tid < g->first ||
              k->tid >= g->first + g->size)) {
        *k->cur = NULL;
        view_root(k, v);
        return ph_fail(EINVAL, "%s: this thread was left in a gang of "
                       "another team (threads %d-%d of %d; now thread %d of "
                       "%d): every split needs its join before the parallel "
                       "region ends; back at the whole team", who, g->first,
                       g->first + g->size - 1, g->team, k->tid, k->team);
    }
    view_of(k, g, v);
    return 0;
}

/* This process's threads of a gang: [a, b). */
static void local_part(const ph_gang_call *k, int first, int size, int *a,
                       int *b)
{
    *a = first > k->lo ? first : k->lo;
    *b = first + size < k->hi ? first + size : k->hi;
    if (*b < *a)
        *b = *a;
}

static int spans_others(const ph_gang_call *k, const ph_gang_view *v)
{
    return v->first < k->lo || v->first + v->size > k->hi;
}

/* the distinct values of val[i] for threads [a, b) (val indexed from
 * base), in order, into nodes */
static int distinct_nodes(const ph_meet_view *mv, int a, int b, int *nodes)
{
    int n = 0;
    for (int t = a; t < b; t++) {
        long x = mv->val[t - mv->base];
        if (x < 0)
            continue;
        int seen = 0;
        for (int i = 0; i < n && !seen; i++)
            seen = nodes[i] == (int)x;
        if (!seen && n < 64)
            nodes[n++] = (int)x;
    }
    return n;
}

/* ---- the completion of a synchronisation ----------------------------- */

typedef struct sync_ctx {
    const ph_gang_call *k;
    ph_gang_view *v;
} sync_ctx;

/* the hook of a gang with threads in other processes; 0 when none */
static int run_remote(const ph_gang_call *k, const ph_gang_view *v,
                      const ph_meet_view *mv, ph_meet_result *res)
{
    if (!spans_others(k, v) || !k->remote)
        return 0;
    ph_gang_sync s = {mv->bad ? -1 : mv->kind, mv->arg, v->first, v->size,
                      v->level, k->team};
    if (k->remote(k->remote_arg, &s) < 0) {
        if (!mv->bad) {
            res->ret = -1;
            res->err = errno ? errno : EIO;
            snprintf(res->msg, sizeof res->msg, "%s", ph_error_message());
        }
        return -1;
    }
    return 0;
}

static void fill_root_nodes(const ph_gang_call *k, const ph_meet_view *mv,
                            const ph_gang_view *v)
{
    if (v->g)
        return;
    int a, b;
    local_part(k, 0, k->team, &a, &b);
    k->root->nnodes = distinct_nodes(mv, a, b, k->root->nodes);
}

static void on_barrier(void *arg, const ph_meet_view *mv, ph_meet_result *res)
{
    sync_ctx *x = arg;
    if (run_remote(x->k, x->v, mv, res) < 0 || mv->bad)
        return;
    fill_root_nodes(x->k, mv, x->v);
}

/* Arrays of gangs left by splits never joined (on_split), kept. */
static _Atomic(ph_gang *) stale_gangs;

static void on_split(void *arg, const ph_meet_view *mv, ph_meet_result *res)
{
    sync_ctx *x = arg;
    const ph_gang_call *k = x->k;
    ph_gang_view *v = x->v;
    if (run_remote(k, v, mv, res) < 0 || mv->bad)
        return;
    fill_root_nodes(k, mv, v);
    long G = mv->arg;
    if (G < 1 || G > v->size) {
        res->ret = -1;
        res->err = EINVAL;
        if (G > v->size)
            snprintf(res->msg, sizeof res->msg, "a gang of %d thread(s) "
                     "cannot split into %ld gangs: every gang needs a thread "
                     "(1 to %d gangs; nested deeper than the team)", v->size,
                     G, v->size);
        else
            snprintf(res->msg, sizeof res->msg, "%ld gangs: the count must "
                     "be at least 1", G);
        return;
    }
    /* Gangs of an earlier split that was never joined (a parallel region
     * ended inside them): every local thread of this gang is here, so
     * none of them is in those any more; they stay allocated, since a
     * thread of another team may still point at them (ph_gang_current
     * tells it), on the list of stale gangs (kept for the process). */
    if (*v->children) {
        ph_gang *old = *v->children;
        old[0].stale_next = atomic_load(&stale_gangs);
        while (!atomic_compare_exchange_weak(&stale_gangs, &old[0].stale_next, old))
            ;
        *v->children = NULL;
        *v->nchildren = 0;
    }
    ph_gang *ch = calloc((size_t)G, sizeof *ch);
    if (!ch) {
        res->ret = -1;
        res->err = ENOMEM;
        snprintf(res->msg, sizeof res->msg, "out of memory for %ld gangs", G);
        return;
    }
    for (int g = 0; g < (int)G; g++) {
        int off, sz;
        ph_gang_shape(v->size, (int)G, g, &off, &sz);
        ch[g].parent = v->g;
        ch[g].first = v->first + off;
        ch[g].size = sz;
        ch[g].num = g;
        ch[g].count = (int)G;
        ch[g].level = v->level + 1;
        ch[g].team = k->team;
        if (ph_meet_init(&ch[g].meet) < 0) {
            for (int i = 0; i < g; i++)
                ph_meet_destroy(&ch[i].meet);
            free(ch);
            res->ret = -1;
            res->err = ENOMEM;
            snprintf(res->msg, sizeof res->msg, "out of memory");
            return;
        }
        int a, b;
        local_part(k, ch[g].first, sz, &a, &b);
        ch[g].nnodes = distinct_nodes(mv, a, b, ch[g].nodes);
    }
    *v->children = ch;
    *v->nchildren = (int)G;
    res->payload = ch;
}

static void free_children(ph_gang *ch, int n)
{
    for (int i = 0; i < n; i++) {
        if (ch[i].children)          /* a join forgotten inside: its level */
            free_children(ch[i].children, ch[i].nchildren);
        ph_meet_destroy(&ch[i].meet);
    }
    free(ch);
}

static void on_join(void *arg, const ph_meet_view *mv, ph_meet_result *res)
{
    sync_ctx *x = arg;
    ph_gang_view *v = x->v;
    /* every local thread of the parent is here: nobody looks at the
     * children any more, whatever the verdict */
    if (*v->children)
        free_children(*v->children, *v->nchildren);
    *v->children = NULL;
    *v->nchildren = 0;
    run_remote(x->k, v, mv, res);
}

/* ---- the calls ------------------------------------------------------- */

static int arrive(const ph_gang_call *k, ph_gang_view *v, int kind, long arg,
                  ph_meet_fn fn, const char *who, void **payload)
{
    int a, b;
    local_part(k, v->first, v->size, &a, &b);
    ph_meet_arrival ar = {k->tid - a, b - a, a, kind, arg, k->node, k->names};
    sync_ctx x = {k, v};
    uint64_t t = k->timeout_ns;
    return ph_meet_arrive(v->meet, &ar, fn, &x, t, who, payload);
}

int ph_gang_split_do(const ph_gang_call *k, int count, const char *who)
{
    ph_gang_view v;
    if (ph_gang_current(k, &v, who) < 0)
        return -1;
    void *payload = NULL;
    if (arrive(k, &v, PH_GANG_SPLIT, count, on_split, who, &payload) < 0)
        return -1;
    ph_gang *ch = payload;
    int g = ph_gang_of(v.size, count, k->tid - v.first);
    *k->cur = &ch[g];
    return g;
}

int ph_gang_join_do(const ph_gang_call *k, const char *who)
{
    ph_gang_view v;
    if (ph_gang_current(k, &v, who) < 0)
        return -1;
    if (!v.g)
        return ph_fail(EINVAL, "%s: the team is not split (a join needs a "
                       "split before it)", who);
    ph_gang *parent = v.g->parent;     /* v.g is freed by the join */
    ph_gang_view pv;
    view_of(k, parent, &pv);
    int rc = arrive(k, &pv, PH_GANG_JOIN, 0, on_join, who, NULL);
    if (rc < 0 && errno == ETIMEDOUT)
        return -1;                     /* not all came: stay (broken) */
    *k->cur = parent;
    return rc;
}

int ph_gang_barrier_do(const ph_gang_call *k, const char *who)
{
    ph_gang_view v;
    if (ph_gang_current(k, &v, who) < 0)
        return -1;
    return arrive(k, &v, PH_GANG_BARRIER, 0, on_barrier, who, NULL);
}
