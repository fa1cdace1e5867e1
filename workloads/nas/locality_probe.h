/*
 * locality_probe.h -- a workload's own measurement of where the pages of
 * its arrays are, after every iteration, when WL_LOCALITY=1 is set
 * (locality_probe.c).  Part of the programs, not of pagehome: it asks the
 * kernel with move_pages(2) status queries, so the same figure comes out
 * whoever moved the pages (nobody, the kernel's NUMA balancing, pagehome).
 *
 * Each array is declared with the ownership of its main loop: units (rows,
 * planes) split by schedule(static) over the team, or the rows of a CSR
 * matrix.  A page's owner is the thread owning the unit at its first byte
 * (the array's first byte for a page the array starts in); it is
 * owner-local when it is on the node that thread ran on at wl_probe_begin.
 *
 *   wl_probe_rows(name, base, unit_bytes, nunits, lo, hi)
 *       units lo..hi split by schedule(static); units before lo belong to
 *       thread 0, after hi to the last thread (boundary rows)
 *   wl_probe_units(name, base, stride_bytes, used_bytes, nunits, lo, hi)
 *       the same for units stride_bytes apart of which only the first
 *       used_bytes are the program's (arrays sized for a larger problem);
 *       pages holding no used byte are left out
 *   wl_probe_csr(name, base, elem_bytes, rowptr, nrows)
 *       element e of row r (rowptr[r] <= e < rowptr[r+1]): rows 0..nrows-1
 *       split by schedule(static)
 *   wl_probe_begin()   after the arrays are initialised, before the loop:
 *       records each thread's node (one parallel region) and the clock,
 *       then ticks as iteration 0 (the placement the loop starts from)
 *   wl_probe_tick(iter)   after iteration iter (1-based) has finished:
 *       one stderr line
 *         locality: iter=I t_s=T owner_local=F pages=P absent=A stale=S
 *                   on=N0/N1/.. moved=M moved_twice=W
 *       F the share of the P pages on their owner's node, T seconds
 *       since wl_probe_begin; A pages never seen mapped (left out), S
 *       pages not mapped at this query (being migrated, or PROT_NONE:
 *       counted on the node the previous query saw); M pages whose node
 *       differed from the
 *       previous tick's (summed over the ticks), W pages seen on a new
 *       node at two or more ticks (a lower bound of the pages moved more
 *       than once: two moves between ticks look like one or none)
 *
 * Without WL_LOCALITY=1 every call returns at once and prints nothing.
 */
#ifndef WL_LOCALITY_PROBE_H
#define WL_LOCALITY_PROBE_H

#include <stddef.h>

void wl_probe_rows(const char *name, const void *base, size_t unit_bytes, long nunits,
                   long lo, long hi);
void wl_probe_units(const char *name, const void *base, size_t stride_bytes,
                    size_t used_bytes, long nunits, long lo, long hi);
void wl_probe_csr(const char *name, const void *base, size_t elem_bytes, const long *rowptr,
                  long nrows);
void wl_probe_begin(void);
void wl_probe_tick(long iter);

#endif
