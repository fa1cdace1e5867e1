/*
 * test_false_sharing.c -- several ranks write different bytes of the same
 * pages in one interval; all writes must survive at the homes:
 *   bytes interleaved (byte i by rank i % n: every 8-byte word has several
 *   writers), words interleaved, halves of a page, a page written mostly by
 *   one rank and a few bytes by another (the whole-page rule must not
 *   clobber the few), through barriers and through lock releases, with the
 *   home itself among the writers.
 */
#include "common.h"

#define PAGE 4096

static int me, n;

static unsigned char val(size_t i, int round)
{
    return (unsigned char)(i * 37 + (size_t)round * 11 + 1);
}

static void check_all(unsigned char *p, size_t bytes, int round,
                      const char *what)
{
    size_t bad = 0, first = (size_t)-1;
    for (size_t i = 0; i < bytes; i++)
        if (p[i] != val(i, round)) {
            if (first == (size_t)-1)
                first = i;
            bad++;
        }
    if (bad)
        fprintf(stderr, "rank %d: %s round %d: %zu bad bytes, first at %zu "
                "(%u, want %u)\n", me, what, round, bad, first, p[first],
                val(first, round));
    CHECK_EQ(bad, 0);
}

int main(int argc, char **argv)
{
    cl_init(&argc, &argv);
    me = ph_cluster_rank();
    n = ph_cluster_nranks();
    size_t pages = 8;
    size_t bytes = pages * PAGE;
    ph_placement_t pl;
    ph_placement_parse(&pl, "cyclic:1");
    unsigned char *p = ph_cluster_alloc(bytes, &pl);
    CHECK(p != NULL);
    if (!p)
        return cl_finish("false_sharing");
    int round = 0;

    /* 1. bytes interleaved, barrier */
    for (int rep = 0; rep < 3; rep++, round++) {
        for (size_t i = (size_t)me; i < bytes; i += (size_t)n)
            p[i] = val(i, round);
        ph_cluster_barrier();
        check_all(p, bytes, round, "bytes");
        ph_cluster_barrier();
    }
    /* 2. 8-byte words interleaved */
    for (int rep = 0; rep < 2; rep++, round++) {
        for (size_t w = (size_t)me; w < bytes / 8; w += (size_t)n)
            for (int b = 0; b < 8; b++)
                p[w * 8 + (size_t)b] = val(w * 8 + (size_t)b, round);
        ph_cluster_barrier();
        check_all(p, bytes, round, "words");
        ph_cluster_barrier();
    }
    /* 3. one rank writes most of each page, the next rank a few bytes:
     * the large writer is not the page's single writer, so it must not
     * send the page whole */
    for (int rep = 0; rep < 2; rep++, round++) {
        for (size_t pg = 0; pg < pages; pg++) {
            int big = (int)((pg + (size_t)rep) % (size_t)n);
            int small = (big + 1) % n;
            for (size_t i = 0; i < PAGE; i++) {
                int mine = (i % 512 == 100) ? small : big;
                if (n == 1)
                    mine = 0;
                if (mine == me)
                    p[pg * PAGE + i] = val(pg * PAGE + i, round);
            }
        }
        ph_cluster_barrier();
        check_all(p, bytes, round, "mostly-one-writer");
        ph_cluster_barrier();
    }
    /* 4. through lock releases: each rank writes its interleaved bytes,
     * releases a lock; after all have released, each acquires and checks */
    for (int rep = 0; rep < 2; rep++, round++) {
        ph_cluster_lock(5);
        for (size_t i = (size_t)me; i < bytes; i += (size_t)n)
            p[i] = val(i, round);
        ph_cluster_unlock(5);
        ph_cluster_barrier();
        ph_cluster_lock(5);
        check_all(p, bytes, round, "locked-bytes");
        ph_cluster_unlock(5);
        ph_cluster_barrier();
    }
    /* 5. halves, selective release + barrier */
    for (int rep = 0; rep < 2; rep++, round++) {
        size_t part = PAGE / (size_t)n;
        for (size_t pg = 0; pg < pages; pg++) {
            size_t a = pg * PAGE + (size_t)me * part;
            size_t b = me == n - 1 ? (pg + 1) * PAGE : a + part;
            for (size_t i = a; i < b; i++)
                p[i] = val(i, round);
        }
        ph_cluster_release(p, bytes);
        ph_cluster_barrier();
        check_all(p, bytes, round, "parts");
        ph_cluster_barrier();
    }
    ph_cluster_free(p);
    return cl_finish("false_sharing");
}
