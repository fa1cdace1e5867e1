/*
 * buffer_calls.h -- the calls that make the kernel copy to or from a
 * caller's buffer, wrapped for memory that traps in user mode but not in
 * the kernel.
 *
 * Memory whose accesses pagehome catches with page protection, or with a
 * userfaultfd that takes user-mode faults only, is not always accessible:
 * the program's own loads and stores fault, are resolved and retried, but
 * a system call that copies to or from such a page fails with EFAULT --
 * the kernel does not raise SIGSEGV for its own accesses.  So the calls
 * that move data through a caller's buffer are defined here over the next
 * definitions (dlsym RTLD_NEXT: libc's, or another interposer's): first
 * the buffer is prepared from user space (ph_bc_prepare: the includer's
 * way of making it accessible, one touch per page), then the real call
 * runs; if it still fails with EFAULT (a page was taken away again in
 * between), prepare and call again, a bounded number of times.  A call
 * that failed with EFAULT consumed no data (the kernel copies before it
 * commits), so repeating it is safe.  A buffer that is really bad must
 * still fail with EFAULT, not crash: ph_bc_prepare touches nothing unless
 * every page of the buffer may be touched.
 *
 * Wrapped: read, write, pread, pwrite, readv, writev, preadv, pwritev, and
 * their 64-bit-offset names (what -D_FILE_OFFSET_BITS=64 calls), recv,
 * send, recvfrom, sendto, recvmsg, sendmsg; the _FORTIFY_SOURCE checkers
 * (__read_chk, __pread_chk, __pread64_chk, __recv_chk, __recvfrom_chk,
 * __fread_chk), which glibc implements over its internal calls; fread and
 * fwrite, whose large transfers glibc makes straight between the caller's
 * buffer and the file with internal calls no wrapper sees.  A stdio call
 * is repeated for the part not transferred, only when the stream had no
 * error before and the error it got is EFAULT.
 *
 * Use: in exactly one file of a shared library, as its FIRST include
 * (before any system header: the file defines read() and pread() itself,
 * which _FORTIFY_SOURCE and _FILE_OFFSET_BITS would rename), after
 * declaring
 *     static void ph_bc_prepare(const void *buf, size_t len, int kernel_writes);
 * kernel_writes: the kernel will store into the buffer (read, recv), else
 * it only loads from it (write, send).  The library exports these names
 * unversioned (a version script must leave them out of its nodes), so
 * that references bound to libc's versioned names find them first.
 */
#ifndef PH_BASE_BUFFER_CALLS_H
#define PH_BASE_BUFFER_CALLS_H

#if defined(_FEATURES_H)
#error "base/buffer_calls.h must be included before any system header"
#endif
#undef _FORTIFY_SOURCE
#undef _FILE_OFFSET_BITS
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static void ph_bc_prepare(const void *buf, size_t len, int kernel_writes);

#define PH_BC_EXPORT __attribute__((visibility("default")))
#define PH_BC_RETRIES 3

/* glibc's report of a failed _FORTIFY_SOURCE check (it does not return),
 * and the checkers defined here (declared by glibc's headers only when
 * _FORTIFY_SOURCE is on) */
extern void __chk_fail(void) __attribute__((noreturn));
ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen);
ssize_t __pread64_chk(int fd, void *buf, size_t n, off64_t off, size_t buflen);
ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags,
                       struct sockaddr *from, socklen_t *fromlen);
size_t __fread_chk(void *buf, size_t buflen, size_t size, size_t n, FILE *f);

static void ph_bc_prepare_iov(const struct iovec *iov, long n, int kernel_writes)
{
    for (long i = 0; iov && i < n; i++)
        ph_bc_prepare(iov[i].iov_base, iov[i].iov_len, kernel_writes);
}

static void ph_bc_prepare_msg(const struct msghdr *m, int kernel_writes)
{
    if (m)
        ph_bc_prepare_iov(m->msg_iov, (long)m->msg_iovlen, kernel_writes);
}

/* The next definition of NAME (ph_bc_real_NAME), found by
 * ph_bc_find_all below, run as a constructor when the library is loaded
 * -- so that a first call from a signal handler (write(2) is
 * async-signal-safe) runs no dlsym -- or the first call, if that comes
 * earlier (another library's constructor); a race there finds the same
 * pointers twice. */
#define PH_BC_REAL(name, type)                                               \
    type fn_##name = ph_bc_real_##name;                                      \
    if (!fn_##name) {                                                        \
        ph_bc_find_all();                                                    \
        fn_##name = ph_bc_real_##name;                                       \
    }

/* Return CALL (yielding ssize_t) with the buffer prepared by PREPARE
 * first and again after each EFAULT. */
#define PH_BC_GUARDED(PREPARE, CALL)                                         \
    do {                                                                     \
        ssize_t r_ = -1;                                                     \
        int saved_ = errno;                                                  \
        for (int try_ = 0; try_ <= PH_BC_RETRIES; try_++) {                  \
            PREPARE;                                                         \
            errno = saved_;                                                  \
            r_ = (CALL);                                                     \
            if (!(r_ < 0 && errno == EFAULT))                                \
                break;                                                       \
        }                                                                    \
        return r_;                                                           \
    } while (0)

typedef ssize_t (*ph_bc_rd_fn)(int, void *, size_t);
typedef ssize_t (*ph_bc_wr_fn)(int, const void *, size_t);
typedef ssize_t (*ph_bc_prd_fn)(int, void *, size_t, off_t);
typedef ssize_t (*ph_bc_pwr_fn)(int, const void *, size_t, off_t);
typedef ssize_t (*ph_bc_prd64_fn)(int, void *, size_t, off64_t);
typedef ssize_t (*ph_bc_pwr64_fn)(int, const void *, size_t, off64_t);
typedef ssize_t (*ph_bc_iov_fn)(int, const struct iovec *, int);
typedef ssize_t (*ph_bc_piov_fn)(int, const struct iovec *, int, off_t);
typedef ssize_t (*ph_bc_piov64_fn)(int, const struct iovec *, int, off64_t);
typedef ssize_t (*ph_bc_recv_fn)(int, void *, size_t, int);
typedef ssize_t (*ph_bc_send_fn)(int, const void *, size_t, int);
typedef ssize_t (*ph_bc_recvfrom_fn)(int, void *, size_t, int, struct sockaddr *,
                                     socklen_t *);
typedef ssize_t (*ph_bc_sendto_fn)(int, const void *, size_t, int,
                                   const struct sockaddr *, socklen_t);
typedef ssize_t (*ph_bc_recvmsg_fn)(int, struct msghdr *, int);
typedef ssize_t (*ph_bc_sendmsg_fn)(int, const struct msghdr *, int);
typedef size_t (*ph_bc_fread_fn)(void *, size_t, size_t, FILE *);
typedef size_t (*ph_bc_fwrite_fn)(const void *, size_t, size_t, FILE *);

#define PH_BC_CALLS(X)                                                       \
    X(read, ph_bc_rd_fn) X(write, ph_bc_wr_fn) X(pread, ph_bc_prd_fn)        \
    X(pwrite, ph_bc_pwr_fn) X(pread64, ph_bc_prd64_fn)                       \
    X(pwrite64, ph_bc_pwr64_fn) X(readv, ph_bc_iov_fn) X(writev, ph_bc_iov_fn) \
    X(preadv, ph_bc_piov_fn) X(pwritev, ph_bc_piov_fn)                       \
    X(preadv64, ph_bc_piov64_fn) X(pwritev64, ph_bc_piov64_fn)               \
    X(recv, ph_bc_recv_fn) X(send, ph_bc_send_fn)                            \
    X(recvfrom, ph_bc_recvfrom_fn) X(sendto, ph_bc_sendto_fn)                \
    X(recvmsg, ph_bc_recvmsg_fn) X(sendmsg, ph_bc_sendmsg_fn)                \
    X(fread, ph_bc_fread_fn) X(fwrite, ph_bc_fwrite_fn)
#define PH_BC_SLOT(name, type) static type _Atomic ph_bc_real_##name;
PH_BC_CALLS(PH_BC_SLOT)
#define PH_BC_FIND(name, type)                                               \
    if (!ph_bc_real_##name)                                                  \
        ph_bc_real_##name = (type)dlsym(RTLD_NEXT, #name);

__attribute__((constructor)) static void ph_bc_find_all(void)
{
    PH_BC_CALLS(PH_BC_FIND)
}

PH_BC_EXPORT ssize_t read(int fd, void *buf, size_t n)
{
    PH_BC_REAL(read, ph_bc_rd_fn);
    PH_BC_GUARDED(ph_bc_prepare(buf, n, 1), fn_read(fd, buf, n));
}

PH_BC_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
    PH_BC_REAL(write, ph_bc_wr_fn);
    PH_BC_GUARDED(ph_bc_prepare(buf, n, 0), fn_write(fd, buf, n));
}

PH_BC_EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    PH_BC_REAL(pread, ph_bc_prd_fn);
    PH_BC_GUARDED(ph_bc_prepare(buf, n, 1), fn_pread(fd, buf, n, off));
}

PH_BC_EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    PH_BC_REAL(pwrite, ph_bc_pwr_fn);
    PH_BC_GUARDED(ph_bc_prepare(buf, n, 0), fn_pwrite(fd, buf, n, off));
}

PH_BC_EXPORT ssize_t pread64(int fd, void *buf, size_t n, off64_t off)
{
    PH_BC_REAL(pread64, ph_bc_prd64_fn);
    PH_BC_GUARDED(ph_bc_prepare(buf, n, 1), fn_pread64(fd, buf, n, off));
}

PH_BC_EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
    PH_BC_REAL(pwrite64, ph_bc_pwr64_fn);
    PH_BC_GUARDED(ph_bc_prepare(buf, n, 0), fn_pwrite64(fd, buf, n, off));
}

PH_BC_EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
    PH_BC_REAL(readv, ph_bc_iov_fn);
    PH_BC_GUARDED(ph_bc_prepare_iov(iov, cnt, 1), fn_readv(fd, iov, cnt));
}

PH_BC_EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    PH_BC_REAL(writev, ph_bc_iov_fn);
    PH_BC_GUARDED(ph_bc_prepare_iov(iov, cnt, 0), fn_writev(fd, iov, cnt));
}

PH_BC_EXPORT ssize_t preadv(int fd, const struct iovec *iov, int cnt, off_t off)
{
    PH_BC_REAL(preadv, ph_bc_piov_fn);
    PH_BC_GUARDED(ph_bc_prepare_iov(iov, cnt, 1), fn_preadv(fd, iov, cnt, off));
}

PH_BC_EXPORT ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
    PH_BC_REAL(pwritev, ph_bc_piov_fn);
    PH_BC_GUARDED(ph_bc_prepare_iov(iov, cnt, 0), fn_pwritev(fd, iov, cnt, off));
}

PH_BC_EXPORT ssize_t preadv64(int fd, const struct iovec *iov, int cnt, off64_t off)
{
    PH_BC_REAL(preadv64, ph_bc_piov64_fn);
    PH_BC_GUARDED(ph_bc_prepare_iov(iov, cnt, 1), fn_preadv64(fd, iov, cnt, off));
}

PH_BC_EXPORT ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off64_t off)
{
    PH_BC_REAL(pwritev64, ph_bc_piov64_fn);
    PH_BC_GUARDED(ph_bc_prepare_iov(iov, cnt, 0), fn_pwritev64(fd, iov, cnt, off));
}

PH_BC_EXPORT ssize_t recv(int fd, void *buf, size_t n, int flags)
{
    PH_BC_REAL(recv, ph_bc_recv_fn);
    PH_BC_GUARDED(ph_bc_prepare(buf, n, 1), fn_recv(fd, buf, n, flags));
}

PH_BC_EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
    PH_BC_REAL(send, ph_bc_send_fn);
    PH_BC_GUARDED(ph_bc_prepare(buf, n, 0), fn_send(fd, buf, n, flags));
}

PH_BC_EXPORT ssize_t recvfrom(int fd, void *buf, size_t n, int flags,
                              struct sockaddr *from, socklen_t *fromlen)
{
    PH_BC_REAL(recvfrom, ph_bc_recvfrom_fn);
    PH_BC_GUARDED(ph_bc_prepare(buf, n, 1),
                  fn_recvfrom(fd, buf, n, flags, from, fromlen));
}

PH_BC_EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags,
                            const struct sockaddr *to, socklen_t tolen)
{
    PH_BC_REAL(sendto, ph_bc_sendto_fn);
    PH_BC_GUARDED(ph_bc_prepare(buf, n, 0), fn_sendto(fd, buf, n, flags, to, tolen));
}

PH_BC_EXPORT ssize_t recvmsg(int fd, struct msghdr *m, int flags)
{
    PH_BC_REAL(recvmsg, ph_bc_recvmsg_fn);
    PH_BC_GUARDED(ph_bc_prepare_msg(m, 1), fn_recvmsg(fd, m, flags));
}

PH_BC_EXPORT ssize_t sendmsg(int fd, const struct msghdr *m, int flags)
{
    PH_BC_REAL(sendmsg, ph_bc_sendmsg_fn);
    PH_BC_GUARDED(ph_bc_prepare_msg(m, 0), fn_sendmsg(fd, m, flags));
}

/* ---- _FORTIFY_SOURCE's checkers: the check, then the wrapper ---------- */

PH_BC_EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
    if (n > buflen)
        __chk_fail();
    return read(fd, buf, n);
}

PH_BC_EXPORT ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off,
                                 size_t buflen)
{
    if (n > buflen)
        __chk_fail();
    return pread(fd, buf, n, off);
}

PH_BC_EXPORT ssize_t __pread64_chk(int fd, void *buf, size_t n, off64_t off,
                                   size_t buflen)
{
    if (n > buflen)
        __chk_fail();
    return pread64(fd, buf, n, off);
}

PH_BC_EXPORT ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen,
                                int flags)
{
    if (n > buflen)
        __chk_fail();
    return recv(fd, buf, n, flags);
}

PH_BC_EXPORT ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen,
                                    int flags, struct sockaddr *from,
                                    socklen_t *fromlen)
{
    if (n > buflen)
        __chk_fail();
    return recvfrom(fd, buf, n, flags, from, fromlen);
}

/* ---- stdio ------------------------------------------------------------ */

/* fread (rd) or fwrite (wr) of n items of size bytes as one run of
 * bytes, the part not transferred repeated after an EFAULT that set the
 * stream's error.  Items of size bytes out, as the calls count them. */
static size_t ph_bc_stdio(ph_bc_fread_fn rd, ph_bc_fwrite_fn wr, char *buf,
                          size_t size, size_t n, FILE *f)
{
    size_t bytes;
    if (size == 0 || n == 0 || __builtin_mul_overflow(size, n, &bytes) || !f)
        return rd ? rd(buf, size, n, f) : wr(buf, size, n, f);
    int had_error = ferror(f);
    int saved = errno;
    size_t done = 0;
    for (int try_ = 0; try_ <= PH_BC_RETRIES; try_++) {
        ph_bc_prepare(buf + done, bytes - done, rd != NULL);
        errno = saved;
        done += rd ? rd(buf + done, 1, bytes - done, f)
                   : wr(buf + done, 1, bytes - done, f);
        if (done == bytes || had_error || errno != EFAULT || !ferror(f) ||
            try_ == PH_BC_RETRIES)
            break;
        clearerr(f);
    }
    return done / size;
}

PH_BC_EXPORT size_t fread(void *buf, size_t size, size_t n, FILE *f)
{
    PH_BC_REAL(fread, ph_bc_fread_fn);
    return ph_bc_stdio(fn_fread, NULL, buf, size, n, f);
}

PH_BC_EXPORT size_t fwrite(const void *buf, size_t size, size_t n, FILE *f)
{
    PH_BC_REAL(fwrite, ph_bc_fwrite_fn);
    return ph_bc_stdio(NULL, fn_fwrite, (char *)(uintptr_t)buf, size, n, f);
}

PH_BC_EXPORT size_t __fread_chk(void *buf, size_t buflen, size_t size, size_t n,
                                FILE *f)
{
    size_t bytes;
    if (__builtin_mul_overflow(size, n, &bytes) || bytes > buflen)
        __chk_fail();
    return fread(buf, size, n, f);
}

#endif
