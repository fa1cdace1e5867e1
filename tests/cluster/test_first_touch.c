/*
 * test_first_touch.c -- first-touch homes: a page is homed on the first
 * rank that touches it; untouched pages have no home yet (ENOENT); every
 * rank sees the same home; several ranks (and threads) racing to touch
 * the same pages agree on one home each; a freed and reallocated range
 * starts unclaimed again.
 */
#include "common.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#define PAGE 4096

int main(int argc, char **argv)
{
    cl_init(&argc, &argv);
    int me = ph_cluster_rank(), n = ph_cluster_nranks();
    ph_placement_t pl;
    ph_placement_parse(&pl, "first-touch");
    size_t per = 6, pages = per * (size_t)n + 3;    /* 3 never touched */
    char *p = ph_cluster_alloc(pages * PAGE, &pl);
    int *homes = ph_cluster_alloc((size_t)n * pages * sizeof(int), NULL);
    CHECK(p && homes);
    if (!p || !homes)
        return cl_finish("first_touch");
    errno = 0;
    CHECK_EQ(ph_cluster_home(p), -1);
    CHECK_EQ(errno, ENOENT);
    ph_cluster_barrier();
    /* rank r touches pages [r*per, (r+1)*per): writes for even, reads
     * for odd pages */
    for (size_t k = (size_t)me * per; k < (size_t)(me + 1) * per; k++) {
        if (k % 2 == 0)
            p[k * PAGE] = (char)k;
        else
            CHECK_EQ(p[k * PAGE + 5], 0);
    }
    ph_cluster_barrier();
    int st[64];
    int notdone = ph_cluster_homes(p, pages * PAGE, st);
    CHECK_EQ(notdone, 3);
    for (size_t k = 0; k < per * (size_t)n; k++)
        CHECK_EQ(st[k], (int)(k / per));
    for (size_t k = per * (size_t)n; k < pages; k++)
        CHECK_EQ(st[k], -ENOENT);
    /* the data is where it was written */
    for (size_t k = 0; k < per * (size_t)n; k += 2)
        CHECK_EQ(p[k * PAGE], (char)k);
    ph_cluster_barrier();

    /* racing claims: a new first-touch range, every thread of every rank
     * touches every page right after a barrier */
    size_t rp = 32;
    char *q = ph_cluster_alloc(rp * PAGE, &pl);
    CHECK(q != NULL);
    ph_cluster_barrier();
#pragma omp parallel
    {
        int t = 0;
#ifdef _OPENMP
        t = omp_get_thread_num();
#endif
        for (size_t k = 0; k < rp; k++) {
            size_t kk = (k * 7 + (size_t)me * 5 + (size_t)t * 3) % rp;
            if ((kk + (size_t)t) % 3 == 0)
                q[kk * PAGE + (size_t)(me * 8 + t)] = 1;
            else
                (void)*(volatile char *)&q[kk * PAGE + 100];
        }
    }
    ph_cluster_barrier();
    CHECK_EQ(ph_cluster_homes(q, rp * PAGE, st), 0);
    for (size_t k = 0; k < rp; k++) {
        CHECK(st[k] >= 0 && st[k] < n);
        homes[(size_t)me * rp + k] = st[k];
    }
    ph_cluster_barrier();
    size_t disagree = 0;
    for (int r = 0; r < n; r++)
        for (size_t k = 0; k < rp; k++)
            disagree += homes[(size_t)r * rp + k] != homes[k];
    CHECK_EQ(disagree, 0);
    /* every write survived */
    int T = 1;
#ifdef _OPENMP
    T = omp_get_max_threads();
#endif
    size_t lost = 0;
    for (size_t k = 0; k < rp; k++)
        for (int r = 0; r < n; r++)
            for (int t = 0; t < T; t++) {
                size_t kk = k;     /* page kk is written by (r, t) iff: */
                if ((kk + (size_t)t) % 3 == 0)
                    lost += q[kk * PAGE + (size_t)(r * 8 + t)] != 1;
            }
    CHECK_EQ(lost, 0);
    ph_cluster_barrier();
    /* freed and reallocated: unclaimed again */
    CHECK(ph_cluster_free(q) == 0);
    q = ph_cluster_alloc(rp * PAGE, &pl);
    CHECK(q != NULL);
    errno = 0;
    CHECK_EQ(ph_cluster_home(q), -1);
    CHECK_EQ(errno, ENOENT);
    ph_cluster_barrier();
    CHECK_EQ(q[7], 0);                  /* touch: now claimed, zeroed */
    CHECK(ph_cluster_home(q) >= 0);
    ph_cluster_barrier();
    ph_cluster_free(q);
    ph_cluster_free(homes);
    ph_cluster_free(p);
    return cl_finish("first_touch");
}
