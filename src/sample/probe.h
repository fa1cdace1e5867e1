/*
 * probe.h -- measure what one sample costs the thread that takes it.
 */
#ifndef PH_SAMPLE_PROBE_H
#define PH_SAMPLE_PROBE_H

#include "sample/source.h"

#include <stddef.h>

/* Watch `runs` runs of run_pages pages of a private buffer with src (which
 * must have no range and no thread touching its pages yet: call it before
 * the engine gets it), touch the first page of each, and return the
 * median time a touch took minus the handler's mean time per trap (stats
 * handler_ns): the trap's round trip outside the handler, in ns.  runs:
 * 1..64.  While it times the touches, `busy` helper threads (0..63; more
 * count as 63) spin on other CPUs, as the program's other threads will
 * when its pages trap: the TLB flushes that a change of protection sends
 * to their CPUs are part of the cost.  They run on the calling thread's
 * CPUs but its own, or on every other CPU where the caller is bound to
 * one CPU (as an OpenMP runtime binds its threads).  Negative when
 * nothing could be measured (the source refused the buffer, or the
 * touches did not trap) or busy < 0.  *handler_ns (may be NULL) gets the
 * handler's mean time per trap, wherever it ran, and *busy_ran (may be
 * NULL) the helpers that were spinning when the timing began (0 both
 * when nothing was measured). */
double ph_source_probe_trap_ns(ph_source *src, size_t runs, size_t run_pages, int busy,
                               double *handler_ns, int *busy_ran);

#endif
