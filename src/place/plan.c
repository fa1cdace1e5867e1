/*
 * plan.c -- placement requests: parsing, validation and the pure rules
 * that map a page to its node (see plan.h for the rules themselves).
 *
 * Nothing here touches memory or calls the OS: the only inputs are the
 * request, the topology (read-only) and, for what a request leaves out,
 * the defaults its caller filled (ph_plan_defaults).  The public
 * ph_placement_init / ph_placement_parse / ph_policy_name (src/api/) are
 * ph_plan_request_init / ph_plan_request_parse / ph_plan_policy_name.
 */
#include "place/plan.h"

#include "base/error.h"
#include "base/rng.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PH_MAX_PLAN_THREADS (1 << 20)

static const char *const policy_names[] = {
    [PH_POLICY_FIRST_TOUCH] = "first-touch",
    [PH_POLICY_INTERLEAVE] = "interleave",
    [PH_POLICY_CYCLIC] = "cyclic",
    [PH_POLICY_BLOCK] = "block",
    [PH_POLICY_BLOCK_STATIC] = "block-static",
    [PH_POLICY_RANDOM] = "random",
    [PH_POLICY_SINGLE_NODE] = "single-node",
};
#define NPOLICIES ((int)(sizeof policy_names / sizeof policy_names[0]))

#define EXPECTED_POLICIES                                                   \
    "first-touch, interleave, cyclic:K, block, block-static, "              \
    "random[:SEED], node:N"

/* ------------------------------------------------------------------ */
/* Requests: set-up and parsing                                        */
/* ------------------------------------------------------------------ */

const char *ph_plan_policy_name(ph_policy_t policy)
{
    if ((int)policy < 0 || (int)policy >= NPOLICIES)
        return NULL;
    return policy_names[policy];
}

int ph_plan_request_init(ph_placement_t *pl, ph_policy_t policy)
{
    if (!pl)
        return ph_fail(EINVAL, "ph_placement_init: pl is NULL");
    if ((int)policy < 0 || (int)policy >= NPOLICIES)
        return ph_fail(EINVAL,
                       "ph_placement_init: policy %d is not a placement "
                       "policy (0-%d)",
                       (int)policy, NPOLICIES - 1);
    memset(pl, 0, sizeof *pl);
    pl->policy = policy;
    pl->page_bytes = 0;   /* the default (tunable `pagesize`) */
    pl->nodes = NULL;     /* every node of the machine */
    pl->nnodes = 0;
    pl->node = -1;        /* SINGLE_NODE: the first of nodes */
    pl->block_pages = 1;
    pl->seed = 0;         /* the default (tunable `seed`) */
    pl->elems = 0;
    pl->elem_bytes = 0;
    pl->nthreads = 0;     /* the machine's CPU count */
    pl->chunk = 0;
    pl->split = PH_SPLIT_BALANCED;
    pl->thread_node = NULL;
    return 0;
}

/* Unsigned decimal (or 0x hex when allow_hex) that must fill the text. */
static int parse_u64(const char *s, int allow_hex, uint64_t *out)
{
    if (!s || !*s || *s == '-' || *s == '+' || isspace((unsigned char)*s))
        return -1;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, allow_hex ? 0 : 10);
    if (errno || !end || *end)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

/* "4K", "4k", "4KiB", "4096", "2M", "2MB", "2097152" -> bytes. */
static int parse_page_size(const char *s, size_t *out)
{
    if (!s || !isdigit((unsigned char)*s))
        return -1;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return -1;
    unsigned long long mul = 1;
    if (*end) {
        char u = (char)toupper((unsigned char)*end);
        if (u == 'K')
            mul = 1024;
        else if (u == 'M')
            mul = 1024 * 1024;
        else
            return -1;
        end++;
        if (strcasecmp(end, "") != 0 && strcasecmp(end, "B") != 0 &&
            strcasecmp(end, "iB") != 0)
            return -1;
    }
    if (v > SIZE_MAX / mul)
        return -1;
    *out = (size_t)(v * mul);
    return 0;
}

int ph_plan_request_parse(ph_placement_t *pl, const char *text)
{
    if (!pl)
        return ph_fail(EINVAL, "ph_placement_parse: pl is NULL");
    if (!text)
        return ph_fail(EINVAL, "ph_placement_parse: text is NULL");

    char buf[256];
    size_t len = strlen(text);
    if (len >= sizeof buf)
        return ph_fail(EINVAL, "placement \"%.40s...\": text too long (%zu "
                       "characters)", text, len);
    /* Trim surrounding blanks. */
    const char *s = text;
    while (isspace((unsigned char)*s))
        s++;
    len = strlen(s);
    while (len > 0 && isspace((unsigned char)s[len - 1]))
        len--;
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (len == 0)
        return ph_fail(EINVAL, "placement \"%s\": empty (expected %s)", text,
                       EXPECTED_POLICIES);

    ph_placement_t tmp;
    ph_plan_request_init(&tmp, PH_POLICY_FIRST_TOUCH);

    /* Page size suffix. */
    char *at = strrchr(buf, '@');
    if (at) {
        *at = '\0';
        size_t pb = 0;
        if (parse_page_size(at + 1, &pb) < 0 ||
            (pb != PH_PAGE_4K && pb != PH_PAGE_2M))
            return ph_fail(EINVAL,
                           "placement \"%s\": page size \"%s\" is not 4K "
                           "or 2M",
                           text, at + 1);
        tmp.page_bytes = pb;
    }

    char *arg = strchr(buf, ':');
    if (arg)
        *arg++ = '\0';
    const char *name = buf;

    ph_policy_t policy;
    int want_arg = 0; /* 0 none, 1 optional, 2 required */
    if (!strcasecmp(name, "first-touch") || !strcasecmp(name, "firsttouch") ||
        !strcasecmp(name, "first_touch")) {
        policy = PH_POLICY_FIRST_TOUCH;
    } else if (!strcasecmp(name, "interleave") ||
               !strcasecmp(name, "round-robin")) {
        policy = PH_POLICY_INTERLEAVE;
    } else if (!strcasecmp(name, "cyclic")) {
        policy = PH_POLICY_CYCLIC;
        want_arg = 2;
    } else if (!strcasecmp(name, "block")) {
        policy = PH_POLICY_BLOCK;
    } else if (!strcasecmp(name, "block-static")) {
        policy = PH_POLICY_BLOCK_STATIC;
    } else if (!strcasecmp(name, "random")) {
        policy = PH_POLICY_RANDOM;
        want_arg = 1;
    } else if (!strcasecmp(name, "node") ||
               !strcasecmp(name, "single-node")) {
        policy = PH_POLICY_SINGLE_NODE;
        want_arg = 2;
    } else {
        return ph_fail(EINVAL,
                       "placement \"%s\": unknown policy \"%s\" (expected "
                       "%s)",
                       text, name, EXPECTED_POLICIES);
    }
    tmp.policy = policy;

    if (arg && want_arg == 0)
        return ph_fail(EINVAL, "placement \"%s\": %s takes no argument "
                       "(\":%s\")", text, name, arg);
    if (!arg && want_arg == 2)
        return ph_fail(EINVAL, "placement \"%s\": %s needs an argument "
                       "(%s)", text, name,
                       policy == PH_POLICY_CYCLIC ? "cyclic:K, K pages per "
                                                    "block"
                                                  : "node:N, N the node");

    uint64_t v = 0;
    switch (policy) {
    case PH_POLICY_CYCLIC:
        if (parse_u64(arg, 0, &v) < 0 || v < 1 || v > ((uint64_t)1 << 40))
            return ph_fail(EINVAL,
                           "placement \"%s\": block size \"%s\" is not a "
                           "number of pages >= 1",
                           text, arg);
        tmp.block_pages = (size_t)v;
        break;
    case PH_POLICY_RANDOM:
        if (arg) {
            if (parse_u64(arg, 1, &v) < 0)
                return ph_fail(EINVAL,
                               "placement \"%s\": seed \"%s\" is not a "
                               "number",
                               text, arg);
            tmp.seed = v;
        }
        break;
    case PH_POLICY_SINGLE_NODE:
        if (parse_u64(arg, 0, &v) < 0 || v > INT_MAX)
            return ph_fail(EINVAL,
                           "placement \"%s\": node \"%s\" is not a node "
                           "number",
                           text, arg);
        tmp.node = (int)v;
        break;
    default:
        break;
    }
    *pl = tmp;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

/* "0-3", "0,2,4-5", "3,1": ascending consecutive runs become a-b. */
static void ids_text(const int *ids, int n, char *buf, size_t len)
{
    size_t used = 0;
    if (len == 0)
        return;
    buf[0] = '\0';
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && ids[j + 1] == ids[j] + 1)
            j++;
        int w;
        if (j > i)
            w = snprintf(buf + used, len - used, "%s%d-%d", i ? "," : "",
                         ids[i], ids[j]);
        else
            w = snprintf(buf + used, len - used, "%s%d", i ? "," : "",
                         ids[i]);
        if (w < 0 || (size_t)w >= len - used)
            return; /* truncated */
        used += (size_t)w;
        i = j + 1;
    }
}

void ph_plan_nodes_text(const ph_topology *topo, char *buf, size_t len)
{
    int ids[PH_MAX_NODES];
    int n = topo ? topo->nnodes : 0;
    for (int i = 0; i < n; i++)
        ids[i] = topo->nodes[i].id;
    ids_text(ids, n, buf, len);
}

static int bad_node(const ph_topology *topo, const char *what, int id)
{
    char set[256];
    ph_plan_nodes_text(topo, set, sizeof set);
    return ph_fail(EINVAL, "%snode %d is not a node of this machine "
                   "(nodes %s)", what, id, set);
}

int ph_plan_slot(const ph_plan *p, int node)
{
    for (int i = 0; i < p->nnodes; i++)
        if (p->nodes[i] == node)
            return i;
    return -1;
}

/* ------------------------------------------------------------------ */
/* Plans                                                               */
/* ------------------------------------------------------------------ */

void ph_plan_release(ph_plan *p)
{
    if (!p)
        return;
    free(p->thread_slot);
    p->thread_slot = NULL;
}

int ph_plan_copy(ph_plan *dst, const ph_plan *src)
{
    ph_plan tmp = *src;
    tmp.thread_slot = NULL;
    if (src->thread_slot) {
        size_t n = (size_t)src->nthreads;
        tmp.thread_slot = malloc(n * sizeof *tmp.thread_slot);
        if (!tmp.thread_slot)
            return ph_fail(ENOMEM, "out of memory copying a placement plan");
        memcpy(tmp.thread_slot, src->thread_slot,
               n * sizeof *tmp.thread_slot);
    }
    *dst = tmp;
    return 0;
}

static int make_block_static(ph_plan *out, const ph_placement_t *pl,
                             const ph_topology *topo, size_t range_bytes,
                             const int *list, int nlist)
{
    size_t elems = pl->elems, elem_bytes = pl->elem_bytes;
    if (elems == 0 && elem_bytes == 0 && range_bytes > 0) {
        elems = range_bytes;
        elem_bytes = 1;
    }
    if (elems == 0)
        return ph_fail(EINVAL, "block-static: elems is 0 (the number of "
                       "array elements is needed)");
    if (elem_bytes == 0)
        return ph_fail(EINVAL, "block-static: elem_bytes is 0 (the size of "
                       "one element is needed)");
    if (elems > SIZE_MAX / elem_bytes)
        return ph_fail(EINVAL, "block-static: elems %zu * elem_bytes %zu "
                       "overflows", elems, elem_bytes);
    if ((unsigned)pl->split > PH_SPLIT_GREEDY)
        return ph_fail(EINVAL, "block-static: split %d is not balanced (0) "
                       "or greedy (1)", (int)pl->split);
    int T = pl->nthreads;
    if (T == 0)
        T = topo->ncpus > 0 ? topo->ncpus : 1;
    if (T < 0 || T > PH_MAX_PLAN_THREADS)
        return ph_fail(EINVAL, "block-static: nthreads %d is out of range "
                       "(1-%d, 0 = the number of CPUs)",
                       pl->nthreads, PH_MAX_PLAN_THREADS);

    int *slot = malloc((size_t)T * sizeof *slot);
    if (!slot)
        return ph_fail(ENOMEM, "block-static: out of memory for %d threads",
                       T);
    /* First pass: topology index of every thread's node. */
    int used[PH_MAX_NODES] = {0};
    for (int t = 0; t < T; t++) {
        int id;
        if (pl->thread_node) {
            id = pl->thread_node[t];
        } else {
            /* The machine binding rule: block, t*N/T over the nodes. */
            id = list[(int)((int64_t)t * nlist / T)];
        }
        int idx = ph_topo_node_index(topo, id);
        if (idx < 0) {
            free(slot);
            char what[64];
            snprintf(what, sizeof what, "block-static: thread_node[%d]: ", t);
            return bad_node(topo, what, id);
        }
        slot[t] = idx;
        used[idx] = 1;
    }
    /* Slots: used nodes in ascending topology index. */
    int rank[PH_MAX_NODES];
    int n = 0;
    for (int i = 0; i < topo->nnodes; i++) {
        rank[i] = -1;
        if (used[i]) {
            rank[i] = n;
            out->nodes[n++] = topo->nodes[i].id;
        }
    }
    out->nnodes = n;
    for (int t = 0; t < T; t++)
        slot[t] = rank[slot[t]];
    out->thread_slot = slot;
    out->nthreads = T;
    out->elems = elems;
    out->elem_bytes = elem_bytes;
    out->chunk = pl->chunk;
    out->split = pl->split;
    return 0;
}

int ph_plan_make_range(ph_plan *out, const ph_placement_t *pl,
                       const ph_topology *topo,
                       const ph_plan_defaults *def, size_t range_bytes)
{
    if (!out)
        return ph_fail(EINVAL, "placement: no plan to fill");
    memset(out, 0, sizeof *out);
    if (!topo || topo->nnodes < 1)
        return ph_fail(EINVAL, "placement: no machine topology");
    if (!def)
        return ph_fail(EINVAL, "placement: no defaults");

    ph_placement_t deflt;
    if (!pl) {
        const char *text = def->placement;
        if (ph_plan_request_parse(&deflt, text) < 0) {
            char msg[256];
            snprintf(msg, sizeof msg, "%s", ph_error_message());
            return ph_fail(EINVAL, "tunable placement (PAGEHOME_PLACEMENT): "
                           "%s", msg);
        }
        pl = &deflt;
    }

    if ((int)pl->policy < 0 || (int)pl->policy >= NPOLICIES)
        return ph_fail(EINVAL, "placement policy %d is not a policy (0-%d)",
                       (int)pl->policy, NPOLICIES - 1);
    out->policy = pl->policy;

    size_t pb = pl->page_bytes;
    if (pb == 0)
        pb = def->page_bytes;
    if (pb != PH_PAGE_4K && pb != PH_PAGE_2M)
        return ph_fail(EINVAL, "page size %zu is not 4K or 2M", pb);
    out->page_bytes = pb;
    out->own_policy = def->own_policy;

    /* The nodes to spread over. */
    int list[PH_MAX_NODES];
    int nlist;
    if (pl->nodes) {
        if (pl->nnodes < 1 || pl->nnodes > PH_MAX_NODES)
            return ph_fail(EINVAL, "nnodes %d is out of range (1-%d)",
                           pl->nnodes, PH_MAX_NODES);
        nlist = pl->nnodes;
        for (int i = 0; i < nlist; i++) {
            if (ph_topo_node_index(topo, pl->nodes[i]) < 0) {
                char what[32];
                snprintf(what, sizeof what, "nodes[%d]: ", i);
                return bad_node(topo, what, pl->nodes[i]);
            }
            list[i] = pl->nodes[i];
        }
    } else {
        nlist = topo->nnodes;
        for (int i = 0; i < nlist; i++)
            list[i] = topo->nodes[i].id;
    }
    memcpy(out->nodes, list, (size_t)nlist * sizeof list[0]);
    out->nnodes = nlist;
    out->node = -1;
    out->block_pages = 1;

    switch (pl->policy) {
    case PH_POLICY_FIRST_TOUCH:
    case PH_POLICY_INTERLEAVE:
    case PH_POLICY_BLOCK:
        break;
    case PH_POLICY_CYCLIC:
        if (pl->block_pages < 1)
            return ph_fail(EINVAL, "cyclic: block_pages is 0 (pages per "
                           "block must be >= 1)");
        out->block_pages = pl->block_pages;
        break;
    case PH_POLICY_RANDOM:
        out->seed = pl->seed ? pl->seed : def->seed;
        break;
    case PH_POLICY_SINGLE_NODE: {
        int node = pl->node < 0 ? list[0] : pl->node;
        if (ph_topo_node_index(topo, node) < 0)
            return bad_node(topo, "single-node: ", node);
        out->node = node;
        out->nodes[0] = node;
        out->nnodes = 1;
        break;
    }
    case PH_POLICY_BLOCK_STATIC:
        if (make_block_static(out, pl, topo, range_bytes, list, nlist) < 0) {
            out->thread_slot = NULL;
            return -1;
        }
        break;
    }
    return 0;
}

int ph_plan_make(ph_plan *out, const ph_placement_t *pl,
                 const ph_topology *topo, const ph_plan_defaults *def)
{
    return ph_plan_make_range(out, pl, topo, def, 0);
}

/* ------------------------------------------------------------------ */
/* schedule(static) ownership                                          */
/* ------------------------------------------------------------------ */

/* Thread owning element i, and the first element after i that may belong
 * to another thread (*seg_end, at most elems). */
static size_t static_owner(const ph_plan *p, size_t i, size_t *seg_end)
{
    size_t N = p->elems, T = (size_t)p->nthreads;
    size_t t, end;
    if (T == 1) {
        *seg_end = N;
        return 0;
    }
    if (p->chunk > 0) {
        size_t k = p->chunk;
        size_t c = i / k, start = c * k;
        t = c % T;
        end = (N - start > k) ? start + k : N;
    } else if (p->split == PH_SPLIT_GREEDY) {
        size_t c = N / T + (N % T != 0);
        t = i / c;
        end = (t + 1) * c;
    } else {
        /* libgomp: q = N/T, r = N%T; threads t < r get q+1 elements,
         * starting at t*q + min(t, r). */
        size_t q = N / T, r = N % T;
        size_t big = r * (q + 1);
        if (i < big) {
            t = i / (q + 1);
            end = (t + 1) * (q + 1);
        } else {
            t = r + (i - big) / q;
            end = big + (t - r + 1) * q;
        }
    }
    *seg_end = end < N ? end : N;
    return t;
}

static int static_node_of(const ph_plan *p, size_t page)
{
    uint64_t P = p->page_bytes, E = p->elem_bytes;
    uint64_t total = (uint64_t)p->elems * E;
    uint64_t lo = (uint64_t)page * P, hi = lo + P;
    uint64_t off = p->data_offset;
    size_t seg;

    /* Page bytes in array coordinates, clipped to the array. */
    if (hi <= off)
        return p->nodes[p->thread_slot[static_owner(p, 0, &seg)]];
    uint64_t b0 = lo > off ? lo - off : 0;
    uint64_t b1 = hi - off;
    if (b1 > total)
        b1 = total;
    if (b0 >= total)
        return p->nodes[p->thread_slot[static_owner(p, p->elems - 1, &seg)]];

    uint64_t bytes[PH_MAX_NODES] = {0};
    size_t e = (size_t)(b0 / E);
    while ((uint64_t)e * E < b1) {
        size_t t = static_owner(p, e, &seg);
        uint64_t s0 = (uint64_t)e * E, s1 = (uint64_t)seg * E;
        if (s0 < b0)
            s0 = b0;
        if (s1 > b1)
            s1 = b1;
        bytes[p->thread_slot[t]] += s1 - s0;
        e = seg;
    }
    int best = 0;
    for (int s = 1; s < p->nnodes; s++)
        if (bytes[s] > bytes[best])
            best = s;
    return p->nodes[best];
}

/* ------------------------------------------------------------------ */
/* Page -> node                                                        */
/* ------------------------------------------------------------------ */

int ph_plan_node_of(const ph_plan *p, uintptr_t base, size_t page,
                    size_t npages)
{
    (void)base;
    size_t n = (size_t)p->nnodes;
    switch (p->policy) {
    case PH_POLICY_FIRST_TOUCH:
        return -1;
    case PH_POLICY_INTERLEAVE:
        return p->nodes[page % n];
    case PH_POLICY_CYCLIC:
        return p->nodes[(page / p->block_pages) % n];
    case PH_POLICY_BLOCK:
        if (npages == 0 || page >= npages)
            return p->nodes[n - 1];
        return p->nodes[(size_t)((uint64_t)page * n / npages)];
    case PH_POLICY_BLOCK_STATIC:
        return static_node_of(p, page);
    case PH_POLICY_RANDOM: {
        uint64_t h = ph_splitmix64(ph_splitmix64(p->seed) + (uint64_t)page);
        return p->nodes[h % n];
    }
    case PH_POLICY_SINGLE_NODE:
        return p->node;
    }
    return -1;
}

void ph_plan_nodes(const ph_plan *p, uintptr_t base, size_t npages,
                   int *nodes)
{
    size_t i = 0;
    while (i < npages) {
        int node;
        size_t run = ph_plan_run(p, base, i, npages, &node);
        for (size_t j = 0; j < run; j++)
            nodes[i + j] = node;
        i += run;
    }
}

size_t ph_plan_run(const ph_plan *p, uintptr_t base, size_t first,
                   size_t npages, int *node)
{
    if (first >= npages)
        return 0;
    size_t left = npages - first;
    size_t n = (size_t)p->nnodes;
    *node = ph_plan_node_of(p, base, first, npages);
    switch (p->policy) {
    case PH_POLICY_FIRST_TOUCH:
    case PH_POLICY_SINGLE_NODE:
        return left;
    case PH_POLICY_INTERLEAVE:
        return n == 1 ? left : 1;
    case PH_POLICY_CYCLIC: {
        if (n == 1)
            return left;
        size_t k = p->block_pages;
        size_t end = (first / k + 1) * k;
        return (end < npages ? end : npages) - first;
    }
    case PH_POLICY_BLOCK: {
        /* Chunk idx holds pages [ceil(idx*np/n), ceil((idx+1)*np/n)). */
        uint64_t idx = (uint64_t)first * n / npages;
        uint64_t end = ((idx + 1) * npages + n - 1) / n;
        if (end > npages)
            end = npages;
        return (size_t)end - first;
    }
    case PH_POLICY_BLOCK_STATIC:
    case PH_POLICY_RANDOM: {
        size_t run = 1;
        while (first + run < npages &&
               ph_plan_node_of(p, base, first + run, npages) == *node)
            run++;
        return run;
    }
    }
    return left;
}

int ph_plan_is_lazy(const ph_plan *p)
{
    switch (p->policy) {
    case PH_POLICY_FIRST_TOUCH:
    case PH_POLICY_BLOCK:
    case PH_POLICY_SINGLE_NODE:
        return 1;
    case PH_POLICY_INTERLEAVE:
        if (p->page_bytes != PH_PAGE_4K)
            return 0;
        for (int i = 1; i < p->nnodes; i++)
            if (p->nodes[i] <= p->nodes[i - 1])
                return 0;
        return 1;
    default:
        return 0;
    }
}

void ph_plan_describe(const ph_plan *p, char *buf, size_t len)
{
    if (!buf || len == 0)
        return;
    const char *name = ph_plan_policy_name(p->policy);
    const char *ps = p->page_bytes == PH_PAGE_2M ? "2M" : "4K";
    char nodes[256];
    ids_text(p->nodes, p->nnodes, nodes, sizeof nodes);
    switch (p->policy) {
    case PH_POLICY_FIRST_TOUCH:
        snprintf(buf, len, "first-touch@%s", ps);
        break;
    case PH_POLICY_INTERLEAVE:
    case PH_POLICY_BLOCK:
        snprintf(buf, len, "%s@%s nodes=%s", name, ps, nodes);
        break;
    case PH_POLICY_CYCLIC:
        snprintf(buf, len, "cyclic:%zu@%s nodes=%s", p->block_pages, ps,
                 nodes);
        break;
    case PH_POLICY_RANDOM:
        snprintf(buf, len, "random:%" PRIu64 "@%s nodes=%s", p->seed, ps,
                 nodes);
        break;
    case PH_POLICY_SINGLE_NODE:
        snprintf(buf, len, "node:%d@%s", p->node, ps);
        break;
    case PH_POLICY_BLOCK_STATIC:
        snprintf(buf, len,
                 "block-static@%s elems=%zu elem_bytes=%zu threads=%d "
                 "chunk=%zu split=%s nodes=%s",
                 ps, p->elems, p->elem_bytes, p->nthreads, p->chunk,
                 p->split == PH_SPLIT_GREEDY ? "greedy" : "balanced", nodes);
        break;
    default:
        snprintf(buf, len, "?");
        break;
    }
}
