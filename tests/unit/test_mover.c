/*
 * test_mover.c -- the mover on the simulator, with failures injected by
 * the faulty wrapper: batching, skipping placed pages, bounded retries,
 * ENOMEM back-off, binding of untouched pages, placement-only mode after a
 * refusal, huge page coalescing, and a multithreaded stress (run it under
 * ASan and TSan too).  Data is checksummed around every move: moves must
 * never change memory.
 */
#include "check.h"

#include "base/clock.h"
#include "base/error.h"
#include "base/rng.h"
#include "move/mover.h"
#include "os/os.h"
#include "topo/topo.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PG PH_PAGE_4K

static ph_topology *topo;

typedef struct rig {
    ph_os *sim;   /* inner */
    ph_os *os;    /* faulty(sim): what the mover uses */
    ph_mover *m;
    ph_mover_cfg cfg;
} rig;

/* Each rig's mover starts with the tunables' defaults (move_batch_pages
 * 512, move_retries 3, node_full_backoff_ms 1000); tests change them with
 * set_batch / set_retries / set_backoff_ms. */
static const ph_mover_cfg default_cfg = {512, 3, 1000 * 1000000ull, 0};

static rig rig_open(void)
{
    rig r;
    r.cfg = default_cfg;
    r.sim = ph_os_sim_open(topo);
    r.os = ph_os_faulty_open(r.sim, NULL);
    r.m = ph_mover_new(r.os, &r.cfg);
    if (!r.sim || !r.os || !r.m) {
        fprintf(stderr, "cannot open the simulator: %s\n", ph_error_message());
        exit(1);
    }
    return r;
}

static void rig_close(rig *r)
{
    ph_mover_free(r->m);
    ph_os_close(r->os); /* closes the simulator too */
}

static void set_batch(rig *r, size_t pages)
{
    r->cfg.batch_pages = pages;
    ph_mover_set_cfg(r->m, &r->cfg);
}

static void set_threads(rig *r, int threads)
{
    r->cfg.threads = threads;
    ph_mover_set_cfg(r->m, &r->cfg);
}

static void set_retries(rig *r, int retries)
{
    r->cfg.retries = retries;
    ph_mover_set_cfg(r->m, &r->cfg);
}

static void set_backoff_ms(rig *r, uint64_t ms)
{
    r->cfg.node_full_backoff_ns = ms * 1000000ull;
    ph_mover_set_cfg(r->m, &r->cfg);
}

static void plan(rig *r, double p_busy, double p_again, int enomem_node, int refuse,
                 int fail_bind)
{
    ph_fault_plan p;
    ph_fault_plan_init(&p);
    p.seed = 12345;
    p.p_busy = p_busy;
    p.p_again = p_again;
    p.enomem_node = enomem_node;
    p.refuse_move_errno = refuse;
    p.fail_bind_errno = fail_bind;
    ph_os_faulty_set_plan(r->os, &p);
}

static uint64_t checksum(const unsigned char *p, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* A mapped region of n pages with distinct data, first touched on node 0. */
static char *region(rig *r, size_t n, unsigned flags)
{
    char *a = ph_os_map(r->os, n * PG, PG, flags);
    if (!a) {
        fprintf(stderr, "map failed: %s\n", ph_error_message());
        exit(1);
    }
    CHECK_EQ(ph_sim_touch(r->sim, a, n * PG, 0), 0);
    for (size_t i = 0; i < n * PG; i += 64)
        a[i] = (char)(i * 2654435761u >> 13);
    return a;
}

static void pages_of(char *a, size_t n, void **pages)
{
    for (size_t i = 0; i < n; i++)
        pages[i] = a + i * PG + (i % 7) * 100; /* any address inside the page */
}

static int sums_up(const ph_move_stats *s)
{
    uint64_t t = s->already + s->moved + s->bound + s->outvoted + s->failed_busy +
                 s->failed_nomem + s->failed_access + s->failed_fault + s->failed_other;
    if (t != s->requested)
        fprintf(stderr, "  stats add up to %llu, requested %llu\n", (unsigned long long)t,
                (unsigned long long)s->requested);
    return t == s->requested;
}

static int query_is(rig *r, size_t n, void **pages, const int *want)
{
    int *st = malloc(n * sizeof *st);
    int ok = ph_os_query(r->os, n, pages, st) == 0;
    for (size_t i = 0; ok && i < n; i++)
        if (st[i] != want[i]) {
            fprintf(stderr, "  page %zu is on %d, expected %d\n", i, st[i], want[i]);
            ok = 0;
        }
    free(st);
    return ok;
}

/* ---- batching and already-placed pages --------------------------------------- */

static void test_batching(void)
{
    printf("-- batching\n");
    rig r = rig_open();
    set_batch(&r, 64);
    set_threads(&r, 1); /* one lane: the batches are the whole call's */
    enum { N = 1000 };
    char *a = region(&r, N, PH_MAP_NO_THP);
    void *pages[N];
    int nodes[N], st[N];
    pages_of(a, N, pages);
    for (int i = 0; i < N; i++)
        nodes[i] = 1 + i % 3;
    uint64_t sum = checksum((unsigned char *)a, N * PG);
    ph_sim_counters c0, c1;
    ph_sim_counters_get(r.sim, &c0);
    ph_move_stats s;
    uint64_t t0 = ph_now_ns();
    CHECK_EQ(ph_mover_move(r.m, N, pages, nodes, st, &s), 0);
    uint64_t t1 = ph_now_ns();
    ph_sim_counters_get(r.sim, &c1);
    CHECK_EQ(s.calls, (N + 63) / 64);
    CHECK_EQ(c1.move_calls - c0.move_calls, (N + 63) / 64);
    CHECK_EQ(c1.query_calls - c0.query_calls, (N + 63) / 64);
    CHECK_EQ(s.moved, N);
    CHECK_EQ(s.requested, N);
    CHECK_EQ(s.lanes, 1);
    CHECK(sums_up(&s));
    int ok = 1;
    for (int i = 0; i < N; i++)
        ok &= st[i] == nodes[i];
    CHECK(ok);
    CHECK(query_is(&r, N, pages, nodes));
    CHECK(checksum((unsigned char *)a, N * PG) == sum);
    double wall = (double)(t1 - t0);
    printf("   %d pages in %llu calls: %.0f ns/page wall (simulator), modeled %.0f ns/page\n",
           N, (unsigned long long)s.calls, wall / N,
           (c1.migrate_cost_ns - c0.migrate_cost_ns) / N);

    /* again: everything is in place, no move call at all */
    ph_sim_counters_get(r.sim, &c0);
    CHECK_EQ(ph_mover_move(r.m, N, pages, nodes, st, &s), 0);
    ph_sim_counters_get(r.sim, &c1);
    CHECK_EQ(s.calls, 0);
    CHECK_EQ(s.already, N);
    CHECK_EQ(c1.move_calls - c0.move_calls, 0);
    CHECK(sums_up(&s));

    /* half placed: only the other half is sent */
    for (int i = 0; i < N; i += 2)
        nodes[i] = 0;
    ph_sim_counters_get(r.sim, &c0);
    CHECK_EQ(ph_mover_move(r.m, N, pages, nodes, st, &s), 0);
    ph_sim_counters_get(r.sim, &c1);
    CHECK_EQ(s.already, N / 2);
    CHECK_EQ(s.moved, N / 2);
    CHECK_EQ(c1.move_pages - c0.move_pages, N / 2);
    CHECK(checksum((unsigned char *)a, N * PG) == sum);

    /* bad targets and duplicates */
    void *dup[4] = {a, a + 5, a + PG, a + 2 * PG};
    int dn[4] = {2, 3, 99, 2};
    CHECK_EQ(ph_mover_move(r.m, 4, dup, dn, st, &s), 2); /* a: 2 wins (first); 99 bad */
    CHECK_EQ(st[0], 2);
    CHECK_EQ(st[1], 2);
    CHECK_EQ(st[2], -EINVAL);
    CHECK_EQ(st[3], 2);
    CHECK_EQ(s.failed_other, 1);
    CHECK(sums_up(&s));

    /* arguments */
    CHECK_EQ(ph_mover_move(r.m, 3, NULL, dn, st, NULL), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(ph_mover_move(r.m, 0, NULL, NULL, NULL, &s), 0);
    CHECK_EQ(ph_mover_move(r.m, 2, dup, dn, NULL, NULL), 1); /* status optional */

    ph_move_stats tot;
    ph_mover_totals(r.m, &tot);
    CHECK(tot.requested >= 3 * N);
    CHECK(sums_up(&tot));
    ph_os_unmap(r.os, a, N * PG);
    rig_close(&r);
}

/* ---- the caller's order --------------------------------------------------------- */

/* Batches go in the order the caller listed the pages (a caller that
 * lists them by priority has the first moved first), each batch sorted
 * by target; the simulator's move log shows the order it migrated them. */
static void test_order(void)
{
    printf("-- caller's order\n");
    rig r = rig_open();
    set_batch(&r, 8);
    enum { N = 32 };
    char *a = region(&r, N, PH_MAP_NO_THP);
    void *pages[N];
    int nodes[N], st[N];
    /* listed from the last page to the first, targets 1 2 3 1 2 3 ... */
    for (int i = 0; i < N; i++) {
        pages[i] = a + (size_t)(N - 1 - i) * PG;
        nodes[i] = 1 + i % 3;
    }
    CHECK_EQ(ph_sim_set_move_log(r.sim, 1), 0);
    ph_move_stats s;
    CHECK_EQ(ph_mover_move(r.m, N, pages, nodes, st, &s), 0);
    ph_sim_moved *log = NULL;
    size_t nlog = 0;
    CHECK_EQ(ph_sim_move_log_take(r.sim, &log, &nlog), 0);
    CHECK_EQ(nlog, N);
    /* batch b holds the caller's pages 8b .. 8b+7 (page indexes N-1-8b
     * down to N-8-8b), in target order within the batch */
    int ok = nlog == N;
    for (size_t j = 0; ok && j < nlog; j++) {
        size_t page = (size_t)((char *)log[j].addr - a) / PG;
        size_t listed = N - 1 - page, b = j / 8;
        ok &= log[j].npages == 1 && listed / 8 == b;
        if (j % 8)
            ok &= nodes[N - 1 - ((char *)log[j - 1].addr - a) / PG] <= nodes[listed];
    }
    CHECK(ok);
    free(log);
    /* nothing more since the take; turning it off empties it */
    CHECK_EQ(ph_sim_move_log_take(r.sim, &log, &nlog), 0);
    CHECK_EQ(nlog, 0);
    CHECK(log == NULL);
    for (int i = 0; i < N; i++)
        nodes[i] = 0;
    CHECK_EQ(ph_mover_move(r.m, N, pages, nodes, st, &s), 0);
    CHECK_EQ(ph_sim_set_move_log(r.sim, 0), 0);
    CHECK_EQ(ph_sim_move_log_take(r.sim, &log, &nlog), 0);
    CHECK_EQ(nlog, 0);
    /* not the simulator */
    CHECK_EQ(ph_sim_set_move_log(r.os, 1), -1);
    ph_os_unmap(r.os, a, N * PG);
    rig_close(&r);
}

/* ---- lanes -------------------------------------------------------------------- */

/* Move n pages of region a, listed from the last to the first, to the
 * targets tgt[i % ntgt]; the call's figures in *s and its move log. */
static void move_logged(rig *r, char *a, size_t n, const int *tgt, int ntgt, int *st,
                        ph_move_stats *s, ph_sim_moved **log, size_t *nlog)
{
    void **pages = malloc(n * sizeof *pages);
    int *nodes = malloc(n * sizeof *nodes);
    for (size_t i = 0; i < n; i++) {
        pages[i] = a + (n - 1 - i) * PG;
        nodes[i] = tgt[i % (size_t)ntgt];
    }
    CHECK_EQ(ph_sim_set_move_log(r->sim, 1), 0);
    CHECK_EQ(ph_mover_move(r->m, n, pages, nodes, st, s), 0);
    CHECK_EQ(ph_sim_move_log_take(r->sim, log, nlog), 0);
    CHECK_EQ(ph_sim_set_move_log(r->sim, 0), 0);
    for (size_t i = 0; i < n; i++)
        CHECK_EQ(st[i], nodes[i]);
    free(pages);
    free(nodes);
}

/* How many lanes the log names (*distinct), and whether each lane moved
 * its pages in the caller's order batch by batch: the lane's k-th page
 * moved is in the same batch of `batch` pages as its k-th page listed
 * (the pages are listed from the last to the first; a batch goes sorted
 * by target and address). */
static int lanes_in_order(const ph_sim_moved *log, size_t nlog, size_t batch,
                          int *distinct)
{
    int in_order = 1;
    *distinct = 0;
    for (int l = 0; l < 8; l++) {
        size_t n = 0, k = 0;
        for (size_t j = 0; j < nlog; j++)
            n += log[j].lane == l;
        if (n == 0)
            continue;
        (*distinct)++;
        for (size_t j = 0; j < nlog; j++) {
            if (log[j].lane != l)
                continue;
            /* its rank among the lane's pages as listed: how many of them
             * lie above it */
            size_t rank = 0;
            for (size_t q = 0; q < nlog; q++)
                rank += log[q].lane == l && (char *)log[q].addr > (char *)log[j].addr;
            in_order &= rank / batch == k / batch;
            k++;
        }
    }
    for (size_t j = 0; j < nlog; j++)
        in_order &= log[j].lane >= 0 && log[j].lane < 8;
    return in_order;
}

static void test_lanes(void)
{
    printf("-- lanes: target nodes moved side by side\n");
    rig r = rig_open();
    set_batch(&r, 64);
    enum { N = 960 };
    char *a = region(&r, N, PH_MAP_NO_THP);
    uint64_t sum = checksum((unsigned char *)a, N * PG);
    int st[N];
    ph_move_stats s;
    ph_sim_moved *log = NULL;
    size_t nlog = 0;
    int distinct = 0;

    /* three target nodes of 320 pages each: three lanes, a node's pages
     * all in one, each lane in the caller's order */
    const int three[3] = {1, 2, 3}, two[2] = {1, 2};
    move_logged(&r, a, N, three, 3, st, &s, &log, &nlog);
    CHECK_EQ(s.lanes, 3);
    CHECK_EQ(s.moved, N);
    CHECK(sums_up(&s));
    CHECK_EQ(nlog, N);
    CHECK(lanes_in_order(log, nlog, 64, &distinct));
    CHECK_EQ(distinct, 3);
    /* pages listed i = N-1-page go to three[i % 3]: one lane per node */
    int per_node_lane[4] = {-1, -1, -1, -1}, one_lane = 1;
    double lane_cost[8] = {0};
    for (size_t j = 0; j < nlog; j++) {
        size_t page = (size_t)((char *)log[j].addr - a) / PG;
        int node = three[(N - 1 - page) % 3];
        if (per_node_lane[node] < 0)
            per_node_lane[node] = log[j].lane;
        one_lane &= per_node_lane[node] == log[j].lane;
        lane_cost[log[j].lane] += log[j].cost_ns;
    }
    CHECK(one_lane);
    CHECK(per_node_lane[1] != per_node_lane[2] && per_node_lane[2] != per_node_lane[3] &&
          per_node_lane[1] != per_node_lane[3]);
    /* every lane carries its share of the cost: a third each, within the
     * distances' differences */
    for (int l = 0; l < 3; l++)
        CHECK(lane_cost[l] > 0);
    free(log);

    /* at most two lanes: the three nodes dealt to two */
    const int back[1] = {0};
    move_logged(&r, a, N, back, 1, st, &s, &log, &nlog);
    free(log);
    set_threads(&r, 2);
    move_logged(&r, a, N, three, 3, st, &s, &log, &nlog);
    CHECK_EQ(s.lanes, 2);
    CHECK(lanes_in_order(log, nlog, 64, &distinct));
    CHECK_EQ(distinct, 2);
    free(log);

    /* one lane when asked for */
    move_logged(&r, a, N, back, 1, st, &s, &log, &nlog);
    free(log);
    set_threads(&r, 1);
    move_logged(&r, a, N, three, 3, st, &s, &log, &nlog);
    CHECK_EQ(s.lanes, 1);
    int all_zero = 1;
    for (size_t j = 0; j < nlog; j++)
        all_zero &= log[j].lane == 0;
    CHECK(all_zero);
    free(log);

    /* more lanes than target nodes: a node's pages split among several,
     * every lane still in the caller's order */
    move_logged(&r, a, N, back, 1, st, &s, &log, &nlog);
    free(log);
    set_threads(&r, 4);
    move_logged(&r, a, N, two + 1, 1, st, &s, &log, &nlog); /* all to node 2 */
    CHECK_EQ(s.lanes, 4);
    CHECK(lanes_in_order(log, nlog, 64, &distinct));
    CHECK_EQ(distinct, 4);
    /* the node's j-th page listed goes to lane j mod 4: neighbours listed
     * one after the other are in different lanes */
    int spread = 1;
    for (size_t j = 0; j < nlog; j++)
        for (size_t q = 0; q < nlog; q++) {
            size_t pj = (size_t)((char *)log[j].addr - a) / PG;
            size_t pq = (size_t)((char *)log[q].addr - a) / PG;
            if (pq == pj + 1)
                spread &= log[q].lane != log[j].lane;
        }
    CHECK(spread);
    free(log);
    move_logged(&r, a, N, back, 1, st, &s, &log, &nlog);
    free(log);
    set_threads(&r, 6); /* three nodes, two lanes each */
    move_logged(&r, a, N, three, 3, st, &s, &log, &nlog);
    CHECK_EQ(s.lanes, 6);
    CHECK(lanes_in_order(log, nlog, 64, &distinct));
    CHECK_EQ(distinct, 6);
    free(log);
    set_threads(&r, 64); /* at most N / 64 lanes */
    move_logged(&r, a, N, back, 1, st, &s, &log, &nlog);
    CHECK_EQ(s.lanes, N / 64);
    free(log);

    /* too few pages for a lane each: 3 x 40 pages go in one lane */
    set_threads(&r, 0);
    move_logged(&r, a, 120, back, 1, st, &s, &log, &nlog);
    free(log);
    move_logged(&r, a, 120, three, 3, st, &s, &log, &nlog);
    CHECK_EQ(s.lanes, 1);
    free(log);
    /* 2 x 64 pages: two lanes */
    move_logged(&r, a, 128, two, 2, st, &s, &log, &nlog);
    CHECK_EQ(s.lanes, 2);
    free(log);
    CHECK(checksum((unsigned char *)a, N * PG) == sum);

    /* failures inside lanes: retries of -EBUSY/-EAGAIN still bounded and
     * counted, then a refusal reported for every page that did not move */
    move_logged(&r, a, N, back, 1, st, &s, &log, &nlog);
    free(log);
    plan(&r, 0.2, 0.1, -1, 0, 0);
    void *pages[N];
    int nodes[N];
    for (int i = 0; i < N; i++) {
        pages[i] = a + (size_t)i * PG;
        nodes[i] = 1 + i % 3;
    }
    CHECK(ph_mover_move(r.m, N, pages, nodes, st, &s) >= 0);
    CHECK(s.lanes == 3);
    CHECK(s.retried > 0);
    CHECK(sums_up(&s));
    CHECK_EQ(s.moved + s.failed_busy, N);
    plan(&r, 0, 0, -1, EPERM, 0);
    for (int i = 0; i < N; i++)
        nodes[i] = 0;
    CHECK_EQ(ph_mover_move(r.m, N, pages, nodes, st, &s), -1);
    CHECK_EQ(errno, EPERM);
    int refused = 1;
    for (int i = 0; i < N; i++)
        refused &= st[i] == -EPERM || st[i] == 0;
    CHECK(refused);
    CHECK(sums_up(&s));
    CHECK(checksum((unsigned char *)a, N * PG) == sum);
    ph_os_unmap(r.os, a, N * PG);
    rig_close(&r);
}

/* ---- retries -------------------------------------------------------------------- */

static void test_retries(void)
{
    printf("-- retries on EBUSY/EAGAIN\n");
    rig r = rig_open();
    set_batch(&r, 64);
    set_retries(&r, 3);
    enum { N = 100 };
    char *a = region(&r, N, PH_MAP_NO_THP);
    void *pages[N];
    int nodes[N], st[N], zero[N];
    pages_of(a, N, pages);
    for (int i = 0; i < N; i++) {
        nodes[i] = 2;
        zero[i] = 0;
    }
    uint64_t sum = checksum((unsigned char *)a, N * PG);

    /* always busy: exactly move_retries retries, then -EBUSY */
    plan(&r, 1.0, 0, -1, 0, 0);
    ph_move_stats s;
    ph_fault_stats f;
    CHECK_EQ(ph_mover_move(r.m, N, pages, nodes, st, &s), N);
    ph_os_faulty_stats(r.os, &f);
    CHECK_EQ(f.move_pages, 4 * N); /* 1 try + 3 retries each */
    CHECK_EQ(s.retried, 3 * N);
    CHECK_EQ(s.calls, 4 * ((N + 63) / 64));
    CHECK_EQ(s.failed_busy, N);
    CHECK(sums_up(&s));
    int ok = 1;
    for (int i = 0; i < N; i++)
        ok &= st[i] == -EBUSY;
    CHECK(ok);
    CHECK(query_is(&r, N, pages, zero)); /* nothing moved */

    /* no retries allowed: one try */
    set_retries(&r, 0);
    CHECK_EQ(ph_mover_move(r.m, N, pages, nodes, st, &s), N);
    CHECK_EQ(s.retried, 0);
    CHECK_EQ(s.calls, (N + 63) / 64);

    /* sometimes busy or again: the retries get everything there */
    set_retries(&r, 10);
    plan(&r, 0.2, 0.1, -1, 0, 0);
    CHECK_EQ(ph_mover_move(r.m, N, pages, nodes, st, &s), 0);
    CHECK(s.retried > 0);
    CHECK_EQ(s.moved, N);
    CHECK(sums_up(&s));
    CHECK(query_is(&r, N, pages, nodes));
    CHECK(checksum((unsigned char *)a, N * PG) == sum);
    printf("   30%% transient failures: %llu retries, %llu calls for %d pages\n",
           (unsigned long long)s.retried, (unsigned long long)s.calls, N);

    /* a pinned page, and a kernel that gives up on the rest of the call at
     * it: the pages behind it still get there on the retries */
    set_retries(&r, 3);
    ph_fault_plan p;
    ph_fault_plan_init(&p);
    p.pinned_page = (uintptr_t)a;
    p.kernel_abort = 1;
    ph_os_faulty_set_plan(r.os, &p);
    for (int i = 0; i < N; i++)
        nodes[i] = 3;
    CHECK_EQ(ph_mover_move(r.m, N, pages, nodes, st, &s), 1);
    CHECK_EQ(st[0], -EBUSY);
    CHECK_EQ(s.failed_busy, 1);
    CHECK_EQ(s.moved, N - 1);
    CHECK(sums_up(&s));
    ok = 1;
    for (int i = 1; i < N; i++)
        ok &= st[i] == 3;
    CHECK(ok);
    CHECK(checksum((unsigned char *)a, N * PG) == sum);

    ph_os_unmap(r.os, a, N * PG);
    rig_close(&r);
}

/* ---- ENOMEM back-off ------------------------------------------------------------- */

static void test_enomem(void)
{
    printf("-- ENOMEM back-off\n");
    rig r = rig_open();
    set_batch(&r, 64);
    set_backoff_ms(&r, 300);
    enum { N = 200 };
    char *a = region(&r, N, PH_MAP_NO_THP);
    void *pages[N];
    int nodes[N], st[N];
    pages_of(a, N, pages);
    for (int i = 0; i < N; i++)
        nodes[i] = 2;
    uint64_t sum = checksum((unsigned char *)a, N * PG);

    plan(&r, 0, 0, 2, 0, 0);
    ph_move_stats s;
    ph_fault_stats f0, f1;
    ph_os_faulty_stats(r.os, &f0);
    CHECK_EQ(ph_mover_move(r.m, N, pages, nodes, st, &s), N);
    ph_os_faulty_stats(r.os, &f1);
    /* only the first batch reached node 2; the rest was skipped */
    CHECK_EQ(f1.pages_to_node[2] - f0.pages_to_node[2], 64);
    CHECK_EQ(s.calls, 1);
    CHECK_EQ(s.failed_nomem, N);
    CHECK(sums_up(&s));
    int ok = 1;
    for (int i = 0; i < N; i++)
        ok &= st[i] == -ENOMEM;
    CHECK(ok);

    /* inside the window: no call to node 2 at all, other nodes still move */
    for (int i = 0; i < N; i += 2)
        nodes[i] = 1;
    ph_os_faulty_stats(r.os, &f0);
    CHECK_EQ(ph_mover_move(r.m, N, pages, nodes, st, &s), N / 2);
    ph_os_faulty_stats(r.os, &f1);
    CHECK_EQ(f1.pages_to_node[2] - f0.pages_to_node[2], 0);
    CHECK_EQ(f1.pages_to_node[1] - f0.pages_to_node[1], N / 2);
    CHECK_EQ(s.moved, N / 2);
    CHECK_EQ(s.failed_nomem, N / 2);

    /* the node recovers; after the window the pages go */
    plan(&r, 0, 0, -1, 0, 0);
    CHECK_EQ(ph_mover_move(r.m, N, pages, nodes, st, &s), N / 2);
    usleep(350 * 1000);
    CHECK_EQ(ph_mover_move(r.m, N, pages, nodes, st, &s), 0);
    CHECK(query_is(&r, N, pages, nodes));

    /* the simulator's own capacity gives the same back-off */
    CHECK_EQ(ph_sim_set_node_capacity(r.sim, 3, 10), 0);
    for (int i = 0; i < N; i++)
        nodes[i] = 3;
    ph_os_faulty_stats(r.os, &f0);
    CHECK_EQ(ph_mover_move(r.m, N, pages, nodes, st, &s), N - 10);
    ph_os_faulty_stats(r.os, &f1);
    CHECK_EQ(f1.pages_to_node[3] - f0.pages_to_node[3], 64);
    CHECK_EQ(s.moved, 10);
    CHECK_EQ(ph_sim_node_pages(r.sim, 3), 10);
    CHECK(checksum((unsigned char *)a, N * PG) == sum);

    ph_os_unmap(r.os, a, N * PG);
    rig_close(&r);
}

/* ---- untouched pages are bound ---------------------------------------------------- */

static void test_bind(void)
{
    printf("-- untouched pages: bound instead\n");
    rig r = rig_open();
    enum { N = 16 };
    char *a = ph_os_map(r.os, N * PG, PG, PH_MAP_NO_THP);
    void *pages[N];
    int nodes[N], st[N];
    pages_of(a, N, pages);
    for (int i = 0; i < N; i++)
        nodes[i] = i < 8 ? 1 : 2;
    nodes[15] = 3;
    ph_sim_counters c0, c1;
    ph_sim_counters_get(r.sim, &c0);
    ph_move_stats s;
    CHECK_EQ(ph_mover_move(r.m, N, pages, nodes, st, &s), 0);
    ph_sim_counters_get(r.sim, &c1);
    CHECK_EQ(s.bound, N);
    CHECK_EQ(s.calls, 0);
    CHECK_EQ(c1.bind_calls - c0.bind_calls, 3); /* runs: 0-7, 8-14, 15 */
    CHECK(sums_up(&s));
    int ok = 1;
    for (int i = 0; i < N; i++)
        ok &= st[i] == -ENOENT;
    CHECK(ok);
    /* the first touch (by a thread on node 0) lands where the binding says */
    memset(a, 7, N * PG);
    CHECK(query_is(&r, N, pages, nodes));

    /* a failing bind: the pages count as not placed */
    char *b = ph_os_map(r.os, N * PG, PG, PH_MAP_NO_THP);
    pages_of(b, N, pages);
    plan(&r, 0, 0, -1, 0, ENOMEM);
    CHECK_EQ(ph_mover_move(r.m, N, pages, nodes, st, &s), N);
    CHECK_EQ(s.bound, 0);
    CHECK_EQ(s.failed_other, N);
    CHECK(sums_up(&s));
    ph_os_unmap(r.os, a, N * PG);
    ph_os_unmap(r.os, b, N * PG);
    rig_close(&r);
}

/* ---- refusal: placement only -------------------------------------------------------- */

static void test_refusal(void)
{
    printf("-- EPERM: placement-only mode, one warning\n");
    rig r = rig_open();
    enum { N = 8 };
    char *a = region(&r, N, 0);
    char *u = ph_os_map(r.os, N * PG, PG, 0);
    void *pages[N];
    int nodes[N], st[N];
    pages_of(a, N, pages);
    for (int i = 0; i < N; i++)
        nodes[i] = 1;
    plan(&r, 0, 0, -1, EPERM, 0);

    /* catch stderr */
    fflush(stderr);
    char path[] = "/tmp/test_mover_stderrXXXXXX";
    int fd = mkstemp(path);
    int saved = dup(2);
    dup2(fd, 2);
    ph_move_stats s;
    errno = 0;
    CHECK_EQ(ph_mover_move(r.m, N, pages, nodes, st, &s), -1);
    CHECK_EQ(errno, EPERM);
    CHECK_CONTAINS(ph_error_message(), "not permitted");
    CHECK_EQ(ph_mover_placement_only(r.m), 1);
    CHECK_EQ(st[0], -EPERM);
    CHECK_EQ(s.failed_access, N);
    CHECK(sums_up(&s));
    ph_fault_stats f0, f1;
    ph_os_faulty_stats(r.os, &f0);
    CHECK_EQ(ph_mover_move(r.m, N, pages, nodes, st, &s), -1); /* fails fast */
    CHECK_EQ(errno, EPERM);
    ph_os_faulty_stats(r.os, &f1);
    CHECK_EQ(f1.move_calls - f0.move_calls, 0);
    /* binding still works */
    int one = 1;
    CHECK_EQ(ph_os_bind(r.os, u, N * PG, PH_BIND_PREFERRED, &one, 1), 0);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char buf[2048] = "";
    lseek(fd, 0, SEEK_SET);
    ssize_t got = read(fd, buf, sizeof buf - 1);
    buf[got > 0 ? got : 0] = '\0';
    close(fd);
    unlink(path);
    const char *msg = "pagehome: warning: move_pages(2) is not permitted here (EPERM): "
                      "pagehome continues with placement only";
    CHECK_CONTAINS(buf, msg);
    char *first = strstr(buf, msg);
    CHECK(first && !strstr(first + 1, msg)); /* once */

    ph_os_unmap(r.os, a, N * PG);
    ph_os_unmap(r.os, u, N * PG);
    rig_close(&r);
}

/* ---- huge pages ------------------------------------------------------------------------ */

static void test_huge(void)
{
    printf("-- huge pages: coalesced, majority target\n");
    rig r = rig_open();
    set_batch(&r, 512);
    enum { U = 512, N = 4 * U };
    char *a = region(&r, N, PH_MAP_HUGE_THP);
    CHECK_EQ((uintptr_t)a % PH_PAGE_2M, 0);
    uint64_t sum = checksum((unsigned char *)a, N * PG);
    static void *pages[N];
    static int nodes[N], st[N], want[N];
    size_t n = 0;
    /* unit 0: all to 1; unit 1: 300 to 2, 212 to 3; unit 2: 256 to 3 then
     * 256 to 1 (a tie: 3 was asked first); unit 3: one subpage to 2.  The
     * requests come in a scrambled order. */
    for (int i = 0; i < U; i++) {
        pages[n] = a + (size_t)(U - 1 - i) * PG;
        nodes[n++] = 1;
    }
    for (int i = 0; i < U; i++) {
        pages[n] = a + (size_t)(U + i) * PG;
        nodes[n++] = i % 5 < 3 && i < 500 ? 2 : (i < 500 ? 3 : 2);
    }
    for (int i = 0; i < U; i++) {
        pages[n] = a + (size_t)(2 * U + i) * PG;
        nodes[n++] = i < 256 ? 3 : 1;
    }
    pages[n] = a + (size_t)(3 * U + 77) * PG;
    nodes[n++] = 2;
    int votes2 = 0;
    for (size_t i = U; i < 2 * U; i++)
        votes2 += nodes[i] == 2;
    CHECK(votes2 > U / 2);

    ph_sim_counters c0, c1;
    ph_sim_counters_get(r.sim, &c0);
    ph_move_stats s;
    long missed = ph_mover_move(r.m, n, pages, nodes, st, &s);
    ph_sim_counters_get(r.sim, &c1);
    CHECK_EQ(c1.move_pages - c0.move_pages, 4); /* one entry per 2 MiB page */
    CHECK_EQ(s.huge_units, 4);
    CHECK_EQ(s.calls, 1);
    long outvoted = (U - votes2) + 256;
    CHECK_EQ(missed, outvoted);
    CHECK_EQ(s.outvoted, outvoted);
    CHECK(sums_up(&s));
    int unit_node[4] = {1, 2, 3, 2};
    int ok = 1;
    for (size_t i = 0; i < n; i++) {
        size_t u = ((char *)pages[i] - a) / PH_PAGE_2M;
        ok &= st[i] == unit_node[u];
    }
    CHECK(ok);
    /* every subpage, asked for or not, is where its 2 MiB page went */
    for (size_t i = 0; i < N; i++) {
        pages[i] = a + i * PG;
        want[i] = unit_node[i / U];
    }
    CHECK(query_is(&r, N, pages, want));
    CHECK(checksum((unsigned char *)a, N * PG) == sum);
    printf("   modeled cost of 4 huge moves: %.0f us\n",
           (c1.migrate_cost_ns - c0.migrate_cost_ns) / 1000);

    /* a NO_THP range keeps 4 KiB precision */
    char *b = region(&r, U, PH_MAP_NO_THP);
    for (int i = 0; i < U; i++) {
        pages[i] = b + (size_t)i * PG;
        nodes[i] = i % 4;
    }
    CHECK_EQ(ph_mover_move(r.m, U, pages, nodes, st, &s), 0);
    CHECK_EQ(s.huge_units, 0);
    CHECK(query_is(&r, U, pages, nodes));
    ph_os_unmap(r.os, a, N * PG);
    ph_os_unmap(r.os, b, U * PG);
    rig_close(&r);
}

/* ---- stress ----------------------------------------------------------------------------- */

enum { SN = 4096, STHREADS = 4, SITER = 150 };

typedef struct stress_arg {
    rig *r;
    char *a;
    int id;
    long bad;
} stress_arg;


static void *stress_thread(void *p)
{
    stress_arg *arg = p;
    /* not multiples of splitmix's increment: the streams must not overlap */
    uint64_t seed = 0xD1B54A32D192ED03ull * (uint64_t)(arg->id + 1) + 12345;
    void **pages = malloc(300 * sizeof *pages);
    int *nodes = malloc(300 * sizeof *nodes), *st = malloc(300 * sizeof *st);
    ph_os *os = arg->r->os;
    for (int it = 0; it < SITER; it++) {
        if (it % 10 == 0) {
            ph_os_set_thread_node(os, (int)(ph_splitmix64_next(&seed) % 4));
            if (ph_os_current_node(os) < 0)
                arg->bad++;
        }
        size_t n = 1 + ph_splitmix64_next(&seed) % 300;
        for (size_t i = 0; i < n; i++) {
            pages[i] = arg->a + (ph_splitmix64_next(&seed) % SN) * PG;
            nodes[i] = (int)(ph_splitmix64_next(&seed) % 4);
        }
        ph_move_stats s;
        long r = ph_mover_move(arg->r->m, n, pages, nodes, st, &s);
        if (r < 0 || !sums_up(&s))
            arg->bad++;
        for (size_t i = 0; i < n; i++)
            if (!(st[i] == nodes[i] || (st[i] >= 0 && st[i] < 4) || st[i] == -EBUSY ||
                  st[i] == -EAGAIN))
                arg->bad++;
    }
    free(pages);
    free(nodes);
    free(st);
    return NULL;
}

static void test_stress(void)
{
    printf("-- stress: %d threads moving random pages\n", STHREADS);
    rig r = rig_open();
    set_batch(&r, 64);
    set_retries(&r, 2);
    char *a = region(&r, SN, PH_MAP_NO_THP);
    uint64_t sum = checksum((unsigned char *)a, SN * PG);
    plan(&r, 0.05, 0.05, -1, 0, 0);
    pthread_t th[STHREADS];
    stress_arg args[STHREADS];
    for (int i = 0; i < STHREADS; i++) {
        args[i] = (stress_arg){&r, a, i, 0};
        pthread_create(&th[i], NULL, stress_thread, &args[i]);
    }
    for (int i = 0; i < STHREADS; i++) {
        pthread_join(th[i], NULL);
        CHECK_EQ(args[i].bad, 0);
    }
    CHECK(checksum((unsigned char *)a, SN * PG) == sum);
    int64_t total = 0;
    for (int n = 0; n < 4; n++)
        total += ph_sim_node_pages(r.sim, n);
    CHECK_EQ(total, SN);
    ph_move_stats tot;
    ph_mover_totals(r.m, &tot);
    CHECK(sums_up(&tot));
    printf("   %llu pages requested: %llu moved, %llu already there, %llu outvoted, "
           "%llu busy; %llu retries, %llu calls\n",
           (unsigned long long)tot.requested, (unsigned long long)tot.moved,
           (unsigned long long)tot.already, (unsigned long long)tot.outvoted,
           (unsigned long long)tot.failed_busy, (unsigned long long)tot.retried,
           (unsigned long long)tot.calls);
    ph_os_unmap(r.os, a, SN * PG);
    rig_close(&r);
}

/* The default lanes (move_threads 0) on 8 CPUs, 4 nodes, each page's move
 * said to cost 10 us (1 us in the last case): as many lanes as the CPUs
 * the program leaves idle when they are at least as many as the target
 * nodes, else one a CPU; a node split only into lanes of at least
 * PH_MOVE_LANE_MIN_NS (1 ms) of work and PH_MOVE_LANE_MIN_PAGES pages. */
static void set_move_cost(ph_topology *t, double page_ns)
{
    size_t n2 = (size_t)t->nnodes * (size_t)t->nnodes;
    for (size_t k = 0; k < n2; k++)
        t->migrate_ns_4k[k] = page_ns;
    t->migrate_ns_call = 0.0;
}

/* From node 0, with the program's threads said to be `threads` (0: not
 * known), move the first n pages to tgt[] (page listed i to tgt[i %
 * ntgt]): the lanes the call used.  Every lane must have kept the
 * caller's order, and the simulator's log must name as many lanes. */
static int lanes_for(rig *r, char *a, size_t n, int threads, const int *tgt, int ntgt)
{
    static const int back[1] = {0};
    static int st[1024];
    ph_move_stats s;
    ph_sim_moved *log = NULL;
    size_t nlog = 0;
    int distinct = 0;
    CHECK(n <= 1024);
    ph_mover_set_program_threads(r->m, threads);
    move_logged(r, a, n, back, 1, st, &s, &log, &nlog);
    free(log);
    move_logged(r, a, n, tgt, ntgt, st, &s, &log, &nlog);
    CHECK(lanes_in_order(log, nlog, 64, &distinct));
    CHECK_EQ((uint64_t)distinct, s.lanes);
    free(log);
    return (int)s.lanes;
}

static void test_default_lanes(void)
{
    printf("-- default lanes: the CPUs left idle, else every CPU; work enough a lane\n");
    ph_topology *four = topo;
    topo = ph_topo_from_spec("nodes=4,cpus_per_node=2");
    CHECK(topo && topo->ncpus == 8);
    set_move_cost(topo, 10000.0);
    rig r = rig_open();
    set_batch(&r, 64);
    enum { N = 960 };
    char *a = region(&r, N, PH_MAP_NO_THP);
    uint64_t sum = checksum((unsigned char *)a, N * PG);
    const int one[1] = {1}, three[3] = {1, 2, 3};

    /* the program's threads not known: every CPU idle; one target node of
     * 960 pages (9.6 ms) in 8 lanes of 120 pages (1.2 ms) */
    CHECK_EQ(lanes_for(&r, a, N, 0, one, 1), 8);
    /* 5 threads: 3 CPUs idle for 3 target nodes, one lane each, nothing
     * split onto the program's CPUs */
    CHECK_EQ(lanes_for(&r, a, N, 5, three, 3), 3);
    /* 6 threads: 2 idle CPUs for 3 target nodes: lanes must share the
     * program's CPUs anyway, so one a CPU: 8, three nodes of 320 pages
     * split at most three ways (107 pages, 1.07 ms; four ways would be
     * 0.8 ms) */
    CHECK_EQ(lanes_for(&r, a, N, 6, three, 3), 8);
    /* 8 threads, none idle: the same 8 */
    CHECK_EQ(lanes_for(&r, a, N, 8, three, 3), 8);
    /* back to not known; 300 pages to one node at 10 us: 3 ms, three
     * lanes of 100 pages (four would be 75 pages, 0.75 ms each) */
    CHECK_EQ(lanes_for(&r, a, 300, 0, one, 1), 3);
    /* a page's move said to cost 1 us: 960 pages are 0.96 ms, not worth a
     * second thread; move_threads 4 asks for lanes all the same */
    set_move_cost(topo, 1000.0);
    CHECK_EQ(lanes_for(&r, a, N, 0, one, 1), 1);
    set_threads(&r, 4);
    CHECK_EQ(lanes_for(&r, a, N, 0, one, 1), 4);
    CHECK(checksum((unsigned char *)a, N * PG) == sum);

    ph_os_unmap(r.os, a, N * PG);
    rig_close(&r);
    ph_topo_free(topo);
    topo = four;
}

int main(void)
{
    topo = ph_topo_from_spec("nodes=4,cpus_per_node=1");
    if (!topo) {
        fprintf(stderr, "topology: %s\n", ph_error_message());
        return 1;
    }
    test_batching();
    test_order();
    test_lanes();
    test_default_lanes();
    test_retries();
    test_enomem();
    test_bind();
    test_refusal();
    test_huge();
    test_stress();
    ph_topo_free(topo);
    return check_summary("test_mover");
}
