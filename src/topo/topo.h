/*
 * topo.h -- the machine's shape: nodes, CPUs, memory, distances, latency.
 *
 * A ph_topology is built once, from one of three sources, and is read-only
 * afterwards (so it is shared between threads without locks):
 *   - the real machine, through hwloc (topo_hwloc.c): nodes, CPUs, memory
 *     and the ACPI SLIT distance matrix (its hugetlbfs pools are filled
 *     in from sysfs by the OS layer when the machine opens: os/hugetlb.h);
 *   - a synthetic spec string (topo_synth.c), e.g.
 *       nodes=4,cpus_per_node=2,mem_per_node=4G,dist=10:12:32:32/12:10:32:32/...
 *   - a JSON file in the format `pagehome topo --json` writes (topo_json.c).
 * Synthetic topologies drive the simulated machine; everywhere a real
 * topology is accepted, a synthetic one is too.
 *
 * Indexing: nodes are kept in arrays by *index* 0..nnodes-1; node_id[idx]
 * is the OS node number.  CPUs likewise.  cpu_node[] maps an OS CPU number
 * directly to a node *index* and is a flat array, so a signal handler can
 * read it (no locks, no allocation, bounds-checked against cpu_node_len).
 *
 * Latency model (latency.c): latency_ns[i][j] is the load latency from a
 * CPU of node index i to memory of node index j.  Unless measured values
 * were loaded, it is local_latency_ns * distance[i][j] / 10.  Migration
 * cost per page likewise comes from measurements or the model tunables.
 */
#ifndef PH_TOPO_TOPO_H
#define PH_TOPO_TOPO_H

#include <stddef.h>
#include <stdint.h>

#define PH_MAX_NODES 64
#define PH_MAX_CPUS 4096

typedef struct ph_hugepool {
    uint64_t page_bytes;   /* 2 MiB or 1 GiB */
    uint64_t total, free, surplus; /* pages: a snapshot (real machine: sysfs when
                                      the machine opened; synthetic: the spec) */
} ph_hugepool;

typedef struct ph_node_info {
    int id;                /* OS node number */
    int ncpus;
    int *cpus;             /* OS cpu numbers, ncpus entries */
    uint64_t mem_total_bytes;
    uint64_t mem_free_bytes;
    int npools;
    ph_hugepool pools[2];  /* 2 MiB, 1 GiB when present */
} ph_node_info;

struct ph_topology {
    int synthetic;         /* 1: from a spec or JSON, 0: the real machine */
    char source[256];      /* "hwloc", "spec", or the JSON path */
    int nnodes;
    ph_node_info nodes[PH_MAX_NODES];
    int ncpus;             /* all CPUs, ascending OS numbers */
    int *cpus;
    int cpu_node_len;      /* = max OS cpu number + 1 */
    int *cpu_node;         /* OS cpu -> node index, -1 if none */
    int *distance;         /* nnodes*nnodes, row = from index */
    double *latency_ns;    /* nnodes*nnodes */
    double *migrate_ns_4k; /* nnodes*nnodes, per page */
    double *migrate_ns_2m; /* nnodes*nnodes, per page */
    double migrate_ns_call;/* fixed cost of one move call */
    int measured;          /* latencies/migration costs were measured */
    double model_local_ns; /* local latency of the model; 0 = the tunable
                              local_latency_ns (spec key local_ns=) */
};

typedef struct ph_topology ph_topology;

/* Build from the real machine (hwloc). NULL/errno with a message. */
ph_topology *ph_topo_from_hwloc(void);
/* Parse a synthetic spec string (grammar: topo_synth.c). NULL/EINVAL
 * with a message naming the bad key and value. */
ph_topology *ph_topo_from_spec(const char *spec);
/* Read a JSON topology (as written by ph_topo_write_json; format:
 * topo_json.c).  The result is synthetic (a file describes a machine, it
 * is not one); `name` (the path) becomes its source. */
ph_topology *ph_topo_from_json_file(const char *path);
ph_topology *ph_topo_from_json_text(const char *text, size_t len,
                                    const char *name);
/* spec NULL/"" -> hwloc; starts with '{' or names an existing file ->
 * JSON; text without '=' -> a JSON file that cannot be opened (error);
 * else synthetic spec.  Then, when the tunable latency_file names an
 * existing file, its measured values replace the model (a malformed or
 * mismatched file warns and keeps the model). */
ph_topology *ph_topo_load(const char *spec);
void ph_topo_free(ph_topology *t);

/* Allocate an empty topology with n nodes (every array sized), for the
 * builders above.  Distances default 10 local / 20 remote. */
ph_topology *ph_topo_alloc(int nnodes);
/* After nodes, CPUs and distances are filled in: validate, sort each
 * node's cpus, build cpus[] and cpu_node[], and fill the latency model
 * (measured = 0).  Rules: node ids unique and 0..1023; CPU ids unique
 * across nodes and < PH_MAX_CPUS; at least one CPU in all (a node may have
 * none: a memory-only node); distances 1..255, the diagonal >= 10 and the
 * minimum of its row (asymmetry is allowed).  May be called again after a
 * change.  -1/EINVAL with a message. */
int ph_topo_finish(ph_topology *t);

/* Node index of an OS node id, or -1 (also for a NULL topology or a
 * negative id).  O(nnodes).  The one id -> index lookup of pagehome. */
int ph_topo_node_index(const ph_topology *t, int node_id);
/* Node index of an OS cpu, or -1.  Async-signal-safe. */
static inline int ph_topo_cpu_index(const ph_topology *t, int cpu)
{
    return (cpu >= 0 && cpu < t->cpu_node_len) ? t->cpu_node[cpu] : -1;
}
static inline int ph_topo_dist(const ph_topology *t, int i, int j)
{
    return t->distance[i * t->nnodes + j];
}
static inline double ph_topo_lat(const ph_topology *t, int i, int j)
{
    return t->latency_ns[i * t->nnodes + j];
}

/* Latency model (latency.c): fill latency and migration matrices from
 * distances and the model tunables. */
void ph_topo_model_latency(ph_topology *t);
/* Load measured values (JSON from topo --measure) into t; nodes must
 * match.  -1/errno with a message. */
int ph_topo_load_measured(ph_topology *t, const char *path);

/* JSON output (the --json of `pagehome topo`, and the file format read
 * back by ph_topo_from_json_*). Returns 0 or -1. */
int ph_topo_write_json(const ph_topology *t, int fd);
/* The same document into a writer (see base/json_write.h), e.g. to embed it. */
struct ph_jw;
void ph_topo_to_json(const ph_topology *t, struct ph_jw *w);

/* 1 when a and b describe the same machine: nodes, CPUs, memory, pools,
 * distances, latency and migration matrices, flags -- everything but
 * `source` and `synthetic`.  (Tests, and the fuzzer's round trips.) */
int ph_topo_same(const ph_topology *a, const ph_topology *b);
/* 1 when distance[i][j] == distance[j][i] for every pair.  ph_topo_load()
 * warns about an asymmetric matrix; the builders accept it silently. */
int ph_topo_symmetric(const ph_topology *t);

/* Measurement (measure.c): pointer-chase latency and move_pages cost for
 * every node pair on the real machine; writes results into t (measured=1)
 * and, when save_path is non-NULL, saves t as JSON (the topology format,
 * which ph_topo_load_measured reads).  o may be NULL; a zero field takes
 * the tunable (measure_bytes, measure_pages, measure_pages/64 but >= 2).
 * Progress goes to stderr unless quiet. */
typedef struct ph_measure_opts {
    uint64_t chase_bytes;  /* pointer-chase buffer per memory node */
    int pages_4k;          /* 4 KiB pages moved per node pair */
    int pages_2m;          /* 2 MiB pages moved per node pair */
    int quiet;
} ph_measure_opts;
int ph_topo_measure(ph_topology *t, const ph_measure_opts *o,
                    const char *save_path);

#endif
