/*
 * guest_place.c -- the placement allocator on a real NUMA kernel (run
 * inside the 4-node guest by numa-guest/suite.sh).  It doubles as the
 * demo: one line per policy with the pages each node got.
 *
 *   1. Every policy at 4 KiB (64 pages) and the spreading ones with THP
 *      2 MiB pages: allocated, touched by the main thread (so the lazy
 *      bindings decide) -- first touch by one thread pinned to a CPU of
 *      each node, each touching its share -- then move_pages(2) page by
 *      page must agree with the plan for every 4 KiB page;
 *   2. ph_place on a static array the main thread already touched: the
 *      pages move to the plan's nodes, the data stays;
 *   3. ph_place of an untouched static array: bound, lands right when
 *      touched;
 *   4. affinity ranges of a block array;
 *   5. hugetlbfs (when the pools can be set here): a node without a pool
 *      fails with ENOMEM naming the node, a node with one gets the pages,
 *      and the pool is checked per node.
 * Exits 77 on a machine with fewer than 2 nodes.
 */
#include "../unit/check.h"

#include "api/settings.h"
#include "pagehome.h"
#include "place/plan.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#define P4K ((size_t)4096)
#define P2M ((size_t)2 << 20)

static const ph_topology_t *topo;
static int nnodes;

/* The plan defaults ph_alloc and ph_place use: the tunables, read now. */
static const ph_plan_defaults *defaults(void)
{
    static ph_place_cfg cfg;
    ph_settings_place(&cfg);
    return &cfg.plan;
}

/* Pages of each node index as text: "n0=16 n1=16 ...". */
static void counts_text(const int *st, size_t n, char *buf, size_t len)
{
    size_t cnt[PH_MAX_NODES + 1] = {0};
    for (size_t i = 0; i < n; i++) {
        int idx = -1;
        for (int k = 0; k < nnodes; k++)
            if (ph_topology_node(topo, k) == st[i])
                idx = k;
        cnt[idx < 0 ? PH_MAX_NODES : idx]++;
    }
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < nnodes && used < len; k++)
        used += (size_t)snprintf(buf + used, len - used, "n%d=%-4zu ",
                                 ph_topology_node(topo, k), cnt[k]);
    if (cnt[PH_MAX_NODES] && used < len)
        snprintf(buf + used, len - used, "none=%zu", cnt[PH_MAX_NODES]);
}

/* Compare the homes of [p, p+bytes) with want (per page of page_bytes);
 * print the line of the demo. */
static void compare(const char *name, const void *p, size_t bytes,
                    size_t page_bytes, const int *want)
{
    size_t n = (bytes + P4K - 1) / P4K, sub = page_bytes / P4K;
    int *st = malloc(n * sizeof *st);
    int rc = ph_query(p, bytes, st);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        if (st[i] != want[i / sub] && bad++ < 4)
            fprintf(stderr, "  %s: 4 KiB page %zu is on %d, the plan says "
                    "%d\n", name, i, st[i], want[i / sub]);
    char line[512];
    counts_text(st, n, line, sizeof line);
    printf("guest_place: %-16s %s %s\n", name, line,
           rc == 0 && bad == 0 ? "ok" : "MISMATCH");
    CHECK_EQ(rc, 0);
    CHECK_EQ(bad, 0);
    free(st);
}

typedef struct toucher {
    char *p;
    size_t bytes;
    int cpu;
    int ok;
} toucher;

static void *touch_pinned(void *v)
{
    toucher *t = v;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(t->cpu, &set);
    t->ok = sched_setaffinity(0, sizeof set, &set) == 0;
    if (t->ok)
        memset(t->p, 0x5a, t->bytes);
    return NULL;
}

/* First touch: node k's share touched by a thread on a CPU of node k. */
static int touch_by_nodes(char *p, size_t page_bytes, int *want,
                          size_t npages)
{
    pthread_t th[PH_MAX_NODES];
    toucher t[PH_MAX_NODES];
    int nt = 0;
    for (int k = 0; k < nnodes; k++) {
        size_t first = npages * (size_t)k / (size_t)nnodes;
        size_t last = npages * (size_t)(k + 1) / (size_t)nnodes;
        int cpu;
        if (ph_topology_node_cpus(topo, ph_topology_node(topo, k), &cpu, 1) < 1)
            return -1; /* a memory-only node: cannot touch from it */
        for (size_t i = first; i < last; i++)
            want[i] = ph_topology_node(topo, k);
        t[nt] = (toucher){p + first * page_bytes,
                          (last - first) * page_bytes, cpu, 0};
        pthread_create(&th[nt], NULL, touch_pinned, &t[nt]);
        nt++;
    }
    int ok = 1;
    for (int k = 0; k < nt; k++) {
        pthread_join(th[k], NULL);
        ok &= t[k].ok;
    }
    return ok ? 0 : -1;
}

static void run_policy(const char *text, size_t npages)
{
    ph_placement_t pl;
    if (ph_placement_parse(&pl, text) != 0) {
        fprintf(stderr, "  %s\n", ph_last_error());
        CHECK(0);
        return;
    }
    ph_plan plan;
    /* (A range, so that block-static without elems validates too.) */
    if (ph_plan_make_range(&plan, &pl, (const ph_topology *)topo, defaults(), P4K) != 0) {
        fprintf(stderr, "  %s: %s\n", text, ph_last_error());
        CHECK(0);
        return;
    }
    size_t P = plan.page_bytes;
    size_t bytes = npages * P;
    ph_plan_release(&plan);
    char *p = ph_alloc(bytes, &pl);
    if (!p) {
        fprintf(stderr, "  %s: ph_alloc: %s\n", text, ph_last_error());
        CHECK(0);
        return;
    }
    /* The plan as the allocator made it (block-static takes the size). */
    CHECK_EQ(ph_plan_make_range(&plan, &pl, (const ph_topology *)topo,
                                defaults(), bytes), 0);
    int *want = malloc(npages * sizeof *want);
    if (pl.policy == PH_POLICY_FIRST_TOUCH) {
        if (touch_by_nodes(p, P, want, npages) != 0) {
            printf("guest_place: %-16s skipped (cannot pin threads)\n", text);
            free(want);
            ph_free(p);
            return;
        }
    } else {
        ph_plan_nodes(&plan, (uintptr_t)p, npages, want);
        memset(p, 1, bytes);
    }
    compare(text, p, bytes, P, want);
    ph_plan_release(&plan);
    free(want);
    CHECK_EQ(ph_free(p), 0);
}

/* Lazy interleave depends on where the kernel's sequence starts in each
 * mapping: several blocks in a row, odd sizes, a subset of the nodes. */
static void interleave_many(void)
{
    int sub[2] = {ph_topology_node(topo, nnodes - 2),
                  ph_topology_node(topo, nnodes - 1)};
    char *keep[6];
    int bad = 0;
    for (int k = 0; k < 6; k++) {
        ph_placement_t pl;
        ph_placement_parse(&pl, "interleave@4K");
        if (k % 2) {
            pl.nodes = sub;
            pl.nnodes = 2;
        }
        size_t np = 7 + (size_t)k * 5, n = k % 2 ? 2 : (size_t)nnodes;
        keep[k] = ph_alloc(np * P4K, &pl);
        if (!keep[k]) {
            bad++;
            continue;
        }
        memset(keep[k], 1, np * P4K);
        int st[64];
        ph_query(keep[k], np * P4K, st);
        for (size_t i = 0; i < np; i++) {
            int want = k % 2 ? sub[i % n] : ph_topology_node(topo, (int)(i % n));
            if (st[i] != want && bad++ < 4)
                fprintf(stderr, "  interleave block %d page %zu: on %d, want "
                        "%d\n", k, i, st[i], want);
        }
    }
    printf("guest_place: interleave x6      %s\n", bad ? "MISMATCH" : "ok");
    CHECK_EQ(bad, 0);
    for (int k = 0; k < 6; k++)
        ph_free(keep[k]);
}

static char touched[64 * 4096] __attribute__((aligned(4096)));
static char untouched[64 * 4096] __attribute__((aligned(4096)));

static void place_static(void)
{
    for (size_t i = 0; i < sizeof touched; i++)
        touched[i] = (char)(i * 13);
    const char *pols[] = {"interleave", "block", "cyclic:2", "random:5"};
    int want[64];
    for (int k = 0; k < 4; k++) {
        ph_placement_t pl;
        ph_placement_parse(&pl, pols[k]);
        pl.page_bytes = P4K;
        int st[64];
        int rc = ph_place(touched, sizeof touched, &pl, st);
        CHECK_EQ(rc, 0);
        if (rc != 0)
            fprintf(stderr, "  ph_place %s: %d (%s)\n", pols[k], rc,
                    ph_last_error());
        ph_plan plan;
        ph_plan_make(&plan, &pl, (const ph_topology *)topo, defaults());
        ph_plan_nodes(&plan, (uintptr_t)touched, 64, want);
        char name[64];
        snprintf(name, sizeof name, "place %s", pols[k]);
        compare(name, touched, sizeof touched, P4K, want);
    }
    int ok = 1;
    for (size_t i = 0; i < sizeof touched; i++)
        ok &= touched[i] == (char)(i * 13);
    CHECK(ok);

    /* Untouched: bound now, placed at the first touch. */
    ph_placement_t pl;
    ph_placement_parse(&pl, "block@4K");
    int st[64];
    CHECK_EQ(ph_place(untouched, sizeof untouched, &pl, st), 0);
    CHECK_EQ(st[0], -ENOENT);
    memset(untouched, 1, sizeof untouched);
    ph_plan plan;
    ph_plan_make(&plan, &pl, (const ph_topology *)topo, defaults());
    ph_plan_nodes(&plan, (uintptr_t)untouched, 64, want);
    compare("place untouched", untouched, sizeof untouched, P4K, want);
}

static void affinity(void)
{
    ph_placement_t pl;
    ph_placement_parse(&pl, "block@4K");
    size_t n = (size_t)nnodes * 4096;
    double *d = ph_alloc(n * sizeof *d, &pl);
    CHECK(d != NULL);
    if (!d)
        return;
    memset(d, 0, n * sizeof *d);
    for (int k = 0; k < nnodes; k++) {
        size_t b = 0, e = 0;
        CHECK_EQ(ph_affinity_range(d, sizeof *d, n, ph_topology_node(topo, k),
                                   &b, &e), 0);
        CHECK_EQ(b, (size_t)k * 4096);
        CHECK_EQ(e, (size_t)(k + 1) * 4096);
    }
    ph_free(d);
}

/* 2 MiB hugetlbfs pool of a node: set it, 0 or -1. */
static int set_pool(int node, long pages)
{
    char path[128], buf[32];
    snprintf(path, sizeof path,
             "/sys/devices/system/node/node%d/hugepages/hugepages-2048kB/"
             "nr_hugepages", node);
    int fd = open(path, O_WRONLY);
    if (fd < 0)
        return -1;
    int n = snprintf(buf, sizeof buf, "%ld\n", pages);
    int ok = write(fd, buf, (size_t)n) == n;
    close(fd);
    return ok ? 0 : -1;
}

static void hugetlbfs(void)
{
    int n0 = ph_topology_node(topo, 0), n1 = ph_topology_node(topo, 1);
    if (set_pool(n0, 0) != 0 || set_pool(n1, 4) != 0) {
        printf("guest_place: hugetlbfs skipped (cannot set the pools)\n");
        return;
    }
    CHECK_EQ(ph_config_set("huge_source", "hugetlbfs"), 0);
    char text[32];
    ph_placement_t pl;
    snprintf(text, sizeof text, "node:%d@2M", n0);
    ph_placement_parse(&pl, text);
    errno = 0;
    CHECK(ph_alloc(P2M, &pl) == NULL);
    CHECK_EQ(errno, ENOMEM);
    char want[128];
    snprintf(want, sizeof want, "hugetlbfs pool on node %d has 0 free 2 MiB "
             "pages, need 1", n0);
    CHECK_MSG(want);
    printf("guest_place: hugetlbfs empty pool: %s\n", ph_last_error());

    snprintf(text, sizeof text, "node:%d@2M", n1);
    ph_placement_parse(&pl, text);
    char *p = ph_alloc(3 * P2M, &pl);
    CHECK(p != NULL);
    if (p) {
        int w[3] = {n1, n1, n1};
        compare("hugetlbfs node", p, 3 * P2M, P2M, w);
        CHECK(ph_alloc(2 * P2M, &pl) == NULL);
        snprintf(want, sizeof want, "hugetlbfs pool on node %d has 1 free",
                 n1);
        CHECK_MSG(want);
        CHECK_EQ(ph_free(p), 0);
    }
    CHECK_EQ(ph_config_set("huge_source", "thp"), 0);
    set_pool(n1, 0);
}

int main(void)
{
    if (ph_init() != 0) {
        fprintf(stderr, "guest_place: %s\n", ph_last_error());
        return 1;
    }
    topo = ph_machine_topology();
    nnodes = ph_topology_nnodes(topo);
    if (nnodes < 2) {
        printf("guest_place: %d node(s): needs at least 2\n", nnodes);
        return 77;
    }
    char last[32];
    snprintf(last, sizeof last, "node:%d", ph_topology_node(topo, nnodes - 1));
    char last2m[40];
    snprintf(last2m, sizeof last2m, "%s@2M", last);

    const char *p4k[] = {"first-touch@4K", "interleave@4K", "cyclic:3@4K",
                         "block@4K", "block-static@4K", "random:11@4K"};
    for (size_t i = 0; i < sizeof p4k / sizeof p4k[0]; i++)
        run_policy(p4k[i], 64);
    char last4k[40];
    snprintf(last4k, sizeof last4k, "%s@4K", last);
    run_policy(last4k, 64);

    const char *p2m[] = {"first-touch@2M", "interleave@2M", "cyclic:1@2M",
                         "block@2M", "random:3@2M"};
    size_t n2m = (size_t)nnodes * 2;
    for (size_t i = 0; i < sizeof p2m / sizeof p2m[0]; i++)
        run_policy(p2m[i], n2m);
    run_policy(last2m, n2m);

    interleave_many();
    place_static();
    affinity();
    hugetlbfs();
    return check_summary("guest_place");
}
