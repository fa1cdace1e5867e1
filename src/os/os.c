/*
 * os.c -- what every OS-operations table shares: construction, closing,
 * aligned anonymous mappings, populating memory without changing it,
 * residency and small file reads (see os.h).
 */
#include "os/os.h"

#include "base/error.h"
#include "topo/topo.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
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

long ph_os_read_text(const char *path, char *buf, size_t len)
{
    if (len == 0)
        return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t got = 0;
    while (got + 1 < len) {
        ssize_t r = read(fd, buf + got, len - 1 - got);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = '\0';
    return (long)got;
}

int ph_os_node_index(const struct ph_topology *topo, int node)
{
    if (!topo || node < 0)
        return -1;
    for (int i = 0; i < topo->nnodes; i++)
        if (topo->nodes[i].id == node)
            return i;
    return -1;
}
