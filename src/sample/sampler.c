/*
 * sampler.c -- the SIGSEGV page-protection sampler, everything but the
 * handler (sigsegv.c): options, hot ranges, choosing and protecting the
 * watched runs, lifting them, draining the rings, statistics, and the
 * per-thread alternate signal stack.
 *
 * Runs.  A hot range is cut into runs of `run_pages` contiguous pages
 * (the last one may be shorter), the unit that is protected and trapped
 * together: the first touch of a watched run records one sample (that
 * page, the toucher's node) and opens the whole run.  Each protected run
 * can split a kernel VMA in up to three, so at most `max_runs` runs are
 * protected at once.
 *
 * arm(full).  First lifts the previous interval's protections.  Budget
 * mode: a rotating cursor walks the runs of all ranges in the order they
 * were added, taking runs with a resident page until `pages_per_interval`
 * pages (or max_runs runs) are watched; the next interval continues where
 * this one stopped, so every resident page is watched within
 * ceil(resident / budget) intervals (choose_budget); set_budget() changes
 * the budget from the next arm on (the engine's first sweep and its
 * sampling budget), set_run_pages() the rotation's runs (the first sweep
 * where traps are dear: runs of several pages, a trap recording a sample
 * for each page of its run, with the toucher's node).  Full
 * mode (full, or pages_per_interval == 0) watches every page: runs grow
 * beyond run_pages when needed so that all ranges fit in max_runs runs.
 * Adjacent watched runs are protected with one mprotect(2) call.
 *
 * Protocol with the handler (see sigsegv.h): a run is ARMING while it is
 * being protected, ARMED once it is, and IDLE only after it has been
 * opened again; whoever moves it out of ARMED (handler: FIRING, us:
 * LIFTING) opens it.  So a run's pages are out (moved to the stash, or
 * PROT_NONE) only while it is ARMING, ARMED, FIRING or LIFTING, never
 * while IDLE or SUSPENDED.  Every ARMING..ARMED section (protect, resume)
 * runs inside ph_sig_arm_enter/leave: it waits for the query holds of
 * threads asking the kernel about pages (sigsegv.c), so that no page is
 * moved out under a move_pages(2) query that opened it.  The run geometry of a range changes only while none of its runs is armed
 * and after every handler has left the range.  remove_range() retires the
 * range's slot: REMOVING, lift, wait until no handler is inside, free.
 * Samples carry their slot's generation; drain() drops those of retired
 * ranges, so no drain reports a page of a removed range.
 *
 * VMAs: the kernel merges the pieces of a split range again when they
 * are lifted, but only pieces that share an anon_vma.  Memory first
 * touched while split (never-faulted pages armed and then touched) gets
 * one anon_vma per piece, and those pieces stay separate VMAs for good;
 * nor can the kernel give a 2 MiB page to memory faulted inside a piece
 * smaller than 2 MiB.  So arm() leaves out runs with no resident page
 * (mincore): untouched memory is first touched unwatched.
 *
 * First touches on a machine that cannot see them (ph_os_tracks_touch:
 * the simulator, where homes are virtual and a page would otherwise get
 * the node of whoever asks about it first): a range added is watched at
 * once where it is untouched, its runs made as coarse as the free room
 * under max_runs needs, until the end of the second interval that
 * follows; the handler tells the machine the run's first toucher
 * (ph_os_note_touch), and so does the region gate for what serial code
 * touched while the mprotect mechanism's runs were open
 * (note_serial_touches).  Memory first touched while watched there stays cut
 * into that many VMAs (at most max_runs), which on the simulator costs
 * nothing that matters.
 *
 * Limits: PH_SIG_MAX_INSTANCES samplers and PH_SIG_MAX_SLOTS ranges at
 * once (the handler scans the range table linearly up to its high-water
 * mark, after trying the range the thread hit last; a query's pages,
 * after the slot or the gap its previous page was found in); rings hold
 * ring_samples entries rounded up
 * to a power of two (at least 64).
 *
 * Threads and rings: each sampler owns a pool of single-producer rings
 * that threads claim on their first trap.  ph_sampler_thread_init()
 * (thread.c) gives the calling thread an alternate signal stack and a
 * thread-exit hook that gives its rings back.  Threads that never call it
 * keep their rings until the sampler closes.
 */
#include "sample/sigsegv.h"
#include "sample/source.h"

#include "base/clock.h"
#include "base/error.h"
#include "os/pagemap.h"
#include "topo/topo.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PG_BYTES ((uintptr_t)4096)
#define DRAIN_BATCH 512
#define DEFAULT_RING_SAMPLES 4096

typedef struct sp_range {
    size_t slot;
    uintptr_t start;
    size_t npages;
    int fresh;   /* arms left under first-touch watching (tracks_touch) */
} sp_range;

typedef struct sp_armed {
    size_t slot;
    size_t run;
    /* userfaultfd: the gate watched the run again after serial code had
     * taken it, this interval (resume: once an interval) */
    int resumed;
    /* chosen by first_touch_arm (tracks_touch): whoever touches its
     * pages first is to be told to the machine */
    int first_touch;
} sp_armed;

typedef struct sampler {
    ph_source src;
    size_t inst;
    ph_sampler_opts o;
    sp_range *ranges;
    size_t nranges, capranges;
    size_t cur_range, cur_run;   /* rotation cursor */
    size_t cur_g;                /* the run size cur_run counts in */
    /* set_run_pages: the rotation's runs while above o.run_pages, each
     * trap standing for its run (0: o.run_pages, page-exact) */
    size_t credit_run_pages;
    sp_armed *armed;             /* runs armed this interval, max_runs */
    size_t narmed;
    ph_source_stats st;
    uint64_t foreign_base;
    size_t rings_bytes;
    void *ring_mem;
    int tracks_touch;            /* ph_os_tracks_touch of the machine */
} sampler;

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

static int is_uffd(const sampler *s)
{
    return ph_sig_insts[s->inst].mech == PH_SIG_MECH_UFFD;
}

static void wait_zero(atomic_long *count)
{
    while (atomic_load_explicit(count, memory_order_seq_cst) != 0)
        sched_yield();
}

static size_t div_up(size_t a, size_t b)
{
    return (a + b - 1) / b;
}

/* ---- options --------------------------------------------------------------- */

static size_t pow2_at_least(size_t v)
{
    size_t p = 64;
    while (p < v && p < ((size_t)1 << 24))
        p <<= 1;
    return p;
}

/* The options as given (the sampler reads no tunable: the caller filled
 * them once), checked; ring_samples 0 takes the default.  0 or -1/EINVAL. */
static int resolve_opts(const ph_sampler_opts *in, ph_sampler_opts *out)
{
    if (!in)
        return ph_fail(EINVAL, "sampler: no options");
    if (in->max_runs < 1 || in->run_pages < 1)
        return ph_fail(EINVAL, "sampler: max_runs (%zu) and run_pages (%zu) "
                       "must be at least 1", in->max_runs, in->run_pages);
    *out = *in;
    if (!out->ring_samples)
        out->ring_samples = DEFAULT_RING_SAMPLES;
    out->ring_samples = pow2_at_least(out->ring_samples);
    return 0;
}

/* ---- the instance (rings, node table) ------------------------------------- */

static size_t ring_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_CONF);
    size_t r = n > 0 ? (size_t)n * 4 : 64;
    return r < 64 ? 64 : r > 1024 ? 1024 : r;
}

static int inst_rings(sampler *s, ph_sig_inst *in)
{
    size_t n = ring_count();
    in->rings = calloc(n, sizeof *in->rings);
    s->rings_bytes = n * s->o.ring_samples * sizeof(ph_sig_entry);
    s->ring_mem = mmap(NULL, s->rings_bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (!in->rings || s->ring_mem == MAP_FAILED) {
        free(in->rings);
        in->rings = NULL;
        if (s->ring_mem != MAP_FAILED)
            munmap(s->ring_mem, s->rings_bytes);
        s->ring_mem = NULL;
        return -1;
    }
    for (size_t k = 0; k < n; k++)
        in->rings[k].buf = (ph_sig_entry *)s->ring_mem + k * s->o.ring_samples;
    in->nrings = n;
    in->ring_mask = s->o.ring_samples - 1;
    return 0;
}

/* Claim a free instance entry for s and publish it.  0 or -1/errno. */
static int inst_open(sampler *s, ph_os *os)
{
    pthread_mutex_lock(&table_lock);
    size_t i = 0;
    while (i < PH_SIG_MAX_INSTANCES &&
           PH_SIG_STATE(atomic_load(&ph_sig_insts[i].word)) != PH_SIG_FREE)
        i++;
    if (i == PH_SIG_MAX_INSTANCES) {
        pthread_mutex_unlock(&table_lock);
        return ph_fail(EMFILE, "sampler: %d samplers are open already",
                       PH_SIG_MAX_INSTANCES);
    }
    ph_sig_inst *in = &ph_sig_insts[i];
    if (inst_rings(s, in) != 0) {
        pthread_mutex_unlock(&table_lock);
        return ph_fail(ENOMEM, "sampler: no memory for the sample rings");
    }
    in->os = os;
    in->tracks_touch = s->o.first_touch && ph_os_tracks_touch(os);
    for (int id = 0; id < PH_SIG_NODE_IDS; id++)
        in->node_index[id] = (int16_t)ph_topo_node_index(os->topo, id);
    atomic_store(&in->traps, 0);
    atomic_store(&in->credited, 0);
    atomic_store(&in->dropped, 0);
    atomic_store(&in->serial, 0);
    atomic_store(&in->handler_ns, 0);
    uint64_t gen = PH_SIG_GEN(atomic_load(&in->word)) + 1;
    atomic_store_explicit(&in->word, PH_SIG_WORD(gen, PH_SIG_ACTIVE), memory_order_release);
    s->inst = i;
    pthread_mutex_unlock(&table_lock);
    return 0;
}

static void inst_close(sampler *s)
{
    ph_sig_inst *in = &ph_sig_insts[s->inst];
    pthread_mutex_lock(&table_lock);
    uint64_t gen = PH_SIG_GEN(atomic_load(&in->word)) + 1;
    atomic_store_explicit(&in->word, PH_SIG_WORD(gen, PH_SIG_FREE), memory_order_seq_cst);
    wait_zero(&in->users);
    munmap(s->ring_mem, s->rings_bytes);
    free(in->rings);
    in->rings = NULL;
    in->nrings = 0;
    pthread_mutex_unlock(&table_lock);
}

/* ---- hot ranges (slots) ----------------------------------------------------- */

static int overlaps_any(uintptr_t a, uintptr_t b)
{
    size_t n = atomic_load(&ph_sig_slot_hiwater);
    for (size_t i = 0; i < n; i++) {
        ph_sig_slot *sl = &ph_sig_slots[i];
        if (PH_SIG_STATE(atomic_load(&sl->word)) != PH_SIG_FREE &&
            a < atomic_load(&sl->end) && atomic_load(&sl->start) < b)
            return 1;
    }
    return 0;
}

/* A published slot for [a, b).  Its index, or -1/errno. */
static long slot_open(sampler *s, uintptr_t a, uintptr_t b)
{
    size_t nruns = div_up((b - a) / PG_BYTES, s->o.run_pages);
    atomic_uchar *runs = calloc(nruns, sizeof *runs);
    if (!runs)
        return ph_fail(ENOMEM, "sampler: no memory for %zu runs", nruns);
    pthread_mutex_lock(&table_lock);
    if (overlaps_any(a, b)) {
        pthread_mutex_unlock(&table_lock);
        free(runs);
        return ph_fail(EEXIST, "sampler: range %#lx+%zu overlaps a hot range",
                       (unsigned long)a, (size_t)(b - a));
    }
    size_t i = 0;
    while (i < PH_SIG_MAX_SLOTS && PH_SIG_STATE(atomic_load(&ph_sig_slots[i].word)) != PH_SIG_FREE)
        i++;
    if (i == PH_SIG_MAX_SLOTS) {
        pthread_mutex_unlock(&table_lock);
        free(runs);
        return ph_fail(ENOSPC, "sampler: more than %d hot ranges", PH_SIG_MAX_SLOTS);
    }
    ph_sig_slot *sl = &ph_sig_slots[i];
    atomic_store(&sl->start, a);
    atomic_store(&sl->end, b);
    atomic_store(&sl->run_pages, s->o.run_pages);
    atomic_store(&sl->credit, 0); /* page-exact until an arm says */
    atomic_store(&sl->runs, runs);
    atomic_store(&sl->inst, (int)s->inst);
    atomic_store(&sl->stash, 0);
    if (ph_sig_insts[s->inst].mech == PH_SIG_MECH_UFFD && ph_uffd_sampler_add(i) != 0) {
        int e = errno;
        pthread_mutex_unlock(&table_lock);
        free(runs);
        /* a copy: ph_fail writes the message it is given into the same
         * per-thread buffer */
        char why[200];
        snprintf(why, sizeof why, "%s", ph_error_message());
        return ph_fail(e, "sampler: range %#lx+%zu: %s", (unsigned long)a,
                       (size_t)(b - a), why);
    }
    uint64_t gen = PH_SIG_GEN(atomic_load(&sl->word)) + 1;
    atomic_store_explicit(&sl->word, PH_SIG_WORD(gen, PH_SIG_ACTIVE), memory_order_release);
    if (atomic_load(&ph_sig_slot_hiwater) <= i)
        atomic_store_explicit(&ph_sig_slot_hiwater, i + 1, memory_order_release);
    pthread_mutex_unlock(&table_lock);
    return (long)i;
}

/* After its runs are lifted: wait out the handlers and free the slot. */
static void slot_close(size_t i)
{
    ph_sig_slot *sl = &ph_sig_slots[i];
    wait_zero(&sl->inflight);
    pthread_mutex_lock(&table_lock);
    ph_uffd_sampler_remove(i);
    free(atomic_load(&sl->runs));
    atomic_store(&sl->runs, NULL);
    free(atomic_exchange(&sl->prog_prot, NULL));
    uint64_t gen = PH_SIG_GEN(atomic_load(&sl->word)) + 1;
    atomic_store_explicit(&sl->word, PH_SIG_WORD(gen, PH_SIG_FREE), memory_order_release);
    pthread_mutex_unlock(&table_lock);
}

/* Bytes of run r of slot i under its current geometry, and its start. */
static uintptr_t run_span(size_t i, size_t r, size_t *len)
{
    ph_sig_slot *sl = &ph_sig_slots[i];
    uintptr_t bytes = atomic_load(&sl->run_pages) * PG_BYTES;
    uintptr_t a = atomic_load(&sl->start) + r * bytes;
    uintptr_t end = atomic_load(&sl->end);
    *len = (size_t)((a + bytes < end ? a + bytes : end) - a);
    return a;
}

/* Change a range's run geometry (nothing of it armed), and whether a
 * trap stands for its whole run (credit). */
static void set_geometry_credit(size_t i, size_t run_pages, int credit)
{
    ph_sig_slot *sl = &ph_sig_slots[i];
    if (atomic_load(&sl->run_pages) == run_pages &&
        atomic_load(&sl->credit) == (unsigned char)credit)
        return;
    atomic_store_explicit(&sl->credit, (unsigned char)credit, memory_order_seq_cst);
    atomic_store_explicit(&sl->run_pages, run_pages, memory_order_seq_cst);
    wait_zero(&sl->inflight);
}

static void set_geometry(size_t i, size_t run_pages)
{
    set_geometry_credit(i, run_pages, 0);
}

/* ---- protecting and lifting ------------------------------------------------- */

static atomic_uchar *run_state(const sp_armed *e)
{
    return &atomic_load(&ph_sig_slots[e->slot].runs)[e->run];
}

/* End of the span of armed[k...]: consecutive entries whose runs are
 * adjacent in memory.  *span and *span_len describe it. */
static size_t span_end(const sampler *s, size_t k, size_t to, uintptr_t *span,
                       size_t *span_len)
{
    size_t len;
    *span = run_span(s->armed[k].slot, s->armed[k].run, &len);
    *span_len = len;
    size_t slot = s->armed[k].slot;
    for (k++; k < to; k++) {
        uintptr_t a = run_span(s->armed[k].slot, s->armed[k].run, &len);
        if (a != *span + *span_len || s->armed[k].slot != slot)
            break;
        *span_len += len;
    }
    return k;
}

/* Open span [span, span+len) made of armed[first, k): one call for the
 * mprotect mechanism (opening a run a handler already opened is
 * harmless); run by run for userfaultfd (each run is moved back and
 * unregistered as a whole). */
static void lift_span(sampler *s, size_t first, size_t k, uintptr_t span, size_t len)
{
    if (ph_sig_insts[s->inst].mech != PH_SIG_MECH_UFFD) {
        ph_sig_open_span(s->armed[first].slot, span, len);
        return;
    }
    (void)span;
    (void)len;
    for (size_t j = first; j < k; j++) {
        if (atomic_load(run_state(&s->armed[j])) != PH_RUN_LIFTING)
            continue;
        size_t rl;
        uintptr_t a = run_span(s->armed[j].slot, s->armed[j].run, &rl);
        ph_sig_open_span(s->armed[j].slot, a, rl);
    }
}

/* Lift armed[from, to): every run ends IDLE and read-write.  Runs a
 * handler is opening are waited for; adjacent runs share one mprotect
 * (opening a run a handler already opened is harmless). */
static void lift_to(sampler *s, size_t from, size_t to, unsigned char target)
{
    for (size_t k = from; k < to;) {
        uintptr_t span;
        size_t span_len, first = k;
        k = span_end(s, k, to, &span, &span_len);
        int any = 0;
        for (size_t j = first; j < k; j++) {
            unsigned char st = PH_RUN_ARMED;
            if (atomic_compare_exchange_strong(run_state(&s->armed[j]), &st, PH_RUN_LIFTING)) {
                any = 1;
                continue;
            }
            st = PH_RUN_SUSPENDED; /* never protected: nothing to lift */
            if (target == PH_RUN_IDLE &&
                atomic_compare_exchange_strong(run_state(&s->armed[j]), &st, PH_RUN_IDLE))
                continue;
            while (atomic_load(run_state(&s->armed[j])) == PH_RUN_FIRING)
                sched_yield();
        }
        if (any)
            lift_span(s, first, k, span, span_len);
        for (size_t j = first; j < k; j++) {
            unsigned char st = PH_RUN_LIFTING;
            atomic_compare_exchange_strong(run_state(&s->armed[j]), &st, target);
        }
    }
}

static void lift(sampler *s, size_t from, size_t to)
{
    lift_to(s, from, to, PH_RUN_IDLE);
}

/* ---- the region gate -------------------------------------------------------
 *
 * A PROT_NONE page makes the kernel's own accesses fail (EFAULT), so once
 * the OpenMP tools interface tells pagehome where parallel regions are
 * (ph_sampler_gate_enable), the mprotect mechanism protects the chosen
 * runs only while some thread is inside an outermost parallel region:
 * outside, they are SUSPENDED (chosen, not protected), and the serial
 * code -- its I/O, every system call it makes -- never meets a protected
 * page.  Opening the gate protects the suspended runs, closing it lifts
 * the armed ones back to SUSPENDED; a run that fired stays IDLE (one
 * sample per run and interval, as before).  The gate's mprotect time
 * counts as arming time (the sampling budget sees it).  The userfaultfd
 * mechanism keeps its runs watched (the kernel waits instead of
 * failing), but a trap of an OpenMP initial thread while the gate is
 * closed is the serial code's -- the master initialising every page, a
 * verification pass -- and is not kept as a sample (ph_sig_serial), and
 * its run, opened, is SUSPENDED until the gate opens again, once an
 * interval (a serial part touching it between every two regions would
 * otherwise cost a trap a region): samples describe the accesses of the
 * threads the pages are placed for -- the parallel regions', and those
 * of threads the runtime did not start (thread.c), wherever they run. */

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int gate_enabled;
static atomic_int gate_count;    /* threads inside an outermost region */
static int gate_applied = 1;     /* what the samplers were last set to */
static struct sampler *gate_samplers[PH_SIG_MAX_INSTANCES];

static int gate_closed(void)
{
    return atomic_load(&gate_enabled) && atomic_load(&gate_count) == 0;
}

/* Whether resume() watches armed[k] again: SUSPENDED, and under the
 * userfaultfd mechanism (where only serial code's traps suspend a run)
 * not yet watched again this interval -- a run that serial code takes
 * at every region (a serial part between the regions touching it) would
 * otherwise cost a trap a region, and give no sample. */
static int to_resume(sampler *s, size_t k, int uffd)
{
    return atomic_load(run_state(&s->armed[k])) == PH_RUN_SUSPENDED &&
           !(uffd && s->armed[k].resumed);
}

/* Protect every SUSPENDED run of s (adjacent ones with one call). */
static void resume(sampler *s)
{
    int entered = 0, uffd = is_uffd(s);
    for (size_t k = 0; k < s->narmed;) {
        /* a trap being served may leave its run SUSPENDED (serial code's):
         * wait for it (the thread it stopped goes on as soon as the run is
         * open, before its state is stored, and may be opening the gate
         * now) */
        while (atomic_load(run_state(&s->armed[k])) == PH_RUN_FIRING)
            sched_yield();
        if (!to_resume(s, k, uffd)) {
            k++;
            continue;
        }
        if (!entered) /* no query of the kernel meanwhile (sigsegv.c) */
            ph_sig_arm_enter();
        entered = 1;
        size_t first = k, len;
        uintptr_t span = run_span(s->armed[k].slot, s->armed[k].run, &len);
        size_t span_len = len;
        /* a transfer in flight, or the program's own protection or
         * policy set in serial code since the arm: stays open */
        if (ph_sig_busy(span, len) || ph_sig_unwatched(s->armed[k].slot, span, len)) {
            k++;
            continue;
        }
        for (k++; k < s->narmed && s->armed[k].slot == s->armed[first].slot &&
                  to_resume(s, k, uffd);
             k++) {
            uintptr_t a = run_span(s->armed[k].slot, s->armed[k].run, &len);
            if (a != span + span_len || ph_sig_busy(a, len) ||
                ph_sig_unwatched(s->armed[k].slot, a, len))
                break;
            span_len += len;
        }
        for (size_t j = first; j < k; j++) {
            atomic_store(run_state(&s->armed[j]), PH_RUN_ARMING);
            s->armed[j].resumed = 1;
        }
        int rc = ph_sig_protect_span(s->armed[first].slot, span, span_len);
        for (size_t j = first; j < k; j++)
            atomic_store(run_state(&s->armed[j]), PH_RUN_ARMED);
        if (rc != 0) /* the VMA limit: leave them open for this region */
            lift_to(s, first, k, PH_RUN_SUSPENDED);
    }
    if (entered)
        ph_sig_arm_leave();
}

/* Residency of a sampler's runs by mincore(2), one call per WIN_PAGES
 * pages: the runs are asked about in address order, so one window serves
 * many of them. */
enum { WIN_PAGES = 4096 };
typedef struct resid_win {
    uintptr_t win, win_end; /* pages of [win, win_end) are in vec */
    int ok;                 /* mincore answered for it */
    unsigned char vec[WIN_PAGES];
} resid_win;

/* Whether page q of slot `slot` is resident: 1 or 0, -1 when mincore
 * cannot tell.  The window moves to q when q is outside it. */
static int window_resident(resid_win *w, size_t slot, uintptr_t q)
{
    if (q < w->win || q >= w->win_end) {
        uintptr_t range_end = atomic_load(&ph_sig_slots[slot].end);
        w->win = q;
        w->win_end = q + WIN_PAGES * PG_BYTES < range_end ? q + WIN_PAGES * PG_BYTES
                                                             : range_end;
        w->ok = mincore((void *)w->win, w->win_end - w->win, w->vec) == 0;
    }
    return w->ok ? (w->vec[(q - w->win) / PG_BYTES] & 1) : -1;
}

/* 1 when a page of run r of slot `slot` is resident, or when mincore
 * cannot tell (then it is watched). */
static int run_resident(resid_win *w, size_t slot, size_t r)
{
    size_t len;
    uintptr_t a = run_span(slot, r, &len);
    for (uintptr_t q = a; q < a + len; q += PG_BYTES)
        if (window_resident(w, slot, q) != 0)
            return 1;
    return 0;
}

/* The first page of [a, w->win_end) the window w says is resident; the
 * window's end when none is (a inside the window, which answered). */
static uintptr_t window_next(const resid_win *w, uintptr_t a)
{
    for (uintptr_t q = a; q < w->win_end; q += PG_BYTES)
        if (w->vec[(q - w->win) / PG_BYTES] & 1)
            return q;
    return w->win_end;
}

/* The gate opens: on a machine that cannot see first touches
 * (tracks_touch: the simulator) and under the mprotect mechanism, whose
 * runs were open while the gate was closed, the resident pages of a run
 * first_touch_arm chose (untouched then, or a coarse run of a range too
 * large for a run a page) that is still SUSPENDED (no trap took it) were
 * first touched by the serial code that ran meanwhile -- the master
 * initialising its arrays, the first-touch trap pagehome is for -- which
 * is the thread opening the gate (an outermost region's encountering
 * thread).  The machine is told so; without it such a page would get the
 * node of whoever looks at it first (the first thread to take a sample
 * there: every page "local" from the start).  Notes are first-wins: a
 * page with a home, or noted before, keeps its node; pages not resident
 * are left to their first toucher.  A page a thread of the program's own
 * (not OpenMP's) first touched between two regions gets the master's node
 * too: nothing tells who touched it (the userfaultfd mechanism, which
 * watches in serial code, does).  Residency comes from a mincore window
 * (resid_win, above), and a stretch of resident pages that spans adjacent
 * runs is noted once. */
static void note_serial_touches(sampler *s)
{
    if (!s->tracks_touch || is_uffd(s))
        return;
    ph_os *os = ph_sig_insts[s->inst].os;
    int node = ph_os_current_node(os);
    if (node < 0)
        return;
    static resid_win w; /* under gate_lock, as every arm */
    w.win = w.win_end = 0;
    uintptr_t from = 0, end = 0; /* a resident stretch not noted yet */
    for (size_t k = 0; k < s->narmed; k++) {
        if (!s->armed[k].first_touch ||
            atomic_load(run_state(&s->armed[k])) != PH_RUN_SUSPENDED)
            continue;
        size_t len;
        uintptr_t a = run_span(s->armed[k].slot, s->armed[k].run, &len);
        for (uintptr_t q = a; q < a + len; q += PG_BYTES) {
            if (window_resident(&w, s->armed[k].slot, q) != 1)
                continue;
            if (from && q != end) {
                ph_os_note_touch(os, (void *)from, end - from, node);
                from = 0;
            }
            if (!from)
                from = q;
            end = q + PG_BYTES;
        }
    }
    if (from)
        ph_os_note_touch(os, (void *)from, end - from, node);
}

static void gate_apply_locked(void)
{
    int want = !gate_closed();
    if (want == gate_applied)
        return;
    gate_applied = want;
    atomic_store(&ph_sig_serial, !want);
    for (size_t i = 0; i < PH_SIG_MAX_INSTANCES; i++) {
        sampler *s = gate_samplers[i];
        if (!s || s->narmed == 0)
            continue;
        uint64_t t0 = ph_now_ns();
        /* userfaultfd runs stay watched in serial code (the kernel
         * waits): closing lifts nothing, opening re-arms only the runs a
         * serial trap opened (an arm: not while a fork is under way) */
        int uffd = is_uffd(s);
        if (!want) {
            if (!uffd)
                lift_to(s, 0, s->narmed, PH_RUN_SUSPENDED);
        } else if (!uffd || ph_uffd_sampler_arm_begin()) {
            note_serial_touches(s);
            resume(s);
            if (uffd)
                ph_uffd_sampler_arm_end();
        }
        s->st.arm_ns += ph_now_ns() - t0;
    }
}

void ph_sampler_gate_enable(void)
{
    pthread_mutex_lock(&gate_lock);
    atomic_store(&gate_enabled, 1);
    gate_apply_locked();
    pthread_mutex_unlock(&gate_lock);
}

void ph_sampler_gate(int inside)
{
    if (!atomic_load_explicit(&gate_enabled, memory_order_relaxed))
        return;
    if (inside)
        atomic_fetch_add(&gate_count, 1);
    else if (atomic_fetch_sub(&gate_count, 1) <= 0)
        atomic_fetch_add(&gate_count, 1); /* unbalanced end: ignore */
    pthread_mutex_lock(&gate_lock);
    gate_apply_locked();
    pthread_mutex_unlock(&gate_lock);
}

/* fork(): the gate's lock is held across it by the forking thread, taken
 * after the engine's locks (the memory manager holds those when it arms),
 * so that no other thread holds it in the child. */
void ph_sampler_gate_fork_prepare(void)
{
    pthread_mutex_lock(&gate_lock);
}

void ph_sampler_gate_fork_parent(void)
{
    pthread_mutex_unlock(&gate_lock);
}

void ph_sampler_gate_fork_child(void)
{
    pthread_mutex_init(&gate_lock, NULL);
}

/* Protect armed[from, to) (all IDLE), adjacent runs with one call: ARMING,
 * mprotect, ARMED (a handler still busy with a fault of an earlier
 * interval must not open a run before it is protected).  0, or
 * -1/errno with the interval cut short before the span that failed. */
static int protect(sampler *s, size_t from, size_t to)
{
    if (!is_uffd(s) && gate_closed()) {
        for (size_t j = from; j < to; j++)
            atomic_store(run_state(&s->armed[j]), PH_RUN_SUSPENDED);
        return 0;
    }
    if (from == to)
        return 0;
    ph_sig_arm_enter(); /* no query of the kernel meanwhile (sigsegv.c) */
    /* runs over the buffer of a transfer in flight stay open */
    size_t keep = from;
    for (size_t j = from; j < to; j++) {
        size_t len;
        uintptr_t a = run_span(s->armed[j].slot, s->armed[j].run, &len);
        if (!ph_sig_busy(a, len))
            s->armed[keep++] = s->armed[j];
    }
    if (keep < to) {
        memmove(&s->armed[keep], &s->armed[to], (s->narmed - to) * sizeof s->armed[0]);
        s->narmed -= to - keep;
        to = keep;
    }
    for (size_t k = from; k < to;) {
        uintptr_t span;
        size_t span_len, first = k;
        k = span_end(s, k, to, &span, &span_len);
        for (size_t j = first; j < k; j++)
            atomic_store(run_state(&s->armed[j]), PH_RUN_ARMING);
        int rc = ph_sig_protect_span(s->armed[first].slot, span, span_len);
        for (size_t j = first; j < k; j++)
            atomic_store(run_state(&s->armed[j]), PH_RUN_ARMED);
        if (rc != 0) {
            int e = errno; /* keep the spans before; this one may be partial */
            lift(s, first, k);
            s->narmed = first;
            ph_sig_arm_leave();
            errno = e;
            return -1;
        }
    }
    ph_sig_arm_leave();
    return 0;
}

/* ---- choosing the runs of an interval ---------------------------------------- */

static size_t runs_with(const sampler *s, size_t g)
{
    size_t n = 0;
    for (size_t i = 0; i < s->nranges; i++)
        n += div_up(s->ranges[i].npages, g);
    return n;
}

/* Smallest run size >= run_pages that fits every range in max_runs. */
static size_t full_geometry(const sampler *s)
{
    size_t lo = s->o.run_pages, hi = lo;
    for (size_t i = 0; i < s->nranges; i++)
        hi = s->ranges[i].npages > hi ? s->ranges[i].npages : hi;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (runs_with(s, mid) <= s->o.max_runs)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static void choose_full(sampler *s)
{
    size_t g = full_geometry(s);
    for (size_t i = 0; i < s->nranges; i++) {
        set_geometry(s->ranges[i].slot, g);
        size_t n = div_up(s->ranges[i].npages, g);
        for (size_t r = 0; r < n && s->narmed < s->o.max_runs; r++)
            s->armed[s->narmed++] = (sp_armed){s->ranges[i].slot, r, 0, 0};
    }
}

/* The rotation: runs from the cursor on until pages_per_interval pages
 * (or max_runs runs) are watched.  Only runs with a resident page count:
 * memory never touched (the unused part of a static array sized for the
 * largest input, as Fortran codes have) has nothing to tell, and was
 * dropped only after the choice -- so a budget spent on it watched none of
 * the pages that are used (swim at N = 288: 3743 of its 26625 pages, one
 * interval in seven).  The cursor examines at most EXAMINE_FACTOR x the
 * budget in pages an interval (by mincore), so that a huge untouched
 * range costs a bounded number of mincore calls.  An untouched stretch
 * is passed over in one step: to the next touched page the mincore
 * window shows (those pages count as examined at a sixteenth), and past
 * the window's end to where the kernel says the next touched page is
 * (os/pagemap.h; on a kernel without that scan, the window's end, and
 * the walk goes on window by window).  Without that, a 16 GiB array of
 * which the run touches 64 MiB kept the cursor in its untouched part for
 * 64 intervals out of every 65, and a short run never watched the used
 * part once it had been passed before its first touch.  The pages
 * passed, examined, passed over or watched, are the return value (the
 * stability rule counts them as looked at).  errno is kept: an arm may
 * run on the program's thread (a region boundary), and a kernel without
 * the scan fails it. */
#define EXAMINE_FACTOR 16
#define EMPTY_DISCOUNT 16
static size_t choose_budget(sampler *s)
{
    int credit = s->credit_run_pages > s->o.run_pages;
    size_t g = credit ? s->credit_run_pages : s->o.run_pages;
    size_t total = runs_with(s, g), pages = 0, passed = 0;
    size_t examined = 0, examine = s->o.pages_per_interval * EXAMINE_FACTOR;
    static resid_win w; /* under gate_lock, as every arm */
    ph_pagemap pm = PH_PAGEMAP_INIT;
    int can_skip = 1, saved_errno = errno;
    w.win = w.win_end = 0;
    for (size_t i = 0; i < s->nranges; i++)
        set_geometry_credit(s->ranges[i].slot, g, credit);
    if (s->cur_g && s->cur_g != g) /* the cursor where it was, in runs of g */
        s->cur_run = s->cur_run * s->cur_g / g;
    s->cur_g = g;
    if (s->cur_range >= s->nranges)
        s->cur_range = s->cur_run = 0;
    for (size_t taken = 0; taken < total && pages < s->o.pages_per_interval &&
                           examined < examine && s->narmed < s->o.max_runs;
         taken++) {
        const sp_range *rg = &s->ranges[s->cur_range];
        size_t nruns = div_up(rg->npages, g);
        if (s->cur_run >= nruns) { /* defensive: a stale cursor */
            s->cur_run = 0;
            s->cur_range = (s->cur_range + 1) % s->nranges;
            rg = &s->ranges[s->cur_range];
            nruns = div_up(rg->npages, g);
        }
        size_t len;
        uintptr_t a = run_span(rg->slot, s->cur_run, &len);
        passed += len / PG_BYTES;
        examined += len / PG_BYTES;
        if (run_resident(&w, rg->slot, s->cur_run)) {
            s->armed[s->narmed++] = (sp_armed){rg->slot, s->cur_run, 0, 0};
            pages += len / PG_BYTES;
        } else if (s->cur_run + 1 < nruns && w.ok && a + len >= w.win && a + len <= w.win_end) {
            /* untouched: on to the run of the next touched page (or past
             * the range), the runs between passed.  Within the mincore
             * window its bytes say where; they count as examined at
             * 1/EMPTY_DISCOUNT.  Beyond the window, the kernel's page
             * table scan says where, at no count; without it, the
             * window's end. */
            uintptr_t from = a + len, end = atomic_load(&ph_sig_slots[rg->slot].end);
            uintptr_t next = window_next(&w, from);
            size_t in_window = (size_t)(next - from) / PG_BYTES;
            if (next == w.win_end && next < end && can_skip &&
                ph_pagemap_next_present(&pm, next, end, &next) != 0) {
                can_skip = 0; /* the mincore walk alone from here */
                next = w.win_end;
            }
            uintptr_t run_bytes = g * PG_BYTES;
            size_t to_run = (size_t)((next - atomic_load(&ph_sig_slots[rg->slot].start)) /
                                     run_bytes);
            if (to_run > nruns)
                to_run = nruns;
            uintptr_t to = to_run == nruns ? end : a + (to_run - s->cur_run) * run_bytes;
            passed += (size_t)(to - from) / PG_BYTES;
            examined += in_window / EMPTY_DISCOUNT;
            taken += to_run - (s->cur_run + 1);
            s->cur_run = to_run - 1;
        }
        if (++s->cur_run >= nruns) {
            s->cur_run = 0;
            s->cur_range = (s->cur_range + 1) % s->nranges;
        }
    }
    ph_pagemap_done(&pm);
    errno = saved_errno;
    return passed;
}

/* ---- the source operations -------------------------------------------------- */

static sampler *sp_of(ph_source *src)
{
    return src->impl;
}

static void disarm_locked(sampler *s)
{
    uint64_t t0 = ph_now_ns();
    lift(s, 0, s->narmed);
    s->narmed = 0;
    s->st.arm_ns += ph_now_ns() - t0;
}

static int sp_disarm(ph_source *src)
{
    sampler *s = sp_of(src);
    pthread_mutex_lock(&gate_lock);
    disarm_locked(s);
    pthread_mutex_unlock(&gate_lock);
    return 0;
}

/* Drop the chosen runs none of whose pages is resident (mincore), when
 * `check_resident` (the full sweep takes every run; the rotation chose
 * resident runs already): such memory has never been touched, so it has
 * nothing to tell, and protecting it would cut its VMA before its first
 * touch -- the kernel could then not give it 2 MiB pages, and the pieces
 * faulted while cut stay separate VMAs.  Its first touch happens
 * unwatched; later intervals watch it.  Also drops runs the program
 * itself protected or gave a memory policy of its own. */
static void keep_resident(sampler *s, int check_resident)
{
    static resid_win w; /* under gate_lock, as every arm */
    w.win = w.win_end = 0;
    size_t keep = 0;
    for (size_t j = 0; j < s->narmed; j++) {
        size_t len;
        uintptr_t a = run_span(s->armed[j].slot, s->armed[j].run, &len);
        if ((!check_resident || run_resident(&w, s->armed[j].slot, s->armed[j].run)) &&
            !ph_sig_unwatched(s->armed[j].slot, a, len))
            s->armed[keep++] = s->armed[j];
    }
    s->narmed = keep;
}

/* First-touch watch of range ri (tracks_touch): its runs with no resident
 * page are protected now.  The range keeps the geometry the interval gave
 * it (its runs chosen by the rotation or the full sweep stay armed) when
 * its runs fit in the room left under max_runs; otherwise its armed runs
 * are opened and taken out, and it is cut as coarsely as the room needs
 * -- the geometry of a range never changes while any of its runs is
 * armed, or a page protected under the old geometry would belong to a
 * run the handler finds IDLE.  Runs already armed (state not IDLE) are
 * not added twice.  0 or -1/errno. */
static int first_touch_arm(sampler *s, size_t ri)
{
    const sp_range *rg = &s->ranges[ri];
    size_t room = s->o.max_runs - s->narmed, mine = 0;
    for (size_t k = 0; k < s->narmed; k++)
        mine += s->armed[k].slot == rg->slot;
    size_t g = atomic_load(&ph_sig_slots[rg->slot].run_pages);
    if (div_up(rg->npages, g) > room + mine) {
        size_t keep = 0;
        for (size_t k = 0; k < s->narmed; k++) {
            if (s->armed[k].slot == rg->slot) {
                lift(s, k, k + 1);
                continue;
            }
            s->armed[keep++] = s->armed[k];
        }
        s->narmed = keep;
        room = s->o.max_runs - s->narmed;
        if (room == 0)
            return 0;
        g = div_up(rg->npages, room);
        if (g < s->o.run_pages)
            g = s->o.run_pages;
        set_geometry(rg->slot, g);
    }
    /* coarser runs than the rotation's: the whole range is watched (a
     * resident part too: one sample a run this time) */
    int all = g > s->o.run_pages;
    atomic_uchar *runs = atomic_load(&ph_sig_slots[rg->slot].runs);
    size_t nruns = div_up(rg->npages, g), from = s->narmed;
    unsigned char vec[512];
    for (size_t r = 0; r < nruns && s->narmed < s->o.max_runs; r++) {
        if (atomic_load(&runs[r]) != PH_RUN_IDLE)
            continue; /* armed already this interval */
        size_t len;
        uintptr_t a = run_span(rg->slot, r, &len);
        int resident = 0;
        for (size_t off = 0; off < len && !resident && !all; off += sizeof vec * PG_BYTES) {
            size_t l = len - off < sizeof vec * PG_BYTES ? len - off : sizeof vec * PG_BYTES;
            if (mincore((void *)(a + off), l, vec) != 0)
                break;
            for (size_t q = 0; q < l / PG_BYTES && !resident; q++)
                resident = vec[q] & 1;
        }
        if (!resident || all)
            s->armed[s->narmed++] = (sp_armed){rg->slot, r, 0, 1};
    }
    for (size_t k = from; k < s->narmed; k++) {
        size_t len;
        run_span(s->armed[k].slot, s->armed[k].run, &len);
        s->st.armed_pages += len / PG_BYTES;
    }
    if (s->narmed > s->st.max_runs)
        s->st.max_runs = s->narmed;
    return protect(s, from, s->narmed);
}

static int arm_locked(sampler *s, int full)
{
    disarm_locked(s);
    uint64_t t0 = ph_now_ns();
    s->st.intervals++;
    if (s->nranges == 0)
        return 0;
    int sweep = full || s->o.pages_per_interval == 0;
    if (sweep) {
        choose_full(s);
        for (size_t k = 0; k < s->narmed; k++) {
            size_t len;
            run_span(s->armed[k].slot, s->armed[k].run, &len);
            s->st.swept_pages += len / PG_BYTES;
        }
    } else {
        s->st.swept_pages += choose_budget(s);
    }
    keep_resident(s, sweep);
    int rc = protect(s, 0, s->narmed);
    for (size_t k = 0; k < s->narmed; k++) {
        size_t len;
        run_span(s->armed[k].slot, s->armed[k].run, &len);
        s->st.armed_pages += len / PG_BYTES;
    }
    if (s->narmed > s->st.max_runs)
        s->st.max_runs = s->narmed;
    for (size_t i = 0; i < s->nranges && rc == 0; i++)
        if (s->ranges[i].fresh > 0) {
            s->ranges[i].fresh--;
            rc = first_touch_arm(s, i);
        }
    s->st.arm_ns += ph_now_ns() - t0;
    if (rc != 0)
        return ph_fail(errno, "sampler: mprotect(PROT_NONE) failed: %s", strerror(errno));
    return 0;
}

static int sp_arm(ph_source *src, int full)
{
    sampler *s = sp_of(src);
    if (is_uffd(s) && !ph_uffd_sampler_arm_begin()) {
        sp_disarm(src);
        s->st.intervals++;
        return 0;
    }
    pthread_mutex_lock(&gate_lock);
    int rc = arm_locked(s, full);
    pthread_mutex_unlock(&gate_lock);
    if (is_uffd(s))
        ph_uffd_sampler_arm_end();
    return rc;
}

static int sp_add_range(ph_source *src, void *addr, size_t bytes)
{
    sampler *s = sp_of(src);
    uintptr_t a = (uintptr_t)addr;
    if ((a | bytes) & (PG_BYTES - 1) || bytes == 0)
        return ph_fail(EINVAL, "sampler: range %p+%zu is not whole 4 KiB pages", addr, bytes);
    if (s->nranges == s->capranges) {
        size_t cap = s->capranges ? 2 * s->capranges : 16;
        sp_range *r = realloc(s->ranges, cap * sizeof *r);
        if (!r)
            return ph_fail(ENOMEM, "sampler: no memory for a range");
        s->ranges = r;
        s->capranges = cap;
    }
    long slot = slot_open(s, a, a + bytes);
    if (slot < 0)
        return -1;
    s->ranges[s->nranges++] = (sp_range){(size_t)slot, a, bytes / PG_BYTES,
                                         s->tracks_touch ? 2 : 0};
    /* Armed at once, unless a fork() is under way (or this is a fork
     * child): the next arm() does it then (fresh > 0). */
    if (s->tracks_touch && (!is_uffd(s) || ph_uffd_sampler_arm_begin())) {
        uint64_t t0 = ph_now_ns();
        pthread_mutex_lock(&gate_lock); /* the gate walks armed[] too */
        int rc = first_touch_arm(s, s->nranges - 1);
        pthread_mutex_unlock(&gate_lock);
        if (is_uffd(s))
            ph_uffd_sampler_arm_end();
        s->st.arm_ns += ph_now_ns() - t0;
        if (rc != 0)
            return ph_fail(errno, "sampler: mprotect(PROT_NONE) failed: %s",
                           strerror(errno));
    }
    return 0;
}

/* Take the armed runs of slot out of the interval and lift them. */
static void lift_slot(sampler *s, size_t slot)
{
    size_t keep = 0;
    for (size_t k = 0; k < s->narmed; k++) {
        if (s->armed[k].slot == slot) {
            lift(s, k, k + 1);
            continue;
        }
        s->armed[keep++] = s->armed[k];
    }
    s->narmed = keep;
}

static int sp_remove_range(ph_source *src, void *addr, size_t bytes)
{
    sampler *s = sp_of(src);
    size_t i = 0;
    while (i < s->nranges &&
           !(s->ranges[i].start == (uintptr_t)addr && s->ranges[i].npages * PG_BYTES == bytes))
        i++;
    if (i == s->nranges)
        return ph_fail(ENOENT, "sampler: %p+%zu is not a hot range", addr, bytes);
    size_t slot = s->ranges[i].slot;
    ph_sig_slot *sl = &ph_sig_slots[slot];
    uint64_t w = atomic_load(&sl->word);
    atomic_store_explicit(&sl->word, PH_SIG_WORD(PH_SIG_GEN(w), PH_SIG_REMOVING),
                          memory_order_seq_cst);
    uint64_t t0 = ph_now_ns();
    pthread_mutex_lock(&gate_lock);
    lift_slot(s, slot);
    pthread_mutex_unlock(&gate_lock);
    s->st.arm_ns += ph_now_ns() - t0;
    slot_close(slot);
    memmove(s->ranges + i, s->ranges + i + 1, (s->nranges - i - 1) * sizeof *s->ranges);
    s->nranges--;
    if (s->cur_range > i)
        s->cur_range--;
    else if (s->cur_range == i)
        s->cur_run = 0;
    return 0;
}

/* A ring entry still belongs to a live range of this sampler. */
static int entry_live(const sampler *s, const ph_sig_entry *e)
{
    const ph_sig_slot *sl = &ph_sig_slots[e->slot];
    uint64_t w = atomic_load_explicit(&sl->word, memory_order_acquire);
    return PH_SIG_STATE(w) == PH_SIG_ACTIVE && (uint32_t)PH_SIG_GEN(w) == e->slot_gen &&
           (size_t)atomic_load_explicit(&sl->inst, memory_order_relaxed) == s->inst;
}

static size_t drain_ring(sampler *s, ph_sig_ring *r, uint64_t mask, ph_sample *batch,
                         size_t *nb, ph_sample_fn fn, void *arg)
{
    size_t n = 0;
    uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
    for (; t < h; t++) {
        ph_sig_entry e = r->buf[t & mask];
        if (!entry_live(s, &e))
            continue;
        batch[(*nb)++] = (ph_sample){e.page, e.node, 1};
        n++;
        if (*nb == DRAIN_BATCH) {
            fn(arg, batch, *nb);
            *nb = 0;
        }
    }
    atomic_store_explicit(&r->tail, t, memory_order_release);
    return n;
}

static size_t sp_drain(ph_source *src, ph_sample_fn fn, void *arg)
{
    sampler *s = sp_of(src);
    ph_sig_inst *in = &ph_sig_insts[s->inst];
    ph_sample batch[DRAIN_BATCH];
    size_t nb = 0, n = 0;
    for (size_t k = 0; k < in->nrings; k++)
        n += drain_ring(s, &in->rings[k], in->ring_mask, batch, &nb, fn, arg);
    if (nb)
        fn(arg, batch, nb);
    s->st.samples += n;
    return n;
}

static void sp_stats(ph_source *src, ph_source_stats *out)
{
    sampler *s = sp_of(src);
    ph_sig_inst *in = &ph_sig_insts[s->inst];
    *out = s->st;
    out->dropped = atomic_load(&in->dropped);
    out->serial = atomic_load(&in->serial);
    out->credited = atomic_load(&in->credited);
    for (size_t k = 0; k < in->nrings; k++)
        out->dropped += atomic_load(&in->rings[k].dropped);
    out->foreign_faults = atomic_load(&ph_sig_foreign) - s->foreign_base;
    out->orphan_opens = atomic_load(&ph_sig_orphans);
    out->handler_ns = atomic_load(&in->handler_ns);
}

static void sp_close(ph_source *src)
{
    sampler *s = sp_of(src);
    sp_disarm(src);
    while (s->nranges > 0)
        sp_remove_range(src, (void *)s->ranges[0].start, s->ranges[0].npages * PG_BYTES);
    ph_uffd_sampler_stop(s->inst);
    pthread_mutex_lock(&gate_lock);
    if (gate_samplers[s->inst] == s)
        gate_samplers[s->inst] = NULL;
    pthread_mutex_unlock(&gate_lock);
    inst_close(s);
    free(s->ranges);
    free(s->armed);
    free(s);
}

/* The budget is read by arm() alone, under gate_lock. */
static int sp_set_budget(ph_source *src, size_t pages_per_interval)
{
    sampler *s = sp_of(src);
    pthread_mutex_lock(&gate_lock);
    s->o.pages_per_interval = pages_per_interval;
    pthread_mutex_unlock(&gate_lock);
    return 0;
}

/* Read by arm() alone (choose_budget), under gate_lock. */
static int sp_set_run_pages(ph_source *src, size_t run_pages)
{
    sampler *s = sp_of(src);
    pthread_mutex_lock(&gate_lock);
    s->credit_run_pages = run_pages;
    pthread_mutex_unlock(&gate_lock);
    return 0;
}

/* touched_pages: the resident pages of every range by PAGEMAP_SCAN,
 * counted up to limit + 1, plus, under userfaultfd, the pages of the runs
 * not yet opened (they sit in the stash, not in the range; a run serial
 * code's trap opened, SUSPENDED, is back in its range: counted once).  Runs are
 * armed only where a page is resident, but for the simulator's
 * first-touch watch, whose untouched runs then count too: an
 * over-estimate, which at worst declines a sweep.  errno is kept. */
static size_t sp_touched_pages(ph_source *src, size_t limit)
{
    sampler *s = sp_of(src);
    ph_pagemap pm = PH_PAGEMAP_INIT;
    size_t have = 0;
    int saved_errno = errno;
    pthread_mutex_lock(&gate_lock);
    for (size_t i = 0; i < s->nranges && have <= limit; i++) {
        size_t n;
        uintptr_t a = s->ranges[i].start;
        if (ph_pagemap_count_present(&pm, a, a + s->ranges[i].npages * PG_BYTES,
                                     limit - have, &n) != 0) {
            have = SIZE_MAX;
            break;
        }
        have += n;
    }
    if (have != SIZE_MAX && is_uffd(s))
        for (size_t k = 0; k < s->narmed; k++) {
            size_t len;
            run_span(s->armed[k].slot, s->armed[k].run, &len);
            /* a trap being served: its thread goes on once the run is
             * back, before the run's state is stored (as in resume()) */
            unsigned char st;
            while ((st = atomic_load(run_state(&s->armed[k]))) == PH_RUN_FIRING)
                sched_yield();
            /* out, or on its way out or back; a SUSPENDED run (serial
             * code's trap opened it) is in place, counted above */
            if (st != PH_RUN_IDLE && st != PH_RUN_SUSPENDED)
                have += len / PG_BYTES;
        }
    pthread_mutex_unlock(&gate_lock);
    ph_pagemap_done(&pm);
    errno = saved_errno;
    return have;
}

static const ph_source_ops uffd_ops = {
    .name = "userfaultfd",
    .handler_elsewhere = 1,
    .add_range = sp_add_range,
    .remove_range = sp_remove_range,
    .arm = sp_arm,
    .disarm = sp_disarm,
    .drain = sp_drain,
    .stats = sp_stats,
    .close = sp_close,
    .set_budget = sp_set_budget,
    .set_run_pages = sp_set_run_pages,
    .touched_pages = sp_touched_pages,
};

static const ph_source_ops sampler_ops = {
    .name = "sigsegv",
    .add_range = sp_add_range,
    .remove_range = sp_remove_range,
    .arm = sp_arm,
    .disarm = sp_disarm,
    .drain = sp_drain,
    .stats = sp_stats,
    .close = sp_close,
    .set_budget = sp_set_budget,
    .set_run_pages = sp_set_run_pages,
    .touched_pages = sp_touched_pages,
};

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void register_fork_child(void)
{
    pthread_atfork(NULL, NULL, ph_sig_fork_child);
}

ph_source *ph_sampler_open(struct ph_os *os, const ph_sampler_opts *opts)
{
    pthread_once(&fork_once, register_fork_child);
    if (!os || !os->topo) {
        ph_fail(EINVAL, "sampler: no OS table");
        return NULL;
    }
    ph_sampler_opts o;
    if (resolve_opts(opts, &o) != 0)
        return NULL;
    sampler *s = calloc(1, sizeof *s);
    if (!s) {
        ph_fail(ENOMEM, "sampler: out of memory");
        return NULL;
    }
    s->o = o;
    s->armed = calloc(s->o.max_runs, sizeof *s->armed);
    int uffd = s->o.mechanism == PH_SAMPLER_USERFAULTFD;
    if (!s->armed || (!uffd && ph_sig_install() != 0)) {
        int e = s->armed ? errno : ENOMEM;
        free(s->armed);
        free(s);
        ph_fail(e, "sampler: cannot install the SIGSEGV handler: %s", strerror(e));
        return NULL;
    }
    (void)ph_os_current_node(os); /* resolve its symbols outside a handler */
    if (inst_open(s, os) != 0) {
        free(s->armed);
        free(s);
        return NULL;
    }
    ph_sig_insts[s->inst].mech = uffd ? PH_SIG_MECH_UFFD : PH_SIG_MECH_MPROTECT;
    if (uffd && ph_uffd_sampler_start(s->inst) != 0) {
        int e = errno;
        char why[256];
        snprintf(why, sizeof why, "%s", ph_error_message());
        ph_sig_insts[s->inst].mech = PH_SIG_MECH_MPROTECT;
        inst_close(s);
        free(s->armed);
        free(s);
        ph_fail(e, "%s", why);
        return NULL;
    }
    s->foreign_base = atomic_load(&ph_sig_foreign);
    /* first touches are learnt from the traps: the toucher's own node
     * (mprotect), or the node its thread noted (userfaultfd's service
     * thread, which resolves the fault on the toucher's behalf) */
    s->tracks_touch = o.first_touch && ph_os_tracks_touch(os);
    s->src.ops = uffd ? &uffd_ops : &sampler_ops;
    pthread_mutex_lock(&gate_lock);
    gate_samplers[s->inst] = s;
    pthread_mutex_unlock(&gate_lock);
    s->src.impl = s;
    return &s->src;
}
