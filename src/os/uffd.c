/*
 * uffd.c -- the userfaultfd(2) wrapper (see uffd.h for what it relies
 * on).  Definitions missing from older kernel headers (UFFDIO_MOVE came
 * with Linux 6.8) are given here; the kernel says at UFFDIO_API time what
 * it supports.
 */
#include "os/uffd.h"

#include "base/error.h"
#include "base/own_fd.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef UFFD_FEATURE_MOVE
#define UFFD_FEATURE_MOVE (1ULL << 16)
#endif
#ifndef UFFDIO_MOVE
struct uffdio_move {
    __u64 dst;
    __u64 src;
    __u64 len;
    __u64 mode;
    __s64 move;
};
#define _UFFDIO_MOVE (0x05)
#define UFFDIO_MOVE _IOWR(UFFDIO, _UFFDIO_MOVE, struct uffdio_move)
#define UFFDIO_MOVE_MODE_DONTWAKE ((__u64)1 << 0)
#define UFFDIO_MOVE_MODE_ALLOW_SRC_HOLES ((__u64)1 << 1)
#endif
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#ifndef USERFAULTFD_IOC_NEW
#define USERFAULTFD_IOC_NEW _IO(0xAA, 0x00)
#endif

static int open_fd(int *user_only, int allow_user_only)
{
    *user_only = 0;
    int dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
    if (dev >= 0) {
        int fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK);
        close(dev);
        if (fd >= 0)
            return fd;
    }
    int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
    if (fd >= 0 || !allow_user_only)
        return fd;
    int e = errno;
    fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
    if (fd >= 0)
        *user_only = 1;
    else
        errno = e;
    return fd;
}

int ph_uffd_open(ph_uffd *u, unsigned features, int allow_user_only)
{
    u->fd = -1;
    u->features = 0;
    int fd = open_fd(&u->user_only, allow_user_only);
    if (fd < 0)
        return ph_fail(errno == ENOSYS ? ENOSYS : EPERM,
                       "userfaultfd: not permitted (%s): needs root, read-write "
                       "access to /dev/userfaultfd or vm.unprivileged_userfaultfd=1",
                       strerror(errno));
    uint64_t want = 0;
    if (features & PH_UFFD_THREAD_ID)
        want |= UFFD_FEATURE_THREAD_ID;
    if (features & PH_UFFD_MOVE)
        want |= UFFD_FEATURE_MOVE;
    if (features & PH_UFFD_SIGBUS)
        want |= UFFD_FEATURE_SIGBUS;
    struct uffdio_api api = {.api = UFFD_API, .features = want};
    if (ioctl(fd, UFFDIO_API, &api) != 0) {
        int e = errno;
        close(fd);
        return ph_fail(e == EINVAL ? ENOTSUP : e,
                       "userfaultfd: the kernel lacks a feature asked for "
                       "(thread id, UFFDIO_MOVE: Linux 6.8): %s", strerror(e));
    }
    if ((api.features & want) != want) {
        close(fd);
        return ph_fail(ENOTSUP, "userfaultfd: features %#llx asked, %#llx granted",
                       (unsigned long long)want, (unsigned long long)api.features);
    }
    /* a descriptor the program must not close (base/own_fd.h): closed,
     * the kernel would unregister the watched ranges */
    u->fd = ph_own_fd_keep(fd);
    u->features = api.features;
    return 0;
}

void ph_uffd_close(ph_uffd *u)
{
    ph_own_fd_close(u->fd);
    u->fd = -1;
}

int ph_uffd_register_missing(const ph_uffd *u, void *addr, size_t len)
{
    struct uffdio_register r = {
        .range = {.start = (uintptr_t)addr, .len = len},
        .mode = UFFDIO_REGISTER_MODE_MISSING,
    };
    if (ioctl(u->fd, UFFDIO_REGISTER, &r) != 0)
        return ph_fail(errno, "userfaultfd: cannot register %p+%zu: %s", addr, len,
                       strerror(errno));
    return 0;
}

int ph_uffd_unregister(const ph_uffd *u, void *addr, size_t len)
{
    struct uffdio_range r = {.start = (uintptr_t)addr, .len = len};
    if (ioctl(u->fd, UFFDIO_UNREGISTER, &r) != 0)
        return ph_fail(errno, "userfaultfd: cannot unregister %p+%zu: %s", addr, len,
                       strerror(errno));
    return 0;
}

long ph_uffd_move(const ph_uffd *u, void *dst, const void *src, size_t len,
                  int allow_holes, int dontwake)
{
    struct uffdio_move m = {
        .dst = (uintptr_t)dst,
        .src = (uintptr_t)src,
        .len = len,
        .mode = (allow_holes ? UFFDIO_MOVE_MODE_ALLOW_SRC_HOLES : 0) |
                (dontwake ? UFFDIO_MOVE_MODE_DONTWAKE : 0),
    };
    if (ioctl(u->fd, UFFDIO_MOVE, &m) == 0)
        return (long)len;
    int e = errno;
    long moved = m.move > 0 ? (long)m.move : 0;
    errno = e;
    return moved;
}

int ph_uffd_copy(const ph_uffd *u, void *dst, const void *src, size_t len, int dontwake)
{
    struct uffdio_copy c = {
        .dst = (uintptr_t)dst,
        .src = (uintptr_t)src,
        .len = len,
        .mode = dontwake ? UFFDIO_COPY_MODE_DONTWAKE : 0,
    };
    return ioctl(u->fd, UFFDIO_COPY, &c) == 0 ? 0 : -1;
}

int ph_uffd_zeropage(const ph_uffd *u, void *addr, size_t len)
{
    struct uffdio_zeropage z = {.range = {.start = (uintptr_t)addr, .len = len}};
    if (ioctl(u->fd, UFFDIO_ZEROPAGE, &z) != 0 && errno != EEXIST)
        return -1;
    return 0;
}

int ph_uffd_wake(const ph_uffd *u, void *addr, size_t len)
{
    struct uffdio_range r = {.start = (uintptr_t)addr, .len = len};
    return ioctl(u->fd, UFFDIO_WAKE, &r) == 0 ? 0 : -1;
}

int ph_uffd_read(const ph_uffd *u, ph_uffd_fault *out, int n, int timeout_ms)
{
    struct uffd_msg msg[32];
    if (n > 32)
        n = 32;
    for (;;) {
        ssize_t r = read(u->fd, msg, (size_t)n * sizeof msg[0]);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && errno == EAGAIN) {
            struct pollfd p = {.fd = u->fd, .events = POLLIN};
            int pr = poll(&p, 1, timeout_ms);
            if (pr < 0 && errno == EINTR)
                continue;
            if (pr <= 0)
                return pr < 0 ? -1 : 0;
            if (p.revents & (POLLERR | POLLHUP | POLLNVAL)) {
                errno = EBADF;
                return -1;
            }
            continue;
        }
        if (r < 0)
            return -1;
        int k = 0;
        for (int i = 0; i < (int)(r / (ssize_t)sizeof msg[0]); i++) {
            if (msg[i].event != UFFD_EVENT_PAGEFAULT)
                continue;
            out[k].addr = (uintptr_t)msg[i].arg.pagefault.address;
            out[k].tid = (pid_t)msg[i].arg.pagefault.feat.ptid;
            out[k].write = (msg[i].arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WRITE) != 0;
            k++;
        }
        if (k > 0)
            return k;
    }
}
