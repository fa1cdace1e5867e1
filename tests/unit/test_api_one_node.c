/*
 * test_api_one_node.c -- the engine through the public API on a machine
 * with one NUMA node (simulated: nodes=1), where no page can move.
 *
 *   test_api_one_node         the engine is off there although engine=
 *                             iterative was asked for (and hybrid after
 *                             ph_init): the tunable reads "off", an area
 *                             registers, iteration ends run no invocation
 *                             and watch no page;
 *   test_api_one_node forced  with one_node_engine=1 the engine runs:
 *                             invocations, pages scanned.
 *
 * The rule is the process's (its machine is made once), hence one process
 * per case.
 */
#include "check.h"

#include "pagehome.h"

#include <stdlib.h>
#include <string.h>

#define PAGES 256
#define N (PAGES * 512) /* doubles */

static double grid[N + 512];

int main(int argc, char **argv)
{
    const int forced = argc > 1 && strcmp(argv[1], "forced") == 0;
    setenv("PAGEHOME_TOPOLOGY", "nodes=1,cpus_per_node=2", 1);
    setenv("PAGEHOME_ENGINE", "iterative", 1);
    setenv("PAGEHOME_ENGINE_SYNC", "1", 1);
    setenv("PAGEHOME_SAMPLE_MECHANISM", "mprotect", 1);
    setenv("PAGEHOME_SAMPLE_BUDGET", "0", 1);
    setenv("PAGEHOME_STABLE_AFTER", "0", 1);
    if (forced)
        setenv("PAGEHOME_ONE_NODE_ENGINE", "1", 1);
    else
        unsetenv("PAGEHOME_ONE_NODE_ENGINE");

    CHECK_EQ(ph_init(), 0);
    char mech[32] = "";
    CHECK_EQ(ph_config_get("engine", mech, sizeof mech), 0);
    CHECK_STR(mech, forced ? "iterative" : "off");
    /* a mechanism set after ph_init is turned off too when the engine is
     * made (the first engine call below) */
    if (!forced)
        CHECK_EQ(ph_config_set("engine", "hybrid"), 0);

    double *g = grid + (512 - ((uintptr_t)grid / 8) % 512) % 512;
    ph_hotarea_t *a = ph_area_register(g, (size_t)N * sizeof *g, "grid");
    CHECK(a != NULL);
    for (int it = 0; it < 6; it++) {
        for (size_t i = 0; i < N; i += 512)
            g[i] += 1.0;
        CHECK_EQ(ph_iteration_end(), 0);
    }
    CHECK_EQ(ph_config_get("engine", mech, sizeof mech), 0);
    CHECK_STR(mech, forced ? "iterative" : "off");
    ph_engine_stats_t st;
    CHECK_EQ(ph_engine_stats(&st), 0);
    CHECK_EQ(st.migrated, 0);
    if (forced) {
        CHECK(st.invocations > 0);
        CHECK(st.scanned > 0);
    } else {
        CHECK_EQ(st.invocations, 0);
        CHECK_EQ(st.scanned, 0);
        CHECK_EQ(st.accesses, 0);
    }
    double sum = 0;
    for (size_t i = 0; i < N; i += 512)
        sum += g[i];
    CHECK(sum == 6.0 * PAGES);
    CHECK_EQ(ph_area_unregister(a), 0);
    CHECK_EQ(ph_finalize(), 0);
    return check_summary(forced ? "test_api_one_node forced" : "test_api_one_node");
}
