/*
 * mover.h -- moving pages reliably on top of one OS-operations table.
 *
 * os->ops->move makes one attempt.  The mover turns a request of any size
 * into that and owns everything around it:
 *   - batching: move_batch_pages pages per call, never one call per page;
 *   - huge pages: 4 KiB requests that fall in one 2 MiB page become one
 *     entry (the head), moved to the node most of its subpages asked for;
 *     every subpage's status reports where the huge page went;
 *   - -EBUSY / -EAGAIN: retried on later calls, at most move_retries times;
 *   - -ENOMEM: the target node is marked full for node_full_backoff_ms and
 *     further pages to it are skipped (-ENOMEM) without a call;
 *   - -ENOENT (not yet faulted): the page is bound to its target instead
 *     (runs of consecutive pages to one node become one bind), and counts
 *     as placed; its status stays -ENOENT;
 *   - whole-call refusal (EPERM/ENOSYS): one clear message, then the mover
 *     stays in placement-only mode (moves fail fast with EPERM; binding
 *     still works).
 * Statistics are kept per mover and returned per call.
 */
#ifndef PH_MOVE_MOVER_H
#define PH_MOVE_MOVER_H

#include "os/os.h"

#include <stddef.h>
#include <stdint.h>

typedef struct ph_move_stats {
    uint64_t requested;    /* 4 KiB pages asked for */
    uint64_t already;      /* already on target */
    uint64_t moved;        /* moved by this call */
    uint64_t bound;        /* not faulted: bound to target instead */
    uint64_t huge_units;   /* 2 MiB pages moved as a unit */
    uint64_t calls;        /* os move calls made */
    uint64_t retried;      /* pages retried after EBUSY/EAGAIN */
    uint64_t failed_busy, failed_nomem, failed_access, failed_fault,
        failed_other;      /* by final reason */
    uint64_t elapsed_ns;
} ph_move_stats;

typedef struct ph_mover ph_mover;

ph_mover *ph_mover_new(ph_os *os);
void ph_mover_free(ph_mover *m);

/* Move count 4 KiB pages to nodes[i] (batch convention of pagehome.h).
 * stats may be NULL; it is overwritten with this call's figures. */
long ph_mover_move(ph_mover *m, size_t count, void *const *pages,
                   const int *nodes, int *status, ph_move_stats *stats);
/* Totals since the mover was created. */
void ph_mover_totals(const ph_mover *m, ph_move_stats *out);
/* 1 when moves were refused and the mover is placement-only. */
int ph_mover_placement_only(const ph_mover *m);

#endif
