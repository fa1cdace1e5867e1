/*
 * coherence.c -- the page state machine of home-based lazy release
 * consistency, run by the service thread only (no locking needed: one
 * thread owns every table here).
 *
 * Per rank and page (state[] in cluster.h):
 *   home page     INVALID (never mapped here) -> RO on a read, RW on a
 *                 write.  A home writes its master copy in place, no twin;
 *                 RW means "written since the last notice point", and the
 *                 page is in home_rw until a release or barrier write-
 *                 protects it again (so the next write is seen).
 *   cached page   INVALID -> RO by a fetch (one MPI_Get for the page and
 *                 the following invalid pages with the same home, up to
 *                 the read-ahead window: READ-AHEAD below; no get for a
 *                 page nobody wrote yet: PRISTINE below) -> RW by
 *                 a write fault, which first
 *                 copies the page to a twin; a write fault on a page
 *                 this rank wrote in its last copy also makes the
 *                 following such pages RW, twins first, in one ranged
 *                 call (write prediction, below; a write miss so the
 *                 pages it fetches ahead).  A lock release or
 *                 ph_cluster_release sends the diff against the twin and
 *                 leaves the page RW, the runs sent copied into the
 *                 twin (no protection change, no fault at the next
 *                 write; the next diff finds what was written).  A barrier write-
 *                 protects the page, sends the diff and drops the twin:
 *                 RO -- no page stays writable across a barrier.  An
 *                 invalidation unmaps the page from the arena (userfault-
 *                 fd; sigsegv punches it out of the memfd), after
 *                 flushing its diff if it is dirty: INVALID, and the next
 *                 access is a fault that fetches the current
 *                 master copy -- this is also how a page another local
 *                 thread is writing during a lock acquire is handled
 *                 (write-protect, flush, invalidate; the writer refaults).
 * Lists (page numbers; a flag bit in state[] keeps each free of
 * duplicates) keep the work of a release or barrier proportional to the
 * pages touched: dirty (cached pages with a twin), home_rw, iw (written
 * this interval: the barrier's write notices), np (written since the
 * last lock release: the notice log), cached (valid non-home copies).
 */
#include "cluster/cluster.h"

#include "base/error.h"
#include "base/log.h"
#include "base/sort.h"

#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* ---- small helpers -------------------------------------------------- */

int ph_dsm_vec_push(ph_dsm_vec *v, uint64_t x)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 256;
        uint64_t *p = realloc(v->v, cap * sizeof *p);
        if (!p)
            return -1;
        v->v = p;
        v->cap = cap;
    }
    v->v[v->n++] = x;
    return 0;
}

void ph_dsm_vec_free(ph_dsm_vec *v)
{
    free(v->v);
    memset(v, 0, sizeof *v);
}

static void push(ph_dsm *c, ph_dsm_vec *v, uint64_t page)
{
    if (ph_dsm_vec_push(v, page) < 0)
        ph_dsm_fatal(c, "out of memory for the page lists");
}

static inline ph_dsm_alloc *alloc_at(ph_dsm *c, long i)
{
    return c->ranges.r[i].data;
}

long ph_dsm_alloc_of(ph_dsm *c, size_t page)
{
    long i = c->last_alloc;
    if (i >= 0 && (size_t)i < c->ranges.n) {
        const ph_dsm_range *r = &c->ranges.r[i];
        if (page >= r->start && page < r->start + r->npages)
            return i;
    }
    i = ph_dsm_ranges_find(&c->ranges, page);
    if (i >= 0)
        c->last_alloc = i;
    return i;
}

int ph_dsm_home_known(ph_dsm *c, size_t page)
{
    if (page >= c->npages)
        return -1;
    int32_t o = c->home_ovr[page];
    if (o)
        return o - 1;
    long i = ph_dsm_alloc_of(c, page);
    if (i < 0)
        return -1;
    ph_dsm_alloc *a = alloc_at(c, i);
    return ph_dsm_home_of(&a->pl, page - a->start, a->npages, c->nranks);
}

int ph_dsm_home_claim(ph_dsm *c, size_t page)
{
    int h = ph_dsm_home_known(c, page);
    if (h != PH_DSM_HOME_UNCLAIMED)
        return h;
    int dr = ph_dsm_dir_rank(page, c->nranks);
    size_t disp = c->ctl.dir + 8 * ph_dsm_dir_slot(page, c->nranks);
    int64_t old = ph_dsm_fop(c, dr, disp, PH_DSM_CLAIM_TICKET, MPI_SUM,
                          "a first-touch claim");
    int64_t tickets;
    int home;
    ph_dsm_claim_decode(old, &tickets, &home);
    if (tickets == 0) {
        ph_dsm_fop(c, dr, disp, (int64_t)c->rank + 1, MPI_SUM,
                "a first-touch claim");
        home = c->rank;
        c->st.ft_claims_won++;
        ph_dsm_stats_claim(c, page);
    } else {
        uint64_t start = ph_now_ns();
        uint64_t limit = (uint64_t)c->timeout_ms * 1000000u;
        while (home < 0) {
            /* the winner is between its two operations */
            if (ph_now_ns() - start > limit)
                ph_dsm_fatal(c, "arena page %zu: the rank that won its first-"
                          "touch claim did not publish itself for %ld ms "
                          "(it has probably died)", page, c->timeout_ms);
            sched_yield();
            old = ph_dsm_fop(c, dr, disp, 0, MPI_NO_OP, "a first-touch claim");
            ph_dsm_claim_decode(old, &tickets, &home);
        }
        c->st.ft_claims_lost++;
    }
    if (home < 0 || home >= c->nranks)
        ph_dsm_fatal(c, "arena page %zu: corrupt first-touch claim word "
                  "0x%llx", page, (unsigned long long)old);
    c->home_ovr[page] = home + 1;
    return home;
}

/* ---- twins ---------------------------------------------------------- */

static uint32_t twin_get(ph_dsm *c)
{
    if (c->nfree_twins > 0)
        return c->free_twins[--c->nfree_twins];
    if (c->ntwins == c->captwins) {
        size_t cap = c->captwins ? 2 * c->captwins : 256;
        unsigned char **t = realloc(c->twins, cap * sizeof *t);
        uint32_t *f = realloc(c->free_twins, cap * sizeof *f);
        if (!t || !f)
            ph_dsm_fatal(c, "out of memory for twins");
        c->twins = t;
        c->free_twins = f;
        c->captwins = cap;
    }
    void *p = NULL;
    if (posix_memalign(&p, PH_DSM_PAGE, PH_DSM_PAGE) != 0)
        ph_dsm_fatal(c, "out of memory for a twin");
    c->twins[c->ntwins] = p;
    return (uint32_t)c->ntwins++;
}

static void twin_put(ph_dsm *c, uint32_t idx)
{
    c->free_twins[c->nfree_twins++] = idx;
}

static unsigned char *twin_of(ph_dsm *c, size_t page)
{
    uint32_t s = c->twin_slot[page];
    return s ? c->twins[s - 1] : NULL;
}

static void make_twin(ph_dsm *c, size_t page)
{
    uint32_t idx = twin_get(c);
    memcpy(c->twins[idx], c->wview + page * PH_DSM_PAGE, PH_DSM_PAGE);
    c->twin_slot[page] = idx + 1;
    c->st.twins++;
}

static void drop_twin(ph_dsm *c, size_t page)
{
    uint32_t s = c->twin_slot[page];
    if (s) {
        twin_put(c, s - 1);
        c->twin_slot[page] = 0;
    }
}

/* ---- marking writes ------------------------------------------------- */

static void note_written(ph_dsm *c, size_t page)
{
    ph_dsm_pristine_mark(c, page, 1, 0);
    uint8_t s = c->state[page];
    if (!(s & PGF_IW)) {
        push(c, &c->iw, page);
        s |= PGF_IW;
    }
    if (!(s & PGF_NP)) {
        push(c, &c->np, page);
        s |= PGF_NP;
    }
    c->state[page] = s;
}

static void set_state(ph_dsm *c, size_t page, int st)
{
    c->state[page] = (uint8_t)((c->state[page] & ~PGS_MASK) | st);
}

/* A fault by kind, in the totals and the interval's record. */
static void count_fault(ph_dsm *c, int write, int home)
{
    if (write && home) {
        c->st.fault_write_home++;
        c->st.cur.write_home++;
    } else if (home) {
        c->st.fault_read_home++;
        c->st.cur.read_home++;
    } else if (write) {
        c->st.fault_write_remote++;
        c->st.cur.write_remote++;
    } else {
        c->st.fault_read_remote++;
        c->st.cur.read_remote++;
    }
}

/* ---- home pages ----------------------------------------------------- */

static void populate(ph_dsm *c, size_t page, size_t n)
{
    /* allocate the pages in the memfd (zeroes for a hole, a no-op for a
     * page that exists) without touching their contents */
    if (fallocate(c->memfd, 0, (off_t)(page * PH_DSM_PAGE),
                  (off_t)(n * PH_DSM_PAGE)) < 0)
        ph_dsm_fatal(c, "fallocate of %zu arena page(s) at %zu: %s (out of "
                     "memory?)", n, page, strerror(errno));
}

/* Pages from p on that a missing home fault may fill at once: holes of
 * this rank's own pages (never mapped here, same allocation), at most 64
 * (256 KiB).  A hole of a home page was never fetched by anybody (a fetch
 * fills it), so filling its neighbours ahead is safe; those filled for a
 * write are counted as written (noticed at the next release or barrier). */
static size_t home_run(ph_dsm *c, size_t p)
{
    long ai = ph_dsm_alloc_of(c, p);
    if (ai < 0)
        return 1;
    ph_dsm_alloc *a = alloc_at(c, ai);
    size_t end = a->start + a->npages, n = 1;
    while (n < 64 && p + n < end &&
           (c->state[p + n] & PGS_MASK) == PGS_INVALID &&
           ph_dsm_home_known(c, p + n) == c->rank)
        n++;
    return n;
}

static void note_home_written(ph_dsm *c, size_t p)
{
    set_state(c, p, PGS_RW);
    if (!(c->state[p] & PGF_HOMERW)) {
        push(c, &c->home_rw, p);
        c->state[p] |= PGF_HOMERW;
    }
    note_written(c, p);
}

/* Write-protected home pages after p that were written in one of the last
 * two intervals in which this rank wrote home pages (home_hist, see
 * below): a program streaming through its band writes them again now, so
 * a write fault unprotects the run at once (they count as written).  At
 * most 64. */
static size_t home_write_run(ph_dsm *c, size_t p)
{
    long ai = ph_dsm_alloc_of(c, p);
    if (ai < 0)
        return 1;
    ph_dsm_alloc *a = alloc_at(c, ai);
    size_t end = a->start + a->npages, n = 1;
    uint32_t now = c->home_wiv + 1;     /* this interval, if it writes */
    while (n < 64 && p + n < end) {
        size_t q = p + n;
        uint32_t h = c->home_hist[q];
        uint32_t gap = (now - (h & 0xffffu)) & 0xffffu;
        if ((c->state[q] & PGS_MASK) != PGS_RO || ((h >> 16) & 0xffu) == 0 ||
            gap < 1 || gap > 2 || ph_dsm_home_known(c, q) != c->rank)
            break;
        n++;
    }
    return n;
}

static void home_access(ph_dsm *c, ph_dsm_fault *ev, int write)
{
    size_t p = ev->page;
    int st = c->state[p] & PGS_MASK;
    /* alone in the job: nobody needs to hear about writes (but a range
     * declared read-only stays write-protected, so a write is caught) */
    if (c->nranks == 1 && !(c->pinfo[p].flags & PIF_READONLY))
        write = 1;
    if (ev->kind == PH_DSM_FK_MISSING && c->fops->map_zero) {
        int rw = write || st == PGS_RW;
        size_t k = c->fops->map_zero(c, p, st == PGS_INVALID ? home_run(c, p)
                                                             : 1, rw);
        for (size_t i = 0; i < k; i++) {
            c->pinfo[p + i].flags |= PIF_TOUCHED;
            if (rw)
                note_home_written(c, p + i);
            else
                set_state(c, p + i, PGS_RO);
        }
        count_fault(c, rw, 1);
        c->st.home_prefilled += k - 1;
        ev->woken = 1;
        return;
    }
    if (ev->kind == PH_DSM_FK_MISSING)
        populate(c, p, 1);
    if (write) {
        if (ev->kind == PH_DSM_FK_WP && st == PGS_RO && c->nranks > 1) {
            size_t k = home_write_run(c, p);
            c->fops->protect(c, p, k, 1);
            for (size_t i = 1; i < k; i++)
                note_home_written(c, p + i);
            c->st.home_prefilled += k - 1;
        } else if (ev->kind == PH_DSM_FK_WP) {
            c->fops->protect(c, p, 1, 1);
        } else {
            c->fops->map(c, p, 1, 1);
        }
        if (st != PGS_RW)
            count_fault(c, 1, 1);
        else
            c->st.fault_spurious++;
        note_home_written(c, p);
    } else {
        c->fops->map(c, p, 1, st == PGS_RW);
        if (st == PGS_INVALID) {
            set_state(c, p, PGS_RO);
            count_fault(c, 0, 1);
        } else {
            c->st.fault_spurious++;
        }
    }
    ev->woken = 1;
}

/* ---- cached pages --------------------------------------------------- */

/* Pages [page, page + n) were read from their home in this interval: the
 * cost rule's evidence (migrate_cost.h). */
static void fetched_evidence(ph_dsm *c, size_t page, size_t n)
{
    if (!c->cost.on)
        return;
    for (size_t i = 0; i < n; i++)
        if (!(c->pinfo[page + i].flags & PIF_FETCHED)) {
            c->pinfo[page + i].flags |= PIF_FETCHED;
            push(c, &c->fetched, page + i);
        }
}

static void fetch(ph_dsm *c, size_t page, size_t n, int home)
{
    uint64_t t0 = ph_now_ns();
    ph_dsm_op_begin(c, "a page fetch", home);
    MPI_Request q;
    int rc = MPI_Rget(c->wview + page * PH_DSM_PAGE, (int)(n * PH_DSM_PAGE),
                      MPI_BYTE, home, (MPI_Aint)(page * PH_DSM_PAGE),
                      (int)(n * PH_DSM_PAGE), MPI_BYTE, c->win, &q);
    ph_dsm_mpi_check(c, rc, "MPI_Rget (page fetch)", home);
    ph_dsm_wait_req(c, &q, "MPI_Rget (page fetch)", home);
    ph_dsm_op_end(c);
    c->st.rma_calls++;
    c->st.fetch_calls++;
    c->st.pages_fetched += n;
    c->st.cur.fetched += n;
    fetched_evidence(c, page, n);
    for (size_t i = 0; i < n; i++)
        if (c->pinfo[page + i].flags & PIF_READONLY) {
            c->st.readonly_fetched++;
            c->st.cur.fetched_readonly++;
        }
    c->st.fetch_ns += ph_now_ns() - t0;
}

/* READ-AHEAD.  A miss fetches the missing page and the invalid pages
 * after it with the same home, in one get: cluster_fetch_pages of them,
 * or more for a stream.  A miss on the page right after the run the
 * previous miss of a stream fetched (a thread reading through an array
 * page after page) doubles that stream's window, up to
 * cluster_fetch_max_pages; a miss anywhere else starts a new stream (the
 * least recently used of PH_DSM_RA_STREAMS is replaced: one per thread
 * reading its own part) at cluster_fetch_pages.  So a scattered read
 * fetches no more than before, and reading through 1024 pages takes 4,
 * 8, 16, then 32 pages per miss: 35 misses instead of 256. */
static size_t ra_window(ph_dsm *c, size_t page)
{
    struct ph_dsm_stream *s = NULL, *lru = &c->ra[0];
    for (int i = 0; i < PH_DSM_RA_STREAMS; i++) {
        if (c->ra[i].window && c->ra[i].next == page) {
            s = &c->ra[i];
            break;
        }
        if (c->ra[i].used < lru->used)
            lru = &c->ra[i];
    }
    if (s) {
        uint64_t w = (uint64_t)s->window * 2;
        s->window = (uint32_t)(w < (uint64_t)c->fetch_max_pages
                                   ? w : (uint64_t)c->fetch_max_pages);
    } else {
        s = lru;
        s->window = (uint32_t)c->fetch_pages;
    }
    s->used = ++c->ra_clock;
    return s->window;
}

/* The stream whose window was just used fetched [page, page + n). */
static void ra_fetched(ph_dsm *c, size_t page, size_t n)
{
    for (int i = 0; i < PH_DSM_RA_STREAMS; i++)
        if (c->ra[i].used == c->ra_clock) {
            c->ra[i].next = page + n;
            return;
        }
}

/* How many pages from `page` on to fetch in one get: invalid, same home,
 * same allocation, at most the read-ahead window. */
static size_t fetch_run(ph_dsm *c, size_t page, int home, long ai)
{
    ph_dsm_alloc *a = alloc_at(c, ai);
    size_t end = a->start + a->npages;
    size_t n = 1, max = ra_window(c, page);
    while (n < max && page + n < end) {
        size_t q = page + n;
        if ((c->state[q] & PGS_MASK) != PGS_INVALID)
            break;
        if (ph_dsm_home_known(c, q) != home)
            break;
        n++;
    }
    return n;
}

static void cached_add(ph_dsm *c, size_t page)
{
    if (!(c->state[page] & PGF_CACHED)) {
        push(c, &c->cached, page);
        c->state[page] |= PGF_CACHED;
    }
}

static void dirty_add(ph_dsm *c, size_t page)
{
    make_twin(c, page);
    set_state(c, page, PGS_RW);
    if (!(c->state[page] & PGF_DIRTY)) {
        push(c, &c->dirty, page);
        c->state[page] |= PGF_DIRTY;
    }
}

static void mark_dirty(ph_dsm *c, size_t page)
{
    dirty_add(c, page);
    c->pinfo[page].flags |= PIF_WROTE;
    note_written(c, page);
}

/* Write prediction.  A write fault on a cached page this rank wrote in
 * its last copy here (PIF_WROTE) also makes writable, in the same ranged
 * protection call, the read-only cached pages after it that this rank
 * wrote in their last copies too (at most 64, write_run below), each
 * with its twin copied now: a program going through its band again (x[i]
 * += ..., a stencil's own rows) takes one write fault per run instead of
 * one per page -- on a virtual machine a userfaultfd round trip is
 * several microseconds, more than the release's put.  A write miss does
 * the same with the pages it fetches ahead.  A read miss installs every
 * page read-only and makes no twin: a read costs no copy.  A page made
 * writable so (PIF_PREDICTED) is dirty but not yet known to be written:
 * a release that finds its diff non-empty notes the write (and the page
 * is predicted again next time); the barrier checks every such page
 * before it sends its notices (ph_dsm_confirm_predicted): written ones
 * are noted, the others are write-protected and lose their twin (and
 * PIF_WROTE: they are not predicted next time). */
static int write_predicted(ph_dsm *c, size_t page)
{
    uint8_t f = c->pinfo[page].flags;
    return c->write_predict && (f & PIF_WROTE) && !(f & PIF_READONLY);
}

static void mark_predicted(ph_dsm *c, size_t page)
{
    c->wake_defer = c->wake_defer_ok;   /* a write and a release follow */
    dirty_add(c, page);
    c->pinfo[page].flags = (uint8_t)((c->pinfo[page].flags & ~PIF_WROTE) |
                                     PIF_PREDICTED);
    c->st.twins_predicted++;
}

/* The read-only cached pages after p (same allocation, not homed here)
 * this rank wrote in their last copies: a write fault on p makes them
 * writable with it.  Counts p; at most 64. */
static size_t write_run(ph_dsm *c, size_t p, long ai)
{
    ph_dsm_alloc *a = alloc_at(c, ai);
    size_t end = a->start + a->npages, n = 1;
    while (n < 64 && p + n < end) {
        size_t q = p + n;
        if ((c->state[q] & (PGS_MASK | PGF_DIRTY)) != PGS_RO ||
            !(c->state[q] & PGF_CACHED) || !write_predicted(c, q) ||
            ph_dsm_home_known(c, q) == c->rank)
            break;
        n++;
    }
    return n;
}

/* A dirty page's diff was not empty: a write this rank did.  A predicted
 * page is known written now; a page that stayed writable after a release
 * may have been written without a fault. */
static void confirm_written(ph_dsm *c, size_t page)
{
    c->pinfo[page].flags = (uint8_t)((c->pinfo[page].flags &
                                      ~PIF_PREDICTED) | PIF_WROTE);
    note_written(c, page);
}

/* PRISTINE.  A page nobody has written since its allocation holds zeroes
 * on every rank (ph_cluster_alloc's memory reads as zero: a fresh memfd,
 * or one the collective free punched everywhere).  Each rank keeps a bit
 * per page (c->pristine): set at the allocation, cleared until the next
 * one by its own write and by every write it learns of -- a barrier's
 * notices, the notice log read at a lock acquire or gang synchronisation
 * -- and over the whole range of an acquire that names no pages
 * (ph_cluster_acquire's range, a log entry for every page).  A write the
 * bit has not heard of is not ordered before this rank's present point,
 * so release consistency does not oblige the rank to see it; a miss on a
 * page whose bit is set maps what this rank's memfd holds -- zeroes, or a
 * copy fetched ahead since, no older -- without a get.  So an
 * initialisation writing its part of arrays homed elsewhere (round-robin
 * homes before migration moves them) fetches no pages of zeroes.  A write
 * miss so gets a twin of zeroes: its diff carries every byte it wrote,
 * and several writers' diffs merge at the home as usual.  Only for pages
 * homed elsewhere; the pages after the missing one in the same state
 * (invalid, bit set, same allocation, homed at another rank -- a
 * first-touch page nobody claimed yet is not mapped ahead; at most 64)
 * are mapped read-only with it.  `pristine_mapped` counts them;
 * cluster_pristine=0 turns it off. */
static size_t pristine_run(ph_dsm *c, size_t p, long ai)
{
    ph_dsm_alloc *a = alloc_at(c, ai);
    size_t end = a->start + a->npages, n = 1;
    while (n < 64 && p + n < end) {
        size_t q = p + n;
        int h = ph_dsm_home_known(c, q);    /* unclaimed: its first access
                                             * claims it, not mapped ahead */
        if ((c->state[q] & PGS_MASK) != PGS_INVALID || !ph_dsm_pristine(c, q) ||
            h < 0 || h == c->rank)
            break;
        n++;
    }
    return n;
}

static void remote_access(ph_dsm *c, ph_dsm_fault *ev, int write, int home,
                          long ai)
{
    size_t p = ev->page;
    int st = c->state[p] & PGS_MASK;
    if (st == PGS_INVALID) {
        /* the copy: fetched, or the zeroes the memfd holds where nobody
         * has written yet (PRISTINE: no get, no cost) */
        int zero = ph_dsm_pristine(c, p);
        size_t n = zero ? pristine_run(c, p, ai) : fetch_run(c, p, home, ai);
        if (zero) {
            populate(c, p, n);
            c->st.pristine_mapped += n;
        } else {
            fetch(c, p, n, home);
            ra_fetched(c, p, n);
        }
        if (!write) {
            if (!zero)
                c->cost_fetched = n;        /* a read miss: its cost */
            /* the pages fetched ahead too: read next time, they will be
             * refreshed with it; unused, once at most */
            for (size_t i = 0; i < (zero ? 1 : n); i++)
                ph_dsm_note_read(c, p + i);
        }
        for (size_t i = 0; i < n; i++) {
            set_state(c, p + i, PGS_RO);
            cached_add(c, p + i);
            c->pinfo[p + i].flags |= PIF_TOUCHED;    /* fetched ahead */
            if (i == 0 && write)
                mark_dirty(c, p);
            else if (write && write_predicted(c, p + i))
                mark_predicted(c, p + i);   /* a write miss predicts */
        }
        /* the pages fetched ahead, in runs of the same protection, then
         * the faulting page (its mapping wakes the thread) */
        for (size_t i = 1; i < n;) {
            int rw = (c->state[p + i] & PGS_MASK) == PGS_RW;
            size_t j = i + 1;
            while (j < n && ((c->state[p + j] & PGS_MASK) == PGS_RW) == rw)
                j++;
            c->fops->map(c, p + i, j - i, rw);
            i = j;
        }
        c->fops->map(c, p, 1, (c->state[p] & PGS_MASK) == PGS_RW);
        count_fault(c, write, 0);
    } else if (st == PGS_RO && write) {
        size_t k = write_predicted(c, p) ? write_run(c, p, ai) : 1;
        c->cost_twinned = k;                /* a write on a copy: its cost */
        mark_dirty(c, p);
        for (size_t i = 1; i < k; i++)
            mark_predicted(c, p + i);       /* twins before the unprotect */
        if (ev->kind == PH_DSM_FK_WP) {
            c->fops->protect(c, p, k, 1);
        } else {
            c->fops->map(c, p, 1, 1);
            if (k > 1)
                c->fops->protect(c, p + 1, k - 1, 1);
        }
        count_fault(c, 1, 0);
    } else {
        /* a copy refreshed at the last barrier, used now; or a fault
         * resolved already by an earlier fault of another thread */
        c->fops->map(c, p, 1, st == PGS_RW);
        if (!c->refresh_hit)
            c->st.fault_spurious++;
    }
    ev->woken = 1;
}

/* ---- writes that came in while a page was being mapped ------------- */

void ph_dsm_gap_written(ph_dsm *c, size_t page, const unsigned char *before)
{
    uint32_t idx = UINT32_MAX;
    if (ph_dsm_home_known(c, page) != c->rank) {
        idx = twin_get(c);
        memcpy(c->twins[idx], before, PH_DSM_PAGE);
    }
    if (ph_dsm_vec_push(&c->gap, page) < 0 ||
        ph_dsm_vec_push(&c->gap, idx) < 0)
        ph_dsm_fatal(c, "out of memory");
    c->st.gap_writes++;
}

/* After the fault that mapped them has set their states: the pages
 * written in the gap are written pages, writable -- a cached copy dirty
 * with its content from before the write as the twin, a home page noted
 * as written (fault_uffd.c, THE GAP). */
static void gap_settle(ph_dsm *c)
{
    for (size_t i = 0; i + 1 < c->gap.n; i += 2) {
        size_t p = (size_t)c->gap.v[i];
        uint32_t idx = (uint32_t)c->gap.v[i + 1];
        if (idx == UINT32_MAX) {
            note_home_written(c, p);
        } else if (c->twin_slot[p]) {
            twin_put(c, idx);          /* written through a fault since */
        } else {
            c->twin_slot[p] = idx + 1;
            c->st.twins++;
            set_state(c, p, PGS_RW);
            if (!(c->state[p] & PGF_DIRTY)) {
                push(c, &c->dirty, p);
                c->state[p] |= PGF_DIRTY;
            }
            c->pinfo[p].flags |= PIF_WROTE;
            note_written(c, p);
        }
        c->fops->protect(c, p, 1, 1);
    }
    c->gap.n = 0;
}

void ph_dsm_handle_fault(ph_dsm *c, ph_dsm_fault *ev)
{
    uint64_t t0 = ph_now_ns();
    size_t p = ev->page;
    long ai = p < c->npages ? ph_dsm_alloc_of(c, p) : -1;
    if (ai < 0) {
        /* not a shared page (sigsegv: the handler chains the signal) */
        ev->woken = -1;
        c->fops->complete(c, ev);
        return;
    }
    int home = ph_dsm_home_claim(c, p);
    int st = c->state[p] & PGS_MASK;
    int write = ev->write || ev->kind == PH_DSM_FK_WP;
    /* sigsegv without the write bit: a fault on a readable page is a
     * write */
    if (ev->kind == PH_DSM_FK_ACCESS && st == PGS_RO)
        write = 1;
    if (write && (c->pinfo[p].flags & PIF_READONLY))
        ph_dsm_fatal(c, "a write to %p (arena page %zu, home rank %d), in a "
                     "range declared read-only by ph_cluster_readonly: the "
                     "program broke its promise that nobody writes it (drop "
                     "the hint, or write before it)",
                     (void *)(c->arena + p * PH_DSM_PAGE), p, home);
    c->pinfo[p].flags |= PIF_TOUCHED;
    c->refresh_hit = 0;
    if (c->pinfo[p].flags & PIF_REFRESHED) {
        /* the first access of a copy refreshed at a barrier: a read of
         * it for the refresh's prediction, and of a page fetched for the
         * cost rule */
        c->pinfo[p].flags &= (uint8_t)~PIF_REFRESHED;
        c->refresh_hit = 1;
        c->st.refresh_used++;
        ph_dsm_note_read(c, p);
        fetched_evidence(c, p, 1);
    }
    c->wake_defer = c->wake_defer_ok && write;
    if (home == c->rank)
        home_access(c, ev, write);
    else
        remote_access(c, ev, write, home, ai);
    if (c->gap.n)
        gap_settle(c);
    c->fops->complete(c, ev);
    c->wake_defer = 0;
    c->refresh_hit = 0;
    uint64_t dt = ph_now_ns() - t0;
    c->st.fault_ns += dt;
    if (c->cost_fetched) {
        /* the cost rule's F of this rank: a running mean per page */
        ph_dsm_cost_mean(&c->cost_fault_ns, (double)dt / (double)c->cost_fetched);
        c->cost_fetched = 0;
    }
    if (c->cost_twinned) {
        ph_dsm_cost_mean(&c->cost_twin_ns, (double)dt / (double)c->cost_twinned);
        c->cost_twinned = 0;
    }
}

/* ---- flushing diffs ------------------------------------------------- */

static void dirty_compact(ph_dsm *c);

/* home ranks touched by a flush (a growable list + a per-rank flag, no
 * fixed-width bitmask) */
typedef struct homeset {
    int *list;
    unsigned char *flag;
    int n;
} homeset;

static void homeset_add(ph_dsm *c, homeset *h, int r)
{
    if (!h->flag) {
        h->flag = calloc((size_t)c->nranks, 1);
        h->list = malloc((size_t)c->nranks * sizeof *h->list);
        if (!h->flag || !h->list)
            ph_dsm_fatal(c, "out of memory");
    }
    if (!h->flag[r]) {
        h->flag[r] = 1;
        h->list[h->n++] = r;
    }
}

static void homeset_flush(ph_dsm *c, homeset *h, const char *what)
{
    for (int i = 0; i < h->n; i++) {
        ph_dsm_op_begin(c, what, h->list[i]);
        int rc = MPI_Win_flush(h->list[i], c->win);
        ph_dsm_mpi_check(c, rc, "MPI_Win_flush (diffs)", h->list[i]);
        ph_dsm_op_end(c);
        c->st.flushes++;
    }
    free(h->flag);
    free(h->list);
    memset(h, 0, sizeof *h);
}

static void sort_pages(uint64_t *v, size_t n)
{
    if (n > 1)
        qsort(v, n, sizeof *v, ph_cmp_u64);
}

/* Apply fn to runs of consecutive pages of a sorted list. */
static void for_runs(ph_dsm *c, const uint64_t *pages, size_t n,
                     int (*fn)(ph_dsm *, size_t, size_t, int), int arg)
{
    size_t i = 0;
    while (i < n) {
        size_t j = i + 1;
        while (j < n && pages[j] == pages[j - 1] + 1)
            j++;
        fn(c, (size_t)pages[i], j - i, arg);
        i = j;
    }
}

#define MAX_RUNS (PH_DSM_PAGE / 2)

/* Puts of one flush, coalesced: a piece that starts where the pending
 * put ends, in the home's window and in the source, to the same home,
 * extends it.  So a run of pages sent whole (or whose changed spans meet
 * at the page boundaries) is one MPI_Put of exactly the same bytes, not
 * one a page -- on a shared-memory one-sided path each put is a system
 * call with its access checks, over TCP a message.  The puts of one
 * flush touch disjoint bytes and complete at its MPI_Win_flush, so their
 * order does not matter. */
#define PUTRUN_MAX_BYTES ((size_t)1 << 30) /* an MPI count is an int */

typedef struct putrun {
    const unsigned char *src;
    MPI_Aint disp;
    size_t bytes;
    int home;
} putrun;

static void putrun_issue(ph_dsm *c, putrun *pr, homeset *hs)
{
    if (pr->bytes == 0)
        return;
    ph_dsm_op_begin(c, "a diff", pr->home);
    int rc = MPI_Put(pr->src, (int)pr->bytes, MPI_BYTE, pr->home, pr->disp,
                     (int)pr->bytes, MPI_BYTE, c->win);
    ph_dsm_mpi_check(c, rc, "MPI_Put (diff)", pr->home);
    ph_dsm_op_end(c);
    c->st.rma_calls++;
    homeset_add(c, hs, pr->home);
    pr->bytes = 0;
}

static void putrun_add(ph_dsm *c, putrun *pr, homeset *hs, int home,
                       const unsigned char *src, MPI_Aint disp, size_t bytes)
{
    if (pr->bytes != 0 && pr->home == home &&
        pr->disp + (MPI_Aint)pr->bytes == disp && pr->src + pr->bytes == src &&
        pr->bytes + bytes <= PUTRUN_MAX_BYTES) {
        pr->bytes += bytes;
        return;
    }
    putrun_issue(c, pr, hs);
    pr->src = src;
    pr->disp = disp;
    pr->bytes = bytes;
    pr->home = home;
}

/* Send the diff of one dirty page, the window view `cur` against its
 * twin.  into_twin = 0: the page is write-protected and is the put's
 * source (it stays as it is until the flush).  into_twin = 1: the page is
 * writable (another thread may be writing it): the changed runs are
 * copied from it into the twin, which is the put's source and then holds
 * what the home has of this rank's writes -- a byte written during the
 * diff or the copy is either sent (and in the twin) or differs from the
 * twin and goes with the next diff.  A whole page or a single span joins
 * the flush's pending put (pr); several runs go as one hindexed put.
 * Returns 1 when bytes changed. */
static int send_diff(ph_dsm *c, size_t page, int into_twin, int home,
                     int whole_ok, homeset *hs, putrun *pr)
{
    static ph_dsm_run runs[MAX_RUNS];
    static int lens[MAX_RUNS];
    static MPI_Aint displs[MAX_RUNS];
    unsigned char *twin = twin_of(c, page);
    const unsigned char *cur = (unsigned char *)c->wview + page * PH_DSM_PAGE;
    size_t changed = 0;
    size_t n = ph_dsm_diff(cur, twin, PH_DSM_PAGE, runs, MAX_RUNS, &changed);
    if (n == 0)
        return 0;
    MPI_Aint disp = (MPI_Aint)(page * PH_DSM_PAGE);
    int whole = ph_dsm_diff_send_whole(whole_ok, changed, n, MAX_RUNS,
                                       PH_DSM_PAGE, c->whole_share) ||
                (n == 1 && runs[0].len == PH_DSM_PAGE);
    if (into_twin) {
        if (whole)
            memcpy(twin, cur, PH_DSM_PAGE);
        else if (n == 1 || whole_ok)
            memcpy(twin + runs[0].off, cur + runs[0].off,
                   runs[n - 1].off + runs[n - 1].len - runs[0].off);
        else
            for (size_t i = 0; i < n; i++)
                memcpy(twin + runs[i].off, cur + runs[i].off, runs[i].len);
        cur = twin;
    }
    if (whole) {
        putrun_add(c, pr, hs, home, cur, disp, PH_DSM_PAGE);
        c->st.whole_pages_sent++;
        c->st.diff_bytes += PH_DSM_PAGE;
        c->st.bytes_sent += PH_DSM_PAGE;
    } else if (n == 1 || whole_ok) {
        /* one run; or a page nobody else wrote in the interval, where the
         * bytes between the runs equal the home's and may go along: the
         * span from the first to the last changed byte */
        uint32_t a = runs[0].off, b = runs[n - 1].off + runs[n - 1].len;
        putrun_add(c, pr, hs, home, cur + a, disp + a, b - a);
        c->st.diffs_sent++;
        c->st.diff_runs++;
        c->st.diff_bytes += b - a;
        c->st.bytes_sent += b - a;
    } else {
        for (size_t i = 0; i < n; i++) {
            lens[i] = (int)runs[i].len;
            displs[i] = (MPI_Aint)runs[i].off;
        }
        MPI_Datatype t;
        int rc = MPI_Type_create_hindexed((int)n, lens, displs, MPI_BYTE, &t);
        ph_dsm_mpi_check(c, rc, "MPI_Type_create_hindexed", -1);
        MPI_Type_commit(&t);
        ph_dsm_op_begin(c, "a diff", home);
        rc = MPI_Put(cur, 1, t, home, disp, 1, t, c->win);
        ph_dsm_mpi_check(c, rc, "MPI_Put (diff)", home);
        ph_dsm_op_end(c);
        MPI_Type_free(&t);
        c->st.diffs_sent++;
        c->st.diff_runs += n;
        c->st.diff_bytes += changed;
        c->st.bytes_sent += changed;
        c->st.rma_calls++;
        homeset_add(c, hs, home);
    }
    return 1;
}

static int protect_ro(ph_dsm *c, size_t page, size_t n, int unused)
{
    (void)unused;
    return c->fops->protect(c, page, n, 0);
}

/* Flush the given dirty pages (sorted, each PGF_DIRTY): diffs home, one
 * flush per home.  barrier_mode: a page without PGF_TMP (nobody else
 * wrote it) may go whole.
 *
 * keep = 0 (barriers, invalidations): write-protect the pages first (a
 * thread writing meanwhile waits in its fault), diff the page itself,
 * drop the twins: RO.
 * keep = 1 (a lock release, ph_cluster_release): the pages stay writable
 * and dirty.  Each is diffed against its twin as it is, the changed runs
 * are copied into the twin and sent from it (send_diff): the twin is
 * what the home has of this rank's writes from now on.  No protection
 * change (each costs a TLB shoot-down, and the next write a fault), no
 * whole-page copy; a byte written during or after the diff either went
 * with its run or differs from the twin and goes with the next release.  A page written again without a fault is found by its diff:
 * a changed page is noted as written (the lock's notices); a page in the
 * dirty list is always in the barrier's notices (it was noted by the
 * write fault of this interval: a barrier flushes with keep = 0, so no
 * page stays writable across one). */
static void flush_pages(ph_dsm *c, uint64_t *pages, size_t n, int barrier_mode,
                        int keep)
{
    if (n == 0)
        return;
    uint64_t t0 = ph_now_ns();
    if (!keep)
        for_runs(c, pages, n, protect_ro, 0);
    homeset hs = {0};
    putrun pr = {0};
    for (size_t i = 0; i < n; i++) {
        size_t p = (size_t)pages[i];
        int home = ph_dsm_home_known(c, p);
        int single = barrier_mode && !(c->state[p] & PGF_TMP);
        if (!keep) {
            /* a changed page is noted even if its write fault noted it:
             * it may have stayed writable since a release, or have been
             * made writable by prediction, and been written since
             * without a fault -- an invalidation at a lock acquire
             * flushing it must leave the write for the next lock
             * release's notices (a barrier's flush comes after its
             * notices were sent and clears these lists at its end) */
            if (send_diff(c, p, 0, home, single, &hs, &pr))
                confirm_written(c, p);
            c->pinfo[p].flags &= (uint8_t)~PIF_PREDICTED;
            continue;
        }
        if (send_diff(c, p, 1, home, 0, &hs, &pr))
            confirm_written(c, p);
    }
    putrun_issue(c, &pr, &hs);
    homeset_flush(c, &hs, "diffs");
    for (size_t i = 0; !keep && i < n; i++) {
        size_t p = (size_t)pages[i];
        drop_twin(c, p);
        c->state[p] = (uint8_t)((c->state[p] & ~(PGS_MASK | PGF_DIRTY)) |
                                PGS_RO);
    }
    c->st.release_ns += ph_now_ns() - t0;
}

/* A write-protected dirty copy whose changes go nowhere (nothing was
 * written, or this copy becomes the master): no twin, read-only, clean.
 * The caller compacts the dirty list. */
static void copy_clean(ph_dsm *c, size_t p)
{
    drop_twin(c, p);
    c->state[p] = (uint8_t)((c->state[p] & ~(PGS_MASK | PGF_DIRTY)) | PGS_RO);
    c->pinfo[p].flags &= (uint8_t)~PIF_PREDICTED;
}

void ph_dsm_confirm_predicted(ph_dsm *c)
{
    ph_dsm_vec sel = {0};
    for (size_t i = 0; i < c->dirty.n; i++) {
        uint64_t p = c->dirty.v[i];
        if ((c->state[p] & PGF_DIRTY) && (c->pinfo[p].flags & PIF_PREDICTED))
            push(c, &sel, p);
    }
    if (sel.n == 0)
        return;
    /* write-protect first (one call per run): a thread writing meanwhile
     * waits in its fault and is seen then */
    sort_pages(sel.v, sel.n);
    for_runs(c, sel.v, sel.n, protect_ro, 0);
    size_t dropped = 0;
    for (size_t i = 0; i < sel.n; i++) {
        size_t p = (size_t)sel.v[i];
        if (memcmp(c->wview + p * PH_DSM_PAGE, twin_of(c, p), PH_DSM_PAGE)) {
            confirm_written(c, p);
            continue;
        }
        copy_clean(c, p);
        dropped++;
    }
    if (dropped)
        dirty_compact(c);
    c->st.predicted_unwritten += dropped;
    ph_dsm_vec_free(&sel);
}

void ph_dsm_flush_dirty(ph_dsm *c, size_t p0, size_t p1, int barrier_mode)
{
    if (c->dirty.n == 0)
        return;
    int keep = !barrier_mode;
    ph_dsm_vec sel = {0};
    if (keep && p1 - p0 <= c->dirty.n) {
        /* a short range (ph_cluster_release of a few pages): look at its
         * pages, the list stays as it is (they stay dirty); up to 64 of
         * them listed on the stack -- a release per page or row is
         * common, and a list's first allocation (2 KiB) is a request
         * glibc serves only after consolidating its small free chunks */
        uint64_t few[64];
        size_t nfew = 0;
        int on_stack = p1 - p0 <= 64;
        for (size_t p = p0; p < p1 && p < c->npages; p++) {
            if (!(c->state[p] & PGF_DIRTY))
                continue;
            if (on_stack)
                few[nfew++] = p;
            else
                push(c, &sel, p);
        }
        flush_pages(c, on_stack ? few : sel.v, on_stack ? nfew : sel.n, 0, 1);
        ph_dsm_vec_free(&sel);
        return;
    }
    ph_dsm_vec keepv = {0};
    for (size_t i = 0; i < c->dirty.n; i++) {
        uint64_t p = c->dirty.v[i];
        if (!(c->state[p] & PGF_DIRTY))
            continue;                         /* stale entry */
        if (p >= p0 && p < p1) {
            push(c, &sel, p);
            if (keep)
                push(c, &keepv, p);
        } else {
            push(c, &keepv, p);
        }
    }
    sort_pages(sel.v, sel.n);
    flush_pages(c, sel.v, sel.n, barrier_mode, keep);
    ph_dsm_vec_free(&sel);
    ph_dsm_vec_free(&c->dirty);
    c->dirty = keepv;
}

/* Home pages written at every interval stop being tracked (JIAJIA's
 * home write detection switch-off): a home page its home wrote in
 * `home_untrack_after` write intervals in a row (allowing one write
 * interval without it between two: Jacobi's grids are written every other
 * sweep) stays writable -- no write fault per interval any more -- and is
 * assumed written: it is in every barrier's write notices (others drop
 * their copies, as they would for a page really written each interval).
 * The clock is home_wiv, the barrier intervals in which this rank wrote a
 * tracked home page at all, not the barriers: intervals where this rank
 * writes nothing (a program with a fork and a join barrier per sweep
 * writes each of its two grids every fourth barrier interval) do not
 * break a run.  Every `home_recheck` barriers, and at every lock release
 * (whose notices must be exact enough to cover what was written),
 * untracked pages are write-protected again and noticed once; a page
 * still written at every write interval is untracked again after one
 * more.  home_hist[p]: bits 0-15 the last write interval (home_wiv, mod
 * 65536) its home wrote it in, 16-23 write intervals in a row, bit 31
 * untracked; 0 = no history (never written here, or its home moved). */
#define HH_STAMP(h) ((h) & 0xffffu)
#define HH_COUNT(h) (((h) >> 16) & 0xffu)
#define HH_UNTRACKED 0x80000000u
#define HH_MAKE(stamp, count, un) \
    (((uint32_t)(stamp) & 0xffffu) | ((uint32_t)(count) << 16) | \
     ((un) ? HH_UNTRACKED : 0u))

/* Write-protect a sorted list of home pages and make them RO. */
static void rearm_pages(ph_dsm *c, ph_dsm_vec *sel)
{
    sort_pages(sel->v, sel->n);
    for_runs(c, sel->v, sel->n, protect_ro, 0);
    for (size_t i = 0; i < sel->n; i++) {
        size_t p = (size_t)sel->v[i];
        c->state[p] = (uint8_t)((c->state[p] & ~(PGS_MASK | PGF_HOMERW)) |
                                PGS_RO);
    }
}

/* Untracked home pages sel (a list of them, sorted on return) out of the
 * untracked list and write-protected: their next write faults again. */
static void untracked_rearm(ph_dsm *c, ph_dsm_vec *sel)
{
    for (size_t i = 0; i < sel->n; i++)
        c->state[sel->v[i]] |= PGF_TMP;
    size_t k = 0;
    for (size_t i = 0; i < c->untracked.n; i++)
        if (!(c->state[c->untracked.v[i]] & PGF_TMP))
            c->untracked.v[k++] = c->untracked.v[i];
    c->untracked.n = k;
    for (size_t i = 0; i < sel->n; i++)
        c->state[sel->v[i]] &= (uint8_t)~PGF_TMP;
    rearm_pages(c, sel);
}

/* Untracked pages back to tracked, the next write (in the next write
 * interval) counting as the (K)th consecutive one. */
static void retrack_all(ph_dsm *c, int note)
{
    if (c->untracked.n == 0)
        return;
    uint32_t k = c->home_untrack_after > 0 ? (uint32_t)c->home_untrack_after
                                            : 1;
    for (size_t i = 0; i < c->untracked.n; i++) {
        size_t p = (size_t)c->untracked.v[i];
        c->home_hist[p] = HH_MAKE(c->home_wiv, k - 1, 0);
        if (note)
            note_written(c, p);
    }
    rearm_pages(c, &c->untracked);
    c->st.home_retracked += c->untracked.n;
    c->untracked.n = 0;
}

void ph_dsm_home_foreign(ph_dsm *c, const ph_dsm_seg *segs, size_t nsegs)
{
    if (c->nranks == 1)
        return;
    ph_dsm_vec back = {0};
    for (size_t i = 0; i < nsegs; i++) {
        if (segs[i].nwriters == 1 && segs[i].writer == c->rank)
            continue;
        for (uint64_t p = segs[i].start;
             p < segs[i].start + segs[i].len && p < c->npages; p++) {
            uint32_t h = c->home_hist[p];
            if (!h)
                continue;          /* no history: not homed here, or new */
            if (h & HH_UNTRACKED)
                push(c, &back, p);
            c->home_hist[p] = HH_MAKE(HH_STAMP(h), 0, 0);
        }
    }
    if (back.n == 0)
        return;
    /* those go back to tracked: out of the untracked list, write-protected */
    untracked_rearm(c, &back);
    c->st.home_retracked += back.n;
    ph_dsm_vec_free(&back);
}

void ph_dsm_home_barrier(ph_dsm *c, uint32_t interval)
{
    ph_dsm_vec sel = {0};
    if (c->nranks == 1) {          /* nobody caches anything: stay writable */
        for (size_t i = 0; i < c->home_rw.n; i++)
            c->state[c->home_rw.v[i]] &= (uint8_t)~PGF_HOMERW;
        c->home_rw.n = 0;
        return;
    }
    uint32_t k = (uint32_t)c->home_untrack_after;
    /* a write interval: this rank wrote a tracked home page */
    for (size_t i = 0; i < c->home_rw.n; i++)
        if (c->state[c->home_rw.v[i]] & PGF_HOMERW) {
            c->home_wiv++;
            c->home_wiv_bar = (uint64_t)interval + 1;
            break;
        }
    uint32_t now = c->home_wiv;
    for (size_t i = 0; i < c->home_rw.n; i++) {
        uint64_t p = c->home_rw.v[i];
        if (!(c->state[p] & PGF_HOMERW))
            continue;
        uint32_t h = c->home_hist[p];
        /* written in this write interval and in one of the two before
         * (every one, or every other one: Jacobi's two grids) */
        uint32_t gap = (now - HH_STAMP(h)) & 0xffffu;
        uint32_t cnt = HH_COUNT(h) && gap >= 1 && gap <= 2 ? HH_COUNT(h) + 1
                                                             : 1;
        if (cnt > 255)
            cnt = 255;
        if (k > 0 && cnt >= k) {
            /* stays writable, in every notice from now on */
            c->home_hist[p] = HH_MAKE(now, cnt, 1);
            c->state[p] &= (uint8_t)~PGF_HOMERW;
            push(c, &c->untracked, p);
            c->st.home_untracked++;
        } else {
            c->home_hist[p] = HH_MAKE(now, cnt, 0);
            push(c, &sel, p);
        }
    }
    c->home_rw.n = 0;
    rearm_pages(c, &sel);
    ph_dsm_vec_free(&sel);
    /* re-check the untracked pages now and then; each time most of them
     * were untracked again at once, wait twice as long for the next */
    if (c->home_recheck > 0) {
        if (!c->recheck_next)
            c->recheck_next = (uint32_t)c->home_recheck;
        if (interval >= c->recheck_next && c->untracked.n > 0) {
            c->recheck_last = c->untracked.n;
            retrack_all(c, 0);
            c->recheck_at = interval;
            c->recheck_wiv = c->home_wiv;
            c->recheck_period = c->recheck_period ? c->recheck_period
                                                  : (uint32_t)c->home_recheck;
            c->recheck_next = interval + c->recheck_period;
        } else if (c->recheck_at && c->home_wiv - c->recheck_wiv >= 2) {
            /* two write intervals after a re-check: were they untracked
             * again? */
            if (c->untracked.n * 10 >= c->recheck_last * 9 &&
                c->recheck_period < (1u << 20)) {
                c->recheck_period *= 2;
                c->recheck_next = c->recheck_at + c->recheck_period;
            }
            c->recheck_at = 0;
        }
    }
}

void ph_dsm_home_release(ph_dsm *c, uint32_t interval)
{
    ph_dsm_vec sel = {0};
    if (c->nranks == 1) {
        ph_dsm_home_barrier(c, interval);
        return;
    }
    for (size_t i = 0; i < c->home_rw.n; i++) {
        uint64_t p = c->home_rw.v[i];
        if (c->state[p] & PGF_HOMERW)
            push(c, &sel, p);
    }
    c->home_rw.n = 0;
    rearm_pages(c, &sel);
    ph_dsm_vec_free(&sel);
    retrack_all(c, 1);
}

/* ---- invalidation --------------------------------------------------- */

static int punch(ph_dsm *c, size_t page, size_t n, int unused)
{
    (void)unused;
    c->fops->drop(c, page, n);
    if (fallocate(c->memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                  (off_t)(page * PH_DSM_PAGE), (off_t)(n * PH_DSM_PAGE)) < 0)
        ph_dsm_fatal(c, "punching %zu page(s) out of the arena memfd at page "
                  "%zu: %s", n, page, strerror(errno));
    return 0;
}

/* Drop the entries of the dirty list whose page is no longer dirty. */
static void dirty_compact(ph_dsm *c)
{
    size_t k = 0;
    for (size_t i = 0; i < c->dirty.n; i++) {
        uint64_t p = c->dirty.v[i];
        if (c->state[p] & PGF_DIRTY)
            c->dirty.v[k++] = p;
    }
    c->dirty.n = k;
}

/* Drop cached copies from the arena.  With userfaultfd the pages stay in
 * the memfd, only their arena mapping goes (MADV_DONTNEED on a shared
 * mapping keeps the page cache): the next access is a minor fault, and
 * the refetch lands in a page that is already there -- the window view
 * keeps its mapping, so the get does not fault and allocate and zero a
 * page in the kernel (a punched hole costs that at every refetch).  The
 * stale bytes are never seen: the page is INVALID until the fetch
 * overwrote them.  With sigsegv the page is punched out. */
static int unmap_copies(ph_dsm *c, size_t page, size_t n, int unused)
{
    if (c->fops != &ph_dsm_fault_uffd)
        return punch(c, page, n, unused);
    if (madvise(c->arena + page * PH_DSM_PAGE, n * PH_DSM_PAGE,
                MADV_DONTNEED) < 0)
        ph_dsm_fatal(c, "unmapping %zu cached page(s) at arena page %zu: %s",
                     n, page, strerror(errno));
    return 0;
}

/* Invalidate the cached pages of a list (any order, duplicates and pages
 * that are not cached allowed). */
static void invalidate_list(ph_dsm *c, uint64_t *pages, size_t n)
{
    if (n == 0)
        return;
    ph_dsm_vec dirty = {0}, drop = {0};
    for (size_t i = 0; i < n; i++) {
        size_t p = (size_t)pages[i];
        uint8_t s = c->state[p];
        if ((s & PGS_MASK) == PGS_INVALID || (s & PGF_TMP))
            continue;
        if (ph_dsm_home_known(c, p) == c->rank)
            continue;
        c->state[p] |= PGF_TMP;               /* dedup */
        push(c, &drop, p);
        c->pinfo[p].flags &= (uint8_t)~PIF_REFRESHED;   /* unused */
        if (s & PGF_DIRTY)
            push(c, &dirty, p);
    }
    if (dirty.n) {
        /* write-protect, flush, then drop (the writer refaults) */
        sort_pages(dirty.v, dirty.n);
        flush_pages(c, dirty.v, dirty.n, 0, 0);
        dirty_compact(c);
    }
    sort_pages(drop.v, drop.n);
    for_runs(c, drop.v, drop.n, unmap_copies, 0);
    for (size_t i = 0; i < drop.n; i++) {
        size_t p = (size_t)drop.v[i];
        c->state[p] = (uint8_t)(c->state[p] &
                                ~(PGS_MASK | PGF_TMP | PGF_DIRTY));
    }
    c->st.invalidations += drop.n;
    c->st.cur.invalidated += drop.n;
    ph_dsm_vec_free(&dirty);
    ph_dsm_vec_free(&drop);
}

void ph_dsm_invalidate_pages(ph_dsm *c, uint64_t *pages, size_t n)
{
    invalidate_list(c, pages, n);
}

/* REFRESH.  An iterative program reads, after every barrier, pages its
 * neighbours wrote before it (a stencil's halo rows, a vector every rank
 * reads): a read miss each, early in the interval, when the home is busy
 * computing -- over a transport that needs the target's progress (UCX
 * over TCP) the get then waits for the home's service thread.  So the
 * last step of a barrier fetches at once the copies this rank lacks and
 * is expected to read in the interval that begins, while every rank is
 * still in the barrier (every diff has landed, every home has moved; the
 * ranks meet once more after it, so that a home drives progress for the
 * gets), runs of one home in one get each, all waited for together.
 *
 * The expectation comes from this rank's own reads, seen as faults: a
 * read miss (with the pages it reads ahead), or the first access of a
 * refreshed copy (which stays unmapped until then: a minor fault the
 * service thread maps without a transfer).  Each such page keeps the
 * interval of its last read (ruse, mod 128) and whether the read before
 * was one interval earlier or two (PIF_PERIODIC, ruse bit 7), so a page
 * read at every interval is refreshed at every barrier and one read at
 * every other interval (a Jacobi solver's two grids) at every other
 * barrier, from their second read on.  A page read once, or at longer
 * intervals (CG's vectors, read once in an iteration of many barriers),
 * is never refreshed; one not read for two intervals leaves the list (a
 * copy that stays valid, nobody having written it, needs nothing).  A
 * read of the page by a thread outside the barrier (a data race in
 * release consistency) waits in its fault until the refresh is done.
 * userfaultfd only: under page protection the first access of a readable
 * page's protected copy would be taken for a write. */
static int refresh_on(const ph_dsm *c)
{
    return c->refresh && c->fops == &ph_dsm_fault_uffd && c->nranks > 1;
}

/* The interval running, as ruse keeps it. */
static unsigned interval_now(const ph_dsm *c)
{
    return (unsigned)(c->st.barriers & 127u);
}

/* Walk the list at the end of interval `now`: drop the pages not read
 * for two intervals (PIF_REREAD goes); 1 when page p is due to be read in
 * the next interval: read in this one, at every interval, or in the one
 * before, at every other one. */
static int reread_due(ph_dsm *c, size_t p, unsigned now, int *keep)
{
    ph_dsm_pinfo *pi = &c->pinfo[p];
    *keep = 0;
    if (!(pi->flags & PIF_REREAD))
        return 0;                       /* freed meanwhile */
    unsigned gap = (now - (pi->ruse & 127u)) & 127u;
    if (gap >= 2) {
        pi->flags &= (uint8_t)~(PIF_REREAD | PIF_PERIODIC);
        return 0;
    }
    *keep = 1;
    if (!(pi->flags & PIF_PERIODIC))
        return 0;
    return (pi->ruse & 0x80u) ? gap == 1 : gap == 0;
}

int ph_dsm_refresh_wanted(ph_dsm *c)
{
    if (!refresh_on(c))
        return 0;
    unsigned now = interval_now(c);
    size_t k = 0;
    int any = 0, keep;
    for (size_t i = 0; i < c->reread.n; i++) {
        any |= reread_due(c, (size_t)c->reread.v[i], now, &keep);
        if (keep)
            c->reread.v[k++] = c->reread.v[i];
    }
    c->reread.n = k;
    return any;
}

void ph_dsm_note_read(ph_dsm *c, size_t page)
{
    if (!refresh_on(c))
        return;
    ph_dsm_pinfo *pi = &c->pinfo[page];
    unsigned now = interval_now(c);
    if (!(pi->flags & PIF_REREAD)) {
        pi->flags = (uint8_t)((pi->flags | PIF_REREAD) & ~PIF_PERIODIC);
        pi->ruse = (uint8_t)now;
        push(c, &c->reread, page);
        return;
    }
    unsigned gap = (now - (pi->ruse & 127u)) & 127u;
    if (gap == 0)
        return;
    /* a period of one or two intervals, or none yet */
    if (gap <= 2)
        pi->flags |= PIF_PERIODIC;
    else
        pi->flags &= (uint8_t)~PIF_PERIODIC;
    pi->ruse = (uint8_t)(now | (gap == 2 ? 0x80u : 0u));
}

static void refresh_wait(ph_dsm *c, MPI_Request *q, const int *home, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        ph_dsm_op_begin(c, "a barrier's refresh", home[j]);
        ph_dsm_wait_req(c, &q[j], "MPI_Rget (refresh)", home[j]);
        ph_dsm_op_end(c);
    }
}

void ph_dsm_refresh(ph_dsm *c)
{
    if (!refresh_on(c) || c->reread.n == 0)
        return;
    /* the pages due to be read in the interval that begins, which this
     * rank lacks (dropped now or before); the list was pruned at this
     * barrier's start (ph_dsm_refresh_wanted, the same interval) */
    unsigned now = interval_now(c);
    ph_dsm_vec sel = {0};
    int keep;
    for (size_t i = 0; i < c->reread.n; i++) {
        size_t p = (size_t)c->reread.v[i];
        int home = ph_dsm_home_known(c, p);
        if (reread_due(c, p, now, &keep) &&
            (c->state[p] & PGS_MASK) == PGS_INVALID &&
            !(c->pinfo[p].flags & PIF_READONLY) && home >= 0 &&
            home != c->rank)
            push(c, &sel, p);
    }
    if (sel.n == 0) {
        ph_dsm_vec_free(&sel);
        return;
    }
    sort_pages(sel.v, sel.n);
    enum { BATCH = 64, RUN_MAX = 64 };
    MPI_Request q[BATCH];
    int qhome[BATCH];
    size_t nq = 0, runs = 0, k = 0;
    for (size_t i = 0; i <= sel.n; i++) {
        /* a run: consecutive pages (sel is sorted, without duplicates),
         * one home, at most RUN_MAX */
        if (i < sel.n && i > k && sel.v[i] == sel.v[i - 1] + 1 &&
            i - k < RUN_MAX &&
            ph_dsm_home_known(c, (size_t)sel.v[i]) ==
                ph_dsm_home_known(c, (size_t)sel.v[k]))
            continue;
        if (i > k) {
            size_t p = (size_t)sel.v[k], len = i - k;
            int home = ph_dsm_home_known(c, p);
            if (nq == BATCH) {
                refresh_wait(c, q, qhome, nq);
                nq = 0;
            }
            int rc = MPI_Rget(c->wview + p * PH_DSM_PAGE,
                              (int)(len * PH_DSM_PAGE), MPI_BYTE, home,
                              (MPI_Aint)(p * PH_DSM_PAGE),
                              (int)(len * PH_DSM_PAGE), MPI_BYTE, c->win,
                              &q[nq]);
            ph_dsm_mpi_check(c, rc, "MPI_Rget (refresh)", home);
            qhome[nq++] = home;
            runs++;
        }
        k = i;
    }
    refresh_wait(c, q, qhome, nq);
    for (size_t i = 0; i < sel.n; i++) {
        size_t p = (size_t)sel.v[i];
        set_state(c, p, PGS_RO);
        cached_add(c, p);
        c->pinfo[p].flags |= PIF_REFRESHED;
    }
    c->st.rma_calls += runs;
    c->st.refresh_calls += runs;
    c->st.pages_refreshed += sel.n;
    ph_dsm_vec_free(&sel);
}

void ph_dsm_invalidate(ph_dsm *c, size_t page)
{
    uint64_t p = page;
    invalidate_list(c, &p, 1);
}

/* Drop stale entries of the cached list. */
static void cached_compact(ph_dsm *c)
{
    size_t k = 0;
    for (size_t i = 0; i < c->cached.n; i++) {
        uint64_t p = c->cached.v[i];
        if ((c->state[p] & PGF_CACHED) &&
            (c->state[p] & PGS_MASK) != PGS_INVALID)
            c->cached.v[k++] = p;
        else
            c->state[p] &= (uint8_t)~PGF_CACHED;
    }
    c->cached.n = k;
}

void ph_dsm_invalidate_all(ph_dsm *c)
{
    cached_compact(c);
    ph_dsm_vec all = {0};
    for (size_t i = 0; i < c->cached.n; i++)
        if (!(c->pinfo[c->cached.v[i]].flags & PIF_READONLY))
            push(c, &all, c->cached.v[i]);    /* nobody writes those */
    invalidate_list(c, all.v, all.n);
    ph_dsm_vec_free(&all);
    cached_compact(c);
    ph_dsm_pristine_mark(c, 0, c->npages, 0);   /* written: unknown where */
    c->st.invalidate_all++;
}

void ph_dsm_invalidate_range(ph_dsm *c, size_t p0, size_t p1)
{
    ph_dsm_vec sel = {0};
    for (size_t p = p0; p < p1 && p < c->npages; p++) {
        uint8_t s = c->state[p];
        if ((s & PGS_MASK) != PGS_INVALID && (s & PGF_CACHED) &&
            !(c->pinfo[p].flags & PIF_READONLY))
            push(c, &sel, p);
    }
    invalidate_list(c, sel.v, sel.n);
    ph_dsm_vec_free(&sel);
    ph_dsm_pristine_mark(c, p0, p1 - p0, 0);
}

static void filter(ph_dsm_vec *v, const uint8_t *state, uint8_t flag, size_t p0,
                   size_t p1)
{
    size_t k = 0;
    for (size_t i = 0; i < v->n; i++) {
        uint64_t p = v->v[i];
        if (p >= p0 && p < p1)
            continue;
        if (!(state[p] & flag))
            continue;
        v->v[k++] = p;
    }
    v->n = k;
}

void ph_dsm_forget_range(ph_dsm *c, size_t p0, size_t p1)
{
    for (size_t i = 0; i < c->dirty.n; i++) {
        uint64_t p = c->dirty.v[i];
        if (p >= p0 && p < p1)
            drop_twin(c, p);
    }
    filter(&c->dirty, c->state, PGF_DIRTY, p0, p1);
    filter(&c->home_rw, c->state, PGF_HOMERW, p0, p1);
    filter(&c->iw, c->state, PGF_IW, p0, p1);
    filter(&c->np, c->state, PGF_NP, p0, p1);
    filter(&c->cached, c->state, PGF_CACHED, p0, p1);
    {
        size_t k = 0;                 /* PIF_FETCHED goes with the pinfo */
        for (size_t i = 0; i < c->fetched.n; i++)
            if (c->fetched.v[i] < p0 || c->fetched.v[i] >= p1)
                c->fetched.v[k++] = c->fetched.v[i];
        c->fetched.n = k;
        k = 0;                        /* so does PIF_REREAD */
        for (size_t i = 0; i < c->reread.n; i++)
            if (c->reread.v[i] < p0 || c->reread.v[i] >= p1)
                c->reread.v[k++] = c->reread.v[i];
        c->reread.n = k;
    }
    {
        size_t k = 0;
        for (size_t i = 0; i < c->untracked.n; i++)
            if (c->untracked.v[i] < p0 || c->untracked.v[i] >= p1)
                c->untracked.v[k++] = c->untracked.v[i];
        c->untracked.n = k;
    }
    memset(c->home_hist + p0, 0, (p1 - p0) * sizeof *c->home_hist);
    memset(c->pinfo + p0, 0, (p1 - p0) * sizeof *c->pinfo);
    memset(c->moved_at + p0, 0, (p1 - p0) * sizeof *c->moved_at);
    memset(c->evid + p0, 0, (p1 - p0) * sizeof *c->evid);
    ph_dsm_live_mark(c, p0, p1 - p0, 0);
    c->fops->enable(c, p0, p1 - p0, 0);
    punch(c, p0, p1 - p0, 0);
    memset(c->state + p0, 0, p1 - p0);
    memset(c->home_ovr + p0, 0, (p1 - p0) * sizeof *c->home_ovr);
    /* give the table memory back when a large range goes */
    if (p1 - p0 >= 4 * PH_DSM_PAGE) {
        size_t a = (p0 + PH_DSM_PAGE - 1) & ~(PH_DSM_PAGE - 1);
        size_t b = p1 & ~(PH_DSM_PAGE - 1);
        if (b > a)
            madvise(c->state + a, b - a, MADV_DONTNEED);
    }
}

/* ---- home migration, writers, read-only ranges ---------------------- */

void ph_dsm_migrate_settle(ph_dsm *c, const ph_dsm_move *mv, size_t n)
{
    ph_dsm_vec sel = {0};
    for (size_t i = 0; i < n; i++) {
        if (mv[i].to != c->rank || !mv[i].unsent)
            continue;
        uint64_t end = mv[i].start + mv[i].len;
        for (uint64_t p = mv[i].start; p < end && p < c->npages; p++)
            if (c->state[p] & PGF_DIRTY)
                push(c, &sel, p);
    }
    if (sel.n == 0)
        return;
    /* write-protected first, as a flush does: a thread writing meanwhile
     * (a data race with the barrier) waits in its fault */
    sort_pages(sel.v, sel.n);
    for_runs(c, sel.v, sel.n, protect_ro, 0);
    for (size_t i = 0; i < sel.n; i++)
        copy_clean(c, (size_t)sel.v[i]);
    dirty_compact(c);
    c->st.migrated_unsent += sel.n;
    ph_dsm_vec_free(&sel);
}

void ph_dsm_migrate_apply(ph_dsm *c, const ph_dsm_move *mv, size_t n)
{
    uint64_t in = 0, out = 0, all = 0, carried = 0, bycost = 0;
    ph_dsm_vec wp = {0};             /* writable old home pages */
    ph_dsm_vec gone = {0};           /* old home copies without the writes */
    /* A page moving here by JIAJIA's rule was written by this rank alone
     * in the interval ending now: it counts as a home page written in this
     * write interval (which it makes one, if no home page was written), so
     * its next writes are a run and it stops being tracked as soon as a
     * page homed here from the start would. */
    for (size_t i = 0; i < n; i++)
        if (mv[i].to == c->rank && !mv[i].carry &&
            c->home_wiv_bar != c->st.barriers + 1) {
            c->home_wiv++;
            c->home_wiv_bar = c->st.barriers + 1;
            break;
        }
    for (size_t i = 0; i < n; i++) {
        uint64_t end = mv[i].start + mv[i].len;
        if (end > c->npages)
            end = c->npages;
        for (uint64_t p = mv[i].start; p < end; p++) {
            int old = ph_dsm_home_known(c, (size_t)p);
            uint8_t s = c->state[p];
            if (mv[i].to == c->rank && mv[i].carry &&
                (s & PGS_MASK) == PGS_INVALID) {
                /* moved by cost, no valid copy here: the old home's master
                 * copy is current (every diff landed) and stays as it is
                 * until the barrier's last MPI_Ibarrier, after this get.
                 * The page is not mapped here: the next access is a home
                 * fault on the data fetched. */
                size_t k = 1;
                while (p + k < end && k < 64 &&
                       (c->state[p + k] & PGS_MASK) == PGS_INVALID &&
                       ph_dsm_home_known(c, (size_t)(p + k)) == old)
                    k++;
                fetch(c, (size_t)p, k, old);
                for (size_t j = 0; j < k; j++) {
                    c->state[p + j] &= (uint8_t)~PGF_CACHED;
                    c->home_hist[p + j] = 0;
                    c->home_ovr[p + j] = c->rank + 1;
                }
                in += k;
                carried += k;
                bycost += k;
                all += k;
                p += k - 1;
                continue;
            }
            if (mv[i].to == c->rank) {
                /* our copy is valid (JIAJIA's rule: we asked for the page
                 * with it, and a barrier does not drop a copy only we
                 * wrote; the cost rule: the copy survived the barrier) and
                 * the master copy now; write-protected, so the next write
                 * is noted */
                if ((s & PGS_MASK) == PGS_INVALID || (s & PGF_DIRTY))
                    ph_dsm_fatal(c, "home migration of arena page %zu to "
                                 "this rank: its copy here is %s", (size_t)p,
                                 (s & PGF_DIRTY) ? "still dirty" : "invalid");
                c->state[p] = (uint8_t)(s & ~PGF_CACHED);
                in++;
            } else if (old == c->rank && mv[i].unsent) {
                /* JIAJIA's rule, the page's first move: the writer kept
                 * its writes (its diff did not come, ph_dsm_migrate_
                 * settle), so our copy is stale: it goes.  Never written
                 * here in the interval (then we would be a writer too),
                 * so neither dirty nor untracked */
                if ((s & PGS_MASK) == PGS_RW)
                    ph_dsm_fatal(c, "home migration of arena page %zu away "
                                 "from this rank: it is writable here",
                                 (size_t)p);
                push(c, &gone, p);
                out++;
            } else if (old == c->rank) {
                /* our master copy is current (every diff landed before
                 * the barrier's invalidations): a cached copy from now on.
                 * Not mapped here: the next access fetches it.  A home
                 * page no longer tracked (written at every interval) is
                 * still writable: write-protected below, or its next
                 * writes would go nowhere (JIAJIA's rule never moves one:
                 * its home is always among its writers; the cost rule
                 * may) */
                if ((s & PGS_MASK) == PGS_RW)
                    push(c, &wp, p);
                if ((s & PGS_MASK) != PGS_INVALID)
                    cached_add(c, (size_t)p);
                out++;
            }
            c->home_hist[p] = mv[i].to == c->rank && !mv[i].carry
                                  ? HH_MAKE(c->home_wiv, 1, 0) : 0;
            c->home_ovr[p] = mv[i].to + 1;
            bycost += mv[i].carry != 0;
            all++;
        }
    }
    if (wp.n > 0)
        untracked_rearm(c, &wp);
    ph_dsm_vec_free(&wp);
    /* homed elsewhere now: dropped as any cached copy another rank wrote */
    invalidate_list(c, gone.v, gone.n);
    ph_dsm_vec_free(&gone);
    c->st.migrations += all;
    c->st.migrations_cost += bycost;
    c->st.migrated_in += in;
    c->st.migrated_out += out;
    c->st.migrated_carried += carried;
    c->st.cur.migrated += all;
    c->st.cur.migrated_in += in;
}

void ph_dsm_writers_note(ph_dsm *c, const ph_dsm_seg *segs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (uint64_t p = segs[i].start;
             p < segs[i].start + segs[i].len && p < c->npages; p++) {
            ph_dsm_pinfo *pi = &c->pinfo[p];
            int32_t w = pi->writers == 0    ? PH_DSM_WRITER_NONE
                        : pi->writers == -1 ? PH_DSM_WRITER_MANY
                                            : pi->writers - 1;
            w = ph_dsm_writers_add(w, segs[i].nwriters, segs[i].writer);
            pi->writers = w == PH_DSM_WRITER_NONE ? 0
                          : w == PH_DSM_WRITER_MANY ? -1 : w + 1;
            if (pi->write_ivs < UINT16_MAX)
                pi->write_ivs++;
        }
        ph_dsm_pristine_mark(c, segs[i].start, segs[i].len, 0);
    }
}

void ph_dsm_readonly_mark(ph_dsm *c, size_t p0, size_t p1)
{
    ph_dsm_vec prot = {0};
    for (size_t p = p0; p < p1 && p < c->npages; p++) {
        c->pinfo[p].flags |= PIF_READONLY;
        /* writable home pages (untracked, or alone in the job) */
        if ((c->state[p] & PGS_MASK) == PGS_RW)
            push(c, &prot, p);
    }
    if (prot.n) {
        for (size_t i = 0; i < prot.n; i++)
            c->state[prot.v[i]] &= (uint8_t)~PGF_HOMERW;
        rearm_pages(c, &prot);
        size_t k = 0;
        for (size_t i = 0; i < c->untracked.n; i++) {
            uint64_t q = c->untracked.v[i];
            if (q >= p0 && q < p1)
                c->home_hist[q] = 0;
            else
                c->untracked.v[k++] = q;
        }
        c->untracked.n = k;
    }
    ph_dsm_vec_free(&prot);
    c->st.readonly_hints++;
    c->st.readonly_pages += p1 - p0;
}

/* ---- set-up --------------------------------------------------------- */

int ph_dsm_coherence_init(ph_dsm *c)
{
    c->last_alloc = -1;
    c->scratch = NULL;
    return 0;
}

void ph_dsm_coherence_fini(ph_dsm *c)
{
    for (size_t i = 0; i < c->ntwins; i++)
        free(c->twins[i]);
    free(c->twins);
    free(c->free_twins);
    c->twins = NULL;
    c->free_twins = NULL;
    c->ntwins = c->captwins = c->nfree_twins = 0;
    ph_dsm_vec_free(&c->dirty);
    ph_dsm_vec_free(&c->home_rw);
    ph_dsm_vec_free(&c->iw);
    ph_dsm_vec_free(&c->np);
    ph_dsm_vec_free(&c->cached);
    ph_dsm_vec_free(&c->fetched);
    ph_dsm_vec_free(&c->reread);
    ph_dsm_vec_free(&c->untracked);
    ph_dsm_vec_free(&c->gap);
}
