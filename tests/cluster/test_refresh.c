/*
 * test_refresh.c -- a barrier's refresh of the copies a rank reads at
 * every interval or every other one (src/cluster/coherence.c, REFRESH),
 * on N ranks, 1 thread each.  Two arrays of NP pages homed at rank 0:
 *   every other interval   rank 0 writes A, barrier, the others read all
 *                          of A, barrier -- the reads are two intervals
 *                          apart, so from the third round on every copy is
 *                          refreshed at the barrier after rank 0's writes
 *                          and read without a transfer;
 *   every interval         a Jacobi pair: in round k rank 0 writes A and
 *                          the others read B (written in round k - 1),
 *                          then the other way round, one barrier a round
 *                          -- each page read at every other interval, in
 *                          turn: from the fifth round on (two reads of
 *                          each array, two intervals apart, after the
 *                          first phase's pattern has gone) every read
 *                          is of a refreshed copy;
 *   no more reads          rank 0 goes on writing A and nobody reads it:
 *                          at most one more refresh of each page, then
 *                          none;
 *   now and then           rank 0 writes A at every interval, the others
 *                          read it at every fifth (as CG reads a vector
 *                          once in an iteration of many barriers): never
 *                          refreshed.
 * Every word read is checked.  With the mechanism on (faults caught by
 * userfaultfd, cluster_refresh=1) the counts above are checked; with it
 * off (cluster_refresh=0, or page protection) no page is refreshed and
 * every read round misses.
 */
#include "common.h"

#include <string.h>

#define PAGE 4096
#define WPP (PAGE / 8)
#define NP 16
#define ROUNDS 8

static uint64_t value(int round, int arr, size_t word)
{
    return cl_h3(11, (uint64_t)round, (uint64_t)arr, word) | 1;
}

static void write_all(uint64_t *a, int round, int arr)
{
    for (size_t i = 0; i < (size_t)NP * WPP; i++)
        a[i] = value(round, arr, i);
}

static long check_all(const uint64_t *a, int round, int arr)
{
    long bad = 0;
    for (size_t i = 0; i < (size_t)NP * WPP; i++)
        bad += a[i] != value(round, arr, i);
    return bad;
}

/* read misses, pages refreshed, refreshed copies used so far */
typedef struct {
    long long miss, refreshed, used;
} counts;

static counts now(void)
{
    counts c = {cl_stat_of("fault_read_remote"), cl_stat_of("pages_refreshed"),
                cl_stat_of("refresh_used")};
    return c;
}

/* A phase's read rounds from the learnt one on (`rounds` of them): with
 * the mechanism on no miss and every page a refreshed copy, off a miss
 * (at least) in every round. */
static void check_phase(const char *what, int on, long long misses,
                        long long used, int rounds)
{
    if (on) {
        CHECK_EQ(misses, 0);
        CHECK_EQ(used, (long long)rounds * NP);
    } else {
        CHECK(misses >= rounds);
        CHECK_EQ(used, 0);
    }
    if (ph_cluster_rank() == 1)
        printf("refresh: %s: %lld misses, %lld refreshed copies used in the "
               "last %d rounds\n", what, misses, used, rounds);
}

int main(int argc, char **argv)
{
    cl_init(&argc, &argv);
    ph_cluster_info_t info;
    char tun[16] = "";
    CHECK(ph_cluster_info(&info) == 0);
    CHECK(ph_config_get("cluster_refresh", tun, sizeof tun) >= 0);
    int on = !strncmp(info.fault_mechanism, "userfaultfd", 11) &&
             !strcmp(tun, "1");
    int me = ph_cluster_rank();
    if (me == 0)
        printf("refresh: %s (%s, cluster_refresh=%s)\n", on ? "on" : "off",
               info.fault_mechanism, tun);
    ph_placement_t pl;
    CHECK(ph_placement_parse(&pl, "node:0") == 0);
    uint64_t *a = ph_cluster_alloc((size_t)NP * PAGE, &pl);
    uint64_t *b = ph_cluster_alloc((size_t)NP * PAGE, &pl);
    CHECK(a != NULL && b != NULL);
    if (!a || !b)
        return cl_finish("refresh");
    long bad = 0;

    /* every other interval: write, barrier, read, barrier */
    long long misses_late = 0, used_late = 0;
    for (int r = 0; r < ROUNDS; r++) {
        if (me == 0)
            write_all(a, r, 0);
        CHECK(ph_cluster_barrier() == 0);
        counts c0 = now();
        if (me != 0)
            bad += check_all(a, r, 0);
        counts c1 = now();
        if (r >= 3) {
            misses_late += c1.miss - c0.miss;
            used_late += c1.used - c0.used;
        }
        CHECK(ph_cluster_barrier() == 0);
    }
    if (me != 0) {
        /* rounds 3..: every page refreshed, read without a miss */
        check_phase("every other interval", on, misses_late, used_late,
                    ROUNDS - 3);
        if (!on)
            CHECK_EQ(now().refreshed, 0);
    }

    /* a Jacobi pair: one barrier a round, A and B in turn */
    if (me == 0)
        write_all(b, 0, 1);
    CHECK(ph_cluster_barrier() == 0);
    misses_late = used_late = 0;
    for (int r = 1; r <= ROUNDS; r++) {
        uint64_t *dst = r % 2 ? a : b, *src = r % 2 ? b : a;
        int darr = r % 2 ? 0 : 1, sarr = 1 - darr;
        counts c0 = now();
        if (me == 0)
            write_all(dst, r, darr);
        else
            bad += check_all(src, r - 1, sarr);
        counts c1 = now();
        if (r >= 5) {
            misses_late += c1.miss - c0.miss;
            used_late += c1.used - c0.used;
        }
        CHECK(ph_cluster_barrier() == 0);
    }
    if (me != 0)
        check_phase("Jacobi pair", on, misses_late, used_late, ROUNDS - 4);

    /* nobody reads any more: at most one refresh more of each page */
    counts s0 = now();
    for (int r = 0; r < ROUNDS; r++) {
        if (me == 0) {
            write_all(a, 100 + r, 0);
            write_all(b, 100 + r, 1);
        }
        CHECK(ph_cluster_barrier() == 0);
    }
    counts s1 = now();
    if (me != 0) {
        CHECK(s1.refreshed - s0.refreshed <= 2 * NP);
        CHECK_EQ(s1.used - s0.used, 0);
        if (!on)
            CHECK_EQ(s1.refreshed, 0);
        if (me == 1)
            printf("refresh: no more reads: %lld pages refreshed over %d "
                   "rounds\n", s1.refreshed - s0.refreshed, ROUNDS);
        /* and the copies are right when read again */
        bad += check_all(a, 100 + ROUNDS - 1, 0);
        bad += check_all(b, 100 + ROUNDS - 1, 1);
    }
    CHECK(ph_cluster_barrier() == 0);

    /* now and then: reads five intervals apart are no period */
    counts t0 = now();
    for (int r = 0; r < 4 * 5; r++) {
        if (me == 0)
            write_all(a, 200 + r, 0);
        CHECK(ph_cluster_barrier() == 0);
        if (me != 0 && r % 5 == 4)
            bad += check_all(a, 200 + r, 0);
        CHECK(ph_cluster_barrier() == 0);
    }
    counts t1 = now();
    if (me != 0) {
        CHECK_EQ(t1.refreshed - t0.refreshed, 0);
        CHECK(t1.miss - t0.miss >= 4);
        if (me == 1)
            printf("refresh: now and then: %lld misses, %lld pages refreshed\n",
                   t1.miss - t0.miss, t1.refreshed - t0.refreshed);
    }
    CHECK_EQ(bad, 0);
    CHECK(ph_cluster_barrier() == 0);
    CHECK(ph_cluster_free(b) == 0);
    CHECK(ph_cluster_free(a) == 0);
    return cl_finish("refresh");
}
