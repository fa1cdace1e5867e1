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
 *      private directory with libgomp.so.1 -> libomp.so goes first on
 *      LD_LIBRARY_PATH.  --runtime=gomp keeps libgomp; then pagehome cannot
 *      see iterations and uses the sampling mechanism;
 *   3. maps the options onto the tunables (PAGEHOME_* in the environment:
 *      its own options, --set NAME=VALUE, and every tunable the global
 *      options of `pagehome` set -- --topology, --set, -v -- so that the
 *      program runs with exactly what the command line said), checks a
 *      single-node placement against the machine's nodes,
 *      adds libpagehome_preload.so to LD_PRELOAD, runs the program and
 *      returns its exit status (or dies of the same signal).  The
 *      program's stdin, stdout and stderr are its own; pagehome's messages
 *      go to stderr prefixed "pagehome:".
 */
#include "cli.h"

#include "base/json_write.h"
#include "config/options.h"

#include "pagehome.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
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
"  --report PATH      write the engine's statistics (JSON) there at exit\n"
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

/* What the ELF file says: dynamic (has PT_INTERP), and its OpenMP runtime
 * from DT_NEEDED ("libgomp", "libomp", "" none). */
typedef struct elf_info {
    int is_elf, dynamic;
    char omp[32];
} elf_info;

static int read_at(int fd, void *buf, size_t len, off_t off)
{
    return pread(fd, buf, len, off) == (ssize_t)len ? 0 : -1;
}

static void elf_inspect(const char *path, elf_info *info)
{
    memset(info, 0, sizeof *info);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    Elf64_Ehdr eh;
    if (read_at(fd, &eh, sizeof eh, 0) != 0 ||
        memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phnum > 512) {
        close(fd);
        return;
    }
    info->is_elf = 1;
    Elf64_Phdr dyn = {0};
    Elf64_Phdr load[64];
    int nload = 0;
    for (int i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        if (read_at(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (Elf64_Off)i * eh.e_phentsize)))
            break;
        if (ph.p_type == PT_INTERP)
            info->dynamic = 1;
        else if (ph.p_type == PT_DYNAMIC)
            dyn = ph;
        else if (ph.p_type == PT_LOAD && nload < 64)
            load[nload++] = ph;
    }
    /* DT_STRTAB is a virtual address: map it to a file offset */
    size_t ndyn = dyn.p_filesz / sizeof(Elf64_Dyn);
    Elf64_Dyn *d = ndyn && ndyn < 4096 ? calloc(ndyn, sizeof *d) : NULL;
    if (d && read_at(fd, d, ndyn * sizeof *d, (off_t)dyn.p_offset) == 0) {
        Elf64_Addr strtab = 0;
        for (size_t i = 0; i < ndyn && d[i].d_tag != DT_NULL; i++)
            if (d[i].d_tag == DT_STRTAB)
                strtab = d[i].d_un.d_ptr;
        off_t stroff = -1;
        for (int i = 0; i < nload; i++)
            if (strtab >= load[i].p_vaddr &&
                strtab < load[i].p_vaddr + load[i].p_filesz)
                stroff = (off_t)(strtab - load[i].p_vaddr + load[i].p_offset);
        for (size_t i = 0; stroff >= 0 && i < ndyn && d[i].d_tag != DT_NULL; i++) {
            if (d[i].d_tag != DT_NEEDED)
                continue;
            char name[64] = "";
            if (pread(fd, name, sizeof name - 1, stroff + (off_t)d[i].d_un.d_val) <= 0)
                continue;
            if (strncmp(name, "libgomp.so", 10) == 0)
                snprintf(info->omp, sizeof info->omp, "libgomp");
            else if (strncmp(name, "libomp.so", 9) == 0 ||
                     strncmp(name, "libiomp5.so", 11) == 0)
                snprintf(info->omp, sizeof info->omp, "libomp");
        }
    }
    free(d);
    close(fd);
}

/* ---- where things are ----------------------------------------------- */

static int preload_path(char *out, size_t len)
{
    const char *env = getenv("PAGEHOME_PRELOAD_LIB");
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
        /* installed: PREFIX/bin/pagehome -> PREFIX/LIBDIR/... */
        int w = snprintf(out, len, "%s/../%s/libpagehome_preload.so", exe,
                         PH_INSTALL_LIBDIR);
        if (w > 0 && (size_t)w < len && access(out, R_OK) == 0)
            return 0;
    }
    snprintf(out, len, "%s", PH_BUILD_PRELOAD);
    return access(out, R_OK) == 0 ? 0 : -1;
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
            if (missing)                                                     \
                return cli_error(EXIT_USAGE, "run: %s needs a value", flag); \
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

static int map_options(const run_opts *o)
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
    rc |= set_tunable("stats_file", "PAGEHOME_STATS_FILE", o->report);
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

/* ---- running -------------------------------------------------------- */

static char runtime_dir[64];

static void cleanup_runtime_dir(void)
{
    if (!runtime_dir[0])
        return;
    char link[128];
    snprintf(link, sizeof link, "%s/libgomp.so.1", runtime_dir);
    unlink(link);
    rmdir(runtime_dir);
}

static int use_libomp_for_gomp(const run_opts *o)
{
    char lib[PATH_MAX];
    if (libomp_path(lib, sizeof lib) != 0)
        return cli_error(1, "run: the program uses libgomp, which has no OpenMP tools "
                         "interface, and LLVM's libomp was not found (apt-get install "
                         "libomp-14-dev, or PAGEHOME_LIBOMP=PATH); --runtime=gomp runs it "
                         "on libgomp in sampling mode");
    snprintf(runtime_dir, sizeof runtime_dir, "/tmp/pagehome-run-XXXXXX");
    if (!mkdtemp(runtime_dir))
        return cli_error(1, "run: cannot make a private directory: %s", strerror(errno));
    char link[128];
    snprintf(link, sizeof link, "%s/libgomp.so.1", runtime_dir);
    if (symlink(lib, link) != 0)
        return cli_error(1, "run: cannot link %s: %s", link, strerror(errno));
    prepend_env("LD_LIBRARY_PATH", runtime_dir, ':');
    if (o->verbose)
        fprintf(stderr, "pagehome: the program uses GNU libgomp, which has no OpenMP "
                        "tools interface: running it on LLVM's libomp (%s), which "
                        "provides the GOMP_* entry points (--runtime=gomp keeps libgomp)\n",
                lib);
    return 0;
}

/* The program wrote no statistics file: pagehome never started an engine
 * in it (no hot area, no OpenMP runtime that reached it) or it died
 * first.  Write a small one that says so, so that a report always
 * exists after --report. */
static void report_if_silent(const char *path, const char *prog,
                             const char *omp, int status, int engine_off)
{
    if (access(path, F_OK) == 0)
        return;
    const char *note =
        WIFSIGNALED(status)
            ? "the program was killed by a signal before pagehome wrote its statistics"
        : engine_off
            ? "the engine was off (--migrate off): placement and interposition only, "
              "no statistics"
            : "pagehome started no engine in the program: no allocation or static "
              "array reached the hot threshold and no OpenMP runtime started the "
              "tools interface";
    ph_jw w;
    ph_jw_init(&w, 1);
    ph_jw_object(&w, 0);
    ph_jw_key(&w, "pagehome_stats");
    ph_jw_int(&w, 1);
    ph_jw_key(&w, "engine");
    ph_jw_null(&w);
    ph_jw_key(&w, "note");
    ph_jw_string(&w, note);
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
    if ((rc = map_options(&o)) != 0)
        return rc;
    char pre[PATH_MAX];
    if (preload_path(pre, sizeof pre) != 0)
        return cli_error(1, "run: libpagehome_preload.so not found (built without "
                         "libomp-14-dev?); PAGEHOME_PRELOAD_LIB=PATH names it");
    if (strcmp(ei.omp, "libgomp") == 0) {
        if (strcmp(o.runtime, "libomp") == 0) {
            if ((rc = use_libomp_for_gomp(&o)) != 0)
                return rc;
        } else {
            if (strcmp(o.migrate, "auto") == 0)
                setenv("PAGEHOME_ENGINE", "sampling", 1);
            fprintf(stderr, "pagehome: --runtime=gomp: libgomp has no OpenMP tools "
                            "interface, so pagehome cannot see iterations or threads: "
                            "sampling mechanism only\n");
        }
    } else if (!ei.omp[0] && o.verbose) {
        fprintf(stderr, "pagehome: '%s' names no OpenMP runtime: it runs with the "
                        "sampling mechanism if OpenMP never shows up\n", prog);
    }
    prepend_env("LD_PRELOAD", pre, ':');
    if (o.verbose)
        fprintf(stderr, "pagehome: running %s with %s\n", prog, pre);
    /* The report is the program's; a stale one must not pass for it. */
    if (o.report && *o.report && unlink(o.report) != 0 && errno != ENOENT)
        return cli_error(1, "run: --report %s: cannot replace it: %s", o.report,
                         strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return cli_error(1, "run: fork: %s", strerror(errno));
    if (pid == 0) {
        execv(prog, argv + first);
        fprintf(stderr, "pagehome: run: cannot execute %s: %s\n", prog, strerror(errno));
        _exit(127);
    }
    /* the program's signals are its own: ignore ^C here, wait for it */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    cleanup_runtime_dir();
    if (o.report && *o.report)
        report_if_silent(o.report, prog, ei.omp, status,
                         o.migrate && strcmp(o.migrate, "off") == 0);
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        signal(sig, SIG_DFL);
        raise(sig);
        return 128 + sig;
    }
    return WEXITSTATUS(status);
}
