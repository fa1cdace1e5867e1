/*
 * test_api.c -- the public API as a program sees it, on the simulated
 * machine: topology queries by OS node number, the latency model, thread
 * binding, and the error convention (-1 + errno + a message naming the
 * bad argument) on every topology entry point.
 */
#include "check.h"

#include "pagehome.h"

#include <errno.h>
#include <stdlib.h>

static void test_topology(void)
{
    const ph_topology_t *t = ph_machine_topology();
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK_EQ(ph_topology_is_synthetic(t), 1);
    CHECK_EQ(ph_topology_nnodes(t), 4);
    CHECK_EQ(ph_topology_ncpus(t), 8);
    for (int i = 0; i < 4; i++)
        CHECK_EQ(ph_topology_node(t, i), i);
    int cpus[8];
    CHECK_EQ(ph_topology_node_cpus(t, 2, cpus, 8), 2);
    CHECK_EQ(cpus[0], 4);
    CHECK_EQ(cpus[1], 5);
    CHECK_EQ(ph_topology_node_cpus(t, 2, cpus, 1), 2); /* count even if truncated */
    CHECK_EQ(ph_topology_cpu(t, 7), 7);
    CHECK_EQ(ph_topology_cpu_node(t, 5), 2);
    CHECK_EQ(ph_topology_distance(t, 0, 0), 10);
    CHECK_EQ(ph_topology_distance(t, 0, 1), 12);
    CHECK_EQ(ph_topology_distance(t, 0, 3), 32);
    CHECK(ph_topology_latency_ns(t, 0, 0) == 100.0);
    CHECK(ph_topology_latency_ns(t, 0, 3) == 320.0);
    CHECK(ph_topology_migrate_ns(t, 0, 3, 4096) > 0);
    CHECK(ph_topology_migrate_ns(t, 1, 1, 4096) == 0);
    uint64_t total = 0, free_b = 0;
    CHECK_EQ(ph_topology_node_memory(t, 3, &total, &free_b), 0);
    CHECK_EQ(total, 1ull << 30);
}

static void test_topology_errors(void)
{
    const ph_topology_t *t = ph_machine_topology();
    errno = 0;
    CHECK_EQ(ph_topology_node(t, 4), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_MSG("index 4 is not in 0..3");
    CHECK_EQ(ph_topology_distance(t, 0, 9), -1);
    CHECK_MSG("9 is not a node of this machine");
    CHECK(ph_topology_latency_ns(t, -1, 0) < 0);
    CHECK_MSG("-1 is not a node");
    CHECK(ph_topology_migrate_ns(t, 0, 1, 12345) < 0);
    CHECK_MSG("page size 12345");
    CHECK_EQ(ph_topology_cpu_node(t, 99), -1);
    CHECK_MSG("99 is not a CPU");
    CHECK_EQ(ph_topology_cpu(t, 8), -1);
    int cpus[2];
    CHECK_EQ(ph_topology_node_cpus(t, 0, NULL, 2), -1);
    CHECK_EQ(ph_topology_node_cpus(t, 0, cpus, -1), -1);
    CHECK_EQ(ph_topology_node_memory(t, 5, NULL, NULL), -1);
    CHECK_EQ(ph_topology_nnodes(NULL), -1);
    CHECK_MSG("topology is NULL");
    /* the machine's own topology is not destroyed by a stray call */
    ph_topology_destroy((ph_topology_t *)t);
    CHECK_EQ(ph_topology_nnodes(ph_machine_topology()), 4);
}

static void test_load_other(void)
{
    ph_topology_t *t = ph_topology_load("nodes=2,cpus_per_node=3");
    CHECK(t != NULL);
    CHECK_EQ(ph_topology_nnodes(t), 2);
    CHECK_EQ(ph_topology_ncpus(t), 6);
    ph_topology_destroy(t);
    CHECK(ph_topology_load("nodes=two") == NULL);
    CHECK_MSG("nodes");
    CHECK(ph_topology_load("/no/such/topology.json") == NULL);
}

static void test_threads(void)
{
    CHECK_EQ(ph_thread_set_node(3), 0);
    CHECK_EQ(ph_current_node(), 3);
    CHECK_EQ(ph_thread_set_node(1), 0);
    CHECK_EQ(ph_current_node(), 1);
    CHECK_EQ(ph_thread_set_node(7), -1);
    CHECK_MSG("7 is not a node");
    CHECK_EQ(ph_thread_set_node(-1), 0); /* back to the binding rule */
    CHECK_EQ(ph_current_node(), 0);      /* not in OpenMP: thread 0 of 1 */
}

/* The request calls of pagehome.h (src/api/ over place/plan.c, which
 * test_plan checks in depth). */
static void test_requests(void)
{
    ph_placement_t pl;
    CHECK_EQ(ph_placement_parse(&pl, "cyclic:4@2M"), 0);
    CHECK_EQ(pl.policy, PH_POLICY_CYCLIC);
    CHECK_EQ(pl.block_pages, 4);
    CHECK_EQ(pl.page_bytes, (size_t)2 << 20);
    CHECK_EQ(ph_placement_parse(&pl, "cyclc"), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_MSG("unknown policy \"cyclc\"");
    CHECK_EQ(ph_placement_init(&pl, PH_POLICY_BLOCK), 0);
    CHECK_EQ(pl.policy, PH_POLICY_BLOCK);
    CHECK_EQ(pl.page_bytes, 0);
    CHECK_EQ(ph_placement_init(NULL, PH_POLICY_BLOCK), -1);
    CHECK_MSG("ph_placement_init: pl is NULL");
    CHECK_STR(ph_policy_name(PH_POLICY_BLOCK_STATIC), "block-static");
    CHECK(ph_policy_name((ph_policy_t)99) == NULL);
}

int main(void)
{
    setenv("PAGEHOME_TOPOLOGY",
           "nodes=4,cpus_per_node=2,mem_per_node=1G,sockets=2,local=10,remote=12,"
           "remote_socket=32", 1);
    CHECK_EQ(ph_init(), 0);
    CHECK_STR(ph_version(), "0.1.0");
    test_topology();
    test_topology_errors();
    test_load_other();
    test_threads();
    test_requests();
    return check_summary("test_api");
}
