/*
 * cmd_sim.c -- `pagehome sim`: the seed papers' experiments on simulated
 * machines (src/experiment/; the model is written down in doc/sim-model.md).
 *
 *   pagehome sim EXPERIMENT [--machine PRESET] [--threads N]
 *                [--iterations N] [--json OUT] [--csv OUT]
 *   pagehome sim presets
 *
 * Prints the experiment's table, the targets (met / not met, with the
 * numbers) and notes; --json and --csv write the data.  Exit status 0, 1
 * when a run or a file fails, 2 for a usage error (unknown experiment or
 * preset, a thread count the machine cannot run, bad numbers).  Tunables
 * set with the global --set apply to every run (the tables in
 * bench/README.md use the defaults).
 */
#include "cli.h"

#include "base/error.h"
#include "config/options.h"
#include "experiment/experiments.h"

#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void sim_usage(FILE *out)
{
    fprintf(out,
"usage: pagehome sim EXPERIMENT [--machine PRESET] [--threads N]\n"
"                    [--iterations N] [--json OUT] [--csv OUT]\n"
"       pagehome sim presets\n"
"Runs the experiments of the UPMlib papers on a simulated machine: the real\n"
"engine, NAS-like programs, a cost model (doc/sim-model.md).\n"
"experiments:\n"
"  e1  BT-, SP-, CG-like at 16 and 32 threads: first-touch / round-robin /\n"
"      single-node placement x off / IRIX-like / pagehome iterative, with\n"
"      the targets (origin2000-16)\n"
"  e2  sampling vs iterative on a long (BT-like) and a short (CG-like) run\n"
"  e3  record/replay of the BT-like z phase, n = 20 most critical pages,\n"
"      plain and hybrid, 1x and 4x longer phases\n"
"  e4  two programs sharing the machine, threads migrated: predictive vs\n"
"      competitive only\n"
"  e5  e1 on epyc-2s-8n and cxl-2tier\n"
"  e6  large pages with a TLB model: private blocks and finely shared data,\n"
"      4 KiB / 2 MiB never split / mixed (2 MiB, split when shared), from\n"
"      single-node placement (epyc-2s-8n)\n"
"  presets  the machines, their parameters and topology specs\n"
"options:\n"
"  --machine PRESET  origin2000-16 (default; e5: epyc-2s-8n and cxl-2tier;\n"
"                    e6: epyc-2s-8n), epyc-2s-8n, cxl-2tier\n"
"  --threads N       only this thread count (e4: per program)\n"
"  --iterations N    outer iterations of every program (default: the bundled\n"
"                    kernels' class A: BT 180, SP 200, CG 15; e6: 20)\n"
"  --json OUT        everything, with per-iteration series, as JSON\n"
"                    (pagehome report OUT.json: its tables, plots, report.html)\n"
"  --csv OUT         one line per run\n"
"  --plots DIR       also write the plots and report.html there (DIR/EXP.json\n"
"                    rendered by pagehome report)\n");
}

static int parse_int(const char *opt, const char *v, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long n = v ? strtol(v, &end, 10) : 0;
    if (!v || !*v || *end || errno || n < lo || n > hi)
        return cli_error(EXIT_USAGE, "sim: %s needs a number %ld..%ld, not "
                         "'%s'", opt, lo, hi, v ? v : "");
    *out = (int)n;
    return 0;
}

/* The progress line (tunable `progress`: auto = stderr is a terminal). */
static int progress_shown;

static void sim_progress(const char *group, const char *label, size_t done)
{
    fprintf(stderr, "\rpagehome: sim: %zu runs done (last: %s %s)\033[K", done, group,
            label);
    progress_shown = 1;
}

static int progress_wanted(void)
{
    const char *p = ph_opt_str(PH_OPT_PROGRESS);
    return strcmp(p, "on") == 0 || (strcmp(p, "auto") == 0 && isatty(2));
}

int cmd_sim(int argc, char **argv)
{
    ph_exp_opts o = {NULL, 0, 0};
    const char *exp = NULL, *json = NULL, *csv = NULL, *plots = NULL;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int missing;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            sim_usage(stdout);
            return 0;
        } else if ((v = cli_value(argc, argv, &i, "--machine", &missing)) ||
                   missing) {
            if (missing)
                return cli_error(EXIT_USAGE, "sim: --machine needs a preset");
            o.machine = v;
        } else if ((v = cli_value(argc, argv, &i, "--threads", &missing)) ||
                   missing) {
            if (parse_int("--threads", v, 1, 4096, &o.threads))
                return EXIT_USAGE;
        } else if ((v = cli_value(argc, argv, &i, "--iterations",
                                  &missing)) || missing) {
            if (parse_int("--iterations", v, 2, 100000, &o.iterations))
                return EXIT_USAGE;
        } else if ((v = cli_value(argc, argv, &i, "--json", &missing)) ||
                   missing) {
            if (missing)
                return cli_error(EXIT_USAGE, "sim: --json needs a file");
            json = v;
        } else if ((v = cli_value(argc, argv, &i, "--csv", &missing)) ||
                   missing) {
            if (missing)
                return cli_error(EXIT_USAGE, "sim: --csv needs a file");
            csv = v;
        } else if ((v = cli_value(argc, argv, &i, "--plots", &missing)) ||
                   missing) {
            if (missing)
                return cli_error(EXIT_USAGE, "sim: --plots needs a directory");
            plots = v;
        } else if (argv[i][0] == '-') {
            return cli_error(EXIT_USAGE, "sim: unknown option '%s' (pagehome "
                             "help sim)", argv[i]);
        } else if (exp) {
            return cli_error(EXIT_USAGE, "sim: one experiment at a time ('%s' "
                             "and '%s')", exp, argv[i]);
        } else {
            exp = argv[i];
        }
    }
    if (!exp) {
        sim_usage(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(exp, "presets") == 0)
        return ph_exp_print_presets(stdout) == 0 ? 0
               : cli_error(1, "sim: %s", ph_error_message());
    if (ph_exp_check(exp, &o) != 0)
        return cli_error(EXIT_USAGE, "%s", ph_error_message());
    ph_exp_table x;
    if (progress_wanted())
        ph_exp_set_progress(sim_progress);
    int erc = ph_exp_run(exp, &o, &x);
    ph_exp_set_progress(NULL);
    if (progress_shown)
        fputc('\n', stderr);
    if (erc != 0)
        return cli_error(1, "%s", ph_error_message());
    int rc = 0;
    if (ph_exp_print(&x, stdout) != 0)
        rc = cli_error(1, "sim: writing the table failed");
    if (json && ph_exp_write_json(&x, json) != 0)
        rc = cli_error(1, "%s", ph_error_message());
    if (csv && ph_exp_write_csv(&x, csv) != 0)
        rc = cli_error(1, "%s", ph_error_message());
    char pj[4096];
    if (plots && rc == 0) {
        if (mkdir(plots, 0777) != 0 && errno != EEXIST)
            rc = cli_error(1, "sim: --plots %s: %s", plots, strerror(errno));
        else if (snprintf(pj, sizeof pj, "%s/%s.json", plots, exp) >= (int)sizeof pj)
            rc = cli_error(EXIT_USAGE, "sim: --plots: path too long");
        else if (ph_exp_write_json(&x, pj) != 0)
            rc = cli_error(1, "%s", ph_error_message());
    }
    ph_exp_table_free(&x);
    if (plots && rc == 0) {
        /* pagehome report in a child (it execs python): its text repeats
         * the table, so only its files are kept */
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0)
            return cli_error(1, "sim: --plots: fork: %s", strerror(errno));
        if (pid == 0) {
            int devnull = open("/dev/null", O_WRONLY);
            if (devnull >= 0)
                dup2(devnull, 1);
            char *rargv[] = {"report", pj, "-o", (char *)plots, NULL};
            _exit(cmd_report(4, rargv));
        }
        int st = 0;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
        if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
            printf("\nplots and report.html: %s/\n", plots);
        else
            rc = cli_error(1, "sim: --plots: pagehome report %s failed", pj);
    }
    return rc;
}
