/*
 * exit.c -- transparent mode's _exit and _Exit: the statistics are written
 * on these exit paths too.
 *
 * exit() and quick_exit() run the handlers the API layer registered when
 * the engine was made (atexit, at_quick_exit), which write the statistics
 * file (api/stats_file.h).  A program that ends with _exit() or _Exit()
 * runs none of them -- HPC codes do it to skip slow teardown, and fork()
 * children always do -- so libpagehome_preload.so exports both: when this
 * process has statistics to write (an engine, the statistics file is its
 * own: never in a fork() child, which costs one getpid()), they are
 * written, and the real _exit follows with the program's status.
 *
 * _exit is async-signal-safe and may be called from a signal handler that
 * interrupted a thread holding malloc's or the engine's lock, which the
 * writer needs: it would wait forever.  So the write has a deadline: a
 * one-shot timer (timer_create with SIGEV_THREAD_ID, a direct system call)
 * sends DEADLINE_SIGNAL to this thread after DEADLINE_S seconds, and its
 * handler ends the process with the program's status (exit_group).  The
 * statistics file then still holds the notice written when the engine
 * started, which says they were not written -- never a made-up report.
 * When no timer can be made, nothing is written.
 *
 * The real functions are the next definitions (dlsym RTLD_NEXT, found in
 * the constructor, never at exit), else the exit_group system call.
 */
#include "api/transparent.h"

#include <dlfcn.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define DEADLINE_S 3
#define DEADLINE_SIGNAL (SIGRTMAX - 1)
#ifndef sigev_notify_thread_id /* glibc < 2.35 names it only this way */
#define sigev_notify_thread_id _sigev_un._tid
#endif

static void (*real_exit)(int);
static void (*real_Exit)(int);
static volatile sig_atomic_t exit_status;

__attribute__((constructor)) static void exit_start(void)
{
    *(void **)&real_exit = dlsym(RTLD_NEXT, "_exit");
    *(void **)&real_Exit = dlsym(RTLD_NEXT, "_Exit");
}

static void deadline_hit(int sig)
{
    (void)sig;
    syscall(SYS_exit_group, (int)exit_status);
}

static void write_before_exit(int status)
{
    static atomic_int once;
    if (!ph_api_exit_stats_due() || atomic_exchange(&once, 1))
        return;
    exit_status = status;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = deadline_hit;
    sigemptyset(&sa.sa_mask);
    if (sigaction(DEADLINE_SIGNAL, &sa, NULL) != 0)
        return;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, DEADLINE_SIGNAL);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = DEADLINE_SIGNAL;
    sev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
    timer_t timer;
    if (timer_create(CLOCK_MONOTONIC, &sev, &timer) != 0)
        return;
    struct itimerspec when;
    memset(&when, 0, sizeof when);
    when.it_value.tv_sec = DEADLINE_S;
    if (timer_settime(timer, 0, &when, NULL) == 0)
        ph_api_exit_stats();
    timer_delete(timer);
}

static __attribute__((noreturn)) void finish(void (*real)(int), int status)
{
    if (real)
        real(status);
    for (;;)
        syscall(SYS_exit_group, status);
}

EXPORT void _exit(int status)
{
    write_before_exit(status);
    finish(real_exit, status);
}

EXPORT void _Exit(int status)
{
    write_before_exit(status);
    finish(real_Exit ? real_Exit : real_exit, status);
}
