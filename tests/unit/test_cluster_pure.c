/*
 * test_cluster_pure.c -- the pure parts of cluster mode, without MPI:
 *   diffs       byte-exact runs (random pages, interleaved writers of one
 *               word), merging the diffs of several writers at the home,
 *               the whole-page rule;
 *   homes       every cluster placement against NUMA mode's formula for
 *               the same text (ph_plan_node_of with ranks for nodes), runs,
 *               bad placements;
 *   schedules   ph_cluster_static_range's split against the OpenMP
 *               runtime's own schedule(static[,chunk]) (libgomp; libomp's
 *               chunked split), affinity shares cover every element once;
 *   notices     log entries, laps, in-flight slots, wrap, writer counts;
 *   ranges      the arena's first-fit allocation table.
 */
#include "check.h"

#include "cluster/diff.h"
#include "cluster/home.h"
#include "cluster/notice.h"
#include "cluster/range.h"
#include "cluster/schedule.h"
#include "place/plan.h"
#include "topo/topo.h"

#include <errno.h>
#include <limits.h>
#include <omp.h>
#include <pagehome.h>

#define PAGE 4096

/* LeakSanitizer: LLVM's OpenMP runtime keeps its thread pool's memory
 * until the process ends */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libomp.so\nleak:libgomp.so\n";
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* ---- diffs ---------------------------------------------------------- */

static void test_diff_random(void)
{
    static unsigned char twin[PAGE], page[PAGE], back[PAGE];
    static ph_dsm_run runs[PAGE / 2];
    for (int rep = 0; rep < 600; rep++) {
        /* mostly whole pages; every fifth a shorter multiple of 8 (a tail
         * after the last 64-byte block) */
        size_t size = rep % 5 == 4 ? PAGE - 8 * (size_t)(1 + rep % 7) : PAGE;
        for (int i = 0; i < PAGE; i++)
            twin[i] = (unsigned char)next_rand();
        memcpy(page, twin, PAGE);
        int edits = (int)(next_rand() % 40);
        for (int e = 0; e < edits; e++) {
            size_t at = next_rand() % size;
            size_t len = 1 + next_rand() % (rep % 3 == 0 ? 300 : 9);
            for (size_t k = at; k < at + len && k < size; k++)
                page[k] = (unsigned char)(page[k] + 1 + next_rand() % 255);
        }
        if (rep % 50 == 7) /* every byte changed, a few kept back */
            for (size_t k = 0; k < size; k++)
                page[k] = (unsigned char)(twin[k] +
                                          (k % 997 == 500 ? 0 : 1));
        size_t changed = 0;
        size_t n = ph_dsm_diff(page, twin, size, runs, PAGE / 2, &changed);
        /* runs: sorted, separated, inside the size, every byte in them
         * differs, every differing byte in one */
        size_t in_runs = 0, bad = 0;
        for (size_t r = 0; r < n; r++) {
            if (r > 0 && runs[r].off <= runs[r - 1].off + runs[r - 1].len)
                bad++;
            if (runs[r].len == 0 || runs[r].off + runs[r].len > size)
                bad++;
            for (size_t k = runs[r].off; k < runs[r].off + runs[r].len; k++)
                bad += page[k] == twin[k];
            in_runs += runs[r].len;
        }
        size_t differ = 0;
        for (size_t i = 0; i < size; i++)
            differ += page[i] != twin[i];
        CHECK_EQ(bad, 0);
        CHECK_EQ(in_runs, differ);
        CHECK_EQ(changed, differ);
        memcpy(back, twin, PAGE);
        ph_dsm_diff_apply(back, page, runs, n);
        CHECK(memcmp(back, page, size) == 0);
    }
}

static void test_diff_writers(void)
{
    /* 4 writers, byte i of the page written by writer i % 4 (every word
     * has 4 writers), plus a writer owning a few bytes of a page another
     * writer changes almost whole: the home applies each diff in turn */
    static unsigned char home[PAGE], copy[4][PAGE], want[PAGE];
    static ph_dsm_run runs[PAGE / 2];
    for (int i = 0; i < PAGE; i++)
        home[i] = want[i] = (unsigned char)(i * 7);
    for (int w = 0; w < 4; w++) {
        memcpy(copy[w], home, PAGE);
        for (int i = w; i < PAGE; i += 4) {
            copy[w][i] = (unsigned char)(i * 7 + 1 + w);
            want[i] = copy[w][i];
        }
    }
    static unsigned char twin[PAGE];     /* each writer's copy as fetched */
    for (int i = 0; i < PAGE; i++)
        twin[i] = (unsigned char)(i * 7);
    for (int w = 3; w >= 0; w--) {
        size_t changed;
        size_t n = ph_dsm_diff(copy[w], twin, PAGE, runs, PAGE / 2, &changed);
        CHECK_EQ(changed, PAGE / 4);
        CHECK_EQ(n, PAGE / 4);
        ph_dsm_diff_apply(home, copy[w], runs, n);
    }
    CHECK(memcmp(home, want, PAGE) == 0);
    /* whole-page rule: never for multi-writer pages */
    CHECK_EQ(ph_dsm_diff_send_whole(0, PAGE, 1, 2048, PAGE, 0.5), 0);
    CHECK_EQ(ph_dsm_diff_send_whole(1, PAGE / 2 + 1, 10, 2048, PAGE, 0.5), 1);
    CHECK_EQ(ph_dsm_diff_send_whole(1, PAGE / 2, 10, 2048, PAGE, 0.5), 0);
    CHECK_EQ(ph_dsm_diff_send_whole(1, 10, 3000, 2048, PAGE, 0.5), 1);
    CHECK_EQ(ph_dsm_diff_send_whole(1, 0, 0, 2048, PAGE, 1.0), 0);
}

/* ---- homes ---------------------------------------------------------- */

static void test_homes(void)
{
    const char *texts[] = {"block", "cyclic:1", "cyclic:3", "cyclic:64",
                           "round-robin", "random:9", "node:2", "node:0"};
    for (int nr = 1; nr <= 8; nr++) {
        char spec[64];
        snprintf(spec, sizeof spec, "nodes=%d,cpus_per_node=1", nr);
        ph_topology_t *topo = ph_topology_load(spec);
        CHECK(topo != NULL);
        for (size_t t = 0; t < sizeof texts / sizeof texts[0]; t++) {
            ph_placement_t pl;
            CHECK(ph_placement_parse(&pl, texts[t]) == 0);
            if (pl.policy == PH_POLICY_SINGLE_NODE && pl.node >= nr)
                continue;
            pl.page_bytes = PAGE;
            ph_dsm_placement cp;
            CHECK(ph_dsm_placement_make(&cp, &pl, nr) == 0);
            ph_plan plan;
            ph_plan_defaults def = {.placement = "first-touch", .page_bytes = PAGE, .seed = 1};
            CHECK(ph_plan_make(&plan, &pl, (const ph_topology *)topo, &def) == 0);
            size_t sizes[] = {1, 2, 7, 64, 1000, 4097};
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
                size_t np = sizes[s], bad = 0;
                for (size_t p = 0; p < np; p++)
                    bad += ph_dsm_home_of(&cp, p, np, nr) !=
                           ph_plan_node_of(&plan, 0, p, np);
                if (bad)
                    fprintf(stderr, "%s, %d ranks, %zu pages: %zu differ\n",
                            texts[t], nr, np, bad);
                CHECK_EQ(bad, 0);
                /* runs agree with page by page */
                size_t p = 0, runbad = 0;
                while (p < np) {
                    int h;
                    size_t len = ph_dsm_home_run(&cp, p, np, nr, &h);
                    CHECK(len >= 1);
                    for (size_t k = p; k < p + len; k++)
                        runbad += ph_dsm_home_of(&cp, k, np, nr) != h;
                    p += len;
                }
                CHECK_EQ(runbad, 0);
            }
            ph_plan_release(&plan);
            ph_dsm_placement_release(&cp);
        }
        ph_topology_destroy(topo);
    }
    /* first-touch: no formula */
    ph_placement_t pl;
    ph_dsm_placement cp;
    ph_placement_parse(&pl, "first-touch");
    CHECK(ph_dsm_placement_make(&cp, &pl, 4) == 0);
    CHECK_EQ(ph_dsm_home_of(&cp, 3, 10, 4), PH_DSM_HOME_UNCLAIMED);
    /* a rank list */
    int ranks[3] = {2, 0, 1};
    ph_placement_parse(&pl, "cyclic:1");
    pl.nodes = ranks;
    pl.nnodes = 3;
    CHECK(ph_dsm_placement_make(&cp, &pl, 4) == 0);
    CHECK_EQ(ph_dsm_home_of(&cp, 0, 9, 4), 2);
    CHECK_EQ(ph_dsm_home_of(&cp, 4, 9, 4), 0);
    ph_dsm_placement_release(&cp);
    ranks[1] = 7;
    CHECK(ph_dsm_placement_make(&cp, &pl, 4) == -1);
    CHECK_MSG("does not exist");
    /* bad placements */
    ph_placement_parse(&pl, "node:4");
    CHECK(ph_dsm_placement_make(&cp, &pl, 4) == -1 && errno == EINVAL);
    CHECK_MSG("rank 4 does not exist (the job has 4 ranks)");
    ph_placement_parse(&pl, "block-static");
    CHECK(ph_dsm_placement_make(&cp, &pl, 4) == -1);
    CHECK_MSG("block-static");
    ph_placement_parse(&pl, "block@2M");
    CHECK(ph_dsm_placement_make(&cp, &pl, 4) == -1);
    CHECK_MSG("4 KiB");
    /* hashes tell placements apart */
    ph_dsm_placement a, b;
    ph_placement_parse(&pl, "cyclic:2");
    ph_dsm_placement_make(&a, &pl, 4);
    ph_placement_parse(&pl, "cyclic:3");
    ph_dsm_placement_make(&b, &pl, 4);
    CHECK(ph_dsm_placement_hash(&a) != ph_dsm_placement_hash(&b));
    char d[64];
    ph_dsm_placement_describe(&b, d, sizeof d);
    CHECK_STR(d, "cyclic:3");
    /* the claim word */
    int64_t tickets;
    int home;
    ph_dsm_claim_decode(0, &tickets, &home);
    CHECK(tickets == 0 && home == -1);
    ph_dsm_claim_decode(3 * PH_DSM_CLAIM_TICKET + 5, &tickets, &home);
    CHECK(tickets == 3 && home == 4);
    CHECK_EQ(ph_dsm_dir_rank(13, 4), 1);
    CHECK_EQ(ph_dsm_dir_slot(13, 4), 3);
}

/* ---- schedules ------------------------------------------------------ */

extern void __kmpc_fork_call(void) __attribute__((weak));

static void test_static(void)
{
    int libomp = __kmpc_fork_call != NULL;
    long sizes[] = {0, 1, 5, 17, 100, 1003};
    long chunks[] = {0, 1, 2, 7};
    int teams[] = {1, 2, 3, 5, 8};
    static int owner[1003];
    for (size_t a = 0; a < sizeof teams / sizeof teams[0]; a++)
        for (size_t b = 0; b < sizeof sizes / sizeof sizes[0]; b++)
            for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
                int T = teams[a];
                long N = sizes[b], ch = chunks[k];
                for (long i = 0; i < N; i++)
                    owner[i] = -1;
                if (ch == 0) {
                    if (libomp)
                        continue;   /* libomp splits greedily, not libgomp's way */
#pragma omp parallel num_threads(T)
                    {
#pragma omp for schedule(static)
                        for (long i = 0; i < N; i++)
                            owner[i] = omp_get_thread_num();
                    }
                } else {
#pragma omp parallel num_threads(T)
                    {
#pragma omp for schedule(static, ch)
                        for (long i = 0; i < N; i++)
                            owner[i] = omp_get_thread_num();
                    }
                }
                if (omp_get_max_threads() < 1)
                    continue;
                long bad = 0;
                static int mine[1003];
                for (long i = 0; i < N; i++)
                    mine[i] = -1;
                for (int t = 0; t < T; t++) {
                    long be, en;
                    int rc = ph_dsm_static_first(N, ch, T, t, &be, &en);
                    CHECK_EQ(rc, 0);
                    while (rc == 0) {
                        for (long i = be; i < en; i++)
                            bad += mine[i] != -1 ? 1 : (mine[i] = t, 0);
                        rc = ph_dsm_static_next(N, ch, T, t, &be, &en);
                    }
                }
                for (long i = 0; i < N; i++)
                    bad += mine[i] != owner[i];
                if (bad)
                    fprintf(stderr, "static N=%ld chunk=%ld T=%d: %ld differ "
                            "from the OpenMP runtime\n", N, ch, T, bad);
                CHECK_EQ(bad, 0);
            }
    long be, en;
    CHECK(ph_dsm_static_first(10, 0, 0, 0, &be, &en) == -1 && errno == EINVAL);
    CHECK(ph_dsm_static_first(10, 0, 4, 4, &be, &en) == -1);
    CHECK(ph_dsm_static_first(-1, 0, 4, 0, &be, &en) == -1);
    CHECK(ph_dsm_static_next(10, 0, 4, 0, &be, &en) == -1 && errno == ENOENT);
    /* no overflow near LONG_MAX */
    CHECK(ph_dsm_static_first(LONG_MAX, 1L << 40, 4, 3, &be, &en) == 0);
    CHECK(be == 3L << 40 && en == 4L << 40);
    CHECK(ph_dsm_static_next(LONG_MAX, 1L << 40, 4, 3, &be, &en) == 0);
    CHECK(be == 7L << 40);
}

static void test_affinity(void)
{
    ph_dsm_erun runs[] = {{3, 10}, {20, 21}, {40, 60}, {100, 130}};
    size_t nr = 4, total = 7 + 1 + 20 + 30;
    for (int team = 1; team <= 7; team++) {
        static int seen[130];
        memset(seen, 0, sizeof seen);
        size_t got = 0;
        for (int t = 0; t < team; t++) {
            size_t b, e, from = 0;
            while (ph_dsm_affinity_share(runs, nr, team, t, from, &b, &e) == 0) {
                CHECK(e > b);
                for (size_t i = b; i < e; i++) {
                    seen[i]++;
                    got++;
                }
                from = e;
            }
            CHECK_EQ(errno, ENOENT);
        }
        CHECK_EQ(got, total);
        size_t bad = 0;
        for (size_t r = 0; r < nr; r++)
            for (size_t i = runs[r].begin; i < runs[r].end; i++)
                bad += seen[i] != 1;
        CHECK_EQ(bad, 0);
    }
    size_t b, e;
    CHECK(ph_dsm_affinity_share(runs, 0, 2, 0, 0, &b, &e) == -1 &&
          errno == ENOENT);
    CHECK(ph_dsm_affinity_share(runs, nr, 0, 0, 0, &b, &e) == -1 &&
          errno == EINVAL);
}

/* ---- notices -------------------------------------------------------- */

static uint64_t seen_pages[64];
static int nseen;
static void on_page(void *arg, uint64_t page)
{
    (void)arg;
    if (nseen < 64)
        seen_pages[nseen++] = page;
}

static void test_notices(void)
{
    uint64_t size = 8;
    for (uint64_t slot = 0; slot < 3000; slot += 7) {
        uint64_t e = ph_dsm_notice_encode(slot, size, (int)(slot % 1000),
                                       slot * 1234567);
        int r;
        uint64_t p;
        CHECK(ph_dsm_notice_decode(e, slot, size, &r, &p) == 1);
        CHECK(r == (int)(slot % 1000) && p == slot * 1234567);
        /* the same ring index one lap later is another lap */
        CHECK(ph_dsm_notice_decode(e, slot + size, size, &r, &p) == 0);
    }
    int r;
    uint64_t p;
    CHECK(ph_dsm_notice_decode(0, 5, size, &r, &p) == 0);  /* never written */
    /* spans */
    ph_dsm_notice_span sp;
    CHECK_EQ(ph_dsm_notice_plan(10, 10, size, &sp), 0);
    CHECK_EQ(sp.nseg, 0);
    CHECK_EQ(ph_dsm_notice_plan(10, 14, size, &sp), 0);
    CHECK(sp.nseg == 1 && sp.ring_index[0] == 2 && sp.count[0] == 4);
    CHECK_EQ(ph_dsm_notice_plan(14, 20, size, &sp), 0);
    CHECK(sp.nseg == 2 && sp.ring_index[0] == 6 && sp.count[0] == 2 &&
          sp.ring_index[1] == 0 && sp.count[1] == 4);
    CHECK_EQ(ph_dsm_notice_plan(10, 19, size, &sp), 1);          /* wrapped */
    /* scan: own entries skipped, an in-flight slot read again next time */
    uint64_t ent[6];
    for (uint64_t s = 20; s < 26; s++)
        ent[s - 20] = ph_dsm_notice_encode(s, size, s == 22 ? 1 : 0, 100 + s);
    ent[3] = ph_dsm_notice_encode(23 - size, size, 0, 999);       /* old lap */
    nseen = 0;
    uint64_t pos = ph_dsm_notice_scan(ent, 20, 26, size, 1, on_page, NULL);
    CHECK_EQ(pos, 23);
    CHECK_EQ(nseen, 4);          /* 20, 21, 24, 25 (22 is ours, 23 waits) */
    CHECK(seen_pages[0] == 120 && seen_pages[1] == 121 &&
          seen_pages[2] == 124 && seen_pages[3] == 125);
    /* "every page" */
    uint64_t all = ph_dsm_notice_encode(3, size, 2, PH_DSM_NOTICE_ALL);
    CHECK(ph_dsm_notice_decode(all, 3, size, &r, &p) == 1 && p == PH_DSM_NOTICE_ALL);
    /* ranges and the merge: writers per page */
    uint64_t pg[] = {2, 3, 4, 9, 11, 12};
    uint64_t pairs[12];
    CHECK_EQ(ph_dsm_notice_ranges(pg, 6, pairs), 3);
    CHECK(pairs[0] == 2 && pairs[1] == 3 && pairs[2] == 9 && pairs[3] == 1 &&
          pairs[4] == 11 && pairs[5] == 2);
    /* rank 0: [2,5) [9,10); rank 1: [4,10); rank 2: [20,22) */
    uint64_t pr[] = {2, 3, 9, 1, 4, 6, 20, 2};
    int counts[] = {2, 1, 1}, displs[] = {0, 2, 3};
    ph_dsm_seg sg[8];
    long n = ph_dsm_notice_merge(pr, counts, displs, 3, sg);
    CHECK_EQ(n, 5);
    CHECK(sg[0].start == 2 && sg[0].len == 2 && sg[0].nwriters == 1 &&
          sg[0].writer == 0);
    CHECK(sg[1].start == 4 && sg[1].len == 1 && sg[1].nwriters == 2 &&
          sg[1].writer == -1);
    CHECK(sg[2].start == 5 && sg[2].len == 4 && sg[2].nwriters == 1 &&
          sg[2].writer == 1);
    CHECK(sg[3].start == 9 && sg[3].len == 1 && sg[3].nwriters == 2);
    CHECK(sg[4].start == 20 && sg[4].len == 2 && sg[4].writer == 2);
    CHECK(ph_dsm_seg_find(sg, 5, 6) == &sg[2]);
    CHECK(ph_dsm_seg_find(sg, 5, 10) == NULL);
    CHECK(ph_dsm_seg_find(sg, 5, 1) == NULL);
    CHECK(ph_dsm_seg_find(sg, 5, 21) == &sg[4]);
    int zero[3] = {0, 0, 0};
    CHECK_EQ(ph_dsm_notice_merge(pr, zero, displs, 3, sg), 0);
    /* random lists against a page-by-page count */
    for (int rep = 0; rep < 50; rep++) {
        static unsigned char w[3][300];
        static uint64_t lists[3][300], allp[1800];
        int cnt[3], dsp[3], at = 0;
        for (int r2 = 0; r2 < 3; r2++) {
            size_t k = 0;
            for (int i = 0; i < 300; i++) {
                w[r2][i] = (next_rand() % 3) == 0;
                if (w[r2][i])
                    lists[r2][k++] = (uint64_t)i;
            }
            size_t nr = ph_dsm_notice_ranges(lists[r2], k, allp + 2 * at);
            cnt[r2] = (int)nr;
            dsp[r2] = at;
            at += (int)nr;
        }
        static ph_dsm_seg s2[1200];
        long ns = ph_dsm_notice_merge(allp, cnt, dsp, 3, s2);
        size_t bad = 0;
        for (int i = 0; i < 300; i++) {
            int nw = w[0][i] + w[1][i] + w[2][i];
            const ph_dsm_seg *f = ph_dsm_seg_find(s2, (size_t)ns, (uint64_t)i);
            if (nw == 0) {
                bad += f != NULL;
                continue;
            }
            bad += !f || f->nwriters != nw;
            if (f && nw == 1)
                bad += f->writer != (w[0][i] ? 0 : w[1][i] ? 1 : 2);
        }
        CHECK_EQ(bad, 0);
    }
}

/* ---- ranges --------------------------------------------------------- */

static void test_ranges(void)
{
    ph_dsm_ranges t;
    ph_dsm_ranges_init(&t, 100);
    size_t a, b, c, d;
    CHECK(ph_dsm_ranges_add(&t, 10, NULL, &a) == 0 && a == 0);
    CHECK(ph_dsm_ranges_add(&t, 20, NULL, &b) == 0 && b == 10);
    CHECK(ph_dsm_ranges_add(&t, 30, NULL, &c) == 0 && c == 30);
    CHECK_EQ(ph_dsm_ranges_find(&t, 15), 1);
    CHECK_EQ(ph_dsm_ranges_find(&t, 60), -1);
    CHECK_EQ(ph_dsm_ranges_find_start(&t, 11), -1);
    CHECK_EQ(ph_dsm_ranges_find_start(&t, 10), 1);
    ph_dsm_ranges_remove(&t, 1);                 /* gap 10..30 */
    CHECK_EQ(ph_dsm_ranges_largest_gap(&t), 40);
    CHECK(ph_dsm_ranges_add(&t, 15, NULL, &d) == 0 && d == 10); /* first fit */
    errno = 0;
    CHECK(ph_dsm_ranges_add(&t, 41, NULL, &d) == -1 && errno == ENOMEM);
    CHECK_MSG("largest free range 40 pages");
    CHECK(ph_dsm_ranges_add(&t, 40, NULL, &d) == 0 && d == 60);
    CHECK_EQ(t.used_pages, 95);
    CHECK(ph_dsm_ranges_add(&t, 0, NULL, &d) == -1 && errno == EINVAL);
    ph_dsm_ranges_destroy(&t);
}

int main(void)
{
    test_diff_random();
    test_diff_writers();
    test_homes();
    test_static();
    test_affinity();
    test_notices();
    test_ranges();
    return check_summary("test_cluster_pure");
}
