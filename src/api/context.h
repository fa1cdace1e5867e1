/*
 * context.h -- the process-wide machine pagehome runs on.
 *
 * One context per process, created on first use (pthread_once): the
 * tunables, the topology (real or synthetic), the OS table opened on it
 * (Linux, or the simulator when the topology is synthetic / machine=sim),
 * and one mover.  The public API (pagehome.h) is a thin layer over it.
 */
#ifndef PH_API_CONTEXT_H
#define PH_API_CONTEXT_H

#include "move/mover.h"
#include "os/os.h"
#include "topo/topo.h"

typedef struct ph_context {
    ph_topology *topo;
    ph_os *os;
    ph_mover *mover;
} ph_context;

/* The context, initialising it if needed; NULL/errno if it cannot be. */
ph_context *ph_ctx(void);
/* Tests only: destroy the context so the next ph_ctx() builds a new one
 * from the current tunables.  No other thread may be using pagehome. */
void ph_ctx_reset(void);

#endif
