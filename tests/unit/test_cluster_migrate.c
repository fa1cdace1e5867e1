/*
 * test_cluster_migrate.c -- home migration's decision and the page classes
 * (src/cluster/migrate.h), without MPI:
 *   allowed     the threshold: never moved, moved k barriers ago, off;
 *   plan        single-writer candidates move, several writers or a
 *               writer that did not ask do not, the threshold, runs, rank
 *               order, ranges beyond the arena;
 *   agreement   several "ranks" planning from the same notices with their
 *               own stamp tables (seeded random intervals) end with the
 *               same moves and the same tables, and a brute-force model
 *               page by page gives the same;
 *   classes     writers over intervals and the four classes.
 */
#include "check.h"

#include "cluster/migrate.h"

#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void test_allowed(void)
{
    ph_dsm_migrate_cfg on4 = {1, 4}, off = {0, 4}, on1 = {1, 1};
    CHECK(ph_dsm_migrate_allowed(&on4, 0, 0));
    CHECK(ph_dsm_migrate_allowed(&on4, 100, 0));
    CHECK(!ph_dsm_migrate_allowed(&off, 100, 0));
    /* moved at barrier 10 (stamp 11): again at 14, not before */
    CHECK(!ph_dsm_migrate_allowed(&on4, 11, 11));
    CHECK(!ph_dsm_migrate_allowed(&on4, 13, 11));
    CHECK(ph_dsm_migrate_allowed(&on4, 14, 11));
    CHECK(ph_dsm_migrate_allowed(&on1, 11, 11));
    CHECK(!ph_dsm_migrate_allowed(&on1, 10, 11));
    /* barrier numbers wrap around 2^32 */
    CHECK(ph_dsm_migrate_allowed(&on4, 2, 0xfffffffeu + 1));
}

static void test_plan(void)
{
    /* segments: pages 0-9 rank 1 alone, 10-14 ranks 0+2, 15-19 rank 2,
     * 30-39 rank 0 */
    ph_dsm_seg segs[] = {{0, 10, 1, 1}, {10, 5, 2, -1}, {15, 5, 1, 2},
                         {30, 10, 1, 0}};
    /* candidates: rank 0 asks 10-12 (shared) and 30-34; rank 1 asks 2-7;
     * rank 2 asks 12-19 (half shared) */
    uint64_t cand[] = {10, 3, 30, 5, /* rank 0 */ 2, 6, /* rank 1 */ 12, 8};
    int counts[] = {2, 1, 1}, displs[] = {0, 2, 3};
    uint32_t moved[64] = {0};
    ph_dsm_migrate_cfg cfg = {1, 4};
    ph_dsm_move *mv = NULL;
    long n = ph_dsm_migrate_plan(segs, 4, cand, counts, displs, 3, &cfg, 7,
                                 moved, 64, &mv);
    CHECK_EQ(n, 3);
    if (n == 3) {
        CHECK(mv[0].start == 30 && mv[0].len == 5 && mv[0].to == 0);
        CHECK(mv[1].start == 2 && mv[1].len == 6 && mv[1].to == 1);
        CHECK(mv[2].start == 15 && mv[2].len == 5 && mv[2].to == 2);
        /* first moves: the writers keep their writes */
        for (long i = 0; i < n; i++)
            CHECK(mv[i].unsent && !mv[i].carry);
    }
    CHECK_EQ(moved[30], 8);
    CHECK_EQ(moved[7], 8);
    CHECK_EQ(moved[10], 0);
    CHECK_EQ(moved[8], 0);
    free(mv);
    /* the next barrier: the pages just moved stay (threshold 4), except
     * those that never moved; rank 1 now asks 0-9 */
    uint64_t cand2[] = {0, 10};
    int counts2[] = {0, 1, 0}, displs2[] = {0, 0, 1};
    n = ph_dsm_migrate_plan(segs, 4, cand2, counts2, displs2, 3, &cfg, 8,
                            moved, 64, &mv);
    CHECK_EQ(n, 2);
    if (n == 2) {
        CHECK(mv[0].start == 0 && mv[0].len == 2 && mv[0].to == 1);
        CHECK(mv[1].start == 8 && mv[1].len == 2 && mv[1].to == 1);
        CHECK(mv[0].unsent && mv[1].unsent);
    }
    free(mv);
    /* four barriers after the last move of each, all of them again: none
     * for the first time, so their diffs go */
    n = ph_dsm_migrate_plan(segs, 4, cand2, counts2, displs2, 3, &cfg, 12,
                            moved, 64, &mv);
    CHECK_EQ(n, 1);
    if (n == 1)
        CHECK(mv[0].start == 0 && mv[0].len == 10 && mv[0].to == 1 &&
              !mv[0].unsent);
    free(mv);
    /* a run splits where first moves meet pages that moved before */
    uint32_t moved4[16] = {0};
    moved4[3] = 1;
    ph_dsm_seg segs4[] = {{0, 6, 1, 1}};
    uint64_t cand4[] = {0, 6};
    int counts4[] = {0, 1}, displs4[] = {0, 0};
    n = ph_dsm_migrate_plan(segs4, 1, cand4, counts4, displs4, 2, &cfg, 30,
                            moved4, 16, &mv);
    CHECK_EQ(n, 3);
    if (n == 3) {
        CHECK(mv[0].start == 0 && mv[0].len == 3 && mv[0].unsent);
        CHECK(mv[1].start == 3 && mv[1].len == 1 && !mv[1].unsent);
        CHECK(mv[2].start == 4 && mv[2].len == 2 && mv[2].unsent);
    }
    free(mv);
    /* a candidate the notices do not name, one beyond the arena, off */
    uint64_t cand3[] = {20, 5, 60, 10};
    int counts3[] = {2}, displs3[] = {0};
    ph_dsm_seg segs3[] = {{60, 10, 1, 0}};
    n = ph_dsm_migrate_plan(segs3, 1, cand3, counts3, displs3, 1, &cfg, 20,
                            moved, 64, &mv);
    CHECK_EQ(n, 1);
    if (n == 1)
        CHECK(mv[0].start == 60 && mv[0].len == 4);
    free(mv);
    ph_dsm_migrate_cfg off = {0, 4};
    n = ph_dsm_migrate_plan(segs, 4, cand2, counts2, displs2, 3, &off, 40,
                            moved, 64, &mv);
    CHECK_EQ(n, 0);
    CHECK(mv == NULL);
}

/* Many "ranks" each plan from the same notices with their own stamp
 * tables; a model page by page (the rule written out) gives the same. */
#define NP 300
#define NR 5
static void test_agreement(void)
{
    ph_dsm_migrate_cfg cfg = {1, 3};
    static uint32_t stamps[NR][NP], model[NP];
    static int home[NR][NP], mhome[NP];
    memset(stamps, 0, sizeof stamps);
    memset(model, 0, sizeof model);
    for (int r = 0; r < NR; r++)
        for (int p = 0; p < NP; p++)
            home[r][p] = p % NR;
    for (int p = 0; p < NP; p++)
        mhome[p] = p % NR;
    long total = 0;
    for (uint32_t iv = 0; iv < 200; iv++) {
        /* who writes what: per page none, one rank or two */
        static int w1[NP], w2[NP];
        for (int p = 0; p < NP; p++) {
            uint64_t x = next_rand();
            w1[p] = x % 3 == 0 ? -1 : (int)((x >> 8) % NR);
            w2[p] = (x >> 20) % 7 == 0 ? (int)((x >> 24) % NR) : -1;
            if (w2[p] == w1[p])
                w2[p] = -1;
        }
        /* per rank: written pages as ranges, candidates (not its home; a
         * random few "without a copy" do not ask) */
        static uint64_t pairs[NR * NP * 2], cpairs[NR * NP * 2];
        int counts[NR], displs[NR], ccounts[NR], cdispls[NR];
        int at = 0, cat = 0;
        for (int r = 0; r < NR; r++) {
            static uint64_t pages[NP], cp[NP];
            size_t k = 0, kc = 0;
            for (int p = 0; p < NP; p++)
                if (w1[p] == r || w2[p] == r) {
                    pages[k++] = (uint64_t)p;
                    if (mhome[p] != r && next_rand() % 10)
                        cp[kc++] = (uint64_t)p;
                }
            counts[r] = (int)ph_dsm_notice_ranges(pages, k, pairs + 2 * at);
            displs[r] = at;
            at += counts[r];
            ccounts[r] = (int)ph_dsm_notice_ranges(cp, kc, cpairs + 2 * cat);
            cdispls[r] = cat;
            cat += ccounts[r];
        }
        static ph_dsm_seg segs[NR * NP * 2];
        long ns = ph_dsm_notice_merge(pairs, counts, displs, NR, segs);
        CHECK(ns >= 0);
        /* the model: rank order, then pages */
        long mmoves = 0;
        static unsigned char mfirst[NP];
        memset(mfirst, 0, sizeof mfirst);
        for (int r = 0; r < NR; r++)
            for (int k = 0; k < ccounts[r]; k++) {
                const uint64_t *pr = cpairs + 2 * (cdispls[r] + k);
                for (uint64_t p = pr[0]; p < pr[0] + pr[1]; p++)
                    if (((w1[p] == r && w2[p] < 0) || (w2[p] == r && w1[p] < 0)) &&
                        (model[p] == 0 || iv - (model[p] - 1) >= 3)) {
                        mfirst[p] = model[p] == 0;
                        model[p] = iv + 1;
                        mhome[p] = r;
                        mmoves++;
                    }
            }
        ph_dsm_move *first = NULL;
        long nfirst = -1;
        for (int r = 0; r < NR; r++) {
            ph_dsm_move *mv = NULL;
            long n = ph_dsm_migrate_plan(segs, (size_t)ns, cpairs, ccounts,
                                         cdispls, NR, &cfg, iv, stamps[r], NP,
                                         &mv);
            long pages = 0, unsent_wrong = 0;
            for (long i = 0; i < n; i++)
                for (uint64_t p = mv[i].start; p < mv[i].start + mv[i].len; p++) {
                    home[r][p] = mv[i].to;
                    unsent_wrong += mv[i].unsent != mfirst[p];
                    pages++;
                }
            CHECK_EQ(unsent_wrong, 0);
            CHECK_EQ(pages, mmoves);
            if (r == 0) {
                first = mv;
                nfirst = n;
                total += pages;
            } else {
                CHECK_EQ(n, nfirst);
                int same = n == nfirst;
                for (long i = 0; same && i < n; i++)
                    same = mv[i].start == first[i].start &&
                           mv[i].len == first[i].len && mv[i].to == first[i].to &&
                           mv[i].unsent == first[i].unsent;
                CHECK(same);
                free(mv);
            }
        }
        free(first);
    }
    for (int r = 0; r < NR; r++) {
        CHECK(memcmp(stamps[r], model, sizeof model) == 0);
        CHECK(memcmp(home[r], mhome, sizeof mhome) == 0);
    }
    CHECK(total > 100);
}

static void test_classes(void)
{
    int32_t w = PH_DSM_WRITER_NONE;
    w = ph_dsm_writers_add(w, 0, -1);
    CHECK_EQ(w, PH_DSM_WRITER_NONE);
    w = ph_dsm_writers_add(w, 1, 3);
    CHECK_EQ(w, 3);
    w = ph_dsm_writers_add(w, 1, 3);
    CHECK_EQ(w, 3);
    CHECK_EQ(ph_dsm_writers_add(w, 1, 2), PH_DSM_WRITER_MANY);
    CHECK_EQ(ph_dsm_writers_add(PH_DSM_WRITER_NONE, 2, -1), PH_DSM_WRITER_MANY);
    CHECK_EQ(ph_dsm_writers_add(PH_DSM_WRITER_MANY, 1, 0), PH_DSM_WRITER_MANY);

    CHECK_EQ(ph_dsm_page_class(0, 3, 5, 0), PH_DSM_CLASS_UNTOUCHED);
    CHECK_EQ(ph_dsm_page_class(1, PH_DSM_WRITER_MANY, 9, 0), PH_DSM_CLASS_PRIVATE);
    CHECK_EQ(ph_dsm_page_class(3, PH_DSM_WRITER_NONE, 0, 0), PH_DSM_CLASS_READ_ONLY);
    CHECK_EQ(ph_dsm_page_class(3, 0, 1, 0), PH_DSM_CLASS_READ_ONLY);
    CHECK_EQ(ph_dsm_page_class(3, 0, 2, 0), PH_DSM_CLASS_SINGLE_WRITER);
    CHECK_EQ(ph_dsm_page_class(3, PH_DSM_WRITER_MANY, 1, 0), PH_DSM_CLASS_SHARED);
    CHECK_EQ(ph_dsm_page_class(3, PH_DSM_WRITER_MANY, 4, 1), PH_DSM_CLASS_READ_ONLY);
    CHECK(strcmp(ph_dsm_class_name(PH_DSM_CLASS_SINGLE_WRITER), "single_writer") == 0);
    CHECK(strcmp(ph_dsm_class_name(-1), "untouched") == 0);
}

int main(void)
{
    test_allowed();
    test_plan();
    test_agreement();
    test_classes();
    return check_summary("test_cluster_migrate");
}
