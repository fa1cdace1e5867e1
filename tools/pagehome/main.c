/*
 * main.c -- the pagehome command: global options and dispatch.
 *
 *   pagehome [global options] COMMAND [options]
 *
 * Global options set tunables before the library starts, so they apply
 * to every command: --topology SPEC, --verbose, --set NAME=VALUE.  They
 * are the same tunables as the PAGEHOME_* environment variables; the
 * command line wins over the environment.  `run` and `cluster` hand them
 * to the program (and its ranks); `topo` and `place` use them here.  A
 * command they cannot change refuses them with the reason, rather than
 * ignore them: `report` (it reads a recorded file), and --topology for
 * `sim` (its machines are its presets) and `hugepages` (the real pools
 * in sysfs).
 */
#include "cli.h"

#include "pagehome.h"

#include "config/options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out,
"usage: pagehome [global options] COMMAND [options]\n"
"\n"
"Decides and corrects the NUMA home of every page of a program's data.\n"
"\n"
"commands:\n"
"  topo      show nodes, CPUs, memory, distances, huge page pools, what the\n"
"            kernel permits (--json for JSON, --measure to measure latencies\n"
"            and migration costs)\n"
"  place     allocate an array with each placement policy and show where its\n"
"            pages are, per node\n"
"  run       run an unmodified OpenMP program with pagehome (transparent\n"
"            mode: pagehome run [options] -- PROGRAM [ARGS...])\n"
"  report    summarise a run's statistics file: text, plots, report.html\n"
"            (pagehome report RUN.json [-o OUTDIR] [--text-only])\n"
"  hugepages show the huge page pools of every node; --node N --reserve,\n"
"            --release or --set COUNT changes one node's pool\n"
"  sim       the UPMlib papers' experiments on simulated machines (e1..e5)\n"
"  cluster   cluster mode: run a program's ranks through the MPI launcher\n"
"            (pagehome cluster run -n N -- PROGRAM), `cluster info`\n"
"  help      this text, or `pagehome help COMMAND`\n"
"\n"
"global options:\n"
"  --topology SPEC     run on a simulated machine: a synthetic spec such as\n"
"                      \"nodes=4,cpus_per_node=2\" or a JSON file from `topo --json`\n"
"  --set NAME=VALUE    set any tunable (see --print-config)\n"
"  -v, --verbose       print the configuration and what pagehome does\n"
"  --print-config      print every tunable, its value and where it came from\n"
"                      (--markdown: the reference table)\n"
"  --version           print the version\n");
}

static int set_tunable(const char *name, const char *value)
{
    if (ph_config_set(name, value) < 0)
        return cli_error(EXIT_USAGE, "%s", ph_last_error());
    return 0;
}

static int print_config(int argc, char **argv, int i)
{
    int markdown = 0;
    for (i++; i < argc; i++) {
        if (strcmp(argv[i], "--markdown") == 0)
            markdown = 1;
        else
            return cli_error(EXIT_USAGE, "--print-config: unknown option '%s'", argv[i]);
    }
    if (markdown) {
        /* The reference table is the same whatever the environment says. */
        ph_options_print(stdout, 1);
        return 0;
    }
    fflush(stdout);
    return ph_config_print(1) == 0 ? 0 : cli_error(1, "%s", ph_last_error());
}

/* A global option a command cannot honour: refused, with the reason. */
static int refuse_globals(const char *cmd, int topology, int sets)
{
    static const struct {
        const char *cmd;
        int no_topology, no_set;
        const char *why;
    } rules[] = {
        {"report", 1, 1, "it summarises a recorded statistics file, whose run had its own "
                         "machine and tunables"},
        {"sim", 1, 0, "its machines are its presets (pagehome sim presets; --machine "
                      "PRESET)"},
        {"hugepages", 1, 0, "it reads and changes the real machine's pools in sysfs"},
    };
    for (size_t k = 0; k < sizeof rules / sizeof rules[0]; k++) {
        if (strcmp(cmd, rules[k].cmd) != 0)
            continue;
        if (topology && rules[k].no_topology)
            return cli_error(EXIT_USAGE, "the global option --topology does not apply to "
                             "`%s`: %s", cmd, rules[k].why);
        if (sets && rules[k].no_set)
            return cli_error(EXIT_USAGE, "the global option --set does not apply to `%s`: "
                             "%s", cmd, rules[k].why);
    }
    return 0;
}

int main(int argc, char **argv)
{
    int i = 1;
    int given_topology = 0, given_sets = 0;
    for (; i < argc; i++) {
        const char *a = argv[i];
        const char *v;
        int missing;
        if (strcmp(a, "--version") == 0) {
            printf("pagehome %s\n", ph_version());
            return 0;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            if (set_tunable("verbose", "1"))
                return EXIT_USAGE;
        } else if (strcmp(a, "--print-config") == 0) {
            return print_config(argc, argv, i);
        } else if ((v = cli_value(argc, argv, &i, "--topology", &missing)) || missing) {
            if (missing)
                return cli_error(EXIT_USAGE, "--topology needs a value");
            if (set_tunable("topology", v))
                return EXIT_USAGE;
            given_topology = 1;
        } else if ((v = cli_value(argc, argv, &i, "--set", &missing)) || missing) {
            const char *eq = v ? strchr(v, '=') : NULL;
            if (!eq)
                return cli_error(EXIT_USAGE, "--set needs NAME=VALUE");
            char name[128];
            snprintf(name, sizeof name, "%.*s", (int)(eq - v), v);
            if (set_tunable(name, eq + 1))
                return EXIT_USAGE;
            given_sets++;
        } else if (a[0] == '-') {
            return cli_error(EXIT_USAGE, "unknown option '%s' (pagehome help)", a);
        } else {
            break;
        }
    }
    if (i >= argc) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[i];
    int sub_argc = argc - i;
    char **sub_argv = argv + i;
    int refused = refuse_globals(cmd, given_topology, given_sets);
    if (refused)
        return refused;
    if (strcmp(cmd, "help") == 0) {
        if (sub_argc > 1 && strcmp(sub_argv[1], "topo") == 0) {
            char *h[] = {"topo", "--help", NULL};
            return cmd_topo(2, h);
        }
        if (sub_argc > 1 && strcmp(sub_argv[1], "run") == 0) {
            char *h[] = {"run", "--help", NULL};
            return cmd_run(2, h);
        }
        if (sub_argc > 1 && strcmp(sub_argv[1], "place") == 0) {
            char *h[] = {"place", "--help", NULL};
            return cmd_place(2, h);
        }
        if (sub_argc > 1 && strcmp(sub_argv[1], "report") == 0) {
            char *h[] = {"report", "--help", NULL};
            return cmd_report(2, h);
        }
        if (sub_argc > 1 && strcmp(sub_argv[1], "sim") == 0) {
            char *h[] = {"sim", "--help", NULL};
            return cmd_sim(2, h);
        }
        if (sub_argc > 1 && strcmp(sub_argv[1], "cluster") == 0) {
            char *h[] = {"cluster", "--help", NULL};
            return cmd_cluster(2, h);
        }
        if (sub_argc > 1 && strcmp(sub_argv[1], "hugepages") == 0) {
            char *h[] = {"hugepages", "--help", NULL};
            return cmd_hugepages(2, h);
        }
        if (sub_argc > 1)
            return cli_error(EXIT_USAGE, "help: no command '%s'", sub_argv[1]);
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "topo") == 0)
        return cmd_topo(sub_argc, sub_argv);
    if (strcmp(cmd, "place") == 0)
        return cmd_place(sub_argc, sub_argv);
    if (strcmp(cmd, "run") == 0)
        return cmd_run(sub_argc, sub_argv);
    if (strcmp(cmd, "report") == 0)
        return cmd_report(sub_argc, sub_argv);
    if (strcmp(cmd, "hugepages") == 0)
        return cmd_hugepages(sub_argc, sub_argv);
    if (strcmp(cmd, "sim") == 0)
        return cmd_sim(sub_argc, sub_argv);
    if (strcmp(cmd, "cluster") == 0)
        return cmd_cluster(sub_argc, sub_argv);
    return cli_error(EXIT_USAGE, "unknown command '%s' (pagehome help lists them)", cmd);
}
