/*
 * test_options.c -- the tunables table: defaults, environment, API, bad
 * values (warned, previous value kept), printing, and that README's table
 * is the one options.def generates.
 */
#include "check.h"

#include "base/log.h"
#include "config/launcher.h"
#include "config/options.h"
#include "pagehome.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *capture_stderr_begin(int *saved, char *path)
{
    strcpy(path, "/tmp/ph_test_options_XXXXXX");
    int fd = mkstemp(path);
    fflush(stderr);
    *saved = dup(2);
    dup2(fd, 2);
    close(fd);
    return path;
}

static char *capture_stderr_end(int saved, const char *path)
{
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    FILE *f = fopen(path, "r");
    static char buf[4096];
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
    unlink(path);
    return buf;
}

static void test_defaults(void)
{
    ph_options_reset();
    CHECK_EQ(ph_opt_int(PH_OPT_MOVE_RETRIES), 3);
    CHECK_EQ(ph_opt_int(PH_OPT_PAGESIZE), 4096);
    CHECK_STR(ph_opt_str(PH_OPT_MACHINE), "auto");
    CHECK_STR(ph_opt_str(PH_OPT_PLACEMENT), "first-touch");
    CHECK(ph_opt_double(PH_OPT_LOCAL_LATENCY_NS) == 100.0);
    CHECK_EQ(ph_opt_source_of(PH_OPT_MOVE_RETRIES), PH_SRC_DEFAULT);
}

static void test_env(void)
{
    setenv("PAGEHOME_MOVE_RETRIES", "7", 1);
    setenv("PAGEHOME_PAGESIZE", "2M", 1);
    setenv("PAGEHOME_MACHINE", "SIM", 1);
    setenv("PAGEHOME_VERBOSE", "yes", 1);
    ph_options_reset();
    CHECK_EQ(ph_opt_int(PH_OPT_MOVE_RETRIES), 7);
    CHECK_EQ(ph_opt_source_of(PH_OPT_MOVE_RETRIES), PH_SRC_ENV);
    CHECK_EQ(ph_opt_int(PH_OPT_PAGESIZE), 2 << 20);
    CHECK_STR(ph_opt_str(PH_OPT_MACHINE), "sim");
    CHECK_EQ(ph_opt_bool(PH_OPT_VERBOSE), 1);
    unsetenv("PAGEHOME_MOVE_RETRIES");
    unsetenv("PAGEHOME_PAGESIZE");
    unsetenv("PAGEHOME_MACHINE");
    unsetenv("PAGEHOME_VERBOSE");
}

static void test_bad_env_warns(void)
{
    struct { const char *var, *val, *expect_in_warning; } cases[] = {
        {"PAGEHOME_MOVE_RETRIES", "lots", "expected an integer"},
        {"PAGEHOME_MOVE_RETRIES", "1000", "out of range 0..64"},
        {"PAGEHOME_PAGESIZE", "1G", "must be one of 4K|2M"},
        {"PAGEHOME_PAGESIZE", "12Q", "expected a size"},
        {"PAGEHOME_MACHINE", "cloud", "expected one of auto|linux|sim"},
        {"PAGEHOME_VERBOSE", "maybe", "expected 0/1"},
        {"PAGEHOME_LOCAL_LATENCY_NS", "-5", "out of range"},
        {"PAGEHOME_LOCAL_LATENCY_NS", "nan", "expected a number"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int saved;
        char path[64];
        setenv(cases[k].var, cases[k].val, 1);
        capture_stderr_begin(&saved, path);
        ph_options_reset();
        char *out = capture_stderr_end(saved, path);
        CHECK_CONTAINS(out, "pagehome: warning: ");
        CHECK_CONTAINS(out, cases[k].var);
        CHECK_CONTAINS(out, cases[k].val);
        CHECK_CONTAINS(out, cases[k].expect_in_warning);
        CHECK_CONTAINS(out, "using ");
        unsetenv(cases[k].var);
    }
    /* The value used is the default, and its source says so. */
    setenv("PAGEHOME_MOVE_RETRIES", "-1", 1);
    int saved;
    char path[64];
    capture_stderr_begin(&saved, path);
    ph_options_reset();
    char *out = capture_stderr_end(saved, path);
    CHECK_CONTAINS(out, "using 3");
    CHECK_EQ(ph_opt_int(PH_OPT_MOVE_RETRIES), 3);
    CHECK_EQ(ph_opt_source_of(PH_OPT_MOVE_RETRIES), PH_SRC_DEFAULT);
    unsetenv("PAGEHOME_MOVE_RETRIES");
    ph_options_reset();
}

static void test_api(void)
{
    char buf[64];
    CHECK_EQ(ph_config_set("move_batch_pages", "64"), 0);
    CHECK_EQ(ph_config_get("move_batch_pages", buf, sizeof buf), 0);
    CHECK_STR(buf, "64");
    CHECK_EQ(ph_opt_source_of(PH_OPT_MOVE_BATCH_PAGES), PH_SRC_API);
    /* env var names are accepted as names too */
    CHECK_EQ(ph_config_set("PAGEHOME_MOVE_BATCH_PAGES", "128"), 0);
    CHECK_EQ(ph_opt_int(PH_OPT_MOVE_BATCH_PAGES), 128);
    /* bad value: fails, names it, keeps the old one */
    errno = 0;
    CHECK_EQ(ph_config_set("move_batch_pages", "0"), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_MSG("move_batch_pages=\"0\" is invalid");
    CHECK_MSG("the current value is 128)");
    CHECK_EQ(ph_opt_int(PH_OPT_MOVE_BATCH_PAGES), 128);
    /* unknown name */
    CHECK_EQ(ph_config_set("no_such_thing", "1"), -1);
    CHECK_MSG("no tunable named \"no_such_thing\"");
    CHECK_EQ(ph_config_get("no_such_thing", buf, sizeof buf), -1);
    CHECK_EQ(ph_config_set(NULL, "1"), -1);
    CHECK_EQ(ph_config_set("seed", NULL), -1);
    CHECK_EQ(ph_config_get("seed", NULL, 0), -1);
    /* sizes format back with a suffix */
    CHECK_EQ(ph_config_set("measure_bytes", "1048576"), 0);
    CHECK_EQ(ph_config_get("measure_bytes", buf, sizeof buf), 0);
    CHECK_STR(buf, "1M");
    CHECK_EQ(ph_config_set("topology", "nodes=2"), 0);
    CHECK_STR(ph_opt_str(PH_OPT_TOPOLOGY), "nodes=2");
    ph_options_reset();
}

static void test_parse_size(void)
{
    uint64_t v;
    CHECK_EQ(ph_parse_size("4096", &v), 0);
    CHECK_EQ(v, 4096);
    CHECK_EQ(ph_parse_size("2M", &v), 0);
    CHECK_EQ(v, 2 << 20);
    CHECK_EQ(ph_parse_size("3GiB", &v), 0);
    CHECK_EQ(v, 3ull << 30);
    CHECK_EQ(ph_parse_size("1kb", &v), 0);
    CHECK_EQ(v, 1024);
    CHECK_EQ(ph_parse_size("", &v), -1);
    CHECK_EQ(ph_parse_size("-1", &v), -1);
    CHECK_EQ(ph_parse_size("12X", &v), -1);
    CHECK_EQ(ph_parse_size("99999999999T", &v), -1);
    CHECK_EQ(ph_parse_size("2MBx", &v), -1);
}

static void test_print(void)
{
    char path[] = "/tmp/ph_test_print_XXXXXX";
    int fd = mkstemp(path);
    CHECK_EQ(ph_config_set("seed", "42"), 0);
    CHECK_EQ(ph_config_print(fd), 0);
    close(fd);
    FILE *f = fopen(path, "r");
    char buf[16384];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    unlink(path);
    /* every tunable appears, with its env var and source */
    for (int id = 0; id < PH_OPT_COUNT; id++)
        CHECK_CONTAINS(buf, ph_opt_name((ph_opt_id)id));
    CHECK_CONTAINS(buf, "PAGEHOME_MOVE_RETRIES");
    CHECK_CONTAINS(buf, "(default)");
    CHECK_CONTAINS(buf, "42             (api)");
    CHECK_EQ(ph_config_print(-1), -1);
    ph_options_reset();
}

/* README.md's tunables table must be exactly what options.def generates. */
static void test_readme_table(void)
{
    const char *readme = getenv("PAGEHOME_README");
    if (!readme)
        readme = PH_SOURCE_DIR "/README.md";
    FILE *f = fopen(readme, "r");
    CHECK(f != NULL);
    if (!f)
        return;
    static char doc[1 << 17];
    size_t n = fread(doc, 1, sizeof doc - 1, f);
    doc[n] = '\0';
    fclose(f);
    char *gen = NULL;
    size_t glen = 0;
    FILE *m = open_memstream(&gen, &glen);
    ph_options_print(m, 1);
    fclose(m);
    /* each generated line must be in the README */
    int missing = 0;
    for (char *line = strtok(gen, "\n"); line; line = strtok(NULL, "\n")) {
        if (!strstr(doc, line)) {
            fprintf(stderr, "README.md lacks the tunables line:\n%s\n"
                            "(regenerate: pagehome --print-config --markdown)\n", line);
            missing++;
        }
    }
    CHECK_EQ(missing, 0);
    free(gen);
}

/* The logger reads no tunable: config/ pushes verbose to it whenever the
 * value is set (default, environment or API), and ph_info follows. */
static void test_verbose_pushed(void)
{
    ph_options_reset();
    CHECK_EQ(ph_log_verbose(), 0);
    CHECK_EQ(ph_config_set("verbose", "1"), 0);
    CHECK_EQ(ph_log_verbose(), 1);
    int saved;
    char path[64];
    capture_stderr_begin(&saved, path);
    ph_info("said %d", 42);
    char *out = capture_stderr_end(saved, path);
    CHECK_CONTAINS(out, "pagehome: said 42");
    CHECK_EQ(ph_config_set("verbose", "off"), 0);
    CHECK_EQ(ph_log_verbose(), 0);
    capture_stderr_begin(&saved, path);
    ph_info("quiet");
    out = capture_stderr_end(saved, path);
    CHECK(strstr(out, "quiet") == NULL);
    setenv("PAGEHOME_VERBOSE", "yes", 1);
    ph_options_reset();
    CHECK_EQ(ph_log_verbose(), 1);
    unsetenv("PAGEHOME_VERBOSE");
    ph_options_reset();
    CHECK_EQ(ph_log_verbose(), 0);
}

/* The launcher's rank and size from its environment (launcher.h). */
static void test_launcher(void)
{
    static const char *const all[] = {
        "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK",
        "PMI_SIZE", "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE", "SLURM_PROCID",
        "SLURM_STEP_NUM_TASKS", "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS",
        "MV2_COMM_WORLD_LOCAL_SIZE", "SLURM_STEP_NUM_NODES"};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        unsetenv(all[i]);
    setenv("MPI_LOCALNRANKS", "1", 1); /* no rank: no job, no host count */
    ph_launcher l = ph_launcher_get();
    CHECK(l.rank == 0 && l.size == 1 && l.from == NULL && l.local_size == 0);
    unsetenv("MPI_LOCALNRANKS");
    setenv("SLURM_PROCID", "0", 1); /* a batch script: no job step */
    l = ph_launcher_get();
    CHECK(l.rank == 0 && l.size == 1 && strcmp(l.from, "SLURM_PROCID") == 0);
    setenv("SLURM_STEP_NUM_TASKS", "8", 1);
    setenv("SLURM_PROCID", "5", 1);
    l = ph_launcher_get();
    CHECK(l.rank == 5 && l.size == 8);
    setenv("PMIX_RANK", "5", 1); /* srun --mpi=pmix: no size of its own */
    l = ph_launcher_get();
    CHECK(l.rank == 5 && l.size == 8 && strcmp(l.from, "PMIX_RANK") == 0);
    setenv("PMIX_RANK", "6", 1); /* another numbering than the step's */
    l = ph_launcher_get();
    CHECK(l.rank == 6 && l.size == 7);
    unsetenv("PMIX_RANK");
    setenv("PMI_RANK", "2", 1); /* Hydra before Slurm */
    setenv("PMI_SIZE", "3", 1);
    l = ph_launcher_get();
    CHECK(l.rank == 2 && l.size == 3 && strcmp(l.from, "PMI_RANK") == 0);
    CHECK_EQ(l.local_size, 0); /* this host's share not said */
    setenv("MPI_LOCALNRANKS", "3", 1); /* Hydra: every rank here */
    CHECK_EQ(ph_launcher_get().local_size, 3);
    setenv("MPI_LOCALNRANKS", "4", 1); /* more than the job: not believed */
    CHECK_EQ(ph_launcher_get().local_size, 0);
    setenv("MPI_LOCALNRANKS", "x", 1);
    CHECK_EQ(ph_launcher_get().local_size, 0);
    setenv("SLURM_STEP_NUM_NODES", "2", 1);
    CHECK_EQ(ph_launcher_get().local_size, 0);
    setenv("SLURM_STEP_NUM_NODES", "1", 1); /* a step on one node */
    CHECK_EQ(ph_launcher_get().local_size, 3);
    setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "2", 1); /* the launcher's count first */
    CHECK_EQ(ph_launcher_get().local_size, 2);
    unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    unsetenv("MPI_LOCALNRANKS");
    unsetenv("SLURM_STEP_NUM_NODES");
    setenv("OMPI_COMM_WORLD_RANK", "x1", 1); /* not a number: the next one */
    l = ph_launcher_get();
    CHECK(l.rank == 2 && strcmp(l.from, "PMI_RANK") == 0);
    setenv("OMPI_COMM_WORLD_RANK", "7", 1); /* no size: at least rank + 1 */
    l = ph_launcher_get();
    CHECK(l.rank == 7 && l.size == 8 && strcmp(l.from, "OMPI_COMM_WORLD_RANK") == 0);
    setenv("OMPI_COMM_WORLD_SIZE", "16", 1);
    l = ph_launcher_get();
    CHECK(l.rank == 7 && l.size == 16);
    setenv("OMPI_COMM_WORLD_RANK", "-1", 1);
    l = ph_launcher_get();
    CHECK(l.rank == 2 && strcmp(l.from, "PMI_RANK") == 0);
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        unsetenv(all[i]);
}

int main(void)
{
    test_launcher();
    test_defaults();
    test_env();
    test_bad_env_warns();
    test_api();
    test_parse_size();
    test_print();
    test_readme_table();
    test_verbose_pushed();
    return check_summary("test_options");
}
