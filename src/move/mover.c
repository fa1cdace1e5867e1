/*
 * mover.c -- batched, retried, huge-page-aware page moves (see mover.h).
 *
 * One request goes through these steps, all on local arrays:
 *   1. refs: every valid request (page, index), sorted by address;
 *   2. huge pages: huge_state() over each cluster of nearby 2 MiB chunks
 *      (one call for a request that covers one array);
 *   3. entries: one per unit (2 MiB page, or 4 KiB page) with the
 *      majority target of its refs;
 *   4. rounds: round 0 takes every entry, round r the entries that came
 *      back -EBUSY/-EAGAIN; each round goes in batches of move_batch_pages
 *      entries: query, skip what is placed, skip full nodes, one move;
 *      the entries of different target nodes may go in lanes, each lane
 *      its own rounds on a thread of its own (run_lanes);
 *   5. entries that are not faulted are bound, run by run;
 *   6. every ref's status comes from its entry.
 * The mover's shared state (full-node deadlines, totals, placement-only)
 * is behind one mutex or atomic; the system calls run without it.
 */
#include "move/mover.h"

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "base/thread.h"
#include "topo/topo.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct ph_mover {
    ph_os *os;
    pthread_mutex_t lock;
    ph_mover_cfg cfg;                     /* under lock */
    uint64_t full_until_ns[PH_MAX_NODES]; /* by node index */
    ph_move_stats totals;
    atomic_int placement_only;
    atomic_int program_threads;           /* ph_mover_set_program_threads */
    atomic_int refused_errno;
    atomic_int warned;
};

/* A request for one page. */
typedef struct mv_ref {
    uintptr_t page;
    size_t idx;      /* in the caller's arrays */
} mv_ref;

/* One unit to move. */
typedef struct mv_entry {
    uintptr_t addr;   /* the 4 KiB page, or the 2 MiB head */
    size_t first, n;  /* its refs: refs[first .. first + n) */
    int target;       /* OS node */
    int tidx;         /* node index */
    size_t asked;     /* its first ref's caller index: the batches go
                         in the order the caller asked */
    int tries;        /* move calls it was part of */
    int result;       /* final status */
    uint8_t huge;
    uint8_t was_there;/* on target at the first query */
    uint8_t bound;    /* bind succeeded */
    uint8_t busy;     /* the last move said -EBUSY */
} mv_entry;

static void pause_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

ph_mover *ph_mover_new(ph_os *os, const ph_mover_cfg *cfg)
{
    if (!os)
        return ph_fail_null(EINVAL, "mover: no machine");
    if (!cfg)
        return ph_fail_null(EINVAL, "mover: no configuration");
    ph_mover *m = calloc(1, sizeof *m);
    if (!m)
        return ph_fail_null(ENOMEM, "mover: out of memory");
    m->os = os;
    m->cfg = *cfg;
    pthread_mutex_init(&m->lock, NULL);
    return m;
}

void ph_mover_set_cfg(ph_mover *m, const ph_mover_cfg *cfg)
{
    if (!m || !cfg)
        return;
    pthread_mutex_lock(&m->lock);
    m->cfg = *cfg;
    pthread_mutex_unlock(&m->lock);
}

void ph_mover_free(ph_mover *m)
{
    if (!m)
        return;
    pthread_mutex_destroy(&m->lock);
    free(m);
}

void ph_mover_totals(const ph_mover *m, ph_move_stats *out)
{
    if (!m || !out)
        return;
    ph_mover *mm = (ph_mover *)m;
    pthread_mutex_lock(&mm->lock);
    *out = mm->totals;
    pthread_mutex_unlock(&mm->lock);
}

void ph_mover_set_program_threads(ph_mover *m, int threads)
{
    if (m)
        atomic_store(&m->program_threads, threads > 0 ? threads : 0);
}

int ph_mover_placement_only(const ph_mover *m)
{
    return m ? atomic_load(&((ph_mover *)m)->placement_only) : 0;
}

static int cmp_ref(const void *a, const void *b)
{
    const mv_ref *x = a, *y = b;
    if (x->page != y->page)
        return x->page < y->page ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Move lists are sorted by target, then address, so the kernel migrates
 * each node's pages in one go -- except that pages which came back -EBUSY
 * go last.  The kernel gives up on the rest of a call at the first run it
 * cannot migrate, so one unmovable page would otherwise starve the pages
 * behind it on every retry. */
typedef struct mv_item {
    int busy;
    int tidx;
    uintptr_t addr;
    size_t e;         /* entry */
} mv_item;

static int cmp_item(const void *a, const void *b)
{
    const mv_item *x = a, *y = b;
    if (x->busy != y->busy)
        return x->busy < y->busy ? -1 : 1;
    if (x->tidx != y->tidx)
        return x->tidx < y->tidx ? -1 : 1;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* ---- step 2: which refs are in 2 MiB pages ----------------------------------- */

#define CHUNK(p) ((p) / PH_PAGE_2M)
#define CLUSTER_GAP 8       /* chunks between two asked in one huge_state call */
#define CLUSTER_SPAN 512    /* at most 1 GiB per call */

/* huge_ref[k] = 1 when refs[k] is in a 2 MiB page.  0, or -1 (then
 * nothing is treated as huge). */
static int find_huge(ph_os *os, const mv_ref *refs, size_t n, uint8_t *huge_ref)
{
    memset(huge_ref, 0, n);
    uint8_t *buf = malloc(CLUSTER_SPAN * (PH_PAGE_2M / PH_PAGE_4K));
    if (!buf)
        return -1;
    int rc = 0;
    size_t k = 0;
    while (k < n) {
        /* A cluster: refs whose chunks lie close together. */
        uintptr_t c0 = CHUNK(refs[k].page), clast = c0;
        size_t j = k + 1;
        while (j < n) {
            uintptr_t c = CHUNK(refs[j].page);
            if (c - clast > CLUSTER_GAP || c - c0 >= CLUSTER_SPAN)
                break;
            clast = c;
            j++;
        }
        /* Ask only from the first to the last page of the cluster. */
        uintptr_t from = refs[k].page, to = refs[j - 1].page + PH_PAGE_4K;
        size_t np = (to - from) / PH_PAGE_4K;
        if (ph_os_huge_state(os, (void *)from, np, buf) != 0) {
            rc = -1;
            memset(huge_ref, 0, n);
            break;
        }
        for (size_t q = k; q < j; q++)
            huge_ref[q] = buf[(refs[q].page - from) / PH_PAGE_4K];
        k = j;
    }
    free(buf);
    return rc;
}

/* ---- step 3: entries ------------------------------------------------------- */

/* Majority target of refs[first .. first+n); ties go to the one asked
 * for first (smallest caller index). */
static int majority(const mv_ref *refs, size_t first, size_t n, const int *tidx_of_ref,
                    int *out_tidx)
{
    if (n == 1) {
        *out_tidx = tidx_of_ref[first];
        return 0;
    }
    unsigned votes[PH_MAX_NODES];
    size_t earliest[PH_MAX_NODES];
    memset(votes, 0, sizeof votes);
    for (size_t k = first; k < first + n; k++) {
        int t = tidx_of_ref[k];
        if (votes[t] == 0 || refs[k].idx < earliest[t])
            earliest[t] = refs[k].idx;
        votes[t]++;
    }
    int best = -1;
    for (int t = 0; t < PH_MAX_NODES; t++) {
        if (!votes[t])
            continue;
        if (best < 0 || votes[t] > votes[best] ||
            (votes[t] == votes[best] && earliest[t] < earliest[best]))
            best = t;
    }
    *out_tidx = best;
    return 0;
}

/* pend[0..ne) gets the entries in the order of their asked index (each
 * caller index belongs to one entry); slot[0..count) is scratch. */
static void asked_order(const mv_entry *ents, size_t ne, size_t count, size_t *slot,
                        size_t *pend)
{
    for (size_t i = 0; i < count; i++)
        slot[i] = SIZE_MAX;
    for (size_t k = 0; k < ne; k++)
        slot[ents[k].asked] = k;
    size_t k = 0;
    for (size_t i = 0; i < count; i++)
        if (slot[i] != SIZE_MAX)
            pend[k++] = slot[i];
}

uint64_t *ph_move_stats_failure(ph_move_stats *st, int status)
{
    switch (status) {
    case -EBUSY:
    case -EAGAIN:
        return &st->failed_busy;
    case -ENOMEM:
        return &st->failed_nomem;
    case -EACCES:
    case -EPERM:
    case -ENOSYS:
        return &st->failed_access;
    case -EFAULT:
        return &st->failed_fault;
    default:
        return &st->failed_other;
    }
}

/* ---- the move ------------------------------------------------------------- */

typedef struct mv_call {
    ph_mover *m;
    ph_os *os;
    mv_entry *e;
    size_t ne;
    size_t batch;
    int retries;
    uint64_t backoff_ns;
    int threads;        /* cfg.threads */
    int busy_cpus;      /* the program's threads then (0: not known) */
    ph_move_stats st;
    int refused;        /* errno of a whole-call refusal, 0 if none */
    /* scratch, batch sized */
    void **qp;
    int *qs;
    mv_item *items;
    void **mp;
    int *mn;
    int *ms;
} mv_call;

static void mark_full(ph_mover *m, int tidx, uint64_t until)
{
    pthread_mutex_lock(&m->lock);
    if (m->full_until_ns[tidx] < until)
        m->full_until_ns[tidx] = until;
    pthread_mutex_unlock(&m->lock);
}

static void enter_placement_only(mv_call *c, int err)
{
    ph_mover *m = c->m;
    atomic_store(&m->refused_errno, err);
    atomic_store(&m->placement_only, 1);
    ph_warn_once(&m->warned,
                 "move_pages(2) is not permitted here (%s): pagehome continues with "
                 "placement only",
                 err == ENOSYS ? "ENOSYS" : "EPERM");
}

/* One batch: entries pend[0..n).  Entries to retry are appended to
 * next[*nnext]. */
static void run_batch(mv_call *c, const size_t *pend, size_t n, size_t *next, size_t *nnext,
                      int round)
{
    ph_os *os = c->os;
    for (size_t k = 0; k < n; k++)
        c->qp[k] = (void *)c->e[pend[k]].addr;
    if (ph_os_query(os, n, c->qp, c->qs) != 0) {
        int err = errno;
        if (err == EPERM || err == ENOSYS) {
            c->refused = err;
            enter_placement_only(c, err);
        }
        for (size_t k = 0; k < n; k++)
            c->e[pend[k]].result = -err;
        return;
    }

    uint64_t full[PH_MAX_NODES];
    pthread_mutex_lock(&c->m->lock);
    memcpy(full, c->m->full_until_ns, sizeof full);
    pthread_mutex_unlock(&c->m->lock);
    uint64_t now = ph_now_ns();

    size_t nm = 0;
    for (size_t k = 0; k < n; k++) {
        mv_entry *e = &c->e[pend[k]];
        int q = c->qs[k];
        if (q == e->target) {
            e->result = q;
            if (round == 0)
                e->was_there = 1;
        } else if (q < 0) {
            e->result = q; /* -ENOENT is bound later; others are final */
        } else if (full[e->tidx] > now) {
            e->result = -ENOMEM;
        } else {
            c->items[nm++] = (mv_item){e->busy, e->tidx, e->addr, pend[k]};
        }
    }
    if (nm == 0)
        return;
    qsort(c->items, nm, sizeof *c->items, cmp_item);
    for (size_t k = 0; k < nm; k++) {
        mv_entry *e = &c->e[c->items[k].e];
        c->mp[k] = (void *)e->addr;
        c->mn[k] = e->target;
        e->tries++;
    }
    c->st.calls++;
    long r = ph_os_move(os, nm, c->mp, c->mn, c->ms);
    if (r < 0) {
        int err = errno;
        if (err == EPERM || err == ENOSYS) {
            c->refused = err;
            enter_placement_only(c, err);
        }
        for (size_t k = 0; k < nm; k++)
            c->e[c->items[k].e].result = -err;
        return;
    }
    for (size_t k = 0; k < nm; k++) {
        mv_entry *e = &c->e[c->items[k].e];
        int s = c->ms[k];
        e->result = s;
        e->busy = s == -EBUSY;
        if ((s == -EBUSY || s == -EAGAIN) && e->tries <= c->retries) {
            next[(*nnext)++] = c->items[k].e;
            c->st.retried += e->n;
        } else if (s == -ENOMEM && c->backoff_ns > 0) {
            mark_full(c->m, e->tidx, ph_now_ns() + c->backoff_ns);
        }
    }
}

/* Bind the entries that were not faulted, one bind per run of adjacent
 * units with one target. */
static void bind_unfaulted(mv_call *c)
{
    size_t k = 0;
    while (k < c->ne) {
        mv_entry *e = &c->e[k];
        if (e->result != -ENOENT) {
            k++;
            continue;
        }
        size_t unit = e->huge ? PH_PAGE_2M : PH_PAGE_4K;
        uintptr_t end = e->addr + unit;
        size_t j = k + 1;
        while (j < c->ne && c->e[j].result == -ENOENT && c->e[j].target == e->target &&
               c->e[j].addr == end) {
            end += c->e[j].huge ? PH_PAGE_2M : PH_PAGE_4K;
            j++;
        }
        int node = e->target;
        if (ph_os_bind(c->os, (void *)e->addr, end - e->addr, PH_BIND_PREFERRED, &node,
                             1) == 0)
            for (size_t q = k; q < j; q++)
                c->e[q].bound = 1;
        k = j;
    }
}

/* A call's batch-sized scratch: 0, or -1 when out of memory (what was
 * allocated is freed by scratch_free all the same). */
static int scratch_alloc(mv_call *c, size_t bsz)
{
    c->qp = malloc(bsz * sizeof *c->qp);
    c->qs = malloc(bsz * sizeof *c->qs);
    c->items = malloc(bsz * sizeof *c->items);
    c->mp = malloc(bsz * sizeof *c->mp);
    c->mn = malloc(bsz * sizeof *c->mn);
    c->ms = malloc(bsz * sizeof *c->ms);
    return c->qp && c->qs && c->items && c->mp && c->mn && c->ms ? 0 : -1;
}

static void scratch_free(mv_call *c)
{
    free(c->qp);
    free(c->qs);
    free(c->items);
    free(c->mp);
    free(c->mn);
    free(c->ms);
}

/* ---- step 4: rounds of batches, in lanes -------------------------------- */

/* Rounds of batches over one lane's entries mine[0..n), in that order:
 * round 0 takes them all, round r the ones that came back -EBUSY/-EAGAIN
 * (after a short growing pause).  pend and next are n-sized scratch.  A
 * refusal ends the lane: what it had not moved reports the refusal. */
static void run_rounds(mv_call *c, const size_t *mine, size_t n, size_t *pend, size_t *next)
{
    memcpy(pend, mine, n * sizeof *pend);
    size_t npend = n;
    for (int round = 0; npend > 0 && !c->refused; round++) {
        if (round > 0) {
            long us = 100L << (round - 1 < 6 ? round - 1 : 6);
            pause_us(us);
        }
        size_t nnext = 0;
        for (size_t off = 0; off < npend && !c->refused; off += c->batch) {
            size_t b = npend - off < c->batch ? npend - off : c->batch;
            run_batch(c, pend + off, b, next, &nnext, round);
        }
        memcpy(pend, next, nnext * sizeof *pend);
        npend = nnext;
    }
    if (c->refused)
        for (size_t k = 0; k < n; k++) {
            mv_entry *e = &c->e[mine[k]];
            if (e->result == -EAGAIN || e->result == -EBUSY)
                e->result = -c->refused;
        }
}

/* A lane: the entries of some target nodes, moved by a thread of their
 * own with its own batch-sized scratch; the entries array is shared, each
 * lane writes only its own entries. */
typedef struct mv_lane {
    mv_call c;
    size_t *mine;
    size_t n;
    size_t *pend, *next;
    int index;
    pthread_t thread;
    int started;
} mv_lane;

static void *lane_main(void *arg)
{
    mv_lane *l = arg;
    ph_thread_set_lane(l->index);
    run_rounds(&l->c, l->mine, l->n, l->pend, l->next);
    return NULL;
}

/* How many lanes for entries whose target counts per node index are
 * per_node[]: cfg.threads when set (fewer than the target nodes: nodes
 * share lanes; more: a node's pages are split among several).  By default
 * never fewer than the target nodes, and more (deal_nodes splits nodes)
 * up to the CPUs the program leaves idle when they are at least as many
 * (ncpus - busy; busy 0: not known, every CPU counts as idle): the lanes
 * then take nothing from the program's threads.  When they are fewer,
 * some lanes must share the program's CPUs anyway, and one a CPU spreads
 * that work thinnest.  At most PH_MOVE_MAX_LANES, and none of fewer than
 * PH_MOVE_LANE_MIN_PAGES entries (deal_nodes also leaves a node whole
 * when its pieces would carry too little work). */
static int lane_count(int threads, int ncpus, int busy, const size_t *per_node, size_t ne)
{
    int targets = 0;
    for (int t = 0; t < PH_MAX_NODES; t++)
        targets += per_node[t] > 0;
    int lanes = threads;
    if (lanes <= 0) {
        int idle = ncpus - (busy > 0 ? busy : 0);
        lanes = idle >= targets ? idle : ncpus;
        if (lanes < targets)
            lanes = targets;
    }
    if (lanes > PH_MOVE_MAX_LANES)
        lanes = PH_MOVE_MAX_LANES;
    size_t by_size = ne / PH_MOVE_LANE_MIN_PAGES;
    if ((size_t)lanes > by_size)
        lanes = (int)by_size;
    return lanes < 1 ? 1 : lanes;
}

/* The move work, in ns by the topology's model, of the entries going to
 * each node index: a 4 KiB or 2 MiB page's cost into that node, the mean
 * over the other nodes it may come from, and each batch's call. */
static void work_by_node(const mv_call *c, const size_t *per_node, double *work_ns)
{
    const ph_topology *topo = c->os->topo;
    int n = topo->nnodes;
    double col_4k[PH_MAX_NODES], col_2m[PH_MAX_NODES];
    for (int t = 0; t < n && t < PH_MAX_NODES; t++) {
        double a = 0.0, b = 0.0;
        for (int f = 0; f < n; f++) {
            if (f == t)
                continue;
            a += topo->migrate_ns_4k[(size_t)f * (size_t)n + (size_t)t];
            b += topo->migrate_ns_2m[(size_t)f * (size_t)n + (size_t)t];
        }
        col_4k[t] = n > 1 ? a / (n - 1) : 0.0;
        col_2m[t] = n > 1 ? b / (n - 1) : 0.0;
    }
    for (int t = 0; t < PH_MAX_NODES; t++)
        work_ns[t] = per_node[t] > 0 && t < n
                         ? topo->migrate_ns_call * (double)per_node[t] / (double)c->batch
                         : 0.0;
    for (size_t k = 0; k < c->ne; k++) {
        int t = c->e[k].tidx;
        if (t < n)
            work_ns[t] += c->e[k].huge ? col_2m[t] : col_4k[t];
    }
}

/* Which lanes each target node's entries go to: first[t] and count[t]
 * (0 for a node without entries); the number of lanes used returned.
 * Fewer lanes than nodes: each node goes whole to one lane, the nodes
 * with the most entries first, each to the lane with the fewest so far.
 * More: every node has a lane, and the rest go one by one to the node
 * with the most entries per lane, as long as each piece keeps
 * PH_MOVE_LANE_MIN_PAGES entries and (work_ns given) min_ns of work.
 * Ties: the smaller node index, the smaller lane. */
static int deal_nodes(const size_t *per_node, const double *work_ns, double min_ns,
                      int lanes, int *first, int *count)
{
    int targets = 0;
    for (int t = 0; t < PH_MAX_NODES; t++) {
        first[t] = 0;
        count[t] = 0;
        targets += per_node[t] > 0;
    }
    if (lanes <= targets) {
        size_t load[PH_MOVE_MAX_LANES];
        memset(load, 0, sizeof load);
        for (;;) {
            int best = -1;
            for (int t = 0; t < PH_MAX_NODES; t++)
                if (per_node[t] > 0 && !count[t] &&
                    (best < 0 || per_node[t] > per_node[best]))
                    best = t;
            if (best < 0)
                return lanes;
            int to = 0;
            for (int l = 1; l < lanes; l++)
                if (load[l] < load[to])
                    to = l;
            first[best] = to;
            count[best] = 1;
            load[to] += per_node[best];
        }
    }
    for (int t = 0; t < PH_MAX_NODES; t++)
        count[t] = per_node[t] > 0;
    int used = targets;
    while (used < lanes) {
        int best = -1;
        for (int t = 0; t < PH_MAX_NODES; t++) {
            if (!count[t] || per_node[t] / (size_t)(count[t] + 1) < PH_MOVE_LANE_MIN_PAGES)
                continue;
            if (work_ns && work_ns[t] / (count[t] + 1) < min_ns)
                continue;
            /* per_node[t] / count[t] > per_node[best] / count[best] */
            if (best < 0 || per_node[t] * (size_t)count[best] >
                                per_node[best] * (size_t)count[t])
                best = t;
        }
        if (best < 0)
            break;
        count[best]++;
        used++;
    }
    int at = 0;
    for (int t = 0; t < PH_MAX_NODES; t++) {
        first[t] = at;
        at += count[t];
    }
    return used;
}

/* Step 4 over every entry, pend[0..ne) in the caller's order (next is
 * ne-sized scratch).  One lane runs on the calling thread; the others on
 * threads started for this call and joined before it returns (a lane
 * whose thread cannot start runs on the calling thread afterwards).
 * 0, or -1 with errno when out of memory. */
static int run_lanes(mv_call *c, size_t *pend, size_t *next)
{
    size_t ne = c->ne;
    size_t per_node[PH_MAX_NODES];
    memset(per_node, 0, sizeof per_node);
    for (size_t k = 0; k < ne; k++)
        per_node[c->e[k].tidx]++;
    int lanes = lane_count(c->threads, c->os->topo->ncpus, c->busy_cpus, per_node, ne);
    if (lanes == 1) {
        size_t *mine = malloc((ne ? ne : 1) * sizeof *mine);
        if (!mine)
            return ph_fail(ENOMEM, "ph_mover_move: out of memory for %zu pages", ne);
        memcpy(mine, pend, ne * sizeof *mine);
        run_rounds(c, mine, ne, pend, next);
        free(mine);
        c->st.lanes = ne > 0;
        return 0;
    }

    int first[PH_MAX_NODES], count[PH_MAX_NODES];
    double work_ns[PH_MAX_NODES];
    work_by_node(c, per_node, work_ns);
    /* a lane the default splits off must pay for its thread; one that
     * move_threads asks for is the user's */
    lanes = deal_nodes(per_node, c->threads > 0 ? NULL : work_ns, PH_MOVE_LANE_MIN_NS, lanes,
                       first, count);
    size_t *mine = malloc(ne * sizeof *mine);
    int *lane_of = malloc(ne * sizeof *lane_of);
    mv_lane *ls = calloc((size_t)lanes, sizeof *ls);
    if (!mine || !ls || !lane_of) {
        free(mine);
        free(ls);
        free(lane_of);
        return ph_fail(ENOMEM, "ph_mover_move: out of memory for %d lanes", lanes);
    }
    /* a node's j-th entry (in the caller's order) to its lane j mod count:
     * a node split among lanes keeps its priorities spread over them */
    size_t seen[PH_MAX_NODES];
    memset(seen, 0, sizeof seen);
    for (size_t k = 0; k < ne; k++) {
        int t = c->e[pend[k]].tidx;
        lane_of[k] = first[t] + (int)(seen[t]++ % (size_t)count[t]);
    }
    /* each lane's entries in the caller's order, lane after lane */
    size_t at[PH_MOVE_MAX_LANES + 1];
    memset(at, 0, sizeof at);
    for (size_t k = 0; k < ne; k++)
        at[lane_of[k] + 1]++;
    for (int l = 0; l < lanes; l++)
        at[l + 1] += at[l];
    for (int l = 0; l < lanes; l++) {
        ls[l].mine = mine + at[l];
        ls[l].pend = pend + at[l];
        ls[l].next = next + at[l];
        ls[l].index = l;
    }
    for (size_t k = 0; k < ne; k++) {
        mv_lane *l = &ls[lane_of[k]];
        l->mine[l->n++] = pend[k];
    }
    free(lane_of);

    int rc = 0;
    for (int l = 0; l < lanes; l++) {
        mv_call *lc = &ls[l].c;
        *lc = *c;
        memset(&lc->st, 0, sizeof lc->st);
        if (l == 0)
            continue; /* the calling thread's: c's own scratch */
        if (scratch_alloc(lc, c->batch < ls[l].n ? c->batch : ls[l].n) != 0)
            rc = -1;
    }
    if (rc == 0) {
        for (int l = 1; l < lanes; l++)
            ls[l].started = ph_thread_start(&ls[l].thread, "ph-mover", lane_main, &ls[l]) == 0;
        run_rounds(&ls[0].c, ls[0].mine, ls[0].n, ls[0].pend, ls[0].next);
        for (int l = 1; l < lanes; l++) {
            if (ls[l].started)
                pthread_join(ls[l].thread, NULL);
            else
                run_rounds(&ls[l].c, ls[l].mine, ls[l].n, ls[l].pend, ls[l].next);
        }
        for (int l = 0; l < lanes; l++) {
            c->st.calls += ls[l].c.st.calls;
            c->st.retried += ls[l].c.st.retried;
            if (!c->refused)
                c->refused = ls[l].c.refused;
        }
        c->st.lanes = (uint64_t)lanes;
    }
    for (int l = 1; l < lanes; l++)
        scratch_free(&ls[l].c);
    free(mine);
    free(ls);
    if (rc != 0)
        return ph_fail(ENOMEM, "ph_mover_move: out of memory for %d lanes", lanes);
    return 0;
}

long ph_mover_move(ph_mover *m, size_t count, void *const *pages, const int *nodes,
                   int *status, ph_move_stats *stats)
{
    uint64_t t0 = ph_now_ns();
    if (stats)
        memset(stats, 0, sizeof *stats);
    if (!m)
        return ph_fail(EINVAL, "ph_mover_move: no mover");
    if (count == 0)
        return 0;
    if (!pages || !nodes)
        return ph_fail(EINVAL, "ph_mover_move: pages and nodes must not be NULL");

    ph_os *os = m->os;
    const ph_topology *topo = os->topo;
    mv_call c;
    memset(&c, 0, sizeof c);
    c.m = m;
    c.os = os;
    c.st.requested = count;

    int *own_status = NULL;
    if (!status) {
        own_status = malloc(count * sizeof *own_status);
        if (!own_status)
            return ph_fail(ENOMEM, "ph_mover_move: out of memory for %zu pages", count);
        status = own_status;
    }

    if (atomic_load(&m->placement_only)) {
        int err = atomic_load(&m->refused_errno);
        for (size_t i = 0; i < count; i++)
            status[i] = -err;
        c.st.failed_access = count;
        c.st.elapsed_ns = ph_now_ns() - t0;
        pthread_mutex_lock(&m->lock);
        m->totals.requested += count;
        m->totals.failed_access += count;
        pthread_mutex_unlock(&m->lock);
        if (stats)
            *stats = c.st;
        free(own_status);
        return ph_fail(err, "move_pages(2) is not permitted here (%s): pagehome is in "
                            "placement-only mode",
                       err == ENOSYS ? "ENOSYS" : "EPERM");
    }

    pthread_mutex_lock(&m->lock);
    c.batch = m->cfg.batch_pages;
    c.retries = m->cfg.retries;
    c.backoff_ns = m->cfg.node_full_backoff_ns;
    c.threads = m->cfg.threads;
    c.busy_cpus = atomic_load(&m->program_threads);
    pthread_mutex_unlock(&m->lock);
    if (c.retries < 0)
        c.retries = 0;
    if (c.batch < 1)
        c.batch = 1;

    /* 1. refs */
    mv_ref *refs = malloc(count * sizeof *refs);
    int *tidx_of_ref = malloc(count * sizeof *tidx_of_ref);
    uint8_t *huge_ref = malloc(count);
    mv_entry *ents = malloc(count * sizeof *ents);
    size_t *pend = malloc(count * sizeof *pend);
    size_t *next = malloc(count * sizeof *next);
    int scratch = scratch_alloc(&c, c.batch < count ? c.batch : count);
    long ret = 0;
    if (!refs || !tidx_of_ref || !huge_ref || !ents || !pend || !next || scratch != 0) {
        ret = ph_fail(ENOMEM, "ph_mover_move: out of memory for %zu pages", count);
        goto out;
    }
    size_t nref = 0;
    for (size_t i = 0; i < count; i++) {
        if (ph_topo_node_index(topo, nodes[i]) < 0) {
            status[i] = -EINVAL;
            c.st.failed_other++;
            continue;
        }
        refs[nref].page = (uintptr_t)pages[i] & ~(uintptr_t)(PH_PAGE_4K - 1);
        refs[nref++].idx = i;
    }
    qsort(refs, nref, sizeof *refs, cmp_ref);
    for (size_t k = 0; k < nref; k++)
        tidx_of_ref[k] = ph_topo_node_index(topo, nodes[refs[k].idx]);

    /* 2. huge pages */
    if (nref > 0 && find_huge(os, refs, nref, huge_ref) != 0)
        ph_info("mover: huge page state unknown (%s): moving 4 KiB pages", ph_error_message());

    /* 3. entries */
    size_t ne = 0;
    for (size_t k = 0; k < nref;) {
        uintptr_t unit = huge_ref[k] ? PH_PAGE_2M : PH_PAGE_4K;
        uintptr_t head = refs[k].page & ~(unit - 1);
        size_t j = k + 1;
        while (j < nref && (refs[j].page & ~(unit - 1)) == head &&
               (unit == PH_PAGE_4K || huge_ref[j]))
            j++;
        mv_entry *e = &ents[ne++];
        memset(e, 0, sizeof *e);
        e->addr = head;
        e->first = k;
        e->n = j - k;
        e->huge = unit == PH_PAGE_2M;
        majority(refs, k, e->n, tidx_of_ref, &e->tidx);
        e->target = topo->nodes[e->tidx].id;
        e->result = -EAGAIN;
        e->asked = refs[k].idx;
        for (size_t q = k + 1; q < j; q++)
            if (refs[q].idx < e->asked)
                e->asked = refs[q].idx;
        k = j;
    }
    c.e = ents;
    c.ne = ne;

    /* 4. rounds of batches, in the caller's order (a caller that lists
     * its pages by priority has the first ones moved first; one that
     * lists them by address gets address order), in lanes side by side
     * when there are enough pages for several target nodes */
    asked_order(ents, ne, count, next, pend);
    if (run_lanes(&c, pend, next) != 0) {
        ret = -1;
        goto out;
    }

    /* 5. not faulted: bind */
    bind_unfaulted(&c);

    /* 6. statuses and figures */
    long missed = (long)c.st.failed_other; /* bad targets */
    for (size_t q = 0; q < ne; q++) {
        mv_entry *e = &ents[q];
        int placed_here = e->result == e->target;
        if (placed_here && e->huge && !e->was_there)
            c.st.huge_units++;
        for (size_t k = e->first; k < e->first + e->n; k++) {
            size_t i = refs[k].idx;
            status[i] = e->result;
            if (placed_here) {
                if (nodes[i] != e->target) {
                    c.st.outvoted++;
                    missed++;
                } else if (e->was_there) {
                    c.st.already++;
                } else {
                    c.st.moved++;
                }
                continue;
            }
            if (e->result == -ENOENT && e->bound) {
                c.st.bound++;
                continue;
            }
            missed++;
            (*ph_move_stats_failure(&c.st, e->result))++;
        }
    }
    ret = missed;
    if (c.refused) {
        ret = ph_fail(c.refused, "move_pages(2) is not permitted here (%s): pagehome "
                                 "continues with placement only",
                      c.refused == ENOSYS ? "ENOSYS" : "EPERM");
    }

out:
    c.st.elapsed_ns = ph_now_ns() - t0;
    if (ret >= 0 || c.refused) {
        pthread_mutex_lock(&m->lock);
        ph_move_stats *t = &m->totals;
        t->requested += c.st.requested;
        t->already += c.st.already;
        t->moved += c.st.moved;
        t->bound += c.st.bound;
        t->outvoted += c.st.outvoted;
        t->huge_units += c.st.huge_units;
        t->calls += c.st.calls;
        t->retried += c.st.retried;
        t->failed_busy += c.st.failed_busy;
        t->failed_nomem += c.st.failed_nomem;
        t->failed_access += c.st.failed_access;
        t->failed_fault += c.st.failed_fault;
        t->failed_other += c.st.failed_other;
        t->elapsed_ns += c.st.elapsed_ns;
        if (t->lanes < c.st.lanes)
            t->lanes = c.st.lanes;
        pthread_mutex_unlock(&m->lock);
    }
    if (stats)
        *stats = c.st;
    int saved = errno;
    free(refs);
    free(tidx_of_ref);
    free(huge_ref);
    free(ents);
    free(pend);
    free(next);
    scratch_free(&c);
    free(own_status);
    errno = saved;
    return ret;
}
