/*
 * os.h -- the OS-operations table: everything pagehome asks of the machine.
 *
 * Two implementations share this contract:
 *   os_linux.c  the kernel: move_pages(2), mbind(2), get_mempolicy(2),
 *               madvise(2), sched_getcpu(3);
 *   os_sim.c    the simulated machine: virtual homes per page, virtual
 *               thread binding, costs and counters, no kernel involved.
 * A third, os_faulty.c, wraps either one and injects failures (tests).
 * Code outside src/os/ never calls the kernel for placement and never
 * tests which implementation it has: it calls through ph_os.ops.
 *
 * CONTRACT (every implementation):
 *  - Addresses passed as pages are aligned down to 4 KiB by the caller.
 *    Nodes are OS node numbers of the topology the ph_os was opened with.
 *  - Batch operations fill status[i] for every i < count: the node the
 *    page is on after the call (>= 0), or a negative errno for that page:
 *      -ENOENT  page not yet faulted (no home yet)
 *      -EFAULT  address not mapped
 *      -EBUSY, -EAGAIN  transiently busy: a later call may succeed
 *      -ENOMEM  target node has no free memory
 *      -EACCES  page shared with another process, not movable
 *      -EINVAL  bad target node
 *    and return 0 (query) or the number of pages not on their target
 *    (move).  They return -1 with errno only when the call as a whole could
 *    not be made (EPERM / ENOSYS: moving refused by the kernel or a
 *    seccomp filter; EINVAL: bad arguments).
 *  - move() makes exactly one attempt: no retries, no fallbacks, no
 *    splitting into batches.  Those live in the mover (src/move/).
 *  - bind() sets where *not yet faulted* pages of a range land; resident
 *    pages are not moved.  It may split kernel VMAs: callers bind few,
 *    large ranges.
 *  - populate_on() faults in every page of a range so that new pages come
 *    from `node` (already resident pages stay).  It never raises SIGBUS:
 *    an exhausted pool returns -1/ENOMEM.
 *  - current_cpu() and current_node() are async-signal-safe: no locks, no
 *    allocation; they may be called from a SIGSEGV handler.
 *  - Every operation is thread-safe.
 */
#ifndef PH_OS_OS_H
#define PH_OS_OS_H

#include <stddef.h>
#include <stdint.h>

struct ph_topology;
typedef struct ph_os ph_os;

enum ph_bind_kind {
    PH_BIND_DEFAULT = 0,    /* forget any binding: first touch */
    PH_BIND_PREFERRED = 1,  /* nodes[0]; falls back when the node is full */
    PH_BIND_INTERLEAVE = 2  /* page at virtual page number v -> nodes[v % n] */
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

typedef struct ph_os_ops {
    const char *name; /* "linux", "sim", "faulty(...)" */

    int (*query)(ph_os *os, size_t count, void *const *pages, int *status);
    long (*move)(ph_os *os, size_t count, void *const *pages,
                 const int *nodes, int *status);
    int (*bind)(ph_os *os, void *addr, size_t len, enum ph_bind_kind kind,
                const int *nodes, int nnodes);
    int (*populate_on)(ph_os *os, void *addr, size_t len, int node);

    /* Memory: map zeroed anonymous memory aligned to `align` (a power of
     * two >= 4096) with ph_map_flags; unmap what map returned. */
    void *(*map)(ph_os *os, size_t len, size_t align, unsigned flags);
    int (*unmap)(ph_os *os, void *addr, size_t len);
    /* THP on/off for a range (MADV_HUGEPAGE / MADV_NOHUGEPAGE). */
    int (*advise_huge)(ph_os *os, void *addr, size_t len, int on);
    /* For each of n 4 KiB pages from addr: huge[i] = 1 when the page is
     * part of a 2 MiB page (THP or hugetlbfs), 0 when not, as best the
     * implementation can tell. */
    int (*huge_state)(ph_os *os, void *addr, size_t n, uint8_t *huge);

    int (*current_cpu)(ph_os *os);
    int (*current_node)(ph_os *os);
    /* Virtual binding of the calling thread (sim); ENOTSUP on Linux. */
    int (*set_thread_node)(ph_os *os, int node);

    int (*probe)(ph_os *os, ph_os_probe *out);
    void (*close)(ph_os *os);
} ph_os_ops;

struct ph_os {
    const ph_os_ops *ops;
    const struct ph_topology *topo;
    void *impl;          /* implementation state */
};

/* Open an implementation over a topology (which must outlive it). */
ph_os *ph_os_linux_open(const struct ph_topology *topo);
ph_os *ph_os_sim_open(const struct ph_topology *topo);
/* Close any ph_os. */
void ph_os_close(ph_os *os);

/* ---- simulated machine extras (os_sim.c) ---- */

/* Counters of everything the simulator was asked to do. */
typedef struct ph_sim_counters {
    uint64_t query_calls, query_pages;
    uint64_t move_calls, move_pages, moved_pages, move_failed_pages;
    uint64_t bind_calls, populate_calls, populated_pages;
    double migrate_cost_ns;  /* modeled time spent migrating */
} ph_sim_counters;
int ph_sim_counters_get(ph_os *os, ph_sim_counters *out);
/* Simulated capacity of a node in 4 KiB pages (0 = unlimited): moves and
 * populates beyond it report -ENOMEM. */
int ph_sim_set_node_capacity(ph_os *os, int node, uint64_t pages);
/* Record a first touch of [addr, addr+len) by `node` (pages with no home
 * yet get their home now, as the kernel's first-touch would). */
int ph_sim_touch(ph_os *os, void *addr, size_t len, int node);

/* ---- failure injection (os_faulty.c) ---- */

typedef struct ph_fault_plan {
    uint64_t seed;
    double p_busy;         /* per-page probability of -EBUSY on move */
    double p_again;        /* per-page probability of -EAGAIN on move */
    int enomem_node;       /* node that reports -ENOMEM on move (-1 none) */
    int refuse_move_errno; /* != 0: move() fails as a whole with it */
    int fail_bind_errno;   /* != 0: bind() fails with it */
    int fail_map_errno;    /* != 0: map() fails with it */
} ph_fault_plan;
/* Wrap `inner` (which the wrapper owns and closes). */
ph_os *ph_os_faulty_open(ph_os *inner, const ph_fault_plan *plan);

#endif
