/*
 * check_stats.c -- checks the per-rank statistics files of a cluster run
 * (cluster_stats_file, one JSON object per rank, src/cluster/stats.c) for
 * what privatisation promises: pages declared read-only are fetched in one
 * barrier interval at most per rank -- the first in which the rank reads
 * them -- and never after.
 *
 *   check_stats MIN_TOTAL FILE...
 *
 * Per file: the per-interval field "fetched_readonly" is nonzero in at
 * most one interval, and the intervals add up to the rank's
 * sync.readonly_fetched; over all files readonly_fetched adds up to at
 * least MIN_TOTAL (so that a counter that never counts fails: with R
 * ranks, every rank but a page's home fetches it).  Prints one line per
 * rank; exit 0 when everything holds, 1 otherwise (2: unreadable input).
 */
#include <jansson.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long field_index(json_t *doc, const char *name)
{
    json_t *f = json_object_get(doc, "interval_fields");
    for (size_t i = 0; i < json_array_size(f); i++)
        if (json_is_string(json_array_get(f, i)) &&
            strcmp(json_string_value(json_array_get(f, i)), name) == 0)
            return (long)i;
    return -1;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: check_stats MIN_TOTAL FILE...\n");
        return 2;
    }
    char *end;
    long long min_total = strtoll(argv[1], &end, 10);
    if (*end || min_total < 0) {
        fprintf(stderr, "check_stats: bad MIN_TOTAL '%s'\n", argv[1]);
        return 2;
    }
    int ok = 1;
    long long total = 0;
    for (int a = 2; a < argc; a++) {
        json_error_t err;
        json_t *doc = json_load_file(argv[a], 0, &err);
        if (!doc) {
            fprintf(stderr, "check_stats: %s: %s (line %d)\n", argv[a], err.text, err.line);
            return 2;
        }
        long k = field_index(doc, "fetched_readonly");
        json_t *ro = json_object_get(json_object_get(doc, "sync"), "readonly_fetched");
        json_t *ivs = json_object_get(doc, "intervals");
        if (k < 0 || !json_is_integer(ro) || !json_is_array(ivs)) {
            fprintf(stderr, "check_stats: %s: no fetched_readonly / readonly_fetched\n", argv[a]);
            json_decref(doc);
            return 2;
        }
        long long sum = 0, first = -1, later = 0;
        for (size_t i = 0; i < json_array_size(ivs); i++) {
            json_int_t v = json_integer_value(json_array_get(json_array_get(ivs, i), (size_t)k));
            if (v > 0 && first < 0)
                first = (long long)i;
            else if (v > 0)
                later += v;
            sum += v;
        }
        long long r = json_integer_value(ro);
        total += r;
        int good = later == 0 && sum == r;
        printf("check_stats: %s: %lld read-only page(s) fetched, in interval %lld of %zu; "
               "%lld after it: %s\n", argv[a], r, first, json_array_size(ivs), later,
               good ? "ok" : "FAIL");
        ok = ok && good;
        json_decref(doc);
    }
    printf("check_stats: %lld read-only page fetches in all (at least %lld expected): %s\n",
           total, min_total, total >= min_total ? "ok" : "FAIL");
    return ok && total >= min_total ? 0 : 1;
}
