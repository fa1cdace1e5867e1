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
 * set it returns.  ph_segv_mask is that rule for one call's set,
 * ph_segv_masked the whole call.
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

typedef int (*ph_segv_mask_fn)(int, const sigset_t *, sigset_t *);

/* One mask call (how, set, old) of the program's through fn, the C
 * library's pthread_sigmask or sigprocmask, with SIGSEGV never blocked;
 * *blocked is the calling thread's program view, updated when the call
 * succeeds, and old gets that view.  fn's return. */
static inline int ph_segv_masked(ph_segv_mask_fn fn, int how,
                                 const sigset_t *set, sigset_t *old,
                                 int *blocked)
{
    int was = *blocked;
    sigset_t pass;
    int now = set ? ph_segv_mask(how, set, was, &pass) : was;
    int rc = fn(how, set ? &pass : NULL, old);
    if (rc != 0)
        return rc;
    *blocked = now;
    if (old && was)
        sigaddset(old, SIGSEGV);
    return 0;
}

#endif
