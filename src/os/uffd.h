/*
 * uffd.h -- the kernel's userfaultfd(2), as pagehome uses it: opening a
 * descriptor (with the permission ladder), registering ranges, moving
 * pages (UFFDIO_MOVE), mapping the zero page, waking, and reading fault
 * messages.  The kernel-facing part only: what a fault *means* is the
 * caller's business (src/sample/ for access sampling; the cluster DSM's
 * fault service can share this file).
 *
 * Facts this wrapper relies on (probed on Linux 6.18; see README's
 * transparent-mode section):
 *  - A page fault in a range registered MISSING, taken by a user access
 *    *or by the kernel* (copy_to_user in read(2), getrandom(2), ...),
 *    makes the faulting thread wait until another thread resolves it; the
 *    kernel never fails the access -- unless the descriptor was opened
 *    with UFFD_USER_MODE_ONLY (ph_uffd.user_only), where kernel faults
 *    fail with EFAULT as with PROT_NONE.
 *  - UFFDIO_MOVE (Linux 6.8, UFFD_FEATURE_MOVE) moves the page table
 *    entries of private anonymous memory from one address to another
 *    within the process, atomically: the physical page stays the same (so
 *    its NUMA node does), its contents are not copied.  The destination
 *    must be registered with the same descriptor.  It fails with EBUSY on
 *    a page shared with another process (copy-on-write after fork) or
 *    pinned (O_DIRECT, RDMA in flight), with EEXIST when the destination
 *    is populated; `moved` says how far a partial call got.
 *    UFFDIO_MOVE also wants both ranges equally mlock(2)ed (EINVAL);
 *    only the destination need be registered, with the descriptor the
 *    ioctl is issued on.
 *  - UFFD_FEATURE_THREAD_ID gives the faulting thread's id.
 *  - Without UFFD_FEATURE_EVENT_FORK a fork() child's copies of the
 *    registered ranges are not registered.
 *
 * Error convention: 0 / -1 with errno (ph_fail message), like the rest.
 */
#ifndef PH_OS_UFFD_H
#define PH_OS_UFFD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct ph_uffd {
    int fd;           /* -1 when closed */
    int user_only;    /* opened with UFFD_USER_MODE_ONLY: kernel faults fail */
    uint64_t features;/* what the kernel granted */
} ph_uffd;

/* The features ph_uffd_open can ask for. */
#define PH_UFFD_THREAD_ID 0x1u
#define PH_UFFD_MOVE 0x2u
/* UFFD_FEATURE_SIGBUS: a missing fault in the descriptor's ranges is not
 * queued but fails at once -- SIGBUS for a user access, an error for
 * the kernel's (mlock(2)'s and MADV_POPULATE's population skips the
 * page, /proc/PID/mem reads fail there).  For memory nobody but the
 * owner's UFFDIO_MOVE may fill: a fault there has nobody to answer it. */
#define PH_UFFD_SIGBUS 0x4u

/* Open a non-blocking, close-on-exec descriptor with the given features
 * (PH_UFFD_*): /dev/userfaultfd (file permission), then userfaultfd(2)
 * (CAP_SYS_PTRACE or vm.unprivileged_userfaultfd=1), then -- only when
 * allow_user_only -- userfaultfd(2) with UFFD_USER_MODE_ONLY.  -1/errno
 * (EPERM: not permitted; ENOTSUP: a feature is missing) with the reason
 * in the message. */
int ph_uffd_open(ph_uffd *u, unsigned features, int allow_user_only);
void ph_uffd_close(ph_uffd *u);

/* Register / unregister [addr, addr+len) for missing-page faults. */
int ph_uffd_register_missing(const ph_uffd *u, void *addr, size_t len);
int ph_uffd_unregister(const ph_uffd *u, void *addr, size_t len);

/* UFFDIO_MOVE of len bytes from src to dst (both page aligned).  Returns
 * the bytes moved (>= 0) -- all of len, or fewer with errno set to why
 * the next page did not move (EBUSY, EEXIST, EAGAIN...).  Holes in src
 * are skipped when allow_holes.  dontwake: do not wake threads waiting
 * on dst. */
long ph_uffd_move(const ph_uffd *u, void *dst, const void *src, size_t len,
                  int allow_holes, int dontwake);
/* UFFDIO_COPY: fill the missing pages of [dst, dst+len) with a copy of
 * src (new pages, placed as a fault by the calling thread would place
 * them).  0, or -1/errno (EEXIST: dst populated meanwhile). */
int ph_uffd_copy(const ph_uffd *u, void *dst, const void *src, size_t len, int dontwake);
/* Map the zero page at [addr, addr+len) (missing pages only) and wake. */
int ph_uffd_zeropage(const ph_uffd *u, void *addr, size_t len);
/* Wake the threads waiting on [addr, addr+len). */
int ph_uffd_wake(const ph_uffd *u, void *addr, size_t len);

/* One fault read from the descriptor. */
typedef struct ph_uffd_fault {
    uintptr_t addr;   /* faulting address (page aligned by the kernel) */
    pid_t tid;        /* faulting thread (0 without PH_UFFD_THREAD_ID) */
    int write;        /* a write access */
} ph_uffd_fault;

/* Read up to n pending page faults (non-page-fault events are skipped).
 * Waits at most timeout_ms (-1: forever) for the first.  Returns the
 * count (0 on timeout), or -1/errno. */
int ph_uffd_read(const ph_uffd *u, ph_uffd_fault *out, int n, int timeout_ms);

#endif
