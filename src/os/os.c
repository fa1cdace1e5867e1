/*
 * os.c -- what every OS-operations table shares: the front door that
 * checks every call's arguments once (os.h), construction and closing,
 * aligned anonymous mappings, populating memory without changing it, and
 * residency.
 *
 * The front door is the contract's argument rules written once.  What it
 * decides for both implementations (where they used to differ):
 *   - all arguments are checked before a zero count or length returns 0,
 *     so a bad call fails whatever its size;
 *   - ranges are widened to whole 4 KiB pages (huge_split: whole 2 MiB
 *     pages, else refused); a page of a batch is named by any address in
 *     it;
 *   - a move entry whose target is not a node of the topology gets -EINVAL
 *     here; the implementation sees only the others (Linux still answers
 *     -EINVAL for nodes the kernel refuses: no memory, outside the cpuset);
 *   - map rounds the length up to its page size (2 MiB for huge mappings)
 *     and the alignment up to that page size;
 *   - set_thread_node accepts a node of the topology or a negative node.
 */
#include "os/os.h"

#include "base/error.h"
#include "topo/topo.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

ph_os *ph_os_new(const ph_os_ops *ops, const struct ph_topology *topo,
                 void *impl)
{
    ph_os *os = calloc(1, sizeof *os);
    if (!os)
        return ph_fail_null(ENOMEM, "pagehome: out of memory opening the %s machine",
                            ops->name);
    os->ops = ops;
    os->topo = topo;
    os->impl = impl;
    return os;
}

void ph_os_close(ph_os *os)
{
    if (os && os->ops && os->ops->close)
        os->ops->close(os);
}

void *ph_os_mmap_aligned(size_t len, size_t align, int extra_flags)
{
    if (len == 0 || align == 0 || (align & (align - 1)) != 0) {
        errno = EINVAL;
        return NULL;
    }
    const int prot = PROT_READ | PROT_WRITE;
    const int flags = MAP_PRIVATE | MAP_ANONYMOUS | extra_flags;
    /* The kernel hands out 4 KiB-aligned addresses (2 MiB-aligned for
     * MAP_HUGETLB), so only larger alignments need the over-map. */
    size_t natural = (extra_flags & MAP_HUGETLB) ? PH_PAGE_2M : PH_PAGE_4K;
    if (align <= natural) {
        void *p = mmap(NULL, len, prot, flags, -1, 0);
        return p == MAP_FAILED ? NULL : p;
    }
    if (len > SIZE_MAX - align) {
        errno = ENOMEM;
        return NULL;
    }
    size_t total = len + align;
    char *raw = mmap(NULL, total, prot, flags, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    uintptr_t start = ((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1);
    size_t head = start - (uintptr_t)raw;
    size_t tail = total - head - len;
    /* len is a multiple of the page size the caller uses; trimming the
     * whole-page remainders cannot fail in a way that matters. */
    if (head)
        munmap(raw, head);
    if (tail)
        munmap((char *)start + len, tail);
    return (void *)start;
}

int ph_os_populate(void *addr, size_t len, int try_touch)
{
    if (len == 0)
        return 0;
    if (madvise(addr, len, MADV_POPULATE_WRITE) == 0)
        return 0;
    if (errno != EINVAL || !try_touch)
        return -1;
    /* Kernels before 5.14: touch one byte per page with an atomic
     * read-modify-write that adds zero.  A plain read then write-back
     * could undo a concurrent store by another thread; this cannot. */
    long ps = sysconf(_SC_PAGESIZE);
    size_t step = ps > 0 ? (size_t)ps : PH_PAGE_4K;
    unsigned char *p = addr;
    for (size_t off = 0; off < len; off += step)
        __atomic_fetch_add(p + off, (unsigned char)0, __ATOMIC_RELAXED);
    return 0;
}

int ph_os_resident(const void *page)
{
    unsigned char v = 0;
    void *a = (void *)((uintptr_t)page & ~(uintptr_t)(PH_PAGE_4K - 1));
    if (mincore(a, PH_PAGE_4K, &v) != 0)
        return errno == ENOMEM ? -1 : 0;
    return v & 1;
}

/* ------------------------------------------------------------------ */
/* The front door                                                      */
/* ------------------------------------------------------------------ */

#define ALIGN_DOWN(v, a) ((uintptr_t)(v) & ~(uintptr_t)((a) - 1))

static int no_os(const char *who)
{
    return ph_fail(EINVAL, "%s: no machine (NULL)", who);
}

/* [addr, addr+len) widened to whole 4 KiB pages into *a, *l.  -1/EINVAL
 * when it wraps around the address space. */
static int whole_pages(const char *who, const void *addr, size_t len, uintptr_t *a,
                       size_t *l)
{
    uintptr_t start = ALIGN_DOWN(addr, PH_PAGE_4K);
    uintptr_t end = (uintptr_t)addr + len;
    if (end < (uintptr_t)addr || end > UINTPTR_MAX - (PH_PAGE_4K - 1))
        return ph_fail(EINVAL, "%s: [%p, +%zu) wraps around the address space", who,
                       addr, len);
    end = ALIGN_DOWN(end + PH_PAGE_4K - 1, PH_PAGE_4K);
    *a = start;
    *l = (size_t)(end - start);
    return 0;
}

static int check_node(const ph_os *os, const char *who, int node)
{
    if (ph_topo_node_index(os->topo, node) < 0)
        return ph_fail(EINVAL, "%s: node %d is not a node of the machine", who, node);
    return 0;
}

const char *ph_os_name(const ph_os *os)
{
    return os && os->ops ? os->ops->name : "none";
}

int ph_os_query(ph_os *os, size_t count, void *const *pages, int *status)
{
    if (!os)
        return no_os("query");
    if (count > 0 && (!pages || !status))
        return ph_fail(EINVAL, "query: pages and status must not be NULL");
    if (count == 0)
        return 0;
    return os->ops->query(os, count, pages, status);
}

long ph_os_move(ph_os *os, size_t count, void *const *pages, const int *nodes,
                int *status)
{
    if (!os)
        return no_os("move");
    if (count > 0 && (!pages || !nodes || !status))
        return ph_fail(EINVAL, "move: pages, nodes and status must not be NULL");
    if (count == 0)
        return 0;
    size_t nbad = 0;
    for (size_t i = 0; i < count; i++)
        if (ph_topo_node_index(os->topo, nodes[i]) < 0)
            nbad++;
    if (nbad == 0)
        return os->ops->move(os, count, pages, nodes, status);

    /* Bad targets answer -EINVAL here; the implementation sees the rest. */
    size_t n = count - nbad;
    void **kp = NULL;
    int *kn = NULL, *ks = NULL;
    size_t *ki = NULL;
    long rc = 0;
    if (n > 0) {
        kp = malloc(n * sizeof *kp);
        kn = malloc(n * sizeof *kn);
        ks = malloc(n * sizeof *ks);
        ki = malloc(n * sizeof *ki);
        if (!kp || !kn || !ks || !ki) {
            free(kp);
            free(kn);
            free(ks);
            free(ki);
            return ph_fail(ENOMEM, "move: out of memory for %zu pages", count);
        }
    }
    size_t k = 0;
    for (size_t i = 0; i < count; i++) {
        if (ph_topo_node_index(os->topo, nodes[i]) < 0) {
            status[i] = -EINVAL;
        } else {
            kp[k] = pages[i];
            kn[k] = nodes[i];
            ki[k++] = i;
        }
    }
    if (n > 0) {
        rc = os->ops->move(os, n, kp, kn, ks);
        int e = errno;
        for (k = 0; k < n; k++)
            status[ki[k]] = ks[k];
        free(kp);
        free(kn);
        free(ks);
        free(ki);
        errno = e;
    }
    if (rc < 0)
        return rc;
    long missed = 0;
    for (size_t i = 0; i < count; i++)
        if (status[i] != nodes[i])
            missed++;
    return missed;
}

int ph_os_bind(ph_os *os, void *addr, size_t len, enum ph_bind_kind kind,
               const int *nodes, int nnodes)
{
    if (!os)
        return no_os("bind");
    switch (kind) {
    case PH_BIND_DEFAULT:
    case PH_BIND_LOCAL:
        nodes = NULL;
        nnodes = 0;
        break;
    case PH_BIND_PREFERRED:
        if (!nodes || nnodes < 1 || ph_topo_node_index(os->topo, nodes[0]) < 0)
            return ph_fail(EINVAL, "bind: preferred node %d is not a node of the machine",
                           nodes && nnodes > 0 ? nodes[0] : -1);
        nnodes = 1;
        break;
    case PH_BIND_INTERLEAVE:
        if (!nodes || nnodes < 1 || nnodes > PH_MAX_NODES)
            return ph_fail(EINVAL, "bind: interleave needs 1 to %d nodes", PH_MAX_NODES);
        for (int i = 0; i < nnodes; i++) {
            if (ph_topo_node_index(os->topo, nodes[i]) < 0)
                return ph_fail(EINVAL, "bind: interleave node %d is not a node of the machine",
                               nodes[i]);
            if (i > 0 && nodes[i] <= nodes[i - 1])
                return ph_fail(EINVAL,
                               "bind: interleave nodes must be ascending and distinct "
                               "(the kernel keeps a node mask): %d after %d",
                               nodes[i], nodes[i - 1]);
        }
        break;
    default:
        return ph_fail(EINVAL, "bind: unknown kind %d", (int)kind);
    }
    uintptr_t a = 0;
    size_t l = 0;
    if (whole_pages("bind", addr, len, &a, &l) != 0)
        return -1;
    if (len == 0)
        return 0;
    return os->ops->bind(os, (void *)a, l, kind, nodes, nnodes);
}

int ph_os_populate_on(ph_os *os, void *addr, size_t len, int node)
{
    if (!os)
        return no_os("populate");
    if (check_node(os, "populate", node) != 0)
        return -1;
    uintptr_t a = 0;
    size_t l = 0;
    if (whole_pages("populate", addr, len, &a, &l) != 0)
        return -1;
    if (len == 0)
        return 0;
    return os->ops->populate_on(os, (void *)a, l, node);
}

void *ph_os_map(ph_os *os, size_t len, size_t align, unsigned flags)
{
    if (!os)
        return no_os("map"), NULL;
    if (len == 0)
        return ph_fail_null(EINVAL, "map: length 0");
    if (align < PH_PAGE_4K || (align & (align - 1)) != 0)
        return ph_fail_null(EINVAL, "map: alignment %zu is not a power of two >= 4096",
                            align);
    if (flags & ~(unsigned)(PH_MAP_HUGE_THP | PH_MAP_HUGE_TLBFS | PH_MAP_NO_THP))
        return ph_fail_null(EINVAL, "map: unknown flags 0x%x", flags);
    int huge = (flags & (PH_MAP_HUGE_THP | PH_MAP_HUGE_TLBFS)) != 0;
    if ((flags & PH_MAP_HUGE_THP) && (flags & PH_MAP_HUGE_TLBFS))
        return ph_fail_null(EINVAL, "map: THP and hugetlbfs both requested");
    if (huge && (flags & PH_MAP_NO_THP))
        return ph_fail_null(EINVAL, "map: huge pages and NO_THP both requested");
    size_t unit = huge ? PH_PAGE_2M : PH_PAGE_4K;
    if (len > SIZE_MAX - unit)
        return ph_fail_null(ENOMEM, "map: %zu bytes is too large", len);
    len = (len + unit - 1) & ~(unit - 1);
    if (align < unit)
        align = unit;
    return os->ops->map(os, len, align, flags);
}

int ph_os_unmap(ph_os *os, void *addr, size_t len)
{
    if (!os)
        return no_os("unmap");
    if (!addr || (uintptr_t)addr % PH_PAGE_4K)
        return ph_fail(EINVAL, "unmap: %p is not an address map returned", addr);
    if (len == 0 || len > SIZE_MAX - PH_PAGE_4K)
        return ph_fail(EINVAL, "unmap: length %zu", len);
    return os->ops->unmap(os, addr, (len + PH_PAGE_4K - 1) & ~(PH_PAGE_4K - 1));
}

int ph_os_advise_huge(ph_os *os, void *addr, size_t len, int on)
{
    if (!os)
        return no_os("advise_huge");
    uintptr_t a = 0;
    size_t l = 0;
    if (whole_pages("advise_huge", addr, len, &a, &l) != 0)
        return -1;
    if (len == 0)
        return 0;
    return os->ops->advise_huge(os, (void *)a, l, on != 0);
}

int ph_os_huge_state(ph_os *os, void *addr, size_t n, uint8_t *huge)
{
    if (!os)
        return no_os("huge_state");
    if (n > 0 && !huge)
        return ph_fail(EINVAL, "huge_state: huge must not be NULL");
    uintptr_t a = ALIGN_DOWN(addr, PH_PAGE_4K);
    if (n > (UINTPTR_MAX - a) / PH_PAGE_4K)
        return ph_fail(EINVAL, "huge_state: %zu pages from %p wrap around the address "
                       "space", n, addr);
    if (n == 0)
        return 0;
    return os->ops->huge_state(os, (void *)a, n, huge);
}

int ph_os_huge_split(ph_os *os, void *addr, size_t len, int split)
{
    if (!os)
        return no_os("huge_split");
    uintptr_t a = (uintptr_t)addr;
    if (a % PH_PAGE_2M || len % PH_PAGE_2M || len == 0 || a + len < a)
        return ph_fail(EINVAL, "huge_split: [%p, +%zu) is not whole 2 MiB pages",
                       addr, len);
    return os->ops->huge_split(os, addr, len, split != 0);
}

int ph_os_huge_eligible(ph_os *os, void *addr, size_t len)
{
    if (!os)
        return no_os("huge_eligible");
    uintptr_t a = 0;
    size_t l = 0;
    if (whole_pages("huge_eligible", addr, len, &a, &l) != 0)
        return -1;
    if (l == 0)
        return 0;
    return os->ops->huge_eligible(os, (void *)a, l);
}

int ph_os_huge_pool(ph_os *os, int node, size_t page_bytes, ph_os_pool *out)
{
    if (!os)
        return no_os("huge_pool");
    if (!out)
        return ph_fail(EINVAL, "huge_pool: out must not be NULL");
    if (page_bytes != PH_PAGE_2M && page_bytes != ((size_t)1 << 30))
        return ph_fail(EINVAL, "huge_pool: page size %zu is not 2 MiB or 1 GiB",
                       page_bytes);
    if (node != -1 && check_node(os, "huge_pool", node) != 0)
        return -1;
    memset(out, 0, sizeof *out);
    return os->ops->huge_pool(os, node, page_bytes, out);
}

int ph_os_current_cpu(ph_os *os)
{
    return os ? os->ops->current_cpu(os) : -1;
}

int ph_os_current_node(ph_os *os)
{
    return os ? os->ops->current_node(os) : -1;
}

void ph_os_note_touch(ph_os *os, void *addr, size_t len, int node)
{
    if (os && os->ops->note_touch && addr && len)
        os->ops->note_touch(os, addr, len, node);
}

void ph_os_note_moved(ph_os *os, void *dst, const void *src, size_t len)
{
    if (os && os->ops->note_moved && dst && src && len &&
        !(((uintptr_t)dst | (uintptr_t)src | len) & 4095u))
        os->ops->note_moved(os, dst, src, len);
}

void ph_os_fork_prepare(ph_os *os)
{
    if (os && os->ops->fork_prepare)
        os->ops->fork_prepare(os);
}

void ph_os_fork_parent(ph_os *os)
{
    if (os && os->ops->fork_parent)
        os->ops->fork_parent(os);
}

void ph_os_fork_child(ph_os *os)
{
    if (os && os->ops->fork_child)
        os->ops->fork_child(os);
}

int ph_os_tracks_touch(const ph_os *os)
{
    return os && os->ops->note_touch != NULL;
}

int ph_os_set_thread_node(ph_os *os, int node)
{
    if (!os)
        return no_os("set_thread_node");
    if (node >= 0 && ph_topo_node_index(os->topo, node) < 0)
        return ph_fail(EINVAL, "set_thread_node: node %d is not a node of the machine",
                       node);
    return os->ops->set_thread_node(os, node < 0 ? -1 : node);
}

uint64_t ph_os_allowed_nodes(ph_os *os)
{
    return os ? os->ops->allowed(os) : 0;
}

int ph_os_process_policy(ph_os *os, int own, const int *bind_nodes, int nbind)
{
    if (!os)
        return no_os("process_policy");
    if (own != 0 && own != 1)
        return ph_fail(EINVAL, "process_policy: own must be 0 or 1, not %d", own);
    if (nbind < 0 || nbind > os->topo->nnodes || (nbind > 0 && !bind_nodes) ||
        (nbind > 0 && !own))
        return ph_fail(EINVAL, "process_policy: %d bound nodes (of %d) with own = %d",
                       nbind, os->topo->nnodes, own);
    for (int i = 0; i < nbind; i++) {
        if (ph_topo_node_index(os->topo, bind_nodes[i]) < 0)
            return ph_fail(EINVAL, "process_policy: node %d is not a node of the "
                           "machine", bind_nodes[i]);
        for (int j = 0; j < i; j++)
            if (bind_nodes[j] == bind_nodes[i])
                return ph_fail(EINVAL, "process_policy: node %d given twice",
                               bind_nodes[i]);
    }
    return os->ops->process_policy(os, own, nbind ? bind_nodes : NULL, nbind);
}

int ph_os_probe_machine(ph_os *os, ph_os_probe *out)
{
    if (!os)
        return no_os("probe");
    if (!out)
        return ph_fail(EINVAL, "probe: out must not be NULL");
    memset(out, 0, sizeof *out);
    return os->ops->probe(os, out);
}
