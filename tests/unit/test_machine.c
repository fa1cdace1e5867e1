/*
 * test_machine.c -- the machine layer: a machine made from a configuration
 * (no process-wide tunable involved), the choice of OS table, the settings
 * it hands down to the mover, failures with their message, and the process
 * machine, made once from the tunables.
 */
#include "check.h"

#include "base/error.h"
#include "config/options.h"
#include "machine/machine.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PG ((size_t)4096)

static ph_machine_cfg cfg_of(ph_machine_kind kind, const char *spec, size_t batch)
{
    ph_machine_cfg c;
    memset(&c, 0, sizeof c);
    c.kind = kind;
    snprintf(c.topology, sizeof c.topology, "%s", spec);
    c.sim_binding = PH_SIM_BIND_BLOCK;
    c.mover = (ph_mover_cfg){batch, 3, 1000 * 1000000ull, 0};
    return c;
}

/* Move n pages from node 0 to node 1; the number of move calls made. */
static long move_calls(ph_machine *m, size_t n)
{
    ph_os *os = m->os;
    char *a = ph_os_map(os, n * PG, PG, PH_MAP_NO_THP);
    CHECK(a != NULL);
    if (!a)
        return -1;
    CHECK_EQ(ph_sim_touch(os, a, n * PG, 0), 0);
    void **pages = malloc(n * sizeof *pages);
    int *nodes = malloc(n * sizeof *nodes);
    for (size_t i = 0; i < n; i++) {
        pages[i] = a + i * PG;
        nodes[i] = 1;
    }
    ph_move_stats s;
    CHECK_EQ(ph_mover_move(m->mover, n, pages, nodes, NULL, &s), 0);
    CHECK_EQ(s.moved, n);
    free(pages);
    free(nodes);
    ph_os_unmap(os, a, n * PG);
    return (long)s.calls;
}

static void test_open(void)
{
    /* A synthetic topology: the simulator, whatever the kind says. */
    ph_machine_cfg c = cfg_of(PH_MACHINE_AUTO, "nodes=4,cpus_per_node=1", 64);
    ph_machine *m = ph_machine_open(&c);
    CHECK(m != NULL);
    if (!m)
        return;
    CHECK_STR(ph_os_name(m->os), "sim");
    CHECK_EQ(m->topo->nnodes, 4);
    CHECK_STR(m->cfg.topology, "nodes=4,cpus_per_node=1");
    /* the mover works with the batch it was given: 200 pages, 64 a call */
    CHECK_EQ(move_calls(m, 200), 4);
    ph_machine_close(m);

    c = cfg_of(PH_MACHINE_SIM, "nodes=2,cpus_per_node=1", 512);
    m = ph_machine_open(&c);
    CHECK(m != NULL);
    if (m) {
        CHECK_STR(ph_os_name(m->os), "sim");
        CHECK_EQ(move_calls(m, 200), 1);
        CHECK_EQ(ph_sim_set_binding(m->os, PH_SIM_BIND_CYCLIC), 0);
        CHECK_EQ(ph_sim_set_binding(m->os, (ph_sim_binding)7), -1);
        CHECK_EQ(errno, EINVAL);
        ph_machine_close(m);
    }

    /* machine=linux over a synthetic topology still gets the simulator */
    c = cfg_of(PH_MACHINE_LINUX, "nodes=2,cpus_per_node=1", 512);
    m = ph_machine_open(&c);
    CHECK(m != NULL);
    if (m) {
        CHECK_STR(ph_os_name(m->os), "sim");
        ph_machine_close(m);
    }
}

static void test_open_fails(void)
{
    ph_machine_cfg c = cfg_of(PH_MACHINE_AUTO, "nodes=0", 512);
    errno = 0;
    CHECK(ph_machine_open(&c) == NULL);
    CHECK_EQ(errno, EINVAL);
    CHECK_MSG("nodes=0");
    CHECK(ph_machine_open(NULL) == NULL);
    CHECK_EQ(errno, EINVAL);
    ph_mover_cfg mc = {512, 3, 0, 0};
    CHECK(ph_mover_new(NULL, &mc) == NULL);
    CHECK_EQ(errno, EINVAL);
}

static void test_from_options(void)
{
    ph_options_reset();
    ph_machine_cfg c;
    ph_machine_cfg_from_options(&c);
    CHECK_EQ(c.kind, PH_MACHINE_AUTO);
    CHECK_STR(c.topology, "");
    CHECK_EQ(c.sim_binding, PH_SIM_BIND_BLOCK);
    CHECK_EQ(c.mover.batch_pages, 512);
    CHECK_EQ(c.mover.retries, 3);
    CHECK_EQ(c.mover.node_full_backoff_ns, 1000 * 1000000ull);
    CHECK_EQ(ph_opt_set(PH_OPT_MACHINE, "sim", PH_SRC_API), 0);
    CHECK_EQ(ph_opt_set(PH_OPT_SIM_BINDING, "cyclic", PH_SRC_API), 0);
    CHECK_EQ(ph_opt_set(PH_OPT_MOVE_RETRIES, "9", PH_SRC_API), 0);
    CHECK_EQ(ph_opt_set(PH_OPT_NODE_FULL_BACKOFF_MS, "5", PH_SRC_API), 0);
    ph_machine_cfg_from_options(&c);
    CHECK_EQ(c.kind, PH_MACHINE_SIM);
    CHECK_EQ(c.sim_binding, PH_SIM_BIND_CYCLIC);
    CHECK_EQ(c.mover.retries, 9);
    CHECK_EQ(c.mover.node_full_backoff_ns, 5 * 1000000ull);
    ph_options_reset();
}

/* The process machine: made once from the tunables of that moment; a
 * failure is remembered. */
static void test_process_machine(void)
{
    ph_options_reset();
    CHECK_EQ(ph_opt_set(PH_OPT_TOPOLOGY, "nodes=2,cpus_per_node=1", PH_SRC_API), 0);
    CHECK_EQ(ph_opt_set(PH_OPT_MOVE_BATCH_PAGES, "64", PH_SRC_API), 0);
    ph_machine *m = ph_machine_get();
    CHECK(m != NULL);
    if (!m)
        return;
    CHECK_EQ(m->topo->nnodes, 2);
    /* later changes do not reach the machine already made */
    CHECK_EQ(ph_opt_set(PH_OPT_TOPOLOGY, "nodes=3,cpus_per_node=1", PH_SRC_API), 0);
    CHECK_EQ(ph_opt_set(PH_OPT_MOVE_BATCH_PAGES, "512", PH_SRC_API), 0);
    CHECK(ph_machine_get() == m);
    CHECK_EQ(ph_machine_get()->topo->nnodes, 2);
    CHECK_EQ(move_calls(m, 200), 4);
    /* until the tests start over */
    ph_machine_reset();
    m = ph_machine_get();
    CHECK(m != NULL);
    if (m) {
        CHECK_EQ(m->topo->nnodes, 3);
        CHECK_EQ(move_calls(m, 200), 1);
    }

    ph_machine_reset();
    CHECK_EQ(ph_opt_set(PH_OPT_TOPOLOGY, "nodes=0", PH_SRC_API), 0);
    CHECK(ph_machine_get() == NULL);
    CHECK_EQ(errno, EINVAL);
    CHECK_MSG("nodes=0");
    ph_fail(ENOENT, "something else");
    CHECK_EQ(ph_opt_set(PH_OPT_TOPOLOGY, "nodes=2,cpus_per_node=1", PH_SRC_API), 0);
    CHECK(ph_machine_get_for("ph_test") == NULL); /* remembered */
    CHECK_EQ(errno, EINVAL);
    CHECK_MSG("ph_test: ");
    CHECK_MSG("nodes=0");
    ph_machine_reset();
    CHECK(ph_machine_get() != NULL);
    ph_machine_reset();
    ph_options_reset();
}

int main(void)
{
    test_open();
    test_open_fails();
    test_from_options();
    test_process_machine();
    return check_summary("test_machine");
}
