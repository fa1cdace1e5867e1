/*
 * source.h -- where the engine's access counts come from.
 *
 * UPMlib read per-page, per-node reference counters from the Origin2000's
 * memory modules.  Linux gives user space nothing of the kind, so pagehome
 * takes *samples*: each sample says "a thread running on node n touched
 * 4 KiB page p".  An access source produces them; the engine (src/engine/)
 * turns them into per-page counts and applies the migration criteria.
 *
 * Two sources share this contract:
 *   sampler.c + sigsegv.c  the real one: protects a rotating subset of the
 *                          hot pages (PROT_NONE); the first touch of each
 *                          traps, and the SIGSEGV handler records
 *                          (page, node of the faulting thread) into a
 *                          per-thread ring and restores access;
 *   synth.c                the simulated machine's: exact counts from a
 *                          workload model (optionally thinned by sampling
 *                          noise), so that criteria tests are deterministic.
 *
 * CONTRACT
 *  - The engine tells the source which ranges are hot (add_range /
 *    remove_range, both 4 KiB aligned, never overlapping).  remove_range
 *    returns only when no part of the source touches the range any more:
 *    protections are lifted, no handler is still working on it, and no
 *    later drain() reports a page of it.  After it returns the memory may
 *    be unmapped.
 *  - arm() starts one sampling interval: the source chooses which pages
 *    to watch within its budget (rotation, so that every hot page is
 *    watched within a few intervals) and starts watching.  `full` asks for
 *    every page of every range (full-snapshot mode).
 *  - drain() hands every sample recorded since the last drain to fn, in
 *    batches, and returns the number of samples.  It may run concurrently
 *    with the program's threads touching watched pages.  Samples carry
 *    node *indexes* (0..nnodes-1 of the topology), not OS node numbers.
 *  - disarm() stops watching (lifts every protection) without losing
 *    samples already recorded: they come out of the next drain().
 *  - set_budget() (optional) changes how many pages the next arm()
 *    watches; 0 means every page.
 *  - set_run_pages() (optional) makes the next arms watch runs of that
 *    many contiguous pages, each run's one trap standing for all of its
 *    pages: drain() then reports a sample for every page of the run, all
 *    with the toucher's node (`credited` counts those beyond the trapped
 *    page).  0 (or the source's own run size) goes back to what it was.
 *  - Samples may be lost (a full ring): `dropped` in the stats counts
 *    them; nothing else goes wrong.
 *  - All calls except drain's callback are made by one engine thread at a
 *    time (the engine serialises them); the program's threads only ever
 *    meet the source through the pages it watches.
 */
#ifndef PH_SAMPLE_SOURCE_H
#define PH_SAMPLE_SOURCE_H

#include <stddef.h>
#include <stdint.h>

struct ph_topology;
struct ph_os;

typedef struct ph_sample {
    uintptr_t page;   /* 4 KiB aligned address */
    int32_t node;     /* node index of the accessing thread */
    uint32_t count;   /* accesses this sample stands for (1 for a trap) */
} ph_sample;

typedef void (*ph_sample_fn)(void *arg, const ph_sample *s, size_t n);

typedef struct ph_source_stats {
    uint64_t armed_pages;     /* pages watched, summed over intervals */
    uint64_t swept_pages;     /* pages the rotation passed, summed over
                                 intervals: the watched ones and those left
                                 out as never touched (a full sweep of the
                                 hot pages adds their number) */
    uint64_t samples;         /* samples delivered by drain() */
    uint64_t credited;        /* of those recorded, the ones for a run's
                                 other pages (set_run_pages): not traps */
    uint64_t dropped;         /* samples lost (ring full) */
    uint64_t serial;          /* traps in serial code (outside every
                                 parallel region, once the OpenMP tools
                                 interface tells), not kept as samples */
    uint64_t foreign_faults;  /* SIGSEGVs that were not ours (chained) */
    uint64_t orphan_opens;    /* our protections found with no run armed,
                                 opened by the handler (should stay 0) */
    uint64_t intervals;       /* arm() calls */
    uint64_t max_runs;        /* most protected runs at once */
    uint64_t handler_ns;      /* time in the handler (sampler), 0 if unknown */
    uint64_t arm_ns;          /* time in arm/disarm (mprotect calls) */
} ph_source_stats;

typedef struct ph_source ph_source;

typedef struct ph_source_ops {
    const char *name;  /* "sigsegv", "userfaultfd", "synth" */
    int (*add_range)(ph_source *s, void *addr, size_t bytes);
    int (*remove_range)(ph_source *s, void *addr, size_t bytes);
    int (*arm)(ph_source *s, int full);
    int (*disarm)(ph_source *s);
    size_t (*drain)(ph_source *s, ph_sample_fn fn, void *arg);
    void (*stats)(ph_source *s, ph_source_stats *out);
    void (*close)(ph_source *s);
    /* Change the pages watched per interval from the next arm() on (the
     * engine adapts it to the sampling budget).  May be NULL: fixed. */
    int (*set_budget)(ph_source *s, size_t pages_per_interval);
    /* Runs of run_pages pages, a trap standing for its run, from the next
     * arm() on; 0 = back to the source's own.  May be NULL: it cannot. */
    int (*set_run_pages)(ph_source *s, size_t run_pages);
    /* How many pages of the hot ranges were ever touched (are resident,
     * or watched now), counted up to limit + 1: more than limit when it
     * returns more.  SIZE_MAX when the source cannot tell.  May be NULL:
     * it cannot. */
    size_t (*touched_pages)(ph_source *s, size_t limit);
    /* 1 when the handler runs on another thread (userfaultfd's service
     * thread): the faulting thread's wait and handler_ns overlap only in
     * part, and the handler's time is taken from the program's cores on
     * top of the wait.  0: it runs in the faulting thread (SIGSEGV). */
    int handler_elsewhere;
} ph_source_ops;

struct ph_source {
    const ph_source_ops *ops;
    void *impl;
};

/* ---- the SIGSEGV sampler (sampler.c, sigsegv.c) ---- */

/* Filled once by whoever opens the sampler (api/ from the tunables
 * sample_pages, sample_max_runs, sample_run_pages); the sampler reads no
 * tunable. */
typedef struct ph_sampler_opts {
    /* Pages watched per interval, summed over all ranges (the budget; the
     * engine adjusts it).  0 = every page (full). */
    size_t pages_per_interval;
    /* Most discontiguous protected runs at once (each splits a VMA;
     * vm.max_map_count is 65530 by default). */
    size_t max_runs;
    /* Pages per protected run (contiguous pages watched together). */
    size_t run_pages;
    /* Samples each thread's ring holds between drains (0: 4096). */
    size_t ring_samples;
    /* On a machine that cannot see first touches (ph_os_tracks_touch: the
     * simulator), watch a new range where it is untouched and tell the
     * machine who touches each run first (sampler.c).  0 = no. */
    int first_touch;
    /* How a page is watched: PH_SAMPLER_MPROTECT (PROT_NONE, the SIGSEGV
     * handler; a system call on a watched page fails with EFAULT) or
     * PH_SAMPLER_USERFAULTFD (pages moved out under a userfaultfd
     * registration: user and kernel accesses wait for the service
     * thread; private anonymous 4 KiB memory, Linux 6.8). */
    int mechanism;
} ph_sampler_opts;

enum { PH_SAMPLER_MPROTECT = 0, PH_SAMPLER_USERFAULTFD = 1 };

/* Open the SIGSEGV sampler (opts required: max_runs and run_pages at
 * least 1).  `os` answers current_node() in the handler
 * (the real cpu->node table on Linux, the virtual binding on the
 * simulated machine).  Installs the SIGSEGV handler on first open (once
 * per process, chained to the previous handler).  NULL/errno. */
ph_source *ph_sampler_open(struct ph_os *os, const ph_sampler_opts *opts);
/* Whether PH_SAMPLER_USERFAULTFD can be opened in this process (a
 * descriptor with its features, without the user-only rung: kernel
 * accesses must wait, not fail): 1 or 0.  Opens and closes one. */
int ph_sampler_uffd_usable(void);
/* Give the calling thread an alternate signal stack (idempotent, cheap
 * after the first call per thread).  The engine calls it for every
 * OpenMP thread it meets; a protected page may be on a stack. */
int ph_sampler_thread_init(void);

/* The calling thread runs on OS node os_node (the userfaultfd
 * mechanism's service thread attributes the thread's faults to it).
 * The engine calls it at every OpenMP implicit task; async-signal-safe. */
void ph_sampler_note_node(int os_node);

/* The calling thread runs the program's serial code (on = 1: an OpenMP
 * initial thread begins; 0: it ends).  Outside parallel regions only
 * these threads' traps are serial code's and not kept (sampler.c, the
 * region gate); other threads' are samples.  Normal context. */
void ph_sampler_note_serial_thread(int on);

/* Transparent mode: the program sets (act) or reads (old) its SIGSEGV
 * disposition while pagehome's handler is installed.  The program's
 * handler goes behind ours in the chain instead of replacing it (a
 * runtime such as libgfortran installs one at start-up).  Returns 1 when
 * pagehome's handler is not installed (the caller does a real
 * sigaction), 0 when done. */
struct sigaction;
int ph_sampler_chain_swap(const struct sigaction *act, struct sigaction *old);

/* A query hold: from ph_sampler_query_begin() to ph_sampler_query_end()
 * no sampler in the process watches a page it did not watch before (an
 * arm waits until no hold is held; runs already watched can still be
 * opened).  Taken around a question to the kernel about pages, with
 * ph_sampler_open_pages/open_range between begin and the system call, so
 * that the kernel sees every one of those pages where it is.  Any
 * thread, normal context, never across anything that may wait for an
 * arm() to finish (the memory manager's locks); holds nest on a thread. */
void ph_sampler_query_begin(void);
void ph_sampler_query_end(void);

/* Open the watched pages among pages[0..count) without recording
 * samples, for a system call that must see them as ordinary memory:
 * userfaultfd's watched pages are out of the page table, and on Linux
 * before 6.5 move_pages(2) and get_mempolicy(2) report a PROT_NONE page
 * as absent (-ENOENT / EFAULT) and do not move it.  A run that another
 * thread is opening or arming is waited for: on return every one of the
 * pages is in place.  Any thread, normal context; under a query hold, no
 * arm() watches them again until it ends.  Returns how many of the pages
 * were watched. */
size_t ph_sampler_open_pages(size_t count, void *const *pages);

/* The same for every watched run overlapping [addr, addr+bytes), for
 * the mechanisms whose watched pages are absent from the page table
 * (userfaultfd: a query would report them not faulted).  Returns the
 * runs that were watched. */
size_t ph_sampler_open_range(const void *addr, size_t bytes);

/* A transfer the kernel makes into or out of [addr, addr+bytes) on its
 * own time (an asynchronous read or write) begins: until
 * ph_sampler_busy_end(key), no sampler watches a page of that buffer,
 * and the pages watched there now are opened first, whatever the
 * mechanism -- the kernel's copy would fail with EFAULT on a PROT_NONE
 * page (or a userfaultfd page taking user-mode faults only).  key names
 * the transfer (its control block); beginning a key that is in flight
 * replaces its buffer.  0, or -1/ENOSPC when 256 transfers are in
 * flight already (this one is then not kept from the watch).  Any
 * thread, normal context. */
int ph_sampler_busy_begin(const void *key, const void *addr, size_t bytes);
/* The transfer named key is over: its buffer is watched again from the
 * next arm on.  1 when key was in flight, else 0. */
int ph_sampler_busy_end(const void *key);

/* The program changes the protection of [addr, addr+bytes) to prot
 * (transparent mode's mprotect/pkey_mprotect interposition calls this
 * before the real call): inside hot ranges the program's protection is
 * recorded per page -- such pages are never watched, their faults go to
 * the program, opening a run never widens them -- and watched runs there
 * are opened first, so the program's protection applies to pages in
 * place.  Normal context, any thread. */
void ph_sampler_note_protect(void *addr, size_t bytes, int prot);
/* The program gives [addr, addr+bytes) a memory policy of its own (own =
 * 1: mbind with a mode other than MPOL_DEFAULT) or hands it back (own =
 * 0: MPOL_DEFAULT).  Inside hot ranges such pages are never watched from
 * now on, so the engine gets no samples of them and leaves them where the
 * program's policy puts them; the runs watched there are opened first,
 * so that the kernel finds the pages in place (mbind's MPOL_MF_MOVE).
 * Call it under a query hold (no arm in between).  Normal context, any
 * thread. */
void ph_sampler_note_policy(void *addr, size_t bytes, int own);
/* Which pages of [addr, addr+bytes) carry a policy the program gave them
 * (note_policy above): marked[k] = 1 for the k-th page from addr's page,
 * 0 otherwise (marked holds one byte a page).  Pages outside hot ranges
 * are 0: the sampler does not know them.  The count marked. */
size_t ph_sampler_policy_marks(const void *addr, size_t bytes, unsigned char *marked);

/* The region gate of the mprotect mechanism (see sampler.c): once
 * enabled (transparent mode, when the OpenMP tools interface is there),
 * watched pages are protected only while some thread is inside an
 * outermost parallel region; ph_sampler_gate(1) at a region's begin and
 * (0) at its end, by the thread that encounters it.  The userfaultfd
 * mechanism ignores it. */
void ph_sampler_gate_enable(void);
void ph_sampler_gate(int inside);
/* Around fork(), after the engine's locks are taken: the gate's lock is
 * held across it (prepare, parent) and made afresh in the child. */
void ph_sampler_gate_fork_prepare(void);
void ph_sampler_gate_fork_parent(void);
void ph_sampler_gate_fork_child(void);

/* ---- the synthetic source (synth.c) ---- */

/* How many times threads on each node access page `page` (index within
 * range `range`, in the order ranges were added) during one interval.
 * Fill acc[0..nnodes) and return 0; the model keeps its own notion of
 * iteration and phase (see tests/sim/workloads.h). */
typedef int (*ph_synth_model_fn)(void *model, size_t range, size_t page,
                                 uint32_t *acc, int nnodes);

/* A source that, on drain(), reports for every watched page the model's
 * counts (exact when noise == 0; with noise in (0,1], each access is kept
 * with probability 1-noise, seeded).  Watched pages follow the same
 * budget rule as the sampler (pages_per_interval, 0 = all). */
ph_source *ph_synth_open(const struct ph_topology *topo,
                         ph_synth_model_fn fn, void *model,
                         size_t pages_per_interval, double noise,
                         uint64_t seed);

#endif
