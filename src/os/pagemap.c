/*
 * pagemap.c -- the next present page of a range by PAGEMAP_SCAN (see
 * pagemap.h).  The ioctl's definitions are given here for kernel headers
 * older than Linux 6.7.
 */
#include "os/pagemap.h"
#include "base/own_fd.h"

#include "base/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define PM_PAGE_IS_PRESENT (1ULL << 3)

typedef struct pm_region {
    uint64_t start, end, categories;
} pm_region;

typedef struct pm_scan_arg {
    uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
    uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
} pm_scan_arg;

#define PM_PAGEMAP_SCAN _IOWR('f', 16, pm_scan_arg)

/* 1 once the kernel said it has no PAGEMAP_SCAN */
static atomic_int unsupported;

/* Open the descriptor when needed; -1 when the kernel has no scan. */
static int scan_ready(ph_pagemap *pm)
{
    if (atomic_load_explicit(&unsupported, memory_order_relaxed))
        return ph_fail(ENOTTY, "pagemap: no PAGEMAP_SCAN in this kernel");
    if (pm->fd < 0) {
        pm->fd = ph_own_fd_open("/proc/self/pagemap", O_RDONLY, 0);
        if (pm->fd < 0)
            return ph_fail(errno, "pagemap: cannot open /proc/self/pagemap");
    }
    return 0;
}

/* The present pages of [*at, end), up to max_pages of them, as regions
 * into vec (at most vec_len): their number, 0 when the walk found none
 * before it stopped; *at becomes where the walk stopped (end when it went
 * through).  -1/errno. */
static long scan(ph_pagemap *pm, uint64_t *at, uint64_t end, pm_region *vec,
                 size_t vec_len, uint64_t max_pages)
{
    for (;;) {
        pm_scan_arg a = {.size = sizeof a,
                         .start = *at,
                         .end = end,
                         .vec = (uint64_t)(uintptr_t)vec,
                         .vec_len = vec_len,
                         .max_pages = max_pages,
                         .category_mask = PM_PAGE_IS_PRESENT,
                         .return_mask = PM_PAGE_IS_PRESENT};
        long n = ioctl(pm->fd, PM_PAGEMAP_SCAN, &a);
        if (n < 0) {
            int err = errno;
            if (err == EINTR)
                continue;
            if (err == ENOTTY || err == EINVAL)
                atomic_store_explicit(&unsupported, 1, memory_order_relaxed);
            return ph_fail(err, "pagemap: PAGEMAP_SCAN failed");
        }
        /* no progress at all: say the walk went through (nothing more to
         * learn here) rather than loop */
        *at = a.walk_end > *at ? a.walk_end : end;
        return n;
    }
}

int ph_pagemap_next_present(ph_pagemap *pm, uintptr_t from, uintptr_t end,
                            uintptr_t *next)
{
    if (!pm || !next || from >= end || ((from | end) & 4095))
        return ph_fail(EINVAL, "pagemap: bad range");
    if (scan_ready(pm) != 0)
        return -1;
    /* the walk may stop early without having found a page (the kernel's
     * own bound on one call) */
    for (uint64_t at = from; at < end;) {
        pm_region r;
        uint64_t was = at;
        long n = scan(pm, &at, end, &r, 1, 1);
        if (n < 0)
            return -1;
        if (n > 0) {
            *next = (uintptr_t)(r.start > was ? r.start : was);
            return 0;
        }
    }
    *next = end;
    return 0;
}

int ph_pagemap_count_present(ph_pagemap *pm, uintptr_t from, uintptr_t end,
                             size_t limit, size_t *count)
{
    if (!pm || !count || from >= end || ((from | end) & 4095))
        return ph_fail(EINVAL, "pagemap: bad range");
    if (scan_ready(pm) != 0)
        return -1;
    enum { VEC = 64 };
    pm_region vec[VEC];
    size_t have = 0;
    for (uint64_t at = from; at < end && have <= limit;) {
        long n = scan(pm, &at, end, vec, VEC, (uint64_t)(limit + 1 - have));
        if (n < 0)
            return -1;
        for (long k = 0; k < n; k++)
            have += (size_t)((vec[k].end - vec[k].start) / 4096);
    }
    *count = have;
    return 0;
}

void ph_pagemap_done(ph_pagemap *pm)
{
    if (pm && pm->fd >= 0) {
        ph_own_fd_close(pm->fd);
        pm->fd = -1;
    }
}
