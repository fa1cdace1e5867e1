/*
 * test_base.c -- the shared helpers of src/base/: splitmix64 (against the
 * reference outputs of the algorithm), the comparators and the (key,
 * index) pair sort (against qsort on random, sorted, reversed and
 * all-equal inputs, long enough to reach the heapsort fallback), the
 * order-preserving key of a double, the monotonic clock, the page
 * sizes, and the descriptors pagehome keeps (moved high, listed in order,
 * forgotten when closed, the limit on open files respected).
 */
#include "check.h"

#include "base/clock.h"
#include "base/own_fd.h"
#include "base/page.h"
#include "base/path_pattern.h"
#include "base/rng.h"
#include "base/sort.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static void test_rng(void)
{
    /* The first outputs of splitmix64 seeded with 0 and with
     * 1234567 (the values every implementation of the algorithm gives). */
    uint64_t s = 0;
    CHECK(ph_splitmix64_next(&s) == 0xE220A8397B1DCDAFull);
    CHECK(ph_splitmix64_next(&s) == 0x6E789E6AA1B965F4ull);
    CHECK(ph_splitmix64_next(&s) == 0x06C45D188009454Full);
    s = 1234567;
    CHECK(ph_splitmix64_next(&s) == 0x599ED017FB08FC85ull);
    CHECK(ph_splitmix64_next(&s) == 0x2C73F08458540FA5ull);
    /* the hash is the stream's output for that state */
    CHECK(ph_splitmix64(0) == 0xE220A8397B1DCDAFull);
    CHECK(ph_splitmix64(PH_SPLITMIX64_GAMMA) == 0x6E789E6AA1B965F4ull);
    /* uniform in [0, 1) */
    CHECK(ph_rng_unit(0) == 0.0);
    CHECK(ph_rng_unit(UINT64_MAX) < 1.0 && ph_rng_unit(UINT64_MAX) > 0.9999999);
    double sum = 0;
    s = 42;
    for (int i = 0; i < 100000; i++)
        sum += ph_rng_unit(ph_splitmix64_next(&s));
    CHECK(fabs(sum / 100000 - 0.5) < 0.01);
}

static int pair_cmp(const void *a, const void *b)
{
    const size_t *x = a, *y = b; /* {key, idx}: key descending, idx ascending */
    if (x[0] != y[0])
        return x[0] > y[0] ? -1 : 1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

static void check_sort(size_t n, int kind, uint64_t seed)
{
    size_t *key = malloc(n * sizeof *key), *idx = malloc(n * sizeof *idx);
    size_t *ref = malloc(2 * n * sizeof *ref);
    for (size_t i = 0; i < n; i++) {
        size_t k = kind == 0   ? (size_t)(ph_splitmix64_next(&seed) % (n / 4 + 1))
                   : kind == 1 ? i
                   : kind == 2 ? n - i
                               : 7;
        key[i] = k;
        idx[i] = (i * 7919) % n; /* distinct indexes, not in order */
        ref[2 * i] = k;
        ref[2 * i + 1] = idx[i];
    }
    ph_sort_pairs_desc(key, idx, n);
    qsort(ref, n, 2 * sizeof *ref, pair_cmp);
    int ok = 1;
    for (size_t i = 0; i < n; i++)
        ok &= key[i] == ref[2 * i] && idx[i] == ref[2 * i + 1];
    CHECK(ok);
    free(key);
    free(idx);
    free(ref);
}

static void test_sort(void)
{
    static const size_t sizes[] = {1, 2, 15, 16, 17, 100, 4099, 100000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int kind = 0; kind < 4; kind++)
            check_sort(sizes[s], kind, 1000 + s);

    /* the key of a double keeps numeric order, -0.0 == +0.0 */
    static const double v[] = {-INFINITY, -1e300, -2.5, -1e-300, -0.0, 0.0,
                               1e-300, 1.0, 2.5, 1e300, INFINITY};
    for (size_t i = 1; i < sizeof v / sizeof v[0]; i++)
        CHECK(ph_sort_key_double(v[i - 1]) <= ph_sort_key_double(v[i]));
    CHECK(ph_sort_key_double(-0.0) == ph_sort_key_double(0.0));
    CHECK(ph_sort_key_double(-1e-300) < ph_sort_key_double(0.0));

    /* comparators, through qsort */
    double d[] = {3.5, -1, 2, 0, -7.25};
    qsort(d, 5, sizeof *d, ph_cmp_double);
    CHECK(d[0] == -7.25 && d[1] == -1 && d[2] == 0 && d[3] == 2 && d[4] == 3.5);
    int n[] = {5, -3, 9, 0, INT32_MIN, INT32_MAX};
    qsort(n, 6, sizeof *n, ph_cmp_int);
    CHECK(n[0] == INT32_MIN && n[1] == -3 && n[5] == INT32_MAX);
    uint64_t u[] = {UINT64_MAX, 0, 1ull << 63, 7};
    qsort(u, 4, sizeof *u, ph_cmp_u64);
    CHECK(u[0] == 0 && u[1] == 7 && u[2] == 1ull << 63 && u[3] == UINT64_MAX);
}

static void test_clock_pages(void)
{
    uint64_t a = ph_now_ns();
    uint64_t b = ph_now_ns();
    CHECK(a > 0 && b >= a); /* monotonic: never backwards */
    CHECK_EQ(PH_PAGE_4K, 4096);
    CHECK_EQ(PH_PAGE_2M, 2097152);
    CHECK_EQ(PH_PAGE_UNIT, 512);
}

/* File names that name their process (path_pattern.h). */
static void test_path_pattern(void)
{
    char out[64];
    ph_path_vars v = {3, 4242, "node7.cluster.example"};
    CHECK_EQ(ph_path_expand("/o/r-%r-%p-%h.json", &v, out, sizeof out), 0);
    CHECK(strcmp(out, "/o/r-3-4242-node7.json") == 0);
    CHECK_EQ(ph_path_expand("100%%-%r%r", &v, out, sizeof out), 0);
    CHECK(strcmp(out, "100%-33") == 0);
    ph_path_vars nohost = {0, 1, NULL};
    CHECK_EQ(ph_path_expand("%h", &nohost, out, sizeof out), 0);
    CHECK(strcmp(out, "localhost") == 0);
    CHECK_EQ(ph_path_expand("plain", &v, out, sizeof out), 0);
    CHECK(strcmp(out, "plain") == 0);
    /* unknown keys and a % at the end are errors, out is emptied */
    errno = 0;
    CHECK_EQ(ph_path_expand("a%x", &v, out, sizeof out), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(out[0], '\0');
    CHECK_EQ(ph_path_expand("a%", &v, out, sizeof out), -1);
    CHECK_EQ(errno, EINVAL);
    /* exactly fitting, and one byte short */
    CHECK_EQ(ph_path_expand("ab%r", &v, out, 4), 0);
    CHECK(strcmp(out, "ab3") == 0);
    CHECK_EQ(ph_path_expand("abc%r", &v, out, 4), -1);
    CHECK_EQ(errno, ENAMETOOLONG);
    CHECK_EQ(ph_path_expand("", &v, out, 0), -1);
    ph_path_vars big = {9223372036854775807L, 1, "h"};
    CHECK_EQ(ph_path_expand("%r", &big, out, sizeof out), 0);
    CHECK(strcmp(out, "9223372036854775807") == 0);

    CHECK(ph_path_has_key("a-%p.json", 'p'));
    CHECK(!ph_path_has_key("a-%%p.json", 'p')); /* a literal "%p" */
    CHECK(ph_path_names_process("a-%r"));
    CHECK(ph_path_names_process("%p.json"));
    CHECK(!ph_path_names_process("a-%h.json"));
    CHECK(!ph_path_names_process("a-%%r.json")); /* a literal "%r" */
    CHECK(ph_path_names_process("a-%%%r.json"));
    CHECK(!ph_path_names_process("a%"));

    CHECK_EQ(ph_path_per_rank("out/r.json", out, sizeof out), 0);
    CHECK(strcmp(out, "out/r.rank-%r.json") == 0);
    CHECK_EQ(ph_path_per_rank("out.d/r", out, sizeof out), 0);
    CHECK(strcmp(out, "out.d/r.rank-%r") == 0);
    CHECK_EQ(ph_path_per_rank("/x/.hidden", out, sizeof out), 0);
    CHECK(strcmp(out, "/x/.hidden.rank-%r") == 0);
    CHECK_EQ(ph_path_per_rank("a.tar.gz", out, sizeof out), 0);
    CHECK(strcmp(out, "a.tar.rank-%r.gz") == 0);
    CHECK_EQ(ph_path_per_rank("a.json", out, 14), -1); /* needs 15 */
    CHECK_EQ(errno, ENAMETOOLONG);
    CHECK_EQ(ph_path_per_rank("a.json", out, 15), 0);

    CHECK_EQ(ph_path_escape("/d%r/x%", out, sizeof out), 0);
    CHECK(strcmp(out, "/d%%r/x%%") == 0);
    CHECK_EQ(ph_path_expand(out, &v, out + 32, 32), 0);
    CHECK(strcmp(out + 32, "/d%r/x%") == 0); /* the text back */
    CHECK_EQ(ph_path_escape("%%", out, 4), -1);
    CHECK_EQ(ph_path_escape("%%", out, 5), 0);
}

static void test_own_fd(void)
{
    CHECK(!ph_own_fd_is(-1));
    CHECK(!ph_own_fd_is(0));
    int a = ph_own_fd_keep(open("/dev/null", O_RDONLY | O_CLOEXEC));
    int b = ph_own_fd_keep(open("/dev/null", O_RDONLY | O_CLOEXEC));
    CHECK(a >= PH_OWN_FD_FLOOR && b >= PH_OWN_FD_FLOOR && a != b);
    CHECK(ph_own_fd_is(a) && ph_own_fd_is(b));
    CHECK(fcntl(a, F_GETFD) == FD_CLOEXEC); /* close-on-exec kept */
    int first = open("/dev/null", O_RDONLY); /* the low numbers are free again */
    CHECK(first >= 0 && first < PH_OWN_FD_FLOOR);
    close(first);
    int l[PH_OWN_FD_MAX];
    CHECK_EQ(ph_own_fd_list(0, 1 << 30, l, PH_OWN_FD_MAX), 2);
    CHECK(l[0] == (a < b ? a : b) && l[1] == (a < b ? b : a));
    CHECK_EQ(ph_own_fd_list(0, (a < b ? a : b), l, PH_OWN_FD_MAX), 1);
    CHECK_EQ(ph_own_fd_list((a > b ? a : b) + 1, 1 << 30, l, PH_OWN_FD_MAX), 0);
    CHECK_EQ(ph_own_fd_list(0, 1 << 30, l, 1), 1);
    ph_own_fd_close(a);
    CHECK(!ph_own_fd_is(a) && ph_own_fd_is(b));
    CHECK(fcntl(a, F_GETFD) == -1 && errno == EBADF);
    ph_own_fd_close(b);
    CHECK_EQ(ph_own_fd_list(0, 1 << 30, l, PH_OWN_FD_MAX), 0);
    CHECK_EQ(ph_own_fd_keep(-1), -1);
    ph_own_fd_close(-1);
    /* a table full: the descriptor is still given back, unregistered */
    int many[PH_OWN_FD_MAX + 1];
    for (int i = 0; i <= PH_OWN_FD_MAX; i++)
        many[i] = ph_own_fd_keep(open("/dev/null", O_RDONLY | O_CLOEXEC));
    CHECK(many[PH_OWN_FD_MAX] >= 0 && !ph_own_fd_is(many[PH_OWN_FD_MAX]));
    CHECK_EQ(ph_own_fd_list(0, 1 << 30, l, PH_OWN_FD_MAX), PH_OWN_FD_MAX);
    for (int i = 0; i <= PH_OWN_FD_MAX; i++)
        ph_own_fd_close(many[i]);
    CHECK_EQ(ph_own_fd_list(0, 1 << 30, l, PH_OWN_FD_MAX), 0);
    /* a low limit on open files: three quarters of it */
    struct rlimit rl, low;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        low = rl;
        low.rlim_cur = 64;
        if (setrlimit(RLIMIT_NOFILE, &low) == 0) {
            int c = ph_own_fd_keep(open("/dev/null", O_RDONLY | O_CLOEXEC));
            CHECK(c >= 48 && c < 64);
            ph_own_fd_close(c);
            CHECK_EQ(setrlimit(RLIMIT_NOFILE, &rl), 0);
        }
    }
}

/* pagehome's short-lived descriptors against a program that closes every
 * descriptor above stderr over and over (closefrom(3), the way
 * transparent mode's interposer does it) and opens a file of its own
 * right after: pagehome's descriptor is always its /dev/null, and the
 * program's file is never closed under it. */
static atomic_int race_stop;
static atomic_long race_wrong;

static void *pagehome_side(void *arg)
{
    const struct stat *null_st = arg;
    while (!atomic_load(&race_stop)) {
        int fd = ph_own_fd_open("/dev/null", O_RDONLY, 0);
        if (fd < 0)
            continue;
        struct stat st;
        if (fstat(fd, &st) != 0 || st.st_rdev != null_st->st_rdev)
            atomic_fetch_add(&race_wrong, 1);
        ph_own_fd_close(fd);
    }
    return NULL;
}

static void test_own_fd_race(void)
{
    struct stat null_st, zero_st;
    CHECK_EQ(stat("/dev/null", &null_st), 0);
    CHECK_EQ(stat("/dev/zero", &zero_st), 0);
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, pagehome_side, &null_st), 0);
    long lost = 0;
    for (int round = 0; round < 5000; round++) {
        ph_own_fd_program_begin();
        for (int k = 3; k < 16; k++)
            if (!ph_own_fd_is(k))
                syscall(SYS_close, k);
        ph_own_fd_program_end();
        int mine = open("/dev/zero", O_RDONLY | O_CLOEXEC);
        for (int spin = 0; spin < 3; spin++)
            sched_yield();
        struct stat st;
        if (mine < 0 || fstat(mine, &st) != 0 || st.st_rdev != zero_st.st_rdev)
            lost++;
        ph_own_fd_program_begin();
        if (mine >= 0 && !ph_own_fd_is(mine))
            syscall(SYS_close, mine);
        ph_own_fd_program_end();
    }
    atomic_store(&race_stop, 1);
    pthread_join(t, NULL);
    CHECK_EQ(atomic_load(&race_wrong), 0);
    CHECK_EQ(lost, 0);
}

int main(void)
{
    test_path_pattern();
    test_own_fd();
    test_own_fd_race();
    test_rng();
    test_sort();
    test_clock_pages();
    return check_summary("test_base");
}
