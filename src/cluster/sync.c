/*
 * sync.c -- release consistency's synchronisation on the service thread:
 * the cluster part of a barrier, locks, selective acquire/release, and the
 * collective allocation calls (which are synchronisation points too).
 *
 * BARRIER (after the local team has met, see cluster_api.c):
 *   1. one small allgather of a record per rank (ph_dsm_allgather_small:
 *      point-to-point messages): pages written in the interval, dirty
 *      cached pages, and (rank 0) the notice-log head;
 *   2. if anything was written: MPI_Iallgatherv of the written pages as
 *      (start, length) ranges (the write notices), merged into segments
 *      of constant writers (single-writer pages: the whole-page rule, and
 *      home migration; the last exchange's are kept in c->last_segs);
 *   3. flush the dirty pages: a page nobody else wrote goes whole when
 *      more than cluster_diff_whole_share of it changed, others as exact
 *      runs, a page whose home moves to this rank for the first time in
 *      step 6 (JIAJIA's rule) not at all; write-protect the home pages
 *      written (the next write is seen);
 *   4. if anybody flushed: MPI_Ibarrier (every diff is home before anyone
 *      reads);
 *   5. invalidate every cached copy another rank wrote (a page only this
 *      rank wrote stays valid: its copy is the home's now), walking the
 *      shorter of the notices and the cached pages;
 *   6. move the homes that move (migrate.h): after a page's first move
 *      by JIAJIA's rule the old home drops its copy, which lacks the
 *      writes the writer kept;
 *   7. if a rank said in its record that it has pages due to be read in
 *      the next interval (coherence.c, REFRESH): each rank fetches those
 *      it lacks, then MPI_Ibarrier.
 * With nothing written anywhere a barrier is one small allgather.
 *
 * LOCKS.  A ticket lock per lock id at rank id % nranks (slot id /
 * nranks): MPI_Fetch_and_op(SUM) on `next` takes a ticket, the holder
 * polls `serving` (MPI_Fetch_and_op(NO_OP)) with a growing gap while the
 * service thread goes on serving faults and other requests; release
 * flushes the diffs, appends the write notices to the log (notice.h) and
 * adds one to `serving`.  Threads of one rank are serialised locally
 * before they take a ticket (cluster_api.c).
 */
#include "cluster/cluster.h"

#include "base/error.h"
#include "base/log.h"
#include "base/sort.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ph_dsm_req_fail(ph_dsm_req *r, int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->msg, sizeof r->msg, fmt, ap);
    va_end(ap);
    r->ret = -1;
    r->err = err;
}


/* ---- the record every collective call exchanges --------------------- */
/*
 * Every collective call of the cluster layer (barrier, alloc, free,
 * finalize) starts with one allgather of the same 8-number record
 * (ph_dsm_allgather_small): the kind of call, its sequence number among
 * calls of that kind, and six numbers of its own.  Ranks in different
 * calls (one frees while another allocates) therefore meet in the same
 * exchange and every rank sees the mismatch and fails the call with the
 * same message, instead of MPI matching unrelated collectives.
 */
enum { SX_KIND, SX_SEQ, SX_A, SX_N = 8 };
enum { SK_BARRIER = 1, SK_ALLOC, SK_FREE, SK_FINALIZE, SK_READONLY, SK_GANG,
       SK_COUNT };

static const char *kind_name(int64_t k)
{
    switch (k) {
    case SK_BARRIER: return "ph_cluster_barrier";
    case SK_ALLOC: return "ph_cluster_alloc";
    case SK_FREE: return "ph_cluster_free";
    case SK_FINALIZE: return "ph_cluster_finalize";
    case SK_READONLY: return "ph_cluster_readonly";
    case SK_GANG: return "a gang call of the whole team";
    default: return "an unknown call";
    }
}

static uint64_t kind_seq[SK_COUNT];

/* all[] gets nranks records; -1 (r failed) when the kinds differ. */
static int exchange(ph_dsm *c, ph_dsm_req *r, int kind, const int64_t *mine6,
                    int64_t *all, const char *what)
{
    int64_t rec[SX_N];
    rec[SX_KIND] = kind;
    rec[SX_SEQ] = (int64_t)kind_seq[kind]++;
    memcpy(rec + SX_A, mine6, 6 * sizeof *rec);
    ph_dsm_allgather_small(c, rec, all, sizeof rec, what);
    for (int i = 1; i < c->nranks; i++) {
        if (all[(size_t)i * SX_N + SX_KIND] != all[SX_KIND]) {
            char w0[96], w1[96];
            kind_seq[kind]--;           /* the call did not happen */
            ph_dsm_req_fail(r, EPROTO, "%s: %s is in %s while %s is in %s: "
                         "collective calls must match on every rank",
                         kind_name(kind), ph_dsm_who(c, 0, w0, sizeof w0),
                         kind_name(all[SX_KIND]),
                         ph_dsm_who(c, i, w1, sizeof w1),
                         kind_name(all[(size_t)i * SX_N + SX_KIND]));
            return -1;
        }
    }
    return 0;
}

/* ---- page classes ---------------------------------------------------- */

/* Class the pages [p0, p1) of an allocation that goes (free, finalize):
 * how many ranks accessed each (a sum over the ranks of this rank's
 * touched flags, over the span any rank touched) with the writer history
 * every rank has alike (migrate.h).  Collective. */
static void classify(ph_dsm *c, size_t p0, size_t p1)
{
    uint64_t span[2] = {p1, 0}, mine[2];
    for (size_t p = p0; p < p1; p++)
        if (c->pinfo[p].flags & PIF_TOUCHED) {
            if (span[0] == p1)
                span[0] = p;
            span[1] = p + 1;
        }
    /* MIN of the first page and of (p1 - end) */
    mine[0] = span[0];
    mine[1] = p1 - (span[1] > span[0] ? span[1] : p0);
    uint64_t agreed[2];
    MPI_Request q;
    int rc = MPI_Iallreduce(mine, agreed, 2, MPI_UINT64_T, MPI_MIN, c->comm,
                            &q);
    ph_dsm_mpi_check(c, rc, "MPI_Iallreduce (page classes)", -1);
    c->st.bytes_sent += sizeof mine;
    ph_dsm_wait_collective(c, &q, "the page classes of an allocation");
    size_t a = (size_t)agreed[0], e = p1 - (size_t)agreed[1];
    if (a >= e)
        return;
    size_t np = e - a;
    uint32_t *t = malloc(np * sizeof *t), *sum = malloc(np * sizeof *sum);
    if (!t || !sum)
        ph_dsm_fatal(c, "out of memory classing %zu pages", np);
    for (size_t i = 0; i < np; i++)
        t[i] = (c->pinfo[a + i].flags & PIF_TOUCHED) != 0;
    for (size_t done = 0; done < np;) {
        int cnt = np - done > (size_t)INT_MAX ? INT_MAX : (int)(np - done);
        rc = MPI_Iallreduce(t + done, sum + done, cnt, MPI_UINT32_T, MPI_SUM,
                            c->comm, &q);
        ph_dsm_mpi_check(c, rc, "MPI_Iallreduce (page classes)", -1);
        c->st.bytes_sent += (uint64_t)cnt * sizeof *t;
        ph_dsm_wait_collective(c, &q, "the page classes of an allocation");
        done += (size_t)cnt;
    }
    for (size_t i = 0; i < np; i++) {
        const ph_dsm_pinfo *pi = &c->pinfo[a + i];
        int32_t w = pi->writers == 0    ? PH_DSM_WRITER_NONE
                    : pi->writers == -1 ? PH_DSM_WRITER_MANY
                                        : pi->writers - 1;
        int cls = ph_dsm_page_class(sum[i], w, pi->write_ivs,
                                    (pi->flags & PIF_READONLY) != 0);
        if (cls >= 0)
            c->st.pages_class[cls]++;
    }
    free(t);
    free(sum);
}

/* ---- barrier -------------------------------------------------------- */

/* This rank's running costs (migrate_cost.h) in one number of the
 * barrier's record: fetch ns per page in the high 32 bits, diff ns per
 * page in the low (0: no sample yet), saturated. */
static uint64_t cost_pack(const ph_dsm *c)
{
    if (!c->cost.on)
        return 0;
    /* D: the flush of a page's diff and the write fault that made its
     * twin, each once the rank has a sample of both */
    double f = c->cost_fault_ns,
           d = c->cost_diff_ns > 0 && c->cost_twin_ns > 0
                   ? c->cost_diff_ns + c->cost_twin_ns : 0;
    uint64_t fu = f >= 4294967295.0 ? 0xffffffffu : (uint64_t)(f > 0 ? f : 0);
    uint64_t du = d >= 4294967295.0 ? 0xffffffffu : (uint64_t)(d > 0 ? d : 0);
    return fu << 32 | du;
}

/* The ranks' costs from their records (all[r * SX_N + SX_A + 5]): a
 * rank without a sample of a cost is weighed with the largest any rank
 * measured, or with the start-up model when nobody has one. */
static void cost_unpack(const ph_dsm *c, const int64_t *all,
                        ph_dsm_rank_cost *out)
{
    double fmax = 0, dmax = 0;
    for (int r = 0; r < c->nranks; r++) {
        uint64_t v = (uint64_t)all[(size_t)r * SX_N + SX_A + 5];
        out[r].fetch_ns = (double)(v >> 32);
        out[r].diff_ns = (double)(v & 0xffffffffu);
        if (out[r].fetch_ns > fmax)
            fmax = out[r].fetch_ns;
        if (out[r].diff_ns > dmax)
            dmax = out[r].diff_ns;
    }
    for (int r = 0; r < c->nranks; r++) {
        if (!(out[r].fetch_ns > 0))
            out[r].fetch_ns = fmax > 0 ? fmax : c->cost.net.fetch_ns;
        if (!(out[r].diff_ns > 0))
            out[r].diff_ns = dmax > 0 ? dmax : c->cost.net.diff_ns;
    }
}

/* The home every rank knows alike: a first-touch page that never moved
 * has its claim known only to the ranks that touched it (-1 then). */
static int home_of(void *ctx, uint64_t page)
{
    ph_dsm *c = ctx;
    long i = ph_dsm_alloc_of(c, (size_t)page);
    if (i < 0)
        return -1;
    const ph_dsm_alloc *a = c->ranges.r[i].data;
    if (a->pl.policy == PH_POLICY_FIRST_TOUCH && c->moved_at[page] == 0)
        return -1;
    return ph_dsm_home_known(c, (size_t)page);
}

enum { REFRESH_BIT = 48 };

static void barrier(ph_dsm *c, ph_dsm_req *r, int kind)
{
    uint64_t t0 = ph_now_ns();
    int n = c->nranks;
    ph_dsm_confirm_predicted(c);
    size_t ndirty = 0;
    for (size_t i = 0; i < c->dirty.n; i++)
        ndirty += (c->state[c->dirty.v[i]] & PGF_DIRTY) != 0;
    /* 1. this rank's write notices, as ranges: the pages it wrote (faults)
     * and the home pages it no longer tracks (assumed written) */
    ph_dsm_vec all_pages = {0};
    if (n > 1) {                       /* alone: nobody needs notices */
        for (size_t i = 0; i < c->iw.n; i++)
            if (ph_dsm_vec_push(&all_pages, c->iw.v[i]) < 0)
                ph_dsm_fatal(c, "barrier: out of memory");
        for (size_t i = 0; i < c->untracked.n; i++)
            if (ph_dsm_vec_push(&all_pages, c->untracked.v[i]) < 0)
                ph_dsm_fatal(c, "barrier: out of memory");
    }
    if (all_pages.n > 1)
        qsort(all_pages.v, all_pages.n, sizeof *all_pages.v, ph_cmp_u64);
    size_t u = 0;                      /* drop duplicates */
    for (size_t i = 0; i < all_pages.n; i++)
        if (u == 0 || all_pages.v[i] != all_pages.v[u - 1])
            all_pages.v[u++] = all_pages.v[i];
    all_pages.n = u;
    /* room for the notices and, after them, the migration candidates, the
     * cost rule's remote writes without a valid copy and its fetches */
    uint64_t *mine_pairs = malloc(((u ? u : 1) * 6 + 2 * c->fetched.n) *
                                  sizeof *mine_pairs);
    if (!mine_pairs)
        ph_dsm_fatal(c, "barrier: out of memory");
    size_t nranges = ph_dsm_notice_ranges(all_pages.v, u, mine_pairs);
    size_t written_here = u;
    /* the pages this rank wrote, homed elsewhere, whose copy here is valid
     * (migrate.h): the home may move here without moving data */
    size_t ncand = 0, nx = 0;
    if (c->mig.on && n > 1) {
        /* (the cost rule's too: the written pages homed elsewhere without
         * a valid copy, after them in the same array) */
        ph_dsm_vec xs = {0};
        size_t k = 0;
        for (size_t i = 0; i < u; i++) {
            size_t p = (size_t)all_pages.v[i];
            if (ph_dsm_home_known(c, p) == c->rank)
                continue;
            if ((c->state[p] & PGS_MASK) != PGS_INVALID)
                all_pages.v[k++] = p;
            else if (c->cost.on && ph_dsm_vec_push(&xs, p) < 0)
                ph_dsm_fatal(c, "barrier: out of memory");
        }
        ncand = ph_dsm_notice_ranges(all_pages.v, k, mine_pairs + 2 * nranges);
        nx = ph_dsm_notice_ranges(xs.v, xs.n, mine_pairs + 2 * (nranges + ncand));
        ph_dsm_vec_free(&xs);
    }
    ph_dsm_vec_free(&all_pages);
    /* the pages this rank fetched since the last exchange, after those:
     * the cost rule's evidence (migrate_cost.h) */
    size_t nfetch = 0;
    if (c->cost.on && n > 1 && c->fetched.n > 0) {
        if (c->fetched.n > 1)
            qsort(c->fetched.v, c->fetched.n, sizeof *c->fetched.v,
                  ph_cmp_u64);
        nfetch = ph_dsm_notice_ranges(c->fetched.v, c->fetched.n,
                                      mine_pairs + 2 * (nranges + ncand + nx));
    }

    /* candidates and the cost rule's remote writes share a number: both
     * are MPI counts (< 2^31); the dirty count's bit REFRESH_BIT says that
     * this rank has pages due to be refreshed (coherence.c, REFRESH): then
     * every rank meets once more after the refreshes, so that the homes
     * drive progress for the refreshes' gets */
    int64_t mine[6] = {(int64_t)nranges,
                       (int64_t)(ndirty | (uint64_t)ph_dsm_refresh_wanted(c)
                                              << REFRESH_BIT),
                       0,
                       (int64_t)(ncand | (uint64_t)nx << 32), (int64_t)nfetch,
                       (int64_t)cost_pack(c)};
    if (c->rank == 0) {
        /* the log head is in rank 0's own window memory: a local atomic
         * load after MPI_Win_sync (unified memory model) */
        if (!c->nowin)
            MPI_Win_sync(c->cwin);
        mine[2] = __atomic_load_n((int64_t *)((char *)c->cbase +
                                              c->ctl.log_head),
                                  __ATOMIC_SEQ_CST);
    }
    int64_t *all = malloc((size_t)n * SX_N * sizeof *all);
    if (!all)
        ph_dsm_fatal(c, "barrier: out of memory");
    if (exchange(c, r, kind, mine, all, "a barrier") < 0) {
        free(all);
        free(mine_pairs);
        return;
    }
    MPI_Request q;
    int rc;
#define NCAND(i) ((int64_t)((uint64_t)all[(size_t)(i) * SX_N + SX_A + 3] & 0xffffffffu))
#define NX(i) ((int64_t)((uint64_t)all[(size_t)(i) * SX_N + SX_A + 3] >> 32))
    int64_t total = 0, anydirty = 0, totcand = 0, totx = 0, totfetch = 0;
    int anyrefresh = 0;
    for (int i = 0; i < n; i++) {
        uint64_t d = (uint64_t)all[(size_t)i * SX_N + SX_A + 1];
        total += all[(size_t)i * SX_N + SX_A];
        anydirty += (int64_t)(d & ((UINT64_C(1) << REFRESH_BIT) - 1));
        anyrefresh |= (int)(d >> REFRESH_BIT);
        totcand += NCAND(i);
        totx += NX(i);
        totfetch += all[(size_t)i * SX_N + SX_A + 4];
    }
    int carry = 0;                     /* a cost move carries data */
    ph_dsm_move *moves = NULL;
    long nmoves = 0;
    uint64_t head = (uint64_t)all[SX_A + 2];
    ph_dsm_seg *segs = NULL;
    long nsegs = 0;
    ph_dsm_vec marked = {0};
    /* (fetched pages alone do not make an exchange: they wait for the next
     * barrier that has one, or the ranks would pay a collective more at
     * every barrier a program reads in) */
    int exchanged = total > 0;
    if (total > 0) {
        /* 2. everybody's ranges, merged into segments of constant writers */
        int64_t nall = total + totcand + totx + totfetch;
        if (2 * nall > INT_MAX)
            ph_dsm_fatal(c, "barrier: %" PRId64 " write-notice ranges (more "
                      "than an MPI count)", nall);
        int *counts = malloc((size_t)n * sizeof *counts);
        int *displs = malloc((size_t)n * sizeof *displs);
        int *ccounts = malloc((size_t)n * sizeof *ccounts);
        int *cdispls = malloc((size_t)n * sizeof *cdispls);
        int *xcounts = malloc((size_t)n * sizeof *xcounts);
        int *xdispls = malloc((size_t)n * sizeof *xdispls);
        int *fcounts = malloc((size_t)n * sizeof *fcounts);
        int *fdispls = malloc((size_t)n * sizeof *fdispls);
        int *c2 = malloc((size_t)n * sizeof *c2);
        int *d2 = malloc((size_t)n * sizeof *d2);
        uint64_t *pairs = malloc((size_t)nall * 2 * sizeof *pairs);
        segs = malloc((size_t)total * 2 * sizeof *segs);
        if (!counts || !displs || !ccounts || !cdispls || !xcounts ||
            !xdispls || !fcounts || !fdispls || !c2 || !d2 || !pairs || !segs)
            ph_dsm_fatal(c, "barrier: out of memory for %" PRId64 " write-"
                      "notice ranges", total);
        /* rank i sends its notices, its candidates, its remote writes
         * without a copy, its fetched pages */
        int at = 0;
        for (int i = 0; i < n; i++) {
            counts[i] = (int)all[(size_t)i * SX_N + SX_A];
            ccounts[i] = (int)NCAND(i);
            xcounts[i] = (int)NX(i);
            fcounts[i] = (int)all[(size_t)i * SX_N + SX_A + 4];
            displs[i] = at;
            cdispls[i] = at + counts[i];
            xdispls[i] = cdispls[i] + ccounts[i];
            fdispls[i] = xdispls[i] + xcounts[i];
            c2[i] = 2 * (counts[i] + ccounts[i] + xcounts[i] + fcounts[i]);
            d2[i] = 2 * at;
            at += counts[i] + ccounts[i] + xcounts[i] + fcounts[i];
        }
        size_t nmine = nranges + ncand + nx + nfetch;
        rc = MPI_Iallgatherv(mine_pairs, (int)(2 * nmine), MPI_UINT64_T,
                             pairs, c2, d2, MPI_UINT64_T, c->comm, &q);
        ph_dsm_mpi_check(c, rc, "MPI_Iallgatherv (write notices)", -1);
        c->st.bytes_sent += 2 * (uint64_t)nmine * sizeof(uint64_t);
        ph_dsm_wait_collective(c, &q, "the write notices of a barrier");
        nsegs = ph_dsm_notice_merge(pairs, counts, displs, n, segs);
        if (nsegs < 0)
            ph_dsm_fatal(c, "barrier: out of memory merging write notices");
        for (long i = 0; i < nsegs; i++) {
            if (segs[i].nwriters == 1)
                c->st.single_writer_pages += segs[i].len;
            else
                c->st.multi_writer_pages += segs[i].len;
        }
        ph_dsm_writers_note(c, segs, (size_t)nsegs);
        /* the moves: the same inputs on every rank, the same plan */
        if (totcand > 0) {
            nmoves = ph_dsm_migrate_plan(segs, (size_t)nsegs, pairs, ccounts,
                                         cdispls, n, &c->mig,
                                         (uint32_t)c->st.barriers, c->moved_at,
                                         c->npages, &moves);
            if (nmoves < 0)
                ph_dsm_fatal(c, "barrier: out of memory planning home "
                             "migrations");
        }
        /* ... and by cost (after JIAJIA's: the pages it moved lose their
         * evidence), appended */
        if (c->cost.on) {
            ph_dsm_move *cm = NULL;
            ph_dsm_cost_counts cc = {0};
            ph_dsm_rank_cost *rcost = malloc((size_t)n * sizeof *rcost);
            if (!rcost)
                ph_dsm_fatal(c, "barrier: out of memory");
            cost_unpack(c, all, rcost);
            ph_dsm_cost_in in = {
                .segs = segs, .nsegs = (size_t)nsegs,
                .prev = c->last_segs, .nprev = c->last_nsegs,
                .prev_at = c->last_segs_at,
                .pairs = pairs,
                .ccounts = ccounts, .cdispls = cdispls,
                .xcounts = xcounts, .xdispls = xdispls,
                .fcounts = fcounts, .fdispls = fdispls,
                .nranks = n, .rc = rcost, .home = home_of, .home_ctx = c};
            long ncm = ph_dsm_migrate_cost_plan(
                &in, &c->mig, &c->cost, (uint32_t)c->st.barriers, c->moved_at,
                c->evid, c->npages, &cm, &cc);
            free(rcost);
            if (ncm < 0)
                ph_dsm_fatal(c, "barrier: out of memory planning home "
                             "migrations by cost");
            c->st.cost_weighed += cc.pages;
            c->st.cost_frozen += cc.frozen;
            if (ncm > 0) {
                ph_dsm_move *both = realloc(moves, (size_t)(nmoves + ncm) *
                                                       sizeof *both);
                if (!both)
                    ph_dsm_fatal(c, "barrier: out of memory planning home "
                                 "migrations by cost");
                memcpy(both + nmoves, cm, (size_t)ncm * sizeof *cm);
                moves = both;
                nmoves += ncm;
                carry = 1;
            }
            free(cm);
        }
        /* this rank's dirty pages that others wrote too: exact diffs */
        for (size_t i = 0; i < c->dirty.n; i++) {
            uint64_t p = c->dirty.v[i];
            if (!(c->state[p] & PGF_DIRTY))
                continue;
            const ph_dsm_seg *sg = ph_dsm_seg_find(segs, (size_t)nsegs, p);
            if (sg && sg->nwriters > 1) {
                c->state[p] |= PGF_TMP;
                if (ph_dsm_vec_push(&marked, p) < 0)
                    ph_dsm_fatal(c, "barrier: out of memory");
            }
        }
        free(counts);
        free(displs);
        free(ccounts);
        free(cdispls);
#undef NCAND
#undef NX
        free(xcounts);
        free(xdispls);
        free(fcounts);
        free(fdispls);
        free(c2);
        free(d2);
        free(pairs);
    }
    free(mine_pairs);
    /* 3. diffs home, home pages write-protected again; not the diffs of
     * pages whose home moves here unsent in step 6 (migrate.h): this copy
     * becomes the master, the old home drops its own */
    if (nmoves > 0)
        ph_dsm_migrate_settle(c, moves, (size_t)nmoves);
    uint64_t tf = ph_now_ns(), sent = c->st.diffs_sent + c->st.whole_pages_sent;
    ph_dsm_flush_dirty(c, 0, c->npages, 1);
    sent = c->st.diffs_sent + c->st.whole_pages_sent - sent;
    if (sent > 0 && c->cost.on)       /* the cost rule's D of this rank */
        ph_dsm_cost_mean(&c->cost_diff_ns,
                         (double)(ph_now_ns() - tf) / (double)sent);
    for (size_t i = 0; i < marked.n; i++)
        c->state[marked.v[i]] &= (uint8_t)~PGF_TMP;
    ph_dsm_vec_free(&marked);
    if (nsegs > 0)
        ph_dsm_home_foreign(c, segs, (size_t)nsegs);
    ph_dsm_home_barrier(c, (uint32_t)c->st.barriers);
    /* 4. every diff has landed before anybody reads */
    if (anydirty > 0) {
        rc = MPI_Ibarrier(c->comm, &q);
        ph_dsm_mpi_check(c, rc, "MPI_Ibarrier", -1);
        ph_dsm_wait_collective(c, &q, "a barrier");
    }
    /* 5. drop the copies another rank wrote: walk whichever is shorter,
     * the pages others wrote or the pages cached here */
    if (nsegs > 0) {
        uint64_t foreign = 0;
        for (long i = 0; i < nsegs; i++)
            if (segs[i].nwriters > 1 || segs[i].writer != c->rank)
                foreign += segs[i].len;
        ph_dsm_vec inval = {0};
        if (foreign <= c->cached.n) {
            for (long i = 0; i < nsegs; i++) {
                if (segs[i].nwriters == 1 && segs[i].writer == c->rank)
                    continue;
                for (uint64_t p = segs[i].start;
                     p < segs[i].start + segs[i].len && p < c->npages; p++)
                    if ((c->state[p] & PGS_MASK) != PGS_INVALID &&
                        (c->state[p] & PGF_CACHED))
                        if (ph_dsm_vec_push(&inval, p) < 0)
                            ph_dsm_fatal(c, "barrier: out of memory");
            }
        } else {
            for (size_t i = 0; i < c->cached.n; i++) {
                uint64_t p = c->cached.v[i];
                if ((c->state[p] & PGS_MASK) == PGS_INVALID ||
                    !(c->state[p] & PGF_CACHED))
                    continue;
                const ph_dsm_seg *sg = ph_dsm_seg_find(segs, (size_t)nsegs, p);
                if (sg && (sg->nwriters > 1 || sg->writer != c->rank))
                    if (ph_dsm_vec_push(&inval, p) < 0)
                        ph_dsm_fatal(c, "barrier: out of memory");
            }
        }
        ph_dsm_invalidate_pages(c, inval.v, inval.n);
        ph_dsm_vec_free(&inval);
    }
    /* 6. the homes move (every diff landed, stale copies dropped); a new
     * home by cost fetches the page it lacks, and nobody goes on before
     * it has (the old home changes nothing, the others read the new) */
    if (nmoves > 0)
        ph_dsm_migrate_apply(c, moves, (size_t)nmoves);
    free(moves);
    if (carry) {
        rc = MPI_Ibarrier(c->comm, &q);
        ph_dsm_mpi_check(c, rc, "MPI_Ibarrier", -1);
        ph_dsm_wait_collective(c, &q, "a barrier's home moves");
    }
    /* 7. fetch the copies this rank lacks and reads at every interval or
     * every other one (coherence.c, REFRESH), while the homes wait in one
     * more meeting */
    if (anyrefresh && exchanged && kind != SK_FINALIZE) {
        ph_dsm_refresh(c);
        rc = MPI_Ibarrier(c->comm, &q);
        ph_dsm_mpi_check(c, rc, "MPI_Ibarrier", -1);
        ph_dsm_wait_collective(c, &q, "a barrier's refreshes");
    }
    /* the interval's writers, for the next issue's home migration */
    if (exchanged) {
        /* the notices of the last exchange: what the cost rule calls
         * written before (its fetched pages wait for an exchange too) */
        free(c->last_segs);
        c->last_segs = segs;
        c->last_nsegs = nsegs > 0 ? (size_t)nsegs : 0;
        c->last_segs_at = (uint32_t)c->st.barriers + 1;
    } else {
        free(segs);
    }
    c->st.cur.written = written_here;
    /* a new interval */
    for (size_t i = 0; i < c->iw.n; i++)
        c->state[c->iw.v[i]] &= (uint8_t)~PGF_IW;
    for (size_t i = 0; i < c->np.n; i++)
        c->state[c->np.v[i]] &= (uint8_t)~PGF_NP;
    if (exchanged) {
        for (size_t i = 0; i < c->fetched.n; i++)
            c->pinfo[c->fetched.v[i]].flags &= (uint8_t)~PIF_FETCHED;
        c->fetched.n = 0;
    }
    c->iw.n = 0;
    c->np.n = 0;
    if (head > c->log_seen)
        c->log_seen = head;
    /* The windows' public and private copies meet again (MPI_Win_sync)
     * when data may have been put into this rank's memory: a page written
     * anywhere in the interval (under a lock or not: its writer's notice
     * counts in `total`), a diff of this barrier, a home moved with its
     * data.  After an interval in which nobody wrote, nothing was put, and
     * a memory barrier is all the ordering needed; Open MPI's
     * MPI_Win_sync drives progress, which yields the CPU when ranks
     * outnumber cores (a quarter of an empty barrier's time at 4 ranks on
     * 2 CPUs, bench/README.md). */
    if (total > 0 || anydirty > 0 || nmoves > 0)
        ph_dsm_win_sync(c);
    else
        atomic_thread_fence(memory_order_seq_cst);
    free(all);
    c->st.barriers++;
    if (kind == SK_FINALIZE)
        for (size_t i = 0; i < c->ranges.n; i++) {
            classify(c, c->ranges.r[i].start,
                     c->ranges.r[i].start + c->ranges.r[i].npages);
            ph_dsm_stats_alloc_end(c, c->ranges.r[i].data, 2);
        }
    uint64_t dt = ph_now_ns() - t0;
    c->st.barrier_ns += dt;
    c->st.cur.ns = dt;
    ph_dsm_stats_interval_end(c);
    r->ret = 0;
}

void ph_dsm_do_barrier(ph_dsm *c, ph_dsm_req *r)
{
    barrier(c, r, r->op == PH_DSM_REQ_FINALIZE ? SK_FINALIZE : SK_BARRIER);
}

void ph_dsm_gang_barrier(ph_dsm *c, ph_dsm_req *r)
{
    barrier(c, r, SK_GANG);
    if (r->ret == 0)
        c->st.gang_barriers++;
}

/* ---- the notice log ------------------------------------------------- */

static void append_notices(ph_dsm *c)
{
    size_t n = c->np.n;
    if (n == 0)
        return;
    uint64_t size = c->log_size;
    uint64_t cnt = n > size / 4 ? 1 : n;
    uint64_t h = (uint64_t)ph_dsm_fop(c, 0, c->ctl.log_head, (int64_t)cnt,
                                   MPI_SUM, "the notice log");
    for (uint64_t i = 0; i < cnt; i++)
        c->logbuf[i] = ph_dsm_notice_encode(h + i, size, c->rank,
                                         cnt == 1 && n > 1
                                             ? PH_DSM_NOTICE_ALL
                                             : c->np.v[i]);
    uint64_t idx = h % size;
    uint64_t first = size - idx < cnt ? size - idx : cnt;
    ph_dsm_put_atomic(c, 0, c->ctl.log + idx * 8, c->logbuf, (int)first,
                   "the notice log");
    if (first < cnt)
        ph_dsm_put_atomic(c, 0, c->ctl.log, c->logbuf + first,
                       (int)(cnt - first), "the notice log");
    ph_dsm_ctl_flush(c, 0, "the notice log");
    c->st.notices_logged += cnt;
    for (size_t i = 0; i < n; i++)
        c->state[c->np.v[i]] &= (uint8_t)~PGF_NP;
    c->np.n = 0;
}

typedef struct notice_ctx {
    ph_dsm *c;
    ph_dsm_vec pages;
    int all;
} notice_ctx;

static void on_notice(void *arg, uint64_t page)
{
    notice_ctx *x = arg;
    if (page == PH_DSM_NOTICE_ALL) {
        x->all = 1;
        return;
    }
    if (page >= x->c->npages)
        return;
    ph_dsm_pristine_mark(x->c, page, 1, 0);
    uint8_t s = x->c->state[page];
    if ((s & PGS_MASK) != PGS_INVALID && (s & PGF_CACHED))
        if (ph_dsm_vec_push(&x->pages, page) < 0)
            ph_dsm_fatal(x->c, "out of memory reading write notices");
}

void ph_dsm_read_notices(ph_dsm *c)
{
    uint64_t head = (uint64_t)ph_dsm_fop(c, 0, c->ctl.log_head, 0, MPI_NO_OP,
                                      "the notice log");
    uint64_t from = c->log_seen;
    if (head <= from)
        return;
    ph_dsm_notice_span span;
    if (ph_dsm_notice_plan(from, head, c->log_size, &span)) {
        ph_dsm_invalidate_all(c);
        c->log_seen = head;
        c->st.notice_log_wraps++;
        return;
    }
    uint64_t k = 0;
    for (int sg = 0; sg < span.nseg; sg++) {
        ph_dsm_get_atomic(c, 0, c->ctl.log + span.ring_index[sg] * 8,
                       c->logbuf + k, (int)span.count[sg], "the notice log");
        k += span.count[sg];
    }
    ph_dsm_ctl_flush(c, 0, "the notice log");
    notice_ctx x = {.c = c};
    uint64_t pos = ph_dsm_notice_scan(c->logbuf, from, head, c->log_size,
                                   c->rank, on_notice, &x);
    c->st.notices_read += head - from;
    if (x.all)
        ph_dsm_invalidate_all(c);
    else
        ph_dsm_invalidate_pages(c, x.pages.v, x.pages.n);
    ph_dsm_vec_free(&x.pages);
    c->log_seen = pos;
}

/* ---- locks ---------------------------------------------------------- */

static int lock_home(const ph_dsm *c, int id)
{
    return id % c->nranks;
}

static size_t lock_disp(const ph_dsm *c, int id)
{
    return c->ctl.locks + (size_t)(id / c->nranks) * 16;
}

void ph_dsm_do_lock(ph_dsm *c, ph_dsm_req *r)
{
    r->t0_ns = ph_now_ns();
    r->ticket = ph_dsm_fop(c, lock_home(c, r->arg), lock_disp(c, r->arg), 1,
                        MPI_SUM, "a lock ticket");
    r->poll_gap_ns = 500;
    r->next_poll_ns = 0;
}

int ph_dsm_poll_lock(ph_dsm *c, ph_dsm_req *r)
{
    int64_t serving = ph_dsm_fop(c, lock_home(c, r->arg),
                              lock_disp(c, r->arg) + 8, 0, MPI_NO_OP,
                              "a lock");
    if (serving == r->ticket) {
        ph_dsm_read_notices(c);
        c->st.lock_acquires++;
        c->st.lock_ns += ph_now_ns() - r->t0_ns;
        r->ret = 0;
        return 1;
    }
    r->next_poll_ns = ph_now_ns() + r->poll_gap_ns;
    if (r->poll_gap_ns < 16000)
        r->poll_gap_ns *= 2;
    return 0;
}

void ph_dsm_release_all(ph_dsm *c)
{
    ph_dsm_flush_dirty(c, 0, c->npages, 0);
    ph_dsm_home_release(c, (uint32_t)c->st.barriers);
    append_notices(c);
}

void ph_dsm_do_unlock(ph_dsm *c, ph_dsm_req *r)
{
    uint64_t t0 = ph_now_ns();
    ph_dsm_release_all(c);
    ph_dsm_fop(c, lock_home(c, r->arg), lock_disp(c, r->arg) + 8, 1, MPI_SUM,
            "a lock release");
    c->st.lock_releases++;
    c->st.release_ns += ph_now_ns() - t0;
    r->ret = 0;
}

/* ---- selective acquire / release ------------------------------------ */

/* [p0, p1) of a byte range, checked to be inside allocations. */
static int range_pages(ph_dsm *c, ph_dsm_req *r, const char *who, size_t *p0,
                       size_t *p1)
{
    uintptr_t a = (uintptr_t)r->addr, base = (uintptr_t)c->arena;
    if (r->bytes == 0) {
        *p0 = *p1 = 0;
        return 0;
    }
    if (a < base || a - base >= c->arena_bytes ||
        r->bytes > c->arena_bytes - (a - base)) {
        ph_dsm_req_fail(r, EINVAL, "%s: %p (%zu bytes) is not shared memory "
                     "(the arena is %p-%p)", who, r->addr, r->bytes,
                     (void *)c->arena,
                     (void *)(c->arena + c->arena_bytes));
        return -1;
    }
    size_t q0 = (a - base) >> PH_DSM_PAGE_SHIFT;
    size_t q1 = ((a - base) + r->bytes + PH_DSM_PAGE - 1) >> PH_DSM_PAGE_SHIFT;
    for (size_t p = q0; p < q1;) {
        long i = ph_dsm_alloc_of(c, p);
        if (i < 0) {
            ph_dsm_req_fail(r, EINVAL, "%s: %p (%zu bytes) is not inside "
                         "memory from ph_cluster_alloc (page at %p is not "
                         "allocated)", who, r->addr, r->bytes,
                         (void *)(c->arena + p * PH_DSM_PAGE));
            return -1;
        }
        p = c->ranges.r[i].start + c->ranges.r[i].npages;
    }
    *p0 = q0;
    *p1 = q1;
    return 0;
}

void ph_dsm_do_acquire(ph_dsm *c, ph_dsm_req *r)
{
    size_t p0, p1;
    if (range_pages(c, r, "ph_cluster_acquire", &p0, &p1) < 0)
        return;
    ph_dsm_invalidate_range(c, p0, p1);
    c->st.selective_acquires++;
    r->ret = 0;
}

void ph_dsm_do_release(ph_dsm *c, ph_dsm_req *r)
{
    size_t p0, p1;
    if (range_pages(c, r, "ph_cluster_release", &p0, &p1) < 0)
        return;
    uint64_t t0 = ph_now_ns();
    ph_dsm_flush_dirty(c, p0, p1, 0);
    c->st.selective_releases++;
    c->st.release_ns += ph_now_ns() - t0;
    r->ret = 0;
}

/* ---- collective allocation ------------------------------------------ */

/* the six numbers an allocation exchanges (after kind and sequence) */
enum { A_BYTES, A_HASH, A_VALID, A_POLICY, A_K, A_NODE };
#define AV(rec, i, f) ((rec)[(size_t)(i) * SX_N + SX_A + (f)])
#define ASEQ(rec, i) ((rec)[(size_t)(i) * SX_N + SX_SEQ])

static void describe_alloc(const int64_t *rec, int i, char *buf, size_t len)
{
    if (!AV(rec, i, A_VALID)) {
        snprintf(buf, len, "an invalid placement");
        return;
    }
    switch ((int)AV(rec, i, A_POLICY)) {
    case PH_POLICY_FIRST_TOUCH:
        snprintf(buf, len, "first-touch");
        break;
    case PH_POLICY_CYCLIC:
        snprintf(buf, len, "cyclic:%" PRId64, AV(rec, i, A_K));
        break;
    case PH_POLICY_BLOCK:
        snprintf(buf, len, "block");
        break;
    case PH_POLICY_RANDOM:
        snprintf(buf, len, "random");
        break;
    case PH_POLICY_SINGLE_NODE:
        snprintf(buf, len, "node:%" PRId64, AV(rec, i, A_NODE));
        break;
    default:
        snprintf(buf, len, "policy %" PRId64, AV(rec, i, A_POLICY));
    }
}

static void fmt_bytes(size_t b, char *buf, size_t len)
{
    if (b >= ((size_t)1 << 30) && b % ((size_t)1 << 30) == 0)
        snprintf(buf, len, "%zu GiB", b >> 30);
    else if (b >= ((size_t)1 << 20) && b % ((size_t)1 << 20) == 0)
        snprintf(buf, len, "%zu MiB", b >> 20);
    else
        snprintf(buf, len, "%zu bytes", b);
}

void ph_dsm_do_alloc(ph_dsm *c, ph_dsm_req *r)
{
    int n = c->nranks;
    const ph_dsm_placement *pl = r->pl;
    int64_t mine[6] = {0};
    mine[A_BYTES] = (int64_t)r->bytes;
    mine[A_VALID] = pl != NULL;
    if (pl) {
        mine[A_HASH] = (int64_t)ph_dsm_placement_hash(pl);
        mine[A_POLICY] = pl->policy;
        mine[A_K] = (int64_t)pl->block_pages;
        mine[A_NODE] = pl->node;
    }
    int64_t *rec = malloc((size_t)n * SX_N * sizeof *rec);
    if (!rec)
        ph_dsm_fatal(c, "ph_cluster_alloc: out of memory");
    if (exchange(c, r, SK_ALLOC, mine, rec, "a collective allocation") <
        0) {
        free(rec);
        return;
    }
    /* every rank sees the same table, so every rank decides alike */
    if (!AV(rec, c->rank, A_VALID)) {
        r->ret = -1;                  /* the message set by the caller */
        r->err = EINVAL;
        free(rec);
        return;
    }
    for (int i = 0; i < n; i++) {
        if (!AV(rec, i, A_VALID)) {
            {
                ph_dsm_req_fail(r, EINVAL, "ph_cluster_alloc: rank %d refused "
                             "the placement of collective allocation #%"
                             PRId64 " (see its message)", i, ASEQ(rec, i));
            }
            free(rec);
            return;
        }
    }
    for (int i = 1; i < n; i++) {
        if (ASEQ(rec, i) != ASEQ(rec, 0) ||
            AV(rec, i, A_BYTES) != AV(rec, 0, A_BYTES) ||
            AV(rec, i, A_HASH) != AV(rec, 0, A_HASH)) {
            char p0[48], p1[48], b0[32], b1[32], w0[96], w1[96];
            describe_alloc(rec, 0, p0, sizeof p0);
            describe_alloc(rec, i, p1, sizeof p1);
            fmt_bytes((size_t)AV(rec, 0, A_BYTES), b0, sizeof b0);
            fmt_bytes((size_t)AV(rec, i, A_BYTES), b1, sizeof b1);
            ph_dsm_req_fail(r, EINVAL, "ph_cluster_alloc: the ranks disagree "
                         "on a collective allocation: %s asks %s (%s) as "
                         "allocation #%" PRId64 ", %s asks %s (%s) as "
                         "allocation #%" PRId64 " (every rank must allocate "
                         "the same sizes in the same order)",
                         ph_dsm_who(c, 0, w0, sizeof w0), b0, p0, ASEQ(rec, 0),
                         ph_dsm_who(c, i, w1, sizeof w1), b1, p1, ASEQ(rec, i));
            free(rec);
            return;
        }
    }
    uint64_t seq = (uint64_t)ASEQ(rec, 0);
    free(rec);
    if (r->bytes == 0) {
        ph_dsm_req_fail(r, EINVAL, "ph_cluster_alloc: 0 bytes");
        return;
    }
    size_t npages = (r->bytes + PH_DSM_PAGE - 1) >> PH_DSM_PAGE_SHIFT;
    if (r->bytes > c->arena_bytes)
        npages = c->npages + 1;          /* cannot fit; no overflow */
    ph_dsm_alloc *a = calloc(1, sizeof *a);
    if (!a) {
        ph_dsm_req_fail(r, ENOMEM, "ph_cluster_alloc: out of memory");
        return;
    }
    size_t start;
    if (ph_dsm_ranges_add(&c->ranges, npages, a, &start) < 0) {
        char b[32], ab[32];
        fmt_bytes(r->bytes, b, sizeof b);
        fmt_bytes(c->arena_bytes, ab, sizeof ab);
        ph_dsm_req_fail(r, ENOMEM, "ph_cluster_alloc: %s do not fit in the "
                     "shared arena (%s, %zu pages in use, the largest free "
                     "range is %zu pages): raise cluster_arena_size "
                     "(PAGEHOME_CLUSTER_ARENA_SIZE)", b, ab,
                     c->ranges.used_pages,
                     ph_dsm_ranges_largest_gap(&c->ranges));
        free(a);
        return;
    }
    a->start = start;
    a->npages = npages;
    a->bytes = r->bytes;
    a->seq = seq;
    a->pl = *pl;                      /* takes the rank list */
    c->last_alloc = -1;
    if (c->fops->enable(c, start, npages, 1) < 0) {
        ph_dsm_req_fail(r, errno, "ph_cluster_alloc: %s", ph_last_error());
        long i = ph_dsm_ranges_find_start(&c->ranges, start);
        if (i >= 0)
            ph_dsm_ranges_remove(&c->ranges, (size_t)i);
        a->pl.ranks = NULL;          /* the caller still owns it */
        free(a);
        return;
    }
    ph_dsm_live_mark(c, start, npages, 1);
    /* zeroes on every rank (a fresh memfd, or punched by the free) */
    if (c->pristine_on && c->nranks > 1)
        ph_dsm_pristine_mark(c, start, npages, 1);
    c->st.allocs++;
    ph_dsm_stats_alloc(c, a);
    atomic_fetch_add(&c->used_bytes, npages * PH_DSM_PAGE);
    r->result = c->arena + start * PH_DSM_PAGE;
    r->ret = 0;
}

void ph_dsm_do_free(ph_dsm *c, ph_dsm_req *r)
{
    int n = c->nranks;
    uintptr_t a = (uintptr_t)r->addr, base = (uintptr_t)c->arena;
    long idx = -1;
    if (a >= base && a - base < c->arena_bytes &&
        ((a - base) & (PH_DSM_PAGE - 1)) == 0)
        idx = ph_dsm_ranges_find_start(&c->ranges,
                                    (a - base) >> PH_DSM_PAGE_SHIFT);
    int64_t mine[6] = {idx < 0 ? -1 : (int64_t)((a - base) >> PH_DSM_PAGE_SHIFT),
                       0, 0, 0, 0, 0};
    int64_t *rec = malloc((size_t)n * SX_N * sizeof *rec);
    if (!rec)
        ph_dsm_fatal(c, "ph_cluster_free: out of memory");
    if (exchange(c, r, SK_FREE, mine, rec, "a collective free") < 0) {
        free(rec);
        return;
    }
    c->st.frees++;
    for (int i = 0; i < n; i++) {
        int64_t pg = rec[(size_t)i * SX_N + SX_A];
        if (pg < 0) {
            if (i == c->rank)
                ph_dsm_req_fail(r, EINVAL, "ph_cluster_free: %p was not "
                             "returned by ph_cluster_alloc (or was freed "
                             "already)", r->addr);
            else
                ph_dsm_req_fail(r, EINVAL, "ph_cluster_free: rank %d passed a "
                             "pointer that ph_cluster_alloc did not return",
                             i);
            free(rec);
            return;
        }
        if (pg != rec[SX_A] || ASEQ(rec, i) != ASEQ(rec, 0)) {
            ph_dsm_req_fail(r, EINVAL, "ph_cluster_free: the ranks disagree: "
                         "rank 0 frees arena page %" PRId64 " as free #%"
                         PRId64 ", rank %d frees page %" PRId64 " as free #%"
                         PRId64, rec[SX_A], ASEQ(rec, 0), i, pg,
                         ASEQ(rec, i));
            free(rec);
            return;
        }
    }
    free(rec);
    MPI_Request q;
    int rc;
    ph_dsm_alloc *al = c->ranges.r[idx].data;
    size_t p0 = al->start, p1 = al->start + al->npages;
    classify(c, p0, p1);
    ph_dsm_stats_alloc_end(c, al, 1);
    ph_dsm_forget_range(c, p0, p1);
    atomic_fetch_sub(&c->used_bytes, (p1 - p0) * PH_DSM_PAGE);
    /* this rank's first-touch claim words of the range back to zero */
    size_t me = (size_t)c->rank, nr = (size_t)n;
    size_t first = p0 + ((me + nr - p0 % nr) % nr);
    if (first < p1) {
        size_t s0 = first / nr, s1 = (p1 - 1 - me) / nr + 1;
        memset((char *)c->cbase + c->ctl.dir + s0 * 8, 0, (s1 - s0) * 8);
    }
    ph_dsm_win_sync(c);
    ph_dsm_ranges_remove(&c->ranges, (size_t)idx);
    c->last_alloc = -1;
    ph_dsm_placement_release(&al->pl);
    free(al);
    /* nobody reuses the range before everybody forgot it */
    rc = MPI_Ibarrier(c->comm, &q);
    ph_dsm_mpi_check(c, rc, "MPI_Ibarrier (ph_cluster_free)", -1);
    ph_dsm_wait_collective(c, &q, "a collective free");
    r->ret = 0;
}

/* ---- read-only ranges ------------------------------------------------ */

void ph_dsm_do_readonly(ph_dsm *c, ph_dsm_req *r)
{
    int n = c->nranks;
    size_t p0 = 0, p1 = 0;
    /* checked here, answered together: every rank fails alike */
    int ok = r->addr != NULL && r->bytes > 0 &&
             range_pages(c, r, "ph_cluster_readonly", &p0, &p1) == 0;
    if (!ok && r->ret == 0)
        ph_dsm_req_fail(r, EINVAL, "ph_cluster_readonly: %s",
                        r->addr ? "0 bytes" : "NULL address");
    char mymsg[256];
    snprintf(mymsg, sizeof mymsg, "%s", r->msg);
    int64_t mine[6] = {ok ? (int64_t)p0 : -1, ok ? (int64_t)p1 : -1, 0, 0, 0,
                       0};
    int64_t *rec = malloc((size_t)n * SX_N * sizeof *rec);
    if (!rec)
        ph_dsm_fatal(c, "ph_cluster_readonly: out of memory");
    r->ret = 0;
    if (exchange(c, r, SK_READONLY, mine, rec, "ph_cluster_readonly") < 0) {
        free(rec);
        return;
    }
    if (!ok) {                         /* our own message first */
        ph_dsm_req_fail(r, EINVAL, "%s", mymsg);
        free(rec);
        return;
    }
    for (int i = 0; i < n; i++) {
        int64_t a = rec[(size_t)i * SX_N + SX_A];
        int64_t b = rec[(size_t)i * SX_N + SX_A + 1];
        if (a < 0) {
            ph_dsm_req_fail(r, EINVAL, "ph_cluster_readonly: rank %d passed "
                            "a range that is not inside memory from "
                            "ph_cluster_alloc", i);
            free(rec);
            return;
        }
        if (a != rec[SX_A] || b != rec[SX_A + 1]) {
            ph_dsm_req_fail(r, EINVAL, "ph_cluster_readonly: the ranks "
                            "disagree: rank 0 declares arena pages %" PRId64
                            "-%" PRId64 ", rank %d pages %" PRId64 "-%"
                            PRId64 " (a collective call: the same range on "
                            "every rank)", rec[SX_A], rec[SX_A + 1] - 1, i,
                            a, b - 1);
            free(rec);
            return;
        }
    }
    free(rec);
    /* what was written before is home and noticed; then the mark */
    barrier(c, r, SK_BARRIER);
    if (r->ret < 0)
        return;
    ph_dsm_readonly_mark(c, p0, p1);
    r->ret = 0;
}

/* ---- home queries --------------------------------------------------- */

void ph_dsm_do_homes(ph_dsm *c, ph_dsm_req *r)
{
    uintptr_t a = (uintptr_t)r->addr, base = (uintptr_t)c->arena;
    if (a < base || a - base >= c->arena_bytes) {
        for (size_t i = 0; i < r->bytes; i++)
            r->status[i] = -EINVAL;
        r->ret = (int)r->bytes;
        return;
    }
    size_t p0 = (a - base) >> PH_DSM_PAGE_SHIFT;
    size_t np = r->bytes;                  /* pages, set by the caller */
    int missing = 0, notdone = 0;
    for (size_t i = 0; i < np; i++) {
        size_t p = p0 + i;
        int h = p < c->npages ? ph_dsm_home_known(c, p) : -1;
        if (h == -1) {
            r->status[i] = -EINVAL;
            notdone++;
        } else if (h == PH_DSM_HOME_UNCLAIMED) {
            r->status[i] = -ENOENT;
            missing = 1;
        } else {
            r->status[i] = h;
        }
    }
    if (missing) {
        /* ask the directory: one atomic read per directory rank (its
         * slots for a contiguous page range are contiguous) */
        int n = c->nranks;
        int64_t *words = malloc((np / (size_t)n + 2) * sizeof *words);
        if (!words)
            ph_dsm_fatal(c, "out of memory");
        for (int d = 0; d < n; d++) {
            size_t first = p0 + (((size_t)d + (size_t)n - p0 % (size_t)n) %
                                 (size_t)n);
            if (first >= p0 + np)
                continue;
            size_t s0 = first / (size_t)n;
            size_t s1 = (p0 + np - 1 - (size_t)d) / (size_t)n + 1;
            int cnt = (int)(s1 - s0);
            int need = 0;
            for (size_t p = first; p < p0 + np; p += (size_t)n)
                need |= r->status[p - p0] == -ENOENT;
            if (!need)
                continue;
            ph_dsm_get_atomic(c, d, c->ctl.dir + s0 * 8, (uint64_t *)words, cnt,
                           "a first-touch directory read");
            ph_dsm_ctl_flush(c, d, "a first-touch directory read");
            for (size_t p = first; p < p0 + np; p += (size_t)n) {
                if (r->status[p - p0] != -ENOENT)
                    continue;
                int64_t t;
                int h;
                ph_dsm_claim_decode(words[p / (size_t)n - s0], &t, &h);
                if (h >= 0) {
                    r->status[p - p0] = h;
                    c->home_ovr[p] = h + 1;
                }
            }
        }
        free(words);
        for (size_t i = 0; i < np; i++)
            notdone += r->status[i] == -ENOENT;
    }
    r->ret = notdone;
}
