/*
 * test_basic.c -- the first things cluster mode must do: the arena at one
 * address in every rank, block homes, reading other ranks' pages after a
 * barrier, writing them back, info and statistics; a barrier's diffs of
 * consecutive pages going home in one put.
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
    /* the reference: one byte of one page, one put */
    long long r0 = cl_stat_of("rma_calls");
    if (me == w)
        b[7] = (unsigned char)(sum | 1);
    ph_cluster_barrier();
    long long ref = cl_stat_of("rma_calls") - r0;
    long long whole0 = cl_stat_of("whole_pages_sent");
    long long diffs0 = cl_stat_of("diffs_sent");
    r0 = cl_stat_of("rma_calls");
    if (me == w) {
        for (size_t p = 0; p < CP_PAGES; p++)
            for (size_t o = 0; o < 4096; o++)
                if (cp_byte(p, o, 1) != cp_byte(p, o, 0))
                    x[p * 4096 + o] = cp_byte(p, o, 1);
    }
    ph_cluster_barrier();
    long long got = cl_stat_of("rma_calls") - r0;
    if (me == w) {
        CHECK_EQ(got - ref, 3);     /* four puts against the reference's one */
        CHECK_EQ(cl_stat_of("whole_pages_sent") - whole0, 9);
        CHECK_EQ(cl_stat_of("diffs_sent") - diffs0, 3);
    }
    size_t bad = 0;
    for (size_t p = 0; p < CP_PAGES; p++)
        for (size_t o = 0; o < 4096; o++)
            bad += x[p * 4096 + o] != cp_byte(p, o, 1);
    CHECK_EQ(bad, 0);
    ph_cluster_barrier();
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
