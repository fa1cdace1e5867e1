/*
 * pagemap.h -- where the next touched page of a range is, from the
 * kernel's page tables (the PAGEMAP_SCAN ioctl of /proc/self/pagemap,
 * Linux 6.7).
 *
 * mincore(2) answers a byte a page, so finding the touched pages of a
 * mostly untouched range costs time in proportion to its size (0.7 ns a
 * page here: 3 ms for a 16 GiB static array sized for the largest input
 * of which the run uses 64 MiB).  PAGEMAP_SCAN walks the page tables and
 * passes over an empty page table, or a higher level's empty entry, in
 * one step: the same answer in about 0.25 ms whatever the range's size.
 *
 * A scan is a transient descriptor: a descriptor of /proc/self/pagemap
 * names the address space it was opened in, so one kept across fork(2)
 * would describe the parent's.  Error convention: 0 / -1 with errno;
 * ENOTTY (or EINVAL) means the kernel has no PAGEMAP_SCAN, remembered so
 * that later calls fail at once.
 */
#ifndef PH_OS_PAGEMAP_H
#define PH_OS_PAGEMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct ph_pagemap {
    int fd; /* -1 until the first call needs it */
} ph_pagemap;

#define PH_PAGEMAP_INIT {-1}

/* The first page in [from, end) that is present (mapped to memory, not
 * swapped out), into *next; end when there is none.  from and end page
 * aligned, from < end.  Not async-signal-safe (it may open the file). */
int ph_pagemap_next_present(ph_pagemap *pm, uintptr_t from, uintptr_t end,
                            uintptr_t *next);
/* The number of present pages in [from, end), counted up to limit + 1
 * (so that a range with more than limit of them costs no more than
 * limit's walk), into *count.  Same alignment rules. */
int ph_pagemap_count_present(ph_pagemap *pm, uintptr_t from, uintptr_t end,
                             size_t limit, size_t *count);
/* Close the scan's descriptor (nothing when none was opened). */
void ph_pagemap_done(ph_pagemap *pm);

#endif
