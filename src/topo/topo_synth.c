/*
 * topo_synth.c -- synthetic topologies from a one-line spec.
 *
 * GRAMMAR
 *   spec  := item { "," item }        items in any order, each key once;
 *   item  := key "=" value            blanks around keys/values are ignored
 *   list  := entry { ":" entry }      one entry for every node, or exactly
 *                                     one per node (in node order)
 *
 *   nodes=N             number of nodes, 1..64.  Required.
 *   ids=I0:I1:...       OS node numbers, one per node, 0..1023, unique.
 *                       Default 0:1:...:N-1.
 *   cpus_per_node=LIST  CPUs of each node, 0..4096 (0 = a memory-only node,
 *                       such as CXL memory).  CPUs are numbered from 0,
 *                       consecutively node by node.  Default 1.
 *   cpus=L0:L1:...      instead of cpus_per_node: the OS CPU numbers of each
 *                       node, one entry per node, each a '+'-joined list of
 *                       numbers and ranges: cpus=0-3+8-11:4-7+12-15.  An
 *                       empty entry is a memory-only node: cpus=0-3::4-7.
 *   mem_per_node=LIST   memory of each node, 1..1048576T, with an optional
 *                       K/M/G/T suffix (powers of 1024).  Default 4G.
 *   huge_2m=LIST        2 MiB hugetlbfs pool of each node, in pages
 *                       (0..2^30).  Default: no pool.
 *   huge_1g=LIST        1 GiB hugetlbfs pool of each node, in pages.
 *   dist=R0/R1/...      the full distance matrix (ACPI SLIT, 10 = local):
 *                       rows separated by '/', entries by ':', row i holds
 *                       the distances from node i, e.g. dist=10:20/20:10.
 *   local=L             instead of dist: distance of a node to itself,
 *                       10..255.  Default 10.
 *   remote=R            distance between two nodes (of the same socket),
 *                       local..255.  Default 2*local (20), at most 255.
 *   sockets=S           split the nodes evenly into S sockets (S divides
 *                       N): nodes 0..N/S-1 are socket 0, and so on.
 *                       Default 1.
 *   remote_socket=X     distance between nodes of different sockets,
 *                       remote..255 (needs sockets > 1).  Default the
 *                       larger of 32 and remote.
 *   local_ns=T          local load latency of this topology's latency model
 *                       in ns, > 0 and <= 1e6.  Default: the
 *                       local_latency_ns tunable.
 *   dist= cannot be combined with local/remote/sockets/remote_socket, nor
 *   cpus= with cpus_per_node=.  Rows and entries are counted from 1 in
 *   messages.  The rules of ph_topo_finish() apply (the diagonal is the
 *   minimum of its row, CPU numbers unique, ...).
 *
 * EXAMPLES
 *   nodes=2,cpus_per_node=4
 *   nodes=4,cpus_per_node=2,sockets=2,remote=12,remote_socket=32
 *   nodes=3,cpus_per_node=8:8:0,mem_per_node=16G:16G:64G,
 *       dist=10:21:24/21:10:24/24:24:10            (node 2: CXL memory)
 *   nodes=2,ids=0:8,cpus=0-3+8-11:4-7+12-15,huge_2m=512
 *
 * Every error names the key and its value, or the row of dist:
 *   "topology: nodes=0: must be 1..64"
 *   "topology: dist row 2 has 3 entries, expected 4"
 *   "topology: unknown key 'nodez' (keys: nodes, ids, ...)"
 * Synthetic memory is all free (mem_free_bytes = mem_per_node) and the
 * topology's source is "spec".
 */
#include "topo/topo.h"

#include "base/error.h"
#include "config/options.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PH_SPEC_MAX_LEN 65536
#define PH_HUGE_MAX_PAGES (1LL << 30)
#define PH_MEM_MAX_BYTES ((uint64_t)1 << 60) /* 1048576T: JSON keeps it exact */

enum synth_key {
    K_NODES,
    K_IDS,
    K_CPUS_PER_NODE,
    K_CPUS,
    K_MEM_PER_NODE,
    K_HUGE_2M,
    K_HUGE_1G,
    K_DIST,
    K_LOCAL,
    K_REMOTE,
    K_SOCKETS,
    K_REMOTE_SOCKET,
    K_LOCAL_NS,
    K_COUNT
};

static const char *const key_names[K_COUNT] = {
    "nodes", "ids", "cpus_per_node", "cpus", "mem_per_node",
    "huge_2m", "huge_1g", "dist", "local", "remote",
    "sockets", "remote_socket", "local_ns",
};

typedef struct synth {
    char *copy;                /* the spec, cut at ',' and '=' */
    const char *val[K_COUNT];  /* value of each key given, else NULL */
    int n;                     /* nodes */
    ph_topology *t;
} synth;

/* A list split at a separator: the pieces point into buf. */
typedef struct pieces {
    char *buf;
    int count;                 /* pieces found (may exceed the stored) */
    char *at[PH_MAX_NODES + 1];
} pieces;

/* ---- small helpers ----------------------------------------------- */

static int bad(const synth *s, int key, const char *fmt, ...) PH_PRINTF(3, 4);

/* "topology: key=value: what" */
static int bad(const synth *s, int key, const char *fmt, ...)
{
    char what[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return ph_fail(EINVAL, "topology: %s=%.60s%s: %s", key_names[key],
                   s->val[key], strlen(s->val[key]) > 60 ? "..." : "", what);
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* Split a copy of text at sep (pieces trimmed). */
static int split(pieces *p, const char *text, char sep)
{
    memset(p, 0, sizeof *p);
    p->buf = strdup(text);
    if (!p->buf)
        return ph_fail(ENOMEM, "topology: out of memory");
    char *cur = p->buf;
    for (;;) {
        char *next = strchr(cur, sep);
        if (next)
            *next = '\0';
        if (p->count <= PH_MAX_NODES)
            p->at[p->count] = trim(cur);
        p->count++;
        if (!next)
            return 0;
        cur = next + 1;
    }
}

/* Decimal integer without sign: 0 ok, -1 not a number.  Huge values
 * saturate at LLONG_MAX (every range check then refuses them). */
static int parse_ll(const char *text, long long *out)
{
    long long v = 0;
    if (!*text)
        return -1;
    for (const char *c = text; *c; c++) {
        if (*c < '0' || *c > '9')
            return -1;
        v = v < LLONG_MAX / 10 ? v * 10 + (*c - '0') : LLONG_MAX;
    }
    *out = v;
    return 0;
}

/* An integer value of `key`, or entry `entry` (1-based; 0 = the whole
 * value) of its list. */
static int int_value(const synth *s, int key, const char *text, int entry,
                     long long min, long long max, long long *out)
{
    char where[48] = "";
    if (entry > 0)
        snprintf(where, sizeof where, "entry %d ('%.16s'): ", entry, text);
    if (parse_ll(text, out))
        return bad(s, key, "%snot a number", where);
    if (*out < min || *out > max)
        return bad(s, key, "%smust be %lld..%lld", where, min, max);
    return 0;
}

/* The value of `key` as one entry per node.  A single entry applies to
 * every node when allow_single.  entry_no[i] is 0 for such a single entry
 * (messages then quote the whole value), else i + 1. */
static int node_list(const synth *s, int key, int allow_single, pieces *p,
                     char *entry[PH_MAX_NODES], int entry_no[PH_MAX_NODES])
{
    if (split(p, s->val[key], ':'))
        return -1;
    if (p->count == 1 && allow_single) {
        for (int i = 0; i < s->n; i++) {
            entry[i] = p->at[0];
            entry_no[i] = 0;
        }
        return 0;
    }
    if (p->count == s->n) {
        for (int i = 0; i < s->n; i++) {
            entry[i] = p->at[i];
            entry_no[i] = s->n == 1 ? 0 : i + 1;
        }
        return 0;
    }
    if (allow_single)
        return bad(s, key, "%d entries, expected 1 or %d (one per node)",
                   p->count, s->n);
    return bad(s, key, "%d entries, expected %d (one per node)", p->count,
               s->n);
}

/* Integers per node from `key` (which must be given). */
static int node_ints(const synth *s, int key, int allow_single,
                     long long min, long long max, long long out[])
{
    pieces p;
    char *entry[PH_MAX_NODES];
    int no[PH_MAX_NODES];
    int rc = node_list(s, key, allow_single, &p, entry, no);
    for (int i = 0; rc == 0 && i < s->n; i++)
        rc = int_value(s, key, entry[i], no[i], min, max, &out[i]);
    free(p.buf);
    return rc;
}

/* ---- the spec's items -------------------------------------------- */

static int unknown_key(const char *key)
{
    char known[256] = "";
    size_t used = 0;
    for (int k = 0; k < K_COUNT && used < sizeof known; k++) {
        int w = snprintf(known + used, sizeof known - used, "%s%s",
                         k ? ", " : "", key_names[k]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    return ph_fail(EINVAL, "topology: unknown key '%.32s' (keys: %s)", key,
                   known);
}

static int parse_item(synth *s, char *item)
{
    char *eq = strchr(item, '=');
    char *text = trim(item);

    if (!*text)
        return ph_fail(EINVAL, "topology: empty item (a ',' too many?)");
    if (!eq)
        return ph_fail(EINVAL, "topology: '%.40s': expected key=value",
                       text);
    *eq = '\0';
    char *key = trim(text);
    char *value = trim(eq + 1);
    for (int k = 0; k < K_COUNT; k++) {
        if (strcmp(key, key_names[k]) != 0)
            continue;
        if (s->val[k])
            return ph_fail(EINVAL, "topology: key '%s' given twice", key);
        s->val[k] = value;
        return 0;
    }
    return unknown_key(key);
}

static int parse_items(synth *s, const char *spec)
{
    s->copy = strdup(spec);
    if (!s->copy)
        return ph_fail(ENOMEM, "topology: out of memory");
    char *item = s->copy;
    for (;;) {
        char *comma = strchr(item, ',');
        if (comma)
            *comma = '\0';
        if (parse_item(s, item))
            return -1;
        if (!comma)
            return 0;
        item = comma + 1;
    }
}

/* ---- node ids ---------------------------------------------------- */

static int set_ids(synth *s)
{
    long long ids[PH_MAX_NODES];
    if (!s->val[K_IDS])
        return 0;
    if (node_ints(s, K_IDS, 0, 0, 1023, ids))
        return -1;
    for (int i = 0; i < s->n; i++) {
        for (int j = 0; j < i; j++)
            if (ids[j] == ids[i])
                return bad(s, K_IDS, "node id %lld appears twice", ids[i]);
        s->t->nodes[i].id = (int)ids[i];
    }
    return 0;
}

/* ---- CPUs -------------------------------------------------------- */

static int give_cpus(ph_node_info *nd, int count)
{
    nd->ncpus = 0;
    if (count == 0)
        return 0;
    nd->cpus = malloc((size_t)count * sizeof *nd->cpus);
    if (!nd->cpus)
        return ph_fail(ENOMEM, "topology: out of memory");
    return 0;
}

static int set_cpus_per_node(synth *s)
{
    long long per[PH_MAX_NODES];
    long long total = 0;
    int next = 0;

    for (int i = 0; i < s->n; i++)
        per[i] = 1;
    if (s->val[K_CPUS_PER_NODE] &&
        node_ints(s, K_CPUS_PER_NODE, 1, 0, PH_MAX_CPUS, per))
        return -1;
    for (int i = 0; i < s->n; i++)
        total += per[i];
    if (total > PH_MAX_CPUS)
        return bad(s, K_CPUS_PER_NODE, "%lld CPUs in all, at most %d",
                   total, PH_MAX_CPUS);
    for (int i = 0; i < s->n; i++) {
        ph_node_info *nd = &s->t->nodes[i];
        if (give_cpus(nd, (int)per[i]))
            return -1;
        for (int k = 0; k < per[i]; k++)
            nd->cpus[nd->ncpus++] = next++;
    }
    return 0;
}

/* "a" or "a-b" (a <= b) into [*lo, *hi]; r is modified. */
static int parse_range(char *r, long long *lo, long long *hi)
{
    char *dash = strchr(r, '-');
    if (dash)
        *dash = '\0';
    if (parse_ll(trim(r), lo))
        return -1;
    if (!dash) {
        *hi = *lo;
        return 0;
    }
    if (parse_ll(trim(dash + 1), hi))
        return -1;
    return *lo <= *hi ? 0 : -1;
}

/* One range of a node's CPU list: count it, and store it when fill. */
static int cpu_range(const synth *s, char *r, int entry_no, ph_node_info *nd,
                     int fill, int *count)
{
    char shown[20];
    long long lo, hi;

    snprintf(shown, sizeof shown, "%.16s", r);
    if (parse_range(r, &lo, &hi))
        return bad(s, K_CPUS, "entry %d: '%s': expected a CPU number or a "
                   "range like 4-7", entry_no, shown);
    if (hi >= PH_MAX_CPUS || *count + (hi - lo + 1) > PH_MAX_CPUS)
        return bad(s, K_CPUS, "entry %d: '%s': CPUs must be 0..%d",
                   entry_no, shown, PH_MAX_CPUS - 1);
    for (long long c = lo; c <= hi; c++, (*count)++)
        if (fill)
            nd->cpus[*count] = (int)c;
    return 0;
}

/* One node's "0-3+8-11": count its CPUs, and store them when fill. */
static int cpu_entry(const synth *s, const char *entry, int entry_no,
                     ph_node_info *nd, int fill, int *count)
{
    *count = 0;
    if (!*entry)
        return 0;
    char *copy = strdup(entry);
    if (!copy)
        return ph_fail(ENOMEM, "topology: out of memory");
    int rc = 0;
    for (char *r = copy; r && rc == 0;) {
        char *plus = strchr(r, '+');
        if (plus)
            *plus = '\0';
        rc = cpu_range(s, r, entry_no, nd, fill, count);
        r = plus ? plus + 1 : NULL;
    }
    free(copy);
    return rc;
}

static int set_cpu_lists(synth *s)
{
    pieces p;
    char *entry[PH_MAX_NODES];
    int no[PH_MAX_NODES];
    int rc = node_list(s, K_CPUS, 0, &p, entry, no);

    for (int i = 0; rc == 0 && i < s->n; i++) {
        ph_node_info *nd = &s->t->nodes[i];
        int count;
        rc = cpu_entry(s, entry[i], i + 1, nd, 0, &count);
        if (rc == 0)
            rc = give_cpus(nd, count);
        if (rc == 0 && count > 0)
            rc = cpu_entry(s, entry[i], i + 1, nd, 1, &nd->ncpus);
    }
    free(p.buf);
    return rc;
}

static int set_cpus(synth *s)
{
    if (s->val[K_CPUS] && s->val[K_CPUS_PER_NODE])
        return ph_fail(EINVAL, "topology: cpus= and cpus_per_node= cannot "
                       "both be given");
    return s->val[K_CPUS] ? set_cpu_lists(s) : set_cpus_per_node(s);
}

/* ---- memory and pools -------------------------------------------- */

static int set_memory(synth *s)
{
    pieces p = {0};
    char *entry[PH_MAX_NODES];
    int no[PH_MAX_NODES];
    uint64_t bytes = (uint64_t)4 << 30;
    int rc = 0;

    if (s->val[K_MEM_PER_NODE])
        rc = node_list(s, K_MEM_PER_NODE, 1, &p, entry, no);
    for (int i = 0; rc == 0 && i < s->n; i++) {
        if (s->val[K_MEM_PER_NODE]) {
            char where[48] = "";
            if (no[i])
                snprintf(where, sizeof where, "entry %d ('%.16s'): ", no[i],
                         entry[i]);
            if (ph_parse_size(entry[i], &bytes) != 0)
                rc = bad(s, K_MEM_PER_NODE, "%snot a size (e.g. 512M, 4G)",
                         where);
            else if (bytes == 0 || bytes > PH_MEM_MAX_BYTES)
                rc = bad(s, K_MEM_PER_NODE, "%smust be 1..1048576T", where);
        }
        s->t->nodes[i].mem_total_bytes = bytes;
        s->t->nodes[i].mem_free_bytes = bytes;
    }
    free(p.buf);
    return rc;
}

static int set_pool(synth *s, int key, uint64_t page_bytes)
{
    long long pages[PH_MAX_NODES];
    if (!s->val[key])
        return 0;
    if (node_ints(s, key, 1, 0, PH_HUGE_MAX_PAGES, pages))
        return -1;
    for (int i = 0; i < s->n; i++) {
        ph_node_info *nd = &s->t->nodes[i];
        ph_hugepool *hp = &nd->pools[nd->npools++];
        hp->page_bytes = page_bytes;
        hp->total = hp->free = (uint64_t)pages[i];
        hp->surplus = 0;
    }
    return 0;
}

static int set_pools(synth *s)
{
    return set_pool(s, K_HUGE_2M, (uint64_t)2 << 20) ||
                   set_pool(s, K_HUGE_1G, (uint64_t)1 << 30)
               ? -1
               : 0;
}

/* ---- distances --------------------------------------------------- */

static int dist_row(synth *s, int i, const char *row)
{
    pieces p;
    int rc = split(&p, row, ':');
    if (rc == 0 && p.count != s->n)
        rc = ph_fail(EINVAL, "topology: dist row %d has %d entries, "
                     "expected %d", i + 1, p.count, s->n);
    for (int j = 0; rc == 0 && j < s->n; j++) {
        long long d;
        if (parse_ll(p.at[j], &d))
            rc = ph_fail(EINVAL, "topology: dist row %d entry %d ('%.16s'): "
                         "not a number", i + 1, j + 1, p.at[j]);
        else if (d < 1 || d > 255)
            rc = ph_fail(EINVAL, "topology: dist row %d entry %d (%lld): "
                         "must be 1..255", i + 1, j + 1, d);
        else
            s->t->distance[i * s->n + j] = (int)d;
    }
    free(p.buf);
    return rc;
}

static int set_dist_matrix(synth *s)
{
    pieces rows;
    int rc = split(&rows, s->val[K_DIST], '/');
    if (rc == 0 && rows.count != s->n)
        rc = ph_fail(EINVAL, "topology: dist has %d rows, expected %d (one "
                     "per node, separated by '/')", rows.count, s->n);
    for (int i = 0; rc == 0 && i < s->n; i++)
        rc = dist_row(s, i, rows.at[i]);
    free(rows.buf);
    return rc;
}

/* An optional single integer `key` in [min, max], else def. */
static int opt_int(const synth *s, int key, long long def, long long min,
                   long long max, long long *out)
{
    *out = def;
    return s->val[key] ? int_value(s, key, s->val[key], 0, min, max, out) : 0;
}

static int set_dist_levels(synth *s)
{
    long long local, remote, sockets, cross;

    if (opt_int(s, K_LOCAL, 10, 10, 255, &local) ||
        opt_int(s, K_REMOTE, local * 2 > 255 ? 255 : local * 2, local, 255,
                &remote) ||
        opt_int(s, K_SOCKETS, 1, 1, s->n, &sockets))
        return -1;
    if (s->n % sockets)
        return bad(s, K_SOCKETS, "must divide nodes=%d", s->n);
    if (s->val[K_REMOTE_SOCKET] && sockets == 1)
        return bad(s, K_REMOTE_SOCKET, "needs sockets= greater than 1");
    if (opt_int(s, K_REMOTE_SOCKET, remote > 32 ? remote : 32, remote, 255,
                &cross))
        return -1;
    int per_socket = s->n / (int)sockets;
    for (int i = 0; i < s->n; i++) {
        for (int j = 0; j < s->n; j++) {
            long long d = i == j                               ? local
                          : i / per_socket == j / per_socket ? remote
                                                               : cross;
            s->t->distance[i * s->n + j] = (int)d;
        }
    }
    return 0;
}

static int set_distances(synth *s)
{
    int levels = s->val[K_LOCAL] || s->val[K_REMOTE] || s->val[K_SOCKETS] ||
                 s->val[K_REMOTE_SOCKET];
    if (s->val[K_DIST] && levels)
        return ph_fail(EINVAL, "topology: dist= cannot be combined with "
                       "local=, remote=, sockets= or remote_socket=");
    return s->val[K_DIST] ? set_dist_matrix(s) : set_dist_levels(s);
}

static int set_local_ns(synth *s)
{
    const char *text = s->val[K_LOCAL_NS];
    char *end;
    if (!text)
        return 0;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end || errno || !(v > 0) || v > 1e6)
        return bad(s, K_LOCAL_NS, "must be a number of ns, > 0 and <= 1e6");
    s->t->model_local_ns = v;
    return 0;
}

/* ---- the whole ----------------------------------------------------- */

static ph_topology *build(synth *s)
{
    long long n;

    if (!s->val[K_NODES])
        return ph_fail_null(EINVAL, "topology: missing key 'nodes' (e.g. "
                            "nodes=4)");
    if (int_value(s, K_NODES, s->val[K_NODES], 0, 1, PH_MAX_NODES, &n))
        return NULL;
    s->n = (int)n;
    s->t = ph_topo_alloc(s->n);
    if (!s->t)
        return NULL;
    s->t->synthetic = 1;
    snprintf(s->t->source, sizeof s->t->source, "spec");
    if (set_ids(s) || set_cpus(s) || set_memory(s) || set_pools(s) ||
        set_distances(s) || set_local_ns(s) || ph_topo_finish(s->t)) {
        int e = errno;
        ph_topo_free(s->t);
        errno = e;
        return NULL;
    }
    return s->t;
}

ph_topology *ph_topo_from_spec(const char *spec)
{
    synth s = {0};
    ph_topology *t = NULL;

    if (!spec)
        return ph_fail_null(EINVAL, "topology: no spec");
    if (strlen(spec) > PH_SPEC_MAX_LEN)
        return ph_fail_null(EINVAL, "topology: spec longer than %d "
                            "characters", PH_SPEC_MAX_LEN);
    if (parse_items(&s, spec) == 0)
        t = build(&s);
    free(s.copy);
    return t;
}
