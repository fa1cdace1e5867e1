/*
 * model.h -- the cost model of `pagehome sim` (doc/sim-model.md): pure
 * functions of access counts, homes and latencies.
 *
 *   phase time of thread t  = sum over its accesses (page p, count a):
 *                               a * (lat[node(t)][home(p)]
 *                                    + (node(t) != home(p) ? contention_ns * c(p) : 0))
 *                             + extra_ns[t]   (migrations it had to do)
 *   c(p)                    = nodes with more accesses to p in the phase
 *                             than p's home node (003, eq. 2)
 *   phase time              = the slowest thread's (the phase ends at a
 *                             barrier)
 *   iteration time          = sum of its phases' times
 *                             + migration time on the critical path
 *
 * Overlapped migrations (the memory-manager thread): an invocation posted
 * at time s that costs C ns (per-call and per-page costs of the moves)
 * starts when the manager is free, start = max(s, busy_until), keeps it
 * busy until start + C, and its k-th of m pages arrives at
 * start + C * k / m.  A page is used at its new home from the first phase
 * that starts after it arrived, at its old home before; the program never
 * waits for the manager.
 */
#ifndef PH_SIMX_MODEL_H
#define PH_SIMX_MODEL_H

#include <stddef.h>
#include <stdint.h>

/* One thread's accesses to one page in one occurrence of a phase. */
typedef struct ph_simx_access {
    uint32_t page;     /* index over all the program's pages */
    uint32_t thread;
    uint32_t count;    /* accesses: cache lines moved from memory */
} ph_simx_access;

typedef struct ph_simx_costs {
    int nnodes;
    const double *lat_ns;  /* [from_node * nnodes + home_node] */
    double contention_ns;  /* per competing node */
} ph_simx_costs;

/* Memory time of every thread in one phase: thread_ns[0..nthreads) is
 * overwritten.  acc[] must be sorted by page (entries of one page
 * together).  home[] and thread_node[] hold node indexes.  Returns the
 * accesses made from a node other than the page's home. */
uint64_t ph_simx_phase_ns(const ph_simx_costs *m, const ph_simx_access *acc,
                          size_t nacc, const int *thread_node, int nthreads,
                          const int *home, double *thread_ns);

/* The phase's time: max over threads of thread_ns[t] + extra_ns[t]
 * (extra_ns may be NULL). */
double ph_simx_barrier_ns(const double *thread_ns, const double *extra_ns,
                          int nthreads);

/* Overlapped migration: the invocation posted at now_ns costing cost_ns
 * starts at the returned time; *busy_until_ns becomes its end. */
double ph_simx_manager_start(double now_ns, double *busy_until_ns,
                             double cost_ns);

/* Arrival time of the k-th (1-based) of m pages of an invocation that
 * started at start_ns and costs cost_ns. */
double ph_simx_arrival_ns(double start_ns, double cost_ns, size_t k,
                          size_t m);

#endif
