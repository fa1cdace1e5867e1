/*
 * watch.h -- the watchdog's judgement (transport.c runs the thread): pure,
 * a function of what the watchdog saw at each of its looks, so that tests
 * can drive it through stops and deaths without a cluster.
 *
 * At each look the watchdog reads two clocks the DSM keeps: the start of
 * the remote operation in flight (0 none), and the last sign of life of
 * the thread that holds the service role (0 none held).  Both are judged
 * by how long the watchdog has seen them unchanged WHILE IT RAN ITSELF: a
 * look that comes more than two ticks after the one before means this
 * process was stopped (a shell's ^Z of the whole job, a debugger) or not
 * scheduled, and then what it was waiting for was stopped too -- such a
 * gap counts as one tick, not as the silence it looks like (an operation
 * in flight when the whole job is stopped longer than the limit must not
 * end the job when it goes on).  A peer that died, or a holder stuck on
 * a fault of its own, shows no change while the watchdog runs, and is
 * judged after `limit` (later on a starved machine, whose looks count a
 * tick each at least).
 */
#ifndef PH_CLUSTER_WATCH_H
#define PH_CLUSTER_WATCH_H

#include <stdint.h>

typedef struct ph_dsm_watch {
    uint64_t tick_ns, limit_ns;  /* the look's period; the verdict's limit */
    uint64_t last_ns;            /* the previous look */
    uint64_t op_seen_ns;         /* the operation seen in flight (its start) */
    uint64_t op_for_ns;          /* ... for so long, counted while running */
    uint64_t beat_seen_ns;       /* the holder's sign of life seen */
    uint64_t beat_for_ns;        /* ... unchanged for so long */
} ph_dsm_watch;

enum {
    PH_DSM_WATCH_OK = 0,
    PH_DSM_WATCH_OP_STUCK,      /* the operation in flight for > limit */
    PH_DSM_WATCH_HOLDER_STUCK   /* no operation, the holder silent > limit */
};

/* Start watching at now_ns, looking every tick_ns. */
void ph_dsm_watch_init(ph_dsm_watch *w, uint64_t now_ns, uint64_t tick_ns,
                       uint64_t limit_ns);
/* One look at now_ns (>= the last): op_since_ns and beat_ns as read.
 * PH_DSM_WATCH_*; the time counted is w->op_for_ns or w->beat_for_ns. */
int ph_dsm_watch_look(ph_dsm_watch *w, uint64_t now_ns, uint64_t op_since_ns,
                      uint64_t beat_ns);

#endif
