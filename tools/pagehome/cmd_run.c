/*
 * cmd_run.c -- `pagehome run [options] -- PROGRAM [ARGS...]`: an unmodified
 * OpenMP program under pagehome's transparent mode.
 *
 * What it does, in order:
 *   1. finds PROGRAM (as execvp would) and refuses what LD_PRELOAD cannot
 *      serve: not executable, a static binary (no ELF interpreter), a
 *      setuid/setgid binary (the loader ignores LD_PRELOAD for them);
 *   2. reads the program's DT_NEEDED entries to see which OpenMP runtime it
 *      uses.  LLVM's libomp (clang) has the OpenMP tools interface (OMPT),
 *      through which pagehome sees parallel regions and threads.  GNU
 *      libgomp (gcc, gfortran) has none, so by default the program runs on
 *      LLVM's libomp, which exports the GOMP_* entry points gcc emits: a
 *      private directory goes first on LD_LIBRARY_PATH, where libgomp.so.1
 *      is libpagehome_gomp.so (src/preload/gomp_shim.c: libgomp's version
 *      names and what libomp lacks -- OpenMP 5.1 names, target regions on
 *      the host) and libomp.so.5 is libomp (without the shim, libgomp.so.1
 *      is libomp itself).  --runtime=gomp keeps libgomp; then pagehome cannot
 *      see iterations and uses the sampling mechanism.  So does a program
 *      that needs a version of libgomp.so.1 the shim (or libomp) does not
 *      define (DT_VERNEED against its DT_VERDEF: OpenACC, a newer gcc),
 *      which the loader would refuse to start.  A program that names no
 *      runtime (a script, an interpreter) gets the private libgomp.so.1
 *      too, for the gcc programs and extensions it loads later
 *      (libomp_for_later_gomp);
 *   3. maps the options onto the tunables (PAGEHOME_* in the environment:
 *      its own options, --set NAME=VALUE, and every tunable the global
 *      options of `pagehome` set -- --topology, --set, -v -- so that the
 *      program runs with exactly what the command line said) and checks, before the program starts, what would otherwise fail
 *      in it: the placement against the machine's nodes, the --report
 *      path (made absolute, so a program that chdir()s still writes it
 *      there, and writable);
 *   4. adds libpagehome_preload.so to LD_PRELOAD, runs the program (a
 *      script without "#!" with /bin/sh, as execvp does) and returns its
 *      exit status (or dies of the same signal).  The program's stdin,
 *      stdout and stderr are its own; pagehome's messages go to stderr
 *      prefixed "pagehome:".
 *
 * Signals.  The program stays in pagehome's process group, so a ^C or ^\
 * typed at the terminal reaches both: pagehome lets it pass and waits.
 * SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to pagehome by a process
 * (kill, timeout(1), a batch system) are sent on to the program, and
 * pagehome waits for it (a signal sent to the whole process group reaches
 * the program twice: directly and through pagehome).  If pagehome itself
 * is killed outright (SIGKILL), the program gets SIGTERM from the kernel
 * (PR_SET_PDEATHSIG) instead of running on orphaned.
 *
 * The private directory (libgomp.so.1 and libomp.so.5) is
 * $TMPDIR/pagehome-run-XXXXXX, removed on every way out of pagehome; a run
 * holds an flock on its "lock" file while it lives, so a directory left by
 * a run that was killed outright is recognised (its lock is free) and
 * removed by the next run.
 *
 * The report.  The program writes it (src/api/stats_file.h): a notice
 * when its engine starts, replaced by the statistics at exit, quick_exit
 * or _exit.  Afterwards pagehome completes what the program could not:
 * no file (no engine started: engine off, or nothing hot and no OpenMP)
 * gets a short one that says why; a notice left by a program that was
 * killed or ended without its exit handlers gets the way it ended.
 */
#include "cli.h"
#include "elf_info.h"

#include "api/settings.h"
#include "base/json_write.h"
#include "base/path_pattern.h"
#include "config/launcher.h"
#include "config/options.h"
#include "engine/engine.h"
#include "machine/machine.h"
#include "place/plan.h"

#include "pagehome.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *out)
{
    fprintf(out,
"usage: pagehome run [options] -- PROGRAM [ARGS...]\n"
"\n"
"Runs an unmodified OpenMP program with pagehome: large arrays (heap and\n"
"static) become hot areas, parallel regions are watched through the OpenMP\n"
"tools interface, and pages migrate to the threads that use them.\n"
"\n"
"options:\n"
"  --placement P      initial placement of large allocations: first-touch,\n"
"                     interleave, block, random, node:N (default: first-touch)\n"
"  --migrate M        off, iterative, sampling, hybrid or auto (default auto:\n"
"                     iterative when the outer iteration is found, else sampling)\n"
"  --observe          the engine samples, decides and reports but moves nothing:\n"
"                     the baseline (owner-local share as placed) of a run\n"
"  --set NAME=VALUE   any tunable (pagehome --print-config lists them); also\n"
"                     before `run`, with --topology and -v\n"
"  --budget F         sampling budget, fraction of run time (default 0.01)\n"
"  --pagesize S       4K or 2M pages for large allocations\n"
"  --threshold SIZE   smallest allocation that becomes a hot area (default 1M)\n"
"  --report PATH      write the engine's statistics (JSON) there at exit; %%r the\n"
"                     MPI rank, %%p the PID, %%h the host (under mpirun, one file\n"
"                     per rank: r.json becomes r.rank-%%r.json)\n"
"  --runtime R        libomp (default: gcc programs run on LLVM's libomp for\n"
"                     OMPT) or gomp (keep libgomp: sampling mode only)\n"
"  -v, --verbose      say what pagehome does\n");
}

/* ---- the program ---------------------------------------------------- */

static int find_program(const char *name, char *out, size_t len)
{
    if (strchr(name, '/')) {
        snprintf(out, len, "%s", name);
        return access(out, F_OK) == 0 ? 0 : -1;
    }
    return cli_find_on_path(name, out, len);
}

/* The first version name the program needs of libgomp.so.1 that lib
 * (what would answer for it) does not define, or NULL. */
static const char *gomp_version_missing(const elf_info *prog, const char *lib)
{
    static elf_info li;
    elf_inspect(lib, &li);
    for (int i = 0; i < prog->ngomp_needs; i++) {
        int found = 0;
        for (int j = 0; j < li.ndefs && !found; j++)
            found = strcmp(prog->gomp_needs[i], li.defs[j]) == 0;
        if (!found)
            return prog->gomp_needs[i];
    }
    return NULL;
}

/* ---- where things are ----------------------------------------------- */

/* A library of pagehome's: $ENV_VAR when set, else beside the installed
 * tool (PREFIX/bin/pagehome -> PREFIX/LIBDIR/REL, or LIBDIR/REL when LIBDIR
 * was configured as an absolute path), else in the build tree (BUILT).  0
 * when readable. */
static int own_lib_path(const char *env_var, const char *rel, const char *built, char *out,
                        size_t len)
{
    const char *env = getenv(env_var);
    if (env && *env) {
        snprintf(out, len, "%s", env);
        return access(out, R_OK) == 0 ? 0 : -1;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = '\0';
        int w = PH_INSTALL_LIBDIR[0] == '/'
                    ? snprintf(out, len, "%s/%s", PH_INSTALL_LIBDIR, rel)
                    : snprintf(out, len, "%s/../%s/%s", exe, PH_INSTALL_LIBDIR, rel);
        if (w > 0 && (size_t)w < len && access(out, R_OK) == 0)
            return 0;
    }
    snprintf(out, len, "%s", built);
    return access(out, R_OK) == 0 ? 0 : -1;
}

static int preload_path(char *out, size_t len)
{
    return own_lib_path("PAGEHOME_PRELOAD_LIB", "libpagehome_preload.so", PH_BUILD_PRELOAD,
                        out, len);
}

/* libpagehome_gomp.so (src/preload/gomp_shim.c): libgomp's interface
 * for gcc programs on libomp, where libomp lacks it. */
static int gomp_shim_path(char *out, size_t len)
{
    return own_lib_path("PAGEHOME_GOMP_LIB", "pagehome/libpagehome_gomp.so", PH_BUILD_GOMP,
                        out, len);
}

static int libomp_path(char *out, size_t len)
{
    static const char *const cands[] = {
        "/usr/lib/llvm-14/lib/libomp.so.5", "/usr/lib/llvm-14/lib/libomp.so",
        "/usr/lib/x86_64-linux-gnu/libomp.so.5", "/usr/lib/llvm-15/lib/libomp.so.5",
        "/usr/lib/llvm-16/lib/libomp.so.5", NULL};
    const char *env = getenv("PAGEHOME_LIBOMP");
    if (env && *env) {
        snprintf(out, len, "%s", env);
        return access(out, R_OK) == 0 ? 0 : -1;
    }
    for (int i = 0; cands[i]; i++)
        if (access(cands[i], R_OK) == 0) {
            snprintf(out, len, "%s", cands[i]);
            return 0;
        }
    return -1;
}

static void prepend_env(const char *var, const char *value, char sep)
{
    const char *old = getenv(var);
    if (!old || !*old) {
        setenv(var, value, 1);
        return;
    }
    size_t n = strlen(value) + strlen(old) + 2;
    char *v = malloc(n);
    if (!v)
        return;
    snprintf(v, n, "%s%c%s", value, sep, old);
    setenv(var, v, 1);
    free(v);
}

/* ---- options -------------------------------------------------------- */

#define RUN_MAX_SETS 64

typedef struct run_opts {
    const char *placement, *migrate, *budget, *pagesize, *threshold, *report;
    const char *runtime;
    int verbose, observe;
    const char *sets[RUN_MAX_SETS]; /* NAME=VALUE */
    int nsets;
} run_opts;

static int parse(int argc, char **argv, run_opts *o, int *first)
{
    memset(o, 0, sizeof *o);
    o->runtime = "libomp";
    o->migrate = "auto";
    int i = 1;
    for (; i < argc; i++) {
        const char *v;
        int missing = 0;
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            exit(0);
        }
        if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            o->verbose = 1;
            continue;
        }
        if (strcmp(a, "--observe") == 0) {
            o->observe = 1;
            continue;
        }
        if ((v = cli_value(argc, argv, &i, "--set", &missing)) || missing) {
            if (missing || !strchr(v, '=') || v[0] == '=')
                return cli_error(EXIT_USAGE, "run: --set needs NAME=VALUE");
            if (o->nsets == RUN_MAX_SETS)
                return cli_error(EXIT_USAGE, "run: more than %d --set options", RUN_MAX_SETS);
            o->sets[o->nsets++] = v;
            continue;
        }
#define OPT(flag, field)                                                     \
        if ((v = cli_value(argc, argv, &i, flag, &missing)) || missing) {     \
            if (missing || !*v || strcmp(v, "--") == 0)                      \
                return cli_error(EXIT_USAGE, "run: %s needs a %s", flag,     \
                                 strcmp(flag, "--report") == 0 ? "path"      \
                                                               : "value");  \
            o->field = v;                                                    \
            continue;                                                        \
        }
        OPT("--placement", placement)
        OPT("--migrate", migrate)
        OPT("--budget", budget)
        OPT("--pagesize", pagesize)
        OPT("--threshold", threshold)
        OPT("--report", report)
        OPT("--runtime", runtime)
#undef OPT
        if (a[0] == '-')
            return cli_error(EXIT_USAGE, "run: unknown option '%s' (pagehome help run)", a);
        break; /* the program, without "--" */
    }
    if (i >= argc)
        return cli_error(EXIT_USAGE, "run: no program given (pagehome run [options] -- PROGRAM [ARGS...])");
    static const char *const mig[] = {"off", "iterative", "sampling", "hybrid", "auto", NULL};
    int ok = 0;
    for (int k = 0; mig[k]; k++)
        ok |= strcmp(o->migrate, mig[k]) == 0;
    if (!ok)
        return cli_error(EXIT_USAGE, "run: --migrate must be off, iterative, sampling, hybrid or auto (got '%s')",
                         o->migrate);
    if (strcmp(o->runtime, "libomp") != 0 && strcmp(o->runtime, "gomp") != 0)
        return cli_error(EXIT_USAGE, "run: --runtime must be libomp or gomp (got '%s')", o->runtime);
    if (o->observe && strcmp(o->migrate, "off") == 0)
        return cli_error(EXIT_USAGE, "run: --observe needs the engine (it samples and reports "
                         "without moving): not with --migrate off");
    *first = i;
    return 0;
}

/* Set PAGEHOME_<NAME> after checking the value with the library's own
 * parser (so a bad value is a usage error here, not a warning later). */
static int set_tunable(const char *name, const char *env, const char *value)
{
    if (!value)
        return 0;
    if (ph_config_set(name, value) != 0)
        return cli_error(EXIT_USAGE, "run: %s", ph_last_error());
    setenv(env, value, 1);
    return 0;
}

/* PAGEHOME_<NAME> of a tunable's name. */
static void env_of(const char *name, char *out, size_t len)
{
    size_t k = (size_t)snprintf(out, len, "PAGEHOME_");
    for (const char *p = name; *p && k + 1 < len; p++)
        out[k++] = (char)(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p);
    out[k] = '\0';
}

/* The placement, when it names one node, must be a node of the machine
 * the program will run on (the real one, or --topology's): said here,
 * before the program runs, not by a warning from inside it. */
static int check_placement_node(void)
{
    ph_placement_t pl;
    if (ph_placement_parse(&pl, ph_opt_str(PH_OPT_PLACEMENT)) != 0 ||
        pl.policy != PH_POLICY_SINGLE_NODE)
        return 0;
    const ph_topology_t *t = ph_machine_topology();
    if (!t)
        return cli_error(1, "run: cannot read this machine's topology: %s", ph_last_error());
    int n = ph_topology_nnodes(t);
    char list[256] = "";
    size_t k = 0;
    for (int i = 0; i < n; i++) {
        if (ph_topology_node(t, i) == pl.node)
            return 0;
        k += (size_t)snprintf(list + k, k < sizeof list ? sizeof list - k : 0, "%s%d",
                              i ? "," : "", ph_topology_node(t, i));
        if (k >= sizeof list)
            k = sizeof list - 1;
    }
    return cli_error(EXIT_USAGE, "run: --placement node:%d: this machine has no node %d "
                     "(%d node%s: %s%s)", pl.node, pl.node, n, n == 1 ? "" : "s", list,
                     ph_opt_str(PH_OPT_TOPOLOGY)[0] ? ", from --topology" : "");
}

static int map_options(const run_opts *o, const char *report)
{
    int rc = 0;
    ph_placement_t pl;
    if (o->placement && strcmp(o->placement, "single-node") != 0 &&
        ph_placement_parse(&pl, o->placement) != 0)
        return cli_error(EXIT_USAGE, "run: --placement: %s", ph_last_error());
    /* --set first: the named options below win over a --set of theirs */
    for (int k = 0; k < o->nsets; k++) {
        const char *eq = strchr(o->sets[k], '=');
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)(eq - o->sets[k]), o->sets[k]);
        if (ph_config_set(name, eq + 1) != 0)
            return cli_error(EXIT_USAGE, "run: --set %s: %s", o->sets[k], ph_last_error());
    }
    if (o->placement && strcmp(o->placement, "single-node") == 0)
        rc |= set_tunable("placement", "PAGEHOME_PLACEMENT", "node:0");
    else
        rc |= set_tunable("placement", "PAGEHOME_PLACEMENT", o->placement);
    rc |= set_tunable("sample_budget", "PAGEHOME_SAMPLE_BUDGET", o->budget);
    rc |= set_tunable("pagesize", "PAGEHOME_PAGESIZE", o->pagesize);
    rc |= set_tunable("hot_threshold", "PAGEHOME_HOT_THRESHOLD", o->threshold);
    rc |= set_tunable("stats_file", "PAGEHOME_STATS_FILE", report);
    if (strcmp(o->migrate, "auto") != 0)
        rc |= set_tunable("engine", "PAGEHOME_ENGINE", o->migrate);
    if (o->observe)
        rc |= set_tunable("observe", "PAGEHOME_OBSERVE", "1");
    if (o->verbose)
        rc |= set_tunable("verbose", "PAGEHOME_VERBOSE", "1");
    if (rc)
        return EXIT_USAGE;
    /* Every tunable set on this command line -- run's options, --set, and
     * the global options before `run` (--topology, --set, -v) -- goes to
     * the program, over what the environment says. */
    for (int id = 0; id < PH_OPT_COUNT; id++) {
        if (ph_opt_source_of((ph_opt_id)id) != PH_SRC_API)
            continue;
        char val[512], env[160];
        ph_opt_format((ph_opt_id)id, val, sizeof val);
        env_of(ph_opt_name((ph_opt_id)id), env, sizeof env);
        setenv(env, val, 1);
    }
    return check_placement_node();
}

/* The placement the program will use (--placement, or the tunable from
 * the environment), checked against the machine it will run on (the real
 * one, or PAGEHOME_TOPOLOGY's): a node that does not exist is an error
 * now, not a warning in the middle of the run. */
static int check_placement(void)
{
    ph_machine *c = ph_machine_get();
    if (!c)
        return cli_error(1, "run: %s", ph_last_error());
    ph_place_cfg cfg;
    ph_settings_place(&cfg);
    ph_plan plan;
    if (ph_plan_make_range(&plan, NULL, c->topo, &cfg.plan, (size_t)1 << 20) != 0)
        return cli_error(EXIT_USAGE, "run: placement \"%s\": %s", cfg.plan.placement,
                         ph_last_error());
    ph_plan_release(&plan);
    return 0;
}

/* --report PATH.  Under an MPI launcher that started several processes
 * (mpirun -n 4 pagehome run --report r.json -- ./app), each rank gets a
 * file of its own: a PATH that names no process (%r, %p) becomes
 * r.rank-%r.json, said once by rank 0.  PATH's keys (%r, %p, %h, %%:
 * base/path_pattern.h) are replaced by the program's library, with the
 * same values pagehome finds here (the launcher's environment, the host,
 * the program's PID), so that pagehome can complete the report after the
 * program ends.
 *
 * pattern: PATH made absolute (the program may chdir()) and per rank.
 * It is checked now: an unknown key, a directory that is not there or
 * not writable is an error before the program starts, not a warning
 * after it ran.  A stale report is removed: it must not pass for this
 * run's (unless the name holds the PID, which is not known yet). */
static int prepare_report(const char *path, int verbose, char *pattern, size_t len)
{
    char given[PATH_MAX];
    ph_launcher l = ph_launcher_get();
    if ((size_t)snprintf(given, sizeof given, "%s", path) >= sizeof given)
        return cli_error(1, "run: --report %s: path too long", path);
    if (l.size > 1 && !ph_path_names_process(path)) {
        if (ph_path_per_rank(path, given, sizeof given) != 0)
            return cli_error(1, "run: --report %s: path too long", path);
        if (l.rank == 0 || verbose)
            fprintf(stderr, "pagehome: --report %s: %ld processes of one job (%s): "
                    "each writes its own, %s (%%r = the rank)\n", path, l.size, l.from,
                    given);
    }
    if (given[0] == '/') {
        snprintf(pattern, len, "%s", given);
    } else {
        char cwd[PATH_MAX], esc[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd))
            return cli_error(1, "run: --report %s: cannot tell the current directory: %s",
                             path, strerror(errno));
        if (ph_path_escape(cwd, esc, sizeof esc) != 0 ||
            (size_t)snprintf(pattern, len, "%s/%s", esc, given) >= len)
            return cli_error(1, "run: --report %s: path too long", path);
    }
    char out[PATH_MAX];
    if (ph_launcher_expand_path(pattern, (long)getpid(), out, sizeof out) != 0)
        return errno == EINVAL
                   ? cli_error(EXIT_USAGE, "run: --report %s: a %% must be followed by r "
                               "(the MPI rank), p (the PID), h (the host) or %% (one %%)",
                               path)
                   : cli_error(1, "run: --report %s: path too long", path);
    struct stat st;
    if (stat(out, &st) == 0 && S_ISDIR(st.st_mode))
        return cli_error(1, "run: --report %s: is a directory (name a file)", path);
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", out);
    char *slash = strrchr(dir, '/');
    if (slash == dir)
        slash[1] = '\0';
    else
        *slash = '\0';
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return cli_error(1, "run: --report %s: no directory %s", path, dir);
    char probe[PATH_MAX + 48];
    snprintf(probe, sizeof probe, "%s/.pagehome-report-check.%ld", dir, (long)getpid());
    int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return cli_error(1, "run: --report %s: cannot write in %s: %s", path, dir,
                         strerror(errno));
    close(fd);
    unlink(probe);
    if (!ph_path_has_key(pattern, 'p') && unlink(out) != 0 && errno != ENOENT)
        return cli_error(1, "run: --report %s: cannot replace it: %s", path, strerror(errno));
    return 0;
}

/* ---- the private directory ------------------------------------------ */

#define RUNDIR_PREFIX "pagehome-run-"

static char runtime_dir[PATH_MAX];
static int runtime_lock = -1;

static const char *tmp_root(void)
{
    const char *t = getenv("TMPDIR");
    return t && t[0] == '/' ? t : "/tmp";
}

/* What a run puts in its directory, and the directory. */
static void remove_rundir(const char *dir)
{
    char f[PATH_MAX + 32];
    snprintf(f, sizeof f, "%s/libgomp.so.1", dir);
    unlink(f);
    snprintf(f, sizeof f, "%s/libomp.so.5", dir);
    unlink(f);
    snprintf(f, sizeof f, "%s/lock.new", dir);
    unlink(f);
    snprintf(f, sizeof f, "%s/lock", dir);
    unlink(f);
    rmdir(dir);
}

static void cleanup_runtime_dir(void)
{
    if (!runtime_dir[0])
        return;
    remove_rundir(runtime_dir);
    runtime_dir[0] = '\0';
    if (runtime_lock >= 0)
        close(runtime_lock);
    runtime_lock = -1;
}

/* Directories of runs that are gone: ours (same owner), with a lock file
 * nobody holds.  One without a lock file is skipped (a run that is making
 * it, or not ours to judge). */
static void sweep_stale_rundirs(void)
{
    const char *root = tmp_root();
    DIR *d = opendir(root);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strncmp(de->d_name, RUNDIR_PREFIX, strlen(RUNDIR_PREFIX)) != 0)
            continue;
        char dir[PATH_MAX], lock[PATH_MAX + 8];
        if ((size_t)snprintf(dir, sizeof dir, "%s/%s", root, de->d_name) >= sizeof dir)
            continue;
        struct stat st;
        if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid())
            continue;
        snprintf(lock, sizeof lock, "%s/lock", dir);
        int fd = open(lock, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            continue;
        if (flock(fd, LOCK_EX | LOCK_NB) == 0)
            remove_rundir(dir);
        close(fd);
    }
    closedir(d);
}

/* $TMPDIR/pagehome-run-XXXXXX with its lock held: the lock file is made
 * and locked under another name, then renamed, so a sweeping run never
 * sees it unlocked. */
static int make_runtime_dir(void)
{
    snprintf(runtime_dir, sizeof runtime_dir, "%s/" RUNDIR_PREFIX "XXXXXX", tmp_root());
    if (!mkdtemp(runtime_dir)) {
        int e = errno;
        runtime_dir[0] = '\0';
        return cli_error(1, "run: cannot make a private directory in %s: %s", tmp_root(),
                         strerror(e));
    }
    atexit(cleanup_runtime_dir);
    char tmp[PATH_MAX + 16], lock[PATH_MAX + 8];
    snprintf(tmp, sizeof tmp, "%s/lock.new", runtime_dir);
    snprintf(lock, sizeof lock, "%s/lock", runtime_dir);
    runtime_lock = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (runtime_lock < 0 || flock(runtime_lock, LOCK_EX | LOCK_NB) != 0 ||
        rename(tmp, lock) != 0)
        return cli_error(1, "run: cannot lock %s: %s", runtime_dir, strerror(errno));
    return 0;
}

/* The run's directory, made, with libgomp.so.1 -> gomp and (omp not
 * NULL) libomp.so.5 -> omp, first on LD_LIBRARY_PATH.  0 or an exit
 * status. */
static int fill_runtime_dir(const char *gomp, const char *omp)
{
    char link[PATH_MAX + 16];
    int rc = make_runtime_dir();
    if (rc)
        return rc;
    snprintf(link, sizeof link, "%s/libgomp.so.1", runtime_dir);
    if (symlink(gomp, link) != 0)
        return cli_error(1, "run: cannot link %s: %s", link, strerror(errno));
    snprintf(link, sizeof link, "%s/libomp.so.5", runtime_dir);
    if (omp && symlink(omp, link) != 0)
        return cli_error(1, "run: cannot link %s: %s", link, strerror(errno));
    prepend_env("LD_LIBRARY_PATH", runtime_dir, ':');
    return 0;
}

/* Runs the gcc program on LLVM's libomp (private directory, above): 0 or
 * an exit status.  When the program needs a version of libgomp.so.1 that
 * neither pagehome's shim nor libomp defines (OpenACC's, or a newer
 * gcc's), the loader would refuse to start it: then nothing is set up,
 * *keep_gomp is 1 and it keeps GNU libgomp (its shared libraries are not
 * looked at). */
static int use_libomp_for_gomp(const run_opts *o, const elf_info *ei, const char *prog,
                               int *keep_gomp)
{
    char lib[PATH_MAX];
    if (libomp_path(lib, sizeof lib) != 0)
        return cli_error(1, "run: the program uses libgomp, which has no OpenMP tools "
                         "interface, and LLVM's libomp was not found (apt-get install "
                         "libomp-14-dev, or PAGEHOME_LIBOMP=PATH); --runtime=gomp runs it "
                         "on libgomp in sampling mode");
    /* libgomp.so.1 is the shim, which needs libomp.so.5: both linked
     * here.  Without the shim, libomp itself answers for libgomp (a gcc 12
     * program that asks for OpenMP 5.1 names or target regions is then
     * found below and keeps libgomp). */
    char shim[PATH_MAX];
    int have_shim = gomp_shim_path(shim, sizeof shim) == 0;
    const char *missing = gomp_version_missing(ei, have_shim ? shim : lib);
    if (missing) {
        fprintf(stderr, "pagehome: %s asks libgomp.so.1 for %s, which LLVM's libomp%s does "
                        "not provide: it keeps GNU libgomp, which has no OpenMP tools "
                        "interface (sampling mechanism only)\n",
                prog, missing, have_shim ? " with pagehome's libgomp.so.1" : "");
        *keep_gomp = 1;
        return 0;
    }
    int rc = fill_runtime_dir(have_shim ? shim : lib, have_shim ? lib : NULL);
    if (rc)
        return rc;
    if (o->verbose)
        fprintf(stderr, "pagehome: the program uses GNU libgomp, which has no OpenMP "
                        "tools interface: running it on LLVM's libomp (%s), which "
                        "provides the GOMP_* entry points%s (--runtime=gomp keeps libgomp)\n",
                lib, have_shim ? ", with pagehome's libgomp.so.1 for what it lacks" : "");
    return 0;
}

/* A program that names no OpenMP runtime may still run OpenMP code: a
 * script or a make that starts gcc-built programs, an interpreter that
 * loads a gcc-built extension (Python's ctypes or a compiled module, R,
 * a MEX file).  Their libgomp.so.1 comes later, through the loader's
 * search, so the run's directory goes first on LD_LIBRARY_PATH for them
 * too: libgomp.so.1 is the shim (or libomp).  libomp.so.5 is linked
 * there only when PAGEHOME_LIBOMP names one, or the shim's own libomp is
 * gone: otherwise the shim finds it by its run path, and a clang-built
 * program started later keeps whatever libomp.so.5 its own run path or
 * LD_LIBRARY_PATH gives it.
 * Their version needs cannot be read ahead: a program started later that
 * asks libgomp.so.1 for OpenACC's names would not load, and
 * --runtime=gomp is then the way (README.md says so).  Without libomp
 * nothing is set up. */
static int libomp_for_later_gomp(const run_opts *o, const char *prog)
{
    char lib[PATH_MAX], shim[PATH_MAX];
    if (libomp_path(lib, sizeof lib) != 0)
        return 0;
    int have_shim = gomp_shim_path(shim, sizeof shim) == 0;
    const char *own = getenv("PAGEHOME_LIBOMP");
    /* the shim's run path holds PH_GOMP_LIBOMP: link libomp.so.5 only for
     * another libomp, or when that one is gone */
    int link_omp = have_shim && ((own && *own) || !PH_GOMP_LIBOMP[0] ||
                                 access(PH_GOMP_LIBOMP, R_OK) != 0);
    int rc = fill_runtime_dir(have_shim ? shim : lib, link_omp ? lib : NULL);
    if (rc)
        return rc;
    if (o->verbose)
        fprintf(stderr, "pagehome: a GNU libgomp that '%s' loads later (an extension, or a "
                        "program it starts) runs on LLVM's libomp (%s)%s; --runtime=gomp "
                        "keeps libgomp\n",
                prog, lib, have_shim ? " with pagehome's libgomp.so.1" : "");
    return 0;
}

/* ---- the report, completed ------------------------------------------ */

/* How the program ended, in words ("exited with status 3", "was killed
 * by signal 9 (Killed)"). */
static void ending_text(int status, char *buf, size_t len)
{
    if (WIFSIGNALED(status))
        snprintf(buf, len, "was killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
}

static void add_ending(json_t *o, int status)
{
    json_t *end = json_object();
    if (WIFSIGNALED(status)) {
        json_object_set_new(end, "signal", json_integer(WTERMSIG(status)));
        json_object_set_new(end, "signal_name", json_string(strsignal(WTERMSIG(status))));
    } else {
        json_object_set_new(end, "status", json_integer(WEXITSTATUS(status)));
    }
    json_object_set_new(o, "program_end", end);
}

/* Write o to path through a file beside it, renamed over it. */
static int write_json_atomic(json_t *o, const char *path)
{
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    unlink(tmp);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    int rc = json_dumpfd(o, fd, JSON_INDENT(2) | JSON_PRESERVE_ORDER) == 0 &&
                     write(fd, "\n", 1) == 1
                 ? 0
                 : -1;
    if (close(fd) != 0)
        rc = -1;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -1;
    if (rc)
        unlink(tmp);
    return rc;
}

/* The program left its notice ("incomplete": the statistics were never
 * written): say how it ended. */
static void complete_notice(const char *path, int status)
{
    json_error_t jerr;
    json_t *o = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (!o || !json_is_object(o) || !json_is_true(json_object_get(o, "incomplete"))) {
        json_decref(o);
        return;
    }
    char how[96], note[400];
    ending_text(status, how, sizeof how);
    snprintf(note, sizeof note,
             WIFSIGNALED(status)
                 ? "the program %s before pagehome could write its statistics"
                 : "the program %s without running its exit handlers (or pagehome "
                   "could not write its statistics there in time): its statistics "
                   "were not written",
             how);
    json_object_set_new(o, "note", json_string(note));
    add_ending(o, status);
    if (write_json_atomic(o, path) != 0)
        fprintf(stderr, "pagehome: --report %s: %s\n", path, strerror(errno));
    json_decref(o);
}

/* The program wrote no statistics file: pagehome never started an engine
 * in it.  Write a small one that says why, so that a report always exists
 * after --report. */
static void report_if_silent(const char *path, const char *prog,
                             const char *omp, int status, int engine_off)
{
    if (access(path, F_OK) == 0) {
        complete_notice(path, status);
        return;
    }
    char how[96], note[512];
    ending_text(status, how, sizeof how);
    if (engine_off)
        snprintf(note, sizeof note, "the engine was off (--migrate off, or the tunable "
                 "engine): placement and interposition only, no statistics");
    else
        snprintf(note, sizeof note, "pagehome started no engine in the program: no "
                 "allocation or static array reached the hot threshold and no OpenMP "
                 "runtime started the tools interface%s%s",
                 WIFSIGNALED(status) ? " (it then " : "",
                 WIFSIGNALED(status) ? how : "");
    if (WIFSIGNALED(status) && !engine_off)
        strncat(note, ")", sizeof note - strlen(note) - 1);
    ph_jw w;
    ph_jw_init(&w, 1);
    ph_stats_begin_engineless(&w);
    ph_jw_key(&w, "note");
    ph_jw_string(&w, note);
    ph_jw_key(&w, "program_end");
    ph_jw_object(&w, 1);
    if (WIFSIGNALED(status)) {
        ph_jw_key(&w, "signal");
        ph_jw_int(&w, WTERMSIG(status));
        ph_jw_key(&w, "signal_name");
        ph_jw_string(&w, strsignal(WTERMSIG(status)));
    } else {
        ph_jw_key(&w, "status");
        ph_jw_int(&w, WEXITSTATUS(status));
    }
    ph_jw_end(&w);
    ph_jw_key(&w, "transparent");
    ph_jw_object(&w, 0);
    ph_jw_key(&w, "program");
    ph_jw_string(&w, prog);
    ph_jw_key(&w, "openmp");
    ph_jw_object(&w, 1);
    ph_jw_key(&w, "runtime_seen");
    ph_jw_bool(&w, 0);
    ph_jw_key(&w, "runtime_linked");
    ph_jw_string(&w, omp && *omp ? omp : "none");
    ph_jw_end(&w);
    ph_jw_end(&w);
    ph_jw_end(&w);
    if (ph_jw_write_file(&w, path) != 0)
        fprintf(stderr, "pagehome: --report %s: %s\n", path, strerror(errno));
    ph_jw_free(&w);
}

/* ---- running -------------------------------------------------------- */

static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define NFORWARDED (sizeof forwarded / sizeof forwarded[0])
static volatile sig_atomic_t child_pid;
static int same_group; /* the program shares pagehome's process group */

static void forward_signal(int sig, siginfo_t *si, void *ctx)
{
    (void)ctx;
    /* From the terminal (^C, ^\, a hang-up) while the program shares our
     * foreground process group: it has it already. */
    if (same_group && si && si->si_code == SI_KERNEL)
        return;
    /* One sender signalling pagehome and then its process group (as
     * timeout(1) does) reaches pagehome twice, the second time only when
     * the first was handled in between: forward it once. */
    static int last_sig;
    static pid_t last_pid;
    static struct timespec last_t;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long long dt_ms = (long long)(now.tv_sec - last_t.tv_sec) * 1000 +
                      (now.tv_nsec - last_t.tv_nsec) / 1000000;
    pid_t from = si && si->si_code == SI_USER ? si->si_pid : 0;
    int again = from > 0 && sig == last_sig && from == last_pid && dt_ms < 250;
    last_sig = sig;
    last_pid = from;
    last_t = now;
    if (!again && child_pid > 0)
        kill((pid_t)child_pid, sig);
}

/* 1 when pagehome runs in the foreground of its controlling terminal. */
static int in_foreground(void)
{
    int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    int fg = tcgetpgrp(fd) == getpgrp();
    close(fd);
    return fg;
}

/* In the child, between fork and exec: the program dies with pagehome
 * (SIGTERM when pagehome is killed outright), gets the signal mask pagehome
 * had, and a script without "#!" runs with /bin/sh as execvp would. */
static void exec_program(const char *prog, char **args, pid_t parent,
                         const sigset_t *mask)
{
    if (!same_group)
        setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent)
        _exit(128 + SIGTERM);
    for (size_t k = 0; k < NFORWARDED; k++)
        signal(forwarded[k], SIG_DFL);
    sigprocmask(SIG_SETMASK, mask, NULL);
    execv(prog, args);
    if (errno == ENOEXEC) {
        size_t n = 0;
        while (args[n])
            n++;
        char **sh = calloc(n + 2, sizeof *sh);
        if (sh) {
            sh[0] = (char *)"sh";
            sh[1] = (char *)prog;
            for (size_t k = 1; k < n; k++)
                sh[k + 1] = args[k];
            execv("/bin/sh", sh);
        }
    }
    fprintf(stderr, "pagehome: run: cannot execute %s: %s\n", prog, strerror(errno));
    _exit(127);
}

int cmd_run(int argc, char **argv)
{
    run_opts o;
    int first = 0;
    int rc = parse(argc, argv, &o, &first);
    if (rc)
        return rc;
    char prog[PATH_MAX];
    if (find_program(argv[first], prog, sizeof prog) != 0)
        return cli_error(1, "run: no program '%s' (not found%s)", argv[first],
                         strchr(argv[first], '/') ? "" : " on PATH");
    struct stat st;
    if (stat(prog, &st) != 0 || !S_ISREG(st.st_mode) || !(st.st_mode & 0111) ||
        access(prog, X_OK) != 0)
        return cli_error(1, "run: '%s' is not an executable file", prog);
    if (st.st_mode & (S_ISUID | S_ISGID))
        return cli_error(1, "run: '%s' is setuid/setgid: the loader ignores LD_PRELOAD "
                         "for it, so pagehome cannot run inside it", prog);
    elf_info ei;
    elf_inspect(prog, &ei);
    if (ei.is_elf && !ei.dynamic)
        return cli_error(1, "run: '%s' is a static binary: LD_PRELOAD cannot load "
                         "pagehome into it (link it dynamically, or use the API)", prog);
    char pattern[PATH_MAX] = "", report[PATH_MAX] = "";
    if (o.report && (rc = prepare_report(o.report, o.verbose, pattern, sizeof pattern)) != 0)
        return rc;
    if ((rc = map_options(&o, pattern[0] ? pattern : NULL)) != 0)
        return rc;
    if ((rc = check_placement()) != 0)
        return rc;
    char pre[PATH_MAX];
    if (preload_path(pre, sizeof pre) != 0)
        return cli_error(1, "run: libpagehome_preload.so not found (built without "
                         "libomp-14-dev?); PAGEHOME_PRELOAD_LIB=PATH names it");
    sweep_stale_rundirs();
    if (strcmp(ei.omp, "libgomp") == 0) {
        int keep = strcmp(o.runtime, "libomp") != 0;
        if (!keep && (rc = use_libomp_for_gomp(&o, &ei, prog, &keep)) != 0)
            return rc;
        if (keep) {
            if (strcmp(o.migrate, "auto") == 0)
                setenv("PAGEHOME_ENGINE", "sampling", 1);
            if (strcmp(o.runtime, "libomp") != 0)
                fprintf(stderr, "pagehome: --runtime=gomp: libgomp has no OpenMP tools "
                                "interface, so pagehome cannot see iterations or threads: "
                                "sampling mechanism only\n");
        }
    } else if (!ei.omp[0]) {
        if (strcmp(o.runtime, "libomp") == 0 && (rc = libomp_for_later_gomp(&o, prog)) != 0)
            return rc;
        if (o.verbose)
            fprintf(stderr, "pagehome: '%s' names no OpenMP runtime: it runs with the "
                            "sampling mechanism if OpenMP never shows up\n", prog);
    }
    prepend_env("LD_PRELOAD", pre, ':');
    if (o.verbose)
        fprintf(stderr, "pagehome: running %s with %s\n", prog, pre);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = forward_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigset_t block, old;
    sigemptyset(&block);
    for (size_t k = 0; k < NFORWARDED; k++)
        sigaddset(&block, forwarded[k]);
    /* blocked from here until the child's PID is known */
    sigprocmask(SIG_BLOCK, &block, &old);
    for (size_t k = 0; k < NFORWARDED; k++)
        sigaction(forwarded[k], &sa, NULL);
    same_group = in_foreground();
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        return cli_error(1, "run: fork: %s", strerror(errno));
    }
    if (pid == 0)
        exec_program(prog, argv + first, parent, &old);
    if (!same_group)
        setpgid(pid, pid); /* as the child does: whichever runs first */
    child_pid = pid;
    sigprocmask(SIG_SETMASK, &old, NULL);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    child_pid = 0;
    cleanup_runtime_dir();
    if (pattern[0] && ph_launcher_expand_path(pattern, (long)pid, report, sizeof report) == 0)
        report_if_silent(report, prog, ei.omp, status,
                         strcmp(ph_opt_str(PH_OPT_ENGINE), "off") == 0);
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        signal(sig, SIG_DFL);
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, sig);
        sigprocmask(SIG_UNBLOCK, &one, NULL);
        raise(sig);
        return 128 + sig;
    }
    return WEXITSTATUS(status);
}
