/*
 * measure.c -- load latency and page-migration cost, measured on the real
 * machine (`pagehome topo --measure`).
 *
 * This file is a microbenchmark, so it talks to the kernel directly
 * (mbind/move_pages from numaif.h, pthread affinity) rather than through
 * the OS table, which would add its own work to what is being timed.
 *
 * LATENCY, for every memory node j and every node i that has CPUs:
 *   - map o->chase_bytes, bind it to node j (mbind MPOL_BIND), ask for
 *     transparent huge pages (fewer TLB misses: the load itself is what is
 *     measured) and check that sampled pages really are on j;
 *   - build one random cycle through all of its 64-byte slots (Sattolo's
 *     algorithm, fixed seed), so every load depends on the previous one
 *     and the prefetchers cannot guess the next address;
 *   - pin the thread to a CPU of node i, walk the cycle for a warm-up, then
 *     time CHASE_LOADS loads in CHASE_ROUNDS rounds with CLOCK_MONOTONIC
 *     and keep the fastest round (interruptions only ever add time).
 *   The buffer is built once per memory node and walked from every CPU
 *   node, so the total work is nnodes builds + nnodes^2 * CHASE_LOADS
 *   loads.  Rows of nodes without CPUs keep the model (they are measured
 *   only as memory).  A node with less free memory than twice the buffer
 *   is skipped (MPOL_BIND on a full node would invoke the OOM killer).
 *
 * MIGRATION, for every ordered pair i != j, with the thread pinned to node
 * j (the thread that will use the pages), else to node i:
 *   - 4 KiB: map SINGLE_MOVES + o->pages_4k pages with MADV_NOHUGEPAGE,
 *     fault them in on node i, then move SINGLE_MOVES pages one call each
 *     (the median is the cost c1 of a one-page call) and the other
 *     pages_4k in one call (cost cN).  The per-page cost is
 *     (cN - c1) / (pages_4k - 1) and the fixed cost of a call is c1 minus
 *     one page; the machine's migrate_ns_call is the median over pairs.
 *   - 2 MiB: map o->pages_2m 2 MiB-aligned huge pages with MADV_HUGEPAGE,
 *     fault them on node i, and check /proc/self/smaps (AnonHugePages) that
 *     they are huge.  If THP is unavailable the pair keeps the model value
 *     (and says so); otherwise the heads of the huge pages move in one
 *     call and the per-page cost is (time - call cost) / pages_2m.
 *   A pair where fewer than half the pages moved keeps the model values.
 *   move_pages refused (EPERM/ENOSYS: seccomp, containers) or a machine
 *   with one node: migration is not measurable and the model stays.
 *
 * Results go into t (measured = 1) and, with save_path, into a topology
 * JSON file (ph_topo_load_measured reads it back; the latency_file tunable
 * names it).  With the defaults (64 MiB chase, 256 pages) a 2-node machine
 * measures in a few seconds; a 1-node machine in about one.
 */
#include "topo/topo.h"
#include "base/own_fd.h"

#include "base/clock.h"
#include "base/error.h"
#include "base/json_write.h"
#include "base/rng.h"
#include "base/sort.h"
#include "config/options.h"

#include <errno.h>
#include <numaif.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define LINE_BYTES 64
#define PAGE_4K_BYTES ((size_t)4096)
#define PAGE_2M_BYTES ((size_t)2 << 20)
#define CHASE_LOADS ((size_t)2 << 20)   /* timed loads per node pair */
#define CHASE_ROUNDS 4
#define CHASE_WARM_LOADS ((size_t)256 << 10)
#define SINGLE_MOVES 8
#define SAMPLE_PAGES 16
#define MASK_NODES 1024

typedef struct measure {
    ph_topology *t;
    ph_measure_opts o;
    cpu_set_t *saved;           /* affinity to restore at the end */
    size_t set_bytes;
    int move_errno;             /* move_pages refused with this, else 0 */
    double call_ns[PH_MAX_NODES * PH_MAX_NODES];
    int ncalls;
} measure;

static void say(const measure *m, const char *fmt, ...) PH_PRINTF(2, 3);

static void say(const measure *m, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    if (m->o.quiet)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "pagehome: measure: %s\n", line);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, ph_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- memory ------------------------------------------------------ */

/* Anonymous memory of len bytes aligned to align (the excess unmapped, so
 * the region is a mapping of its own).  NULL on failure. */
static char *map_aligned(size_t len, size_t align)
{
    size_t total = len + align;
    char *base = mmap(NULL, total, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
        return NULL;
    uintptr_t start = ((uintptr_t)base + align - 1) & ~(uintptr_t)(align - 1);
    char *p = (char *)start;
    if (p > base)
        munmap(base, (size_t)(p - base));
    size_t tail = total - (size_t)(p - base) - len;
    if (tail)
        munmap(p + len, tail);
    return p;
}

static long bind_to(void *addr, size_t len, int node)
{
    unsigned long mask[MASK_NODES / (8 * sizeof(unsigned long))] = {0};
    size_t bits = 8 * sizeof(unsigned long);
    mask[(size_t)node / bits] |= 1ul << ((size_t)node % bits);
    return mbind(addr, len, MPOL_BIND, mask, MASK_NODES + 1, 0);
}

static void unbind(void *addr, size_t len)
{
    mbind(addr, len, MPOL_DEFAULT, NULL, 0, 0);
}

static void touch_pages(char *p, size_t len, size_t step)
{
    for (size_t off = 0; off < len; off += step)
        p[off] = 1;
}

/* How many of SAMPLE_PAGES pages spread over the region are on node;
 * -1 when move_pages cannot tell. */
static int sample_on_node(char *p, size_t len, int node)
{
    void *pages[SAMPLE_PAGES];
    int status[SAMPLE_PAGES];
    size_t npages = len / PAGE_4K_BYTES;
    int n = npages < SAMPLE_PAGES ? (int)npages : SAMPLE_PAGES, on = 0;

    for (int k = 0; k < n; k++)
        pages[k] = p + (npages * (size_t)k / (size_t)n) * PAGE_4K_BYTES;
    if (move_pages(0, (unsigned long)n, pages, NULL, status, 0) != 0)
        return -1;
    for (int k = 0; k < n; k++)
        on += status[k] == node;
    return on;
}

/* Bytes of AnonHugePages in the mappings overlapping [p, p+len). */
static uint64_t anon_huge_bytes(const char *p, size_t len)
{
    FILE *f = ph_own_fd_fopen("/proc/self/smaps", "r");
    char line[512];
    int inside = 0;
    uint64_t total_kb = 0;

    if (!f)
        return 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        unsigned long long kb;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') &&
            line[0] != ' ') {
            inside = lo < (uintptr_t)(p + len) && hi > (uintptr_t)p;
        } else if (inside &&
                   sscanf(line, "AnonHugePages: %llu kB", &kb) == 1) {
            total_kb += kb;
        }
    }
    ph_own_fd_fclose(f);
    return total_kb * 1024;
}

/* ---- affinity ---------------------------------------------------- */

static int save_affinity(measure *m)
{
    m->set_bytes = CPU_ALLOC_SIZE(PH_MAX_CPUS);
    m->saved = CPU_ALLOC(PH_MAX_CPUS);
    if (!m->saved)
        return ph_fail(ENOMEM, "measure: out of memory");
    int rc = pthread_getaffinity_np(pthread_self(), m->set_bytes, m->saved);
    if (rc) {
        CPU_FREE(m->saved);
        m->saved = NULL;
        return ph_fail(rc, "measure: cannot read the thread's CPU affinity:"
                       " %s", strerror(rc));
    }
    return 0;
}

/* Back to the affinity the thread had (run anywhere it may). */
static void unpin(measure *m)
{
    if (m->saved)
        pthread_setaffinity_np(pthread_self(), m->set_bytes, m->saved);
}

static void restore_affinity(measure *m)
{
    unpin(m);
    if (m->saved)
        CPU_FREE(m->saved);
    m->saved = NULL;
}

/* Pin to the first CPU of node index i that accepts us. */
static int pin_to_node(measure *m, int i)
{
    const ph_node_info *nd = &m->t->nodes[i];
    cpu_set_t *set = CPU_ALLOC(PH_MAX_CPUS);
    int rc = -1;

    if (!set)
        return -1;
    for (int k = 0; k < nd->ncpus && rc != 0; k++) {
        CPU_ZERO_S(m->set_bytes, set);
        CPU_SET_S((size_t)nd->cpus[k], m->set_bytes, set);
        rc = pthread_setaffinity_np(pthread_self(), m->set_bytes, set);
    }
    CPU_FREE(set);
    if (rc == 0)
        sched_yield(); /* let the scheduler move us now */
    return rc == 0 ? 0 : -1;
}

/* ---- latency ----------------------------------------------------- */

/* One random cycle through every slot: slot k's first word points to the
 * next slot.  Writing every slot also faults the pages in. */
static void chase_build(char *buf, size_t slots, uint64_t seed)
{
    for (size_t k = 0; k < slots; k++)
        *(void **)(buf + k * LINE_BYTES) = buf + k * LINE_BYTES;
    for (size_t i = slots - 1; i > 0; i--) {
        size_t j = (size_t)(ph_splitmix64_next(&seed) % i); /* Sattolo: j < i */
        void **a = (void **)(buf + i * LINE_BYTES);
        void **b = (void **)(buf + j * LINE_BYTES);
        void *tmp = *a;
        *a = *b;
        *b = tmp;
    }
}

static void *volatile chase_sink;

static void *chase_walk(void *start, size_t loads)
{
    void **p = start;
    for (size_t k = 0; k < loads; k += 4) {
        p = (void **)*p;
        p = (void **)*p;
        p = (void **)*p;
        p = (void **)*p;
    }
    return p;
}

/* ns per dependent load: the fastest of CHASE_ROUNDS rounds. */
static double chase_time(char *buf)
{
    void *p = chase_walk(buf, CHASE_WARM_LOADS);
    double best = 0;
    size_t per_round = CHASE_LOADS / CHASE_ROUNDS;
    for (int r = 0; r < CHASE_ROUNDS; r++) {
        double t0 = (double)ph_now_ns();
        p = chase_walk(p, per_round);
        double ns = ((double)ph_now_ns() - t0) / (double)per_round;
        if (r == 0 || ns < best)
            best = ns;
    }
    chase_sink = p;
    return best;
}

/* The chase buffer on memory node index j, or NULL (said why). */
static char *chase_buffer(measure *m, int j)
{
    const ph_node_info *nd = &m->t->nodes[j];
    size_t bytes = m->o.chase_bytes;

    if (nd->mem_free_bytes && nd->mem_free_bytes < 2 * (uint64_t)bytes) {
        say(m, "node %d: %llu MiB free, too little for a %zu MiB buffer; "
            "keeping the model", nd->id,
            (unsigned long long)(nd->mem_free_bytes >> 20), bytes >> 20);
        return NULL;
    }
    char *buf = map_aligned(bytes, PAGE_2M_BYTES);
    if (!buf) {
        say(m, "node %d: cannot map %zu bytes: %s", nd->id, bytes,
            strerror(errno));
        return NULL;
    }
    if (bind_to(buf, bytes, nd->id) != 0) {
        say(m, "node %d: mbind failed: %s; keeping the model", nd->id,
            strerror(errno));
        munmap(buf, bytes);
        return NULL;
    }
    madvise(buf, bytes, MADV_HUGEPAGE);
    chase_build(buf, bytes / LINE_BYTES, 0x5EED0000u + (uint64_t)nd->id);
    int on = sample_on_node(buf, bytes, nd->id);
    if (on >= 0 && on < SAMPLE_PAGES)
        say(m, "node %d: only %d of %d sampled pages landed on the node",
            nd->id, on, SAMPLE_PAGES);
    return buf;
}

static void measure_latency(measure *m)
{
    ph_topology *t = m->t;
    int n = t->nnodes;

    for (int j = 0; j < n; j++) {
        char *buf = chase_buffer(m, j);
        if (!buf)
            continue;
        for (int i = 0; i < n; i++) {
            if (t->nodes[i].ncpus == 0)
                continue;
            if (pin_to_node(m, i)) {
                say(m, "cannot run on a CPU of node %d; keeping the model",
                    t->nodes[i].id);
                continue;
            }
            double ns = chase_time(buf);
            t->latency_ns[i * n + j] = ns;
            say(m, "latency: CPU of node %d -> memory of node %d: %.1f ns",
                t->nodes[i].id, t->nodes[j].id, ns);
        }
        munmap(buf, m->o.chase_bytes);
    }
    for (int i = 0; i < n; i++)
        if (t->nodes[i].ncpus == 0)
            say(m, "node %d has no CPUs: measured only as memory",
                t->nodes[i].id);
}

/* ---- migration --------------------------------------------------- */

/* One move_pages call; returns ns and sets *moved. */
static double timed_move(void **pages, int *nodes, int *status, int count,
                         int target, int *moved)
{
    double t0 = (double)ph_now_ns();
    long rc = move_pages(0, (unsigned long)count, pages, nodes, status,
                         MPOL_MF_MOVE);
    double ns = (double)ph_now_ns() - t0;
    *moved = 0;
    if (rc >= 0)
        for (int k = 0; k < count; k++)
            *moved += status[k] == target;
    return ns;
}

/* Can this process move pages at all?  Sets m->move_errno. */
static void probe_move(measure *m)
{
    char *p = map_aligned(PAGE_4K_BYTES, PAGE_4K_BYTES);
    int node = m->t->nodes[0].id, status = 0;
    void *page = p;

    m->move_errno = 0;
    if (!p) {
        m->move_errno = errno;
        return;
    }
    p[0] = 1;
    if (move_pages(0, 1, &page, &node, &status, MPOL_MF_MOVE) < 0)
        m->move_errno = errno;
    munmap(p, PAGE_4K_BYTES);
}

typedef struct move_buf {
    void **pages;
    int *nodes, *status;
} move_buf;

static int move_buf_alloc(move_buf *b, int count, int target)
{
    b->pages = calloc((size_t)count, sizeof *b->pages);
    b->nodes = calloc((size_t)count, sizeof *b->nodes);
    b->status = calloc((size_t)count, sizeof *b->status);
    if (!b->pages || !b->nodes || !b->status)
        return -1;
    for (int k = 0; k < count; k++)
        b->nodes[k] = target;
    return 0;
}

static void move_buf_free(move_buf *b)
{
    free(b->pages);
    free(b->nodes);
    free(b->status);
}

/* Map `bytes` (aligned to page_bytes) and fault it in on node `id`. */
static char *pages_on_node(size_t bytes, size_t page_bytes, int id, int huge)
{
    char *p = map_aligned(bytes, page_bytes);
    if (!p)
        return NULL;
    madvise(p, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    if (bind_to(p, bytes, id) != 0) {
        munmap(p, bytes);
        return NULL;
    }
    touch_pages(p, bytes, PAGE_4K_BYTES);
    unbind(p, bytes);
    return p;
}

/* 4 KiB pages from node index i to j: per-page cost into t, the call cost
 * estimate into *call_ns.  0, or -1 when not measured (said why). */
static int move_4k(measure *m, int i, int j, double *call_ns)
{
    ph_topology *t = m->t;
    int n = t->nnodes, count = m->o.pages_4k, target = t->nodes[j].id;
    size_t bytes = (size_t)(count + SINGLE_MOVES) * PAGE_4K_BYTES;
    double single[SINGLE_MOVES];
    move_buf b = {0};
    int rc = -1, moved, single_moved = 0;

    char *p = pages_on_node(bytes, PAGE_4K_BYTES, t->nodes[i].id, 0);
    if (!p || move_buf_alloc(&b, count, target)) {
        say(m, "4K %d -> %d: cannot set up (%s)", t->nodes[i].id, target,
            strerror(errno));
        goto out;
    }
    for (int k = 0; k < SINGLE_MOVES; k++) {
        b.pages[0] = p + (size_t)k * PAGE_4K_BYTES;
        single[k] = timed_move(b.pages, b.nodes, b.status, 1, target, &moved);
        single_moved += moved;
    }
    for (int k = 0; k < count; k++)
        b.pages[k] = p + (size_t)(SINGLE_MOVES + k) * PAGE_4K_BYTES;
    double all_ns = timed_move(b.pages, b.nodes, b.status, count, target,
                               &moved);
    if (moved < count / 2 || single_moved < SINGLE_MOVES / 2) {
        say(m, "4K %d -> %d: only %d of %d pages moved; keeping the model",
            t->nodes[i].id, target, moved, count);
        goto out;
    }
    double one_ns = median(single, SINGLE_MOVES);
    double page_ns = count > 1 ? (all_ns - one_ns) / (count - 1) : all_ns;
    if (page_ns <= 0)
        page_ns = all_ns / count;
    *call_ns = one_ns > page_ns ? one_ns - page_ns : 0;
    t->migrate_ns_4k[i * n + j] = page_ns;
    say(m, "migrate 4K: node %d -> node %d: %.0f ns per page, %.0f ns per "
        "call", t->nodes[i].id, target, page_ns, *call_ns);
    rc = 0;
out:
    if (p)
        munmap(p, bytes);
    move_buf_free(&b);
    return rc;
}

/* 2 MiB pages from node index i to j (THP); call_ns: this pair's call
 * cost estimate. */
static void move_2m(measure *m, int i, int j, double call_ns)
{
    ph_topology *t = m->t;
    int n = t->nnodes, count = m->o.pages_2m, target = t->nodes[j].id;
    size_t bytes = (size_t)count * PAGE_2M_BYTES;
    move_buf b = {0};
    int moved;

    char *p = pages_on_node(bytes, PAGE_2M_BYTES, t->nodes[i].id, 1);
    if (!p || move_buf_alloc(&b, count, target)) {
        say(m, "2M %d -> %d: cannot set up (%s); keeping the model",
            t->nodes[i].id, target, strerror(errno));
        goto out;
    }
    uint64_t huge = anon_huge_bytes(p, bytes);
    if (huge < bytes) {
        say(m, "2M %d -> %d: not measured: only %llu of %d pages are "
            "transparent huge pages (see "
            "/sys/kernel/mm/transparent_hugepage); keeping the model "
            "(%.0f ns)", t->nodes[i].id, target,
            (unsigned long long)(huge / PAGE_2M_BYTES), count,
            t->migrate_ns_2m[i * n + j]);
        goto out;
    }
    for (int k = 0; k < count; k++)
        b.pages[k] = p + (size_t)k * PAGE_2M_BYTES;
    double all_ns = timed_move(b.pages, b.nodes, b.status, count, target,
                               &moved);
    if (moved < (count + 1) / 2) {
        say(m, "2M %d -> %d: only %d of %d huge pages moved; keeping the "
            "model", t->nodes[i].id, target, moved, count);
        goto out;
    }
    double page_ns = (all_ns - call_ns) / count;
    if (page_ns <= 0)
        page_ns = all_ns / count;
    t->migrate_ns_2m[i * n + j] = page_ns;
    say(m, "migrate 2M: node %d -> node %d: %.0f ns per page",
        t->nodes[i].id, target, page_ns);
out:
    if (p)
        munmap(p, bytes);
    move_buf_free(&b);
}

static void measure_pair(measure *m, int i, int j)
{
    double call_ns = m->t->migrate_ns_call;
    int on = m->t->nodes[j].ncpus > 0 ? j : i;

    if (m->t->nodes[on].ncpus == 0 || pin_to_node(m, on))
        unpin(m);
    if (move_4k(m, i, j, &call_ns) == 0)
        m->call_ns[m->ncalls++] = call_ns;
    move_2m(m, i, j, call_ns);
}

static void measure_migration(measure *m)
{
    ph_topology *t = m->t;
    int n = t->nnodes;

    if (n == 1) {
        say(m, "migration: one node, no pages can move between nodes; "
            "keeping the model (4K %.0f ns, 2M %.0f ns per page, %.0f ns "
            "per call)", ph_opt_double(PH_OPT_MIGRATE_NS_4K),
            ph_opt_double(PH_OPT_MIGRATE_NS_2M), t->migrate_ns_call);
        return;
    }
    probe_move(m);
    if (m->move_errno) {
        say(m, "migration: move_pages refused (%s); keeping the model",
            strerror(m->move_errno));
        return;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j)
                measure_pair(m, i, j);
    if (m->ncalls > 0) {
        t->migrate_ns_call = median(m->call_ns, m->ncalls);
        say(m, "migration: %.0f ns per move_pages call (median of %d "
            "pairs)", t->migrate_ns_call, m->ncalls);
    }
}

/* Options, with zero fields taken from the tunables, checked. */
static int resolve_opts(const ph_measure_opts *in, ph_measure_opts *o)
{
    *o = in ? *in : (ph_measure_opts){0};
    if (!o->chase_bytes)
        o->chase_bytes = (uint64_t)ph_opt_int(PH_OPT_MEASURE_BYTES);
    if (!o->pages_4k)
        o->pages_4k = (int)ph_opt_int(PH_OPT_MEASURE_PAGES);
    if (!o->pages_2m)
        o->pages_2m = o->pages_4k / 64 > 2 ? o->pages_4k / 64 : 2;
    if (o->chase_bytes < (64u << 10) || o->chase_bytes > ((uint64_t)16 << 30))
        return ph_fail(EINVAL, "measure: chase buffer of %llu bytes: must "
                       "be 64K..16G", (unsigned long long)o->chase_bytes);
    if (o->pages_4k < 2 || o->pages_4k > (1 << 20))
        return ph_fail(EINVAL, "measure: %d 4K pages: must be 2..1048576",
                       o->pages_4k);
    if (o->pages_2m < 1 || o->pages_2m > 4096)
        return ph_fail(EINVAL, "measure: %d 2M pages: must be 1..4096",
                       o->pages_2m);
    o->chase_bytes &= ~(uint64_t)(PAGE_4K_BYTES - 1);
    return 0;
}

static int save(const measure *m, const char *path)
{
    ph_jw w;
    ph_jw_init(&w, 1);
    ph_topo_to_json(m->t, &w);
    int rc = ph_jw_write_file(&w, path);
    ph_jw_free(&w);
    return rc;
}

int ph_topo_measure(ph_topology *t, const ph_measure_opts *opts,
                    const char *save_path)
{
    measure *m;

    if (t->synthetic)
        return ph_fail(EINVAL, "measure: needs the real machine's topology "
                       "(this one is synthetic: %s)", t->source);
    m = calloc(1, sizeof *m);
    if (!m)
        return ph_fail(ENOMEM, "measure: out of memory");
    m->t = t;
    if (resolve_opts(opts, &m->o) || save_affinity(m)) {
        free(m);
        return -1;
    }
    double t0 = (double)ph_now_ns();
    say(m, "%d node(s), %llu MiB pointer chase, %d x 4K and %d x 2M pages "
        "per pair", t->nnodes, (unsigned long long)(m->o.chase_bytes >> 20),
        m->o.pages_4k, m->o.pages_2m);
    ph_topo_model_latency(t);
    measure_latency(m);
    measure_migration(m);
    restore_affinity(m);
    t->measured = 1;
    say(m, "done in %.1f s", ((double)ph_now_ns() - t0) / 1e9);
    int rc = save_path ? save(m, save_path) : 0;
    free(m);
    return rc;
}
