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
 * Reading is jansson's (json_loadb with JSON_REJECT_DUPLICATES): a
 * document with a syntax error, a duplicate key, invalid UTF-8, a \u0000
 * in a string, an integer beyond 64 bits or a number beyond the double
 * range is refused with its line and column ("topology: f.json: line 3
 * col 17: ..."); integers are kept exactly (json_int_t is 64 bits), so
 * byte counts survive a round trip.  A file is read whole first (at most
 * PH_TOPO_JSON_MAX_BYTES) so its errors name it the same way.
 *
 * Doubles are written so that they read back exactly (base/json_write.h),
 * so write -> read reproduces a topology (ph_topo_same()).  A topology
 * read from JSON is synthetic whatever "synthetic" says: a file describes
 * a machine, it does not give access to one.
 */
#include "topo/topo.h"

#include "base/error.h"
#include "base/file.h"
#include "base/json_write.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PH_TOPO_JSON_FORMAT "pagehome-topology"
#define PH_TOPO_JSON_VERSION 1
#define PH_TOPO_JSON_MAX_BYTES ((size_t)16 << 20)

_Static_assert(sizeof(json_int_t) >= sizeof(int64_t), "jansson keeps 64-bit integers");

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

static int read_int(const jwhere *at, const json_t *v, int64_t min,
                    int64_t max, int64_t *out)
{
    char what[96];
    if (!json_is_integer(v) || json_integer_value(v) < min ||
        json_integer_value(v) > max) {
        snprintf(what, sizeof what, "expected an integer %lld..%lld",
                 (long long)min, (long long)max);
        return bad(at, what);
    }
    *out = (int64_t)json_integer_value(v);
    return 0;
}

static int read_u64(const jwhere *at, const json_t *v, uint64_t *out)
{
    int64_t x = 0;
    if (read_int(at, v, 0, INT64_MAX, &x))
        return -1;
    *out = (uint64_t)x;
    return 0;
}

static int read_double(const jwhere *at, const json_t *v, double min,
                       double *out)
{
    char what[64];
    if (!json_is_number(v) || !(json_number_value(v) >= min)) {
        snprintf(what, sizeof what, "expected a number >= %g", min);
        return bad(at, what);
    }
    *out = json_number_value(v);
    return 0;
}

static int read_bool(const jwhere *at, const json_t *v, int *out)
{
    if (!json_is_boolean(v))
        return bad(at, "expected true or false");
    *out = json_is_true(v);
    return 0;
}

/* An array at `key` of obj, its length within [min, max]. */
static const json_t *read_array(const jwhere *at, const json_t *v,
                                 size_t min, size_t max)
{
    char what[96];
    if (!json_is_array(v)) {
        bad(at, "expected an array");
        return NULL;
    }
    size_t len = json_array_size(v);
    if (len < min || len > max) {
        if (min == max)
            snprintf(what, sizeof what, "expected %zu entries, found %zu",
                     min, len);
        else
            snprintf(what, sizeof what,
                     "expected %zu..%zu entries, found %zu", min, max, len);
        bad(at, what);
        return NULL;
    }
    return v;
}

static int read_pool(const jwhere *at, const json_t *v, ph_hugepool *hp)
{
    jwhere k;
    int64_t page = 0;

    if (!json_is_object(v))
        return bad(at, "expected an object");
    at_key(&k, at, "page_bytes");
    if (read_int(&k, json_object_get(v, "page_bytes"), 4096, INT64_MAX, &page))
        return -1;
    if (page != 2 << 20 && page != 1 << 30)
        return bad(&k, "expected 2097152 or 1073741824");
    hp->page_bytes = (uint64_t)page;
    static const char *const names[] = {"total", "free", "surplus"};
    uint64_t *dst[] = {&hp->total, &hp->free, &hp->surplus};
    for (int i = 0; i < 3; i++) {
        const json_t *f = json_object_get(v, names[i]);
        at_key(&k, at, names[i]);
        *dst[i] = 0;
        if (f && read_u64(&k, f, dst[i]))
            return -1;
    }
    return 0;
}

static int read_cpus(const jwhere *at, const json_t *v, ph_node_info *nd)
{
    const json_t *arr = read_array(at, v, 0, PH_MAX_CPUS);
    if (!arr)
        return -1;
    nd->ncpus = 0;
    size_t n = json_array_size(arr);
    if (n == 0)
        return 0;
    nd->cpus = malloc(n * sizeof *nd->cpus);
    if (!nd->cpus)
        return ph_fail(ENOMEM, "topology: out of memory");
    for (size_t k = 0; k < n; k++) {
        jwhere e;
        int64_t c = 0;
        at_index(&e, at, k);
        if (read_int(&e, json_array_get(arr, k), 0, PH_MAX_CPUS - 1, &c))
            return -1;
        nd->cpus[nd->ncpus++] = (int)c;
    }
    return 0;
}

static int read_memory(const jwhere *at, const json_t *v, ph_node_info *nd)
{
    jwhere k;
    const json_t *total = json_object_get(v, "mem_total_bytes");
    const json_t *avail = json_object_get(v, "mem_free_bytes");

    at_key(&k, at, "mem_total_bytes");
    if (total && read_u64(&k, total, &nd->mem_total_bytes))
        return -1;
    nd->mem_free_bytes = nd->mem_total_bytes;
    at_key(&k, at, "mem_free_bytes");
    if (avail && read_u64(&k, avail, &nd->mem_free_bytes))
        return -1;
    return 0;
}

static int read_pools(const jwhere *at, const json_t *v, ph_node_info *nd)
{
    const json_t *arr = read_array(at, v, 0, 2);
    if (!arr)
        return -1;
    size_t n = json_array_size(arr);
    for (size_t p = 0; p < n; p++) {
        jwhere e;
        at_index(&e, at, p);
        if (read_pool(&e, json_array_get(arr, p), &nd->pools[p]))
            return -1;
    }
    nd->npools = (int)n;
    return 0;
}

static int read_node(const jwhere *at, const json_t *v, ph_node_info *nd)
{
    jwhere k;
    int64_t id = 0;

    if (!json_is_object(v))
        return bad(at, "expected an object");
    at_key(&k, at, "id");
    if (!json_object_get(v, "id"))
        return bad(at, "missing key 'id'");
    if (read_int(&k, json_object_get(v, "id"), 0, 1023, &id))
        return -1;
    nd->id = (int)id;
    at_key(&k, at, "cpus");
    if (!json_object_get(v, "cpus"))
        return bad(at, "missing key 'cpus'");
    if (read_cpus(&k, json_object_get(v, "cpus"), nd) || read_memory(at, v, nd))
        return -1;
    const json_t *pools = json_object_get(v, "hugepages");
    at_key(&k, at, "hugepages");
    return pools ? read_pools(&k, pools, nd) : 0;
}

/* n x n matrix at `key`; *present = 0 (and nothing read) when absent.
 * integer: entries must be integers 1..255 (into ints). */
static int read_matrix(const jwhere *top, const json_t *doc, const char *key,
                       int n, double min, void *out, int integer,
                       int *present)
{
    jwhere at, row_at, e;
    const json_t *v = json_object_get(doc, key);

    *present = v != NULL;
    if (!v)
        return 0;
    at_key(&at, top, key);
    if (!read_array(&at, v, (size_t)n, (size_t)n))
        return -1;
    for (int i = 0; i < n; i++) {
        at_index(&row_at, &at, (size_t)i);
        const json_t *row =
            read_array(&row_at, json_array_get(v, (size_t)i), (size_t)n, (size_t)n);
        if (!row)
            return -1;
        for (int j = 0; j < n; j++) {
            at_index(&e, &row_at, (size_t)j);
            int64_t d = 0;
            if (integer) {
                if (read_int(&e, json_array_get(row, (size_t)j), 1, 255, &d))
                    return -1;
                ((int *)out)[i * n + j] = (int)d;
            } else if (read_double(&e, json_array_get(row, (size_t)j), min,
                                   &((double *)out)[i * n + j])) {
                return -1;
            }
        }
    }
    return 0;
}

static int check_header(const jwhere *top, const json_t *doc)
{
    jwhere k;
    const json_t *fmt = json_object_get(doc, "format");
    const json_t *ver = json_object_get(doc, "version");
    int64_t v = 0;

    at_key(&k, top, "format");
    if (fmt && (!json_is_string(fmt) ||
                strcmp(json_string_value(fmt), PH_TOPO_JSON_FORMAT) != 0))
        return bad(&k, "expected \"" PH_TOPO_JSON_FORMAT "\"");
    at_key(&k, top, "version");
    if (ver && read_int(&k, ver, 1, PH_TOPO_JSON_VERSION, &v))
        return -1;
    return 0;
}

/* Optional scalars: measured, model_local_ns, migrate_ns_call. */
static int read_scalars(const jwhere *top, const json_t *doc,
                        ph_topology *t, int *has_call, double *call_ns)
{
    jwhere k;
    const json_t *v;

    at_key(&k, top, "measured");
    if ((v = json_object_get(doc, "measured")) && read_bool(&k, v, &t->measured))
        return -1;
    at_key(&k, top, "model_local_ns");
    if ((v = json_object_get(doc, "model_local_ns")) &&
        read_double(&k, v, 0, &t->model_local_ns))
        return -1;
    at_key(&k, top, "migrate_ns_call");
    *has_call = (v = json_object_get(doc, "migrate_ns_call")) != NULL;
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
static int read_overrides(const jwhere *top, const json_t *doc, int n,
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

static int read_nodes(const jwhere *top, const json_t *nodes, ph_topology *t)
{
    jwhere at, e;
    at_key(&at, top, "nodes");
    for (int i = 0; i < t->nnodes; i++) {
        at_index(&e, &at, (size_t)i);
        if (read_node(&e, json_array_get(nodes, (size_t)i), &t->nodes[i]))
            return -1;
    }
    return 0;
}

/* Everything but the node array's presence, which the caller checked. */
static int read_topology(const jwhere *top, const json_t *doc,
                         ph_topology *t, model_overrides *o)
{
    int measured = 0, has_dist;

    if (read_nodes(top, json_object_get(doc, "nodes"), t) ||
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

static ph_topology *from_doc(const json_t *doc, const char *name)
{
    jwhere top = {.name = name, .path = ""};
    jwhere at;
    model_overrides o = {0};

    if (!json_is_object(doc)) {
        bad(&top, "expected an object at the top level");
        return NULL;
    }
    if (check_header(&top, doc))
        return NULL;
    const json_t *nodes = json_object_get(doc, "nodes");
    if (!nodes)
        return ph_fail_null(EINVAL, "topology: %s: missing key 'nodes'",
                            name);
    at_key(&at, &top, "nodes");
    if (!read_array(&at, nodes, 1, PH_MAX_NODES))
        return NULL;
    ph_topology *t = ph_topo_alloc((int)json_array_size(nodes));
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

/* Parse text[0..len) with jansson.  NULL with errno and a message naming
 * the document, the line and the column. */
static json_t *parse(const char *text, size_t len, const char *name)
{
    json_error_t err;
    json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
    if (doc)
        return doc;
    int e = json_error_code(&err) == json_error_out_of_memory ? ENOMEM : EINVAL;
    return ph_fail_null(e, "topology: %s: line %d col %d: %s", name, err.line, err.column,
                        err.text);
}

ph_topology *ph_topo_from_json_text(const char *text, size_t len,
                                    const char *name)
{
    if (!name)
        name = "JSON text";
    if (!text)
        return ph_fail_null(EINVAL, "topology: %s: no text", name);
    json_t *doc = parse(text, len, name);
    if (!doc)
        return NULL;
    ph_topology *t = from_doc(doc, name);
    json_decref(doc);
    return t;
}

ph_topology *ph_topo_from_json_file(const char *path)
{
    size_t len = 0;
    char *text = ph_read_file(path, PH_TOPO_JSON_MAX_BYTES, &len);
    if (!text) {
        int e = errno;
        char msg[320];
        snprintf(msg, sizeof msg, "%s", ph_error_message());
        return ph_fail_null(e, "topology: %s", msg);
    }
    json_t *doc = parse(text, len, path);
    free(text);
    if (!doc)
        return NULL;
    ph_topology *t = from_doc(doc, path);
    json_decref(doc);
    return t;
}
