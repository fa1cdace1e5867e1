/*
 * fds.c -- the program's descriptor calls, in transparent mode: pagehome's
 * own descriptors stay open.
 *
 * A program may close descriptors it did not open (closefrom(3), a
 * close_range(2) or a close() loop over every number).  Closing the
 * userfaultfd sampler's descriptor while pages are watched would make
 * the kernel drop the watch and the watched pages read as zeros
 * (base/own_fd.h says why), so the calls that close or replace a
 * descriptor leave pagehome's kept ones (ph_own_fd_is) alone:
 *   close        of a kept descriptor: returns 0 and closes nothing (the
 *                program never had that number: it did not open it);
 *   close_range  closes the ranges between kept descriptors (the flags
 *                passed on: CLOSE_RANGE_CLOEXEC, CLOSE_RANGE_UNSHARE);
 *   closefrom    the same up to the last kept descriptor, the C library's
 *                closefrom above it;
 *   dup2, dup3   onto a kept descriptor: -1 with EBUSY (what Linux says
 *                when the target is being opened), and a warning once.
 *                Kept descriptors sit at high numbers (from 768) where
 *                programs seldom aim.
 * pagehome's short-lived descriptors (a /proc file read by the memory
 * manager) are registered too while open, and each of these calls keeps
 * out of the way of pagehome opening or closing one
 * (ph_own_fd_program_begin, _end): the program never closes one, nor
 * gets its number before pagehome is done with it.
 * Everything else goes to the next definition (the C library's), found
 * with dlsym(RTLD_NEXT) at the first call (ph_real_next); a raw syscall(SYS_close, ...)
 * is not seen (the sampler's service thread then warns, uffd_service.c).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "base/log.h"
#include "base/own_fd.h"
#include "preload/realsym.h"

#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PH_EXPORT __attribute__((visibility("default")))

typedef int (*close_fn)(int);
typedef int (*close_range_fn)(unsigned, unsigned, int);
typedef void (*closefrom_fn)(int);
typedef int (*dup2_fn)(int, int);
typedef int (*dup3_fn)(int, int, int);

static _Atomic(void *) r_close, r_close_range, r_closefrom, r_dup2, r_dup3;

/* Enter the program's side (ph_own_fd_program_begin) with the next
 * definition of `name` found first: its first lookup takes the dynamic
 * loader's lock, which must never be waited for while pagehome's
 * descriptor steps wait for this call. */
static void begin(_Atomic(void *) *cache, const char *name)
{
    (void)ph_real_next(cache, name);
    ph_own_fd_program_begin();
}

static int real_close(int fd)
{
    close_fn f = (close_fn)ph_real_next(&r_close, "close");
    return f ? f(fd) : (int)syscall(SYS_close, fd);
}

static int real_close_range(unsigned lo, unsigned hi, int flags)
{
    close_range_fn f = (close_range_fn)ph_real_next(&r_close_range, "close_range");
    return f ? f(lo, hi, flags) : (int)syscall(SYS_close_range, lo, hi, flags);
}

PH_EXPORT int close(int fd)
{
    begin(&r_close, "close");
    int rc = ph_own_fd_is(fd) ? 0 : real_close(fd);
    ph_own_fd_program_end();
    return rc;
}

/* close_range over [lo, hi] but the kept descriptors: the gaps between
 * them, in order.  0, or the first failure's -1 (errno kept). */
static int close_around(unsigned lo, unsigned hi, int flags)
{
    int own[PH_OWN_FD_MAX];
    int n = lo > (unsigned)INT_MAX ? 0
                                   : ph_own_fd_list((int)lo, hi > (unsigned)INT_MAX ? INT_MAX : (int)hi,
                                                    own, PH_OWN_FD_MAX);
    int rc = 0, err = 0;
    unsigned from = lo;
    for (int k = 0; k <= n; k++) {
        unsigned to;
        if (k < n) {
            if ((unsigned)own[k] == from) { /* no gap before it */
                from = (unsigned)own[k] + 1;
                continue;
            }
            to = (unsigned)own[k] - 1;
        } else {
            to = hi;
        }
        if (from <= to && real_close_range(from, to, flags) != 0 && rc == 0) {
            rc = -1;
            err = errno;
        }
        if (k < n)
            from = (unsigned)own[k] + 1;
    }
    if (rc)
        errno = err;
    return rc;
}

PH_EXPORT int close_range(unsigned lo, unsigned hi, int flags)
{
    begin(&r_close_range, "close_range");
    int rc = lo > hi ? real_close_range(lo, hi, flags) /* its EINVAL */
                     : close_around(lo, hi, flags);
    ph_own_fd_program_end();
    return rc;
}

PH_EXPORT void closefrom(int lowfd)
{
    int saved = errno;
    (void)ph_real_next(&r_close, "close");
    (void)ph_real_next(&r_close_range, "close_range");
    begin(&r_closefrom, "closefrom");
    int lo = lowfd < 0 ? 0 : lowfd;
    int own[PH_OWN_FD_MAX];
    int n = ph_own_fd_list(lo, INT_MAX, own, PH_OWN_FD_MAX);
    if (n > 0) {
        /* up to the last kept one: the gaps; a kernel without
         * close_range (before 5.9): one by one, as few as they are */
        int last = own[n - 1];
        if (close_around((unsigned)lo, (unsigned)last, 0) != 0)
            for (int fd = lo; fd < last; fd++)
                if (!ph_own_fd_is(fd))
                    (void)real_close(fd);
        lo = last + 1;
    }
    closefrom_fn f = (closefrom_fn)ph_real_next(&r_closefrom, "closefrom");
    if (f)
        f(lo);
    else
        (void)real_close_range((unsigned)lo, ~0u, 0);
    ph_own_fd_program_end();
    errno = saved;
}

static int refuse_onto(int newfd)
{
    static atomic_int told;
    if (!atomic_exchange(&told, 1))
        ph_warn("dup2/dup3 onto descriptor %d refused (EBUSY): pagehome keeps "
                "it open for its sampler", newfd);
    errno = EBUSY;
    return -1;
}

PH_EXPORT int dup2(int oldfd, int newfd)
{
    begin(&r_dup2, "dup2");
    int rc;
    dup2_fn f = (dup2_fn)ph_real_next(&r_dup2, "dup2");
    if (oldfd != newfd && ph_own_fd_is(newfd)) {
        rc = refuse_onto(newfd);
    } else if (!f) {
        errno = ENOSYS;
        rc = -1;
    } else {
        rc = f(oldfd, newfd);
    }
    int e = errno;
    ph_own_fd_program_end();
    errno = e;
    return rc;
}

PH_EXPORT int dup3(int oldfd, int newfd, int flags)
{
    begin(&r_dup3, "dup3");
    int rc;
    dup3_fn f = (dup3_fn)ph_real_next(&r_dup3, "dup3");
    if (oldfd != newfd && ph_own_fd_is(newfd)) {
        rc = refuse_onto(newfd);
    } else if (!f) {
        errno = ENOSYS;
        rc = -1;
    } else {
        rc = f(oldfd, newfd, flags);
    }
    int e = errno;
    ph_own_fd_program_end();
    errno = e;
    return rc;
}
