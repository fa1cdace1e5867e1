/*
 * page.h -- the two page sizes pagehome places and moves.
 *
 * Every address pagehome passes as a page is aligned down to PH_PAGE_4K;
 * PH_PAGE_2M is the huge page (THP or hugetlbfs) of x86-64 and arm64 with
 * 4 KiB base pages.  PH_PAGE_UNIT is how many 4 KiB pages one 2 MiB page
 * holds.
 */
#ifndef PH_BASE_PAGE_H
#define PH_BASE_PAGE_H

#include <stddef.h>

#define PH_PAGE_4K ((size_t)4096)
#define PH_PAGE_2M ((size_t)2 << 20)
#define PH_PAGE_UNIT (PH_PAGE_2M / PH_PAGE_4K)

#endif
