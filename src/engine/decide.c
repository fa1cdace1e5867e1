/*
 * decide.c -- which criterion decides a page's target, and what the
 * engine knows of the rest of the run.
 *
 * The engine keeps per page this interval's counts, the evidence of the
 * past intervals (an exponentially weighted mean, decay 1/2: hot.h) and
 * the cumulative counts.  The configured criterion reads them:
 *   competitive (UPMlib, eq. 1): this interval's counts against one move;
 *   amortised (criteria/amortised.h): the evidence joined with this
 *     interval, over the intervals the run is expected to have left,
 *     against one move.
 * The optimistic variant (tunable optimistic) drops the move's cost in
 * either.
 *
 * The rest of the run: every invocation that ends an interval (an
 * iteration's, a sampling wake's) counts one; with the iterations seen
 * and a total the program gave (ph_iterations_expected, the tunable
 * iterations), ph_crit_remaining estimates the intervals left, and
 * without a total it takes as many as were seen (as long again).
 *
 * The nodes the process may use: a process started under a memory
 * binding (numactl --membind) or in a cpuset may place pages on some
 * nodes only (ph_os_allowed_nodes).  A page whose criterion names another
 * node goes to that node's stand-in, the allowed node its threads reach
 * fastest (ph_crit_stand_in), or stays when it is there already; every
 * decision goes through ph_engine_stand_in after its criterion and
 * filters, so the ping-pong rule sees where pages really go.  The set is
 * asked again at every invocation and early look: the program may bind
 * its memory itself after the start (libnuma's numa_set_membind).
 */
#include "engine/engine_int.h"

#include "base/log.h"
#include "criteria/amortised.h"

#include <stdio.h>

void ph_engine_plan_remaining(ph_engine *e)
{
    e->intervals++;
    e->remaining = ph_crit_remaining((double)e->intervals,
                                     (double)e->iteration,
                                     (double)e->iters_total);
}

void ph_engine_plan_stand_ins(ph_engine *e)
{
    const int n = e->nnodes;
    uint64_t allowed = ph_os_allowed_nodes(e->os);
    if (allowed == e->allowed_mask)
        return; /* the set did not change (never 0: 0 is "not planned") */
    e->allowed_mask = allowed;
    int all = 1;
    for (int t = 0; t < n; t++) {
        int s = ph_crit_stand_in(e->lat_ns, n, allowed, t);
        e->stand_in[t] = (int8_t)(s >= 0 ? s : t);
        all &= s == t;
    }
    if (!all) {
        char list[256] = "";
        size_t at = 0;
        for (int t = 0; t < n && at + 8 < sizeof list; t++)
            if ((allowed >> t) & 1u)
                at += (size_t)snprintf(list + at, sizeof list - at, "%s%d",
                                       at ? "," : "", e->topo->nodes[t].id);
        ph_info("engine: the process may place pages on nodes %s only (its "
                "memory binding or cpuset): pages wanted elsewhere go to the "
                "nearest of them", list);
    } else if (e->seq > 0) {
        ph_info("engine: the process may place pages on every node again");
    }
}

int ph_engine_stand_in(const ph_engine *e, int target, int home)
{
    if (target < 0 || target >= e->nnodes)
        return -1;
    int s = e->stand_in[target];
    return s == home ? -1 : s;
}

int ph_engine_decide(const ph_engine *e, const ph_hot *h, const uint32_t *cnt,
                     int home, double *value)
{
    const int n = e->nnodes;
    if (e->cfg.criterion == PH_CRITERION_COMPETITIVE)
        return ph_crit_competitive(&e->lat, ph_cnt_cur((uint32_t *)cnt, n),
                                   home, h->factor, e->cfg.optimistic, value);
    ph_latency_model m = e->lat;
    if (e->cfg.optimistic)
        m.migrate_ns = NULL;
    return ph_crit_amortised(&m, cnt, ph_cnt_prev((uint32_t *)cnt, n), home,
                             h->factor, e->remaining, value);
}

int ph_engine_set_iterations(ph_engine *e, unsigned long total)
{
    pthread_mutex_lock(&e->lock);
    e->iters_total = total;
    pthread_mutex_unlock(&e->lock);
    return 0;
}
