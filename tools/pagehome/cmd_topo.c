/*
 * cmd_topo.c -- `pagehome topo`: the machine as pagehome sees it.
 *
 * Text output reads like `numactl --hardware` plus what pagehome needs to
 * know: huge page pools per node, whether the kernel lets us move pages,
 * NUMA balancing and THP state, and the latency model in use.  --json
 * writes the topology file format (it can be fed back as --topology).
 * --measure runs the pointer-chase and move_pages microbenchmark and
 * saves the result where the `latency_file` tunable points (or --save).
 */
#include "cli.h"

#include "config/options.h"
#include "machine/machine.h"
#include "pagehome.h"

#include <string.h>
#include <unistd.h>

static void topo_usage(FILE *out)
{
    fprintf(out,
"usage: pagehome topo [--json] [--measure [--save FILE] [--quick]]\n"
"  --json       print the topology as JSON (the format --topology accepts)\n"
"  --measure    measure load latency (pointer chase) and page migration cost\n"
"               (4 KiB and 2 MiB pages through move_pages) for every node pair\n"
"  --save FILE  where to save the measurements (default: tunable latency_file)\n"
"  --quick      smaller measurement (for tests)\n");
}

static void print_nodes(const ph_topology *t)
{
    printf("%-5s %-14s %12s %12s  %-15s %-15s\n", "node", "cpus", "memory", "free",
           "2M pool t/f/s", "1G pool t/f/s");
    for (int i = 0; i < t->nnodes; i++) {
        const ph_node_info *n = &t->nodes[i];
        char cpus[256], tot[32], fre[32], pool[2][48];
        cli_cpulist(n->cpus, n->ncpus, cpus, sizeof cpus);
        cli_bytes(n->mem_total_bytes, tot, sizeof tot);
        if (n->mem_free_bytes)
            cli_bytes(n->mem_free_bytes, fre, sizeof fre);
        else
            snprintf(fre, sizeof fre, "?");
        for (int p = 0; p < 2; p++)
            snprintf(pool[p], sizeof pool[p], "-");
        for (int p = 0; p < n->npools; p++) {
            int slot = n->pools[p].page_bytes == (1ull << 30);
            snprintf(pool[slot], sizeof pool[slot], "%llu/%llu/%llu",
                     (unsigned long long)n->pools[p].total,
                     (unsigned long long)n->pools[p].free,
                     (unsigned long long)n->pools[p].surplus);
        }
        printf("%-5d %-14s %12s %12s  %-15s %-15s\n", n->id, cpus, tot, fre, pool[0],
               pool[1]);
    }
}

static void print_matrix(const ph_topology *t, const char *title, int is_int,
                         const int *im, const double *dm, double scale)
{
    printf("%s\n%6s", title, "");
    for (int j = 0; j < t->nnodes; j++)
        printf(" %7d", t->nodes[j].id);
    printf("\n");
    for (int i = 0; i < t->nnodes; i++) {
        printf("%6d", t->nodes[i].id);
        for (int j = 0; j < t->nnodes; j++) {
            if (is_int)
                printf(" %7d", im[i * t->nnodes + j]);
            else
                printf(" %7.1f", dm[i * t->nnodes + j] * scale);
        }
        printf("\n");
    }
}

static const char *balancing_text(int v)
{
    switch (v) {
    case -1: return "unknown";
    case 0: return "off (0)";
    case 1: return "on (1, NUMA_BALANCING_NORMAL)";
    case 2: return "memory tiering (2)";
    case 3: return "on + memory tiering (3)";
    }
    return "on";
}

static void print_text(const ph_machine *c)
{
    const ph_topology *t = c->topo;
    ph_os_probe pr;
    memset(&pr, 0, sizeof pr);
    int probed = ph_os_probe_machine(c->os, &pr) == 0;
    printf("machine:   %s (topology from %s)\n", ph_os_name(c->os), t->source);
    printf("nodes:     %d    cpus: %d\n\n", t->nnodes, t->ncpus);
    print_nodes(t);
    printf("\n");
    print_matrix(t, "distances (ACPI SLIT, 10 = local):", 1, t->distance, NULL, 1);
    printf("\n");
    print_matrix(t, t->measured ? "load latency, ns (measured):"
                                : "load latency, ns (model: local_latency_ns * distance / 10):",
                 0, NULL, t->latency_ns, 1);
    printf("\n");
    print_matrix(t, t->measured ? "migration cost per 4 KiB page, us (measured):"
                                : "migration cost per 4 KiB page, us (model):",
                 0, NULL, t->migrate_ns_4k, 1e-3);
    printf("\n");
    if (!probed) {
        printf("kernel:    could not probe (%s)\n", ph_last_error());
        return;
    }
    if (pr.move_permitted == 1)
        printf("move_pages:       permitted\n");
    else if (pr.move_permitted == 0)
        printf("move_pages:       refused (%s): placement only\n", strerror(pr.move_errno));
    else
        printf("move_pages:       unknown\n");
    printf("numa balancing:   %s\n", balancing_text(pr.numa_balancing));
    printf("transparent huge: %s\n", pr.thp_mode[0] ? pr.thp_mode : "unknown");
    printf("hugetlbfs 2 MiB:  %s\n", pr.huge_2m_hugetlbfs ? "supported" : "not supported");
}

int cmd_topo(int argc, char **argv)
{
    int json = 0, measure = 0, quick = 0;
    const char *save = NULL;
    for (int i = 1; i < argc; i++) {
        int missing;
        const char *v;
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--measure") == 0) {
            measure = 1;
        } else if (strcmp(argv[i], "--quick") == 0) {
            quick = 1;
        } else if ((v = cli_value(argc, argv, &i, "--save", &missing)) || missing) {
            if (missing)
                return cli_error(EXIT_USAGE, "topo: --save needs a file name");
            save = v;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            topo_usage(stdout);
            return 0;
        } else {
            topo_usage(stderr);
            return cli_error(EXIT_USAGE, "topo: unknown option '%s'", argv[i]);
        }
    }
    if (save && !measure)
        return cli_error(EXIT_USAGE, "topo: --save keeps what --measure measures: give "
                                     "--measure too");
    ph_machine *c = ph_machine_get();
    if (!c)
        return cli_error(1, "%s", ph_last_error());
    if (measure) {
        if (c->topo->synthetic)
            return cli_error(1, "topo --measure measures the real machine; "
                                "unset the synthetic topology (%s)", c->topo->source);
        if (!save && ph_opt_str(PH_OPT_LATENCY_FILE)[0])
            save = ph_opt_str(PH_OPT_LATENCY_FILE);
        ph_measure_opts o = {
            .chase_bytes = (uint64_t)ph_opt_int(PH_OPT_MEASURE_BYTES),
            .pages_4k = (int)ph_opt_int(PH_OPT_MEASURE_PAGES),
            .pages_2m = (int)(ph_opt_int(PH_OPT_MEASURE_PAGES) / 64),
            .quiet = json,
        };
        if (quick) {
            o.chase_bytes = 8u << 20;
            o.pages_4k = 32;
            o.pages_2m = 2;
        }
        if (o.pages_2m < 2)
            o.pages_2m = 2;
        if (ph_topo_measure(c->topo, &o, save) < 0)
            return cli_error(1, "topo --measure: %s", ph_last_error());
        if (save && !json)
            fprintf(stderr, "pagehome: measurements saved to %s (set PAGEHOME_LATENCY_FILE=%s "
                            "to use them)\n", save, save);
    }
    if (json) {
        fflush(stdout);
        if (ph_topo_write_json(c->topo, STDOUT_FILENO) < 0)
            return cli_error(1, "topo --json: %s", ph_last_error());
        return 0;
    }
    print_text(c);
    return 0;
}
