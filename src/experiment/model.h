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
 * start + C * k / m, k counting in the order the OS migrated them (the
 * simulator's move log: the mover's batches in the order the engine
 * listed the pages, each batch sorted by target node).  A page is used at its new home from the first phase
 * that starts after it arrived, at its old home before; the program never
 * waits for the manager.
 *
 * TLB (only where a cell asks for it: e6).  Each thread has a data TLB
 * that holds entries_4k translations of 4 KiB pages and entries_2m of
 * 2 MiB pages.  In one phase thread t touches W4 distinct 4 KiB pages in
 * 4 KiB-mapped units and W2 distinct 2 MiB-mapped units; S4 and S2 of its
 * accesses switch page (the previous access of t was in another 4 KiB
 * page, resp. outside this 2 MiB unit).  The reach model:
 *
 *   miss share m(W, E)  = max(0, 1 - E / W)          (0 when W = 0)
 *   misses of t         = S4 * m(W4, entries_4k) + S2 * m(W2, entries_2m)
 *   phase time of t    += misses * walk_ns
 *
 * m is exact for uniformly random references over W pages with any
 * demand-fetched TLB of E entries (hit probability E / W), and close to
 * LRU's all-miss for a sweep over W >> E pages; first (compulsory) misses
 * of a working set that fits are not counted.  Pages are grouped into
 * 2 MiB units by index: unit u = pages [512 u, 512 u + 512) (every array
 * of a program that uses the TLB term is a multiple of 512 pages).
 */
#ifndef PH_EXPERIMENT_MODEL_H
#define PH_EXPERIMENT_MODEL_H

#include <stddef.h>
#include <stdint.h>

/* One thread's accesses to one page in one occurrence of a phase. */
typedef struct ph_exp_access {
    uint32_t page;     /* index over all the program's pages */
    uint32_t thread;
    uint32_t count;    /* accesses: cache lines moved from memory */
} ph_exp_access;

typedef struct ph_exp_costs {
    int nnodes;
    const double *lat_ns;  /* [from_node * nnodes + home_node] */
    double contention_ns;  /* per competing node */
} ph_exp_costs;

/* Memory time of every thread in one phase: thread_ns[0..nthreads) is
 * overwritten.  acc[] must be sorted by page (entries of one page
 * together).  home[] and thread_node[] hold node indexes.  Returns the
 * accesses made from a node other than the page's home. */
uint64_t ph_exp_phase_ns(const ph_exp_costs *m, const ph_exp_access *acc,
                         size_t nacc, const int *thread_node, int nthreads,
                         const int *home, double *thread_ns);

/* The phase's time: max over threads of thread_ns[t] + extra_ns[t]
 * (extra_ns may be NULL). */
double ph_exp_barrier_ns(const double *thread_ns, const double *extra_ns,
                         int nthreads);

/* The page-switching accesses among one ph_exp_access's count (same
 * index): entering the page from another 4 KiB page, entering its 2 MiB
 * unit from outside it (sw_2m <= sw_4k <= count). */
typedef struct ph_exp_switches {
    float sw_4k, sw_2m;
} ph_exp_switches;

typedef struct ph_exp_tlb {
    double entries_4k;     /* 4 KiB translations a thread's TLB holds */
    double entries_2m;     /* 2 MiB translations */
    double walk_ns;        /* one miss: a page walk */
} ph_exp_tlb;

/* One thread's TLB view of a phase (filled by ph_exp_phase_tlb). */
typedef struct ph_exp_tlb_thread {
    double pages_4k;       /* W4: distinct 4 KiB pages in 4 KiB-mapped units */
    double units_2m;       /* W2: distinct 2 MiB-mapped units */
    double switch_4k;      /* S4: page-switching accesses into the former */
    double switch_2m;      /* S2: unit-switching accesses into the latter */
    double misses;         /* S4 m(W4, E4) + S2 m(W2, E2) */
    uint32_t last_unit;    /* (work) */
} ph_exp_tlb_thread;

/* The reach model's miss share: max(0, 1 - entries / pages); 0 when
 * pages <= 0. */
double ph_exp_tlb_miss_share(double pages, double entries);

/* TLB misses of every thread in one phase: th[0..nthreads) is
 * overwritten; when thread_ns is not NULL, thread_ns[t] grows by
 * th[t].misses * walk_ns.  acc[] sorted by page as for
 * ph_exp_phase_ns, one entry per page and thread, sw[] its switches (same index), huge[p] != 0 when
 * page p's 2 MiB unit is mapped by one 2 MiB page.  Returns the misses of
 * all threads. */
double ph_exp_phase_tlb(const ph_exp_tlb *tlb, const ph_exp_access *acc,
                        const ph_exp_switches *sw, size_t nacc,
                        int nthreads, const uint8_t *huge,
                        ph_exp_tlb_thread *th, double *thread_ns);

/* Run-length calibration (doc/sim-model.md, "Run length").  A program
 * whose modelled memory time of one iteration is mem_ft_ns at first touch
 * and mem_sn_ns with every page on one node, on a machine where a real
 * iteration took real_ns and single-node placement made it slowdown
 * times slower, gets
 *   f                = (slowdown - 1) / (mem_sn_ns / mem_ft_ns - 1)
 *                      (the memory share of the real iteration, kept in
 *                      [0.05, 1]),
 *   *scale           = f * real_ns / mem_ft_ns (every access count times
 *                      this: the real program's memory traffic),
 *   *compute_per_mem = (1 - f) / f (compute ns added per ns of scaled
 *                      first-touch memory time, phase by phase),
 * so that its first-touch iteration takes real_ns and its single-node one
 * slowdown times that.  Returns 0; -1 with *scale = 1 and
 * *compute_per_mem = 0 (not calibrated) when real_ns or slowdown - 1 or a
 * memory time is not positive, or mem_sn_ns <= mem_ft_ns. */
int ph_exp_calibrate(double real_ns, double slowdown, double mem_ft_ns,
                     double mem_sn_ns, double *scale,
                     double *compute_per_mem);

/* Overlapped migration: the invocation posted at now_ns costing cost_ns
 * starts at the returned time; *busy_until_ns becomes its end. */
double ph_exp_manager_start(double now_ns, double *busy_until_ns,
                            double cost_ns);

/* The mover's lanes (mover.h) side by side: lane l did cost_ns[l] of
 * migration work (0: no lane l) for an invocation (at most 64 lanes).
 * free_cpus lanes run at full speed on CPUs the program leaves idle (at
 * least one: the memory manager's, as for a single lane); the others, by
 * decreasing cost (ties: the smaller lane), are dealt round robin to the
 * CPUs the program's nthreads threads run on (min(nthreads, ncpus);
 * ncpus <= 0: one CPU a thread), where they run one after another, each
 * sharing its CPU with the program's threads there: with k threads a CPU
 * (ceil(nthreads / CPUs)) a lane gets 1/(k+1) of it, half with one.  Lane
 * l then runs from begin_ns[l] to begin_ns[l] + dur_ns[l] after the
 * invocation starts.  Returns the program's loss: the most work taken
 * from one program CPU (its threads finish that much later, and a barrier
 * waits for the slowest), 0 when every lane had a free CPU. */
double ph_exp_lanes_time(const double *cost_ns, int nlanes, int free_cpus, int nthreads,
                         int ncpus, double *begin_ns, double *dur_ns);

/* Arrival time of the k-th (1-based) of m pages of an invocation that
 * started at start_ns and costs cost_ns. */
double ph_exp_arrival_ns(double start_ns, double cost_ns, size_t k,
                         size_t m);

#endif
