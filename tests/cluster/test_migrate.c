/*
 * test_migrate.c MODE [SEED] -- home migration at barriers and read-only
 * data (src/cluster/migrate.h), on N ranks:
 *
 *   stress SEED [PLACEMENT [MIN_WRITES]]
 *                 seeded random writes whose writers change from round to
 *                 round: most pages have one writer rank per round (so
 *                 their homes move, and move back), some several (false
 *                 sharing: they stay), some none; a writer sometimes drops
 *                 its own copy right after writing (selective acquire: it
 *                 must not ask for the page).  After every barrier every
 *                 rank checks every word against a sequential reference
 *                 (no lost update, no stale copy after a move), and
 *                 migrations did happen.  40 rounds, or with MIN_WRITES
 *                 as many as it takes for the ranks to write that many
 *                 words (each checked on every rank after its barrier).
 *   pingpong      one page, ranks 0 and 1 taking turns writing it: the
 *                 home moves exactly as often as the rule with
 *                 cluster_migrate_min_intervals allows (counted by a model
 *                 of the rule here), and every rank reads the current
 *                 value after each barrier.
 *   laplace       a Jacobi sweep over a grid of one page per row with
 *                 round-robin homes, rows split in blocks over the ranks:
 *                 after two iterations every row's home is the rank that
 *                 writes it (block homes, counted), the result equals the
 *                 sequential one; with cluster_migrate=0 the homes stay
 *                 round-robin.
 *   hometrack [PLACEMENT]
 *                 the same sweep with two barriers per iteration (an
 *                 OpenMP region's fork and join: each grid is written at
 *                 every fourth barrier interval, nothing in between):
 *                 once the homes are settled (migrated to the writers for
 *                 round-robin) a home page is no longer write-tracked, so
 *                 the home write faults of the last iterations stay below
 *                 one per page (tracked at every sweep they would be one
 *                 per page and sweep); the result equals the sequential
 *                 one.
 *   cost          home migration by cost (migrate_cost.h) on pages homed
 *                 at rank 0, which never touches them after initialising:
 *                 at 2 ranks rank 1 writes every page in every round and
 *                 then drops its copy (a selective acquire), so JIAJIA's
 *                 rule cannot move it (no valid copy) and the cost rule
 *                 moves it with its data; at 3 or more ranks, ranks 1..N-1
 *                 each write their own words of every page (false sharing:
 *                 several writers, JIAJIA's rule never moves it), and the
 *                 cost rule homes every page at one of them.  Every rank
 *                 checks every word after every barrier; at the end every
 *                 page is homed at a writer and the moves were by cost
 *                 (counted), and the last rounds fetched fewer pages than
 *                 the first.  With cluster_migrate_reads=0 nothing moves.
 *   readonly      an array written once and then only read is fetched in
 *                 the first interval and never again (fetch counter),
 *                 also across lock acquires that drop every cached copy
 *                 once it is declared with ph_cluster_readonly; the page
 *                 classes of the run.
 *   badinput      ph_cluster_readonly's refusals (NULL, 0 bytes, memory
 *                 that is not shared, ranks disagreeing: EINVAL on every
 *                 rank) and migration tunables out of range refused.
 *   rowrite       a write to a range declared read-only: the job stops
 *                 with a message naming the address (run with
 *                 --expect-fail).
 */
#include "common.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#define PAGE 4096
#define WPP (PAGE / 8)             /* words per page */

static uint64_t seed = 1;

/* ---- stress -------------------------------------------------------- */

#define S_PAGES 48
#define S_ROUNDS 40

/* page p in round t: 0..4 one writer rank, 5 several, 6-7 nobody */
static int page_mode(int t, int p)
{
    return (int)(cl_h3(seed, 1, (uint64_t)t, (uint64_t)p) % 8);
}

static int page_owner(int t, int p, int n)
{
    return (int)(cl_h3(seed, 2, (uint64_t)t, (uint64_t)p) % (uint64_t)n);
}

/* does `rank` write word w (of page p) in round t? */
static int writes_word(int t, int p, int w, int rank, int n)
{
    int m = page_mode(t, p);
    if (m >= 6)
        return 0;
    if (!(cl_h3(seed, 3, (uint64_t)t, (uint64_t)(p * WPP + w)) & 1))
        return 0;
    if (m == 5)
        return w % n == rank;
    return page_owner(t, p, n) == rank;
}

static uint64_t value(int t, size_t word)
{
    return cl_h3(seed, 4, (uint64_t)t, word) | 1;
}

static void stress(const char *placement, long long min_writes)
{
    int n = ph_cluster_nranks(), me = ph_cluster_rank();
    ph_placement_t pl;
    CHECK(ph_placement_parse(&pl, placement) == 0);
    uint64_t *a = ph_cluster_alloc(S_PAGES * PAGE, &pl);
    CHECK(a != NULL);
    if (!a)
        return;
    static uint64_t ref[S_PAGES * WPP];
    long bad = 0;
    long long writes = 0;   /* words written, all ranks */
    int t = 0;
    for (; min_writes > 0 ? writes < min_writes : t < S_ROUNDS; t++) {
#pragma omp parallel for schedule(static)
        for (int p = 0; p < S_PAGES; p++) {
            for (int w = 0; w < WPP; w++)
                if (writes_word(t, p, w, me, n))
                    a[(size_t)p * WPP + w] = value(t, (size_t)p * WPP + w);
        }
        /* sometimes the single writer drops its own copy at once (its
         * diff goes home first): it holds no copy at the barrier */
        for (int p = 0; p < S_PAGES; p++)
            if (page_mode(t, p) < 5 && page_owner(t, p, n) == me &&
                (cl_h3(seed, 5, (uint64_t)t, (uint64_t)p) % 6) == 0)
                CHECK(ph_cluster_acquire(a + (size_t)p * WPP, PAGE) == 0);
        for (int p = 0; p < S_PAGES; p++)
            for (int w = 0; w < WPP; w++)
                for (int r = 0; r < n; r++)
                    if (writes_word(t, p, w, r, n)) {
                        ref[(size_t)p * WPP + w] = value(t, (size_t)p * WPP + w);
                        writes++;
                    }
        CHECK(ph_cluster_barrier() == 0);
        /* every word, every rank: nothing lost, nothing stale */
        long wrong = 0;
#pragma omp parallel for reduction(+ : wrong) schedule(static)
        for (size_t i = 0; i < (size_t)S_PAGES * WPP; i++)
            wrong += a[i] != ref[i];
        if (wrong && !bad)
            fprintf(stderr, "rank %d: round %d: %ld words differ from the "
                    "reference\n", me, t, wrong);
        bad += wrong;
        CHECK(ph_cluster_barrier() == 0);
    }
    CHECK_EQ(bad, 0);
    long long moved = cl_stat_of("migrations");
    if (cl_tunable("cluster_migrate") == 1 && n > 1)
        CHECK(moved > 0);
    else
        CHECK_EQ(moved, 0);
    if (me == 0)
        printf("stress: %d rounds, %lld words written, %lld page "
               "migrations, %ld lost or stale (%lld by cost, %lld pages "
               "carried to rank 0)\n", t, writes, moved, bad,
               cl_stat_of("migrations_cost"), cl_stat_of("migrated_carried"));
    CHECK(ph_cluster_free(a) == 0);
}

/* ---- home migration by cost ------------------------------------------ */

#define C_PAGES 32
#define C_ROUNDS 24

static void cost(void)
{
    int n = ph_cluster_nranks(), me = ph_cluster_rank();
    ph_placement_t pl;
    CHECK(ph_placement_parse(&pl, "node:0") == 0);
    uint64_t *a = ph_cluster_alloc(C_PAGES * PAGE, &pl);
    CHECK(a != NULL);
    if (!a)
        return;
    int on = n > 1 && cl_tunable("cluster_migrate") == 1 &&
             cl_tunable("cluster_migrate_reads") == 1;
    static uint64_t ref[C_PAGES * WPP];
    long long moved0 = cl_stat_of("migrations_cost");
    long long fetched_first = 0, fetched_last = 0;
    long bad = 0;
    for (int t = 0; t < C_ROUNDS; t++) {
        long long f0 = cl_stat_of("pages_fetched");
        /* word w of every page is written by rank 1 + w % (n - 1) */
        if (me > 0)
            for (int p = 0; p < C_PAGES; p++)
                for (int w = me - 1; w < WPP; w += n > 1 ? n - 1 : 1)
                    a[(size_t)p * WPP + w] = value(t, (size_t)p * WPP + w);
        if (n == 2 && me == 1)                  /* no valid copy at the barrier */
            CHECK(ph_cluster_acquire(a, C_PAGES * PAGE) == 0);
        for (size_t i = 0; i < (size_t)C_PAGES * WPP; i++)
            if (n > 1)
                ref[i] = value(t, i);
        CHECK(ph_cluster_barrier() == 0);
        long wrong = 0;
        for (size_t i = 0; i < (size_t)C_PAGES * WPP; i++)
            wrong += a[i] != ref[i];
        if (wrong && !bad)
            fprintf(stderr, "rank %d: round %d: %ld words differ from the "
                    "reference\n", me, t, wrong);
        bad += wrong;
        CHECK(ph_cluster_barrier() == 0);
        long long df = cl_stat_of("pages_fetched") - f0;
        if (t < 4)
            fetched_first += df;
        if (t >= C_ROUNDS - 4)
            fetched_last += df;
    }
    CHECK_EQ(bad, 0);
    long long moved = cl_stat_of("migrations_cost") - moved0;
    int at_writer = 0;
    for (int p = 0; p < C_PAGES; p++) {
        int h = ph_cluster_home(a + (size_t)p * WPP);
        at_writer += h >= 1;
    }
    if (on) {
        CHECK_EQ(at_writer, C_PAGES);
        CHECK(moved >= C_PAGES);
        /* the rank the pages went to stops fetching them; the other
         * writers fetch as before (their round-0 misses, on pages nobody
         * had written, fetch nothing: cluster_pristine) */
        if (me > 0 && cl_stat_of("migrated_carried") > 0)
            CHECK(fetched_last < fetched_first);
        else if (me > 0)
            CHECK(fetched_last <= fetched_first);
    } else {
        CHECK_EQ(at_writer, 0);
        CHECK_EQ(moved, 0);
    }
    if (me == 0 || me == 1)
        printf("cost: rank %d: %d ranks, %d rounds: %d of %d pages homed at a "
               "writer, %lld moves by cost, %lld pages carried here, fetched "
               "%lld in the first 4 rounds and %lld in the last 4, %ld lost "
               "or stale\n", me, n, C_ROUNDS, at_writer, C_PAGES, moved,
               cl_stat_of("migrated_carried"), fetched_first, fetched_last,
               bad);
    CHECK(ph_cluster_free(a) == 0);
}

/* ---- ping-pong ------------------------------------------------------- */

static void pingpong(void)
{
    int n = ph_cluster_nranks(), me = ph_cluster_rank();
    ph_placement_t pl;
    CHECK(ph_placement_parse(&pl, "node:0") == 0);
    uint64_t *v = ph_cluster_alloc(PAGE, &pl);
    CHECK(v != NULL);
    if (!v)
        return;
    long k = cl_tunable("cluster_migrate_min_intervals");
    int on = cl_tunable("cluster_migrate") == 1;
    CHECK(k >= 1);
    const int rounds = 30;
    long long before = cl_stat_of("migrations");
    /* the rule, modelled in barriers: two per round, the page written
     * before the first */
    int home = 0;
    long last = -1, expect = 0;
    for (int t = 0; t < rounds; t++) {
        int writer = t % 2;
        if (me == writer)
            for (int w = 0; w < WPP; w += 64)
                v[w] = (uint64_t)t * 1000 + (uint64_t)w;
        CHECK(ph_cluster_barrier() == 0);
        if (on && writer != home && (last < 0 || 2L * t - last >= k)) {
            home = writer;
            last = 2L * t;
            expect++;
        }
        CHECK_EQ(ph_cluster_home(v), home);
        for (int w = 0; w < WPP; w += 64)
            if (v[w] != (uint64_t)t * 1000 + (uint64_t)w) {
                CHECK_EQ(v[w], (uint64_t)t * 1000 + (uint64_t)w);
                break;
            }
        CHECK(ph_cluster_barrier() == 0);
    }
    long long moved = cl_stat_of("migrations") - before;
    CHECK_EQ(moved, n > 1 ? expect : 0);
    if (me == 0)
        printf("pingpong: %d rounds, min_intervals %ld: %lld moves (the "
               "rule says %ld)\n", rounds, k, moved, expect);
    CHECK(ph_cluster_free(v) == 0);
}

/* ---- laplace --------------------------------------------------------- */

#define L_ROWS 96
#define L_COLS (PAGE / 8)          /* one page per row */
#define L_ITERS 12

static void sweep(const double *u, double *v, long b, long e)
{
    for (long i = b; i < e; i++) {
        if (i == 0 || i == L_ROWS - 1) {
            memcpy(v + i * L_COLS, u + i * L_COLS, L_COLS * sizeof *v);
            continue;
        }
        v[i * L_COLS] = u[i * L_COLS];
        v[i * L_COLS + L_COLS - 1] = u[i * L_COLS + L_COLS - 1];
        for (long j = 1; j < L_COLS - 1; j++)
            v[i * L_COLS + j] = 0.25 * (u[(i - 1) * L_COLS + j] +
                                        u[(i + 1) * L_COLS + j] +
                                        u[i * L_COLS + j - 1] +
                                        u[i * L_COLS + j + 1]);
    }
}

static void laplace(void)
{
    int n = ph_cluster_nranks(), me = ph_cluster_rank();
    ph_placement_t pl;
    CHECK(ph_placement_parse(&pl, "round-robin") == 0);
    size_t bytes = (size_t)L_ROWS * L_COLS * sizeof(double);
    double *g[2] = {ph_cluster_alloc(bytes, &pl), ph_cluster_alloc(bytes, &pl)};
    CHECK(g[0] && g[1]);
    if (!g[0] || !g[1])
        return;
    long b, e;
    CHECK(ph_cluster_static_range(L_ROWS, 0, &b, &e) == 0);
    for (long i = b; i < e; i++)
        for (long j = 0; j < L_COLS; j++)
            g[0][i * L_COLS + j] = (i == 0 || j == 0) ? 100.0 : (double)((i * 7 + j) % 13);
    CHECK(ph_cluster_barrier() == 0);
    for (int it = 0; it < L_ITERS; it++) {
        sweep(g[it % 2], g[(it + 1) % 2], b, e);
        CHECK(ph_cluster_barrier() == 0);
    }
    /* the sequential result */
    double *s[2] = {malloc(bytes), malloc(bytes)};
    for (long i = 0; i < L_ROWS; i++)
        for (long j = 0; j < L_COLS; j++)
            s[0][i * L_COLS + j] = (i == 0 || j == 0) ? 100.0 : (double)((i * 7 + j) % 13);
    for (int it = 0; it < L_ITERS; it++)
        sweep(s[it % 2], s[(it + 1) % 2], 0, L_ROWS);
    CHECK(memcmp(s[L_ITERS % 2], g[L_ITERS % 2], bytes) == 0);
    /* homes per rank, and the rows that are homed at their writer */
    int st[L_ROWS];
    long at_writer = 0, rr = 0, mine_homes = 0;
    int on = cl_tunable("cluster_migrate") == 1 && n > 1;
    for (int k = 0; k < 2; k++) {
        CHECK_EQ(ph_cluster_homes(g[k], bytes, st), 0);
        for (long i = 0; i < L_ROWS; i++) {
            /* the writer of row i: the rank whose static share holds it */
            long q = (long)L_ROWS / n, rem = (long)L_ROWS % n, w;
            for (w = 0; w < n; w++) {
                long wb = w * q + (w < rem ? w : rem);
                long we = wb + q + (w < rem);
                if (i >= wb && i < we)
                    break;
            }
            at_writer += st[i] == w;
            rr += st[i] == (int)(i % n);
            mine_homes += st[i] == me;
        }
    }
    if (on) {
        CHECK_EQ(at_writer, 2 * L_ROWS);     /* block homes now */
        CHECK_EQ(mine_homes, 2 * (e - b));
    } else {
        CHECK_EQ(rr, 2 * L_ROWS);             /* still round-robin */
    }
    if (me == 0)
        printf("laplace: %d rows x 2 grids, round-robin homes, migration "
               "%s: %ld of %d rows homed at their writer, %ld at rank 0, "
               "%lld migrations\n", L_ROWS, on ? "on" : "off", at_writer,
               2 * L_ROWS, mine_homes, cl_stat_of("migrations"));
    free(s[0]);
    free(s[1]);
    CHECK(ph_cluster_free(g[1]) == 0);
    CHECK(ph_cluster_free(g[0]) == 0);
}

/* ---- home write tracking with empty intervals ------------------------ */

#define T_WARM 8                   /* iterations before counting */
#define T_ITERS 40

static void hometrack(const char *placement)
{
    int n = ph_cluster_nranks();
    ph_placement_t pl;
    CHECK(ph_placement_parse(&pl, placement) == 0);
    size_t bytes = (size_t)L_ROWS * L_COLS * sizeof(double);
    double *g[2] = {ph_cluster_alloc(bytes, &pl), ph_cluster_alloc(bytes, &pl)};
    CHECK(g[0] && g[1]);
    if (!g[0] || !g[1])
        return;
    long b, e;
    CHECK(ph_cluster_static_range(L_ROWS, 0, &b, &e) == 0);
    for (int k = 0; k < 2; k++)
        for (long i = b; i < e; i++)
            for (long j = 0; j < L_COLS; j++)
                g[k][i * L_COLS + j] =
                    (i == 0 || j == 0) ? 100.0 : (double)((i * 7 + j) % 13);
    CHECK(ph_cluster_barrier() == 0);
    long long f0 = 0, f1 = 0, un0 = 0;
    for (int it = 0; it < T_ITERS; it++) {
        if (it == T_WARM) {
            f0 = cl_stat_of("fault_write_home");
            un0 = cl_stat_of("home_untracked");
        }
        CHECK(ph_cluster_barrier() == 0);      /* the fork */
        sweep(g[it % 2], g[(it + 1) % 2], b, e);
        CHECK(ph_cluster_barrier() == 0);      /* the join */
    }
    f1 = cl_stat_of("fault_write_home");
    long long untracked = cl_stat_of("home_untracked");
    double *s[2] = {malloc(bytes), malloc(bytes)};
    for (int k = 0; k < 2; k++)
        for (long i = 0; i < L_ROWS; i++)
            for (long j = 0; j < L_COLS; j++)
                s[k][i * L_COLS + j] =
                    (i == 0 || j == 0) ? 100.0 : (double)((i * 7 + j) % 13);
    for (int it = 0; it < T_ITERS; it++)
        sweep(s[it % 2], s[(it + 1) % 2], 0, L_ROWS);
    CHECK(memcmp(s[T_ITERS % 2], g[T_ITERS % 2], bytes) == 0);
    /* this rank writes 2 x (e - b) pages, each in (T_ITERS - T_WARM) / 2
     * sweeps of the counted part: tracked, that many faults each */
    long pages = 2 * (e - b);
    if (n > 1) {
        CHECK(f1 - f0 >= 0);
        CHECK(f1 - f0 < pages);
        CHECK(untracked >= pages);          /* every written page, once */
    }
    if (ph_cluster_rank() == 0)
        printf("hometrack: %s homes, %d ranks, 2 barriers per iteration: "
               "%lld home write faults in iterations %d-%d (%ld pages "
               "written here, %d sweeps each), %lld pages untracked (%lld "
               "before)\n", placement, n, f1 - f0, T_WARM, T_ITERS - 1,
               pages, (T_ITERS - T_WARM) / 2, untracked, un0);
    free(s[0]);
    free(s[1]);
    CHECK(ph_cluster_free(g[1]) == 0);
    CHECK(ph_cluster_free(g[0]) == 0);
}

/* ---- read-only data ------------------------------------------------- */

#define R_PAGES 32
#define R_ROUNDS 8

static void readonly(void)
{
    int n = ph_cluster_nranks(), me = ph_cluster_rank();
    ph_placement_t pl;
    CHECK(ph_placement_parse(&pl, "block") == 0);
    uint64_t *ro = ph_cluster_alloc(R_PAGES * PAGE, &pl);
    /* per rank: one page of its own (block: homed at it) */
    uint64_t *own = ph_cluster_alloc((size_t)n * PAGE, &pl);
    /* pages written under a lock: enough to make a release log "every
     * page" (cluster_notice_log=64: more than 16 pages) */
    uint64_t *locked = ph_cluster_alloc(24 * PAGE, &pl);
    CHECK(ro && own && locked);
    if (!ro || !own || !locked)
        return;
    if (me == 0)
        for (size_t i = 0; i < (size_t)R_PAGES * WPP; i++)
            ro[i] = cl_mix(i);
    CHECK(ph_cluster_barrier() == 0);
    long long fetched_after_first = -1;
    long bad = 0;
    for (int t = 0; t < R_ROUNDS; t++) {
        uint64_t sum = 0;
        for (size_t i = 0; i < (size_t)R_PAGES * WPP; i++) {
            sum += ro[i];
            bad += ro[i] != cl_mix(i);
        }
        own[(size_t)me * WPP] = sum + (uint64_t)t;
        CHECK(ph_cluster_barrier() == 0);
        if (t == 0)
            fetched_after_first = cl_stat_of("pages_fetched");
    }
    CHECK_EQ(bad, 0);
    /* read-only pages nobody writes: never fetched again */
    CHECK_EQ(cl_stat_of("pages_fetched"), fetched_after_first);

    /* declared read-only: they also survive an acquire that drops every
     * cached copy (the log holds "every page" for a large release) */
    CHECK(ph_cluster_readonly(ro, R_PAGES * PAGE) == 0);
    long long inv0 = cl_stat_of("invalidate_all"), ro_fetches = 0;
    for (int t = 0; t < 3; t++) {
        CHECK(ph_cluster_lock(0) == 0);
        for (int p = 0; p < 24; p++)
            locked[(size_t)p * WPP + (size_t)me] += 1;
        CHECK(ph_cluster_unlock(0) == 0);
        /* reading the declared pages fetches nothing, also right after an
         * acquire that dropped every other cached copy */
        long long f = cl_stat_of("pages_fetched");
        for (size_t i = 0; i < (size_t)R_PAGES * WPP; i++)
            bad += ro[i] != cl_mix(i);
        ro_fetches += cl_stat_of("pages_fetched") - f;
    }
    CHECK_EQ(ro_fetches, 0);
    long long drops = cl_stat_of("invalidate_all") - inv0;
    own[(size_t)me * WPP + 1] = (uint64_t)drops;
    CHECK(ph_cluster_barrier() == 0);
    for (size_t i = 0; i < (size_t)R_PAGES * WPP; i++)
        bad += ro[i] != cl_mix(i);
    CHECK_EQ(bad, 0);
    for (int p = 0; p < 24; p++)
        for (int r = 0; r < n; r++)
            CHECK_EQ(locked[(size_t)p * WPP + (size_t)r], 3);
    /* the small log made some acquire drop every copy (the case the hint
     * is for) */
    uint64_t all_drops = 0;
    for (int r = 0; r < n; r++)
        all_drops += own[(size_t)r * WPP + 1];
    if (n > 1 && cl_tunable("cluster_notice_log") == 64)
        CHECK(all_drops > 0);
    CHECK_EQ(cl_stat_of("readonly_pages"), R_PAGES);
    if (me == 0)
        printf("readonly: no page fetched after the first interval of %d; "
               "after the hint, %llu acquires (all ranks) dropped every "
               "cached copy and the %d declared pages were not fetched "
               "again\n", R_ROUNDS, (unsigned long long)all_drops, R_PAGES);
    CHECK(ph_cluster_free(locked) == 0);
    CHECK(ph_cluster_free(own) == 0);
    CHECK(ph_cluster_free(ro) == 0);
    /* classed when freed: the array written once and read by all is
     * read-only; each rank's own page, written by it every round and read
     * by rank 0 at the end, single-writer; the pages every rank wrote
     * under the lock shared */
    if (n > 1) {
        CHECK_EQ(cl_stat_of("read_only"), R_PAGES);
        CHECK_EQ(cl_stat_of("single_writer"), n);
        CHECK_EQ(cl_stat_of("shared"), 24);
        CHECK_EQ(cl_stat_of("private"), 0);
    } else {
        CHECK_EQ(cl_stat_of("private"), R_PAGES + 1 + 24);
    }
}

/* ---- bad input ------------------------------------------------------ */

static void badinput(void)
{
    int me = ph_cluster_rank();
    uint64_t *a = ph_cluster_alloc(8 * PAGE, NULL);
    CHECK(a != NULL);
    static char local[PAGE];
    errno = 0;
    CHECK(ph_cluster_readonly(NULL, PAGE) == -1 && errno == EINVAL);
    CHECK_MSG("NULL address");
    CHECK(ph_cluster_readonly(a, 0) == -1 && errno == EINVAL);
    CHECK_MSG("0 bytes");
    CHECK(ph_cluster_readonly(local, sizeof local) == -1 && errno == EINVAL);
    CHECK_MSG("not shared memory");
    CHECK(ph_cluster_readonly(a, 9 * PAGE) == -1 && errno == EINVAL);
    CHECK_MSG("not inside memory from ph_cluster_alloc");
    /* only rank 1 passes a bad range: every rank fails, naming it */
    if (ph_cluster_nranks() > 1) {
        int rc = ph_cluster_readonly(me == 1 ? (void *)local : (void *)a, PAGE);
        CHECK(rc == -1 && errno == EINVAL);
        CHECK_MSG(me == 1 ? "not shared memory" : "rank 1 passed a range");
        rc = ph_cluster_readonly(a + (me == 1 ? WPP : 0), PAGE);
        CHECK(rc == -1 && errno == EINVAL);
        CHECK_MSG("the ranks disagree");
    }
    /* still usable afterwards */
    CHECK(ph_cluster_readonly(a, 2 * PAGE) == 0);
    CHECK(ph_cluster_barrier() == 0);
    /* migration tunables out of range, or not numbers: refused, the
     * value kept */
    char before[32], after[32];
    CHECK(ph_config_get("cluster_migrate_min_intervals", before, sizeof before) == 0);
    CHECK(ph_config_set("cluster_migrate_min_intervals", "0") == -1 && errno == EINVAL);
    CHECK(ph_config_set("cluster_migrate_min_intervals", "1000001") == -1);
    CHECK(ph_config_set("cluster_migrate_min_intervals", "-3") == -1);
    CHECK(ph_config_set("cluster_migrate", "2") == -1);
    CHECK(ph_config_set("cluster_migrate", "maybe") == -1);
    CHECK(ph_config_get("cluster_migrate_min_intervals", after, sizeof after) == 0);
    CHECK(strcmp(before, after) == 0);
    /* the cost rule's tunables (migrate_cost.h) */
    CHECK(ph_config_get("cluster_migrate_melt_intervals", before, sizeof before) == 0);
    CHECK(ph_config_set("cluster_migrate_melt_intervals", "0") == -1 && errno == EINVAL);
    CHECK(ph_config_set("cluster_migrate_melt_intervals", "1000001") == -1);
    CHECK(ph_config_set("cluster_migrate_reads", "often") == -1 && errno == EINVAL);
    CHECK(ph_config_get("cluster_migrate_melt_intervals", after, sizeof after) == 0);
    CHECK(strcmp(before, after) == 0);
    CHECK(ph_cluster_free(a) == 0);
}

/* A write to a declared range: the job must stop, naming it. */
static void rowrite(void)
{
    uint64_t *a = ph_cluster_alloc(4 * PAGE, NULL);
    CHECK(a != NULL);
    if (ph_cluster_rank() == 0)
        a[0] = 1;
    CHECK(ph_cluster_readonly(a, 4 * PAGE) == 0);
    CHECK_EQ(a[0], 1);
    if (ph_cluster_rank() == ph_cluster_nranks() - 1)
        a[3 * WPP + 5] = 2;               /* broken promise */
    ph_cluster_barrier();
    fprintf(stderr, "rank %d: the write to a read-only range went through\n",
            ph_cluster_rank());
}

int main(int argc, char **argv)
{
    cl_init(&argc, &argv);
    const char *mode = argc > 1 ? argv[1] : "stress";
    if (argc > 2)
        seed = strtoull(argv[2], NULL, 10);
    const char *placement = argc > 3 ? argv[3] : "round-robin";
    if (!strcmp(mode, "stress"))
        stress(placement, argc > 4 ? strtoll(argv[4], NULL, 10) : 0);
    else if (!strcmp(mode, "pingpong"))
        pingpong();
    else if (!strcmp(mode, "laplace"))
        laplace();
    else if (!strcmp(mode, "hometrack"))
        hometrack(argc > 2 ? argv[2] : "block");
    else if (!strcmp(mode, "readonly"))
        readonly();
    else if (!strcmp(mode, "cost"))
        cost();
    else if (!strcmp(mode, "badinput"))
        badinput();
    else if (!strcmp(mode, "rowrite"))
        rowrite();
    else {
        fprintf(stderr, "test_migrate: unknown mode %s\n", mode);
        return 2;
    }
    char name[64];
    snprintf(name, sizeof name, "migrate %s", mode);
    return cl_finish(name);
}
