/*
 * sigsegv.c -- the SIGSEGV handler of the page-protection sampler.  This is
 * the only file of pagehome that runs in signal context.
 *
 * What happens on a trap (see sigsegv.h for the shared tables):
 *   1. Only SEGV_ACCERR faults can be ours (we protect with PROT_NONE);
 *      anything else goes straight to the previous handler.
 *   2. Find the hot range holding si_addr: the slot this thread hit last,
 *      then a scan of the slot table up to its high-water mark.  Enter the
 *      slot (inflight++) and re-check its word, so that remove_range() can
 *      wait for us before it frees the run states or the memory goes away.
 *   3. The run holding the page: ARMED -> FIRING by CAS.  The winner
 *      records (page, node index of this thread) into this thread's ring
 *      (and, in a slot whose trap stands for its run, the run's other
 *      pages with the same node: the first sweep's coarse runs),
 *      mprotect()s the run back to read-write and stores IDLE.  A thread
 *      that loses the race (FIRING), or meets a run the sampler is
 *      changing (ARMING, LIFTING), just returns: its access is retried and
 *      either succeeds or traps again until the run is settled.
 *      IDLE means the run was opened between our fault and our look; the
 *      retry succeeds.  The same thread faulting on the same address
 *      with the run IDLE again and again is not our fault after all: after
 *      PH_SIG_STALE_TRIES of those it is passed on as foreign.  An
 *      address in no hot range may have faulted while its range was
 *      still armed and been freed since (remove_range lifts every
 *      protection before it frees the slot): it too is retried, once.
 *      So a fault that is not ours reaches the previous handler on its
 *      second occurrence (the access re-executes identically).
 *   4. Not ours: count it and chain to the handler that was installed
 *      before us (SA_SIGINFO or plain).  SIG_DFL and SIG_IGN (the kernel
 *      forces a fault's SIGSEGV through SIG_IGN) restore the default
 *      disposition and return, so the access faults again and the program
 *      dies by SIGSEGV with a core, as it would have without us; a SIGSEGV
 *      sent with kill() is re-raised instead.
 *
 * Async-signal-safety: no allocation, no locks, no stdio.  Only atomics,
 * the preallocated tables and rings, initial-exec thread-locals (no
 * allocation on first access), mprotect(2), clock_gettime(2), sigaction(2),
 * raise(3), ph_os_current_node() and ph_os_note_touch() (async-signal-safe by the os.h
 * contract).  errno is saved and restored.  While the handler runs every
 * signal is blocked (sa_mask full), so it never nests on one thread and a
 * thread's ring has exactly one producer at a time.
 *
 * Opening pages for the kernel (normal context, not the handler): a
 * query of the kernel about pages (move_pages, get_mempolicy) opens their
 * watched runs without a sample and holds arming off until the kernel
 * has answered -- the query hold, described where it is implemented.
 *
 * Rings: each sampler owns a pool of rings; a thread claims one with a CAS
 * on its first trap and remembers it in a thread-local (per sampler,
 * checked against the sampler's generation).  ph_sampler_thread_init()
 * registers a thread-exit hook that gives the rings back.
 *
 * Limits (documented for the engine): the kernel does not raise SIGSEGV
 * for a protected page passed to a system call (read(2) into it fails
 * with EFAULT), so hot ranges should not be syscall buffers while armed;
 * a SIGSEGV handler installed *after* the sampler must chain to it.
 */
#include "sample/sigsegv.h"

#include "base/clock.h"
#include "topo/topo.h"
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define PH_SIG_PAGE_BYTES ((uintptr_t)4096)
#define PH_SIG_STALE_TRIES 64

ph_sig_inst ph_sig_insts[PH_SIG_MAX_INSTANCES];
ph_sig_slot ph_sig_slots[PH_SIG_MAX_SLOTS];
atomic_size_t ph_sig_slot_hiwater;
atomic_uint_fast64_t ph_sig_foreign;
atomic_uint_fast64_t ph_sig_orphans;
atomic_int ph_sig_serial;

/* The disposition faults that are not ours go to: the one before ours,
 * or one the program installed later through transparent mode's
 * sigaction(2) interposition (ph_sampler_chain_swap).  Two slots and an
 * atomic index, so a handler never reads a half-written one. */
static struct sigaction chain_act[2];
static atomic_int chain_idx;
static atomic_int installed;
static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static int install_errno;

/* This thread's ring of each sampler, valid while gen matches. */
typedef struct tl_ring_ref {
    uint64_t gen;
    ph_sig_ring *ring;
} tl_ring_ref;
static _Thread_local tl_ring_ref tl_rings[PH_SIG_MAX_INSTANCES]
    __attribute__((tls_model("initial-exec")));
static _Thread_local size_t tl_last_slot __attribute__((tls_model("initial-exec")));
/* Retries of one address: with the run IDLE, and outside every range. */
typedef struct tl_retry {
    uintptr_t addr;
    unsigned count;
} tl_retry;
static _Thread_local tl_retry tl_idle_retry __attribute__((tls_model("initial-exec")));
static _Thread_local tl_retry tl_gone_retry __attribute__((tls_model("initial-exec")));

/* ---- recording ----------------------------------------------------------- */

/* This thread's ring of instance i (claimed on first use), or NULL. */
static ph_sig_ring *thread_ring(ph_sig_inst *in, size_t i)
{
    uint64_t gen = PH_SIG_GEN(atomic_load_explicit(&in->word, memory_order_acquire));
    if (tl_rings[i].gen == gen && tl_rings[i].ring)
        return tl_rings[i].ring;
    for (size_t k = 0; k < in->nrings; k++) {
        int free_ring = 0;
        if (atomic_compare_exchange_strong_explicit(&in->rings[k].owned, &free_ring, 1,
                                                    memory_order_acquire,
                                                    memory_order_relaxed)) {
            tl_rings[i].gen = gen;
            tl_rings[i].ring = &in->rings[k];
            return &in->rings[k];
        }
    }
    return NULL;
}

/* 1 pushed, 0 lost to a full ring (counted). */
static int ring_push(ph_sig_ring *r, uint64_t mask, const ph_sig_entry *e)
{
    uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint64_t t = atomic_load_explicit(&r->tail, memory_order_acquire);
    if (h - t > mask) {
        atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
        return 0;
    }
    r->buf[h & mask] = *e;
    atomic_store_explicit(&r->head, h + 1, memory_order_release);
    return 1;
}

/* 1 when the trap was kept as a sample (or lost to a full ring), 0 when
 * it was serial code's (ph_sig_serial): the run is then to be watched
 * again when the next parallel region begins (SUSPENDED). */
static int record(size_t slot, uint64_t slot_gen, uintptr_t page, uintptr_t run,
                  size_t run_len, int node, int tid)
{
    size_t i = (size_t)atomic_load_explicit(&ph_sig_slots[slot].inst, memory_order_relaxed);
    ph_sig_inst *in = &ph_sig_insts[i];
    if (node == PH_SIG_NODE_SELF) {
        int id = ph_os_current_node(in->os);
        /* a machine that cannot see first touches learns this one (its
         * pages without a home get this node when they are faulted) */
        if (in->tracks_touch && id >= 0)
            ph_os_note_touch(in->os, (void *)run, run_len, id);
        node = (id >= 0 && id < PH_SIG_NODE_IDS) ? in->node_index[id] : -1;
    } else if (in->tracks_touch && node >= 0 && node < in->os->topo->nnodes) {
        /* the userfaultfd service thread, for the faulting thread */
        ph_os_note_touch(in->os, (void *)run, run_len, in->os->topo->nodes[node].id);
    }
    if (atomic_load_explicit(&ph_sig_serial, memory_order_relaxed) &&
        ph_sig_runs_serial_code(tid)) {
        atomic_fetch_add_explicit(&in->serial, 1, memory_order_relaxed);
        return 0;
    }
    ph_sig_ring *r = node >= 0 ? thread_ring(in, i) : NULL;
    if (!r) {
        atomic_fetch_add_explicit(&in->dropped, 1, memory_order_relaxed);
        return 1;
    }
    ph_sig_entry e = {page, (uint32_t)slot_gen, (uint16_t)slot, (int16_t)node};
    (void)ring_push(r, in->ring_mask, &e);
    atomic_fetch_add_explicit(&in->traps, 1, memory_order_relaxed);
    if (atomic_load_explicit(&ph_sig_slots[slot].credit, memory_order_relaxed)) {
        /* the run's other pages, on this trap's word (a coarse sweep) */
        uint64_t more = 0;
        for (uintptr_t p = run; p < run + run_len; p += PH_SIG_PAGE_BYTES) {
            if (p == page)
                continue;
            e.page = p;
            more += (uint64_t)ring_push(r, in->ring_mask, &e);
        }
        atomic_fetch_add_explicit(&in->credited, more, memory_order_relaxed);
    }
    return 1;
}

/* ---- the run of a fault ---------------------------------------------------- */

/* Same thread, same address again: 1 while it may still be a race with
 * whoever opened the page (retry the access), 0 once `tries` retries did
 * not help. */
static int stale_retry(tl_retry *r, uintptr_t addr, unsigned tries)
{
    if (r->addr != addr) {
        r->addr = addr;
        r->count = 0;
    }
    if (++r->count <= tries)
        return 1;
    r->addr = 0;
    return 0;
}

/* Unprotect [a, a+len); if that fails (the VMA limit), open the whole
 * range, which only merges VMAs.  0 or -1.  The userfaultfd mechanism
 * moves the pages back instead (uffd.c; never in signal context). */
/* Give the pages of [a, a+len) that carry a protection of the program's
 * that protection again (after a wider mprotect). */
static void reapply_prog_prot(ph_sig_slot *s, uintptr_t a, size_t len)
{
    atomic_uchar *pp = atomic_load_explicit(&s->prog_prot, memory_order_acquire);
    if (!pp)
        return;
    uintptr_t start = atomic_load_explicit(&s->start, memory_order_relaxed);
    for (uintptr_t q = a; q < a + len; q += PH_SIG_PAGE_BYTES) {
        unsigned char v = atomic_load_explicit(&pp[(q - start) / PH_SIG_PAGE_BYTES],
                                               memory_order_acquire);
        if (v & PH_SIG_PROT_SET)
            mprotect((void *)q, PH_SIG_PAGE_BYTES, (int)(v & 7u));
    }
}

/* 1 when a page of [a, a+len) in slot i has one of the bits of `any`. */
static int prog_marked(size_t i, uintptr_t a, size_t len, unsigned any)
{
    ph_sig_slot *s = &ph_sig_slots[i];
    atomic_uchar *pp = atomic_load_explicit(&s->prog_prot, memory_order_acquire);
    if (!pp)
        return 0;
    uintptr_t start = atomic_load_explicit(&s->start, memory_order_relaxed);
    for (uintptr_t q = a; q < a + len; q += PH_SIG_PAGE_BYTES)
        if (atomic_load_explicit(&pp[(q - start) / PH_SIG_PAGE_BYTES], memory_order_acquire) &
            any)
            return 1;
    return 0;
}

int ph_sig_prog_protected(size_t i, uintptr_t a, size_t len)
{
    return prog_marked(i, a, len, PH_SIG_PROT_SET);
}

int ph_sig_unwatched(size_t i, uintptr_t a, size_t len)
{
    return prog_marked(i, a, len, PH_SIG_PROT_SET | PH_SIG_POLICY_SET);
}

static int open_run(size_t idx, ph_sig_slot *s, uintptr_t a, size_t len)
{
    size_t i = (size_t)atomic_load_explicit(&s->inst, memory_order_relaxed);
    if (ph_sig_insts[i].mech == PH_SIG_MECH_UFFD)
        return ph_uffd_sampler_open(idx, a, len);
    int rc = 0;
    if (mprotect((void *)a, len, PROT_READ | PROT_WRITE) != 0) {
        uintptr_t start = atomic_load_explicit(&s->start, memory_order_relaxed);
        uintptr_t end = atomic_load_explicit(&s->end, memory_order_relaxed);
        a = start;
        len = end - start;
        rc = mprotect((void *)start, end - start, PROT_READ | PROT_WRITE);
    }
    reapply_prog_prot(s, a, len);
    return rc;
}

int ph_sig_open_span(size_t i, uintptr_t a, size_t len)
{
    return open_run(i, &ph_sig_slots[i], a, len);
}

int ph_sig_protect_span(size_t i, uintptr_t a, size_t len)
{
    size_t in = (size_t)atomic_load(&ph_sig_slots[i].inst);
    if (ph_sig_insts[in].mech == PH_SIG_MECH_UFFD)
        return ph_uffd_sampler_protect(i, a, len);
    return mprotect((void *)a, len, PROT_NONE);
}

/* The run of slot s (entered) that holds addr under its current
 * geometry: its state, and its span [*a, *a + *len).  Async-signal-safe. */
static atomic_uchar *run_at(ph_sig_slot *s, uintptr_t addr, uintptr_t *a, size_t *len)
{
    uintptr_t start = atomic_load_explicit(&s->start, memory_order_relaxed);
    uintptr_t end = atomic_load_explicit(&s->end, memory_order_relaxed);
    size_t run_pages = atomic_load_explicit(&s->run_pages, memory_order_acquire);
    atomic_uchar *runs = atomic_load_explicit(&s->runs, memory_order_acquire);
    uintptr_t run_bytes = (uintptr_t)run_pages * PH_SIG_PAGE_BYTES;
    size_t r = (size_t)((addr - start) / run_bytes);
    *a = start + r * run_bytes;
    *len = (size_t)((*a + run_bytes < end ? *a + run_bytes : end) - *a);
    return &runs[r];
}

/* Inside slot s (entered): handle a fault at addr.  1 ours, 0 not. */
static int fault_in_slot(size_t idx, uint64_t word, uintptr_t addr, int node, int tid)
{
    ph_sig_slot *s = &ph_sig_slots[idx];
    uintptr_t a;
    size_t len;
    atomic_uchar *run = run_at(s, addr, &a, &len);
    if (ph_sig_prog_protected(idx, addr & ~(PH_SIG_PAGE_BYTES - 1), PH_SIG_PAGE_BYTES))
        return 0; /* the program's own protection: its fault */
    unsigned char st = atomic_load_explicit(run, memory_order_acquire);
    if (st == PH_RUN_ARMED &&
        atomic_compare_exchange_strong_explicit(run, &st, PH_RUN_FIRING,
                                                memory_order_acq_rel,
                                                memory_order_acquire)) {
        int kept = record(idx, PH_SIG_GEN(word), addr & ~(PH_SIG_PAGE_BYTES - 1),
                          a, len, node, tid);
        int ok = open_run(idx, s, a, len) == 0;
        atomic_store_explicit(run, kept ? PH_RUN_IDLE : PH_RUN_SUSPENDED,
                              memory_order_release);
        tl_idle_retry.addr = 0;
        return ok;
    }
    if (st == PH_RUN_FIRING || st == PH_RUN_LIFTING || st == PH_RUN_ARMING)
        return 1;
    if (stale_retry(&tl_idle_retry, addr, PH_SIG_STALE_TRIES))
        return 1;
    /* Still protected, its run neither armed nor being opened, and not by
     * the program (checked above): the range holds only read-write memory
     * of the program's (heap, static segments, read-write mappings), so
     * this protection can only be one of ours that the run protocol lost
     * track of.  Open the page and count it (orphans, in the sampler's
     * statistics) rather than crash a correct program.  userfaultfd's
     * pages are not protected this way: nothing to open there. */
    size_t i = (size_t)atomic_load_explicit(&s->inst, memory_order_relaxed);
    if (ph_sig_insts[i].mech == PH_SIG_MECH_UFFD)
        return 0;
    uintptr_t page = addr & ~(PH_SIG_PAGE_BYTES - 1);
    if (mprotect((void *)page, PH_SIG_PAGE_BYTES, PROT_READ | PROT_WRITE) != 0)
        return 0;
    reapply_prog_prot(s, page, PH_SIG_PAGE_BYTES);
    atomic_fetch_add_explicit(&ph_sig_orphans, 1, memory_order_relaxed);
    return 1;
}

/* Enter slot idx if it holds addr.  -1 not there, else the result of
 * handling the fault (1 ours, 0 not). */
static int try_slot(size_t idx, uintptr_t addr, int node, int tid)
{
    ph_sig_slot *s = &ph_sig_slots[idx];
    uint64_t w = atomic_load_explicit(&s->word, memory_order_acquire);
    if (PH_SIG_STATE(w) == PH_SIG_FREE)
        return -1;
    if (addr < atomic_load_explicit(&s->start, memory_order_relaxed) ||
        addr >= atomic_load_explicit(&s->end, memory_order_relaxed))
        return -1;
    atomic_fetch_add_explicit(&s->inflight, 1, memory_order_seq_cst);
    uint64_t w2 = atomic_load_explicit(&s->word, memory_order_seq_cst);
    int res;
    if (w2 != w || PH_SIG_STATE(w2) != PH_SIG_ACTIVE)
        res = 1; /* being removed or replaced: its protection is being lifted */
    else
        res = fault_in_slot(idx, w2, addr, node, tid);
    atomic_fetch_sub_explicit(&s->inflight, 1, memory_order_release);
    tl_last_slot = idx;
    return res;
}

/* 1 when the fault at addr was ours and has been dealt with. */
static int handle_ours(uintptr_t addr, int node, int tid)
{
    size_t n = atomic_load_explicit(&ph_sig_slot_hiwater, memory_order_acquire);
    if (tl_last_slot < n) {
        int r = try_slot(tl_last_slot, addr, node, tid);
        if (r >= 0)
            return r;
    }
    for (size_t i = 0; i < n; i++) {
        int r = try_slot(i, addr, node, tid);
        if (r >= 0)
            return r;
    }
    return 0;
}

int ph_sig_handle(uintptr_t addr, int node, int tid, size_t *slot_out)
{
    int r = handle_ours(addr, node, tid);
    *slot_out = tl_last_slot;
    return r;
}

/* ---- opening pages for the kernel ------------------------------------------- */

/* ---- queries of the kernel (the query hold) ----------------------------------
 *
 * A page the sampler watches is absent from where the kernel looks for
 * it: moved out to the stash (userfaultfd) or PROT_NONE (mprotect, which
 * Linux before 6.5 reports as absent).  A caller that asks the kernel
 * about pages (move_pages, get_mempolicy, the API's queries and moves)
 * opens their watched runs first; two things must then hold until the
 * kernel has answered:
 *   - every run of those pages is really back: a run another thread is
 *     opening (FIRING: a fault's handler or service thread, or another
 *     query; LIFTING: disarm) or arming (ARMING) still has its pages out,
 *     so open_page() waits until it settles, and opens it itself if it
 *     ends up ARMED;
 *   - no run is armed again meanwhile: the caller holds a *query hold*
 *     (ph_sampler_query_begin/end) and arming (ph_sig_arm_enter/leave
 *     around every ARMING..ARMED section) waits until no hold is held.
 * Dekker's handshake on two counters (all seq_cst): a query counts
 * itself in query_holds, then looks at arms_active; arming counts itself
 * in arms_active, then waits for query_holds to drain.  Either the query
 * sees the arming and backs off (without holding anything) until it is
 * over, or the arming sees the hold and waits; new queries back off
 * while an arming waits, so a storm of queries cannot starve it.  A
 * thread holding a hold never waits for anything an arming thread holds:
 * it waits only for runs to settle (opening never waits for a hold) and
 * for the kernel.  Holds nest on one thread (a signal handler's query
 * inside a query): a nested one does not back off. */

static size_t open_range(const void *addr, size_t bytes, int all_mechs);

static atomic_long query_holds;  /* query holds held, all threads */
static atomic_long arms_active;  /* armings waiting or inside their section */
static _Thread_local unsigned tl_query_depth __attribute__((tls_model("initial-exec")));

void ph_sampler_query_begin(void)
{
    if (tl_query_depth++ > 0) {
        atomic_fetch_add_explicit(&query_holds, 1, memory_order_seq_cst);
        return;
    }
    for (;;) {
        atomic_fetch_add_explicit(&query_holds, 1, memory_order_seq_cst);
        if (atomic_load_explicit(&arms_active, memory_order_seq_cst) == 0)
            return;
        atomic_fetch_sub_explicit(&query_holds, 1, memory_order_seq_cst);
        while (atomic_load_explicit(&arms_active, memory_order_seq_cst) != 0)
            sched_yield();
    }
}

void ph_sampler_query_end(void)
{
    tl_query_depth--;
    atomic_fetch_sub_explicit(&query_holds, 1, memory_order_release);
}

void ph_sig_arm_enter(void)
{
    /* a thread that arms inside its own query (nothing does) waits only
     * for the others' holds, never for itself */
    long mine = (long)tl_query_depth;
    atomic_fetch_add_explicit(&arms_active, 1, memory_order_seq_cst);
    while (atomic_load_explicit(&query_holds, memory_order_seq_cst) > mine)
        sched_yield();
}

void ph_sig_arm_leave(void)
{
    atomic_fetch_sub_explicit(&arms_active, 1, memory_order_release);
}

/* ---- transfers in flight ----------------------------------------------------
 *
 * A transfer the kernel makes while the program runs on (POSIX AIO:
 * glibc's helper threads; any call whose buffer the kernel copies later)
 * fails with EFAULT, or comes back short, on a page the mprotect
 * mechanism watches -- no wrapper sits between it and the kernel.  So its
 * buffer is kept out of the watch while it is in flight: busy_begin
 * enters the range in a small table under a query hold (no arm is inside
 * its ARMING section meanwhile), then opens the runs watched there; every
 * ARMING section (protect and resume in sampler.c) leaves out the runs
 * that overlap a range of the table, checked after ph_sig_arm_enter, so
 * an arm either finished before the range was entered (and its runs are
 * opened) or sees it.  busy_end takes the range out: its pages are
 * watched again from the next arm on.  At most PH_SIG_MAX_BUSY ranges at
 * once; more are refused (ENOSPC) and their transfers go unprotected.
 * No lock: slots are claimed by compare-and-swap of their key. */

enum { PH_SIG_MAX_BUSY = 256 };
static struct {
    _Atomic(uintptr_t) key; /* 0: free; claimed by compare-and-swap */
    _Atomic(uintptr_t) lo, hi; /* hi == 0: nothing kept (yet) */
} busy[PH_SIG_MAX_BUSY];
static atomic_int busy_count; /* slots claimed */

int ph_sig_busy(uintptr_t a, size_t len)
{
    if (atomic_load_explicit(&busy_count, memory_order_seq_cst) == 0)
        return 0;
    for (size_t k = 0; k < PH_SIG_MAX_BUSY; k++) {
        uintptr_t hi = atomic_load_explicit(&busy[k].hi, memory_order_acquire);
        if (hi > a && atomic_load_explicit(&busy[k].lo, memory_order_relaxed) < a + len)
            return 1;
    }
    return 0;
}

/* The slot of key, or PH_SIG_MAX_BUSY.  No lock (a fork may come at any
 * moment): a key is begun and ended by the program's calls about one
 * transfer, which do not race with each other. */
static size_t busy_slot(uintptr_t key)
{
    for (size_t k = 0; k < PH_SIG_MAX_BUSY; k++)
        if (atomic_load_explicit(&busy[k].key, memory_order_acquire) == key)
            return k;
    return PH_SIG_MAX_BUSY;
}

int ph_sampler_busy_begin(const void *key, const void *addr, size_t bytes)
{
    if (!key || !addr || bytes == 0)
        return 0;
    uintptr_t lo = (uintptr_t)addr & ~(PH_SIG_PAGE_BYTES - 1), hi = (uintptr_t)addr + bytes;
    if (hi < lo)
        hi = UINTPTR_MAX;
    ph_sampler_query_begin();
    size_t at = busy_slot((uintptr_t)key); /* the same control block again */
    for (size_t k = 0; k < PH_SIG_MAX_BUSY && at == PH_SIG_MAX_BUSY; k++) {
        uintptr_t none = 0;
        if (atomic_compare_exchange_strong(&busy[k].key, &none, (uintptr_t)key)) {
            atomic_fetch_add_explicit(&busy_count, 1, memory_order_seq_cst);
            at = k;
        }
    }
    if (at < PH_SIG_MAX_BUSY) {
        atomic_store_explicit(&busy[at].lo, lo, memory_order_relaxed);
        atomic_store_explicit(&busy[at].hi, hi, memory_order_seq_cst);
        (void)open_range(addr, bytes, 1);
    }
    ph_sampler_query_end();
    if (at == PH_SIG_MAX_BUSY) {
        errno = ENOSPC;
        return -1;
    }
    return 0;
}

int ph_sampler_busy_end(const void *key)
{
    if (!key || atomic_load_explicit(&busy_count, memory_order_seq_cst) == 0)
        return 0;
    size_t at = busy_slot((uintptr_t)key);
    if (at == PH_SIG_MAX_BUSY)
        return 0;
    atomic_store_explicit(&busy[at].hi, 0, memory_order_release);
    atomic_store_explicit(&busy[at].key, 0, memory_order_release);
    atomic_fetch_sub_explicit(&busy_count, 1, memory_order_release);
    return 1;
}

/* Run *st of slot i, [a, a+len): wait while it is ARMING, FIRING or
 * LIFTING (its pages are on their way out or back), open it if it is
 * ARMED (FIRING claim: the handler and lift() keep out meanwhile).  1
 * when the run was watched (opened by us or by whoever we waited for),
 * 0 when it was not (IDLE, SUSPENDED). */
static int open_settled(size_t i, ph_sig_slot *s, atomic_uchar *st, uintptr_t a, size_t len)
{
    int watched = 0;
    for (;;) {
        unsigned char v = atomic_load_explicit(st, memory_order_acquire);
        if (v == PH_RUN_IDLE || v == PH_RUN_SUSPENDED)
            return watched;
        watched = 1;
        if (v == PH_RUN_ARMED &&
            atomic_compare_exchange_strong(st, &v, PH_RUN_FIRING)) {
            (void)open_run(i, s, a, len);
            atomic_store_explicit(st, PH_RUN_IDLE, memory_order_release);
            return 1;
        }
        if (v != PH_RUN_ARMED)
            sched_yield();
    }
}

/* Where a query's previous page was found: its slot, or a stretch of
 * addresses no slot held.  A query's pages are mostly of one range, or of
 * none (an area's homes read after its range was taken out): without
 * this, a query of P pages among R ranges looked at P x R slots -- 8 s of
 * 17 in a program with 5000 hot blocks.  A query runs under a query hold,
 * so no run is armed meanwhile; a range added then has nothing armed. */
typedef struct page_hint {
    size_t slot;               /* SIZE_MAX: none */
    uintptr_t gap_lo, gap_hi;  /* no slot held [gap_lo, gap_hi) */
} page_hint;

/* Slot i is in use and holds addr: its word in *w. */
static int slot_holds(size_t i, uintptr_t addr, uint64_t *w)
{
    ph_sig_slot *s = &ph_sig_slots[i];
    *w = atomic_load_explicit(&s->word, memory_order_acquire);
    return PH_SIG_STATE(*w) != PH_SIG_FREE &&
           addr >= atomic_load_explicit(&s->start, memory_order_relaxed) &&
           addr < atomic_load_explicit(&s->end, memory_order_relaxed);
}

/* The slot holding addr (its word in *w), or SIZE_MAX with h's gap set to
 * the stretch around addr that no slot holds. */
static size_t find_slot(uintptr_t addr, page_hint *h, uint64_t *w)
{
    size_t n = atomic_load_explicit(&ph_sig_slot_hiwater, memory_order_acquire);
    if (h->slot < n && slot_holds(h->slot, addr, w))
        return h->slot;
    uintptr_t lo = 0, hi = UINTPTR_MAX;
    for (size_t i = 0; i < n; i++) {
        ph_sig_slot *s = &ph_sig_slots[i];
        *w = atomic_load_explicit(&s->word, memory_order_acquire);
        if (PH_SIG_STATE(*w) == PH_SIG_FREE)
            continue;
        uintptr_t start = atomic_load_explicit(&s->start, memory_order_relaxed);
        uintptr_t end = atomic_load_explicit(&s->end, memory_order_relaxed);
        if (addr >= start && addr < end) {
            h->slot = i;
            return i;
        }
        if (end <= addr && end > lo)
            lo = end;
        if (start > addr && start < hi)
            hi = start;
    }
    h->gap_lo = lo;
    h->gap_hi = hi;
    return SIZE_MAX;
}

/* One page: if a slot watches it, its run settled and open (see above).
 * 1 when the page was watched, 0 when not. */
static int open_page(uintptr_t addr, page_hint *h)
{
    if (addr >= h->gap_lo && addr < h->gap_hi)
        return 0;
    uint64_t w;
    size_t i = find_slot(addr, h, &w);
    if (i == SIZE_MAX)
        return 0;
    ph_sig_slot *s = &ph_sig_slots[i];
    atomic_fetch_add_explicit(&s->inflight, 1, memory_order_seq_cst);
    int res = 0;
    uint64_t w2 = atomic_load_explicit(&s->word, memory_order_seq_cst);
    /* entered: its run states stay allocated until we leave, also while
     * the range is being removed (its runs are being lifted) */
    if (PH_SIG_GEN(w2) == PH_SIG_GEN(w) && PH_SIG_STATE(w2) != PH_SIG_FREE) {
        uintptr_t a;
        size_t len;
        atomic_uchar *run = run_at(s, addr, &a, &len);
        res = open_settled(i, s, run, a, len);
    }
    atomic_fetch_sub_explicit(&s->inflight, 1, memory_order_release);
    return res;
}

size_t ph_sampler_open_pages(size_t count, void *const *pages)
{
    size_t opened = 0;
    page_hint hint = {SIZE_MAX, 0, 0};
    if (atomic_load_explicit(&ph_sig_slot_hiwater, memory_order_acquire) == 0)
        return 0;
    for (size_t i = 0; i < count; i++)
        opened += (size_t)open_page((uintptr_t)pages[i], &hint);
    return opened;
}

size_t ph_sampler_open_range(const void *addr, size_t bytes)
{
    return open_range(addr, bytes, 0);
}

/* For each active slot watching part of [lo, hi): fn(i, s, a, b, arg)
 * with [a, b) that part, while the slot is held (inflight) and still the
 * one seen (its word unchanged); uffd_only: slots of the userfaultfd
 * mechanism only.  The sum of what fn returned. */
typedef size_t (*slot_fn)(size_t i, ph_sig_slot *s, uintptr_t a, uintptr_t b, void *arg);
static size_t each_slot(uintptr_t lo, uintptr_t hi, int uffd_only, slot_fn fn, void *arg)
{
    size_t sum = 0;
    size_t n = atomic_load_explicit(&ph_sig_slot_hiwater, memory_order_acquire);
    for (size_t i = 0; i < n && hi > lo; i++) {
        ph_sig_slot *s = &ph_sig_slots[i];
        uint64_t w = atomic_load_explicit(&s->word, memory_order_acquire);
        uintptr_t start = atomic_load_explicit(&s->start, memory_order_relaxed);
        uintptr_t end = atomic_load_explicit(&s->end, memory_order_relaxed);
        if (PH_SIG_STATE(w) != PH_SIG_ACTIVE || hi <= start || lo >= end)
            continue;
        size_t in = (size_t)atomic_load_explicit(&s->inst, memory_order_relaxed);
        if (uffd_only && ph_sig_insts[in].mech != PH_SIG_MECH_UFFD)
            continue;
        atomic_fetch_add_explicit(&s->inflight, 1, memory_order_seq_cst);
        if (atomic_load_explicit(&s->word, memory_order_seq_cst) == w)
            sum += fn(i, s, lo > start ? lo : start, hi < end ? hi : end, arg);
        atomic_fetch_sub_explicit(&s->inflight, 1, memory_order_release);
    }
    return sum;
}

static uintptr_t page_floor(const void *addr)
{
    return (uintptr_t)addr & ~(PH_SIG_PAGE_BYTES - 1);
}

/* The end of [addr, addr+bytes); page_floor(addr) (nothing) when empty or
 * wrapping. */
static uintptr_t range_end(const void *addr, size_t bytes)
{
    uintptr_t hi = (uintptr_t)addr + bytes;
    return bytes == 0 || hi < (uintptr_t)addr ? page_floor(addr) : hi;
}

typedef struct mark_arg {
    unsigned field;
    unsigned char v;
} mark_arg;

static size_t mark_slot(size_t i, ph_sig_slot *s, uintptr_t a, uintptr_t b, void *arg)
{
    (void)i;
    const mark_arg *m = arg;
    uintptr_t start = atomic_load_explicit(&s->start, memory_order_relaxed);
    uintptr_t end = atomic_load_explicit(&s->end, memory_order_relaxed);
    atomic_uchar *pp = atomic_load_explicit(&s->prog_prot, memory_order_acquire);
    if (!pp && m->v) {
        atomic_uchar *fresh = calloc((end - start) / PH_SIG_PAGE_BYTES, 1);
        atomic_uchar *none = NULL;
        if (fresh && !atomic_compare_exchange_strong(&s->prog_prot, &none, fresh))
            free(fresh);
        pp = atomic_load(&s->prog_prot);
    }
    for (uintptr_t q = a; pp && q < b; q += PH_SIG_PAGE_BYTES) {
        atomic_uchar *c = &pp[(q - start) / PH_SIG_PAGE_BYTES];
        unsigned char old = atomic_load_explicit(c, memory_order_acquire);
        while (!atomic_compare_exchange_weak(
            c, &old, (unsigned char)((old & ~m->field) | m->v)))
            ;
    }
    return 1;
}

/* Set the program's marks of [addr, addr+bytes) in the watched ranges:
 * the bits of `field` become `v` (the others stay).  1 when a watched
 * range has a page there. */
static int prog_mark(void *addr, size_t bytes, unsigned field, unsigned char v)
{
    mark_arg m = {field, v};
    return each_slot(page_floor(addr), range_end(addr, bytes), 0, mark_slot, &m) > 0;
}

void ph_sampler_note_protect(void *addr, size_t bytes, int prot)
{
    unsigned char v = (prot & ~7) == 0 && (prot & 7) == (PROT_READ | PROT_WRITE)
                          ? 0
                          : (unsigned char)(PH_SIG_PROT_SET | ((unsigned)prot & 7u));
    /* then open whatever is watched there, so that the program's own
     * protection applies to pages in place */
    if (prog_mark(addr, bytes, PH_SIG_PROT_SET | 7u, v))
        (void)open_range(addr, bytes, 1);
}

void ph_sampler_note_policy(void *addr, size_t bytes, int own)
{
    if (prog_mark(addr, bytes, PH_SIG_POLICY_SET, own ? PH_SIG_POLICY_SET : 0) && own)
        (void)open_range(addr, bytes, 1);
}

typedef struct marks_arg {
    uintptr_t lo;
    unsigned char *marked;
} marks_arg;

static size_t policy_slot(size_t i, ph_sig_slot *s, uintptr_t a, uintptr_t b, void *arg)
{
    (void)i;
    const marks_arg *m = arg;
    uintptr_t start = atomic_load_explicit(&s->start, memory_order_relaxed);
    atomic_uchar *pp = atomic_load_explicit(&s->prog_prot, memory_order_acquire);
    size_t count = 0;
    for (uintptr_t q = a; pp && q < b; q += PH_SIG_PAGE_BYTES)
        if (atomic_load_explicit(&pp[(q - start) / PH_SIG_PAGE_BYTES], memory_order_acquire) &
            PH_SIG_POLICY_SET) {
            m->marked[(q - m->lo) / PH_SIG_PAGE_BYTES] = 1;
            count++;
        }
    return count;
}

size_t ph_sampler_policy_marks(const void *addr, size_t bytes, unsigned char *marked)
{
    marks_arg m = {page_floor(addr), marked};
    uintptr_t hi = range_end(addr, bytes);
    if (hi <= m.lo)
        return 0;
    memset(marked, 0, (hi - m.lo + PH_SIG_PAGE_BYTES - 1) / PH_SIG_PAGE_BYTES);
    return each_slot(m.lo, hi, 0, policy_slot, &m);
}

static size_t open_slot(size_t i, ph_sig_slot *s, uintptr_t a, uintptr_t b, void *arg)
{
    (void)arg;
    uintptr_t start = atomic_load_explicit(&s->start, memory_order_relaxed);
    uintptr_t end = atomic_load_explicit(&s->end, memory_order_relaxed);
    size_t run_pages = atomic_load_explicit(&s->run_pages, memory_order_acquire);
    atomic_uchar *runs = atomic_load_explicit(&s->runs, memory_order_acquire);
    uintptr_t rb = (uintptr_t)run_pages * PH_SIG_PAGE_BYTES;
    size_t opened = 0;
    for (size_t r = (a - start) / rb; r <= (b - 1 - start) / rb; r++) {
        uintptr_t ra = start + r * rb, re = ra + rb < end ? ra + rb : end;
        opened += (size_t)open_settled(i, s, &runs[r], ra, re - ra);
    }
    return opened;
}

/* all_mechs 0: the userfaultfd mechanism's slots only (PROT_NONE pages
 * are present: nothing to open for a query). */
static size_t open_range(const void *addr, size_t bytes, int all_mechs)
{
    return each_slot(page_floor(addr), range_end(addr, bytes), !all_mechs, open_slot, NULL);
}

/* ---- chaining ---------------------------------------------------------------- */

static void chain(int sig, siginfo_t *si, void *ctx)
{
    const struct sigaction *prev =
        &chain_act[atomic_load_explicit(&chain_idx, memory_order_acquire)];
    if (prev->sa_flags & SA_SIGINFO) {
        if (prev->sa_sigaction) {
            prev->sa_sigaction(sig, si, ctx);
            return;
        }
    } else if (prev->sa_handler != SIG_DFL && prev->sa_handler != SIG_IGN) {
        prev->sa_handler(sig);
        return;
    }
    /* Default: die by this signal.  A fault re-executes and faults again
     * under SIG_DFL; a signal sent by kill() is raised again (it stays
     * pending until we return). */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    if (si->si_code <= 0)
        raise(sig);
}

static void on_sigsegv(int sig, siginfo_t *si, void *ctx)
{
    int saved_errno = errno;
    if (si->si_code == SEGV_ACCERR) {
        uint64_t t0 = ph_now_ns();
        uintptr_t addr = (uintptr_t)si->si_addr;
        if (handle_ours(addr, PH_SIG_NODE_SELF, PH_SIG_TID_SELF)) {
            size_t slot = tl_last_slot;
            int i = atomic_load_explicit(&ph_sig_slots[slot].inst, memory_order_relaxed);
            if (i >= 0 && i < PH_SIG_MAX_INSTANCES)
                atomic_fetch_add_explicit(&ph_sig_insts[i].handler_ns, ph_now_ns() - t0,
                                          memory_order_relaxed);
            errno = saved_errno;
            return;
        }
        /* The page may have been ours when it faulted and its range
         * removed since (removal lifts before it frees the slot): one
         * retry tells that apart from a fault that is not ours. */
        if (stale_retry(&tl_gone_retry, addr, 1)) {
            errno = saved_errno;
            return;
        }
    }
    atomic_fetch_add_explicit(&ph_sig_foreign, 1, memory_order_relaxed);
    chain(sig, si, ctx);
    errno = saved_errno;
}

/* ---- installation (normal context) ------------------------------------------ */

static void install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigsegv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigfillset(&sa.sa_mask);
    (void)ph_now_ns(); /* bind clock_gettime before any trap needs it */
    if (sigaction(SIGSEGV, NULL, &chain_act[0]) != 0 ||
        sigaction(SIGSEGV, &sa, NULL) != 0)
        install_errno = errno ? errno : EINVAL;
    else
        atomic_store(&installed, 1);
}

int ph_sampler_chain_swap(const struct sigaction *act, struct sigaction *old)
{
    if (!atomic_load(&installed))
        return 1;
    static pthread_mutex_t swap_lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&swap_lock);
    int cur = atomic_load(&chain_idx);
    if (old)
        *old = chain_act[cur];
    if (act) {
        chain_act[!cur] = *act;
        atomic_store_explicit(&chain_idx, !cur, memory_order_release);
    }
    pthread_mutex_unlock(&swap_lock);
    return 0;
}

int ph_sig_install(void)
{
    pthread_once(&install_once, install);
    if (install_errno) {
        errno = install_errno;
        return -1;
    }
    return 0;
}

void ph_sig_release_thread_rings(void)
{
    for (size_t i = 0; i < PH_SIG_MAX_INSTANCES; i++) {
        ph_sig_inst *in = &ph_sig_insts[i];
        if (!tl_rings[i].ring)
            continue;
        /* Same protocol as the slots: announce, re-check, then touch. */
        atomic_fetch_add_explicit(&in->users, 1, memory_order_seq_cst);
        uint64_t w = atomic_load_explicit(&in->word, memory_order_seq_cst);
        if (PH_SIG_STATE(w) == PH_SIG_ACTIVE && PH_SIG_GEN(w) == tl_rings[i].gen)
            atomic_store_explicit(&tl_rings[i].ring->owned, 0, memory_order_release);
        atomic_fetch_sub_explicit(&in->users, 1, memory_order_release);
        tl_rings[i].ring = NULL;
        tl_rings[i].gen = 0;
    }
}

/* In a fork() child (one thread: the others, and their handlers, are
 * gone).  A run a handler of another thread was opening (FIRING) would
 * stay so for good and every lift would wait on it: it is opened here,
 * and the counts of threads inside a slot or an instance start at zero.
 * The userfaultfd mechanism opened its runs before fork (uffd.c). */
void ph_sig_fork_child(void)
{
    ph_uffd_sampler_fork_child();
    size_t n = atomic_load(&ph_sig_slot_hiwater);
    for (size_t i = 0; i < n; i++) {
        ph_sig_slot *s = &ph_sig_slots[i];
        atomic_store(&s->inflight, 0);
        if (PH_SIG_STATE(atomic_load(&s->word)) == PH_SIG_FREE)
            continue;
        atomic_uchar *runs = atomic_load(&s->runs);
        size_t rp = atomic_load(&s->run_pages);
        uintptr_t start = atomic_load(&s->start), end = atomic_load(&s->end);
        if (!runs || rp == 0)
            continue;
        int uffd = ph_sig_insts[atomic_load(&s->inst)].mech == PH_SIG_MECH_UFFD;
        uintptr_t run_bytes = (uintptr_t)rp * PH_SIG_PAGE_BYTES;
        size_t nruns = (size_t)((end - start + run_bytes - 1) / run_bytes);
        for (size_t r = 0; r < nruns; r++) {
            unsigned char st = atomic_load(&runs[r]);
            if (st != PH_RUN_FIRING &&
                !(uffd && (st == PH_RUN_ARMED || st == PH_RUN_LIFTING || st == PH_RUN_ARMING)))
                continue;
            uintptr_t a = start + r * run_bytes;
            uintptr_t b = a + run_bytes < end ? a + run_bytes : end;
            (void)open_run(i, s, a, b - a);
            atomic_store(&runs[r], PH_RUN_IDLE);
        }
    }
    for (size_t i = 0; i < PH_SIG_MAX_INSTANCES; i++)
        atomic_store(&ph_sig_insts[i].users, 0);
    /* the query holds of the threads that are gone go with them */
    atomic_store(&query_holds, (long)tl_query_depth);
    atomic_store(&arms_active, 0);
}
