/*
 * signals.c -- the program's SIGSEGV handlers in cluster mode.
 *
 * Under cluster_fault=sigsegv the DSM's SIGSEGV handler (fault_sigsegv.c)
 * serves every access to a shared page that is not accessible.  A program
 * that installs a SIGSEGV handler of its own after ph_cluster_init (a
 * crash reporter, a library's backtrace handler) would replace it, and
 * its handler would then run at the first remote access.  So
 * libpagehome_cluster defines the calls that install handlers --
 * sigaction, __sigaction, signal, bsd_signal, sysv_signal, __sysv_signal
 * and sigset -- exported unversioned, as syscalls.c's read() and the
 * others are, so that the program's calls and its libraries' reach them
 * before the C library's.  While the DSM's handler is installed, a SIGSEGV
 * disposition goes *behind* it (ph_dsm_sigsegv_chained): faults that are
 * not the DSM's reach the program's handler as before, and asking for the
 * disposition returns the program's.  Every other signal, and SIGSEGV
 * under the userfaultfd mechanisms (no handler of ours), go straight to
 * the C library.
 *
 * These functions run before anything else in the process may have
 * started: a sanitizer's runtime installs its own handlers through them
 * from its initialiser, before this library's constructor ran and before
 * the runtime could run instrumented code (a ThreadSanitizer build
 * crashed in the instrumentation of sigaction's entry).  So until the
 * DSM's handler is in (ph_dsm_signals_route) a call goes straight to the
 * C library, and this file is built without ThreadSanitizer's
 * instrumentation (src/CMakeLists.txt).
 *
 * Masks.  The kernel kills a thread that faults while it blocks SIGSEGV
 * (the handler could not run).  A thread pool that blocks every signal
 * so that the main thread takes them, or a SIGUSR1 handler installed with
 * a full sa_mask, would die at its first remote access.  So while the
 * DSM's handler is in, pthread_sigmask, sigprocmask and sigsuspend pass
 * their sets on without SIGSEGV, and the sa_mask of a handler installed
 * for another signal loses it.  The program still sees its own mask: a
 * thread-local remembers whether the program blocked SIGSEGV in that
 * thread, and the old set returned shows it.  ph_cluster_init unblocks
 * SIGSEGV in the thread that calls it (remembering whether the program
 * had blocked it), and finalize blocks it again there if so.  What
 * changes: a SIGSEGV sent with kill(2) to a thread that "blocks" it is
 * delivered; a new thread starts with the program's view "not blocked"
 * whatever its creator's.  Not covered: a thread that already blocked
 * SIGSEGV when ph_cluster_init ran in another one (its kernel mask is
 * not ours to change), and handlers installed before then with SIGSEGV
 * in their sa_mask.
 *
 * Not reproduced: the one-shot semantics of sysv_signal (SA_RESETHAND:
 * the program's handler stays), and sigset's SIG_HOLD for SIGSEGV
 * (passed on: the C library blocks the signal, and a fault in that thread
 * then kills the process, with or without pagehome).
 */
#include "cluster/cluster.h"

#include "base/segv_mask.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>

#define PH_SIG_EXPORT __attribute__((visibility("default")))

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef sighandler_t (*signal_fn)(int, sighandler_t);
typedef int (*mask_fn)(int, const sigset_t *, sigset_t *);
typedef int (*suspend_fn)(const sigset_t *);

/* Exported by glibc, not (or not always) declared by its headers. */
int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);
sighandler_t bsd_signal(int sig, sighandler_t handler);
sighandler_t sysv_signal(int sig, sighandler_t handler);
sighandler_t __sysv_signal(int sig, sighandler_t handler);

enum { F_SIGNAL, F_BSD_SIGNAL, F_SYSV_SIGNAL, F___SYSV_SIGNAL, F_SIGSET, NSIGNAL };
static const char *const signal_names[NSIGNAL] = {
    "signal", "bsd_signal", "sysv_signal", "__sysv_signal", "sigset"};
static signal_fn real_signal[NSIGNAL];
static sigaction_fn real_sigaction, real___sigaction;
static mask_fn real_pthread_sigmask, real_sigprocmask;
static suspend_fn real_sigsuspend;
static _Atomic int route;   /* ph_dsm_signals_route */
/* The program believes this thread blocks SIGSEGV (while route is on). */
static __thread int tl_segv_blocked;

/* The C library's functions, found when the library is loaded (no dlsym
 * at a first call, which may come from a signal handler). */
__attribute__((constructor)) static void find_real(void)
{
    real_sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
    real___sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "__sigaction");
    for (int k = 0; k < NSIGNAL; k++)
        real_signal[k] = (signal_fn)dlsym(RTLD_NEXT, signal_names[k]);
    real_pthread_sigmask = (mask_fn)dlsym(RTLD_NEXT, "pthread_sigmask");
    real_sigprocmask = (mask_fn)dlsym(RTLD_NEXT, "sigprocmask");
    real_sigsuspend = (suspend_fn)dlsym(RTLD_NEXT, "sigsuspend");
}

void ph_dsm_signals_route(int on)
{
    if (!real_pthread_sigmask)
        find_real();
    sigset_t segv, was;
    sigemptyset(&segv);
    sigaddset(&segv, SIGSEGV);
    if (on) {
        if (real_pthread_sigmask(SIG_UNBLOCK, &segv, &was) == 0)
            tl_segv_blocked = sigismember(&was, SIGSEGV) == 1;
        atomic_store(&route, 1);
    } else {
        atomic_store(&route, 0);
        if (tl_segv_blocked)
            real_pthread_sigmask(SIG_BLOCK, &segv, NULL);
        tl_segv_blocked = 0;
    }
}

/* 1 when the DSM took the call (SIGSEGV while its handler is in). */
static int to_dsm(int sig, const struct sigaction *act, struct sigaction *old)
{
    return sig == SIGSEGV && atomic_load(&route) &&
           ph_dsm_sigsegv_chained(act, old);
}

/* act for fn: while the DSM's handler is in, a handler of another signal
 * does not block SIGSEGV while it runs (*copy holds the changed one). */
static const struct sigaction *segv_free(int sig, const struct sigaction *act,
                                         struct sigaction *copy)
{
    if (!act || sig == SIGSEGV || !atomic_load(&route) ||
        sigismember(&act->sa_mask, SIGSEGV) != 1)
        return act;
    *copy = *act;
    sigdelset(&copy->sa_mask, SIGSEGV);
    return copy;
}

int ph_dsm_real_sigaction(int sig, const struct sigaction *act,
                          struct sigaction *old)
{
    if (!real_sigaction)
        find_real();
    return real_sigaction(sig, act, old);
}

PH_SIG_EXPORT int sigaction(int sig, const struct sigaction *act,
                            struct sigaction *old)
{
    if (to_dsm(sig, act, old))
        return 0;
    struct sigaction copy;
    return ph_dsm_real_sigaction(sig, segv_free(sig, act, &copy), old);
}

PH_SIG_EXPORT int __sigaction(int sig, const struct sigaction *act,
                              struct sigaction *old)
{
    if (to_dsm(sig, act, old))
        return 0;
    if (!real___sigaction)
        find_real();
    struct sigaction copy;
    act = segv_free(sig, act, &copy);
    return real___sigaction ? real___sigaction(sig, act, old)
                            : ph_dsm_real_sigaction(sig, act, old);
}

/* (how, set) applied through fn with SIGSEGV kept deliverable while the
 * DSM's handler is in; old gets the program's view. */
static int masked(mask_fn fn, int how, const sigset_t *set, sigset_t *old)
{
    if (!fn) {
        errno = ENOSYS;
        return -1;
    }
    if (!atomic_load(&route))
        return fn(how, set, old);
    return ph_segv_masked(fn, how, set, old, &tl_segv_blocked);
}

PH_SIG_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
    if (!real_pthread_sigmask)
        find_real();
    return masked(real_pthread_sigmask, how, set, old);
}

PH_SIG_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
    if (!real_sigprocmask)
        find_real();
    return masked(real_sigprocmask, how, set, old);
}

PH_SIG_EXPORT int sigsuspend(const sigset_t *mask)
{
    if (!real_sigsuspend)
        find_real();
    if (!real_sigsuspend) {
        errno = ENOSYS;
        return -1;
    }
    if (!atomic_load(&route) || sigismember(mask, SIGSEGV) != 1)
        return real_sigsuspend(mask);
    sigset_t s = *mask;
    sigdelset(&s, SIGSEGV);
    return real_sigsuspend(&s);
}

/* The signal() family for SIGSEGV while the DSM's handler is installed:
 * the handler chained with the flags that call gives it; the previous
 * handler returned.  *done = 0 when the C library must do it. */
static sighandler_t chain_handler(int sig, sighandler_t h, int flags,
                                  int *done)
{
    *done = 0;
    if (sig != SIGSEGV || h == SIG_ERR || h == SIG_HOLD || !atomic_load(&route))
        return SIG_ERR;
    struct sigaction sa, old;
    sa.sa_handler = h;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    if (!ph_dsm_sigsegv_chained(&sa, &old))
        return SIG_ERR;
    *done = 1;
    return (old.sa_flags & SA_SIGINFO)
               ? (sighandler_t)(void (*)(void))old.sa_sigaction
               : old.sa_handler;
}

static sighandler_t signal_call(int which, int sig, sighandler_t h, int flags)
{
    int done;
    sighandler_t was = chain_handler(sig, h, flags, &done);
    if (done)
        return was;
    if (!real_signal[which])
        find_real();
    return real_signal[which] ? real_signal[which](sig, h) : SIG_ERR;
}

PH_SIG_EXPORT sighandler_t signal(int sig, sighandler_t h)
{
    return signal_call(F_SIGNAL, sig, h, SA_RESTART);
}

PH_SIG_EXPORT sighandler_t bsd_signal(int sig, sighandler_t h)
{
    return signal_call(F_BSD_SIGNAL, sig, h, SA_RESTART);
}

PH_SIG_EXPORT sighandler_t sysv_signal(int sig, sighandler_t h)
{
    return signal_call(F_SYSV_SIGNAL, sig, h, SA_NODEFER);
}

PH_SIG_EXPORT sighandler_t __sysv_signal(int sig, sighandler_t h)
{
    return signal_call(F___SYSV_SIGNAL, sig, h, SA_NODEFER);
}

PH_SIG_EXPORT sighandler_t sigset(int sig, sighandler_t h)
{
    return signal_call(F_SIGSET, sig, h, 0);
}
