/*
 * bench_engine.c -- what one invocation of the migration engine costs per
 * hot page, and what its bookkeeping costs in memory.
 *
 * The real engine (src/engine/) runs on the simulated machine (os_sim.c)
 * with the synthetic access source, as tests/unit/test_engine.c drives it:
 * iterative mechanism, synchronous invocations, full snapshot (every page
 * is reported at every interval), never cold, never stable (cold_after =
 * stable_after = 0, so every ph_engine_iteration_end() runs the whole
 * algorithm).
 *
 * THE HOT ARRAY.  Default 16 Mi pages = 64 GiB of virtual memory.  The
 * simulator keeps homes only for pages that are resident for real (a
 * 4 KiB page that is not resident loses its home, and populate_on()
 * faults the range in), and a 64 GiB private mapping would not even be
 * accepted by the kernel's overcommit heuristic on a 24 GB machine.  So
 * the array is an *alias*: a 64 GiB PROT_NONE reservation over which one
 * 64 MiB memfd is mapped again and again (MAP_SHARED | MAP_FIXED).  Every
 * page of the array is then resident as far as mincore() and pagemap can
 * tell, and populate_on() gives it a home by faulting a page-table entry
 * onto the shared memfd page: the real memory is the 64 MiB memfd plus
 * 8 bytes of page table per page (128 MiB at 16 Mi pages).  The process's
 * RSS counts every alias mapping (RssShmem), so section 1 prints RssAnon
 * and the page tables instead, and only the memory section (which does not
 * use the alias) reads RSS.  The simulator tracks the
 * alias as foreign memory in 2 MiB ranges (one range per 512 pages
 * instead of one for the whole array): that only changes its own query
 * and move cost.  --private maps the array with the simulator's map() and
 * faults it for real instead (4 KiB of RSS per page; limited to 1 Mi
 * pages = 4 GiB): the check that the alias does not change the result.
 *
 * SECTION 1: time per page.  Homes: nodes own consecutive blocks of the
 * array (multiples of 512 pages).  Cases, each a fresh engine:
 *   4K cold, never sampled      the model reports no access: the engine
 *                               drains nothing, and an interval without
 *                               samples is no invocation (no evidence);
 *   4K hot, every page local    every page gets HOT_ACCESSES accesses from
 *                               its home node: scanned, no candidate;
 *   4K cold, counts allocated   the same engine after that: every page
 *                               has counts, all zero, nothing drained:
 *                               no invocation either;
 *   4K hot, every page moves    the accesses come from the node after the
 *                               home (rotating, so no ping-pong): every
 *                               page moves in every invocation;
 *   2M hot, ... local / moves   the same two after the simulator records
 *                               the array as 2 MiB pages (huge.c: a unit
 *                               is decided and moved as a whole).
 * Per invocation: wall time of ph_engine_iteration_end() / pages (and the
 * thread's CPU time, steadier on a shared machine: the engine is sync), split
 * with the engine's own log (sampler_ns = drain of the source into the
 * counts, engine_ns = the algorithm including move_ns; "other" = the
 * rest: roll of the counts, arm/disarm).  The first invocation of an
 * engine (allocates the counts, asks the OS for every home) and the
 * refresh invocations (every PH_HOME_REFRESH = 8th scan asks the OS for
 * every home again) are shown apart; the median is over the others.
 * "model" is the synthetic source alone (same model, drained into a
 * callback that does nothing): the simulator's stand-in for the sampler,
 * inside the wall time but not the engine's work.  It is timed just
 * before each timed invocation, and "-model" is the median of the
 * differences, round by round: a busy neighbour slows both sides of a
 * round alike (the model timed in a run of its own carried its own
 * noise into the difference).
 *
 * SECTION 2: memory.  An area never touched (a PROT_NONE reservation,
 * no homes) on 4 and 16 nodes, with no page sampled, 1 page in 512
 * sampled (spread: one page in every 512-page chunk; block: the first
 * 1/512 of the pages), every page sampled.  Two invocations each, then
 * bookkeeping_bytes / hot pages (ph_engine_get_totals), and the process
 * RSS (/proc/self/statm) growth from before the engine was created, with
 * the engine alive, and its peak (VmHWM after clear_refs 5); malloc_trim()
 * before each baseline so that what an earlier case freed is not counted.
 *
 * SECTION 3: where the time goes.  The engine's per-page steps replayed
 * on a standalone ph_hot with the same layout (manual timers, in thread CPU
 * time: the machine it was written on is shared and noisy):
 * ph_hot_add_samples on batches of 256 (the drain's ingest), the scan that listed the sampled pages, the
 * competitive criterion with the remote-latency sums, ph_hot_roll, as
 * separate passes (invoke.c before it became one pass per block).  An
 * approximation of src/engine/invoke.c, not a measurement of it (it has
 * no work arrays to grow; bench/README.md has a perf cpu-clock profile of
 * the real thing, taken with --case).  The last line is one pass per
 * chunk that sums each page's counts, runs the criterion only for a page
 * with a remote access, and rolls the counts while they are in the cache:
 * the shape invoke_area() has now, without its list of sampled pages,
 * homes, 2 MiB units and statistics.
 *
 * Usage: bench_engine [--pages N] [--rounds R] [--nodes N] [--private]
 *                     [--case cold|hot|move|huge]
 *   --pages   hot array size in 4 KiB pages (rounded up to 512), default 16 Mi
 *   --rounds  timed invocations per case, default 7
 *   --nodes   nodes of the simulated machine of section 1 (3..64), default 4
 *   --case    only that group of section 1 (hot: "4K hot, every page local"
 *             and "4K cold, counts allocated"; huge: both 2M cases), no
 *             sections 2 and 3 -- to run under `perf record -e cpu-clock`
 *   --private the array from the simulator's map(), faulted for real
 */
#include "bench_common.h"
#include "sim/engine_rig.h"

#include "base/clock.h"
#include "base/error.h"
#include "config/options.h"
#include "engine/engine.h"
#include "engine/hot.h"
#include "machine/machine.h"
#include "move/mover.h"
#include "os/os.h"
#include "criteria/criteria.h"
#include "sample/source.h"
#include "topo/topo.h"

#include <fcntl.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PG ((size_t)4096)
#define UNIT_PAGES ((size_t)512)
#define UNIT_BYTES (UNIT_PAGES * PG)
#define MAX_ROUNDS 101
#define HOT_ACCESSES 1000u           /* accesses of a hot page per interval */
#define ALIAS_BYTES ((size_t)64 << 20) /* the memfd behind the alias */
#define PRIVATE_MAX_PAGES ((size_t)1 << 20)
#define REFRESH_EVERY 8              /* PH_HOME_REFRESH of invoke.c */

static void die(const char *what)
{
    fprintf(stderr, "bench_engine: %s: %s\n", what, ph_error_message());
    exit(1);
}

/* ---- process memory --------------------------------------------------------- */

static size_t rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size = 0, res = 0;
    if (!f)
        return 0;
    if (fscanf(f, "%lu %lu", &size, &res) != 2)
        res = 0;
    fclose(f);
    return (size_t)res * (size_t)sysconf(_SC_PAGESIZE);
}

/* What section 1 really holds: private memory, page tables, and the alias
 * mappings that RSS counts (they map the same 64 MiB memfd). */
static void print_real_memory(const char *when)
{
    double mib = 1024.0 * 1024.0;
    printf("   memory %s: RssAnon %.0f MiB, page tables %.0f MiB, RssShmem %.0f MiB "
           "(the alias: not memory)\n",
           when, (double)bench_status_bytes("RssAnon") / mib,
           (double)bench_status_bytes("VmPTE") / mib, (double)bench_status_bytes("RssShmem") / mib);
}

/* Reset VmHWM to the current RSS (clear_refs 5).  0 or -1. */
static int reset_hwm(void)
{
    int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int ok = write(fd, "5", 1) == 1;
    close(fd);
    return ok ? 0 : -1;
}

/* ---- the hot array ------------------------------------------------------------ */

typedef struct backing {
    char *base;          /* 2 MiB aligned */
    size_t bytes;
    char *resv;          /* the whole reservation (alias, bare) */
    size_t resv_bytes;
    int fd;              /* memfd (alias), -1 */
    ph_os *sim;          /* private: the simulator that mapped it */
} backing;

/* A PROT_NONE reservation of bytes, 2 MiB aligned, costing no memory. */
static void reserve(backing *b, size_t bytes)
{
    memset(b, 0, sizeof *b);
    b->fd = -1;
    b->resv_bytes = bytes + UNIT_BYTES;
    b->resv = mmap(NULL, b->resv_bytes, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (b->resv == MAP_FAILED) {
        perror("bench_engine: mmap reservation");
        exit(1);
    }
    b->base = (char *)(((uintptr_t)b->resv + UNIT_BYTES - 1) & ~(uintptr_t)(UNIT_BYTES - 1));
    b->bytes = bytes;
}

/* The alias: one memfd of ALIAS_BYTES mapped over the whole reservation. */
static void alias_open(backing *b, size_t bytes)
{
    reserve(b, bytes);
    b->fd = memfd_create("bench_engine", MFD_CLOEXEC);
    if (b->fd < 0 || ftruncate(b->fd, (off_t)ALIAS_BYTES) != 0 ||
        fallocate(b->fd, 0, 0, (off_t)ALIAS_BYTES) != 0) {
        perror("bench_engine: memfd");
        exit(1);
    }
    for (size_t off = 0; off < bytes; off += ALIAS_BYTES) {
        size_t len = bytes - off < ALIAS_BYTES ? bytes - off : ALIAS_BYTES;
        if (mmap(b->base + off, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                 b->fd, 0) == MAP_FAILED) {
            perror("bench_engine: mmap alias");
            exit(1);
        }
    }
}

static void private_open(backing *b, ph_os *sim, size_t bytes)
{
    memset(b, 0, sizeof *b);
    b->fd = -1;
    b->sim = sim;
    b->bytes = bytes;
    b->base = ph_os_map(sim, bytes, UNIT_BYTES, PH_MAP_NO_THP);
    if (!b->base)
        die("map");
}

static void backing_close(backing *b)
{
    if (b->sim)
        ph_os_unmap(b->sim, b->base, b->bytes);
    else
        munmap(b->resv, b->resv_bytes);
    if (b->fd >= 0)
        close(b->fd);
    memset(b, 0, sizeof *b);
}

/* ---- the workload model ---------------------------------------------------------- */

enum model_kind {
    M_NONE,    /* no access */
    M_LOCAL,   /* HOT_ACCESSES from the page's home */
    M_NEXT,    /* HOT_ACCESSES from the node after the home */
    M_SPREAD,  /* 1 access to the first page of every 512 */
    M_BLOCK,   /* 1 access to each of the first pages/512 pages */
    M_FULL     /* 1 access to every page */
};

typedef struct model {
    int kind;
    int nnodes;
    size_t npages;
    size_t per_node_pages;  /* pages of each node's block (x 512) */
    unsigned shift;         /* page p is on (home0(p) + shift) % nnodes */
} model;

static int home0(const model *m, size_t p)
{
    size_t k = p / m->per_node_pages;
    return k < (size_t)m->nnodes ? (int)k : m->nnodes - 1;
}

static int home_now(const model *m, size_t p)
{
    return (int)(((unsigned)home0(m, p) + m->shift) % (unsigned)m->nnodes);
}

static int model_fn(void *arg, size_t range, size_t page, uint32_t *acc, int nnodes)
{
    const model *m = arg;
    (void)range;
    switch (m->kind) {
    case M_LOCAL:
        acc[home_now(m, page)] = HOT_ACCESSES;
        break;
    case M_NEXT:
        acc[(home_now(m, page) + 1) % nnodes] = HOT_ACCESSES;
        break;
    case M_SPREAD:
        if (page % UNIT_PAGES == 0)
            acc[(page / UNIT_PAGES) % (size_t)nnodes] = 1;
        break;
    case M_BLOCK:
        if (page < m->npages / UNIT_PAGES)
            acc[page % (size_t)nnodes] = 1;
        break;
    case M_FULL:
        acc[page % (size_t)nnodes] = 1;
        break;
    default:
        break;
    }
    return 0;
}

static void count_samples(void *arg, const ph_sample *s, size_t n)
{
    (void)s;
    *(size_t *)arg += n;
}

/* The synthetic source alone over a case's model, drained in full into a
 * callback that only counts: the stand-in for the sampler that every
 * invocation's wall time includes.  Timed once before each timed
 * invocation, so that "-model" subtracts what the model cost in the same
 * moment of the run, not in a run of its own. */
typedef struct model_clock {
    ph_source *s;
    size_t pages;
} model_clock;

static model_clock model_clock_open(const ph_topology *t, model *m, void *base, size_t pages)
{
    model_clock c = {ph_synth_open(t, model_fn, m, 0, 0.0, 7), pages};
    if (!c.s || c.s->ops->add_range(c.s, base, pages * PG) != 0)
        die("synthetic source");
    return c;
}

/* One full drain of the model: ns per page. */
static double model_clock_ns(model_clock *c)
{
    size_t got = 0;
    c->s->ops->arm(c->s, 1);
    uint64_t t0 = ph_now_ns();
    c->s->ops->drain(c->s, count_samples, &got);
    double ns = (double)(ph_now_ns() - t0) / (double)c->pages;
    c->s->ops->disarm(c->s);
    return ns;
}

static void model_clock_close(model_clock *c)
{
    c->s->ops->close(c->s);
    c->s = NULL;
}

/* ---- the engine ------------------------------------------------------------------- */

static ph_topology *topo_of(int nodes)
{
    char spec[160];
    snprintf(spec, sizeof spec,
             "nodes=%d,cpus_per_node=1,sockets=%d,local=10,remote=12%s", nodes,
             nodes % 2 == 0 && nodes >= 4 ? 2 : 1,
             nodes % 2 == 0 && nodes >= 4 ? ",remote_socket=32" : "");
    ph_topology *t = ph_topo_from_spec(spec);
    if (!t)
        die("topology");
    return t;
}

static ph_engine *engine_open(const ph_topology *t, ph_os *sim, ph_mover *mv, model *m)
{
    ph_engine_cfg c = rig_engine_cfg();
    c.sample_pages = 0;
    c.stable_after = 0;   /* never deactivates */
    c.cold_after = 0;     /* never cold: every invocation scans */
    c.critical_pages = 0;
    return rig_engine_open(t, sim, mv, &c, model_fn, m, 0, 0.0, 7);
}

/* One invocation, in ns per page. */
typedef struct inv_ns {
    double wall_ns, cpu_time_ns, drain_ns, engine_ns, move_ns, other_ns; /* per page */
    uint64_t scanned, candidates, migrated, huge_migrated;
} inv_ns;

static inv_ns invoke_timed(ph_engine *e, size_t pages)
{
    size_t first = ph_engine_log(e, 0, NULL, 0);
    uint64_t c0 = bench_thread_cpu_ns(), t0 = ph_now_ns();
    if (ph_engine_iteration_end(e) != 0)
        die("ph_engine_iteration_end");
    uint64_t wall = ph_now_ns() - t0, cpu = bench_thread_cpu_ns() - c0; /* ns */
    ph_invocation inv;
    if (ph_engine_log(e, first, &inv, 1) != first + 1) {
        /* an interval that trapped nothing is no invocation (engine.c:
         * no evidence, nothing decided): only the drain and the time */
        memset(&inv, 0, sizeof inv);
        inv.sampler_ns = 0;
    }
    double p = (double)pages;
    inv_ns r;
    r.wall_ns = (double)wall / p;
    r.cpu_time_ns = (double)cpu / p;
    r.drain_ns = (double)inv.sampler_ns / p;
    r.engine_ns = (double)(inv.engine_ns - inv.move_ns) / p;
    r.move_ns = (double)inv.move_ns / p;
    r.other_ns = r.wall_ns - r.drain_ns - r.engine_ns - r.move_ns;
    r.scanned = inv.scanned;
    r.candidates = inv.candidates;
    r.migrated = inv.migrated;
    r.huge_migrated = inv.huge_migrated;
    return r;
}

/* ---- section 1: time per page ------------------------------------------------------ */

typedef struct bench {
    ph_topology *topo;
    ph_os *sim;
    ph_mover *mover;
    backing arr;
    size_t pages;
    int rounds;
    model m;
    double goal_worst_ns;      /* largest median (wall) of the cases */
    double goal_worst_ex_ns;   /* largest median minus the model */
    double goal_worst_cpu_ns;  /* largest median CPU time */
    /* the goal's case (4K hot, every page local): median minus the
     * model (below 0 when the model's own time varied more than the
     * engine took), and the same over REFRESH_EVERY invocations with one
     * refresh among them; goal_hot_seen: the case ran */
    double goal_hot_ns, goal_hot_refresh_ns;
    int goal_hot_seen;
} bench;

/* Expected outcome of every invocation of a case. */
enum expect { X_NOTHING, X_SCAN_ALL, X_MOVE_ALL, X_MOVE_UNITS };

static void check_inv(const bench *b, const inv_ns *r, enum expect x, const char *name)
{
    int ok = 1;
    switch (x) {
    case X_NOTHING:
        ok = r->scanned == 0 && r->migrated == 0;
        break;
    case X_SCAN_ALL:
        ok = r->scanned == b->pages && r->candidates == 0 && r->migrated == 0;
        break;
    case X_MOVE_ALL:
        ok = r->scanned == b->pages && r->migrated == b->pages;
        break;
    case X_MOVE_UNITS:
        ok = r->scanned == b->pages && r->huge_migrated == b->pages / UNIT_PAGES;
        break;
    }
    if (!ok) {
        fprintf(stderr,
                "bench_engine: %s: scanned %llu, candidates %llu, migrated %llu "
                "(2 MiB: %llu) of %zu pages: not what the case expects\n",
                name, (unsigned long long)r->scanned, (unsigned long long)r->candidates,
                (unsigned long long)r->migrated, (unsigned long long)r->huge_migrated,
                b->pages);
        exit(1);
    }
}

/* Every home where the model says it is (a sample of 1024 pages). */
static void check_homes(bench *b, const char *when)
{
    enum { N = 1024 };
    void *pg[N] = {0};
    int st[N] = {0};
    size_t step = b->pages / N ? b->pages / N : 1, n = 0;
    for (size_t p = 0; p < b->pages && n < N; p += step)
        pg[n++] = b->arr.base + p * PG;
    if (ph_os_query(b->sim, n, pg, st) != 0)
        die("query");
    for (size_t k = 0; k < n; k++) {
        size_t p = (size_t)((char *)pg[k] - b->arr.base) / PG;
        int want = b->topo->nodes[home_now(&b->m, p)].id;
        if (st[k] != want) {
            fprintf(stderr, "bench_engine: %s: page %zu is on node %d, expected %d\n",
                    when, p, st[k], want);
            exit(1);
        }
    }
}

static void print_header(void)
{
    printf("%-26s %3s %7s %13s %7s %6s %7s %6s %6s %6s %6s %7s %7s\n", "case (ns per page)",
           "inv", "median", "min-max", "cpu", "model", "-model", "drain", "engine", "move",
           "other", "first", "refresh");
}

/* Run one case on engine e: a first invocation, then rounds timed ones
 * (refresh invocations set apart, and run at least once).  In the cases
 * that move every page the model's shift advances after each invocation. */
static void run_case(bench *b, ph_engine *e, const char *name, enum expect x, int goal)
{
    /* ns per page of each timed invocation, and of the model just before */
    double wall[MAX_ROUNDS], cpu[MAX_ROUNDS], drain[MAX_ROUNDS], eng[MAX_ROUNDS], mv[MAX_ROUNDS],
        oth[MAX_ROUNDS], mdl[MAX_ROUNDS], ex[MAX_ROUNDS];
    double first_ns = 0, refresh_ns = -1;
    int moves = x == X_MOVE_ALL || x == X_MOVE_UNITS;
    int n = 0;
    model_clock mc = model_clock_open(b->topo, &b->m, b->arr.base, b->pages);
    for (int inv = 0; n < b->rounds || inv <= REFRESH_EVERY; inv++) {
        int timed = inv > 0 && inv % REFRESH_EVERY != 0 && n < b->rounds;
        if (timed)
            mdl[n] = model_clock_ns(&mc);
        inv_ns r = invoke_timed(e, b->pages);
        check_inv(b, &r, x, name);
        if (moves)
            b->m.shift++;
        if (inv == 0) {
            first_ns = r.wall_ns;
        } else if (inv % REFRESH_EVERY == 0) {
            refresh_ns = r.wall_ns;
        } else if (timed) {
            wall[n] = r.wall_ns;
            ex[n] = r.wall_ns - mdl[n];
            cpu[n] = r.cpu_time_ns;
            drain[n] = r.drain_ns;
            eng[n] = r.engine_ns;
            mv[n] = r.move_ns;
            oth[n] = r.other_ns;
            n++;
        }
    }
    model_clock_close(&mc);
    double w[MAX_ROUNDS];
    memcpy(w, wall, (size_t)n * sizeof *w);
    double med_ns = bench_median(w, n);
    double lo = w[0], hi = w[n - 1];
    double model_ns = bench_median(mdl, n), ex_ns = bench_median(ex, n);
    char range[32], ref[16];
    snprintf(range, sizeof range, "%.1f-%.1f", lo, hi);
    snprintf(ref, sizeof ref, "%.1f", refresh_ns);
    printf("%-26s %3d %7.1f %13s %7.1f %6.1f %7.1f %6.1f %6.1f %6.1f %6.1f %7.1f %7s\n", name,
           n, med_ns, range, bench_median(cpu, n), model_ns, ex_ns,
           bench_median(drain, n), bench_median(eng, n), bench_median(mv, n),
           bench_median(oth, n), first_ns, refresh_ns >= 0 ? ref : "-");
    fflush(stdout);
    if (med_ns > b->goal_worst_ns)
        b->goal_worst_ns = med_ns;
    if (ex_ns > b->goal_worst_ex_ns)
        b->goal_worst_ex_ns = ex_ns;
    double mc_ns = bench_median(cpu, n);
    if (mc_ns > b->goal_worst_cpu_ns)
        b->goal_worst_cpu_ns = mc_ns;
    if (goal) {
        b->goal_hot_seen = 1;
        b->goal_hot_ns = ex_ns;
        b->goal_hot_refresh_ns =
            ((REFRESH_EVERY - 1) * ex_ns + refresh_ns - model_ns) / REFRESH_EVERY;
    }
}

static void give_homes(bench *b)
{
    for (int k = 0; k < b->topo->nnodes; k++) {
        size_t start = (size_t)k * b->m.per_node_pages;
        if (start >= b->pages)
            break;
        size_t len = b->pages - start < b->m.per_node_pages ? b->pages - start
                                                             : b->m.per_node_pages;
        if (k == b->topo->nnodes - 1)
            len = b->pages - start;
        if (ph_os_populate_on(b->sim, b->arr.base + start * PG, len * PG,
                                     b->topo->nodes[k].id) != 0)
            die("populate_on");
    }
}

/* Make the simulator record the array as 2 MiB pages. */
static void to_huge(bench *b)
{
    ph_os *s = b->sim;
    uint8_t hs[2] = {0, 0};
    if (ph_os_advise_huge(s, b->arr.base, b->pages * PG, 1) != 0)
        die("advise_huge");
    ph_os_huge_state(s, b->arr.base, 1, &hs[0]);
    ph_os_huge_state(s, b->arr.base + (b->pages - 1) * PG, 1, &hs[1]);
    if (!hs[0] || !hs[1]) /* the alias: one 2 MiB range of the simulator each */
        for (size_t u = 0; u < b->pages / UNIT_PAGES; u++)
            if (ph_os_advise_huge(s, b->arr.base + u * UNIT_BYTES, UNIT_BYTES, 1) != 0)
                die("advise_huge");
    for (size_t u = 0; u < b->pages / UNIT_PAGES; u += 97) {
        uint8_t h = 0;
        ph_os_huge_state(s, b->arr.base + u * UNIT_BYTES + 5 * PG, 1, &h);
        if (!h) {
            fprintf(stderr, "bench_engine: the simulator does not record 2 MiB pages\n");
            exit(1);
        }
    }
}

/* Groups of cases of section 1 (--case). */
enum { G_COLD = 1, G_HOT = 2, G_MOVE = 4, G_HUGE = 8, G_ALL = 15 };

static void section_time(size_t pages, int rounds, int nodes, int use_private, int groups)
{
    bench b;
    memset(&b, 0, sizeof b);
    b.topo = topo_of(nodes);
    b.sim = ph_os_sim_open(b.topo);
    if (!b.sim)
        die("simulator");
    ph_machine_cfg mc; /* the mover's settings from the tunables */
    ph_machine_cfg_from_options(&mc);
    b.mover = ph_mover_new(b.sim, &mc.mover);
    if (!b.mover)
        die("mover");
    b.pages = pages;
    b.rounds = rounds;
    size_t units = pages / UNIT_PAGES;
    b.m = (model){.kind = M_NONE, .nnodes = nodes, .npages = pages,
                  .per_node_pages = ((units + (size_t)nodes - 1) / (size_t)nodes) * UNIT_PAGES};

    uint64_t t0 = ph_now_ns();
    if (use_private)
        private_open(&b.arr, b.sim, pages * PG);
    else
        alias_open(&b.arr, pages * PG);
    give_homes(&b);
    check_homes(&b, "after populate_on");
    printf("\n1. time per page: %zu pages (%.1f GiB virtual), %d nodes, %s array; "
           "homes given in %.1f s\n",
           pages, (double)(pages * PG) / (double)(1u << 30), nodes,
           use_private ? "private (faulted for real)" : "alias (64 MiB memfd)",
           (double)(ph_now_ns() - t0) / 1e9);
    printf("   median (wall) of %d invocations; cpu = the thread's CPU time; model = "
           "synthetic source alone (median),\n   -model = median of (invocation - model) "
           "round by round; drain/engine/move/other "
           "from the engine's log; first = first\n   invocation, refresh = every %dth (homes "
           "asked of the OS)\n",
           rounds, REFRESH_EVERY);
    print_real_memory("after the homes");
    print_header();

    /* 4 KiB pages */
    ph_engine *e;
    if (groups & G_COLD) {
        b.m.kind = M_NONE;
        e = engine_open(b.topo, b.sim, b.mover, &b.m);
        if (!ph_engine_register(e, b.arr.base, pages * PG, "hot"))
            die("register");
        run_case(&b, e, "4K cold, never sampled", X_NOTHING, 0);
        ph_engine_free(e);
    }
    if (groups & G_HOT) {
        b.m.kind = M_LOCAL;
        e = engine_open(b.topo, b.sim, b.mover, &b.m);
        if (!ph_engine_register(e, b.arr.base, pages * PG, "hot"))
            die("register");
        run_case(&b, e, "4K hot, every page local", X_SCAN_ALL, 1);
        b.m.kind = M_NONE;
        run_case(&b, e, "4K cold, counts allocated", X_NOTHING, 0);
        ph_engine_free(e);
    }
    if (groups & G_MOVE) {
        b.m.kind = M_NEXT;
        e = engine_open(b.topo, b.sim, b.mover, &b.m);
        if (!ph_engine_register(e, b.arr.base, pages * PG, "hot"))
            die("register");
        run_case(&b, e, "4K hot, every page moves", X_MOVE_ALL, 0);
        ph_engine_free(e);
        check_homes(&b, "after the 4 KiB moves");
    }

    /* 2 MiB pages */
    if (groups & G_HUGE) {
        to_huge(&b);
        check_homes(&b, "after advise_huge");
        b.m.kind = M_LOCAL;
        e = engine_open(b.topo, b.sim, b.mover, &b.m);
        if (!ph_engine_register(e, b.arr.base, pages * PG, "hot"))
            die("register");
        run_case(&b, e, "2M hot, every unit local", X_SCAN_ALL, 0);
        ph_engine_free(e);

        b.m.kind = M_NEXT;
        e = engine_open(b.topo, b.sim, b.mover, &b.m);
        if (!ph_engine_register(e, b.arr.base, pages * PG, "hot"))
            die("register");
        run_case(&b, e, "2M hot, every unit moves", X_MOVE_UNITS, 0);
        ph_engine_free(e);
        check_homes(&b, "after the 2 MiB moves");
    }

    print_real_memory("at the end (engines freed)");
    ph_sim_counters sc;
    ph_sim_counters_get(b.sim, &sc);
    /* the goal is the engine's own work on a hot page: the synthetic
     * source stands in for the sampler, and the moves are the OS's */
    if (b.goal_hot_seen)
        printf("goal <= 10 ns per hot page per invocation (4K hot, every page local, median "
               "minus the model): %.1f ns/page: %s; with one refresh of the homes in every "
               "%d invocations: %.1f\n",
               b.goal_hot_ns, b.goal_hot_ns <= 10.0 ? "met" : "NOT met", REFRESH_EVERY,
               b.goal_hot_refresh_ns);
    else
        printf("goal <= 10 ns per hot page per invocation: not measured (the hot case did "
               "not run)\n");
    printf("largest median of the cases: %.1f ns/page (%.1f without the model, CPU time "
           "%.1f)\n",
           b.goal_worst_ns, b.goal_worst_ex_ns, b.goal_worst_cpu_ns);
    printf("simulator: %llu query calls (%llu pages), %llu move calls (%llu pages moved)\n",
           (unsigned long long)sc.query_calls, (unsigned long long)sc.query_pages,
           (unsigned long long)sc.move_calls, (unsigned long long)sc.moved_pages);

    backing_close(&b.arr);
    ph_mover_free(b.mover);
    ph_os_close(b.sim);
    ph_topo_free(b.topo);
}

/* ---- section 2: memory --------------------------------------------------------------- */

static void section_memory(size_t pages, int extra_nodes)
{
    backing arr;
    reserve(&arr, pages * PG);
    int hwm_ok = reset_hwm() == 0;
    printf("\n2. bookkeeping memory: %zu pages never touched (PROT_NONE, no homes), two "
           "invocations each\n",
           pages);
    printf("   B/page = per hot page; RSS = growth of /proc/self/statm resident from before "
           "the engine, per hot page%s\n",
           hwm_ok ? "; peak from VmHWM" : " (no peak: clear_refs not writable)");
    printf("%6s %-22s %10s %14s %12s %12s %12s %12s %10s\n", "nodes", "sampled", "pages",
           "bookkeeping", "B/page", "B/sampled", "RSS B/page", "peak B/page", "ns/page");
    int list[3] = {4, 16, extra_nodes};
    int nlist = extra_nodes != 4 && extra_nodes != 16 ? 3 : 2;
    static const struct {
        int kind;
        const char *name;
    } pat[] = {{M_NONE, "never"},
               {M_SPREAD, "1 in 512, spread"},
               {M_BLOCK, "1 in 512, one block"},
               {M_FULL, "every page"}};
    for (int li = 0; li < nlist; li++) {
        int nodes = list[li];
        ph_topology *t = topo_of(nodes);
        ph_os *sim = ph_os_sim_open(t);
        ph_machine_cfg mc;
        ph_machine_cfg_from_options(&mc);
        ph_mover *mv = sim ? ph_mover_new(sim, &mc.mover) : NULL;
        if (!mv)
            die("simulator");
        /* the simulator tracks the range before the baseline */
        {
            size_t nu = (pages + UNIT_PAGES - 1) / UNIT_PAGES;
            void **pg = malloc(nu * sizeof *pg);
            int *st = malloc(nu * sizeof *st);
            if (!pg || !st)
                die("out of memory");
            for (size_t u = 0; u < nu; u++)
                pg[u] = arr.base + u * UNIT_BYTES;
            if (ph_os_query(sim, nu, pg, st) != 0)
                die("query");
            free(pg);
            free(st);
        }
        for (size_t k = 0; k < sizeof pat / sizeof pat[0]; k++) {
            model m = {.kind = pat[k].kind, .nnodes = nodes, .npages = pages,
                       .per_node_pages = pages};
            malloc_trim(0); /* what earlier cases freed goes back first */
            size_t rss0 = rss_bytes();
            if (hwm_ok)
                reset_hwm();
            ph_engine *e = engine_open(t, sim, mv, &m);
            if (!ph_engine_register(e, arr.base, pages * PG, "hot"))
                die("register");
            inv_ns r = invoke_timed(e, pages);
            r = invoke_timed(e, pages);
            ph_engine_totals tot;
            ph_engine_get_totals(e, &tot);
            size_t rss1 = rss_bytes(), hwm = hwm_ok ? bench_status_bytes("VmHWM") : 0;
            double hot = (double)tot.hot_pages;
            char sampled[32], peak[32];
            if (r.scanned)
                snprintf(sampled, sizeof sampled, "%.1f",
                         (double)tot.bookkeeping_bytes / (double)r.scanned);
            else
                snprintf(sampled, sizeof sampled, "-");
            if (hwm_ok)
                snprintf(peak, sizeof peak, "%.1f",
                         ((double)hwm - (double)rss0) / hot);
            else
                snprintf(peak, sizeof peak, "-");
            printf("%6d %-22s %10llu %14llu %12.2f %12s %12.2f %12s %10.1f\n", nodes,
                   pat[k].name, (unsigned long long)r.scanned,
                   (unsigned long long)tot.bookkeeping_bytes,
                   (double)tot.bookkeeping_bytes / hot, sampled,
                   ((double)rss1 - (double)rss0) / hot, peak, r.wall_ns);
            fflush(stdout);
            ph_engine_free(e);
        }
        ph_mover_free(mv);
        ph_os_close(sim);
        ph_topo_free(t);
    }
    backing_close(&arr);
}

/* ---- section 3: where the time goes -------------------------------------------------- */

static double per_page(uint64_t t0, size_t pages)
{
    return (double)(bench_thread_cpu_ns() - t0) / (double)pages;
}

static void section_profile(size_t pages, int rounds, int nodes)
{
    ph_topology *t = topo_of(nodes);
    int n = nodes;
    double *lat = malloc((size_t)n * (size_t)n * sizeof *lat);
    double *mig = malloc((size_t)n * (size_t)n * sizeof *mig);
    size_t *idx = malloc(pages * sizeof *idx);
    void **addr = malloc(pages * sizeof *addr);
    int8_t *home = malloc(pages);
    ph_hot *h = ph_hot_new((uintptr_t)1 << 40, pages, "profile", 0, n);
    if (!lat || !mig || !idx || !addr || !home || !h)
        die("out of memory");
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            lat[i * n + j] = ph_topo_lat(t, i, j);
            mig[j * n + i] = t->migrate_ns_4k ? t->migrate_ns_4k[j * n + i] +
                                                    t->migrate_ns_call / 512.0
                                              : 0.0;
        }
    ph_latency_model lm = {.nnodes = n, .lat_ns = lat, .contention_ns = 50.0,
                           .migrate_ns = t->migrate_ns_4k ? mig : NULL};
    size_t per = ((pages / UNIT_PAGES + (size_t)n - 1) / (size_t)n) * UNIT_PAGES;
    for (size_t p = 0; p < pages; p++) {
        size_t k = p / per;
        home[p] = (int8_t)(k < (size_t)n ? k : (size_t)n - 1);
    }
    double add_ns[MAX_ROUNDS], scan_ns[MAX_ROUNDS], crit_ns[MAX_ROUNDS], roll_ns[MAX_ROUNDS],
        fused_ns[MAX_ROUNDS];
    volatile double sink = 0;
    uint64_t t0 = bench_thread_cpu_ns();
    for (size_t p = 0; p < pages; p++) /* allocates the counts */
        ph_hot_add(h, p, home[p], HOT_ACCESSES, 0);
    double alloc_ns = per_page(t0, pages);
    ph_hot_roll(h);
    for (int r = 0; r < rounds; r++) {
        /* the ingest: batches of 256 samples, as the sources drain them
         * (writing a batch is counted too) */
        t0 = bench_thread_cpu_ns();
        for (size_t p0 = 0; p0 < pages; p0 += 256) {
            ph_sample batch[256];
            size_t nb = pages - p0 < 256 ? pages - p0 : 256;
            for (size_t q = 0; q < nb; q++)
                batch[q] = (ph_sample){h->base + (p0 + q) * 4096, home[p0 + q],
                                       HOT_ACCESSES};
            uint64_t added;
            ph_hot_add_samples(h, batch, nb, 1, &added);
        }
        add_ns[r] = per_page(t0, pages);

        /* collect(): every page of every chunk with counts */
        t0 = bench_thread_cpu_ns();
        size_t m = 0;
        for (size_t c = 0; c < h->nchunks; c++) {
            if (!h->chunks[c])
                continue;
            size_t last = (c + 1) * PH_HOT_CHUNK_PAGES;
            if (last > pages)
                last = pages;
            for (size_t i = c * PH_HOT_CHUNK_PAGES; i < last; i++) {
                const uint32_t *cur = ph_cnt_cur(ph_hot_counts(h, i, 0), n);
                int any = 0;
                for (int k = 0; k < n && !any; k++)
                    any = cur[k] != 0;
                if (!any)
                    continue;
                idx[m] = i;
                addr[m] = (void *)(h->base + i * 4096);
                m++;
            }
        }
        scan_ns[r] = per_page(t0, pages);

        /* the loop of invoke_area(): remote counts, latency sums, criterion */
        t0 = bench_thread_cpu_ns();
        double per_node[PH_HOT_MAX_NODES] = {0};
        uint64_t acc = 0, rem = 0;
        for (size_t j = 0; j < m; j++) {
            size_t i = idx[j];
            const uint32_t *cur = ph_cnt_cur(ph_hot_counts(h, i, 0), n);
            int hm = home[i];
            for (int k = 0; k < n; k++) {
                acc += cur[k];
                if (k != hm)
                    rem += cur[k];
            }
            int c = ph_crit_contention(cur, n, hm);
            for (int k = 0; k < n; k++)
                if (k != hm && cur[k])
                    per_node[k] += (double)cur[k] * (lat[k * n + hm] + 50.0 * c);
            double ratio = 0;
            int target = ph_crit_competitive(&lm, cur, hm, 1.0, 0, &ratio);
            if (target >= 0)
                sink += ratio;
        }
        crit_ns[r] = per_page(t0, pages);
        sink += (double)acc + (double)rem + per_node[0];

        t0 = bench_thread_cpu_ns();
        ph_hot_roll(h);
        roll_ns[r] = per_page(t0, pages);

        /* what one fused pass would cost: per chunk, per page: total of
         * cur, the criterion only when some access is not from the home
         * (none here), and the roll, while the page's counts are in the
         * cache; no work arrays except for candidates */
        for (size_t p = 0; p < pages; p++)
            ph_hot_add(h, p, home[p], HOT_ACCESSES, (uint16_t)r);
        t0 = bench_thread_cpu_ns();
        size_t cand = 0;
        for (size_t ch = 0; ch < h->nchunks; ch++) {
            uint32_t *blk = h->chunks[ch];
            if (!blk)
                continue;
            size_t first = ch * PH_HOT_CHUNK_PAGES, cnt = pages - first;
            if (cnt > PH_HOT_CHUNK_PAGES)
                cnt = PH_HOT_CHUNK_PAGES;
            for (size_t q = 0; q < cnt; q++) {
                uint32_t *w = blk + q * ph_hot_stride(h);
                uint32_t *pv = ph_cnt_prev(w, n), *cm = ph_cnt_cum(w, n);
                uint64_t tot = 0;
                for (int k = 0; k < n; k++)
                    tot += w[k];
                int hm = home[first + q];
                if (tot && w[hm] != tot) {
                    double ratio = 0;
                    if (ph_crit_competitive(&lm, w, hm, 1.0, 0, &ratio) >= 0)
                        idx[cand++] = first + q;
                }
                for (int k = 0; k < n; k++) {
                    uint32_t cu = w[k];
                    pv[k] = cu;
                    cm[k] = cm[k] > UINT32_MAX - cu ? UINT32_MAX : cm[k] + cu;
                    w[k] = 0;
                }
            }
        }
        fused_ns[r] = per_page(t0, pages);
        sink += (double)cand;
    }
    printf("\n3. where the time goes: the engine's per-page steps replayed on a ph_hot of "
           "%zu pages, %d nodes,\n   every page hot from its home (manual timers: CPU time, "
           "median of %d; first ph_hot_add pass, allocating the counts: %.1f ns/page)\n",
           pages, nodes, rounds, alloc_ns);
    printf("%-58s %10s\n", "step (src/engine)", "ns/page");
    double a = bench_median(add_ns, rounds), s = bench_median(scan_ns, rounds),
           c = bench_median(crit_ns, rounds), ro = bench_median(roll_ns, rounds);
    printf("%-58s %10.1f\n", "ph_hot_add_samples: the samples into the counts (ingest)", a);
    printf("%-58s %10.1f\n", "scan of the counts, sampled pages listed", s);
    printf("%-58s %10.1f\n", "invoke_area(): remote sums + ph_crit_competitive", c);
    printf("%-58s %10.1f\n", "ph_hot_roll: cur -> prev, cum += cur, cur = 0", ro);
    printf("%-58s %10.1f\n", "sum", a + s + c + ro);
    printf("%-58s %10.1f\n", "not in src: one fused pass (scan, local fast path, roll)",
           bench_median(fused_ns, rounds));
    (void)sink;
    ph_hot_free(h);
    free(lat);
    free(mig);
    free(idx);
    free(addr);
    free(home);
    ph_topo_free(t);
}

/* ---- driver ------------------------------------------------------------------------- */

static void usage(void)
{
    fprintf(stderr, "usage: bench_engine [--pages N] [--rounds R] [--nodes N] [--private]\n"
                    "                    [--case cold|hot|move|huge]\n"
                    "  --pages N   hot array in 4 KiB pages (512..2^26, rounded up to 512;\n"
                    "              default 16777216 = 64 GiB of virtual memory)\n"
                    "  --rounds R  timed invocations per case (1..%d, default 7)\n"
                    "  --nodes N   nodes of the simulated machine (3..64, default 4)\n"
                    "  --private   fault the array for real (at most %zu pages)\n"
                    "  --case C    only that group of cases of section 1 (for profiling)\n",
            MAX_ROUNDS, PRIVATE_MAX_PAGES);
    exit(2);
}

int main(int argc, char **argv)
{
    size_t pages = (size_t)1 << 24, v;
    int rounds = 7, nodes = 4, use_private = 0, groups = G_ALL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--pages") && i + 1 < argc) {
            if (bench_parse_count(argv[++i], 0, SIZE_MAX, &pages) != 0)
                usage();
        } else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
            if (bench_parse_count(argv[++i], 1, MAX_ROUNDS, &v) != 0)
                usage();
            rounds = (int)v;
        } else if (!strcmp(argv[i], "--nodes") && i + 1 < argc) {
            if (bench_parse_count(argv[++i], 3, 64, &v) != 0)
                usage();
            nodes = (int)v;
        } else if (!strcmp(argv[i], "--private")) {
            use_private = 1;
        } else if (!strcmp(argv[i], "--case") && i + 1 < argc) {
            const char *c = argv[++i];
            groups = !strcmp(c, "cold")   ? G_COLD
                     : !strcmp(c, "hot")  ? G_HOT
                     : !strcmp(c, "move") ? G_MOVE
                     : !strcmp(c, "huge") ? G_HUGE
                                          : 0;
            if (!groups)
                usage();
        } else {
            usage();
        }
    }
    if (pages < UNIT_PAGES || pages > ((size_t)1 << 26))
        usage();
    pages = (pages + UNIT_PAGES - 1) / UNIT_PAGES * UNIT_PAGES;
    if (use_private && pages > PRIVATE_MAX_PAGES)
        usage();

    ph_options_init();
    printf("bench_engine: %zu pages, %d rounds, %d nodes (section 1), iterative, sync, "
           "full snapshot\n",
           pages, rounds, nodes);
    section_time(pages, rounds, nodes, use_private, groups);
    if (groups == G_ALL) {
        section_memory(pages, nodes);
        section_profile(pages, rounds, nodes);
    }
    return 0;
}
