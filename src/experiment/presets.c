/*
 * presets.c -- the named machines of `pagehome sim`.
 *
 * Each preset is a topology spec string (the parser's grammar, nothing
 * added to it) and the parameters a spec cannot express.  The latency
 * model of topo/latency.c gives latency_ns[i][j] = local_ns * dist/10, so
 * a preset picks distances and local_ns that make that product its
 * latencies; its migration matrices are then set to the preset's costs
 * (what `topo --measure` would otherwise put there), so the migration
 * tunables do not change a preset.  doc/sim-model.md has the same table.
 *
 * | parameter            | origin2000-16          | epyc-2s-8n            | cxl-2tier              |
 * |----------------------|------------------------|-----------------------|------------------------|
 * | nodes                | 16                     | 8 (2 sockets x 4)     | 2 (DRAM, CXL)          |
 * | CPUs per node        | 2 (32 in all)          | 8 (64 in all)         | 32 : 0 (CXL has none)  |
 * | memory per node      | 512M                   | 32G                   | 64G : 256G             |
 * | distances (SLIT)     | 30 + 10 * hops,        | 10 local, 12 same     | 10 local, 22 to CXL    |
 * |                      | hops = popcount(i ^ j) | socket, 32 across     |                        |
 * |                      | (a 4-cube)             |                       |                        |
 * | local_ns (spec key)  | 100 (10 ns per unit)   | 100                   | 100                    |
 * | load latency         | 300 ns local,          | 100 local, 120 same   | 100 DRAM, 220 CXL      |
 * |                      | 300 + 100 * hops       | socket, 320 across    | (2.2x)                 |
 * | contention_ns        | 50 per competing node  | 50 (assumed: the      | 50 (assumed, as epyc)  |
 * |                      | (003, eq. 2)           | contention_ns default)|                        |
 * | migrate_ns_4k        | 275 000 (1.1 ms per    | 1 200 (1.2 us)        | 1 200 (assumed, epyc)  |
 * |                      | 16 KiB page, 4 x 4 KiB)|                       |                        |
 * | migrate_ns_call      | 0 (1.1 ms is amortized | 20 000 (20 us)        | 20 000 (assumed, epyc) |
 * |                      | per page)              |                       |                        |
 * | migrate_ns_2m        | 140 800 000 (512 x     | 190 000 (190 us)      | 190 000 (assumed)      |
 * |                      | 4 KiB: no huge pages)  |                       |                        |
 * | real iteration, 16 t | BT 450 ms, SP 225 ms,  | - (the model's memory | - (as epyc)            |
 * | (real_iter_ns)       | CG 200 ms (000, 003)   | time alone is longer) |                        |
 * | single-node slowdown | 1.79 (003, 5.2)        | -                     | -                      |
 * | line_bytes           | 128 (R10000 L2 line)   | 64                    | 64                     |
 * | binding              | compact: 16 threads on | spread: 16 threads =  | compact (one CPU node) |
 * |                      | 8 nodes, 32 on 16 (003 | 2 per node, 32 = 4    |                        |
 * |                      | section 5.1)           |                       |                        |
 * | tlb_entries_4k       | 128 (64 entries, each  | 2048 (Zen 2 L2 DTLB)  | 2048 (as epyc)         |
 * |                      | an even/odd page pair) |                       |                        |
 * | tlb_entries_2m       | 64 (a pair of 1 MiB    | 2048 (the same TLB,   | 2048 (as epyc)         |
 * |                      | pages per entry)       | modelled per size)    |                        |
 * | tlb_walk_ns          | 250 (assumed: software | 35 (assumed; bench_tlb| 35 (as epyc)           |
 * |                      | refill)                | calibration, below)   |                        |
 *
 * The TLB (used by e6 only; doc/sim-model.md has the reasoning): the
 * level whose misses walk the page table.  Zen 2's L2 DTLB (WikiChip:
 * unified, 12-way, 2048 entries for 4 KiB and 2 MiB translations; an L1
 * DTLB miss that hits it costs a few cycles and is not charged) is
 * modelled as 2048 entries per page size: exact for a thread using one
 * size, generous for a thread mixing both.  walk_ns = 35 is an assumption
 * calibrated on this project's bench_tlb: a 1 GiB random gather ran
 * 1.26-1.46x slower on 4 KiB than on 2 MiB pages (every 4 KiB access
 * misses the L2 DTLB, no 2 MiB access does), which in a model that charges
 * 100 ns per local access means 26-46 ns per walk.  The origin's values
 * (R10000: 64 entries mapping even/odd page pairs, refilled by software)
 * are assumptions too; no experiment on it uses the TLB term.
 *
 * The origin distances are scaled (30 local rather than 10) so that
 * latency = 10 ns x distance is exact: SLIT entries are integers and
 * 300 + 100 * hops is not a multiple of 30.  Migration costs are the same
 * for every node pair (003 and the issue give one figure per machine).
 */
#include "experiment/presets.h"

#include "base/error.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The Origin moved 16 KiB pages (IRIX's base page; 003's Table 1 counts
 * 2688 hot pages for BT's 3 arrays of 5 x 64^3 doubles, 32 MiB: 12 KiB a
 * page, and 000's "resident set of 3000 pages" of a NAS code) at 1.1 ms
 * each (003, 5.4).  The simulator moves 4 KiB pages, four to a 16 KiB
 * page, so each costs a quarter. */
#define ORIGIN_MIGRATE_4K_NS (1.1e6 / 4)

static const ph_exp_preset presets[] = {
    {"origin2000-16",
     "SGI Origin2000: 16 nodes x 2 CPUs, hypercube, 300 + 100*hops ns, "
     "1.1 ms per 16 KiB page migration",
     50.0, ORIGIN_MIGRATE_4K_NS, 512 * ORIGIN_MIGRATE_4K_NS, 0.0, 128,
     PH_EXP_BIND_COMPACT, 128, 64, 250,
     {450e6, 225e6, 200e6}, 1.79},
    {"epyc-2s-8n",
     "2-socket EPYC, 4 nodes per socket, SLIT 10/12/32, 100 ns local, "
     "1.2 us per page + 20 us per call",
     50.0, 1.2e3, 1.9e5, 2.0e4, 64, PH_EXP_BIND_SPREAD,
     2048, 2048, 35, {0, 0, 0}, 0},
    {"cxl-2tier",
     "one DRAM node with all 32 CPUs + one CXL memory node at 2.2x latency",
     50.0, 1.2e3, 1.9e5, 2.0e4, 64, PH_EXP_BIND_COMPACT,
     2048, 2048, 35, {0, 0, 0}, 0},
};

#define NPRESETS (sizeof presets / sizeof presets[0])

const ph_exp_preset *ph_exp_preset_find(const char *name)
{
    for (size_t i = 0; name && i < NPRESETS; i++)
        if (strcmp(presets[i].name, name) == 0)
            return &presets[i];
    return NULL;
}

const ph_exp_preset *ph_exp_preset_at(size_t i)
{
    return i < NPRESETS ? &presets[i] : NULL;
}

/* The origin's 4-cube: distance 30 + 10 * popcount(i ^ j). */
static int origin_spec(char *buf, size_t len)
{
    int w = snprintf(buf, len, "nodes=16,cpus_per_node=2,mem_per_node=512M,"
                               "local_ns=100,dist=");
    if (w < 0 || (size_t)w >= len)
        return -1;
    size_t used = (size_t)w;
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++) {
            int hops = __builtin_popcount((unsigned)(i ^ j));
            w = snprintf(buf + used, len - used, "%s%d",
                         j ? ":" : (i ? "/" : ""), 30 + 10 * hops);
            if (w < 0 || (size_t)w >= len - used)
                return -1;
            used += (size_t)w;
        }
    return 0;
}

const char *ph_exp_preset_spec(const ph_exp_preset *p, char *buf,
                               size_t len)
{
    const char *fixed = NULL;
    if (!p || !buf || len == 0)
        return NULL;
    if (strcmp(p->name, "origin2000-16") == 0)
        return origin_spec(buf, len) == 0 ? buf : NULL;
    if (strcmp(p->name, "epyc-2s-8n") == 0)
        fixed = "nodes=8,cpus_per_node=8,mem_per_node=32G,sockets=2,"
                "local=10,remote=12,remote_socket=32,local_ns=100";
    else if (strcmp(p->name, "cxl-2tier") == 0)
        fixed = "nodes=2,cpus_per_node=32:0,mem_per_node=64G:256G,"
                "local=10,remote=22,local_ns=100";
    if (!fixed || strlen(fixed) >= len)
        return NULL;
    memcpy(buf, fixed, strlen(fixed) + 1);
    return buf;
}

ph_topology *ph_exp_preset_topology(const ph_exp_preset *p)
{
    char spec[2048];
    if (!p)
        return ph_fail_null(EINVAL, "sim: no machine preset");
    if (!ph_exp_preset_spec(p, spec, sizeof spec))
        return ph_fail_null(EINVAL, "sim: preset %s has no spec", p->name);
    ph_topology *t = ph_topo_from_spec(spec);
    if (!t)
        return NULL;
    int n = t->nnodes;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            t->migrate_ns_4k[i * n + j] = i == j ? 0.0 : p->migrate_ns_4k;
            t->migrate_ns_2m[i * n + j] = i == j ? 0.0 : p->migrate_ns_2m;
        }
    t->migrate_ns_call = p->migrate_ns_call;
    snprintf(t->source, sizeof t->source, "preset %s", p->name);
    return t;
}

int ph_exp_cpus(const ph_topology *t)
{
    int c = 0;
    for (int i = 0; i < t->nnodes; i++)
        c += t->nodes[i].ncpus;
    return c;
}

int ph_exp_bind_threads(const ph_exp_preset *p, const ph_topology *t,
                        int nthreads, int first_cpu, int *node_of_thread)
{
    int cpus = ph_exp_cpus(t);
    if (nthreads < 1 || first_cpu < 0 || first_cpu + nthreads > cpus)
        return ph_fail(EINVAL, "sim: %d threads from CPU %d do not fit on "
                       "the %d CPUs of %s", nthreads, first_cpu, cpus,
                       p->name);
    if (p->binding == PH_EXP_BIND_SPREAD && first_cpu == 0) {
        int cnodes[PH_MAX_NODES], nc = 0, used[PH_MAX_NODES] = {0};
        for (int i = 0; i < t->nnodes; i++)
            if (t->nodes[i].ncpus > 0)
                cnodes[nc++] = i;
        for (int k = 0; k < nthreads; k++) {
            int nd = cnodes[(int)((long)k * nc / nthreads)];
            if (++used[nd] > t->nodes[nd].ncpus)
                return ph_fail(EINVAL, "sim: %d threads spread over %d "
                               "nodes overfill node %d", nthreads, nc,
                               t->nodes[nd].id);
            node_of_thread[k] = nd;
        }
        return 0;
    }
    /* compact: CPU c (counted node by node) runs thread c - first_cpu */
    int c = 0;
    for (int i = 0; i < t->nnodes; i++)
        for (int k = 0; k < t->nodes[i].ncpus; k++, c++)
            if (c >= first_cpu && c < first_cpu + nthreads)
                node_of_thread[c - first_cpu] = i;
    return 0;
}
