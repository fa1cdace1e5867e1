/*
 * migrate.h -- home migration at barriers and the classes of pages: pure
 * functions of a barrier's write notices and per-page state, so that every
 * rank, fed the same notices, computes the same home map (and tests can
 * drive them without MPI).
 *
 * THE RULE (JIAJIA, paper 004 section 4.1).  A page written in a barrier
 * interval by exactly one rank, and by no other, moves its home to that
 * rank at the barrier, unless it moved fewer than `min_intervals` barriers
 * ago (JIAJIA's "predefined threshold" on later migrations: a page two
 * ranks take turns writing moves at most once per min_intervals barriers,
 * not at every one).  Only a rank that holds a valid copy of the page
 * asks for it (a *candidate*: written here, homed elsewhere, copy valid):
 * nobody else wrote the page, so that copy is the page as the interval
 * left it, and a move never transfers data.  The plan is made before the
 * barrier's flush, so at a page's first move the writer does not send its
 * diff either: its copy becomes the master and the old home drops its own
 * (`unsent` below).  A writer whose copy was dropped in the interval (a
 * selective acquire) does not ask; the page stays.
 *
 * THE AGREEMENT.  Every rank contributes to the barrier's MPI_Allgatherv
 * its written pages (the write notices) and, after them, its candidate
 * pages, both as (start, length) ranges.  Every rank then runs
 * ph_dsm_migrate_plan on the same merged notices, the same candidates (in
 * rank order) and its copy of the per-page `moved_at` stamps -- which were
 * updated by the same plans at every earlier barrier -- so every rank gets
 * the same list of moves and the same stamps, without another message.
 *
 * CLASSES (paper 004 section 4.2's read-only and exclusively accessed
 * data).  Every rank keeps, per page, the writers seen in the barriers'
 * notices (none, one rank, many) and in how many intervals it was written
 * (ph_dsm_writers_add, the same on every rank); the ranks that accessed a
 * page (a fault on it, or fetched with one) are counted when its
 * allocation goes (a sum over the ranks).  Then
 *   private        one rank accessed it
 *   read-only      several did, and nobody wrote it, or one rank in one
 *                  interval (its initialisation), or it was declared
 *                  read-only
 *   single-writer  several did, one rank wrote it, in several intervals
 *   shared         several did, two or more ranks wrote it.
 */
#ifndef PH_CLUSTER_MIGRATE_H
#define PH_CLUSTER_MIGRATE_H

#include "cluster/notice.h"

#include <stddef.h>
#include <stdint.h>

typedef struct ph_dsm_migrate_cfg {
    int on;                   /* cluster_migrate */
    uint32_t min_intervals;   /* cluster_migrate_min_intervals, >= 1 */
} ph_dsm_migrate_cfg;

/* May a page last moved at `moved_at` (barrier number + 1; 0 = never)
 * move at barrier `interval`? */
int ph_dsm_migrate_allowed(const ph_dsm_migrate_cfg *cfg, uint32_t interval,
                           uint32_t moved_at);

/* A run of pages whose home moves to rank `to`.  carry: moved by cost
 * (migrate_cost.h): the new home fetches the page unless its copy is
 * valid; 0: JIAJIA's rule, the new home holds the current copy.
 * unsent (JIAJIA's rule, pages that never moved before): the writer keeps
 * its writes -- no diff goes to the old home, which drops its copy.  A
 * page's first move corrects where it was placed, and its old home has no
 * use for it; a page that moved before goes back and forth between ranks
 * that each use it again, so its diff goes, and the old home keeps a
 * current copy (measured: bench/README.md, "Home migration"). */
typedef struct ph_dsm_move {
    uint64_t start, len;
    int to;
    int carry;
    int unsent;
} ph_dsm_move;

/* A growing list of moves. */
typedef struct ph_dsm_moves {
    ph_dsm_move *v;
    size_t n, cap;
} ph_dsm_moves;
/* Page `page` moves to `to`: joins the last move when it continues it
 * (same target, carry and unsent, the next page).  -1 on ENOMEM. */
int ph_dsm_moves_add(ph_dsm_moves *m, uint64_t page, int to, int carry,
                     int unsent);

/* The moves of barrier `interval`.  segs/nsegs: the merged write notices
 * (ph_dsm_notice_merge).  Rank r's candidate ranges are
 * cand[2 displs[r] .. 2 (displs[r] + counts[r])) as (start, length),
 * sorted and disjoint within a rank.  moved_at[0..npages): per page, the
 * stamp of its last move, set to interval + 1 for every page that moves
 * (a page whose stamp was 0 moves unsent).
 * *out (malloc'd, the caller frees; NULL when none) gets the moves in rank
 * order then page order.  Returns their number, or -1/ENOMEM. */
long ph_dsm_migrate_plan(const ph_dsm_seg *segs, size_t nsegs,
                         const uint64_t *cand, const int *counts,
                         const int *displs, int nranks,
                         const ph_dsm_migrate_cfg *cfg, uint32_t interval,
                         uint32_t *moved_at, size_t npages,
                         ph_dsm_move **out);

/* Writers of a page over the run. */
#define PH_DSM_WRITER_NONE (-1)
#define PH_DSM_WRITER_MANY (-2)
/* The writers after an interval in which `nwriters` ranks (the single one:
 * `writer`) wrote the page. */
int32_t ph_dsm_writers_add(int32_t writers, int nwriters, int writer);

enum {
    PH_DSM_CLASS_UNTOUCHED = -1,
    PH_DSM_CLASS_PRIVATE = 0,
    PH_DSM_CLASS_READ_ONLY,
    PH_DSM_CLASS_SINGLE_WRITER,
    PH_DSM_CLASS_SHARED,
    PH_DSM_NCLASSES
};
/* The class of a page `accessors` ranks accessed, with `writers` and
 * `write_intervals` as above; `declared_ro`: in a ph_cluster_readonly
 * range. */
int ph_dsm_page_class(uint32_t accessors, int32_t writers,
                      uint32_t write_intervals, int declared_ro);
const char *ph_dsm_class_name(int cls);

#endif
