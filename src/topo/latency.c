/*
 * latency.c -- the latency and migration-cost model, and measured values.
 *
 * MODEL (used until something better is known).  The ACPI SLIT distance
 * is a relative latency with 10 = local, so
 *     latency_ns[i][j]    = local_ns * distance[i][j] / 10
 *     migrate_ns_4k[i][j] = migrate_ns_4k * distance[i][j] / 10   (i != j)
 *     migrate_ns_2m[i][j] = migrate_ns_2m * distance[i][j] / 10   (i != j)
 *     migrate_ns_4k[i][i] = migrate_ns_2m[i][i] = 0  (nothing moves)
 *     migrate_ns_call     = the migrate_ns_call tunable
 * where local_ns is the topology's model_local_ns (spec key local_ns=) or
 * else the local_latency_ns tunable, and migrate_ns_* are the tunables of
 * the same names.
 *
 * MEASURED VALUES come from a file written by `pagehome topo --measure`
 * (ph_topo_measure): a topology JSON document with "measured": true.  Only
 * its node ids and its latency/migration matrices are used: the node ids
 * must be exactly those of the topology (in any order), otherwise the file
 * was measured on another machine and is refused, naming a node that is
 * in one and not the other.
 */
#include "topo/topo.h"

#include "base/error.h"
#include "config/options.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

void ph_topo_model_latency(ph_topology *t)
{
    int n = t->nnodes;
    double local_ns = t->model_local_ns > 0
                          ? t->model_local_ns
                          : ph_opt_double(PH_OPT_LOCAL_LATENCY_NS);
    double m4k_ns = ph_opt_double(PH_OPT_MIGRATE_NS_4K);
    double m2m_ns = ph_opt_double(PH_OPT_MIGRATE_NS_2M);

    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            double rel = ph_topo_dist(t, i, j) / 10.0;
            t->latency_ns[i * n + j] = local_ns * rel;
            t->migrate_ns_4k[i * n + j] = i == j ? 0.0 : m4k_ns * rel;
            t->migrate_ns_2m[i * n + j] = i == j ? 0.0 : m2m_ns * rel;
        }
    }
    t->migrate_ns_call = ph_opt_double(PH_OPT_MIGRATE_NS_CALL);
    t->measured = 0;
}

/* "0,1,2" into buf. */
static void format_ids(const ph_topology *t, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < t->nnodes && used < len; i++) {
        int k = snprintf(buf + used, len - used, "%s%d", i ? "," : "",
                         t->nodes[i].id);
        if (k < 0)
            break;
        used += (size_t)k;
    }
}

/* Both topologies must have the same node ids. */
static int check_same_nodes(const ph_topology *t, const ph_topology *m,
                            const char *path)
{
    char ids[128];

    for (int i = 0; i < t->nnodes; i++) {
        if (ph_topo_node_index(m, t->nodes[i].id) < 0) {
            format_ids(m, ids, sizeof ids);
            return ph_fail(EINVAL,
                           "latency file %s: node %d of this machine is not "
                           "in the file (file nodes: %s)",
                           path, t->nodes[i].id, ids);
        }
    }
    for (int i = 0; i < m->nnodes; i++) {
        if (ph_topo_node_index(t, m->nodes[i].id) < 0) {
            format_ids(t, ids, sizeof ids);
            return ph_fail(EINVAL,
                           "latency file %s: node %d is not a node of this "
                           "machine (nodes: %s)",
                           path, m->nodes[i].id, ids);
        }
    }
    return 0;
}

/* Read the file as a topology; its messages start "topology: PATH: ",
 * which becomes "latency file PATH: ". */
static ph_topology *read_measured(const char *path)
{
    static const char prefix[] = "topology: ";
    char msg[256];

    ph_topology *m = ph_topo_from_json_file(path);
    if (m)
        return m;
    int e = errno;
    const char *inner = ph_error_message();
    if (strncmp(inner, prefix, sizeof prefix - 1) == 0)
        inner += sizeof prefix - 1;
    snprintf(msg, sizeof msg, "%s", inner);
    if (strncmp(msg, path, strlen(path)) == 0)
        return ph_fail_null(e, "latency file %s", msg);
    return ph_fail_null(e, "latency file %s: %s", path, msg);
}

int ph_topo_load_measured(ph_topology *t, const char *path)
{
    ph_topology *m = read_measured(path);
    if (!m)
        return -1;
    if (!m->measured) {
        ph_topo_free(m);
        return ph_fail(EINVAL, "latency file %s: holds no measured values "
                       "(\"measured\" is not true)", path);
    }
    if (check_same_nodes(t, m, path)) {
        ph_topo_free(m);
        return -1;
    }
    int n = t->nnodes;
    for (int i = 0; i < n; i++) {
        int mi = ph_topo_node_index(m, t->nodes[i].id);
        for (int j = 0; j < n; j++) {
            int mj = ph_topo_node_index(m, t->nodes[j].id);
            t->latency_ns[i * n + j] = m->latency_ns[mi * n + mj];
            t->migrate_ns_4k[i * n + j] = m->migrate_ns_4k[mi * n + mj];
            t->migrate_ns_2m[i * n + j] = m->migrate_ns_2m[mi * n + mj];
        }
    }
    t->migrate_ns_call = m->migrate_ns_call;
    t->measured = 1;
    ph_topo_free(m);
    return 0;
}
