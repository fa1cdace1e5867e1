/*
 * presets.h -- the named machines of `pagehome sim` (see presets.c for the
 * table of every parameter, and doc/sim-model.md).
 *
 * A preset is a topology spec string (the grammar of topo/topo_synth.c:
 * nodes, CPUs, distances, local latency) plus what a spec string cannot
 * say: the machine's migration costs, its contention per competing node,
 * the bytes one memory access moves (a cache line) and how a program's
 * threads are bound to its CPUs.
 */
#ifndef PH_EXPERIMENT_PRESETS_H
#define PH_EXPERIMENT_PRESETS_H

#include "topo/topo.h"

#include <stddef.h>

enum ph_exp_binding {
    PH_EXP_BIND_COMPACT = 0, /* thread t on the t-th CPU, node by node */
    PH_EXP_BIND_SPREAD = 1   /* threads spread evenly over the CPU nodes */
};

typedef struct ph_exp_preset {
    const char *name;
    const char *summary;       /* one line for listings */
    double contention_ns;      /* latency added per competing node */
    double migrate_ns_4k;      /* per 4 KiB page moved, any node pair */
    double migrate_ns_2m;      /* per 2 MiB page moved */
    double migrate_ns_call;    /* per move call */
    unsigned line_bytes;       /* bytes one access moves: a cache line */
    int binding;               /* enum ph_exp_binding */
    /* the TLB model (model.h; used by e6): translations a thread's data
     * TLB holds per page size, and the cost of a miss (a page walk) */
    double tlb_entries_4k, tlb_entries_2m, tlb_walk_ns;
    /* the run-length calibration (doc/sim-model.md, "Run length"): one
     * iteration of the BT-, SP- and CG-like programs at 16 threads on the
     * real machine, in ns (0: not calibrated: the model's memory time
     * alone), and the slowdown single-node placement caused there without
     * migration */
    double real_iter_ns[3];
    double real_slowdown;
} ph_exp_preset;

/* Presets by name (NULL if none) and by position (NULL past the end). */
const ph_exp_preset *ph_exp_preset_find(const char *name);
const ph_exp_preset *ph_exp_preset_at(size_t i);

/* The preset's topology spec string into buf (len bytes; the origin
 * preset's distance matrix takes about 900).  Returns buf, or NULL when
 * it does not fit. */
const char *ph_exp_preset_spec(const ph_exp_preset *p, char *buf,
                               size_t len);

/* The preset's machine: the spec parsed, then its migration matrices set
 * to the preset's costs (the latency model's tunables do not apply).
 * ph_topo_free() it.  NULL/errno with a message. */
ph_topology *ph_exp_preset_topology(const ph_exp_preset *p);

/* Node index of each of nthreads threads whose first CPU is first_cpu
 * (CPUs counted node by node over the CPUs of the machine; program B of a
 * shared machine starts after program A's).  Compact binding fills a
 * node's CPUs before the next node; spread binding puts thread t on CPU
 * node t * C / nthreads (C: nodes with CPUs, first_cpu must be 0).
 * 0, or -1/EINVAL when the threads do not fit on the CPUs. */
int ph_exp_bind_threads(const ph_exp_preset *p, const ph_topology *t,
                        int nthreads, int first_cpu, int *node_of_thread);

/* CPUs of the machine. */
int ph_exp_cpus(const ph_topology *t);

#endif
