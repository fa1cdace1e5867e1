/*
 * run.c -- one run of `pagehome sim` (run.h): the real engine on the
 * simulated machine, timed by the cost model.
 *
 * Set-up.  The preset's machine is opened as the simulator (os_sim.c);
 * each of the program's arrays is mapped there and its pages get their
 * homes from the placement.  Thread t runs on the node the preset's
 * binding gives it (from first_cpu).  The program's *partition* is the
 * nodes its threads run on plus the machine's memory-only nodes: round
 * robin spreads pages over it, single-node puts them all on its last node
 * (any node of a symmetric machine is as bad as another; on cxl-2tier it
 * is the CXL node).
 *
 * The loop.  Each outer iteration runs the program's phases in order.
 * For each phase: pages whose overlapped migration has arrived take their
 * new home; the threads' positions go to the engine (thread notes, at
 * each parallel-region boundary) unless the cell withholds them; under
 * record/replay the z phase is bracketed by phase_begin/phase_end; the
 * phase's time comes from the cost model over the pages' *effective*
 * homes; its accesses accumulate as what the access source will report.
 * At the end of the iteration the engine's iteration_end runs.  The
 * engine itself always runs synchronously here (cfg.sync = 1, so every
 * run is deterministic); the cost model then charges its migrations as
 * the real mechanism would incur them:
 *   - iterative / hybrid invocations and sampling wakes: overlapped, done
 *     by the memory-manager thread (model.h: they arrive one after another
 *     at the preset's cost per call and per page, in the order the
 *     simulated OS migrated them -- its move log; the program never
 *     waits; the mover's lanes side by side, each its own pages one after
 *     another, those without an idle CPU at half speed on the program's
 *     CPUs, whose loss goes on the critical path: ph_exp_lanes_time),
 *     unless the tunable engine_sync is set (then, like replay, on the
 *     critical path);
 *   - phase replay and undo: on the critical path (they run on the
 *     program's thread before and after the phase, phase.c);
 *   - the IRIX-like engine: in the interrupt handler, on the critical path
 *     of the program thread that owns the CPU taking the interrupt (a CPU
 *     of the page's home node, taken round robin among this program's
 *     threads there; a node without CPUs sends it to the nearest node
 *     with CPUs; a node running none of the program's threads delays
 *     nobody of it).  Its migrations count from the next phase on.
 * The sampling mechanism's wakes come every sample_period_ms of modelled
 * time; a wake that falls inside a phase sees the phase's accesses up to
 * that moment.
 *
 * What the access source reports.  The synthetic source (synth.c) asks a
 * model function for each watched page at drain time; here that function
 * returns the accesses made since the source was last armed: each phase
 * adds its counts (node of the accessing thread) to a per-page, per-node
 * accumulator, which empties when the source is armed (a new interval)
 * and after it was drained.  Pagehome engines get either exact counts
 * (every page, every access: UPMlib's hardware counters) or the sampler's
 * view: sample_pages pages watched per interval and each access seen with
 * probability 1/sample_weight, counted as sample_weight (the synthetic
 * source's budget and noise).  The sampling budget's run-time adaptation
 * (sample_budget) measures wall-clock time, which a simulation does not
 * have: it is off here, and the budget stays at sample_pages.
 *
 * Page sizes.  A cell maps its arrays with 4 KiB pages (no THP) or 2 MiB
 * pages (THP; placement then homes each 2 MiB unit as its first page).
 * After every engine call the page size of every unit is read back from
 * the simulated OS (huge_state), so the engine's splits and collapses
 * count from the next phase on (they cost nothing in the model).  Cells
 * with the TLB term (e6) add each thread's page walks to its phase time
 * (model.h); the others are timed as before.
 */
#include "experiment/run.h"

#include "experiment/irix.h"
#include "experiment/model.h"
#include "experiment/workload.h"

#include "base/error.h"
#include "base/sort.h"
#include "engine/engine.h"
#include "machine/machine.h"
#include "move/mover.h"
#include "os/os.h"
#include "sample/source.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *ph_exp_engine_name(int engine)
{
    static const char *names[] = {"off",          "IRIX-like",
                                  "iterative",    "iterative-sampled",
                                  "sampling",     "replay",
                                  "hybrid"};
    return engine >= 0 && engine <= PH_EXP_ENG_HYBRID ? names[engine] : "?";
}

const char *ph_exp_placement_name(int placement)
{
    static const char *names[] = {"first-touch", "round-robin",
                                  "single-node"};
    return placement >= 0 && placement <= PH_EXP_SINGLE_NODE
               ? names[placement]
               : "?";
}

typedef struct sim_run {
    const ph_exp_cell *c;
    const ph_topology *topo;
    int n, T;
    ph_exp_app app;
    ph_exp_costs costs;
    int *before, *after, *nodes;   /* thread -> node index */
    int partition[PH_MAX_NODES], npart;
    /* the machine */
    ph_os *sim;
    ph_mover *mover;
    char *region;                 /* one mapping holds every array */
    size_t region_bytes;
    char *mem[PH_EXP_MAX_ARRAYS];
    void **addr;                  /* every page's address */
    int *status;
    int *home;                    /* where the machine has each page */
    int *eff;                     /* where the program finds it now */
    double *arrive;               /* overlapped move: arrival time */
    uint8_t *pending;             /* a move is in flight */
    size_t npending;
    ph_sim_counters last;
    /* cost model cache: per phase, per thread */
    double *thread_ns;
    uint64_t *remote;
    uint8_t *valid;
    double *extra;                /* per thread: IRIX handler time */
    /* page sizes and the TLB term */
    uint8_t *huge;                /* per page: its unit is one 2 MiB page */
    uint8_t *huge_fresh;
    ph_exp_tlb tlb;
    ph_exp_tlb_thread *tlbw;     /* per thread (work) */
    double *phase_miss;           /* per phase: TLB misses (cache) */
    double *phase_acc;            /* per phase: accesses */
    double *compute;              /* per phase: compute time (run-length
                                     calibration), ns */
    /* the engine and what its source reports */
    ph_engine *e;
    double *acc;                  /* npages * n accesses since the arm */
    int drained;
    uint64_t intervals;
    int overlapped;               /* engine_sync unset */
    double period_ns;             /* sample_period_ms, in ns */
    double early_ns;              /* hybrid: early_period_ms, in ns (0:
                                     no early looks) */
    double busy_until;
    /* the IRIX-like engine */
    ph_exp_irix_params ip;
    uint32_t *cnt;                /* npages * n */
    ph_exp_irix_page *ist;
    size_t cursor;
    int rr[PH_MAX_NODES];         /* round robin of handler threads */
    /* accounting of the current iteration */
    uint64_t it_moves;
    double it_crit;
    ph_exp_result *r;
} sim_run;

/* ---- the access source's view ----------------------------------------- */

static int model_fn(void *m, size_t range, size_t page, uint32_t *acc,
                    int nnodes)
{
    sim_run *s = m;
    if (range >= (size_t)s->app.narrays || nnodes != s->n ||
        page >= s->app.arrays[range].npages)
        return -1;
    size_t g = s->app.arrays[range].first + page;
    s->drained = 1;
    for (int k = 0; k < nnodes; k++) {
        double v = s->acc[g * (size_t)s->n + (size_t)k];
        acc[k] = !(v > 0.5) ? 0
                 : v >= (double)UINT32_MAX ? UINT32_MAX
                                           : (uint32_t)llround(v);
    }
    return 0;
}

static void clear_acc(sim_run *s)
{
    memset(s->acc, 0, s->app.npages * (size_t)s->n * sizeof *s->acc);
    s->drained = 0;
}

/* A phase's accesses, times `frac`, join what the source will report. */
static void accumulate(sim_run *s, const ph_exp_phase *ph, double frac)
{
    if (!s->acc || !(frac > 0))
        return;
    if (s->drained)
        clear_acc(s);
    for (size_t k = 0; k < ph->nacc; k++) {
        const ph_exp_access *a = &ph->acc[k];
        s->acc[(size_t)a->page * (size_t)s->n +
               (size_t)s->nodes[a->thread]] += a->count * frac;
    }
}

/* ---- homes ------------------------------------------------------------ */

static void invalidate(sim_run *s)
{
    memset(s->valid, 0, (size_t)s->app.nphases);
}

static int query_homes(sim_run *s, int *out)
{
    if (ph_os_query(s->sim, s->app.npages, s->addr, s->status) != 0)
        return -1;
    for (size_t p = 0; p < s->app.npages; p++)
        out[p] = s->status[p] >= 0 ? ph_topo_node_index(s->topo, s->status[p])
                                   : -1;
    return 0;
}

/* The page size of every page as the simulated OS has it now; a change
 * (a split or collapse by the engine) re-times the phases. */
static int refresh_huge(sim_run *s)
{
    for (int a = 0; a < s->app.narrays; a++) {
        const ph_exp_array *ar = &s->app.arrays[a];
        if (ph_os_huge_state(s->sim, s->mem[a], ar->npages,
                                    s->huge_fresh + ar->first) != 0)
            return -1;
    }
    if (memcmp(s->huge_fresh, s->huge, s->app.npages) != 0) {
        memcpy(s->huge, s->huge_fresh, s->app.npages);
        invalidate(s);
    }
    return 0;
}

/* The page index of a simulated address (SIZE_MAX: none of the
 * program's). */
static size_t page_at(const sim_run *s, uintptr_t a)
{
    for (int k = 0; k < s->app.narrays; k++) {
        uintptr_t b = (uintptr_t)s->mem[k];
        if (a >= b && a - b < s->app.arrays[k].npages * 4096)
            return s->app.arrays[k].first + (a - b) / 4096;
    }
    return SIZE_MAX;
}

typedef struct moved_page {
    size_t seq;   /* its place in the move log (SIZE_MAX: not logged) */
    size_t page;
    int lane;     /* the mover's lane that moved it (0: not logged) */
} moved_page;

static int cmp_moved(const void *a, const void *b)
{
    const moved_page *x = a, *y = b;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return x->page < y->page ? -1 : x->page > y->page;
}

/* The m pages an engine call moved (fresh[p] != home[p]), in the order
 * the simulated OS migrated them (its move log: each of the mover's lanes
 * completes its moves one after the other in the order it issued them); a
 * page the log does not name (a log that could not grow) comes after,
 * by index, in lane 0.  lane[j] is the lane of order[j]; lane_cost[l]
 * the work lane l did (the log's costs), for l < PH_MAX_NODES; *nlanes
 * one more than the largest lane named.  order malloc'ed (lane too, into
 * *lane_out); NULL when out of memory. */
static size_t *move_order(sim_run *s, const int *fresh, size_t m, int **lane_out,
                          double *lane_cost, int *nlanes)
{
    size_t *order = malloc((m ? m : 1) * sizeof *order);
    int *lane = malloc((m ? m : 1) * sizeof *lane);
    moved_page *mp = malloc((m ? m : 1) * sizeof *mp);
    size_t *seq = malloc(s->app.npages * sizeof *seq);
    int *lane_of = malloc(s->app.npages * sizeof *lane_of);
    ph_sim_moved *log = NULL;
    size_t nlog = 0;
    if (!order || !lane || !mp || !seq || !lane_of ||
        ph_sim_move_log_take(s->sim, &log, &nlog)) {
        free(order);
        free(lane);
        free(mp);
        free(seq);
        free(lane_of);
        ph_fail(ENOMEM, "sim: out of memory");
        return NULL;
    }
    for (int l = 0; l < PH_MAX_NODES; l++)
        lane_cost[l] = 0.0;
    *nlanes = 1;
    for (size_t p = 0; p < s->app.npages; p++) {
        seq[p] = SIZE_MAX;
        lane_of[p] = 0;
    }
    size_t at = 0;
    for (size_t j = 0; j < nlog; j++) {
        int l = log[j].lane >= 0 && log[j].lane < PH_MAX_NODES ? log[j].lane : 0;
        lane_cost[l] += log[j].cost_ns;
        if (l + 1 > *nlanes)
            *nlanes = l + 1;
        for (size_t q = 0; q < log[j].npages; q++) {
            size_t p = page_at(s, (uintptr_t)log[j].addr + q * 4096);
            if (p != SIZE_MAX) { /* moved twice: its last move counts */
                seq[p] = at;
                lane_of[p] = l;
            }
            at++;
        }
    }
    size_t k = 0;
    for (size_t p = 0; p < s->app.npages && k < m; p++)
        if (fresh[p] != s->home[p])
            mp[k++] = (moved_page){seq[p], p, lane_of[p]};
    qsort(mp, k, sizeof *mp, cmp_moved);
    for (size_t j = 0; j < k; j++) {
        order[j] = mp[j].page;
        lane[j] = mp[j].lane;
    }
    free(log);
    free(mp);
    free(seq);
    free(lane_of);
    *lane_out = lane;
    return order;
}

/* Arrival times of an overlapped invocation's m moved pages, order[] and
 * lane[] as move_order gives them, costing cost_ns in all, posted at now:
 * one lane arrives one page after the other over the whole cost (the
 * memory manager alone); several run side by side (ph_exp_lanes_time:
 * on the CPUs the program leaves idle, else sharing the program's), each
 * lane's pages one after the other over its own time.  Work that no
 * lane's log entry carries (move calls that moved nothing) is lane 0's.
 * The manager is busy until the last lane ends; the work taken from the
 * program's CPUs goes on the critical path. */
static void arrivals_of(sim_run *s, const size_t *order, const int *lane, size_t m,
                        double *lane_cost, int nlanes, double cost, double now)
{
    int used = 0;
    double logged = 0.0;
    for (int l = 0; l < nlanes; l++) {
        used += lane_cost[l] > 0;
        logged += lane_cost[l];
    }
    if (used <= 1) {
        double start = ph_exp_manager_start(now, &s->busy_until, cost);
        for (size_t k = 1; k <= m; k++)
            s->arrive[order[k - 1]] = ph_exp_arrival_ns(start, cost, k, m);
        s->r->manager_ns += cost;
        if (m > 0 && s->r->lanes < 1)
            s->r->lanes = 1;
        return;
    }
    if (cost > logged)
        lane_cost[0] += cost - logged;
    int cpus = ph_exp_cpus(s->topo);
    double begin[PH_MAX_NODES], dur[PH_MAX_NODES], end = 0.0;
    double loss = ph_exp_lanes_time(lane_cost, nlanes, cpus - s->T, s->T, cpus, begin,
                                    dur);
    for (int l = 0; l < nlanes; l++)
        if (begin[l] + dur[l] > end)
            end = begin[l] + dur[l];
    double start = ph_exp_manager_start(now, &s->busy_until, end);
    size_t n_of[PH_MAX_NODES] = {0}, k_of[PH_MAX_NODES] = {0};
    for (size_t j = 0; j < m; j++)
        n_of[lane[j]]++;
    for (size_t j = 0; j < m; j++) {
        int l = lane[j];
        s->arrive[order[j]] =
            ph_exp_arrival_ns(start + begin[l], dur[l], ++k_of[l], n_of[l]);
    }
    s->it_crit += loss;
    s->r->critical_ns += loss;
    s->r->lanes_loss_ns += loss;
    s->r->manager_ns += end;
    if (s->r->lanes < used)
        s->r->lanes = used;
}

/* After an engine call: a new sampling interval empties the accumulator;
 * pages the call moved get their new home, now (sync) or on arrival. */
static int after_call(sim_run *s, int overlapped, double now)
{
    if (refresh_huge(s) != 0)
        return -1;
    ph_source_stats ss;
    memset(&ss, 0, sizeof ss);
    ph_source *src = ph_engine_source(s->e);
    src->ops->stats(src, &ss);
    if (ss.intervals != s->intervals) {
        s->intervals = ss.intervals;
        clear_acc(s);
    }
    ph_sim_counters c;
    if (ph_sim_counters_get(s->sim, &c) != 0)
        return -1;
    if (c.moved_pages == s->last.moved_pages &&
        c.migrate_cost_ns == s->last.migrate_cost_ns)
        return 0;
    double cost = c.migrate_cost_ns - s->last.migrate_cost_ns;
    s->last = c;
    int *fresh = malloc(s->app.npages * sizeof *fresh);
    if (!fresh)
        return ph_fail(ENOMEM, "sim: out of memory");
    if (query_homes(s, fresh) != 0) {
        free(fresh);
        return -1;
    }
    size_t m = 0;
    for (size_t p = 0; p < s->app.npages; p++)
        m += fresh[p] != s->home[p];
    s->it_moves += m;
    s->r->migrate_ns += cost;
    if (!overlapped) {
        s->it_crit += cost;
        s->r->critical_ns += cost;
    }
    int *lane = NULL, nlanes = 0;
    double lane_cost[PH_MAX_NODES];
    size_t *order = move_order(s, fresh, m, &lane, lane_cost, &nlanes);
    if (!order) {
        free(fresh);
        return -1;
    }
    if (overlapped)
        arrivals_of(s, order, lane, m, lane_cost, nlanes, cost, now);
    for (size_t k = 1; k <= m; k++) {
        size_t p = order[k - 1];
        s->home[p] = fresh[p];
        if (overlapped) {
            if (!s->pending[p]) {
                s->pending[p] = 1;
                s->npending++;
            }
        } else {
            s->eff[p] = fresh[p];
            if (s->pending[p]) {
                s->pending[p] = 0;
                s->npending--;
            }
            invalidate(s);
        }
    }
    free(lane);
    free(order);
    free(fresh);
    return 0;
}

/* Overlapped moves that arrived by `now` count from here on. */
static void arrivals(sim_run *s, double now)
{
    if (!s->npending)
        return;
    for (size_t p = 0; p < s->app.npages; p++)
        if (s->pending[p] && s->arrive[p] <= now) {
            s->pending[p] = 0;
            s->npending--;
            s->eff[p] = s->home[p];
            invalidate(s);
        }
}

/* ---- the cost of a phase ---------------------------------------------- */

static double phase_time(sim_run *s, int ph, uint64_t *remote)
{
    double *tn = s->thread_ns + (size_t)ph * (size_t)s->T;
    if (!s->valid[ph]) {
        const ph_exp_phase *p = &s->app.phases[ph];
        s->remote[ph] = ph_exp_phase_ns(&s->costs, p->acc, p->nacc,
                                        s->nodes, s->T, s->eff, tn);
        s->phase_miss[ph] = 0;
        if (s->c->tlb && p->sw)
            s->phase_miss[ph] = ph_exp_phase_tlb(&s->tlb, p->acc, p->sw,
                                                 p->nacc, s->T, s->huge,
                                                 s->tlbw, tn);
        s->valid[ph] = 1;
    }
    *remote = s->remote[ph];
    return ph_exp_barrier_ns(tn, s->extra, s->T) + s->compute[ph];
}

/* ---- set-up ----------------------------------------------------------- */

static int array_of(const sim_run *s, size_t p)
{
    int a = 0;
    while (a + 1 < s->app.narrays && p >= s->app.arrays[a + 1].first)
        a++;
    return a;
}

static int placement_home(const sim_run *s, size_t p)
{
    if (s->c->huge) /* a 2 MiB page has one home: its first page's */
        p -= (p - s->app.arrays[array_of(s, p)].first) % 512;
    switch (s->c->placement) {
    case PH_EXP_ROUND_ROBIN:
        return s->partition[p % (size_t)s->npart];
    case PH_EXP_SINGLE_NODE:
        return s->partition[s->npart - 1];
    default:
        return s->before[s->app.first_toucher[p]];
    }
}

static int place(sim_run *s)
{
    for (int a = 0; a < s->app.narrays; a++) {
        const ph_exp_array *ar = &s->app.arrays[a];
        size_t from = 0;
        while (from < ar->npages) {
            int h = placement_home(s, ar->first + from);
            size_t to = from + 1;
            while (to < ar->npages && placement_home(s, ar->first + to) == h)
                to++;
            if (ph_os_populate_on(s->sim, s->mem[a] + from * 4096,
                                         (to - from) * 4096,
                                         s->topo->nodes[h].id) != 0)
                return -1;
            from = to;
        }
    }
    if (query_homes(s, s->home) != 0)
        return -1;
    for (size_t p = 0; p < s->app.npages; p++) {
        if (s->home[p] != placement_home(s, p))
            return ph_fail(EIO, "sim: page %zu landed on node %d, not %d", p,
                           s->home[p], placement_home(s, p));
        s->eff[p] = s->home[p];
    }
    return ph_sim_counters_get(s->sim, &s->last);
}

static void partition(sim_run *s)
{
    uint8_t in[PH_MAX_NODES] = {0};
    for (int t = 0; t < s->T; t++)
        in[s->before[t]] = 1;
    for (int i = 0; i < s->n; i++)
        if (s->topo->nodes[i].ncpus == 0)
            in[i] = 1;
    s->npart = 0;
    for (int i = 0; i < s->n; i++)
        if (in[i])
            s->partition[s->npart++] = i;
}

/* The criterion's arithmetic at the start (run.h: misplaced, qualify,
 * median_gain_ns, max_gain_ns, ml_ns). */
static int gain(sim_run *s)
{
    size_t n = (size_t)s->n, np = s->app.npages;
    double *acc = calloc(np * n, sizeof *acc);
    double *g = calloc(np ? np : 1, sizeof *g);
    if (!acc || !g) {
        free(acc);
        free(g);
        return ph_fail(ENOMEM, "sim: out of memory");
    }
    for (int ph = 0; ph < s->app.nphases; ph++)
        for (size_t k = 0; k < s->app.phases[ph].nacc; k++) {
            const ph_exp_access *a = &s->app.phases[ph].acc[k];
            acc[a->page * n + (size_t)s->before[a->thread]] += a->count;
        }
    double ml = s->c->preset->migrate_ns_4k +
                s->c->preset->migrate_ns_call / 512.0;
    const double *lat = s->topo->latency_ns;
    size_t m = 0;
    for (size_t p = 0; p < np; p++) {
        const double *x = acc + p * n;
        size_t h = (size_t)s->eff[p], best = h;
        int c = 0;
        for (size_t i = 0; i < n; i++) {
            c += x[i] > x[h];
            if (x[i] > x[best])
                best = i;
        }
        if (best == h)
            continue;
        double top = 0;
        int pass = 0;
        for (size_t i = 0; i < n; i++) {
            if (i == h || !(x[i] > 0))
                continue;
            double v = x[i] * (lat[i * n + h] + s->c->preset->contention_ns * c);
            top = v > top ? v : top;
            pass |= v > lat[i * n + h] * x[h] + ml;
        }
        g[m++] = top;
        s->r->qualify += (size_t)pass;
        if (top > s->r->max_gain_ns)
            s->r->max_gain_ns = top;
    }
    if (s->app.zphase >= 0) { /* the z phase's own counts */
        const ph_exp_phase *z = &s->app.phases[s->app.zphase];
        memset(acc, 0, np * n * sizeof *acc);
        for (size_t k = 0; k < z->nacc; k++)
            acc[z->acc[k].page * n + (size_t)s->before[z->acc[k].thread]] +=
                z->acc[k].count;
        for (size_t p = 0; p < np; p++) {
            const double *x = acc + p * n;
            size_t h = (size_t)s->eff[p];
            int c = 0;
            for (size_t i = 0; i < n; i++)
                c += x[i] > x[h];
            for (size_t i = 0; i < n; i++) {
                double v = i == h ? 0
                                  : x[i] * (lat[i * n + h] +
                                            s->c->preset->contention_ns * c);
                if (v > s->r->z_max_gain_ns)
                    s->r->z_max_gain_ns = v;
            }
        }
    }
    qsort(g, m, sizeof *g, ph_cmp_double);
    s->r->misplaced = m;
    s->r->median_gain_ns = m ? g[m / 2] : 0;
    s->r->ml_ns = ml;
    free(acc);
    free(g);
    return 0;
}

/* Memory time of one iteration of app (its phases once each) with the
 * threads on nodes[] and the pages on home[] (no migration, no TLB). */
static double iteration_mem_ns(const sim_run *s, const ph_exp_app *app,
                               const int *home, double *per_phase)
{
    double *tn = malloc((size_t)s->T * sizeof *tn);
    if (!tn)
        return -1;
    double sum = 0;
    for (int ph = 0; ph < app->nphases; ph++) {
        const ph_exp_phase *p = &app->phases[ph];
        ph_exp_phase_ns(&s->costs, p->acc, p->nacc, s->before, s->T, home, tn);
        double d = ph_exp_barrier_ns(tn, NULL, s->T);
        if (per_phase)
            per_phase[ph] = d;
        sum += d;
    }
    free(tn);
    return sum;
}

/* The run-length calibration (model.h, ph_exp_calibrate): on a preset
 * with the real machine's iteration length and single-node slowdown, the
 * program's accesses are scaled to the real program's memory traffic and
 * compute time is added to every phase in proportion to its first-touch
 * memory time.  Calibrated on the program with its normal phases (e3's 4x
 * phases keep the same scale and compute per memory ns, so its longer
 * phases compute longer too).  Other presets and programs: unchanged. */
static int calibrate(sim_run *s)
{
    const ph_exp_cell *c = s->c;
    const ph_exp_preset *p = c->preset;
    s->r->mem_scale = 1.0;
    if (c->app < PH_EXP_BT || c->app > PH_EXP_CG || !(p->real_iter_ns[c->app] > 0))
        return 0;
    size_t np = s->app.npages;
    int *ft = malloc(np * sizeof *ft), *sn = malloc(np * sizeof *sn);
    double *per = calloc((size_t)s->app.nphases, sizeof *per);
    ph_exp_app one;
    int have_one = 0, rc = -1;
    if (!ft || !sn || !per) {
        ph_fail(ENOMEM, "sim: out of memory");
        goto out;
    }
    for (size_t q = 0; q < np; q++) {
        ft[q] = s->before[s->app.first_toucher[q]];
        sn[q] = s->partition[s->npart - 1];
    }
    const ph_exp_app *base = &s->app;
    if (s->app.repeat > 1) {
        if (ph_exp_app_build(&one, c->app, c->nthreads, p->line_bytes, 1) != 0)
            goto out;
        have_one = 1;
        base = &one;
    }
    double mft = iteration_mem_ns(s, base, ft, NULL);
    double msn = iteration_mem_ns(s, base, sn, NULL);
    double real = p->real_iter_ns[c->app] * 16.0 / (double)c->nthreads;
    double scale, cpm;
    if (ph_exp_calibrate(real, p->real_slowdown, mft, msn, &scale, &cpm) != 0) {
        rc = 0;
        goto out;
    }
    /* scale every distinct access list once (CG's repeated steps share
     * theirs) */
    for (int ph = 0; ph < s->app.nphases; ph++) {
        ph_exp_phase *x = &s->app.phases[ph];
        if (x->alias)
            continue;
        for (size_t k = 0; k < x->nacc; k++) {
            double v = (double)x->acc[k].count * scale;
            uint32_t nv = v >= (double)UINT32_MAX ? UINT32_MAX : (uint32_t)llround(v);
            x->acc[k].count = x->acc[k].count && !nv ? 1 : nv;
        }
    }
    iteration_mem_ns(s, &s->app, ft, per);
    double sum = 0;
    for (int ph = 0; ph < s->app.nphases; ph++) {
        s->compute[ph] = cpm * per[ph];
        sum += s->compute[ph];
    }
    s->r->mem_scale = scale;
    s->r->compute_per_iter_ns = sum;
    rc = 0;
out:
    if (have_one)
        ph_exp_app_free(&one);
    free(ft);
    free(sn);
    free(per);
    return rc;
}

static int open_engine(sim_run *s)
{
    const ph_exp_cell *c = s->c;
    ph_engine_cfg cfg;
    ph_engine_cfg_from_options(&cfg);
    s->overlapped = !cfg.sync; /* the engine's work overlaps the program's */
    s->period_ns = cfg.sample_period_ms * 1e6;
    if (c->criterion == PH_EXP_CRIT_AMORTISED)
        cfg.criterion = PH_CRITERION_AMORTISED;
    else if (c->criterion == PH_EXP_CRIT_COMPETITIVE)
        cfg.criterion = PH_CRITERION_COMPETITIVE;
    s->early_ns = c->engine == PH_EXP_ENG_HYBRID ? cfg.early_period_ms * 1e6 : 0;
    cfg.sync = 1;
    cfg.sample_budget = 0;
    size_t budget = 0;
    double noise = 0;
    int sampled = c->engine == PH_EXP_ENG_ITER_SAMPLED ||
                  c->engine == PH_EXP_ENG_SAMPLING;
    if (sampled) {
        cfg.full_snapshot = cfg.sample_pages == 0;
        budget = cfg.sample_pages;
        noise = 1.0 - 1.0 / (double)(cfg.sample_weight ? cfg.sample_weight : 1);
    } else {
        cfg.full_snapshot = 1;
        cfg.sample_weight = 1;
    }
    cfg.mech = c->engine == PH_EXP_ENG_SAMPLING ? PH_MECH_SAMPLING
               : c->engine == PH_EXP_ENG_REPLAY ? PH_MECH_REPLAY
               : c->engine == PH_EXP_ENG_HYBRID ? PH_MECH_HYBRID
                                                 : PH_MECH_ITERATIVE;
    if (c->critical_pages >= 0)
        cfg.critical_pages = (size_t)c->critical_pages;
    if (c->keep_active) {
        cfg.stable_after = 0;
        cfg.cold_after = 0;
    }
    if (c->no_split)
        cfg.huge_split_share = 0;
    s->acc = calloc(s->app.npages * (size_t)s->n, sizeof *s->acc);
    if (!s->acc)
        return ph_fail(ENOMEM, "sim: out of memory");
    ph_source *src = ph_synth_open(s->topo, model_fn, s, budget, noise, 1);
    if (!src)
        return -1;
    s->e = ph_engine_new(s->topo, s->sim, s->mover, src, &cfg);
    if (!s->e || ph_sim_set_move_log(s->sim, 1) != 0)
        return -1;
    /* the program says how many iterations it runs (as a NAS code that
     * knows its niter would through ph_iterations_expected) */
    int I = c->iterations > 0 ? c->iterations : s->app.iterations;
    if (ph_engine_set_iterations(s->e, (unsigned long)(I > 0 ? I : 0)) != 0)
        return -1;
    for (int a = 0; a < s->app.narrays; a++)
        if (!ph_engine_register(s->e, s->mem[a],
                                s->app.arrays[a].npages * 4096,
                                s->app.arrays[a].name))
            return -1;
    ph_source_stats ss;
    memset(&ss, 0, sizeof ss);
    src->ops->stats(src, &ss);
    s->intervals = ss.intervals;
    return 0;
}

static int setup(sim_run *s)
{
    const ph_exp_cell *c = s->c;
    s->topo = c->topo;
    s->n = c->topo->nnodes;
    s->T = c->nthreads;
    if (ph_exp_app_build(&s->app, c->app, c->nthreads, c->preset->line_bytes,
                         c->repeat ? c->repeat : 1) != 0)
        return -1;
    size_t np = s->app.npages, T = (size_t)s->T, P = (size_t)s->app.nphases;
    s->before = malloc(T * sizeof *s->before);
    s->after = malloc(T * sizeof *s->after);
    s->nodes = malloc(T * sizeof *s->nodes);
    s->addr = malloc(np * sizeof *s->addr);
    s->status = malloc(np * sizeof *s->status);
    s->home = malloc(np * sizeof *s->home);
    s->eff = malloc(np * sizeof *s->eff);
    s->arrive = calloc(np, sizeof *s->arrive);
    s->pending = calloc(np, 1);
    s->thread_ns = calloc(P * T, sizeof *s->thread_ns);
    s->remote = calloc(P, sizeof *s->remote);
    s->valid = calloc(P, 1);
    s->extra = calloc(T, sizeof *s->extra);
    s->huge = calloc(np ? np : 1, 1);
    s->huge_fresh = calloc(np ? np : 1, 1);
    s->tlbw = calloc(T, sizeof *s->tlbw);
    s->phase_miss = calloc(P, sizeof *s->phase_miss);
    s->phase_acc = calloc(P, sizeof *s->phase_acc);
    s->compute = calloc(P ? P : 1, sizeof *s->compute);
    if (!s->compute || !s->before || !s->after || !s->nodes || !s->addr || !s->status ||
        !s->home || !s->eff || !s->arrive || !s->pending || !s->thread_ns ||
        !s->remote || !s->valid || !s->extra || !s->huge || !s->huge_fresh ||
        !s->tlbw || !s->phase_miss || !s->phase_acc)
        return ph_fail(ENOMEM, "sim: out of memory");
    for (int a = 0; (c->huge || c->tlb) && a < s->app.narrays; a++)
        if (s->app.arrays[a].npages % 512) /* units are counted by index */
            return ph_fail(EINVAL, "sim: %s's array %s is not whole 2 MiB "
                           "units: no 2 MiB pages or TLB term for it",
                           s->app.name, s->app.arrays[a].name);
    s->tlb = (ph_exp_tlb){c->preset->tlb_entries_4k,
                          c->preset->tlb_entries_2m,
                          c->preset->tlb_walk_ns};
    if (ph_exp_bind_threads(c->preset, s->topo, s->T, c->first_cpu,
                            s->before) != 0)
        return -1;
    for (int t = 0; t < s->T; t++) {
        s->after[t] = c->nodes_after ? c->nodes_after[t] : s->before[t];
        if (s->after[t] < 0 || s->after[t] >= s->n)
            return ph_fail(EINVAL, "sim: thread %d moves to node index %d, "
                           "not a node", t, s->after[t]);
    }
    memcpy(s->nodes, s->before, T * sizeof *s->nodes);
    partition(s);
    s->costs = (ph_exp_costs){s->n, s->topo->latency_ns,
                               c->preset->contention_ns};
    if (calibrate(s) != 0)
        return -1;
    for (size_t ph = 0; ph < P; ph++)
        for (size_t k = 0; k < s->app.phases[ph].nacc; k++)
            s->phase_acc[ph] += s->app.phases[ph].acc[k].count;
    ph_machine_cfg mc; /* the simulator's binding rule and the mover's settings */
    ph_machine_cfg_from_options(&mc);
    s->sim = ph_os_sim_open(s->topo);
    if (!s->sim || ph_sim_set_binding(s->sim, mc.sim_binding) != 0)
        return -1;
    s->mover = ph_mover_new(s->sim, &mc.mover);
    if (!s->mover)
        return -1;
    /* The arrays in one mapping, in their order, each from a 2 MiB
     * boundary.  Mapped one by one, the kernel put them wherever the
     * process's earlier mappings (threads' stacks, earlier runs) had left
     * room, so their order in memory -- which is the engine's and the
     * mover's order, and with one lane the order the pages arrive in --
     * changed from run to run, and so did the modelled times. */
    size_t off[PH_EXP_MAX_ARRAYS];
    s->region_bytes = 0;
    for (int a = 0; a < s->app.narrays; a++) {
        off[a] = s->region_bytes;
        s->region_bytes += (s->app.arrays[a].npages * 4096 + PH_PAGE_2M - 1) &
                           ~(size_t)(PH_PAGE_2M - 1);
    }
    if (s->region_bytes == 0) /* no array: one 2 MiB page all the same */
        s->region_bytes = PH_PAGE_2M;
    s->region = ph_os_map(s->sim, s->region_bytes, PH_PAGE_2M,
                          c->huge ? PH_MAP_HUGE_THP : PH_MAP_NO_THP);
    if (!s->region)
        return -1;
    for (int a = 0; a < s->app.narrays; a++) {
        const ph_exp_array *ar = &s->app.arrays[a];
        s->mem[a] = s->region + off[a];
        for (size_t p = 0; p < ar->npages; p++)
            s->addr[ar->first + p] = s->mem[a] + p * 4096;
    }
    if (place(s) != 0 || gain(s) != 0 || refresh_huge(s) != 0)
        return -1;
    if (c->engine == PH_EXP_ENG_IRIX) {
        ph_exp_irix_defaults(&s->ip);
        s->cnt = calloc(np * (size_t)s->n, sizeof *s->cnt);
        s->ist = calloc(np, sizeof *s->ist);
        if (!s->cnt || !s->ist)
            return ph_fail(ENOMEM, "sim: out of memory");
        for (size_t p = 0; p < np; p++)
            s->ist[p].damp_node = -1;
    } else if (c->engine != PH_EXP_ENG_OFF) {
        if (open_engine(s) != 0)
            return -1;
    }
    return 0;
}

static void teardown(sim_run *s)
{
    if (s->e)
        ph_engine_free(s->e);
    if (s->region)
        ph_os_unmap(s->sim, s->region, s->region_bytes);
    if (s->mover)
        ph_mover_free(s->mover);
    if (s->sim)
        ph_os_close(s->sim);
    ph_exp_app_free(&s->app);
    free(s->before);
    free(s->after);
    free(s->nodes);
    free(s->addr);
    free(s->status);
    free(s->home);
    free(s->eff);
    free(s->arrive);
    free(s->pending);
    free(s->thread_ns);
    free(s->remote);
    free(s->valid);
    free(s->extra);
    free(s->huge);
    free(s->huge_fresh);
    free(s->tlbw);
    free(s->phase_miss);
    free(s->phase_acc);
    free(s->compute);
    free(s->acc);
    free(s->cnt);
    free(s->ist);
}

/* ---- the IRIX-like engine ---------------------------------------------- */

/* The program thread whose CPU takes an interrupt for a page on node h
 * (-1: a CPU this program does not use). */
static int handler_thread(sim_run *s, int h)
{
    int nd = h;
    if (s->topo->nodes[h].ncpus == 0) {
        int best = -1;
        for (int i = 0; i < s->n; i++)
            if (s->topo->nodes[i].ncpus > 0 &&
                (best < 0 || ph_topo_dist(s->topo, h, i) <
                                 ph_topo_dist(s->topo, h, best)))
                best = i;
        nd = best < 0 ? h : best;
    }
    int mine[4096], k = 0;
    for (int t = 0; t < s->T && k < 4096; t++)
        if (s->nodes[t] == nd)
            mine[k++] = t;
    if (k == 0)
        return -1;
    return mine[s->rr[nd]++ % k];
}

/* Counters grow by the phase's accesses; every page it touched is
 * checked; migrations are done in the handler (extra time of the
 * handling thread).  Returns 0 or -1. */
static int irix_phase(sim_run *s, const ph_exp_phase *ph, size_t *moved)
{
    int n = s->n;
    for (size_t k = 0; k < ph->nacc; k++) {
        const ph_exp_access *a = &ph->acc[k];
        uint32_t *c = &s->cnt[(size_t)a->page * (size_t)n +
                              (size_t)s->nodes[a->thread]];
        *c = *c > UINT32_MAX - a->count ? UINT32_MAX : *c + a->count;
    }
    *moved = 0;
    for (size_t k = 0; k < ph->nacc; k++) {
        uint32_t p = ph->acc[k].page;
        if (k > 0 && ph->acc[k - 1].page == p)
            continue;
        int target;
        int out = ph_exp_irix_check(&s->ip, &s->cnt[(size_t)p * (size_t)n],
                                    n, s->home[p], &s->ist[p], &target);
        if (out == PH_IRIX_NONE)
            continue;
        s->r->eligible++;
        if (out != PH_IRIX_MIGRATE)
            continue;
        int to = s->topo->nodes[target].id, st = -1;
        ph_sim_counters before, after;
        ph_sim_counters_get(s->sim, &before);
        if (ph_os_move(s->sim, 1, &s->addr[p], &to, &st) < 0)
            return -1;
        ph_sim_counters_get(s->sim, &after);
        double cost = after.migrate_cost_ns - before.migrate_cost_ns;
        s->last = after;
        if (st != to)
            continue;
        int t = handler_thread(s, s->home[p]);
        if (t >= 0) {
            s->extra[t] += cost;
            s->it_crit += cost;
            s->r->critical_ns += cost;
        }
        s->r->migrate_ns += cost;
        s->home[p] = target;
        (*moved)++;
    }
    return 0;
}

static void irix_periodic(sim_run *s, double from_ns, double to_ns)
{
    double per = s->ip.period_ns;
    long visits = (long)floor(to_ns / per) - (long)floor(from_ns / per);
    size_t np = s->app.npages;
    for (long v = 0; v < visits && np; v++) {
        ph_exp_irix_periodic(&s->cnt[s->cursor * (size_t)s->n], s->n,
                             &s->ist[s->cursor]);
        s->cursor = (s->cursor + 1) % np;
    }
}

/* ---- the loop --------------------------------------------------------- */

static int notes(sim_run *s, double now)
{
    if (!s->e || !s->c->notes)
        return 0;
    for (int t = 0; t < s->T; t++)
        if (ph_engine_note_thread(s->e, t, s->T, s->nodes[t]) != 0)
            return -1;
    return after_call(s, s->overlapped, now);
}

static int uses_phases(const sim_run *s)
{
    return s->e && s->app.zphase >= 0 &&
           (s->c->engine == PH_EXP_ENG_REPLAY ||
            s->c->engine == PH_EXP_ENG_HYBRID);
}

/* One phase of iteration it from *now; returns its time (with its
 * critical-path migrations) in *took. */
static int run_phase(sim_run *s, int ph, double *now, double *took,
                     uint64_t *remote, double *period_next)
{
    const ph_exp_phase *p = &s->app.phases[ph];
    double t0 = *now;
    arrivals(s, *now);
    if (notes(s, *now) != 0)
        return -1;
    int bracket = uses_phases(s) && ph == s->app.zphase;
    if (bracket) {
        double c0 = s->it_crit;
        if (ph_engine_phase_begin(s->e, 0) != 0 || after_call(s, 0, *now))
            return -1;
        *now += s->it_crit - c0;
    }
    uint64_t rem;
    double d;
    if (s->c->engine == PH_EXP_ENG_IRIX) {
        memset(s->extra, 0, (size_t)s->T * sizeof *s->extra);
        size_t moved;
        if (irix_phase(s, p, &moved) != 0)
            return -1;
        d = phase_time(s, ph, &rem);
        memset(s->extra, 0, (size_t)s->T * sizeof *s->extra);
        irix_periodic(s, *now, *now + d);
        s->it_moves += moved;
        if (moved) { /* effective from the next phase */
            for (size_t q = 0; q < s->app.npages; q++)
                s->eff[q] = s->home[q];
            invalidate(s);
        }
    } else {
        d = phase_time(s, ph, &rem);
    }
    /* the memory manager's wakes inside this phase: the sampling
     * mechanism's, and the hybrid mechanism's early looks while the first
     * iteration runs */
    double done = 0;
    int sampling = s->e && s->c->engine == PH_EXP_ENG_SAMPLING;
    int early = s->e && s->early_ns > 0 && s->r->iterations == 0;
    double lost0 = s->it_crit;
    if ((sampling || early) && d > 0) {
        double per = sampling ? s->period_ns : s->early_ns;
        while (*period_next <= *now + d) {
            double f = (*period_next - *now) / d;
            accumulate(s, p, f - done);
            done = f;
            if ((sampling ? ph_engine_tick(s->e) : (int)ph_engine_look(s->e)) < 0 ||
                after_call(s, s->overlapped, *period_next))
                return -1;
            *period_next += per;
        }
    }
    if (s->e)
        accumulate(s, p, 1.0 - done);
    /* what the wakes' lanes took from the program's CPUs (overlapped
     * calls put nothing else on the critical path) lengthens the phase */
    d += s->it_crit - lost0;
    *now += d;
    if (s->app.zphase == ph)
        s->r->iter_z_ns[s->r->iterations] = d;
    if (bracket) {
        double c0 = s->it_crit;
        if (ph_engine_phase_end(s->e, 0) != 0 || after_call(s, 0, *now))
            return -1;
        *now += s->it_crit - c0;
    }
    *took = *now - t0;
    *remote = rem;
    s->r->accesses += s->phase_acc[ph];
    s->r->tlb_misses += s->phase_miss[ph];
    s->r->iter_tlb_misses[s->r->iterations] += s->phase_miss[ph];
    return 0;
}

static int loop(sim_run *s, int iterations)
{
    ph_exp_result *r = s->r;
    double now = 0;
    double period_next = s->c->engine == PH_EXP_ENG_SAMPLING ? s->period_ns
                                                              : s->early_ns;
    for (int it = 0; it < iterations; it++) {
        const int *want = (s->c->migrate_at >= 0 && it >= s->c->migrate_at)
                              ? s->after
                              : s->before;
        if (memcmp(want, s->nodes, (size_t)s->T * sizeof *want) != 0) {
            memcpy(s->nodes, want, (size_t)s->T * sizeof *want);
            invalidate(s);
        }
        s->it_moves = 0;
        s->it_crit = 0;
        r->iterations = it; /* index for iter_z_ns */
        double t_it = 0, rem_it = 0;
        for (int ph = 0; ph < s->app.nphases; ph++) {
            double took;
            uint64_t rem;
            if (run_phase(s, ph, &now, &took, &rem, &period_next) != 0)
                return -1;
            t_it += took;
            rem_it += (double)rem;
        }
        if (s->e) {
            double c0 = s->it_crit;
            if (ph_engine_iteration_end(s->e) != 0 ||
                after_call(s, s->overlapped, now))
                return -1;
            t_it += s->it_crit - c0;
            now += s->it_crit - c0;
        }
        r->iter_ns[it] = t_it;
        r->iter_remote[it] = rem_it;
        r->iter_moves[it] = s->it_moves;
        r->iter_crit_ns[it] = s->it_crit;
    }
    r->iterations = iterations;
    return 0;
}

static void summarise(sim_run *s)
{
    ph_exp_result *r = s->r;
    int I = r->iterations;
    for (int it = 0; it < I; it++) {
        r->total_ns += r->iter_ns[it];
        if (it >= I / 2)
            r->last_half_ns += r->iter_ns[it];
        r->remote_per_iter += r->iter_remote[it] / I;
        r->migrated += r->iter_moves[it];
        if (it < 2)
            r->first2 += r->iter_moves[it];
        if (s->c->migrate_at >= 0 && it >= s->c->migrate_at)
            r->after_migrate += r->iter_moves[it];
    }
    r->tlb_ns = r->tlb_misses * s->tlb.walk_ns;
    r->remote_share = r->accesses > 0
                          ? r->remote_per_iter * I / r->accesses
                          : 0;
    for (size_t u = 0; u + 512 <= s->app.npages; u += 512)
        r->huge_units_end += s->huge[u] != 0;
    if (s->e) {
        ph_engine_totals t;
        ph_engine_get_totals(s->e, &t);
        r->eligible = t.candidates;
        r->replayed = t.replayed;
        r->undone = t.undone;
        r->invocations = t.invocations;
        r->predictive_switches = t.predictive_switches;
        r->frozen = t.frozen;
        r->melted = t.melted;
        r->huge_migrated = t.huge_migrated;
        r->huge_split = t.huge_split;
        r->huge_collapsed = t.huge_collapsed;
        r->moved_4k = t.migrated - t.huge_migrated;
        r->phase_pages = ph_engine_phase_pages(s->e, 0);
    }
}

int ph_exp_run_cell(const ph_exp_cell *c, ph_exp_result *r)
{
    memset(r, 0, sizeof *r);
    r->phase_pages = -1;
    if (!c || !c->preset || !c->topo)
        return ph_fail(EINVAL, "sim: no machine");
    sim_run s;
    memset(&s, 0, sizeof s);
    s.c = c;
    s.r = r;
    int rc = setup(&s);
    int I = c->iterations > 0 ? c->iterations : s.app.iterations;
    if (rc == 0 && I < 1)
        rc = ph_fail(EINVAL, "sim: %d iterations", I);
    if (rc == 0) {
        r->nthreads = s.T;
        r->hot_pages = s.app.npages;
        r->iter_ns = calloc((size_t)I, sizeof *r->iter_ns);
        r->iter_remote = calloc((size_t)I, sizeof *r->iter_remote);
        r->iter_moves = calloc((size_t)I, sizeof *r->iter_moves);
        r->iter_crit_ns = calloc((size_t)I, sizeof *r->iter_crit_ns);
        r->iter_z_ns = calloc((size_t)I, sizeof *r->iter_z_ns);
        r->iter_tlb_misses = calloc((size_t)I, sizeof *r->iter_tlb_misses);
        if (!r->iter_ns || !r->iter_remote || !r->iter_moves ||
            !r->iter_crit_ns || !r->iter_z_ns || !r->iter_tlb_misses)
            rc = ph_fail(ENOMEM, "sim: out of memory");
    }
    if (rc == 0)
        rc = loop(&s, I);
    if (rc == 0)
        summarise(&s);
    int err = errno;
    teardown(&s);
    if (rc != 0) {
        ph_exp_result_free(r);
        errno = err;
    }
    return rc;
}

void ph_exp_result_free(ph_exp_result *r)
{
    free(r->iter_ns);
    free(r->iter_remote);
    free(r->iter_moves);
    free(r->iter_crit_ns);
    free(r->iter_z_ns);
    free(r->iter_tlb_misses);
    r->iter_ns = r->iter_remote = r->iter_crit_ns = r->iter_z_ns = NULL;
    r->iter_tlb_misses = NULL;
    r->iter_moves = NULL;
}
