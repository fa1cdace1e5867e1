/*
 * thread.c -- what the sampler needs of each thread of the program:
 * ph_sampler_thread_init() gives the calling thread a 64 KiB alternate
 * signal stack above a guard page (a watched page may be on the thread's
 * own stack, and the SIGSEGV handler must still have a stack to run on),
 * unless the thread already has a big enough one (ASan installs its own),
 * and a thread-exit hook that frees that stack and hands the thread's
 * sample rings back to their samplers.
 *
 * It also knows which threads run the program's serial code: the OpenMP
 * runtime's initial threads (ph_sampler_note_serial_thread, from the
 * tools interface's thread_begin and thread_end).  While no parallel
 * region runs (the region gate is closed), a trap is serial code's only
 * when one of those took it (ph_sig_runs_serial_code): the master
 * initialising every page, a verification pass.  A thread the OpenMP
 * runtime did not start -- a BLAS library's pthreads, std::thread, a
 * program's own workers -- doing the work between parallel regions is
 * sampled as the regions' threads are.
 */
#include "sample/sigsegv.h"
#include "sample/source.h"

#include "base/error.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PG_BYTES ((uintptr_t)4096)
#define ALTSTACK_BYTES ((size_t)64 << 10)

static pthread_key_t thread_key;
static pthread_once_t thread_key_once = PTHREAD_ONCE_INIT;
static _Thread_local int tl_thread_ready;
static _Thread_local void *tl_altstack;

static void thread_exit(void *unused)
{
    (void)unused;
    ph_sig_release_thread_rings();
    if (tl_altstack) {
        stack_t cur, off = {.ss_flags = SS_DISABLE};
        if (sigaltstack(NULL, &cur) == 0 && cur.ss_sp == (char *)tl_altstack + PG_BYTES)
            sigaltstack(&off, NULL);
        munmap(tl_altstack, ALTSTACK_BYTES + PG_BYTES);
        tl_altstack = NULL;
    }
}

static void make_thread_key(void)
{
    pthread_key_create(&thread_key, thread_exit);
}

/* A 64 KiB alternate stack above a guard page. */
static int own_altstack(void)
{
    void *p = mmap(NULL, ALTSTACK_BYTES + PG_BYTES, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (p == MAP_FAILED)
        return ph_fail(errno, "sampler: no memory for a signal stack");
    mprotect(p, PG_BYTES, PROT_NONE);
    stack_t ss = {.ss_sp = (char *)p + PG_BYTES, .ss_size = ALTSTACK_BYTES, .ss_flags = 0};
    if (sigaltstack(&ss, NULL) != 0) {
        int e = errno;
        munmap(p, ALTSTACK_BYTES + PG_BYTES);
        return ph_fail(e, "sampler: sigaltstack failed: %s", strerror(e));
    }
    tl_altstack = p;
    return 0;
}

int ph_sampler_thread_init(void)
{
    if (tl_thread_ready)
        return 0;
    pthread_once(&thread_key_once, make_thread_key);
    stack_t cur;
    if (sigaltstack(NULL, &cur) != 0)
        return ph_fail(errno, "sampler: sigaltstack failed: %s", strerror(errno));
    /* Keep a big enough stack someone else gave this thread (ASan does). */
    if (((cur.ss_flags & SS_DISABLE) || cur.ss_size < ALTSTACK_BYTES / 2) &&
        own_altstack() != 0)
        return -1;
    pthread_setspecific(thread_key, (void *)1);
    tl_thread_ready = 1;
    return 0;
}

/* ---- the threads that run serial code ------------------------------------- */

/* Their thread ids (0 = free), for the userfaultfd service thread; a
 * thread knows its own from tl_serial_code.  More initial threads than
 * slots: every thread counts as serial code's while the gate is closed
 * (what every trap then was before threads were told apart). */
#define SERIAL_TIDS 64
static atomic_int serial_tids[SERIAL_TIDS];
static atomic_int serial_tids_full;
static _Thread_local int tl_serial_code __attribute__((tls_model("initial-exec")));

void ph_sampler_note_serial_thread(int on)
{
    int tid = (int)syscall(SYS_gettid);
    /* the process's first thread stays one: the runtime ends it before
     * the program's exit handlers, which are serial code too */
    if (!on && tid == (int)getpid())
        return;
    tl_serial_code = on;
    for (size_t k = 0; k < SERIAL_TIDS; k++) {
        int want = on ? 0 : tid;
        if (atomic_compare_exchange_strong(&serial_tids[k], &want, on ? tid : 0))
            return;
        if (on && want == tid)
            return; /* noted already */
    }
    if (on)
        atomic_store(&serial_tids_full, 1);
}

int ph_sig_runs_serial_code(int tid)
{
    if (tid == PH_SIG_TID_SELF)
        return tl_serial_code || atomic_load_explicit(&serial_tids_full, memory_order_relaxed);
    if (tid <= 0 || atomic_load_explicit(&serial_tids_full, memory_order_relaxed))
        return 1;
    for (size_t k = 0; k < SERIAL_TIDS; k++)
        if (atomic_load_explicit(&serial_tids[k], memory_order_relaxed) == tid)
            return 1;
    return 0;
}
