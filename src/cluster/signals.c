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
 * Not reproduced: the one-shot semantics of sysv_signal (SA_RESETHAND:
 * the program's handler stays), and sigset's SIG_HOLD for SIGSEGV (passed
 * on: it blocks the signal, and a fault in a thread that blocks SIGSEGV
 * kills the process, with or without pagehome).
 */
#include "cluster/cluster.h"

#include <dlfcn.h>
#include <signal.h>
#include <stddef.h>

#define PH_SIG_EXPORT __attribute__((visibility("default")))

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef sighandler_t (*signal_fn)(int, sighandler_t);

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

/* The C library's functions, found when the library is loaded (no dlsym
 * at a first call, which may come from a signal handler). */
__attribute__((constructor)) static void find_real(void)
{
    real_sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
    real___sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "__sigaction");
    for (int k = 0; k < NSIGNAL; k++)
        real_signal[k] = (signal_fn)dlsym(RTLD_NEXT, signal_names[k]);
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
    if (sig == SIGSEGV && ph_dsm_sigsegv_chained(act, old))
        return 0;
    return ph_dsm_real_sigaction(sig, act, old);
}

PH_SIG_EXPORT int __sigaction(int sig, const struct sigaction *act,
                              struct sigaction *old)
{
    if (sig == SIGSEGV && ph_dsm_sigsegv_chained(act, old))
        return 0;
    if (!real___sigaction)
        find_real();
    return real___sigaction ? real___sigaction(sig, act, old)
                            : ph_dsm_real_sigaction(sig, act, old);
}

/* The signal() family for SIGSEGV while the DSM's handler is installed:
 * the handler chained with the flags that call gives it; the previous
 * handler returned.  *done = 0 when the C library must do it. */
static sighandler_t chain_handler(int sig, sighandler_t h, int flags,
                                  int *done)
{
    *done = 0;
    if (sig != SIGSEGV || h == SIG_ERR || h == SIG_HOLD)
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
