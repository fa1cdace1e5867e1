/*
 * os_sim.c -- the simulated machine (see os.h for the contract it shares
 * with Linux).
 *
 * Memory is real (programs run on it) but homes are virtual.  The
 * simulator keeps a registry of tracked ranges, sorted by address and
 * never overlapping:
 *   - ranges mapped by map() ("owned"), with the page size the flags
 *     asked for (PH_MAP_HUGE_* record 2 MiB pages; the real memory is
 *     whatever the kernel gives);
 *   - "foreign" ranges, created on first sight of memory the simulator did
 *     not map (static arrays, heap): the 2 MiB-aligned chunk around the
 *     page, clipped to its neighbours, with 4 KiB pages.
 * Per 4 KiB page it keeps the home (node index, -1 = none yet) and the
 * node bind() chose for it (-1 = none).  A 2 MiB page keeps one home for
 * its 512 entries and moves as a whole.
 *
 * First touch.  The simulator cannot see which thread faulted a page, so
 * a page that is resident for real (mincore) but has no home yet gets one
 * when the simulator first looks at it: the node bind() chose, else the
 * node of the thread that touched it first when someone told
 * (note_touch: the sampler's trap on a watched page that was never
 * touched, in the touching thread's signal handler; or, for pages serial
 * code touched while the sampler could not watch them, the thread that
 * ran that code, when it begins the next parallel region), else the virtual
 * node of the thread that is asking (which is the toucher when a program
 * touches and queries its own data).  note_touch() is async-signal-safe:
 * it only appends (range, node) to a bounded lock-free ring (Vyukov's
 * bounded queue: a sequence number per cell), which every call that
 * settles homes empties first, under the lock, into the ranges' `touch`
 * nodes; a full ring loses the note (counted in touch_lost).  A page
 * that was only read maps the kernel's shared zero page: mincore calls it
 * resident, but like Linux the simulator does not count it as faulted
 * (pagemap: present but not exclusively mapped).  A page shared with a
 * child process after fork() looks the same, and is not counted either.
 * ph_sim_touch() and populate_on() name the node exactly.  A 4 KiB page
 * that has a home but is no longer resident (MADV_DONTNEED, munmap and a
 * new mapping at the same place) loses its home -- unless it was moved
 * as it is (note_moved: the userfaultfd sampler parks a watched page in
 * its stash and brings it back with UFFDIO_MOVE, the physical page and
 * its node unchanged).  note_moved() is never called in a signal
 * handler, so it does not go through the ring: under the lock it first
 * applies the touches noted before it, then carries the homes to the new
 * place.  (It went through the ring once; SP class A from node:0 lost
 * 7914 notes to the full ring in one run, and with them the homes of
 * 2748 pages the engine had moved.)
 *
 * Threads: a thread bound with set_thread_node() is on that node; any
 * other runs on the node of the binding rule (ph_sim_set_binding: block
 * unless whoever opened the simulator says cyclic) for its
 * OpenMP thread number t of T: block t*N/T, cyclic t%N.  Without OpenMP
 * (or outside a parallel region) t = 0, T = 1: the first node.  The
 * virtual CPU is CPU (t mod k) of that node's k CPUs.  current_cpu() and
 * current_node() read only thread-locals, the read-only topology and
 * atomics, so they are async-signal-safe.
 *
 * hugetlbfs pools are modeled on the topology's snapshot (spec huge_2m=,
 * JSON "hugepages", or the real machine's pools read when it was opened):
 * a map() with PH_MAP_HUGE_TLBFS reserves its 2 MiB pages from the pools
 * of all nodes together (ENOMEM when they do not have them, as mmap with
 * MAP_HUGETLB), a page that gets a home takes a free page of that node's
 * pool (populate_on: -1/ENOMEM when the node has none; a first touch
 * falls back to the nearest node with one; a move to a node without one
 * is -ENOMEM), and unmap gives everything back.  huge_pool() reports
 * free = the snapshot's free pages minus the homed ones, reserved = the
 * pages mapped but not homed yet.
 *
 * A memory binding (ph_sim_set_allowed, for tests): nodes outside it
 * have no room for the process -- first touches fall back to the nearest
 * allowed node, moves there are -EINVAL -- and allowed() reports it.
 *
 * Costs: every move call costs migrate_ns_call, every page moved
 * migrate_ns_4k or migrate_ns_2m of the topology's matrices (from, to).
 * The move log (ph_sim_set_move_log, off unless asked for) lists the
 * units moved in the order the calls moved them.
 * One mutex guards the registry and counters.  It is never held across
 * a real page fault (populate faults between two holds): the fault of a
 * page the userfaultfd sampler watches waits for its service thread, and
 * that thread takes the mutex to note the page's trip back.  Arguments
 * come checked from the front door (os.c).  The simulator reads no
 * tunable: everything it models comes from the topology and the calls.
 */
#include "os/os.h"

#include "base/error.h"
#include "base/log.h"
#include "base/own_fd.h"
#include "base/sorted.h"
#include "base/thread.h"
#include "topo/topo.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* OpenMP, when the program has it: the weak references see a runtime
 * loaded with the program; one loaded later (dlopen: a plugin, a Python
 * extension) is found by ph_sim_find_openmp(). */
extern int omp_get_thread_num(void) __attribute__((weak));
extern int omp_get_num_threads(void) __attribute__((weak));
typedef int (*sim_omp_fn)(void);
static _Atomic(sim_omp_fn) sim_omp_thread_num, sim_omp_num_threads;

#define SIM_UNIT_PAGES ((size_t)(PH_PAGE_2M / PH_PAGE_4K))
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25 /* Linux >= 6.1 */
#endif

typedef struct sim_range {
    uintptr_t start, end;   /* 4 KiB aligned; 2 MiB aligned when huge */
    size_t page_bytes;      /* 4096 or 2 MiB */
    int owned;              /* mapped by map() */
    int hugetlb;            /* owned, PH_MAP_HUGE_TLBFS: homes use pool pages */
    unsigned map_flags;
    int16_t *home;          /* per 4 KiB page: node index or -1 */
    int16_t *bound;         /* per 4 KiB page: node index or -1 */
    int16_t *touch;         /* per 4 KiB page: first toucher's node index,
                               -1 (note_touch) */
} sim_range;

/* A note_touch() not yet applied. */
#define SIM_TOUCH_CELLS 16384u
typedef struct sim_touch {
    atomic_uint_fast64_t seq;
    uintptr_t start;
    size_t len;
    int node;               /* OS node number */
} sim_touch;

typedef struct sim_state {
    pthread_mutex_t lock;
    uint64_t id;            /* tells thread bindings of instances apart */
    sim_range **r;          /* sorted by start */
    size_t nr, capr;
    uint64_t used[PH_MAX_NODES];     /* 4 KiB pages homed per node index */
    uint64_t capacity[PH_MAX_NODES]; /* 0 = unlimited */
    uint64_t allowed;       /* node indexes the process may use; 0 = all */
    ph_sim_counters c;
    uint64_t tlb_used[PH_MAX_NODES]; /* pool pages homed per node index */
    uint64_t tlb_resv;      /* pool pages mapped, not homed yet */
    int pagemap_fd;         /* /proc/self/pagemap, -1 if unreadable */
    atomic_int binding;     /* ph_sim_binding of unbound threads */
    /* note_touch ring: producers reserve with a CAS on touch_head, the
     * consumer (lock held) advances touch_tail */
    sim_touch *touch;       /* SIM_TOUCH_CELLS */
    atomic_uint_fast64_t touch_head;
    uint64_t touch_tail;
    atomic_uint_fast64_t touch_lost;
    /* move log (ph_sim_set_move_log): units moved, in order */
    int log_on;
    ph_sim_moved *log;
    size_t nlog, caplog;
} sim_state;

static atomic_uint_fast64_t sim_next_id = 1;

/* The calling thread's virtual binding: valid for the instance whose id
 * it names.  initial-exec TLS: no allocation on first access, so a signal
 * handler may read it. */
static _Thread_local uint64_t tl_bound_id __attribute__((tls_model("initial-exec")));
static _Thread_local int tl_bound_node __attribute__((tls_model("initial-exec")));

static const ph_os_ops sim_ops;

static sim_state *sim_of(ph_os *os)
{
    return (os && os->ops == &sim_ops) ? os->impl : NULL;
}

static size_t npages_of(const sim_range *r)
{
    return (r->end - r->start) / PH_PAGE_4K;
}

/* ---- threads ---------------------------------------------------------- */

/* The calling thread's number in its OpenMP team and the team's size.
 * omp_get_thread_num() answers 0 for a thread the runtime does not know,
 * but omp_get_num_threads() makes such a thread one of LLVM libomp's
 * initial threads (a BLAS library's pthread would then count as running
 * serial code, and a signal handler would start a runtime root).  Thread
 * 0's node needs no team size (block and cyclic rules both give node 0),
 * so it is asked only of threads numbered 1 or more -- and of the
 * process's first thread, the runtime's initial thread in any case:
 * asking it starts the runtime (and the tools interface, which closes
 * the sampler's region gate) before the program's serial
 * initialisation, which the simulated machine watches to learn its
 * first touches. */
static _Thread_local int tl_first_thread __attribute__((tls_model("initial-exec")));

/* 1 for the process's first thread (asked once per thread). */
static int first_thread(void)
{
    if (!tl_first_thread)
        tl_first_thread = (pid_t)syscall(SYS_gettid) == getpid() ? 1 : -1;
    return tl_first_thread == 1;
}

static void omp_position(int *t, int *n)
{
    *t = 0;
    *n = 1;
    sim_omp_fn num = omp_get_thread_num, size = omp_get_num_threads;
    if (!num || !size) {
        num = atomic_load_explicit(&sim_omp_thread_num, memory_order_acquire);
        size = atomic_load_explicit(&sim_omp_num_threads, memory_order_acquire);
    }
    if (num && size) {
        *t = num();
        if (*t <= 0 && !first_thread()) {
            *t = 0;
            return;
        }
        *n = size();
        if (*n < 1 || *t < 0 || *t >= *n) {
            *t = 0;
            *n = 1;
        }
    }
}

/* Node index of the calling thread.  Async-signal-safe. */
static int thread_node_index(const sim_state *s, const ph_topology *topo, int *tnum)
{
    int t, n;
    /* a bound thread is not asked of the OpenMP runtime: a thread it did
     * not start would become one of its initial threads */
    if (tl_bound_id == s->id && !tnum)
        return tl_bound_node;
    omp_position(&t, &n);
    if (tnum)
        *tnum = t;
    if (tl_bound_id == s->id)
        return tl_bound_node;
    int nn = topo->nnodes;
    if (atomic_load_explicit(&s->binding, memory_order_relaxed) == PH_SIM_BIND_CYCLIC)
        return t % nn;
    return (int)((int64_t)t * nn / n);
}

static int sim_current_node(ph_os *os)
{
    sim_state *s = os->impl;
    int idx = thread_node_index(s, os->topo, NULL);
    return (idx >= 0 && idx < os->topo->nnodes) ? os->topo->nodes[idx].id : -1;
}

static int sim_current_cpu(ph_os *os)
{
    sim_state *s = os->impl;
    int t;
    int idx = thread_node_index(s, os->topo, &t);
    if (idx < 0 || idx >= os->topo->nnodes)
        return -1;
    const ph_node_info *nd = &os->topo->nodes[idx];
    if (nd->ncpus < 1 || !nd->cpus)
        return -1;
    return nd->cpus[t % nd->ncpus];
}

static int sim_set_thread_node(ph_os *os, int node)
{
    sim_state *s = os->impl;
    if (node < 0) {
        tl_bound_id = 0;
        return 0;
    }
    tl_bound_node = ph_topo_node_index(os->topo, node);
    tl_bound_id = s->id;
    return 0;
}

/* ---- residency ----------------------------------------------------------- */

/* res[i] = ph_os_resident(pages[i]), with one mincore call per run of
 * consecutive pages. */
static void residency(void *const *pages, size_t count, int8_t *res)
{
    enum { CH = 4096 };
    unsigned char vec[CH];
    size_t i = 0;
    while (i < count) {
        uintptr_t p0 = (uintptr_t)pages[i] & ~(uintptr_t)(PH_PAGE_4K - 1);
        size_t j = i + 1;
        while (j < count && j - i < CH &&
               ((uintptr_t)pages[j] & ~(uintptr_t)(PH_PAGE_4K - 1)) ==
                   p0 + (j - i) * PH_PAGE_4K)
            j++;
        if (mincore((void *)p0, (j - i) * PH_PAGE_4K, vec) == 0) {
            for (size_t k = i; k < j; k++)
                res[k] = (int8_t)(vec[k - i] & 1);
        } else {
            for (size_t k = i; k < j; k++)
                res[k] = (int8_t)ph_os_resident(pages[k]);
        }
        i = j;
    }
}

/* Residency of npages consecutive pages from a.  0, or -1 when any page
 * is not mapped. */
static int residency_range(uintptr_t a, size_t npages, int8_t *res)
{
    enum { CH = 4096 };
    unsigned char vec[CH];
    for (size_t off = 0; off < npages; off += CH) {
        size_t c = npages - off < CH ? npages - off : CH;
        if (mincore((void *)(a + off * PH_PAGE_4K), c * PH_PAGE_4K, vec) != 0)
            return -1;
        if (res)
            for (size_t k = 0; k < c; k++)
                res[off + k] = (int8_t)(vec[k] & 1);
    }
    return 0;
}

/* ---- the registry (lock held) ---------------------------------------------- */

/* Index of the first range with start > addr. */
static size_t upper(const sim_state *s, uintptr_t addr)
{
    size_t at;
    PH_UPPER(at, s->r, s->nr, it->start, addr);
    return at;
}

static sim_range *find(const sim_state *s, uintptr_t addr)
{
    size_t at = upper(s, addr);
    if (at == 0)
        return NULL;
    sim_range *r = s->r[at - 1];
    return addr < r->end ? r : NULL;
}

static sim_range *range_new(uintptr_t start, uintptr_t end, size_t page_bytes)
{
    sim_range *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    size_t n = (end - start) / PH_PAGE_4K;
    r->start = start;
    r->end = end;
    r->page_bytes = page_bytes;
    r->home = malloc(n * sizeof *r->home);
    r->bound = malloc(n * sizeof *r->bound);
    r->touch = malloc(n * sizeof *r->touch);
    if (!r->home || !r->bound || !r->touch) {
        free(r->home);
        free(r->bound);
        free(r->touch);
        free(r);
        return NULL;
    }
    memset(r->home, 0xff, n * sizeof *r->home);   /* all -1 */
    memset(r->bound, 0xff, n * sizeof *r->bound);
    memset(r->touch, 0xff, n * sizeof *r->touch);
    return r;
}

static void range_free(sim_range *r)
{
    if (r) {
        free(r->home);
        free(r->bound);
        free(r->touch);
        free(r);
    }
}

static int insert(sim_state *s, sim_range *r)
{
    if (s->nr == s->capr) {
        size_t cap = s->capr ? s->capr * 2 : 32;
        sim_range **nr = realloc(s->r, cap * sizeof *nr);
        if (!nr)
            return -1;
        s->r = nr;
        s->capr = cap;
    }
    size_t at = upper(s, r->start);
    memmove(s->r + at + 1, s->r + at, (s->nr - at) * sizeof *s->r);
    s->r[at] = r;
    s->nr++;
    return 0;
}

/* Give up the homes of pages [from, to) of r. */
static void release_homes(sim_state *s, sim_range *r, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++) {
        if (r->home[i] >= 0) {
            s->used[r->home[i]]--;
            r->home[i] = -1;
        }
        r->touch[i] = -1; /* a page touched anew is first touched anew */
    }
}

/* ---- hugetlbfs pools (lock held) ------------------------------------------- */

/* The 2 MiB pool of node index idx in the topology's snapshot, or NULL. */
static const ph_hugepool *pool_2m(const ph_topology *t, int idx)
{
    const ph_node_info *nd = &t->nodes[idx];
    for (int j = 0; j < nd->npools && j < 2; j++)
        if (nd->pools[j].page_bytes == PH_PAGE_2M)
            return &nd->pools[j];
    return NULL;
}

/* Free pool pages of node index idx. */
static uint64_t pool_free(const sim_state *s, const ph_topology *t, int idx)
{
    const ph_hugepool *p = pool_2m(t, idx);
    uint64_t f = p ? p->free : 0;
    return f > s->tlb_used[idx] ? f - s->tlb_used[idx] : 0;
}

/* Pages [from, to) of a hugetlbfs range leave the pools' books: homed
 * units give their page back, unhomed ones their reservation. */
static void tlb_forget(sim_state *s, const sim_range *r, size_t from, size_t to)
{
    for (size_t k = from; k < to; k++) {
        if (k % SIM_UNIT_PAGES != 0 && k != from)
            continue;
        int h = r->home[k];
        if (h >= 0)
            s->tlb_used[h] -= s->tlb_used[h] > 0;
        else
            s->tlb_resv -= s->tlb_resv > 0;
    }
}

/* Where a hugetlbfs page meant for node index want can come from: want,
 * or the nearest node whose pool has a free page, or want when none has. */
static int pick_tlb_home(const sim_state *s, const ph_topology *t, int want)
{
    if (pool_free(s, t, want) > 0)
        return want;
    int best = -1, bestd = 0;
    for (int j = 0; j < t->nnodes; j++) {
        if (j == want || pool_free(s, t, j) == 0)
            continue;
        int d = ph_topo_dist(t, want, j);
        if (best < 0 || d < bestd) {
            best = j;
            bestd = d;
        }
    }
    return best >= 0 ? best : want;
}

/* A copy of pages [from, to) of r as a range of its own. */
static sim_range *slice(const sim_range *r, size_t from, size_t to)
{
    sim_range *p = range_new(r->start + from * PH_PAGE_4K, r->start + to * PH_PAGE_4K,
                             r->page_bytes);
    if (!p)
        return NULL;
    memcpy(p->home, r->home + from, (to - from) * sizeof *p->home);
    memcpy(p->bound, r->bound + from, (to - from) * sizeof *p->bound);
    memcpy(p->touch, r->touch + from, (to - from) * sizeof *p->touch);
    p->owned = r->owned;
    p->hugetlb = r->hugetlb;
    p->map_flags = r->map_flags;
    return p;
}

/* Stop tracking [a, b): homes there are released, ranges reaching outside
 * keep their outer parts.  0, or -1/ENOMEM (nothing changed then). */
static int untrack(sim_state *s, uintptr_t a, uintptr_t b)
{
    for (;;) {
        /* The first range overlapping [a, b), if any. */
        size_t i = upper(s, a);
        if (i > 0 && s->r[i - 1]->end > a)
            i--;
        if (i >= s->nr || s->r[i]->start >= b || s->r[i]->end <= a)
            return 0;
        sim_range *r = s->r[i];
        size_t n = npages_of(r);
        size_t from = a > r->start ? (a - r->start) / PH_PAGE_4K : 0;
        size_t to = b < r->end ? (b - r->start) / PH_PAGE_4K : n;
        sim_range *left = NULL, *right = NULL;
        if (from > 0 && !(left = slice(r, 0, from)))
            return -1;
        if (to < n && !(right = slice(r, to, n))) {
            range_free(left);
            return -1;
        }
        /* Make room first, so nothing can fail after homes are released. */
        if (s->nr + 2 > s->capr) {
            size_t cap = s->capr * 2 + 2;
            sim_range **nr = realloc(s->r, cap * sizeof *nr);
            if (!nr) {
                range_free(left);
                range_free(right);
                return -1;
            }
            s->r = nr;
            s->capr = cap;
        }
        if (r->hugetlb)
            tlb_forget(s, r, from, to);
        release_homes(s, r, from, to);
        memmove(s->r + i, s->r + i + 1, (s->nr - i - 1) * sizeof *s->r);
        s->nr--;
        range_free(r);
        /* The pieces lie outside [a, b): the loop does not see them again. */
        if (left)
            (void)insert(s, left);
        if (right)
            (void)insert(s, right);
    }
}

/* The tracked range holding page p, creating a foreign range when the page
 * is mapped but untracked.  NULL: not mapped (res < 0), or no memory. */
static sim_range *find_or_track(sim_state *s, uintptr_t p, int res)
{
    sim_range *r = find(s, p);
    if (r || res < 0)
        return r;
    uintptr_t lo = p & ~(uintptr_t)(PH_PAGE_2M - 1), hi = lo + PH_PAGE_2M;
    size_t at = upper(s, p);
    if (at > 0 && s->r[at - 1]->end > lo)
        lo = s->r[at - 1]->end;
    if (at < s->nr && s->r[at]->start < hi)
        hi = s->r[at]->start;
    r = range_new(lo, hi, PH_PAGE_4K);
    if (!r)
        return NULL;
    if (insert(s, r) != 0) {
        range_free(r);
        return NULL;
    }
    return r;
}

/* First page and page count of the unit (4 KiB or 2 MiB page) holding
 * page index i of r. */
static void unit_of(const sim_range *r, size_t i, size_t *first, size_t *n)
{
    if (r->page_bytes == PH_PAGE_4K) {
        *first = i;
        *n = 1;
        return;
    }
    size_t f = i & ~(SIM_UNIT_PAGES - 1);
    size_t total = npages_of(r);
    *first = f;
    *n = total - f < SIM_UNIT_PAGES ? total - f : SIM_UNIT_PAGES;
}

static int is_allowed(const sim_state *s, int idx)
{
    return s->allowed == 0 || ((s->allowed >> idx) & 1u);
}

/* A node outside the allowed ones has no room for the process. */
static int has_room(const sim_state *s, int idx, size_t pages)
{
    return is_allowed(s, idx) &&
           (s->capacity[idx] == 0 || s->used[idx] + pages <= s->capacity[idx]);
}

/* Where a new page meant for node index want lands: want, or the nearest
 * node with room (as the kernel's fallback zonelist would), or want
 * anyway when every node is full. */
static int pick_home(const sim_state *s, const ph_topology *t, int want, size_t pages)
{
    if (has_room(s, want, pages))
        return want;
    int best = -1, bestd = 0;
    for (int j = 0; j < t->nnodes; j++) {
        if (j == want || !has_room(s, j, pages))
            continue;
        int d = ph_topo_dist(t, want, j);
        if (best < 0 || d < bestd) {
            best = j;
            bestd = d;
        }
    }
    return best >= 0 ? best : want;
}

static void set_unit_home(sim_state *s, sim_range *r, size_t first, size_t n, int idx)
{
    if (r->hugetlb) {
        int old = r->home[first];
        if (old >= 0)
            s->tlb_used[old] -= s->tlb_used[old] > 0;
        else
            s->tlb_resv -= s->tlb_resv > 0;
        s->tlb_used[idx]++;
    }
    for (size_t k = first; k < first + n; k++) {
        if (r->home[k] >= 0)
            s->used[r->home[k]]--;
        r->home[k] = (int16_t)idx;
        s->used[idx]++;
    }
}

/* 1 when a resident page holds memory of its own (not the zero page). */
static int written(const sim_state *s, uintptr_t p)
{
    uint64_t e;
    if (s->pagemap_fd < 0 ||
        pread(s->pagemap_fd, &e, sizeof e, (off_t)(p / PH_PAGE_4K * sizeof e)) != sizeof e)
        return 1;
    if (!((e >> 63) & 1))
        return 0;
    return ((e >> 56) & 1) || ((e >> 61) & 1); /* exclusive, or file/shared */
}

/* Bring page i of r up to date with the real residency res and return its
 * home (node index) or -1 (not faulted). */
static int settle(sim_state *s, ph_os *os, sim_range *r, size_t i, int res)
{
    size_t first, n;
    unit_of(r, i, &first, &n);
    int h = r->home[i];
    if (r->page_bytes == PH_PAGE_4K && h >= 0 && res == 0) {
        release_homes(s, r, i, i + 1); /* discarded behind our back */
        h = -1;
    }
    if (h < 0 && res == 1 && written(s, r->start + i * PH_PAGE_4K)) {
        int want = r->bound[first] >= 0 ? r->bound[first]
                   : r->touch[first] >= 0 ? r->touch[first]
                                          : thread_node_index(s, os->topo, NULL);
        h = r->hugetlb ? pick_tlb_home(s, os->topo, want) : pick_home(s, os->topo, want, n);
        set_unit_home(s, r, first, n, h);
    }
    return h;
}

/* ---- first touches (note_touch) ------------------------------------------ */

/* Async-signal-safe: append one note, or count it lost when the ring is
 * full. */
static void put_note(sim_state *s, uintptr_t start, size_t len, int node)
{
    uint64_t pos = atomic_load_explicit(&s->touch_head, memory_order_relaxed);
    for (;;) {
        sim_touch *c = &s->touch[pos & (SIM_TOUCH_CELLS - 1)];
        uint64_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
        int64_t dif = (int64_t)(seq - pos);
        if (dif == 0) {
            if (atomic_compare_exchange_weak_explicit(&s->touch_head, &pos, pos + 1,
                                                      memory_order_relaxed,
                                                      memory_order_relaxed)) {
                c->start = start;
                c->len = len;
                c->node = node;
                atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
                return;
            }
        } else if (dif < 0) {
            atomic_fetch_add_explicit(&s->touch_lost, 1, memory_order_relaxed);
            return;
        } else {
            pos = atomic_load_explicit(&s->touch_head, memory_order_relaxed);
        }
    }
}

static void sim_note_touch(ph_os *os, void *addr, size_t len, int node)
{
    put_note(os->impl, (uintptr_t)addr, len, node);
}

/* Lock held: the pages of [from, from + n pages) moved to [to, ...) as
 * they are: each home (or first-touch note) goes along.  4 KiB ranges
 * only (the sampler's userfaultfd mechanism moves nothing else). */
static void carry_homes(sim_state *s, uintptr_t to, uintptr_t from, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        uintptr_t p = from + k * PH_PAGE_4K, q = to + k * PH_PAGE_4K;
        sim_range *rs = find(s, p);
        if (!rs || rs->page_bytes != PH_PAGE_4K || rs->hugetlb)
            continue;
        size_t pi = (p - rs->start) / PH_PAGE_4K;
        int h = rs->home[pi], t = rs->touch[pi];
        if (h < 0 && t < 0)
            continue;
        sim_range *rd = find_or_track(s, q, 1);
        if (!rd || rd->page_bytes != PH_PAGE_4K || rd->hugetlb)
            continue;
        size_t qi = (q - rd->start) / PH_PAGE_4K;
        release_homes(s, rs, pi, pi + 1);
        release_homes(s, rd, qi, qi + 1);
        if (h >= 0) {
            set_unit_home(s, rd, qi, 1, h);
            s->c.carried_pages++;
        } else {
            rd->touch[qi] = (int16_t)t;
        }
    }
}

/* Lock held: apply the notes made since the last call, in order.  A page
 * of a noted range that has no home and no earlier note gets the node;
 * memory not mapped any more is skipped. */
static void drain_touches(sim_state *s, ph_os *os)
{
    for (;;) {
        uint64_t pos = s->touch_tail;
        sim_touch *c = &s->touch[pos & (SIM_TOUCH_CELLS - 1)];
        if (atomic_load_explicit(&c->seq, memory_order_acquire) != pos + 1)
            return;
        uintptr_t a = c->start & ~(uintptr_t)(PH_PAGE_4K - 1);
        size_t n = (c->len + (c->start - a) + PH_PAGE_4K - 1) / PH_PAGE_4K;
        int idx = ph_topo_node_index(os->topo, c->node);
        s->touch_tail = pos + 1;
        atomic_store_explicit(&c->seq, pos + SIM_TOUCH_CELLS, memory_order_release);
        if (idx < 0 || residency_range(a, n, NULL) != 0)
            continue;
        for (size_t k = 0; k < n; k++) {
            uintptr_t p = a + k * PH_PAGE_4K;
            sim_range *r = find_or_track(s, p, 0);
            if (!r)
                continue;
            size_t pi = (p - r->start) / PH_PAGE_4K;
            if (r->home[pi] < 0 && r->touch[pi] < 0) {
                r->touch[pi] = (int16_t)idx;
                s->c.touch_pages++;
            }
        }
    }
}

/* Not in a signal handler (os.h): applied at once, after the touches
 * noted before it. */
static void sim_note_moved(ph_os *os, void *dst, const void *src, size_t len)
{
    sim_state *s = os->impl;
    pthread_mutex_lock(&s->lock);
    drain_touches(s, os);
    carry_homes(s, (uintptr_t)dst, (uintptr_t)src, len / PH_PAGE_4K);
    pthread_mutex_unlock(&s->lock);
}

/* fork(): the lock is taken by the caller's prepare, innermost (os.h);
 * the child's one thread makes it afresh. */
static void sim_fork_prepare(ph_os *os)
{
    pthread_mutex_lock(&((sim_state *)os->impl)->lock);
}

static void sim_fork_parent(ph_os *os)
{
    pthread_mutex_unlock(&((sim_state *)os->impl)->lock);
}

static void sim_fork_child(ph_os *os)
{
    pthread_mutex_init(&((sim_state *)os->impl)->lock, NULL);
}

/* ---- costs ---------------------------------------------------------------- */

/* Every topology has its matrices (ph_topo_alloc makes them, the latency
 * model or a measurement fills them). */
static double page_cost(const ph_topology *t, int from, int to, size_t page_bytes)
{
    const double *m = page_bytes == PH_PAGE_2M ? t->migrate_ns_2m : t->migrate_ns_4k;
    return m[from * t->nnodes + to];
}

static double call_cost(const ph_topology *t)
{
    return t->migrate_ns_call;
}

/* ---- query / move --------------------------------------------------------- */

static int8_t *residency_of(void *const *pages, size_t count)
{
    int8_t *res = malloc(count);
    if (res)
        residency(pages, count, res);
    return res;
}

static int sim_query(ph_os *os, size_t count, void *const *pages, int *status)
{
    sim_state *s = os->impl;
    int8_t *res = residency_of(pages, count);
    if (!res)
        return ph_fail(ENOMEM, "query: out of memory for %zu pages", count);
    pthread_mutex_lock(&s->lock);
    drain_touches(s, os);
    s->c.query_calls++;
    s->c.query_pages += count;
    for (size_t i = 0; i < count; i++) {
        uintptr_t p = (uintptr_t)pages[i] & ~(uintptr_t)(PH_PAGE_4K - 1);
        sim_range *r = find_or_track(s, p, res[i]);
        if (!r) {
            status[i] = res[i] < 0 ? -EFAULT : -ENOMEM;
            continue;
        }
        size_t pi = (p - r->start) / PH_PAGE_4K;
        if (res[i] < 0) {
            if (r->page_bytes == PH_PAGE_4K)
                release_homes(s, r, pi, pi + 1);
            status[i] = -EFAULT;
            continue;
        }
        int h = settle(s, os, r, pi, res[i]);
        status[i] = h >= 0 ? os->topo->nodes[h].id : -ENOENT;
    }
    pthread_mutex_unlock(&s->lock);
    free(res);
    return 0;
}

/* A unit moved: into the move log when it is on (lock held).  A log that
 * cannot grow stops logging (the cost model then falls back to address
 * order for what is missing). */
static void log_move(sim_state *s, uintptr_t first, size_t n, double cost_ns)
{
    if (!s->log_on)
        return;
    if (s->nlog == s->caplog) {
        size_t nc = s->caplog ? 2 * s->caplog : 1024;
        ph_sim_moved *nl = realloc(s->log, nc * sizeof *nl);
        if (!nl) {
            s->log_on = 0;
            return;
        }
        s->log = nl;
        s->caplog = nc;
    }
    s->log[s->nlog++] = (ph_sim_moved){(void *)first, n, ph_thread_lane(), cost_ns};
}

static long sim_move(ph_os *os, size_t count, void *const *pages, const int *nodes,
                     int *status)
{
    sim_state *s = os->impl;
    const ph_topology *t = os->topo;
    int8_t *res = residency_of(pages, count);
    if (!res)
        return ph_fail(ENOMEM, "move: out of memory for %zu pages", count);
    long missed = 0;
    pthread_mutex_lock(&s->lock);
    drain_touches(s, os);
    s->c.move_calls++;
    s->c.move_pages += count;
    double call_ns = call_cost(t);
    s->c.migrate_cost_ns += call_ns;
    for (size_t i = 0; i < count; i++) {
        uintptr_t p = (uintptr_t)pages[i] & ~(uintptr_t)(PH_PAGE_4K - 1);
        int to = ph_topo_node_index(t, nodes[i]);
        sim_range *r = NULL;
        if (res[i] < 0) {
            r = find(s, p);
            if (r && r->page_bytes == PH_PAGE_4K) {
                size_t pi = (p - r->start) / PH_PAGE_4K;
                release_homes(s, r, pi, pi + 1);
            }
            status[i] = -EFAULT;
        } else if (!(r = find_or_track(s, p, res[i]))) {
            status[i] = -ENOMEM;
        } else {
            size_t pi = (p - r->start) / PH_PAGE_4K, first, n;
            int h = settle(s, os, r, pi, res[i]);
            unit_of(r, pi, &first, &n);
            if (h < 0) {
                status[i] = -ENOENT;
            } else if (h == to) {
                status[i] = nodes[i];
            } else if (!is_allowed(s, to)) {
                status[i] = -EINVAL;
            } else if (!has_room(s, to, n) || (r->hugetlb && pool_free(s, t, to) == 0)) {
                status[i] = -ENOMEM;
            } else {
                double unit_ns = page_cost(t, h, to, r->page_bytes);
                set_unit_home(s, r, first, n, to);
                log_move(s, r->start + first * PH_PAGE_4K, n, unit_ns + call_ns);
                call_ns = 0; /* the call's cost goes with its first unit */
                s->c.moved_pages++;
                s->c.migrate_cost_ns += unit_ns;
                status[i] = nodes[i];
            }
        }
        if (status[i] != nodes[i])
            missed++;
    }
    s->c.move_failed_pages += (uint64_t)missed;
    pthread_mutex_unlock(&s->lock);
    free(res);
    return missed;
}

/* ---- bind / populate ----------------------------------------------------- */

/* Aligned extent of [addr, addr+len) in pages (ph_sim_touch, which does
 * not come through the front door). */
static void extent(const void *addr, size_t len, uintptr_t *a, size_t *npages)
{
    *a = (uintptr_t)addr & ~(uintptr_t)(PH_PAGE_4K - 1);
    *npages = (len + ((uintptr_t)addr - *a) + PH_PAGE_4K - 1) / PH_PAGE_4K;
}

static int sim_bind(ph_os *os, void *addr, size_t len, enum ph_bind_kind kind,
                    const int *nodes, int nnodes)
{
    sim_state *s = os->impl;
    int idx[PH_MAX_NODES];
    for (int i = 0; i < nnodes; i++)
        idx[i] = ph_topo_node_index(os->topo, nodes[i]);
    uintptr_t a = (uintptr_t)addr;
    size_t n = len / PH_PAGE_4K;
    if (residency_range(a, n, NULL) != 0)
        return ph_fail(EFAULT, "bind: [%p, +%zu) is not entirely mapped", (void *)a,
                       n * PH_PAGE_4K);
    pthread_mutex_lock(&s->lock);
    s->c.bind_calls++;
    for (size_t k = 0; k < n; k++) {
        uintptr_t p = a + k * PH_PAGE_4K;
        sim_range *r = find_or_track(s, p, 1);
        if (!r) {
            pthread_mutex_unlock(&s->lock);
            return ph_fail(ENOMEM, "bind: out of memory tracking %p", (void *)p);
        }
        size_t pi = (p - r->start) / PH_PAGE_4K;
        int b = -1;
        if (kind == PH_BIND_PREFERRED) {
            b = idx[0];
        } else if (kind == PH_BIND_INTERLEAVE) {
            uintptr_t v = r->page_bytes == PH_PAGE_2M ? p / PH_PAGE_2M : p / PH_PAGE_4K;
            b = idx[v % (uintptr_t)nnodes];
        }
        r->bound[pi] = (int16_t)b;
    }
    pthread_mutex_unlock(&s->lock);
    return 0;
}

/* Giving homes to the pages of [a, a+n pages) that have none, in three
 * steps.  check (lock held): pages resident without a home settle
 * (populate keeps resident pages where they are), and with exact the node
 * must have room for all the others (else -1/ENOMEM, nothing changed;
 * otherwise full nodes fall back to the nearest with room).  Then the
 * memory is faulted for real, *without* the lock: a page of the range
 * the userfaultfd sampler has in its stash makes the fault wait for its
 * service thread, which tells of the page's trip back (note_moved, under
 * the lock) before it wakes the faulting thread.  assign (lock held):
 * every page still without a home gets one -- a page that came back
 * meanwhile brought its own.  (Two populates racing for the last room of
 * a node may both pass their checks; the assign then falls back like a
 * populate that is not exact.) */
static int give_homes_check(sim_state *s, ph_os *os, uintptr_t a, size_t n,
                            const int8_t *res, int node_idx, int exact, const char *who)
{
    const ph_topology *t = os->topo;
    uint64_t need[PH_MAX_NODES], need_tlb[PH_MAX_NODES];
    memset(need, 0, sizeof need);
    memset(need_tlb, 0, sizeof need_tlb);
    /* Pass 1: track, settle, and count what the new homes need. */
    for (size_t k = 0; k < n; k++) {
        uintptr_t p = a + k * PH_PAGE_4K;
        sim_range *r = find_or_track(s, p, 1);
        if (!r)
            return ph_fail(ENOMEM, "%s: out of memory tracking %p", who, (void *)p);
        size_t pi = (p - r->start) / PH_PAGE_4K, first, un;
        int h;
        if (exact) {
            h = settle(s, os, r, pi, res[k]);
        } else {
            h = r->home[pi];
            if (h >= 0 && res[k] == 0 && r->page_bytes == PH_PAGE_4K) {
                release_homes(s, r, pi, pi + 1); /* discarded: touched anew */
                h = -1;
            }
        }
        unit_of(r, pi, &first, &un);
        if (h < 0 && (pi == first || k == 0)) {
            int want = r->bound[first] >= 0 ? r->bound[first] : node_idx;
            need[want] += un;
            need_tlb[want] += r->hugetlb;
        }
    }
    if (exact)
        for (int j = 0; j < t->nnodes; j++) {
            if (need[j] && !has_room(s, j, need[j]))
                return ph_fail(ENOMEM,
                               "%s: node %d is full (%llu of %llu pages used, %llu more "
                               "needed)",
                               who, t->nodes[j].id, (unsigned long long)s->used[j],
                               (unsigned long long)s->capacity[j],
                               (unsigned long long)need[j]);
            if (need_tlb[j] > pool_free(s, t, j))
                return ph_fail(ENOMEM,
                               "%s: the hugetlbfs pool of node %d is empty (or too small "
                               "for %llu pages of 2 MiB: %llu free)",
                               who, t->nodes[j].id, (unsigned long long)need_tlb[j],
                               (unsigned long long)pool_free(s, t, j));
        }
    return 0;
}

static void give_homes_assign(sim_state *s, ph_os *os, uintptr_t a, size_t n,
                              int node_idx, int exact)
{
    const ph_topology *t = os->topo;
    for (size_t k = 0; k < n; k++) {
        uintptr_t p = a + k * PH_PAGE_4K;
        sim_range *r = find(s, p);
        size_t pi = (p - r->start) / PH_PAGE_4K, first, un;
        unit_of(r, pi, &first, &un);
        if (r->home[first] >= 0)
            continue;
        int want = r->bound[first] >= 0 ? r->bound[first] : node_idx;
        int h = r->hugetlb                           ? pick_tlb_home(s, t, want)
                : exact && has_room(s, want, un) ? want
                                                   : pick_home(s, t, want, un);
        set_unit_home(s, r, first, un, h);
        s->c.populated_pages += un;
    }
}

static int populate_common(ph_os *os, void *addr, size_t len, int node, int exact,
                           const char *who)
{
    sim_state *s = os->impl;
    int idx = ph_topo_node_index(os->topo, node);
    uintptr_t a;
    size_t n;
    extent(addr, len, &a, &n);
    int8_t *res = malloc(n);
    if (!res)
        return ph_fail(ENOMEM, "%s: out of memory for %zu pages", who, n);
    if (residency_range(a, n, res) != 0) {
        free(res);
        return ph_fail(EFAULT, "%s: [%p, +%zu) is not entirely mapped", who, (void *)a,
                       n * PH_PAGE_4K);
    }
    pthread_mutex_lock(&s->lock);
    drain_touches(s, os);
    if (exact)
        s->c.populate_calls++;
    int rc = give_homes_check(s, os, a, n, res, idx, exact, who);
    pthread_mutex_unlock(&s->lock);
    free(res);
    if (rc != 0)
        return rc;
    if (ph_os_populate((void *)a, n * PH_PAGE_4K, 1) != 0) {
        int e = errno;
        return ph_fail(e == EFAULT ? ENOMEM : e, "%s: faulting %zu pages failed: %s", who,
                       n, strerror(e));
    }
    pthread_mutex_lock(&s->lock);
    drain_touches(s, os);
    give_homes_assign(s, os, a, n, idx, exact);
    pthread_mutex_unlock(&s->lock);
    return 0;
}

static int sim_populate_on(ph_os *os, void *addr, size_t len, int node)
{
    return populate_common(os, addr, len, node, 1, "populate");
}

/* ---- memory ---------------------------------------------------------------- */

/* len and align come rounded to the page size from the front door. */
static void *sim_map(ph_os *os, size_t len, size_t align, unsigned flags)
{
    sim_state *s = os->impl;
    int huge = (flags & (PH_MAP_HUGE_THP | PH_MAP_HUGE_TLBFS)) != 0;
    size_t unit = huge ? PH_PAGE_2M : PH_PAGE_4K;
    size_t l = len;
    if (flags & PH_MAP_HUGE_TLBFS) {
        uint64_t avail = 0, want = l / PH_PAGE_2M;
        pthread_mutex_lock(&s->lock);
        for (int j = 0; j < os->topo->nnodes; j++)
            avail += pool_free(s, os->topo, j);
        avail = avail > s->tlb_resv ? avail - s->tlb_resv : 0;
        pthread_mutex_unlock(&s->lock);
        if (avail < want)
            return ph_fail_null(ENOMEM,
                                "map: no 2 MiB pages for %zu bytes: the hugetlbfs pools are "
                                "empty or too small (%llu pages free and not reserved)",
                                l, (unsigned long long)avail);
    }
    /* hugetlbfs is simulated: ordinary memory with 2 MiB pages recorded. */
    void *p = ph_os_mmap_aligned(l, align, 0);
    if (!p)
        return ph_fail_null(ENOMEM, "map: mmap of %zu bytes failed: %s", l, strerror(errno));
    if (huge)
        (void)madvise(p, l, MADV_HUGEPAGE);
    else if (flags & PH_MAP_NO_THP)
        (void)madvise(p, l, MADV_NOHUGEPAGE);
    sim_range *r = range_new((uintptr_t)p, (uintptr_t)p + l, unit);
    if (!r) {
        munmap(p, l);
        return ph_fail_null(ENOMEM, "map: out of memory tracking %zu bytes", l);
    }
    r->owned = 1;
    r->hugetlb = (flags & PH_MAP_HUGE_TLBFS) != 0;
    r->map_flags = flags;
    pthread_mutex_lock(&s->lock);
    /* The address may have held memory tracked before (freed behind our
     * back): forget it. */
    int rc = untrack(s, r->start, r->end);
    if (rc == 0)
        rc = insert(s, r);
    if (rc == 0 && r->hugetlb)
        s->tlb_resv += l / PH_PAGE_2M;
    pthread_mutex_unlock(&s->lock);
    if (rc != 0) {
        range_free(r);
        munmap(p, l);
        return ph_fail_null(ENOMEM, "map: out of memory tracking %zu bytes", l);
    }
    return p;
}

static int sim_unmap(ph_os *os, void *addr, size_t len)
{
    sim_state *s = os->impl;
    uintptr_t a = (uintptr_t)addr;
    size_t l = len;
    pthread_mutex_lock(&s->lock);
    sim_range *r = find(s, a);
    if (r && r->owned && r->start == a && r->page_bytes == PH_PAGE_2M)
        l = (len + PH_PAGE_2M - 1) & ~(PH_PAGE_2M - 1);
    int rc = untrack(s, a, a + l);
    pthread_mutex_unlock(&s->lock);
    if (rc != 0)
        return ph_fail(ENOMEM, "unmap: out of memory splitting a tracked range");
    if (munmap(addr, l) != 0) {
        int e = errno;
        return ph_fail(e, "unmap: munmap(%p, %zu) failed: %s", addr, l, strerror(e));
    }
    return 0;
}

/* Real madvise; the recorded page size changes only when the range is
 * exactly one tracked range (2 MiB-aligned to turn huge pages on).  When
 * 4 KiB pages become one 2 MiB page, it is homed where its first homed
 * page was (khugepaged would collapse it somewhere; this is a choice). */
static int sim_advise_huge(ph_os *os, void *addr, size_t len, int on)
{
    sim_state *s = os->impl;
    uintptr_t a = (uintptr_t)addr;
    size_t n = len / PH_PAGE_4K;
    if (madvise((void *)a, n * PH_PAGE_4K, on ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) != 0) {
        int e = errno;
        return ph_fail(e, "advise_huge: madvise failed: %s", strerror(e));
    }
    pthread_mutex_lock(&s->lock);
    sim_range *r = find(s, a);
    if (r && !r->hugetlb && r->start == a && r->end == a + n * PH_PAGE_4K) {
        if (!on) {
            r->page_bytes = PH_PAGE_4K;
        } else if (a % PH_PAGE_2M == 0 && n % SIM_UNIT_PAGES == 0) {
            r->page_bytes = PH_PAGE_2M;
            for (size_t f = 0; f < n; f += SIM_UNIT_PAGES) {
                int h = -1;
                for (size_t k = f; k < f + SIM_UNIT_PAGES && h < 0; k++)
                    h = r->home[k];
                if (h >= 0)
                    set_unit_home(s, r, f, SIM_UNIT_PAGES, h);
                int16_t b = r->bound[f];
                for (size_t k = f; k < f + SIM_UNIT_PAGES; k++)
                    r->bound[k] = b;
            }
        }
    }
    pthread_mutex_unlock(&s->lock);
    return 0;
}

static int sim_huge_state(ph_os *os, void *addr, size_t n, uint8_t *huge)
{
    sim_state *s = os->impl;
    uintptr_t a = (uintptr_t)addr;
    pthread_mutex_lock(&s->lock);
    for (size_t k = 0; k < n;) {
        uintptr_t p = a + k * PH_PAGE_4K;
        sim_range *r = find(s, p);
        if (!r) {
            huge[k++] = 0;
            continue;
        }
        uint8_t v = r->page_bytes == PH_PAGE_2M;
        for (; k < n && a + k * PH_PAGE_4K < r->end; k++)
            huge[k] = v;
    }
    pthread_mutex_unlock(&s->lock);
    return 0;
}

/* Carve the page-aligned [a, b), which lies inside one tracked range, out
 * as a range of its own with page size page_bytes (homes kept).  The
 * range, or NULL/ENOMEM (nothing changed), or NULL/ENOENT (not inside one
 * tracked range). */
static sim_range *carve(sim_state *s, uintptr_t a, uintptr_t b, size_t page_bytes)
{
    sim_range *r = find(s, a);
    if (!r || b > r->end) {
        errno = ENOENT;
        return NULL;
    }
    if (r->start == a && r->end == b) {
        r->page_bytes = page_bytes;
        return r;
    }
    size_t n = npages_of(r);
    size_t from = (a - r->start) / PH_PAGE_4K, to = (b - r->start) / PH_PAGE_4K;
    sim_range *left = from ? slice(r, 0, from) : NULL;
    sim_range *mid = slice(r, from, to);
    sim_range *right = to < n ? slice(r, to, n) : NULL;
    if ((from && !left) || !mid || (to < n && !right) || s->nr + 2 > s->capr) {
        size_t cap = s->capr * 2 + 2;
        sim_range **nr = s->nr + 2 > s->capr ? realloc(s->r, cap * sizeof *nr) : s->r;
        if (!nr || (from && !left) || !mid || (to < n && !right)) {
            range_free(left);
            range_free(mid);
            range_free(right);
            errno = ENOMEM;
            return NULL;
        }
        s->r = nr;
        s->capr = cap;
    }
    /* The pieces hold the same homes: the per-node counts do not change. */
    size_t i = upper(s, r->start) - 1;
    memmove(s->r + i, s->r + i + 1, (s->nr - i - 1) * sizeof *s->r);
    s->nr--;
    range_free(r);
    mid->page_bytes = page_bytes;
    (void)insert(s, mid);
    if (left)
        (void)insert(s, left);
    if (right)
        (void)insert(s, right);
    return mid;
}

/* The real madvise (as on Linux), and the recorded page size of each
 * resident unit; a collapsed unit is homed where most of its pages were.
 * A collapse also asks the real kernel to map the memory whole again
 * where it can (MADV_COLLAPSE; its failure is not the model's: the
 * memory the simulated machine runs on need not be huge at all). */
static int sim_huge_split(ph_os *os, void *addr, size_t len, int split)
{
    sim_state *s = os->impl;
    uintptr_t a = (uintptr_t)addr;
    if (madvise(addr, len, split ? MADV_NOHUGEPAGE : MADV_HUGEPAGE) != 0) {
        int e = errno;
        return ph_fail(e, "huge_split: madvise failed: %s", strerror(e));
    }
    if (!split) {
        int e = errno;
        (void)madvise(addr, len, MADV_COLLAPSE);
        errno = e;
    }
    pthread_mutex_lock(&s->lock);
    int rc = 0;
    for (uintptr_t u = a; u < a + len && rc == 0; u += PH_PAGE_2M) {
        sim_range *r = find(s, u);
        if (!r || u + PH_PAGE_2M > r->end || r->hugetlb)
            continue; /* not tracked: nothing resident; hugetlbfs: never split */
        if (r->page_bytes == (split ? PH_PAGE_4K : PH_PAGE_2M))
            continue;
        sim_range *m = carve(s, u, u + PH_PAGE_2M, split ? PH_PAGE_4K : PH_PAGE_2M);
        if (!m) {
            rc = ph_fail(errno, "huge_split: out of memory tracking pages");
            break;
        }
        if (!split) {
            int count[PH_MAX_NODES] = {0}, best = -1;
            for (size_t k = 0; k < SIM_UNIT_PAGES; k++)
                if (m->home[k] >= 0 && ++count[m->home[k]] > (best >= 0 ? count[best] : 0))
                    best = m->home[k];
            if (best >= 0)
                set_unit_home(s, m, 0, SIM_UNIT_PAGES, best);
        }
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

static int sim_huge_eligible(ph_os *os, void *addr, size_t len)
{
    (void)os, (void)addr, (void)len;
    return 0;
}

/* ---- probe / close ---------------------------------------------------------- */

static int sim_probe(ph_os *os, ph_os_probe *out)
{
    (void)os;
    out->move_permitted = 1;
    out->numa_balancing = 0;
    strcpy(out->thp_mode, "always");
    out->huge_2m_hugetlbfs = 1;
    return 0;
}

static uint64_t sim_allowed(ph_os *os)
{
    sim_state *s = os->impl;
    uint64_t all = os->topo->nnodes >= 64 ? ~UINT64_C(0)
                                          : (UINT64_C(1) << os->topo->nnodes) - 1;
    pthread_mutex_lock(&s->lock);
    uint64_t m = s->allowed & all;
    pthread_mutex_unlock(&s->lock);
    return m ? m : all;
}

int ph_sim_set_allowed(ph_os *os, uint64_t mask)
{
    sim_state *s = sim_of(os);
    if (!s)
        return ph_fail(EINVAL, "set_allowed: not the simulated machine");
    pthread_mutex_lock(&s->lock);
    s->allowed = mask;
    pthread_mutex_unlock(&s->lock);
    return 0;
}

/* The process's own policy: its binding is the allowed set (as
 * ph_sim_set_allowed); any other policy lifts it. */
static int sim_process_policy(ph_os *os, int own, const int *bind_nodes, int nbind)
{
    (void)own;
    uint64_t mask = 0;
    for (int i = 0; i < nbind; i++)
        mask |= UINT64_C(1) << ph_topo_node_index(os->topo, bind_nodes[i]);
    return ph_sim_set_allowed(os, mask);
}

static int sim_huge_pool(ph_os *os, int node, size_t page_bytes, ph_os_pool *out)
{
    sim_state *s = os->impl;
    const ph_topology *t = os->topo;
    int from = node < 0 ? 0 : ph_topo_node_index(t, node);
    int to = node < 0 ? t->nnodes : from + 1;
    int found = 0;
    pthread_mutex_lock(&s->lock);
    for (int i = from; i < to; i++) {
        const ph_node_info *nd = &t->nodes[i];
        for (int j = 0; j < nd->npools && j < 2; j++) {
            const ph_hugepool *p = &nd->pools[j];
            if (p->page_bytes != page_bytes)
                continue;
            found = 1;
            out->total_pages += p->total;
            out->surplus_pages += p->surplus;
            out->free_pages += page_bytes == PH_PAGE_2M ? pool_free(s, t, i) : p->free;
        }
    }
    if (node < 0 && page_bytes == PH_PAGE_2M)
        out->reserved_pages = s->tlb_resv;
    pthread_mutex_unlock(&s->lock);
    if (!found)
        return ph_fail(ENOENT, "huge_pool: the simulated machine has no %zu MiB pool%s",
                       page_bytes >> 20, node < 0 ? "" : " on that node");
    return 0;
}

static void sim_close(ph_os *os)
{
    if (!os)
        return;
    sim_state *s = os->impl;
    if (s) {
        if (tl_bound_id == s->id)
            tl_bound_id = 0;
        for (size_t i = 0; i < s->nr; i++) {
            sim_range *r = s->r[i];
            /* Owned memory still mapped is the caller's leak; the real
             * mapping is left alone (it may still be in use). */
            range_free(r);
        }
        free(s->r);
        ph_own_fd_close(s->pagemap_fd);
        pthread_mutex_destroy(&s->lock);
        free(s->touch);
        free(s->log);
        free(s);
    }
    free(os);
}

static const ph_os_ops sim_ops = {
    .name = "sim",
    .query = sim_query,
    .move = sim_move,
    .bind = sim_bind,
    .populate_on = sim_populate_on,
    .map = sim_map,
    .unmap = sim_unmap,
    .advise_huge = sim_advise_huge,
    .huge_state = sim_huge_state,
    .huge_split = sim_huge_split,
    .huge_eligible = sim_huge_eligible,
    .huge_pool = sim_huge_pool,
    .current_cpu = sim_current_cpu,
    .current_node = sim_current_node,
    .note_touch = sim_note_touch,
    .note_moved = sim_note_moved,
    .set_thread_node = sim_set_thread_node,
    .probe = sim_probe,
    .allowed = sim_allowed,
    .process_policy = sim_process_policy,
    .close = sim_close,
    .fork_prepare = sim_fork_prepare,
    .fork_parent = sim_fork_parent,
    .fork_child = sim_fork_child,
};

ph_os *ph_os_sim_open(const struct ph_topology *topo)
{
    if (!topo || topo->nnodes < 1 || topo->nnodes > PH_MAX_NODES)
        return ph_fail_null(EINVAL, "simulated machine: no topology");
    sim_state *s = calloc(1, sizeof *s);
    if (!s)
        return ph_fail_null(ENOMEM, "simulated machine: out of memory");
    s->touch = calloc(SIM_TOUCH_CELLS, sizeof *s->touch);
    if (!s->touch) {
        free(s);
        return ph_fail_null(ENOMEM, "simulated machine: out of memory");
    }
    for (uint64_t k = 0; k < SIM_TOUCH_CELLS; k++)
        atomic_init(&s->touch[k].seq, k);
    pthread_mutex_init(&s->lock, NULL);
    s->id = atomic_fetch_add(&sim_next_id, 1);
    /* kept from the program's close calls (base/own_fd.h) */
    s->pagemap_fd = ph_own_fd_keep(open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC));
    ph_os *os = ph_os_new(&sim_ops, topo, s);
    if (!os) {
        ph_own_fd_close(s->pagemap_fd);
        pthread_mutex_destroy(&s->lock);
        free(s->touch);
        free(s);
    }
    return os;
}

/* ---- extras ------------------------------------------------------------------ */

int ph_sim_counters_get(ph_os *os, ph_sim_counters *out)
{
    sim_state *s = sim_of(os);
    if (!s || !out)
        return ph_fail(ENOTSUP, "ph_sim_counters_get: not the simulated machine");
    pthread_mutex_lock(&s->lock);
    drain_touches(s, os);
    *out = s->c;
    out->touch_lost = atomic_load(&s->touch_lost);
    pthread_mutex_unlock(&s->lock);
    return 0;
}

int ph_sim_set_move_log(ph_os *os, int on)
{
    sim_state *s = sim_of(os);
    if (!s)
        return ph_fail(ENOTSUP, "ph_sim_set_move_log: not the simulated machine");
    pthread_mutex_lock(&s->lock);
    s->log_on = on != 0;
    if (!on)
        s->nlog = 0;
    pthread_mutex_unlock(&s->lock);
    return 0;
}

int ph_sim_move_log_take(ph_os *os, ph_sim_moved **out, size_t *n)
{
    sim_state *s = sim_of(os);
    if (!s || !out || !n)
        return ph_fail(ENOTSUP, "ph_sim_move_log_take: not the simulated machine");
    pthread_mutex_lock(&s->lock);
    *out = NULL;
    *n = s->nlog;
    if (s->nlog) {
        *out = malloc(s->nlog * sizeof **out);
        if (*out)
            memcpy(*out, s->log, s->nlog * sizeof **out);
        else
            *n = 0;
    }
    s->nlog = 0;
    pthread_mutex_unlock(&s->lock);
    return 0;
}

int ph_sim_set_node_capacity(ph_os *os, int node, uint64_t pages)
{
    sim_state *s = sim_of(os);
    if (!s)
        return ph_fail(ENOTSUP, "ph_sim_set_node_capacity: not the simulated machine");
    int idx = ph_topo_node_index(os->topo, node);
    if (idx < 0)
        return ph_fail(EINVAL, "ph_sim_set_node_capacity: node %d is not a node of the machine",
                       node);
    pthread_mutex_lock(&s->lock);
    s->capacity[idx] = pages;
    pthread_mutex_unlock(&s->lock);
    return 0;
}

int ph_sim_find_openmp(const void *runtime_addr)
{
    if (omp_get_thread_num && omp_get_num_threads)
        return 0;
    Dl_info info;
    if (!runtime_addr || !dladdr(runtime_addr, &info) || !info.dli_fname)
        return ph_fail(EINVAL, "ph_sim_find_openmp: %p is in no loaded object", runtime_addr);
    /* RTLD_NOLOAD: a reference to the loaded runtime, never a new one;
     * kept, so the functions stay while the process may ask them */
    void *h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    sim_omp_fn num = h ? (sim_omp_fn)(uintptr_t)dlsym(h, "omp_get_thread_num") : NULL;
    sim_omp_fn size = h ? (sim_omp_fn)(uintptr_t)dlsym(h, "omp_get_num_threads") : NULL;
    if (!num || !size)
        return ph_fail(ENOENT, "ph_sim_find_openmp: %s has no omp_get_thread_num",
                       info.dli_fname);
    atomic_store_explicit(&sim_omp_num_threads, size, memory_order_release);
    atomic_store_explicit(&sim_omp_thread_num, num, memory_order_release);
    return 0;
}

int ph_sim_set_binding(ph_os *os, ph_sim_binding binding)
{
    sim_state *s = sim_of(os);
    if (!s)
        return ph_fail(ENOTSUP, "ph_sim_set_binding: not the simulated machine");
    if (binding != PH_SIM_BIND_BLOCK && binding != PH_SIM_BIND_CYCLIC)
        return ph_fail(EINVAL, "ph_sim_set_binding: %d is not a binding rule", (int)binding);
    atomic_store(&s->binding, (int)binding);
    return 0;
}

int64_t ph_sim_node_pages(ph_os *os, int node)
{
    sim_state *s = sim_of(os);
    if (!s)
        return ph_fail(ENOTSUP, "ph_sim_node_pages: not the simulated machine");
    int idx = ph_topo_node_index(os->topo, node);
    if (idx < 0)
        return ph_fail(EINVAL, "ph_sim_node_pages: node %d is not a node of the machine", node);
    pthread_mutex_lock(&s->lock);
    int64_t v = (int64_t)s->used[idx];
    pthread_mutex_unlock(&s->lock);
    return v;
}

int ph_sim_touch(ph_os *os, void *addr, size_t len, int node)
{
    if (!sim_of(os))
        return ph_fail(ENOTSUP, "ph_sim_touch: not the simulated machine");
    if (ph_topo_node_index(os->topo, node) < 0)
        return ph_fail(EINVAL, "ph_sim_touch: node %d is not a node of the machine", node);
    if (len == 0)
        return 0;
    return populate_common(os, addr, len, node, 0, "ph_sim_touch");
}
