/*
 * own_fd.c -- pagehome's kept descriptors (see own_fd.h).
 *
 * The table is PH_OWN_FD_MAX atomic slots, -1 when free: registering
 * takes a free slot with a compare-and-swap, the checks read the slots
 * without a lock (a close interposer runs on every close(2) of the
 * program).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "base/own_fd.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <unistd.h>

/* Slots hold fd + 1, so that the zeroed table is empty. */
static atomic_int slots[PH_OWN_FD_MAX];

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
    for (int i = 0; i < PH_OWN_FD_MAX; i++) {
        int free_slot = 0;
        if (atomic_compare_exchange_strong(&slots[i], &free_slot, fd + 1))
            break;
    }
    return fd;
}

void ph_own_fd_close(int fd)
{
    if (fd < 0)
        return;
    for (int i = 0; i < PH_OWN_FD_MAX; i++) {
        int mine = fd + 1;
        if (atomic_compare_exchange_strong(&slots[i], &mine, 0))
            break;
    }
    close(fd);
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
