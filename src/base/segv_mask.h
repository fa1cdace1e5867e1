/*
 * segv_mask.h -- signal masks that never block SIGSEGV, for the
 * interposers whose SIGSEGV handler must be able to run in every thread
 * (transparent mode's page-protection sampler, cluster mode's page
 * protection).
 *
 * The kernel kills a thread that faults while it blocks SIGSEGV: the
 * handler cannot run.  So an interposed pthread_sigmask or sigprocmask
 * passes the program's set on without SIGSEGV, and keeps, per thread,
 * whether the *program* believes SIGSEGV blocked, to show it in the old
 * set it returns.  ph_segv_mask is that rule for one call.
 */
#ifndef PH_BASE_SEGV_MASK_H
#define PH_BASE_SEGV_MASK_H

#include <signal.h>

/* For a mask call (how, set) of a thread whose program view is `was`
 * (1: the program blocked SIGSEGV): *pass gets the set to hand to the C
 * library, set without SIGSEGV where it would block it; returns the
 * program's view once the call succeeded. */
static inline int ph_segv_mask(int how, const sigset_t *set, int was,
                               sigset_t *pass)
{
    *pass = *set;
    int has = sigismember(pass, SIGSEGV) == 1;
    if (how == SIG_BLOCK || how == SIG_SETMASK)
        sigdelset(pass, SIGSEGV);
    if (how == SIG_BLOCK && has)
        return 1;
    if (how == SIG_UNBLOCK && has)
        return 0;
    if (how == SIG_SETMASK)
        return has;
    return was;
}

#endif
