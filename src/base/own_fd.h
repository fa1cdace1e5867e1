/*
 * own_fd.h -- the file descriptors pagehome keeps open for as long as it
 * runs inside a program (the userfaultfd sampler's descriptor, the
 * simulated machine's pagemap), which the program must not close.
 *
 * WHY.  A program may close descriptors it never opened: a daemon's
 * "close everything above stderr" (closefrom(3), close_range(2), a close
 * loop up to the limit), a launcher's clean-up.  Closing pagehome's
 * userfaultfd while pages are watched is not a lost sample but lost data:
 * the kernel unregisters the ranges, and a watched run, whose pages sit in
 * the sampler's stash, then reads as fresh zero pages.  And the number,
 * freed, goes to the program's next open(): pagehome's reads and ioctls
 * would then act on the program's file.
 *
 * WHAT.  A descriptor kept here is moved to a high number (at or above
 * PH_OWN_FD_FLOOR, lower when the limit on open files is lower), where it
 * is out of the way of programs that dup2() onto small numbers they chose,
 * and registered; transparent mode's close, close_range, closefrom, dup2
 * and dup3 (src/preload/fds.c) leave the registered ones alone.  Raw
 * system calls (syscall(SYS_close, ...)) are not seen.
 *
 * Lock-free: ph_own_fd_is may be called from any thread at any time,
 * including before anything was registered.  A full table (more than
 * PH_OWN_FD_MAX at once) keeps the descriptor, unregistered.
 */
#ifndef PH_BASE_OWN_FD_H
#define PH_BASE_OWN_FD_H

#define PH_OWN_FD_MAX 16
#define PH_OWN_FD_FLOOR 768

/* Keep fd (close-on-exec): move it to a high number and register it.
 * Returns the descriptor to use from now on (fd itself when it could not
 * be moved); fd < 0 is returned as is. */
int ph_own_fd_keep(int fd);
/* Unregister fd and close it (fd < 0: nothing). */
void ph_own_fd_close(int fd);
/* Whether fd is one of pagehome's kept descriptors. */
int ph_own_fd_is(int fd);
/* The kept descriptors in [lo, hi], ascending, into out (at most max);
 * how many. */
int ph_own_fd_list(int lo, int hi, int *out, int max);

#endif
