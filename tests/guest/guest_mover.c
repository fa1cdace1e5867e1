/*
 * guest_mover.c -- the Linux mover and OS table on a real NUMA kernel (run
 * inside the 4-node guest by numa-guest/suite.sh).
 *
 *   1. 2048 pages of 4 KiB (MADV_NOHUGEPAGE) moved to node i % N by the
 *      mover: every status and a query agree, data unchanged, one lane
 *      per target node; with move_threads=1 one lane and one move call
 *      per batch (and the time per page of each, printed);
 *   2. the same request again costs no move call;
 *   3. a raw os move with mixed targets, an untouched page, an unmapped
 *      page and a node the machine lacks: the per-page statuses of the
 *      contract;
 *   4. what the contract promises of bind and populate_on, checked against
 *      the kernel: interleave page v -> nodes[v % n], preferred, and
 *      populate_on(node);
 *   5. untouched pages in a mover request are bound, and land there;
 *   6. a page whose reference a pipe holds (vmsplice) cannot migrate: the
 *      kernel gives up on its run and skips the rest of the call; the
 *      statuses still say -EBUSY for it, the node for the pages that went
 *      and -EAGAIN for those never tried, and the mover retries;
 *   7. hugetlbfs (pool set up here when we may): populate_on a node with
 *      no pool returns -1/ENOMEM instead of raising SIGBUS, and a node
 *      with a pool gets the page.
 * Exits 77 on a machine with fewer than 2 nodes.
 */
#include "../unit/check.h"

#include "base/clock.h"
#include "base/error.h"
#include "config/options.h"
#include "machine/machine.h"
#include "move/mover.h"
#include "os/hugetlb.h"
#include "os/os.h"
#include "topo/topo.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define PG PH_PAGE_4K

static uint64_t checksum(const unsigned char *p, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static double now_s(void)
{
    return (double)ph_now_ns() * 1e-9;
}

static int query_matches(ph_os *os, size_t n, void **pages, const int *want)
{
    int *st = malloc(n * sizeof *st);
    int ok = ph_os_query(os, n, pages, st) == 0;
    size_t bad = 0;
    for (size_t i = 0; ok && i < n; i++)
        if (st[i] != want[i] && bad++ < 5)
            fprintf(stderr, "  page %zu: on %d, expected %d\n", i, st[i], want[i]);
    free(st);
    return ok && bad == 0;
}

int main(void)
{
    ph_options_init();
    ph_topology *t = ph_topo_from_hwloc();
    if (!t) {
        fprintf(stderr, "guest_mover: topology: %s\n", ph_error_message());
        return 1;
    }
    int nn = t->nnodes;
    if (nn < 2)
        TEST_SKIP("guest_mover needs at least 2 NUMA nodes");
    ph_os *os = ph_os_linux_open(t);
    ph_os_probe pr;
    if (!os || ph_os_probe_machine(os, &pr) != 0 || pr.move_permitted != 1)
        TEST_SKIP("move_pages(2) is not permitted here");
    ph_machine_cfg mc; /* the mover's settings from the tunables */
    ph_machine_cfg_from_options(&mc);
    ph_mover *m = ph_mover_new(os, &mc.mover);
    int all[PH_MAX_NODES];
    for (int i = 0; i < nn; i++)
        all[i] = t->nodes[i].id;
    printf("guest_mover: %d nodes, THP %s\n", nn, pr.thp_mode);

    /* 1. the mover, 4 KiB pages */
    enum { N = 2048 };
    char *a = ph_os_map(os, N * PG, PG, PH_MAP_NO_THP);
    CHECK(a != NULL);
    if (!a)
        return check_summary("guest_mover");
    for (size_t i = 0; i < N * PG; i += 512)
        a[i] = (char)(i * 2654435761u >> 11);
    uint64_t sum = checksum((unsigned char *)a, N * PG);
    static void *pages[N];
    static int nodes[N], st[N];
    for (int i = 0; i < N; i++) {
        pages[i] = a + (size_t)i * PG;
        nodes[i] = all[i % nn];
    }
    ph_move_stats s;
    double t0 = now_s();
    CHECK_EQ(ph_mover_move(m, N, pages, nodes, st, &s), 0);
    double dt = now_s() - t0;
    int ok = 1;
    for (int i = 0; i < N; i++)
        ok &= st[i] == nodes[i];
    CHECK(ok);
    CHECK(query_matches(os, N, pages, nodes));
    CHECK(checksum((unsigned char *)a, N * PG) == sum);
    size_t batch = mc.mover.batch_pages;
    /* at least one lane per target node (N / nn pages each, >= 64), at
     * most one a CPU when there are more CPUs (1 vCPU a node: one lane a
     * node), each lane its own batches */
    size_t per_lane = (N + (size_t)nn - 1) / (size_t)nn;
    int most = t->ncpus > nn ? t->ncpus : nn;
    CHECK(s.lanes >= (uint64_t)nn && s.lanes <= (uint64_t)most);
    CHECK(s.calls >= 1 && s.calls <= (uint64_t)nn * ((per_lane + batch - 1) / batch));
    CHECK(s.moved + s.already == N);
    printf("  mover: %d pages (%llu moved, %llu already there) in %llu calls, %llu lanes, "
           "%.1f us/page\n",
           N, (unsigned long long)s.moved, (unsigned long long)s.already,
           (unsigned long long)s.calls, (unsigned long long)s.lanes, dt * 1e6 / N);

    /* 1b. one lane (move_threads=1): the calling thread alone, one move
     * call per batch of the whole request */
    ph_mover_cfg one = mc.mover;
    one.threads = 1;
    ph_mover *m1 = ph_mover_new(os, &one);
    for (int i = 0; i < N; i++)
        nodes[i] = all[(i + 1) % nn];
    t0 = now_s();
    CHECK_EQ(ph_mover_move(m1, N, pages, nodes, st, &s), 0);
    double dt1 = now_s() - t0;
    ok = 1;
    for (int i = 0; i < N; i++)
        ok &= st[i] == nodes[i];
    CHECK(ok);
    CHECK(query_matches(os, N, pages, nodes));
    CHECK(checksum((unsigned char *)a, N * PG) == sum);
    CHECK_EQ(s.lanes, 1);
    CHECK_EQ(s.calls, (N + batch - 1) / batch);
    CHECK_EQ(s.moved, N);
    printf("  one lane: %d pages in %llu calls, %.1f us/page\n", N,
           (unsigned long long)s.calls, dt1 * 1e6 / N);
    ph_mover_free(m1);
    /* and back with lanes, every page moving */
    for (int i = 0; i < N; i++)
        nodes[i] = all[i % nn];
    t0 = now_s();
    CHECK_EQ(ph_mover_move(m, N, pages, nodes, st, &s), 0);
    dt = now_s() - t0;
    CHECK_EQ(s.moved, N);
    CHECK(s.lanes >= (uint64_t)nn && s.lanes <= (uint64_t)most);
    CHECK(query_matches(os, N, pages, nodes));
    CHECK(checksum((unsigned char *)a, N * PG) == sum);
    printf("  %llu lanes: %d pages in %llu calls, %.1f us/page\n",
           (unsigned long long)s.lanes, N, (unsigned long long)s.calls, dt * 1e6 / N);

    /* 2. again: nothing to do */
    CHECK_EQ(ph_mover_move(m, N, pages, nodes, st, &s), 0);
    CHECK_EQ(s.calls, 0);
    CHECK_EQ(s.already, N);

    /* 3. raw move: per-page statuses */
    char *u = ph_os_map(os, 4 * PG, PG, PH_MAP_NO_THP);
    void *gap = ph_os_map(os, PG, PG, 0);
    ph_os_unmap(os, gap, PG);
    int missing = 0;
    while (ph_topo_node_index(t, missing) >= 0)
        missing++;
    void *rp[8] = {a, a + PG, a + 2 * PG, u, gap, a + 3 * PG, a + 4 * PG, a + 5 * PG};
    int rn[8] = {all[1], all[1], all[0], all[0], all[0], missing, all[nn - 1], all[0]};
    int want[8] = {all[1], all[1], all[0], -ENOENT, -EFAULT, -EINVAL, all[nn - 1], all[0]};
    int rs[8];
    for (int i = 0; i < 8; i++)
        rs[i] = 0x5A5A5A5A;
    CHECK_EQ(ph_os_move(os, 8, rp, rn, rs), 3);
    for (int i = 0; i < 8; i++)
        CHECK_EQ(rs[i], want[i]);
    CHECK(checksum((unsigned char *)a, N * PG) == sum);

    /* 4. bind and populate_on, as the contract says */
    enum { B = 64 };
    char *b = ph_os_map(os, B * PG, PG, PH_MAP_NO_THP);
    void *bp[B];
    int bw[B];
    for (int i = 0; i < B; i++)
        bp[i] = b + (size_t)i * PG;
    CHECK_EQ(ph_os_bind(os, b, B * PG, PH_BIND_INTERLEAVE, all, nn), 0);
    memset(b, 1, B * PG);
    for (int i = 0; i < B; i++)
        bw[i] = all[((uintptr_t)bp[i] / PG) % (uintptr_t)nn];
    CHECK(query_matches(os, B, bp, bw));
    if (nn >= 3) { /* interleave over a subset */
        int sub[2] = {all[0], all[2]};
        char *c = ph_os_map(os, B * PG, PG, PH_MAP_NO_THP);
        CHECK_EQ(ph_os_bind(os, c, B * PG, PH_BIND_INTERLEAVE, sub, 2), 0);
        memset(c, 1, B * PG);
        void *cp[B];
        for (int i = 0; i < B; i++) {
            cp[i] = c + (size_t)i * PG;
            bw[i] = sub[((uintptr_t)cp[i] / PG) % 2];
        }
        CHECK(query_matches(os, B, cp, bw));
        ph_os_unmap(os, c, B * PG);
    }
    char *p = ph_os_map(os, B * PG, PG, PH_MAP_NO_THP);
    int last = all[nn - 1];
    CHECK_EQ(ph_os_bind(os, p, B * PG, PH_BIND_PREFERRED, &last, 1), 0);
    memset(p, 2, B * PG);
    for (int i = 0; i < B; i++) {
        bp[i] = p + (size_t)i * PG;
        bw[i] = last;
    }
    CHECK(query_matches(os, B, bp, bw));
    ph_os_unmap(os, p, B * PG);
    p = ph_os_map(os, B * PG, PG, PH_MAP_NO_THP);
    memset(p, 3, 4 * PG); /* first touch: here */
    int here[4];
    for (int i = 0; i < 4; i++)
        bp[i] = p + (size_t)i * PG;
    CHECK_EQ(ph_os_query(os, 4, bp, here), 0);
    uint64_t psum = checksum((unsigned char *)p, B * PG);
    CHECK_EQ(ph_os_populate_on(os, p, B * PG, all[1]), 0);
    CHECK(checksum((unsigned char *)p, B * PG) == psum);
    for (int i = 0; i < B; i++) {
        bp[i] = p + (size_t)i * PG;
        bw[i] = i < 4 ? here[i] : all[1];
    }
    CHECK(query_matches(os, B, bp, bw));
    ph_os_unmap(os, p, B * PG);
    ph_os_unmap(os, b, B * PG);

    /* 5. untouched pages are bound by the mover, and land there */
    char *v = ph_os_map(os, 16 * PG, PG, PH_MAP_NO_THP);
    void *vp[16];
    int vn[16];
    for (int i = 0; i < 16; i++) {
        vp[i] = v + (size_t)i * PG;
        vn[i] = all[(i / 4) % nn];
    }
    CHECK_EQ(ph_mover_move(m, 16, vp, vn, st, &s), 0);
    CHECK_EQ(s.bound, 16);
    CHECK_EQ(st[0], -ENOENT);
    memset(v, 4, 16 * PG);
    CHECK(query_matches(os, 16, vp, vn));
    ph_os_unmap(os, v, 16 * PG);
    ph_os_unmap(os, u, 4 * PG);

    /* 6. a page held by a pipe */
    char *w = ph_os_map(os, 4 * PG, PG, PH_MAP_NO_THP);
    CHECK_EQ(ph_os_populate_on(os, w, 4 * PG, all[0]), 0);
    memset(w, 6, 4 * PG);
    int pfd[2];
    CHECK_EQ(pipe(pfd), 0);
    struct iovec iov = {w, PG};
    if (vmsplice(pfd[1], &iov, 1, 0) == (ssize_t)PG) {
        void *wp[3] = {w, w + PG, w + 2 * PG};
        int wn[3] = {all[1], all[1], all[2 % nn]};
        int ws[3] = {0x5A5A5A5A, 0x5A5A5A5A, 0x5A5A5A5A};
        long r = ph_os_move(os, 3, wp, wn, ws);
        printf("  pinned page: move returned %ld, statuses %d %d %d\n", r, ws[0], ws[1],
               ws[2]);
        CHECK_EQ(r, 2);
        CHECK(ws[0] == -EBUSY || ws[0] == -EAGAIN);
        CHECK_EQ(ws[1], all[1]);
        CHECK_EQ(ws[2], -EAGAIN);
        int wq[3];
        CHECK_EQ(ph_os_query(os, 3, wp, wq), 0);
        CHECK(wq[0] == all[0] && wq[1] == all[1] && wq[2] == all[0]);
        /* the mover retries what it can, and gives up on the pinned page */
        CHECK_EQ(ph_mover_move(m, 3, wp, wn, ws, &s), 1);
        CHECK(s.retried >= 1 || s.failed_busy == 1);
        CHECK_EQ(s.failed_busy, 1);
        CHECK_EQ(ws[2], wn[2]);
    } else {
        printf("  vmsplice refused (%s): pinned page check skipped\n", strerror(errno));
    }
    close(pfd[0]);
    close(pfd[1]);
    ph_os_unmap(os, w, 4 * PG);

    /* 7. hugetlbfs: a pool on the second node only */
    const uint64_t kb2m = PH_PAGE_2M / 1024;
    uint64_t got = 0;
    int set = ph_hugetlb_write_total(NULL, all[1], kb2m, 2) == 0 &&
              ph_hugetlb_read_file(NULL, all[1], kb2m, "nr_hugepages", &got) == 0;
    if (set && got < 1) {
        /* the write succeeds even when no 2 MiB block was free there */
        printf("  hugetlbfs: no 2 MiB page could be set aside on node %d: check skipped\n",
               all[1]);
        ph_hugetlb_write_total(NULL, all[1], kb2m, 0);
    } else if (set) {
        ph_os_pool pool;
        CHECK_EQ(ph_os_huge_pool(os, all[1], PH_PAGE_2M, &pool), 0);
        CHECK_EQ(pool.total_pages, got);
        CHECK_EQ(ph_os_huge_pool(os, all[0], PH_PAGE_2M, &pool), 0);
        CHECK_EQ(pool.free_pages, 0);
        char *h = ph_os_map(os, PH_PAGE_2M, PG, PH_MAP_HUGE_TLBFS);
        CHECK(h != NULL);
        if (h) {
            errno = 0;
            CHECK_EQ(ph_os_populate_on(os, h, PH_PAGE_2M, all[0]), -1);
            CHECK_EQ(errno, ENOMEM);
            CHECK_CONTAINS(ph_error_message(), "hugetlbfs pool");
            CHECK_EQ(ph_os_populate_on(os, h, PH_PAGE_2M, all[1]), 0);
            void *hp[2] = {h, h + PH_PAGE_2M - PG};
            int hq[2];
            uint8_t hh[2];
            CHECK_EQ(ph_os_query(os, 2, hp, hq), 0);
            CHECK(hq[0] == all[1] && hq[1] == all[1]);
            CHECK_EQ(ph_os_huge_state(os, h, 2, hh), 0);
            CHECK(hh[0] == 1 && hh[1] == 1);
            h[5] = 1;
            CHECK_EQ(ph_os_unmap(os, h, PH_PAGE_2M), 0);
        }
        ph_hugetlb_write_total(NULL, all[1], kb2m, 0);
        printf("  hugetlbfs: empty pool -> ENOMEM (no SIGBUS), pool on node %d used\n",
               all[1]);
    } else {
        printf("  hugetlbfs pool cannot be set here: check skipped\n");
    }

    CHECK(checksum((unsigned char *)a, N * PG) == sum);
    ph_os_unmap(os, a, N * PG);
    ph_mover_free(m);
    ph_os_close(os);
    ph_topo_free(t);
    return check_summary("guest_mover");
}
