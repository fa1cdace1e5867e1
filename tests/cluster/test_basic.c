/*
 * test_basic.c -- the first things cluster mode must do: the arena at one
 * address in every rank, block homes, reading other ranks' pages after a
 * barrier, writing them back, info and statistics; a barrier's diffs of
 * consecutive pages going home in one put, or none when the pages' home
 * moves to their writer.
 */
#include "common.h"

/* The pages rank n-1 writes to rank 0's pages at one barrier, and what
 * each page then holds: 0-7 rewritten whole, 8 one byte (a span that
 * meets no other), 9 its second half and 10 its first 100 bytes (spans
 * that meet at the page boundary), 11 untouched, 12 whole.  Consecutive
 * pieces go in one put: 0-7, 8, 9-10, 12 -- four puts where there are 12
 * pages to send. */
enum { CP_PAGES = 13 };

static unsigned char cp_byte(size_t page, size_t off, int written)
{
    if (!written)
        return (unsigned char)(page * 31 + off % 251);
    if (page < 8 || page == 12)
        return (unsigned char)(0xA0 + page);
    if (page == 8)
        return off == 1000 ? 0x5A : cp_byte(page, off, 0);
    if (page == 9)
        return off >= 2048 ? (unsigned char)(off * 7) : cp_byte(page, off, 0);
    if (page == 10)
        return off < 100 ? (unsigned char)(off + 1) : cp_byte(page, off, 0);
    return cp_byte(page, off, 0);
}

/* Rank `from`'s copies of every page of x hold pattern `from_gen`; it
 * writes pattern `to_gen` over them (only the bytes that differ). */
static void cp_write(unsigned char *x, int from_gen, int to_gen)
{
    for (size_t p = 0; p < CP_PAGES; p++)
        for (size_t o = 0; o < 4096; o++)
            if (cp_byte(p, o, to_gen) != cp_byte(p, o, from_gen))
                x[p * 4096 + o] = cp_byte(p, o, to_gen);
}

static size_t cp_bad(const unsigned char *x, int gen)
{
    size_t bad = 0;
    for (size_t p = 0; p < CP_PAGES; p++)
        for (size_t o = 0; o < 4096; o++)
            bad += x[p * 4096 + o] != cp_byte(p, o, gen);
    return bad;
}

/* The home of x's first page, as every rank sees it. */
static int cp_home(const unsigned char *x)
{
    int st[1];
    CHECK_EQ(ph_cluster_homes(x, 4096, st), 0);
    return st[0];
}

/* Pattern 1 written over rank 0's pages by rank n-1 alone: by JIAJIA's
 * rule (cluster_migrate) their homes move to the writer, which keeps its
 * writes -- no diff at all; without migration they go home in the four
 * puts above.  Then the rank that is not their home writes pattern 0 back
 * (the pages, moved at a barrier just before, stay where they are for
 * cluster_migrate_min_intervals barriers): the four puts again. */
static void test_coalesced_puts(int me, int n)
{
    if (n < 2)
        return;
    ph_placement_t pl;
    ph_placement_parse(&pl, "node:0");
    /* page 0: the reference barrier's; then the pattern's 13 */
    unsigned char *b = ph_cluster_alloc((1 + CP_PAGES) * 4096, &pl);
    CHECK(b != NULL);
    if (!b)
        return;
    unsigned char *x = b + 4096;
    if (me == 0)
        for (size_t p = 0; p < CP_PAGES; p++)
            for (size_t o = 0; o < 4096; o++)
                x[p * 4096 + o] = cp_byte(p, o, 0);
    ph_cluster_barrier();
    int w = n - 1;
    unsigned long long sum = 0;
    if (me == w) /* copies of every page first: no fetch in the barriers */
        for (size_t i = 0; i < (1 + CP_PAGES) * 4096; i += 64)
            sum += b[i];
    ph_cluster_barrier();
    /* the reference: one byte of page 0, one put; rank 0 writes another
     * byte of it, so its home stays */
    long long r0 = cl_stat_of("rma_calls");
    if (me == w)
        b[7] = (unsigned char)(sum | 1);
    if (me == 0)
        b[9] = 1;
    ph_cluster_barrier();
    /* a barrier's own one-sided calls here, the reference's put taken out */
    long long base = cl_stat_of("rma_calls") - r0 - (me == w);
    CHECK_EQ(cp_home(b), 0);
    for (int round = 0; round < 2; round++) {
        int writer = round == 0 ? w : (cp_home(x) == 0 ? w : 0);
        int gen = round == 0 ? 1 : 0;
        long long whole0 = cl_stat_of("whole_pages_sent");
        long long diffs0 = cl_stat_of("diffs_sent");
        long long unsent0 = cl_stat_of("migrated_unsent");
        r0 = cl_stat_of("rma_calls");
        if (me == writer)
            cp_write(x, 1 - gen, gen);
        ph_cluster_barrier();
        long long got = cl_stat_of("rma_calls") - r0;
        long long whole = cl_stat_of("whole_pages_sent") - whole0;
        long long diffs = cl_stat_of("diffs_sent") - diffs0;
        long long unsent = cl_stat_of("migrated_unsent") - unsent0;
        int moved = cp_home(x) == writer;
        /* the second round's pages may not move back so soon */
        CHECK(round == 0 || !moved);
        if (me == writer && moved) {
            CHECK_EQ(unsent, 12);       /* pages 0-10 and 12 */
            CHECK_EQ(whole, 0);
            CHECK_EQ(diffs, 0);
            CHECK_EQ(got - base, 0);    /* no put */
        } else if (me == writer) {
            CHECK_EQ(unsent, 0);
            CHECK_EQ(got - base, 4);    /* four puts for 12 pages */
            CHECK_EQ(whole, 9);
            CHECK_EQ(diffs, 3);
        }
        /* every rank reads the pattern (the next round's writer has its
         * copies before it writes) */
        CHECK_EQ(cp_bad(x, gen), 0);
        ph_cluster_barrier();
    }
    CHECK(ph_cluster_free(b) == 0);
}

int main(int argc, char **argv)
{
    cl_init(&argc, &argv);
    int me = ph_cluster_rank(), n = ph_cluster_nranks();
    ph_cluster_info_t info;
    CHECK(ph_cluster_info(&info) == 0);
    CHECK_EQ(info.rank, me);
    CHECK_EQ(info.nranks, n);
    CHECK_EQ(info.page_bytes, 4096);
    if (me == 0)
        printf("transport: %s, faults: %s, arena %p, %zu bytes\n",
               info.transport, info.fault_mechanism, info.arena,
               info.arena_bytes);

    size_t per = 8;                                /* pages per rank */
    size_t words = per * (size_t)n * 512;
    ph_placement_t pl;
    ph_placement_parse(&pl, "block");
    uint64_t *a = ph_cluster_alloc(words * sizeof *a, &pl);
    CHECK(a != NULL);
    if (!a)
        return cl_finish("basic");
    /* same address everywhere: rank 0's pointer, seen by all */
    uint64_t **where = ph_cluster_alloc(sizeof(void *) * (size_t)n, NULL);
    where[me] = a;
    ph_cluster_barrier();
    for (int r = 0; r < n; r++)
        CHECK(where[r] == a);
    /* homes: block */
    for (size_t p = 0; p < per * (size_t)n; p++)
        CHECK_EQ(ph_cluster_home(a + p * 512), (int)(p / per));
    /* each rank writes its own pages */
    for (size_t i = (size_t)me * per * 512; i < (size_t)(me + 1) * per * 512; i++)
        a[i] = i * 7 + 1;
    ph_cluster_barrier();
    /* everybody reads everything */
    size_t bad = 0;
    for (size_t i = 0; i < words; i++)
        bad += a[i] != i * 7 + 1;
    CHECK_EQ(bad, 0);
    ph_cluster_barrier();
    /* rank r writes the pages of rank (r+1)%n: remote writes */
    int t = (me + 1) % n;
    for (size_t i = (size_t)t * per * 512; i < (size_t)(t + 1) * per * 512; i++)
        a[i] = i * 3 + 2;
    ph_cluster_barrier();
    bad = 0;
    for (size_t i = 0; i < words; i++)
        bad += a[i] != i * 3 + 2;
    CHECK_EQ(bad, 0);
    ph_cluster_barrier();
    CHECK(ph_cluster_free(a) == 0);
    CHECK(ph_cluster_free(where) == 0);
    test_coalesced_puts(me, n);
    if (me == 0)
        ph_cluster_stats_write(2);
    return cl_finish("basic");
}
