/*
 * cluster.h -- the cluster layer's shared state (internal).
 *
 * THE DESIGN IN ONE PAGE (README "Cluster mode" has the long form).
 *
 * Processes.  One MPI rank per machine (or NUMA domain), an OpenMP team
 * inside each.  After ph_cluster_init, ONE service thread per rank makes
 * every MPI call (MPI_THREAD_SERIALIZED suffices, which Open MPI's TCP
 * transport accepts); application threads never call MPI: they post
 * requests (barrier, lock, release, allocation) and wait on a futex.
 *
 * Memory.  Each rank has a memfd as large as the arena (sparse) and maps
 * it twice: the ARENA view at an address all ranks agreed on (so pointers
 * into shared data are valid everywhere) and the WINDOW view, which is the
 * MPI window (MPI_Win_create) and the only view the service thread and MPI
 * touch.  A home page is the master copy in place: remote diffs land in
 * the home's memfd and are visible in its arena at once; remote gets read
 * it there.  A non-home page of the memfd is this rank's cached copy.
 *
 * Faults (fault.h).  userfaultfd on the arena view in MISSING + MINOR + WP
 * modes: a missing page (a hole in the memfd) or a page in the memfd but
 * not mapped in the arena (minor) or a write to a write-protected page
 * stops the thread in the kernel and queues a message the service thread
 * reads; it fetches, makes the twin or notes the write, and maps the page
 * with UFFDIO_CONTINUE (write-protected or not), which wakes the thread.
 * The kernel waits, so system calls on shared memory (read() into a shared
 * array) work.  Invalidation unmaps the copy from the arena view
 * (MADV_DONTNEED; the page stays in the memfd, so the refetch does not
 * allocate it again): the next access is a minor fault.  Fallback
 * `sigsegv`: the same states with mprotect, the SIGSEGV handler only hands
 * the fault to the service thread and waits on a futex.
 *
 * Coherence (coherence.c).  Home-based lazy release consistency (SCASH,
 * JIAJIA).  Per rank and page: INVALID, RO (mapped write-protected) or RW.
 * A read miss fetches the page (and up to cluster_fetch_pages following
 * invalid pages with the same home) in one MPI_Get into the window view.
 * A write to a cached page makes a twin first; a write to a home page is
 * only noted (no twin).  A write fault on a cached page this rank wrote
 * in its last copy makes the following cached pages it wrote in theirs
 * writable too, with twins (write prediction: one fault per run, none
 * per page; a read miss makes no twin).  Release: dirty pages are
 * diffed against their twins and the changed bytes go home in one
 * MPI_Put per page (hindexed datatype), one flush per home; a lock
 * release or ph_cluster_release leaves them writable (the runs sent
 * copied into the twin, which is the put's source), a barrier write-
 * protects them and drops the twins.  Write notices: at a
 * barrier every rank's written pages (MPI_Allgatherv); at a lock release
 * into the notice log (notice.h).  A cached copy another rank wrote is
 * invalidated.  One passive-target epoch (MPI_Win_lock_all) for the whole
 * run; no per-access lock epochs.
 *
 * Homes (home.h).  Per allocation a placement formula, plus a per-page
 * override table: first-touch claims, and home migration at barriers
 * (migrate.h: a page one rank alone wrote in the interval moves to it,
 * decided alike on every rank from the barrier's notices).
 *
 * Privatisation.  A barrier or an acquire drops only the copies its write
 * notices name, so a page nobody writes any more stays valid everywhere
 * and is never fetched again, and a page only one rank writes stays valid
 * there.  ph_cluster_readonly declares a range read-only (collective, a
 * barrier): its copies also survive an acquire that drops everything (the
 * notice log wrapped) and a selective acquire, and a write to it is a
 * fatal error naming the address.  Pages are classed (migrate.h) when
 * their allocation goes.
 */
#ifndef PH_CLUSTER_CLUSTER_H
#define PH_CLUSTER_CLUSTER_H

#include "pagehome.h"
#include "base/clock.h"
#include "cluster/diff.h"
#include "cluster/home.h"
#include "cluster/migrate.h"
#include "cluster/migrate_cost.h"
#include "cluster/notice.h"
#include "cluster/range.h"

#include <mpi.h>
#include <signal.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define PH_DSM_PAGE ((size_t)4096)
#define PH_DSM_PAGE_SHIFT 12

/* ---- per-page state (one byte per arena page) ---- */
#define PGS_MASK    0x03
#define PGS_INVALID 0x00   /* no copy mapped (home: not yet mapped) */
#define PGS_RO      0x01   /* mapped write-protected */
#define PGS_RW      0x02   /* mapped writable (cached: twin exists) */
#define PGF_IW      0x04   /* in the interval-written list */
#define PGF_NP      0x08   /* in the notice-pending list (lock notices) */
#define PGF_CACHED  0x10   /* in the cached list (a non-home copy) */
#define PGF_HOMERW  0x20   /* in the home-written list */
#define PGF_TMP     0x40   /* scratch (barrier: written by another rank) */
#define PGF_DIRTY   0x80   /* in the dirty list (has a twin) */

/* What every rank knows alike about a page (per arena page; migrate.h),
 * and what this rank did with it. */
typedef struct ph_dsm_pinfo {
    int32_t writers;          /* 0 nobody, rank + 1, -1 several ranks */
    uint16_t write_ivs;       /* intervals in which it was written (sat.) */
    uint8_t flags;            /* PIF_* */
    uint8_t ruse;             /* with PIF_REREAD: the interval of its last
                               * read here (a miss, or the first access of
                               * a refreshed copy), mod 128; bit 7: the
                               * read before was two intervals earlier
                               * (PIF_PERIODIC; coherence.c, REFRESH) */
} ph_dsm_pinfo;             /* 8 bytes */
#define PIF_TOUCHED  0x01     /* this rank accessed it (a fault) */
#define PIF_READONLY 0x02     /* declared by ph_cluster_readonly */
#define PIF_WROTE    0x04     /* this rank wrote its last copy (cached page):
                               * a write fault before it makes it writable */
#define PIF_PREDICTED 0x08    /* made writable with a twin by prediction
                               * (PIF_WROTE), no write seen yet */
#define PIF_FETCHED  0x10     /* fetched in this barrier interval (in the
                               * fetched list: migrate_cost.h's evidence) */
#define PIF_REREAD   0x20     /* read here lately (ruse; in the reread
                               * list): a barrier may refresh it */
#define PIF_REFRESHED 0x40    /* refreshed at a barrier, not accessed since */
#define PIF_PERIODIC 0x80     /* its last two reads were one or two
                               * intervals apart (ruse bit 7: two) */

/* Read-ahead streams followed at once (coherence.c). */
#define PH_DSM_RA_STREAMS 8

/* A growable list of page numbers. */
typedef struct ph_dsm_vec {
    uint64_t *v;
    size_t n, cap;
} ph_dsm_vec;
int ph_dsm_vec_push(ph_dsm_vec *v, uint64_t x);
void ph_dsm_vec_free(ph_dsm_vec *v);

/* One collective allocation. */
typedef struct ph_dsm_alloc {
    size_t start, npages;   /* arena pages */
    size_t bytes;           /* requested */
    uint64_t seq;           /* allocation number (same on every rank) */
    ph_dsm_placement pl;
    long rec;               /* its record in st.recs (stats.c), or -1 */
} ph_dsm_alloc;

/* A fault to resolve (from userfaultfd or the SIGSEGV handler). */
typedef struct ph_dsm_fault {
    size_t page;            /* arena page */
    int write;              /* the access was a write */
    int kind;               /* PH_DSM_FK_* */
    long token;             /* sigsegv: request slot */
    int woken;              /* the resolution already woke the thread */
} ph_dsm_fault;
#define PH_DSM_FK_MISSING 0    /* no page in the memfd */
#define PH_DSM_FK_MINOR   1    /* page in the memfd, not mapped */
#define PH_DSM_FK_WP      2    /* write to a write-protected page */
#define PH_DSM_FK_ACCESS  3    /* sigsegv: protection fault, kind unknown */

typedef struct ph_dsm ph_dsm;

/* The fault mechanism (fault_uffd.c, fault_sigsegv.c). */
typedef struct ph_dsm_fault_ops {
    const char *name;
    /* the arena is mapped PROT_NONE; arm the mechanism on it */
    int (*init)(ph_dsm *c);
    void (*fini)(ph_dsm *c);
    /* descriptor the service thread polls for faults, or -1 */
    int (*fd)(ph_dsm *c);
    /* up to max pending faults, without blocking; -1 on a fatal error */
    int (*read)(ph_dsm *c, ph_dsm_fault *ev, int max);
    /* make pages [page, page+n) of the memfd accessible in the arena:
     * write-protected (rw = 0) or writable; wakes threads waiting on them */
    int (*map)(ph_dsm *c, size_t page, size_t n, int rw);
    /* missing pages (holes of the memfd) from `page` on: fill up to n of
     * them with zeroes and map them (one call; uffd: UFFDIO_COPY),
     * stopping at the first page that is not a hole; returns the pages
     * done (>= 1).  NULL = populate, then map, one page. */
    size_t (*map_zero)(ph_dsm *c, size_t page, size_t n, int rw);
    /* change mapped pages to write-protected (rw = 0) or writable; the
     * pages stay in the memfd, their mapping may be made again (uffd:
     * a run made writable is mapped anew, so that its first stores take
     * no minor fault) */
    int (*protect)(ph_dsm *c, size_t page, size_t n, int rw);
    /* make pages inaccessible before they are punched out (sigsegv) */
    int (*drop)(ph_dsm *c, size_t page, size_t n);
    /* the fault is resolved (or dropped): let the thread retry */
    int (*complete)(ph_dsm *c, ph_dsm_fault *ev);
    /* wake the threads whose faults were resolved while c->wake_defer
     * was set (NULL: the mechanism wakes at once) */
    void (*flush_wakes)(ph_dsm *c);
    /* an allocation [page, page+n) appears (on = 1) or goes (0) */
    int (*enable)(ph_dsm *c, size_t page, size_t n, int on);
} ph_dsm_fault_ops;
extern const ph_dsm_fault_ops ph_dsm_fault_uffd;
extern const ph_dsm_fault_ops ph_dsm_fault_sigsegv;
/* 1 when userfaultfd can serve the arena here (probe on a small memfd);
 * else 0 with the reason in why.  *map_wp: the kernel maps a page
 * write-protected in one step (UFFDIO_CONTINUE_MODE_WP). */
int ph_dsm_uffd_usable(char *why, size_t len, int *map_wp);
/* Mapping `page` read-only let a write of this rank through before the
 * protection was set (kernels without UFFDIO_CONTINUE_MODE_WP): `before`
 * is its content when the mapping began.  Recorded here; the fault's
 * resolution then treats it as written (ph_dsm_handle_fault). */
void ph_dsm_gap_written(ph_dsm *c, size_t page, const unsigned char *before);

/* ---- requests from application threads to the service thread ---- */
enum {
    PH_DSM_REQ_BARRIER = 1,
    PH_DSM_REQ_LOCK,
    PH_DSM_REQ_UNLOCK,
    PH_DSM_REQ_ACQUIRE,
    PH_DSM_REQ_RELEASE,
    PH_DSM_REQ_ALLOC,
    PH_DSM_REQ_FREE,
    PH_DSM_REQ_HOMES,
    PH_DSM_REQ_STATS,
    PH_DSM_REQ_STAT,         /* one counter: addr the name, result the value */
    PH_DSM_REQ_FINALIZE,
    PH_DSM_REQ_READONLY,
    PH_DSM_REQ_GANG          /* gang.c: a gang's synchronisation between ranks */
};

typedef struct ph_dsm_req {
    int op;
    int arg;                 /* lock id */
    const void *addr;        /* range calls, free, homes */
    size_t bytes;            /* range calls, alloc */
    const ph_dsm_placement *pl; /* alloc */
    int *status;             /* homes */
    int fd;                  /* stats */
    void *result;            /* alloc: the address */
    int ret, err;
    char msg[256];
    /* lock state on the service thread */
    int64_t ticket;
    uint64_t next_poll_ns, poll_gap_ns;
    uint64_t t0_ns;
    _Atomic int done;
    struct ph_dsm_req *next;
} ph_dsm_req;

/* ---- statistics (service thread only; see stats.c) ---- */
typedef struct ph_dsm_interval {
    uint64_t read_remote, write_remote, read_home, write_home;
    uint64_t fetched, written, invalidated, ns;
    uint64_t migrated;            /* pages whose home moved (every rank) */
    uint64_t migrated_in;         /* ... to this rank */
    uint64_t fetched_readonly;    /* fetched pages declared read-only */
} ph_dsm_interval;

/* One allocation's homes (stats.c): home strips of consecutive pages per
 * bucket, each bucket the rank that homes its pages (-2 several ranks, -1
 * none claimed), at allocation (first-touch: the first claims) and when it
 * went (free, finalize; agreed by every rank), and the pages this rank was
 * home of then. */
#define PH_DSM_STRIP_MAX 256      /* buckets of a strip */
#define PH_DSM_RECS_MAX 256       /* allocations with a record; later ones counted */
#define PH_DSM_IVS_MAX 4096       /* interval records; beyond, pairs merged */
typedef struct ph_dsm_alloc_rec {
    uint64_t seq, start, npages, bytes;
    uint64_t home_start, home_end;  /* pages homed here then */
    char placement[64];
    int ended;                      /* 0 live, 1 freed, 2 at finalize */
    uint32_t nbuckets;
    uint32_t own_start[PH_DSM_STRIP_MAX];  /* per bucket: pages homed here */
    int32_t strip_start[PH_DSM_STRIP_MAX], strip_end[PH_DSM_STRIP_MAX];
} ph_dsm_alloc_rec;

typedef struct ph_dsm_stats {
    uint64_t fault_read_home, fault_read_remote;
    uint64_t fault_write_home, fault_write_remote;
    uint64_t fault_spurious;
    uint64_t gap_writes;          /* writes caught between map and protect */
    uint64_t pages_fetched, fetch_calls;
    uint64_t pristine_mapped;     /* misses mapped as zeroes, no fetch */
    uint64_t pages_refreshed;     /* copies fetched at barriers (REFRESH) */
    uint64_t refresh_calls;       /* ... by so many gets */
    uint64_t refresh_used;        /* ... accessed before their next drop */
    uint64_t twins;
    uint64_t twins_predicted;     /* pages prediction made writable */
    uint64_t predicted_unwritten; /* ... found unwritten at a barrier */
    uint64_t pages_remapped;      /* made writable by mapping them anew
                                   * (fault_uffd.c), not by a lift */
    uint64_t diffs_sent, diff_runs, diff_bytes, whole_pages_sent;
    uint64_t rma_calls, flushes, collectives;
    uint64_t bytes_sent;          /* payload this rank sent: diffs and pages
                                   * home, atomics' operands, its part of
                                   * collectives and gang messages */
    uint64_t barriers, lock_acquires, lock_releases;
    uint64_t gang_syncs;          /* gang synchronisations between ranks */
    uint64_t gang_barriers;       /* ... of the whole team: barriers (in
                                   * `barriers` too) */
    uint64_t selective_acquires, selective_releases;
    uint64_t invalidations, invalidate_all;
    uint64_t ft_claims_won, ft_claims_lost;
    uint64_t notices_logged, notices_read, notice_log_wraps;
    uint64_t single_writer_pages, multi_writer_pages;
    uint64_t allocs, frees;
    uint64_t home_untracked, home_retracked, home_prefilled;
    uint64_t migrations, migrated_in, migrated_out;
    uint64_t migrations_cost;     /* ... of them by cost (migrate_cost.h) */
    uint64_t migrated_carried;    /* pages that moved here with their data */
    uint64_t migrated_unsent;     /* dirty pages that moved here unsent
                                   * (migrate.h): no diff went home */
    uint64_t cost_weighed;        /* page-intervals the cost rule weighed */
    uint64_t cost_frozen;         /* pages it froze (ping-pong) */
    uint64_t readonly_hints, readonly_pages;
    uint64_t readonly_fetched;    /* fetched pages declared read-only */
    uint64_t pages_class[PH_DSM_NCLASSES];  /* classed at free/finalize */
    uint64_t fetch_ns, fault_ns, barrier_ns, lock_ns, release_ns;
    ph_dsm_interval cur;          /* the interval running */
    ph_dsm_interval *ivs;         /* finished intervals */
    size_t nivs, capivs;
    ph_dsm_interval acc;          /* intervals not yet in a record */
    uint32_t acc_n, ivs_per_rec;  /* ... how many; barriers per record */
    ph_dsm_alloc_rec *recs;       /* allocations' homes (PH_DSM_RECS_MAX) */
    size_t nrecs;
    uint64_t recs_dropped;        /* allocations without a record */
} ph_dsm_stats;

/* ---- the control window's layout (bytes from its base, every rank) ---- */
typedef struct ph_dsm_ctl_layout {
    size_t heartbeat;        /* int64: liveness probes read it */
    size_t locks;            /* 2 x int64 per lock slot: next ticket, serving */
    size_t lock_slots;       /* slots per rank: ceil(locks / nranks) */
    size_t log_head;         /* int64 (used at rank 0) */
    size_t log;              /* log_size x uint64 (used at rank 0) */
    size_t dir;              /* first-touch claim words, dir_slots x int64 */
    size_t dir_slots;        /* ceil(npages / nranks) */
    size_t bytes;
} ph_dsm_ctl_layout;

struct ph_dsm {
    /* identity */
    int rank, nranks, threads;
    char (*hosts)[64];        /* per rank */
    char transport[64];
    char fault_name[32];
    int nhosts;

    /* tunables, read once at init */
    long timeout_ms, fetch_pages, spin_us, poll_us, nlocks;
    long fetch_max_pages;     /* cluster_fetch_max_pages (>= fetch_pages) */
    long home_untrack_after, home_recheck;
    ph_dsm_migrate_cfg mig;
    ph_dsm_cost_cfg cost;     /* on, melt: tunables; net: measured, agreed */
    double cost_fault_ns;     /* running mean: a remote read fault's service
                               * per page fetched (migrate_cost.h) */
    double cost_diff_ns;      /* running mean: a barrier flush per page */
    double cost_twin_ns;      /* running mean: a write fault on a cached
                               * copy (its twin) per page made writable */
    size_t cost_fetched;      /* pages the fault being served fetched */
    /* read-ahead (coherence.c): the streams of misses page after page */
    struct ph_dsm_stream {
        uint64_t next;        /* the page after its last fetched run */
        uint32_t window;      /* pages its next miss fetches */
        uint32_t used;        /* clock of its last miss (LRU) */
    } ra[PH_DSM_RA_STREAMS];
    uint32_t ra_clock;
    size_t cost_twinned;      /* ... made writable with twins */
    double whole_share;
    int write_predict;        /* cluster_write_predict */
    int refresh;              /* cluster_refresh (userfaultfd only) */
    int pristine_on;          /* cluster_pristine */
    int refresh_hit;          /* the fault being resolved is the first use
                               * of a refreshed copy */
    uint64_t log_size;
    char stats_file[512];

    /* arena */
    char *arena;              /* the agreed address */
    char *wview;              /* the window view of the same memfd */
    size_t arena_bytes, npages;
    _Atomic size_t used_bytes;
    int memfd;
    uint8_t *state;           /* per page */
    /* per page, one bit: in an allocation.  The only table read by any
     * thread (syscalls.c, before it touches a buffer for the kernel);
     * written by the service thread at alloc and free */
    _Atomic uint64_t *live;
    /* per page, one bit: PRISTINE (coherence.c), nobody wrote it since
     * its allocation as far as this rank knows; service thread only */
    uint64_t *pristine;
    int32_t *home_ovr;        /* per page: home + 1, 0 = the formula */
    uint32_t *twin_slot;      /* per page: twin index + 1, 0 = none */
    ph_dsm_pinfo *pinfo;      /* per page */
    ph_dsm_evid *evid;        /* per page: the cost rule's evidence (the
                               * same on every rank) */
    uint32_t *moved_at;       /* per page: barrier of its last home move + 1,
                               * 0 = never (the same on every rank) */

    /* allocations */
    ph_dsm_ranges ranges;
    uint64_t alloc_seq;
    long last_alloc;          /* index cache for ph_dsm_alloc_of */

    /* page lists */
    ph_dsm_vec dirty, home_rw, iw, np, cached;
    ph_dsm_vec fetched;          /* fetched this interval (PIF_FETCHED) */
    ph_dsm_vec reread;           /* read here lately (PIF_REREAD) */
    ph_dsm_vec untracked;        /* home pages written every interval, not
                               * write-protected any more */
    uint32_t *home_hist;      /* per page, see coherence.c */
    uint32_t home_wiv;        /* barrier intervals in which this rank wrote
                               * a tracked home page: home_hist's clock */
    uint64_t home_wiv_bar;    /* barriers + 1 when home_wiv last grew */
    uint32_t recheck_next, recheck_period, recheck_at, recheck_wiv;
    size_t recheck_last;
    ph_dsm_seg *last_segs;       /* the merged write notices of the last
                                  * barrier that exchanged any */
    size_t last_nsegs;
    uint32_t last_segs_at;       /* ... its barrier number + 1 */
    unsigned char **twins;    /* twin buffers by index */
    size_t ntwins, captwins;
    uint32_t *free_twins;     /* free indices */
    size_t nfree_twins;

    /* MPI */
    MPI_Comm comm;
    MPI_Win win, cwin;
    void *cbase;              /* control window memory */
    ph_dsm_ctl_layout ctl;
    int mpi_ours;             /* we called MPI_Init_thread */
    int nowin;                /* one rank: no windows, local atomics */
    MPI_Request progress_req; /* never matched: MPI_Test drives progress */
    int progress_buf;
    MPI_Datatype int64_type;
    uint64_t log_seen;        /* notice log position */
    unsigned char *scratch;   /* service thread: a page-sized buffer */
    uint64_t *logbuf;         /* service thread: log entries read */

    /* fault mechanism */
    const ph_dsm_fault_ops *fops;
    int uffd;
    int uffd_user_only;
    /* a read fault's page is mapped write-protected in one step
     * (UFFDIO_CONTINUE_MODE_WP, Linux >= 6.5); 0: mapped, then protected,
     * and a write slipping in between is caught by comparing the page with
     * a snapshot taken before (fault_uffd.c, ph_dsm_gap_written) */
    int uffd_map_wp;
    unsigned char *gap_snap;  /* the snapshot: gap_snap_pages pages */
    size_t gap_snap_pages;
    ph_dsm_vec gap;           /* pairs: a page written in the gap, twin slot */
    /* set by the service thread while it resolves faults in its own loop:
     * the resolutions do not wake the faulting threads, which are woken
     * (flush_wakes) after the role is let go -- a thread woken while the
     * role is held would often find it taken when it posts its next
     * request (a release after a write) and have to hand it over */
    int wake_defer_ok;        /* ... may be deferred (the loop's faults) */
    int wake_defer;           /* ... are, for the fault being resolved: a
                               * write, or a page installed writable (a
                               * read-only mapping wakes at once: a read
                               * is seldom followed by a request) */
    ph_dsm_vec wake_pages;    /* pairs: first page, pages */

    /* service thread */
    pthread_t svc, dog;
    pthread_mutex_t role;     /* held by whoever runs service code */
    /* who holds it (a thread id; 0: nobody), and when it last showed it
     * was alive (taking it, each turn of a wait for a collective): the
     * holder can never have its own fault served -- page protection's
     * handler checks the first, the watchdog the second (service.c) */
    _Atomic int role_tid;
    _Atomic uint64_t role_beat_ns;
    int evfd;
    pthread_mutex_t qlock;
    ph_dsm_req *qhead, *qtail;
    ph_dsm_req *locks_waiting;   /* lock requests polling for their turn */
    _Atomic int queued;       /* requests posted, not yet taken */
    _Atomic int svc_sleeping;
    _Atomic int stop;
    _Atomic int running;
    int in_barrier;

    /* watchdog: what the service thread waits for */
    _Atomic uint64_t op_since_ns;       /* 0 = not waiting on a peer */
    _Atomic int op_peer;
    const char *_Atomic op_what;

    /* local team barrier */
    pthread_mutex_t bar_lock;
    _Atomic unsigned bar_gen;
    _Atomic int bar_count;
    _Atomic int bar_sleepers;
    int bar_ret, bar_err;
    char bar_msg[256];

    /* locks: local serialisation (a futex mutex per lock id) and the
     * thread holding each */
    _Atomic int *lock_word;
    _Atomic long *lock_holder;

    ph_dsm_stats st;
};

extern ph_dsm *ph_dsm_g;            /* the one cluster context (NULL before init) */

/* ---- syscalls.c ---- */
/* The cluster whose arena the wrapped buffer calls (read, fread, ...)
 * prepare for the kernel: set while cluster mode runs with a fault
 * mechanism that leaves the kernel's own accesses failing (sigsegv,
 * userfaultfd-user); NULL otherwise. */
extern ph_dsm *_Atomic ph_dsm_kernel_prep;

/* ---- touch.c ---- */
/* Make the part of [buf, buf+len) that lies in allocated shared memory
 * accessible from user space, as the calling thread's own accesses would:
 * a load of a byte per page, and when `writes` a store of the same byte
 * (the page becomes written, with its twin).  Nothing is touched unless
 * every page of that part is in an allocation, nor anything outside the
 * arena, nor anything when the calling thread holds the service role (its
 * own faults could never be served).  For whoever cannot take a fault on
 * the pages itself: the kernel (syscalls.c), the MPI library's progress
 * run by another thread (mpi_calls.c). */
void ph_dsm_touch(ph_dsm *c, const void *buf, size_t len, int writes);

/* ---- mpi_calls.c ---- */
/* the program's MPI calls on buffers (MPI_Send, MPI_Recv, ...) reach
 * mpi_calls.c's definitions, which touch shared buffers first: 1; 0 when
 * the MPI library's own come first in the program's link */
int ph_dsm_mpi_calls_found(void);

/* fault_sigsegv.c: while its SIGSEGV handler is installed, the program's
 * own SIGSEGV disposition is the one it chains to: swap in act (when not
 * NULL) and return the one before in old (when not NULL); 1 then, 0 when
 * the handler is not installed (the caller asks the C library).  Called
 * by signals.c's sigaction, signal, ... */
int ph_dsm_sigsegv_chained(const struct sigaction *act, struct sigaction *old);
/* signals.c: the C library's sigaction, not the one signals.c exports
 * (the DSM's own handler goes in and out through it). */
int ph_dsm_real_sigaction(int sig, const struct sigaction *act,
                          struct sigaction *old);
/* signals.c: 1 from the moment fault_sigsegv.c installs its handler
 * until it takes it out, so that sigaction, signal, ... ask
 * ph_dsm_sigsegv_chained about SIGSEGV; 0 otherwise (straight to the C
 * library). */
void ph_dsm_signals_route(int on);

/* cluster_api.c: 1 in a child of fork() (a pthread_atfork handler): the
 * child is no rank -- it has no service thread, and userfaultfd's
 * registration is not inherited -- so the arena is made inaccessible
 * there and every access to it is a real segfault (fault_sigsegv.c's
 * handler passes it on), never a wait that cannot end or a page filled
 * behind the DSM's back. */
extern volatile sig_atomic_t ph_dsm_forked;
static inline int ph_dsm_live(const ph_dsm *c, size_t page)
{
    return (int)((atomic_load_explicit(&c->live[page / 64], memory_order_acquire) >>
                  (page % 64)) & 1);
}

/* ---- arena.c ---- */
int ph_dsm_arena_create(ph_dsm *c);   /* memfd, window view, page tables */
int ph_dsm_arena_place(ph_dsm *c);    /* the arena view at an agreed address */
void ph_dsm_live_mark(ph_dsm *c, size_t page, size_t n, int on);
void ph_dsm_pristine_mark(ph_dsm *c, size_t page, size_t n, int on);
static inline int ph_dsm_pristine(const ph_dsm *c, size_t page)
{
    return (int)((c->pristine[page / 64] >> (page % 64)) & 1);
}
void ph_dsm_arena_destroy(ph_dsm *c);

/* ---- tunables.c ---- */
void ph_dsm_sync_tunables(void);

/* ---- util ---- */
/* "rank 3 (host b)" */
const char *ph_dsm_who(const ph_dsm *c, int rank, char *buf, size_t len);
/* Fatal: print "pagehome: cluster rank R (host H): <message>" and abort
 * the job (MPI_Abort).  Never returns. */
_Noreturn void ph_dsm_fatal(ph_dsm *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The futex pair used for every wait of an application thread. */
void ph_dsm_futex_wait(_Atomic int *addr, int val, long spin_us);
void ph_dsm_futex_wake(_Atomic int *addr);

/* ---- transport.c: MPI ---- */
/* Check an MPI return code on the service thread: fatal with a message
 * naming the peer when it failed. */
void ph_dsm_mpi_check(ph_dsm *c, int rc, const char *call, int peer);
/* Mark the start/end of a wait on `peer` (-1 = a collective) for the
 * watchdog. */
void ph_dsm_op_begin(ph_dsm *c, const char *what, int peer);
void ph_dsm_op_end(ph_dsm *c);
int ph_dsm_transport_init(ph_dsm *c, int *argc, char ***argv);
int ph_dsm_windows_create(ph_dsm *c);
/* wait for a request (MPI_Test, yielding): no MPI blocking wait */
void ph_dsm_wait_req(ph_dsm *c, MPI_Request *q, const char *what, int peer);
void ph_dsm_windows_free(ph_dsm *c);
int ph_dsm_watchdog_start(ph_dsm *c);
void ph_dsm_watchdog_stop(ph_dsm *c);
/* Wait for a non-blocking collective, serving faults meanwhile and
 * probing the liveness of the other ranks when it takes long. */
void ph_dsm_wait_collective(ph_dsm *c, MPI_Request *req, const char *what);
/* The same for several requests at once (not counted as a collective). */
void ph_dsm_wait_all(ph_dsm *c, MPI_Request *req, int nreq, const char *what);
/* Every rank's `bytes` from `mine` into all[rank * bytes], by
 * point-to-point messages waited for as a collective (transport.c). */
void ph_dsm_allgather_small(ph_dsm *c, const void *mine, void *all,
                            size_t bytes, const char *what);
/* Remote atomics on the control window (blocking, watched). */
int64_t ph_dsm_fop(ph_dsm *c, int rank, size_t disp, int64_t value, MPI_Op op,
                const char *what);
void ph_dsm_describe_transport(ph_dsm *c);
/* Element-wise atomic put (MPI_Accumulate REPLACE) and get
 * (MPI_Get_accumulate NO_OP) of uint64 on the control window, and its
 * flush; with one rank they are the CPU's atomics. */
void ph_dsm_put_atomic(ph_dsm *c, int rank, size_t disp, const uint64_t *buf,
                    int count, const char *what);
void ph_dsm_get_atomic(ph_dsm *c, int rank, size_t disp, uint64_t *buf, int count,
                    const char *what);
void ph_dsm_ctl_flush(ph_dsm *c, int rank, const char *what);
/* MPI_Win_sync of both windows (not with one rank) */
void ph_dsm_win_sync(ph_dsm *c);

/* ---- coherence.c: the page state machine (service thread) ---- */
long ph_dsm_alloc_of(ph_dsm *c, size_t page);           /* index or -1 */
/* home of a page: rank, or PH_DSM_HOME_UNCLAIMED, or -1 not shared */
int ph_dsm_home_known(ph_dsm *c, size_t page);
/* home of a page, claiming it when first-touch and unclaimed */
int ph_dsm_home_claim(ph_dsm *c, size_t page);
void ph_dsm_handle_fault(ph_dsm *c, ph_dsm_fault *ev);
/* flush the diffs of the dirty pages (all, or those in [p0, p1)) to their
 * homes; whole pages for single writers when `single` marks them (PGF_TMP
 * clear = single writer is unknown: runs) */
void ph_dsm_flush_dirty(ph_dsm *c, size_t p0, size_t p1, int barrier_mode);
/* a barrier, before its notices: the pages write prediction made
 * writable and nobody wrote since a release found it are checked
 * (write-protected, compared with their twins): written ones are noted as
 * written, the others become read-only copies without a twin */
void ph_dsm_confirm_predicted(ph_dsm *c);
/* the home pages written in the interval (`interval` = barriers so far):
 * write-protect them again, or leave those written at every interval
 * untracked (see coherence.c) */
void ph_dsm_home_barrier(ph_dsm *c, uint32_t interval);
/* a barrier's merged notices, before ph_dsm_home_barrier: a home page
 * another rank wrote in the interval starts its run of write intervals
 * afresh (untracked: tracked again) -- it is not a page only its home
 * writes, and an untracked page could never migrate */
void ph_dsm_home_foreign(ph_dsm *c, const ph_dsm_seg *segs, size_t nsegs);
/* a lock release: every written or untracked home page is write-protected
 * again and (untracked ones) noted as written */
void ph_dsm_home_release(ph_dsm *c, uint32_t interval);
/* drop this rank's copy of a cached page (flushing its diff first) */
void ph_dsm_invalidate(ph_dsm *c, size_t page);
/* the same for a list (any order; pages not cached are skipped) */
void ph_dsm_invalidate_pages(ph_dsm *c, uint64_t *pages, size_t n);
/* A barrier's last step: fetch at once the copies this rank has not got
 * (dropped now or before) and will read in the interval that begins, as
 * its reads of them in the last intervals predict (coherence.c, REFRESH).
 * Every diff has landed and every home move is done; the barrier called
 * ph_dsm_refresh_wanted at its start.  Nothing when cluster_refresh is
 * off or the faults are not caught by userfaultfd. */
void ph_dsm_refresh(ph_dsm *c);
/* 1 when this rank may refresh copies at this barrier: the mechanism is
 * on and a page read here at every interval or every other one is due to
 * be read in the next.  Drops the pages not read lately from the list. */
int ph_dsm_refresh_wanted(ph_dsm *c);
/* This rank read `page` (a read miss, or the first access of a refreshed
 * copy): what the refresh predicts from. */
void ph_dsm_note_read(ph_dsm *c, size_t page);
void ph_dsm_invalidate_all(ph_dsm *c);
/* selective acquire of [p0, p1) */
void ph_dsm_invalidate_range(ph_dsm *c, size_t p0, size_t p1);
/* The barrier's moves (migrate.h), before its flush: the dirty pages
 * whose home moves here unsent (JIAJIA's rule, their first move) become
 * clean and write-protected without a diff -- their copy here is the
 * master copy once the home moves (migrated_unsent). */
void ph_dsm_migrate_settle(ph_dsm *c, const ph_dsm_move *mv, size_t n);
/* The barrier's moves, after its invalidations: the home map changes
 * alike on every rank; the new home's copy becomes its master copy; the
 * old home's copy goes when the page moved unsent (its writer kept the
 * writes, above), else it stays as a cached copy (every diff landed). */
void ph_dsm_migrate_apply(ph_dsm *c, const ph_dsm_move *mv, size_t n);
/* The network cost model (netcost.c); collective, before the service
 * thread starts.  All zero alone or without windows. */
void ph_dsm_netcost_measure(ph_dsm *c, ph_dsm_netcost *out);
/* A running mean of the cost rule's measurements (weight 1/16 per
 * sample; the first sample is the mean). */
static inline void ph_dsm_cost_mean(double *mean, double sample_ns)
{
    *mean = *mean > 0 ? *mean + (sample_ns - *mean) / 16 : sample_ns;
}
/* A barrier's merged notices into the per-page writer history. */
void ph_dsm_writers_note(ph_dsm *c, const ph_dsm_seg *segs, size_t n);
/* After the barrier of ph_cluster_readonly: mark [p0, p1) read-only and
 * write-protect what is still writable here. */
void ph_dsm_readonly_mark(ph_dsm *c, size_t p0, size_t p1);
/* a range of pages leaves the arena (free): forget everything about it */
void ph_dsm_forget_range(ph_dsm *c, size_t p0, size_t p1);
int ph_dsm_coherence_init(ph_dsm *c);
void ph_dsm_coherence_fini(ph_dsm *c);

/* ---- sync.c (service thread side) ---- */
void ph_dsm_do_barrier(ph_dsm *c, ph_dsm_req *r);
void ph_dsm_do_lock(ph_dsm *c, ph_dsm_req *r);          /* takes a ticket */
int ph_dsm_poll_lock(ph_dsm *c, ph_dsm_req *r);         /* 1 when acquired */
void ph_dsm_do_unlock(ph_dsm *c, ph_dsm_req *r);
void ph_dsm_do_acquire(ph_dsm *c, ph_dsm_req *r);
void ph_dsm_do_release(ph_dsm *c, ph_dsm_req *r);
void ph_dsm_do_alloc(ph_dsm *c, ph_dsm_req *r);
void ph_dsm_do_free(ph_dsm *c, ph_dsm_req *r);
void ph_dsm_do_homes(ph_dsm *c, ph_dsm_req *r);
void ph_dsm_do_readonly(ph_dsm *c, ph_dsm_req *r);
/* read the notice log (after a lock acquire) */
void ph_dsm_read_notices(ph_dsm *c);
/* a release as at a lock release: every dirty page's diff home, home
 * pages write-protected again, this rank's write notices into the log */
void ph_dsm_release_all(ph_dsm *c);
/* a barrier for a gang synchronisation of the whole team (every thread of
 * every rank is in it), after the gang's members agreed on the call */
void ph_dsm_gang_barrier(ph_dsm *c, ph_dsm_req *r);

/* ---- gang.c (service thread side) ---- */
/* r->addr: the ph_gang_sync of a gang with threads on several ranks */
void ph_dsm_do_gang(ph_dsm *c, ph_dsm_req *r);

/* ---- service.c ---- */
void ph_dsm_progress_start(ph_dsm *c);
void ph_dsm_progress_stop(ph_dsm *c);
void ph_dsm_progress(ph_dsm *c);      /* drive MPI progress once */
int ph_dsm_service_start(ph_dsm *c);
void ph_dsm_service_join(ph_dsm *c);
/* application side: post r and wait for it; returns r->ret (errno and
 * the message set from r on failure) */
int ph_dsm_call(ph_dsm *c, ph_dsm_req *r);
/* service side: serve pending faults (without taking new requests) */
int ph_dsm_serve_faults(ph_dsm *c);
/* wait until `ns` nanoseconds from now or until a fault (or, on the
 * service thread, a posted request) arrives; 0 when the time ran out with
 * nothing to do */
int ph_dsm_service_idle(ph_dsm *c, uint64_t ns);
/* the calling thread holds the service role */
int ph_dsm_role_mine(ph_dsm *c);
/* the role holder is alive: a turn of a long wait (for a collective) */
static inline void ph_dsm_role_beat(ph_dsm *c, uint64_t now_ns)
{
    atomic_store_explicit(&c->role_beat_ns, now_ns, memory_order_relaxed);
}
void ph_dsm_req_fail(ph_dsm_req *r, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- stats.c ---- */
void ph_dsm_stats_interval_end(ph_dsm *c);
/* an allocation appears: its record, the start strip from the formula */
void ph_dsm_stats_alloc(ph_dsm *c, ph_dsm_alloc *a);
/* this rank won the first-touch claim of `page` */
void ph_dsm_stats_claim(ph_dsm *c, size_t page);
/* an allocation goes (free, finalize = `how` 1, 2): the strips agreed by
 * every rank (collective, whether or not it has a record) */
void ph_dsm_stats_alloc_end(ph_dsm *c, ph_dsm_alloc *a, int how);
int ph_dsm_stats_json(ph_dsm *c, int fd);
/* The counter `name` (its key in the JSON's faults, traffic, sync,
 * migration and page_classes objects): 0, or -1 with errno ENOENT. */
int ph_dsm_stat(const ph_dsm *c, const char *name, uint64_t *value);
void ph_dsm_stats_free(ph_dsm *c);

#endif
