/*
 * test_hugetlb.c -- the hugetlbfs pools, the one way pagehome knows them:
 * os/hugetlb.c against a fake sysfs tree (the root the tool's
 * PAGEHOME_SYSFS_ROOT passes in), and the OS table's huge_pool() on the
 * simulator's pool model and on Linux.
 *
 * The fake tree is the one tests/cli/test_hugepages.sh builds: nodes 0
 * and 1 with 2M and 1G pools, global counts with reserved pages, a THP
 * mode; plus a node 2 without pools and a file that holds no number.
 */
#include "check.h"

#include "base/error.h"
#include "base/file.h"
#include "config/options.h"
#include "os/hugetlb.h"
#include "os/os.h"
#include "topo/topo.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define KB2M ((uint64_t)2048)
#define KB1G ((uint64_t)1048576)
#define PG PH_PAGE_4K
#define P2M PH_PAGE_2M

static char root[] = "/tmp/ph_test_hugetlb_XXXXXX";

static void put(const char *rel, const char *text)
{
    char path[PATH_MAX], dir[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + strlen(root) + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(dir, 0755);
            *p = '/';
        }
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void pool(const char *base, const char *nr, const char *fr, const char *sur,
                 const char *resv)
{
    char rel[256];
    snprintf(rel, sizeof rel, "%s/nr_hugepages", base);
    put(rel, nr);
    snprintf(rel, sizeof rel, "%s/free_hugepages", base);
    put(rel, fr);
    snprintf(rel, sizeof rel, "%s/surplus_hugepages", base);
    put(rel, sur);
    if (resv) {
        snprintf(rel, sizeof rel, "%s/resv_hugepages", base);
        put(rel, resv);
    }
}

static void make_tree(void)
{
    CHECK(mkdtemp(root) != NULL);
    put("sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n");
    pool("sys/kernel/mm/hugepages/hugepages-2048kB", "18\n", "9\n", "1\n", "4\n");
    pool("sys/kernel/mm/hugepages/hugepages-1048576kB", "1\n", "1\n", "0\n", "0\n");
    put("sys/kernel/mm/hugepages/not-a-size", "");
    pool("sys/devices/system/node/node0/hugepages/hugepages-2048kB", "10\n", "7\n", "1\n",
         NULL);
    pool("sys/devices/system/node/node0/hugepages/hugepages-1048576kB", "1\n", "1\n", "0\n",
         NULL);
    pool("sys/devices/system/node/node1/hugepages/hugepages-2048kB", "8\n", "2\n", "0\n",
         NULL);
    pool("sys/devices/system/node/node1/hugepages/hugepages-1048576kB", "0\n", "0\n", "0\n",
         NULL);
    put("sys/devices/system/node/node2/meminfo", "");        /* no pools */
    put("sys/devices/system/node/nodefoo/x", "");            /* not a node */
    pool("sys/devices/system/node/node3/hugepages/hugepages-2048kB", "4\n", "four\n", "0\n",
         NULL);
}

static void remove_tree(void)
{
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    CHECK_EQ(system(cmd), 0);
}

/* ---- the sysfs model ---------------------------------------------------- */

static void test_reader(void)
{
    ph_hugetlb_size sizes[PH_HUGETLB_MAX_SIZES];
    int n = 0;
    CHECK_EQ(ph_hugetlb_sizes(root, sizes, PH_HUGETLB_MAX_SIZES, &n), 0);
    CHECK_EQ(n, 2);
    CHECK(sizes[0].kb == KB2M && sizes[1].kb == KB1G);
    CHECK_STR(sizes[0].name, "2M");
    CHECK_STR(sizes[1].name, "1G");

    int *nodes = NULL, nn = 0;
    CHECK_EQ(ph_hugetlb_nodes(root, &nodes, &nn), 0);
    CHECK_EQ(nn, 4);
    CHECK(nodes && nodes[0] == 0 && nodes[1] == 1 && nodes[2] == 2 && nodes[3] == 3);
    free(nodes);

    ph_hugetlb_counts c;
    char bad[PATH_MAX] = "";
    CHECK_EQ(ph_hugetlb_read(root, 0, KB2M, &c, bad, sizeof bad), 0);
    CHECK(c.present && c.total_pages == 10 && c.free_pages == 7 && c.surplus_pages == 1 &&
          c.reserved_pages == 0);
    CHECK_EQ(ph_hugetlb_read(root, 1, KB1G, &c, bad, sizeof bad), 0);
    CHECK(c.present && c.total_pages == 0);
    CHECK_EQ(ph_hugetlb_read(root, -1, KB2M, &c, bad, sizeof bad), 0);
    CHECK(c.present && c.total_pages == 18 && c.free_pages == 9 && c.surplus_pages == 1 &&
          c.reserved_pages == 4);
    /* a node without pools: absent, not an error */
    CHECK_EQ(ph_hugetlb_read(root, 2, KB2M, &c, bad, sizeof bad), 0);
    CHECK_EQ(c.present, 0);
    CHECK_EQ(ph_hugetlb_has_pool(root, 2, KB2M), 0);
    CHECK_EQ(ph_hugetlb_has_pool(root, 0, KB1G), 1);
    /* a file that holds no number: an error naming it */
    errno = 0;
    CHECK_EQ(ph_hugetlb_read(root, 3, KB2M, &c, bad, sizeof bad), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_CONTAINS(bad, "node3/hugepages/hugepages-2048kB/free_hugepages");

    uint64_t v = 0;
    CHECK_EQ(ph_hugetlb_read_file(root, 1, KB2M, "free_hugepages", &v), 0);
    CHECK_EQ(v, 2);

    char mode[32];
    ph_hugetlb_thp_mode(root, mode, sizeof mode);
    CHECK_STR(mode, "madvise");

    char path[PATH_MAX];
    CHECK_EQ(ph_hugetlb_path(path, sizeof path, root, 1, KB2M, "nr_hugepages"), 0);
    CHECK(strstr(path, root) == path);
    CHECK_CONTAINS(path, "/sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages");
    CHECK_EQ(ph_hugetlb_path(path, sizeof path, root, -1, 0, NULL), 0);
    CHECK_CONTAINS(path, "/sys/kernel/mm/hugepages");
    CHECK_EQ(ph_hugetlb_path(path, 8, root, -1, KB2M, NULL), -1);
    CHECK_EQ(errno, ENAMETOOLONG);

    /* one write of nr_hugepages, read back */
    CHECK_EQ(ph_hugetlb_write_total(root, 1, KB2M, 12), 0);
    char text[32];
    CHECK_EQ(ph_hugetlb_path(path, sizeof path, root, 1, KB2M, "nr_hugepages"), 0);
    CHECK(ph_read_text(path, text, sizeof text) > 0);
    CHECK_STR(text, "12\n");
    CHECK_EQ(ph_hugetlb_write_total(root, 2, KB2M, 1), -1); /* no such pool */
    CHECK_EQ(errno, ENOENT);
    CHECK_EQ(ph_hugetlb_write_total(root, 1, KB2M, 8), 0);

    /* a kernel without hugetlbfs, and without NUMA */
    char empty[PATH_MAX];
    snprintf(empty, sizeof empty, "%s/none", root);
    mkdir(empty, 0755);
    errno = 0;
    CHECK_EQ(ph_hugetlb_sizes(empty, sizes, PH_HUGETLB_MAX_SIZES, &n), -1);
    CHECK_EQ(errno, ENOENT);
    CHECK_EQ(ph_hugetlb_nodes(empty, &nodes, &nn), 0);
    CHECK_EQ(nn, 0);
    ph_hugetlb_thp_mode(empty, mode, sizeof mode);
    CHECK_STR(mode, "");
}

static void test_topology_snapshot(void)
{
    ph_topology *t = ph_topo_from_spec("nodes=3,cpus_per_node=1");
    CHECK(t != NULL);
    if (!t)
        return;
    ph_hugetlb_topology_pools(t, root);
    CHECK_EQ(t->nodes[0].npools, 2);
    CHECK(t->nodes[0].pools[0].page_bytes == P2M && t->nodes[0].pools[0].total == 10 &&
          t->nodes[0].pools[0].free == 7 && t->nodes[0].pools[0].surplus == 1);
    CHECK(t->nodes[0].pools[1].page_bytes == ((uint64_t)1 << 30) &&
          t->nodes[0].pools[1].total == 1);
    CHECK_EQ(t->nodes[1].npools, 2);
    CHECK_EQ(t->nodes[1].pools[0].free, 2);
    CHECK_EQ(t->nodes[2].npools, 0);
    ph_topo_free(t);
}

/* ---- the simulator's pool model, through the front door ----------------- */

static int home_of(ph_os *os, void *p)
{
    int st = -99;
    void *pg[1] = {p};
    return ph_os_query(os, 1, pg, &st) == 0 ? st : -99;
}

static void test_sim_pools(void)
{
    /* node 0: 3 free 2 MiB pages, node 1: 1 */
    ph_topology *t = ph_topo_from_spec("nodes=2,cpus_per_node=1,huge_2m=3:1");
    ph_os *os = t ? ph_os_sim_open(t) : NULL;
    CHECK(os != NULL);
    if (!os) {
        ph_topo_free(t);
        return;
    }
    ph_os_pool p;
    CHECK_EQ(ph_os_huge_pool(os, 0, P2M, &p), 0);
    CHECK(p.total_pages == 3 && p.free_pages == 3 && p.reserved_pages == 0);
    CHECK_EQ(ph_os_huge_pool(os, -1, P2M, &p), 0);
    CHECK(p.total_pages == 4 && p.free_pages == 4 && p.reserved_pages == 0);
    errno = 0;
    CHECK_EQ(ph_os_huge_pool(os, 0, (size_t)1 << 30, &p), -1);
    CHECK_EQ(errno, ENOENT);

    /* map reserves; a populated page takes its node's free page */
    char *a = ph_os_map(os, 2 * P2M, PG, PH_MAP_HUGE_TLBFS);
    CHECK(a != NULL);
    if (!a)
        goto out;
    CHECK_EQ(ph_os_huge_pool(os, -1, P2M, &p), 0);
    CHECK(p.free_pages == 4 && p.reserved_pages == 2);
    CHECK_EQ(ph_os_populate_on(os, a, P2M, 1), 0);
    CHECK_EQ(home_of(os, a + 7 * PG), 1);
    CHECK_EQ(ph_os_huge_pool(os, 1, P2M, &p), 0);
    CHECK_EQ(p.free_pages, 0);
    CHECK_EQ(ph_os_huge_pool(os, -1, P2M, &p), 0);
    CHECK(p.free_pages == 3 && p.reserved_pages == 1);
    /* node 1's pool is empty now: ENOMEM, never a later SIGBUS */
    errno = 0;
    CHECK_EQ(ph_os_populate_on(os, a + P2M, P2M, 1), -1);
    CHECK_EQ(errno, ENOMEM);
    CHECK_CONTAINS(ph_error_message(), "hugetlbfs pool of node 1 is empty");
    CHECK_EQ(ph_os_populate_on(os, a + P2M, P2M, 0), 0);
    CHECK_EQ(ph_os_huge_pool(os, 0, P2M, &p), 0);
    CHECK_EQ(p.free_pages, 2);
    /* a move needs a free page on the target */
    void *pg[1] = {a + P2M};
    int to = 1, st = 0;
    CHECK_EQ(ph_os_move(os, 1, pg, &to, &st), 1);
    CHECK_EQ(st, -ENOMEM);
    pg[0] = a;
    to = 0;
    CHECK_EQ(ph_os_move(os, 1, pg, &to, &st), 0);
    CHECK_EQ(st, 0);
    CHECK_EQ(ph_os_huge_pool(os, 0, P2M, &p), 0);
    CHECK_EQ(p.free_pages, 1);
    CHECK_EQ(ph_os_huge_pool(os, 1, P2M, &p), 0);
    CHECK_EQ(p.free_pages, 1);
    /* more than the pools have, free and not reserved: ENOMEM at map */
    errno = 0;
    CHECK(ph_os_map(os, 3 * P2M, PG, PH_MAP_HUGE_TLBFS) == NULL);
    CHECK_EQ(errno, ENOMEM);
    CHECK_CONTAINS(ph_error_message(), "hugetlbfs pools are empty or too small");
    /* 2 free, 1 of them reserved by b: one more page still fits, two not */
    char *b = ph_os_map(os, P2M, PG, PH_MAP_HUGE_TLBFS);
    CHECK(b != NULL);
    CHECK(ph_os_map(os, 2 * P2M, PG, PH_MAP_HUGE_TLBFS) == NULL);
    if (b) {
        CHECK_EQ(ph_os_populate_on(os, b, P2M, 0), 0); /* node 0's last page */
        CHECK_EQ(ph_os_huge_pool(os, 0, P2M, &p), 0);
        CHECK_EQ(p.free_pages, 0);
        CHECK_EQ(ph_os_unmap(os, b, P2M), 0); /* gives it back */
    }
    CHECK_EQ(ph_os_huge_pool(os, 0, P2M, &p), 0);
    CHECK_EQ(p.free_pages, 1);

    /* unmap gives everything back */
    CHECK_EQ(ph_os_unmap(os, a, 2 * P2M), 0);
    CHECK_EQ(ph_os_huge_pool(os, -1, P2M, &p), 0);
    CHECK(p.free_pages == 4 && p.reserved_pages == 0);
out:
    ph_os_close(os);
    ph_topo_free(t);
}

static void test_sim_first_touch_fallback(void)
{
    ph_topology *t = ph_topo_from_spec("nodes=2,cpus_per_node=1,huge_2m=0:2");
    ph_os *os = t ? ph_os_sim_open(t) : NULL;
    CHECK(os != NULL);
    if (!os) {
        ph_topo_free(t);
        return;
    }
    char *a = ph_os_map(os, P2M, PG, PH_MAP_HUGE_TLBFS);
    CHECK(a != NULL);
    if (a) {
        CHECK_EQ(ph_os_set_thread_node(os, 0), 0);
        memset(a, 1, PG); /* touched by a thread on node 0, whose pool is empty */
        CHECK_EQ(home_of(os, a), 1);
        ph_os_pool p;
        CHECK_EQ(ph_os_huge_pool(os, 1, P2M, &p), 0);
        CHECK_EQ(p.free_pages, 1);
        CHECK_EQ(ph_os_set_thread_node(os, -1), 0);
        CHECK_EQ(ph_os_unmap(os, a, P2M), 0);
    }
    ph_os_close(os);
    ph_topo_free(t);
}

/* ---- Linux: huge_pool() is the sysfs reader at the real root ------------ */

static void test_linux(void)
{
    ph_topology *t = ph_topo_from_hwloc();
    ph_os *os = t ? ph_os_linux_open(t) : NULL;
    if (!os) {
        printf("-- linux: no machine (%s): skipped\n", ph_error_message());
        ph_topo_free(t);
        return;
    }
    ph_hugetlb_counts c;
    int have = ph_hugetlb_read(NULL, -1, KB2M, &c, NULL, 0) == 0 && c.present;
    ph_os_pool p;
    int rc = ph_os_huge_pool(os, -1, P2M, &p);
    if (have) {
        CHECK_EQ(rc, 0);
        CHECK_EQ(p.total_pages, c.total_pages);
        printf("-- linux: 2 MiB pool: %llu pages, %llu free, %llu reserved\n",
               (unsigned long long)p.total_pages, (unsigned long long)p.free_pages,
               (unsigned long long)p.reserved_pages);
    } else {
        CHECK_EQ(rc, -1);
        CHECK_EQ(errno, ENOENT);
    }
    ph_os_close(os);
    ph_topo_free(t);
}

int main(void)
{
    ph_options_init();
    make_tree();
    test_reader();
    test_topology_snapshot();
    remove_tree();
    test_sim_pools();
    test_sim_first_touch_fallback();
    test_linux();
    return check_summary("test_hugetlb");
}
