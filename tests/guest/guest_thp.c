/*
 * guest_thp.c -- transparent huge pages and moves on a real NUMA kernel
 * (run inside the 4-node guest by numa-guest/suite.sh).
 *
 *   1. raw: an 8 MiB THP region (2 MiB aligned, MADV_HUGEPAGE, touched);
 *      a few subpages of each 2 MiB page are sent to node i % N in one
 *      os move.  The kernel moves whole huge pages: every 2 MiB page that
 *      is still huge ends up entirely on one node (reported per node);
 *   2. the mover coalesces on purpose: all 2048 subpages asked for, most
 *      of each 2 MiB page to one node -- each unit goes wholly to its
 *      majority target with one entry, statuses agree with a query;
 *   3. a MADV_NOHUGEPAGE region keeps 4 KiB precision.
 * Data is checksummed around every move.  Exits 77 with fewer than 2
 * nodes, or when the kernel gives no huge pages at all.
 */
#include "../unit/check.h"

#include "base/error.h"
#include "config/options.h"
#include "machine/machine.h"
#include "move/mover.h"
#include "os/os.h"
#include "topo/topo.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#define PG PH_PAGE_4K
#define UNIT_PAGES 512
#define UNITS 4
#define NPAGES (UNITS * UNIT_PAGES)

static uint64_t checksum(const unsigned char *p, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* Node of every page of the region and whether it is huge.  Returns the
 * number of huge 2 MiB units. */
static int survey(ph_os *os, char *a, int *where, uint8_t *huge)
{
    static void *pages[NPAGES];
    for (int i = 0; i < NPAGES; i++)
        pages[i] = a + (size_t)i * PG;
    CHECK_EQ(ph_os_query(os, NPAGES, pages, where), 0);
    CHECK_EQ(ph_os_huge_state(os, a, NPAGES, huge), 0);
    int units = 0;
    for (int u = 0; u < UNITS; u++) {
        int all = 1;
        for (int k = 0; k < UNIT_PAGES; k++)
            all &= huge[u * UNIT_PAGES + k];
        units += all;
    }
    return units;
}

/* 1 when every page of unit u is on one node; *node gets it. */
static int uniform(const int *where, int u, int *node)
{
    *node = where[u * UNIT_PAGES];
    for (int k = 1; k < UNIT_PAGES; k++)
        if (where[u * UNIT_PAGES + k] != *node)
            return 0;
    return 1;
}

int main(void)
{
    ph_options_init();
    ph_topology *t = ph_topo_from_hwloc();
    if (!t) {
        fprintf(stderr, "guest_thp: topology: %s\n", ph_error_message());
        return 1;
    }
    int nn = t->nnodes;
    if (nn < 2)
        TEST_SKIP("guest_thp needs at least 2 NUMA nodes");
    ph_os *os = ph_os_linux_open(t);
    ph_os_probe pr;
    if (!os || ph_os_probe_machine(os, &pr) != 0 || pr.move_permitted != 1)
        TEST_SKIP("move_pages(2) is not permitted here");
    if (strcmp(pr.thp_mode, "never") == 0 || pr.thp_mode[0] == '\0')
        TEST_SKIP("transparent huge pages are off");
    int all[PH_MAX_NODES];
    for (int i = 0; i < nn; i++)
        all[i] = t->nodes[i].id;
    static int where[NPAGES], st[NPAGES], nodes[NPAGES];
    static uint8_t huge[NPAGES];
    static void *pages[NPAGES];

    /* the region: first touch here, as 2 MiB pages */
    char *a = ph_os_map(os, NPAGES * PG, PG, PH_MAP_HUGE_THP);
    CHECK(a != NULL);
    if (!a)
        return check_summary("guest_thp");
    CHECK_EQ((uintptr_t)a % PH_PAGE_2M, 0);
    for (size_t i = 0; i < (size_t)NPAGES * PG; i += 256)
        a[i] = (char)(i * 2654435761u >> 9);
    uint64_t sum = checksum((unsigned char *)a, (size_t)NPAGES * PG);
    int hu = survey(os, a, where, huge);
    printf("guest_thp: %d nodes, THP %s: %d of %d units are huge after the touch\n", nn,
           pr.thp_mode, hu, UNITS);
    if (hu == 0)
        TEST_SKIP("the kernel gave no huge pages (fragmented or THP disabled)");

    /* 1. raw os move: 8 subpages per unit, to node i % N */
    void *rp[UNITS * 8];
    int rn[UNITS * 8], rs[UNITS * 8];
    int n = 0;
    for (int u = 0; u < UNITS; u++)
        for (int k = 0; k < 8; k++) {
            rp[n] = a + ((size_t)u * UNIT_PAGES + (size_t)k * 61) * PG;
            rn[n] = all[n % nn];
            n++;
        }
    long missed = ph_os_move(os, (size_t)n, rp, rn, rs);
    CHECK(missed >= 0);
    CHECK(checksum((unsigned char *)a, (size_t)NPAGES * PG) == sum);
    hu = survey(os, a, where, huge);
    size_t per_node[PH_MAX_NODES] = {0};
    for (int i = 0; i < NPAGES; i++) {
        int idx = ph_topo_node_index(t, where[i]);
        if (idx >= 0)
            per_node[idx]++;
    }
    printf("  raw move of %d subpages (targets i %% %d): %ld not on their target;"
           " pages per node:", n, nn, missed);
    for (int i = 0; i < nn; i++)
        printf(" %d:%zu", all[i], per_node[i]);
    printf("\n");
    for (int u = 0; u < UNITS; u++) {
        int node, uni = uniform(where, u, &node);
        int is_huge = huge[u * UNIT_PAGES];
        printf("    unit %d: %s, %s%d\n", u, is_huge ? "huge" : "split",
               uni ? "all on node " : "mixed, first page on node ", node);
        if (is_huge)
            CHECK(uni); /* a huge page is on one node */
    }
    /* the statuses name where the page was when its entry was handled;
     * the last entry of each unit names where the unit is now */
    for (int u = 0; u < UNITS; u++) {
        int node;
        if (huge[u * UNIT_PAGES] && uniform(where, u, &node))
            CHECK_EQ(rs[u * 8 + 7], node);
    }

    /* 2. the mover: all subpages, 70% of each unit to one node */
    ph_machine_cfg mc; /* the mover's settings from the tunables */
    ph_machine_cfg_from_options(&mc);
    ph_mover *m = ph_mover_new(os, &mc.mover);
    int major[UNITS];
    for (int u = 0; u < UNITS; u++)
        major[u] = all[(u + 1) % nn];
    for (int i = 0; i < NPAGES; i++) {
        int u = i / UNIT_PAGES, k = i % UNIT_PAGES;
        pages[i] = a + (size_t)i * PG;
        nodes[i] = (k % 10 < 7) ? major[u] : all[(u + 2 + k) % nn];
    }
    ph_move_stats s;
    missed = ph_mover_move(m, NPAGES, pages, nodes, st, &s);
    CHECK(checksum((unsigned char *)a, (size_t)NPAGES * PG) == sum);
    int hu2 = survey(os, a, where, huge);
    printf("  mover: %llu huge units moved, %llu moved + %llu already + %llu outvoted of "
           "%d, %llu calls; %d units huge afterwards\n",
           (unsigned long long)s.huge_units, (unsigned long long)s.moved,
           (unsigned long long)s.already, (unsigned long long)s.outvoted, NPAGES,
           (unsigned long long)s.calls, hu2);
    CHECK_EQ(missed, (long)s.outvoted + (long)(s.failed_busy + s.failed_nomem +
                                               s.failed_access + s.failed_fault +
                                               s.failed_other));
    for (int u = 0; u < UNITS; u++) {
        int node;
        if (!huge[u * UNIT_PAGES]) {
            printf("    unit %d is not huge: coalescing does not apply\n", u);
            continue;
        }
        CHECK(uniform(where, u, &node));
        CHECK_EQ(node, major[u]);
        int ok = 1;
        for (int k = 0; k < UNIT_PAGES; k++)
            ok &= st[u * UNIT_PAGES + k] == where[u * UNIT_PAGES + k];
        CHECK(ok); /* every subpage's status says where its unit went */
    }
    CHECK(s.huge_units <= (uint64_t)hu);
    if (hu > 0) /* huge units were left to coalesce (tight memory splits them) */
        CHECK(s.outvoted > 0);

    /* 3. no THP: 4 KiB precision */
    char *b = ph_os_map(os, UNIT_PAGES * PG, PG, PH_MAP_NO_THP);
    for (size_t i = 0; i < (size_t)UNIT_PAGES * PG; i += 256)
        b[i] = (char)i;
    uint64_t bsum = checksum((unsigned char *)b, (size_t)UNIT_PAGES * PG);
    for (int i = 0; i < UNIT_PAGES; i++) {
        pages[i] = b + (size_t)i * PG;
        nodes[i] = all[i % nn];
    }
    CHECK_EQ(ph_os_huge_state(os, b, UNIT_PAGES, huge), 0);
    int any = 0;
    for (int i = 0; i < UNIT_PAGES; i++)
        any |= huge[i];
    CHECK_EQ(any, 0);
    CHECK_EQ(ph_mover_move(m, UNIT_PAGES, pages, nodes, st, &s), 0);
    CHECK_EQ(s.huge_units, 0);
    CHECK_EQ(ph_os_query(os, UNIT_PAGES, pages, st), 0);
    int ok = 1;
    for (int i = 0; i < UNIT_PAGES; i++)
        ok &= st[i] == nodes[i];
    CHECK(ok);
    CHECK(checksum((unsigned char *)b, (size_t)UNIT_PAGES * PG) == bsum);

    ph_os_unmap(os, b, UNIT_PAGES * PG);
    ph_os_unmap(os, a, NPAGES * PG);
    ph_mover_free(m);
    ph_os_close(os);
    ph_topo_free(t);
    return check_summary("guest_thp");
}
