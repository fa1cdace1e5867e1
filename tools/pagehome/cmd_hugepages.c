/*
 * cmd_hugepages.c -- `pagehome hugepages`: the hugetlbfs pools of every
 * NUMA node, and changing one node's pool.
 *
 *   pagehome hugepages [--json] [--node N] [--size S]
 *   pagehome hugepages --node N (--reserve C | --release C | --set C) [--size S] [--json]
 *
 * The numbers are the kernel's sysfs files, read and written through
 * os/hugetlb.h (the one place that knows them).
 *
 * Changing a pool is one write of the node's nr_hugepages followed by a
 * read-back: the kernel accepts any number and allocates what it can
 * (each page needs a free, physically contiguous, aligned block on that
 * node), so the only truth is what the file says afterwards.  The order is
 * fixed and minimal so that nothing is changed before every check has
 * passed: validate the arguments, read nr_hugepages once, check the
 * request against it, write once, read nr/free/surplus once.  Exit status:
 * 0 when the pool reached the requested size, 3 when the kernel granted
 * only part of it (a grow that found too little free memory, or a shrink
 * of pages still in use, which the kernel keeps as surplus), 1 on a
 * failure, 2 on a usage error.
 *
 * PAGEHOME_SYSFS_ROOT (default "": the real /sys) is put in front of every
 * path above.  It is a testing aid: tests/cli/test_hugepages.sh builds a
 * fake tree and checks the output, the errors and the exit codes on a
 * machine where the real pools cannot be changed.
 */
#include "cli.h"

#include "base/number.h"
#include "base/json_write.h"
#include "os/hugetlb.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define HP_MAX_SIZES PH_HUGETLB_MAX_SIZES

typedef ph_hugetlb_size hp_size;
typedef ph_hugetlb_counts hp_counts;

typedef enum hp_action { HP_SHOW, HP_RESERVE, HP_RELEASE, HP_SET } hp_action;

static const char *sysfs_root(void)
{
    const char *r = getenv("PAGEHOME_SYSFS_ROOT");
    return r ? r : "";
}

static void hugepages_usage(FILE *out)
{
    fprintf(out,
"usage: pagehome hugepages [--json] [--node N] [--size S]\n"
"       pagehome hugepages --node N --reserve COUNT [--size S] [--json]\n"
"       pagehome hugepages --node N --release COUNT [--size S] [--json]\n"
"       pagehome hugepages --node N --set COUNT [--size S] [--json]\n"
"\n"
"Shows the hugetlbfs pools of every NUMA node (total, free and surplus pages\n"
"per page size; reserved pages are counted by the kernel only globally, in\n"
"the 'all' rows) and the transparent huge page mode, or changes one node's pool.\n"
"\n"
"  --json           print JSON instead of the table\n"
"  --node N         the node to change (or the only one to show)\n"
"  --size S         page size, e.g. 2M or 1G (default 2M; the kernel's sizes only)\n"
"  --reserve COUNT  ask the kernel for COUNT more pages on node N\n"
"  --release COUNT  give COUNT of node N's pages back (at most what it has)\n"
"  --set COUNT      ask for exactly COUNT pages on node N\n"
"\n"
"A change writes the node's nr_hugepages in sysfs (root only), reads it back\n"
"and reports what the kernel actually granted: it allocates only what it\n"
"finds free and contiguous on that node, and keeps pages that are in use.\n"
"\n"
"With --json a change prints one object: node, size, action, asked, before,\n"
"target, total (after), free, surplus, granted (pages added, or released),\n"
"complete (the pool reached target).\n"
"\n"
"exit status: 0 the pool has the requested size; 3 the kernel granted only\n"
"part of the request (the report says how much); 1 failure (no hugetlbfs,\n"
"not root, ...); 2 usage error (unknown node or size, bad count, a release\n"
"of more pages than the node has).  Nothing is written when a check fails.\n"
"\n"
"testing aid: PAGEHOME_SYSFS_ROOT=DIR reads and writes DIR/sys/... instead\n"
"of /sys/... (a fake sysfs tree; default: the real one).\n");
}

/* ---- argument parsing ---- */

/* "2M", "2m", "2MB", "2MiB", "1G", "2048K", "2048kB" -> KiB.  -1 if not a size. */
static int parse_size_kb(const char *s, uint64_t *kb)
{
    char num[32];
    size_t k = 0;
    while (s[k] >= '0' && s[k] <= '9' && k + 1 < sizeof num) {
        num[k] = s[k];
        k++;
    }
    num[k] = '\0';
    uint64_t v;
    if (k == 0 || ph_parse_u64(num, &v) < 0 || v == 0)
        return -1;
    const char *u = s + k;
    uint64_t mult;
    if (*u == 'k' || *u == 'K')
        mult = 1;
    else if (*u == 'm' || *u == 'M')
        mult = 1024;
    else if (*u == 'g' || *u == 'G')
        mult = 1024 * 1024;
    else
        return -1;
    u++;
    if (*u && strcasecmp(u, "B") != 0 && strcasecmp(u, "iB") != 0)
        return -1;
    if (v > UINT64_MAX / mult)
        return -1;
    *kb = v * mult;
    return 0;
}

/* ---- output ---- */

static void print_table(const hp_size *sizes, int nsizes, const int *nodes, int nnodes,
                        int only_node, int only_size, const hp_counts *node_c,
                        const hp_counts *glob_c, const char *thp)
{
    printf("huge page sizes:        ");
    for (int s = 0; s < nsizes; s++)
        printf("%s%s", s ? " " : "", sizes[s].name);
    printf("\ntransparent huge pages: %s\n\n", thp[0] ? thp : "not available");
    printf("%-5s %-5s %10s %10s %10s %10s\n", "node", "size", "total", "free", "surplus",
           "reserved");
    for (int i = 0; i < nnodes; i++) {
        if (only_node >= 0 && nodes[i] != only_node)
            continue;
        for (int s = 0; s < nsizes; s++) {
            const hp_counts *c = &node_c[i * nsizes + s];
            if (only_size >= 0 && s != only_size)
                continue;
            if (c->present)
                printf("%-5d %-5s %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10s\n",
                       nodes[i], sizes[s].name, c->total_pages, c->free_pages,
                       c->surplus_pages, "-");
            else
                printf("%-5d %-5s %10s %10s %10s %10s\n", nodes[i], sizes[s].name, "-", "-",
                       "-", "-");
        }
    }
    for (int s = 0; s < nsizes; s++) {
        const hp_counts *c = &glob_c[s];
        if (only_size >= 0 && s != only_size)
            continue;
        printf("%-5s %-5s %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 "\n", "all",
               sizes[s].name, c->total_pages, c->free_pages, c->surplus_pages,
               c->reserved_pages);
    }
    if (nnodes == 0)
        printf("\n(no NUMA nodes in sysfs: this kernel has no per-node pools)\n");
}

static void jw_pool(ph_jw *w, const hp_size *sz, const hp_counts *c, int with_reserved)
{
    ph_jw_object(w, 1);
    ph_jw_key(w, "size");
    ph_jw_string(w, sz->name);
    ph_jw_key(w, "page_bytes");
    ph_jw_uint(w, sz->kb * 1024);
    ph_jw_key(w, "total");
    ph_jw_uint(w, c->total_pages);
    ph_jw_key(w, "free");
    ph_jw_uint(w, c->free_pages);
    ph_jw_key(w, "surplus");
    ph_jw_uint(w, c->surplus_pages);
    if (with_reserved) {
        ph_jw_key(w, "reserved");
        ph_jw_uint(w, c->reserved_pages);
    }
    ph_jw_end(w);
}

static int print_json(const hp_size *sizes, int nsizes, const int *nodes, int nnodes,
                      int only_node, int only_size, const hp_counts *node_c,
                      const hp_counts *glob_c, const char *thp)
{
    ph_jw w;
    ph_jw_init(&w, 1);
    ph_jw_object(&w, 0);
    ph_jw_key(&w, "thp");
    if (thp[0])
        ph_jw_string(&w, thp);
    else
        ph_jw_null(&w);
    ph_jw_key(&w, "sizes");
    ph_jw_array(&w, 1);
    for (int s = 0; s < nsizes; s++)
        ph_jw_string(&w, sizes[s].name);
    ph_jw_end(&w);
    ph_jw_key(&w, "nodes");
    ph_jw_array(&w, 0);
    for (int i = 0; i < nnodes; i++) {
        if (only_node >= 0 && nodes[i] != only_node)
            continue;
        ph_jw_object(&w, 0);
        ph_jw_key(&w, "node");
        ph_jw_int(&w, nodes[i]);
        ph_jw_key(&w, "pools");
        ph_jw_array(&w, 0);
        for (int s = 0; s < nsizes; s++)
            if (node_c[i * nsizes + s].present && (only_size < 0 || s == only_size))
                jw_pool(&w, &sizes[s], &node_c[i * nsizes + s], 0);
        ph_jw_end(&w);
        ph_jw_end(&w);
    }
    ph_jw_end(&w);
    ph_jw_key(&w, "global");
    ph_jw_array(&w, 0);
    for (int s = 0; s < nsizes; s++)
        if (only_size < 0 || s == only_size)
            jw_pool(&w, &sizes[s], &glob_c[s], 1);
    ph_jw_end(&w);
    ph_jw_end(&w);
    fflush(stdout);
    int rc = ph_jw_write_fd(&w, STDOUT_FILENO);
    ph_jw_free(&w);
    return rc < 0 ? cli_error(1, "hugepages --json: cannot write the output") : 0;
}

static int show(const hp_size *sizes, int nsizes, const int *nodes, int nnodes,
                int only_node, int only_size, int json)
{
    hp_counts *node_c = calloc((size_t)(nnodes ? nnodes : 1) * (size_t)nsizes + 1,
                               sizeof *node_c);
    hp_counts glob_c[HP_MAX_SIZES];
    char bad[PATH_MAX], thp[32];
    if (!node_c)
        return cli_error(1, "hugepages: out of memory");
    for (int i = 0; i < nnodes; i++) {
        if (only_node >= 0 && nodes[i] != only_node)
            continue;
        for (int s = 0; s < nsizes; s++)
            if (ph_hugetlb_read(sysfs_root(), nodes[i], sizes[s].kb, &node_c[i * nsizes + s],
                                bad, sizeof bad) < 0) {
                int e = errno;
                free(node_c);
                return cli_error(1, "hugepages: cannot read %s: %s", bad, strerror(e));
            }
    }
    for (int s = 0; s < nsizes; s++)
        if (ph_hugetlb_read(sysfs_root(), -1, sizes[s].kb, &glob_c[s], bad, sizeof bad) < 0) {
            int e = errno;
            free(node_c);
            return cli_error(1, "hugepages: cannot read %s: %s", bad, strerror(e));
        }
    ph_hugetlb_thp_mode(sysfs_root(), thp, sizeof thp);
    int rc = 0;
    if (json)
        rc = print_json(sizes, nsizes, nodes, nnodes, only_node, only_size, node_c, glob_c,
                        thp);
    else
        print_table(sizes, nsizes, nodes, nnodes, only_node, only_size, node_c, glob_c, thp);
    free(node_c);
    return rc;
}

/* ---- changing a pool ---- */

static int write_error(const char *path, int e)
{
    if (e == EACCES || e == EPERM)
        return cli_error(1, "hugepages: writing %s needs root (%s)", path, strerror(e));
    if (e == EROFS)
        return cli_error(1, "hugepages: %s is on a read-only file system (sysfs mounted "
                            "read-only, as in most containers)", path);
    return cli_error(1, "hugepages: writing %s: %s", path, strerror(e));
}

static int change(hp_action act, int node, const hp_size *sz, uint64_t count, int json)
{
    const char *root = sysfs_root();
    char dir[PATH_MAX], nr_path[PATH_MAX];
    if (ph_hugetlb_path(dir, sizeof dir, root, node, sz->kb, NULL) < 0 ||
        ph_hugetlb_path(nr_path, sizeof nr_path, root, node, sz->kb, "nr_hugepages") < 0)
        return cli_error(1, "hugepages: path too long (PAGEHOME_SYSFS_ROOT)");
    if (!ph_hugetlb_has_pool(root, node, sz->kb))
        return cli_error(1, "hugepages: node %d has no %s pool (no %s; a node without "
                            "memory has none)", node, sz->name, dir);

    uint64_t before;
    if (ph_hugetlb_read_file(root, node, sz->kb, "nr_hugepages", &before) < 0)
        return cli_error(1, "hugepages: cannot read %s: %s", nr_path, strerror(errno));
    uint64_t target;
    switch (act) {
    case HP_RESERVE:
        if (count > (uint64_t)INT64_MAX - before)
            return cli_error(EXIT_USAGE, "hugepages: --reserve %" PRIu64 " is too many",
                             count);
        target = before + count;
        break;
    case HP_RELEASE:
        if (count > before)
            return cli_error(EXIT_USAGE,
                             "hugepages: node %d has %" PRIu64 " %s page%s; cannot release %"
                             PRIu64, node, before, sz->name, before == 1 ? "" : "s", count);
        target = before - count;
        break;
    default:
        target = count;
        break;
    }
    if (target != before && ph_hugetlb_write_total(root, node, sz->kb, target) < 0)
        return write_error(nr_path, errno);

    /* What the kernel made of it. */
    uint64_t after;
    if (ph_hugetlb_read_file(root, node, sz->kb, "nr_hugepages", &after) < 0)
        return cli_error(1, "hugepages: wrote %s but cannot read it back: %s", nr_path,
                         strerror(errno));
    uint64_t free_pages, surplus_pages;
    static const char *const others[] = {"free_hugepages", "surplus_hugepages"};
    uint64_t *dst[] = {&free_pages, &surplus_pages};
    for (int f = 0; f < 2; f++)
        if (ph_hugetlb_read_file(root, node, sz->kb, others[f], dst[f]) < 0) {
            int e = errno;
            char path[PATH_MAX];
            ph_hugetlb_path(path, sizeof path, root, node, sz->kb, others[f]);
            return cli_error(1, "hugepages: cannot read %s: %s", path, strerror(e));
        }

    int complete;
    int64_t delta = (int64_t)after - (int64_t)before;
    const char *verb = act == HP_RESERVE ? "reserve" : act == HP_RELEASE ? "release" : "set";
    if (act == HP_RESERVE)
        complete = after >= target;
    else if (act == HP_RELEASE)
        complete = after <= target;
    else
        complete = after == target;

    if (json) {
        ph_jw w;
        ph_jw_init(&w, 1);
        ph_jw_object(&w, 0);
        ph_jw_key(&w, "node");
        ph_jw_int(&w, node);
        ph_jw_key(&w, "size");
        ph_jw_string(&w, sz->name);
        ph_jw_key(&w, "action");
        ph_jw_string(&w, verb);
        ph_jw_key(&w, "asked");
        ph_jw_uint(&w, count);
        ph_jw_key(&w, "before");
        ph_jw_uint(&w, before);
        ph_jw_key(&w, "target");
        ph_jw_uint(&w, target);
        ph_jw_key(&w, "total");
        ph_jw_uint(&w, after);
        ph_jw_key(&w, "free");
        ph_jw_uint(&w, free_pages);
        ph_jw_key(&w, "surplus");
        ph_jw_uint(&w, surplus_pages);
        ph_jw_key(&w, "granted");
        ph_jw_int(&w, act == HP_RELEASE ? -delta : delta);
        ph_jw_key(&w, "complete");
        ph_jw_bool(&w, complete);
        ph_jw_end(&w);
        fflush(stdout);
        int rc = ph_jw_write_fd(&w, STDOUT_FILENO);
        ph_jw_free(&w);
        if (rc < 0)
            return cli_error(1, "hugepages --json: cannot write the output");
    } else {
        char now[128];
        if (surplus_pages)
            snprintf(now, sizeof now, "now %" PRIu64 " total, %" PRIu64 " free, %" PRIu64
                     " surplus", after, free_pages, surplus_pages);
        else
            snprintf(now, sizeof now, "now %" PRIu64 " total, %" PRIu64 " free", after,
                     free_pages);
        if (act == HP_RESERVE)
            printf("node %d: asked %" PRIu64 " more %s page%s, got %" PRId64 " (%s)\n", node,
                   count, sz->name, count == 1 ? "" : "s", delta, now);
        else if (act == HP_RELEASE)
            printf("node %d: asked to release %" PRIu64 " %s page%s, released %" PRId64
                   " (%s)\n", node, count, sz->name, count == 1 ? "" : "s", -delta, now);
        else
            printf("node %d: asked for %" PRIu64 " %s page%s in all (had %" PRIu64 "), %s\n",
                   node, count, sz->name, count == 1 ? "" : "s", before, now);
        fflush(stdout); /* the report, then why it is partial */
        if (!complete)
            fprintf(stderr, "pagehome: hugepages: partial: %s\n",
                    act == HP_RELEASE || (act == HP_SET && after > target)
                        ? "pages still in use stay in the pool (as surplus) until freed"
                        : "the kernel found no more free contiguous memory on the node");
    }
    return complete ? 0 : 3;
}

static const char *const action_names[] = {"", "--reserve", "--release", "--set"};

/* --reserve/--release/--set with its value (see cli_value); HP_SHOW if
 * argv[*i] is none of them. */
static hp_action action_option(int argc, char **argv, int *i, const char **v, int *missing)
{
    for (int a = HP_RESERVE; a <= HP_SET; a++)
        if ((*v = cli_value(argc, argv, i, action_names[a], missing)) || *missing)
            return (hp_action)a;
    return HP_SHOW;
}

int cmd_hugepages(int argc, char **argv)
{
    int json = 0, node = -1;
    hp_action act = HP_SHOW, a;
    uint64_t count = 0;
    const char *size_text = NULL;
    for (int i = 1; i < argc; i++) {
        int missing;
        const char *v;
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            hugepages_usage(stdout);
            return 0;
        } else if ((v = cli_value(argc, argv, &i, "--node", &missing)) || missing) {
            uint64_t n;
            if (missing || ph_parse_u64(v, &n) < 0 || n > INT_MAX)
                return cli_error(EXIT_USAGE, "hugepages: --node needs a node number%s%s%s",
                                 v ? ", not '" : "", v ? v : "", v ? "'" : "");
            node = (int)n;
        } else if ((v = cli_value(argc, argv, &i, "--size", &missing)) || missing) {
            if (missing)
                return cli_error(EXIT_USAGE, "hugepages: --size needs a page size (2M, 1G)");
            size_text = v;
        } else if ((a = action_option(argc, argv, &i, &v, &missing)) != HP_SHOW) {
            if (act != HP_SHOW)
                return cli_error(EXIT_USAGE, "hugepages: give only one of --reserve, "
                                             "--release, --set");
            if (missing || ph_parse_u64(v, &count) < 0)
                return cli_error(EXIT_USAGE, "hugepages: %s needs a number of pages (0 or "
                                 "more)%s%s%s", action_names[a], v ? ", not '" : "",
                                 v ? v : "", v ? "'" : "");
            act = a;
        } else {
            hugepages_usage(stderr);
            return cli_error(EXIT_USAGE, "hugepages: unknown option '%s'", argv[i]);
        }
    }
    if (act != HP_SHOW && node < 0)
        return cli_error(EXIT_USAGE, "hugepages: --reserve, --release and --set need --node N");

    hp_size sizes[HP_MAX_SIZES];
    int nsizes = 0;
    if (ph_hugetlb_sizes(sysfs_root(), sizes, HP_MAX_SIZES, &nsizes) < 0 || nsizes == 0) {
        char dir[PATH_MAX];
        ph_hugetlb_path(dir, sizeof dir, sysfs_root(), -1, 0, NULL);
        return cli_error(1, "hugepages: this kernel has no huge page (hugetlbfs) support "
                            "(no %s)", dir);
    }
    /* the size: asked for, else 2M when offered, else the smallest */
    int si = -1;
    if (size_text) {
        uint64_t kb;
        if (parse_size_kb(size_text, &kb) < 0)
            return cli_error(EXIT_USAGE, "hugepages: --size needs a page size like 2M or 1G, "
                                         "not '%s'", size_text);
        for (int s = 0; s < nsizes; s++)
            if (sizes[s].kb == kb)
                si = s;
        if (si < 0) {
            char offered[128] = "", name[24];
            size_t used = 0;
            for (int s = 0; s < nsizes && used < sizeof offered; s++)
                used += (size_t)snprintf(offered + used, sizeof offered - used, "%s%s",
                                         s ? ", " : "", sizes[s].name);
            ph_hugetlb_size_name(kb, name, sizeof name);
            return cli_error(EXIT_USAGE, "hugepages: unsupported huge page size %s "
                                         "(this kernel offers %s)", name, offered);
        }
    } else {
        si = 0;
        for (int s = 0; s < nsizes; s++)
            if (sizes[s].kb == 2048)
                si = s;
    }

    int *nodes, nnodes;
    if (ph_hugetlb_nodes(sysfs_root(), &nodes, &nnodes) < 0)
        return cli_error(1, "hugepages: cannot list the NUMA nodes: %s", strerror(errno));
    if (node >= 0) {
        int found = 0;
        for (int i = 0; i < nnodes; i++)
            found |= nodes[i] == node;
        if (!found) {
            char list[256];
            cli_cpulist(nodes, nnodes, list, sizeof list);
            free(nodes);
            if (nnodes == 0)
                return cli_error(1, "hugepages: no NUMA nodes in sysfs (this kernel has no "
                                    "per-node pools)");
            return cli_error(EXIT_USAGE, "hugepages: no node %d (this machine has node%s %s)",
                             node, nnodes == 1 ? "" : "s", list);
        }
    }
    int rc;
    if (act == HP_SHOW)
        rc = show(sizes, nsizes, nodes, nnodes, node, size_text ? si : -1, json);
    else
        rc = change(act, node, &sizes[si], count, json);
    free(nodes);
    return rc;
}
