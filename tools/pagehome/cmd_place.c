/*
 * cmd_place.c -- `pagehome place`: allocate with each policy, show where
 * the pages went.
 *
 * For every policy asked for, ph_alloc()s an array, touches it (from the
 * main thread, or from one thread per node pinned there), then asks the
 * machine where each page is (ph_query) and compares with the policy's
 * plan page by page.  The table it prints is the per-node page count and
 * the share of pages where the plan says; the exit status is 1 if any
 * page is elsewhere.  On the simulated machine threads are bound to
 * virtual nodes; on Linux they are pinned to a CPU of each node.
 */
#include "cli.h"

#include "api/settings.h"
#include "config/options.h"
#include "machine/machine.h"
#include "pagehome.h"
#include "place/plan.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

static const char *all_policies[] = {
    "first-touch", "interleave", "cyclic:4", "block", "block-static",
    "random:7", "node:LAST", NULL,
};

static void place_usage(FILE *out)
{
    fprintf(out,
"usage: pagehome place [--size BYTES] [--policy P[,P...]] [--pagesize 4K|2M]\n"
"                      [--touch serial|parallel]\n"
"  --size      array size (default 16M)\n"
"  --policy    first-touch, interleave, cyclic:K, block, block-static,\n"
"              random[:SEED], node:N, or all (default all)\n"
"  --pagesize  page size of the array (default: tunable pagesize)\n"
"  --touch     who touches the array first: the main thread (serial, the\n"
"              first-touch trap) or one thread per node (parallel; default)\n");
}

typedef struct toucher {
    ph_machine *ctx;
    char *base;
    size_t from, to; /* bytes */
    int node;        /* node to run on */
    int err;
} toucher;

static int pin_to_node(ph_machine *c, int node)
{
    /* The simulator binds virtual nodes; Linux says ENOTSUP: pin for real. */
    if (ph_thread_set_node(node) == 0)
        return 0;
    if (errno != ENOTSUP)
        return -1;
    int idx = ph_topo_node_index(c->topo, node);
    if (idx < 0 || c->topo->nodes[idx].ncpus == 0)
        return -1;
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int k = 0; k < c->topo->nodes[idx].ncpus; k++)
        CPU_SET(c->topo->nodes[idx].cpus[k], &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0 ? 0 : -1;
}

static void *touch_part(void *arg)
{
    toucher *t = arg;
    if (pin_to_node(t->ctx, t->node) < 0)
        t->err = 1;
    for (size_t off = t->from; off < t->to; off += 4096)
        t->base[off] = 1;
    /* The simulator cannot see faults: tell it who touched (ENOTSUP on Linux). */
    ph_sim_touch(t->ctx->os, t->base + t->from, t->to - t->from, t->node);
    return NULL;
}

/* Nodes that have CPUs: only they can touch. */
static int cpu_nodes(const ph_topology *t, int *nodes)
{
    int n = 0;
    for (int i = 0; i < t->nnodes; i++)
        if (t->nodes[i].ncpus > 0)
            nodes[n++] = t->nodes[i].id;
    return n;
}

/* Touch [base, base+bytes): parallel = one thread per CPU node, block-wise. */
static int touch(ph_machine *c, char *base, size_t bytes, int parallel, int *expect,
                 size_t npages)
{
    int nodes[PH_MAX_NODES];
    int n = parallel ? cpu_nodes(c->topo, nodes) : 1;
    if (!parallel)
        nodes[0] = ph_os_current_node(c->os);
    toucher tt[PH_MAX_NODES];
    pthread_t th[PH_MAX_NODES];
    for (int k = 0; k < n; k++) {
        size_t from = (npages * (size_t)k / (size_t)n) * 4096;
        size_t to = (npages * (size_t)(k + 1) / (size_t)n) * 4096;
        if (to > bytes)
            to = bytes;
        tt[k] = (toucher){c, base, from, to, nodes[k], 0};
        for (size_t p = from / 4096; p < (to + 4095) / 4096; p++)
            expect[p] = nodes[k];
    }
    for (int k = 0; k < n; k++)
        if (pthread_create(&th[k], NULL, touch_part, &tt[k]) != 0)
            return cli_error(-1, "place: cannot start a thread");
    int bad = 0;
    for (int k = 0; k < n; k++) {
        pthread_join(th[k], NULL);
        bad |= tt[k].err;
    }
    if (bad)
        fprintf(stderr, "pagehome: place: could not run a thread on every node\n");
    return 0;
}

static int run_policy(ph_machine *c, const char *text, size_t bytes, const char *pagesize,
                      int parallel, int *mismatch)
{
    char spec[128];
    const ph_topology *t = c->topo;
    if (strcmp(text, "node:LAST") == 0)
        snprintf(spec, sizeof spec, "node:%d", t->nodes[t->nnodes - 1].id);
    else
        snprintf(spec, sizeof spec, "%s", text);
    if (pagesize) {
        size_t l = strlen(spec);
        snprintf(spec + l, sizeof spec - l, "@%s", pagesize);
    }
    ph_placement_t pl;
    if (ph_placement_parse(&pl, spec) < 0)
        return cli_error(EXIT_USAGE, "place: %s", ph_last_error());
    if (pl.policy == PH_POLICY_BLOCK_STATIC) {
        pl.elems = bytes / sizeof(double);
        pl.elem_bytes = sizeof(double);
    }
    char *a = ph_alloc(bytes, &pl);
    if (!a)
        return cli_error(1, "place: %s: %s", spec, ph_last_error());
    size_t npages = (bytes + 4095) / 4096;
    int *status = malloc(npages * sizeof *status);
    int *expect = malloc(npages * sizeof *expect);
    int rc = 0;
    if (!status || !expect) {
        rc = cli_error(1, "place: out of memory");
        goto out;
    }
    if (touch(c, a, bytes, parallel, expect, npages) < 0) {
        rc = 1;
        goto out;
    }
    if (pl.policy != PH_POLICY_FIRST_TOUCH) {
        ph_plan plan;
        ph_place_cfg cfg; /* the defaults ph_alloc used */
        ph_settings_place(&cfg);
        if (ph_plan_make(&plan, &pl, t, &cfg.plan) < 0) {
            rc = cli_error(1, "place: %s", ph_last_error());
            goto out;
        }
        size_t per = plan.page_bytes / 4096;
        for (size_t p = 0; p < npages; p++)
            expect[p] = ph_plan_node_of(&plan, (uintptr_t)a, p / per,
                                        (npages + per - 1) / per);
        ph_plan_release(&plan);
    }
    ph_query(a, bytes, status);
    size_t count[PH_MAX_NODES] = {0}, other = 0, match = 0;
    for (size_t p = 0; p < npages; p++) {
        int idx = status[p] >= 0 ? ph_topo_node_index(t, status[p]) : -1;
        if (idx >= 0)
            count[idx]++;
        else
            other++;
        match += status[p] == expect[p];
    }
    printf("%-16s %8zu", spec, npages);
    for (int i = 0; i < t->nnodes; i++)
        printf(" %7zu", count[i]);
    printf(" %7zu  %6.1f%%\n", other, 100.0 * (double)match / (double)npages);
    if (match != npages)
        *mismatch = 1;
out:
    free(status);
    free(expect);
    ph_free(a);
    return rc;
}

int cmd_place(int argc, char **argv)
{
    uint64_t bytes = 16u << 20;
    const char *policies = "all", *pagesize = NULL;
    int parallel = 1;
    for (int i = 1; i < argc; i++) {
        int missing;
        const char *v;
        if ((v = cli_value(argc, argv, &i, "--size", &missing)) || missing) {
            if (missing || ph_parse_size(v, &bytes) < 0 || bytes == 0)
                return cli_error(EXIT_USAGE, "place: --size needs a size such as 64M (got '%s')",
                                 v ? v : "");
        } else if ((v = cli_value(argc, argv, &i, "--policy", &missing)) || missing) {
            if (missing)
                return cli_error(EXIT_USAGE, "place: --policy needs a value");
            policies = v;
        } else if ((v = cli_value(argc, argv, &i, "--pagesize", &missing)) || missing) {
            if (missing || (strcmp(v, "4K") && strcmp(v, "2M")))
                return cli_error(EXIT_USAGE, "place: --pagesize must be 4K or 2M");
            pagesize = v;
        } else if ((v = cli_value(argc, argv, &i, "--touch", &missing)) || missing) {
            if (missing || (strcmp(v, "serial") && strcmp(v, "parallel")))
                return cli_error(EXIT_USAGE, "place: --touch must be serial or parallel");
            parallel = strcmp(v, "parallel") == 0;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            place_usage(stdout);
            return 0;
        } else {
            place_usage(stderr);
            return cli_error(EXIT_USAGE, "place: unknown option '%s'", argv[i]);
        }
    }
    ph_machine *c = ph_machine_get();
    if (!c)
        return cli_error(1, "%s", ph_last_error());
    const ph_topology *t = c->topo;
    char sz[32];
    cli_bytes(bytes, sz, sizeof sz);
    printf("machine %s, %d node(s); %s array, touched %s\n\n", ph_os_name(c->os), t->nnodes, sz,
           parallel ? "by one thread per node" : "by the main thread");
    printf("%-16s %8s", "policy", "pages");
    for (int i = 0; i < t->nnodes; i++)
        printf("   node%-2d", t->nodes[i].id);
    printf(" %7s  %7s\n", "absent", "as-plan");
    int mismatch = 0;
    char list[1024];
    snprintf(list, sizeof list, "%s", policies);
    if (strcmp(list, "all") == 0) {
        for (const char **p = all_policies; *p; p++) {
            int rc = run_policy(c, *p, bytes, pagesize, parallel, &mismatch);
            if (rc)
                return rc;
        }
    } else {
        char *save = NULL;
        for (char *p = strtok_r(list, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
            int rc = run_policy(c, p, bytes, pagesize, parallel, &mismatch);
            if (rc)
                return rc;
        }
    }
    if (mismatch)
        fprintf(stderr, "pagehome: place: some pages are not where the policy says\n");
    return mismatch ? 1 : 0;
}
