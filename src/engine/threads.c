/*
 * threads.c -- where the program's threads run, and the switch to the
 * predictive criterion.
 *
 * UPMlib polled the processor of every thread before and after each
 * parallel construct and switched to the predictive criterion when a
 * thread had moved to another node and *stayed* there for two consecutive
 * constructs (short excursions are ignored: forwarding a thread's pages
 * costs too much to do it for a thread that comes back).  A change in the
 * number of threads counts as well: the nodes that now run a thread they
 * did not run before have gained one.  The team threads join is the first
 * team: the largest of two or more threads reported before the engine's
 * first invocation (or the first such team, when invocations came before
 * any).  A team of one is serial code (the initial thread, a region with
 * if(0) or num_threads(1)), and before the first invocation there is no
 * past interval whose counts the predictive criterion could forward.
 *
 * Here each report is (thread, nthreads, node) at a parallel-region
 * boundary: from ph_thread_note() in each thread, or from the OpenMP tools
 * interface in transparent mode.
 */
#include "engine/engine_int.h"

#include "base/error.h"
#include "base/log.h"

#include <errno.h>
#include <string.h>

/* Switch to the predictive criterion toward node `to` (lock held). */
static void trigger(ph_engine *e, int to, const char *why, int thread)
{
    e->gained[to] = 1;
    if (!e->predictive)
        e->tot.predictive_switches++;
    e->predictive = 1;
    /* Cold areas are scanned again, a stable engine wakes up. */
    uint64_t armed = ph_engine_armed_pages(e);
    for (size_t a = 0; a < e->nhots; a++) {
        ph_hot *h = e->hots[a];
        h->cold = 0;
        h->cold_streak = 0;
        h->armed_mark = armed;
        if (!h->idle)
            (void)ph_engine_rewatch(e, h);
    }
    e->quiet = 0;
    e->quiet_samples = 0;
    e->stable_mark = ph_engine_swept_pages(e);
    if (!e->active) {
        e->active = 1;
        if (e->cfg.mech != PH_MECH_OFF && !e->armed)
            ph_engine_arm(e);
    }
    ph_info("engine: thread %d %s node %d: predictive criterion", thread,
            why, e->topo->nodes[to].id);
}

int ph_engine_note_thread(ph_engine *e, int thread, int nthreads, int node)
{
    if (thread < 0 || thread >= PH_MAX_THREADS || nthreads <= 0 ||
        thread >= nthreads)
        return ph_fail(EINVAL, "thread note: thread %d of %d is not valid "
                       "(at most %d threads)", thread, nthreads,
                       PH_MAX_THREADS);
    if (node < 0 || node >= e->nnodes)
        return ph_fail(EINVAL, "thread note: node index %d is not a node "
                       "(0..%d)", node, e->nnodes - 1);
    pthread_mutex_lock(&e->lock);
    if (e->nthreads && nthreads < e->nthreads)
        /* The team shrank: forget the threads that left. */
        for (int t = nthreads; t < e->nthreads; t++)
            e->thr[t] = (ph_thread_track){-1, -1, 0};
    if (nthreads > 1 && nthreads > e->first_team &&
        (e->first_team == 0 || e->tot.invocations == 0))
        e->first_team = nthreads;
    if (e->nthreads != nthreads) /* its CPUs are not the mover's to take */
        ph_mover_set_program_threads(e->mover, nthreads);
    e->nthreads = nthreads;
    ph_thread_track *t = &e->thr[thread];
    if (t->stable < 0) {
        t->stable = node;
        if (e->first_team && thread >= e->first_team) {
            /* a thread the first team did not have: its node gains it */
            e->tot.thread_migrations++;
            trigger(e, node, "joined on", thread);
        }
    } else if (node == t->stable) {
        t->cand = -1;
        t->cand_seen = 0;
    } else if (node == t->cand) {
        if (++t->cand_seen >= 2) {
            t->stable = node;
            t->cand = -1;
            t->cand_seen = 0;
            e->tot.thread_migrations++;
            trigger(e, node, "moved to", thread);
        }
    } else {
        t->cand = node;
        t->cand_seen = 1;
    }
    if (thread == 0 && e->active)
        ph_engine_rearm_if_empty(e);
    pthread_mutex_unlock(&e->lock);
    return 0;
}
