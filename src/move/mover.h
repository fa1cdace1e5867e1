/*
 * mover.h -- moving pages reliably on top of one OS-operations table.
 *
 * ph_os_move makes one attempt.  The mover turns a request of any size
 * into that and owns everything around it:
 *   - batching: cfg.batch_pages pages per call, never one call per page,
 *     the batches in the order the caller listed the pages (a list by
 *     priority is moved by priority, batch by batch); each batch is
 *     queried first (one query call), so pages already on their target
 *     cost no move; the pages to move are sent sorted by target so the
 *     kernel migrates each node's pages in one go;
 *   - huge pages: 4 KiB requests that fall in one 2 MiB page become one
 *     entry (the head), moved to the node most of its subpages asked for
 *     (a tie goes to the target asked for first); every subpage's status
 *     reports where the huge page went.  The same 4 KiB page asked for
 *     twice is one entry as well;
 *   - -EBUSY / -EAGAIN: retried on later calls, at most cfg.retries times
 *     (after the first pass, in rounds with a short growing pause);
 *   - -ENOMEM: the target node is marked full for cfg.node_full_backoff_ns and
 *     further pages to it are skipped (-ENOMEM) without a move call;
 *   - -ENOENT (not yet faulted): the page is bound to its target instead
 *     (runs of consecutive pages to one node become one bind), and counts
 *     as placed; its status stays -ENOENT;
 *   - whole-call refusal (EPERM/ENOSYS): one clear message, then the mover
 *     stays in placement-only mode (moves fail fast with EPERM; binding
 *     still works);
 *   - lanes: a call with pages for several target nodes moves them side by
 *     side, one thread per lane (the caller runs the first; the others
 *     are started for the call and joined before it returns).  With
 *     cfg.threads set, that many lanes: fewer than the target nodes, and
 *     nodes are dealt whole to lanes by their page counts; more, and the
 *     nodes with the most pages are split among several lanes, page j of
 *     a node to its lane j mod k.  By default one lane per target node,
 *     its pages in the caller's order, and nodes split the same way up to
 *     one lane a CPU the program leaves idle (ph_mover_set_program_threads)
 *     if there are as many idle CPUs as target nodes, else one lane a CPU
 *     of the machine; a node is split only into lanes that keep
 *     PH_MOVE_LANE_MIN_NS of move work each by the topology's migration
 *     costs.  Never more than PH_MOVE_MAX_LANES, and no lane of fewer
 *     than PH_MOVE_LANE_MIN_PAGES pages.  The kernel migrates pages on
 *     the CPU of the thread that asks (it copies them there), so lanes
 *     divide the time until the last page has arrived, not the CPU time
 *     the moves take; and when the program leaves no CPU idle, that CPU
 *     time comes from its threads, the slowest of which a barrier waits
 *     for: lanes on every CPU spread it thinnest (the kernel's own NUMA
 *     balancing likewise migrates in whichever thread faulted, on every
 *     CPU at once).
 * Statistics are kept per mover and returned per call.  Every call is
 * thread-safe; no lock is held across a system call.
 */
#ifndef PH_MOVE_MOVER_H
#define PH_MOVE_MOVER_H

#include "os/os.h"

#include <stddef.h>
#include <stdint.h>

/* Every requested page is counted once in exactly one of: already,
 * moved, bound, outvoted, failed_*.  So they add up to requested. */
typedef struct ph_move_stats {
    uint64_t requested;    /* 4 KiB pages asked for */
    uint64_t already;      /* already on target */
    uint64_t moved;        /* moved by this call */
    uint64_t bound;        /* not faulted: bound to target instead */
    uint64_t outvoted;     /* in a 2 MiB page that went to another target */
    uint64_t huge_units;   /* 2 MiB pages moved as a unit */
    uint64_t calls;        /* os move calls made */
    uint64_t retried;      /* page attempts repeated after EBUSY/EAGAIN (a
                              page retried twice counts twice) */
    uint64_t failed_busy, failed_nomem, failed_access, failed_fault,
        failed_other;      /* by final reason; access: -EACCES and moves
                              refused (EPERM/ENOSYS); other: bad target,
                              failed bind, anything else */
    uint64_t elapsed_ns;
    uint64_t lanes;        /* threads the call's moves ran in (1: the
                              caller alone; 0: nothing to move); in the
                              totals, the most any call used */
} ph_move_stats;

/* The failure counter of st that a page's final status counts in when the
 * page did not reach its target (status one of the -errno values above;
 * anything else: failed_other). */
uint64_t *ph_move_stats_failure(ph_move_stats *st, int status);

/* The mover's settings.  The mover never reads the tunables: whoever makes
 * it fills this once (the machine layer from move_batch_pages,
 * move_retries and node_full_backoff_ms). */
typedef struct ph_mover_cfg {
    size_t batch_pages;            /* pages per move call (>= 1) */
    int retries;                   /* rounds for -EBUSY/-EAGAIN pages */
    uint64_t node_full_backoff_ns; /* a node that said -ENOMEM is skipped
                                      this long (0 = never skipped) */
    int threads;                   /* lanes a call runs in (0 = by the
                                      CPUs, see lanes above; 1 = the
                                      caller alone; more than the target
                                      nodes split their pages) */
} ph_mover_cfg;

/* A lane of fewer pages than this does not pay for its thread (starting
 * and joining one takes some tens of microseconds; a page's move, a few). */
#define PH_MOVE_LANE_MIN_PAGES 64
/* By default a target node's pages are split into more lanes only while
 * each lane keeps this much move work by the topology's migration costs
 * (1 ms: some 30 times a thread's start and join): on a machine that
 * moves a 4 KiB page in about a microsecond, 800 pages or more a lane. */
#define PH_MOVE_LANE_MIN_NS 1e6
/* The most lanes one call runs in. */
#define PH_MOVE_MAX_LANES 64

typedef struct ph_mover ph_mover;

/* A mover over os with a copy of cfg.  NULL/EINVAL without os or cfg. */
ph_mover *ph_mover_new(ph_os *os, const ph_mover_cfg *cfg);
/* Later calls use cfg (calls in progress keep the settings they started
 * with). */
void ph_mover_set_cfg(ph_mover *m, const ph_mover_cfg *cfg);
void ph_mover_free(ph_mover *m);

/* Move count 4 KiB pages (any address inside each) to nodes[i] (batch
 * convention of pagehome.h).  status may be NULL.  stats may be NULL; it
 * is overwritten with this call's figures.  Returns the number of pages
 * not on their target (bound pages count as placed), or -1 with errno:
 * EINVAL for bad arguments, EPERM/ENOSYS when moves are refused (status
 * is filled all the same). */
long ph_mover_move(ph_mover *m, size_t count, void *const *pages,
                   const int *nodes, int *status, ph_move_stats *stats);
/* Totals since the mover was created. */
void ph_mover_totals(const ph_mover *m, ph_move_stats *out);
/* The program runs threads threads (0: not known), so as many CPUs are
 * busy: by default a call moves in lanes on the CPUs left idle when they
 * are enough, else in one lane a CPU (see lanes above). */
void ph_mover_set_program_threads(ph_mover *m, int threads);
/* 1 when moves were refused and the mover is placement-only. */
int ph_mover_placement_only(const ph_mover *m);

#endif
