/*
 * test_os_contract.c -- the contract of os.h, checked against the
 * simulator and against Linux with one suite.
 *
 * The suite only assumes what every implementation promises.  On this
 * kind of host Linux usually has a single node, so "other node" checks use
 * whatever nodes the topology has (moves to the page's own node still go
 * through the kernel), and a node the topology does not have must give
 * -EINVAL per page.  Then each implementation gets the checks only it can
 * pass: capacities, counters and costs on the simulator; the zero page,
 * hugetlbfs and the huge page methods on Linux.
 *
 * Every batch call starts from a status array filled with a sentinel and
 * every slot must come back holding a legal value.
 */
#include "check.h"

#include "base/error.h"
#include "base/file.h"
#include "config/options.h"
#include "os/os.h"
#include "topo/topo.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SENTINEL 0x5A5A5A5A
#define PG PH_PAGE_4K

static void fill(int *st, size_t n)
{
    for (size_t i = 0; i < n; i++)
        st[i] = SENTINEL;
}

/* A legal status: a node of the topology or one of the contract's errnos. */
static int legal(const ph_os *os, int s)
{
    if (s >= 0)
        return ph_topo_node_index(os->topo, s) >= 0;
    switch (-s) {
    case ENOENT: case EFAULT: case EBUSY: case EAGAIN: case ENOMEM: case EACCES:
    case EINVAL:
        return 1;
    }
    return 0;
}

static int all_legal(const ph_os *os, const int *st, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (st[i] == SENTINEL || !legal(os, st[i])) {
            fprintf(stderr, "  slot %zu holds %d\n", i, st[i]);
            return 0;
        }
    return 1;
}

static uint64_t checksum(const unsigned char *p, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static void pages_of(void *base, size_t n, void **pages)
{
    for (size_t i = 0; i < n; i++)
        pages[i] = (char *)base + i * PG;
}

static volatile sig_atomic_t sig_node = -2, sig_cpu = -2;
static ph_os *sig_os;

static void on_usr1(int sig)
{
    (void)sig;
    sig_node = ph_os_current_node(sig_os);
    sig_cpu = ph_os_current_cpu(sig_os);
}

/* ---- the shared suite ----------------------------------------------------- */

static void suite(ph_os *os, const char *label)
{
    const ph_topology *t = os->topo;
    int nn = t->nnodes;
    printf("-- contract suite: %s (%d node%s)\n", label, nn, nn == 1 ? "" : "s");
    enum { N = 64 };
    void *pages[N];
    int st[N], nodes[N];

    /* map: aligned, zeroed, untouched */
    char *a = ph_os_map(os, N * PG, 65536, PH_MAP_NO_THP);
    CHECK(a != NULL);
    if (!a)
        return;
    CHECK_EQ((uintptr_t)a % 65536, 0);
    pages_of(a, N, pages);
    fill(st, N);
    CHECK_EQ(ph_os_query(os, N, pages, st), 0);
    CHECK(all_legal(os, st, N));
    for (int i = 0; i < N; i++)
        CHECK_EQ(st[i], -ENOENT);

    /* touch the first half: faulted on a node of the topology */
    for (int i = 0; i < N / 2; i++)
        CHECK_EQ(a[i * PG + 7], 0);
    for (int i = 0; i < N / 2; i++)
        memset(a + i * PG, 0x40 + i, PG);
    fill(st, N);
    CHECK_EQ(ph_os_query(os, N, pages, st), 0);
    CHECK(all_legal(os, st, N));
    int ok = 1;
    for (int i = 0; i < N; i++)
        ok &= i < N / 2 ? (st[i] >= 0) : (st[i] == -ENOENT);
    CHECK(ok);

    /* move the touched half to node i % nn: data unchanged */
    uint64_t sum = checksum((unsigned char *)a, N * PG);
    for (int i = 0; i < N / 2; i++)
        nodes[i] = t->nodes[i % nn].id;
    fill(st, N);
    CHECK_EQ(ph_os_move(os, N / 2, pages, nodes, st), 0);
    CHECK(all_legal(os, st, N / 2));
    ok = 1;
    for (int i = 0; i < N / 2; i++)
        ok &= st[i] == nodes[i];
    CHECK(ok);
    fill(st, N);
    CHECK_EQ(ph_os_query(os, N / 2, pages, st), 0);
    ok = 1;
    for (int i = 0; i < N / 2; i++)
        ok &= st[i] == nodes[i];
    CHECK(ok);
    CHECK(checksum((unsigned char *)a, N * PG) == sum);

    /* moving again: every page is already there */
    fill(st, N);
    CHECK_EQ(ph_os_move(os, N / 2, pages, nodes, st), 0);
    ok = 1;
    for (int i = 0; i < N / 2; i++)
        ok &= st[i] == nodes[i];
    CHECK(ok);

    /* a mixed batch: good, untouched, bad node, unmapped, good */
    void *gap = ph_os_map(os, PG, PG, 0);
    CHECK(gap != NULL);
    CHECK_EQ(ph_os_unmap(os, gap, PG), 0);
    void *mix[6] = {a, a + (N - 1) * PG, a + PG, gap, a + 2 * PG, a + 3 * PG};
    int mixn[6] = {t->nodes[0].id, t->nodes[0].id, 1000, t->nodes[nn - 1].id,
                   t->nodes[nn - 1].id, -3};
    fill(st, 6);
    CHECK_EQ(ph_os_move(os, 6, mix, mixn, st), 4);
    CHECK(all_legal(os, st, 6));
    CHECK_EQ(st[0], t->nodes[0].id);
    CHECK_EQ(st[1], -ENOENT);
    CHECK_EQ(st[2], -EINVAL);
    CHECK_EQ(st[3], -EFAULT);
    CHECK_EQ(st[4], t->nodes[nn - 1].id);
    CHECK_EQ(st[5], -EINVAL);
    fill(st, 6);
    CHECK_EQ(ph_os_query(os, 6, mix, st), 0);
    CHECK_EQ(st[3], -EFAULT);
    CHECK_EQ(st[2], t->nodes[1 % nn].id); /* the bad target left it alone */
    CHECK(checksum((unsigned char *)a, N * PG) == sum);

    /* whole-call argument errors */
    errno = 0;
    CHECK_EQ(ph_os_move(os, 3, NULL, nodes, st), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(ph_os_query(os, 3, pages, NULL), -1);
    CHECK_EQ(ph_os_query(os, 0, NULL, NULL), 0);
    CHECK_EQ(ph_os_move(os, 0, NULL, NULL, NULL), 0);

    /* bind preferred: untouched pages land on the node when touched */
    int last = t->nodes[nn - 1].id;
    char *untouched = a + (N / 2) * PG;
    CHECK_EQ(ph_os_bind(os, untouched, 8 * PG, PH_BIND_PREFERRED, &last, 1), 0);
    memset(untouched, 1, 8 * PG);
    fill(st, N);
    CHECK_EQ(ph_os_query(os, 8, pages + N / 2, st), 0);
    ok = 1;
    for (int i = 0; i < 8; i++)
        ok &= st[i] == last;
    CHECK(ok);

    /* bind interleave over all nodes: page v -> nodes[v % n] */
    int all[PH_MAX_NODES];
    for (int i = 0; i < nn; i++)
        all[i] = t->nodes[i].id;
    char *il = untouched + 8 * PG;
    CHECK_EQ(ph_os_bind(os, il, 16 * PG, PH_BIND_INTERLEAVE, all, nn), 0);
    memset(il, 2, 16 * PG);
    fill(st, N);
    CHECK_EQ(ph_os_query(os, 16, pages + N / 2 + 8, st), 0);
    ok = 1;
    for (int i = 0; i < 16; i++) {
        uintptr_t v = (uintptr_t)(il + i * PG) / PG;
        ok &= st[i] == all[v % (uintptr_t)nn];
    }
    CHECK(ok);
    if (nn > 1) {
        int rev[2] = {all[1], all[0]};
        CHECK_EQ(ph_os_bind(os, il, PG, PH_BIND_INTERLEAVE, rev, 2), -1);
        CHECK_EQ(errno, EINVAL);
        CHECK_CONTAINS(ph_error_message(), "ascending");
    }
    int badnode = 1000;
    CHECK_EQ(ph_os_bind(os, il, PG, PH_BIND_PREFERRED, &badnode, 1), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(ph_os_bind(os, gap, PG, PH_BIND_PREFERRED, &last, 1), -1);
    CHECK_EQ(errno, EFAULT);
    CHECK_EQ(ph_os_bind(os, il, 16 * PG, PH_BIND_DEFAULT, NULL, 0), 0);

    /* populate_on: untouched pages come from the node, written ones keep
     * their data and their node */
    char *b = ph_os_map(os, 32 * PG, PG, PH_MAP_NO_THP);
    CHECK(b != NULL);
    if (b) {
        void *bp[32];
        pages_of(b, 32, bp);
        memset(b, 0x33, 4 * PG);
        fill(st, 32);
        CHECK_EQ(ph_os_query(os, 4, bp, st), 0);
        int before[4];
        memcpy(before, st, sizeof before);
        uint64_t bsum = checksum((unsigned char *)b, 32 * PG);
        CHECK_EQ(ph_os_populate_on(os, b, 32 * PG, last), 0);
        CHECK(checksum((unsigned char *)b, 32 * PG) == bsum);
        fill(st, 32);
        CHECK_EQ(ph_os_query(os, 32, bp, st), 0);
        CHECK(all_legal(os, st, 32));
        ok = 1;
        for (int i = 0; i < 32; i++)
            ok &= i < 4 ? st[i] == before[i] : st[i] == last;
        CHECK(ok);
        CHECK_EQ(ph_os_populate_on(os, b, PG, 1000), -1);
        CHECK_EQ(errno, EINVAL);
        CHECK_EQ(ph_os_unmap(os, b, 32 * PG), 0);
    }

    /* huge mappings: 2 MiB aligned; a NO_THP range reports 4 KiB pages */
    char *h = ph_os_map(os, 3 * PH_PAGE_2M + 5, PG, PH_MAP_HUGE_THP);
    CHECK(h != NULL);
    if (h) {
        CHECK_EQ((uintptr_t)h % PH_PAGE_2M, 0);
        memset(h, 5, 4 * PH_PAGE_2M); /* rounded up to whole 2 MiB pages */
        CHECK_EQ(ph_os_unmap(os, h, 3 * PH_PAGE_2M + 5), 0);
    }
    uint8_t hs[N];
    memset(hs, 7, sizeof hs);
    CHECK_EQ(ph_os_huge_state(os, a, N, hs), 0);
    ok = 1;
    for (int i = 0; i < N; i++)
        ok &= hs[i] == 0;
    CHECK(ok);
    memset(hs, 7, sizeof hs);
    CHECK_EQ(ph_os_huge_state(os, gap, 4, hs), 0); /* holes: 0 */
    CHECK(hs[0] == 0 && hs[3] == 0);
    /* THP eligibility: never for a range with a hole, or of length 0 */
    CHECK_EQ(ph_os_huge_eligible(os, gap, 4 * PG), 0);
    CHECK_EQ(ph_os_huge_eligible(os, a, 0), 0);

    /* map arguments */
    CHECK(ph_os_map(os, 0, PG, 0) == NULL);
    CHECK_EQ(errno, EINVAL);
    CHECK(ph_os_map(os, PG, 3000, 0) == NULL);
    CHECK_EQ(errno, EINVAL);

    /* process_policy arguments: own 0 or 1, a binding only with own, of
     * distinct nodes of the machine; nothing changes on a refusal */
    uint64_t before = ph_os_allowed_nodes(os);
    int id0 = t->nodes[0].id, twice[2] = {id0, id0}, unknown = 4095;
    CHECK_EQ(ph_os_process_policy(os, 2, NULL, 0), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(ph_os_process_policy(os, 0, &id0, 1), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(ph_os_process_policy(os, 1, NULL, 1), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(ph_os_process_policy(os, 1, &id0, -1), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(ph_os_process_policy(os, 1, &unknown, 1), -1);
    CHECK_EQ(errno, EINVAL);
    if (t->nnodes >= 2) {
        CHECK_EQ(ph_os_process_policy(os, 1, twice, 2), -1);
        CHECK_EQ(errno, EINVAL);
    }
    CHECK_EQ(ph_os_allowed_nodes(os), before);

    /* threads: a node and a CPU of the topology, also in a signal handler */
    int cn = ph_os_current_node(os);
    int cc = ph_os_current_cpu(os);
    CHECK(ph_topo_node_index(t, cn) >= 0);
    CHECK(cc >= 0);
    sig_os = os;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    raise(SIGUSR1);
    CHECK_EQ(sig_node, cn);
    CHECK(sig_cpu >= 0);
    signal(SIGUSR1, SIG_DFL);

    /* probe */
    ph_os_probe pr;
    memset(&pr, 0x7f, sizeof pr);
    CHECK_EQ(ph_os_probe_machine(os, &pr), 0);
    CHECK(pr.move_permitted >= -1 && pr.move_permitted <= 1);
    CHECK(pr.numa_balancing >= -1);
    CHECK(memchr(pr.thp_mode, '\0', sizeof pr.thp_mode) != NULL);

    /* unmap: the pages are gone */
    CHECK_EQ(ph_os_unmap(os, a, N * PG), 0);
    fill(st, N);
    CHECK_EQ(ph_os_query(os, 4, pages, st), 0);
    CHECK(st[0] == -EFAULT && st[3] == -EFAULT);
}

/* ---- the front door: one table of bad arguments, every implementation -- */

/* One bad call per row: what it does, the errno and the words it must fail
 * with.  `mem` is a mapped, touched 4-page region; n0 a node of the machine. */
typedef struct bad_arg {
    const char *what;
    int err;
    const char *msg;
} bad_arg;

static const bad_arg bad_args[] = {
    {"query: pages NULL", EINVAL, "pages and status must not be NULL"},
    {"query: status NULL", EINVAL, "pages and status must not be NULL"},
    {"move: nodes NULL", EINVAL, "pages, nodes and status must not be NULL"},
    {"move: status NULL", EINVAL, "pages, nodes and status must not be NULL"},
    {"bind: preferred, nodes NULL", EINVAL, "preferred node -1"},
    {"bind: preferred, no node", EINVAL, "preferred node -1"},
    {"bind: preferred, node 1000", EINVAL, "preferred node 1000 is not a node"},
    {"bind: interleave, no node", EINVAL, "interleave needs 1 to 64 nodes"},
    {"bind: interleave, 65 nodes", EINVAL, "interleave needs 1 to 64 nodes"},
    {"bind: interleave, node 1000", EINVAL, "interleave node 1000 is not a node"},
    {"bind: interleave, a node twice", EINVAL, "ascending and distinct"},
    {"bind: kind 7", EINVAL, "unknown kind 7"},
    {"bind: bad node, length 0", EINVAL, "preferred node 1000"},
    {"bind: range wraps", EINVAL, "wraps around the address space"},
    {"populate: node -1", EINVAL, "node -1 is not a node of the machine"},
    {"populate: node 1000, length 0", EINVAL, "node 1000 is not a node"},
    {"populate: range wraps", EINVAL, "wraps around the address space"},
    {"map: length 0", EINVAL, "length 0"},
    {"map: alignment 3000", EINVAL, "alignment 3000 is not a power of two"},
    {"map: alignment 2048", EINVAL, "alignment 2048 is not a power of two >= 4096"},
    {"map: unknown flag", EINVAL, "unknown flags 0x80"},
    {"map: THP and hugetlbfs", EINVAL, "THP and hugetlbfs both requested"},
    {"map: THP and NO_THP", EINVAL, "huge pages and NO_THP both requested"},
    {"map: SIZE_MAX bytes", ENOMEM, "is too large"},
    {"unmap: NULL", EINVAL, "is not an address map returned"},
    {"unmap: unaligned", EINVAL, "is not an address map returned"},
    {"unmap: length 0", EINVAL, "length 0"},
    {"advise_huge: range wraps", EINVAL, "wraps around the address space"},
    {"huge_state: huge NULL", EINVAL, "huge must not be NULL"},
    {"huge_state: pages wrap", EINVAL, "wrap around the address space"},
    {"huge_split: unaligned", EINVAL, "is not whole 2 MiB pages"},
    {"huge_split: 4 KiB length", EINVAL, "is not whole 2 MiB pages"},
    {"huge_split: length 0", EINVAL, "is not whole 2 MiB pages"},
    {"huge_pool: 4 KiB pages", EINVAL, "page size 4096 is not 2 MiB or 1 GiB"},
    {"huge_pool: node 1000", EINVAL, "node 1000 is not a node"},
    {"huge_pool: out NULL", EINVAL, "out must not be NULL"},
    {"set_thread_node: node 1000", EINVAL, "node 1000 is not a node"},
    {"probe: out NULL", EINVAL, "out must not be NULL"},
    {"query: no machine", EINVAL, "no machine"},
};

#define NBAD (sizeof bad_args / sizeof bad_args[0])

static long bad_call(size_t k, ph_os *os, char *mem, int n0)
{
    void *pages[2] = {mem, mem + PG};
    int st[2], nodes[2] = {n0, n0}, many[PH_MAX_NODES + 1];
    int bad = 1000;
    uint8_t hs[2];
    ph_os_pool pool;
    void *wrap = (void *)(UINTPTR_MAX - PG + 1);
    for (int i = 0; i <= PH_MAX_NODES; i++)
        many[i] = i;
    switch (k) {
    case 0: return ph_os_query(os, 2, NULL, st);
    case 1: return ph_os_query(os, 2, pages, NULL);
    case 2: return ph_os_move(os, 2, pages, NULL, st);
    case 3: return ph_os_move(os, 2, pages, nodes, NULL);
    case 4: return ph_os_bind(os, mem, PG, PH_BIND_PREFERRED, NULL, 1);
    case 5: return ph_os_bind(os, mem, PG, PH_BIND_PREFERRED, nodes, 0);
    case 6: return ph_os_bind(os, mem, PG, PH_BIND_PREFERRED, &bad, 1);
    case 7: return ph_os_bind(os, mem, PG, PH_BIND_INTERLEAVE, nodes, 0);
    case 8: return ph_os_bind(os, mem, PG, PH_BIND_INTERLEAVE, many, PH_MAX_NODES + 1);
    case 9: return ph_os_bind(os, mem, PG, PH_BIND_INTERLEAVE, &bad, 1);
    case 10: return ph_os_bind(os, mem, PG, PH_BIND_INTERLEAVE, nodes, 2);
    case 11: return ph_os_bind(os, mem, PG, (enum ph_bind_kind)7, nodes, 1);
    case 12: return ph_os_bind(os, mem, 0, PH_BIND_PREFERRED, &bad, 1);
    case 13: return ph_os_bind(os, wrap, 2 * PG, PH_BIND_DEFAULT, NULL, 0);
    case 14: return ph_os_populate_on(os, mem, PG, -1);
    case 15: return ph_os_populate_on(os, mem, 0, 1000);
    case 16: return ph_os_populate_on(os, wrap, 2 * PG, n0);
    case 17: return ph_os_map(os, 0, PG, 0) ? 0 : -1;
    case 18: return ph_os_map(os, PG, 3000, 0) ? 0 : -1;
    case 19: return ph_os_map(os, PG, 2048, 0) ? 0 : -1;
    case 20: return ph_os_map(os, PG, PG, 0x80) ? 0 : -1;
    case 21: return ph_os_map(os, PG, PG, PH_MAP_HUGE_THP | PH_MAP_HUGE_TLBFS) ? 0 : -1;
    case 22: return ph_os_map(os, PG, PG, PH_MAP_HUGE_THP | PH_MAP_NO_THP) ? 0 : -1;
    case 23: return ph_os_map(os, SIZE_MAX, PG, 0) ? 0 : -1;
    case 24: return ph_os_unmap(os, NULL, PG);
    case 25: return ph_os_unmap(os, mem + 1, PG);
    case 26: return ph_os_unmap(os, mem, 0);
    case 27: return ph_os_advise_huge(os, wrap, 2 * PG, 1);
    case 28: return ph_os_huge_state(os, mem, 2, NULL);
    case 29: return ph_os_huge_state(os, wrap, 2, hs);
    /* A fixed address: mem + PG is 2 MiB-aligned for 1 mapping in 512. */
    case 30: return ph_os_huge_split(os, (void *)(uintptr_t)(PH_PAGE_2M + PG), PH_PAGE_2M, 1);
    case 31: return ph_os_huge_split(os, (void *)(uintptr_t)PH_PAGE_2M, PG, 1);
    case 32: return ph_os_huge_split(os, (void *)(uintptr_t)PH_PAGE_2M, 0, 0);
    case 33: return ph_os_huge_pool(os, n0, PG, &pool);
    case 34: return ph_os_huge_pool(os, 1000, PH_PAGE_2M, &pool);
    case 35: return ph_os_huge_pool(os, n0, PH_PAGE_2M, NULL);
    case 36: return ph_os_set_thread_node(os, 1000);
    case 37: return ph_os_probe_machine(os, NULL);
    case 38: return ph_os_query(NULL, 2, pages, st);
    }
    return 0;
}

/* Every row fails with its errno and words, changes nothing the region
 * holds, and (on the simulator) never reaches the implementation. */
static void bad_arguments(ph_os *os, const char *label)
{
    printf("-- front door: %zu bad calls on %s\n", NBAD, label);
    int n0 = os->topo->nodes[0].id;
    char *mem = ph_os_map(os, 4 * PG, PG, PH_MAP_NO_THP);
    CHECK(mem != NULL);
    if (!mem)
        return;
    memset(mem, 0x5c, 4 * PG);
    uint64_t sum = checksum((unsigned char *)mem, 4 * PG);
    void *pages[4];
    int before[4], after[4];
    pages_of(mem, 4, pages);
    int can_query = ph_os_query(os, 4, pages, before) == 0; /* Linux: may be refused */
    ph_os *sim = strcmp(ph_os_name(os), "sim") == 0         ? os
                 : strcmp(ph_os_name(os), "faulty(sim)") == 0 ? ph_os_faulty_inner(os)
                                                               : NULL;
    ph_sim_counters c0, c1;
    if (sim)
        CHECK_EQ(ph_sim_counters_get(sim, &c0), 0);
    for (size_t k = 0; k < NBAD; k++) {
        errno = 0;
        ph_fail(0, "%s", "");
        long rc = bad_call(k, os, mem, n0);
        int ok = rc == -1 && errno == bad_args[k].err &&
                 strstr(ph_error_message(), bad_args[k].msg) != NULL;
        if (!ok)
            fprintf(stderr, "  %s: rc %ld errno %d (want %d), \"%s\"\n", bad_args[k].what, rc,
                    errno, bad_args[k].err, ph_error_message());
        CHECK(ok);
    }
    if (sim) {
        CHECK_EQ(ph_sim_counters_get(sim, &c1), 0);
        CHECK(c1.query_calls == c0.query_calls && c1.move_calls == c0.move_calls &&
              c1.bind_calls == c0.bind_calls && c1.populate_calls == c0.populate_calls);
    }
    if (can_query) {
        CHECK_EQ(ph_os_query(os, 4, pages, after), 0);
        CHECK(memcmp(before, after, sizeof before) == 0);
    }
    CHECK(checksum((unsigned char *)mem, 4 * PG) == sum);

    /* Zero counts and lengths succeed once the rest is valid. */
    CHECK_EQ(ph_os_bind(os, mem, 0, PH_BIND_PREFERRED, &n0, 1), 0);
    CHECK_EQ(ph_os_populate_on(os, mem, 0, n0), 0);
    CHECK_EQ(ph_os_advise_huge(os, mem, 0, 1), 0);
    CHECK_EQ(ph_os_huge_state(os, mem, 0, NULL), 0);
    /* A range is widened to whole pages: an unaligned bind covers them. */
    CHECK_EQ(ph_os_bind(os, mem + 100, PG, PH_BIND_DEFAULT, NULL, 0), 0);
    CHECK_EQ(ph_os_unmap(os, mem, 4 * PG), 0);
}

/* ---- the simulator's own ----------------------------------------------------- */

static void sim_only(ph_os *os)
{
    /* no khugepaged: a 4 KiB range is never made huge by the machine */
    {
        char *t = ph_os_map(os, 2 * PH_PAGE_2M, PH_PAGE_2M, PH_MAP_HUGE_THP);
        CHECK(t != NULL);
        CHECK_EQ(ph_os_huge_eligible(os, t, 2 * PH_PAGE_2M), 0);
        CHECK_EQ(ph_os_unmap(os, t, 2 * PH_PAGE_2M), 0);
    }
    const ph_topology *t = os->topo;
    printf("-- simulator: capacity, counters, costs, threads, huge pages\n");
    CHECK_STR(ph_os_name(os), "sim");
    enum { N = 16 };
    void *pages[N];
    int st[N], nodes[N];

    /* thread binding */
    CHECK_EQ(ph_os_current_node(os), 0); /* no OpenMP: the first node */
    CHECK_EQ(ph_os_set_thread_node(os, 2), 0);
    CHECK_EQ(ph_os_current_node(os), 2);
    CHECK_EQ(ph_topo_cpu_index(t, ph_os_current_cpu(os)), 2);
    CHECK_EQ(ph_os_set_thread_node(os, 77), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(ph_os_current_node(os), 2);

    /* first touch: the asking thread's node; ph_sim_touch names it */
    char *a = ph_os_map(os, N * PG, PG, 0);
    pages_of(a, N, pages);
    memset(a, 1, 4 * PG); /* touched by a thread on node 2 */
    CHECK_EQ(ph_sim_touch(os, a + 4 * PG, 4 * PG, 3), 0);
    fill(st, N);
    CHECK_EQ(ph_os_query(os, 8, pages, st), 0);
    CHECK(st[0] == 2 && st[3] == 2 && st[4] == 3 && st[7] == 3);
    CHECK_EQ(ph_os_set_thread_node(os, -1), 0);
    CHECK_EQ(ph_os_current_node(os), 0);

    /* a memory binding: nodes 0 and 3 only */
    CHECK_EQ(ph_os_allowed_nodes(os), (uint64_t)0xf);
    CHECK_EQ(ph_sim_set_allowed(os, 0x9), 0);
    CHECK_EQ(ph_os_allowed_nodes(os), (uint64_t)0x9);
    char *b = ph_os_map(os, 5 * PG, PG, 0);
    void *bp[5];
    pages_of(b, 5, bp);
    memset(b, 1, 4 * PG);
    for (int i = 0; i < 4; i++)
        nodes[i] = t->nodes[i].id;
    fill(st, N);
    CHECK_EQ(ph_os_move(os, 4, bp, nodes, st), 2);
    CHECK(st[0] == nodes[0] && st[1] == -EINVAL && st[2] == -EINVAL && st[3] == nodes[3]);
    CHECK_EQ(ph_sim_touch(os, b + 4 * PG, PG, 2), 0); /* first touch from node 2 */
    fill(st, N);
    CHECK_EQ(ph_os_query(os, 1, bp + 4, st), 0);
    CHECK(st[0] == nodes[0] || st[0] == nodes[3]);
    CHECK_EQ(ph_os_unmap(os, b, 5 * PG), 0);
    CHECK_EQ(ph_sim_set_allowed(os, 0), 0);
    CHECK_EQ(ph_os_allowed_nodes(os), (uint64_t)0xf);
    /* the same binding set by the process later (process_policy) */
    int bind[2] = {t->nodes[3].id, t->nodes[0].id};
    CHECK_EQ(ph_os_process_policy(os, 1, bind, 2), 0);
    CHECK_EQ(ph_os_allowed_nodes(os), (uint64_t)0x9);
    CHECK_EQ(ph_os_process_policy(os, 1, NULL, 0), 0); /* preferred, interleave... */
    CHECK_EQ(ph_os_allowed_nodes(os), (uint64_t)0xf);

    /* counters and modeled cost: 4 pages 2 -> 1 and 3 -> 1 */
    ph_sim_counters c0, c1;
    CHECK_EQ(ph_sim_counters_get(os, &c0), 0);
    for (int i = 0; i < 8; i++)
        nodes[i] = 1;
    fill(st, N);
    CHECK_EQ(ph_os_move(os, 8, pages, nodes, st), 0);
    CHECK_EQ(ph_sim_counters_get(os, &c1), 0);
    CHECK_EQ(c1.move_calls - c0.move_calls, 1);
    CHECK_EQ(c1.move_pages - c0.move_pages, 8);
    CHECK_EQ(c1.moved_pages - c0.moved_pages, 8);
    double want = t->migrate_ns_call + 4 * t->migrate_ns_4k[2 * t->nnodes + 1] +
                  4 * t->migrate_ns_4k[3 * t->nnodes + 1];
    CHECK(c1.migrate_cost_ns - c0.migrate_cost_ns > want - 1e-6 &&
          c1.migrate_cost_ns - c0.migrate_cost_ns < want + 1e-6);
    CHECK_EQ(ph_sim_node_pages(os, 1), 8);

    /* capacity: node 3 holds 4 pages */
    CHECK_EQ(ph_sim_set_node_capacity(os, 3, 4), 0);
    for (int i = 0; i < 8; i++)
        nodes[i] = 3;
    fill(st, N);
    CHECK_EQ(ph_os_move(os, 8, pages, nodes, st), 4);
    int n3 = 0, nomem = 0;
    for (int i = 0; i < 8; i++) {
        n3 += st[i] == 3;
        nomem += st[i] == -ENOMEM;
    }
    CHECK(n3 == 4 && nomem == 4);
    fill(st, N);
    CHECK_EQ(ph_os_query(os, 8, pages, st), 0);
    int on1 = 0; /* the refused ones stayed on node 1 */
    for (int i = 0; i < 8; i++)
        on1 += st[i] == 1;
    CHECK_EQ(on1, 4);
    /* populate beyond the capacity: -1/ENOMEM, nothing changes */
    CHECK_EQ(ph_os_populate_on(os, a + 8 * PG, 8 * PG, 3), -1);
    CHECK_EQ(errno, ENOMEM);
    CHECK_CONTAINS(ph_error_message(), "node 3 is full");
    fill(st, N);
    CHECK_EQ(ph_os_query(os, 8, pages + 8, st), 0);
    CHECK(st[0] == -ENOENT && st[7] == -ENOENT);
    /* a first touch on a full node falls back to the nearest with room */
    CHECK_EQ(ph_sim_touch(os, a + 8 * PG, PG, 3), 0);
    fill(st, N);
    CHECK_EQ(ph_os_query(os, 1, pages + 8, st), 0);
    CHECK(st[0] >= 0 && st[0] != 3);
    CHECK_EQ(ph_sim_set_node_capacity(os, 3, 0), 0);

    /* pages parked elsewhere and brought back (the userfaultfd sampler's
     * stash) keep their homes however many trips are told between two
     * settling calls: 200 rounds of 100 pages out and back make 40000
     * notes, more than the first-touch ring holds (a ring once carried
     * them, and a full one dropped the pages still out at its end) */
    {
        enum { NP = 100, ROUNDS = 200 };
        char *x = ph_os_map(os, NP * PG, PG, 0);
        char *y = mmap(NULL, NP * PG, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        CHECK(x != NULL && y != MAP_FAILED);
        void *xp[NP];
        int xto[NP], xst[NP];
        memset(x, 5, NP * PG);
        for (int i = 0; i < NP; i++) {
            xp[i] = x + (size_t)i * PG;
            xto[i] = i % 4;
        }
        CHECK_EQ(ph_os_move(os, NP, xp, xto, xst), 0);
        CHECK_EQ(ph_sim_counters_get(os, &c0), 0);
        for (int r = 0; r < ROUNDS; r++) {
            for (int i = 0; i < NP; i++)
                ph_os_note_moved(os, y + (size_t)i * PG, x + (size_t)i * PG, PG);
            for (int i = 0; i < NP; i++)
                ph_os_note_moved(os, x + (size_t)i * PG, y + (size_t)i * PG, PG);
        }
        fill(xst, NP);
        CHECK_EQ(ph_os_query(os, NP, xp, xst), 0);
        int kept = 0;
        for (int i = 0; i < NP; i++)
            kept += xst[i] == i % 4;
        CHECK_EQ(kept, NP);
        CHECK_EQ(ph_sim_counters_get(os, &c1), 0);
        CHECK_EQ(c1.carried_pages - c0.carried_pages, 2u * NP * ROUNDS);
        CHECK_EQ(c1.touch_lost, c0.touch_lost);
        munmap(y, NP * PG);
        CHECK_EQ(ph_os_unmap(os, x, NP * PG), 0);
    }

    /* discarded memory loses its home */
    CHECK_EQ(madvise(a, 2 * PG, MADV_DONTNEED), 0);
    fill(st, N);
    CHECK_EQ(ph_os_query(os, 3, pages, st), 0);
    CHECK(st[0] == -ENOENT && st[1] == -ENOENT && st[2] >= 0);
    CHECK_EQ(ph_os_unmap(os, a, N * PG), 0);

    /* memory the simulator did not map: tracked on sight */
    static char foreign[64 * 4096] __attribute__((aligned(4096)));
    void *fp[3] = {foreign, foreign + 10 * PG, foreign + 63 * PG};
    memset(foreign + 10 * PG, 9, PG);
    fill(st, 3);
    CHECK_EQ(ph_os_query(os, 3, fp, st), 0);
    CHECK_EQ(st[1], 0);
    int to2[3] = {2, 2, 2};
    fill(st, 3);
    CHECK_EQ(ph_os_move(os, 3, fp, to2, st), 2);
    CHECK_EQ(st[1], 2);
    CHECK_EQ(st[0], -ENOENT);

    /* a 2 MiB page moves as a whole; interleave goes by 2 MiB page */
    char *h = ph_os_map(os, 4 * PH_PAGE_2M, PG, PH_MAP_HUGE_THP);
    CHECK(h != NULL);
    uint8_t hs[8];
    CHECK_EQ(ph_os_huge_state(os, h + PH_PAGE_2M - 4 * PG, 8, hs), 0);
    CHECK(hs[0] == 1 && hs[7] == 1);
    int all[4] = {0, 1, 2, 3};
    CHECK_EQ(ph_os_bind(os, h, 4 * PH_PAGE_2M, PH_BIND_INTERLEAVE, all, 4), 0);
    memset(h, 3, 4 * PH_PAGE_2M);
    void *hp[4] = {h, h + PH_PAGE_2M + 5 * PG, h + 2 * PH_PAGE_2M + 511 * PG,
                   h + 3 * PH_PAGE_2M + 100 * PG};
    fill(st, 4);
    CHECK_EQ(ph_os_query(os, 4, hp, st), 0);
    uintptr_t v0 = (uintptr_t)h / PH_PAGE_2M;
    for (int i = 0; i < 4; i++)
        CHECK_EQ(st[i], (int)((v0 + (uintptr_t)i) % 4));
    CHECK_EQ(ph_sim_counters_get(os, &c0), 0);
    void *sub[1] = {h + 17 * PG};
    int tgt[1] = {(int)((v0 + 1) % 4)};
    fill(st, 1);
    CHECK_EQ(ph_os_move(os, 1, sub, tgt, st), 0);
    CHECK_EQ(ph_sim_counters_get(os, &c1), 0);
    void *probe[2] = {h, h + PH_PAGE_2M - PG};
    fill(st, 2);
    CHECK_EQ(ph_os_query(os, 2, probe, st), 0);
    CHECK(st[0] == tgt[0] && st[1] == tgt[0]);
    int from = (int)(v0 % 4);
    want = t->migrate_ns_call + t->migrate_ns_2m[from * t->nnodes + tgt[0]];
    CHECK(c1.migrate_cost_ns - c0.migrate_cost_ns > want - 1e-6 &&
          c1.migrate_cost_ns - c0.migrate_cost_ns < want + 1e-6);
    CHECK_EQ(ph_os_unmap(os, h, 4 * PH_PAGE_2M), 0);
}

/* ---- Linux's own ---------------------------------------------------------------- */

static void linux_only(ph_os *os)
{
    printf("-- linux: zero page, huge page methods, hugetlbfs, threads\n");
    CHECK_STR(ph_os_name(os), "linux");
    CHECK_EQ(ph_os_set_thread_node(os, 0), -1);
    CHECK_EQ(errno, ENOTSUP);
    /* no memory binding here: every node with memory (at least one) */
    uint64_t all = ph_os_allowed_nodes(os);
    CHECK(all != 0);
    /* one the process sets later: its nodes only; lifted: all again */
    int first = -1;
    for (int i = 0; i < 64 && first < 0; i++)
        if ((all >> i) & 1u)
            first = i;
    int id = os->topo->nodes[first].id;
    CHECK_EQ(ph_os_process_policy(os, 1, &id, 1), 0);
    CHECK_EQ(ph_os_allowed_nodes(os), UINT64_C(1) << first);
    CHECK_EQ(ph_os_process_policy(os, 0, NULL, 0), 0);
    CHECK_EQ(ph_os_allowed_nodes(os), all);

    /* the zero page is not a home */
    char *z = ph_os_map(os, 4 * PG, PG, PH_MAP_NO_THP);
    CHECK(z != NULL);
    volatile char r = z[PG];
    (void)r;
    void *zp[2] = {z, z + PG};
    int st[2], nd[2] = {os->topo->nodes[0].id, os->topo->nodes[0].id};
    fill(st, 2);
    CHECK_EQ(ph_os_query(os, 2, zp, st), 0);
    CHECK(st[0] == -ENOENT && st[1] == -ENOENT);
    fill(st, 2);
    CHECK_EQ(ph_os_move(os, 2, zp, nd, st), 2);
    CHECK(st[0] == -ENOENT && st[1] == -ENOENT);
    CHECK_EQ(ph_os_unmap(os, z, 4 * PG), 0);

    /* huge page methods agree on a THP range (when THP gives us any).  The
     * exact ones must match (khugepaged may collapse a range between two
     * readings: a few tries); smaps, an approximation, may mark more but
     * never less. */
    char *h = ph_os_map(os, 4 * PH_PAGE_2M, PG, PH_MAP_HUGE_THP);
    CHECK(h != NULL);
    memset(h, 1, 4 * PH_PAGE_2M);
    size_t n = 4 * PH_PAGE_2M / PG;
    uint8_t *m[4];
    int got[4], same = 0;
    for (int k = 0; k < 4; k++)
        m[k] = calloc(n, 1);
    for (int attempt = 0; attempt < 3 && !same; attempt++) {
        for (int k = 0; k < 4; k++) {
            int prev = ph_os_linux_huge_method(k);
            got[k] = ph_os_huge_state(os, h, n, m[k]) == 0;
            ph_os_linux_huge_method(prev);
        }
        same = 1;
        for (int k = 1; k < 3; k++)
            if (got[k] && memcmp(m[0], m[k], n) != 0)
                same = 0;
    }
    size_t huge_pages = 0;
    for (size_t i = 0; i < n; i++)
        huge_pages += m[0][i];
    printf("   THP: %zu of %zu pages huge (auto); kpageflags %s, PAGEMAP_SCAN %s\n",
           huge_pages, n, got[1] ? "yes" : "no", got[2] ? "yes" : "no");
    CHECK(got[0] && got[3]);
    CHECK(same);
    int covers = 1;
    for (size_t i = 0; i < n; i++)
        covers &= !m[0][i] || m[3][i];
    CHECK(covers);
    for (int k = 0; k < 4; k++)
        free(m[k]);
    /* THP eligibility, as khugepaged sees it: a THP mapping is unless THP
     * is off here, a mapping with THP turned off never is, nor a range
     * that runs into a hole */
    char thp[128] = "";
    int thp_on = ph_read_text("/sys/kernel/mm/transparent_hugepage/enabled", thp,
                              sizeof thp) > 0 && !strstr(thp, "[never]");
    CHECK_EQ(ph_os_huge_eligible(os, h, 4 * PH_PAGE_2M), thp_on);
    CHECK_EQ(ph_os_huge_eligible(os, h + PG, 2 * PG), thp_on);
    CHECK_EQ(munmap(h + 2 * PH_PAGE_2M, PH_PAGE_2M), 0);
    CHECK_EQ(ph_os_huge_eligible(os, h, 2 * PH_PAGE_2M), thp_on);
    CHECK_EQ(ph_os_huge_eligible(os, h, 4 * PH_PAGE_2M), 0);
    CHECK_EQ(ph_os_unmap(os, h, 4 * PH_PAGE_2M), 0);
    char *nt = ph_os_map(os, 2 * PH_PAGE_2M, PH_PAGE_2M, PH_MAP_NO_THP);
    CHECK(nt != NULL);
    memset(nt, 1, 2 * PH_PAGE_2M);
    CHECK_EQ(ph_os_huge_eligible(os, nt, 2 * PH_PAGE_2M), 0);
    CHECK_EQ(ph_os_unmap(os, nt, 2 * PH_PAGE_2M), 0);

    /* hugetlbfs: an empty pool fails at map time with a message */
    char buf[64] = "";
    long pool = ph_read_text("/proc/sys/vm/nr_hugepages", buf, sizeof buf) > 0
                    ? strtol(buf, NULL, 10)
                    : -1;
    void *tl = ph_os_map(os, PH_PAGE_2M, PG, PH_MAP_HUGE_TLBFS);
    if (pool == 0) {
        CHECK(tl == NULL);
        CHECK_EQ(errno, ENOMEM);
        CHECK_CONTAINS(ph_error_message(), "hugetlbfs pool");
    } else if (tl) {
        uint8_t hs[2];
        CHECK_EQ(ph_os_populate_on(os, tl, PH_PAGE_2M, os->topo->nodes[0].id), 0);
        CHECK_EQ(ph_os_huge_state(os, tl, 2, hs), 0);
        CHECK(hs[0] == 1);
        CHECK_EQ(ph_os_unmap(os, tl, PH_PAGE_2M), 0);
    }

    /* LOCAL is a policy of the range's own (MPOL_LOCAL, 4), DEFAULT none
     * (0): what the kernel's NUMA balancing looks at */
    char *lp = ph_os_map(os, 8 * PG, PG, PH_MAP_NO_THP);
    CHECK(lp != NULL);
    int mode = -1;
    CHECK_EQ(ph_os_bind(os, lp, 8 * PG, PH_BIND_LOCAL, NULL, 0), 0);
    CHECK_EQ(syscall(SYS_get_mempolicy, &mode, NULL, 0UL, lp + PG, 2UL /* MPOL_F_ADDR */), 0);
    CHECK_EQ(mode, 4);
    memset(lp, 1, 8 * PG); /* first touch still places */
    void *lq[1] = {lp};
    int lst[1];
    CHECK_EQ(ph_os_query(os, 1, lq, lst), 0);
    CHECK(lst[0] >= 0);
    CHECK_EQ(ph_os_bind(os, lp, 8 * PG, PH_BIND_DEFAULT, NULL, 0), 0);
    CHECK_EQ(syscall(SYS_get_mempolicy, &mode, NULL, 0UL, lp + PG, 2UL), 0);
    CHECK_EQ(mode, 0);
    CHECK_EQ(ph_os_unmap(os, lp, 8 * PG), 0);

    /* a move to a node the topology lacks is -EINVAL, per page */
    char *p = ph_os_map(os, 2 * PG, PG, 0);
    memset(p, 1, 2 * PG);
    void *pp[2] = {p, p + PG};
    int bad[2] = {os->topo->nodes[0].id, 63};
    if (ph_topo_node_index(os->topo, 63) < 0) {
        fill(st, 2);
        CHECK_EQ(ph_os_move(os, 2, pp, bad, st), 1);
        CHECK_EQ(st[0], os->topo->nodes[0].id);
        CHECK_EQ(st[1], -EINVAL);
    }
    CHECK_EQ(ph_os_unmap(os, p, 2 * PG), 0);
}

/* fork() while another thread is inside the machine: with the caller's
 * pthread_atfork handlers taking the machine's locks innermost (os.h),
 * every child finds the machine whole and can use it at once.  Without
 * them a child whose fork met the other thread inside an operation waits
 * for a lock nobody will release. */
static _Atomic(ph_os *) fork_os;
static void fk_prepare(void) { ph_os_fork_prepare(atomic_load(&fork_os)); }
static void fk_parent(void) { ph_os_fork_parent(atomic_load(&fork_os)); }
static void fk_child(void) { ph_os_fork_child(atomic_load(&fork_os)); }

typedef struct busy_arg {
    ph_os *os;
    char *mem;
    atomic_int stop;
} busy_arg;

static void *busy(void *arg)
{
    busy_arg *b = arg;
    void *pg[2] = {b->mem, b->mem + PG};
    int st[2];
    while (!atomic_load(&b->stop)) {
        ph_os_note_moved(b->os, b->mem + 2 * PG, b->mem, 2 * PG);
        ph_os_note_moved(b->os, b->mem, b->mem + 2 * PG, 2 * PG);
        (void)ph_os_query(b->os, 2, pg, st);
    }
    return NULL;
}

static void fork_while_busy(ph_os *os, const char *name)
{
    static int registered;
    if (!registered) {
        CHECK_EQ(pthread_atfork(fk_prepare, fk_parent, fk_child), 0);
        registered = 1;
    }
    printf("-- %s: fork() while another thread uses the machine\n", name);
    busy_arg b = {.os = os};
    b.mem = ph_os_map(os, 4 * PG, PG, PH_MAP_NO_THP);
    CHECK(b.mem != NULL);
    if (!b.mem)
        return;
    memset(b.mem, 1, 4 * PG);
    atomic_store(&fork_os, os);
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, busy, &b), 0);
    int stuck = 0, bad = 0;
    for (int round = 0; round < 200 && !stuck; round++) {
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid < 0)
            break;
        if (pid == 0) {
            void *pg[1] = {b.mem};
            int st[1];
            ph_os_note_moved(os, b.mem + 3 * PG, b.mem + PG, PG);
            _exit(ph_os_query(os, 1, pg, st) == 0 && legal(os, st[0]) ? 0 : 3);
        }
        int status = 0;
        struct timespec nap = {0, 1000000};
        pid_t w = 0;
        for (int ms = 0; ms < 10000 && (w = waitpid(pid, &status, WNOHANG)) == 0; ms++)
            nanosleep(&nap, NULL);
        if (w == 0) {
            stuck = 1;
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
        } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            bad++;
        }
    }
    atomic_store(&b.stop, 1);
    CHECK_EQ(pthread_join(t, NULL), 0);
    atomic_store(&fork_os, NULL);
    CHECK_EQ(stuck, 0);
    CHECK_EQ(bad, 0);
    CHECK_EQ(ph_os_unmap(os, b.mem, 4 * PG), 0);
}

int main(void)
{
    ph_options_init();
    ph_topology *st = ph_topo_from_spec("nodes=4,cpus_per_node=1");
    CHECK(st != NULL);
    if (st) {
        ph_os *sim = ph_os_sim_open(st);
        CHECK(sim != NULL);
        if (sim) {
            suite(sim, "sim");
            bad_arguments(sim, "sim");
            sim_only(sim);
            fork_while_busy(sim, "sim");
            ph_os_close(sim);
        }
        /* the suite also holds through the fault wrapper with no faults */
        ph_os *w = ph_os_faulty_open(ph_os_sim_open(st), NULL);
        CHECK(w != NULL);
        if (w) {
            CHECK_STR(ph_os_name(w), "faulty(sim)");
            suite(w, "faulty(sim), no faults planned");
            bad_arguments(w, "faulty(sim)");
            fork_while_busy(w, "faulty(sim)");
            ph_os_close(w);
        }
    }

    ph_topology *lt = ph_topo_from_hwloc();
    if (!lt) {
        printf("-- linux: no hwloc topology (%s): Linux part skipped\n", ph_error_message());
    } else {
        ph_os *lx = ph_os_linux_open(lt);
        CHECK(lx != NULL);
        ph_os_probe pr;
        if (lx && ph_os_probe_machine(lx, &pr) == 0 && pr.move_permitted == 1) {
            printf("-- linux probe: numa_balancing %d, THP %s, hugetlbfs 2M %d\n",
                   pr.numa_balancing, pr.thp_mode, pr.huge_2m_hugetlbfs);
            suite(lx, "linux");
            bad_arguments(lx, "linux");
            linux_only(lx);
            fork_while_busy(lx, "linux");
        } else if (lx) {
            bad_arguments(lx, "linux");
            printf("-- linux: move_pages(2) not permitted here (errno %d): Linux part "
                   "skipped\n",
                   pr.move_errno);
        }
        ph_os_close(lx);
        ph_topo_free(lt);
    }
    ph_topo_free(st);
    return check_summary("test_os_contract");
}
