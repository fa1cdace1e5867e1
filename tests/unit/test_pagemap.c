/*
 * test_pagemap.c -- os/pagemap.c on this process's own memory: the next
 * present page and the count of present pages of a 1 GiB reservation of
 * which a few pages, at known places, were touched.  Skipped (77) on a
 * kernel without PAGEMAP_SCAN (before Linux 6.7), after the argument
 * checks.
 */
#include "check.h"

#include "os/pagemap.h"

#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>

#define PG ((uintptr_t)4096)
#define SPAN_PAGES ((uintptr_t)262144) /* 1 GiB */

/* pages touched, ascending: first page, a lone page, a run of 3 across a
 * 2 MiB boundary, a page past the middle, the last page */
static const uintptr_t touched[] = {0, 777, 1023, 1024, 1025, 150000, SPAN_PAGES - 1};
#define NTOUCHED (sizeof touched / sizeof touched[0])

static void test_bad_args(void)
{
    ph_pagemap pm = PH_PAGEMAP_INIT;
    uintptr_t next;
    size_t n;
    CHECK_EQ(ph_pagemap_next_present(NULL, 0, PG, &next), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(ph_pagemap_next_present(&pm, PG, PG, &next), -1); /* empty */
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(ph_pagemap_next_present(&pm, 1, PG, &next), -1); /* unaligned */
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(ph_pagemap_count_present(&pm, 2 * PG, PG, 5, &n), -1); /* backwards */
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(ph_pagemap_count_present(&pm, 0, PG, 5, NULL), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(pm.fd, -1); /* nothing opened for a refused call */
    ph_pagemap_done(&pm);
}

int main(void)
{
    test_bad_args();
    char *p = mmap(NULL, SPAN_PAGES * PG, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    CHECK(p != MAP_FAILED);
    if (p == MAP_FAILED)
        return check_summary("test_pagemap");
    /* no 2 MiB pages: the counts below are of 4 KiB pages touched one by one */
    madvise(p, SPAN_PAGES * PG, MADV_NOHUGEPAGE);
    uintptr_t base = (uintptr_t)p, end = base + SPAN_PAGES * PG;
    ph_pagemap pm = PH_PAGEMAP_INIT;
    uintptr_t next = 0;
    /* nothing touched yet: the whole span is passed */
    int rc = ph_pagemap_next_present(&pm, base, end, &next);
    if (rc != 0 && (errno == ENOTTY || errno == EINVAL)) {
        ph_pagemap_done(&pm);
        munmap(p, SPAN_PAGES * PG);
        check_summary("test_pagemap");
        TEST_SKIP("no PAGEMAP_SCAN in this kernel");
    }
    CHECK_EQ(rc, 0);
    CHECK_EQ(next, end);
    CHECK(pm.fd >= 0);
    for (size_t k = 0; k < NTOUCHED; k++)
        p[touched[k] * PG] = 1;
    /* from every touched page and from the page after it */
    for (size_t k = 0; k < NTOUCHED; k++) {
        uintptr_t at = base + touched[k] * PG;
        CHECK_EQ(ph_pagemap_next_present(&pm, at, end, &next), 0);
        CHECK_EQ(next, at);
        if (touched[k] + 1 < SPAN_PAGES) {
            uintptr_t want = k + 1 < NTOUCHED ? base + touched[k + 1] * PG : end;
            CHECK_EQ(ph_pagemap_next_present(&pm, at + PG, end, &next), 0);
            CHECK_EQ(next, want);
        }
    }
    /* a range that stops short of the next touched page: its end */
    CHECK_EQ(ph_pagemap_next_present(&pm, base + 778 * PG, base + 1023 * PG, &next), 0);
    CHECK_EQ(next, base + 1023 * PG);
    /* counts: all, bounded by a limit, a part */
    size_t n = 0;
    CHECK_EQ(ph_pagemap_count_present(&pm, base, end, 1000, &n), 0);
    CHECK_EQ(n, NTOUCHED);
    CHECK_EQ(ph_pagemap_count_present(&pm, base, end, 2, &n), 0);
    CHECK(n >= 3 && n <= NTOUCHED); /* more than the limit: limit + 1 or so */
    CHECK_EQ(ph_pagemap_count_present(&pm, base + PG, base + 1025 * PG, 1000, &n), 0);
    CHECK_EQ(n, 3); /* 777, 1023, 1024 */
    /* a page given back is no longer present */
    madvise(p + 777 * PG, PG, MADV_DONTNEED);
    CHECK_EQ(ph_pagemap_next_present(&pm, base + PG, end, &next), 0);
    CHECK_EQ(next, base + 1023 * PG);
    CHECK_EQ(ph_pagemap_count_present(&pm, base, end, 1000, &n), 0);
    CHECK_EQ(n, NTOUCHED - 1);
    ph_pagemap_done(&pm);
    CHECK_EQ(pm.fd, -1);
    munmap(p, SPAN_PAGES * PG);
    return check_summary("test_pagemap");
}
