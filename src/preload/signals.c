/*
 * signals.c -- the program's SIGSEGV handlers, in transparent mode.
 *
 * pagehome's sampler needs its SIGSEGV handler to stay installed: it is
 * how watched pages open.  A program -- or its runtime: libgfortran
 * installs a backtrace handler at the start of main -- that installs its
 * own would replace it, and the next trap on a watched page would reach a
 * handler that knows nothing of it (libgfortran prints a backtrace and
 * exits).  So sigaction(2) and signal(2) for SIGSEGV are interposed: once
 * pagehome's handler is in place, the program's handler goes *behind* it
 * (faults that are not pagehome's reach it exactly as before, see
 * sample/sigsegv.c) and reading the disposition returns the program's own.
 * Every other signal, every call made before the sampler is installed, and
 * pagehome's own calls go straight to the C library.
 */
#include "preload/preload.h"

#include "sample/source.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <string.h>

#define PH_EXPORT __attribute__((visibility("default")))

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

static int real_sigaction(int sig, const struct sigaction *act,
                          struct sigaction *old)
{
    static sigaction_fn real;
    if (!real)
        real = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    return real(sig, act, old);
}

PH_EXPORT int sigaction(int sig, const struct sigaction *act,
                        struct sigaction *old)
{
    if (sig != SIGSEGV || ph_preload_is_internal(__builtin_return_address(0)))
        return real_sigaction(sig, act, old);
    if (ph_sampler_chain_swap(act, old) == 0)
        return 0;
    return real_sigaction(sig, act, old);
}

PH_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
    if (sig != SIGSEGV || ph_preload_is_internal(__builtin_return_address(0))) {
        struct sigaction sa, old;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = handler;
        sa.sa_flags = SA_RESTART;
        sigemptyset(&sa.sa_mask);
        if (real_sigaction(sig, &sa, &old) != 0)
            return SIG_ERR;
        return old.sa_handler;
    }
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (ph_sampler_chain_swap(&sa, &old) != 0 &&
        real_sigaction(sig, &sa, &old) != 0)
        return SIG_ERR;
    return (old.sa_flags & SA_SIGINFO) ? (sighandler_t)(void *)old.sa_sigaction
                                       : old.sa_handler;
}
