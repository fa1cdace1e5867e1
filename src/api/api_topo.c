/*
 * api_topo.c -- the public entry points of topologies and threads: the
 * machine's topology, loading and reading topologies, the calling
 * thread's node.
 */
#include "pagehome.h"

#include "base/error.h"
#include "config/options.h"
#include "machine/machine.h"
#include "sample/source.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

/* ---- topology ---------------------------------------------------------- */

PH_API const ph_topology_t *ph_machine_topology(void)
{
    ph_machine *c = ph_machine_get();
    return c ? c->topo : NULL;
}

PH_API ph_topology_t *ph_topology_load(const char *spec)
{
    ph_options_init(); /* the environment, before anything says a word */
    return ph_topo_load(spec);
}

PH_API void ph_topology_destroy(ph_topology_t *topo)
{
    ph_machine *c = topo ? ph_machine_get() : NULL;
    if (c && c->topo == topo)
        return; /* the machine's own topology is not the caller's to free */
    ph_topo_free(topo);
}

static int check_topo(const char *fn, const ph_topology_t *t)
{
    return t ? 0 : ph_fail(EINVAL, "%s: topology is NULL", fn);
}

/* Node index of an OS node id, failing with a message naming the node. */
static int node_index(const char *fn, const ph_topology_t *t, int node)
{
    if (check_topo(fn, t) < 0)
        return -1;
    int idx = ph_topo_node_index(t, node);
    if (idx < 0)
        return ph_fail(EINVAL, "%s: %d is not a node of this machine (%d node%s)",
                       fn, node, t->nnodes, t->nnodes == 1 ? "" : "s");
    return idx;
}

PH_API int ph_topology_is_synthetic(const ph_topology_t *t)
{
    return check_topo("ph_topology_is_synthetic", t) < 0 ? -1 : t->synthetic;
}

PH_API int ph_topology_nnodes(const ph_topology_t *t)
{
    return check_topo("ph_topology_nnodes", t) < 0 ? -1 : t->nnodes;
}

PH_API int ph_topology_node(const ph_topology_t *t, int idx)
{
    if (check_topo("ph_topology_node", t) < 0)
        return -1;
    if (idx < 0 || idx >= t->nnodes)
        return ph_fail(EINVAL, "ph_topology_node: index %d is not in 0..%d", idx,
                       t->nnodes - 1);
    return t->nodes[idx].id;
}

PH_API int ph_topology_ncpus(const ph_topology_t *t)
{
    return check_topo("ph_topology_ncpus", t) < 0 ? -1 : t->ncpus;
}

PH_API int ph_topology_cpu(const ph_topology_t *t, int idx)
{
    if (check_topo("ph_topology_cpu", t) < 0)
        return -1;
    if (idx < 0 || idx >= t->ncpus)
        return ph_fail(EINVAL, "ph_topology_cpu: index %d is not in 0..%d", idx,
                       t->ncpus - 1);
    return t->cpus[idx];
}

PH_API int ph_topology_cpu_node(const ph_topology_t *t, int cpu)
{
    if (check_topo("ph_topology_cpu_node", t) < 0)
        return -1;
    int idx = ph_topo_cpu_index(t, cpu);
    if (idx < 0)
        return ph_fail(EINVAL, "ph_topology_cpu_node: %d is not a CPU of this machine", cpu);
    return t->nodes[idx].id;
}

PH_API int ph_topology_node_cpus(const ph_topology_t *t, int node, int *cpus, int max)
{
    int idx = node_index("ph_topology_node_cpus", t, node);
    if (idx < 0)
        return -1;
    if (max < 0 || (max > 0 && !cpus))
        return ph_fail(EINVAL, "ph_topology_node_cpus: no room for the CPUs (max %d)", max);
    const ph_node_info *n = &t->nodes[idx];
    for (int k = 0; k < n->ncpus && k < max; k++)
        cpus[k] = n->cpus[k];
    return n->ncpus;
}

PH_API int ph_topology_node_memory(const ph_topology_t *t, int node,
                                   uint64_t *total_bytes, uint64_t *free_bytes)
{
    int idx = node_index("ph_topology_node_memory", t, node);
    if (idx < 0)
        return -1;
    if (total_bytes)
        *total_bytes = t->nodes[idx].mem_total_bytes;
    if (free_bytes)
        *free_bytes = t->nodes[idx].mem_free_bytes;
    return 0;
}

PH_API int ph_topology_distance(const ph_topology_t *t, int from, int to)
{
    int i = node_index("ph_topology_distance", t, from);
    int j = i < 0 ? -1 : node_index("ph_topology_distance", t, to);
    return j < 0 ? -1 : ph_topo_dist(t, i, j);
}

PH_API double ph_topology_latency_ns(const ph_topology_t *t, int from, int to)
{
    int i = node_index("ph_topology_latency_ns", t, from);
    int j = i < 0 ? -1 : node_index("ph_topology_latency_ns", t, to);
    return j < 0 ? -1.0 : ph_topo_lat(t, i, j);
}

PH_API double ph_topology_migrate_ns(const ph_topology_t *t, int from, int to,
                                     size_t page_bytes)
{
    int i = node_index("ph_topology_migrate_ns", t, from);
    int j = i < 0 ? -1 : node_index("ph_topology_migrate_ns", t, to);
    if (j < 0)
        return -1.0;
    if (page_bytes == 4096)
        return t->migrate_ns_4k[i * t->nnodes + j];
    if (page_bytes == 2u << 20)
        return t->migrate_ns_2m[i * t->nnodes + j];
    ph_fail(EINVAL, "ph_topology_migrate_ns: page size %zu is not 4K or 2M", page_bytes);
    return -1.0;
}

/* ---- threads ----------------------------------------------------------- */

PH_API int ph_current_node(void)
{
    ph_machine *c = ph_machine_get();
    return c ? ph_os_current_node(c->os) : -1;
}

PH_API int ph_thread_set_node(int node)
{
    ph_machine *c = ph_machine_get();
    if (!c)
        return -1;
    if (node >= 0 && ph_topo_node_index(c->topo, node) < 0)
        return ph_fail(EINVAL, "ph_thread_set_node: %d is not a node of this machine", node);
    if (ph_os_set_thread_node(c->os, node) != 0)
        return -1;
    /* the userfaultfd mechanism's service thread attributes this
     * thread's faults to its noted node */
    ph_sampler_note_node(ph_os_current_node(c->os));
    return 0;
}
