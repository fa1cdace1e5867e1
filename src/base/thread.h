/*
 * thread.h -- starting a thread of pagehome's own (internal).
 *
 * pagehome runs threads inside the program's process: the engine's
 * memory manager, the userfaultfd sampler's service threads, the OMPT
 * watchdog, cluster mode's service and watchdog.  A signal sent to the
 * process (kill, alarm, a timer, a batch system's warning before the time
 * limit) goes to any one thread that does not block it.  Were that one of
 * ours, the program's handler would run on a thread it does not know,
 * and a program that blocked the signal in every thread it knows of, to
 * take it with sigwait, would be killed by the default action instead.
 *
 * So our threads block every signal except those a fault raises in the
 * thread itself (SIGSEGV -- pagehome's own traps --, SIGBUS, SIGFPE,
 * SIGILL, SIGTRAP: blocked, the kernel would kill the process at the
 * fault).  The mask is set around pthread_create, so the new thread
 * starts with it (there is no moment at which it takes a signal), and
 * the caller's own mask is back when ph_thread_start returns.
 *
 * Each has a name beginning "ph-", which top -H, ps -L, gdb and perf
 * show for it.
 */
#ifndef PH_BASE_THREAD_H
#define PH_BASE_THREAD_H

#include <pthread.h>

/* pthread_create(t, NULL, fn, arg) with the mask above, then the thread
 * named `name` (at most 15 characters; a name refused is no error); the
 * return value of pthread_create (0 or an error number). */
int ph_thread_start(pthread_t *t, const char *name, void *(*fn)(void *),
                    void *arg);

/* A thread's lane: the index a layer that splits one job among helper
 * threads gives each of them (the mover's lanes; 0, the default, is the
 * thread that called).  A layer below can read whose share of the job it
 * is doing: the simulated OS logs it with every move, so that a cost
 * model can let the lanes' moves run side by side. */
void ph_thread_set_lane(int lane);
int ph_thread_lane(void);

#endif
