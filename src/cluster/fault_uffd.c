/*
 * fault_uffd.c -- catching accesses to shared pages with userfaultfd.
 *
 * The arena view (a MAP_SHARED mapping of the rank's memfd) is registered
 * in three modes at once (probed on Linux 6.18; the shmem modes exist
 * since 5.13 (minor) and 5.19 (write-protect)):
 *   MISSING  the page is a hole of the memfd: never fetched (or punched
 *            out when its allocation went);
 *   MINOR    the page is in the memfd but not mapped in the arena: a home
 *            page a remote get or diff brought in, a page we fetched, a
 *            cached copy an invalidation unmapped (MADV_DONTNEED);
 *   WP       a write to a page mapped write-protected.
 * The faulting thread waits in the kernel; the service thread reads the
 * message (non-blocking reads, it polls the descriptor), resolves the
 * fault through the window view and maps the page with UFFDIO_CONTINUE
 * (UFFDIO_CONTINUE_MODE_WP: write-protected, Linux >= 6.5; older kernels
 * get CONTINUE + UFFDIO_WRITEPROTECT + UFFDIO_WAKE), or lifts write
 * protection with UFFDIO_WRITEPROTECT; both wake the thread (a fault on a
 * page found mapped already gets an UFFDIO_WAKE: see u_map) -- or, while the service
 * thread resolves faults in its own loop (c->wake_defer), not: it wakes
 * the threads (UFFDIO_WAKE) once it has let the role go, so that a thread
 * posting a request right after its fault (a release after a write) runs
 * it itself instead of handing it over.  Because the kernel waits
 * instead of failing, system calls that read into or write from shared
 * memory (read(fd, shared, n)) just work -- except with a descriptor
 * opened with UFFD_USER_MODE_ONLY (an unprivileged process when
 * vm.unprivileged_userfaultfd is 0 and /dev/userfaultfd is not
 * accessible), where a fault taken inside the kernel fails with EFAULT as
 * in sigsegv mode (the mechanism is then named "userfaultfd-user"; the
 * calls syscalls.c wraps work there too).
 *
 * The mapping never splits: one VMA for the whole arena whatever the
 * homes, and the parts of the arena outside allocations are PROT_NONE
 * (real segfaults stay segfaults: the kernel delivers SIGSEGV before
 * userfaultfd is asked).
 */
#include "cluster/cluster.h"

#include "base/error.h"
#include "base/log.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef UFFDIO_CONTINUE_MODE_WP
#define UFFDIO_CONTINUE_MODE_WP ((__u64)1 << 1)
#endif

#define FEATURES (UFFD_FEATURE_MISSING_SHMEM | UFFD_FEATURE_MINOR_SHMEM | \
                  UFFD_FEATURE_WP_HUGETLBFS_SHMEM)
#define MODES (UFFDIO_REGISTER_MODE_MISSING | UFFDIO_REGISTER_MODE_MINOR | \
               UFFDIO_REGISTER_MODE_WP)


/* Open a descriptor: /dev/userfaultfd (access by file permission), the
 * system call (CAP_SYS_PTRACE or vm.unprivileged_userfaultfd=1), then the
 * system call for user-mode faults only.  *user_only tells which. */
static int uffd_open(int *user_only, char *why, size_t len)
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
    if (fd >= 0)
        return fd;
    int e1 = errno;
    fd = (int)syscall(SYS_userfaultfd,
                      O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
    if (fd >= 0) {
        *user_only = 1;
        return fd;
    }
    snprintf(why, len, "userfaultfd(2) failed (%s; /dev/userfaultfd not "
             "accessible)", strerror(e1));
    return -1;
}

static int uffd_api(int fd, char *why, size_t len)
{
    struct uffdio_api api = {.api = UFFD_API, .features = FEATURES};
    if (ioctl(fd, UFFDIO_API, &api) < 0) {
        snprintf(why, len, "UFFDIO_API with shmem missing/minor/"
                 "write-protect features failed (%s: Linux >= 5.19 is "
                 "needed)", strerror(errno));
        return -1;
    }
    return 0;
}

static int uffd_register(int fd, void *addr, size_t bytes, char *why,
                         size_t len)
{
    struct uffdio_register reg = {
        .range = {.start = (unsigned long)addr, .len = bytes},
        .mode = MODES};
    if (ioctl(fd, UFFDIO_REGISTER, &reg) < 0) {
        snprintf(why, len, "UFFDIO_REGISTER (missing + minor + "
                 "write-protect) of the arena failed: %s", strerror(errno));
        return -1;
    }
    uint64_t need = ((uint64_t)1 << _UFFDIO_CONTINUE) |
                    ((uint64_t)1 << _UFFDIO_WRITEPROTECT) |
                    ((uint64_t)1 << _UFFDIO_WAKE);
    if ((reg.ioctls & need) != need) {
        snprintf(why, len, "the kernel offers no UFFDIO_CONTINUE/"
                 "UFFDIO_WRITEPROTECT on shared memory");
        return -1;
    }
    return 0;
}

int ph_dsm_uffd_usable(char *why, size_t len, int *map_wp)
{
    *map_wp = 0;
    int user_only;
    int fd = uffd_open(&user_only, why, len);
    if (fd < 0)
        return 0;
    int ok = 0;
    int mfd = memfd_create("pagehome-probe", MFD_CLOEXEC);
    void *p = MAP_FAILED;
    if (mfd >= 0 && ftruncate(mfd, (off_t)PH_DSM_PAGE) == 0)
        p = mmap(NULL, PH_DSM_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    if (p == MAP_FAILED)
        snprintf(why, len, "memfd: %s", strerror(errno));
    else if (uffd_api(fd, why, len) == 0 &&
             uffd_register(fd, p, PH_DSM_PAGE, why, len) == 0)
        ok = 1;
    /* one-step write-protected mapping (UFFDIO_CONTINUE_MODE_WP, Linux >=
     * 6.5): map the probe page, present in the memfd, that way */
    if (ok && fallocate(mfd, 0, 0, (off_t)PH_DSM_PAGE) == 0) {
        struct uffdio_continue u = {
            .range = {.start = (unsigned long)p, .len = PH_DSM_PAGE},
            .mode = UFFDIO_CONTINUE_MODE_WP};
        *map_wp = ioctl(fd, UFFDIO_CONTINUE, &u) == 0;
    }
    if (p != MAP_FAILED)
        munmap(p, PH_DSM_PAGE);
    if (mfd >= 0)
        close(mfd);
    close(fd);
    return ok;
}

static int u_init(ph_dsm *c)
{
    char why[256] = "";
    int user_only = 0;
    int fd = uffd_open(&user_only, why, sizeof why);
    if (fd < 0)
        return ph_fail(ENOTSUP, "%s", why);
    if (uffd_api(fd, why, sizeof why) < 0 ||
        uffd_register(fd, c->arena, c->arena_bytes, why, sizeof why) < 0) {
        close(fd);
        return ph_fail(ENOTSUP, "%s", why);
    }
    c->uffd = fd;
    c->uffd_user_only = user_only;
    snprintf(c->fault_name, sizeof c->fault_name, "%s%s",
             user_only ? "userfaultfd-user" : "userfaultfd",
             c->uffd_map_wp ? "" : "-compat");
    return 0;
}

static void u_fini(ph_dsm *c)
{
    if (c->uffd >= 0) {
        struct uffdio_range r = {.start = (unsigned long)c->arena,
                                 .len = c->arena_bytes};
        ioctl(c->uffd, UFFDIO_UNREGISTER, &r);
        close(c->uffd);
        c->uffd = -1;
    }
    ph_dsm_vec_free(&c->wake_pages);
    free(c->gap_snap);
    c->gap_snap = NULL;
    c->gap_snap_pages = 0;
}

static int u_fd(ph_dsm *c)
{
    return c->uffd;
}

static int u_read(ph_dsm *c, ph_dsm_fault *ev, int max)
{
    struct uffd_msg msg[16];
    if (max > 16)
        max = 16;
    ssize_t n = read(c->uffd, msg, (size_t)max * sizeof msg[0]);
    if (n < 0) {
        if (errno == EAGAIN || errno == EINTR)
            return 0;
        return -1;
    }
    int k = 0;
    for (int i = 0; i < (int)(n / (ssize_t)sizeof msg[0]); i++) {
        if (msg[i].event != UFFD_EVENT_PAGEFAULT)
            continue;
        uint64_t a = msg[i].arg.pagefault.address;
        uint64_t f = msg[i].arg.pagefault.flags;
        ev[k].page = (size_t)((a - (uint64_t)(uintptr_t)c->arena) >>
                              PH_DSM_PAGE_SHIFT);
        ev[k].write = (f & UFFD_PAGEFAULT_FLAG_WRITE) != 0;
        ev[k].kind = (f & UFFD_PAGEFAULT_FLAG_WP)      ? PH_DSM_FK_WP
                     : (f & UFFD_PAGEFAULT_FLAG_MINOR) ? PH_DSM_FK_MINOR
                                                       : PH_DSM_FK_MISSING;
        ev[k].token = 0;
        ev[k].woken = 0;
        k++;
    }
    return k;
}

/* A resolution's wake-up: deferred (c->wake_defer) or done by the ioctl.
 * Returns the ioctl's DONTWAKE bit to set (the same bit for every
 * ioctl: UFFDIO_COPY_MODE_DONTWAKE, UFFDIO_CONTINUE_MODE_DONTWAKE,
 * UFFDIO_WRITEPROTECT_MODE_DONTWAKE are 1). */
static unsigned long long defer_wake(ph_dsm *c, size_t page, size_t n)
{
    if (!c->wake_defer)
        return 0;
    if (ph_dsm_vec_push(&c->wake_pages, page) < 0 ||
        ph_dsm_vec_push(&c->wake_pages, n) < 0)
        ph_dsm_fatal(c, "out of memory for deferred wake-ups");
    return 1;
}

static void wake_range(ph_dsm *c, size_t page, size_t n)
{
    struct uffdio_range r = {
        .start = (unsigned long)(c->arena + page * PH_DSM_PAGE),
        .len = n * PH_DSM_PAGE};
    if (ioctl(c->uffd, UFFDIO_WAKE, &r) < 0)
        ph_dsm_fatal(c, "UFFDIO_WAKE of arena page %zu failed: %s", page,
                  strerror(errno));
}

/* Wake the threads waiting on pages whose resolution did not wake them
 * (deferred like the rest when c->wake_defer). */
static void wake_after(ph_dsm *c, size_t page, size_t n)
{
    if (!defer_wake(c, page, n))
        wake_range(c, page, n);
}

static void u_flush_wakes(ph_dsm *c)
{
    for (size_t i = 0; i + 1 < c->wake_pages.n; i += 2)
        wake_range(c, (size_t)c->wake_pages.v[i],
                   (size_t)c->wake_pages.v[i + 1]);
    c->wake_pages.n = 0;
}

static int wp_range(ph_dsm *c, size_t page, size_t n, int rw, int dontwake)
{
    struct uffdio_writeprotect w = {
        .range = {.start = (unsigned long)(c->arena + page * PH_DSM_PAGE),
                  .len = n * PH_DSM_PAGE},
        .mode = (rw ? 0 : UFFDIO_WRITEPROTECT_MODE_WP) |
                (dontwake ? UFFDIO_WRITEPROTECT_MODE_DONTWAKE : 0)};
    for (int tries = 0; tries < 100; tries++) {
        if (ioctl(c->uffd, UFFDIO_WRITEPROTECT, &w) == 0)
            return 0;
        if (errno != EAGAIN && errno != EINTR)
            return -1;
    }
    return -1;
}

static int u_map(ph_dsm *c, size_t page, size_t n, int rw);

/* Lifting write protection (UFFDIO_WRITEPROTECT) leaves the PTEs of a
 * shared mapping read-only: the kernel makes them writable only at each
 * page's first store, a minor fault (0.5 us on this VM, Linux 6.18).  A
 * page mapped by UFFDIO_CONTINUE without write protection is writable at
 * once.  For a run, dropping its PTEs (the pages stay in the memfd) and
 * mapping it again costs less than the faults it saves: measured per
 * page, 0.39 us at 8 pages and 0.13 at 64, against 0.21 (the lift, one
 * page) + 0.5 (its store's fault); 1.5 us for a single page.  A thread
 * that reads such a page between the two steps takes a minor fault:
 * the mapping wakes it, and its message then finds the page mapped.
 * Not with a descriptor for user-mode faults only: there the kernel's own
 * access to the page in that moment (a write(2) from it on another
 * thread) would fail with EFAULT instead of waiting. */
#define REMAP_MIN_PAGES 8

static int u_protect(ph_dsm *c, size_t page, size_t n, int rw)
{
    if (rw && n >= REMAP_MIN_PAGES && !c->uffd_user_only &&
        madvise(c->arena + page * PH_DSM_PAGE, n * PH_DSM_PAGE,
                MADV_DONTNEED) == 0) {
        c->st.pages_remapped += n;
        return u_map(c, page, n, 1);
    }
    /* lifting protection wakes the threads waiting on the pages */
    int dontwake = rw ? (int)defer_wake(c, page, n) : 0;
    if (wp_range(c, page, n, rw, dontwake) < 0)
        ph_dsm_fatal(c, "UFFDIO_WRITEPROTECT of %zu page(s) at arena page %zu "
                  "failed: %s", n, page, strerror(errno));
    return 0;
}

/* THE GAP.  Without UFFDIO_CONTINUE_MODE_WP (Linux < 6.5) a read-only
 * mapping takes two steps: UFFDIO_CONTINUE maps the pages writable (and
 * wakes nobody), UFFDIO_WRITEPROTECT then protects them.  A thread of
 * this rank that touches a page between the two -- one that was not
 * waiting on it -- writes without a fault: no twin for a cached copy
 * (the write would never go home), no write notice for a home page.  So
 * the pages are copied before the first step and compared after the
 * second; a page that changed was written (nothing else writes a cached
 * copy; a home page may also have taken a remote diff meanwhile, and is
 * then noticed once more than needed), and ph_dsm_gap_written records it
 * with its content from before as the twin.  Costs a copy and a compare
 * per page mapped read-only, on those kernels only. */
static const unsigned char *gap_snapshot(ph_dsm *c, size_t page, size_t n)
{
    if (n > c->gap_snap_pages) {
        void *p = NULL;
        if (posix_memalign(&p, PH_DSM_PAGE, n * PH_DSM_PAGE) != 0)
            ph_dsm_fatal(c, "out of memory for a mapping's snapshot");
        free(c->gap_snap);
        c->gap_snap = p;
        c->gap_snap_pages = n;
    }
    memcpy(c->gap_snap, c->wview + page * PH_DSM_PAGE, n * PH_DSM_PAGE);
    return c->gap_snap;
}

static void gap_check(ph_dsm *c, size_t page, size_t n,
                      const unsigned char *before)
{
    for (size_t i = 0; i < n; i++)
        if (memcmp(before + i * PH_DSM_PAGE,
                   c->wview + (page + i) * PH_DSM_PAGE, PH_DSM_PAGE) != 0)
            ph_dsm_gap_written(c, page + i, before + i * PH_DSM_PAGE);
}

/* Map one run; -1 with errno EEXIST when part of it is already mapped
 * (*done = pages mapped before that point). */
static int continue_run(ph_dsm *c, size_t page, size_t n, int rw, size_t *done)
{
    *done = 0;
    int use_wp = !rw && c->uffd_map_wp;
    const unsigned char *before = !rw && !use_wp ? gap_snapshot(c, page, n)
                                                 : NULL;
    __u64 nowake = defer_wake(c, page, n) ? UFFDIO_CONTINUE_MODE_DONTWAKE : 0;
    struct uffdio_continue u = {
        .range = {.start = (unsigned long)(c->arena + page * PH_DSM_PAGE),
                  .len = n * PH_DSM_PAGE},
        .mode = use_wp ? UFFDIO_CONTINUE_MODE_WP | nowake
                       : (!rw ? UFFDIO_CONTINUE_MODE_DONTWAKE : nowake)};
    for (int tries = 0; tries < 100; tries++) {
        u.mapped = 0;
        if (ioctl(c->uffd, UFFDIO_CONTINUE, &u) == 0) {
            if (!rw && !use_wp) {
                /* protecting wakes nobody (the kernel wakes only when
                 * protection is lifted) */
                wp_range(c, page, n, 0, 0);
                gap_check(c, page, n, before);
                wake_after(c, page, n);
            }
            *done = n;
            return 0;
        }
        int e = errno;
        if (u.mapped > 0) {
            size_t m = (size_t)u.mapped / PH_DSM_PAGE;
            if (!rw && !use_wp) {
                wp_range(c, page, m, 0, 0);
                gap_check(c, page, m, before);
                wake_after(c, page, m);
                before += m * PH_DSM_PAGE;
            }
            page += m;
            n -= m;
            *done += m;
            u.range.start += m * PH_DSM_PAGE;
            u.range.len -= m * PH_DSM_PAGE;
            if (n == 0)
                return 0;
        }
        if (e == EINVAL && use_wp) {
            /* kernel without UFFDIO_CONTINUE_MODE_WP (< 6.5) */
            c->uffd_map_wp = 0;
            snprintf(c->fault_name, sizeof c->fault_name, "%s-compat",
                     c->uffd_user_only ? "userfaultfd-user" : "userfaultfd");
            use_wp = 0;
            before = gap_snapshot(c, page, n);
            u.mode = UFFDIO_CONTINUE_MODE_DONTWAKE;
            continue;
        }
        if (e == EAGAIN || e == EINTR)
            continue;
        errno = e;
        return -1;
    }
    errno = EAGAIN;
    return -1;
}

static int u_map(ph_dsm *c, size_t page, size_t n, int rw)
{
    while (n > 0) {
        size_t done = 0;
        if (continue_run(c, page, n, rw, &done) == 0)
            return 0;
        page += done;
        n -= done;
        if (errno != EEXIST)
            ph_dsm_fatal(c, "UFFDIO_CONTINUE of arena page %zu failed: %s", page,
                      strerror(errno));
        /* The first page is mapped already: set its protection, and wake
         * its waiters.  A thread may wait on a page that is mapped: the
         * kernel clears a PTE for a moment while it changes its
         * protection (ptep_modify_prot_start), and a read in that moment
         * is reported as a minor fault and waits -- until a wake-up,
         * which only we can send (lifting write protection sends one,
         * setting it does not). */
        u_protect(c, page, 1, rw);
        if (!rw)
            wake_after(c, page, 1);
        page++;
        n--;
    }
    return 0;
}

#define ZERO_PAGES 64
static __attribute__((aligned(4096))) const unsigned char
    zero_pages[ZERO_PAGES * 4096];

/* Fill up to n (<= ZERO_PAGES) holes from `page` on with zeroes and map
 * them, one UFFDIO_COPY; stops at the first page that is not a hole.
 * Returns the pages done (>= 1: the first is mapped in any case). */
static size_t u_map_zero(ph_dsm *c, size_t page, size_t n, int rw)
{
    if (n > ZERO_PAGES)
        n = ZERO_PAGES;
    struct uffdio_copy u = {
        .dst = (unsigned long)(c->arena + page * PH_DSM_PAGE),
        .src = (unsigned long)zero_pages,
        .len = n * PH_DSM_PAGE,
        .mode = (rw ? 0 : UFFDIO_COPY_MODE_WP) |
                (defer_wake(c, page, n) ? UFFDIO_COPY_MODE_DONTWAKE : 0)};
    for (int tries = 0; tries < 100; tries++) {
        u.copy = 0;
        if (ioctl(c->uffd, UFFDIO_COPY, &u) == 0)
            return n;
        if (u.copy >= (long long)PH_DSM_PAGE)
            return (size_t)u.copy / PH_DSM_PAGE;   /* stopped at a non-hole */
        if (errno == EEXIST || errno == ENOENT) {
            /* the first page appeared meanwhile (a remote diff or get): it
             * is in the memfd now, map it */
            u_map(c, page, 1, rw);
            return 1;
        }
        if (errno != EAGAIN && errno != EINTR)
            break;
    }
    ph_dsm_fatal(c, "UFFDIO_COPY of arena page %zu failed: %s", page,
              strerror(errno));
}

static int u_drop(ph_dsm *c, size_t page, size_t n)
{
    (void)c;
    (void)page;
    (void)n;
    return 0;           /* punching the page out of the memfd unmaps it */
}

static int u_complete(ph_dsm *c, ph_dsm_fault *ev)
{
    /* woken < 0: not in an allocation (freed meanwhile); wake the thread
     * anyway, its retried access then dies of SIGSEGV (PROT_NONE) instead
     * of sleeping forever */
    if (ev->woken > 0)
        return 0;
    if (!defer_wake(c, ev->page, 1))
        wake_range(c, ev->page, 1);
    ev->woken = 1;
    return 0;
}

static int u_enable(ph_dsm *c, size_t page, size_t n, int on)
{
    if (mprotect(c->arena + page * PH_DSM_PAGE, n * PH_DSM_PAGE,
                 on ? PROT_READ | PROT_WRITE : PROT_NONE) < 0)
        return ph_fail(errno, "mprotect of %zu arena pages: %s", n,
                       strerror(errno));
    return 0;
}

const ph_dsm_fault_ops ph_dsm_fault_uffd = {
    .name = "userfaultfd",
    .init = u_init,
    .fini = u_fini,
    .fd = u_fd,
    .read = u_read,
    .map = u_map,
    .map_zero = u_map_zero,
    .protect = u_protect,
    .drop = u_drop,
    .complete = u_complete,
    .flush_wakes = u_flush_wakes,
    .enable = u_enable,
};
