/*
 * hugetlb.c -- the hugetlbfs pools in sysfs (see hugetlb.h).
 */
#include "os/hugetlb.h"

#include "base/number.h"
#include "base/file.h"
#include "base/sort.h"
#include "topo/topo.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HT_SIZES_DIR "/sys/kernel/mm/hugepages"
#define HT_NODES_DIR "/sys/devices/system/node"
#define HT_THP_FILE "/sys/kernel/mm/transparent_hugepage/enabled"

static const char *root_of(const char *root)
{
    return root ? root : "";
}

/* One number from a sysfs file; -1 with errno (EINVAL: not a number). */
static int read_u64(const char *path, uint64_t *out)
{
    char buf[64];
    if (ph_read_text(path, buf, sizeof buf) < 0)
        return -1;
    size_t n = strlen(buf);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
        buf[--n] = '\0';
    if (ph_parse_u64(buf, out) < 0) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int ph_hugetlb_path(char *buf, size_t len, const char *root, int node, uint64_t kb,
                    const char *file)
{
    if (kb == 0) {
        int n = node < 0 ? snprintf(buf, len, "%s" HT_SIZES_DIR, root_of(root))
                         : snprintf(buf, len, "%s" HT_NODES_DIR "/node%d/hugepages",
                                    root_of(root), node);
        if (n < 0 || (size_t)n >= len) {
            errno = ENAMETOOLONG;
            return -1;
        }
        return 0;
    }
    int n = node < 0
                ? snprintf(buf, len, "%s" HT_SIZES_DIR "/hugepages-%" PRIu64 "kB%s%s",
                           root_of(root), kb, file ? "/" : "", file ? file : "")
                : snprintf(buf, len,
                           "%s" HT_NODES_DIR "/node%d/hugepages/hugepages-%" PRIu64 "kB%s%s",
                           root_of(root), node, kb, file ? "/" : "", file ? file : "");
    if (n < 0 || (size_t)n >= len) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

void ph_hugetlb_size_name(uint64_t kb, char *buf, size_t len)
{
    if (kb % (1024 * 1024) == 0)
        snprintf(buf, len, "%" PRIu64 "G", kb / (1024 * 1024));
    else if (kb % 1024 == 0)
        snprintf(buf, len, "%" PRIu64 "M", kb / 1024);
    else
        snprintf(buf, len, "%" PRIu64 "K", kb);
}

static int cmp_size(const void *a, const void *b)
{
    return ph_cmp_u64(&((const ph_hugetlb_size *)a)->kb, &((const ph_hugetlb_size *)b)->kb);
}

int ph_hugetlb_sizes(const char *root, ph_hugetlb_size *sizes, int max, int *nsizes)
{
    char dir[PATH_MAX];
    *nsizes = 0;
    if (snprintf(dir, sizeof dir, "%s" HT_SIZES_DIR, root_of(root)) >= (int)sizeof dir) {
        errno = ENAMETOOLONG;
        return -1;
    }
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *s = e->d_name;
        if (strncmp(s, "hugepages-", 10) != 0)
            continue;
        char num[32];
        size_t k = strlen(s + 10);
        if (k < 3 || k - 2 >= sizeof num || strcmp(s + 10 + k - 2, "kB") != 0)
            continue;
        memcpy(num, s + 10, k - 2);
        num[k - 2] = '\0';
        uint64_t kb;
        if (ph_parse_u64(num, &kb) < 0 || kb == 0 || n == max)
            continue;
        sizes[n].kb = kb;
        ph_hugetlb_size_name(kb, sizes[n].name, sizeof sizes[n].name);
        n++;
    }
    closedir(d);
    qsort(sizes, (size_t)n, sizeof *sizes, cmp_size);
    *nsizes = n;
    return 0;
}

int ph_hugetlb_nodes(const char *root, int **nodes, int *nnodes)
{
    char dir[PATH_MAX];
    *nodes = NULL;
    *nnodes = 0;
    if (snprintf(dir, sizeof dir, "%s" HT_NODES_DIR, root_of(root)) >= (int)sizeof dir) {
        errno = ENAMETOOLONG;
        return -1;
    }
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : -1;
    int n = 0, cap = 0;
    int *v = NULL;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        uint64_t id;
        if (strncmp(e->d_name, "node", 4) != 0 || ph_parse_u64(e->d_name + 4, &id) < 0 ||
            id > INT_MAX)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            int *nv = realloc(v, (size_t)cap * sizeof *v);
            if (!nv) {
                free(v);
                closedir(d);
                errno = ENOMEM;
                return -1;
            }
            v = nv;
        }
        v[n++] = (int)id;
    }
    closedir(d);
    if (n)
        qsort(v, (size_t)n, sizeof *v, ph_cmp_int);
    *nodes = v;
    *nnodes = n;
    return 0;
}

int ph_hugetlb_has_pool(const char *root, int node, uint64_t kb)
{
    char path[PATH_MAX];
    return ph_hugetlb_path(path, sizeof path, root, node, kb, NULL) == 0 && is_dir(path);
}

int ph_hugetlb_read_file(const char *root, int node, uint64_t kb, const char *file,
                         uint64_t *out)
{
    char path[PATH_MAX];
    if (ph_hugetlb_path(path, sizeof path, root, node, kb, file) < 0)
        return -1;
    return read_u64(path, out);
}

int ph_hugetlb_read(const char *root, int node, uint64_t kb, ph_hugetlb_counts *c,
                    char *bad, size_t badlen)
{
    static const char *const files[] = {"nr_hugepages", "free_hugepages",
                                        "surplus_hugepages", "resv_hugepages"};
    char path[PATH_MAX];
    memset(c, 0, sizeof *c);
    if (ph_hugetlb_path(path, sizeof path, root, node, kb, NULL) < 0)
        return -1;
    if (!is_dir(path))
        return 0;
    uint64_t *dst[] = {&c->total_pages, &c->free_pages, &c->surplus_pages,
                       &c->reserved_pages};
    for (int f = 0; f < (node < 0 ? 4 : 3); f++) {
        if (ph_hugetlb_path(path, sizeof path, root, node, kb, files[f]) < 0 ||
            read_u64(path, dst[f]) < 0) {
            int e = errno;
            if (bad)
                snprintf(bad, badlen, "%s", path);
            errno = e;
            return -1;
        }
    }
    c->present = 1;
    return 0;
}

int ph_hugetlb_write_total(const char *root, int node, uint64_t kb, uint64_t pages)
{
    char path[PATH_MAX], buf[32];
    if (ph_hugetlb_path(path, sizeof path, root, node, kb, "nr_hugepages") < 0)
        return -1;
    int n = snprintf(buf, sizeof buf, "%" PRIu64 "\n", pages);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t w;
    do
        w = write(fd, buf, (size_t)n);
    while (w < 0 && errno == EINTR);
    int e = w < 0 ? errno : EIO;
    int closed = close(fd);
    if (w != n) {
        errno = e;
        return -1;
    }
    return closed; /* sysfs reports nothing at close; a file on a full disk can */
}

void ph_hugetlb_thp_mode(const char *root, char *mode, size_t len)
{
    char path[PATH_MAX], buf[256];
    mode[0] = '\0';
    if (snprintf(path, sizeof path, "%s" HT_THP_FILE, root_of(root)) >= (int)sizeof path ||
        ph_read_text(path, buf, sizeof buf) < 0)
        return;
    char *l = strchr(buf, '['), *r = l ? strchr(l, ']') : NULL;
    if (l && r && (size_t)(r - l - 1) < len) {
        memcpy(mode, l + 1, (size_t)(r - l - 1));
        mode[r - l - 1] = '\0';
    }
}

void ph_hugetlb_topology_pools(struct ph_topology *t, const char *root)
{
    static const uint64_t sizes_kb[] = {2048, 1048576};
    for (int i = 0; i < t->nnodes; i++) {
        ph_node_info *nd = &t->nodes[i];
        nd->npools = 0;
        for (size_t s = 0; s < sizeof sizes_kb / sizeof sizes_kb[0]; s++) {
            ph_hugetlb_counts c;
            if (ph_hugetlb_read(root, nd->id, sizes_kb[s], &c, NULL, 0) < 0 || !c.present)
                continue;
            nd->pools[nd->npools++] = (ph_hugepool){.page_bytes = sizes_kb[s] * 1024,
                                                    .total = c.total_pages,
                                                    .free = c.free_pages,
                                                    .surplus = c.surplus_pages};
        }
    }
}
