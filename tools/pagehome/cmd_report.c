/*
 * cmd_report.c -- `pagehome report RUN.json [-o OUTDIR] [--text-only]`:
 * the report of a run's statistics file (`pagehome run --report`,
 * PAGEHOME_STATS_FILE), of a simulated experiment (`pagehome sim --json`)
 * or of a cluster run (`pagehome cluster run --report`): a text summary on
 * stdout, and plots and a self-contained report.html in OUTDIR.
 *
 * The report is written in Python (tools/report/pagehome_report.py, with
 * matplotlib for the plots); this command finds the script and an
 * interpreter and execs `python3 SCRIPT ARGS...`, so the script's output
 * and exit status are the command's.
 *   the script:  $PAGEHOME_REPORT_SCRIPT, else pagehome_report.py beside
 *                this binary (the build tree: CMake copies it there), else
 *                PREFIX/DATADIR/pagehome/pagehome_report.py (installed,
 *                found from bin/..);
 *   the python:  $PAGEHOME_PYTHON, else python3 on PATH, else
 *                /usr/bin/python3.  Unless --text-only, the first of them
 *                that can import matplotlib: a pyenv or virtualenv python3
 *                first on PATH often lacks Debian's python3-matplotlib,
 *                which /usr/bin/python3 has.
 * Only --help, the presence of RUN.json and --text-only are looked at
 * here; the script checks the arguments and the input (its schema and
 * bounds, report_common.py) and writes OUTDIR's files without following
 * links.
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define REPORT_SCRIPT "pagehome_report.py"

static void usage(FILE *out)
{
    fprintf(out,
"usage: pagehome report RUN.json [-o OUTDIR] [--text-only]\n"
"\n"
"Summarises the statistics file of a run (pagehome run --report RUN.json, or\n"
"PAGEHOME_STATS_FILE): what ran, the areas found, pages migrated / failed /\n"
"frozen, the remote share of sampled accesses before -> after, a table per\n"
"iteration, the phases and UPMlib's Table 1 columns, on stdout.  In OUTDIR\n"
"it writes homes.png (where each area's pages were at the start and at the\n"
"end), remote_share.png and migrations.png (per iteration) and report.html,\n"
"one self-contained page with all of it.\n"
"\n"
"A file of `pagehome sim E --json` gets the experiment's tables and plots.  The\n"
"merged statistics of a cluster run (pagehome cluster run --report) get the\n"
"cluster report: per rank faults by kind, fetches, diffs, messages, barriers\n"
"and migrations, the page classes, each allocation's home strips at its start\n"
"and end, and per barrier interval; homes.png, remote_faults.png,\n"
"migrations.png and report.html in OUTDIR.\n"
"\n"
"options:\n"
"  -o, --output OUTDIR  where the plots and report.html go (default: RUN's\n"
"                       basename without .json + \"_report\", here)\n"
"  --text-only          the text summary only (needs no matplotlib)\n"
"\n"
"A file that is not a statistics file within its bounds (types, finite\n"
"numbers, at most 64 nodes, ...) is refused in one line naming the field\n"
"(exit status 1).  The files in OUTDIR are made new and renamed over their\n"
"names: a symbolic link there is replaced, never written through.\n"
"\n"
"It runs tools/report/pagehome_report.py with python3 and matplotlib\n"
"(apt-get install python3-matplotlib).  PAGEHOME_PYTHON names the\n"
"interpreter, PAGEHOME_REPORT_SCRIPT the script; PAGEHOME_REPORT_DEBUG=1\n"
"shows the traceback of an internal error of the script.\n");
}

/* Copy a path; -1 (and nothing copied) when it does not fit. */
static int copy_path(char *out, size_t len, const char *src)
{
    size_t n = strlen(src);
    if (n >= len)
        return -1;
    memcpy(out, src, n + 1);
    return 0;
}

/* The directory of this binary, "" if unknown. */
static void exe_dir(char *out, size_t len)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    out[0] = '\0';
    if (n <= 0)
        return;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';
    snprintf(out, len, "%s", exe);
}

static int find_script(char *out, size_t len)
{
    const char *env = getenv("PAGEHOME_REPORT_SCRIPT");
    if (env && *env) {
        if (access(env, R_OK) != 0)
            return cli_error(1, "report: PAGEHOME_REPORT_SCRIPT=%s: %s", env,
                             strerror(errno));
        if (copy_path(out, len, env) != 0)
            return cli_error(1, "report: PAGEHOME_REPORT_SCRIPT: path too long");
        return 0;
    }
    char dir[PATH_MAX], beside[PATH_MAX + 64], installed[2 * PATH_MAX];
    exe_dir(dir, sizeof dir);
    snprintf(beside, sizeof beside, "%s/" REPORT_SCRIPT, dir);
    if (PH_INSTALL_DATADIR[0] == '/')
        snprintf(installed, sizeof installed, "%s/pagehome/" REPORT_SCRIPT,
                 PH_INSTALL_DATADIR);
    else
        snprintf(installed, sizeof installed, "%s/../%s/pagehome/" REPORT_SCRIPT, dir,
                 PH_INSTALL_DATADIR);
    if (dir[0] && access(beside, R_OK) == 0 && copy_path(out, len, beside) == 0)
        return 0;
    if (dir[0] && access(installed, R_OK) == 0 && copy_path(out, len, installed) == 0)
        return 0;
    return cli_error(1, "report: " REPORT_SCRIPT " not found (looked for %s and %s; "
                     "PAGEHOME_REPORT_SCRIPT=PATH names it)", beside, installed);
}

/* Does `python -c "import matplotlib"` succeed?  Its output is dropped. */
static int has_matplotlib(const char *python)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return 0;
    if (pid == 0) {
        int fd = open("/dev/null", O_RDWR);
        if (fd >= 0) {
            dup2(fd, STDIN_FILENO);
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
        }
        execl(python, python, "-c", "import matplotlib", (char *)NULL);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return 0;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* The interpreter to run the script with; 0 found, else the exit status
 * after saying why. */
static int find_python(int need_matplotlib, char *out, size_t len)
{
    char cands[2][PATH_MAX];
    int n = 0;
    const char *env = getenv("PAGEHOME_PYTHON");
    if (env && *env) {
        if (strchr(env, '/')) {
            if (copy_path(cands[n], sizeof cands[n], env) != 0)
                return cli_error(1, "report: PAGEHOME_PYTHON: path too long");
        } else if (cli_find_on_path(env, cands[n], sizeof cands[n]) != 0)
            return cli_error(1, "report: PAGEHOME_PYTHON=%s: not found on PATH", env);
        if (access(cands[n], X_OK) != 0)
            return cli_error(1, "report: PAGEHOME_PYTHON=%s: %s", env, strerror(errno));
        n++;
    } else {
        if (cli_find_on_path("python3", cands[n], sizeof cands[n]) == 0)
            n++;
        if (access("/usr/bin/python3", X_OK) == 0 &&
            (n == 0 || strcmp(cands[0], "/usr/bin/python3") != 0))
            copy_path(cands[n++], sizeof cands[0], "/usr/bin/python3");
    }
    if (n == 0)
        return cli_error(1, "report: python3 not found (apt-get install python3 "
                         "python3-matplotlib, or PAGEHOME_PYTHON=PATH)");
    for (int i = 0; i < n; i++)
        if ((!need_matplotlib || has_matplotlib(cands[i])) &&
            copy_path(out, len, cands[i]) == 0)
            return 0;
    return cli_error(1, "report: matplotlib is missing for %s%s%s: apt-get install "
                     "python3-matplotlib (or --text-only for the text summary alone)",
                     cands[0], n > 1 ? " and " : "", n > 1 ? cands[1] : "");
}

int cmd_report(int argc, char **argv)
{
    int text_only = 0, inputs = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(a, "--text-only") == 0)
            text_only = 1;
        else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0)
            i++; /* its value, whatever it looks like */
        else if (a[0] != '-' || strcmp(a, "-") == 0)
            inputs++;
    }
    if (inputs == 0)
        return cli_error(EXIT_USAGE, "report: no statistics file given (pagehome "
                         "report RUN.json [-o OUTDIR] [--text-only])");
    char script[PATH_MAX], python[PATH_MAX];
    int rc = find_script(script, sizeof script);
    if (rc)
        return rc;
    if ((rc = find_python(!text_only, python, sizeof python)) != 0)
        return rc;
    char **args = calloc((size_t)argc + 2, sizeof *args);
    if (!args)
        return cli_error(1, "report: out of memory");
    args[0] = python;
    args[1] = script;
    for (int i = 1; i < argc; i++)
        args[i + 1] = argv[i];
    args[argc + 1] = NULL;
    fflush(NULL);
    execv(python, args);
    int err = errno;
    free(args);
    return cli_error(1, "report: cannot run %s: %s", python, strerror(err));
}
