/*
 * guest_enomem.c -- moving to a full node on a real NUMA kernel (run inside
 * the 4-node guest by numa-guest/suite.sh, best with one small node).
 *
 * The target is the node with the least room; the pages start on another.
 * Its free memory is used up by a filler populated there (a preferred
 * policy: the kernel stops at the node's low watermark and falls back, so
 * the OOM killer is never involved).  A migration digs deeper than that
 * (down to the min watermark, into ZONE_DMA), so the number of pages moved
 * is sized from the node's MemFree afterwards: 3 times as many pages as
 * it has free, plus 2048.  Then:
 *   1. a raw os move of every page: some pages reach the node, the others
 *      report -ENOMEM and stay where they were (a query agrees), data
 *      unchanged, nothing lost;
 *   2. the mover: one move call meets ENOMEM, the node is marked full and
 *      the remaining pages are skipped without a call; asked again inside
 *      the back-off window, it makes no move call at all;
 *   3. with the filler gone and the window over, more pages get there
 *      (every one, when the node had room for them all to begin with),
 *      and none is lost.
 * Exits 77 with fewer than 2 nodes or when the node cannot be filled.
 */
#include "../unit/check.h"

#include "base/error.h"
#include "base/file.h"
#include "config/options.h"
#include "machine/machine.h"
#include "move/mover.h"
#include "os/os.h"
#include "topo/topo.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#define PG PH_PAGE_4K
#define V_MIN 2048      /* pages moved, at least */
#define V_MAX 32768
#define MAX_FILLERS 16

static uint64_t checksum(const unsigned char *p, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* A field ("MemFree:", "FilePages:") of a node's meminfo in bytes, from
 * sysfs; 0 when unknown. */
static uint64_t node_meminfo(int node, const char *field)
{
    char path[96], buf[4096];
    snprintf(path, sizeof path, "/sys/devices/system/node/node%d/meminfo", node);
    if (ph_read_text(path, buf, sizeof buf) < 0)
        return 0;
    const char *p = strstr(buf, field);
    return p ? strtoull(p + strlen(field), NULL, 10) * 1024 : 0;
}

static uint64_t node_free(int node)
{
    return node_meminfo(node, "MemFree:");
}

/* Room for new pages on a node, in bytes: free minus the min watermark
 * of each zone, from /proc/zoneinfo (fresh, unlike the topology's
 * snapshot).  ZONE_DMA is left out: ordinary allocations never use it, so
 * MemFree overstates the room by its size.  0 when unknown. */
static uint64_t node_room(int node)
{
    FILE *f = fopen("/proc/zoneinfo", "r");
    if (!f)
        return 0;
    char line[256], zone[32] = "";
    int cur = -1;
    long long freep = -1;
    uint64_t room = 0;
    while (fgets(line, sizeof line, f)) {
        int n;
        char z[32];
        long long v;
        if (sscanf(line, "Node %d, zone %31s", &n, z) == 2) {
            cur = n;
            snprintf(zone, sizeof zone, "%s", z);
            freep = -1;
        } else if (sscanf(line, " pages free %lld", &v) == 1) {
            freep = v;
        } else if (sscanf(line, " min %lld", &v) == 1 && freep >= 0) {
            if (cur == node && strcmp(zone, "DMA") != 0 && freep > v)
                room += (uint64_t)(freep - v) * PG;
            freep = -1;
        }
    }
    fclose(f);
    return room;
}

int main(void)
{
    ph_options_init();
    ph_topology *t = ph_topo_from_hwloc();
    if (!t) {
        fprintf(stderr, "guest_enomem: topology: %s\n", ph_error_message());
        return 1;
    }
    int nn = t->nnodes;
    if (nn < 2)
        TEST_SKIP("guest_enomem needs at least 2 NUMA nodes");
    ph_os *os = ph_os_linux_open(t);
    ph_os_probe pr;
    if (!os || ph_os_probe_machine(os, &pr) != 0 || pr.move_permitted != 1)
        TEST_SKIP("move_pages(2) is not permitted here");

    /* target: the node with the least room (ties: the highest); home: the
     * node with the most room among the others.  Where we run does not
     * matter: the pages are populated at home explicitly. */
    int target = -1, home = -1;
    uint64_t least = 0, most = 0;
    for (int i = 0; i < nn; i++) {
        uint64_t r = node_room(t->nodes[i].id);
        if (r > 0 && (target < 0 || r <= least)) {
            target = t->nodes[i].id;
            least = r;
        }
    }
    for (int i = 0; i < nn; i++) {
        uint64_t r = node_room(t->nodes[i].id);
        if (t->nodes[i].id != target && (home < 0 || r > most)) {
            home = t->nodes[i].id;
            most = r;
        }
    }
    if (target < 0 || home < 0)
        TEST_SKIP("/proc/zoneinfo does not tell the nodes' free memory");
    printf("guest_enomem: %d nodes; target node %d has room for %llu MiB, pages start "
           "on node %d (%llu MiB)\n",
           nn, target, (unsigned long long)(least >> 20), home,
           (unsigned long long)(most >> 20));

    /* fill the target until it has room for well under V_MIN pages */
    void *filler[MAX_FILLERS];
    size_t filler_len[MAX_FILLERS];
    int nf = 0;
    uint64_t f = node_room(target);
    while (nf < MAX_FILLERS && f > (uint64_t)V_MIN * PG / 2) {
        size_t len = (size_t)(f - (uint64_t)V_MIN * PG / 4) & ~(PG - 1);
        void *p = ph_os_map(os, len, PG, PH_MAP_NO_THP);
        if (!p)
            break;
        if (ph_os_populate_on(os, p, len, target) != 0) {
            printf("  filler: %s\n", ph_error_message());
            ph_os_unmap(os, p, len);
            break;
        }
        filler[nf] = p;
        filler_len[nf++] = len;
        uint64_t f2 = node_room(target);
        if (f2 >= f) { /* the kernel put it elsewhere: no progress */
            f = f2;
            break;
        }
        f = f2;
    }
    printf("  filled the target with %d filler(s): room for %llu KiB now\n", nf,
           (unsigned long long)(f >> 10));
    if (f > (uint64_t)V_MIN * PG / 2) {
        for (int i = 0; i < nf; i++)
            ph_os_unmap(os, filler[i], filler_len[i]);
        TEST_SKIP("the target node could not be filled");
    }

    /* the pages to move, first touched at home.  A migration may reclaim
     * the node's page cache to make room, so what it can take is MemFree
     * plus FilePages (the caches are dropped first where we may), and the
     * kernel may find more still (a CI run moved 3515 pages, 1.5 times
     * that plus 1024, onto a node with 6596 KiB free and 48 KiB of cache,
     * none refused): three times as many, plus 8 MiB. */
    FILE *dc = fopen("/proc/sys/vm/drop_caches", "w");
    if (dc) {
        fputs("3\n", dc);
        fclose(dc);
    }
    uint64_t mf = node_free(target);
    uint64_t cache = node_meminfo(target, "FilePages:");
    size_t V = (size_t)((mf + cache) / PG) * 3 + 2048;
    if (V < V_MIN)
        V = V_MIN;
    if (V > V_MAX)
        V = V_MAX;
    printf("  the target has %llu KiB free and %llu KiB of page cache: moving "
           "%zu pages there\n", (unsigned long long)(mf >> 10),
           (unsigned long long)(cache >> 10), V);
    char *a = ph_os_map(os, V * PG, PG, PH_MAP_NO_THP);
    CHECK(a != NULL);
    if (!a)
        return check_summary("guest_enomem");
    CHECK_EQ(ph_os_populate_on(os, a, V * PG, home), 0);
    for (size_t i = 0; i < V * PG; i += 128)
        a[i] = (char)(i * 2654435761u >> 7);
    uint64_t sum = checksum((unsigned char *)a, V * PG);
    void **pages = malloc(V * sizeof *pages);
    int *nodes = malloc(V * sizeof *nodes), *st = malloc(V * sizeof *st),
        *q = malloc(V * sizeof *q);
    for (size_t i = 0; i < V; i++) {
        pages[i] = a + i * PG;
        nodes[i] = target;
    }
    CHECK_EQ(ph_os_query(os, V, pages, q), 0);
    size_t at_home = 0;
    for (size_t i = 0; i < V; i++)
        at_home += q[i] == home;
    CHECK_EQ(at_home, V);

    /* 1. raw move: some arrive, the rest report -ENOMEM and stay home */
    for (size_t i = 0; i < V; i++)
        st[i] = 0x5A5A5A5A;
    long missed = ph_os_move(os, V, pages, nodes, st);
    size_t arrived = 0, nomem = 0, other = 0;
    for (size_t i = 0; i < V; i++) {
        if (st[i] == target)
            arrived++;
        else if (st[i] == -ENOMEM)
            nomem++;
        else
            other++;
    }
    printf("  raw move: %zu arrived, %zu -ENOMEM, %zu other (returned %ld)\n", arrived, nomem,
           other, missed);
    CHECK(nomem > 0);
    CHECK_EQ(other, 0);
    CHECK_EQ(missed, (long)(V - arrived));
    CHECK_EQ(ph_os_query(os, V, pages, q), 0);
    int agree = 1;
    for (size_t i = 0; i < V; i++)
        agree &= st[i] == target ? q[i] == target : q[i] == home;
    CHECK(agree);
    CHECK(checksum((unsigned char *)a, V * PG) == sum);

    /* 2. the mover backs off */
    ph_machine_cfg mc;
    ph_machine_cfg_from_options(&mc);
    mc.mover.batch_pages = 256;
    mc.mover.node_full_backoff_ns = 2000 * 1000000ull;
    ph_mover *m = ph_mover_new(os, &mc.mover);
    ph_move_stats s;
    missed = ph_mover_move(m, V, pages, nodes, st, &s);
    printf("  mover: %llu moved, %llu already, %llu -ENOMEM, %llu calls\n",
           (unsigned long long)s.moved, (unsigned long long)s.already,
           (unsigned long long)s.failed_nomem, (unsigned long long)s.calls);
    CHECK(s.failed_nomem > 0);
    /* the pages still at home fill several batches, but once a call met
     * ENOMEM the others were skipped */
    size_t batches = (V - arrived + 255) / 256;
    if (batches > 1)
        CHECK(s.calls < batches);
    missed = ph_mover_move(m, V, pages, nodes, st, &s);
    CHECK_EQ(s.calls, 0); /* inside the window: no call to the full node */
    CHECK_EQ((uint64_t)missed, s.failed_nomem);
    CHECK(checksum((unsigned char *)a, V * PG) == sum);

    /* 3. room again, window over: more pages get there (all of them when
     * the node had room for them before the filler); none is lost */
    for (int i = 0; i < nf; i++)
        ph_os_unmap(os, filler[i], filler_len[i]);
    usleep(2100 * 1000);
    missed = ph_mover_move(m, V, pages, nodes, st, &s);
    CHECK_EQ(ph_os_query(os, V, pages, q), 0);
    size_t there = 0, lost = 0, disagree = 0;
    for (size_t i = 0; i < V; i++) {
        there += q[i] == target;
        lost += q[i] != target && q[i] != home;
        disagree += q[i] != (st[i] == -ENOMEM ? home : st[i]);
    }
    CHECK_EQ(lost, 0);
    CHECK_EQ(disagree, 0);
    CHECK_EQ(missed, (long)(V - there));
    CHECK(there > arrived);
    if (least > (uint64_t)V * PG * 5 / 4)
        CHECK_EQ(there, V);
    CHECK(checksum((unsigned char *)a, V * PG) == sum);
    printf("  after freeing the filler: %zu of %zu pages on node %d\n", there, V, target);

    ph_os_unmap(os, a, V * PG);
    free(pages);
    free(nodes);
    free(st);
    free(q);
    ph_mover_free(m);
    ph_os_close(os);
    ph_topo_free(t);
    return check_summary("guest_enomem");
}
