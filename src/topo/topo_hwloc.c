/*
 * topo_hwloc.c -- the real machine's topology, through hwloc 2.x and sysfs.
 *
 * Nodes are hwloc's NUMA nodes (os_index = the OS node number), sorted by
 * number.  Their memory is hwloc's local_memory; the free memory is not
 * in hwloc and comes from
 *   /sys/devices/system/node/nodeN/meminfo                   (MemFree)
 * (0 when unreadable, or when hwloc describes another system:
 * HWLOC_XMLFILE, HWLOC_SYNTHETIC -- which is how the tests feed it
 * multi-node machines).  The hugetlbfs pools are the OS layer's
 * (os/hugetlb.c): the machine fills this topology's snapshot of them when
 * it opens.
 *
 * WHICH CPUS BELONG TO A NODE.  In hwloc 2 a NUMA node's cpuset is its
 * locality, not its CPUs: a memory-only node (CXL memory, HBM, a node
 * with its CPUs offline) carries the cpuset of the object it hangs from,
 * which may be the whole machine.  So a node's CPUs are taken from the
 * kernel's /sys/devices/system/node/nodeN/cpulist when readable, else
 * from its hwloc cpuset; a CPU claimed by several nodes goes to the one
 * with the smallest set (the most local one; ties to the lower index).
 * Only CPUs hwloc reports (the allowed ones) are used.  A CPU no node
 * claims, or a machine without NUMA nodes, ends up in the first node (a
 * single node 0 without NUMA).
 *
 * DISTANCES come from hwloc's OS-provided latency matrix (ACPI SLIT).
 * When there is none (one node, or no SLIT), or it does not cover every
 * node or breaks the rules of ph_topo_finish, the default 10 local / 20
 * remote is used (said with ph_info).
 */
#include "topo/topo.h"

#include "base/error.h"
#include "base/file.h"
#include "base/log.h"

#include <errno.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SYS_NODE "/sys/devices/system/node"

/* ---- sysfs ------------------------------------------------------- */

/* MemFree of a node in bytes, 0 when unknown. */
static uint64_t node_free_bytes(int id)
{
    char path[128], buf[8192];
    snprintf(path, sizeof path, SYS_NODE "/node%d/meminfo", id);
    if (ph_read_text(path, buf, sizeof buf) < 0)
        return 0;
    const char *p = strstr(buf, "MemFree:");
    if (!p)
        return 0;
    unsigned long long kb = strtoull(p + strlen("MemFree:"), NULL, 10);
    return (uint64_t)kb * 1024;
}

/* ---- CPUs -------------------------------------------------------- */

/* The set of CPUs node `id` claims: sysfs cpulist (when hwloc describes
 * this system), else hwloc's cpuset. */
static hwloc_bitmap_t node_cpuset(int id, hwloc_obj_t obj, int this_system)
{
    char path[128], buf[8192];
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set)
        return NULL;
    snprintf(path, sizeof path, SYS_NODE "/node%d/cpulist", id);
    if (this_system && ph_read_text(path, buf, sizeof buf) >= 0) {
        buf[strcspn(buf, "\n")] = '\0';
        if (buf[0] == '\0') {
            hwloc_bitmap_zero(set);
            return set;
        }
        if (hwloc_bitmap_list_sscanf(set, buf) == 0)
            return set;
    }
    if (obj && obj->cpuset)
        hwloc_bitmap_copy(set, obj->cpuset);
    else
        hwloc_bitmap_zero(set);
    return set;
}

/* Node index owning CPU c: the smallest set containing it, else 0. */
static int cpu_owner(hwloc_bitmap_t *sets, int n, unsigned c)
{
    int best = -1, best_weight = 0;
    for (int i = 0; i < n; i++) {
        if (!hwloc_bitmap_isset(sets[i], c))
            continue;
        int w = hwloc_bitmap_weight(sets[i]);
        if (best < 0 || w < best_weight) {
            best = i;
            best_weight = w;
        }
    }
    return best < 0 ? 0 : best;
}

static int add_cpu(ph_node_info *nd, int c)
{
    int *cpus = realloc(nd->cpus, (size_t)(nd->ncpus + 1) * sizeof *cpus);
    if (!cpus)
        return ph_fail(ENOMEM, "topology: out of memory");
    nd->cpus = cpus;
    nd->cpus[nd->ncpus++] = c;
    return 0;
}

static int assign_cpus(hwloc_topology_t topo, ph_topology *t,
                       hwloc_obj_t *objs)
{
    hwloc_bitmap_t sets[PH_MAX_NODES] = {0};
    int sys = hwloc_topology_is_thissystem(topo);
    int rc = 0;

    for (int i = 0; i < t->nnodes && rc == 0; i++)
        if (!(sets[i] = node_cpuset(t->nodes[i].id, objs ? objs[i] : NULL,
                                    sys)))
            rc = ph_fail(ENOMEM, "topology: out of memory");
    hwloc_obj_t pu = NULL;
    while (rc == 0 &&
           (pu = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PU, pu))) {
        if (pu->os_index >= PH_MAX_CPUS) {
            rc = ph_fail(ERANGE, "topology: cpu %u: pagehome supports CPU "
                         "numbers below %d", pu->os_index, PH_MAX_CPUS);
            break;
        }
        int owner = t->nnodes == 1 ? 0 : cpu_owner(sets, t->nnodes,
                                                   pu->os_index);
        rc = add_cpu(&t->nodes[owner], (int)pu->os_index);
    }
    for (int i = 0; i < t->nnodes; i++)
        if (sets[i])
            hwloc_bitmap_free(sets[i]);
    return rc;
}

/* ---- distances --------------------------------------------------- */

/* Copy hwloc's matrix into t; -1 when it is missing or incomplete. */
static int copy_distances(hwloc_topology_t topo, ph_topology *t)
{
    struct hwloc_distances_s *d = NULL;
    unsigned nr = 1;
    unsigned long kind =
        HWLOC_DISTANCES_KIND_FROM_OS | HWLOC_DISTANCES_KIND_MEANS_LATENCY;
    int n = t->nnodes, covered = 0;

    if (hwloc_distances_get_by_type(topo, HWLOC_OBJ_NUMANODE, &nr, &d, kind,
                                    0) != 0 || nr == 0 || !d)
        return -1;
    for (unsigned a = 0; a < d->nbobjs; a++) {
        int i = ph_topo_node_index(t, (int)d->objs[a]->os_index);
        for (unsigned b = 0; b < d->nbobjs && i >= 0; b++) {
            int j = ph_topo_node_index(t, (int)d->objs[b]->os_index);
            uint64_t v = d->values[a * d->nbobjs + b];
            if (j < 0)
                continue;
            t->distance[i * n + j] = v > 255 ? 0 : (int)v;
            covered++;
        }
    }
    hwloc_distances_release(topo, d);
    return covered == n * n ? 0 : -1;
}

static void set_distances(hwloc_topology_t topo, ph_topology *t)
{
    if (t->nnodes == 1) {
        t->distance[0] = 10;
        return;
    }
    if (copy_distances(topo, t) == 0)
        return;
    ph_info("topology: no usable NUMA distance matrix from the OS; using "
            "10 local / 20 remote");
    for (int i = 0; i < t->nnodes; i++)
        for (int j = 0; j < t->nnodes; j++)
            t->distance[i * t->nnodes + j] = i == j ? 10 : 20;
}

/* Distances that break the topology rules are replaced by the default. */
static int finish_with_fallback(hwloc_topology_t topo, ph_topology *t)
{
    set_distances(topo, t);
    if (ph_topo_finish(t) == 0)
        return 0;
    if (errno != EINVAL || !strstr(ph_error_message(), "distance"))
        return -1;
    ph_info("%s; using 10 local / 20 remote", ph_error_message());
    for (int i = 0; i < t->nnodes; i++)
        for (int j = 0; j < t->nnodes; j++)
            t->distance[i * t->nnodes + j] = i == j ? 10 : 20;
    return ph_topo_finish(t);
}

/* ---- building ---------------------------------------------------- */

static int cmp_os_index(const void *a, const void *b)
{
    unsigned x = (*(const hwloc_obj_t *)a)->os_index;
    unsigned y = (*(const hwloc_obj_t *)b)->os_index;
    return (x > y) - (x < y);
}

/* The NUMA node objects sorted by OS number; their count (0: none). */
static int numa_objects(hwloc_topology_t topo, hwloc_obj_t *objs)
{
    int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    if (n <= 0)
        return 0;
    if (n > PH_MAX_NODES)
        return ph_fail(ERANGE, "topology: this machine has %d NUMA nodes, "
                       "pagehome supports at most %d", n, PH_MAX_NODES);
    for (int i = 0; i < n; i++)
        objs[i] = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE,
                                        (unsigned)i);
    qsort(objs, (size_t)n, sizeof *objs, cmp_os_index);
    return n;
}

static ph_topology *build(hwloc_topology_t topo)
{
    hwloc_obj_t objs[PH_MAX_NODES];
    int n = numa_objects(topo, objs);

    if (n < 0)
        return NULL;
    int sys = hwloc_topology_is_thissystem(topo);
    ph_topology *t = ph_topo_alloc(n > 0 ? n : 1);
    if (!t)
        return NULL;
    t->synthetic = 0;
    snprintf(t->source, sizeof t->source, "hwloc");
    for (int i = 0; i < t->nnodes; i++) {
        ph_node_info *nd = &t->nodes[i];
        nd->id = n > 0 ? (int)objs[i]->os_index : 0;
        nd->mem_total_bytes = n > 0 ? objs[i]->attr->numanode.local_memory
                                    : hwloc_get_root_obj(topo)->total_memory;
        if (sys)
            nd->mem_free_bytes = node_free_bytes(nd->id);
    }
    if (assign_cpus(topo, t, n > 0 ? objs : NULL) ||
        finish_with_fallback(topo, t)) {
        int e = errno;
        ph_topo_free(t);
        errno = e;
        return NULL;
    }
    return t;
}

ph_topology *ph_topo_from_hwloc(void)
{
    hwloc_topology_t topo;

    if (hwloc_topology_init(&topo) != 0)
        return ph_fail_null(errno ? errno : ENOMEM,
                            "topology: hwloc: cannot initialise");
    /* Caches and I/O devices are not needed: skip discovering them. */
    hwloc_topology_set_cache_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_icache_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    if (hwloc_topology_load(topo) != 0) {
        int e = errno ? errno : EIO;
        hwloc_topology_destroy(topo);
        return ph_fail_null(e, "topology: hwloc: cannot discover the "
                            "machine: %s", strerror(e));
    }
    ph_topology *t = build(topo);
    int e = errno;
    hwloc_topology_destroy(topo);
    errno = e;
    return t;
}
