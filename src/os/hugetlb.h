/*
 * hugetlb.h -- the hugetlbfs pools as the kernel shows them in sysfs: the
 * one place in pagehome that knows those files (src/os/ only below the
 * tool; callers above the OS layer ask the OS table, ph_os_huge_pool).
 *
 *   ROOT/sys/kernel/mm/hugepages/hugepages-<kB>kB/           the sizes the
 *       {nr,free,surplus,resv}_hugepages                     kernel offers;
 *                                                            global counts
 *   ROOT/sys/devices/system/node/nodeN/hugepages/hugepages-<kB>kB/
 *       {nr,free,surplus}_hugepages                          per node (reserved
 *                                                            pages are counted
 *                                                            only globally)
 *   ROOT/sys/kernel/mm/transparent_hugepage/enabled          THP mode "[madvise]"
 *
 * Every function takes ROOT, put in front of each path: "" (or NULL) is
 * the real /sys; tests build a fake tree in a temporary directory
 * (tests/cli/test_hugepages.sh through the tool's PAGEHOME_SYSFS_ROOT,
 * tests/unit/test_hugetlb.c directly).  Every file holds one decimal
 * number; anything else in it is an error (EINVAL), not a zero.
 *
 * Changing a pool is one write of nr_hugepages: the kernel accepts any
 * number and allocates what it can, so the only truth is what the files
 * say afterwards (read them again).
 */
#ifndef PH_OS_HUGETLB_H
#define PH_OS_HUGETLB_H

#include <stddef.h>
#include <stdint.h>

struct ph_topology;

#define PH_HUGETLB_MAX_SIZES 16

typedef struct ph_hugetlb_size {
    uint64_t kb;          /* page size in KiB, from the directory name */
    char name[24];        /* "2M", "1G", "64K" */
} ph_hugetlb_size;

typedef struct ph_hugetlb_counts {
    int present;          /* the pool's directory exists and every file parsed */
    uint64_t total_pages, free_pages, surplus_pages;
    uint64_t reserved_pages; /* global pools only (node < 0) */
} ph_hugetlb_counts;

/* ROOT + the directory of a pool (node < 0: the global one), or + a file
 * in it when file is non-NULL; kb 0: the directory of all sizes (the
 * global one, or the node's).  0, or -1/ENAMETOOLONG. */
int ph_hugetlb_path(char *buf, size_t len, const char *root, int node, uint64_t kb,
                    const char *file);
/* "2M", "1G", "64K" for a size in KiB. */
void ph_hugetlb_size_name(uint64_t kb, char *buf, size_t len);
/* The page sizes the kernel offers, smallest first (at most max).  0, or
 * -1 with errno (ENOENT: no hugetlbfs support). */
int ph_hugetlb_sizes(const char *root, ph_hugetlb_size *sizes, int max, int *nsizes);
/* The NUMA nodes of sysfs, ascending (malloc'd, free it).  0 nodes when
 * the kernel has no node directory (no CONFIG_NUMA).  -1 with errno. */
int ph_hugetlb_nodes(const char *root, int **nodes, int *nnodes);
/* Counts of one pool (node < 0: global, with reserved).  A missing pool
 * (a memoryless node has none) is present = 0 and not an error; -1 with
 * errno when a file exists but cannot be read or holds no number (its
 * path in bad, when bad is non-NULL). */
int ph_hugetlb_read(const char *root, int node, uint64_t kb, ph_hugetlb_counts *c,
                    char *bad, size_t badlen);
/* 1 when the pool's directory exists (a memoryless node has none). */
int ph_hugetlb_has_pool(const char *root, int node, uint64_t kb);
/* One number of a pool file (e.g. "nr_hugepages").  -1 with errno. */
int ph_hugetlb_read_file(const char *root, int node, uint64_t kb, const char *file,
                         uint64_t *out);
/* Write nr_hugepages of a node's pool (node >= 0) or of the global one.
 * 0, or -1 with errno (EACCES/EPERM: not root; EROFS: read-only sysfs). */
int ph_hugetlb_write_total(const char *root, int node, uint64_t kb, uint64_t pages);
/* The bracketed word of the THP "enabled" file; "" when there is none. */
void ph_hugetlb_thp_mode(const char *root, char *mode, size_t len);
/* Fill the pool snapshot (2 MiB and 1 GiB pools) of every node of t from
 * ROOT's sysfs: the real machine's topology (hwloc knows no pools).  Nodes
 * without a pool of a size keep none. */
void ph_hugetlb_topology_pools(struct ph_topology *t, const char *root);

#endif
