/*
 * cluster_merge.c -- the merged report of a cluster run.
 *
 * In a cluster run every rank writes its own statistics (the DSM writes
 * them at ph_cluster_finalize to the tunable cluster_stats_file,
 * PAGEHOME_CLUSTER_STATS_FILE, with "%r" replaced by the rank).  This file turns whatever per-rank JSON objects exist into one
 * document: the run's description and the sums of the ranks' counters
 * under "cluster", each rank's object under "ranks".  It knows nothing of
 * what the counters mean: any number is summed with the numbers at the
 * same place in the other ranks' objects, so new counters need no change
 * here.  Parsing and writing are jansson's.  The merged file is written
 * as a new file beside out_path and renamed over it, so a symbolic link
 * at out_path is replaced, never written through.
 */
#include "cluster_merge.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cluster_rank_of(const char *path, json_t *obj)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *p = NULL;
    for (const char *s = base; (s = strstr(s, "rank")) != NULL; s += 4)
        p = s + 4;
    if (p) {
        while (*p == '-' || *p == '_' || *p == '.')
            p++;
        if (*p >= '0' && *p <= '9') {
            char *end;
            long r = strtol(p, &end, 10);
            if (r >= 0 && r < 1000000000L)
                return (int)r;
        }
    }
    json_t *r = obj ? json_object_get(obj, "rank") : NULL;
    if (!r && obj) /* the DSM's own layout: {"cluster": {"rank": R, ...}, ...} */
        r = json_object_get(json_object_get(obj, "cluster"), "rank");
    if (json_is_integer(r) && json_integer_value(r) >= 0 &&
        json_integer_value(r) < 1000000000LL)
        return (int)json_integer_value(r);
    return -1;
}

/* Members that name or size something rather than count it. */
static int not_a_counter(const char *key)
{
    static const char *const names[] = {"rank", "ranks", "nranks", "pid", "version",
                                        "pagehome_stats", "config", "cluster",
                                        /* home migration's settings and cost model */
                                        "on", "min_intervals", "cost_rule", "melt_intervals",
                                        "fetch_ns", "diff_ns", "sync_ns", "measured_fetch_ns",
                                        "measured_flush_ns", "measured_twin_ns", NULL};
    for (int i = 0; names[i]; i++)
        if (strcmp(key, names[i]) == 0)
            return 1;
    size_t n = strlen(key);
    return n >= 3 && strcmp(key + n - 3, "_id") == 0;
}

/* totals += every number in obj, member by member. */
static void add_numbers(json_t *totals, json_t *obj)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) {
        if (not_a_counter(key))
            continue;
        json_t *t = json_object_get(totals, key);
        if (json_is_object(v)) {
            if (!t) {
                t = json_object();
                json_object_set_new(totals, key, t);
            }
            if (json_is_object(t))
                add_numbers(t, v);
        } else if (json_is_integer(v)) {
            if (!t)
                json_object_set_new(totals, key, json_integer(json_integer_value(v)));
            else if (json_is_integer(t))
                json_integer_set(t, json_integer_value(t) + json_integer_value(v));
            else if (json_is_real(t))
                json_real_set(t, json_real_value(t) + (double)json_integer_value(v));
        } else if (json_is_real(v)) {
            if (!t)
                json_object_set_new(totals, key, json_real(json_real_value(v)));
            else if (json_is_number(t))
                /* an integer meeting a real: the sum is real */
                json_object_set_new(totals, key, json_real(json_number_value(t) +
                                                           json_real_value(v)));
        }
    }
}

/* Drop objects that ended up empty (only non-counters below them). */
static void prune_empty(json_t *obj)
{
    const char *key;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(obj, tmp, key, v) {
        if (json_is_object(v)) {
            prune_empty(v);
            if (json_object_size(v) == 0)
                json_object_del(obj, key);
        }
    }
}

/* doc into a new file beside path (mkstemp: O_CREAT|O_EXCL) renamed over
 * path; 0, or -1 with errno.  A symbolic link at path is replaced and said
 * so; its target is not touched. */
static int dump_new_file(json_t *doc, const char *path)
{
    struct stat st;
    char target[4096] = "";
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        ssize_t n = readlink(path, target, sizeof target - 1);
        target[n > 0 ? n : 0] = '\0';
        if (n <= 0)
            snprintf(target, sizeof target, "?");
    }
    size_t len = strlen(path) + sizeof ".XXXXXX";
    char *tmp = malloc(len);
    if (!tmp)
        return -1;
    snprintf(tmp, len, "%s.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        free(tmp);
        return -1;
    }
    mode_t mask = umask(022);
    umask(mask);
    int rc = fchmod(fd, 0666 & ~mask);
    if (rc == 0)
        rc = json_dumpfd(doc, fd, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    if (close(fd) != 0)
        rc = -1;
    if (rc == 0)
        rc = rename(tmp, path);
    if (rc != 0) {
        int err = errno;
        unlink(tmp);
        errno = err;
    } else if (target[0]) {
        fprintf(stderr, "pagehome: cluster: %s was a symbolic link to %s: replaced by "
                "the merged statistics; %s is unchanged\n", path, target, target);
    }
    free(tmp);
    return rc;
}

typedef struct rank_file {
    int rank;
    json_t *obj;
} rank_file;

static int by_rank(const void *a, const void *b)
{
    const rank_file *x = a, *y = b;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

int cluster_merge(const char *out_path, char *const *files, int nfiles, json_t *info)
{
    rank_file *rf = calloc((size_t)(nfiles > 0 ? nfiles : 1), sizeof *rf);
    json_t *unreadable = json_array();
    int n = 0;
    if (!rf || !unreadable) {
        free(rf);
        json_decref(unreadable);
        fprintf(stderr, "pagehome: cluster: out of memory merging statistics\n");
        return -1;
    }
    for (int i = 0; i < nfiles; i++) {
        json_error_t err;
        json_t *obj = json_load_file(files[i], 0, &err);
        const char *why = NULL;
        char buf[JSON_ERROR_TEXT_LENGTH + 64];
        if (!obj) {
            snprintf(buf, sizeof buf, "line %d: %s", err.line, err.text);
            why = buf;
        } else if (!json_is_object(obj)) {
            why = "not a JSON object";
        } else if ((rf[n].rank = cluster_rank_of(files[i], obj)) < 0) {
            why = "no rank in the file's name or object";
        } else {
            for (int k = 0; k < n && !why; k++)
                if (rf[k].rank == rf[n].rank)
                    why = "a second file for the same rank";
        }
        if (why) {
            json_array_append_new(unreadable,
                                  json_pack("{s:s, s:s}", "file", files[i], "error", why));
            json_decref(obj);
            continue;
        }
        rf[n++].obj = obj;
    }
    qsort(rf, (size_t)n, sizeof *rf, by_rank);

    json_t *cluster = info ? json_deep_copy(info) : json_object();
    json_t *ranks = json_array();
    json_t *totals = json_object();
    for (int k = 0; k < n; k++) {
        json_object_set_new(rf[k].obj, "rank", json_integer(rf[k].rank));
        add_numbers(totals, rf[k].obj);
        json_array_append(ranks, rf[k].obj);
    }
    prune_empty(totals);
    json_t *expected = json_object_get(cluster, "ranks");
    json_t *missing = json_array();
    if (json_is_integer(expected)) {
        int k = 0;
        for (json_int_t r = 0; r < json_integer_value(expected); r++) {
            while (k < n && rf[k].rank < r)
                k++;
            if (k >= n || rf[k].rank != r)
                json_array_append_new(missing, json_integer(r));
        }
    }
    json_object_set_new(cluster, "ranks_reported", json_integer(n));
    json_object_set_new(cluster, "missing_ranks", missing);
    json_object_set_new(cluster, "unreadable", unreadable);
    json_object_set_new(cluster, "totals", totals);
    json_t *doc = json_pack("{s:i, s:o, s:o}", "pagehome_cluster_stats", 1,
                            "cluster", cluster, "ranks", ranks);
    int rc = n;
    if (!doc || dump_new_file(doc, out_path) != 0) {
        fprintf(stderr, "pagehome: cluster: cannot write %s: %s\n", out_path,
                doc ? strerror(errno) : "out of memory");
        rc = -1;
    }
    json_decref(doc);
    for (int k = 0; k < n; k++)
        json_decref(rf[k].obj);
    free(rf);
    return rc;
}
