/*
 * cmd_cluster.c -- `pagehome cluster run|info|merge`: start a program's
 * ranks through the MPI launcher and merge their statistics.
 *
 *   pagehome cluster run -n N [--hosts H1,H2 | --hostfile F] [--placement P]
 *                        [--mpi openmpi|mpich|auto] [--transport T]
 *                        [--launcher auto|mpirun|srun] [--report FILE]
 *                        [--set NAME=VALUE] [--dry-run] [-v] -- PROG ARGS
 *   pagehome cluster info [-n N] [same launcher options]
 *   pagehome cluster merge -o FILE RANKFILE...
 *
 * `run` builds the launcher's command line and runs it:
 *   - Open MPI: mpirun -n N [--host|--hostfile] [--oversubscribe]
 *     [--allow-run-as-root] --bind-to none, the transport's MCA
 *     parameters, `-x NAME` for every PAGEHOME_*, OMP_* and UCX_* variable;
 *   - MPICH: mpiexec.hydra -n N [-hosts|-f] `-genv NAME VALUE` for the same;
 *   - Slurm (SLURM_JOB_ID set and srun on PATH, or --launcher srun):
 *     srun -n N [--nodelist|--nodefile] --export=ALL --quit-on-interrupt
 *     --kill-on-bad-exit=1 [--mpi=pmix|pmi2], which passes them all; the MPI plugin (PMIx for
 *     Open MPI, PMI-2 for MPICH) unless SLURM_MPI_TYPE names the site's,
 *     when `srun --mpi=list` has it; Open MPI's transport as OMPI_MCA_*
 *     variables (one the user set is kept); a job on one node
 *     (SLURM_JOB_NUM_NODES=1) is shm.
 * The tunables go to the ranks as PAGEHOME_* variables: --placement is
 * PAGEHOME_CLUSTER_PLACEMENT, --set NAME=VALUE (here or before `cluster`)
 * is PAGEHOME_<NAME>; a name that options.def knows is checked with the
 * library's own parser, others are passed as they are (tunables of layers
 * not built into this tool).
 * Transports (Open MPI 4.1 as Debian packages it; its config file turns
 * off osc pt2pt and ucx, which over TCP are the only one-sided
 * components, so they are named here):
 *   shm  one machine: vader and osc rdma (the defaults);
 *   tcp  ob1 with the TCP BTL and osc pt2pt; at most MPI_THREAD_SERIALIZED
 *        (osc pt2pt refuses windows under MPI_THREAD_MULTIPLE); on one
 *        machine over loopback (btl self,tcp, *_if_include lo);
 *   ucx  pml and osc ucx (any UCX transport, UCX_TLS decides), which
 *        allows MPI_THREAD_MULTIPLE;
 *   auto shm without hosts, else ucx.
 * MPICH 4.0 is ch4:ucx whatever is chosen; tcp sets UCX_TLS=tcp,self
 * (and UCX_NET_DEVICES=lo on one machine) unless they are set.
 * With --report FILE the tunable cluster_stats_file is FILE.ranks/rank-%r.json
 * (PAGEHOME_CLUSTER_STATS_FILE; the DSM writes each rank's statistics there
 * at ph_cluster_finalize, %r replaced by the rank; the directory must be on
 * a file system all hosts share); after the job they are merged into FILE
 * (cluster_merge.c) and removed.  SIGINT, SIGTERM and SIGHUP are passed to
 * the launcher, which stops the ranks; the exit status is the launcher's.
 * --dry-run prints the environment it sets and the command, and runs
 * nothing.
 *
 * `info` runs the probe (libexec/pagehome/cluster-probe-MPI, built with
 * each MPI found at build time) the same way: ranks, hosts, the MPI
 * library, its transport settings, an RMA round trip, the DSM arena.
 */
#include "cli.h"
#include "cluster_merge.h"

#include "pagehome.h"

#include "config/options.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static void usage(FILE *out)
{
    fprintf(out,
"usage: pagehome cluster run -n N [options] -- PROGRAM [ARGS...]\n"
"       pagehome cluster info [-n N] [options]\n"
"       pagehome cluster merge -o FILE RANKFILE...\n"
"\n"
"Cluster mode: PROGRAM's ranks start through the MPI launcher (mpirun,\n"
"mpiexec, or srun under Slurm), one process per rank, with pagehome's\n"
"tunables in their environment; their statistics are merged into one\n"
"report.  `info` starts a small probe that prints the ranks, their hosts,\n"
"the MPI library and transport, and the DSM's arena.\n"
"\n"
"options:\n"
"  -n, --np N          number of ranks (in a Slurm job: default SLURM_NTASKS;\n"
"                      info: else 2)\n"
"  --hosts H1,H2,...   hosts to run on (HOST:SLOTS as the launcher takes it)\n"
"  --hostfile FILE     a host file in the launcher's format\n"
"  --placement P       home placement of the cluster's shared data\n"
"                      (PAGEHOME_CLUSTER_PLACEMENT)\n"
"  --mpi M             openmpi, mpich or auto (default: the MPI pagehome was\n"
"                      built with, else the launcher found on PATH)\n"
"  --transport T       auto, shm, tcp or ucx: one machine's shared memory;\n"
"                      TCP with osc pt2pt (MPI_THREAD_SERIALIZED at most); UCX\n"
"                      (default across hosts; MPI_THREAD_MULTIPLE allowed)\n"
"  --launcher L        auto (srun inside a Slurm job), mpirun or srun\n"
"  --report FILE       merge the ranks' statistics into FILE (JSON)\n"
"  --set NAME=VALUE    a tunable for every rank (PAGEHOME_<NAME>)\n"
"  --dry-run           print the environment and command, run nothing\n"
"  -v, --verbose       print the command before running it\n"
"\n"
"environment: PAGEHOME_CLUSTER_LAUNCHER names the launcher binary;\n"
"PAGEHOME_CLUSTER_PROBE the probe `info` runs.\n");
}

/* ---- small helpers ---------------------------------------------------- */

typedef struct strvec {
    char **v;
    int n, cap;
} strvec;

static void sv_push(strvec *s, const char *str)
{
    if (s->n + 2 > s->cap) {
        int cap = s->cap ? 2 * s->cap : 32;
        char **v = realloc(s->v, (size_t)cap * sizeof *v);
        if (!v) {
            fprintf(stderr, "pagehome: cluster: out of memory\n");
            exit(1);
        }
        s->v = v;
        s->cap = cap;
    }
    char *d = strdup(str);
    if (!d) {
        fprintf(stderr, "pagehome: cluster: out of memory\n");
        exit(1);
    }
    s->v[s->n++] = d;
    s->v[s->n] = NULL;
}

__attribute__((format(printf, 2, 3))) static void sv_pushf(strvec *s, const char *fmt, ...)
{
    char buf[PATH_MAX + 256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    sv_push(s, buf);
}

static void sv_free(strvec *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* A word as a POSIX shell would read it back. */
static void print_quoted(FILE *out, const char *w)
{
    int plain = *w != '\0';
    for (const char *p = w; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("%+,-./:=@_^", *p))
            plain = 0;
    if (plain) {
        fputs(w, out);
        return;
    }
    fputc('\'', out);
    for (const char *p = w; *p; p++) {
        if (*p == '\'')
            fputs("'\\''", out);
        else
            fputc(*p, out);
    }
    fputc('\'', out);
}

static int parse_ranks(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 1 || v > 1000000)
        return -1;
    *out = (int)v;
    return 0;
}

/* ---- options ---------------------------------------------------------- */

enum mpi_kind { MPI_AUTO, MPI_OPENMPI, MPI_MPICH };
enum transport { T_AUTO, T_SHM, T_TCP, T_UCX };
enum launcher { L_AUTO, L_MPIRUN, L_SRUN };

typedef struct cl_opts {
    int n, n_given;
    const char *hosts, *hostfile, *placement, *report;
    enum mpi_kind mpi;
    enum transport transport;
    enum launcher launcher;
    int dry_run, verbose;
    strvec sets; /* NAME=VALUE */
    int first;   /* index of PROGRAM in argv */
} cl_opts;

static const char *const mpi_names[] = {"auto", "openmpi", "mpich", NULL};
static const char *const transport_names[] = {"auto", "shm", "tcp", "ucx", NULL};
static const char *const launcher_names[] = {"auto", "mpirun", "srun", NULL};

static int pick(const char *v, const char *const *names)
{
    for (int i = 0; names[i]; i++)
        if (strcmp(v, names[i]) == 0)
            return i;
    return -1;
}

/* The value of option `flag` at argv[*i] (--flag V or --flag=V): 1 and
 * *v set, 0 when argv[*i] is another option, -1 (message printed) when
 * the value is missing. */
static int opt_value(int argc, char **argv, int *i, const char *flag, const char **v,
                     const char *cmd)
{
    int missing = 0;
    *v = cli_value(argc, argv, i, flag, &missing);
    if (missing) {
        cli_error(EXIT_USAGE, "cluster %s: %s needs a value", cmd, flag);
        return -1;
    }
    return *v != NULL;
}

/* Inside a Slurm job that srun may launch, the job's task count
 * (SLURM_NTASKS, as srun itself defaults to): 0 and *n, else -1. */
static int slurm_ntasks(const cl_opts *o, int *n)
{
    const char *job = getenv("SLURM_JOB_ID");
    const char *nt = getenv("SLURM_NTASKS");
    if (!nt || !*nt)
        nt = getenv("SLURM_NPROCS");
    if (o->launcher == L_MPIRUN || !job || !*job || !nt)
        return -1;
    return parse_ranks(nt, n);
}

/* Parses argv[1..]; `need_prog`: run (a program after the options). */
static int parse(int argc, char **argv, cl_opts *o, const char *cmd, int need_prog)
{
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i], *v;
        int m, k;
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
        if (strcmp(a, "--dry-run") == 0) {
            o->dry_run = 1;
            continue;
        }
        if ((m = opt_value(argc, argv, &i, "-n", &v, cmd)) ||
            (m = opt_value(argc, argv, &i, "--np", &v, cmd)) ||
            (m = opt_value(argc, argv, &i, "-np", &v, cmd))) {
            if (m < 0)
                return EXIT_USAGE;
            if (parse_ranks(v, &o->n) != 0)
                return cli_error(EXIT_USAGE, "cluster %s: -n needs a number of ranks >= 1 "
                                 "(got '%s')", cmd, v);
            o->n_given = 1;
            continue;
        }
#define STRING_OPT(flag, field)                                          \
        if ((m = opt_value(argc, argv, &i, flag, &v, cmd)) != 0) {       \
            if (m < 0)                                                   \
                return EXIT_USAGE;                                       \
            o->field = v;                                                \
            continue;                                                    \
        }
        STRING_OPT("--hosts", hosts)
        STRING_OPT("--hostfile", hostfile)
        STRING_OPT("--placement", placement)
        STRING_OPT("--report", report)
#undef STRING_OPT
#define CHOICE_OPT(flag, field, names, type, what)                                   \
        if ((m = opt_value(argc, argv, &i, flag, &v, cmd)) != 0) {                   \
            if (m < 0)                                                               \
                return EXIT_USAGE;                                                   \
            if ((k = pick(v, names)) < 0)                                            \
                return cli_error(EXIT_USAGE, "cluster %s: %s must be %s (got '%s')", \
                                 cmd, flag, what, v);                                \
            o->field = (type)k;                                                      \
            continue;                                                                \
        }
        CHOICE_OPT("--mpi", mpi, mpi_names, enum mpi_kind, "openmpi, mpich or auto")
        CHOICE_OPT("--transport", transport, transport_names, enum transport,
                   "auto, shm, tcp or ucx")
        CHOICE_OPT("--launcher", launcher, launcher_names, enum launcher,
                   "auto, mpirun or srun")
#undef CHOICE_OPT
        if ((m = opt_value(argc, argv, &i, "--set", &v, cmd)) != 0) {
            if (m < 0)
                return EXIT_USAGE;
            if (!strchr(v, '=') || v[0] == '=')
                return cli_error(EXIT_USAGE, "cluster %s: --set needs NAME=VALUE (got '%s')",
                                 cmd, v);
            sv_push(&o->sets, v);
            continue;
        }
        if (a[0] == '-')
            return cli_error(EXIT_USAGE, "cluster %s: unknown option '%s' (pagehome help "
                             "cluster)", cmd, a);
        if (need_prog)
            return cli_error(EXIT_USAGE, "cluster run: put -- before the program "
                             "(pagehome cluster run -n N [options] -- PROGRAM [ARGS...]); "
                             "got '%s'", a);
        return cli_error(EXIT_USAGE, "cluster %s: unexpected argument '%s'", cmd, a);
    }
    if (o->hosts && o->hostfile)
        return cli_error(EXIT_USAGE, "cluster %s: give --hosts or --hostfile, not both", cmd);
    if (o->hosts && (!*o->hosts || strchr(o->hosts, ' ')))
        return cli_error(EXIT_USAGE, "cluster %s: --hosts needs a list H1,H2,... (got '%s')",
                         cmd, o->hosts);
    if (o->hostfile && access(o->hostfile, R_OK) != 0)
        return cli_error(EXIT_USAGE, "cluster %s: --hostfile %s: %s", cmd, o->hostfile,
                         strerror(errno));
    if (need_prog) {
        if (i >= argc)
            return cli_error(EXIT_USAGE, "cluster run: no program given (pagehome cluster "
                             "run -n N [options] -- PROGRAM [ARGS...])");
        if (!o->n_given && slurm_ntasks(o, &o->n) == 0)
            o->n_given = 1;
        if (!o->n_given)
            return cli_error(EXIT_USAGE, "cluster run: -n N (the number of ranks) is "
                             "required (inside a Slurm job it is the job's SLURM_NTASKS)");
    } else if (i < argc) {
        return cli_error(EXIT_USAGE, "cluster %s: unexpected argument '%s'", cmd, argv[i]);
    }
    o->first = i;
    return 0;
}

/* ---- tunables --------------------------------------------------------- */

static void env_name_of(const char *name, char *out, size_t len)
{
    size_t k = (size_t)snprintf(out, len, "PAGEHOME_");
    for (const char *p = name; *p && k + 1 < len; p++)
        out[k++] = (char)toupper((unsigned char)*p);
    out[k] = '\0';
}

/* NAME=VALUE for every rank: checked when options.def has NAME. */
static int set_for_ranks(const char *name, const char *value, strvec *envset)
{
    int id = ph_opt_find(name);
    if (id >= 0 && ph_config_set(name, value) != 0)
        return cli_error(EXIT_USAGE, "cluster: %s", ph_last_error());
    for (const char *p = name; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_')
            return cli_error(EXIT_USAGE, "cluster: '%s' is not a tunable name", name);
    char env[160];
    env_name_of(name, env, sizeof env);
    setenv(env, value, 1);
    sv_pushf(envset, "%s=%s", env, value);
    return 0;
}

static int apply_tunables(const cl_opts *o, strvec *envset)
{
    /* `pagehome --set NAME=VALUE cluster ...`: set in this process */
    for (int id = 0; id < PH_OPT_COUNT; id++) {
        if (ph_opt_source_of((ph_opt_id)id) != PH_SRC_API)
            continue;
        char val[512], env[160];
        ph_opt_format((ph_opt_id)id, val, sizeof val);
        env_name_of(ph_opt_name((ph_opt_id)id), env, sizeof env);
        setenv(env, val, 1);
        sv_pushf(envset, "%s=%s", env, val);
    }
    for (int k = 0; k < o->sets.n; k++) {
        char name[128];
        const char *eq = strchr(o->sets.v[k], '=');
        snprintf(name, sizeof name, "%.*s", (int)(eq - o->sets.v[k]), o->sets.v[k]);
        int rc = set_for_ranks(name, eq + 1, envset);
        if (rc)
            return rc;
    }
    if (o->placement) {
        if (!*o->placement)
            return cli_error(EXIT_USAGE, "cluster: --placement needs a value");
        int rc = set_for_ranks("cluster_placement", o->placement, envset);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- the launcher ----------------------------------------------------- */

/* The MPI pagehome's cluster programs were built with (CMake). */
#ifndef PH_CLUSTER_DEFAULT_MPI
#define PH_CLUSTER_DEFAULT_MPI ""
#endif

static int on_path(const char *name, char *out, size_t len)
{
    return cli_find_on_path(name, out, len);
}

static enum mpi_kind resolve_mpi(enum mpi_kind want)
{
    char p[PATH_MAX];
    if (want != MPI_AUTO)
        return want;
    if (strcmp(PH_CLUSTER_DEFAULT_MPI, "openmpi") == 0)
        return MPI_OPENMPI;
    if (strcmp(PH_CLUSTER_DEFAULT_MPI, "mpich") == 0)
        return MPI_MPICH;
    if (on_path("mpirun.openmpi", p, sizeof p) == 0)
        return MPI_OPENMPI;
    if (on_path("mpiexec.hydra", p, sizeof p) == 0 || on_path("mpiexec.mpich", p, sizeof p) == 0)
        return MPI_MPICH;
    return MPI_OPENMPI;
}

/* The launcher binary: PAGEHOME_CLUSTER_LAUNCHER, else the first of the
 * names found on PATH, else the first name (a dry run still prints it). */
static void launcher_binary(const char *const *names, char *out, size_t len)
{
    const char *env = getenv("PAGEHOME_CLUSTER_LAUNCHER");
    if (env && *env) {
        snprintf(out, len, "%s", env);
        return;
    }
    for (int i = 0; names[i]; i++)
        if (on_path(names[i], out, len) == 0)
            return;
    snprintf(out, len, "%s", names[0]);
}

/* What the ranks get from the launcher's environment: the tunables, the
 * OpenMP and UCX settings; not this tool's own variables. */
static int is_forwarded(const char *entry)
{
    if (strncmp(entry, "PAGEHOME_CLUSTER_LAUNCHER=", 26) == 0 ||
        strncmp(entry, "PAGEHOME_CLUSTER_PROBE=", 23) == 0)
        return 0;
    return strncmp(entry, "PAGEHOME_", 9) == 0 || strncmp(entry, "OMP_", 4) == 0 ||
           strncmp(entry, "UCX_", 4) == 0;
}

/* Ranks on several hosts: --hosts, --hostfile, or a default host file
 * the launcher takes from its environment; under srun, a job on more
 * than one node (or one whose node count is not known). */
static int multi_host(const cl_opts *o, int srun)
{
    if (o->hosts || o->hostfile)
        return 1;
    if (srun) {
        const char *nn = getenv("SLURM_JOB_NUM_NODES");
        if (!nn || !*nn)
            nn = getenv("SLURM_NNODES");
        return !(nn && strcmp(nn, "1") == 0);
    }
    const char *hf = getenv("OMPI_MCA_orte_default_hostfile");
    const char *hy = getenv("HYDRA_HOST_FILE");
    return (hf && *hf) || (hy && *hy);
}

typedef struct launch {
    strvec argv;   /* the command */
    strvec envset; /* NAME=VALUE set by pagehome (printed by --dry-run) */
    const char *mpi_name, *launcher_name, *transport_name;
} launch;

static void set_env(launch *l, const char *name, const char *value, int overwrite)
{
    if (!overwrite && getenv(name))
        return;
    setenv(name, value, 1);
    sv_pushf(&l->envset, "%s=%s", name, value);
}

/* The MPI plugins this srun offers (`srun --mpi=list`): 1 when `name` is
 * one of them, 0 when not, -1 when srun could not say. */
static int srun_has_mpi_plugin(const char *srun, const char *name)
{
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(fd[1], 1);
        dup2(fd[1], 2);
        close(fd[0]);
        close(fd[1]);
        execlp(srun, srun, "--mpi=list", (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    char buf[4096];
    size_t n = 0;
    for (;;) {
        ssize_t r = read(fd[0], buf + n, sizeof buf - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
        if (n == sizeof buf - 1)
            break;
    }
    close(fd[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    buf[n] = '\0';
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || !strstr(buf, "MPI plugin types"))
        return -1;
    /* one plugin a line, indented: "\tpmix" */
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        while (*line == ' ' || *line == '\t')
            line++;
        size_t len = strlen(line);
        while (len && (line[len - 1] == ' ' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (strcmp(line, name) == 0)
            return 1;
    }
    return 0;
}

/* The MCA parameters of an Open MPI transport (NULL-terminated name,
 * value pairs), given on mpirun's command line or, under srun, as
 * OMPI_MCA_ variables. */
static void openmpi_mca(enum transport t, int multi, const char **mca, size_t cap)
{
    size_t k = 0;
#define MCA(n, v) do { if (k + 2 < cap) { mca[k++] = (n); mca[k++] = (v); } } while (0)
    if (t == T_TCP) {
        MCA("pml", "ob1");
        MCA("osc", "pt2pt");
        MCA("btl", multi ? "self,vader,tcp" : "self,tcp");
        if (!multi) {
            MCA("btl_tcp_if_include", "lo");
            MCA("oob_tcp_if_include", "lo");
        }
    } else if (t == T_UCX) {
        MCA("pml", "ucx");
        MCA("osc", "ucx");
        MCA("pml_ucx_tls", "any");
        MCA("pml_ucx_devices", "any");
    }
#undef MCA
    mca[k] = NULL;
}

static void build_launch(const cl_opts *o, char *const *prog, launch *l)
{
    const char *mca[24];
    char bin[PATH_MAX];
    enum mpi_kind mpi = resolve_mpi(o->mpi);
    const char *slurm = getenv("SLURM_JOB_ID");
    char srun_path[PATH_MAX];
    int srun = o->launcher == L_SRUN ||
               (o->launcher == L_AUTO && slurm && *slurm &&
                on_path("srun", srun_path, sizeof srun_path) == 0);
    int multi = multi_host(o, srun);
    enum transport t = o->transport;
    if (t == T_AUTO)
        t = multi ? T_UCX : T_SHM;
    l->mpi_name = mpi == MPI_MPICH ? "mpich" : "openmpi";
    l->transport_name = transport_names[t];

    /* the transport's environment (UCX reads it in every rank) */
    if (t == T_TCP && mpi == MPI_MPICH) {
        set_env(l, "UCX_TLS", "tcp,self", 0);
        if (!multi)
            set_env(l, "UCX_NET_DEVICES", "lo", 0);
    }
    if (t == T_UCX && mpi == MPI_OPENMPI && !multi)
        set_env(l, "UCX_NET_DEVICES", "lo", 0);

    if (srun) {
        static const char *const names[] = {"srun", NULL};
        launcher_binary(names, bin, sizeof bin);
        l->launcher_name = "srun";
        sv_push(&l->argv, bin);
        sv_pushf(&l->argv, "--ntasks=%d", o->n);
        if (o->hosts)
            sv_pushf(&l->argv, "--nodelist=%s", o->hosts);
        if (o->hostfile)
            sv_pushf(&l->argv, "--nodefile=%s", o->hostfile);
        sv_push(&l->argv, "--cpu-bind=none");
        sv_push(&l->argv, "--export=ALL");
        /* one SIGINT stops the job, as under mpirun (srun alone only
         * prints the tasks' states at the first) */
        sv_push(&l->argv, "--quit-on-interrupt");
        /* a rank that fails ends the job, as under mpirun (srun alone
         * lets the others run on, blocked on the one that left) */
        sv_push(&l->argv, "--kill-on-bad-exit=1");
        /* The MPI library finds its peers through the plugin srun starts
         * beside the ranks: PMIx for Open MPI, PMI-2 for MPICH (whose PMI
         * client speaks its wire protocol).  Without it each rank starts
         * alone (MPICH) or aborts (Open MPI).  SLURM_MPI_TYPE, the site's
         * own choice, is kept; a plugin this srun lacks is not named. */
        const char *want = mpi == MPI_MPICH ? "pmi2" : "pmix";
        const char *type = getenv("SLURM_MPI_TYPE");
        if ((!type || !*type) && srun_has_mpi_plugin(bin, want) == 1)
            sv_pushf(&l->argv, "--mpi=%s", want);
        if (mpi == MPI_OPENMPI) {
            openmpi_mca(t, multi, mca, sizeof mca / sizeof *mca);
            for (int k = 0; mca[k]; k += 2) {
                char name[64];
                snprintf(name, sizeof name, "OMPI_MCA_%s", mca[k]);
                set_env(l, name, mca[k + 1], 0);
            }
        }
    } else if (mpi == MPI_OPENMPI) {
        static const char *const names[] = {"mpirun.openmpi", "mpirun", "mpiexec", NULL};
        launcher_binary(names, bin, sizeof bin);
        l->launcher_name = "mpirun";
        sv_push(&l->argv, bin);
        sv_push(&l->argv, "-n");
        sv_pushf(&l->argv, "%d", o->n);
        if (o->hosts) {
            sv_push(&l->argv, "--host");
            sv_push(&l->argv, o->hosts);
        }
        if (o->hostfile) {
            sv_push(&l->argv, "--hostfile");
            sv_push(&l->argv, o->hostfile);
        }
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        if (!multi && cpus > 0 && o->n > cpus)
            sv_push(&l->argv, "--oversubscribe");
        if (geteuid() == 0)
            sv_push(&l->argv, "--allow-run-as-root");
        /* a rank's OpenMP threads share its CPUs: no binding to one core */
        sv_push(&l->argv, "--bind-to");
        sv_push(&l->argv, "none");
        openmpi_mca(t, multi, mca, sizeof mca / sizeof *mca);
        for (int k = 0; mca[k]; k += 2) {
            sv_push(&l->argv, "--mca");
            sv_push(&l->argv, mca[k]);
            sv_push(&l->argv, mca[k + 1]);
        }
        for (char **e = environ; *e; e++) {
            if (!is_forwarded(*e))
                continue;
            const char *eq = strchr(*e, '=');
            if (!eq)
                continue;
            sv_push(&l->argv, "-x");
            sv_pushf(&l->argv, "%.*s", (int)(eq - *e), *e);
        }
    } else {
        static const char *const names[] = {"mpiexec.hydra", "mpiexec.mpich", "mpirun.mpich",
                                            "mpiexec", NULL};
        launcher_binary(names, bin, sizeof bin);
        l->launcher_name = "mpiexec";
        sv_push(&l->argv, bin);
        sv_push(&l->argv, "-n");
        sv_pushf(&l->argv, "%d", o->n);
        if (o->hosts) {
            sv_push(&l->argv, "-hosts");
            sv_push(&l->argv, o->hosts);
        }
        if (o->hostfile) {
            sv_push(&l->argv, "-f");
            sv_push(&l->argv, o->hostfile);
        }
        for (char **e = environ; *e; e++) {
            if (!is_forwarded(*e))
                continue;
            const char *eq = strchr(*e, '=');
            if (!eq)
                continue;
            sv_push(&l->argv, "-genv");
            sv_pushf(&l->argv, "%.*s", (int)(eq - *e), *e);
            sv_push(&l->argv, eq + 1);
        }
    }
    for (int k = 0; prog[k]; k++)
        sv_push(&l->argv, prog[k]);
}

static void print_launch(FILE *out, const launch *l)
{
    for (int k = 0; k < l->envset.n; k++) {
        print_quoted(out, l->envset.v[k]);
        fputc(' ', out);
    }
    for (int k = 0; k < l->argv.n; k++) {
        if (k)
            fputc(' ', out);
        print_quoted(out, l->argv.v[k]);
    }
    fputc('\n', out);
}

/* ---- running ---------------------------------------------------------- */

static volatile sig_atomic_t child_pid;

static void forward_signal(int sig)
{
    if (child_pid > 0)
        kill((pid_t)child_pid, sig);
}

static int run_launcher(const launch *l, int *status)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return cli_error(1, "cluster: fork: %s", strerror(errno));
    if (pid == 0) {
        execvp(l->argv.v[0], l->argv.v);
        fprintf(stderr, "pagehome: cluster: cannot execute %s: %s\n", l->argv.v[0],
                strerror(errno));
        _exit(127);
    }
    child_pid = pid;
    struct sigaction sa, old[3];
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = forward_signal;
    sigemptyset(&sa.sa_mask);
    static const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
    for (int k = 0; k < 3; k++)
        sigaction(sigs[k], &sa, &old[k]);
    while (waitpid(pid, status, 0) < 0 && errno == EINTR)
        ;
    child_pid = 0;
    for (int k = 0; k < 3; k++)
        sigaction(sigs[k], &old[k], NULL);
    return 0;
}

/* ---- the report ------------------------------------------------------- */

static int collect_rank_files(const char *dir, strvec *files)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (strncmp(e->d_name, "rank-", 5) == 0 && len > 5 &&
            strcmp(e->d_name + len - 5, ".json") == 0)
            sv_pushf(files, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    return 0;
}

static void remove_rank_dir(const char *dir)
{
    strvec files = {0};
    if (collect_rank_files(dir, &files) == 0)
        for (int k = 0; k < files.n; k++)
            unlink(files.v[k]);
    sv_free(&files);
    rmdir(dir);
}

/* FILE.ranks/ for the ranks' files (made unless `dry`), and
 * PAGEHOME_CLUSTER_STATS_FILE naming them. */
static int prepare_report(const char *report, char *dir, size_t len, launch *l, int dry)
{
    char path[PATH_MAX + 32];
    if (snprintf(dir, len, "%s.ranks", report) >= (int)len)
        return cli_error(EXIT_USAGE, "cluster: --report path too long");
    snprintf(path, sizeof path, "%s/rank-%%r.json", dir);
    set_env(l, "PAGEHOME_CLUSTER_STATS_FILE", path, 1);
    if (dry)
        return 0;
    /* stale files of an earlier run must not pass for this one's */
    if (unlink(report) != 0 && errno != ENOENT)
        return cli_error(1, "cluster: --report %s: cannot replace it: %s", report,
                         strerror(errno));
    remove_rank_dir(dir);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return cli_error(1, "cluster: --report: cannot make %s: %s", dir, strerror(errno));
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int write_report(const cl_opts *o, const launch *l, const char *dir,
                        char *const *prog, int status, double seconds)
{
    strvec files = {0};
    collect_rank_files(dir, &files);
    json_t *args = json_array();
    for (int k = 1; prog[k]; k++)
        json_array_append_new(args, json_string(prog[k]));
    json_t *cmd = json_array();
    for (int k = 0; k < l->argv.n; k++)
        json_array_append_new(cmd, json_string(l->argv.v[k]));
    json_t *info = json_pack("{s:s, s:o, s:i, s:s, s:s, s:s, s:s?, s:s?, s:s?, s:o, s:f}",
                             "program", prog[0], "args", args, "ranks", o->n,
                             "mpi", l->mpi_name, "launcher", l->launcher_name,
                             "transport", l->transport_name, "hosts", o->hosts,
                             "hostfile", o->hostfile, "placement", o->placement,
                             "command", cmd, "seconds", seconds);
    if (info) {
        if (WIFSIGNALED(status))
            json_object_set_new(info, "signal", json_integer(WTERMSIG(status)));
        else
            json_object_set_new(info, "exit_status", json_integer(WEXITSTATUS(status)));
    }
    int merged = cluster_merge(o->report, files.v, files.n, info);
    json_decref(info);
    if (merged >= 0) {
        if (merged == 0)
            fprintf(stderr, "pagehome: cluster: no rank wrote statistics (%s/rank-*.json): "
                    "the program does not use pagehome's cluster library, or it died "
                    "first; %s says so\n", dir, o->report);
        else if (merged < o->n)
            fprintf(stderr, "pagehome: cluster: %d of %d ranks wrote statistics; %s lists "
                    "the missing ones\n", merged, o->n, o->report);
        remove_rank_dir(dir);
    }
    sv_free(&files);
    return merged < 0 ? -1 : 0;
}

/* ---- the subcommands -------------------------------------------------- */

static int exit_like(int status)
{
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        signal(sig, SIG_DFL);
        raise(sig);
        return 128 + sig;
    }
    return WEXITSTATUS(status);
}

static int do_run(cl_opts *o, char *const *prog)
{
    launch l;
    memset(&l, 0, sizeof l);
    int rc = apply_tunables(o, &l.envset);
    char dir[PATH_MAX];
    if (!rc && o->report)
        rc = prepare_report(o->report, dir, sizeof dir, &l, o->dry_run);
    if (rc) {
        sv_free(&l.envset);
        return rc;
    }
    build_launch(o, prog, &l);
    if (o->dry_run || o->verbose) {
        if (!o->dry_run)
            fputs("pagehome: ", stderr);
        print_launch(o->dry_run ? stdout : stderr, &l);
    }
    if (o->dry_run) {
        sv_free(&l.argv);
        sv_free(&l.envset);
        return 0;
    }
    int status = 0;
    double t0 = now_s();
    rc = run_launcher(&l, &status);
    double seconds = now_s() - t0;
    if (!rc && o->report && write_report(o, &l, dir, prog, status, seconds) != 0)
        rc = 1;
    /* A launcher ended by a signal the user did not send (an interrupt
     * or termination is forwarded to it, and the shell reports those)
     * says nothing itself: say which, as a shell would for a command. */
    if (!rc && WIFSIGNALED(status) && WTERMSIG(status) != SIGINT &&
        WTERMSIG(status) != SIGTERM && WTERMSIG(status) != SIGHUP)
        fprintf(stderr, "pagehome: cluster: %s was ended by signal %d (%s)\n",
                l.argv.v[0], WTERMSIG(status), strsignal(WTERMSIG(status)));
    sv_free(&l.argv);
    sv_free(&l.envset);
    if (rc)
        return rc;
    return exit_like(status);
}

static int probe_path(enum mpi_kind mpi, char *out, size_t len)
{
    const char *env = getenv("PAGEHOME_CLUSTER_PROBE");
    const char *name = mpi == MPI_MPICH ? "cluster-probe-mpich" : "cluster-probe-openmpi";
    if (env && *env) {
        snprintf(out, len, "%s", env);
        return access(out, X_OK);
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = '\0';
        /* the build tree: beside the tool; installed: PREFIX/LIBEXECDIR/pagehome */
        int w = snprintf(out, len, "%s/%s", exe, name);
        if (w > 0 && (size_t)w < len && access(out, X_OK) == 0)
            return 0;
        if (PH_INSTALL_LIBEXECDIR[0] == '/')
            w = snprintf(out, len, "%s/pagehome/%s", PH_INSTALL_LIBEXECDIR, name);
        else
            w = snprintf(out, len, "%s/../%s/pagehome/%s", exe, PH_INSTALL_LIBEXECDIR, name);
        if (w > 0 && (size_t)w < len && access(out, X_OK) == 0)
            return 0;
    }
    snprintf(out, len, "%s", name);
    return -1;
}

static int do_info(cl_opts *o)
{
    if (!o->n_given && slurm_ntasks(o, &o->n) != 0)
        o->n = 2;
    enum mpi_kind mpi = resolve_mpi(o->mpi);
    char probe[PATH_MAX];
    if (probe_path(mpi, probe, sizeof probe) != 0 && !o->dry_run)
        return cli_error(1, "cluster info: %s not found: pagehome was built without %s "
                         "(its MPI development files, e.g. %s, were not found); "
                         "PAGEHOME_CLUSTER_PROBE=PATH names a probe",
                         probe, mpi == MPI_MPICH ? "MPICH" : "Open MPI",
                         mpi == MPI_MPICH ? "libmpich-dev" : "libopenmpi-dev");
    o->mpi = mpi;
    o->report = NULL;
    char *prog[] = {probe, NULL};
    return do_run(o, prog);
}

static int do_merge(int argc, char **argv)
{
    const char *out = NULL;
    int i = 1;
    for (; i < argc; i++) {
        int missing = 0;
        const char *v;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        }
        if ((v = cli_value(argc, argv, &i, "-o", &missing)) || missing ||
            (v = cli_value(argc, argv, &i, "--output", &missing)) || missing) {
            if (missing)
                return cli_error(EXIT_USAGE, "cluster merge: -o needs a file");
            out = v;
            continue;
        }
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        }
        if (argv[i][0] == '-')
            return cli_error(EXIT_USAGE, "cluster merge: unknown option '%s'", argv[i]);
        break;
    }
    if (!out)
        return cli_error(EXIT_USAGE, "cluster merge: -o FILE is required "
                         "(pagehome cluster merge -o FILE RANKFILE...)");
    if (i >= argc)
        return cli_error(EXIT_USAGE, "cluster merge: no per-rank files given");
    for (int k = i; k < argc; k++)
        if (access(argv[k], R_OK) != 0)
            return cli_error(1, "cluster merge: %s: %s", argv[k], strerror(errno));
    int n = cluster_merge(out, argv + i, argc - i, NULL);
    if (n < 0)
        return 1;
    printf("%d rank(s) merged into %s\n", n, out);
    return n > 0 ? 0 : 1;
}

int cmd_cluster(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *sub = argv[1];
    if (strcmp(sub, "-h") == 0 || strcmp(sub, "--help") == 0 || strcmp(sub, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(sub, "merge") == 0)
        return do_merge(argc - 1, argv + 1);
    int is_run = strcmp(sub, "run") == 0;
    if (!is_run && strcmp(sub, "info") != 0)
        return cli_error(EXIT_USAGE, "cluster: unknown subcommand '%s' (run, info or merge)",
                         sub);
    cl_opts o;
    memset(&o, 0, sizeof o);
    int rc = parse(argc - 1, argv + 1, &o, sub, is_run);
    if (!rc)
        rc = is_run ? do_run(&o, argv + 1 + o.first) : do_info(&o);
    sv_free(&o.sets);
    return rc;
}
