/*
 * test_topo.c -- the topology layer (src/topo/).
 *
 * Synthetic specs (every key, every error message), the rules of
 * ph_topo_finish, JSON write/read round trips and reading errors, the
 * fixture files in tests/data, the real machine through hwloc, ph_topo_load
 * dispatch and the latency_file tunable, the latency model, measured-file
 * loading (node order, mismatches), ph_topo_cpu_index bounds, and a short
 * real measurement with small sizes.
 */
#include "base/error.h"
#include "base/json_write.h"
#include "config/options.h"
#include "topo/topo.h"

#include "check.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK_ERR(needle) CHECK_CONTAINS(ph_error_message(), needle)

static char data_dir[1024];

static void find_data_dir(void)
{
    const char *env = getenv("PAGEHOME_TEST_DATA");
    if (env && *env) {
        snprintf(data_dir, sizeof data_dir, "%s", env);
        return;
    }
    /* Next to this file: tests/unit/../data */
    snprintf(data_dir, sizeof data_dir, "%s", __FILE__);
    char *slash = strrchr(data_dir, '/');
    if (slash)
        strcpy(slash, "/../data");
    else
        snprintf(data_dir, sizeof data_dir, "../data");
}

static const char *data(const char *name)
{
    static char path[1200];
    snprintf(path, sizeof path, "%s/%s", data_dir, name);
    return path;
}

static char *temp_path(void)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/ph_test_topo_XXXXXX");
    int fd = mkstemp(path);
    if (fd >= 0)
        close(fd);
    return path;
}

/* ---- synthetic specs --------------------------------------------- */

static void test_spec_basic(void)
{
    ph_topology *t = ph_topo_from_spec("nodes=2,cpus_per_node=2");
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK_EQ(t->nnodes, 2);
    CHECK_EQ(t->ncpus, 4);
    CHECK_EQ(t->synthetic, 1);
    CHECK_STR(t->source, "spec");
    CHECK_EQ(t->nodes[0].id, 0);
    CHECK_EQ(t->nodes[1].id, 1);
    CHECK_EQ(t->nodes[1].ncpus, 2);
    CHECK_EQ(t->nodes[1].cpus[0], 2);
    CHECK_EQ(t->nodes[1].cpus[1], 3);
    for (int c = 0; c < 4; c++) {
        CHECK_EQ(t->cpus[c], c);
        CHECK_EQ(ph_topo_cpu_index(t, c), c / 2);
    }
    CHECK_EQ(t->nodes[0].mem_total_bytes, (uint64_t)4 << 30);
    CHECK_EQ(t->nodes[0].mem_free_bytes, (uint64_t)4 << 30);
    CHECK_EQ(t->nodes[0].npools, 0);
    CHECK_EQ(ph_topo_dist(t, 0, 0), 10);
    CHECK_EQ(ph_topo_dist(t, 0, 1), 20);
    CHECK_EQ(ph_topo_symmetric(t), 1);
    CHECK_EQ(t->measured, 0);
    ph_topo_free(t);

    /* Defaults: one CPU per node; blanks are ignored. */
    t = ph_topo_from_spec(" nodes = 3 ");
    CHECK(t && t->ncpus == 3 && t->nodes[2].cpus[0] == 2);
    ph_topo_free(t);
}

static void test_spec_memory_only(void)
{
    ph_topology *t = ph_topo_from_spec(
        "nodes=3,cpus_per_node=2:2:0,mem_per_node=16G:16G:64G,"
        "dist=10:21:24/21:10:24/24:24:10");
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK_EQ(t->nodes[2].ncpus, 0);
    CHECK(t->nodes[2].cpus == NULL);
    CHECK_EQ(t->ncpus, 4);
    CHECK_EQ(t->nodes[2].mem_total_bytes, (uint64_t)64 << 30);
    CHECK_EQ(t->nodes[1].mem_total_bytes, (uint64_t)16 << 30);
    CHECK_EQ(ph_topo_dist(t, 2, 0), 24);
    CHECK_EQ(ph_topo_dist(t, 0, 1), 21);
    CHECK_EQ(ph_topo_cpu_index(t, 3), 1);
    CHECK_EQ(ph_topo_cpu_index(t, 4), -1);
    ph_topo_free(t);
}

static void test_spec_cpu_lists(void)
{
    ph_topology *t = ph_topo_from_spec("nodes=2,cpus=0-1+4-5:3+2+6-7");
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK_EQ(t->nodes[0].ncpus, 4);
    CHECK_EQ(t->nodes[0].cpus[2], 4);
    CHECK_EQ(t->nodes[1].cpus[0], 2); /* sorted */
    CHECK_EQ(t->nodes[1].cpus[1], 3);
    CHECK_EQ(ph_topo_cpu_index(t, 5), 0);
    CHECK_EQ(ph_topo_cpu_index(t, 6), 1);
    ph_topo_free(t);

    t = ph_topo_from_spec("nodes=3,cpus=0-3::4-7");
    CHECK(t && t->nodes[1].ncpus == 0 && t->nodes[2].ncpus == 4);
    ph_topo_free(t);

    /* A gap in the CPU numbers: cpu 1 belongs to no node. */
    t = ph_topo_from_spec("nodes=2,cpus=0:2");
    CHECK(t && t->ncpus == 2 && t->cpu_node_len == 3);
    if (t)
        CHECK_EQ(ph_topo_cpu_index(t, 1), -1);
    ph_topo_free(t);
}

static void test_spec_sockets(void)
{
    ph_topology *t =
        ph_topo_from_spec("nodes=4,cpus_per_node=2,sockets=2,remote=12,"
                          "remote_socket=32");
    CHECK(t != NULL);
    if (!t)
        return;
    static const int want[4][4] = {
        {10, 12, 32, 32}, {12, 10, 32, 32}, {32, 32, 10, 12}, {32, 32, 12, 10}};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            CHECK_EQ(ph_topo_dist(t, i, j), want[i][j]);
    ph_topo_free(t);

    /* Defaults: remote = 2 * local, remote_socket = max(32, remote). */
    t = ph_topo_from_spec("nodes=4,sockets=2");
    CHECK(t && ph_topo_dist(t, 0, 1) == 20 && ph_topo_dist(t, 0, 2) == 32);
    ph_topo_free(t);
    t = ph_topo_from_spec("nodes=2,local=11");
    CHECK(t && ph_topo_dist(t, 0, 0) == 11 && ph_topo_dist(t, 1, 0) == 22);
    ph_topo_free(t);
    t = ph_topo_from_spec("nodes=4,sockets=4,remote=40");
    CHECK(t && ph_topo_dist(t, 0, 3) == 40);
    ph_topo_free(t);
}

static void test_spec_ids_pools_latency(void)
{
    ph_topology *t = ph_topo_from_spec(
        "nodes=2,ids=4:9,huge_2m=512:0,huge_1g=2,local_ns=80");
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK_EQ(t->nodes[0].id, 4);
    CHECK_EQ(t->nodes[1].id, 9);
    CHECK_EQ(ph_topo_node_index(t, 9), 1);
    CHECK_EQ(ph_topo_node_index(t, 4), 0);
    CHECK_EQ(ph_topo_node_index(t, 0), -1);
    CHECK_EQ(t->nodes[0].npools, 2);
    CHECK_EQ(t->nodes[0].pools[0].page_bytes, 2u << 20);
    CHECK_EQ(t->nodes[0].pools[0].total, 512);
    CHECK_EQ(t->nodes[0].pools[0].free, 512);
    CHECK_EQ(t->nodes[1].pools[0].total, 0);
    CHECK_EQ(t->nodes[1].pools[1].page_bytes, 1u << 30);
    CHECK_EQ(t->nodes[1].pools[1].total, 2);
    CHECK(t->model_local_ns == 80.0);
    CHECK(ph_topo_lat(t, 0, 0) == 80.0);
    CHECK(ph_topo_lat(t, 0, 1) == 160.0);
    ph_topo_free(t);
}

static void test_spec_asymmetric(void)
{
    ph_topology *t = ph_topo_from_spec("nodes=2,dist=10:20/22:10");
    CHECK(t != NULL);
    if (t) {
        CHECK_EQ(ph_topo_symmetric(t), 0);
        CHECK_EQ(ph_topo_dist(t, 1, 0), 22);
    }
    ph_topo_free(t);
}

typedef struct bad_spec {
    const char *spec;
    const char *msg;
} bad_spec;

static const bad_spec bad_specs[] = {
    {"", "topology: empty item"},
    {"cpus_per_node=2", "topology: missing key 'nodes'"},
    {"nodes=0", "topology: nodes=0: must be 1..64"},
    {"nodes=65", "topology: nodes=65: must be 1..64"},
    {"nodes=abc", "topology: nodes=abc: not a number"},
    {"nodes=-1", "topology: nodes=-1: not a number"},
    {"nodes=99999999999999999999999", "nodes=99999999999999999999999: must "
                                      "be 1..64"},
    {"nodes=2,nodez=3", "topology: unknown key 'nodez' (keys: nodes, ids,"},
    {"nodes=2,,cpus_per_node=1", "topology: empty item"},
    {"nodes=2,", "topology: empty item"},
    {"nodes=2,foo", "topology: 'foo': expected key=value"},
    {"nodes=2,nodes=3", "topology: key 'nodes' given twice"},
    {"nodes=2,ids=0", "topology: ids=0: 1 entries, expected 2 (one per "
                      "node)"},
    {"nodes=2,ids=0:1024", "topology: ids=0:1024: entry 2 ('1024'): must "
                           "be 0..1023"},
    {"nodes=2,ids=3:3", "topology: ids=3:3: node id 3 appears twice"},
    {"nodes=2,ids=0:x", "topology: ids=0:x: entry 2 ('x'): not a number"},
    {"nodes=4,cpus_per_node=1:2", "topology: cpus_per_node=1:2: 2 entries, "
                                  "expected 1 or 4 (one per node)"},
    {"nodes=2,cpus_per_node=4097", "topology: cpus_per_node=4097: must be "
                                   "0..4096"},
    {"nodes=2,cpus_per_node=4000:200", "topology: cpus_per_node=4000:200: "
                                       "4200 CPUs in all, at most 4096"},
    {"nodes=2,cpus_per_node=0", "topology: no node has a CPU"},
    {"nodes=2,cpus=0:1,cpus_per_node=1", "topology: cpus= and "
                                         "cpus_per_node= cannot both be "
                                         "given"},
    {"nodes=2,cpus=0-3", "topology: cpus=0-3: 1 entries, expected 2"},
    {"nodes=2,cpus=0-3:x", "topology: cpus=0-3:x: entry 2: 'x': expected "
                           "a CPU number or a range like 4-7"},
    {"nodes=2,cpus=3-1:4", "entry 1: '3-1': expected a CPU number or a "
                           "range like 4-7"},
    {"nodes=2,cpus=0++1:2", "entry 1: '': expected a CPU number"},
    {"nodes=2,cpus=0:4096", "topology: cpus=0:4096: entry 2: '4096': CPUs "
                            "must be 0..4095"},
    {"nodes=2,cpus=0-3:3-4", "topology: cpu 3 is in node 0 and node 1"},
    {"nodes=1,cpus=1+1", "topology: node 0: cpu 1 appears twice"},
    {"nodes=2,mem_per_node=lots", "topology: mem_per_node=lots: not a size "
                                  "(e.g. 512M, 4G)"},
    {"nodes=2,mem_per_node=1G:2Q", "topology: mem_per_node=1G:2Q: entry 2 "
                                   "('2Q'): not a size"},
    {"nodes=2,mem_per_node=0", "topology: mem_per_node=0: must be "
                               "1..1048576T"},
    {"nodes=2,mem_per_node=1048577T", "topology: mem_per_node=1048577T: "
                                      "must be 1..1048576T"},
    {"nodes=3,mem_per_node=1G:2G", "topology: mem_per_node=1G:2G: 2 "
                                   "entries, expected 1 or 3"},
    {"nodes=2,huge_2m=x", "topology: huge_2m=x: not a number"},
    {"nodes=2,huge_1g=1:2:3", "topology: huge_1g=1:2:3: 3 entries"},
    {"nodes=2,dist=10:20", "topology: dist has 1 rows, expected 2 (one per "
                           "node, separated by '/')"},
    {"nodes=4,dist=10:20:20:20/20:10:20:20/20:20:10/20:20:20:10",
     "topology: dist row 3 has 3 entries, expected 4"},
    {"nodes=2,dist=10:20/x:10", "topology: dist row 2 entry 1 ('x'): not a "
                                "number"},
    {"nodes=2,dist=10:256/20:10", "topology: dist row 1 entry 2 (256): must "
                                  "be 1..255"},
    {"nodes=2,dist=10:0/20:10", "topology: dist row 1 entry 2 (0): must be "
                                "1..255"},
    {"nodes=2,dist=9:20/20:9", "topology: node 0: local distance 9: must be "
                               ">= 10"},
    {"nodes=2,dist=20:10/10:20", "topology: node 0: distance 10 to node 1 "
                                 "is smaller than its local distance 20"},
    {"nodes=2,dist=10:20/20:10,remote=30", "topology: dist= cannot be "
                                           "combined with local=, remote=, "
                                           "sockets= or remote_socket="},
    {"nodes=2,local=9", "topology: local=9: must be 10..255"},
    {"nodes=2,remote=5", "topology: remote=5: must be 10..255"},
    {"nodes=2,local=30,remote=20", "topology: remote=20: must be 30..255"},
    {"nodes=4,sockets=3", "topology: sockets=3: must divide nodes=4"},
    {"nodes=4,sockets=5", "topology: sockets=5: must be 1..4"},
    {"nodes=4,remote_socket=40", "topology: remote_socket=40: needs "
                                 "sockets= greater than 1"},
    {"nodes=4,sockets=2,remote=30,remote_socket=20",
     "topology: remote_socket=20: must be 30..255"},
    {"nodes=2,local_ns=0", "topology: local_ns=0: must be a number of ns, "
                           "> 0 and <= 1e6"},
    {"nodes=2,local_ns=fast", "topology: local_ns=fast: must be a number"},
};

static void test_spec_errors(void)
{
    for (size_t i = 0; i < sizeof bad_specs / sizeof bad_specs[0]; i++) {
        errno = 0;
        ph_topology *t = ph_topo_from_spec(bad_specs[i].spec);
        CHECK(t == NULL);
        ph_topo_free(t);
        CHECK_EQ(errno, EINVAL);
        CHECK_ERR(bad_specs[i].msg);
    }
    errno = 0;
    CHECK(ph_topo_from_spec(NULL) == NULL);
    CHECK_ERR("topology: no spec");

    /* A long value is shortened in the message. */
    char spec[256] = "nodes=2,cpus_per_node=";
    memset(spec + strlen(spec), '9', 100);
    CHECK(ph_topo_from_spec(spec) == NULL);
    CHECK_ERR("...: must be 0..4096");

    char *huge = malloc(70000);
    memset(huge, 'x', 69999);
    huge[69999] = '\0';
    CHECK(ph_topo_from_spec(huge) == NULL);
    CHECK_ERR("spec longer than 65536 characters");
    free(huge);
}

/* ---- ph_topo_finish rules, directly ------------------------------ */

static ph_topology *two_nodes(void)
{
    ph_topology *t = ph_topo_alloc(2);
    for (int i = 0; t && i < 2; i++) {
        t->nodes[i].ncpus = 1;
        t->nodes[i].cpus = malloc(sizeof(int));
        t->nodes[i].cpus[0] = i;
    }
    return t;
}

static void test_finish_rules(void)
{
    CHECK(ph_topo_alloc(0) == NULL);
    CHECK_ERR("topology: 0 nodes: must be 1..64");
    CHECK(ph_topo_alloc(PH_MAX_NODES + 1) == NULL);
    CHECK_ERR("65 nodes");

    ph_topology *t = two_nodes();
    CHECK(t && ph_topo_finish(t) == 0);
    CHECK(t && ph_topo_finish(t) == 0); /* again: rebuilds cleanly */
    t->nodes[1].id = 0;
    CHECK_EQ(ph_topo_finish(t), -1);
    CHECK_ERR("topology: node id 0 appears twice");
    t->nodes[1].id = 1024;
    CHECK_EQ(ph_topo_finish(t), -1);
    CHECK_ERR("topology: node id 1024: must be 0..1023");
    t->nodes[1].id = -1;
    CHECK_EQ(ph_topo_finish(t), -1);
    t->nodes[1].id = 1023;
    CHECK_EQ(ph_topo_finish(t), 0);

    t->nodes[1].cpus[0] = PH_MAX_CPUS;
    CHECK_EQ(ph_topo_finish(t), -1);
    CHECK_ERR("topology: node 1023: cpu 4096: must be 0..4095");
    t->nodes[1].cpus[0] = 0;
    CHECK_EQ(ph_topo_finish(t), -1);
    CHECK_ERR("topology: cpu 0 is in node 0 and node 1023");
    t->nodes[1].cpus[0] = 4095;
    CHECK_EQ(ph_topo_finish(t), 0);
    CHECK_EQ(t->cpu_node_len, 4096);
    CHECK_EQ(ph_topo_cpu_index(t, 4095), 1);

    t->distance[1] = 0;
    CHECK_EQ(ph_topo_finish(t), -1);
    CHECK_ERR("topology: distance 0 from node 0 to node 1023: must be "
              "1..255");
    t->distance[1] = 20;
    t->distance[3] = 5;
    CHECK_EQ(ph_topo_finish(t), -1);
    CHECK_ERR("topology: node 1023: local distance 5: must be >= 10");
    t->distance[3] = 10;
    CHECK_EQ(ph_topo_finish(t), 0);
    ph_topo_free(t);
}

static void test_cpu_index_bounds(void)
{
    ph_topology *t = ph_topo_from_spec("nodes=2,cpus_per_node=2");
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK_EQ(ph_topo_cpu_index(t, -1), -1);
    CHECK_EQ(ph_topo_cpu_index(t, -1000000), -1);
    CHECK_EQ(ph_topo_cpu_index(t, 4), -1);
    CHECK_EQ(ph_topo_cpu_index(t, t->cpu_node_len), -1);
    CHECK_EQ(ph_topo_cpu_index(t, 1 << 30), -1);
    CHECK_EQ(ph_topo_cpu_index(t, 0), 0);
    CHECK_EQ(ph_topo_cpu_index(t, 3), 1);
    ph_topo_free(t);
}

/* ---- latency model ----------------------------------------------- */

static void test_latency_model(void)
{
    ph_topology *t = ph_topo_from_spec("nodes=2,dist=10:30/30:10");
    CHECK(t != NULL);
    if (!t)
        return;
    double local = ph_opt_double(PH_OPT_LOCAL_LATENCY_NS);
    double m4k = ph_opt_double(PH_OPT_MIGRATE_NS_4K);
    double m2m = ph_opt_double(PH_OPT_MIGRATE_NS_2M);
    CHECK(ph_topo_lat(t, 0, 0) == local);
    CHECK(ph_topo_lat(t, 0, 1) == local * 3);
    CHECK(t->migrate_ns_4k[0] == 0);
    CHECK(t->migrate_ns_4k[1] == m4k * 3);
    CHECK(t->migrate_ns_2m[2] == m2m * 3);
    CHECK(t->migrate_ns_2m[3] == 0);
    CHECK(t->migrate_ns_call == ph_opt_double(PH_OPT_MIGRATE_NS_CALL));

    /* The tunables feed the model. */
    CHECK_EQ(ph_opt_set(PH_OPT_LOCAL_LATENCY_NS, "50", PH_SRC_API), 0);
    CHECK_EQ(ph_opt_set(PH_OPT_MIGRATE_NS_4K, "1000", PH_SRC_API), 0);
    CHECK_EQ(ph_opt_set(PH_OPT_MIGRATE_NS_2M, "100000", PH_SRC_API), 0);
    CHECK_EQ(ph_opt_set(PH_OPT_MIGRATE_NS_CALL, "500", PH_SRC_API), 0);
    ph_topo_model_latency(t);
    CHECK(ph_topo_lat(t, 1, 1) == 50.0);
    CHECK(ph_topo_lat(t, 1, 0) == 150.0);
    CHECK(t->migrate_ns_4k[2] == 3000.0);
    CHECK(t->migrate_ns_2m[1] == 300000.0);
    CHECK(t->migrate_ns_call == 500.0);
    ph_options_reset();
    ph_topo_free(t);
}

/* ---- JSON -------------------------------------------------------- */

static ph_topology *json_round_trip(const ph_topology *t)
{
    ph_jw w;
    size_t len = 0;
    ph_jw_init(&w, 1);
    ph_topo_to_json(t, &w);
    const char *text = ph_jw_text(&w, &len);
    CHECK(text != NULL);
    ph_topology *back = text ? ph_topo_from_json_text(text, len, "mem") : NULL;
    if (!back)
        fprintf(stderr, "round trip failed: %s\n", ph_error_message());
    ph_jw_free(&w);
    return back;
}

static void test_json_round_trip(void)
{
    static const char *specs[] = {
        "nodes=1",
        "nodes=2,cpus_per_node=2",
        "nodes=3,cpus_per_node=8:8:0,mem_per_node=16G:16G:64G,"
        "dist=10:21:24/21:10:24/24:24:10,huge_2m=100:0:0,huge_1g=1",
        "nodes=4,ids=8:9:2:3,cpus=0-3+16-19:4-7:8-11:12-15,sockets=2,"
        "remote=11,remote_socket=31,local_ns=87.3",
        "nodes=2,dist=10:20/22:10",
        "nodes=64,cpus_per_node=64,sockets=8",
        "nodes=2,mem_per_node=1048576T:1",
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        ph_topology *t = ph_topo_from_spec(specs[i]);
        CHECK(t != NULL);
        if (!t)
            continue;
        ph_topology *back = json_round_trip(t);
        CHECK(back && ph_topo_same(t, back));
        CHECK(back && back->synthetic == 1);
        CHECK(back && strcmp(back->source, "mem") == 0);
        ph_topo_free(back);
        ph_topo_free(t);
    }

    /* Measured, non-model values survive exactly, as does the flag. */
    ph_topology *t = ph_topo_from_spec("nodes=2");
    t->latency_ns[1] = 123.456789012345;
    t->migrate_ns_4k[2] = 1.0 / 3.0;
    t->migrate_ns_2m[1] = 1e-7;
    t->migrate_ns_call = 4321.5;
    t->measured = 1;
    t->nodes[0].mem_free_bytes = 12345;
    ph_topology *back = json_round_trip(t);
    CHECK(back && ph_topo_same(t, back) && back->measured == 1);
    ph_topo_free(back);

    /* Through a file and ph_topo_load(path). */
    char *path = temp_path();
    FILE *f = fopen(path, "w");
    CHECK(f && ph_topo_write_json(t, fileno(f)) == 0);
    fclose(f);
    back = ph_topo_load(path);
    CHECK(back && ph_topo_same(t, back));
    CHECK(back && strcmp(back->source, path) == 0);
    ph_topo_free(back);
    unlink(path);
    ph_topo_free(t);

    /* Changing one thing is noticed. */
    t = ph_topo_from_spec("nodes=2,cpus_per_node=2");
    back = ph_topo_from_spec("nodes=2,cpus_per_node=2");
    CHECK(ph_topo_same(t, back));
    back->nodes[1].mem_free_bytes--;
    CHECK(!ph_topo_same(t, back));
    back->nodes[1].mem_free_bytes++;
    back->latency_ns[3] += 1e-9;
    CHECK(!ph_topo_same(t, back));
    ph_topo_free(back);
    ph_topo_free(t);
}

static void test_json_fixture(void)
{
    ph_topology *t = ph_topo_from_json_file(data("topo_cxl3.json"));
    CHECK(t != NULL);
    if (!t) {
        fprintf(stderr, "%s\n", ph_error_message());
        return;
    }
    CHECK_EQ(t->nnodes, 3);
    CHECK_EQ(t->ncpus, 8);
    CHECK_EQ(t->nodes[1].cpus[0], 4); /* sorted */
    CHECK_EQ(t->nodes[2].ncpus, 0);
    CHECK_EQ(t->nodes[0].mem_free_bytes, (uint64_t)16 << 30); /* = total */
    CHECK_EQ(t->nodes[1].mem_free_bytes, (uint64_t)1 << 30);
    CHECK_EQ(t->nodes[0].npools, 1);
    CHECK_EQ(t->nodes[0].pools[0].free, 500);
    CHECK_EQ(ph_topo_dist(t, 0, 2), 14);
    CHECK(ph_topo_lat(t, 1, 2) ==
          ph_opt_double(PH_OPT_LOCAL_LATENCY_NS) * 2.4);
    CHECK_EQ(t->measured, 0);
    CHECK_EQ(t->synthetic, 1);
    ph_topo_free(t);
}

typedef struct bad_json {
    const char *text;
    const char *msg;
} bad_json;

static const bad_json bad_jsons[] = {
    {"[]", "topology: t.json: expected an object at the top level"},
    {"{}", "topology: t.json: missing key 'nodes'"},
    {"{\"nodes\": []}", "topology: t.json: nodes: expected 1..64 entries, "
                        "found 0"},
    {"{\"nodes\": 3}", "topology: t.json: nodes: expected an array"},
    {"{\"nodes\": [5]}", "topology: t.json: nodes[0]: expected an object"},
    {"{\"nodes\": [{\"cpus\": []}]}", "topology: t.json: nodes[0]: missing "
                                      "key 'id'"},
    {"{\"nodes\": [{\"id\": 0}]}", "topology: t.json: nodes[0]: missing key "
                                   "'cpus'"},
    {"{\"nodes\": [{\"id\": 1.5, \"cpus\": [0]}]}",
     "topology: t.json: nodes[0].id: expected an integer 0..1023"},
    {"{\"nodes\": [{\"id\": 0, \"cpus\": [0, \"1\"]}]}",
     "topology: t.json: nodes[0].cpus[1]: expected an integer 0..4095"},
    {"{\"nodes\": [{\"id\": 0, \"cpus\": [0, 4096]}]}",
     "nodes[0].cpus[1]: expected an integer 0..4095"},
    {"{\"nodes\": [{\"id\": 0, \"cpus\": [0], \"mem_total_bytes\": -1}]}",
     "nodes[0].mem_total_bytes: expected an integer 0..9223372036854775807"},
    {"{\"nodes\": [{\"id\": 0, \"cpus\": [0], \"hugepages\": [{}]}]}",
     "nodes[0].hugepages[0].page_bytes: expected an integer"},
    {"{\"nodes\": [{\"id\": 0, \"cpus\": [0], \"hugepages\": "
     "[{\"page_bytes\": 65536}]}]}",
     "nodes[0].hugepages[0].page_bytes: expected 2097152 or 1073741824"},
    {"{\"nodes\": [{\"id\": 0, \"cpus\": [0], \"hugepages\": [{}, {}, {}]}]}",
     "nodes[0].hugepages: expected 0..2 entries, found 3"},
    {"{\"nodes\": [{\"id\": 0, \"cpus\": [0]}, {\"id\": 0, \"cpus\": [1]}]}",
     "topology: t.json: node id 0 appears twice"},
    {"{\"nodes\": [{\"id\": 0, \"cpus\": [0]}, {\"id\": 1, \"cpus\": [0]}]}",
     "topology: t.json: cpu 0 is in node 0 and node 1"},
    {"{\"nodes\": [{\"id\": 0, \"cpus\": []}]}",
     "topology: t.json: no node has a CPU"},
    {"{\"nodes\": [{\"id\": 0, \"cpus\": [0]}], \"distance\": [[10, 20]]}",
     "topology: t.json: distance[0]: expected 1 entries, found 2"},
    {"{\"nodes\": [{\"id\": 0, \"cpus\": [0]}], \"distance\": [[300]]}",
     "topology: t.json: distance[0][0]: expected an integer 1..255"},
    {"{\"nodes\": [{\"id\": 0, \"cpus\": [0]}], \"distance\": [[5]]}",
     "topology: t.json: node 0: local distance 5: must be >= 10"},
    {"{\"nodes\": [{\"id\": 0, \"cpus\": [0]}], \"latency_ns\": [[-1]]}",
     "topology: t.json: latency_ns[0][0]: expected a number >= 0"},
    {"{\"nodes\": [{\"id\": 0, \"cpus\": [0]}], \"migrate_ns_2m\": [1]}",
     "topology: t.json: migrate_ns_2m[0]: expected an array"},
    {"{\"nodes\": [{\"id\": 0, \"cpus\": [0]}], \"measured\": 1}",
     "topology: t.json: measured: expected true or false"},
    {"{\"nodes\": [{\"id\": 0, \"cpus\": [0]}], \"measured\": true}",
     "topology: t.json: \"measured\" is true but latency_ns is missing"},
    {"{\"nodes\": [{\"id\": 0, \"cpus\": [0]}], \"migrate_ns_call\": null}",
     "topology: t.json: migrate_ns_call: expected a number >= 0"},
    {"{\"format\": \"other\", \"nodes\": []}",
     "topology: t.json: format: expected \"pagehome-topology\""},
    {"{\"version\": 2, \"nodes\": []}",
     "topology: t.json: version: expected an integer 1..1"},
    {"{\"nodes\": [{\"id\": 0, \"cpus\": [0]}],}",
     "topology: t.json: line 1 col 36: string or '}' expected near '}'"},
    /* jansson's refusals, with line and column */
    {"{\"nodes\": [{\"id\": 0, \"cpus\": [0]}],\n \"nodes\": []}",
     "topology: t.json: line 2 col 8: duplicate object key near '\"nodes\"'"},
    {"{\"nodes\": [{\"id\": 0, \"id\": 1, \"cpus\": [0]}]}",
     "topology: t.json: line 1 col 25: duplicate object key"},
    {"{\"nodes\": [{\"id\": 0, \"cpus\": [0],\n\"mem_total_bytes\": 9223372036854775808}]}",
     "topology: t.json: line 2 col 38: too big integer"},
    {"{\"nodes\": [{\"id\": 0, \"cpus\": [0]}], \"migrate_ns_call\": 1e400}",
     "topology: t.json: line 1 col 60: real number overflow"},
};

static void test_json_errors(void)
{
    for (size_t i = 0; i < sizeof bad_jsons / sizeof bad_jsons[0]; i++) {
        const char *text = bad_jsons[i].text;
        errno = 0;
        ph_topology *t = ph_topo_from_json_text(text, strlen(text), "t.json");
        CHECK(t == NULL);
        ph_topo_free(t);
        CHECK_EQ(errno, EINVAL);
        CHECK_ERR(bad_jsons[i].msg);
    }
    /* Unknown keys are ignored, optional ones may be missing. */
    const char *ok = "{\"nodes\": [{\"id\": 3, \"cpus\": [0], \"x\": 1}], "
                     "\"future\": {\"a\": [1]}}";
    ph_topology *t = ph_topo_from_json_text(ok, strlen(ok), NULL);
    CHECK(t && t->nodes[0].id == 3 && t->nodes[0].mem_total_bytes == 0);
    ph_topo_free(t);

    /* Integers are exact to 64 bits (no trip through a double). */
    const char *big = "{\"nodes\": [{\"id\": 0, \"cpus\": [0], "
                      "\"mem_total_bytes\": 9223372036854775807, "
                      "\"mem_free_bytes\": 9007199254740993}]}";
    t = ph_topo_from_json_text(big, strlen(big), NULL);
    CHECK(t != NULL);
    if (t) {
        CHECK(t->nodes[0].mem_total_bytes == (uint64_t)INT64_MAX);
        CHECK(t->nodes[0].mem_free_bytes == 9007199254740993ull);
    }
    ph_topo_free(t);

    errno = 0;
    CHECK(ph_topo_from_json_file("/nonexistent/topo.json") == NULL);
    CHECK_EQ(errno, ENOENT);
    CHECK_ERR("topology: /nonexistent/topo.json: cannot open: No such file");
}

/* ---- the real machine -------------------------------------------- */

static void test_hwloc(void)
{
    ph_topology *t = ph_topo_from_hwloc();
    CHECK(t != NULL);
    if (!t) {
        fprintf(stderr, "hwloc: %s\n", ph_error_message());
        return;
    }
    long online = sysconf(_SC_NPROCESSORS_CONF);
    CHECK(t->nnodes >= 1);
    CHECK(t->ncpus >= 1);
    CHECK(online <= 0 || t->ncpus <= online);
    CHECK_EQ(t->synthetic, 0);
    CHECK_STR(t->source, "hwloc");
    int counted = 0;
    for (int i = 0; i < t->nnodes; i++) {
        CHECK_EQ(ph_topo_dist(t, i, i), 10);
        CHECK(t->nodes[i].mem_total_bytes > 0);
        CHECK(t->nodes[i].mem_free_bytes <= t->nodes[i].mem_total_bytes ||
              t->nodes[i].mem_free_bytes == 0);
        for (int k = 0; k < t->nodes[i].ncpus; k++)
            CHECK_EQ(ph_topo_cpu_index(t, t->nodes[i].cpus[k]), i);
        counted += t->nodes[i].ncpus;
    }
    CHECK_EQ(counted, t->ncpus);
    for (int c = 0; c < t->ncpus; c++)
        CHECK(ph_topo_cpu_index(t, t->cpus[c]) >= 0);
    for (int c = 1; c < t->ncpus; c++)
        CHECK(t->cpus[c - 1] < t->cpus[c]);
    CHECK(ph_topo_lat(t, 0, 0) > 0);

    /* The real machine round-trips through JSON too (as synthetic). */
    ph_topology *back = json_round_trip(t);
    CHECK(back && ph_topo_same(t, back) && back->synthetic == 1);
    ph_topo_free(back);
    ph_topo_free(t);
}

/* hwloc reading another machine: HWLOC_XMLFILE / HWLOC_SYNTHETIC. */
static ph_topology *hwloc_with(const char *var, const char *value)
{
    setenv(var, value, 1);
    ph_topology *t = ph_topo_from_hwloc();
    unsetenv(var);
    if (!t)
        fprintf(stderr, "hwloc with %s: %s\n", var, ph_error_message());
    return t;
}

static void test_hwloc_cxl(void)
{
    /* Two packages with a node each, and a CPU-less node 4 attached to
     * the machine: hwloc gives node 4 the machine's cpuset, but its CPUs
     * belong to the package nodes. */
    ph_topology *t = hwloc_with("HWLOC_XMLFILE", data("hwloc_2pkg_cxl.xml"));
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK_EQ(t->nnodes, 3);
    CHECK_EQ(t->nodes[0].id, 0);
    CHECK_EQ(t->nodes[1].id, 1);
    CHECK_EQ(t->nodes[2].id, 4);
    CHECK_EQ(t->nodes[0].ncpus, 2);
    CHECK_EQ(t->nodes[1].ncpus, 2);
    CHECK_EQ(t->nodes[2].ncpus, 0);
    CHECK_EQ(ph_topo_cpu_index(t, 1), 0);
    CHECK_EQ(ph_topo_cpu_index(t, 2), 1);
    CHECK_EQ(t->nodes[2].mem_total_bytes, (uint64_t)4 << 30);
    CHECK_EQ(t->nodes[0].mem_free_bytes, 0); /* not this system: unknown */
    CHECK_EQ(t->nodes[0].npools, 0);
    CHECK_EQ(ph_topo_dist(t, 0, 1), 21);
    CHECK_EQ(ph_topo_dist(t, 0, 2), 17);
    CHECK_EQ(ph_topo_dist(t, 2, 1), 28);
    CHECK_EQ(ph_topo_dist(t, 2, 2), 10);
    CHECK_EQ(t->synthetic, 0);
    ph_topo_free(t);

    /* A matrix that breaks the rules (node 4's local distance is not the
     * minimum of its row) is replaced by 10 local / 20 remote. */
    FILE *in = fopen(data("hwloc_2pkg_cxl.xml"), "r");
    char *xml = calloc(1, 65536);
    size_t n = in ? fread(xml, 1, 65535, in) : 0;
    if (in)
        fclose(in);
    char *last = strstr(xml, "17 28 10 ");
    CHECK(n > 0 && last != NULL);
    if (last) {
        memcpy(last, "17 28 99 ", 9);
        char *path = temp_path();
        FILE *out = fopen(path, "w");
        fwrite(xml, 1, n, out);
        fclose(out);
        t = hwloc_with("HWLOC_XMLFILE", path);
        CHECK(t && ph_topo_dist(t, 2, 2) == 10 && ph_topo_dist(t, 0, 2) == 20);
        ph_topo_free(t);
        unlink(path);
    }
    free(xml);

    /* No distance matrix: 10 local / 20 remote. */
    t = hwloc_with("HWLOC_SYNTHETIC", "pack:2 numa:1 pu:2");
    CHECK(t && t->nnodes == 2 && t->ncpus == 4);
    CHECK(t && ph_topo_dist(t, 0, 1) == 20 && ph_topo_dist(t, 1, 1) == 10);
    CHECK(t && t->nodes[1].cpus[0] == 2);
    ph_topo_free(t);
}

static void test_load_dispatch(void)
{
    ph_topology *t = ph_topo_load(NULL);
    CHECK(t && t->synthetic == 0);
    ph_topo_free(t);
    t = ph_topo_load("");
    CHECK(t && strcmp(t->source, "hwloc") == 0);
    ph_topo_free(t);
    t = ph_topo_load("nodes=3");
    CHECK(t && t->nnodes == 3 && strcmp(t->source, "spec") == 0);
    ph_topo_free(t);
    t = ph_topo_load("  {\"nodes\": [{\"id\": 2, \"cpus\": [0]}]}");
    CHECK(t && t->nodes[0].id == 2);
    CHECK(t && strcmp(t->source, "inline JSON") == 0);
    ph_topo_free(t);
    t = ph_topo_load(data("topo_cxl3.json"));
    CHECK(t && t->nnodes == 3);
    ph_topo_free(t);

    CHECK(ph_topo_load("no-such-topology.json") == NULL);
    CHECK_ERR("topology: no-such-topology.json: cannot open");
    CHECK(ph_topo_load("nodes=0") == NULL);
    CHECK_ERR("nodes=0: must be 1..64");
    CHECK(ph_topo_load("{\"nodes\": ") == NULL);
    CHECK_ERR("topology: inline JSON: line 1 col 10: unexpected token near end of file");
}

/* ---- measured files ---------------------------------------------- */

static void test_load_measured(void)
{
    ph_topology *t = ph_topo_from_spec("nodes=2");
    CHECK(t != NULL);
    if (!t)
        return;
    /* The file lists node 1 first: values are matched by node id. */
    CHECK_EQ(ph_topo_load_measured(t, data("latency_2node.json")), 0);
    CHECK_EQ(t->measured, 1);
    CHECK(ph_topo_lat(t, 0, 0) == 91.0);
    CHECK(ph_topo_lat(t, 0, 1) == 151.0);
    CHECK(ph_topo_lat(t, 1, 0) == 150.25);
    CHECK(ph_topo_lat(t, 1, 1) == 90.5);
    CHECK(t->migrate_ns_4k[1] == 1600.0);
    CHECK(t->migrate_ns_2m[2] == 300000.0);
    CHECK(t->migrate_ns_call == 7000.0);
    /* The model is back after ph_topo_model_latency. */
    ph_topo_model_latency(t);
    CHECK_EQ(t->measured, 0);
    ph_topo_free(t);

    t = ph_topo_from_spec("nodes=3");
    CHECK_EQ(ph_topo_load_measured(t, data("latency_2node.json")), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_ERR("latency_2node.json: node 2 of this machine is not in the "
              "file (file nodes: 1,0)");
    CHECK_EQ(t->measured, 0);
    ph_topo_free(t);

    t = ph_topo_from_spec("nodes=2");
    CHECK_EQ(ph_topo_load_measured(t, data("latency_other_nodes.json")), -1);
    CHECK_ERR("node 1 of this machine is not in the file (file nodes: 0,5)");
    ph_topo_free(t);

    t = ph_topo_from_spec("nodes=1");
    CHECK_EQ(ph_topo_load_measured(t, data("latency_2node.json")), -1);
    CHECK_ERR("latency_2node.json: node 1 is not a node of this machine "
              "(nodes: 0)");
    ph_topo_free(t);

    t = ph_topo_from_spec("nodes=2");
    CHECK_EQ(ph_topo_load_measured(t, data("latency_not_measured.json")), -1);
    CHECK_ERR("latency_not_measured.json: holds no measured values");
    CHECK_EQ(ph_topo_load_measured(t, data("latency_bad_syntax.json")), -1);
    CHECK_ERR("latency file ");
    CHECK_ERR("latency_bad_syntax.json: line 3 col 36: ']' expected near '{'");
    CHECK_EQ(ph_topo_load_measured(t, "/nonexistent/lat.json"), -1);
    CHECK_ERR("latency file /nonexistent/lat.json: cannot open");
    CHECK_EQ(t->measured, 0);
    ph_topo_free(t);
}

static void test_latency_file_tunable(void)
{
    /* A good file: the loaded topology carries its values. */
    CHECK_EQ(ph_opt_set(PH_OPT_LATENCY_FILE, data("latency_2node.json"),
                        PH_SRC_API), 0);
    ph_topology *t = ph_topo_load("nodes=2");
    CHECK(t && t->measured == 1 && ph_topo_lat(t, 0, 1) == 151.0);
    ph_topo_free(t);

    /* A missing file is fine, silently. */
    CHECK_EQ(ph_opt_set(PH_OPT_LATENCY_FILE, "/nonexistent/lat.json",
                        PH_SRC_API), 0);
    t = ph_topo_load("nodes=2");
    CHECK(t && t->measured == 0);
    ph_topo_free(t);

    /* A mismatched one warns (on stderr) and keeps the model. */
    CHECK_EQ(ph_opt_set(PH_OPT_LATENCY_FILE, data("latency_other_nodes.json"),
                        PH_SRC_API), 0);
    fprintf(stderr, "(a warning about latency_other_nodes.json is "
                    "expected)\n");
    t = ph_topo_load("nodes=2");
    CHECK(t && t->measured == 0);
    CHECK(t && ph_topo_lat(t, 0, 1) ==
                   2 * ph_opt_double(PH_OPT_LOCAL_LATENCY_NS));
    ph_topo_free(t);
    ph_options_reset();
}

/* ---- measurement ------------------------------------------------- */

static void test_measure(void)
{
    ph_topology *s = ph_topo_from_spec("nodes=2");
    CHECK_EQ(ph_topo_measure(s, NULL, NULL), -1);
    CHECK_ERR("measure: needs the real machine's topology");
    ph_topo_free(s);

    ph_topology *t = ph_topo_from_hwloc();
    CHECK(t != NULL);
    if (!t)
        return;
    ph_measure_opts bad = {.chase_bytes = 1024};
    CHECK_EQ(ph_topo_measure(t, &bad, NULL), -1);
    CHECK_ERR("must be 64K..16G");

    ph_measure_opts o = {.chase_bytes = 1 << 20, .pages_4k = 16,
                         .pages_2m = 1, .quiet = 1};
    char *path = temp_path();
    CHECK_EQ(ph_topo_measure(t, &o, path), 0);
    CHECK_EQ(t->measured, 1);
    for (int i = 0; i < t->nnodes; i++)
        for (int j = 0; j < t->nnodes; j++)
            CHECK(ph_topo_lat(t, i, j) > 0 && ph_topo_lat(t, i, j) < 1e6);

    ph_topology *fresh = ph_topo_from_hwloc();
    CHECK(fresh && ph_topo_load_measured(fresh, path) == 0);
    CHECK(fresh && fresh->measured == 1 &&
          ph_topo_lat(fresh, 0, 0) == ph_topo_lat(t, 0, 0));
    ph_topo_free(fresh);
    unlink(path);
    ph_topo_free(t);
}

int main(void)
{
    find_data_dir();
    test_spec_basic();
    test_spec_memory_only();
    test_spec_cpu_lists();
    test_spec_sockets();
    test_spec_ids_pools_latency();
    test_spec_asymmetric();
    test_spec_errors();
    test_finish_rules();
    test_cpu_index_bounds();
    test_latency_model();
    test_json_round_trip();
    test_json_fixture();
    test_json_errors();
    test_hwloc();
    test_hwloc_cxl();
    test_load_dispatch();
    test_load_measured();
    test_latency_file_tunable();
    test_measure();
    return check_summary("test_topo");
}
