/*
 * test_sampler.c -- the SIGSEGV page-protection sampler (sample/sampler.c,
 * sample/sigsegv.c) on the simulated machine (threads bound to virtual
 * nodes) and on Linux (the real node of the CPU).
 *
 * Covered: full snapshot (one sample per touched page, right node, data
 * intact, untouched pages silent); budget rotation (every run within
 * ceil(runs / runs per interval) intervals, not sooner); max_runs (runs and
 * VMAs counted in /proc/self/maps); two threads racing on one page;
 * remove_range while two threads hammer the range, then munmap; no sample
 * of a removed range; a program's own SIGSEGV handler installed before
 * the sampler (SA_SIGINFO in-process, plain handler in a child) still gets
 * its faults; a genuine segfault still kills with SIGSEGV (SIG_DFL and
 * SIG_IGN before the sampler, in children); a watched page under a
 * thread's stack pointer (alternate stack); ring overflow counts drops;
 * first touches told to the simulator (first_touch, fine and coarse
 * runs); transfers in flight kept from the watch (busy); argument
 * errors.  Run under ASan and TSan as well.
 */
#include "check.h"

#include "base/error.h"
#include "config/options.h"
#include "os/os.h"
#include "os/pagemap.h"
#include "sample/source.h"
#include "topo/topo.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define PG PH_PAGE_4K

static ph_topology *topo;
static ph_os *sim;

/* ---- helpers ---------------------------------------------------------------- */

typedef struct coll {
    ph_sample *s;
    size_t n, cap;
} coll;

static void collect(void *arg, const ph_sample *s, size_t n)
{
    coll *c = arg;
    if (c->n + n > c->cap) {
        c->cap = (c->n + n) * 2;
        c->s = realloc(c->s, c->cap * sizeof *c->s);
        if (!c->s)
            abort();
    }
    memcpy(c->s + c->n, s, n * sizeof *s);
    c->n += n;
}

static unsigned char *map_pages(size_t n)
{
    void *p = mmap(NULL, n * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    /* Faulted before it is armed, as hot data is: a range first touched
     * while split by protections gets one anon_vma per piece, and those
     * pieces never merge again (see sampler.c). */
    memset(p, 0, n * PG);
    return p;
}

static ph_source *open_sampler(ph_os *os, size_t budget, size_t max_runs, size_t run_pages,
                               size_t ring)
{
    ph_sampler_opts o = {budget, max_runs, run_pages, ring, 0, PH_SAMPLER_MPROTECT};
    ph_source *s = ph_sampler_open(os, &o);
    if (!s) {
        fprintf(stderr, "ph_sampler_open: %s\n", ph_error_message());
        exit(1);
    }
    return s;
}

/* VMAs of /proc/self/maps that overlap [a, a+len). */
static int vmas_in(const void *a, size_t len)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return -1;
    uintptr_t lo = (uintptr_t)a, hi = lo + len;
    unsigned long s, e;
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "%lx-%lx", &s, &e) == 2 && s < hi && e > lo)
            n++;
    fclose(f);
    return n;
}

/* ---- full snapshot, four threads on four virtual nodes ------------------------ */

#define FS_PAGES 64
#define FS_TOUCHED 48

typedef struct fs_arg {
    unsigned char *buf;
    int node;          /* node index = OS number in the synthetic topology */
    int bad_reads;
} fs_arg;

static void *fs_thread(void *p)
{
    fs_arg *a = p;
    ph_sampler_thread_init();
    ph_os_set_thread_node(sim, a->node);
    for (int round = 0; round < 2; round++)
        for (size_t i = (size_t)a->node; i < FS_TOUCHED; i += 4) {
            volatile unsigned char *pg = a->buf + i * PG;
            if (pg[100] != (unsigned char)(i + round))
                a->bad_reads++;
            pg[100] = (unsigned char)(i + round + 1); /* data through a trap */
        }
    return NULL;
}

static void test_full_snapshot(void)
{
    unsigned char *buf = map_pages(FS_PAGES);
    for (size_t i = 0; i < FS_PAGES; i++)
        buf[i * PG + 100] = (unsigned char)i;
    ph_source *s = open_sampler(sim, 4096, 1024, 1, 1024);
    CHECK_STR(s->ops->name, "sigsegv");
    CHECK_EQ(s->ops->add_range(s, buf, FS_PAGES * PG), 0);
    CHECK_EQ(s->ops->arm(s, 1), 0);
    pthread_t th[4];
    fs_arg args[4];
    for (int t = 0; t < 4; t++) {
        args[t] = (fs_arg){buf, t, 0};
        pthread_create(&th[t], NULL, fs_thread, &args[t]);
    }
    for (int t = 0; t < 4; t++) {
        pthread_join(th[t], NULL);
        CHECK_EQ(args[t].bad_reads, 0);
    }
    coll c = {0};
    CHECK_EQ(s->ops->drain(s, collect, &c), FS_TOUCHED);
    CHECK_EQ(c.n, FS_TOUCHED);
    int seen[FS_PAGES] = {0}, wrong_node = 0, wrong_count = 0;
    for (size_t k = 0; k < c.n; k++) {
        size_t i = (c.s[k].page - (uintptr_t)buf) / PG;
        if (i >= FS_PAGES)
            continue;
        seen[i]++;
        wrong_node += c.s[k].node != (int)(i % 4);
        wrong_count += c.s[k].count != 1;
    }
    int once = 1;
    for (size_t i = 0; i < FS_PAGES; i++)
        once &= seen[i] == (i < FS_TOUCHED);
    CHECK(once);
    CHECK_EQ(wrong_node, 0);
    CHECK_EQ(wrong_count, 0);
    CHECK_EQ(s->ops->disarm(s), 0);
    int intact = 1;
    for (size_t i = 0; i < FS_PAGES; i++)
        intact &= buf[i * PG + 100] == (unsigned char)(i < FS_TOUCHED ? i + 2 : i);
    CHECK(intact);
    c.n = 0;
    CHECK_EQ(s->ops->drain(s, collect, &c), 0); /* untouched pages stayed silent */
    ph_source_stats st;
    s->ops->stats(s, &st);
    CHECK_EQ(st.armed_pages, FS_PAGES);
    CHECK_EQ(st.samples, FS_TOUCHED);
    CHECK_EQ(st.intervals, 1);
    CHECK_EQ(st.dropped, 0);
    CHECK(st.handler_ns > 0);
    s->ops->close(s);
    munmap(buf, FS_PAGES * PG);
    free(c.s);
}

/* ---- transfers in flight (ph_sampler_busy_begin/end) ------------------------------ */

/* The kernel fills [at, at+n) from a file: 1 when all of it arrived. */
static int kernel_fills(int fd, unsigned char *at, size_t n)
{
    return pread(fd, at, n, 0) == (ssize_t)n && at[0] == 0x5c && at[n - 1] == 0x5c;
}

/* A temporary file of 4 pages of what kernel_fills expects. */
static FILE *pattern_file(void)
{
    FILE *f = tmpfile();
    CHECK(f != NULL);
    unsigned char data[4 * PG];
    memset(data, 0x5c, sizeof data);
    CHECK(f && pwrite(fileno(f), data, sizeof data, 0) == (ssize_t)sizeof data);
    return f;
}

static void test_busy(void)
{
    enum { N = 32 };
    unsigned char *buf = map_pages(N);
    FILE *f = pattern_file();
    int fd = f ? fileno(f) : -1;
    ph_source *s = open_sampler(sim, 4096, 1024, 1, 1024);
    CHECK_EQ(s->ops->add_range(s, buf, N * PG), 0);
    /* before the arm: pages 4..7 (an unaligned buffer) stay open */
    int key1, key2;
    CHECK_EQ(ph_sampler_busy_begin(&key1, buf + 4 * PG + 100, 3 * PG), 0);
    CHECK_EQ(s->ops->arm(s, 1), 0);
    CHECK(kernel_fills(fd, buf + 4 * PG + 100, 3 * PG));
    errno = 0;
    CHECK(pread(fd, buf + 10 * PG, 16, 0) == -1 && errno == EFAULT); /* watched */
    /* while armed: pages 12..13 are opened by the begin, without a sample */
    CHECK_EQ(ph_sampler_busy_begin(&key2, buf + 12 * PG, 2 * PG), 0);
    CHECK(kernel_fills(fd, buf + 12 * PG, 2 * PG));
    /* the next arm leaves both out, watches the rest */
    CHECK_EQ(s->ops->arm(s, 1), 0);
    CHECK(kernel_fills(fd, buf + 4 * PG + 100, 3 * PG));
    CHECK(kernel_fills(fd, buf + 12 * PG, 2 * PG));
    errno = 0;
    CHECK(pread(fd, buf + 14 * PG, 16, 0) == -1 && errno == EFAULT);
    /* ended: watched again from the next arm on */
    CHECK_EQ(ph_sampler_busy_end(&key1), 1);
    CHECK_EQ(ph_sampler_busy_end(&key1), 0);
    CHECK_EQ(ph_sampler_busy_end(&key2), 1);
    CHECK_EQ(s->ops->arm(s, 1), 0);
    errno = 0;
    CHECK(pread(fd, buf + 5 * PG, 16, 0) == -1 && errno == EFAULT);
    errno = 0;
    CHECK(pread(fd, buf + 12 * PG, 16, 0) == -1 && errno == EFAULT);
    CHECK_EQ(s->ops->disarm(s), 0);
    coll c = {0};
    CHECK_EQ(s->ops->drain(s, collect, &c), 0); /* the kernel's copies are no samples */
    /* 256 transfers at once, the next refused */
    static char keys[257];
    int refused = 0;
    for (int k = 0; k < 256; k++)
        CHECK_EQ(ph_sampler_busy_begin(&keys[k], buf, PG), 0);
    errno = 0;
    refused = ph_sampler_busy_begin(&keys[256], buf, PG) == -1 && errno == ENOSPC;
    CHECK(refused);
    CHECK_EQ(ph_sampler_busy_begin(&keys[7], buf + PG, PG), 0); /* same key: replaced */
    int ended = 0;
    for (int k = 0; k < 257; k++)
        ended += ph_sampler_busy_end(&keys[k]);
    CHECK_EQ(ended, 256);
    s->ops->close(s);
    fclose(f);
    munmap(buf, N * PG);
    free(c.s);
}

/* ---- the program's own memory policy ------------------------------------------------ */

static void note_policy(void *addr, size_t bytes, int own)
{
    ph_sampler_query_begin();
    ph_sampler_note_policy(addr, bytes, own);
    ph_sampler_query_end();
}

static void test_policy(void)
{
    enum { N = 32 };
    unsigned char *buf = map_pages(N);
    FILE *f = pattern_file();
    int fd = f ? fileno(f) : -1;
    ph_source *s = open_sampler(sim, 4096, 1024, 1, 1024);
    CHECK_EQ(s->ops->add_range(s, buf, N * PG), 0);
    /* before the arm: pages 4..7 are the program's, never watched */
    note_policy(buf + 4 * PG, 4 * PG, 1);
    CHECK_EQ(s->ops->arm(s, 1), 0);
    CHECK(kernel_fills(fd, buf + 4 * PG, 4 * PG));
    errno = 0;
    CHECK(pread(fd, buf + 10 * PG, 16, 0) == -1 && errno == EFAULT); /* watched */
    /* while armed: pages 12..13 are opened at once, without a sample */
    note_policy(buf + 12 * PG, 2 * PG, 1);
    CHECK(kernel_fills(fd, buf + 12 * PG, 2 * PG));
    /* the program's protection changes beside it keep the policy */
    ph_sampler_note_protect(buf + 12 * PG, PG, PROT_READ);
    ph_sampler_note_protect(buf + 12 * PG, PG, PROT_READ | PROT_WRITE);
    CHECK_EQ(s->ops->arm(s, 1), 0);
    CHECK(kernel_fills(fd, buf + 4 * PG, 4 * PG));
    CHECK(kernel_fills(fd, buf + 12 * PG, 2 * PG));
    /* a touch of such a page is no fault and no sample */
    buf[5 * PG] = 1;
    buf[12 * PG + 1] = 1;
    errno = 0;
    CHECK(pread(fd, buf + 14 * PG, 16, 0) == -1 && errno == EFAULT);
    CHECK_EQ(s->ops->disarm(s), 0);
    coll c = {0};
    CHECK_EQ(s->ops->drain(s, collect, &c), 0);
    for (size_t i = 0; i < c.n; i++) {
        uintptr_t p = (uintptr_t)c.s[i].page;
        CHECK(!(p >= (uintptr_t)buf + 4 * PG && p < (uintptr_t)buf + 8 * PG));
        CHECK(!(p >= (uintptr_t)buf + 12 * PG && p < (uintptr_t)buf + 14 * PG));
    }
    /* MPOL_DEFAULT hands them back: watched from the next arm on */
    note_policy(buf + 4 * PG, 4 * PG, 0);
    note_policy(buf + 12 * PG, 2 * PG, 0);
    CHECK_EQ(s->ops->arm(s, 1), 0);
    errno = 0;
    CHECK(pread(fd, buf + 5 * PG, 16, 0) == -1 && errno == EFAULT);
    errno = 0;
    CHECK(pread(fd, buf + 12 * PG, 16, 0) == -1 && errno == EFAULT);
    CHECK_EQ(s->ops->disarm(s), 0);
    s->ops->close(s);
    fclose(f);
    munmap(buf, N * PG);
    free(c.s);
}

/* ---- budget rotation over two ranges --------------------------------------------- */

static void test_rotation(void)
{
    /* 15 + 10 runs of 4 pages, 12 pages (3 runs) per interval: all 25
     * runs within ceil(25/3) = 9 intervals, not within 8. */
    unsigned char *a = map_pages(60), *b = map_pages(40);
    ph_source *s = open_sampler(sim, 12, 100, 4, 256);
    CHECK_EQ(s->ops->add_range(s, a, 60 * PG), 0);
    CHECK_EQ(s->ops->add_range(s, b, 40 * PG), 0);
    int seen_a[15] = {0}, seen_b[10] = {0}, per_interval_ok = 1, all_after_8 = 1;
    coll c = {0};
    for (int it = 0; it < 9; it++) {
        CHECK_EQ(s->ops->arm(s, 0), 0);
        for (size_t i = 0; i < 60; i++)
            a[i * PG] = 1;
        for (size_t i = 0; i < 40; i++)
            b[i * PG] = 1;
        c.n = 0;
        per_interval_ok &= s->ops->drain(s, collect, &c) == 3;
        for (size_t k = 0; k < c.n; k++) {
            uintptr_t p = c.s[k].page;
            if (p >= (uintptr_t)a && p < (uintptr_t)a + 60 * PG)
                seen_a[(p - (uintptr_t)a) / PG / 4]++;
            else if (p >= (uintptr_t)b && p < (uintptr_t)b + 40 * PG)
                seen_b[(p - (uintptr_t)b) / PG / 4]++;
        }
        if (it == 7) {
            int all = 1;
            for (int r = 0; r < 15; r++)
                all &= seen_a[r] > 0;
            for (int r = 0; r < 10; r++)
                all &= seen_b[r] > 0;
            all_after_8 = all;
        }
    }
    CHECK(per_interval_ok);
    CHECK(!all_after_8);
    int all = 1;
    for (int r = 0; r < 15; r++)
        all &= seen_a[r] > 0;
    for (int r = 0; r < 10; r++)
        all &= seen_b[r] > 0;
    CHECK(all);
    ph_source_stats st;
    s->ops->stats(s, &st);
    CHECK_EQ(st.armed_pages, 9 * 12);
    CHECK_EQ(st.intervals, 9);
    CHECK_EQ(st.max_runs, 3);
    s->ops->close(s);
    munmap(a, 60 * PG);
    munmap(b, 40 * PG);
    free(c.s);
}

/* set_budget: the next arm watches the new count (the engine's first
 * sweep and its sampling budget go through it). */
static void test_set_budget(void)
{
    unsigned char *a = map_pages(64);
    ph_source *s = open_sampler(sim, 8, 100, 1, 256);
    CHECK(s->ops->set_budget != NULL);
    CHECK_EQ(s->ops->add_range(s, a, 64 * PG), 0);
    static const size_t budgets[] = {8, 32, 2, 64};
    ph_source_stats st;
    uint64_t before = 0;
    for (size_t it = 0; it < 4; it++) {
        if (it > 0)
            CHECK_EQ(s->ops->set_budget(s, budgets[it]), 0);
        CHECK_EQ(s->ops->arm(s, 0), 0);
        s->ops->stats(s, &st);
        CHECK_EQ(st.armed_pages - before, budgets[it]);
        before = st.armed_pages;
    }
    s->ops->close(s);
    munmap(a, 64 * PG);
}

/* set_run_pages: runs of 8 pages, one trap standing for its run -- a
 * sample for every page of it, with the toucher's node; a short last run
 * credits what it has; the rotation's cursor carries over in pages when
 * the runs change; 0 goes back to page-exact runs. */
static void test_set_run_pages(void)
{
    unsigned char *a = map_pages(60);
    ph_source *s = open_sampler(sim, 60, 100, 1, 256);
    CHECK(s->ops->set_run_pages != NULL);
    CHECK_EQ(s->ops->add_range(s, a, 60 * PG), 0);
    CHECK_EQ(s->ops->set_run_pages(s, 8), 0);
    CHECK_EQ(s->ops->arm(s, 0), 0);
    /* page 3 of each run first, by node r % 4; then the run's others */
    for (size_t r = 0; r < 8; r++) {
        ph_os_set_thread_node(sim, (int)(r % 4));
        size_t first = r * 8 + 3 < 60 ? r * 8 + 3 : 56;
        a[first * PG] = 1;
        ph_os_set_thread_node(sim, (int)((r + 1) % 4));
        for (size_t p = r * 8; p < r * 8 + 8 && p < 60; p++)
            a[p * PG + 1] = 1;
    }
    coll c = {0};
    CHECK_EQ(s->ops->drain(s, collect, &c), 60);
    int seen[60] = {0}, node_ok = 1;
    for (size_t k = 0; k < c.n; k++) {
        size_t p = (size_t)(c.s[k].page - (uintptr_t)a) / PG;
        CHECK(p < 60);
        if (p >= 60)
            continue;
        seen[p]++;
        node_ok &= c.s[k].node == (int)((p / 8) % 4) && c.s[k].count == 1;
    }
    CHECK(node_ok);
    for (size_t p = 0; p < 60; p++)
        CHECK_EQ(seen[p], 1);
    ph_source_stats st;
    s->ops->stats(s, &st);
    CHECK_EQ(st.samples, 60);
    CHECK_EQ(st.credited, 60 - 8); /* 8 traps */
    CHECK_EQ(st.armed_pages, 60);
    CHECK_EQ(st.max_runs, 8);
    /* a budget of 16 pages: runs 0 and 1; then page-exact from page 16 */
    CHECK_EQ(s->ops->set_budget(s, 16), 0);
    CHECK_EQ(s->ops->arm(s, 0), 0);
    for (size_t p = 0; p < 60; p++)
        a[p * PG] = 2;
    c.n = 0;
    CHECK_EQ(s->ops->drain(s, collect, &c), 16);
    CHECK_EQ(s->ops->set_run_pages(s, 0), 0);
    CHECK_EQ(s->ops->arm(s, 0), 0);
    ph_os_set_thread_node(sim, 2);
    for (size_t p = 0; p < 60; p++)
        a[p * PG] = 3;
    c.n = 0;
    CHECK_EQ(s->ops->drain(s, collect, &c), 16);
    size_t lo = 60, hi = 0;
    for (size_t k = 0; k < c.n; k++) {
        size_t p = (size_t)(c.s[k].page - (uintptr_t)a) / PG;
        lo = p < lo ? p : lo;
        hi = p > hi ? p : hi;
        CHECK_EQ(c.s[k].node, 2);
    }
    CHECK_EQ(lo, 16);
    CHECK_EQ(hi, 31);
    ph_source_stats st2;
    s->ops->stats(s, &st2);
    CHECK_EQ(st2.credited, st.credited + 14); /* runs 0, 1 of 8: 2 traps */
    CHECK_EQ(st2.samples, 60 + 16 + 16);
    ph_os_set_thread_node(sim, 0);
    s->ops->close(s);
    munmap(a, 60 * PG);
    free(c.s);
}

/* ---- max_runs ---------------------------------------------------------------------- */

static void test_max_runs(void)
{
    unsigned char *buf = map_pages(256);
    coll c = {0};
    /* Full snapshot with 8 runs at most: runs grow to 32 pages. */
    ph_source *s = open_sampler(sim, 0, 8, 1, 256);
    CHECK_EQ(s->ops->add_range(s, buf, 256 * PG), 0);
    CHECK_EQ(s->ops->arm(s, 1), 0);
    for (size_t i = 32; i < 256; i += 64) /* open runs 1, 3, 5, 7 */
        buf[i * PG] = 1;
    int v = vmas_in(buf, 256 * PG);
    CHECK(v >= 8 && v <= 2 * 8 + 1);
    for (size_t i = 0; i < 256; i++)
        buf[i * PG] = 2;
    CHECK_EQ(s->ops->drain(s, collect, &c), 8);
    ph_source_stats st;
    s->ops->stats(s, &st);
    CHECK_EQ(st.max_runs, 8);
    CHECK_EQ(st.armed_pages, 256);
    s->ops->close(s);

    /* Budget of 100 one-page runs, capped at 10 runs; alternate pages
     * opened split the VMA, never beyond 2 * 10 + 1. */
    s = open_sampler(sim, 100, 10, 1, 256);
    CHECK_EQ(s->ops->add_range(s, buf, 256 * PG), 0);
    CHECK_EQ(s->ops->arm(s, 0), 0);
    for (size_t i = 0; i < 10; i += 2)
        buf[i * PG] = 3;
    v = vmas_in(buf, 256 * PG);
    CHECK(v >= 6 && v <= 21);
    for (size_t i = 0; i < 256; i++)
        buf[i * PG] = 4;
    c.n = 0;
    CHECK_EQ(s->ops->drain(s, collect, &c), 10);
    s->ops->stats(s, &st);
    CHECK_EQ(st.max_runs, 10);
    CHECK_EQ(st.armed_pages, 10);
    CHECK_EQ(s->ops->disarm(s), 0);
    v = vmas_in(buf, 256 * PG);
    if (v != 1) {
        fprintf(stderr, "%d VMAs after disarm at %p\n", v, (void *)buf);
        if (system("cat /proc/$PPID/maps >&2") != 0)
            fprintf(stderr, "(the mappings could not be listed)\n");
    }
    CHECK_EQ(v, 1);
    s->ops->close(s);
    munmap(buf, 256 * PG);
    free(c.s);
}

/* ---- two threads racing on one page ------------------------------------------------- */

#define RACE_ROUNDS 200

/* Each thread counts in its own word of the one watched page: plain
 * stores (an atomic RMW that traps inside TSan's runtime deadlocks it). */
typedef struct race_arg {
    pthread_barrier_t *bar;
    volatile long *cell;
    int node;
} race_arg;

static void *race_thread(void *p)
{
    race_arg *a = p;
    ph_sampler_thread_init();
    ph_os_set_thread_node(sim, a->node);
    for (int r = 0; r < RACE_ROUNDS; r++) {
        pthread_barrier_wait(a->bar); /* armed */
        *a->cell += 1;
        pthread_barrier_wait(a->bar); /* both done */
    }
    return NULL;
}

static void test_race(void)
{
    unsigned char *buf = map_pages(1);
    volatile long *cells = (volatile long *)(void *)buf;
    ph_source *s = open_sampler(sim, 0, 16, 1, 1024);
    CHECK_EQ(s->ops->add_range(s, buf, PG), 0);
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, 3);
    race_arg args[2] = {{&bar, &cells[1], 1}, {&bar, &cells[64], 2}};
    pthread_t th[2];
    for (int t = 0; t < 2; t++)
        pthread_create(&th[t], NULL, race_thread, &args[t]);
    coll c = {0};
    int one_each = 1, node_ok = 1;
    for (int r = 0; r < RACE_ROUNDS; r++) {
        s->ops->arm(s, 1);
        pthread_barrier_wait(&bar);
        pthread_barrier_wait(&bar);
        c.n = 0;
        one_each &= s->ops->drain(s, collect, &c) == 1;
        node_ok &= c.n == 1 && (c.s[0].node == 1 || c.s[0].node == 2);
    }
    for (int t = 0; t < 2; t++)
        pthread_join(th[t], NULL);
    CHECK(one_each);
    CHECK(node_ok);
    CHECK_EQ(cells[1], RACE_ROUNDS);
    CHECK_EQ(cells[64], RACE_ROUNDS);
    pthread_barrier_destroy(&bar);
    s->ops->close(s);
    munmap(buf, PG);
    free(c.s);
}

/* ---- remove_range while two threads hammer ----------------------------------------- */

#define HAM_PAGES 16
#define HAM_ROUNDS 150

typedef struct ham_arg {
    unsigned char *buf;
    atomic_int *stop;
    atomic_long touches;
    int node;
} ham_arg;

static void *ham_thread(void *p)
{
    ham_arg *a = p;
    ph_sampler_thread_init();
    ph_os_set_thread_node(sim, a->node);
    for (size_t i = 0; !atomic_load_explicit(a->stop, memory_order_relaxed); i++) {
        volatile unsigned char *pg = a->buf + (i * 7 % HAM_PAGES) * PG + (size_t)a->node;
        *pg = (unsigned char)(*pg + 1);
        atomic_fetch_add_explicit(&a->touches, 1, memory_order_relaxed);
    }
    return NULL;
}

static void test_remove_hammered(void)
{
    ph_source *s = open_sampler(sim, 0, 64, 1, 4096);
    coll c = {0};
    int removed_ok = 1, silent = 1;
    for (int round = 0; round < HAM_ROUNDS; round++) {
        unsigned char *buf = map_pages(HAM_PAGES);
        removed_ok &= s->ops->add_range(s, buf, HAM_PAGES * PG) == 0;
        atomic_int stop = 0;
        ham_arg args[2];
        pthread_t th[2];
        for (int t = 0; t < 2; t++) {
            args[t].buf = buf;
            args[t].stop = &stop;
            atomic_init(&args[t].touches, 0);
            args[t].node = t;
            pthread_create(&th[t], NULL, ham_thread, &args[t]);
        }
        for (int k = 0; k < 3; k++) { /* re-arm while they touch */
            s->ops->arm(s, 1);
            while (atomic_load(&args[0].touches) + atomic_load(&args[1].touches) <
                   (long)(k + 1) * 8)
                sched_yield();
        }
        s->ops->arm(s, 1);
        removed_ok &= s->ops->remove_range(s, buf, HAM_PAGES * PG) == 0;
        c.n = 0;
        silent &= s->ops->drain(s, collect, &c) == 0; /* nothing of a removed range */
        atomic_store(&stop, 1);
        for (int t = 0; t < 2; t++)
            pthread_join(th[t], NULL);
        munmap(buf, HAM_PAGES * PG);
    }
    CHECK(removed_ok);
    CHECK(silent);
    ph_source_stats st;
    s->ops->stats(s, &st);
    CHECK(st.armed_pages >= (uint64_t)HAM_ROUNDS * 4 * HAM_PAGES);
    s->ops->close(s);
    free(c.s);
}

/* ---- the program's own SIGSEGV handler (installed before the sampler) -------------- */

static unsigned char *own_page;
static atomic_int own_faults;

static void own_handler(int sig, siginfo_t *si, void *ctx)
{
    (void)ctx;
    uintptr_t a = (uintptr_t)si->si_addr;
    if (own_page && a >= (uintptr_t)own_page && a < (uintptr_t)own_page + PG) {
        atomic_fetch_add(&own_faults, 1);
        mprotect(own_page, PG, PROT_READ | PROT_WRITE);
        return;
    }
    signal(sig, SIG_DFL); /* not mine: die as usual */
}

static void install_own_handler(void)
{
    own_page = map_pages(1);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = own_handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
}

static void test_chain(void)
{
    unsigned char *buf = map_pages(8);
    ph_source *s = open_sampler(sim, 0, 16, 1, 256);
    CHECK_EQ(s->ops->add_range(s, buf, 8 * PG), 0);
    CHECK_EQ(s->ops->arm(s, 1), 0);
    for (int k = 0; k < 3; k++) {
        mprotect(own_page, PG, PROT_READ);
        ((volatile unsigned char *)own_page)[5] = (unsigned char)(k + 7);
    }
    CHECK_EQ(atomic_load(&own_faults), 3);
    CHECK_EQ(own_page[5], 9);
    buf[3 * PG] = 1; /* ours still work alongside */
    coll c = {0};
    CHECK_EQ(s->ops->drain(s, collect, &c), 1);
    ph_source_stats st;
    s->ops->stats(s, &st);
    CHECK_EQ(st.foreign_faults, 3);
    s->ops->close(s);
    munmap(buf, 8 * PG);
    free(c.s);
}

/* ---- children: dispositions before the sampler -------------------------------------- */

static volatile sig_atomic_t plain_calls;
static unsigned char *plain_page;

static void plain_handler(int sig)
{
    (void)sig;
    plain_calls++;
    mprotect(plain_page, PG, PROT_READ | PROT_WRITE);
}

/* In a fresh child: set `disp` (0 SIG_DFL, 1 SIG_IGN, 2 plain handler),
 * open a sampler, take one sample, then fault for real (write to NULL,
 * or to plain_page for the plain handler).  Exit 0 when the plain
 * handler did its job; any death by SIGSEGV is what the others expect. */
static void child_body(int disp)
{
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = disp == 0 ? SIG_DFL : disp == 1 ? SIG_IGN : plain_handler;
    sigaction(SIGSEGV, &sa, NULL);
    plain_page = map_pages(1);
    unsigned char *buf = map_pages(4);
    ph_source *s = open_sampler(sim, 0, 16, 1, 256);
    if (s->ops->add_range(s, buf, 4 * PG) != 0 || s->ops->arm(s, 1) != 0)
        _exit(3);
    buf[PG] = 1;
    coll c = {0};
    if (s->ops->drain(s, collect, &c) != 1)
        _exit(4);
    if (disp == 2) {
        mprotect(plain_page, PG, PROT_READ);
        ((volatile unsigned char *)plain_page)[1] = 42;
        _exit(plain_calls == 1 && plain_page[1] == 42 ? 0 : 5);
    }
    *(volatile int *)(uintptr_t)0 = 1;
    _exit(6); /* survived a NULL write */
}

static int run_child(int disp)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0)
        child_body(disp);
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
}

static void test_children(void)
{
    int st = run_child(0);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
    st = run_child(1);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
    st = run_child(2);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* ---- a watched page under the stack pointer ------------------------------------------ */

#define STACK_PAGES 32

typedef struct stack_arg {
    ph_source *s;
    int samples, intact;
} stack_arg;

/* 160 KiB of frame, written top-down: the stack pointer goes down into
 * the watched pages, so the handler can only run on the alternate stack. */
static __attribute__((noinline)) int deep(volatile unsigned char *top_hint)
{
    volatile unsigned char big[160 << 10];
    /* the array's address escapes, so no compiler may shrink the frame
     * (clang -O3 otherwise keeps only the forty bytes this touches) */
    __asm__ volatile("" : : "r"(big) : "memory");
    for (size_t i = sizeof big; i >= PG; i -= PG)
        big[i - PG] = (unsigned char)(i / PG);
    int ok = 1;
    for (size_t i = sizeof big; i >= PG; i -= PG)
        ok &= big[i - PG] == (unsigned char)(i / PG);
    return ok + (top_hint[0] & 0);
}

static void *stack_thread(void *p)
{
    stack_arg *a = p;
    ph_sampler_thread_init();
    ph_os_set_thread_node(sim, 3);
    volatile unsigned char here = 0;
    /* 64 KiB of margin for the sampler's own calls on this stack, then
     * 128 KiB watched, reaching below deep()'s stack pointer. */
    uintptr_t top = ((uintptr_t)&here & ~(uintptr_t)(PG - 1)) - 16 * PG;
    uintptr_t lo = top - STACK_PAGES * PG;
    /* once unwatched first: the sampler watches resident pages only */
    (void)deep(&here);
    a->s->ops->add_range(a->s, (void *)lo, STACK_PAGES * PG);
    a->s->ops->arm(a->s, 1);
    a->intact = deep(&here);
    a->s->ops->disarm(a->s);
    coll c = {0};
    a->s->ops->drain(a->s, collect, &c);
    a->samples = (int)c.n;
    for (size_t k = 0; k < c.n; k++)
        if (c.s[k].node != 3)
            a->samples = -1;
    a->s->ops->remove_range(a->s, (void *)lo, STACK_PAGES * PG);
    free(c.s);
    return NULL;
}

static void test_stack(void)
{
    stack_arg a = {open_sampler(sim, 0, 64, 1, 256), 0, 0};
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, (size_t)2 << 20);
    pthread_create(&th, &attr, stack_thread, &a);
    pthread_join(th, NULL);
    pthread_attr_destroy(&attr);
    CHECK(a.intact);
    CHECK(a.samples >= 16);
    a.s->ops->close(a.s);
}

/* ---- ring overflow, errors, Linux ----------------------------------------------------- */

/* n pages never touched (nothing resident yet). */
static unsigned char *map_untouched(size_t n)
{
    unsigned char *buf = mmap(NULL, n * PG, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(buf != MAP_FAILED);
    return buf;
}

/* Never-touched pages are not watched (their first touch would come
 * while their VMA is cut by protections); once touched they are. */
static void test_untouched_not_armed(void)
{
    size_t n = 64;
    unsigned char *buf = map_untouched(n);
    ph_source *s = open_sampler(sim, 0, 1024, 1, 256);
    CHECK_EQ(s->ops->add_range(s, buf, n * PG), 0);
    for (size_t p = 0; p < n / 2; p++)
        buf[p * PG] = 1; /* the first half is touched */
    ph_source_stats st;
    CHECK_EQ(s->ops->arm(s, 1), 0);
    s->ops->stats(s, &st);
    CHECK_EQ(st.armed_pages, n / 2);
    for (size_t p = 0; p < n; p++)
        buf[p * PG] = 2; /* traps in the first half only */
    CHECK_EQ(s->ops->disarm(s), 0);
    coll c = {0};
    CHECK_EQ(s->ops->drain(s, collect, &c), n / 2);
    free(c.s);
    CHECK_EQ(s->ops->arm(s, 1), 0); /* now all of it is resident */
    s->ops->stats(s, &st);
    CHECK_EQ(st.armed_pages, n / 2 + n);
    CHECK_EQ(s->ops->disarm(s), 0);
    CHECK_EQ(s->ops->remove_range(s, buf, n * PG), 0);
    s->ops->close(s);
    munmap(buf, n * PG);
}

/* The rotation spends its budget on resident pages: a range touched one
 * page in four, 8 pages an interval, watches 8 of the 16 touched pages each
 * interval (all of them in 2 intervals), not the 2 touched ones among 8
 * consecutive pages (all of them in 8).  An untouched stretch is passed
 * over in one step and counted as swept. */
static void test_rotation_resident(void)
{
    size_t n = 64;
    unsigned char *buf = map_untouched(n);
    ph_source *s = open_sampler(sim, 8, 1024, 1, 256);
    CHECK_EQ(s->ops->add_range(s, buf, n * PG), 0);
    for (size_t p = 0; p < n; p += 4)
        buf[p * PG] = 1;
    int seen[64] = {0};
    ph_source_stats st;
    coll c = {0};
    for (int it = 0; it < 2; it++) {
        CHECK_EQ(s->ops->arm(s, 0), 0);
        s->ops->stats(s, &st);
        CHECK_EQ(st.armed_pages, (uint64_t)(it + 1) * 8);
        for (size_t p = 0; p < n; p += 4)
            buf[p * PG] = 2;
        CHECK_EQ(s->ops->disarm(s), 0);
        c.n = 0;
        CHECK_EQ(s->ops->drain(s, collect, &c), 8);
        for (size_t k = 0; k < c.n; k++)
            seen[(c.s[k].page - (uintptr_t)buf) / PG]++;
    }
    int all = 1;
    for (size_t p = 0; p < n; p++)
        all &= p % 4 == 0 ? seen[p] == 1 : seen[p] == 0;
    CHECK(all);
    s->ops->stats(s, &st);
    /* passed: pages 0-28 (the 8th touched page is page 28), then 29-60 */
    CHECK_EQ(st.swept_pages, 29 + 32);
    CHECK_EQ(s->ops->remove_range(s, buf, n * PG), 0);
    s->ops->close(s);
    munmap(buf, n * PG);

    /* 4096 pages (one mincore window), only the last touched: the first
     * interval passes the untouched ones in one step, which counts as
     * 4094 / 16 pages examined, over the bound of 8 x 16 = 128: it ends
     * there, watching nothing; the second watches the page */
    n = 4096;
    buf = map_untouched(n);
    s = open_sampler(sim, 8, 1024, 1, 256);
    CHECK_EQ(s->ops->add_range(s, buf, n * PG), 0);
    buf[(n - 1) * PG] = 1;
    CHECK_EQ(s->ops->arm(s, 0), 0);
    s->ops->stats(s, &st);
    CHECK_EQ(st.armed_pages, 0);
    CHECK_EQ(st.swept_pages, n - 1);
    CHECK_EQ(s->ops->disarm(s), 0);
    CHECK_EQ(s->ops->arm(s, 0), 0);
    s->ops->stats(s, &st);
    CHECK_EQ(st.armed_pages, 1);
    CHECK_EQ(s->ops->disarm(s), 0);
    CHECK_EQ(s->ops->remove_range(s, buf, n * PG), 0);
    s->ops->close(s);
    munmap(buf, n * PG);

    /* 65536 pages, only the last touched: past the first window the
     * kernel's page-table scan finds it (the second interval watches it);
     * without the scan (before Linux 6.7) an interval passes one window
     * of 4096 pages, and the 16th watches it */
    n = 65536;
    buf = map_untouched(n);
    ph_pagemap pm = PH_PAGEMAP_INIT;
    uintptr_t next;
    int scan = ph_pagemap_next_present(&pm, (uintptr_t)buf, (uintptr_t)buf + PG, &next) == 0;
    ph_pagemap_done(&pm);
    s = open_sampler(sim, 8, 1024, 1, 256);
    CHECK_EQ(s->ops->add_range(s, buf, n * PG), 0);
    buf[(n - 1) * PG] = 1;
    int first_armed_at = -1;
    for (int it = 0; it < 32 && first_armed_at < 0; it++) {
        CHECK_EQ(s->ops->arm(s, 0), 0);
        s->ops->stats(s, &st);
        if (st.armed_pages)
            first_armed_at = it;
        /* one step over the untouched part, or one window an interval */
        if (it == 0)
            CHECK_EQ(st.swept_pages, scan ? n - 1 : 4096);
        CHECK_EQ(s->ops->disarm(s), 0);
    }
    CHECK_EQ(first_armed_at, scan ? 1 : 16);
    printf("-- rotation: a touched page 256 MiB in found at interval %d (%s)\n",
           first_armed_at + 1, scan ? "PAGEMAP_SCAN" : "mincore alone");
    CHECK_EQ(s->ops->remove_range(s, buf, n * PG), 0);
    s->ops->close(s);
    munmap(buf, n * PG);
    free(c.s);
}

/* First touches on the simulator (first_touch = 1): a range added before
 * anyone touched it is watched at once; the thread that touches a run
 * first gives the run's pages their home, not the thread that asks.  Four
 * threads on four virtual nodes touch their quarter; the master asks. */
typedef struct ft_arg {
    unsigned char *buf;
    size_t from, to;
    int node;
} ft_arg;

static void *ft_thread(void *p)
{
    ft_arg *a = p;
    ph_sampler_thread_init();
    ph_os_set_thread_node(sim, a->node);
    for (size_t q = a->from; q < a->to; q++)
        a->buf[q * PG] = 1;
    ph_os_set_thread_node(sim, -1);
    return NULL;
}

static void test_first_touch(void)
{
    for (int coarse = 0; coarse <= 1; coarse++) {
        size_t n = 256;
        unsigned char *buf = mmap(NULL, n * PG, PROT_READ | PROT_WRITE,
                                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        CHECK(buf != MAP_FAILED);
        /* coarse: room for 32 runs only, so runs of 8 pages */
        ph_sampler_opts o = {16, coarse ? 32 : 1024, 1, 1024, 1, PH_SAMPLER_MPROTECT};
        ph_source *s = ph_sampler_open(sim, &o);
        CHECK(s != NULL);
        CHECK_EQ(s->ops->add_range(s, buf, n * PG), 0);
        ph_source_stats st;
        s->ops->stats(s, &st);
        CHECK_EQ(st.armed_pages, n); /* untouched, and watched already */
        pthread_t t[4];
        ft_arg a[4];
        for (int k = 0; k < 4; k++) {
            a[k] = (ft_arg){buf, n / 4 * (size_t)k, n / 4 * (size_t)(k + 1),
                            topo->nodes[k].id};
            CHECK_EQ(pthread_create(&t[k], NULL, ft_thread, &a[k]), 0);
        }
        for (int k = 0; k < 4; k++)
            pthread_join(t[k], NULL);
        coll c = {0};
        s->ops->drain(s, collect, &c);
        CHECK_EQ(c.n, coarse ? n / 8 : n); /* one sample a run */
        free(c.s);
        void *pages[256];
        int home[256];
        for (size_t p = 0; p < n; p++)
            pages[p] = buf + p * PG;
        CHECK_EQ(ph_os_query(sim, n, pages, home), 0);
        size_t right = 0;
        for (size_t p = 0; p < n; p++)
            right += home[p] == topo->nodes[p * 4 / n].id;
        CHECK_EQ(right, n);
        ph_sim_counters sc;
        CHECK_EQ(ph_sim_counters_get(sim, &sc), 0);
        CHECK_EQ(sc.touch_lost, 0);
        /* the next two arms still watch what is untouched (nothing now),
         * then the rotation goes on as usual */
        CHECK_EQ(s->ops->arm(s, 0), 0);
        CHECK_EQ(s->ops->disarm(s), 0);
        CHECK_EQ(s->ops->remove_range(s, buf, n * PG), 0);
        s->ops->close(s);
        munmap(buf, n * PG);
    }
    /* without first_touch (the default), a range is not watched before it
     * is resident, and the asking thread's node is what a page gets */
    size_t n = 16;
    unsigned char *buf = mmap(NULL, n * PG, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ph_source *s = open_sampler(sim, 0, 1024, 1, 256);
    CHECK_EQ(s->ops->add_range(s, buf, n * PG), 0);
    ph_source_stats st;
    s->ops->stats(s, &st);
    CHECK_EQ(st.armed_pages, 0);
    CHECK_EQ(s->ops->remove_range(s, buf, n * PG), 0);
    s->ops->close(s);
    munmap(buf, n * PG);
}

/* First-touch watching keeps a range's geometry while its runs are armed:
 * a full arm cuts every range into runs of 3 pages (160 pages, 64 runs at
 * most); the resident range A, still under first-touch watching, then has
 * room for runs of 1 page.  Its 3-page runs stay armed as they are (were
 * it cut again, pages protected as 3-page runs would belong to 1-page runs
 * nobody armed, and touching them would be a real crash).  Every page of
 * every range is touched afterwards, and all touches of the untouched
 * ranges are first touches the simulator learns. */
static void test_first_touch_geometry(void)
{
    size_t na = 32, nb = 64;
    unsigned char *a = map_pages(na);
    unsigned char *b = mmap(NULL, 2 * nb * PG, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(b != MAP_FAILED);
    ph_sampler_opts o = {0, 64, 1, 1024, 1, PH_SAMPLER_MPROTECT};
    ph_source *s = ph_sampler_open(sim, &o);
    CHECK(s != NULL);
    CHECK_EQ(s->ops->add_range(s, a, na * PG), 0);
    CHECK_EQ(s->ops->add_range(s, b, nb * PG), 0);
    CHECK_EQ(s->ops->add_range(s, b + nb * PG, nb * PG), 0);
    for (int round = 0; round < 3; round++) {
        CHECK_EQ(s->ops->arm(s, 1), 0);
        for (size_t q = 0; q < na; q++)
            a[q * PG] += 1;
        for (size_t q = 0; q < 2 * nb; q++)
            b[q * PG] += 1;
        coll c = {0};
        s->ops->drain(s, collect, &c);
        CHECK(c.n > 0);
        free(c.s);
    }
    for (size_t q = 0; q < na; q++)
        CHECK_EQ(a[q * PG], 3);
    CHECK_EQ(s->ops->disarm(s), 0);
    CHECK_EQ(s->ops->remove_range(s, a, na * PG), 0);
    CHECK_EQ(s->ops->remove_range(s, b, nb * PG), 0);
    CHECK_EQ(s->ops->remove_range(s, b + nb * PG, nb * PG), 0);
    s->ops->close(s);
    munmap(a, na * PG);
    munmap(b, 2 * nb * PG);
}

/* A page of a watched range left protected with no run armed (a lapse of
 * the run protocol, made here by hand): touching it opens it and counts an
 * orphan instead of crashing; a page the program protected itself still
 * faults for the program (test_chain, the robust mprotect item). */
static void test_orphan_opened(void)
{
    size_t n = 16;
    unsigned char *buf = map_pages(n);
    ph_source *s = open_sampler(sim, 0, 1024, 1, 256);
    CHECK_EQ(s->ops->add_range(s, buf, n * PG), 0);
    ph_source_stats before, after;
    s->ops->stats(s, &before);
    CHECK_EQ(mprotect(buf + 5 * PG, PG, PROT_NONE), 0);
    buf[5 * PG + 7] = 42; /* would be SIGSEGV with nobody to open it */
    CHECK_EQ(buf[5 * PG + 7], 42);
    s->ops->stats(s, &after);
    CHECK_EQ(after.orphan_opens, before.orphan_opens + 1);
    CHECK_EQ(after.foreign_faults, before.foreign_faults);
    CHECK_EQ(s->ops->remove_range(s, buf, n * PG), 0);
    s->ops->close(s);
    munmap(buf, n * PG);
}

static void test_overflow(void)
{
    unsigned char *buf = map_pages(200);
    ph_source *s = open_sampler(sim, 0, 1024, 1, 64);
    CHECK_EQ(s->ops->add_range(s, buf, 200 * PG), 0);
    CHECK_EQ(s->ops->arm(s, 1), 0);
    for (size_t i = 0; i < 200; i++)
        buf[i * PG] = 1;
    coll c = {0};
    CHECK_EQ(s->ops->drain(s, collect, &c), 64);
    ph_source_stats st;
    s->ops->stats(s, &st);
    CHECK_EQ(st.dropped, 200 - 64);
    CHECK_EQ(st.samples, 64);
    s->ops->close(s);
    munmap(buf, 200 * PG);
    free(c.s);
}

static void test_errors(void)
{
    unsigned char *buf = map_pages(8);
    ph_source *s = open_sampler(sim, 0, 16, 1, 64);
    CHECK_EQ(s->ops->add_range(s, buf + 1, PG), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(s->ops->add_range(s, buf, 4 * PG), 0);
    CHECK_EQ(s->ops->add_range(s, buf + 2 * PG, 4 * PG), -1);
    CHECK_EQ(errno, EEXIST);
    CHECK_EQ(s->ops->remove_range(s, buf + 4 * PG, 4 * PG), -1);
    CHECK_EQ(errno, ENOENT);
    CHECK(ph_sampler_open(NULL, NULL) == NULL);
    s->ops->close(s);
    munmap(buf, 8 * PG);
}

static void test_linux(void)
{
    ph_topology *real = ph_topo_from_hwloc();
    ph_os *lx = real ? ph_os_linux_open(real) : NULL;
    if (!lx) {
        printf("note: no hwloc topology, Linux part skipped (%s)\n", ph_error_message());
        ph_topo_free(real);
        return;
    }
    unsigned char *buf = map_pages(16);
    /* the tunables' defaults: sample_pages 4096, sample_max_runs 16384,
     * sample_run_pages 1 */
    ph_sampler_opts o = {4096, 16384, 1, 0, 0, PH_SAMPLER_MPROTECT};
    ph_source *s = ph_sampler_open(lx, &o);
    CHECK(s != NULL);
    CHECK_EQ(s->ops->add_range(s, buf, 16 * PG), 0);
    CHECK_EQ(s->ops->arm(s, 1), 0);
    for (size_t i = 0; i < 16; i++)
        buf[i * PG] = 1;
    coll c = {0};
    CHECK(s->ops->drain(s, collect, &c) >= 1);
    int ok = c.n > 0;
    for (size_t k = 0; k < c.n; k++)
        ok &= c.s[k].node >= 0 && c.s[k].node < real->nnodes;
    CHECK(ok);
    s->ops->close(s);
    munmap(buf, 16 * PG);
    free(c.s);
    ph_os_close(lx);
    ph_topo_free(real);
}

int main(void)
{
    ph_options_init();
    topo = ph_topo_from_spec("nodes=4,cpus_per_node=1");
    sim = topo ? ph_os_sim_open(topo) : NULL;
    if (!sim) {
        fprintf(stderr, "simulator: %s\n", ph_error_message());
        return 1;
    }
    test_children();        /* fresh processes: nothing installed yet */
    install_own_handler();  /* before the first ph_sampler_open here */
    ph_sampler_thread_init();
    test_full_snapshot();
    test_busy();
    test_policy();
    test_rotation();
    test_set_budget();
    test_set_run_pages();
    test_max_runs();
    test_race();
    test_remove_hammered();
    test_chain();
    test_stack();
    test_untouched_not_armed();
    test_rotation_resident();
    test_first_touch();
    test_first_touch_geometry();
    test_orphan_opened();
    test_overflow();
    test_errors();
    test_linux();
    ph_os_close(sim);
    ph_topo_free(topo);
    return check_summary("test_sampler");
}
