/*
 * signals.c -- the program's signals, in transparent mode.
 *
 * With the mprotect mechanism pagehome's sampler traps with SIGSEGV; its
 * handler must stay installed, stay deliverable, and have a stack to run
 * on.  (With the userfaultfd mechanism no trap is a signal, but a program
 * may switch mechanisms at no notice -- a kernel without UFFDIO_MOVE,
 * 2 MiB pages -- so all of this holds in every mechanism.)
 *
 * HANDLERS.  Every way to install a SIGSEGV handler is interposed:
 * sigaction, __sigaction, signal, __sysv_signal (strict ISO C's signal),
 * sysv_signal, bsd_signal, sigset.  Once pagehome's handler is in place,
 * the program's handler goes *behind* it (faults that are not pagehome's
 * reach it exactly as before, see sample/sigsegv.c) and reading the
 * disposition returns the program's own.  The one-shot semantics of
 * __sysv_signal (SA_RESETHAND) are not reproduced: the handler stays.
 *
 * MASKS.  A SIGSEGV raised by a fault while the thread blocks SIGSEGV
 * kills the process, so the kernel's mask never blocks it: sigprocmask,
 * pthread_sigmask and sigsuspend drop SIGSEGV from the set they pass on,
 * and the sa_mask of handlers installed for other signals loses it too.
 * The program still sees its own mask: a thread-local remembers whether
 * the program blocked SIGSEGV, and the old set returned shows it.  What
 * changes: a SIGSEGV sent with kill(2) to a thread that "blocks" it is
 * delivered instead of staying pending.
 *
 * STACKS.  pthread_create is interposed: the new thread starts in a
 * thunk that gives it an alternate signal stack (a trap on a 16 KiB
 * thread stack would overflow it), then runs the program's function.
 * The OpenMP runtime's threads get theirs at their first implicit task
 * (ompt.c), before they run the program's code.
 *
 * Every call made before the sampler is installed, and pagehome's own
 * calls, go straight to the C library.
 */
#include "preload/preload.h"

#include "api/transparent.h"
#include "base/segv_mask.h"
#include "sample/source.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define PH_EXPORT __attribute__((visibility("default")))

/* Exported by glibc, not (or not always) declared by its headers. */
int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);
sighandler_t bsd_signal(int sig, sighandler_t handler);
sighandler_t sysv_signal(int sig, sighandler_t handler);

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef int (*mask_fn)(int, const sigset_t *, sigset_t *);
typedef int (*suspend_fn)(const sigset_t *);
typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static void *next(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

static int real_sigaction(int sig, const struct sigaction *act,
                          struct sigaction *old)
{
    static sigaction_fn real;
    if (!real)
        real = (sigaction_fn)next("sigaction");
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    return real(sig, act, old);
}

/* ---- installing handlers ------------------------------------------------ */

static int set_action(int sig, const struct sigaction *act, struct sigaction *old,
                      const void *ra)
{
    if (sig != SIGSEGV || ph_preload_is_internal(ra)) {
        if (act && sig != SIGSEGV && sigismember(&act->sa_mask, SIGSEGV) == 1 &&
            !ph_preload_is_internal(ra)) {
            struct sigaction a = *act;
            sigdelset(&a.sa_mask, SIGSEGV);
            return real_sigaction(sig, &a, old);
        }
        return real_sigaction(sig, act, old);
    }
    if (ph_sampler_chain_swap(act, old) == 0)
        return 0;
    return real_sigaction(sig, act, old);
}

PH_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    return set_action(sig, act, old, __builtin_return_address(0));
}

PH_EXPORT int __sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    return set_action(sig, act, old, __builtin_return_address(0));
}

/* signal() and its relatives: a handler with the given flags; returns
 * the previous handler or SIG_ERR. */
static sighandler_t set_handler(int sig, sighandler_t handler, int flags, const void *ra)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    memset(&old, 0, sizeof old);
    sa.sa_handler = handler;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    if (set_action(sig, &sa, &old, ra) != 0)
        return SIG_ERR;
    return (old.sa_flags & SA_SIGINFO) ? (sighandler_t)(void *)old.sa_sigaction
                                       : old.sa_handler;
}

PH_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
    return set_handler(sig, handler, SA_RESTART, __builtin_return_address(0));
}

PH_EXPORT sighandler_t bsd_signal(int sig, sighandler_t handler)
{
    return set_handler(sig, handler, SA_RESTART, __builtin_return_address(0));
}

PH_EXPORT sighandler_t __sysv_signal(int sig, sighandler_t handler)
{
    return set_handler(sig, handler, SA_RESETHAND | SA_NODEFER,
                       __builtin_return_address(0));
}

PH_EXPORT sighandler_t sysv_signal(int sig, sighandler_t handler)
{
    return set_handler(sig, handler, SA_RESETHAND | SA_NODEFER,
                       __builtin_return_address(0));
}

/* sigset(): SIG_HOLD blocks the signal (through the mask rules below);
 * any other disposition unblocks it and is installed. */
PH_EXPORT sighandler_t sigset(int sig, sighandler_t disp)
{
    const void *ra = __builtin_return_address(0);
    sigset_t one, prev;
    sigemptyset(&one);
    sigaddset(&one, sig);
    if (disp == SIG_HOLD) {
        struct sigaction old;
        if (set_action(sig, NULL, &old, ra) != 0 ||
            pthread_sigmask(SIG_BLOCK, &one, &prev) != 0)
            return SIG_ERR;
        return sigismember(&prev, sig) == 1 ? SIG_HOLD : old.sa_handler;
    }
    sighandler_t h = set_handler(sig, disp, 0, ra);
    if (h == SIG_ERR || pthread_sigmask(SIG_UNBLOCK, &one, &prev) != 0)
        return SIG_ERR;
    return sigismember(&prev, sig) == 1 ? SIG_HOLD : h;
}

/* ---- masks ------------------------------------------------------------------ */

/* The program believes this thread blocks SIGSEGV. */
static __thread int tl_segv_blocked __attribute__((tls_model("initial-exec")));

/* Apply (how, set) through fn with SIGSEGV kept deliverable; fill old
 * with the program's view. */
static int masked(mask_fn fn, int how, const sigset_t *set, sigset_t *old, const void *ra)
{
    if (!fn) {
        errno = ENOSYS;
        return -1;
    }
    if (ph_preload_is_internal(ra))
        return fn(how, set, old);
    return ph_segv_masked(fn, how, set, old, &tl_segv_blocked);
}

PH_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
    static mask_fn real;
    if (!real)
        real = (mask_fn)next("pthread_sigmask");
    return masked(real, how, set, old, __builtin_return_address(0));
}

PH_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
    static mask_fn real;
    if (!real)
        real = (mask_fn)next("sigprocmask");
    return masked(real, how, set, old, __builtin_return_address(0));
}

PH_EXPORT int sigsuspend(const sigset_t *mask)
{
    static suspend_fn real;
    if (!real)
        real = (suspend_fn)next("sigsuspend");
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    const sigset_t *m = mask;
    if (!m || sigismember(m, SIGSEGV) != 1)
        return real(m);
    sigset_t s = *m;
    sigdelset(&s, SIGSEGV);
    return real(&s);
}

/* ---- threads ------------------------------------------------------------------ */

typedef struct thunk {
    void *(*fn)(void *);
    void *arg;
} thunk;

static void *start_thunk(void *p)
{
    thunk t = *(thunk *)p;
    free(p);
    tl_segv_blocked = 0;
    (void)ph_api_thread_start();
    return t.fn(t.arg);
}

/* The OpenMP runtime's own threads are met at their first implicit task
 * (ompt.c); wrapping them would only add work to the runtime's start. */
static int from_runtime(const void *ra)
{
    Dl_info di;
    if (!ra || !dladdr(ra, &di) || !di.dli_fname)
        return 0;
    const char *f = strrchr(di.dli_fname, '/');
    f = f ? f + 1 : di.dli_fname;
    return strncmp(f, "libomp", 6) == 0 || strncmp(f, "libgomp", 7) == 0 ||
           strncmp(f, "libiomp", 7) == 0;
}

PH_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr,
                             void *(*fn)(void *), void *arg)
{
    static create_fn real;
    if (!real)
        real = (create_fn)next("pthread_create");
    if (!real)
        return ENOSYS;
    const void *ra = __builtin_return_address(0);
    if (!ph_preload_ready() || ph_preload_is_internal(ra) || from_runtime(ra))
        return real(th, attr, fn, arg);
    thunk *t = malloc(sizeof *t);
    if (!t)
        return real(th, attr, fn, arg);
    t->fn = fn;
    t->arg = arg;
    int rc = real(th, attr, start_thunk, t);
    if (rc != 0)
        free(t);
    return rc;
}
