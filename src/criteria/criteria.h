/*
 * criteria.h -- the UPMlib migration criteria as pure functions.
 *
 * Every function here is a pure function of counts and state: no globals,
 * no clock, no OS, no allocation.  The engine (src/engine/) owns the state
 * and calls these; tests drive them directly with made-up counts.
 * Node arguments are node *indexes* (0..n-1), not OS node numbers.
 *
 * The equations are those of Nikolopoulos et al., "A case for user-level
 * dynamic page migration" (ICS 2000), section 3, and "Transparent data
 * distribution in OpenMP with UPMlib" (WOMPAT 2000 / IWOMP), section 2.2:
 *
 *   competitive (eq. 1, 2):  migrate from home h to node i when
 *       racc(i) * rc(i,h)  >  (ru(i,h) / l) * factor * lacc * l  +  ml
 *     where rc(i,h) = ru(i,h) + contention_ns * c(h)   (contended latency)
 *           c(h)    = number of nodes with more accesses than h
 *           ru(i,h) = uncontended latency from node i to memory on h
 *           l       = uncontended local latency on h (ru(h,h))
 *           factor  = the area's selectiveness factor (1 at start,
 *                     raised by self-tuning)
 *           ml      = migration cost in ns (0 in the optimistic variant)
 *     Among qualifying nodes, the one with the highest
 *     racc(i)*rc(i,h) / (lacc*l) wins (lacc == 0: the highest
 *     racc(i)*rc(i,h)).
 *   predictive (eq. 3):  for a node i that gained a migrated thread,
 *       racc(i, t) > racc(i, t-1)  and  lacc(t) < lacc(t-1)
 *     among qualifying nodes, the one with the most accesses in t wins.
 *   ping-pong (3.3):  a page chosen to move back to the node it left at
 *     its previous migration freezes instead of moving; frozen pages melt
 *     after melt_iters iterations.
 *   self-tuning (3.4):  when the area's estimated maximum remote latency
 *     grows between invocations, factor += step (up to factor_max).
 *   cold areas:  an area with no candidates for cold_after consecutive
 *     invocations is cold (not scanned) until a predictive switch.
 *   n most critical (WOMPAT 2.2):  eligible when raccmax / lacc > thr
 *     (lacc == 0 and raccmax > 0 counts as infinitely critical); when more
 *     than n are eligible, the n with the highest ratio.
 *   huge pages (ours; seed 001's future work, a mix of page sizes):  the
 *     counts of a 2 MiB page are the sums over its sampled 4 KiB
 *     subpages.  It is split into 4 KiB pages when its subpages disagree:
 *     the accesses of the subpages whose own dominant node is not the huge
 *     page's dominant node make up at least split_share of its accesses
 *     (page-level false sharing at 2 MiB: moving it whole would only move
 *     the problem).  Otherwise it is one page for the competitive
 *     criterion.  A split 2 MiB range whose 512 pages all live on one node
 *     and whose sampled pages all prefer that node is collapsed again.
 */
#ifndef PH_CRITERIA_CRITERIA_H
#define PH_CRITERIA_CRITERIA_H

#include <stddef.h>
#include <stdint.h>

/* The latency model the competitive criterion reads. */
typedef struct ph_latency_model {
    int nnodes;
    const double *lat_ns;   /* nnodes*nnodes: lat_ns[i*n+h] = ru(i,h) */
    double contention_ns;   /* added per competing node (paper: 50 ns) */
    const double *migrate_ns; /* nnodes*nnodes: cost of moving one page
                                 from h to i, migrate_ns[h*n+i]; NULL = 0 */
} ph_latency_model;

/* Competitive criterion for one page.  acc[0..n) are this interval's
 * accesses per node, home the page's current home.  Returns the target
 * node, or -1 when no node qualifies (or home < 0 or all counts 0).
 * *ratio_out (may be NULL) gets the winner's ratio (see above). */
int ph_crit_competitive(const ph_latency_model *m, const uint32_t *acc,
                        int home, double factor, int optimistic,
                        double *ratio_out);

/* c(h): the number of nodes with more accesses than home. */
int ph_crit_contention(const uint32_t *acc, int n, int home);

/* Estimated maximum latency due to remote accesses to one page, in ns:
 * max over i != home of acc[i] * rc(i, home).  Summed over an area's
 * pages it is the self-tuning metric. */
double ph_crit_remote_latency_ns(const ph_latency_model *m,
                                 const uint32_t *acc, int home);

/* Predictive criterion for one page.  acc / acc_prev are this and the
 * previous interval's accesses per node; gained[i] != 0 when a thread
 * moved to node i (seen there at two consecutive parallel-region
 * boundaries).  Returns the target node or -1. */
int ph_crit_predictive(const uint32_t *acc, const uint32_t *acc_prev,
                       int n, int home, const uint8_t *gained);

/* Ping-pong prevention.  home / prev_home (-1 = never moved) of a page the
 * competitive criterion wants to move to target.  Returns 1 when the page
 * must freeze instead (target == prev_home), else 0. */
int ph_crit_pingpong(int home, int prev_home, int target);

/* 1 when a page frozen at iteration frozen_since melts at iteration now
 * (now - frozen_since >= melt_iters; iterations may wrap at 2^16). */
int ph_crit_melts(uint16_t frozen_since, uint16_t now, unsigned melt_iters);

/* Self-tuning: the new factor given the area's metric at the previous and
 * this invocation (prev < 0: first invocation, factor unchanged). */
double ph_crit_selftune(double prev_max_remote_ns, double max_remote_ns,
                        double factor, double step, double factor_max);

/* Cold areas: given the number of consecutive candidate-free invocations
 * before this one and this invocation's candidate count, the new streak;
 * *cold set to 1 when the streak reaches cold_after (0 disables). */
unsigned ph_crit_cold(unsigned streak, size_t candidates, unsigned cold_after,
                      int *cold);

/* Criticality of one page: raccmax / lacc (INFINITY when lacc == 0 and
 * raccmax > 0; 0 when no remote access).  *target gets the node of
 * raccmax (-1 when none). */
double ph_crit_criticality(const uint32_t *acc, int n, int home, int *target);

/* n most critical: ratio[0..count) of candidate pages; writes into
 * order[] the indexes of the selected pages (ratio > thr), at most n
 * (n == 0: no limit), highest ratio first (ties: lower index first).
 * Returns how many were selected.  scratch: count entries the function
 * may use. */
size_t ph_crit_most_critical(const double *ratio, size_t count, double thr,
                             size_t n, size_t *order, size_t *scratch);

/* Huge pages.  sub[j*n .. j*n+n) are the counts of the j-th of nsub
 * sampled subpages of one 2 MiB page whose home is `home`; agg[0..n) gets
 * their sums.  Returns PH_HUGE_SPLIT, PH_HUGE_MOVE (*target set, *ratio
 * as ph_crit_competitive) or PH_HUGE_KEEP. */
enum { PH_HUGE_KEEP = 0, PH_HUGE_MOVE = 1, PH_HUGE_SPLIT = 2 };
int ph_crit_huge(const ph_latency_model *m, const uint32_t *sub, size_t nsub,
                 int home, double factor, int optimistic, double split_share,
                 uint32_t *agg, int *target, double *ratio);
/* The same in two steps, for counts that lie apart (stride words from one
 * subpage's counts to the next's, as in the engine's bookkeeping) or in
 * several pieces: clear, add every piece, decide.  Subpages whose counts
 * are all 0 change nothing, so a whole unit may be added, sampled
 * subpages or not.  n <= PH_CRIT_HUGE_NODES. */
#define PH_CRIT_HUGE_NODES 64
typedef struct ph_crit_huge_sum {
    int n;
    uint32_t agg[PH_CRIT_HUGE_NODES];    /* per node, over the subpages */
    uint64_t by_dom[PH_CRIT_HUGE_NODES]; /* accesses of the subpages whose
                                            dominant node is i */
    uint64_t total;                      /* accesses of all subpages */
    size_t prefs;                        /* subpages with a dominant node */
} ph_crit_huge_sum;
void ph_crit_huge_clear(ph_crit_huge_sum *s, int n);
void ph_crit_huge_add(ph_crit_huge_sum *s, const uint32_t *sub, size_t nsub,
                      size_t stride);
int ph_crit_huge_decide(const ph_latency_model *m, const ph_crit_huge_sum *s,
                        int home, double factor, int optimistic,
                        double split_share, int *target, double *ratio);
/* The dominant node of acc[0..n) (most accesses, lowest index on ties),
 * -1 when all are 0. */
int ph_crit_dominant(const uint32_t *acc, int n);
/* Sampling mechanism (ours): a page sampled from random nodes (a shared
 * table: XSBench) would move on every wake-up to whichever node touched
 * it last.  A target is settled when it is the dominant node of the
 * page's accesses over the whole run (total[0..n): cumulative + this
 * interval) with more than min_share of them, and the run has seen at
 * least min_total accesses of the page (a few samples from random nodes
 * often have a majority).  1 settled, 0 not. */
int ph_crit_settled(const uint32_t *total, int n, int target, double min_share,
                    uint64_t min_total);
/* Where a page that should go to node `target` goes when the process may
 * place pages only on the nodes of `allowed` (bit i: node index i; a
 * memory binding such as numactl --membind): target itself when allowed,
 * else the allowed node whose memory target's threads reach fastest
 * (lowest lat_ns[target*n+j], ties to the lower index; a NaN latency
 * counts as infinite), -1 when no node of the n is allowed, target is
 * out of range or n > 64. */
int ph_crit_stand_in(const double *lat_ns, int n, uint64_t allowed, int target);
/* The node every one of homes[0..n) is on, -1 when they differ or one is
 * unknown (< 0). */
int ph_crit_one_node(const int *homes, size_t n);

/* ---- evidence (ours) ---------------------------------------------------
 *
 * One sample per watched page and interval is little evidence: a page of
 * a table every node reads at random gets its sample from a random node,
 * and one whose owner alternates within an iteration (an ADI sweep with
 * another ownership) from whichever owner touched it first after the
 * arm.  These rules weigh a page's counts against its neighbourhood and
 * its own past.  Counts are accesses; `unit` is the accesses one sample
 * stands for (the engine's sample_weight), so count / unit is samples.
 *
 * Neighbourhood: the sampled pages of one 2 MiB-aligned chunk of 512
 * pages, summed by ph_crit_hood_add (whole-run counts of each page).
 *
 * Uniformly shared (ph_crit_uniform_shared): three signs together, each
 * of which alone also fits owned data.  (1) Its pages are not pure: of
 * the pages with two samples or more (at least min_pages of them), at
 * most half have all their samples from one node -- a page owned by one
 * node is pure, also when the owners of neighbouring pages differ page
 * by page (cyclic ownership), while a page read at random by n nodes is
 * pure with probability n^(1-s) after s samples.  (2) The dominant nodes
 * of consecutive sampled pages seldom agree: in at most halfway between
 * chance and certainty -- an array owned by blocks has runs of pages
 * with one dominant node (also after its owners changed: every page of a
 * run changed alike), a table read at random agrees by chance: in 1/n of
 * the pairs when every node ran alike, in sum(p_k^2) of them when node k
 * took a share p_k of the interval's samples (ph_crit_chance: an
 * interval in which one node ran alone, a serial initialisation, agrees
 * by chance in every pair and so tells nothing either way).
 * The dominant nodes compared are those of the latest interval's counts
 * (`now`): over the whole run one node can dominate a table it
 * initialised, and ties go to the lowest node.
 * (3) Every node has a share of the neighbourhood's accesses: none less
 * than a quarter of its share of the whole area's (`share`; 1/n each
 * when not given) -- one node may have much more than its share (the one
 * that initialised the table, say), and a node whose threads ran little
 * (more threads than CPUs) reads every part of a shared table little.  Its pages stay where they are:
 * wherever they are, (n-1)/n of their accesses are remote, and moving
 * them only chases the last sample.  A page with at least 4n samples of
 * its own in one interval spread that evenly over the nodes is
 * uniformly shared by itself (ph_crit_page_uniform; exact counts, or a
 * page watched many times); a page two nodes share is not, on more than
 * two nodes.  (One interval: a page whose owner changes from one
 * interval to the next is spread over the nodes in its history, not
 * shared.)
 *
 * Agreement (ph_crit_hood_agrees): at least min_pages pages of a
 * neighbourhood (here: the pages around the page) were sampled in the
 * latest interval and at least min_share of them have target as their
 * dominant node there.  The
 * sampling mechanism moves a page with a single sample when its
 * neighbours agree (a block-owned array: its neighbours are owned by the
 * same thread), instead of waiting for a second sample a whole sweep of
 * the hot pages later.  It also asks them about a page whose few samples
 * (fewer than 4n) all name one node when its chunk is impure (sign (1)
 * alone, without the other two): a table read at random whose
 * neighbours' dominant nodes agree more than chance in the first wake-ups
 * (a binary search ends its lookups on neighbouring pages) has about
 * sum(p_k^2) of its two-sample pages pure by chance, and those are not
 * owned; pages of an array whose owners changed are impure too, but their
 * neighbours agree on the new owner.
 *
 * Pages that never settle: a page the ping-pong rule froze has two
 * owners that alternate; after it melts it moves again only to a node
 * settled in its whole history (ph_crit_settled), and each further
 * freeze lasts twice as long (ph_crit_melt_after). */
#define PH_CRIT_HOOD_NODES 64
typedef struct ph_crit_hood {
    /* whole run */
    uint32_t sampled;                    /* pages with a sample */
    uint32_t multi;                      /* pages with two or more */
    uint32_t pure;                       /* of those, all from one node */
    uint64_t total[PH_CRIT_HOOD_NODES];  /* accesses from node i */
    /* the latest interval */
    uint32_t now_sampled;                /* pages with a sample */
    uint32_t dom[PH_CRIT_HOOD_NODES];    /* pages whose dominant node is i */
    uint32_t pairs;                      /* consecutive such pages */
    uint32_t agree;                      /* of those, same dominant node */
    double chance;                       /* of those, expected to agree by
                                            chance (0: 1/n of the pairs) */
    /* each node's share of the whole area's accesses (all 0: 1/n) */
    double share[PH_CRIT_HOOD_NODES];
    int last_dom;                        /* the last page's, -1 none */
} ph_crit_hood;

/* Empty neighbourhood. */
void ph_crit_hood_clear(ph_crit_hood *h);
/* Add the next page's counts, pages in address order: acc[0..n) over the
 * whole run, now[0..n) of the latest interval (NULL: acc), n <=
 * PH_CRIT_HOOD_NODES, unit accesses a sample.  A page without any count
 * is not sampled and adds nothing. */
void ph_crit_hood_add(ph_crit_hood *h, const uint32_t *acc,
                      const uint32_t *now, int n, uint32_t unit);
/* The share of pairs of pages whose dominant nodes agree by chance in an
 * interval whose samples came from the nodes as now[0..n) says:
 * sum (now_k / total)^2; 1/n when now is all 0. */
double ph_crit_chance(const uint64_t *now, int n);
/* 1 when at least min_pages pages of the neighbourhood have two samples
 * or more and at most half of those are pure: sign (1) above alone. */
int ph_crit_hood_impure(const ph_crit_hood *h, uint32_t min_pages);
/* 1 when the neighbourhood is uniformly shared (see above). */
int ph_crit_uniform_shared(const ph_crit_hood *h, int n, uint32_t min_pages);
/* 1 when one page's own counts show uniform sharing (see above). */
int ph_crit_page_uniform(const uint32_t *acc, int n, uint32_t unit);
/* A uniformly shared page whose largest reader is the same interval
 * after interval: the past intervals' evidence past[0..n) (their decayed
 * mean) holds at least 4n samples (unit accesses each) and its dominant
 * node, as that of this interval's counts now[0..n), is target.  Such
 * counts are rich (exact, or a full snapshot's), not one sample's chance:
 * moving the page once to the reader that stays the largest chases
 * nothing, and takes the contention of eq. 2 off its home (a vector every
 * node reads, all of it on one node).  1 steady, 0 not. */
int ph_crit_shared_steady(const uint32_t *past, const uint32_t *now, int n,
                          int target, uint32_t unit);
/* The same in one interval, for the first one (no past yet): a page
 * whose rich counts now[0..n) (at least 4n samples of unit accesses)
 * name target above what chance gives a page every node reads alike.
 * With samples s_i, m the mean of the other nodes' and M the largest of
 * them, target's count exceeds M by more than 4 sqrt(m) (four standard
 * deviations of a node's samples when every node reads alike, a Poisson
 * count) and by more than m/4.  A vector every thread reads whole and
 * its owners also write (CG's p: 151 samples from the owner's node, 100
 * from each other one) qualifies; the largest reader of a table read at
 * random (8 nodes of 100 samples: about 114) does not.  1 dominant, 0
 * not. */
int ph_crit_shared_dominant(const uint32_t *now, int n, int target,
                            uint32_t unit);
/* 1 when the neighbourhood agrees that target owns its pages. */
int ph_crit_hood_agrees(const ph_crit_hood *h, int n, int target,
                        uint32_t min_pages, double min_share);
/* An interval whose samples do not represent the run (the sampling
 * mechanism, which wakes at arbitrary moments): the largest node's share
 * of the area's samples in it, now[0..n), is more than 2/n and more than
 * half as large again as its share over the whole run, run[0..n) (which
 * includes now).  One thread that ran alone for a while (the others
 * descheduled on a loaded machine, or a serial part of the program) then
 * took most first touches: its samples say who ran, not who owns. */
int ph_crit_interval_skewed(const uint64_t *now, const uint64_t *run, int n);
/* Iterations a page frozen for the freezes-th time stays frozen:
 * melt_iters, doubled for every freeze after the first, at most 65535. */
unsigned ph_crit_melt_after(unsigned melt_iters, unsigned freezes);
/* The runs a first sweep of `pages` pages watches when each trap costs
 * trap_ns and the sweep's traps should cost at most bound_ns: 1 (every
 * page trapped) when pages * trap_ns fits, else the smallest power of two
 * R with ceil(pages / R) * trap_ns within the bound, at most max_run
 * (which it returns when nothing fits) and no more than the first power
 * of two >= pages.  A run's trap then stands for its R pages.  1 for no
 * pages, a trap that costs nothing, max_run <= 1 or a bound <= 0. */
size_t ph_crit_sweep_run_pages(size_t pages, double trap_ns, double bound_ns,
                               size_t max_run);

#endif
