/*
 * os.h -- the OS-operations table: everything pagehome asks of the machine.
 *
 * Two implementations share this contract:
 *   os_linux.c  the kernel: move_pages(2), mbind(2), get_mempolicy(2),
 *               madvise(2), sched_getcpu(3), the hugetlbfs pools in sysfs;
 *   os_sim.c    the simulated machine: virtual homes per page, virtual
 *               thread binding, modeled hugetlbfs pools, costs and
 *               counters, no kernel involved.
 * A third, os_faulty.c, wraps either one and injects failures (tests).
 * Code outside src/os/ never calls the kernel for placement, never reads
 * what the kernel publishes about it (sysfs pools) and never tests which
 * implementation it has.
 *
 * THE FRONT DOOR.  Callers outside src/os/ use the ph_os_*() functions
 * below, never os->ops: each checks its arguments once against this
 * contract (NULL arrays, counts and lengths, address ranges, nodes of the
 * topology, bind kinds and node lists, map flags and
 * alignment, huge-page ranges), fails with -1/EINVAL and a message when
 * they are wrong, normalizes ranges to whole 4 KiB pages, and only then
 * calls the implementation.  Implementations trust what the front door
 * hands them and do not check it again.  Entries of a move whose target is
 * not a node of the topology get -EINVAL from the front door and never
 * reach the implementation.
 *
 * CONTRACT (every implementation):
 *  - An address passed as a page (query, move) names the 4 KiB page that
 *    holds it.  Ranges [addr, addr+len) are widened to whole 4 KiB pages;
 *    a range that wraps around the address space is -1/EINVAL.  Nodes are OS node numbers of
 *    the topology the ph_os was opened with.  A count or length of 0 does
 *    nothing and succeeds once the other arguments are valid.
 *  - Batch operations fill status[i] for every i < count: the node the
 *    page is on after the call (>= 0), or a negative errno for that page:
 *      -ENOENT  page not yet faulted (no home yet).  A page that was only
 *               read (mapped to the shared zero page) is not faulted.
 *      -EFAULT  address not mapped
 *      -EBUSY, -EAGAIN  transiently busy: a later call may succeed.
 *               -EAGAIN also marks a page the call did not get to (the
 *               kernel stops a call at the first run of pages it cannot
 *               migrate as a whole, e.g. a full target node).
 *      -ENOMEM  target node has no free memory
 *      -EACCES  page shared with another process, not movable
 *      -EINVAL  bad target node (not a node of the topology, or one the
 *               kernel refuses: no memory, outside the cpuset; the
 *               simulator: outside the set ph_sim_set_allowed gave)
 *    and return 0 (query) or the number of pages not on their target
 *    (move).  They return -1 with errno only when the call as a whole could
 *    not be made (EPERM / ENOSYS: moving refused by the kernel or a
 *    seccomp filter; EINVAL: bad arguments; EFAULT: bad arrays).
 *  - move() makes exactly one attempt: no retries, no fallbacks, no
 *    splitting into batches.  Those live in the mover (src/move/).
 *    (The Linux implementation may follow the one move_pages(2) call with
 *    one query of the pages whose outcome the kernel left unreported.)
 *  - A 2 MiB page moves as a whole, whichever of its 4 KiB pages is named.
 *    Each status says where the page was when the call handled that entry:
 *    when a later entry of the same call moves the same 2 MiB page again,
 *    an earlier entry's status is stale.  The mover never sends two
 *    entries of one 2 MiB page.
 *  - bind() sets where *not yet faulted* pages of a range land; resident
 *    pages are not moved.  It may split kernel VMAs: callers bind few,
 *    large ranges.  PREFERRED uses nodes[0].  INTERLEAVE takes nodes in
 *    ascending order, each once (the kernel keeps a node *mask*, so it
 *    has no other order); anything else fails with EINVAL.  The page at
 *    virtual page number v (address / page size of the range: 4 KiB, or
 *    2 MiB for huge pages) lands on nodes[v % n].  Unmapped holes in the
 *    range: -1/EFAULT.  LOCAL places like DEFAULT (the toucher's node)
 *    but as the range's own policy (Linux: MPOL_LOCAL): the kernel's
 *    automatic NUMA balancing scans only memory under the default policy,
 *    so it leaves such a range -- like any range with a policy of its
 *    own -- alone.  A process started under a memory policy of its own
 *    (numactl --membind, --interleave, --preferred) keeps it: its ranges
 *    are left to it (the kernel's balancing skips all of its memory
 *    already).  The simulator has no balancing: LOCAL is DEFAULT.
 *  - populate_on() faults in every page of a range so that new pages come
 *    from `node` (already resident pages stay; data is never changed).  A
 *    range's own bind() policy overrides `node`, as in the kernel.  It
 *    never raises SIGBUS: an exhausted hugetlbfs pool returns -1/ENOMEM.
 *    When `node` runs out of 4 KiB memory, Linux falls back to other nodes
 *    (a preferred policy: no OOM killer), while the simulator with a node
 *    capacity returns -1/ENOMEM and changes nothing.  Check with query()
 *    when it matters.
 *  - huge_state() never fails for holes: unmapped pages report 0.
 *  - huge_pool() reports a hugetlbfs pool: of one node, or of the whole
 *    machine (node -1, with the pages reserved by mappings not yet
 *    faulted).  Linux reads sysfs; the simulator models pools from its
 *    topology's snapshot: map(HUGE_TLBFS) reserves from them, a 2 MiB
 *    page faulted on a node takes one of its free pages, unmap gives
 *    them back.  -1/ENOENT when there is no pool of that size.
 *  - current_cpu() and current_node() are async-signal-safe: no locks, no
 *    allocation, errno untouched; they may be called from a SIGSEGV
 *    handler.  They return -1 when they cannot tell.
 *  - note_touch() (optional: NULL where the kernel places first touches
 *    itself, as on Linux) is async-signal-safe too.  It tells the machine
 *    that the calling thread, on node `node`, touches [addr, addr+len)
 *    and is the first to do so where a page has no home yet: the
 *    sampler's trap on a watched page, before the kernel faults it in.
 *    The simulator gives such a page, when it is faulted, that node (not
 *    the node of whoever asks about it first); a note it cannot keep
 *    (its record of notes full) is lost, and the page falls back to the
 *    asking thread's node.
 *  - note_moved() (optional: NULL where a page keeps its node wherever
 *    its mapping goes, as on Linux) is never called in a signal handler
 *    (it may take a lock).  It tells the machine that the pages of
 *    [src, src+len) move, or have just moved, to [dst, dst+len) as they
 *    are (userfaultfd's UFFDIO_MOVE: the sampler parks watched pages in a
 *    stash and brings them back), so a page keeps its home across the
 *    trip.  The simulator applies it at once, after the touches noted
 *    before it, and never drops one: the mover notes a page after it left
 *    a place nobody queries (its way out to the stash) and before it
 *    arrives where the program's pages are queried (its way back), so no
 *    query sees an arrived page without its home.
 *  - Every operation is thread-safe.
 *  - fork() (optional: NULL where the machine keeps no lock of its own,
 *    as on Linux).  fork_prepare() takes the implementation's locks,
 *    fork_parent() releases them, fork_child() makes them afresh in the
 *    child, whose one thread then finds the machine's state whole: no
 *    thread of the parent was inside an operation at the fork.  The
 *    caller takes them innermost, after every lock of its own whose
 *    holder may call the machine (the engine does: engine.h), and calls
 *    nothing of this machine between prepare and parent/child.
 */
#ifndef PH_OS_OS_H
#define PH_OS_OS_H

#include "base/page.h"

#include <stddef.h>
#include <stdint.h>

struct ph_topology;
typedef struct ph_os ph_os;

enum ph_bind_kind {
    PH_BIND_DEFAULT = 0,    /* forget any binding: first touch */
    PH_BIND_PREFERRED = 1,  /* nodes[0]; falls back when the node is full */
    PH_BIND_INTERLEAVE = 2, /* page at virtual page number v -> nodes[v % n] */
    PH_BIND_LOCAL = 3       /* first touch, as the range's own policy */
};

enum ph_map_flags {
    PH_MAP_HUGE_THP = 1u << 0,     /* 2 MiB aligned, MADV_HUGEPAGE */
    PH_MAP_HUGE_TLBFS = 1u << 1,   /* MAP_HUGETLB 2 MiB */
    PH_MAP_NO_THP = 1u << 2        /* MADV_NOHUGEPAGE: 4 KiB precision */
};

/* What the machine allows (pagehome topo prints it). */
typedef struct ph_os_probe {
    int move_permitted;      /* 1 yes, 0 refused (EPERM/ENOSYS), -1 unknown */
    int move_errno;          /* errno of the refusal */
    int numa_balancing;      /* /proc/sys/kernel/numa_balancing, -1 unknown */
    char thp_mode[32];       /* "always", "madvise", "never", "" unknown */
    int huge_2m_hugetlbfs;   /* kernel supports MAP_HUGETLB 2 MiB */
} ph_os_probe;

/* A hugetlbfs pool, in pages of its size. */
typedef struct ph_os_pool {
    uint64_t total_pages, free_pages, surplus_pages;
    uint64_t reserved_pages; /* whole machine only: reserved, not yet faulted */
} ph_os_pool;

typedef struct ph_os_ops {
    const char *name; /* "linux", "sim", "faulty(...)" */

    int (*query)(ph_os *os, size_t count, void *const *pages, int *status);
    long (*move)(ph_os *os, size_t count, void *const *pages,
                 const int *nodes, int *status);
    int (*bind)(ph_os *os, void *addr, size_t len, enum ph_bind_kind kind,
                const int *nodes, int nnodes);
    int (*populate_on)(ph_os *os, void *addr, size_t len, int node);

    /* Memory: map zeroed anonymous memory aligned to `align` (a power of
     * two >= 4096) with ph_map_flags; unmap what map returned (len as
     * given to map).  Huge mappings are rounded up to 2 MiB (the front
     * door rounds len up to the page size and align up to it before the
     * implementation sees them).  An empty hugetlbfs pool fails with
     * ENOMEM. */
    void *(*map)(ph_os *os, size_t len, size_t align, unsigned flags);
    int (*unmap)(ph_os *os, void *addr, size_t len);
    /* THP on/off for a range (MADV_HUGEPAGE / MADV_NOHUGEPAGE). */
    int (*advise_huge)(ph_os *os, void *addr, size_t len, int on);
    /* For each of n 4 KiB pages from addr: huge[i] = 1 when the page is
     * part of a 2 MiB page (THP or hugetlbfs), 0 when not, as best the
     * implementation can tell. */
    int (*huge_state)(ph_os *os, void *addr, size_t n, uint8_t *huge);
    /* Change the page size of the 2 MiB-aligned range [addr, addr+len)
     * (len a multiple of 2 MiB) now, keeping its data.  split = 1: every
     * 2 MiB page there becomes 512 4 KiB pages, each staying where it is,
     * and THP is turned off for the range so that it is not collapsed
     * again behind our back.  split = 0: THP is turned on and the range is
     * collapsed into 2 MiB pages now where possible; each lands where
     * most of its 4 KiB pages were.  Linux: MADV_NOHUGEPAGE + MADV_COLD on
     * one 4 KiB page of each unit (the kernel splits a huge page that a
     * madvise covers only in part); MADV_HUGEPAGE + MADV_COLLAPSE (Linux
     * >= 6.1; older kernels: -1/EOPNOTSUPP, khugepaged may still collapse
     * later).  Units that are not resident are left alone. */
    int (*huge_split)(ph_os *os, void *addr, size_t len, int split);
    /* 1 when the kernel, left to itself, would back [addr, addr+len) with
     * 2 MiB pages (THP on for all of it: `always`, or `madvise` with
     * MADV_HUGEPAGE, and not turned off with MADV_NOHUGEPAGE; khugepaged
     * may collapse its 4 KiB pages), 0 when not for some part of it or a
     * part is not mapped.  Linux: the THPeligible line of
     * /proc/self/smaps, for every mapping in the range.  The simulator
     * has no khugepaged (its pages are 2 MiB only where mapped so): 0. */
    int (*huge_eligible)(ph_os *os, void *addr, size_t len);
    /* A hugetlbfs pool of page_bytes pages (2 MiB or 1 GiB) on `node`, or
     * of the whole machine (node -1). */
    int (*huge_pool)(ph_os *os, int node, size_t page_bytes, struct ph_os_pool *out);

    int (*current_cpu)(ph_os *os);
    int (*current_node)(ph_os *os);
    void (*note_touch)(ph_os *os, void *addr, size_t len, int node);
    void (*note_moved)(ph_os *os, void *dst, const void *src, size_t len);
    /* Virtual binding of the calling thread (sim); ENOTSUP on Linux.
     * node < 0 returns the thread to the default rule. */
    int (*set_thread_node)(ph_os *os, int node);

    int (*probe)(ph_os *os, ph_os_probe *out);
    /* The nodes this process places pages on, as a mask of node
     * *indexes* (bit i: topo->nodes[i]): with memory, in its cpuset, and
     * in the memory binding it was started under (numactl --membind:
     * MPOL_BIND as the task's policy when the table was opened) or set
     * since (process_policy); the engine's decisions keep to them.  A
     * move to a node without memory or outside the cpuset gets -EINVAL
     * for its pages; one outside the
     * binding is the caller's explicit choice and is made on Linux (the
     * simulator, whose set stands for both, refuses it).  Never 0: when
     * the sets have no node in common, every node. */
    uint64_t (*allowed)(ph_os *os);
    /* The process set a memory policy of its own after the table was
     * opened (the program's set_mempolicy(2) on its initial thread:
     * libnuma's numa_set_membind, numa_set_preferred...): own = 0 hands
     * placement back to pagehome; own = 1 makes bind(LOCAL) leave new
     * ranges to that policy, and with bind_nodes (node ids, an MPOL_BIND)
     * allowed() keeps to them from now on.  The simulator takes the
     * binding as ph_sim_set_allowed does (without one: all nodes). */
    int (*process_policy)(ph_os *os, int own, const int *bind_nodes, int nbind);
    void (*close)(ph_os *os);

    void (*fork_prepare)(ph_os *os);
    void (*fork_parent)(ph_os *os);
    void (*fork_child)(ph_os *os);
} ph_os_ops;

struct ph_os {
    const ph_os_ops *ops;
    const struct ph_topology *topo;
    void *impl;          /* implementation state */
};

/* Open an implementation over a topology (which must outlive it). */
ph_os *ph_os_linux_open(const struct ph_topology *topo);
ph_os *ph_os_sim_open(const struct ph_topology *topo);
/* Close any ph_os (NULL is ignored). */
void ph_os_close(ph_os *os);

/* ---- the front door (os.c): the operations above, arguments checked ---- */

/* "linux", "sim", "faulty(sim)"... */
const char *ph_os_name(const ph_os *os);
int ph_os_query(ph_os *os, size_t count, void *const *pages, int *status);
long ph_os_move(ph_os *os, size_t count, void *const *pages, const int *nodes,
                int *status);
int ph_os_bind(ph_os *os, void *addr, size_t len, enum ph_bind_kind kind,
               const int *nodes, int nnodes);
int ph_os_populate_on(ph_os *os, void *addr, size_t len, int node);
void *ph_os_map(ph_os *os, size_t len, size_t align, unsigned flags);
int ph_os_unmap(ph_os *os, void *addr, size_t len);
int ph_os_advise_huge(ph_os *os, void *addr, size_t len, int on);
int ph_os_huge_state(ph_os *os, void *addr, size_t n, uint8_t *huge);
int ph_os_huge_split(ph_os *os, void *addr, size_t len, int split);
/* 1, 0 (also for len 0), or -1 when it cannot be told. */
int ph_os_huge_eligible(ph_os *os, void *addr, size_t len);
int ph_os_huge_pool(ph_os *os, int node, size_t page_bytes, ph_os_pool *out);
/* Async-signal-safe (no checks beyond os itself, errno untouched). */
int ph_os_current_cpu(ph_os *os);
int ph_os_current_node(ph_os *os);
void ph_os_note_touch(ph_os *os, void *addr, size_t len, int node);
void ph_os_note_moved(ph_os *os, void *dst, const void *src, size_t len);
/* 1 when the machine wants note_touch() (it cannot see who faults a
 * page: the simulator), 0 when it does not. */
int ph_os_tracks_touch(const ph_os *os);
int ph_os_set_thread_node(ph_os *os, int node);
int ph_os_probe_machine(ph_os *os, ph_os_probe *out);
/* The allowed nodes (ops->allowed above); a NULL os: 0. */
uint64_t ph_os_allowed_nodes(ph_os *os);
/* ops->process_policy: own 0 or 1; bind_nodes NULL with nbind 0, or
 * 1..nnodes distinct node ids of the machine (EINVAL otherwise). */
int ph_os_process_policy(ph_os *os, int own, const int *bind_nodes, int nbind);
/* Around fork() (the contract above); a NULL os does nothing. */
void ph_os_fork_prepare(ph_os *os);
void ph_os_fork_parent(ph_os *os);
void ph_os_fork_child(ph_os *os);

/* ---- Linux extras (os_linux.c) ---- */

/* How huge_state() finds huge pages.  AUTO tries them in this order:
 *   KPAGEFLAGS    /proc/self/pagemap + /proc/kpageflags (needs
 *                 CAP_SYS_ADMIN): exact;
 *   PAGEMAP_SCAN  the PAGEMAP_SCAN ioctl (Linux >= 6.7): exact;
 *   SMAPS         /proc/self/smaps: an approximation per VMA.
 * Forcing one is for tests; the setting is process-wide.  Returns the
 * previous setting. */
enum ph_linux_huge_method {
    PH_HUGE_AUTO = 0,
    PH_HUGE_KPAGEFLAGS = 1,
    PH_HUGE_PAGEMAP_SCAN = 2,
    PH_HUGE_SMAPS = 3
};
int ph_os_linux_huge_method(int method);

/* ---- simulated machine extras (os_sim.c) ---- */

/* Counters of everything the simulator was asked to do. */
typedef struct ph_sim_counters {
    uint64_t query_calls, query_pages;
    /* move_pages: entries passed; moved_pages: entries whose page changed
     * node; move_failed_pages: entries not on their target afterwards */
    uint64_t move_calls, move_pages, moved_pages, move_failed_pages;
    uint64_t bind_calls, populate_calls, populated_pages;
    double migrate_cost_ns;  /* modeled time spent migrating */
    /* note_touch: pages that got their first toucher's node from a note,
     * notes lost to a full record */
    uint64_t touch_pages, touch_lost;
    /* note_moved: pages whose home went along with them */
    uint64_t carried_pages;
} ph_sim_counters;
/* -1/EINVAL when os is not the simulator. */
int ph_sim_counters_get(ph_os *os, ph_sim_counters *out);
/* Simulated capacity of a node in 4 KiB pages (0 = unlimited): moves and
 * populates beyond it report -ENOMEM. */
int ph_sim_set_node_capacity(ph_os *os, int node, uint64_t pages);
/* Where threads that set_thread_node() did not bind run: OpenMP thread t
 * of T on node index t*N/T (block, the default) or t%N (cyclic). */
typedef enum ph_sim_binding {
    PH_SIM_BIND_BLOCK = 0,
    PH_SIM_BIND_CYCLIC = 1
} ph_sim_binding;
int ph_sim_set_binding(ph_os *os, ph_sim_binding binding);
/* The simulated machine asks the OpenMP runtime for a thread's number and
 * team size (the binding rule above).  A runtime loaded after pagehome
 * (dlopen: a plugin, a Python extension) is out of reach of its weak
 * references: runtime_addr, an address inside the runtime (its OMPT
 * lookup function), names it.  Process-wide, for every simulator; not
 * async-signal-safe.  0, or -1 (EINVAL: no object there, ENOENT: it has
 * no omp_get_thread_num). */
int ph_sim_find_openmp(const void *runtime_addr);
/* Restrict the nodes the simulated process may use (a mask of node
 * indexes, like a memory binding: moves elsewhere get -EINVAL, first
 * touches there land on the nearest allowed node); 0 lifts it. */
int ph_sim_set_allowed(ph_os *os, uint64_t mask);
/* 4 KiB pages whose virtual home is `node` (tests). */
int64_t ph_sim_node_pages(ph_os *os, int node);
/* Record a first touch of [addr, addr+len) by `node`: the memory is
 * faulted for real (data unchanged) and pages with no home yet get their
 * home now, as the kernel's first touch would (a bind() of the range
 * wins; a full node falls back to the nearest with room). */
int ph_sim_touch(ph_os *os, void *addr, size_t len, int node);

/* The move log: when on, every unit a move call migrates is appended
 * (its first 4 KiB page and its 4 KiB pages), in the order the calls
 * migrated them -- the order in which a memory manager's moves complete,
 * which a cost model needs to let them arrive one after another (pagehome
 * sim).  Each unit also names the lane of the thread that moved it
 * (ph_thread_lane: the mover's lanes run side by side) and what it cost:
 * its migration, plus the call's own cost on the first unit a call moved
 * (a call that moved nothing is in the counters only).  Off by default;
 * turning it off empties it. */
typedef struct ph_sim_moved {
    void *addr;
    size_t npages;
    int lane;
    double cost_ns;
} ph_sim_moved;
int ph_sim_set_move_log(ph_os *os, int on);
/* What was logged since the last take, oldest first: *out (malloc'ed,
 * the caller frees it; NULL when *n is 0), and the log empties. */
int ph_sim_move_log_take(ph_os *os, ph_sim_moved **out, size_t *n);

/* ---- failure injection (os_faulty.c) ---- */

typedef struct ph_fault_plan {
    uint64_t seed;
    double p_busy;         /* per-page probability of -EBUSY on move */
    double p_again;        /* per-page probability of -EAGAIN on move */
    double p_fault;        /* per-page probability of -EFAULT on move */
    int enomem_node;       /* node that reports -ENOMEM on move (-1 none) */
    int refuse_move_errno; /* != 0: move() fails as a whole with it */
    int fail_bind_errno;   /* != 0: bind() fails with it */
    int fail_map_errno;    /* != 0: map() fails with it */
    uintptr_t pinned_page; /* != 0: this 4 KiB page always reports -EBUSY */
    int kernel_abort;      /* != 0: like the kernel, a -EBUSY ends the call:
                              later entries report -EAGAIN, not moved */
} ph_fault_plan;
/* A plan that injects nothing (enomem_node = -1). */
void ph_fault_plan_init(ph_fault_plan *plan);
/* Wrap `inner` (which the wrapper owns and closes).  Injected page
 * failures are decided before the inner call; those pages are not passed
 * on, so they are not moved.  The pseudo-random sequence depends only on
 * the seed and the order of pages across calls. */
ph_os *ph_os_faulty_open(ph_os *inner, const ph_fault_plan *plan);
/* Replace the plan of a faulty wrapper (the sequence restarts from the
 * new seed).  -1/EINVAL when os is not a faulty wrapper. */
int ph_os_faulty_set_plan(ph_os *os, const ph_fault_plan *plan);

/* What a faulty wrapper saw and did. */
typedef struct ph_fault_stats {
    uint64_t move_calls;     /* move() calls received */
    uint64_t move_pages;     /* entries received */
    uint64_t inner_calls;    /* move() calls passed to the inner table */
    uint64_t pages_to_node[64]; /* entries received per target node *index* */
    uint64_t injected_busy, injected_again, injected_nomem, injected_fault;
    uint64_t refused_moves, failed_binds, failed_maps;
} ph_fault_stats;
int ph_os_faulty_stats(ph_os *os, ph_fault_stats *out);
/* The wrapped table. */
ph_os *ph_os_faulty_inner(ph_os *os);

/* ---- helpers shared by the implementations (src/os/ only) ---- */

/* A new table with its ops, topology and state; NULL/ENOMEM. */
ph_os *ph_os_new(const ph_os_ops *ops, const struct ph_topology *topo,
                 void *impl);
/* Anonymous private read-write memory of len bytes aligned to align (a
 * power of two), by over-mapping and trimming; extra_flags are or-ed into
 * the mmap flags.  NULL with errno on failure. */
void *ph_os_mmap_aligned(size_t len, size_t align, int extra_flags);
/* Fault in every page of [addr, addr+len) for writing without changing
 * its data: MADV_POPULATE_WRITE, or (before Linux 5.14) an atomic
 * read-modify-write that adds nothing to one byte of each page.  0, or
 * -1 with errno (ENOMEM: out of memory; EFAULT: the kernel would have
 * raised SIGBUS, e.g. an empty hugetlbfs pool; EINVAL: populate is not
 * supported and try_touch was 0). */
int ph_os_populate(void *addr, size_t len, int try_touch);
/* Residency of one 4 KiB page: 1 resident, 0 not, -1 not mapped. */
int ph_os_resident(const void *page);

#endif
