/*
 * test_alloc.c -- the placement allocator on the simulated machine:
 * ph_alloc with every policy (and where each page really went), ph_place
 * on static and heap memory, affinity ranges, ph_query / histogram /
 * ph_move, hugetlbfs pools, bad input, the registry under load and under
 * threads.
 *
 * The machine: 4 nodes of one CPU, a hugetlbfs pool of 4 pages on node 1
 * only.  Set in main() before the first pagehome call.
 */
#include "check.h"

#include "api/settings.h"
#include "machine/machine.h"
#include "os/os.h"
#include "pagehome.h"
#include "place/alloc.h"
#include "place/place.h"
#include "place/plan.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define P4K ((size_t)4096)
#define P2M ((size_t)2 << 20)

/* The plan defaults ph_alloc uses: the tunables, read now. */
static const ph_plan_defaults *defaults(void)
{
    static ph_place_cfg cfg;
    ph_settings_place(&cfg);
    return &cfg.plan;
}

static ph_placement_t req(const char *text)
{
    ph_placement_t pl;
    int rc = ph_placement_parse(&pl, text);
    CHECK_EQ(rc, 0);
    if (rc != 0)
        ph_placement_init(&pl, PH_POLICY_FIRST_TOUCH);
    return pl;
}

/* Homes of the 4 KiB pages of [p, p + bytes) into a fresh array. */
static int *homes(const void *p, size_t bytes, size_t *npages)
{
    size_t n = (bytes + P4K - 1) / P4K;
    int *st = calloc(n, sizeof *st);
    ph_query(p, bytes, st);
    *npages = n;
    return st;
}

/* Every 4 KiB page of p is on want[page / (page_bytes/4K)]. */
static void expect_homes(const char *what, const void *p, size_t bytes,
                         size_t page_bytes, const int *want)
{
    size_t n;
    int *st = homes(p, bytes, &n);
    size_t sub = page_bytes / P4K;
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        if (st[i] != want[i / sub]) {
            if (bad++ < 4)
                fprintf(stderr, "  %s: 4K page %zu on %d, want %d\n", what,
                        i, st[i], want[i / sub]);
        }
    }
    CHECK_EQ(bad, 0);
    free(st);
}

static void fill(void *p, size_t bytes, unsigned seed)
{
    unsigned char *c = p;
    for (size_t i = 0; i < bytes; i++)
        c[i] = (unsigned char)(seed + i * 7);
}

static int intact(const void *p, size_t bytes, unsigned seed)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < bytes; i++)
        if (c[i] != (unsigned char)(seed + i * 7))
            return 0;
    return 1;
}

/* ------------------------------------------------------------------ */
/* ph_alloc, policy by policy                                          */
/* ------------------------------------------------------------------ */

static void test_interleave_cyclic_block(void)
{
    /* Interleave (lazy): page 0 of a block is on the first node. */
    ph_placement_t pl = req("interleave@4K");
    size_t bytes = 64 * P4K;
    char *p = ph_alloc(bytes, &pl);
    CHECK(p != NULL);
    if (!p)
        return;
    CHECK_EQ((uintptr_t)p % P4K, 0);
    CHECK_EQ(ph_alloc_size(p), bytes);
    CHECK_EQ(ph_alloc_page_bytes(p), P4K);
    int want[64];
    /* Nothing touched yet: nothing resident (but page 0 may be the page
     * the allocator probed the kernel's interleave sequence with). */
    int st[64];
    int absent = ph_query(p, bytes, st);
    CHECK(absent == 64 || absent == 63);
    CHECK_EQ(st[5], -ENOENT);
    for (size_t i = 0; i < 64; i++)
        CHECK_EQ(p[i * P4K], 0); /* zeroed (reads fault nothing) */
    memset(p, 1, bytes);          /* first touch by the main thread */
    for (int i = 0; i < 64; i++)
        want[i] = i % 4;
    expect_homes("interleave", p, bytes, P4K, want);
    size_t hist[4];
    CHECK_EQ(ph_node_histogram(p, bytes, hist, 4), 64);
    for (int k = 0; k < 4; k++)
        CHECK_EQ(hist[k], 16);
    CHECK_EQ(ph_free(p), 0);

    /* Interleave over {1,3}, then over {3,1} (custom order: eager). */
    int sub[] = {1, 3};
    pl.nodes = sub;
    pl.nnodes = 2;
    p = ph_alloc(10 * P4K, &pl);
    CHECK(p != NULL);
    memset(p, 1, 10 * P4K);
    for (int i = 0; i < 10; i++)
        want[i] = sub[i % 2];
    expect_homes("interleave{1,3}", p, 10 * P4K, P4K, want);
    ph_free(p);
    int rev[] = {3, 1};
    pl.nodes = rev;
    p = ph_alloc(10 * P4K, &pl);
    CHECK(p != NULL);
    for (int i = 0; i < 10; i++)
        want[i] = rev[i % 2];
    expect_homes("interleave{3,1}", p, 10 * P4K, P4K, want); /* untouched */
    ph_free(p);

    /* Cyclic:2 (eager: resident at once). */
    pl = req("cyclic:2@4K");
    p = ph_alloc(20 * P4K - 100, &pl);
    CHECK(p != NULL);
    for (int i = 0; i < 20; i++)
        want[i] = (i / 2) % 4;
    expect_homes("cyclic:2", p, 20 * P4K - 100, P4K, want);
    CHECK_EQ(ph_alloc_size(p), 20 * P4K - 100);
    ph_free(p);

    /* Block: 10 pages over 4 nodes -> 3, 2, 3, 2 (lazy). */
    pl = req("block@4K");
    p = ph_alloc(10 * P4K, &pl);
    CHECK(p != NULL);
    memset(p, 2, 10 * P4K);
    {
        static const int w[] = {0, 0, 0, 1, 1, 2, 2, 2, 3, 3};
        expect_homes("block", p, 10 * P4K, P4K, w);
    }
    ph_free(p);

    /* Single node (lazy). */
    pl = req("node:2@4K");
    p = ph_alloc(5 * P4K + 1, &pl);
    CHECK(p != NULL);
    memset(p, 3, 5 * P4K + 1);
    for (int i = 0; i < 6; i++)
        want[i] = 2;
    expect_homes("node:2", p, 5 * P4K + 1, P4K, want);
    ph_free(p);
}

static void test_random_static(void)
{
    const ph_topology_t *topo = ph_machine_topology();
    ph_placement_t pl = req("random:7@4K");
    size_t bytes = 200 * P4K;
    char *p = ph_alloc(bytes, &pl);
    CHECK(p != NULL);
    if (!p)
        return;
    ph_plan plan;
    CHECK_EQ(ph_plan_make(&plan, &pl, topo, defaults()), 0);
    int want[200];
    ph_plan_nodes(&plan, (uintptr_t)p, 200, want);
    expect_homes("random:7", p, bytes, P4K, want);
    /* Same seed, another block: the same placement page by page. */
    char *q = ph_alloc(bytes, &pl);
    expect_homes("random:7 again", q, bytes, P4K, want);
    ph_free(q);
    ph_free(p);

    /* Block-static: 4096 doubles over 4 threads (block binding). */
    ph_placement_init(&pl, PH_POLICY_BLOCK_STATIC);
    pl.page_bytes = P4K;
    pl.elems = 4096;
    pl.elem_bytes = 8;
    pl.nthreads = 4;
    double *d = ph_alloc(4096 * sizeof(double), &pl);
    CHECK(d != NULL);
    {
        static const int w[] = {0, 0, 1, 1, 2, 2, 3, 3};
        expect_homes("block-static", d, 4096 * 8, P4K, w);
    }
    /* Rows are where their threads are: thread t's rows [t*1024, ...). */
    size_t b = 0, e = 0;
    CHECK_EQ(ph_affinity_range(d, 8, 4096, 2, &b, &e), 0);
    CHECK_EQ(b, 2048);
    CHECK_EQ(e, 3072);
    ph_free(d);

    /* T=5 threads over nodes {0,1,2,0,1}, N=1003 of 16 bytes: pages go to
     * 0,1,0,1 (see test_plan for the arithmetic). */
    static const int tn[] = {0, 1, 2, 0, 1};
    pl.elems = 1003;
    pl.elem_bytes = 16;
    pl.nthreads = 5;
    pl.thread_node = tn;
    char *s = ph_alloc(1003 * 16, &pl);
    CHECK(s != NULL);
    {
        static const int w[] = {0, 1, 0, 1};
        expect_homes("block-static T=5", s, 1003 * 16, P4K, w);
    }
    /* Affinity from the plan: node 0 owns pages 0 and 2 (256 elements
     * each: the first wins), node 1 pages 1 and 3 (256 and 235). */
    CHECK_EQ(ph_affinity_range(s, 16, 1003, 0, &b, &e), 0);
    CHECK_EQ(b, 0);
    CHECK_EQ(e, 256);
    CHECK_EQ(ph_affinity_range(s, 16, 1003, 1, &b, &e), 0);
    CHECK_EQ(b, 256);
    CHECK_EQ(e, 512);
    errno = 0;
    CHECK_EQ(ph_affinity_range(s, 16, 1003, 3, &b, &e), -1);
    CHECK_EQ(errno, ENOENT);
    CHECK_MSG("no element of the array is on node 3");
    ph_free(s);

    /* An array larger than the block. */
    pl.elems = 1000;
    pl.elem_bytes = 8;
    errno = 0;
    CHECK(ph_alloc(4000, &pl) == NULL);
    CHECK_EQ(errno, EINVAL);
    CHECK_MSG("does not fit in 4000 bytes");
}

typedef struct ft_arg {
    char *p;
    int node;
    size_t bytes;
    int ok;
} ft_arg;

static void *first_toucher(void *v)
{
    ft_arg *a = v;
    if (ph_thread_set_node(a->node) != 0)
        return NULL;
    memset(a->p, 0x5a, a->bytes);
    /* On the simulated machine the toucher's own look settles the home. */
    size_t n;
    int *st = homes(a->p, a->bytes, &n);
    a->ok = 1;
    for (size_t i = 0; i < n; i++)
        a->ok &= st[i] == a->node;
    free(st);
    ph_thread_set_node(-1);
    return NULL;
}

static void test_first_touch(void)
{
    ph_placement_t pl = req("first-touch@4K");
    size_t bytes = 16 * P4K;
    char *p = ph_alloc(bytes, &pl);
    CHECK(p != NULL);
    if (!p)
        return;
    pthread_t th[4];
    ft_arg args[4];
    for (int k = 0; k < 4; k++) {
        args[k] = (ft_arg){p + (size_t)k * 4 * P4K, 3 - k, 4 * P4K, 0};
        pthread_create(&th[k], NULL, first_toucher, &args[k]);
    }
    for (int k = 0; k < 4; k++) {
        pthread_join(th[k], NULL);
        CHECK(args[k].ok);
    }
    int want[16];
    for (int i = 0; i < 16; i++)
        want[i] = 3 - i / 4;
    expect_homes("first-touch", p, bytes, P4K, want);

    /* Affinity from the homes: 21 elements of 3000 bytes over pages 0-5
     * on node 0 and 6-15 on node 1 (touched by two threads): element 8
     * (bytes 24000-26999) straddles the two and is local to neither. */
    char *q = ph_alloc(bytes, &pl);
    ft_arg a0 = {q, 0, 6 * P4K, 0}, a1 = {q + 6 * P4K, 1, 10 * P4K, 0};
    pthread_create(&th[0], NULL, first_toucher, &a0);
    pthread_join(th[0], NULL);
    pthread_create(&th[1], NULL, first_toucher, &a1);
    pthread_join(th[1], NULL);
    size_t b = 99, e = 99;
    CHECK_EQ(ph_affinity_range(q, 3000, 21, 0, &b, &e), 0);
    CHECK_EQ(b, 0);
    CHECK_EQ(e, 8);
    CHECK_EQ(ph_affinity_range(q, 3000, 21, 1, &b, &e), 0);
    CHECK_EQ(b, 9);
    CHECK_EQ(e, 21);
    CHECK_EQ(ph_affinity_range(q, 3000, 21, 2, &b, &e), -1);
    CHECK_EQ(errno, ENOENT);
    /* node -1: the calling thread's node. */
    CHECK_EQ(ph_thread_set_node(1), 0);
    CHECK_EQ(ph_affinity_range(q, 3000, 21, -1, &b, &e), 0);
    CHECK_EQ(b, 9);
    CHECK_EQ(ph_thread_set_node(-1), 0);
    ph_free(q);
    ph_free(p);
}

static void test_huge_thp(void)
{
    /* Interleave with 2 MiB pages: eager, page j on node j % 4. */
    ph_placement_t pl = req("interleave@2M");
    size_t bytes = 6 * P2M;
    char *p = ph_alloc(bytes, &pl);
    CHECK(p != NULL);
    if (!p)
        return;
    CHECK_EQ((uintptr_t)p % P2M, 0);
    CHECK_EQ(ph_alloc_page_bytes(p), P2M);
    static const int w[] = {0, 1, 2, 3, 0, 1};
    expect_homes("interleave@2M", p, bytes, P2M, w);
    ph_free(p);

    /* Block with 2 MiB pages (lazy), odd size. */
    pl = req("block@2M");
    bytes = 4 * P2M - 5;
    p = ph_alloc(bytes, &pl);
    CHECK(p != NULL);
    memset(p, 1, bytes);
    static const int wb[] = {0, 1, 2, 3};
    expect_homes("block@2M", p, bytes, P2M, wb);
    ph_free(p);

    /* Tunable pagesize=2M applies when the request leaves it 0. */
    CHECK_EQ(ph_config_set("pagesize", "2M"), 0);
    pl = req("cyclic:1");
    p = ph_alloc(100, &pl);
    CHECK(p != NULL);
    CHECK_EQ(ph_alloc_page_bytes(p), P2M);
    ph_free(p);
    CHECK_EQ(ph_config_set("pagesize", "4K"), 0);
}

static void test_hugetlbfs(void)
{
    CHECK_EQ(ph_config_set("huge_source", "hugetlbfs"), 0);
    ph_placement_t pl = req("node:0@2M");
    errno = 0;
    CHECK(ph_alloc(P2M, &pl) == NULL);
    CHECK_EQ(errno, ENOMEM);
    CHECK_MSG("ph_alloc: hugetlbfs pool on node 0 has 0 free 2 MiB pages, "
              "need 1");

    /* Node 1 has 4. */
    pl = req("node:1@2M");
    char *a = ph_alloc(3 * P2M, &pl);
    CHECK(a != NULL);
    static const int w1[] = {1, 1, 1};
    if (a)
        expect_homes("hugetlbfs node:1", a, 3 * P2M, P2M, w1);
    CHECK(ph_alloc(2 * P2M, &pl) == NULL);
    CHECK_MSG("hugetlbfs pool on node 1 has 1 free 2 MiB pages, need 2");
    char *b = ph_alloc(P2M, &pl);
    CHECK(b != NULL);
    CHECK_EQ(ph_free(a), 0); /* gives its 3 pages back */
    a = ph_alloc(3 * P2M, &pl);
    CHECK(a != NULL);
    ph_free(a);
    ph_free(b);

    /* Interleave needs pages on every node: node 0 has none. */
    pl = req("interleave@2M");
    CHECK(ph_alloc(4 * P2M, &pl) == NULL);
    CHECK_MSG("hugetlbfs pool on node 0 has 0 free");

    /* First touch: any node's pool will do, 4 in all. */
    pl = req("first-touch@2M");
    CHECK(ph_alloc(5 * P2M, &pl) == NULL);
    CHECK_MSG("hugetlbfs pools of all nodes have 4 free 2 MiB pages, need 5");
    a = ph_alloc(4 * P2M, &pl);
    CHECK(a != NULL);
    ph_free(a);

    /* huge_fallback: 4 KiB pages instead of failing. */
    CHECK_EQ(ph_config_set("huge_fallback", "1"), 0);
    pl = req("node:0@2M");
    a = ph_alloc(P2M, &pl);
    CHECK(a != NULL);
    CHECK_EQ(ph_alloc_page_bytes(a), P4K);
    if (a) {
        memset(a, 1, P2M);
        int w[512];
        for (int i = 0; i < 512; i++)
            w[i] = 0;
        expect_homes("fallback", a, P2M, P4K, w);
    }
    ph_free(a);
    CHECK_EQ(ph_config_set("huge_fallback", "0"), 0);
    CHECK_EQ(ph_config_set("huge_source", "thp"), 0);
}

/* ------------------------------------------------------------------ */
/* Bad input                                                           */
/* ------------------------------------------------------------------ */

static void test_bad_input(void)
{
    size_t before = ph_registry_count();
    ph_placement_t pl = req("interleave");

    errno = 0;
    CHECK(ph_alloc(0, &pl) == NULL);
    CHECK_EQ(errno, EINVAL);
    CHECK_MSG("ph_alloc: size 0");
    CHECK(ph_alloc((size_t)1 << 49, &pl) == NULL);
    CHECK_EQ(errno, EINVAL);
    CHECK_MSG("larger than the limit");
    CHECK(ph_alloc(SIZE_MAX, &pl) == NULL);
    CHECK_EQ(errno, EINVAL);

    int bad[] = {0, 7};
    pl.nodes = bad;
    pl.nnodes = 2;
    CHECK(ph_alloc(P4K, &pl) == NULL);
    CHECK_EQ(errno, EINVAL);
    CHECK_MSG("ph_alloc: nodes[1]: node 7 is not a node of this machine "
              "(nodes 0-3)");
    pl = req("interleave");
    pl.page_bytes = 12345;
    CHECK(ph_alloc(P4K, &pl) == NULL);
    CHECK_MSG("ph_alloc: page size 12345 is not 4K or 2M");
    pl = req("node:9");
    CHECK(ph_alloc(P4K, &pl) == NULL);
    CHECK_MSG("node 9 is not a node of this machine");
    pl.policy = (ph_policy_t)99;
    CHECK(ph_alloc(P4K, &pl) == NULL);
    CHECK_MSG("policy 99");

    /* An unknown policy name in the tunable. */
    CHECK_EQ(ph_config_set("placement", "cyclc:4"), 0);
    CHECK(ph_alloc(P4K, NULL) == NULL);
    CHECK_EQ(errno, EINVAL);
    CHECK_MSG("unknown policy \"cyclc\"");
    CHECK_EQ(ph_config_set("placement", "block"), 0);
    char *p = ph_alloc(8 * P4K, NULL);
    CHECK(p != NULL);
    memset(p, 1, 8 * P4K);
    static const int wb[] = {0, 0, 1, 1, 2, 2, 3, 3};
    expect_homes("tunable block", p, 8 * P4K, P4K, wb);
    ph_free(p);
    CHECK_EQ(ph_config_set("placement", "first-touch"), 0);

    CHECK_EQ(ph_registry_count(), before);

    /* Queries and moves. */
    int st[4];
    CHECK_EQ(ph_query(NULL, 10, st), -1);
    CHECK_MSG("ph_query: addr is NULL");
    CHECK_EQ(ph_query(st, sizeof st, NULL), -1);
    CHECK_MSG("status is NULL");
    CHECK_EQ(ph_query(st, 0, st), 0);
    size_t h[2];
    CHECK_EQ(ph_node_histogram(st, sizeof st, NULL, 2), -1);
    CHECK_EQ(ph_node_histogram(st, sizeof st, h, -1), -1);
    void *pg[1] = {st};
    int nodes[1] = {8};
    CHECK_EQ(ph_move(1, pg, nodes, st), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_MSG("ph_move: nodes[0]: node 8 is not a node of this machine");
    CHECK_EQ(ph_move(1, NULL, nodes, st), -1);
    CHECK_EQ(ph_move(0, NULL, NULL, NULL), 0);

    /* Affinity. */
    size_t b, e;
    CHECK_EQ(ph_affinity_range(NULL, 8, 10, 0, &b, &e), -1);
    CHECK_MSG("base is NULL");
    CHECK_EQ(ph_affinity_range(st, 0, 10, 0, &b, &e), -1);
    CHECK_MSG("elem_bytes is 0");
    CHECK_EQ(ph_affinity_range(st, 4, 0, 0, &b, &e), -1);
    CHECK_MSG("elems is 0");
    CHECK_EQ(ph_affinity_range(st, 4, 4, 9, &b, &e), -1);
    CHECK_MSG("node 9 is not a node of this machine");
    CHECK_EQ(ph_affinity_range(st, 4, 4, 0, NULL, &e), -1);
    CHECK_EQ(ph_affinity_range(st, SIZE_MAX / 2, 4, 0, &b, &e), -1);
    CHECK_MSG("too large");

    /* ph_place. */
    pl = req("block");
    CHECK_EQ(ph_place(NULL, 10, &pl, NULL), -1);
    CHECK_MSG("ph_place: addr is NULL");
    CHECK_EQ(ph_place(st, 0, &pl, NULL), -1);
    CHECK_MSG("size 0");
    pl = req("block@2M");
    char *m = ph_alloc(4 * P2M, &pl);
    CHECK(m != NULL);
    CHECK_EQ(ph_place(m + P4K, P2M, &pl, NULL), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_MSG("is not 2 MiB aligned");
    ph_free(m);
}

static void test_free_errors(void)
{
    size_t before = ph_registry_count();
    ph_placement_t pl = req("cyclic:1");
    size_t bytes = 9 * P4K + 17;
    char *a = ph_alloc(bytes, &pl);
    char *b = ph_alloc(bytes, &pl);
    CHECK(a && b);
    if (!a || !b)
        return;
    fill(a, bytes, 1);
    fill(b, bytes, 2);
    CHECK_EQ(ph_registry_count(), before + 2);

    int local = 0;
    errno = 0;
    CHECK_EQ(ph_free(&local), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_MSG("ph_free: ");
    CHECK_MSG("was not returned by ph_alloc (or was already freed)");
    void *heap = malloc(64);
    CHECK_EQ(ph_free(heap), -1);
    CHECK_EQ(errno, EINVAL);
    free(heap);
    CHECK_EQ(ph_free(a + 100), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_MSG("lies inside the block at");
    CHECK_EQ(ph_free(NULL), 0);
    CHECK(intact(a, bytes, 1));
    CHECK(intact(b, bytes, 2));
    CHECK_EQ(ph_alloc_size(a + 100), 0);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(ph_alloc_size(&local), 0);
    CHECK_MSG("ph_alloc_size:");
    CHECK_EQ(ph_alloc_page_bytes(&local), 0);

    CHECK_EQ(ph_free(a), 0);
    errno = 0;
    CHECK_EQ(ph_free(a), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_MSG("was not returned by ph_alloc (or was already freed)");
    CHECK(intact(b, bytes, 2));
    CHECK_EQ(ph_alloc_size(b), bytes);
    CHECK_EQ(ph_alloc_size(a), 0);
    CHECK_EQ(ph_free(b), 0);
    CHECK_EQ(ph_registry_count(), before);

    /* A node that fills up while an eager block is placed: the block is
     * given back whole, nothing is left behind. */
    ph_machine *c = ph_machine_get();
    int64_t used3 = ph_sim_node_pages(c->os, 3);
    CHECK_EQ(ph_sim_set_node_capacity(c->os, 3, (uint64_t)used3 + 10), 0);
    pl = req("cyclic:4");
    errno = 0;
    CHECK(ph_alloc(64 * P4K, &pl) == NULL);
    CHECK_EQ(errno, ENOMEM);
    CHECK_MSG("ph_alloc: ");
    CHECK_MSG("node 3");
    CHECK_EQ(ph_registry_count(), before);
    CHECK_EQ(ph_sim_node_pages(c->os, 3), used3);
    CHECK_EQ(ph_sim_set_node_capacity(c->os, 3, 0), 0);
}

/* ------------------------------------------------------------------ */
/* ph_place on memory the program has                                  */
/* ------------------------------------------------------------------ */

static double touched[8 * 512] __attribute__((aligned(4096)));
static double untouched[8 * 512] __attribute__((aligned(4096)));
static double untouched2[8 * 512] __attribute__((aligned(4096)));
static double untouched3[8 * 512] __attribute__((aligned(4096)));

static void test_place_static(void)
{
    for (size_t i = 0; i < 8 * 512; i++)
        touched[i] = (double)i;
    size_t bytes = sizeof touched;
    int want[8], st[8];
    /* Touched by the main thread: all on node 0 now. */
    for (int i = 0; i < 8; i++)
        want[i] = 0;
    expect_homes("static before", touched, bytes, P4K, want);

    ph_placement_t pl = req("interleave@4K");
    CHECK_EQ(ph_place(touched, bytes, &pl, st), 0);
    for (int i = 0; i < 8; i++) {
        want[i] = i % 4;
        CHECK_EQ(st[i], want[i]);
    }
    expect_homes("static interleave", touched, bytes, P4K, want);

    pl = req("block");
    CHECK_EQ(ph_place(touched, bytes, &pl, st), 0);
    for (int i = 0; i < 8; i++)
        want[i] = i / 2;
    expect_homes("static block", touched, bytes, P4K, want);

    pl = req("random:3");
    CHECK_EQ(ph_place(touched, bytes, &pl, NULL), 0);
    ph_plan plan;
    CHECK_EQ(ph_plan_make(&plan, &pl, ph_machine_topology(), defaults()), 0);
    ph_plan_nodes(&plan, (uintptr_t)touched, 8, want);
    expect_homes("static random", touched, bytes, P4K, want);

    int ok = 1;
    for (size_t i = 0; i < 8 * 512; i++)
        ok &= touched[i] == (double)i;
    CHECK(ok); /* moves keep the data */

    /* First touch: forget the policy, move nothing; ask the kernel about
     * the pages only when their status is wanted (a static segment of 16
     * GiB took 0.4 s of queries at start-up for nothing) */
    ph_os *os = ph_machine_get()->os;
    ph_sim_counters c0, c1, c2;
    CHECK_EQ(ph_sim_counters_get(os, &c0), 0);
    pl = req("first-touch");
    CHECK_EQ(ph_place(touched, bytes, &pl, st), 0);
    CHECK_EQ(st[0], want[0]);
    CHECK_EQ(ph_sim_counters_get(os, &c1), 0);
    CHECK_EQ(c1.query_pages, c0.query_pages + 8);
    CHECK_EQ(ph_place(touched, bytes, &pl, NULL), 0);
    CHECK_EQ(ph_sim_counters_get(os, &c2), 0);
    CHECK_EQ(c2.query_pages, c1.query_pages);
    CHECK_EQ(c2.move_calls, c0.move_calls);
    expect_homes("static first-touch", touched, bytes, P4K, want);

    /* Untouched, lazy plan: bound, -ENOENT, placed when touched. */
    pl = req("block");
    CHECK_EQ(ph_place(untouched, sizeof untouched, &pl, st), 0);
    CHECK_EQ(st[0], -ENOENT);
    CHECK_EQ(st[7], -ENOENT);
    memset(untouched, 1, sizeof untouched);
    for (int i = 0; i < 8; i++)
        want[i] = i / 2;
    expect_homes("untouched block", untouched, sizeof untouched, P4K, want);

    /* Untouched, eager plan: faulted in on the right nodes now. */
    pl = req("cyclic:3");
    CHECK_EQ(ph_place(untouched2, sizeof untouched2, &pl, st), 0);
    for (int i = 0; i < 8; i++) {
        want[i] = (i / 3) % 4;
        CHECK_EQ(st[i], want[i]);
    }
    expect_homes("untouched cyclic", untouched2, sizeof untouched2, P4K,
                 want);

    /* The same with bind_untouched (transparent mode's static segments):
     * nothing faulted in now, the pages bound as an interleave over the
     * plan's nodes; placed at their first touch, spread */
    ph_place_cfg cfg;
    ph_settings_place(&cfg);
    cfg.bind_untouched = 1;
    CHECK_EQ(ph_sim_counters_get(os, &c0), 0);
    pl = req("random:5");
    CHECK_EQ(ph_place_range(ph_machine_get(), &cfg, untouched3, sizeof untouched3, &pl, st), 0);
    for (int i = 0; i < 8; i++)
        CHECK_EQ(st[i], -ENOENT);
    CHECK_EQ(ph_sim_counters_get(os, &c1), 0);
    CHECK_EQ(c1.populated_pages, c0.populated_pages);
    CHECK_EQ(c1.move_calls, c0.move_calls);
    memset(untouched3, 1, sizeof untouched3);
    size_t n;
    int *h = homes(untouched3, sizeof untouched3, &n);
    int seen_on[4] = {0}, distinct = 0;
    for (size_t i = 0; i < n; i++)
        if (h[i] >= 0 && h[i] < 4 && !seen_on[h[i]]++)
            distinct++;
    CHECK_EQ(n, 8);
    CHECK_EQ(distinct, 4);
    free(h);

    /* A large range of which one page is touched, placed with no status
     * wanted: only the batch holding a touched page is asked about (a
     * 16 GiB static segment took 0.4 s of queries for pages that do not
     * exist yet); with the status wanted, every page */
    {
        const size_t big_pages = 8 * 8192; /* eight of place.c's batches */
        char *big = mmap(NULL, big_pages * P4K, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        CHECK(big != MAP_FAILED);
        if (big != MAP_FAILED) {
            big[(5 * 8192 + 10) * P4K] = 1;
            CHECK_EQ(ph_sim_counters_get(os, &c0), 0);
            pl = req("node:2");
            CHECK_EQ(ph_place(big, big_pages * P4K, &pl, NULL), 0);
            CHECK_EQ(ph_sim_counters_get(os, &c1), 0);
            /* one batch (and the mover's own look at the page it moved) */
            CHECK(c1.query_pages - c0.query_pages >= 8192 &&
                  c1.query_pages - c0.query_pages < 8192 + 8);
            int *hb = homes(big + (5 * 8192 + 10) * P4K, P4K, &n);
            CHECK(n == 1 && hb[0] == 2);
            free(hb);
            pl = req("random:7");
            CHECK_EQ(ph_sim_counters_get(os, &c1), 0);
            CHECK_EQ(ph_place_range(ph_machine_get(), &cfg, big, big_pages * P4K, &pl, NULL), 0);
            CHECK_EQ(ph_sim_counters_get(os, &c2), 0);
            CHECK(c2.query_pages - c1.query_pages >= 8192 &&
                  c2.query_pages - c1.query_pages < 8192 + 8);
            int *stb = malloc(big_pages * sizeof *stb);
            CHECK(stb != NULL);
            if (stb) {
                pl = req("node:1");
                CHECK_EQ(ph_sim_counters_get(os, &c2), 0);
                CHECK_EQ(ph_place(big, big_pages * P4K, &pl, stb), 0);
                CHECK_EQ(ph_sim_counters_get(os, &c1), 0);
                CHECK(c1.query_pages - c2.query_pages >= big_pages);
                CHECK_EQ(stb[5 * 8192 + 10], 1);
                CHECK_EQ(stb[0], -ENOENT);
                free(stb);
            }
            munmap(big, big_pages * P4K);
        }
    }

    /* A hot heap block (ph_place_alloc with bind_untouched): cyclic is
     * bound, not faulted in; its pages spread when touched */
    CHECK_EQ(ph_sim_counters_get(os, &c0), 0);
    pl = req("cyclic:1");
    char *blk = ph_place_alloc(ph_machine_get(), &cfg, 8 * P4K, &pl);
    CHECK(blk != NULL);
    if (blk) {
        CHECK_EQ(ph_sim_counters_get(os, &c1), 0);
        CHECK_EQ(c1.populated_pages, c0.populated_pages);
        memset(blk, 1, 8 * P4K);
        h = homes(blk, 8 * P4K, &n);
        memset(seen_on, 0, sizeof seen_on);
        distinct = 0;
        for (size_t i = 0; i < n; i++)
            if (h[i] >= 0 && h[i] < 4 && !seen_on[h[i]]++)
                distinct++;
        CHECK_EQ(distinct, 4);
        free(h);
        CHECK_EQ(ph_free(blk), 0);
    }
}

static void test_place_heap(void)
{
    /* A malloc'd array that does not start on a page: block-static rows
     * of 2 threads on {3, 1}, the range widened to whole pages. */
    size_t n = 3000;
    char *raw = malloc(n * 8 + 3 * P4K);
    double *arr = (double *)(((uintptr_t)raw + P4K - 1) / P4K * P4K + 1000);
    for (size_t i = 0; i < n; i++)
        arr[i] = (double)i;
    ph_placement_t pl;
    ph_placement_init(&pl, PH_POLICY_BLOCK_STATIC);
    pl.page_bytes = P4K;
    pl.elems = n;
    pl.elem_bytes = 8;
    pl.nthreads = 2;
    static const int tn[] = {3, 1};
    pl.thread_node = tn;
    int st[8];
    CHECK_EQ(ph_place(arr, n * 8, &pl, st), 0);
    /* t0 owns bytes [1000, 13000) of the widened range, t1 [13000,
     * 25000): pages 0-2 -> 3, page 3 (12288-16383: 712 vs 3384) -> 1,
     * pages 4-6 -> 1. */
    static const int want[] = {3, 3, 3, 1, 1, 1, 1};
    for (int i = 0; i < 7; i++)
        CHECK_EQ(st[i], want[i]);
    expect_homes("heap block-static", (char *)arr - 1000, 7 * P4K, P4K, want);
    int ok = 1;
    for (size_t i = 0; i < n; i++)
        ok &= arr[i] == (double)i;
    CHECK(ok);
    /* Not from ph_alloc: affinity from the homes, whole elements only. */
    size_t b, e;
    CHECK_EQ(ph_affinity_range(arr, 8, n, 3, &b, &e), 0);
    CHECK_EQ(b, 0);
    CHECK_EQ(e, (3 * P4K - 1000) / 8);
    CHECK_EQ(ph_affinity_range(arr, 8, n, 1, &b, &e), 0);
    CHECK_EQ(b, (3 * P4K - 1000) / 8);
    CHECK_EQ(e, n);
    free(raw);
}

static void test_place_on_block(void)
{
    /* Placing a ph_alloc block again updates its plan (affinity). */
    ph_placement_t pl = req("interleave");
    double *d = ph_alloc(4096 * 8, &pl);
    CHECK(d != NULL);
    if (!d)
        return;
    memset(d, 0, 4096 * 8);
    size_t b, e;
    CHECK_EQ(ph_affinity_range(d, 8, 4096, 1, &b, &e), 0);
    CHECK_EQ(b, 512); /* from the homes: page 1 */
    CHECK_EQ(e, 1024);
    pl = req("block");
    CHECK_EQ(ph_place(d, 4096 * 8, &pl, NULL), 0);
    CHECK_EQ(ph_affinity_range(d, 8, 4096, 1, &b, &e), 0);
    CHECK_EQ(b, 1024);
    CHECK_EQ(e, 2048);
    int want[8];
    for (int i = 0; i < 8; i++)
        want[i] = i / 2;
    expect_homes("re-placed block", d, 4096 * 8, P4K, want);
    /* Part of it placed elsewhere: the plan is no longer trusted. */
    pl = req("node:3");
    CHECK_EQ(ph_place(d, 512 * 8, &pl, NULL), 0);
    CHECK_EQ(ph_affinity_range(d, 8, 4096, 0, &b, &e), 0);
    CHECK_EQ(b, 512);
    CHECK_EQ(e, 1024);

    /* ph_move: everything to node 2. */
    void *pages[8];
    int nodes[8], st[8];
    for (int i = 0; i < 8; i++) {
        pages[i] = (char *)d + (size_t)i * P4K + 8; /* any address inside */
        nodes[i] = 2;
    }
    CHECK_EQ(ph_move(8, pages, nodes, st), 0);
    for (int i = 0; i < 8; i++) {
        CHECK_EQ(st[i], 2);
        want[i] = 2;
    }
    expect_homes("moved", d, 4096 * 8, P4K, want);
    size_t hist[4];
    CHECK_EQ(ph_node_histogram(d, 4096 * 8, hist, 2), 8);
    CHECK_EQ(hist[0], 0);
    CHECK_EQ(hist[1], 0);
    ph_free(d);
}

/* ------------------------------------------------------------------ */
/* The registry under load                                             */
/* ------------------------------------------------------------------ */

static void test_many(void)
{
    enum { N = 3000 };
    static char *p[N];
    static size_t sz[N];
    size_t before = ph_registry_count();
    uint64_t s = 42;
    const char *pols[] = {"first-touch", "interleave", "block", "node:1",
                          "cyclic:2", "random:5"};
    int fails = 0;
    for (int i = 0; i < N; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        sz[i] = 1 + (size_t)((s >> 33) % (3 * P4K));
        ph_placement_t pl = req(pols[i % 6]);
        p[i] = ph_alloc(sz[i], &pl);
        if (!p[i]) {
            fails++;
            continue;
        }
        fill(p[i], sz[i], (unsigned)i);
    }
    CHECK_EQ(fails, 0);
    CHECK_EQ(ph_registry_count(), before + N);
    /* Every block is found from any address inside it. */
    int found = 1;
    for (int i = 0; i < N; i += 7) {
        ph_area a;
        if (ph_registry_find(p[i] + sz[i] - 1, &a) != 0) {
            found = 0;
            continue;
        }
        found &= a.base == p[i] && a.bytes == sz[i];
        ph_plan_release(&a.plan);
    }
    CHECK(found);
    /* Free in a scrambled order; the others stay intact. */
    int bad = 0;
    for (int k = 0; k < N; k++) {
        int i = (int)(((uint64_t)k * 1777) % N);
        if (!intact(p[i], sz[i], (unsigned)i))
            bad++;
        if (ph_free(p[i]) != 0)
            bad++;
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(ph_registry_count(), before);
}

static void *churn(void *v)
{
    int id = (int)(intptr_t)v;
    const char *pols[] = {"interleave", "cyclic:1", "block", "node:2",
                          "random", "first-touch"};
    int bad = 0;
    uint64_t s = (uint64_t)id * 977 + 1;
    char *keep[8] = {0};
    size_t ksz[8] = {0};
    for (int it = 0; it < 400; it++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        int slot = (int)((s >> 40) % 8);
        if (keep[slot]) {
            if (!intact(keep[slot], ksz[slot], (unsigned)(id + slot)))
                bad++;
            /* (No double free here: another thread may already have the
             * same address back from ph_alloc, and then the second free
             * is a legitimate free of its block.) */
            if (ph_free(keep[slot]) != 0)
                bad++;
            keep[slot] = NULL;
        } else {
            ph_placement_t pl;
            ph_placement_parse(&pl, pols[(s >> 20) % 6]);
            ksz[slot] = 1 + (size_t)((s >> 30) % (5 * P4K));
            keep[slot] = ph_alloc(ksz[slot], &pl);
            if (!keep[slot]) {
                fprintf(stderr, "  thread %d: %s\n", id, ph_last_error());
                bad++;
                continue;
            }
            fill(keep[slot], ksz[slot], (unsigned)(id + slot));
        }
    }
    for (int k = 0; k < 8; k++)
        if (keep[k] && ph_free(keep[k]) != 0)
            bad++;
    return (void *)(intptr_t)bad;
}

static void test_threads(void)
{
    size_t before = ph_registry_count();
    enum { T = 8 };
    pthread_t th[T];
    for (int i = 0; i < T; i++)
        pthread_create(&th[i], NULL, churn, (void *)(intptr_t)i);
    long bad = 0;
    for (int i = 0; i < T; i++) {
        void *r;
        pthread_join(th[i], &r);
        bad += (long)(intptr_t)r;
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(ph_registry_count(), before);
}

/* kernel_balancing: a first-touch plan asks for a policy of its own
 * (LOCAL) only while the engine may migrate. */
static void test_kernel_balancing(void)
{
    ph_place_cfg cfg;
    ph_settings_place(&cfg);
    CHECK_EQ(cfg.plan.own_policy, 1); /* defaults: exclude, iterative */
    CHECK_EQ(ph_config_set("kernel_balancing", "share"), 0);
    ph_settings_place(&cfg);
    CHECK_EQ(cfg.plan.own_policy, 0);
    CHECK_EQ(ph_config_set("kernel_balancing", "exclude"), 0);
    CHECK_EQ(ph_config_set("engine", "off"), 0);
    ph_settings_place(&cfg);
    CHECK_EQ(cfg.plan.own_policy, 0);
    CHECK_EQ(ph_config_set("engine", "sampling"), 0);
    CHECK_EQ(ph_config_set("observe", "1"), 0);
    ph_settings_place(&cfg);
    CHECK_EQ(cfg.plan.own_policy, 0);
    CHECK_EQ(ph_config_set("observe", "0"), 0);
    CHECK_EQ(ph_config_set("engine", "iterative"), 0);
    CHECK(ph_config_set("kernel_balancing", "both") != 0);
    ph_settings_place(&cfg);
    CHECK_EQ(cfg.plan.own_policy, 1);
    /* and the plan carries it (the simulator places LOCAL as DEFAULT:
     * first touch still decides) */
    ph_plan plan;
    CHECK_EQ(ph_plan_make(&plan, NULL, ph_machine_get()->topo, &cfg.plan), 0);
    CHECK_EQ(plan.own_policy, 1);
    ph_plan_release(&plan);
    /* ph_alloc binds a first-touch block (LOCAL) only then */
    ph_os *os = ph_machine_get()->os;
    ph_sim_counters c0, c1, c2;
    CHECK_EQ(ph_sim_counters_get(os, &c0), 0);
    void *p = ph_alloc(1 << 20, NULL);
    CHECK(p != NULL);
    CHECK_EQ(ph_sim_counters_get(os, &c1), 0);
    CHECK_EQ(c1.bind_calls, c0.bind_calls + 1);
    CHECK_EQ(ph_config_set("kernel_balancing", "share"), 0);
    void *q = ph_alloc(1 << 20, NULL);
    CHECK(q != NULL);
    CHECK_EQ(ph_sim_counters_get(os, &c2), 0);
    CHECK_EQ(c2.bind_calls, c1.bind_calls);
    CHECK_EQ(ph_config_set("kernel_balancing", "exclude"), 0);
    CHECK_EQ(ph_free(p), 0);
    CHECK_EQ(ph_free(q), 0);
}

int main(void)
{
    setenv("PAGEHOME_TOPOLOGY", "nodes=4,cpus_per_node=1,huge_2m=0:4:0:0", 1);
    unsetenv("PAGEHOME_PLACEMENT");
    unsetenv("PAGEHOME_PAGESIZE");
    unsetenv("PAGEHOME_HUGE_SOURCE");
    unsetenv("PAGEHOME_HUGE_FALLBACK");
    if (ph_init() != 0) {
        fprintf(stderr, "ph_init: %s\n", ph_last_error());
        return 1;
    }
    CHECK_EQ(ph_topology_nnodes(ph_machine_topology()), 4);

    test_interleave_cyclic_block();
    test_random_static();
    test_first_touch();
    test_kernel_balancing();
    test_huge_thp();
    test_hugetlbfs();
    test_bad_input();
    test_free_errors();
    test_place_static();
    test_place_heap();
    test_place_on_block();
    test_many();
    test_threads();
    CHECK_EQ(ph_registry_count(), 0);
    return check_summary("test_alloc");
}
