/*
 * test_large.c -- a large allocation is virtual: most of the arena
 * (cluster_arena_size, 8 GiB by default) allocated, a few pages touched
 * on every rank, and the resident set stays small; an allocation beyond
 * what is left fails with ENOMEM and says so, and the arena is usable
 * again after freeing.
 */
#include "common.h"

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, res = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &res) != 2)
            res = 0;
        fclose(f);
    }
    return res * (sysconf(_SC_PAGESIZE) / 1024);
}

int main(int argc, char **argv)
{
    cl_init(&argc, &argv);
    int me = ph_cluster_rank(), n = ph_cluster_nranks();
    ph_cluster_info_t info;
    ph_cluster_info(&info);
    long rss0 = rss_kib();
    size_t big = info.arena_bytes - ((size_t)64 << 20);   /* all but 64 MiB */
    ph_placement_t pl;
    ph_placement_parse(&pl, "block");
    char *p = ph_cluster_alloc(big, &pl);
    CHECK(p != NULL);
    if (!p)
        return cl_finish("large");
    CHECK_EQ(info.used_bytes, 0);
    ph_cluster_info(&info);
    CHECK(info.used_bytes >= big);
    /* every rank writes 16 pages spread over its chunk, reads 16 of the
     * next rank's */
    size_t chunk = big / (size_t)n;
    for (int k = 0; k < 16; k++)
        p[(size_t)me * chunk + (size_t)k * (chunk / 16)] = (char)(k + 1);
    ph_cluster_barrier();
    int nx = (me + 1) % n;
    int bad = 0;
    for (int k = 0; k < 16; k++)
        bad += p[(size_t)nx * chunk + (size_t)k * (chunk / 16)] != (char)(k + 1);
    CHECK_EQ(bad, 0);
    long rss1 = rss_kib();
    if (me == 0)
        printf("allocated %zu MiB: resident %ld -> %ld KiB\n", big >> 20,
               rss0, rss1);
    CHECK(rss1 - rss0 < 64 * 1024);         /* far below the allocation */
    /* beyond the arena */
    errno = 0;
    void *q = ph_cluster_alloc((size_t)128 << 20, &pl);
    CHECK(q == NULL);
    CHECK_EQ(errno, ENOMEM);
    CHECK_MSG("do not fit in the shared arena");
    CHECK_MSG("cluster_arena_size");
    ph_cluster_barrier();
    CHECK(ph_cluster_free(p) == 0);
    /* usable again */
    q = ph_cluster_alloc((size_t)128 << 20, &pl);
    CHECK(q != NULL);
    if (q) {
        ((char *)q)[(size_t)me * 4096] = 1;
        ph_cluster_barrier();
        CHECK(ph_cluster_free(q) == 0);
    }
    return cl_finish("large");
}
