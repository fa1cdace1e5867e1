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
 */
#include "engine/engine_int.h"

#include "criteria/amortised.h"

void ph_engine_plan_remaining(ph_engine *e)
{
    e->intervals++;
    e->remaining = ph_crit_remaining((double)e->intervals,
                                     (double)e->iteration,
                                     (double)e->iters_total);
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
