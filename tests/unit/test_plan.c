/*
 * test_plan.c -- the placement plans, page by page, and the parser.
 *
 * Pure: the plans are computed against topologies built here by hand, no
 * memory is mapped and the OS is never asked anything.
 */
#include "check.h"

#include "base/error.h"
#include "pagehome.h"
#include "place/plan.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define P4K ((size_t)4096)
#define P2M ((size_t)2 << 20)

/* What a request leaves out (ph_alloc takes it from the tunables; these
 * are their defaults: placement first-touch, pagesize 4K, seed 1). */
static ph_plan_defaults def = {"first-touch", P4K, 1, 0};

/* A topology with the given OS node ids and cpus_per_node CPUs each; only
 * the fields the policies read are filled in. */
static ph_topology *make_topo(const int *ids, int n, int cpus_per_node)
{
    ph_topology *t = calloc(1, sizeof *t);
    t->synthetic = 1;
    t->nnodes = n;
    for (int i = 0; i < n; i++) {
        t->nodes[i].id = ids[i];
        t->nodes[i].ncpus = cpus_per_node;
    }
    t->ncpus = n * cpus_per_node;
    return t;
}

static ph_placement_t req(ph_policy_t policy)
{
    ph_placement_t pl;
    ph_plan_request_init(&pl, policy);
    pl.page_bytes = P4K;
    return pl;
}

/* Every page's node agrees between node_of, nodes() and the runs. */
static void check_consistent(const ph_plan *p, uintptr_t base, size_t np)
{
    int *a = malloc(np * sizeof *a);
    ph_plan_nodes(p, base, np, a);
    int bad = 0;
    for (size_t i = 0; i < np; i++)
        if (a[i] != ph_plan_node_of(p, base, i, np))
            bad++;
    size_t i = 0, runs = 0;
    while (i < np) {
        int node = -2;
        size_t r = ph_plan_run(p, base, i, np, &node);
        if (r == 0 || i + r > np) {
            bad++;
            break;
        }
        for (size_t j = i; j < i + r; j++)
            if (a[j] != node)
                bad++;
        i += r;
        runs++;
    }
    int dummy;
    CHECK_EQ(ph_plan_run(p, base, np, np, &dummy), 0);
    CHECK_EQ(bad, 0);
    free(a);
}

/* ------------------------------------------------------------------ */

static void test_init_and_names(void)
{
    ph_placement_t pl;
    CHECK_EQ(ph_plan_request_init(&pl, PH_POLICY_CYCLIC), 0);
    CHECK_EQ(pl.policy, PH_POLICY_CYCLIC);
    CHECK_EQ(pl.page_bytes, 0);
    CHECK(pl.nodes == NULL);
    CHECK_EQ(pl.block_pages, 1);
    CHECK_EQ(pl.node, -1);
    CHECK_EQ(pl.seed, 0);
    CHECK_EQ(pl.nthreads, 0);
    CHECK(pl.thread_node == NULL);
    CHECK_EQ(pl.split, PH_SPLIT_BALANCED);

    errno = 0;
    CHECK_EQ(ph_plan_request_init(&pl, (ph_policy_t)7), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_MSG("policy 7 is not a placement policy");
    CHECK_EQ(ph_plan_request_init(NULL, PH_POLICY_BLOCK), -1);
    CHECK_EQ(errno, EINVAL);

    CHECK_STR(ph_plan_policy_name(PH_POLICY_FIRST_TOUCH), "first-touch");
    CHECK_STR(ph_plan_policy_name(PH_POLICY_INTERLEAVE), "interleave");
    CHECK_STR(ph_plan_policy_name(PH_POLICY_CYCLIC), "cyclic");
    CHECK_STR(ph_plan_policy_name(PH_POLICY_BLOCK), "block");
    CHECK_STR(ph_plan_policy_name(PH_POLICY_BLOCK_STATIC), "block-static");
    CHECK_STR(ph_plan_policy_name(PH_POLICY_RANDOM), "random");
    CHECK_STR(ph_plan_policy_name(PH_POLICY_SINGLE_NODE), "single-node");
    CHECK(ph_plan_policy_name((ph_policy_t)7) == NULL);
    CHECK(ph_plan_policy_name((ph_policy_t)-1) == NULL);
}

static void test_parse_forms(void)
{
    ph_placement_t pl;
    CHECK_EQ(ph_plan_request_parse(&pl, "first-touch"), 0);
    CHECK_EQ(pl.policy, PH_POLICY_FIRST_TOUCH);
    CHECK_EQ(pl.page_bytes, 0);

    CHECK_EQ(ph_plan_request_parse(&pl, "interleave"), 0);
    CHECK_EQ(pl.policy, PH_POLICY_INTERLEAVE);
    CHECK_EQ(ph_plan_request_parse(&pl, "round-robin"), 0);
    CHECK_EQ(pl.policy, PH_POLICY_INTERLEAVE);

    CHECK_EQ(ph_plan_request_parse(&pl, "cyclic:4"), 0);
    CHECK_EQ(pl.policy, PH_POLICY_CYCLIC);
    CHECK_EQ(pl.block_pages, 4);
    CHECK_EQ(ph_plan_request_parse(&pl, "cyclic:1@2M"), 0);
    CHECK_EQ(pl.block_pages, 1);
    CHECK_EQ(pl.page_bytes, P2M);

    CHECK_EQ(ph_plan_request_parse(&pl, "block"), 0);
    CHECK_EQ(pl.policy, PH_POLICY_BLOCK);
    CHECK_EQ(ph_plan_request_parse(&pl, "block-static@4K"), 0);
    CHECK_EQ(pl.policy, PH_POLICY_BLOCK_STATIC);
    CHECK_EQ(pl.page_bytes, P4K);

    CHECK_EQ(ph_plan_request_parse(&pl, "random"), 0);
    CHECK_EQ(pl.policy, PH_POLICY_RANDOM);
    CHECK_EQ(pl.seed, 0);
    CHECK_EQ(ph_plan_request_parse(&pl, "random:42"), 0);
    CHECK_EQ(pl.seed, 42);
    CHECK_EQ(ph_plan_request_parse(&pl, "random:0x10@2M"), 0);
    CHECK_EQ(pl.seed, 16);
    CHECK_EQ(pl.page_bytes, P2M);

    CHECK_EQ(ph_plan_request_parse(&pl, "node:3"), 0);
    CHECK_EQ(pl.policy, PH_POLICY_SINGLE_NODE);
    CHECK_EQ(pl.node, 3);
    CHECK_EQ(ph_plan_request_parse(&pl, "single-node:2@4K"), 0);
    CHECK_EQ(pl.policy, PH_POLICY_SINGLE_NODE);
    CHECK_EQ(pl.node, 2);
    CHECK_EQ(pl.page_bytes, P4K);

    /* Page size spellings, case and blanks. */
    CHECK_EQ(ph_plan_request_parse(&pl, "  Interleave@2m "), 0);
    CHECK_EQ(pl.policy, PH_POLICY_INTERLEAVE);
    CHECK_EQ(pl.page_bytes, P2M);
    CHECK_EQ(ph_plan_request_parse(&pl, "block@4096"), 0);
    CHECK_EQ(pl.page_bytes, P4K);
    CHECK_EQ(ph_plan_request_parse(&pl, "block@2MiB"), 0);
    CHECK_EQ(pl.page_bytes, P2M);
    CHECK_EQ(ph_plan_request_parse(&pl, "block@4KB"), 0);
    CHECK_EQ(pl.page_bytes, P4K);

    /* Every other field is the init default. */
    CHECK_EQ(ph_plan_request_parse(&pl, "cyclic:8"), 0);
    CHECK(pl.nodes == NULL);
    CHECK_EQ(pl.node, -1);
    CHECK_EQ(pl.nthreads, 0);
}

static void parse_fails(const char *text, const char *msg)
{
    ph_placement_t pl;
    ph_plan_request_init(&pl, PH_POLICY_BLOCK);
    pl.page_bytes = 12;
    errno = 0;
    CHECK_EQ(ph_plan_request_parse(&pl, text), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_MSG(msg);
    /* A failed parse leaves the request as it was. */
    CHECK_EQ(pl.policy, PH_POLICY_BLOCK);
    CHECK_EQ(pl.page_bytes, 12);
}

static void test_parse_errors(void)
{
    parse_fails("cyclc:4",
                "placement \"cyclc:4\": unknown policy \"cyclc\" (expected "
                "first-touch, interleave, cyclic:K, block, block-static, "
                "random[:SEED], node:N)");
    CHECK_STR(ph_error_message(),
              "placement \"cyclc:4\": unknown policy \"cyclc\" (expected "
              "first-touch, interleave, cyclic:K, block, block-static, "
              "random[:SEED], node:N)");
    parse_fails("blok", "unknown policy \"blok\"");
    parse_fails("", "placement \"\": empty");
    parse_fails("   ", "empty");
    parse_fails("cyclic", "placement \"cyclic\": cyclic needs an argument");
    parse_fails("cyclic:", "block size \"\" is not a number of pages");
    parse_fails("cyclic:0", "block size \"0\" is not a number of pages >= 1");
    parse_fails("cyclic:-3", "block size \"-3\"");
    parse_fails("cyclic:4x", "block size \"4x\"");
    parse_fails("node", "node needs an argument");
    parse_fails("node:x", "node \"x\" is not a node number");
    parse_fails("node:-1", "node \"-1\" is not a node number");
    parse_fails("single-node:99999999999", "is not a node number");
    parse_fails("random:abc", "seed \"abc\" is not a number");
    parse_fails("interleave:3", "interleave takes no argument");
    parse_fails("block-static:2", "block-static takes no argument");
    parse_fails("block@3M", "placement \"block@3M\": page size \"3M\" is "
                            "not 4K or 2M");
    parse_fails("block@", "page size \"\" is not 4K or 2M");
    parse_fails("block@1G", "page size \"1G\"");
    parse_fails("block@4Kx", "page size \"4Kx\"");

    char longtext[400];
    memset(longtext, 'a', sizeof longtext - 1);
    longtext[sizeof longtext - 1] = '\0';
    parse_fails(longtext, "too long");

    ph_placement_t pl;
    CHECK_EQ(ph_plan_request_parse(&pl, NULL), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(ph_plan_request_parse(NULL, "block"), -1);
    CHECK_EQ(errno, EINVAL);
}

static void plan_fails(const ph_placement_t *pl, const ph_topology *t,
                       const char *msg)
{
    ph_plan p;
    errno = 0;
    CHECK_EQ(ph_plan_make(&p, pl, t, &def), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_MSG(msg);
}

static void test_plan_validation(const ph_topology *t4)
{
    ph_placement_t pl = req(PH_POLICY_INTERLEAVE);
    pl.page_bytes = 12345;
    plan_fails(&pl, t4, "page size 12345 is not 4K or 2M");

    pl = req(PH_POLICY_BLOCK);
    int bad[] = {0, 1, 7};
    pl.nodes = bad;
    pl.nnodes = 3;
    plan_fails(&pl, t4, "node 7 is not a node of this machine (nodes 0-3)");
    CHECK_MSG("nodes[2]");
    pl.nnodes = 0;
    plan_fails(&pl, t4, "nnodes 0 is out of range");
    pl.nnodes = PH_MAX_NODES + 1;
    plan_fails(&pl, t4, "nnodes 65 is out of range");

    pl = req(PH_POLICY_SINGLE_NODE);
    pl.node = 9;
    plan_fails(&pl, t4, "single-node: node 9 is not a node of this machine "
                        "(nodes 0-3)");

    pl = req(PH_POLICY_CYCLIC);
    pl.block_pages = 0;
    plan_fails(&pl, t4, "cyclic: block_pages is 0");

    pl = req(PH_POLICY_FIRST_TOUCH);
    pl.policy = (ph_policy_t)42;
    plan_fails(&pl, t4, "placement policy 42 is not a policy");

    pl = req(PH_POLICY_BLOCK_STATIC);
    plan_fails(&pl, t4, "block-static: elems is 0");
    pl.elems = 10;
    plan_fails(&pl, t4, "block-static: elem_bytes is 0");
    pl.elem_bytes = SIZE_MAX / 2;
    plan_fails(&pl, t4, "overflows");
    pl.elem_bytes = 8;
    pl.nthreads = -2;
    plan_fails(&pl, t4, "nthreads -2 is out of range");
    pl.nthreads = 3;
    int tn[] = {0, 5, 1};
    pl.thread_node = tn;
    plan_fails(&pl, t4, "thread_node[1]: node 5 is not a node of this "
                        "machine (nodes 0-3)");
    pl.thread_node = NULL;
    pl.split = (ph_static_split_t)3;
    plan_fails(&pl, t4, "split 3");

    /* A sparse machine names its nodes as numactl would. */
    int ids[] = {0, 2, 4, 5};
    ph_topology *sparse = make_topo(ids, 4, 1);
    pl = req(PH_POLICY_SINGLE_NODE);
    pl.node = 1;
    plan_fails(&pl, sparse, "node 1 is not a node of this machine (nodes "
                            "0,2,4-5)");
    char buf[64];
    ph_plan_nodes_text(sparse, buf, sizeof buf);
    CHECK_STR(buf, "0,2,4-5");
    ph_plan_nodes_text(t4, buf, sizeof buf);
    CHECK_STR(buf, "0-3");
    free(sparse);

    ph_plan p;
    CHECK_EQ(ph_plan_make(&p, &pl, NULL, &def), -1);
    CHECK_EQ(ph_plan_make(NULL, &pl, t4, &def), -1);
}

static void test_defaults(const ph_topology *t4)
{
    ph_plan p;
    ph_placement_t pl;

    /* page_bytes 0 -> the default page size (4K), then 2M. */
    ph_plan_request_init(&pl, PH_POLICY_BLOCK);
    CHECK_EQ(ph_plan_make(&p, &pl, t4, &def), 0);
    CHECK_EQ(p.page_bytes, P4K);
    CHECK_EQ(p.nnodes, 4);
    for (int i = 0; i < 4; i++)
        CHECK_EQ(p.nodes[i], i);
    ph_plan_release(&p);
    def.page_bytes = P2M;
    CHECK_EQ(ph_plan_make(&p, &pl, t4, &def), 0);
    CHECK_EQ(p.page_bytes, P2M);
    ph_plan_release(&p);
    def.page_bytes = P4K;

    /* seed 0 -> the default seed. */
    ph_plan_request_init(&pl, PH_POLICY_RANDOM);
    def.seed = 77;
    CHECK_EQ(ph_plan_make(&p, &pl, t4, &def), 0);
    CHECK_EQ(p.seed, 77);
    pl.seed = 5;
    CHECK_EQ(ph_plan_make(&p, &pl, t4, &def), 0);
    CHECK_EQ(p.seed, 5);
    def.seed = 1;

    /* NULL request -> the default placement. */
    CHECK_EQ(ph_plan_make(&p, NULL, t4, &def), 0);
    CHECK_EQ(p.policy, PH_POLICY_FIRST_TOUCH);
    snprintf(def.placement, sizeof def.placement, "cyclic:3@2M");
    CHECK_EQ(ph_plan_make(&p, NULL, t4, &def), 0);
    CHECK_EQ(p.policy, PH_POLICY_CYCLIC);
    CHECK_EQ(p.block_pages, 3);
    CHECK_EQ(p.page_bytes, P2M);
    snprintf(def.placement, sizeof def.placement, "cyclc:3");
    plan_fails(NULL, t4, "tunable placement (PAGEHOME_PLACEMENT): "
                         "placement \"cyclc:3\": unknown policy \"cyclc\"");
    snprintf(def.placement, sizeof def.placement, "first-touch");

    /* SINGLE_NODE without a node: the first of the nodes list. */
    ph_plan_request_init(&pl, PH_POLICY_SINGLE_NODE);
    CHECK_EQ(ph_plan_make(&p, &pl, t4, &def), 0);
    CHECK_EQ(p.node, 0);
    int order[] = {2, 3};
    pl.nodes = order;
    pl.nnodes = 2;
    CHECK_EQ(ph_plan_make(&p, &pl, t4, &def), 0);
    CHECK_EQ(p.node, 2);
    CHECK_EQ(p.nnodes, 1);
    CHECK_EQ(p.nodes[0], 2);
}

/* ------------------------------------------------------------------ */

static void test_first_touch_single(const ph_topology *t4)
{
    ph_plan p;
    ph_placement_t pl = req(PH_POLICY_FIRST_TOUCH);
    CHECK_EQ(ph_plan_make(&p, &pl, t4, &def), 0);
    for (size_t i = 0; i < 20; i++)
        CHECK_EQ(ph_plan_node_of(&p, 0x10000, i, 20), -1);
    CHECK(ph_plan_is_lazy(&p));
    int node = 0;
    CHECK_EQ(ph_plan_run(&p, 0x10000, 3, 20, &node), 17);
    CHECK_EQ(node, -1);
    check_consistent(&p, 0x10000, 20);

    pl = req(PH_POLICY_SINGLE_NODE);
    pl.node = 3;
    CHECK_EQ(ph_plan_make(&p, &pl, t4, &def), 0);
    int all = 1;
    for (size_t i = 0; i < 100; i++)
        all &= ph_plan_node_of(&p, 0, i, 100) == 3;
    CHECK(all);
    CHECK(ph_plan_is_lazy(&p));
    CHECK_EQ(ph_plan_run(&p, 0, 0, 100, &node), 100);
    CHECK_EQ(node, 3);
    check_consistent(&p, 0, 100);
}

static void test_interleave(const ph_topology *t4)
{
    ph_plan p;
    ph_placement_t pl = req(PH_POLICY_INTERLEAVE);
    CHECK_EQ(ph_plan_make(&p, &pl, t4, &def), 0);
    CHECK(ph_plan_is_lazy(&p));

    /* Page i on node i % 4, whatever the address of the range. */
    int ok = 1;
    for (size_t i = 0; i < 64; i++) {
        ok &= ph_plan_node_of(&p, 8 * P4K, i, 64) == (int)(i % 4);
        ok &= ph_plan_node_of(&p, 5 * P4K + 100, i, 64) == (int)(i % 4);
    }
    CHECK(ok);
    int node;
    CHECK_EQ(ph_plan_run(&p, 0, 0, 64, &node), 1);
    CHECK_EQ(node, 0);
    CHECK_EQ(ph_plan_run(&p, 0, 7, 64, &node), 1);
    CHECK_EQ(node, 3);
    check_consistent(&p, 5 * P4K, 64);

    /* Custom order: not ascending, so not lazy; the plan follows it. */
    int order[] = {3, 1};
    pl.nodes = order;
    pl.nnodes = 2;
    CHECK_EQ(ph_plan_make(&p, &pl, t4, &def), 0);
    CHECK(!ph_plan_is_lazy(&p));
    CHECK_EQ(ph_plan_node_of(&p, 0, 0, 8), 3);
    CHECK_EQ(ph_plan_node_of(&p, 0, 1, 8), 1);
    CHECK_EQ(ph_plan_node_of(&p, 0, 2, 8), 3);
    CHECK_EQ(ph_plan_node_of(&p, P4K, 0, 8), 3);
    int asc[] = {1, 3};
    pl.nodes = asc;
    CHECK_EQ(ph_plan_make(&p, &pl, t4, &def), 0);
    CHECK(ph_plan_is_lazy(&p));
    int dup[] = {1, 1, 3};
    pl.nodes = dup;
    pl.nnodes = 3;
    CHECK_EQ(ph_plan_make(&p, &pl, t4, &def), 0);
    CHECK(!ph_plan_is_lazy(&p));
    CHECK_EQ(ph_plan_node_of(&p, 0, 0, 8), 1);
    CHECK_EQ(ph_plan_node_of(&p, 0, 1, 8), 1);
    CHECK_EQ(ph_plan_node_of(&p, 0, 2, 8), 3);

    /* 2 MiB pages: page by page too; placed eagerly. */
    pl = req(PH_POLICY_INTERLEAVE);
    pl.page_bytes = P2M;
    CHECK_EQ(ph_plan_make(&p, &pl, t4, &def), 0);
    CHECK(!ph_plan_is_lazy(&p));
    CHECK_EQ(ph_plan_node_of(&p, 6 * P2M, 0, 4), 0);
    CHECK_EQ(ph_plan_node_of(&p, 6 * P2M, 1, 4), 1);
    CHECK_EQ(ph_plan_node_of(&p, 6 * P2M, 3, 4), 3);
    check_consistent(&p, 6 * P2M, 4);

    /* One node: one run. */
    int one[] = {2};
    pl = req(PH_POLICY_INTERLEAVE);
    pl.nodes = one;
    pl.nnodes = 1;
    CHECK_EQ(ph_plan_make(&p, &pl, t4, &def), 0);
    CHECK_EQ(ph_plan_run(&p, 0, 0, 10, &node), 10);
    CHECK_EQ(node, 2);
}

static void test_cyclic(const ph_topology *t4)
{
    ph_plan p;
    ph_placement_t pl = req(PH_POLICY_CYCLIC);
    pl.block_pages = 3;
    CHECK_EQ(ph_plan_make(&p, &pl, t4, &def), 0);
    CHECK(!ph_plan_is_lazy(&p));
    static const int want[] = {0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 0, 0, 0,
                               1, 1};
    size_t np = sizeof want / sizeof want[0];
    int ok = 1;
    for (size_t i = 0; i < np; i++)
        ok &= ph_plan_node_of(&p, 123 * P4K, i, np) == want[i];
    CHECK(ok);
    /* Relative to the range: the base does not matter. */
    CHECK_EQ(ph_plan_node_of(&p, 7 * P4K, 3, np), 1);
    int node;
    CHECK_EQ(ph_plan_run(&p, 0, 0, np, &node), 3);
    CHECK_EQ(node, 0);
    CHECK_EQ(ph_plan_run(&p, 0, 4, np, &node), 2);
    CHECK_EQ(node, 1);
    CHECK_EQ(ph_plan_run(&p, 0, 15, np, &node), 2);
    CHECK_EQ(node, 1);
    check_consistent(&p, 0, np);

    /* k = 1 over {2, 0}: page by page in the given order. */
    int order[] = {2, 0};
    pl.block_pages = 1;
    pl.nodes = order;
    pl.nnodes = 2;
    CHECK_EQ(ph_plan_make(&p, &pl, t4, &def), 0);
    CHECK_EQ(ph_plan_node_of(&p, 0, 0, 4), 2);
    CHECK_EQ(ph_plan_node_of(&p, 0, 1, 4), 0);
    CHECK_EQ(ph_plan_node_of(&p, 0, 2, 4), 2);
    check_consistent(&p, 0, 101);
}

static void test_block(const ph_topology *t4)
{
    ph_plan p;
    ph_placement_t pl = req(PH_POLICY_BLOCK);
    CHECK_EQ(ph_plan_make(&p, &pl, t4, &def), 0);
    CHECK(ph_plan_is_lazy(&p));

    /* 10 pages over 4 nodes: chunks of 3, 2, 3, 2. */
    static const int want10[] = {0, 0, 0, 1, 1, 2, 2, 2, 3, 3};
    int ok = 1;
    for (size_t i = 0; i < 10; i++)
        ok &= ph_plan_node_of(&p, 0, i, 10) == want10[i];
    CHECK(ok);
    int node;
    CHECK_EQ(ph_plan_run(&p, 0, 0, 10, &node), 3);
    CHECK_EQ(node, 0);
    CHECK_EQ(ph_plan_run(&p, 0, 3, 10, &node), 2);
    CHECK_EQ(node, 1);
    CHECK_EQ(ph_plan_run(&p, 0, 6, 10, &node), 2);
    CHECK_EQ(node, 2);
    CHECK_EQ(ph_plan_run(&p, 0, 8, 10, &node), 2);
    CHECK_EQ(node, 3);

    /* Fewer pages than nodes: the last node gets nothing. */
    CHECK_EQ(ph_plan_node_of(&p, 0, 0, 3), 0);
    CHECK_EQ(ph_plan_node_of(&p, 0, 1, 3), 1);
    CHECK_EQ(ph_plan_node_of(&p, 0, 2, 3), 2);

    /* Any size: contiguous chunks in node order, sizes within one page. */
    int bad = 0;
    for (size_t np = 1; np < 300; np++) {
        size_t count[4] = {0};
        int prev = 0;
        for (size_t i = 0; i < np; i++) {
            int n = ph_plan_node_of(&p, 0, i, np);
            if (n < prev)
                bad++;
            prev = n;
            count[n]++;
        }
        if (np >= 4) {
            size_t lo = np / 4, hi = (np + 3) / 4;
            for (int k = 0; k < 4; k++)
                if (count[k] < lo || count[k] > hi)
                    bad++;
        }
    }
    CHECK_EQ(bad, 0);
    check_consistent(&p, 0, 1001);
    check_consistent(&p, 0, 3);

    /* Node order is the chunk order. */
    int order[] = {3, 1, 2};
    pl.nodes = order;
    pl.nnodes = 3;
    CHECK_EQ(ph_plan_make(&p, &pl, t4, &def), 0);
    CHECK_EQ(ph_plan_node_of(&p, 0, 0, 9), 3);
    CHECK_EQ(ph_plan_node_of(&p, 0, 3, 9), 1);
    CHECK_EQ(ph_plan_node_of(&p, 0, 8, 9), 2);
    CHECK(ph_plan_is_lazy(&p));
}

/* ---- block-static --------------------------------------------------- */

static ph_plan static_plan(const ph_topology *t, size_t elems, size_t eb,
                           int T, size_t chunk, ph_static_split_t split,
                           const int *thread_node)
{
    ph_placement_t pl = req(PH_POLICY_BLOCK_STATIC);
    pl.elems = elems;
    pl.elem_bytes = eb;
    pl.nthreads = T;
    pl.chunk = chunk;
    pl.split = split;
    pl.thread_node = thread_node;
    ph_plan p;
    int rc = ph_plan_make(&p, &pl, t, &def);
    CHECK_EQ(rc, 0);
    if (rc != 0)
        memset(&p, 0, sizeof p);
    return p;
}

static void expect_pages(const ph_plan *p, const int *want, size_t np)
{
    for (size_t i = 0; i < np; i++) {
        int got = ph_plan_node_of(p, 0, i, np);
        if (got != want[i])
            fprintf(stderr, "  page %zu: node %d, want %d\n", i, got,
                    want[i]);
        CHECK_EQ(got, want[i]);
    }
    check_consistent(p, 0, np);
}

/* The oracle: deal the elements as OpenMP would, then take every page's
 * majority node byte by byte. */
static void brute_force(const ph_topology *t, size_t N, size_t E, int T,
                        size_t chunk, ph_static_split_t split,
                        const int *tn, size_t off, size_t np, int *out)
{
    int *owner = malloc(N * sizeof *owner);
    if (chunk) {
        for (size_t i = 0; i < N; i++)
            owner[i] = (int)((i / chunk) % (size_t)T);
    } else if (split == PH_SPLIT_GREEDY) {
        size_t c = (N + (size_t)T - 1) / (size_t)T;
        for (int th = 0; th < T; th++)
            for (size_t i = (size_t)th * c; i < (size_t)(th + 1) * c && i < N;
                 i++)
                owner[i] = th;
    } else {
        size_t q = N / (size_t)T, r = N % (size_t)T;
        for (size_t th = 0; th < (size_t)T; th++) {
            size_t start = th * q + (th < r ? th : r);
            size_t cnt = q + (th < r);
            for (size_t i = start; i < start + cnt; i++)
                owner[i] = (int)th;
        }
    }
    for (size_t pg = 0; pg < np; pg++) {
        long bytes[PH_MAX_NODES] = {0}; /* by topology index */
        int any = 0;
        for (size_t b = pg * P4K; b < (pg + 1) * P4K; b++) {
            if (b < off || b - off >= N * E)
                continue;
            size_t el = (b - off) / E;
            int node = tn[owner[el]];
            for (int k = 0; k < t->nnodes; k++)
                if (t->nodes[k].id == node)
                    bytes[k]++;
            any = 1;
        }
        if (!any) {
            out[pg] = tn[owner[pg * P4K < off ? 0 : N - 1]];
            continue;
        }
        int best = 0;
        for (int k = 1; k < t->nnodes; k++)
            if (bytes[k] > bytes[best])
                best = k;
        out[pg] = t->nodes[best].id;
    }
    free(owner);
}

static void test_block_static(const ph_topology *t4)
{
    ph_plan p;

    /* 4096 doubles, 4 threads, default binding: 2 pages per thread. */
    p = static_plan(t4, 4096, 8, 4, 0, PH_SPLIT_BALANCED, NULL);
    {
        static const int want[] = {0, 0, 1, 1, 2, 2, 3, 3};
        expect_pages(&p, want, 8);
    }
    CHECK(!ph_plan_is_lazy(&p));
    ph_plan_release(&p);

    /* Reverse binding. */
    {
        static const int tn[] = {3, 2, 1, 0};
        static const int want[] = {3, 3, 2, 2, 1, 1, 0, 0};
        p = static_plan(t4, 4096, 8, 4, 0, PH_SPLIT_BALANCED, tn);
        expect_pages(&p, want, 8);
        CHECK_EQ(p.nnodes, 4);
        CHECK_EQ(p.nodes[0], 0); /* slots in topology order */
        ph_plan_release(&p);
    }

    /* T=5 threads over 3 nodes, N=1003 elements of 16 bytes (4 pages and
     * a bit): balanced split 201,201,201,200,200, so thread byte ranges
     * are [0,3216) [3216,6432) [6432,9648) [9648,12848) [12848,16048).
     * Threads on nodes {0,1,2,0,1}.
     *   page 0: t0 3216 (n0), t1 880 (n1)          -> 0
     *   page 1: t1 2336 (n1), t2 1760 (n2)         -> 1
     *   page 2: t2 1456 (n2), t3 2640 (n0)         -> 0
     *   page 3: t3 560 (n0), t4 3200 (n1)          -> 1
     *   page 4: past the array: the last element's -> 1 */
    {
        static const int tn[] = {0, 1, 2, 0, 1};
        static const int want[] = {0, 1, 0, 1, 1};
        p = static_plan(t4, 1003, 16, 5, 0, PH_SPLIT_BALANCED, tn);
        expect_pages(&p, want, 5);
        CHECK_EQ(p.nnodes, 3);
        ph_plan_release(&p);
    }
    /* Same with the default binding over nodes {0,1,2} (t*3/5: threads on
     * 0,0,1,1,2):
     *   page 0: n0 4096                            -> 0
     *   page 1: t1 2336 (n0), t2 1760 (n1)         -> 0
     *   page 2: t2 1456 + t3 2640 (n1)             -> 1
     *   page 3: t3 560 (n1), t4 3200 (n2)          -> 2 */
    {
        ph_placement_t pl = req(PH_POLICY_BLOCK_STATIC);
        int three[] = {0, 1, 2};
        pl.nodes = three;
        pl.nnodes = 3;
        pl.elems = 1003;
        pl.elem_bytes = 16;
        pl.nthreads = 5;
        CHECK_EQ(ph_plan_make(&p, &pl, t4, &def), 0);
        static const int want[] = {0, 0, 1, 2};
        expect_pages(&p, want, 4);
        ph_plan_release(&p);
    }

    /* One element per page, N=10 over T=4: balanced 3,3,2,2 vs greedy
     * 3,3,3,1. */
    {
        static const int tn[] = {0, 1, 2, 3};
        static const int bal[] = {0, 0, 0, 1, 1, 1, 2, 2, 3, 3};
        static const int gre[] = {0, 0, 0, 1, 1, 1, 2, 2, 2, 3};
        p = static_plan(t4, 10, 4096, 4, 0, PH_SPLIT_BALANCED, tn);
        expect_pages(&p, bal, 10);
        ph_plan_release(&p);
        p = static_plan(t4, 10, 4096, 4, 0, PH_SPLIT_GREEDY, tn);
        expect_pages(&p, gre, 10);
        ph_plan_release(&p);
    }

    /* Ties go to the node with the lower index: N=3 of 2048 bytes over 3
     * threads on nodes {2,1,0}; page 0 holds t0 (n2) and t1 (n1), 2048
     * bytes each -> 1; page 1 holds t2 (n0) -> 0. */
    {
        static const int tn[] = {2, 1, 0};
        static const int want[] = {1, 0};
        p = static_plan(t4, 3, 2048, 3, 0, PH_SPLIT_BALANCED, tn);
        expect_pages(&p, want, 2);
        ph_plan_release(&p);
    }

    /* schedule(static, 3), N=16 of 1024 bytes over 2 threads on {2,3}:
     * chunks t0 0-2, t1 3-5, t0 6-8, t1 9-11, t0 12-14, t1 15.
     *   page 0 (0-3):   t0 3, t1 1 -> 2
     *   page 1 (4-7):   t1 2, t0 2 -> tie -> 2
     *   page 2 (8-11):  t0 1, t1 3 -> 3
     *   page 3 (12-15): t0 3, t1 1 -> 2 */
    {
        static const int tn[] = {2, 3};
        static const int want[] = {2, 2, 3, 2};
        p = static_plan(t4, 16, 1024, 2, 3, PH_SPLIT_BALANCED, tn);
        expect_pages(&p, want, 4);
        ph_plan_release(&p);
    }

    /* An array starting 2048 bytes into its first page (ph_place of a
     * static array): N=1024 doubles, 2 threads on {1,0}.  t0 has range
     * bytes [2048,6144), t1 [6144,10240): pages 1, tie -> 0, 0. */
    {
        static const int tn[] = {1, 0};
        static const int want[] = {1, 0, 0};
        p = static_plan(t4, 1024, 8, 2, 0, PH_SPLIT_BALANCED, tn);
        p.data_offset = 2048;
        expect_pages(&p, want, 3);
        ph_plan_release(&p);
    }

    /* nthreads 0: the machine's CPUs (8 here), default binding 2/node. */
    p = static_plan(t4, 8 * 512, 8, 0, 0, PH_SPLIT_BALANCED, NULL);
    CHECK_EQ(p.nthreads, 8);
    {
        static const int want[] = {0, 0, 1, 1, 2, 2, 3, 3};
        expect_pages(&p, want, 8);
    }
    ph_plan_release(&p);

    /* Range form: "block-static" without elems describes the range. */
    {
        ph_placement_t pl;
        CHECK_EQ(ph_plan_request_parse(&pl, "block-static"), 0);
        pl.nthreads = 4;
        CHECK_EQ(ph_plan_make_range(&p, &pl, t4, &def, 8 * P4K), 0);
        CHECK_EQ(p.elems, 8 * P4K);
        CHECK_EQ(p.elem_bytes, 1);
        static const int want[] = {0, 0, 1, 1, 2, 2, 3, 3};
        expect_pages(&p, want, 8);
        ph_plan_release(&p);
        plan_fails(&pl, t4, "elems is 0");
    }

    /* Copy is deep. */
    p = static_plan(t4, 4096, 8, 4, 0, PH_SPLIT_BALANCED, NULL);
    ph_plan q;
    CHECK_EQ(ph_plan_copy(&q, &p), 0);
    CHECK(q.thread_slot != p.thread_slot);
    CHECK_EQ(q.thread_slot[3], p.thread_slot[3]);
    ph_plan_release(&p);
    CHECK_EQ(ph_plan_node_of(&q, 0, 7, 8), 3);
    ph_plan_release(&q);
    ph_plan_release(&q); /* twice is harmless */

    /* Against the oracle, many shapes. */
    uint64_t s = 12345;
    int mismatches = 0, cases = 0;
    for (int iter = 0; iter < 300; iter++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        size_t E = (size_t)(1 + (s >> 33) % 24);
        if (iter % 7 == 0)
            E = 4096 + (size_t)((s >> 20) % 5000);
        size_t N = (size_t)(1 + (s >> 40) % 5000);
        int T = (int)(1 + (s >> 13) % 9);
        size_t chunk = (iter % 3 == 0) ? (size_t)(1 + (s >> 50) % 40) : 0;
        ph_static_split_t split =
            (iter & 1) ? PH_SPLIT_GREEDY : PH_SPLIT_BALANCED;
        size_t off = (iter % 5 == 0) ? (size_t)((s >> 7) % P4K) : 0;
        int tn[16];
        for (int th = 0; th < T; th++)
            tn[th] = (int)((s >> (th * 3 + 5)) % 4);
        size_t np = (off + N * E + P4K - 1) / P4K + 1; /* one past */
        if (N * E > (size_t)4 << 20)
            continue;
        int *want = malloc(np * sizeof *want);
        brute_force(t4, N, E, T, chunk, split, tn, off, np, want);
        ph_plan pp = static_plan(t4, N, E, T, chunk, split, tn);
        pp.data_offset = off;
        for (size_t pg = 0; pg < np; pg++)
            if (ph_plan_node_of(&pp, 0, pg, np) != want[pg]) {
                if (mismatches++ < 5)
                    fprintf(stderr, "  oracle: N=%zu E=%zu T=%d chunk=%zu "
                            "split=%d off=%zu page %zu: %d vs %d\n", N, E, T,
                            chunk, (int)split, off, pg,
                            ph_plan_node_of(&pp, 0, pg, np), want[pg]);
            }
        check_consistent(&pp, 0, np);
        ph_plan_release(&pp);
        free(want);
        cases++;
    }
    CHECK_EQ(mismatches, 0);
    CHECK(cases > 200);
}

static void test_random(const ph_topology *t4)
{
    ph_plan p, q;
    ph_placement_t pl = req(PH_POLICY_RANDOM);
    pl.seed = 99;
    CHECK_EQ(ph_plan_make(&p, &pl, t4, &def), 0);
    CHECK(!ph_plan_is_lazy(&p));
    pl.seed = 100;
    CHECK_EQ(ph_plan_make(&q, &pl, t4, &def), 0);

    enum { NP = 40000 };
    static int a[NP], b[NP], c[NP];
    ph_plan_nodes(&p, 0, NP, a);
    ph_plan_nodes(&p, 77 * P4K, NP, b); /* the base does not matter */
    ph_plan_nodes(&q, 0, NP, c);
    int same = 1, differ = 0;
    long count[4] = {0};
    for (int i = 0; i < NP; i++) {
        same &= a[i] == b[i];
        differ += a[i] != c[i];
        if (a[i] >= 0 && a[i] < 4)
            count[a[i]]++;
    }
    CHECK(same);
    /* Another seed: about 3/4 of the pages differ. */
    CHECK(differ > NP / 2 && differ < NP * 9 / 10);
    /* Independent of the order of the calls. */
    CHECK_EQ(ph_plan_node_of(&p, 0, 31337, NP), a[31337]);
    CHECK_EQ(ph_plan_node_of(&p, 0, 5, 6), a[5]);
    /* About uniform: chi-square with 3 degrees of freedom. */
    double chi = 0, e = NP / 4.0;
    for (int k = 0; k < 4; k++)
        chi += (count[k] - e) * (count[k] - e) / e;
    CHECK(chi < 25.0);
    /* Not a trivial pattern: neighbours differ often. */
    int changes = 0;
    for (int i = 1; i < NP; i++)
        changes += a[i] != a[i - 1];
    CHECK(changes > NP / 2);
    check_consistent(&p, 0, 5000);

    /* Over a node subset. */
    int sub[] = {1, 3};
    pl.nodes = sub;
    pl.nnodes = 2;
    CHECK_EQ(ph_plan_make(&p, &pl, t4, &def), 0);
    int only = 1;
    for (size_t i = 0; i < 1000; i++) {
        int n = ph_plan_node_of(&p, 0, i, 1000);
        only &= n == 1 || n == 3;
    }
    CHECK(only);
}

static void test_describe(const ph_topology *t4)
{
    ph_plan p;
    char buf[256];
    ph_placement_t pl;

    ph_plan_request_parse(&pl, "cyclic:4@4K");
    CHECK_EQ(ph_plan_make(&p, &pl, t4, &def), 0);
    ph_plan_describe(&p, buf, sizeof buf);
    CHECK_STR(buf, "cyclic:4@4K nodes=0-3");

    ph_plan_request_parse(&pl, "interleave@2M");
    int order[] = {3, 1};
    pl.nodes = order;
    pl.nnodes = 2;
    CHECK_EQ(ph_plan_make(&p, &pl, t4, &def), 0);
    ph_plan_describe(&p, buf, sizeof buf);
    CHECK_STR(buf, "interleave@2M nodes=3,1");

    ph_plan_request_parse(&pl, "node:2");
    pl.page_bytes = P4K;
    CHECK_EQ(ph_plan_make(&p, &pl, t4, &def), 0);
    ph_plan_describe(&p, buf, sizeof buf);
    CHECK_STR(buf, "node:2@4K");

    ph_plan_request_parse(&pl, "random:9@4K");
    CHECK_EQ(ph_plan_make(&p, &pl, t4, &def), 0);
    ph_plan_describe(&p, buf, sizeof buf);
    CHECK_STR(buf, "random:9@4K nodes=0-3");

    ph_plan_request_parse(&pl, "first-touch@2M");
    CHECK_EQ(ph_plan_make(&p, &pl, t4, &def), 0);
    ph_plan_describe(&p, buf, sizeof buf);
    CHECK_STR(buf, "first-touch@2M");

    p = static_plan(t4, 100, 8, 2, 5, PH_SPLIT_GREEDY, NULL);
    ph_plan_describe(&p, buf, sizeof buf);
    CHECK_STR(buf, "block-static@4K elems=100 elem_bytes=8 threads=2 "
                   "chunk=5 split=greedy nodes=0,2");
    /* Truncation is safe. */
    char tiny[6];
    ph_plan_describe(&p, tiny, sizeof tiny);
    CHECK_STR(tiny, "block");
    ph_plan_release(&p);
}

int main(void)
{
    int ids[] = {0, 1, 2, 3};
    ph_topology *t4 = make_topo(ids, 4, 2);

    test_init_and_names();
    test_parse_forms();
    test_parse_errors();
    test_plan_validation(t4);
    test_defaults(t4);
    test_first_touch_single(t4);
    test_interleave(t4);
    test_cyclic(t4);
    test_block(t4);
    test_block_static(t4);
    test_random(t4);
    test_describe(t4);

    free(t4);
    return check_summary("test_plan");
}
