/*
 * netcost.c -- the network cost model of home migration by cost
 * (migrate_cost.h), measured by the DSM itself at start-up, before the
 * service thread runs (the initialising thread is MPI's only user then).
 *
 * Every rank measures against the next rank (a ring, all at once, as the
 * ranks will fetch from each other), on the control window -- reading a
 * peer's arena would allocate its pages -- after one warm-up round (a
 * transport's first operation to a peer connects):
 *   fetch_ns  one 4 KiB MPI_Rget and its wait: a page fetched on a fault;
 *   diff_ns   16 MPI_Rgets of 256 bytes, waited for together, per get: a
 *             page's diff at a barrier goes as puts of its changed runs,
 *             many pages to one home completed together, so it pays a
 *             share of one round trip and its bytes (a get of the same
 *             size crosses the same path without writing a peer's memory);
 *   sync_ns   one MPI_Barrier.
 * Each is the median of 9 rounds; the ranks then agree on the largest of
 * their medians (MPI_Allreduce MAX), so every rank's cost rule weighs the
 * same numbers and computes the same moves.
 */
#include "cluster/cluster.h"

#include "base/clock.h"
#include "base/sort.h"

#include <stdlib.h>
#include <string.h>

enum { ROUNDS = 9, BATCH = 16, SMALL = 256 };

static double median(uint64_t *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, ph_cmp_u64);
    return (double)v[n / 2];
}

void ph_dsm_netcost_measure(ph_dsm *c, ph_dsm_netcost *out)
{
    memset(out, 0, sizeof *out);
    if (c->nranks < 2 || c->nowin || c->ctl.bytes < PH_DSM_PAGE)
        return;
    int peer = (c->rank + 1) % c->nranks;
    unsigned char *buf = malloc(PH_DSM_PAGE);
    if (!buf)
        return;                       /* no model: the cost rule stays off */
    uint64_t tf[ROUNDS], td[ROUNDS], ts[ROUNDS];
    MPI_Request q[BATCH];
    MPI_Status qs[BATCH];    /* not MPI_STATUSES_IGNORE: MPICH's (MPI_Status
                                * *)1 trips GCC's -Wstringop-overflow */
    for (int round = -1; round < ROUNDS; round++) {
        uint64_t t0 = ph_now_ns();
        MPI_Rget(buf, PH_DSM_PAGE, MPI_BYTE, peer, 0, PH_DSM_PAGE, MPI_BYTE,
                 c->cwin, &q[0]);
        MPI_Wait(&q[0], &qs[0]);
        uint64_t t1 = ph_now_ns();
        for (int i = 0; i < BATCH; i++)
            MPI_Rget(buf + i * SMALL, SMALL, MPI_BYTE, peer,
                     (MPI_Aint)i * SMALL, SMALL, MPI_BYTE, c->cwin, &q[i]);
        MPI_Waitall(BATCH, q, qs);
        uint64_t t2 = ph_now_ns();
        MPI_Barrier(c->comm);
        uint64_t t3 = ph_now_ns();
        if (round >= 0) {
            tf[round] = t1 - t0;
            td[round] = (t2 - t1) / BATCH;
            ts[round] = t3 - t2;
        }
    }
    free(buf);
    double mine[3] = {median(tf, ROUNDS), median(td, ROUNDS),
                      median(ts, ROUNDS)};
    double agreed[3];
    MPI_Allreduce(mine, agreed, 3, MPI_DOUBLE, MPI_MAX, c->comm);
    out->fetch_ns = agreed[0];
    out->diff_ns = agreed[1];
    out->sync_ns = agreed[2];
}
