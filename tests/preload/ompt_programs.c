/*
 * ompt_programs.c -- unmodified OpenMP programs for the transparent mode's
 * OMPT front end (src/preload/ompt.c), run with
 * LD_PRELOAD=libpagehome_preload.so.  One program, several shapes:
 *
 *   steps      a time-step loop: 3 parallel regions x 10 steps
 *   cold       2 init regions, then 10 steps of 3 regions with a
 *              convergence-check region every 4th step
 *   oneregion  one parallel region, the time loop inside it (3 worksharing
 *              loops x 10 steps): iterations come from the barriers
 *   noperiod   70 different regions, each run once: no period (fallback)
 *   slowsteps  5 steps of 8 regions that each last PH_SLOW_MS (default 10)
 *              ms: the period shows only after 16 regions, later than a
 *              short period_wait_ms, while regions keep coming
 *   slowdistinct  62 different regions of PH_SLOW_MS ms each, run once:
 *              regions keep coming, but the stream never repeats itself
 *
 * The program prints its results (integers: the same with any runtime
 * schedule of the reductions) to stdout.  When pagehome is preloaded
 * (ph_engine_stats found with dlsym) it then checks, exiting 1 on failure:
 *   - the engine's iteration count is within PH_EXPECT_ITERS ("MIN:MAX");
 *   - the OMPT summary (ph_preload_ompt_summary) contains every
 *     '|'-separated text of PH_EXPECT_SUMMARY, and not PH_REJECT_SUMMARY;
 *   - its own stdout equals that of the same program run without the
 *     preload (it runs itself again, LD_PRELOAD removed).
 * PH_REGISTER=1 registers the arrays as hot areas (ph_area_register via
 * dlsym), so the engine samples them while the program runs.
 */
#include "pagehome.h" /* types only: the functions come from dlsym */

#include <dlfcn.h>
#include <errno.h>
#include <omp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define N (1 << 16)
#define STEPS 10

static uint64_t a[N] __attribute__((aligned(4096)));
static uint64_t b[N] __attribute__((aligned(4096)));
static uint64_t c[N] __attribute__((aligned(4096)));

/* Output buffers on the heap (small: not hot): the transparent mode
 * watches the large static segments, and a watched page handed to read(2)
 * fails with EFAULT (README, "Known limits"). */
#define OUT_MAX 8192
static char *out;
static size_t out_len;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out + out_len, OUT_MAX - out_len, fmt, ap);
    va_end(ap);
    if (n > 0 && (size_t)n < OUT_MAX - out_len)
        out_len += (size_t)n;
}

static uint64_t sum(const uint64_t *x)
{
    uint64_t s = 0;
    for (int i = 0; i < N; i++)
        s += x[i];
    return s;
}

static void step_a(int step)
{
#pragma omp parallel for schedule(static)
    for (int i = 0; i < N; i++)
        a[i] = a[i] * 3 + (uint64_t)(i ^ step);
}

static void step_b(int step)
{
#pragma omp parallel for schedule(static)
    for (int i = 0; i < N; i++)
        b[i] = b[i] + a[(i + step) % N];
}

static uint64_t step_c(void)
{
    uint64_t s = 0;
#pragma omp parallel for schedule(static) reduction(+ : s)
    for (int i = 0; i < N; i++) {
        c[i] = a[i] ^ b[i];
        s += c[i] & 0xff;
    }
    return s;
}

static void prog_steps(void)
{
    for (int step = 0; step < STEPS; step++) {
        step_a(step);
        step_b(step);
        say("step %d: %llu\n", step, (unsigned long long)step_c());
    }
}

static void prog_cold(void)
{
#pragma omp parallel for schedule(static)
    for (int i = 0; i < N; i++)
        a[i] = (uint64_t)i;
#pragma omp parallel for schedule(static)
    for (int i = 0; i < N; i++)
        b[i] = (uint64_t)(N - i);
    for (int step = 0; step < STEPS; step++) {
        step_a(step);
        step_b(step);
        uint64_t s = step_c();
        if (step % 4 == 3) { /* convergence check */
            uint64_t m = 0;
#pragma omp parallel for schedule(static) reduction(max : m)
            for (int i = 0; i < N; i++)
                m = c[i] > m ? c[i] : m;
            say("check %d: %llu\n", step, (unsigned long long)(m & 0xffff));
        }
        say("step %d: %llu\n", step, (unsigned long long)s);
    }
}

static void prog_oneregion(void)
{
    uint64_t sums[STEPS];
#pragma omp parallel
    {
        for (int step = 0; step < STEPS; step++) {
#pragma omp for schedule(static)
            for (int i = 0; i < N; i++)
                a[i] = a[i] * 3 + (uint64_t)(i ^ step);
#pragma omp for schedule(static)
            for (int i = 0; i < N; i++)
                b[i] = b[i] + a[(i + step) % N];
#pragma omp for schedule(static)
            for (int i = 0; i < N; i++)
                c[i] = a[i] ^ b[i];
#pragma omp master
            sums[step] = sum(c);
        }
    }
    for (int step = 0; step < STEPS; step++)
        say("step %d: %llu\n", step, (unsigned long long)sums[step]);
}

#define REGION(k)                                                           \
    do {                                                                    \
        _Pragma("omp parallel for schedule(static)")                        \
        for (int i = 0; i < N; i++)                                         \
            a[i] += (uint64_t)(k);                                          \
    } while (0);
#define R10(k)                                                              \
    REGION(k) REGION(k + 1) REGION(k + 2) REGION(k + 3) REGION(k + 4)       \
    REGION(k + 5) REGION(k + 6) REGION(k + 7) REGION(k + 8) REGION(k + 9)

static void prog_noperiod(void)
{
    R10(0) R10(10) R10(20) R10(30) R10(40) R10(50) R10(60)
    say("sum: %llu\n", (unsigned long long)sum(a));
}

static long slow_ms = 10;
/* A parallel region whose worksharing loop is FOR's, then PH_SLOW_MS of
 * sleep on the primary thread. */
#define SLOW_BODY(k, FOR)                                                   \
    do {                                                                    \
        _Pragma("omp parallel")                                             \
        {                                                                   \
            FOR                                                             \
            for (int i = 0; i < N; i++)                                     \
                a[i] += (uint64_t)(k);                                      \
            _Pragma("omp master")                                           \
            {                                                               \
                struct timespec ts_ = {0, slow_ms * 1000000L};              \
                while (nanosleep(&ts_, &ts_) != 0 && errno == EINTR)        \
                    ;                                                       \
            }                                                               \
        }                                                                   \
    } while (0);
#define SLOW_REGION(k) SLOW_BODY(k, _Pragma("omp for schedule(static)"))

static void prog_slowsteps(void)
{
    if (getenv("PH_SLOW_MS"))
        slow_ms = atol(getenv("PH_SLOW_MS"));
    for (int step = 0; step < 5; step++) {
        SLOW_REGION(1) SLOW_REGION(2) SLOW_REGION(3) SLOW_REGION(4)
        SLOW_REGION(5) SLOW_REGION(6) SLOW_REGION(7) SLOW_REGION(8)
        say("step %d: %llu\n", step, (unsigned long long)sum(a));
    }
}

/* A slow region without a barrier of its own (nowait): one region and one
 * (end) barrier a region, so 62 of them stay under the detectors' count
 * fallback (OMPT_DECIDE_IDS, 64) while they outlast four waits. */
#define SLOW_DISTINCT(k) SLOW_BODY(k, _Pragma("omp for schedule(static) nowait"))
#define SD10(k)                                                             \
    SLOW_DISTINCT(k) SLOW_DISTINCT(k + 1) SLOW_DISTINCT(k + 2)              \
    SLOW_DISTINCT(k + 3) SLOW_DISTINCT(k + 4) SLOW_DISTINCT(k + 5)          \
    SLOW_DISTINCT(k + 6) SLOW_DISTINCT(k + 7) SLOW_DISTINCT(k + 8)          \
    SLOW_DISTINCT(k + 9)

static void prog_slowdistinct(void)
{
    if (getenv("PH_SLOW_MS"))
        slow_ms = atol(getenv("PH_SLOW_MS"));
    SD10(1) SD10(11) SD10(21) SD10(31) SD10(41) SD10(51)
    SLOW_DISTINCT(61) SLOW_DISTINCT(62)
    say("sum: %llu\n", (unsigned long long)sum(a));
}

/* ---- checks (only under the preload) ------------------------------------ */

static int failed;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    failed = 1;
}

/* Run ourselves without the preload; compare stdout. */
static void check_same_output(char **argv)
{
    int fd[2];
    if (pipe(fd) != 0) {
        fail("pipe");
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        unsetenv("LD_PRELOAD");
        setenv("PH_OMPT_CHILD", "1", 1);
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    close(fd[1]);
    char *other = malloc(OUT_MAX);
    size_t len = 0;
    ssize_t r;
    while ((r = read(fd[0], other + len, OUT_MAX - 1 - len)) != 0) {
        if (r < 0 && errno != EINTR)
            break;
        if (r > 0)
            len += (size_t)r;
    }
    close(fd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail("the run without the preload failed (status %d)", status);
    else if (len != out_len || memcmp(other, out, len) != 0)
        fail("output differs without the preload:\n%.*s---\n%.*s",
             (int)out_len, out, (int)len, other);
    free(other);
}

static void check(char **argv)
{
    int (*stats)(ph_engine_stats_t *) = (int (*)(ph_engine_stats_t *))dlsym(
        RTLD_DEFAULT, "ph_engine_stats");
    int (*summary)(char *, size_t) =
        (int (*)(char *, size_t))dlsym(RTLD_DEFAULT,
                                       "ph_preload_ompt_summary");
    if (!stats || !summary) {
        fail("pagehome is not preloaded");
        return;
    }
    char line[1024];
    summary(line, sizeof line);
    fprintf(stderr, "summary: %s\n", line);
    const char *want = getenv("PH_EXPECT_SUMMARY");
    if (want && *want) {
        char buf[512];
        snprintf(buf, sizeof buf, "%s", want);
        for (char *save = NULL, *t = strtok_r(buf, "|", &save); t;
             t = strtok_r(NULL, "|", &save))
            if (!strstr(line, t))
                fail("summary lacks \"%s\"", t);
    }
    const char *reject = getenv("PH_REJECT_SUMMARY");
    if (reject && *reject && strstr(line, reject))
        fail("summary has \"%s\"", reject);
    ph_engine_stats_t st;
    memset(&st, 0, sizeof st);
    if (stats(&st) != 0) {
        fail("ph_engine_stats failed");
    } else {
        long lo = 0, hi = 1000000;
        const char *it = getenv("PH_EXPECT_ITERS");
        if (it && sscanf(it, "%ld:%ld", &lo, &hi) != 2)
            fail("bad PH_EXPECT_ITERS %s", it);
        fprintf(stderr, "iterations: %llu (expected %ld..%ld)\n",
                (unsigned long long)st.iterations, lo, hi);
        if ((long)st.iterations < lo || (long)st.iterations > hi)
            fail("%llu iterations, expected %ld..%ld",
                 (unsigned long long)st.iterations, lo, hi);
    }
    check_same_output(argv);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "steps";
    out = calloc(1, OUT_MAX);
    if (!out)
        return 2;
    for (int i = 0; i < N; i++) {
        a[i] = (uint64_t)i * 7;
        b[i] = (uint64_t)i;
    }
    if (getenv("PH_REGISTER") && atoi(getenv("PH_REGISTER")) &&
        !getenv("PH_OMPT_CHILD")) {
        ph_hotarea_t *(*reg)(void *, size_t, const char *) =
            (ph_hotarea_t * (*)(void *, size_t, const char *))dlsym(
                RTLD_DEFAULT, "ph_area_register");
        if (reg && (!reg(a, sizeof a, "a") || !reg(b, sizeof b, "b") ||
                    !reg(c, sizeof c, "c")))
            fail("ph_area_register failed");
    }
    if (strcmp(mode, "steps") == 0)
        prog_steps();
    else if (strcmp(mode, "cold") == 0)
        prog_cold();
    else if (strcmp(mode, "oneregion") == 0)
        prog_oneregion();
    else if (strcmp(mode, "noperiod") == 0)
        prog_noperiod();
    else if (strcmp(mode, "slowsteps") == 0)
        prog_slowsteps();
    else if (strcmp(mode, "slowdistinct") == 0)
        prog_slowdistinct();
    else {
        fprintf(stderr, "usage: %s steps|cold|oneregion|noperiod|slowsteps|slowdistinct\n",
                argv[0]);
        return 2;
    }
    fputs(out, stdout);
    fflush(stdout);
    if (getenv("PH_OMPT_CHILD"))
        return 0;
    check(argv);
    if (!failed)
        fprintf(stderr, "ok: %s (%d threads)\n", mode, omp_get_max_threads());
    return failed;
}
