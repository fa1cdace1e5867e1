/*
 * fuzz_parsers.c -- every parser of text pagehome reads, under random input.
 *
 * TARGETS are rows of one table: a name, valid seed inputs and a function
 * that feeds one input to the parser and checks what must hold whatever
 * the input is:
 *   - no crash, no sanitizer report, no leak (run it under PH_SANITIZE);
 *   - a failure sets errno and a non-empty message (ph_error_message);
 *   - a success is consistent and survives a round trip: a JSON document
 *     jansson accepts is written by pagehome's writer and re-read to an
 *     equal tree; a topology (parsed from JSON through jansson, or from a
 *     spec) is checked against the rules of ph_topo_finish, written as
 *     JSON and read back to the same topology (ph_topo_same).
 * A violated property prints the target, the iteration and the input, and
 * aborts.  To add a parser, write a run function and add a row to
 * `targets` (with a few valid seeds).
 *
 * TWO WAYS TO RUN
 *   ctest:     fuzz_parsers --iterations N --seed S [--target NAME]
 *              Every seed is first run as is (and must succeed), then N
 *              mutants, round-robin over the targets.  A mutant is a seed
 *              with 1..8 random edits (one edit half of the time, so many
 *              mutants still parse and the success paths are fuzzed too):
 *              bit flips, bytes replaced by random
 *              or syntax-significant ones, insertions, deletions,
 *              duplicated or spliced-in chunks, truncation.  The same seed
 *              gives the same run.
 *   libFuzzer: build with clang -fsanitize=fuzzer,address -DPH_LIBFUZZER;
 *              the first input byte picks the target, the rest is its
 *              input.
 */
#include "../unit/json_tree.h"
#include "base/error.h"
#include "base/json_write.h"
#include "base/rng.h"
#include "topo/topo.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_INPUT 4096

/* ------------------------------------------------------------------ */
/* Reporting                                                            */
/* ------------------------------------------------------------------ */

static const char *current_target = "?";
static long current_iteration = -1;
static const uint8_t *current_data;
static size_t current_len;

static void print_input(FILE *f, const uint8_t *data, size_t len)
{
    fputc('"', f);
    for (size_t i = 0; i < len; i++) {
        uint8_t c = data[i];
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c >= 0x20 && c < 0x7F)
            fputc(c, f);
        else
            fprintf(f, "\\x%02x", c);
    }
    fputs("\"\n", f);
}

static void fuzz_fail(const char *what) __attribute__((noreturn));

static void fuzz_fail(const char *what)
{
    fprintf(stderr, "fuzz_parsers: target %s, iteration %ld: %s\n",
            current_target, current_iteration, what);
    fprintf(stderr, "  last error: %s\n  input (%zu bytes): ",
            ph_error_message(), current_len);
    print_input(stderr, current_data, current_len);
    abort();
}

static void clear_error(void)
{
    ph_fail(0, "%s", "");
    errno = 0;
}

/* A failed call must leave errno and a message. */
static void expect_failure_explained(const char *prefix)
{
    const char *msg = ph_error_message();
    if (errno == 0)
        fuzz_fail("failure without errno");
    if (!msg || !*msg)
        fuzz_fail("failure without a message");
    if (prefix && strncmp(msg, prefix, strlen(prefix)) != 0)
        fuzz_fail("message without the expected prefix");
}

/* ------------------------------------------------------------------ */
/* JSON                                                                 */
/* ------------------------------------------------------------------ */

/* A document jansson accepts (with the flags topo_json.c passes) is
 * written by pagehome's writer and read back equal: the writer's escapes
 * and numbers against the reader the topology parser uses. */
static void json_round_trip(const json_t *v, int pretty)
{
    if (ph_test_json_depth(v) > PH_JSON_MAX_DEPTH)
        return; /* deeper than the writer nests: its refusal is tested elsewhere */
    ph_jw w;
    size_t len = 0;
    ph_jw_init(&w, pretty);
    ph_test_jw_put(&w, v);
    const char *text = ph_jw_text(&w, &len);
    if (!text)
        fuzz_fail("the writer refused a parsed document");
    json_error_t err;
    json_t *back = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &err);
    if (!back)
        fuzz_fail("a written document does not parse");
    if (!ph_test_json_same(v, back))
        fuzz_fail("a written document reads back different");
    json_decref(back);
    ph_jw_free(&w);
}

static int run_json(const uint8_t *data, size_t len)
{
    json_error_t err;
    json_t *v = json_loadb((const char *)data, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY,
                           &err);
    if (!v) {
        if (!err.text[0] || err.position < 0 || (size_t)err.position > len || err.line < 1)
            fuzz_fail("bad error record");
        return -1;
    }
    json_round_trip(v, (int)(len & 1));
    json_decref(v);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Topologies                                                           */
/* ------------------------------------------------------------------ */

static void check_topology(const ph_topology *t)
{
    int total = 0;
    if (t->nnodes < 1 || t->nnodes > PH_MAX_NODES)
        fuzz_fail("node count out of range");
    for (int i = 0; i < t->nnodes; i++) {
        const ph_node_info *nd = &t->nodes[i];
        if (nd->id < 0 || nd->id > 1023 || ph_topo_node_index(t, nd->id) != i)
            fuzz_fail("bad or duplicate node id");
        for (int k = 0; k < nd->ncpus; k++) {
            if (ph_topo_cpu_index(t, nd->cpus[k]) != i)
                fuzz_fail("cpu_node does not match the node's cpus");
            if (k > 0 && nd->cpus[k - 1] >= nd->cpus[k])
                fuzz_fail("node cpus not sorted and unique");
        }
        total += nd->ncpus;
        int local = ph_topo_dist(t, i, i);
        for (int j = 0; j < t->nnodes; j++) {
            int d = ph_topo_dist(t, i, j);
            if (d < local || d > 255 || local < 10)
                fuzz_fail("distance rules broken");
            if (!(ph_topo_lat(t, i, j) >= 0))
                fuzz_fail("negative latency");
        }
    }
    if (total != t->ncpus || t->ncpus < 1)
        fuzz_fail("cpu count mismatch");
    for (int c = 1; c < t->ncpus; c++)
        if (t->cpus[c - 1] >= t->cpus[c])
            fuzz_fail("cpus[] not sorted");
    if (ph_topo_cpu_index(t, -1) != -1 ||
        ph_topo_cpu_index(t, t->cpu_node_len) != -1)
        fuzz_fail("cpu index bounds");
}

static void topology_round_trip(const ph_topology *t)
{
    ph_jw w;
    size_t len = 0;
    ph_jw_init(&w, 1);
    ph_topo_to_json(t, &w);
    const char *text = ph_jw_text(&w, &len);
    if (!text)
        fuzz_fail("a topology cannot be written");
    ph_topology *back = ph_topo_from_json_text(text, len, "round trip");
    if (!back)
        fuzz_fail("a written topology does not read back");
    if (!ph_topo_same(t, back))
        fuzz_fail("a written topology reads back different");
    ph_topo_free(back);
    ph_jw_free(&w);
}

static int run_spec(const uint8_t *data, size_t len)
{
    char *spec = malloc(len + 1);
    if (!spec)
        fuzz_fail("out of memory");
    memcpy(spec, data, len);
    spec[len] = '\0';
    clear_error();
    ph_topology *t = ph_topo_from_spec(spec);
    free(spec);
    if (!t) {
        expect_failure_explained("topology: ");
        return -1;
    }
    check_topology(t);
    topology_round_trip(t);
    ph_topo_free(t);
    return 0;
}

static int run_topo_json(const uint8_t *data, size_t len)
{
    clear_error();
    ph_topology *t = ph_topo_from_json_text((const char *)data, len, "fuzz");
    if (!t) {
        expect_failure_explained("topology: fuzz: ");
        return -1;
    }
    check_topology(t);
    topology_round_trip(t);
    ph_topo_free(t);
    return 0;
}

/* ------------------------------------------------------------------ */
/* The targets                                                          */
/* ------------------------------------------------------------------ */

static const char *const json_seeds[] = {
    "{\"a\": [1, -2.5e3, true, false, null], \"b\": {\"c\": \"d\\n\\u00e9\"}}",
    "[[], {}, [[[0]]], \"\\ud83d\\ude00\", 1e-300, 1234567890123456789]",
    "\"text with \\\"escapes\\\" and \xc3\xa9\"",
    "{\"k\":{\"k\":{\"k\":[0.1,0.25,{\"x\":\"y\"}]}}}",
    NULL,
};

static const char *const spec_seeds[] = {
    "nodes=2,cpus_per_node=2",
    "nodes=4,cpus_per_node=2,sockets=2,remote=12,remote_socket=32",
    "nodes=3,cpus_per_node=8:8:0,mem_per_node=16G:16G:64G,"
    "dist=10:21:24/21:10:24/24:24:10",
    "nodes=2,ids=0:8,cpus=0-3+8-11:4-7+12-15,huge_2m=512,huge_1g=1:0",
    "nodes=1,local=12,local_ns=95.5",
    NULL,
};

static const char *const topo_json_seeds[] = {
    "{\"nodes\": [{\"id\": 0, \"cpus\": [0, 1], \"mem_total_bytes\": 4096},"
    " {\"id\": 1, \"cpus\": [], \"hugepages\": [{\"page_bytes\": 2097152,"
    " \"total\": 4, \"free\": 4, \"surplus\": 0}]}],"
    " \"distance\": [[10, 20], [20, 10]]}",
    "{\"format\": \"pagehome-topology\", \"version\": 1, \"measured\": true,"
    " \"nodes\": [{\"id\": 3, \"cpus\": [2]}, {\"id\": 1, \"cpus\": [0]}],"
    " \"latency_ns\": [[90, 150], [150, 90]], \"migrate_ns_4k\": [[0, 1],"
    " [1, 0]], \"migrate_ns_2m\": [[0, 2], [2, 0]], \"migrate_ns_call\": 5,"
    " \"model_local_ns\": 80}",
    "{\"nodes\": [{\"id\": 0, \"cpus\": [0]}]}",
    NULL,
};

typedef struct fuzz_target {
    const char *name;
    const char *const *seeds; /* valid inputs, NULL-terminated */
    int (*run)(const uint8_t *data, size_t len); /* 0 accepted, -1 refused */
} fuzz_target;

static const fuzz_target targets[] = {
    {"json", json_seeds, run_json},
    {"topo-spec", spec_seeds, run_spec},
    {"topo-json", topo_json_seeds, run_topo_json},
};

#define NTARGETS (sizeof targets / sizeof targets[0])

static int run_target(const fuzz_target *t, long iteration,
                      const uint8_t *data, size_t len)
{
    current_target = t->name;
    current_iteration = iteration;
    current_data = data;
    current_len = len;
    return t->run(data, len);
}

#ifdef PH_LIBFUZZER

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    run_target(&targets[data[0] % NTARGETS], 0, data + 1, size - 1);
    return 0;
}

#else /* the seeded mutator, for ctest */

static uint64_t rng_state;



static size_t rnd_below(size_t n)
{
    return n ? (size_t)(ph_splitmix64_next(&rng_state) % n) : 0;
}

/* Bytes that matter to the grammars: a random one is mostly noise. */
static uint8_t interesting_byte(void)
{
    static const char bytes[] = "{}[]:,\"\\/-+.eE0123456789=tfnu \n\t\x00\x7f"
                                "\xc3\xa9\xed\xf4\xffxKMG";
    return (uint8_t)bytes[rnd_below(sizeof bytes - 1)];
}

typedef struct buf {
    uint8_t data[FUZZ_MAX_INPUT];
    size_t len;
} buf;

static void insert_bytes(buf *b, size_t at, const uint8_t *src, size_t n)
{
    if (b->len + n > FUZZ_MAX_INPUT)
        n = FUZZ_MAX_INPUT - b->len;
    memmove(b->data + at + n, b->data + at, b->len - at);
    memcpy(b->data + at, src, n);
    b->len += n;
}

static void mutate_once(buf *b, const fuzz_target *t)
{
    size_t at = rnd_below(b->len + 1);
    uint8_t c;
    switch (rnd_below(8)) {
    case 0: /* flip a bit */
        if (b->len)
            b->data[rnd_below(b->len)] ^= (uint8_t)(1u << rnd_below(8));
        break;
    case 1: /* replace a byte */
        if (b->len)
            b->data[rnd_below(b->len)] =
                rnd_below(2) ? interesting_byte() : (uint8_t)ph_splitmix64_next(&rng_state);
        break;
    case 2: /* insert a byte */
        c = interesting_byte();
        insert_bytes(b, at, &c, 1);
        break;
    case 3: { /* delete a range */
        size_t n = 1 + rnd_below(8);
        if (at + n > b->len)
            n = b->len - at;
        memmove(b->data + at, b->data + at + n, b->len - at - n);
        b->len -= n;
        break;
    }
    case 4: /* truncate */
        b->len = at;
        break;
    case 5: { /* duplicate a chunk of itself */
        if (!b->len)
            break;
        uint8_t chunk[64];
        size_t from = rnd_below(b->len), n = 1 + rnd_below(sizeof chunk);
        if (from + n > b->len)
            n = b->len - from;
        memcpy(chunk, b->data + from, n);
        insert_bytes(b, at, chunk, n);
        break;
    }
    case 6: { /* splice in a piece of another seed */
        size_t nseeds = 0;
        while (t->seeds[nseeds])
            nseeds++;
        const char *other = t->seeds[rnd_below(nseeds)];
        size_t olen = strlen(other), from = rnd_below(olen);
        size_t n = 1 + rnd_below(32);
        if (from + n > olen)
            n = olen - from;
        insert_bytes(b, at, (const uint8_t *)other + from, n);
        break;
    }
    default: { /* a number the parsers may not expect */
        static const char *const numbers[] = {
            "0", "-1", "65", "1024", "4096", "99999999999999999999", "1e999",
            "-0", "255", "256", "9", "2147483648", "0.5", "1e-400",
        };
        const char *num = numbers[rnd_below(sizeof numbers / sizeof *numbers)];
        insert_bytes(b, at, (const uint8_t *)num, strlen(num));
        break;
    }
    }
}

static void make_mutant(buf *b, const fuzz_target *t)
{
    size_t nseeds = 0;
    while (t->seeds[nseeds])
        nseeds++;
    const char *seed = t->seeds[rnd_below(nseeds)];
    b->len = strlen(seed);
    memcpy(b->data, seed, b->len);
    int edits = 1; /* 1 edit half of the time, 2 a quarter, ... up to 8 */
    while (edits < 8 && rnd_below(2))
        edits++;
    for (int e = 0; e < edits; e++)
        mutate_once(b, t);
}

static int run_seeds(const fuzz_target *t)
{
    int bad = 0;
    for (size_t s = 0; t->seeds[s]; s++) {
        const char *seed = t->seeds[s];
        if (run_target(t, -1, (const uint8_t *)seed, strlen(seed)) != 0) {
            fprintf(stderr, "fuzz_parsers: seed %zu of %s is refused: %s\n",
                    s, t->name, ph_error_message());
            bad++;
        }
    }
    return bad;
}

static int usage(void)
{
    fprintf(stderr, "usage: fuzz_parsers [--iterations N] [--seed S] "
                    "[--target NAME]\n");
    return 2;
}

int main(int argc, char **argv)
{
    long iterations = 10000;
    unsigned long long seed = 1;
    const char *only = NULL;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc)
            iterations = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--target") == 0 && i + 1 < argc)
            only = argv[++i];
        else
            return usage();
    }
    const fuzz_target *active[NTARGETS];
    size_t nactive = 0;
    for (size_t k = 0; k < NTARGETS; k++)
        if (!only || strcmp(only, targets[k].name) == 0)
            active[nactive++] = &targets[k];
    if (nactive == 0) {
        fprintf(stderr, "fuzz_parsers: no target named '%s'\n", only);
        return 2;
    }

    int bad_seeds = 0;
    for (size_t k = 0; k < nactive; k++)
        bad_seeds += run_seeds(active[k]);

    static buf b;
    long accepted[NTARGETS] = {0}, tried[NTARGETS] = {0};
    rng_state = seed;
    for (long it = 0; it < iterations; it++) {
        size_t k = (size_t)it % nactive;
        make_mutant(&b, active[k]);
        tried[k]++;
        if (run_target(active[k], it, b.data, b.len) == 0)
            accepted[k]++;
    }
    for (size_t k = 0; k < nactive; k++)
        printf("fuzz_parsers: %s: %ld inputs, %ld accepted\n",
               active[k]->name, tried[k], accepted[k]);
    return bad_seeds ? 1 : 0;
}

#endif /* PH_LIBFUZZER */
