/*
 * test_placement.c -- the homes of every placement text are the formulas
 * NUMA mode uses for the same text (ranks for nodes): block (contiguous
 * equal chunks in rank order), cyclic:K, round-robin, node:R, random:S, a
 * rank list; the default (NULL) is the tunable cluster_placement (block).
 * ph_cluster_homes also with its status array in shared memory.
 */
#include "common.h"

#define PAGE 4096

static int expect(const char *text, size_t p, size_t np, int n)
{
    if (!strcmp(text, "block"))
        return (int)(p * (size_t)n / np);
    if (!strncmp(text, "cyclic:", 7))
        return (int)((p / strtoul(text + 7, NULL, 10)) % (size_t)n);
    if (!strcmp(text, "round-robin"))
        return (int)(p % (size_t)n);
    if (!strncmp(text, "node:", 5))
        return atoi(text + 5);
    if (!strncmp(text, "random:", 7))
        return (int)(cl_mix(cl_mix(strtoull(text + 7, NULL, 10)) + p) % (uint64_t)n);
    return -99;
}

int main(int argc, char **argv)
{
    cl_init(&argc, &argv);
    int n = ph_cluster_nranks(), me = ph_cluster_rank();
    char last[32];
    snprintf(last, sizeof last, "node:%d", n - 1);
    const char *texts[] = {"block", "cyclic:1", "cyclic:3", "round-robin",
                           "node:0", last, "random:7"};
    size_t sizes[] = {1, 5, 37, 100};
    for (size_t t = 0; t < sizeof texts / sizeof texts[0]; t++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            size_t np = sizes[s];
            ph_placement_t pl;
            CHECK(ph_placement_parse(&pl, texts[t]) == 0);
            char *p = ph_cluster_alloc(np * PAGE - 100, &pl);
            CHECK(p != NULL);
            if (!p)
                continue;
            int st[100];
            CHECK_EQ(ph_cluster_homes(p, np * PAGE - 100, st), 0);
            size_t bad = 0;
            for (size_t k = 0; k < np; k++)
                bad += st[k] != expect(texts[t], k, np, n);
            if (bad)
                fprintf(stderr, "%s over %zu pages: %zu wrong homes\n",
                        texts[t], np, bad);
            CHECK_EQ(bad, 0);
            ph_cluster_free(p);
        }
    /* a rank list: block over the ranks in reverse order */
    int rl[64];
    for (int r = 0; r < n; r++)
        rl[r] = n - 1 - r;
    ph_placement_t pl;
    ph_placement_parse(&pl, "block");
    pl.nodes = rl;
    pl.nnodes = n;
    char *p = ph_cluster_alloc(8 * PAGE * (size_t)n, &pl);
    CHECK(p != NULL);
    for (size_t k = 0; k < 8 * (size_t)n; k++)
        CHECK_EQ(ph_cluster_home(p + k * PAGE), n - 1 - (int)(k / 8));
    ph_cluster_free(p);
    /* the status array in shared memory (homed on rank 0: a home page
     * there, a remote one elsewhere), one slice per rank: filled without
     * the service code faulting on it (a hang before) */
    ph_placement_parse(&pl, "node:0");
    int *sst = ph_cluster_alloc(8 * (size_t)n * sizeof *sst, &pl);
    p = ph_cluster_alloc(8 * PAGE, NULL);
    CHECK(sst && p);
    if (sst && p) {
        CHECK_EQ(ph_cluster_homes(p, 8 * PAGE, sst + 8 * me), 0);
        for (size_t k = 0; k < 8; k++)
            CHECK_EQ(sst[8 * me + (int)k], expect("block", k, 8, n));
    }
    ph_cluster_barrier();
    ph_cluster_free(p);
    ph_cluster_free(sst);
    /* NULL = cluster_placement = block */
    p = ph_cluster_alloc(4 * PAGE * (size_t)n, NULL);
    for (size_t k = 0; k < 4 * (size_t)n; k++)
        CHECK_EQ(ph_cluster_home(p + k * PAGE), (int)(k / 4));
    p[(size_t)me * 4 * PAGE] = 1;
    ph_cluster_barrier();
    for (int r = 0; r < n; r++)
        CHECK_EQ(p[(size_t)r * 4 * PAGE], 1);
    ph_cluster_barrier();
    ph_cluster_free(p);
    return cl_finish("placement");
}
