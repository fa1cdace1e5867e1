/*
 * syscalls.c -- system calls on watched pages, in transparent mode.
 *
 * A page the sampler has protected (PROT_NONE) traps when the program
 * touches it, but a system call that copies to or from it fails with
 * EFAULT instead: the kernel does not raise SIGSEGV for its own accesses.
 * A program that read(2)s into a static or heap array that pagehome
 * watches would see an error it never had.  So the data-moving calls are
 * wrapped: first the buffer is touched once per page from user space
 * (a read: it traps on a watched page, which the handler opens; it costs
 * nothing on an open one), then the real call runs; if it still fails with
 * EFAULT (the memory manager re-armed the page in between), touch and try
 * again, a bounded number of times.  A buffer that is really bad (a hole):
 * the kernel's copy would have failed with EFAULT, not SIGSEGV: to keep
 * that, pages are touched only when the whole buffer is mapped (mincore
 * succeeds), else the call goes straight through and fails as before.
 *
 * Wrapped: read, write, pread, pwrite, readv, writev, recv, recvfrom,
 * send, sendto.  A call that failed with EFAULT consumed no data (the
 * kernel copies before it commits), so repeating it is safe.
 *
 * NUMA queries and moves.  A page the userfaultfd mechanism watches is
 * out of the page table (moved to the sampler's stash), and before Linux
 * 6.5 a PROT_NONE page is treated the same way: move_pages(2) reports it
 * absent (status -ENOENT) and does not move it, get_mempolicy(MPOL_F_ADDR)
 * fails with EFAULT on it.  A program that checks where its pages are (or
 * moves them) would see watched pages vanish.  Touching would count the
 * caller as an accessor of every page it asks about, so these take a
 * query hold (no arm watches a page until it ends), open the watched
 * pages *without* sampling them (ph_sampler_open_pages, which also waits
 * for runs other threads are opening or arming), call the kernel, and
 * end the hold: the kernel sees every page where it is.  Only calls on
 * this process are touched.  Wrapped: move_pages, get_mempolicy
 * (libnuma's numa_move_pages calls move_pages).  pagehome's own mover
 * goes through the same move_pages.  Not wrapped: mbind (pages it skips
 * are moved by the engine anyway) and raw syscall(2).
 */
/* This file defines read, recv and the others themselves: glibc's
 * _FORTIFY_SOURCE wrappers of the same names (a distribution's build
 * flags) would be declared before these definitions. */
#undef _FORTIFY_SOURCE
#include "preload/preload.h"

#include "sample/source.h"

#include <dlfcn.h>
#include <numaif.h>
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define PH_EXPORT __attribute__((visibility("default")))
#define RETRIES 3

/* Open the watched pages of [buf, buf+len) by reading one byte of each,
 * provided the whole range is mapped (checked with mincore, 16 MiB at a
 * time). */
static void touch(const void *buf, size_t len)
{
    if (!buf || len == 0 || !ph_preload_ready())
        return;
    uintptr_t first = (uintptr_t)buf & ~(uintptr_t)4095;
    uintptr_t end = (uintptr_t)buf + len;
    if (end < first)
        return;
    unsigned char vec[4096];
    for (uintptr_t q = first; q < end; q += sizeof vec * 4096) {
        size_t span = end - q < sizeof vec * 4096 ? end - q : sizeof vec * 4096;
        if (mincore((void *)q, span, vec) != 0)
            return; /* a hole: let the kernel say EFAULT */
    }
    for (uintptr_t p = first; p < end; p += 4096) {
        uintptr_t at = p > (uintptr_t)buf ? p : (uintptr_t)buf;
        (void)*(volatile const unsigned char *)at;
    }
}

static void touch_iov(const struct iovec *iov, int n)
{
    for (int i = 0; iov && i < n; i++)
        touch(iov[i].iov_base, iov[i].iov_len);
}

#define REAL(name, type)                                                     \
    static type real_##name;                                                 \
    if (!real_##name)                                                        \
        real_##name = (type)dlsym(RTLD_NEXT, #name)

/* Run CALL (an expression yielding ssize_t) with BUF pages touched first
 * and again after an EFAULT. */
#define GUARDED(TOUCH, CALL)                                                 \
    do {                                                                     \
        ssize_t r_ = -1;                                                     \
        int saved_ = errno;                                                  \
        for (int try_ = 0; try_ <= RETRIES; try_++) {                        \
            TOUCH;                                                           \
            errno = saved_;                                                  \
            r_ = (CALL);                                                     \
            if (!(r_ < 0 && errno == EFAULT))                                \
                break;                                                       \
        }                                                                    \
        return r_;                                                           \
    } while (0)

typedef ssize_t (*rw_fn)(int, void *, size_t);
typedef ssize_t (*wr_fn)(int, const void *, size_t);
typedef ssize_t (*prw_fn)(int, void *, size_t, off_t);
typedef ssize_t (*pwr_fn)(int, const void *, size_t, off_t);
typedef ssize_t (*iov_fn)(int, const struct iovec *, int);
typedef ssize_t (*recv_fn)(int, void *, size_t, int);
typedef ssize_t (*send_fn)(int, const void *, size_t, int);
typedef ssize_t (*recvfrom_fn)(int, void *, size_t, int, struct sockaddr *,
                               socklen_t *);
typedef ssize_t (*sendto_fn)(int, const void *, size_t, int,
                             const struct sockaddr *, socklen_t);

PH_EXPORT ssize_t read(int fd, void *buf, size_t n)
{
    REAL(read, rw_fn);
    GUARDED(touch(buf, n), real_read(fd, buf, n));
}

PH_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
    REAL(write, wr_fn);
    GUARDED(touch(buf, n), real_write(fd, buf, n));
}

PH_EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    REAL(pread, prw_fn);
    GUARDED(touch(buf, n), real_pread(fd, buf, n, off));
}

PH_EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    REAL(pwrite, pwr_fn);
    GUARDED(touch(buf, n), real_pwrite(fd, buf, n, off));
}

PH_EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
    REAL(readv, iov_fn);
    GUARDED(touch_iov(iov, cnt), real_readv(fd, iov, cnt));
}

PH_EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    REAL(writev, iov_fn);
    GUARDED(touch_iov(iov, cnt), real_writev(fd, iov, cnt));
}

PH_EXPORT ssize_t recv(int fd, void *buf, size_t n, int flags)
{
    REAL(recv, recv_fn);
    GUARDED(touch(buf, n), real_recv(fd, buf, n, flags));
}

PH_EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
    REAL(send, send_fn);
    GUARDED(touch(buf, n), real_send(fd, buf, n, flags));
}

PH_EXPORT ssize_t recvfrom(int fd, void *buf, size_t n, int flags,
                           struct sockaddr *from, socklen_t *fromlen)
{
    REAL(recvfrom, recvfrom_fn);
    GUARDED(touch(buf, n), real_recvfrom(fd, buf, n, flags, from, fromlen));
}

PH_EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags,
                         const struct sockaddr *to, socklen_t tolen)
{
    REAL(sendto, sendto_fn);
    GUARDED(touch(buf, n), real_sendto(fd, buf, n, flags, to, tolen));
}

/* ---- move_pages, get_mempolicy ---------------------------------------------- */

static int is_self(int pid)
{
    return pid == 0 || pid == getpid();
}

PH_EXPORT long move_pages(int pid, unsigned long count, void **pages,
                          const int *nodes, int *status, int flags)
{
    int self = is_self(pid) && ph_preload_ready() && pages && status;
    if (!self)
        return syscall(SYS_move_pages, pid, count, pages, nodes, status, flags);
    int saved = errno;
    ph_sampler_query_begin();
    (void)ph_sampler_open_pages(count, pages);
    errno = saved;
    long r = syscall(SYS_move_pages, pid, count, pages, nodes, status, flags);
    saved = errno;
    ph_sampler_query_end();
    errno = saved;
    return r;
}

PH_EXPORT long get_mempolicy(int *mode, unsigned long *nodemask,
                             unsigned long maxnode, void *addr, unsigned flags)
{
    if (!(flags & MPOL_F_ADDR) || !ph_preload_ready())
        return syscall(SYS_get_mempolicy, mode, nodemask, maxnode, addr, flags);
    int saved = errno;
    ph_sampler_query_begin();
    (void)ph_sampler_open_pages(1, &addr);
    errno = saved;
    long r = syscall(SYS_get_mempolicy, mode, nodemask, maxnode, addr, flags);
    saved = errno;
    ph_sampler_query_end();
    errno = saved;
    return r;
}
