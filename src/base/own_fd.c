/*
 * own_fd.c -- pagehome's kept descriptors (see own_fd.h).
 *
 * The table is PH_OWN_FD_MAX atomic slots, 0 when free (they hold fd +
 * 1): registering takes a free slot with a compare-and-swap, the checks
 * read the slots without a lock (a close interposer runs on every
 * close(2) of the program).  The short-lived descriptors' steps and the
 * program's close calls keep out of each other's way (busy, closing).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "base/own_fd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Slots hold fd + 1, so that the zeroed table is empty. */
static atomic_int slots[PH_OWN_FD_MAX];
/* The two sides that must not overlap, counted, each with this thread's
 * part (a signal handler on a thread that is inside one must not wait
 * for itself): pagehome's steps (open-and-register, unregister-and-close)
 * and the program's close calls.  A step announces itself, then waits
 * for the close calls in progress; a close call that finds a step
 * announced withdraws until the steps are over.  Both sides write their
 * count before they read the other's (sequentially consistent), so at
 * least one of them sees the other. */
static atomic_int busy, closing;
static _Thread_local int tl_busy, tl_closing;

static void yield(void)
{
    (void)syscall(SYS_sched_yield);
}

static void enter(void)
{
    tl_busy++;
    atomic_fetch_add_explicit(&busy, 1, memory_order_seq_cst);
    while (atomic_load_explicit(&closing, memory_order_seq_cst) > tl_closing)
        yield();
}

static void leave(void)
{
    atomic_fetch_sub_explicit(&busy, 1, memory_order_seq_cst);
    tl_busy--;
}

static void reg(int fd)
{
    for (int i = 0; i < PH_OWN_FD_MAX; i++) {
        int free_slot = 0;
        if (atomic_compare_exchange_strong(&slots[i], &free_slot, fd + 1))
            break;
    }
}

static void unreg(int fd)
{
    for (int i = 0; i < PH_OWN_FD_MAX; i++) {
        int mine = fd + 1;
        if (atomic_compare_exchange_strong(&slots[i], &mine, 0))
            break;
    }
}

/* The lowest number a kept descriptor moves to: PH_OWN_FD_FLOOR, or three
 * quarters of a lower soft limit on open files.  Not beyond the floor
 * when the limit is huge: the kernel sizes a process's descriptor table
 * by its highest descriptor. */
static int floor_fd(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return PH_OWN_FD_FLOOR;
    rlim_t q = rl.rlim_cur / 4 * 3;
    return q < PH_OWN_FD_FLOOR ? (int)q : PH_OWN_FD_FLOOR;
}

int ph_own_fd_keep(int fd)
{
    if (fd < 0)
        return fd;
    int lo = floor_fd();
    if (fd < lo) {
        int high = fcntl(fd, F_DUPFD_CLOEXEC, lo);
        if (high >= 0) {
            close(fd);
            fd = high;
        }
    }
    reg(fd);
    return fd;
}

int ph_own_fd_open(const char *path, int flags, unsigned mode)
{
    enter();
    int fd = open(path, flags | O_CLOEXEC, (mode_t)mode);
    int e = errno;
    if (fd >= 0)
        reg(fd);
    leave();
    errno = e;
    return fd;
}

FILE *ph_own_fd_fopen(const char *path, const char *how)
{
    int w = strchr(how, 'w') != NULL;
    int fd = ph_own_fd_open(path, w ? O_WRONLY | O_CREAT | O_TRUNC : O_RDONLY, 0666);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, w ? "w" : "r");
    if (!f) {
        int e = errno;
        ph_own_fd_close(fd);
        errno = e;
    }
    return f;
}

void ph_own_fd_close(int fd)
{
    if (fd < 0)
        return;
    enter();
    unreg(fd);
    /* the system call itself, not transparent mode's close */
    (void)syscall(SYS_close, fd);
    leave();
}

int ph_own_fd_fclose(FILE *f)
{
    if (!f)
        return EOF;
    enter();
    unreg(fileno(f));
    int rc = fclose(f);
    leave();
    return rc;
}

void ph_own_fd_program_begin(void)
{
    tl_closing++;
    for (;;) {
        atomic_fetch_add_explicit(&closing, 1, memory_order_seq_cst);
        if (atomic_load_explicit(&busy, memory_order_seq_cst) <= tl_busy)
            return;
        atomic_fetch_sub_explicit(&closing, 1, memory_order_seq_cst);
        while (atomic_load_explicit(&busy, memory_order_seq_cst) > tl_busy)
            yield();
    }
}

void ph_own_fd_program_end(void)
{
    atomic_fetch_sub_explicit(&closing, 1, memory_order_seq_cst);
    tl_closing--;
}

void ph_own_fd_fork_child(void)
{
    atomic_store(&busy, tl_busy);
    atomic_store(&closing, tl_closing);
}

int ph_own_fd_is(int fd)
{
    if (fd < 0)
        return 0;
    for (int i = 0; i < PH_OWN_FD_MAX; i++)
        if (atomic_load_explicit(&slots[i], memory_order_acquire) == fd + 1)
            return 1;
    return 0;
}

int ph_own_fd_list(int lo, int hi, int *out, int max)
{
    int n = 0;
    for (int i = 0; i < PH_OWN_FD_MAX; i++) {
        int fd = atomic_load_explicit(&slots[i], memory_order_acquire) - 1;
        if (fd < 0 || fd < lo || fd > hi || n >= max)
            continue;
        int k = n++;
        while (k > 0 && out[k - 1] > fd) { /* insertion: ascending */
            out[k] = out[k - 1];
            k--;
        }
        out[k] = fd;
    }
    return n;
}
