/*
 * sigsegv.h -- the state the SIGSEGV handler (sigsegv.c) shares with the
 * rest of the sampler (sampler.c).  Private to src/sample/.
 *
 * Everything the handler reads lives in two fixed, process-wide tables
 * (no allocation, no locks in the handler):
 *
 *   ph_sig_inst[]  one entry per open sampler: its ph_os (current_node),
 *                  an OS-node-number -> node-index table, its pool of
 *                  per-thread sample rings and its counters;
 *   ph_sig_slot[]  one entry per hot range of any sampler: bounds, the
 *                  run geometry of the current interval, one atomic state
 *                  byte per run, and an in-flight count of handlers
 *                  working inside the range.
 *
 * Each entry has a `word` = (generation << 2) | state.  Normal code fills
 * an entry while it is FREE and publishes it with a release store of
 * ACTIVE; the handler loads the word (acquire), checks the address,
 * increments `inflight`, and loads the word again: unchanged means the
 * entry cannot be freed until it decrements.  Retiring an entry sets
 * REMOVING, lifts every protection, waits for inflight == 0, and only then
 * bumps the generation and frees.
 *
 * Run states: IDLE (not protected by us), ARMING (arm is protecting it),
 * ARMED (protected, first touch traps), FIRING (a handler claimed it and
 * is unprotecting it), LIFTING (disarm/remove is unprotecting it),
 * SUSPENDED (chosen for this interval, but not protected while the
 * program is outside parallel regions: the region gate, sampler.c).  Only
 * the owner of a transition calls mprotect on the run, and the run
 * becomes ARMED only after its mprotect(PROT_NONE) returned, IDLE only
 * after its mprotect(PROT_READ|PROT_WRITE) returned.  A handler that
 * meets ARMING, FIRING or LIFTING returns at once: the access is retried.
 * Opening for a query of the kernel (ph_sampler_open_pages) waits for
 * such a run to settle instead: until then its pages are still out.
 */
#ifndef PH_SAMPLE_SIGSEGV_H
#define PH_SAMPLE_SIGSEGV_H

#include "os/os.h"
#include "sample/source.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define PH_SIG_MAX_INSTANCES 8      /* samplers open at once */
/* How an instance watches a run (ph_sampler_opts.mechanism). */
enum { PH_SIG_MECH_MPROTECT = 0, PH_SIG_MECH_UFFD = 1 };
/* Hot ranges of all samplers at once: a program of thousands of large
 * blocks (5000 of 1.5 MiB measured) has them all watched.  Lookups scan
 * the slots below the high-water mark only, so a program with few ranges
 * pays nothing for the room. */
#define PH_SIG_MAX_SLOTS 16384
#define PH_SIG_NODE_IDS 1024        /* OS node numbers are 0..1023 */

enum { PH_SIG_FREE = 0, PH_SIG_ACTIVE = 1, PH_SIG_REMOVING = 2 };
enum { PH_RUN_IDLE = 0, PH_RUN_ARMED = 1, PH_RUN_FIRING = 2, PH_RUN_LIFTING = 3,
       PH_RUN_ARMING = 4, PH_RUN_SUSPENDED = 5 };

#define PH_SIG_STATE(w) ((unsigned)((w) & 3u))
#define PH_SIG_GEN(w) ((w) >> 2)
#define PH_SIG_WORD(gen, state) (((uint64_t)(gen) << 2) | (uint64_t)(state))

/* One recorded trap, as it sits in a ring.  The slot and its generation
 * let drain() drop samples of ranges removed since they were taken. */
typedef struct ph_sig_entry {
    uintptr_t page;
    uint32_t slot_gen;   /* low 32 bits of the slot's generation */
    uint16_t slot;
    int16_t node;        /* node index */
} ph_sig_entry;

/* A single-producer (one thread's handler) single-consumer (drain) ring.
 * head and tail count entries ever written / consumed. */
typedef struct ph_sig_ring {
    atomic_int owned;                 /* 0 free, 1 claimed by a thread */
    atomic_uint_fast64_t head;        /* producer */
    atomic_uint_fast64_t tail;        /* consumer */
    atomic_uint_fast64_t dropped;     /* entries lost to a full ring */
    ph_sig_entry *buf;                /* mask + 1 entries */
} ph_sig_ring;

typedef struct ph_sig_inst {
    atomic_uint_fast64_t word;        /* gen << 2 | FREE/ACTIVE */
    ph_os *os;
    int16_t node_index[PH_SIG_NODE_IDS]; /* OS node number -> index, -1 */
    ph_sig_ring *rings;
    size_t nrings;
    uint64_t ring_mask;
    atomic_uint_fast64_t traps;       /* samples recorded into rings */
    atomic_uint_fast64_t credited;    /* entries recorded for a run's other
                                         pages (a slot's `credit`) */
    atomic_uint_fast64_t dropped;     /* no ring, or no node */
    atomic_uint_fast64_t serial;      /* traps in serial code, not kept */
    atomic_uint_fast64_t handler_ns;
    atomic_long users;                /* threads giving rings back */
    int tracks_touch;                 /* tell os who touched a run first */
    int mech;                         /* PH_SIG_MECH_* */
    struct ph_uffd_sampler *uffd;     /* PH_SIG_MECH_UFFD: uffd.c's state */
} ph_sig_inst;

typedef struct ph_sig_slot {
    atomic_uint_fast64_t word;        /* gen << 2 | FREE/ACTIVE/REMOVING */
    atomic_uintptr_t start, end;      /* 4 KiB aligned */
    atomic_size_t run_pages;          /* geometry of the current interval */
    /* 1: a trap stands for its whole run (the first sweep's coarse
     * runs): one entry is recorded for each page of the run, all with
     * the toucher's node.  Changed with the geometry only. */
    atomic_uchar credit;
    _Atomic(atomic_uchar *) runs;     /* one state per run */
    atomic_int inst;                  /* owning instance index */
    atomic_long inflight;             /* handlers inside the range */
    atomic_uintptr_t stash;           /* PH_SIG_MECH_UFFD: where armed pages wait */
    /* The program's own settings of each page, once it has changed one
     * (NULL before), 0 when none: PH_SIG_PROT_SET | prot, a protection
     * of its own (a fault on such a page is the program's, and opening a
     * run never widens it); PH_SIG_POLICY_SET, a memory policy of its own
     * (mbind: the page stays where that policy puts it).  Pages with
     * either are never watched. */
    _Atomic(atomic_uchar *) prog_prot;
} ph_sig_slot;

#define PH_SIG_PROT_SET 0x80u
#define PH_SIG_POLICY_SET 0x40u

extern ph_sig_inst ph_sig_insts[PH_SIG_MAX_INSTANCES];
extern ph_sig_slot ph_sig_slots[PH_SIG_MAX_SLOTS];
/* Slots below this index may be in use (the handler scans up to it). */
extern atomic_size_t ph_sig_slot_hiwater;
/* SIGSEGVs passed on to the previous handler, process-wide. */
extern atomic_uint_fast64_t ph_sig_foreign;
/* Watched pages found protected with their run neither armed nor being
 * opened (a lapse of the run protocol), opened by the handler. */
extern atomic_uint_fast64_t ph_sig_orphans;
/* 1 while the region gate is closed (sampler.c: the OpenMP tools
 * interface says no outermost parallel region is running): a trap then
 * taken by a thread that runs the program's serial code
 * (ph_sig_runs_serial_code) -- an initialisation loop, a verification
 * pass -- is not recorded as a sample (the touch is still told to the
 * machine); its run is left SUSPENDED, to be watched again when the gate
 * opens.  A trap of any other thread is a sample.  Mostly the
 * userfaultfd mechanism's: the mprotect one keeps its runs open while
 * the gate is closed. */
extern atomic_int ph_sig_serial;

#define PH_SIG_TID_SELF (-1)    /* the calling thread */
/* 1 when thread tid (PH_SIG_TID_SELF: the caller; 0: not known) is one
 * of the OpenMP runtime's initial threads, which run the serial code
 * (ph_sampler_note_serial_thread, thread.c), or cannot be told apart
 * from them.  Async-signal-safe. */
int ph_sig_runs_serial_code(int tid);

/* Watch [a, a+len) of slot i (PROT_NONE, or moved out to the stash),
 * and open it again (read-write, or moved back).  Dispatch on the
 * slot's instance mechanism; ph_sig_open_span is async-signal-safe for
 * the mprotect mechanism.  0 or -1/errno. */
int ph_sig_protect_span(size_t i, uintptr_t a, size_t len);
int ph_sig_open_span(size_t i, uintptr_t a, size_t len);

#define PH_SIG_NODE_SELF (-1)   /* the calling thread's node */
#define PH_SIG_NODE_UNKNOWN (-2)
/* 1 when a page of [a, a+len) in slot i carries a protection of the
 * program's own. */
int ph_sig_prog_protected(size_t i, uintptr_t a, size_t len);
/* 1 when a page of [a, a+len) in slot i carries a protection or a memory
 * policy of the program's own: no arm watches it. */
int ph_sig_unwatched(size_t i, uintptr_t a, size_t len);

/* Handle a watched access at addr by thread tid (PH_SIG_TID_SELF: this
 * one; 0: not known) on node index `node` (or PH_SIG_NODE_SELF: this
 * thread's, from current_node(); UNKNOWN: the sample is dropped).  1 ours
 * and dealt with (or to be retried), 0 not ours.  *slot_out: the slot it
 * was in. */
int ph_sig_handle(uintptr_t addr, int node, int tid, size_t *slot_out);

/* Around every section in which runs go ARMING..ARMED (their pages are
 * moved out or protected): waits until no query hold is held and keeps
 * new ones off until leave (sigsegv.c, "queries of the kernel").  Normal
 * context (a thread's own query holds do not hold it off). */
void ph_sig_arm_enter(void);
void ph_sig_arm_leave(void);
/* 1 when [a, a+len) overlaps the buffer of a transfer in flight
 * (ph_sampler_busy_begin): an ARMING section leaves such runs out.
 * Called inside ph_sig_arm_enter/leave. */
int ph_sig_busy(uintptr_t a, size_t len);

/* ---- the userfaultfd mechanism (uffd.c) ---- */
/* Start the service thread of instance i; 0 or -1/errno (with message:
 * why userfaultfd cannot be used). */
int ph_uffd_sampler_start(size_t i);
void ph_uffd_sampler_stop(size_t i);
int ph_uffd_sampler_protect(size_t slot, uintptr_t a, size_t len);
int ph_uffd_sampler_open(size_t slot, uintptr_t a, size_t len);
/* A range is added / removed: its stash.  0 or -1/errno. */
int ph_uffd_sampler_add(size_t slot);
void ph_uffd_sampler_remove(size_t slot);
/* Around the protecting part of arm(): 0 means do not arm now (a fork()
 * is under way, or this is a child without a service thread). */
int ph_uffd_sampler_arm_begin(void);
void ph_uffd_sampler_arm_end(void);
/* In a fork() child, before anything else of the mechanism runs there:
 * from then on it never calls the inherited userfaultfd (whose ioctls
 * act on the parent's memory), and ph_uffd_sampler_open() puts the
 * pages of a run that were in the child's copy of the stash back with
 * mremap(2). */
void ph_uffd_sampler_fork_child(void);

/* Install the handler (once per process; later calls return 0 at once).
 * 0 or -1/errno. */
int ph_sig_install(void);
/* Forget the calling thread's rings (thread exit; normal context). */
void ph_sig_release_thread_rings(void);
/* In a fork() child: runs other threads were opening are opened (and,
 * for the userfaultfd mechanism, runs left armed: the child's copies are
 * not registered), the counts of threads inside slots and instances
 * reset. */
void ph_sig_fork_child(void);

#endif
