/*
 * test_basic.c -- the first things cluster mode must do: the arena at one
 * address in every rank, block homes, reading other ranks' pages after a
 * barrier, writing them back, info and statistics.
 */
#include "common.h"

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
    if (me == 0)
        ph_cluster_stats_write(2);
    return cl_finish("basic");
}
