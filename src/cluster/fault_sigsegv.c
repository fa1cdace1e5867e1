/*
 * fault_sigsegv.c -- catching accesses to shared pages with page
 * protection, where userfaultfd is not available (cluster_fault=sigsegv).
 *
 * The page states map onto protections: INVALID -> PROT_NONE, RO ->
 * PROT_READ, RW -> PROT_READ|PROT_WRITE.  The SIGSEGV handler is
 * async-signal-safe and makes no MPI call: for an address inside the
 * arena it claims a request slot (atomics), writes the page and the access
 * kind (x86-64: the page-fault error code's write bit; elsewhere the
 * service thread infers it from the page's state), wakes the service
 * thread (write(2) on its eventfd) and waits on the slot with futex(2).
 * The service thread resolves the fault exactly as a userfaultfd one and
 * marks the slot done; the handler returns and the access is retried.
 * For an address outside the arena, or inside it but in no allocation
 * (the service thread answers "not ours"), or any fault in a child of
 * fork() (ph_dsm_forked: it has no service thread), the handler passes the signal
 * to the program's handler, or restores the default action and returns so
 * that the access faults again and the process dies of SIGSEGV as it
 * would have without pagehome.  The program's handler is the one it had
 * at start-up, or the one it installs later: signals.c's sigaction,
 * signal, ... put a SIGSEGV handler *behind* this one while it is
 * installed (ph_dsm_sigsegv_chained), and give the program's back when it
 * asks.  Without that a crash reporter installed after ph_cluster_init
 * took the DSM's faults: the first remote access ran it.  The chained
 * disposition is kept twice and switched with one atomic store, so a
 * handler running meanwhile reads a whole one (not two updates within
 * one fault).
 *
 * Limits of this mode: a system call given shared memory that is not
 * accessible at that moment fails with EFAULT instead of faulting --
 * except the data-moving calls syscalls.c wraps (read, write, fread, ...),
 * which make the buffer accessible first; each run of pages with a different protection is its own kernel VMA
 * (vm.max_map_count, 65530 by default, bounds how fragmented the arena's
 * protections may become).
 */
#include "cluster/cluster.h"

#include "base/error.h"

#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#define NSLOTS 256

enum { SLOT_FREE = 0, SLOT_FILLING, SLOT_POSTED, SLOT_TAKEN, SLOT_DONE,
       SLOT_NOT_OURS };

typedef struct slot {
    _Atomic int state;
    size_t page;
    int write;         /* 1 write, 0 read, -1 unknown */
} slot;

static slot slots[NSLOTS];
static _Atomic int posted;
static struct sigaction chained[2];   /* the program's; chained[cur] */
static _Atomic int chained_cur;
static atomic_flag chained_lock = ATOMIC_FLAG_INIT;
static _Atomic int installed;
static char *s_arena;
static size_t s_arena_bytes;
static int s_evfd = -1;
static _Atomic int *s_sleeping;
static _Atomic int *s_role_tid;

static long futex(_Atomic int *addr, int op, int val)
{
    return syscall(SYS_futex, (int *)addr, op, val, NULL, NULL, 0);
}

/* Restore the default action; the handler returns and the access faults
 * again, fatally. */
static void default_action(int sig)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    atomic_store(&installed, 0);
    ph_dsm_real_sigaction(sig, &dfl, NULL);
}

static void chain(int sig, siginfo_t *info, void *ctx)
{
    const struct sigaction *p = &chained[atomic_load(&chained_cur)];
    if (p->sa_flags & SA_SIGINFO) {
        if (p->sa_sigaction) {
            p->sa_sigaction(sig, info, ctx);
            return;
        }
    } else if (p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN) {
        p->sa_handler(sig);
        return;
    }
    default_action(sig);
}

int ph_dsm_sigsegv_chained(const struct sigaction *act, struct sigaction *old)
{
    if (!atomic_load(&installed))
        return 0;
    while (atomic_flag_test_and_set(&chained_lock))
        syscall(SYS_sched_yield);
    int cur = atomic_load(&chained_cur);
    struct sigaction was = chained[cur];
    if (act) {
        chained[!cur] = *act;
        atomic_store(&chained_cur, !cur);
    }
    atomic_flag_clear(&chained_lock);
    if (old)
        *old = was;
    return 1;
}

static int write_bit(void *ctx)
{
#if defined(__x86_64__)
    ucontext_t *uc = ctx;
    return (uc->uc_mcontext.gregs[REG_ERR] & 2) ? 1 : 0;
#else
    (void)ctx;
    return -1;
#endif
}

static void handler(int sig, siginfo_t *info, void *ctx)
{
    char *a = info->si_addr;
    if (!s_arena || a < s_arena || a >= s_arena + s_arena_bytes ||
        ph_dsm_forked) {
        chain(sig, info, ctx);
        return;
    }
    int saved_errno = errno;
    int holder = atomic_load(s_role_tid);   /* gettid only when held */
    if (holder && holder == (int)syscall(SYS_gettid)) {
        /* The thread that serves faults took one: nobody else may serve
         * it, and waiting would hang the job.  The MPI library's progress
         * this thread drove moved a message of the program's into or out
         * of a shared page that was not accessible (a call pagehome did
         * not see: README.md, "The program's own MPI calls").  Die of
         * the signal, saying why. */
        static const char msg[] =
            "pagehome: cluster: the DSM's service code faulted on a shared "
            "page it cannot serve to itself: an MPI call of the program's "
            "moved a message into or out of shared memory that was not "
            "accessible (README.md, \"The program's own MPI calls\")\n";
        ssize_t w = write(2, msg, sizeof msg - 1);
        (void)w;
        default_action(sig);
        errno = saved_errno;
        return;
    }
    /* claim a slot */
    unsigned start = (unsigned)(((uintptr_t)a >> 12) * 2654435761u) % NSLOTS;
    slot *s = NULL;
    for (;;) {
        for (unsigned k = 0; k < NSLOTS; k++) {
            slot *t = &slots[(start + k) % NSLOTS];
            int expect = SLOT_FREE;
            if (atomic_compare_exchange_strong(&t->state, &expect,
                                               SLOT_FILLING)) {
                s = t;
                break;
            }
        }
        if (s)
            break;
        syscall(SYS_sched_yield);
    }
    s->page = (size_t)(a - s_arena) >> PH_DSM_PAGE_SHIFT;
    s->write = write_bit(ctx);
    atomic_store(&s->state, SLOT_POSTED);
    atomic_fetch_add(&posted, 1);
    if (atomic_load(s_sleeping)) {
        uint64_t one = 1;
        ssize_t w = write(s_evfd, &one, sizeof one);
        (void)w;
    }
    for (;;) {
        int st = atomic_load(&s->state);
        if (st == SLOT_DONE || st == SLOT_NOT_OURS)
            break;
        futex(&s->state, FUTEX_WAIT_PRIVATE, st);
    }
    int not_ours = atomic_load(&s->state) == SLOT_NOT_OURS;
    atomic_store(&s->state, SLOT_FREE);
    errno = saved_errno;
    if (not_ours)
        chain(sig, info, ctx);
}

static int s_init(ph_dsm *c)
{
    s_arena = c->arena;
    s_arena_bytes = c->arena_bytes;
    s_evfd = c->evfd;
    s_sleeping = &c->svc_sleeping;
    s_role_tid = &c->role_tid;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    atomic_store(&chained_cur, 0);
    if (ph_dsm_real_sigaction(SIGSEGV, &sa, &chained[0]) < 0)
        return ph_fail(errno, "sigaction(SIGSEGV): %s", strerror(errno));
    atomic_store(&installed, 1);
    ph_dsm_signals_route(1);
    snprintf(c->fault_name, sizeof c->fault_name, "sigsegv");
    return 0;
}

static void s_fini(ph_dsm *c)
{
    (void)c;
    if (atomic_exchange(&installed, 0)) {
        ph_dsm_signals_route(0);
        /* the program's disposition back in place (the one it set while
         * cluster mode ran, if any) */
        struct sigaction cur;
        ph_dsm_real_sigaction(SIGSEGV, NULL, &cur);
        if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == handler)
            ph_dsm_real_sigaction(SIGSEGV, &chained[atomic_load(&chained_cur)],
                                  NULL);
    }
    s_arena = NULL;
}

static int s_fd(ph_dsm *c)
{
    (void)c;
    return -1;
}

static int s_read(ph_dsm *c, ph_dsm_fault *ev, int max)
{
    (void)c;
    if (atomic_load(&posted) == 0)
        return 0;
    int k = 0;
    for (int i = 0; i < NSLOTS && k < max; i++) {
        int expect = SLOT_POSTED;
        if (!atomic_compare_exchange_strong(&slots[i].state, &expect,
                                            SLOT_TAKEN))
            continue;
        atomic_fetch_sub(&posted, 1);
        ev[k].page = slots[i].page;
        ev[k].write = slots[i].write > 0;
        ev[k].kind = slots[i].write < 0 ? PH_DSM_FK_ACCESS
                     : slots[i].write   ? PH_DSM_FK_WP
                                        : PH_DSM_FK_ACCESS;
        ev[k].token = i;
        ev[k].woken = 0;
        k++;
    }
    return k;
}

static int prot(ph_dsm *c, size_t page, size_t n, int p)
{
    if (mprotect(c->arena + page * PH_DSM_PAGE, n * PH_DSM_PAGE, p) < 0)
        ph_dsm_fatal(c, "mprotect of %zu arena page(s) at page %zu failed: %s "
                  "(vm.max_map_count may be too small for this many "
                  "protection changes)", n, page, strerror(errno));
    return 0;
}

static int s_map(ph_dsm *c, size_t page, size_t n, int rw)
{
    return prot(c, page, n, rw ? PROT_READ | PROT_WRITE : PROT_READ);
}

static int s_protect(ph_dsm *c, size_t page, size_t n, int rw)
{
    return s_map(c, page, n, rw);
}

static int s_drop(ph_dsm *c, size_t page, size_t n)
{
    return prot(c, page, n, PROT_NONE);
}

static int s_complete(ph_dsm *c, ph_dsm_fault *ev)
{
    (void)c;
    slot *s = &slots[ev->token];
    atomic_store(&s->state, ev->woken < 0 ? SLOT_NOT_OURS : SLOT_DONE);
    futex(&s->state, FUTEX_WAKE_PRIVATE, 1);
    ev->woken = 1;
    return 0;
}

static int s_enable(ph_dsm *c, size_t page, size_t n, int on)
{
    /* an allocation starts inaccessible: every first access faults */
    if (!on)
        return prot(c, page, n, PROT_NONE);
    return 0;
}

const ph_dsm_fault_ops ph_dsm_fault_sigsegv = {
    .name = "sigsegv",
    .init = s_init,
    .fini = s_fini,
    .fd = s_fd,
    .read = s_read,
    .map = s_map,
    .protect = s_protect,
    .drop = s_drop,
    .complete = s_complete,
    .enable = s_enable,
};
