/*
 * test_readahead.c -- read-ahead of cluster mode's read misses
 * (src/cluster/coherence.c, READ-AHEAD), on N ranks.  An array of 1024
 * pages homed at rank 0, which writes every word before each phase; the
 * other ranks then read it:
 *   sequential  one thread reads it page after page: the number of gets
 *               is the window model's (cluster_fetch_pages doubling up to
 *               cluster_fetch_max_pages: 35 instead of 256 with 4 and 32),
 *               every page fetched once;
 *   scattered   one thread reads every 7th page, then the rest: no get
 *               brings more than cluster_fetch_pages pages (no stream);
 *   threads     OpenMP threads each read their own quarter page after
 *               page at once: each is a stream of its own, the gets stay
 *               within the model's count per quarter (plus one a thread:
 *               a quarter's start may land in another's run);
 * and every word read is checked.
 */
#include "common.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#define PAGE 4096
#define WPP (PAGE / 8)
#define NPAGES 1024

/* gets to read n pages in a row from a fresh stream */
static long model_gets(long n, long first, long max)
{
    long gets = 0, w = first;
    for (long at = 0; at < n; gets++) {
        at += w;
        w = w * 2 < max ? w * 2 : max;
    }
    return gets;
}

static uint64_t value(int phase, size_t word)
{
    return cl_h3(7, (uint64_t)phase, word, 0) | 1;
}

static void write_phase(uint64_t *a, int phase)
{
    if (ph_cluster_rank() == 0)
        for (size_t i = 0; i < (size_t)NPAGES * WPP; i++)
            a[i] = value(phase, i);
    CHECK(ph_cluster_barrier() == 0);
}

static long check_page(const uint64_t *a, int phase, size_t p)
{
    long bad = 0;
    for (size_t w = 0; w < WPP; w++)
        bad += a[p * WPP + w] != value(phase, p * WPP + w);
    return bad;
}

int main(int argc, char **argv)
{
    cl_init(&argc, &argv);
    int me = ph_cluster_rank();
    long fp = cl_tunable("cluster_fetch_pages"),
         fmax = cl_tunable("cluster_fetch_max_pages");
    if (fmax < fp)
        fmax = fp;
    ph_placement_t pl;
    CHECK(ph_placement_parse(&pl, "node:0") == 0);
    uint64_t *a = ph_cluster_alloc((size_t)NPAGES * PAGE, &pl);
    CHECK(a != NULL);
    if (!a)
        return cl_finish("readahead");
    long bad = 0;

    /* sequential */
    write_phase(a, 1);
    if (me != 0) {
        long long g0 = cl_stat_of("fetch_calls"), f0 = cl_stat_of("pages_fetched");
        for (size_t p = 0; p < NPAGES; p++)
            bad += check_page(a, 1, p);
        long long gets = cl_stat_of("fetch_calls") - g0;
        long long pages = cl_stat_of("pages_fetched") - f0;
        CHECK_EQ(gets, model_gets(NPAGES, fp, fmax));
        CHECK_EQ(pages, NPAGES);
        if (me == 1)
            printf("readahead: sequential: %lld gets for %lld pages (window %ld "
                   "to %ld)\n", gets, pages, fp, fmax);
    }
    CHECK(ph_cluster_barrier() == 0);

    /* scattered: no stream, no get above cluster_fetch_pages */
    write_phase(a, 2);
    if (me != 0) {
        long long g0 = cl_stat_of("fetch_calls"), f0 = cl_stat_of("pages_fetched");
        long long most = 0;
        for (size_t k = 0; k < 7; k++)
            for (size_t p = k; p < NPAGES; p += 7) {
                long long gb = cl_stat_of("fetch_calls"), pb = cl_stat_of("pages_fetched");
                bad += check_page(a, 2, p);
                if (cl_stat_of("fetch_calls") > gb) {
                    long long got = cl_stat_of("pages_fetched") - pb;
                    most = got > most ? got : most;
                }
            }
        CHECK(most >= 1 && most <= fp);
        CHECK_EQ(cl_stat_of("pages_fetched") - f0, NPAGES);
        if (me == 1)
            printf("readahead: scattered: %lld gets, at most %lld pages each\n",
                   cl_stat_of("fetch_calls") - g0, most);
    }
    CHECK(ph_cluster_barrier() == 0);

    /* threads, a quarter each */
    write_phase(a, 3);
    if (me != 0) {
        long long g0 = cl_stat_of("fetch_calls");
        int nt = 1;
        long tbad = 0;
#pragma omp parallel num_threads(4) reduction(+ : tbad)
        {
#ifdef _OPENMP
            int t = omp_get_thread_num();
#pragma omp single
            nt = omp_get_num_threads();
#else
            int t = 0;
#endif
#pragma omp barrier
            size_t q = NPAGES / (size_t)nt;
            for (size_t p = (size_t)t * q; p < (size_t)(t + 1) * q; p++)
                tbad += check_page(a, 3, p);
        }
        bad += tbad;
        long long gets = cl_stat_of("fetch_calls") - g0;
        long limit = (long)nt * (model_gets(NPAGES / nt, fp, fmax) + 1);
        CHECK(gets <= limit);
        if (me == 1)
            printf("readahead: %d threads: %lld gets (at most %ld)\n", nt, gets,
                   limit);
    }
    CHECK_EQ(bad, 0);
    CHECK(ph_cluster_barrier() == 0);
    CHECK(ph_cluster_free(a) == 0);
    return cl_finish("readahead");
}
