/*
 * model.c -- the cost model of `pagehome sim` (model.h states it; the
 * reasoning is in doc/sim-model.md).  Pure functions: no globals, no
 * clock, no allocation.
 *
 * Contention is counted per page and per phase: c(p) is the number of
 * nodes whose accesses to p in the phase exceed the accesses of p's home
 * node (UPMlib's eq. 2, which the engine's competitive criterion uses
 * too).  It applies to remote accesses only: the home node's own accesses
 * pay the uncontended local latency.  A page read by every node equally
 * and homed on one of them has c = 0; the same page homed on a node that
 * does not read it has c = the number of readers.
 *
 * The TLB term (model.h) is the reach model m(W, E) = max(0, 1 - E/W)
 * applied per thread and page size to the accesses that switch page; it
 * is added to the thread's memory time only for the cells that ask for it
 * (run.c), so e1-e5 keep the model they were measured with.
 */
#include "experiment/model.h"

#include <string.h>

#define MODEL_MAX_NODES 64

uint64_t ph_exp_phase_ns(const ph_exp_costs *m, const ph_exp_access *acc,
                         size_t nacc, const int *thread_node, int nthreads,
                         const int *home, double *thread_ns)
{
    uint64_t remote = 0;
    int n = m->nnodes;
    uint64_t per_node[MODEL_MAX_NODES];
    uint8_t seen[MODEL_MAX_NODES];
    int list[MODEL_MAX_NODES];
    for (int t = 0; t < nthreads; t++)
        thread_ns[t] = 0.0;
    if (n < 1 || n > MODEL_MAX_NODES)
        return 0;
    memset(per_node, 0, sizeof per_node);
    memset(seen, 0, sizeof seen);
    size_t i = 0;
    while (i < nacc) {
        /* the entries of one page: [i, j), and the nodes that touch it */
        uint32_t p = acc[i].page;
        size_t j = i;
        int nl = 0;
        for (; j < nacc && acc[j].page == p; j++) {
            if (acc[j].thread >= (uint32_t)nthreads)
                continue;
            int nd = thread_node[acc[j].thread];
            if (nd < 0 || nd >= n)
                continue;
            if (!seen[nd]) {
                seen[nd] = 1;
                list[nl++] = nd;
            }
            per_node[nd] += acc[j].count;
        }
        int h = home[p];
        int c = 0;
        if (h >= 0 && h < n)
            for (int l = 0; l < nl; l++)
                if (list[l] != h && per_node[list[l]] > per_node[h])
                    c++;
        for (int l = 0; l < nl; l++) {
            per_node[list[l]] = 0;
            seen[list[l]] = 0;
        }
        if (h < 0 || h >= n) { /* not placed: nothing to charge */
            i = j;
            continue;
        }
        for (size_t k = i; k < j; k++) {
            uint32_t t = acc[k].thread;
            if (t >= (uint32_t)nthreads)
                continue;
            int nd = thread_node[t];
            if (nd < 0 || nd >= n)
                continue;
            double lat = m->lat_ns[nd * n + h];
            if (nd != h) {
                lat += m->contention_ns * c;
                remote += acc[k].count;
            }
            thread_ns[t] += (double)acc[k].count * lat;
        }
        i = j;
    }
    return remote;
}

double ph_exp_barrier_ns(const double *thread_ns, const double *extra_ns,
                         int nthreads)
{
    double worst = 0.0;
    for (int t = 0; t < nthreads; t++) {
        double v = thread_ns[t] + (extra_ns ? extra_ns[t] : 0.0);
        if (v > worst)
            worst = v;
    }
    return worst;
}

double ph_exp_manager_start(double now_ns, double *busy_until_ns,
                            double cost_ns)
{
    double start = now_ns > *busy_until_ns ? now_ns : *busy_until_ns;
    *busy_until_ns = start + cost_ns;
    return start;
}

double ph_exp_lanes_time(const double *cost_ns, int nlanes, int free_cpus, int nthreads,
                         int ncpus, double *begin_ns, double *dur_ns)
{
    int rank[MODEL_MAX_NODES], nr = 0;
    if (nlanes > MODEL_MAX_NODES)
        nlanes = MODEL_MAX_NODES;
    for (int l = 0; l < nlanes; l++) {
        begin_ns[l] = 0.0;
        dur_ns[l] = 0.0;
        if (cost_ns[l] > 0)
            rank[nr++] = l;
    }
    /* by decreasing cost, ties to the smaller lane (insertion sort) */
    for (int i = 1; i < nr; i++) {
        int l = rank[i], j = i;
        while (j > 0 && cost_ns[rank[j - 1]] < cost_ns[l]) {
            rank[j] = rank[j - 1];
            j--;
        }
        rank[j] = l;
    }
    if (free_cpus < 1)
        free_cpus = 1;
    if (nthreads < 1)
        nthreads = 1;
    /* the CPUs the program's threads run on, and how many threads share
     * each: a lane there gets its share, one of per_cpu + 1 */
    int prog_cpus = ncpus > 0 && ncpus < nthreads ? ncpus : nthreads;
    double slow = 1.0 + (double)((nthreads + prog_cpus - 1) / prog_cpus);
    /* per program CPU, round robin; at most MODEL_MAX_NODES lanes share, so
     * the first MODEL_MAX_NODES CPUs are all the deal can reach */
    double taken[MODEL_MAX_NODES];
    int ncpu = prog_cpus < MODEL_MAX_NODES ? prog_cpus : MODEL_MAX_NODES;
    for (int c = 0; c < ncpu; c++)
        taken[c] = 0.0;
    double loss = 0.0;
    for (int i = 0; i < nr; i++) {
        int l = rank[i];
        if (i < free_cpus) {
            dur_ns[l] = cost_ns[l];
            continue;
        }
        int c = (i - free_cpus) % ncpu;
        begin_ns[l] = slow * taken[c];
        dur_ns[l] = slow * cost_ns[l];
        taken[c] += cost_ns[l];
        if (taken[c] > loss)
            loss = taken[c];
    }
    return loss;
}

double ph_exp_arrival_ns(double start_ns, double cost_ns, size_t k,
                         size_t m)
{
    if (m == 0)
        return start_ns;
    return start_ns + cost_ns * (double)k / (double)m;
}

double ph_exp_tlb_miss_share(double pages, double entries)
{
    if (!(pages > 0))
        return 0.0;
    double m = 1.0 - (entries > 0 ? entries : 0.0) / pages;
    return m > 0 ? m : 0.0;
}

double ph_exp_phase_tlb(const ph_exp_tlb *tlb, const ph_exp_access *acc,
                        const ph_exp_switches *sw, size_t nacc,
                        int nthreads, const uint8_t *huge,
                        ph_exp_tlb_thread *th, double *thread_ns)
{
    for (int t = 0; t < nthreads; t++) {
        memset(&th[t], 0, sizeof th[t]);
        th[t].last_unit = UINT32_MAX;
    }
    for (size_t k = 0; k < nacc; k++) {
        uint32_t t = acc[k].thread;
        if (t >= (uint32_t)nthreads)
            continue;
        uint32_t p = acc[k].page, u = p / 512u;
        ph_exp_tlb_thread *x = &th[t];
        if (huge[p]) {
            if (x->last_unit != u) { /* entries come by page: units ascend */
                x->last_unit = u;
                x->units_2m += 1;
            }
            x->switch_2m += sw[k].sw_2m;
        } else {
            x->pages_4k += 1;
            x->switch_4k += sw[k].sw_4k;
        }
    }
    double all = 0;
    for (int t = 0; t < nthreads; t++) {
        ph_exp_tlb_thread *x = &th[t];
        x->misses = x->switch_4k *
                        ph_exp_tlb_miss_share(x->pages_4k, tlb->entries_4k) +
                    x->switch_2m *
                        ph_exp_tlb_miss_share(x->units_2m, tlb->entries_2m);
        if (thread_ns)
            thread_ns[t] += x->misses * tlb->walk_ns;
        all += x->misses;
    }
    return all;
}

int ph_exp_calibrate(double real_ns, double slowdown, double mem_ft_ns,
                     double mem_sn_ns, double *scale,
                     double *compute_per_mem)
{
    *scale = 1.0;
    *compute_per_mem = 0.0;
    if (!(real_ns > 0) || !(slowdown > 1) || !(mem_ft_ns > 0) ||
        !(mem_sn_ns > mem_ft_ns))
        return -1;
    double f = (slowdown - 1.0) / (mem_sn_ns / mem_ft_ns - 1.0);
    if (f > 1.0)
        f = 1.0;
    if (f < 0.05)
        f = 0.05;
    *scale = f * real_ns / mem_ft_ns;
    *compute_per_mem = (1.0 - f) / f;
    return 0;
}
