/*
 * thread.c -- starting a thread of pagehome's own (see thread.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np */
#endif
#include "base/thread.h"

#include <signal.h>

int ph_thread_start(pthread_t *t, const char *name, void *(*fn)(void *),
                    void *arg)
{
    sigset_t ours, old;
    sigfillset(&ours);
    sigdelset(&ours, SIGSEGV);
    sigdelset(&ours, SIGBUS);
    sigdelset(&ours, SIGFPE);
    sigdelset(&ours, SIGILL);
    sigdelset(&ours, SIGTRAP);
    int rc = pthread_sigmask(SIG_SETMASK, &ours, &old);
    if (rc)
        return rc;
    rc = pthread_create(t, NULL, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0)
        (void)pthread_setname_np(*t, name);
    return rc;
}

static _Thread_local int lane_of_thread;

void ph_thread_set_lane(int lane)
{
    lane_of_thread = lane;
}

int ph_thread_lane(void)
{
    return lane_of_thread;
}
