/*
 * os_linux.c -- the OS-operations table on the Linux kernel (see os.h).
 *
 * move_pages(2) is used for both query (nodes = NULL) and move
 * (MPOL_MF_MOVE); mbind(2) binds ranges; populate_on() swaps the calling
 * thread's policy around MADV_POPULATE_WRITE.  Everything the kernel
 * reports in its own way is turned into the contract's per-page status
 * here, so that the mover and the tests see one behaviour on Linux and on
 * the simulator:
 *   - A move call stops at the first run of pages (consecutive entries
 *     with one target) that cannot be migrated as a whole: it returns -1
 *     with ENOMEM (target full) or the number of pages not migrated, and
 *     leaves the status of that run and of every later entry unwritten.
 *     Status slots are preset to a sentinel, and the unwritten ones are
 *     classified afterwards with one query: on target, or -ENOMEM/-EBUSY
 *     (the failing run), or -EAGAIN (never attempted).
 *   - A target node without memory or outside the cpuset makes the
 *     kernel abort the call (ENODEV/EACCES); such targets are answered
 *     -EINVAL here and never reach the kernel.
 *   - The shared zero page (a page only read so far) reports -EFAULT;
 *     a mapped address is reported -ENOENT instead (a write will fault a
 *     fresh page, exactly like an untouched one).
 *   - Two 4 KiB pages of one THP in one run: the second reports -EBUSY
 *     (its huge page is already isolated) although it moves with the
 *     first; the follow-up query reports where it really is.
 */
#include "os/os.h"
#include "base/own_fd.h"

#include "base/error.h"
#include "base/file.h"
#include "base/log.h"
#include "os/hugetlb.h"
#include "topo/topo.h"

#include <errno.h>
#include <fcntl.h>
#include <numaif.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MAP_HUGE_2MB
#define MAP_HUGE_2MB (21 << 26)
#endif
#ifndef MADV_HUGEPAGE
#define MADV_HUGEPAGE 14
#endif
#ifndef MADV_NOHUGEPAGE
#define MADV_NOHUGEPAGE 15
#endif

/* Node masks for the mempolicy calls: 1024 bits covers every kernel
 * configuration (NODES_SHIFT <= 10).  The kernel reads maxnode - 1 bits. */
#define LX_MASK_BITS 1024
#define LX_MASK_LONGS (LX_MASK_BITS / (8 * sizeof(unsigned long)))
#define LX_MAXNODE (LX_MASK_BITS + 1)

/* A status value the kernel never writes (it writes nodes >= 0 and small
 * negative errno values). */
#define LX_UNSET ((int)0x80A5A5A5)

/* Pages per query syscall (the kernel chunks internally as well; this
 * only bounds how long one syscall holds mmap_lock). */
#define LX_QUERY_CHUNK 16384

/* One mapping made by map(): unmap() needs its real length (huge mappings
 * are rounded up) and populate_on() needs to know hugetlbfs memory. */
typedef struct lx_mapping {
    uintptr_t start;
    size_t len;
    unsigned flags;
} lx_mapping;

typedef struct lx_state {
    pthread_mutex_t lock;
    lx_mapping *maps;  /* sorted by start */
    size_t nmaps, capmaps;
    unsigned long has_memory[LX_MASK_LONGS]; /* N_MEMORY nodes */
    int has_memory_known;
    /* The task's memory policy when the table was opened (the one
     * numactl gave the process), or the one the program set later
     * (process_policy): own_policy when it is not the default; bind[] its
     * nodes when it is MPOL_BIND (bind_known; both under lock). */
    atomic_int own_policy;
    unsigned long bind[LX_MASK_LONGS];
    int bind_known;
} lx_state;

static atomic_int huge_method_forced;

int ph_os_linux_huge_method(int method)
{
    if (method < PH_HUGE_AUTO || method > PH_HUGE_SMAPS)
        return ph_fail(EINVAL, "huge page method %d is not one of 0..3", method);
    return atomic_exchange(&huge_method_forced, method);
}

/* ---- small helpers ---------------------------------------------------- */

static void mask_set(unsigned long *mask, int node)
{
    if (node >= 0 && node < LX_MASK_BITS)
        mask[(size_t)node / (8 * sizeof(unsigned long))] |=
            1ul << ((size_t)node % (8 * sizeof(unsigned long)));
}

static int mask_test(const unsigned long *mask, int node)
{
    if (node < 0 || node >= LX_MASK_BITS)
        return 0;
    return (mask[(size_t)node / (8 * sizeof(unsigned long))] >>
            ((size_t)node % (8 * sizeof(unsigned long)))) & 1;
}

/* Parse a sysfs node list ("0-3,5\n") into mask.  0 or -1. */
static int parse_node_list(const char *s, unsigned long *mask)
{
    memset(mask, 0, LX_MASK_LONGS * sizeof *mask);
    while (*s && *s != '\n') {
        char *end;
        long a = strtol(s, &end, 10);
        if (end == s || a < 0)
            return -1;
        long b = a;
        s = end;
        if (*s == '-') {
            b = strtol(s + 1, &end, 10);
            if (end == s + 1 || b < a)
                return -1;
            s = end;
        }
        for (long n = a; n <= b && n < LX_MASK_BITS; n++)
            mask_set(mask, (int)n);
        if (*s == ',')
            s++;
    }
    return 0;
}

static size_t round_up(size_t v, size_t to)
{
    return (v + to - 1) & ~(to - 1);
}

static const char *refusal_text(int err)
{
    return err == ENOSYS ? "ENOSYS" : err == EPERM ? "EPERM" : strerror(err);
}

/* ---- the registry of our own mappings ---------------------------------- */

/* Index of the first mapping with start >= addr. */
static size_t maps_lower(const lx_state *s, uintptr_t addr)
{
    size_t lo = 0, hi = s->nmaps;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->maps[mid].start < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int maps_add(lx_state *s, uintptr_t start, size_t len, unsigned flags)
{
    pthread_mutex_lock(&s->lock);
    if (s->nmaps == s->capmaps) {
        size_t cap = s->capmaps ? s->capmaps * 2 : 16;
        lx_mapping *m = realloc(s->maps, cap * sizeof *m);
        if (!m) {
            pthread_mutex_unlock(&s->lock);
            return -1;
        }
        s->maps = m;
        s->capmaps = cap;
    }
    size_t at = maps_lower(s, start);
    memmove(s->maps + at + 1, s->maps + at, (s->nmaps - at) * sizeof *s->maps);
    s->maps[at] = (lx_mapping){start, len, flags};
    s->nmaps++;
    pthread_mutex_unlock(&s->lock);
    return 0;
}

/* Remove the mapping that starts at addr; 1 and *out when found. */
static int maps_take(lx_state *s, uintptr_t addr, lx_mapping *out)
{
    int found = 0;
    pthread_mutex_lock(&s->lock);
    size_t at = maps_lower(s, addr);
    if (at < s->nmaps && s->maps[at].start == addr) {
        *out = s->maps[at];
        memmove(s->maps + at, s->maps + at + 1,
                (s->nmaps - at - 1) * sizeof *s->maps);
        s->nmaps--;
        found = 1;
    }
    pthread_mutex_unlock(&s->lock);
    return found;
}

/* Flags of our mapping containing addr, or 0. */
static unsigned maps_flags_at(lx_state *s, uintptr_t addr)
{
    unsigned flags = 0;
    pthread_mutex_lock(&s->lock);
    size_t at = maps_lower(s, addr + 1);
    if (at > 0) {
        const lx_mapping *m = &s->maps[at - 1];
        if (addr >= m->start && addr < m->start + m->len)
            flags = m->flags;
    }
    pthread_mutex_unlock(&s->lock);
    return flags;
}

/* ---- target validation -------------------------------------------------- */

/* Nodes a move may target: in the topology, with memory and in the
 * calling task's cpuset -- the kernel would abort the whole call for any
 * other node, so it is answered per page before the call.  With
 * `binding`, also in the memory binding the process was started under
 * (numactl --membind): the nodes the engine's own decisions keep to.  A
 * move the caller asks for explicitly (the API, `pagehome place`) may
 * leave the binding, as the program's own mbind(2) may. */
static void allowed_nodes(ph_os *os, unsigned long *allowed, int binding)
{
    lx_state *s = os->impl;
    unsigned long cpuset[LX_MASK_LONGS];
    int have_cpuset = get_mempolicy(NULL, cpuset, LX_MAXNODE, NULL,
                                    MPOL_F_MEMS_ALLOWED) == 0;
    unsigned long bind[LX_MASK_LONGS];
    pthread_mutex_lock(&s->lock);
    int have_bind = binding && s->bind_known;
    memcpy(bind, s->bind, sizeof bind);
    pthread_mutex_unlock(&s->lock);
    memset(allowed, 0, LX_MASK_LONGS * sizeof *allowed);
    for (int i = 0; i < os->topo->nnodes; i++) {
        int id = os->topo->nodes[i].id;
        if (s->has_memory_known && !mask_test(s->has_memory, id))
            continue;
        if (have_cpuset && !mask_test(cpuset, id))
            continue;
        if (have_bind && !mask_test(bind, id))
            continue;
        mask_set(allowed, id);
    }
}

static int lx_process_policy(ph_os *os, int own, const int *bind_nodes, int nbind)
{
    lx_state *s = os->impl;
    pthread_mutex_lock(&s->lock);
    memset(s->bind, 0, sizeof s->bind);
    for (int i = 0; i < nbind; i++)
        mask_set(s->bind, bind_nodes[i]);
    s->bind_known = nbind > 0;
    atomic_store(&s->own_policy, own);
    pthread_mutex_unlock(&s->lock);
    return 0;
}

static uint64_t lx_allowed(ph_os *os)
{
    unsigned long allowed[LX_MASK_LONGS];
    allowed_nodes(os, allowed, 1);
    uint64_t m = 0;
    for (int i = 0; i < os->topo->nnodes && i < 64; i++)
        if (mask_test(allowed, os->topo->nodes[i].id))
            m |= UINT64_C(1) << i;
    if (m == 0) /* no node in common: the binding cannot be kept anyway */
        for (int i = 0; i < os->topo->nnodes && i < 64; i++)
            m |= UINT64_C(1) << i;
    return m;
}

/* ---- query --------------------------------------------------------------- */

/* The zero page and unmovable special mappings report -EFAULT; only an
 * address with no mapping at all keeps it. */
static int fix_efault(const void *page)
{
    return ph_os_resident(page) < 0 ? -EFAULT : -ENOENT;
}

static int raw_query(size_t count, void *const *pages, int *status)
{
    for (size_t off = 0; off < count; off += LX_QUERY_CHUNK) {
        size_t n = count - off < LX_QUERY_CHUNK ? count - off : LX_QUERY_CHUNK;
        if (move_pages(0, n, (void **)(pages + off), NULL, status + off, 0) < 0)
            return -1;
    }
    for (size_t i = 0; i < count; i++)
        if (status[i] == -EFAULT)
            status[i] = fix_efault(pages[i]);
    return 0;
}

static int lx_query(ph_os *os, size_t count, void *const *pages, int *status)
{
    (void)os;
    if (raw_query(count, pages, status) < 0) {
        int e = errno;
        if (e == EPERM || e == ENOSYS)
            return ph_fail(e, "query: move_pages(2) is not permitted here (%s)",
                           refusal_text(e));
        return ph_fail(e, "query: move_pages(2) of %zu pages failed: %s", count,
                       strerror(e));
    }
    return 0;
}

/* ---- move ---------------------------------------------------------------- */

/* After a move call: give every slot the kernel left unwritten (LX_UNSET)
 * or reported busy a definite answer, with one query.  ret/err are the
 * call's return value and errno. */
static void classify(size_t n, void **kp, const int *kn, int *ks, long ret,
                     int err)
{
    size_t first = 0;
    while (first < n && ks[first] != LX_UNSET)
        first++;
    /* The run the kernel was migrating when it stopped: consecutive
     * unwritten slots with the target of the first one. */
    size_t run_end = first;
    while (run_end < n && ks[run_end] == LX_UNSET && kn[run_end] == kn[first])
        run_end++;
    int run_err = -EAGAIN;
    if (ret < 0 && err == ENOMEM)
        run_err = -ENOMEM;
    else if (ret > 0)
        run_err = -EBUSY;

    size_t nq = 0;
    for (size_t i = 0; i < n; i++)
        if (ks[i] == LX_UNSET || ks[i] == -EBUSY || ks[i] == -EAGAIN)
            nq++;
    if (nq > 0) {
        int qok = 0;
        void **qp = malloc(nq * sizeof *qp);
        int *qs = malloc(nq * sizeof *qs);
        size_t *qi = malloc(nq * sizeof *qi);
        if (qp && qs && qi) {
            size_t k = 0;
            for (size_t i = 0; i < n; i++)
                if (ks[i] == LX_UNSET || ks[i] == -EBUSY || ks[i] == -EAGAIN) {
                    qp[k] = kp[i];
                    qi[k++] = i;
                }
            qok = raw_query(nq, qp, qs) == 0;
            if (qok) {
                for (size_t k2 = 0; k2 < nq; k2++) {
                    size_t i = qi[k2];
                    int q = qs[k2];
                    if (q == kn[i])
                        ks[i] = q;
                    else if (ks[i] != LX_UNSET)
                        continue; /* really busy: keep -EBUSY/-EAGAIN */
                    else if (q == -ENOENT || q == -EFAULT)
                        ks[i] = q;
                    else
                        ks[i] = (i >= first && i < run_end) ? run_err : -EAGAIN;
                }
            }
        }
        free(qp);
        free(qs);
        free(qi);
        if (!qok)
            for (size_t i = 0; i < n; i++)
                if (ks[i] == LX_UNSET)
                    ks[i] = (i >= first && i < run_end) ? run_err : -EAGAIN;
    }
    for (size_t i = 0; i < n; i++)
        if (ks[i] == -EFAULT)
            ks[i] = fix_efault(kp[i]);
}

static long lx_move(ph_os *os, size_t count, void *const *pages,
                    const int *nodes, int *status)
{
    unsigned long allowed[LX_MASK_LONGS];
    allowed_nodes(os, allowed, 0);
    size_t nbad = 0;
    for (size_t i = 0; i < count; i++)
        if (!mask_test(allowed, nodes[i]))
            nbad++;

    /* The kernel's view: all entries, or only those with a valid target. */
    void **kp = (void **)pages;
    const int *kn = nodes;
    int *ks = status;
    size_t *ki = NULL;
    int *kn_own = NULL;
    size_t n = count - nbad;
    if (nbad > 0 && n > 0) {
        kp = malloc(n * sizeof *kp);
        kn_own = malloc(n * sizeof *kn_own);
        ks = malloc(n * sizeof *ks);
        ki = malloc(n * sizeof *ki);
        if (!kp || !kn_own || !ks || !ki) {
            free(kp);
            free(kn_own);
            free(ks);
            free(ki);
            return ph_fail(ENOMEM, "move: out of memory for %zu pages", count);
        }
        kn = kn_own;
        size_t k = 0;
        for (size_t i = 0; i < count; i++)
            if (mask_test(allowed, nodes[i])) {
                kp[k] = pages[i];
                kn_own[k] = nodes[i];
                ki[k++] = i;
            }
    }

    if (n > 0) {
        for (size_t k = 0; k < n; k++)
            ks[k] = LX_UNSET;
        long ret = move_pages(0, n, kp, kn, ks, MPOL_MF_MOVE);
        int err = ret < 0 ? errno : 0;
        if (ret < 0 && err != ENOMEM && err != ENODEV && err != EACCES) {
            if (ks != status) {
                free(kp);
                free(kn_own);
                free(ks);
                free(ki);
            }
            for (size_t i = 0; i < count; i++)
                status[i] = -err;
            if (err == EPERM || err == ENOSYS)
                return ph_fail(err, "move: move_pages(2) is not permitted here (%s)",
                               refusal_text(err));
            return ph_fail(err, "move: move_pages(2) of %zu pages failed: %s", n,
                           strerror(err));
        }
        classify(n, kp, kn, ks, ret, err);
    }

    if (nbad > 0) {
        /* Spread the kernel's answers back; bad targets get -EINVAL. */
        for (size_t i = 0; i < count; i++)
            if (!mask_test(allowed, nodes[i]))
                status[i] = -EINVAL;
        if (ks != status) {
            for (size_t k = 0; k < n; k++)
                status[ki[k]] = ks[k];
            free(kp);
            free(kn_own);
            free(ks);
            free(ki);
        }
    }

    long missed = 0;
    for (size_t i = 0; i < count; i++)
        if (status[i] != nodes[i])
            missed++;
    return missed;
}

/* ---- bind ---------------------------------------------------------------- */

/* The front door checked the kind and the nodes (os.h). */
static int lx_bind(ph_os *os, void *addr, size_t len, enum ph_bind_kind kind,
                   const int *nodes, int nnodes)
{
    const lx_state *s = os->impl;
    if (kind == PH_BIND_LOCAL && atomic_load(&s->own_policy))
        return 0; /* the process's own policy (numactl) places the range */
    unsigned long mask[LX_MASK_LONGS];
    memset(mask, 0, sizeof mask);
    for (int i = 0; i < nnodes; i++)
        mask_set(mask, nodes[i]);
    int mode = kind == PH_BIND_PREFERRED    ? MPOL_PREFERRED
               : kind == PH_BIND_INTERLEAVE ? MPOL_INTERLEAVE
               : kind == PH_BIND_LOCAL      ? MPOL_LOCAL
                                            : MPOL_DEFAULT;
    const char *what = kind == PH_BIND_PREFERRED    ? "preferred"
                       : kind == PH_BIND_INTERLEAVE ? "interleave"
                       : kind == PH_BIND_LOCAL      ? "local"
                                                    : "default";
    long r = mode == MPOL_DEFAULT || mode == MPOL_LOCAL
                 ? mbind(addr, len, mode, NULL, 0, 0)
                 : mbind(addr, len, mode, mask, LX_MAXNODE, 0);
    if (r != 0) {
        int e = errno;
        return ph_fail(e, "bind: mbind(%p, %zu bytes, %s) failed: %s", addr, len, what,
                       strerror(e));
    }
    return 0;
}

/* ---- populate ------------------------------------------------------------ */

static int lx_populate_on(ph_os *os, void *addr, size_t len, int node)
{
    lx_state *s = os->impl;
    uintptr_t a = (uintptr_t)addr;
    size_t l = len;
    int hugetlb = (maps_flags_at(s, a) & PH_MAP_HUGE_TLBFS) != 0;
    if (hugetlb) {
        a &= ~(uintptr_t)(PH_PAGE_2M - 1);
        l = round_up(len + ((uintptr_t)addr - a), PH_PAGE_2M);
    }

    /* hugetlbfs: MPOL_BIND, so an empty pool on `node` fails instead of
     * quietly taking another node's pages.  4 KiB and THP: MPOL_PREFERRED,
     * because MPOL_BIND on a full node wakes the OOM killer. */
    int saved_mode = 0;
    unsigned long saved[LX_MASK_LONGS];
    memset(saved, 0, sizeof saved);
    if (get_mempolicy(&saved_mode, saved, LX_MAXNODE, NULL, 0) != 0) {
        int e = errno;
        return ph_fail(e, "populate: get_mempolicy(2) failed: %s", strerror(e));
    }
    unsigned long mask[LX_MASK_LONGS];
    memset(mask, 0, sizeof mask);
    mask_set(mask, node);
    if (set_mempolicy(hugetlb ? MPOL_BIND : MPOL_PREFERRED, mask, LX_MAXNODE) != 0) {
        int e = errno;
        return ph_fail(e, "populate: set_mempolicy(2) for node %d failed: %s", node,
                       strerror(e));
    }

    int rc = ph_os_populate((void *)a, l, 0);
    int err = rc < 0 ? errno : 0;
    if (rc < 0 && err == EINVAL) {
        /* Before Linux 5.14.  Touching an exhausted hugetlbfs pool would
         * raise SIGBUS: check the node's pool first (racy, but the best
         * there is without MADV_POPULATE_WRITE). */
        uint64_t free_pages = 0;
        if (hugetlb && ph_hugetlb_read_file(NULL, node, PH_PAGE_2M / 1024, "free_hugepages",
                                            &free_pages) == 0 &&
            free_pages < l / PH_PAGE_2M) {
            err = ENOMEM;
        } else {
            rc = ph_os_populate((void *)a, l, 1);
            err = rc < 0 ? errno : 0;
        }
        rc = err ? -1 : 0;
    }

    int mode = saved_mode & 0xff;
    long restored = (mode == MPOL_DEFAULT || mode == MPOL_LOCAL)
                        ? set_mempolicy(saved_mode, NULL, 0)
                        : set_mempolicy(saved_mode, saved, LX_MAXNODE);
    if (restored != 0)
        ph_warn("populate: could not restore the thread's memory policy: %s",
                strerror(errno));

    if (rc == 0)
        return 0;
    if (msync((void *)a, l, MS_ASYNC) != 0 && errno == ENOMEM)
        return ph_fail(EFAULT, "populate: [%p, +%zu) is not entirely mapped", (void *)a, l);
    if (hugetlb)
        return ph_fail(ENOMEM,
                       "populate: the hugetlbfs pool of node %d is empty (or too small "
                       "for %zu pages of 2 MiB): see "
                       "/sys/devices/system/node/node%d/hugepages",
                       node, l / PH_PAGE_2M, node);
    return ph_fail(ENOMEM, "populate: out of memory faulting %zu bytes on node %d (%s)", l,
                   node, strerror(err));
}

/* ---- memory -------------------------------------------------------------- */

/* len and align come rounded to the page size from the front door. */
static void *lx_map(ph_os *os, size_t len, size_t align, unsigned flags)
{
    lx_state *s = os->impl;
    size_t l = len;
    void *p;
    if (flags & PH_MAP_HUGE_TLBFS) {
        p = ph_os_mmap_aligned(l, align, MAP_HUGETLB | MAP_HUGE_2MB);
        if (!p)
            return ph_fail_null(ENOMEM,
                                "map: no 2 MiB pages for %zu bytes: the hugetlbfs pool is "
                                "empty or too small (see /proc/sys/vm/nr_hugepages): %s",
                                l, strerror(errno));
    } else {
        p = ph_os_mmap_aligned(l, align, 0);
        if (!p)
            return ph_fail_null(ENOMEM, "map: mmap of %zu bytes failed: %s", l,
                                strerror(errno));
        if ((flags & PH_MAP_HUGE_THP) && madvise(p, l, MADV_HUGEPAGE) != 0)
            ph_info("map: MADV_HUGEPAGE refused (%s): 4 KiB pages", strerror(errno));
        if ((flags & PH_MAP_NO_THP) && madvise(p, l, MADV_NOHUGEPAGE) != 0)
            ph_info("map: MADV_NOHUGEPAGE refused (%s)", strerror(errno));
    }
    if (maps_add(s, (uintptr_t)p, l, flags) != 0) {
        munmap(p, l);
        return ph_fail_null(ENOMEM, "map: out of memory recording a mapping");
    }
    return p;
}

static int lx_unmap(ph_os *os, void *addr, size_t len)
{
    lx_state *s = os->impl;
    lx_mapping m;
    size_t l = len;
    if (maps_take(s, (uintptr_t)addr, &m))
        l = m.len;
    if (munmap(addr, l) != 0) {
        int e = errno;
        return ph_fail(e, "unmap: munmap(%p, %zu) failed: %s", addr, l, strerror(e));
    }
    return 0;
}

static int lx_advise_huge(ph_os *os, void *addr, size_t len, int on)
{
    (void)os;
    if (madvise(addr, len, on ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) != 0) {
        int e = errno;
        return ph_fail(e, "advise_huge: madvise(%s) failed: %s",
                       on ? "MADV_HUGEPAGE" : "MADV_NOHUGEPAGE", strerror(e));
    }
    return 0;
}

#ifndef MADV_COLD
#define MADV_COLD 20
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

static int lx_huge_split(ph_os *os, void *addr, size_t len, int split)
{
    (void)os;
    uintptr_t a = (uintptr_t)addr;
    if (madvise(addr, len, split ? MADV_NOHUGEPAGE : MADV_HUGEPAGE) != 0) {
        int e = errno;
        return ph_fail(e, "huge_split: madvise(%s) failed: %s",
                       split ? "MADV_NOHUGEPAGE" : "MADV_HUGEPAGE", strerror(e));
    }
    if (split) {
        /* A madvise that covers part of a PMD-mapped huge page splits it;
         * MADV_COLD only ages the page (data and home stay). */
        for (uintptr_t u = a; u < a + len; u += PH_PAGE_2M)
            if (madvise((void *)u, PH_PAGE_4K, MADV_COLD) != 0) {
                int e = errno;
                return ph_fail(e, "huge_split: madvise(MADV_COLD) failed: %s",
                               strerror(e));
            }
        return 0;
    }
    if (madvise(addr, len, MADV_COLLAPSE) != 0) {
        int e = errno;
        if (e == EINVAL || e == ENOSYS)
            return ph_fail(EOPNOTSUPP, "huge_split: this kernel cannot collapse "
                           "huge pages on request (MADV_COLLAPSE, Linux >= 6.1)");
        return ph_fail(e, "huge_split: madvise(MADV_COLLAPSE) failed: %s",
                       strerror(e));
    }
    return 0;
}

/* ---- huge_state ------------------------------------------------------- */

#define PM_PRESENT (1ull << 63)
#define PM_PFN_MASK ((1ull << 55) - 1)
#define KPF_HUGE_BIT 17
#define KPF_THP_BIT 22
#define KPF_ZERO_PAGE_BIT 24

/* Method 1: pagemap PFNs + kpageflags.  0, or -1 when not usable here. */
static int huge_kpageflags(uintptr_t a, size_t n, uint8_t *huge)
{
    int pm = ph_own_fd_open("/proc/self/pagemap", O_RDONLY, 0);
    if (pm < 0)
        return -1;
    int kf = ph_own_fd_open("/proc/kpageflags", O_RDONLY, 0);
    if (kf < 0) {
        ph_own_fd_close(pm);
        return -1;
    }
    enum { CH = 512 };
    uint64_t ent[CH], flags[CH];
    int rc = 0;
    for (size_t off = 0; off < n && rc == 0; off += CH) {
        size_t c = n - off < CH ? n - off : CH;
        off_t where = (off_t)(((a >> 12) + off) * 8);
        if (pread(pm, ent, c * 8, where) != (ssize_t)(c * 8)) {
            rc = -1;
            break;
        }
        for (size_t i = 0; i < c;) {
            huge[off + i] = 0;
            if (!(ent[i] & PM_PRESENT)) {
                i++;
                continue;
            }
            uint64_t pfn = ent[i] & PM_PFN_MASK;
            if (pfn == 0) { /* PFNs hidden: no CAP_SYS_ADMIN */
                rc = -1;
                break;
            }
            /* A run of consecutive PFNs is read with one pread. */
            size_t j = i + 1;
            while (j < c && (ent[j] & PM_PRESENT) &&
                   (ent[j] & PM_PFN_MASK) == pfn + (j - i))
                j++;
            if (pread(kf, flags, (j - i) * 8, (off_t)(pfn * 8)) != (ssize_t)((j - i) * 8)) {
                rc = -1;
                break;
            }
            for (size_t k = i; k < j; k++) {
                uint64_t f = flags[k - i];
                huge[off + k] = (uint8_t)((((f >> KPF_THP_BIT) & 1) ||
                                           ((f >> KPF_HUGE_BIT) & 1)) &&
                                          !((f >> KPF_ZERO_PAGE_BIT) & 1));
            }
            i = j;
        }
    }
    ph_own_fd_close(kf);
    ph_own_fd_close(pm);
    return rc;
}

/* Method 2: the PAGEMAP_SCAN ioctl (Linux 6.7).  Declared here because
 * older kernel headers lack it. */
struct lx_page_region {
    uint64_t start, end, categories;
};
struct lx_pm_scan_arg {
    uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
    uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};
#define LX_PAGEMAP_SCAN _IOWR('f', 16, struct lx_pm_scan_arg)
#define LX_PAGE_IS_PFNZERO (1ull << 5)
#define LX_PAGE_IS_HUGE (1ull << 6)

static int huge_pagemap_scan(uintptr_t a, size_t n, uint8_t *huge)
{
    int pm = ph_own_fd_open("/proc/self/pagemap", O_RDONLY, 0);
    if (pm < 0)
        return -1;
    memset(huge, 0, n);
    uintptr_t end = a + n * PH_PAGE_4K, at = a;
    struct lx_page_region vec[64];
    int rc = 0;
    while (at < end) {
        struct lx_pm_scan_arg arg;
        memset(&arg, 0, sizeof arg);
        arg.size = sizeof arg;
        arg.start = at;
        arg.end = end;
        arg.vec = (uintptr_t)vec;
        arg.vec_len = sizeof vec / sizeof vec[0];
        /* huge and not the huge zero page */
        arg.category_mask = LX_PAGE_IS_HUGE | LX_PAGE_IS_PFNZERO;
        arg.category_inverted = LX_PAGE_IS_PFNZERO;
        arg.return_mask = LX_PAGE_IS_HUGE;
        long r = ioctl(pm, LX_PAGEMAP_SCAN, &arg);
        if (r < 0) {
            rc = -1;
            break;
        }
        for (long k = 0; k < r; k++) {
            uintptr_t s = vec[k].start < a ? a : vec[k].start;
            uintptr_t e = vec[k].end > end ? end : vec[k].end;
            for (uintptr_t p = s; p < e; p += PH_PAGE_4K)
                huge[(p - a) / PH_PAGE_4K] = 1;
        }
        if (arg.walk_end <= at)
            break;
        at = arg.walk_end;
    }
    ph_own_fd_close(pm);
    return rc;
}

/* Method 3: /proc/self/smaps.  Per VMA only: hugetlbfs VMAs ("ht") are
 * huge throughout; a THP-eligible VMA (no "nh") with AnonHugePages > 0
 * has *some* huge pages, and this marks every 2 MiB-aligned unit inside
 * it whose 512 pages are all present (pagemap's present bit needs no
 * privilege).  That is an approximation: a fully faulted unit may still
 * be 4 KiB pages.  The exact methods above are preferred. */
static int huge_smaps(uintptr_t a, size_t n, uint8_t *huge)
{
    FILE *f = ph_own_fd_fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    memset(huge, 0, n);
    int pm = ph_own_fd_open("/proc/self/pagemap", O_RDONLY, 0);
    uintptr_t end = a + n * PH_PAGE_4K;
    char line[512];
    uintptr_t vs = 0, ve = 0;
    unsigned long long anon_huge_kb = 0;
    int in_range = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long long s, e;
        if (sscanf(line, "%llx-%llx ", &s, &e) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            vs = (uintptr_t)s;
            ve = (uintptr_t)e;
            in_range = ve > a && vs < end;
            anon_huge_kb = 0;
            continue;
        }
        if (!in_range)
            continue;
        if (strncmp(line, "AnonHugePages:", 14) == 0) {
            anon_huge_kb = strtoull(line + 14, NULL, 10);
            continue;
        }
        if (strncmp(line, "VmFlags:", 8) != 0)
            continue;
        int ht = strstr(line, " ht") != NULL;
        int nh = strstr(line, " nh") != NULL;
        uintptr_t s2 = vs < a ? a : vs, e2 = ve > end ? end : ve;
        if (ht) {
            for (uintptr_t p = s2; p < e2; p += PH_PAGE_4K)
                huge[(p - a) / PH_PAGE_4K] = 1;
        } else if (!nh && anon_huge_kb > 0) {
            uintptr_t u = (vs + PH_PAGE_2M - 1) & ~(uintptr_t)(PH_PAGE_2M - 1);
            for (; u + PH_PAGE_2M <= ve; u += PH_PAGE_2M) {
                if (u + PH_PAGE_2M <= a || u >= end)
                    continue;
                int full = 1;
                if (pm >= 0) {
                    uint64_t ent[512];
                    if (pread(pm, ent, sizeof ent, (off_t)((u >> 12) * 8)) ==
                        (ssize_t)sizeof ent) {
                        for (int k = 0; k < 512 && full; k++)
                            full = (ent[k] & PM_PRESENT) != 0;
                    }
                }
                if (!full)
                    continue;
                uintptr_t s3 = u < a ? a : u, e3 = u + PH_PAGE_2M > end ? end : u + PH_PAGE_2M;
                for (uintptr_t p = s3; p < e3; p += PH_PAGE_4K)
                    huge[(p - a) / PH_PAGE_4K] = 1;
            }
        }
        in_range = 0;
    }
    if (pm >= 0)
        ph_own_fd_close(pm);
    ph_own_fd_fclose(f);
    return 0;
}

/* ---- huge_eligible ---------------------------------------------------- */

/* Every mapping of [addr, addr+len) must say "THPeligible: 1" (Linux >=
 * 5.0) and the mappings must leave no hole.  smaps lists them in address
 * order. */
static int lx_huge_eligible(ph_os *os, void *addr, size_t len)
{
    (void)os;
    uintptr_t a = (uintptr_t)addr, end = a + len, covered = a;
    FILE *f = ph_own_fd_fopen("/proc/self/smaps", "r");
    if (!f) {
        int e = errno;
        return ph_fail(e, "huge_eligible: /proc/self/smaps: %s", strerror(e));
    }
    char line[512];
    int in_range = 0, ok = 1;
    while (ok && fgets(line, sizeof line, f)) {
        unsigned long long s, e;
        if (sscanf(line, "%llx-%llx ", &s, &e) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            if (in_range) {
                ok = 0; /* the one before said nothing */
                break;
            }
            if (covered >= end)
                break; /* past the range */
            in_range = e > a && s < end;
            if (in_range) {
                ok = s <= covered;
                covered = (uintptr_t)e;
            }
            continue;
        }
        if (in_range && strncmp(line, "THPeligible:", 12) == 0) {
            ok = strtol(line + 12, NULL, 10) == 1;
            in_range = 0;
        }
    }
    ph_own_fd_fclose(f);
    return ok && !in_range && covered >= end;
}

static int lx_huge_state(ph_os *os, void *addr, size_t n, uint8_t *huge)
{
    (void)os;
    uintptr_t a = (uintptr_t)addr;
    int m = atomic_load(&huge_method_forced);
    if ((m == PH_HUGE_AUTO || m == PH_HUGE_KPAGEFLAGS) && huge_kpageflags(a, n, huge) == 0)
        return 0;
    if ((m == PH_HUGE_AUTO || m == PH_HUGE_PAGEMAP_SCAN) &&
        huge_pagemap_scan(a, n, huge) == 0)
        return 0;
    if ((m == PH_HUGE_AUTO || m == PH_HUGE_SMAPS) && huge_smaps(a, n, huge) == 0)
        return 0;
    return ph_fail(ENOTSUP, "huge_state: %s cannot be read here",
                   m == PH_HUGE_KPAGEFLAGS     ? "/proc/kpageflags"
                   : m == PH_HUGE_PAGEMAP_SCAN ? "PAGEMAP_SCAN"
                                               : "/proc/self/smaps");
}

/* ---- threads ------------------------------------------------------------- */

static int lx_current_cpu(ph_os *os)
{
    (void)os;
    int e = errno;
    int cpu = sched_getcpu();
    errno = e;
    return cpu;
}

static int lx_current_node(ph_os *os)
{
    int e = errno;
    int node = -1;
    int cpu = sched_getcpu();
    int idx = cpu >= 0 ? ph_topo_cpu_index(os->topo, cpu) : -1;
    if (idx >= 0 && idx < os->topo->nnodes) {
        node = os->topo->nodes[idx].id;
    } else {
        unsigned c, nd;
        if (getcpu(&c, &nd) == 0)
            node = (int)nd;
    }
    errno = e;
    return node;
}

static int lx_set_thread_node(ph_os *os, int node)
{
    (void)os;
    (void)node;
    return ph_fail(ENOTSUP, "threads on the Linux machine are placed with "
                            "sched_setaffinity(2) or OMP_PLACES, not virtually");
}

/* ---- probe ---------------------------------------------------------------- */

static int lx_probe(ph_os *os, ph_os_probe *out)
{
    (void)os;
    out->move_permitted = -1;
    out->numa_balancing = -1;

    /* Query mode does not exercise the permission a move needs (a seccomp
     * filter may look at the flags): move a page of our own to the node
     * it is already on. */
    char *p = mmap(NULL, PH_PAGE_4K, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) {
        p[0] = 1;
        void *pg[1] = {p};
        int st = 0;
        if (move_pages(0, 1, pg, NULL, &st, 0) != 0) {
            int e = errno;
            out->move_permitted = (e == EPERM || e == ENOSYS) ? 0 : -1;
            out->move_errno = e;
        } else if (st < 0) {
            out->move_errno = -st;
        } else {
            int node = st;
            if (move_pages(0, 1, pg, &node, &st, MPOL_MF_MOVE) == 0) {
                out->move_permitted = 1;
            } else {
                int e = errno;
                out->move_permitted = (e == EPERM || e == ENOSYS) ? 0 : -1;
                out->move_errno = e;
            }
        }
        munmap(p, PH_PAGE_4K);
    }

    char buf[256];
    if (ph_read_text("/proc/sys/kernel/numa_balancing", buf, sizeof buf) > 0)
        out->numa_balancing = (int)strtol(buf, NULL, 10);
    ph_hugetlb_thp_mode(NULL, out->thp_mode, sizeof out->thp_mode);
    ph_hugetlb_counts all;
    out->huge_2m_hugetlbfs = ph_hugetlb_read(NULL, -1, PH_PAGE_2M / 1024, &all, NULL, 0) == 0 &&
                             all.present;
    return 0;
}

/* ---- hugetlbfs pools ------------------------------------------------------ */

static int lx_huge_pool(ph_os *os, int node, size_t page_bytes, ph_os_pool *out)
{
    (void)os;
    ph_hugetlb_counts c;
    char bad[256];
    if (ph_hugetlb_read(NULL, node, page_bytes / 1024, &c, bad, sizeof bad) != 0) {
        int e = errno;
        return ph_fail(e, "huge_pool: cannot read %s: %s", bad, strerror(e));
    }
    if (!c.present) {
        char dir[256];
        ph_hugetlb_path(dir, sizeof dir, NULL, node, page_bytes / 1024, NULL);
        return ph_fail(ENOENT, "huge_pool: no %zu MiB hugetlbfs pool (no %s)",
                       page_bytes >> 20, dir);
    }
    out->total_pages = c.total_pages;
    out->free_pages = c.free_pages;
    out->surplus_pages = c.surplus_pages;
    out->reserved_pages = c.reserved_pages;
    return 0;
}

/* ---- open / close --------------------------------------------------------- */

static void lx_close(ph_os *os)
{
    if (!os)
        return;
    lx_state *s = os->impl;
    if (s) {
        pthread_mutex_destroy(&s->lock);
        free(s->maps);
        free(s);
    }
    free(os);
}

static const ph_os_ops linux_ops = {
    .name = "linux",
    .query = lx_query,
    .move = lx_move,
    .bind = lx_bind,
    .populate_on = lx_populate_on,
    .map = lx_map,
    .unmap = lx_unmap,
    .advise_huge = lx_advise_huge,
    .huge_state = lx_huge_state,
    .huge_split = lx_huge_split,
    .huge_eligible = lx_huge_eligible,
    .huge_pool = lx_huge_pool,
    .current_cpu = lx_current_cpu,
    .current_node = lx_current_node,
    .set_thread_node = lx_set_thread_node,
    .probe = lx_probe,
    .allowed = lx_allowed,
    .process_policy = lx_process_policy,
    .close = lx_close,
};

ph_os *ph_os_linux_open(const struct ph_topology *topo)
{
    if (!topo || topo->nnodes < 1)
        return ph_fail_null(EINVAL, "linux machine: no topology");
    lx_state *s = calloc(1, sizeof *s);
    if (!s)
        return ph_fail_null(ENOMEM, "linux machine: out of memory");
    pthread_mutex_init(&s->lock, NULL);
    char buf[1024];
    if (ph_read_text("/sys/devices/system/node/has_memory", buf, sizeof buf) > 0 &&
        parse_node_list(buf, s->has_memory) == 0)
        s->has_memory_known = 1;
    int mode = 0;
    if (get_mempolicy(&mode, s->bind, LX_MAXNODE, NULL, 0) == 0) {
        mode &= 0xff; /* without MPOL_F_STATIC_NODES and the like */
        atomic_store(&s->own_policy, mode != MPOL_DEFAULT);
        s->bind_known = mode == MPOL_BIND;
    }
    ph_os *os = ph_os_new(&linux_ops, topo, s);
    if (!os) {
        pthread_mutex_destroy(&s->lock);
        free(s);
    }
    return os;
}
