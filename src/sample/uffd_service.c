/*
 * uffd_service.c -- the userfaultfd mechanism of the sampler: watching a
 * page without ever making the kernel's own accesses to it fail.
 *
 * WHY.  The mprotect mechanism (PROT_NONE + the SIGSEGV handler) catches
 * every user access, but a system call that copies to or from a
 * PROT_NONE page fails with EFAULT: glibc's internal read/write behind
 * fread/fwrite, pread64, the _chk variants, getrandom, stat, raw
 * syscall(2)... no list of wrappers is ever complete.  With userfaultfd
 * the kernel *waits* on such a fault until another thread resolves it,
 * for user and kernel accesses alike.
 *
 * HOW A RUN IS WATCHED (private anonymous memory, 4 KiB pages).
 *   arm     the run's span is registered for missing-page faults and its
 *           pages are moved out to the range's *stash* (a private
 *           anonymous mapping of the same size) with UFFDIO_MOVE: the
 *           page-table entries move, the physical pages (and so their
 *           NUMA nodes) stay, nothing is copied.  The run now has no
 *           pages: the first access of any thread, user or kernel, read
 *           or write, is a missing fault.
 *   fault   the service thread (one per sampler) reads the fault with
 *           the faulting thread's id (UFFD_FEATURE_THREAD_ID), records
 *           the sample (page, that thread's node), moves the run's pages
 *           back (the same physical pages) and unregisters the run, which
 *           wakes every thread waiting on it; pages that were never
 *           touched then fault normally, in the toucher's context, so
 *           first touch still places them.
 *   lift    the same move back and unregister, without a sample.
 * Each move is told to the machine (ph_os_note_moved; the simulator,
 * which cannot see the physical page, carries its home along): on the
 * way out after the move, on the way back before it (os.h says why).
 * The run states and the protocol are the SIGSEGV handler's
 * (sigsegv.h): the service thread plays the handler.  A fault that meets
 * a run being armed or lifted is answered by a wake: the thread retries
 * and either finds its page or faults again once the run is settled.
 *
 * THE FAULTING THREAD'S NODE.  The service thread is not the faulting
 * thread, so current_node() cannot be asked.  Threads note their node
 * themselves (ph_sampler_note_node: at every OpenMP implicit task, and
 * for threads created through pthread_create in transparent mode); a
 * thread never noted is looked up in /proc/self/task/TID/stat (the CPU
 * it last ran on -> the topology's node).  On the simulated machine the
 * note carries the simulator's binding.
 *
 * THE STASH is registered (UFFDIO_MOVE's destination must be) with a
 * second descriptor of its own, opened with UFFD_FEATURE_SIGBUS: its
 * empty slots are nobody's pages, and a fault there must not wait for a
 * service that would only wake it to fault again.  The kernel does fault
 * there: mlockall(MCL_CURRENT) populates every mapping, /proc/PID/mem
 * and process_vm_readv read any address.  With SIGBUS they skip the slot.
 * The stash is created PROT_NONE and opened after registering, so that
 * an earlier mlockall(MCL_FUTURE) does not fill it with zero pages.
 *
 * WHAT THE KERNEL REFUSES.  UFFDIO_MOVE fails with EBUSY on a page
 * shared copy-on-write with a fork() child or pinned by I/O in flight,
 * and with EINVAL when only one of the run and its stash is mlock(2)ed
 * (the program locked or unlocked its array alone): such a page is left
 * in place and not watched this interval.  One in the stash already
 * comes back as a copy (UFFDIO_COPY).
 *
 * fork().  A child's copies of registered ranges are not registered
 * (no UFFD_FEATURE_EVENT_FORK), so a page moved out at fork time would
 * read as zeros in the child.  A pthread_atfork handler therefore lifts
 * every armed run before fork() (arming waits meanwhile); the child has
 * no service thread, and its sampler arms nothing.  The inherited
 * descriptor still names the parent's memory (its ioctls act on the
 * parent's address space): the child never calls it.  Should a run be on its way back at the fork all
 * the same, the child puts its copies back with mremap(2)
 * (restore_in_child).  A raw clone(2) without CLONE_VM bypasses the
 * handler: documented limit.
 *
 * COST (bench/README.md): a sample is a fault round trip through another
 * thread -- two context switches, a move and an unregister -- several
 * times the SIGSEGV path; the engine's sampling budget adapts the pages
 * watched per interval to it.
 */
#include "sample/sigsegv.h"
#include "base/own_fd.h"

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "base/thread.h"
#include "os/uffd.h"
#include "topo/topo.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PG ((uintptr_t)4096)
#define MOVE_TRIES 8
#ifndef MADV_DONTNEED_LOCKED
#define MADV_DONTNEED_LOCKED 24 /* Linux 5.18 */
#endif

typedef struct ph_uffd_sampler {
    ph_uffd u;       /* the runs: missing faults are samples */
    ph_uffd stash_u; /* the stashes: faults fail (PH_UFFD_SIGBUS) */
    pthread_t thread;
    atomic_int stop;
    int started;
    atomic_uint_fast64_t faults, wakes, busy_pages, unwatchable;
} ph_uffd_sampler;

/* Arming vs fork(): arm() counts itself in `arming` and gives up when a
 * fork is under way; the fork handler waits for `arming` to drain.  No
 * lock is held across fork(), so the handler cannot deadlock with
 * another prepare handler (transparent mode's allocation gate) whose
 * readers are inside the sampler. */
static atomic_int forking;
static atomic_long arming;
static atomic_int in_child; /* this process is a fork() child: no service */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* ---- thread -> node ---------------------------------------------------------- */

#define TID_SLOTS 4096
typedef struct tid_node {
    atomic_int tid;
    atomic_int os_node;
} tid_node;
static tid_node tid_table[TID_SLOTS];
/* Bumped when the table starts over; a thread's last note is valid
 * while it matches.  OpenMP threads note their node at every implicit
 * task: one that has not moved changes nothing and makes no system
 * call.  (A fork() child keeps its parent thread's note under its new
 * id; the child has no service thread to ask.) */
static atomic_uint tid_table_gen = 1;
static _Thread_local unsigned tl_note_gen __attribute__((tls_model("initial-exec")));
static _Thread_local int tl_note_node __attribute__((tls_model("initial-exec")));

static int note(int tid, int os_node)
{
    size_t h = ((size_t)tid * 2654435761u) % TID_SLOTS;
    for (size_t k = 0; k < TID_SLOTS; k++) {
        tid_node *e = &tid_table[(h + k) % TID_SLOTS];
        int cur = atomic_load_explicit(&e->tid, memory_order_acquire);
        if (cur == tid ||
            (cur == 0 && atomic_compare_exchange_strong(&e->tid, &cur, tid)) ||
            cur == tid) {
            atomic_store_explicit(&e->os_node, os_node, memory_order_release);
            return 0;
        }
    }
    return -1;
}

void ph_sampler_note_node(int os_node)
{
    unsigned gen = atomic_load_explicit(&tid_table_gen, memory_order_acquire);
    if (tl_note_gen == gen && tl_note_node == os_node)
        return;
    int tid = (int)syscall(SYS_gettid);
    if (note(tid, os_node) != 0) {
        /* full: the oldest threads are long gone; start over */
        memset(tid_table, 0, sizeof tid_table);
        gen = atomic_fetch_add(&tid_table_gen, 1) + 1;
        (void)note(tid, os_node);
    }
    tl_note_gen = gen;
    tl_note_node = os_node;
}

/* The CPU tid last ran on, from /proc (field 39 of stat), or -1. */
static int proc_cpu(int tid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
    int fd = ph_own_fd_open(path, O_RDONLY, 0);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    ph_own_fd_close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); /* the command may hold spaces */
    if (!p)
        return -1;
    int field = 2;
    for (; *p && field < 39; p++)
        if (*p == ' ')
            field++;
    return field == 39 ? atoi(p) : -1;
}

static int node_of(const ph_sig_inst *in, int tid)
{
    if (tid > 0) {
        size_t h = ((size_t)tid * 2654435761u) % TID_SLOTS;
        for (size_t k = 0; k < TID_SLOTS; k++) {
            tid_node *e = &tid_table[(h + k) % TID_SLOTS];
            int cur = atomic_load_explicit(&e->tid, memory_order_acquire);
            if (cur == 0)
                break;
            if (cur == tid) {
                int id = atomic_load_explicit(&e->os_node, memory_order_acquire);
                return id >= 0 && id < PH_SIG_NODE_IDS ? in->node_index[id]
                                                       : PH_SIG_NODE_UNKNOWN;
            }
        }
        int cpu = proc_cpu(tid);
        int idx = cpu >= 0 ? ph_topo_cpu_index(in->os->topo, cpu) : -1;
        if (idx >= 0)
            return idx;
    }
    return PH_SIG_NODE_UNKNOWN;
}

/* ---- watching and opening ------------------------------------------------------ */

static ph_uffd_sampler *of_slot(size_t slot)
{
    size_t i = (size_t)atomic_load(&ph_sig_slots[slot].inst);
    return ph_sig_insts[i].uffd;
}

static ph_os *os_of(size_t slot)
{
    size_t i = (size_t)atomic_load(&ph_sig_slots[slot].inst);
    return ph_sig_insts[i].os;
}

static uintptr_t stash_of(size_t slot, uintptr_t a)
{
    ph_sig_slot *s = &ph_sig_slots[slot];
    return atomic_load(&s->stash) + (a - atomic_load(&s->start));
}

/* Free a stash slot whose page is stale or copied back.  The stash is
 * pagehome's own: under mlockall it is locked too, and plain
 * MADV_DONTNEED refuses locked memory. */
static void discard_stashed(uintptr_t p)
{
    if (madvise((void *)p, PG, MADV_DONTNEED_LOCKED) != 0)
        (void)madvise((void *)p, PG, MADV_DONTNEED);
}

/* Move [src, src+len) to dst page by page where the kernel refuses a
 * page (EBUSY: shared or pinned; EEXIST: dst populated): such pages stay
 * where they are.  The machine is told of every move (os, NULL: not),
 * after it when `out` (to the stash), before it otherwise.  Returns the
 * pages that did not move. */
static size_t move_span(ph_uffd_sampler *us, ph_os *os, uintptr_t dst, uintptr_t src,
                        size_t len, int dontwake, int out)
{
    size_t off = 0, left = 0;
    int tries = 0;
    while (off < len) {
        if (!out)
            ph_os_note_moved(os, (void *)(dst + off), (const void *)(src + off), len - off);
        /* issued on the destination's descriptor */
        long m = ph_uffd_move(out ? &us->stash_u : &us->u, (void *)(dst + off),
                              (const void *)(src + off), len - off, 1, dontwake);
        if (m > 0 && out)
            ph_os_note_moved(os, (void *)(dst + off), (const void *)(src + off), (size_t)m);
        else if (!out && (size_t)(m > 0 ? m : 0) < len - off)
            /* what did not arrive is still in the stash */
            ph_os_note_moved(os, (void *)(src + off + (size_t)(m > 0 ? m : 0)),
                             (const void *)(dst + off + (size_t)(m > 0 ? m : 0)),
                             len - off - (size_t)(m > 0 ? m : 0));
        off += m > 0 ? (size_t)m : 0;
        if (off >= len)
            break;
        if (errno == EAGAIN && ++tries < MOVE_TRIES) {
            sched_yield();
            continue;
        }
        tries = 0;
        left++;
        off += PG; /* this page stays */
    }
    return left;
}

int ph_uffd_sampler_protect(size_t slot, uintptr_t a, size_t len)
{
    ph_uffd_sampler *us = of_slot(slot);
    if (!us || atomic_load(&in_child)) {
        errno = ESRCH;
        return -1;
    }
    if (!atomic_load(&ph_sig_slots[slot].stash))
        return 0; /* not watchable by this mechanism */
    if (ph_uffd_register_missing(&us->u, (void *)a, len) != 0)
        return -1;
    size_t busy = move_span(us, os_of(slot), stash_of(slot, a), a, len, 1, 1);
    if (busy)
        atomic_fetch_add(&us->busy_pages, busy);
    return 0;
}

/* In a fork() child: the pages of [a, a+len) that the fork found in the
 * stash (absent from the run, present or swapped out in the child's copy
 * of the stash: /proc/self/pagemap) are moved back by mremap(2), which
 * moves the page-table entry as UFFDIO_MOVE would, and given the
 * program's own protection where it set one.  The child's stash keeps a
 * hole there; it is never armed again. */
static void restore_in_child(size_t slot, uintptr_t a, size_t len)
{
    ph_sig_slot *s = &ph_sig_slots[slot];
    uintptr_t st = stash_of(slot, a);
    int fd = ph_own_fd_open("/proc/self/pagemap", O_RDONLY, 0);
    if (fd < 0)
        return;
    const uint64_t has = (uint64_t)3 << 62; /* present | swapped */
    for (uintptr_t q = 0; q < len; q += PG) {
        uint64_t run_e = 0, st_e = 0;
        if (pread(fd, &run_e, sizeof run_e, (off_t)((a + q) / PG * sizeof run_e)) !=
                (ssize_t)sizeof run_e ||
            pread(fd, &st_e, sizeof st_e, (off_t)((st + q) / PG * sizeof st_e)) !=
                (ssize_t)sizeof st_e)
            break;
        if ((run_e & has) || !(st_e & has))
            continue;
        ph_os_note_moved(os_of(slot), (void *)(a + q), (const void *)(st + q), PG);
        if (mremap((void *)(st + q), PG, PG, MREMAP_MAYMOVE | MREMAP_FIXED,
                   (void *)(a + q)) == MAP_FAILED)
            continue;
        atomic_uchar *pp = atomic_load(&s->prog_prot);
        unsigned char v = pp ? atomic_load(&pp[(a + q - atomic_load(&s->start)) / PG]) : 0;
        if (v & PH_SIG_PROT_SET)
            mprotect((void *)(a + q), PG, (int)(v & 7u));
    }
    ph_own_fd_close(fd);
}

int ph_uffd_sampler_open(size_t slot, uintptr_t a, size_t len)
{
    ph_uffd_sampler *us = of_slot(slot);
    if (!us || !atomic_load(&ph_sig_slots[slot].stash))
        return 0;
    if (atomic_load(&in_child)) {
        restore_in_child(slot, a, len);
        return 0;
    }
    uintptr_t st = stash_of(slot, a);
    ph_os *os = os_of(slot);
    if (move_span(us, os, a, st, len, 0, 0))
        for (uintptr_t q = 0; q < len; q += PG) {
            /* page by page: a destination populated meanwhile (the
             * program mapped over it) makes the stashed page stale; a
             * destination whose protection the program changed while
             * the page was out (EINVAL: UFFDIO_MOVE wants equal
             * protections) takes it back under read-write for a moment */
            ph_os_note_moved(os, (void *)(a + q), (const void *)(st + q), PG);
            if (ph_uffd_move(&us->u, (void *)(a + q), (void *)(st + q), PG, 1, 0) == (long)PG)
                continue;
            int e = errno;
            if (e == EINVAL &&
                mprotect((void *)(a + q), PG, PROT_READ | PROT_WRITE) == 0) {
                /* read-write for a moment (UFFDIO_MOVE wants equal
                 * protections); still refused -- the run and the stash
                 * mlock(2)ed apart -- it comes back as a copy */
                if (ph_uffd_move(&us->u, (void *)(a + q), (void *)(st + q), PG, 1, 0) !=
                        (long)PG &&
                    (ph_uffd_copy(&us->u, (void *)(a + q), (void *)(st + q), PG, 1) == 0 ||
                     errno == EEXIST))
                    discard_stashed(st + q);
                e = 0;
                atomic_uchar *pp = atomic_load(&ph_sig_slots[slot].prog_prot);
                uintptr_t s0 = atomic_load(&ph_sig_slots[slot].start);
                unsigned char v = pp ? atomic_load(&pp[(a + q - s0) / PG]) : 0;
                mprotect((void *)(a + q), PG,
                         (v & PH_SIG_PROT_SET) ? (int)(v & 7u) : PROT_READ | PROT_WRITE);
            }
            if (e == EEXIST) {
                discard_stashed(st + q);
            } else if (e == EBUSY || e == EAGAIN) {
                /* a stashed page the kernel will not move any more: it
                 * went through a fork() past the handler (no longer
                 * anon-exclusive) or is pinned.  Its data comes back as
                 * a copy (on the service thread's node). */
                if (ph_uffd_copy(&us->u, (void *)(a + q), (void *)(st + q), PG, 1) == 0 ||
                    errno == EEXIST) /* EEXIST: populated meanwhile, as above */
                    discard_stashed(st + q);
            }
        }
    /* unregistering wakes every thread waiting in the span */
    (void)ph_uffd_unregister(&us->u, (void *)a, len);
    ph_uffd_wake(&us->u, (void *)a, len);
    return 0;
}

int ph_uffd_sampler_add(size_t slot)
{
    ph_sig_slot *s = &ph_sig_slots[slot];
    ph_uffd_sampler *us = of_slot(slot);
    size_t len = atomic_load(&s->end) - atomic_load(&s->start);
    if (atomic_load(&in_child)) {
        /* the inherited userfaultfd acts on the parent's memory: never
         * watched here */
        atomic_fetch_add(&us->unwatchable, 1);
        return 0;
    }
    /* PROT_NONE until registered: under mlockall(MCL_FUTURE) a new
     * readable mapping is populated at once (with zero pages that every
     * move into it would then meet); made writable once registered, the
     * population faults fail (SIGBUS descriptor) and the kernel skips them */
    void *st = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (st == MAP_FAILED)
        return ph_fail(errno, "sampler: no address space for a stash of %zu bytes", len);
    madvise(st, len, MADV_NOHUGEPAGE);
    if (ph_uffd_register_missing(&us->stash_u, st, len) != 0 ||
        mprotect(st, len, PROT_READ | PROT_WRITE) != 0) {
        int e = errno;
        munmap(st, len);
        errno = e;
        return ph_fail(e, "sampler: cannot set up a stash of %zu bytes: %s", len,
                       strerror(e));
    }
    /* Memory userfaultfd cannot move (shared, file-backed, hugetlbfs) is
     * accepted but never watched: the engine still places and moves it. */
    void *a = (void *)atomic_load(&s->start);
    if (ph_uffd_register_missing(&us->u, a, len) != 0) {
        munmap(st, len);
        atomic_fetch_add(&us->unwatchable, 1);
        return 0;
    }
    ph_uffd_unregister(&us->u, a, len);
    atomic_store(&s->stash, (uintptr_t)st);
    return 0;
}

void ph_uffd_sampler_remove(size_t slot)
{
    ph_sig_slot *s = &ph_sig_slots[slot];
    uintptr_t st = atomic_exchange(&s->stash, 0);
    if (!st)
        return;
    munmap((void *)st, atomic_load(&s->end) - atomic_load(&s->start));
}

/* ---- the service thread ------------------------------------------------------- */

static void *service(void *arg)
{
    size_t i = (size_t)(uintptr_t)arg;
    ph_sig_inst *in = &ph_sig_insts[i];
    ph_uffd_sampler *us = in->uffd;
    ph_uffd_fault f[32];
    while (!atomic_load_explicit(&us->stop, memory_order_acquire)) {
        int n = ph_uffd_read(&us->u, f, 32, 200);
        if (n < 0) {
            if (errno == EBADF) {
                /* closed behind pagehome's back: a raw close system
                 * call, which src/preload/fds.c cannot see */
                ph_warn("sampler: the userfaultfd descriptor was closed by the "
                        "program; pages watched at that moment may have lost "
                        "their contents");
                break;
            }
            continue;
        }
        uint64_t t0 = ph_now_ns();
        for (int k = 0; k < n; k++) {
            size_t slot;
            uintptr_t page = f[k].addr & ~(PG - 1);
            atomic_fetch_add_explicit(&us->faults, 1, memory_order_relaxed);
            (void)ph_sig_handle(page, node_of(in, f[k].tid), f[k].tid, &slot);
            /* Whatever the run's state, the thread must not wait for
             * good: a wake makes it retry (and fault again while the
             * run is still being armed). */
            ph_uffd_wake(&us->u, (void *)page, PG);
        }
        /* the service thread plays the handler: its time is the
         * handler's (the faulting threads wait for it) */
        atomic_fetch_add_explicit(&in->handler_ns, ph_now_ns() - t0,
                                  memory_order_relaxed);
    }
    return NULL;
}

static void at_prepare(void)
{
    atomic_store(&forking, 1);
    while (atomic_load(&arming) != 0)
        sched_yield();
    /* Open every armed run of every userfaultfd sampler: the child must
     * see every page.  Like a fault without a sample: enter the slot,
     * claim the run (FIRING: lift() waits for it), move it back. */
    size_t n = atomic_load(&ph_sig_slot_hiwater);
    for (size_t s = 0; s < n; s++) {
        ph_sig_slot *sl = &ph_sig_slots[s];
        uint64_t w = atomic_load(&sl->word);
        if (PH_SIG_STATE(w) != PH_SIG_ACTIVE)
            continue;
        atomic_fetch_add(&sl->inflight, 1);
        if (atomic_load(&sl->word) == w && atomic_load(&sl->stash)) {
            atomic_uchar *runs = atomic_load(&sl->runs);
            size_t rp = atomic_load(&sl->run_pages);
            uintptr_t start = atomic_load(&sl->start), end = atomic_load(&sl->end);
            size_t nruns = (size_t)((end - start) / PG + rp - 1) / rp;
            for (size_t r = 0; runs && r < nruns; r++) {
                unsigned char st = PH_RUN_ARMED;
                if (!atomic_compare_exchange_strong(&runs[r], &st, PH_RUN_FIRING)) {
                    /* another thread (the service, an API query) is
                     * opening it: it must be open before fork */
                    while (atomic_load(&runs[r]) == PH_RUN_FIRING)
                        sched_yield();
                    continue;
                }
                uintptr_t a = start + r * rp * PG;
                uintptr_t b = a + rp * PG < end ? a + rp * PG : end;
                ph_uffd_sampler_open(s, a, b - a);
                atomic_store(&runs[r], PH_RUN_IDLE);
            }
        }
        atomic_fetch_sub(&sl->inflight, 1);
    }
}

static void at_parent(void)
{
    atomic_store(&forking, 0);
}

void ph_uffd_sampler_fork_child(void)
{
    atomic_store(&in_child, 1);
}

static void at_child(void)
{
    atomic_store(&in_child, 1);
    atomic_store(&arming, 0);
    atomic_store(&forking, 0);
}

static void register_atfork(void)
{
    pthread_atfork(at_prepare, at_parent, at_child);
}

int ph_uffd_sampler_arm_begin(void)
{
    atomic_fetch_add(&arming, 1);
    if (atomic_load(&forking) || atomic_load(&in_child)) {
        atomic_fetch_sub(&arming, 1);
        return 0;
    }
    return 1;
}

void ph_uffd_sampler_arm_end(void)
{
    atomic_fetch_sub(&arming, 1);
}

int ph_sampler_uffd_usable(void)
{
    ph_uffd u;
    if (ph_uffd_open(&u, PH_UFFD_THREAD_ID | PH_UFFD_MOVE, 0) != 0)
        return 0;
    ph_uffd_close(&u);
    return 1;
}

int ph_uffd_sampler_start(size_t i)
{
    ph_uffd_sampler *us = calloc(1, sizeof *us);
    if (!us)
        return ph_fail(ENOMEM, "sampler: out of memory");
    if (ph_uffd_open(&us->u, PH_UFFD_THREAD_ID | PH_UFFD_MOVE, 0) != 0) {
        int e = errno;
        free(us);
        errno = e;
        return -1;
    }
    if (ph_uffd_open(&us->stash_u, PH_UFFD_MOVE | PH_UFFD_SIGBUS, 0) != 0) {
        int e = errno;
        ph_uffd_close(&us->u);
        free(us);
        errno = e;
        return -1;
    }
    ph_sig_insts[i].uffd = us;
    pthread_once(&atfork_once, register_atfork);
    int e = ph_thread_start(&us->thread, "ph-uffd", service, (void *)(uintptr_t)i);
    if (e != 0) {
        ph_uffd_close(&us->u);
        ph_uffd_close(&us->stash_u);
        ph_sig_insts[i].uffd = NULL;
        free(us);
        return ph_fail(e, "sampler: cannot start the userfaultfd service thread: %s",
                       strerror(e));
    }
    us->started = 1;
    return 0;
}

void ph_uffd_sampler_stop(size_t i)
{
    ph_uffd_sampler *us = ph_sig_insts[i].uffd;
    if (!us)
        return;
    if (us->started && !atomic_load(&in_child)) {
        atomic_store(&us->stop, 1);
        pthread_join(us->thread, NULL);
    }
    ph_uffd_close(&us->u);
    ph_uffd_close(&us->stash_u);
    ph_sig_insts[i].uffd = NULL;
    free(us);
}
