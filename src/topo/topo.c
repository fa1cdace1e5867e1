/*
 * topo.c -- the topology object: allocation, validation, lookup, loading.
 *
 * Builders (hwloc, spec, JSON) allocate with ph_topo_alloc(), fill in node
 * ids, CPUs, memory and distances, and call ph_topo_finish(), which is the
 * single place the rules of a well-formed topology are checked (so a bad
 * JSON file and a bad spec get the same messages) and the derived arrays
 * (cpus[], cpu_node[], the latency model) are built.
 *
 * ph_topo_load() picks the builder from the text it is given and then
 * applies the side effects that belong to "the machine pagehome runs on"
 * rather than to a parser: the asymmetric-distance warning and the
 * measured-latency file of the latency_file tunable.  Builders never
 * print, so the fuzzer and tests can call them quietly.
 */
#include "topo/topo.h"

#include "base/error.h"
#include "base/log.h"
#include "base/sort.h"
#include "config/options.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PH_MAX_NODE_ID 1023

ph_topology *ph_topo_alloc(int nnodes)
{
    if (nnodes < 1 || nnodes > PH_MAX_NODES)
        return ph_fail_null(EINVAL, "topology: %d nodes: must be 1..%d",
                            nnodes, PH_MAX_NODES);
    ph_topology *t = calloc(1, sizeof *t);
    if (!t)
        return ph_fail_null(ENOMEM, "topology: out of memory");
    size_t n2 = (size_t)nnodes * (size_t)nnodes;
    t->nnodes = nnodes;
    t->distance = calloc(n2, sizeof *t->distance);
    t->latency_ns = calloc(n2, sizeof *t->latency_ns);
    t->migrate_ns_4k = calloc(n2, sizeof *t->migrate_ns_4k);
    t->migrate_ns_2m = calloc(n2, sizeof *t->migrate_ns_2m);
    if (!t->distance || !t->latency_ns || !t->migrate_ns_4k ||
        !t->migrate_ns_2m) {
        ph_topo_free(t);
        return ph_fail_null(ENOMEM, "topology: out of memory");
    }
    for (int i = 0; i < nnodes; i++) {
        t->nodes[i].id = i;
        for (int j = 0; j < nnodes; j++)
            t->distance[i * nnodes + j] = i == j ? 10 : 20;
    }
    return t;
}

void ph_topo_free(ph_topology *t)
{
    if (!t)
        return;
    for (int i = 0; i < PH_MAX_NODES; i++)
        free(t->nodes[i].cpus);
    free(t->cpus);
    free(t->cpu_node);
    free(t->distance);
    free(t->latency_ns);
    free(t->migrate_ns_4k);
    free(t->migrate_ns_2m);
    free(t);
}

int ph_topo_node_index(const ph_topology *t, int node_id)
{
    if (!t || node_id < 0)
        return -1;
    for (int i = 0; i < t->nnodes; i++)
        if (t->nodes[i].id == node_id)
            return i;
    return -1;
}

/* ---- validation -------------------------------------------------- */

static int check_node_ids(const ph_topology *t)
{
    unsigned char seen[PH_MAX_NODE_ID + 1] = {0};

    if (t->nnodes < 1 || t->nnodes > PH_MAX_NODES)
        return ph_fail(EINVAL, "topology: %d nodes: must be 1..%d",
                       t->nnodes, PH_MAX_NODES);
    for (int i = 0; i < t->nnodes; i++) {
        int id = t->nodes[i].id;
        if (id < 0 || id > PH_MAX_NODE_ID)
            return ph_fail(EINVAL, "topology: node id %d: must be 0..%d", id,
                           PH_MAX_NODE_ID);
        if (seen[id])
            return ph_fail(EINVAL, "topology: node id %d appears twice", id);
        seen[id] = 1;
    }
    return 0;
}

static int check_distance_row(const ph_topology *t, int i)
{
    int n = t->nnodes;
    int local = t->distance[i * n + i];
    int id = t->nodes[i].id;

    for (int j = 0; j < n; j++) {
        int d = t->distance[i * n + j];
        if (d < 1 || d > 255)
            return ph_fail(EINVAL,
                           "topology: distance %d from node %d to node %d: "
                           "must be 1..255",
                           d, id, t->nodes[j].id);
    }
    if (local < 10)
        return ph_fail(EINVAL,
                       "topology: node %d: local distance %d: must be >= 10",
                       id, local);
    for (int j = 0; j < n; j++) {
        int d = t->distance[i * n + j];
        if (d < local)
            return ph_fail(EINVAL,
                           "topology: node %d: distance %d to node %d is "
                           "smaller than its local distance %d",
                           id, d, t->nodes[j].id, local);
    }
    return 0;
}

static int check_distances(const ph_topology *t)
{
    for (int i = 0; i < t->nnodes; i++)
        if (check_distance_row(t, i))
            return -1;
    return 0;
}

int ph_topo_symmetric(const ph_topology *t)
{
    for (int i = 0; i < t->nnodes; i++)
        for (int j = 0; j < i; j++)
            if (ph_topo_dist(t, i, j) != ph_topo_dist(t, j, i))
                return 0;
    return 1;
}

/* ---- CPU maps ---------------------------------------------------- */

/* Range-check every CPU; return the largest (-1 when there are none). */
static int check_cpu_ranges(const ph_topology *t, int *max_cpu)
{
    *max_cpu = -1;
    for (int i = 0; i < t->nnodes; i++) {
        const ph_node_info *nd = &t->nodes[i];
        if (nd->ncpus < 0 || nd->ncpus > PH_MAX_CPUS ||
            (nd->ncpus > 0 && !nd->cpus))
            return ph_fail(EINVAL, "topology: node %d: %d cpus: must be "
                           "0..%d", nd->id, nd->ncpus, PH_MAX_CPUS);
        for (int k = 0; k < nd->ncpus; k++) {
            int c = nd->cpus[k];
            if (c < 0 || c >= PH_MAX_CPUS)
                return ph_fail(EINVAL,
                               "topology: node %d: cpu %d: must be 0..%d",
                               nd->id, c, PH_MAX_CPUS - 1);
            if (c > *max_cpu)
                *max_cpu = c;
        }
    }
    if (*max_cpu < 0)
        return ph_fail(EINVAL, "topology: no node has a CPU");
    return 0;
}

/* cpu_node[] (checking that no CPU is in two nodes), then cpus[]. */
static int build_cpu_maps(ph_topology *t)
{
    int max_cpu;

    free(t->cpus);
    free(t->cpu_node);
    t->cpus = NULL;
    t->cpu_node = NULL;
    t->ncpus = t->cpu_node_len = 0;
    if (check_cpu_ranges(t, &max_cpu))
        return -1;
    int *map = malloc((size_t)(max_cpu + 1) * sizeof *map);
    int *all = malloc((size_t)(max_cpu + 1) * sizeof *all);
    if (!map || !all) {
        free(map);
        free(all);
        return ph_fail(ENOMEM, "topology: out of memory");
    }
    for (int c = 0; c <= max_cpu; c++)
        map[c] = -1;
    for (int i = 0; i < t->nnodes; i++) {
        ph_node_info *nd = &t->nodes[i];
        if (nd->ncpus > 1)
            qsort(nd->cpus, (size_t)nd->ncpus, sizeof *nd->cpus, ph_cmp_int);
        for (int k = 0; k < nd->ncpus; k++) {
            int c = nd->cpus[k];
            if (map[c] >= 0) {
                int other = map[c];
                free(map);
                free(all);
                if (other == i)
                    return ph_fail(EINVAL, "topology: node %d: cpu %d "
                                   "appears twice", nd->id, c);
                return ph_fail(EINVAL,
                               "topology: cpu %d is in node %d and node %d",
                               c, t->nodes[other].id, nd->id);
            }
            map[c] = i;
        }
    }
    int n = 0;
    for (int c = 0; c <= max_cpu; c++)
        if (map[c] >= 0)
            all[n++] = c;
    t->cpu_node = map;
    t->cpu_node_len = max_cpu + 1;
    t->cpus = all;
    t->ncpus = n;
    return 0;
}

int ph_topo_finish(ph_topology *t)
{
    if (check_node_ids(t) || check_distances(t) || build_cpu_maps(t))
        return -1;
    ph_topo_model_latency(t);
    return 0;
}

/* ---- comparison -------------------------------------------------- */

static int same_node(const ph_node_info *a, const ph_node_info *b)
{
    if (a->id != b->id || a->ncpus != b->ncpus ||
        a->mem_total_bytes != b->mem_total_bytes ||
        a->mem_free_bytes != b->mem_free_bytes || a->npools != b->npools)
        return 0;
    if (a->ncpus && memcmp(a->cpus, b->cpus, (size_t)a->ncpus * sizeof(int)))
        return 0;
    for (int p = 0; p < a->npools && p < 2; p++) {
        const ph_hugepool *x = &a->pools[p], *y = &b->pools[p];
        if (x->page_bytes != y->page_bytes || x->total != y->total ||
            x->free != y->free || x->surplus != y->surplus)
            return 0;
    }
    return 1;
}

static int same_doubles(const double *a, const double *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

int ph_topo_same(const ph_topology *a, const ph_topology *b)
{
    if (a->nnodes != b->nnodes || a->ncpus != b->ncpus ||
        a->measured != b->measured ||
        a->migrate_ns_call != b->migrate_ns_call ||
        a->model_local_ns != b->model_local_ns)
        return 0;
    for (int i = 0; i < a->nnodes; i++)
        if (!same_node(&a->nodes[i], &b->nodes[i]))
            return 0;
    size_t n2 = (size_t)a->nnodes * (size_t)a->nnodes;
    if (memcmp(a->distance, b->distance, n2 * sizeof(int)))
        return 0;
    return same_doubles(a->latency_ns, b->latency_ns, n2) &&
           same_doubles(a->migrate_ns_4k, b->migrate_ns_4k, n2) &&
           same_doubles(a->migrate_ns_2m, b->migrate_ns_2m, n2);
}

/* ---- loading ----------------------------------------------------- */

static ph_topology *build_from(const char *spec)
{
    struct stat st;
    const char *s = spec;

    if (!spec || !*spec)
        return ph_topo_from_hwloc();
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '{')
        return ph_topo_from_json_text(spec, strlen(spec), "inline JSON");
    if (stat(spec, &st) == 0 && S_ISREG(st.st_mode))
        return ph_topo_from_json_file(spec);
    if (!strchr(spec, '='))
        return ph_topo_from_json_file(spec); /* says it cannot be opened */
    return ph_topo_from_spec(spec);
}

static void warn_if_asymmetric(const ph_topology *t)
{
    for (int i = 0; i < t->nnodes; i++) {
        for (int j = 0; j < i; j++) {
            int ij = ph_topo_dist(t, i, j), ji = ph_topo_dist(t, j, i);
            if (ij != ji) {
                ph_warn("topology %s: distances are not symmetric (node %d "
                        "to %d is %d, node %d to %d is %d)",
                        t->source, t->nodes[i].id, t->nodes[j].id, ij,
                        t->nodes[j].id, t->nodes[i].id, ji);
                return;
            }
        }
    }
}

static void apply_latency_file(ph_topology *t)
{
    const char *path = ph_opt_str(PH_OPT_LATENCY_FILE);
    char msg[256];

    if (!path || !*path)
        return;
    if (access(path, F_OK) != 0 && errno == ENOENT)
        return;
    if (ph_topo_load_measured(t, path) == 0) {
        ph_info("topology: measured latencies from %s", path);
        return;
    }
    snprintf(msg, sizeof msg, "%s", ph_error_message());
    ph_warn("%s; keeping the latency model", msg);
}

ph_topology *ph_topo_load(const char *spec)
{
    ph_topology *t = build_from(spec);
    if (!t)
        return NULL;
    warn_if_asymmetric(t);
    apply_latency_file(t);
    return t;
}
