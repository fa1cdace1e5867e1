/*
 * topo_json.c -- a topology as a JSON document, both ways.
 *
 * FORMAT (what `pagehome topo --json` prints and --measure saves):
 *   {
 *     "format": "pagehome-topology",   optional when reading; if present
 *     "version": 1,                    must match / be <= 1
 *     "source": "hwloc",               informational
 *     "synthetic": false,              informational (where it came from)
 *     "measured": false,               the matrices below were measured
 *     "model_local_ns": 0,             local latency of the model (0 = the
 *                                      local_latency_ns tunable)
 *     "nodes": [                       REQUIRED, 1..64 entries, in index
 *       {                              order
 *         "id": 0,                     REQUIRED, OS node number 0..1023
 *         "cpus": [0, 1],              REQUIRED, OS cpu numbers ([] = a
 *                                      memory-only node)
 *         "mem_total_bytes": 6134378496,   optional, default 0 (unknown)
 *         "mem_free_bytes": 5602697216,    optional, default total
 *         "hugepages": [               optional, at most 2 pools
 *           {"page_bytes": 2097152, "total": 0, "free": 0, "surplus": 0}
 *         ]
 *       }
 *     ],
 *     "distance": [[10, 20], [20, 10]],   optional, default 10/20
 *     "latency_ns": [[...]],              optional n x n, default: model
 *     "migrate_ns_4k": [[...]],           optional n x n, per page
 *     "migrate_ns_2m": [[...]],           optional n x n, per page
 *     "migrate_ns_call": 20000            optional
 *   }
 * Rows of the matrices are "from" node indexes, columns "to".  Unknown
 * keys are ignored (room for later additions); a wrong type, a value out
 * of range or a missing required key is an error naming the place:
 * "topology: f.json: nodes[1].cpus[3]: expected an integer 0..4095".
 * The topology rules of ph_topo_finish() apply as for every source.
 *
 * Doubles are written so that they read back exactly (base/json.h), so
 * write -> read reproduces a topology (ph_topo_same()).  A topology read
 * from JSON is synthetic whatever "synthetic" says: a file describes a
 * machine, it does not give access to one.
 */
#include "topo/topo.h"

#include "base/error.h"
#include "base/json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PH_TOPO_JSON_FORMAT "pagehome-topology"
#define PH_TOPO_JSON_VERSION 1

/* ------------------------------------------------------------------ */
/* Writing                                                              */
/* ------------------------------------------------------------------ */

static void write_node(ph_jw *w, const ph_node_info *nd)
{
    ph_jw_object(w, 0);
    ph_jw_key(w, "id");
    ph_jw_int(w, nd->id);
    ph_jw_key(w, "cpus");
    ph_jw_array(w, 1);
    for (int k = 0; k < nd->ncpus; k++)
        ph_jw_int(w, nd->cpus[k]);
    ph_jw_end(w);
    ph_jw_key(w, "mem_total_bytes");
    ph_jw_uint(w, nd->mem_total_bytes);
    ph_jw_key(w, "mem_free_bytes");
    ph_jw_uint(w, nd->mem_free_bytes);
    ph_jw_key(w, "hugepages");
    ph_jw_array(w, 0);
    for (int p = 0; p < nd->npools && p < 2; p++) {
        const ph_hugepool *hp = &nd->pools[p];
        ph_jw_object(w, 1);
        ph_jw_key(w, "page_bytes");
        ph_jw_uint(w, hp->page_bytes);
        ph_jw_key(w, "total");
        ph_jw_uint(w, hp->total);
        ph_jw_key(w, "free");
        ph_jw_uint(w, hp->free);
        ph_jw_key(w, "surplus");
        ph_jw_uint(w, hp->surplus);
        ph_jw_end(w);
    }
    ph_jw_end(w);
    ph_jw_end(w);
}

static void write_int_matrix(ph_jw *w, const char *key, const int *m, int n)
{
    ph_jw_key(w, key);
    ph_jw_array(w, 0);
    for (int i = 0; i < n; i++) {
        ph_jw_array(w, 1);
        for (int j = 0; j < n; j++)
            ph_jw_int(w, m[i * n + j]);
        ph_jw_end(w);
    }
    ph_jw_end(w);
}

static void write_matrix(ph_jw *w, const char *key, const double *m, int n)
{
    ph_jw_key(w, key);
    ph_jw_array(w, 0);
    for (int i = 0; i < n; i++) {
        ph_jw_array(w, 1);
        for (int j = 0; j < n; j++)
            ph_jw_double(w, m[i * n + j]);
        ph_jw_end(w);
    }
    ph_jw_end(w);
}

void ph_topo_to_json(const ph_topology *t, ph_jw *w)
{
    ph_jw_object(w, 0);
    ph_jw_key(w, "format");
    ph_jw_string(w, PH_TOPO_JSON_FORMAT);
    ph_jw_key(w, "version");
    ph_jw_int(w, PH_TOPO_JSON_VERSION);
    ph_jw_key(w, "source");
    ph_jw_string(w, t->source);
    ph_jw_key(w, "synthetic");
    ph_jw_bool(w, t->synthetic);
    ph_jw_key(w, "measured");
    ph_jw_bool(w, t->measured);
    ph_jw_key(w, "model_local_ns");
    ph_jw_double(w, t->model_local_ns);
    ph_jw_key(w, "nodes");
    ph_jw_array(w, 0);
    for (int i = 0; i < t->nnodes; i++)
        write_node(w, &t->nodes[i]);
    ph_jw_end(w);
    write_int_matrix(w, "distance", t->distance, t->nnodes);
    write_matrix(w, "latency_ns", t->latency_ns, t->nnodes);
    write_matrix(w, "migrate_ns_4k", t->migrate_ns_4k, t->nnodes);
    write_matrix(w, "migrate_ns_2m", t->migrate_ns_2m, t->nnodes);
    ph_jw_key(w, "migrate_ns_call");
    ph_jw_double(w, t->migrate_ns_call);
    ph_jw_end(w);
}

int ph_topo_write_json(const ph_topology *t, int fd)
{
    ph_jw w;
    ph_jw_init(&w, 1);
    ph_topo_to_json(t, &w);
    int rc = ph_jw_write_fd(&w, fd);
    ph_jw_free(&w);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Reading                                                              */
/* ------------------------------------------------------------------ */

/* Where in the document a value is, for messages: "nodes[2].cpus[1]". */
typedef struct jwhere {
    const char *name; /* the file, or "inline JSON" */
    char path[96];
} jwhere;

static int bad(const jwhere *at, const char *what)
{
    if (!at->path[0])
        return ph_fail(EINVAL, "topology: %s: %s", at->name, what);
    return ph_fail(EINVAL, "topology: %s: %s: %s", at->name, at->path, what);
}

/* Append to the parent's path (truncated when very deep). */
static void at_key(jwhere *dst, const jwhere *parent, const char *key)
{
    *dst = *parent;
    size_t n = strlen(dst->path);
    snprintf(dst->path + n, sizeof dst->path - n, "%s%s", n ? "." : "", key);
}

static void at_index(jwhere *dst, const jwhere *parent, size_t i)
{
    *dst = *parent;
    size_t n = strlen(dst->path);
    snprintf(dst->path + n, sizeof dst->path - n, "[%zu]", i);
}

static int read_int(const jwhere *at, const ph_json *v, int64_t min,
                    int64_t max, int64_t *out)
{
    char what[96];
    if (!v || v->type != PH_JSON_NUMBER || !v->is_int || v->integer < min ||
        v->integer > max) {
        snprintf(what, sizeof what, "expected an integer %lld..%lld",
                 (long long)min, (long long)max);
        return bad(at, what);
    }
    *out = v->integer;
    return 0;
}

static int read_u64(const jwhere *at, const ph_json *v, uint64_t *out)
{
    int64_t x = 0;
    if (read_int(at, v, 0, INT64_MAX, &x))
        return -1;
    *out = (uint64_t)x;
    return 0;
}

static int read_double(const jwhere *at, const ph_json *v, double min,
                       double *out)
{
    char what[64];
    if (!v || v->type != PH_JSON_NUMBER || !(v->number >= min)) {
        snprintf(what, sizeof what, "expected a number >= %g", min);
        return bad(at, what);
    }
    *out = v->number;
    return 0;
}

static int read_bool(const jwhere *at, const ph_json *v, int *out)
{
    if (!v || v->type != PH_JSON_BOOL)
        return bad(at, "expected true or false");
    *out = v->boolean;
    return 0;
}

/* An array at `key` of obj, its length within [min, max]. */
static const ph_json *read_array(const jwhere *at, const ph_json *v,
                                 size_t min, size_t max)
{
    char what[96];
    if (!v || v->type != PH_JSON_ARRAY) {
        bad(at, "expected an array");
        return NULL;
    }
    if (v->len < min || v->len > max) {
        if (min == max)
            snprintf(what, sizeof what, "expected %zu entries, found %zu",
                     min, v->len);
        else
            snprintf(what, sizeof what,
                     "expected %zu..%zu entries, found %zu", min, max,
                     v->len);
        bad(at, what);
        return NULL;
    }
    return v;
}

static int read_pool(const jwhere *at, const ph_json *v, ph_hugepool *hp)
{
    jwhere k;
    int64_t page = 0;

    if (v->type != PH_JSON_OBJECT)
        return bad(at, "expected an object");
    at_key(&k, at, "page_bytes");
    if (read_int(&k, ph_json_get(v, "page_bytes"), 4096, INT64_MAX, &page))
        return -1;
    if (page != 2 << 20 && page != 1 << 30)
        return bad(&k, "expected 2097152 or 1073741824");
    hp->page_bytes = (uint64_t)page;
    static const char *const names[] = {"total", "free", "surplus"};
    uint64_t *dst[] = {&hp->total, &hp->free, &hp->surplus};
    for (int i = 0; i < 3; i++) {
        const ph_json *f = ph_json_get(v, names[i]);
        at_key(&k, at, names[i]);
        *dst[i] = 0;
        if (f && read_u64(&k, f, dst[i]))
            return -1;
    }
    return 0;
}

static int read_cpus(const jwhere *at, const ph_json *v, ph_node_info *nd)
{
    const ph_json *arr = read_array(at, v, 0, PH_MAX_CPUS);
    if (!arr)
        return -1;
    nd->ncpus = 0;
    if (arr->len == 0)
        return 0;
    nd->cpus = malloc(arr->len * sizeof *nd->cpus);
    if (!nd->cpus)
        return ph_fail(ENOMEM, "topology: out of memory");
    for (size_t k = 0; k < arr->len; k++) {
        jwhere e;
        int64_t c = 0;
        at_index(&e, at, k);
        if (read_int(&e, &arr->items[k], 0, PH_MAX_CPUS - 1, &c))
            return -1;
        nd->cpus[nd->ncpus++] = (int)c;
    }
    return 0;
}

static int read_memory(const jwhere *at, const ph_json *v, ph_node_info *nd)
{
    jwhere k;
    const ph_json *total = ph_json_get(v, "mem_total_bytes");
    const ph_json *avail = ph_json_get(v, "mem_free_bytes");

    at_key(&k, at, "mem_total_bytes");
    if (total && read_u64(&k, total, &nd->mem_total_bytes))
        return -1;
    nd->mem_free_bytes = nd->mem_total_bytes;
    at_key(&k, at, "mem_free_bytes");
    if (avail && read_u64(&k, avail, &nd->mem_free_bytes))
        return -1;
    return 0;
}

static int read_pools(const jwhere *at, const ph_json *v, ph_node_info *nd)
{
    const ph_json *arr = read_array(at, v, 0, 2);
    if (!arr)
        return -1;
    for (size_t p = 0; p < arr->len; p++) {
        jwhere e;
        at_index(&e, at, p);
        if (read_pool(&e, &arr->items[p], &nd->pools[p]))
            return -1;
    }
    nd->npools = (int)arr->len;
    return 0;
}

static int read_node(const jwhere *at, const ph_json *v, ph_node_info *nd)
{
    jwhere k;
    int64_t id = 0;

    if (v->type != PH_JSON_OBJECT)
        return bad(at, "expected an object");
    at_key(&k, at, "id");
    if (!ph_json_get(v, "id"))
        return bad(at, "missing key 'id'");
    if (read_int(&k, ph_json_get(v, "id"), 0, 1023, &id))
        return -1;
    nd->id = (int)id;
    at_key(&k, at, "cpus");
    if (!ph_json_get(v, "cpus"))
        return bad(at, "missing key 'cpus'");
    if (read_cpus(&k, ph_json_get(v, "cpus"), nd) || read_memory(at, v, nd))
        return -1;
    const ph_json *pools = ph_json_get(v, "hugepages");
    at_key(&k, at, "hugepages");
    return pools ? read_pools(&k, pools, nd) : 0;
}

/* n x n matrix at `key`; *present = 0 (and nothing read) when absent.
 * integer: entries must be integers 1..255 (into ints). */
static int read_matrix(const jwhere *top, const ph_json *doc, const char *key,
                       int n, double min, void *out, int integer,
                       int *present)
{
    jwhere at, row_at, e;
    const ph_json *v = ph_json_get(doc, key);

    *present = v != NULL;
    if (!v)
        return 0;
    at_key(&at, top, key);
    if (!read_array(&at, v, (size_t)n, (size_t)n))
        return -1;
    for (int i = 0; i < n; i++) {
        at_index(&row_at, &at, (size_t)i);
        const ph_json *row =
            read_array(&row_at, &v->items[i], (size_t)n, (size_t)n);
        if (!row)
            return -1;
        for (int j = 0; j < n; j++) {
            at_index(&e, &row_at, (size_t)j);
            int64_t d = 0;
            if (integer) {
                if (read_int(&e, &row->items[j], 1, 255, &d))
                    return -1;
                ((int *)out)[i * n + j] = (int)d;
            } else if (read_double(&e, &row->items[j], min,
                                   &((double *)out)[i * n + j])) {
                return -1;
            }
        }
    }
    return 0;
}

static int check_header(const jwhere *top, const ph_json *doc)
{
    jwhere k;
    const ph_json *fmt = ph_json_get(doc, "format");
    const ph_json *ver = ph_json_get(doc, "version");
    int64_t v = 0;

    at_key(&k, top, "format");
    if (fmt && (fmt->type != PH_JSON_STRING ||
                strcmp(fmt->str, PH_TOPO_JSON_FORMAT) != 0))
        return bad(&k, "expected \"" PH_TOPO_JSON_FORMAT "\"");
    at_key(&k, top, "version");
    if (ver && read_int(&k, ver, 1, PH_TOPO_JSON_VERSION, &v))
        return -1;
    return 0;
}

/* Optional scalars: measured, model_local_ns, migrate_ns_call. */
static int read_scalars(const jwhere *top, const ph_json *doc,
                        ph_topology *t, int *has_call, double *call_ns)
{
    jwhere k;
    const ph_json *v;

    at_key(&k, top, "measured");
    if ((v = ph_json_get(doc, "measured")) && read_bool(&k, v, &t->measured))
        return -1;
    at_key(&k, top, "model_local_ns");
    if ((v = ph_json_get(doc, "model_local_ns")) &&
        read_double(&k, v, 0, &t->model_local_ns))
        return -1;
    at_key(&k, top, "migrate_ns_call");
    *has_call = (v = ph_json_get(doc, "migrate_ns_call")) != NULL;
    if (v && read_double(&k, v, 0, call_ns))
        return -1;
    return 0;
}

/* A ph_topo_finish() failure, with the document's name added. */
static int refail_named(const jwhere *top)
{
    static const char prefix[] = "topology: ";
    char msg[256];
    int e = errno;
    const char *m = ph_error_message();
    if (strncmp(m, prefix, sizeof prefix - 1) == 0)
        m += sizeof prefix - 1;
    snprintf(msg, sizeof msg, "%s", m);
    return ph_fail(e, "topology: %s: %s", top->name, msg);
}

typedef struct model_overrides {
    double *latency_ns, *migrate_ns_4k, *migrate_ns_2m;
    int has_latency, has_4k, has_2m, has_call;
    double call_ns;
} model_overrides;

/* Matrices given in the file replace the model's after ph_topo_finish. */
static int read_overrides(const jwhere *top, const ph_json *doc, int n,
                          model_overrides *o)
{
    size_t n2 = (size_t)n * (size_t)n;
    o->latency_ns = malloc(n2 * sizeof(double));
    o->migrate_ns_4k = malloc(n2 * sizeof(double));
    o->migrate_ns_2m = malloc(n2 * sizeof(double));
    if (!o->latency_ns || !o->migrate_ns_4k || !o->migrate_ns_2m)
        return ph_fail(ENOMEM, "topology: out of memory");
    if (read_matrix(top, doc, "latency_ns", n, 0, o->latency_ns, 0,
                    &o->has_latency) ||
        read_matrix(top, doc, "migrate_ns_4k", n, 0, o->migrate_ns_4k, 0,
                    &o->has_4k) ||
        read_matrix(top, doc, "migrate_ns_2m", n, 0, o->migrate_ns_2m, 0,
                    &o->has_2m))
        return -1;
    return 0;
}

static void apply_overrides(ph_topology *t, const model_overrides *o)
{
    size_t bytes = (size_t)t->nnodes * (size_t)t->nnodes * sizeof(double);
    if (o->has_latency)
        memcpy(t->latency_ns, o->latency_ns, bytes);
    if (o->has_4k)
        memcpy(t->migrate_ns_4k, o->migrate_ns_4k, bytes);
    if (o->has_2m)
        memcpy(t->migrate_ns_2m, o->migrate_ns_2m, bytes);
    if (o->has_call)
        t->migrate_ns_call = o->call_ns;
}

static int read_nodes(const jwhere *top, const ph_json *nodes, ph_topology *t)
{
    jwhere at, e;
    at_key(&at, top, "nodes");
    for (int i = 0; i < t->nnodes; i++) {
        at_index(&e, &at, (size_t)i);
        if (read_node(&e, &nodes->items[i], &t->nodes[i]))
            return -1;
    }
    return 0;
}

/* Everything but the node array's presence, which the caller checked. */
static int read_topology(const jwhere *top, const ph_json *doc,
                         ph_topology *t, model_overrides *o)
{
    int measured = 0, has_dist;

    if (read_nodes(top, ph_json_get(doc, "nodes"), t) ||
        read_matrix(top, doc, "distance", t->nnodes, 1, t->distance, 1,
                    &has_dist) ||
        read_scalars(top, doc, t, &o->has_call, &o->call_ns) ||
        read_overrides(top, doc, t->nnodes, o))
        return -1;
    measured = t->measured;
    if (measured && !o->has_latency)
        return bad(top, "\"measured\" is true but latency_ns is missing");
    if (ph_topo_finish(t))
        return refail_named(top);
    apply_overrides(t, o);
    t->measured = measured;
    return 0;
}

static ph_topology *from_doc(const ph_json *doc, const char *name)
{
    jwhere top = {.name = name, .path = ""};
    jwhere at;
    model_overrides o = {0};

    if (doc->type != PH_JSON_OBJECT) {
        bad(&top, "expected an object at the top level");
        return NULL;
    }
    if (check_header(&top, doc))
        return NULL;
    const ph_json *nodes = ph_json_get(doc, "nodes");
    if (!nodes)
        return ph_fail_null(EINVAL, "topology: %s: missing key 'nodes'",
                            name);
    at_key(&at, &top, "nodes");
    if (!read_array(&at, nodes, 1, PH_MAX_NODES))
        return NULL;
    ph_topology *t = ph_topo_alloc((int)nodes->len);
    if (!t)
        return NULL;
    t->synthetic = 1;
    snprintf(t->source, sizeof t->source, "%s", name);
    int rc = read_topology(&top, doc, t, &o);
    free(o.latency_ns);
    free(o.migrate_ns_4k);
    free(o.migrate_ns_2m);
    if (rc) {
        int e = errno;
        ph_topo_free(t);
        errno = e;
        return NULL;
    }
    return t;
}

ph_topology *ph_topo_from_json_text(const char *text, size_t len,
                                    const char *name)
{
    ph_json_error err;
    if (!name)
        name = "JSON text";
    ph_json *doc = ph_json_parse(text, len, &err);
    if (!doc)
        return ph_fail_null(errno, "topology: %s: %s", name, err.msg);
    ph_topology *t = from_doc(doc, name);
    ph_json_free(doc);
    return t;
}

ph_topology *ph_topo_from_json_file(const char *path)
{
    ph_json_error err;
    ph_json *doc = ph_json_parse_file(path, &err);
    if (!doc)
        return ph_fail_null(errno, "topology: %s: %s", path, err.msg);
    ph_topology *t = from_doc(doc, path);
    ph_json_free(doc);
    return t;
}
