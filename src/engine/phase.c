/*
 * phase.c -- record / replay / undo across the phases of an iteration
 * (UPMlib's upmlib_record, upmlib_replay, upmlib_undo; WOMPAT 2000, 2.2).
 *
 * A phase is a stretch of the iteration with its own access pattern (NAS
 * BT's z_solve).  The program brackets it with phase_begin/phase_end:
 *   - the first occurrence RECORDS: samples taken between begin and end
 *     go to a buffer of their own (not to the areas' counts); at the end
 *     the criterion is applied to every page the phase touched (the
 *     competitive one: one occurrence against one move; the amortised
 *     one: one occurrence's saving against the move there and back for
 *     every thread that waits for it), the pages whose raccmax/lacc exceeds critical_threshold are
 *     kept, at most critical_pages of them (the most critical first), and
 *     the result is the phase's list of migrations;
 *   - later occurrences REPLAY the list before the phase (noting where
 *     each page was) and UNDO it after, sending every page that moved back
 *     where it was: the placement the rest of the iteration is tuned for
 *     is restored.
 * Replay and undo run on the caller's thread: the pages must have arrived
 * before the phase starts.
 * Phases are only acted on by the REPLAY mechanism, and by HYBRID once
 * its iterative part is over; otherwise the calls are checked and counted
 * but do nothing.
 */
#include "engine/engine_int.h"

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "criteria/amortised.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void ph_engine_phases_free(ph_engine *e)
{
    for (int p = 0; p < PH_MAX_PHASES; p++) {
        free(e->phases[p].moves);
        e->phases[p].moves = NULL;
        e->phases[p].nmoves = 0;
    }
}

/* Phases act under REPLAY, and under HYBRID once its iterative part is
 * over, which the invocations decide (engine.c).  The phase calls come
 * from the program's thread, ahead of the manager: at the first phase
 * call after the ends posted reach hybrid_iters, the usual moment to
 * switch, they wait once for the manager's verdict; after that they
 * follow it as they find it (lock held). */
static int phases_on(ph_engine *e)
{
    if (e->cfg.mech == PH_MECH_REPLAY)
        return 1;
    if (e->cfg.mech != PH_MECH_HYBRID)
        return 0;
    if (!e->hybrid_phases && !e->hybrid_waited &&
        e->iteration + e->pending >= e->cfg.hybrid_iters) {
        e->hybrid_waited = 1;
        while (e->has_mgr && (e->pending || e->busy))
            pthread_cond_wait(&e->done_cv, &e->lock);
    }
    return e->hybrid_phases;
}

static int check_phase(int phase)
{
    if (phase < 0 || phase >= PH_MAX_PHASES)
        return ph_fail(EINVAL, "phase %d is out of range (0..%d)", phase,
                       PH_MAX_PHASES - 1);
    return 0;
}

/* Aggregate the recorded samples (sorted by page) and derive the moves. */
static int derive(ph_engine *e, ph_phase *ph, ph_invocation *inv)
{
    int n = e->nnodes;
    size_t npages = 0;
    for (size_t k = 0; k < e->nrec; k++)
        if (k == 0 || e->rec[k].page != e->rec[k - 1].page)
            npages++;
    uint32_t *acc = calloc(npages ? npages * (size_t)n : 1, sizeof *acc);
    void **addr = malloc((npages ? npages : 1) * sizeof *addr);
    int *home = malloc((npages ? npages : 1) * sizeof *home);
    int *target = malloc((npages ? npages : 1) * sizeof *target);
    double *ratio = malloc((npages ? npages : 1) * sizeof *ratio);
    size_t *order = malloc((npages ? npages : 1) * sizeof *order);
    size_t *scratch = malloc((npages ? npages : 1) * sizeof *scratch);
    double *value = malloc((npages ? npages : 1) * sizeof *value);
    int rc = -1;
    if (!acc || !addr || !home || !target || !ratio || !order || !scratch ||
        !value)
        goto out;
    size_t j = (size_t)-1;
    for (size_t k = 0; k < e->nrec; k++) {
        if (k == 0 || e->rec[k].page != e->rec[k - 1].page) {
            j++;
            addr[j] = (void *)e->rec[k].page;
        }
        int nd = e->rec[k].node;
        if (nd >= 0 && nd < n)
            acc[j * (size_t)n + (size_t)nd] += e->rec[k].count;
        inv->accesses += e->rec[k].count;
    }
    if (npages && ph_engine_query(e, npages, addr, home) != 0)
        goto out;
    size_t m = 0;
    for (size_t i = 0; i < npages; i++) {
        const uint32_t *a = acc + i * (size_t)n;
        inv->scanned++;
        if (home[i] < 0)
            continue;
        inv->remote_before += 0;
        double r = 0;
        int t;
        if (e->cfg.criterion == PH_CRITERION_COMPETITIVE) {
            t = ph_crit_competitive(&e->lat, a, home[i], 1.0,
                                    e->cfg.optimistic, &r);
        } else {
            /* replay and undo run while the team waits: one occurrence's
             * saving must pay the round trip for every waiting thread */
            ph_latency_model lm = e->lat;
            if (e->cfg.optimistic)
                lm.migrate_ns = NULL;
            t = ph_crit_amortised(&lm, a, NULL, home[i], 1.0,
                                  ph_crit_phase_remaining(e->nthreads), &r);
        }
        t = ph_engine_stand_in(e, t, home[i]);
        if (t < 0)
            continue;
        double crit = ph_crit_criticality(a, n, home[i], NULL);
        if (!(crit > e->cfg.critical_threshold))
            continue;
        inv->candidates++;
        addr[m] = addr[i];
        target[m] = t;
        ratio[m] = isinf(crit) ? 1e300 : crit;
        value[m] = r;
        m++;
    }
    if (e->cfg.criterion != PH_CRITERION_COMPETITIVE && m) {
        /* the moves to one node go in batches, each call costing the
         * same while the team waits: a node's batch must pay its calls
         * (replay and undo: one each way, and r is already per way) */
        double sum[PH_MAX_NODES] = {0};
        size_t cnt[PH_MAX_NODES] = {0};
        for (size_t i = 0; i < m; i++) {
            sum[target[i]] += value[i];
            cnt[target[i]]++;
        }
        /* (r = B / (2 T) - ml: the batch pays when the sum of r beats
         * its calls' cost; batches of 512 pages, move_batch_pages's
         * default) */
        uint8_t keep[PH_MAX_NODES];
        for (int t = 0; t < n; t++)
            keep[t] = (uint8_t)ph_crit_batch_worth(sum[t], cnt[t], 512,
                                                   e->topo->migrate_ns_call);
        size_t k = 0;
        for (size_t i = 0; i < m; i++) {
            if (!keep[target[i]])
                continue;
            addr[k] = addr[i];
            target[k] = target[i];
            ratio[k] = ratio[i];
            k++;
        }
        inv->candidates -= m - k;
        m = k;
    }
    size_t keep = ph_crit_most_critical(ratio, m, -1.0, e->cfg.critical_pages,
                                        order, scratch);
    free(ph->moves);
    ph->moves = calloc(keep ? keep : 1, sizeof *ph->moves);
    if (!ph->moves)
        goto out;
    for (size_t i = 0; i < keep; i++)
        ph->moves[i] = (ph_phase_move){(uintptr_t)addr[order[i]],
                                       target[order[i]], -1};
    ph->nmoves = keep;
    ph->recorded = 1;
    rc = 0;
out:
    free(acc);
    free(addr);
    free(home);
    free(target);
    free(ratio);
    free(order);
    free(scratch);
    free(value);
    return rc;
}

/* A node (index) the process may place pages on now: the program may
 * have bound its memory since the phase was recorded. */
static int may_use(const ph_engine *e, int idx)
{
    return idx >= 0 && idx < 64 && ((e->allowed_mask >> idx) & 1u);
}

/* Move the phase's pages: forward (replay) or back (undo), to nodes the
 * process may use. */

static void apply(ph_engine *e, ph_phase *ph, int undo, ph_invocation *inv)
{
    size_t n = ph->nmoves;
    if (n == 0 || e->cfg.observe)
        return;
    ph_engine_plan_stand_ins(e);
    void **pages = malloc(n * sizeof *pages);
    int *to = malloc(n * sizeof *to);
    int *st = malloc(n * sizeof *st);
    if (!pages || !to || !st) {
        ph_warn("engine: out of memory %s phase migrations",
                undo ? "undoing" : "replaying");
        goto out;
    }
    size_t k = 0;
    if (!undo) {
        for (size_t i = 0; i < n; i++)
            pages[i] = (void *)ph->moves[i].page;
        if (ph_engine_query(e, n, pages, st) != 0)
            goto out;
        for (size_t i = 0; i < n; i++) {
            ph->moves[i].from = st[i] >= 0 ? st[i] : -1;
            if (st[i] >= 0 && st[i] != ph->moves[i].to && may_use(e, ph->moves[i].to)) {
                pages[k] = (void *)ph->moves[i].page;
                to[k++] = ph->moves[i].to;
            }
        }
    } else {
        for (size_t i = 0; i < n; i++)
            if (ph->moves[i].from >= 0 &&
                ph->moves[i].from != ph->moves[i].to && may_use(e, ph->moves[i].from)) {
                pages[k] = (void *)ph->moves[i].page;
                to[k++] = ph->moves[i].from;
            }
    }
    inv->candidates = k;
    inv->scanned = n;
    inv->migrated = ph_engine_move(e, k, pages, to, st, inv);
    inv->bytes_moved = inv->migrated * 4096;
    if (!undo)
        /* a page that did not get there has nothing to undo */
        for (size_t i = 0, j = 0; i < n && j < k; i++) {
            if ((void *)ph->moves[i].page != pages[j])
                continue;
            if (st[j] != to[j])
                ph->moves[i].from = -1;
            j++;
        }
out:
    free(pages);
    free(to);
    free(st);
}

static void log_phase(ph_engine *e, ph_invocation *inv, uint64_t t0)
{
    inv->engine_ns = ph_now_ns() - t0;
    e->tot.invocations++;
    ph_engine_log_add(e, inv);
}

int ph_engine_phase_begin(ph_engine *e, int phase)
{
    if (check_phase(phase) != 0)
        return -1;
    pthread_mutex_lock(&e->lock);
    ph_phase *ph = &e->phases[phase];
    if (ph->in_progress) {
        pthread_mutex_unlock(&e->lock);
        return ph_fail(EINVAL, "phase %d begins again before it ended",
                       phase);
    }
    if (e->recording >= 0) {
        pthread_mutex_unlock(&e->lock);
        return ph_fail(EBUSY, "phase %d begins while phase %d is being "
                       "recorded (phases do not nest)", phase, e->recording);
    }
    ph->in_progress = 1;
    ph->recording = 0;
    ph->replayed = 0;
    if (!phases_on(e)) {
        pthread_mutex_unlock(&e->lock);
        return 0;
    }
    uint64_t t0 = ph_now_ns();
    ph_invocation inv = {.seq = ++e->seq, .iteration = e->iteration,
                         .area_id = -1, .phase = phase};
    if (!ph->recorded) {
        /* A recording is relative to the placement the iterative part
         * produced: let the manager finish its posted invocations. */
        while (e->has_mgr && (e->pending || e->busy))
            pthread_cond_wait(&e->done_cv, &e->lock);
        /* what was sampled before the phase belongs to the areas */
        inv.sampler_ns = ph_engine_drain(e);
        inv.sampler_ns += ph_engine_close(e);
        e->recording = phase;
        e->nrec = 0;
        ph->recording = 1;
        if (e->nhots && e->src->ops->arm(e->src, 1) == 0)
            e->armed = 1;
        pthread_mutex_unlock(&e->lock);
        return 0;
    }
    inv.kind = PH_INV_REPLAY;
    ph->replayed = 1;
    apply(e, ph, 0, &inv);
    e->tot.replayed += inv.migrated;
    log_phase(e, &inv, t0);
    pthread_mutex_unlock(&e->lock);
    return 0;
}

int ph_engine_phase_end(ph_engine *e, int phase)
{
    if (check_phase(phase) != 0)
        return -1;
    pthread_mutex_lock(&e->lock);
    ph_phase *ph = &e->phases[phase];
    if (!ph->in_progress) {
        pthread_mutex_unlock(&e->lock);
        return ph_fail(EINVAL, "phase %d ends without having begun", phase);
    }
    ph->in_progress = 0;
    /* an occurrence that neither records nor replayed has nothing to
     * do: the phases were off when it began */
    if (!ph->recording && !ph->replayed) {
        pthread_mutex_unlock(&e->lock);
        return 0;
    }
    uint64_t t0 = ph_now_ns();
    ph_invocation inv = {.seq = ++e->seq, .iteration = e->iteration,
                         .area_id = -1, .phase = phase};
    int rc = 0;
    if (ph->recording) {
        inv.kind = PH_INV_RECORD;
        inv.sampler_ns = ph_engine_drain(e);
        inv.sampler_ns += ph_engine_close(e);
        e->recording = -1;
        ph->recording = 0;
        if (derive(e, ph, &inv) != 0)
            rc = ph_fail(ENOMEM, "phase %d: out of memory deriving its "
                         "migrations", phase);
        e->nrec = 0;
        ph_info("engine: phase %d recorded: %zu pages to migrate", phase,
                ph->nmoves);
    } else {
        inv.kind = PH_INV_UNDO;
        ph->replayed = 0;
        apply(e, ph, 1, &inv);
        e->tot.undone += inv.migrated;
    }
    log_phase(e, &inv, t0);
    pthread_mutex_unlock(&e->lock);
    return rc;
}

long ph_engine_phase_pages(ph_engine *e, int phase)
{
    if (check_phase(phase) != 0)
        return -1;
    pthread_mutex_lock(&e->lock);
    long n = e->phases[phase].recorded ? (long)e->phases[phase].nmoves : -1;
    pthread_mutex_unlock(&e->lock);
    return n;
}
