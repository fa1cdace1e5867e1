/*
 * watch.c -- the watchdog's judgement (see watch.h).
 */
#include "cluster/watch.h"

#include <string.h>

void ph_dsm_watch_init(ph_dsm_watch *w, uint64_t now_ns, uint64_t tick_ns,
                       uint64_t limit_ns)
{
    memset(w, 0, sizeof *w);
    w->tick_ns = tick_ns;
    w->limit_ns = limit_ns;
    w->last_ns = now_ns;
}

int ph_dsm_watch_look(ph_dsm_watch *w, uint64_t now_ns, uint64_t op_since_ns,
                      uint64_t beat_ns)
{
    uint64_t slept = now_ns > w->last_ns ? now_ns - w->last_ns : 0;
    w->last_ns = now_ns;
    /* A look more than two ticks after the last: this process was stopped
     * or not scheduled meanwhile, and so was what it waits for.  That gap
     * counts as one tick: a stop of any length is not a silence, and on a
     * starved machine the count still grows (by a tick a look at least). */
    uint64_t ran = slept > 2 * w->tick_ns ? w->tick_ns : slept;

    /* the holder: judged only while no operation is in flight (an
     * operation's wait shows its own life through op_since) */
    if (op_since_ns || !beat_ns || beat_ns != w->beat_seen_ns) {
        w->beat_seen_ns = beat_ns;
        w->beat_for_ns = 0;
    } else {
        w->beat_for_ns += ran;
    }

    if (!op_since_ns) {
        w->op_seen_ns = 0;
        w->op_for_ns = 0;
    } else if (op_since_ns != w->op_seen_ns) {
        /* a new operation: in flight since its start, at most what this
         * look counts */
        w->op_seen_ns = op_since_ns;
        uint64_t age = now_ns > op_since_ns ? now_ns - op_since_ns : 0;
        w->op_for_ns = age < ran ? age : ran;
    } else {
        w->op_for_ns += ran;
    }

    if (op_since_ns)
        return w->op_for_ns > w->limit_ns ? PH_DSM_WATCH_OP_STUCK
                                          : PH_DSM_WATCH_OK;
    return w->beat_for_ns > w->limit_ns ? PH_DSM_WATCH_HOLDER_STUCK
                                        : PH_DSM_WATCH_OK;
}
