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
 * SHORT-LIVED ONES.  pagehome's threads also open files for a moment
 * (/proc/self/pagemap and /proc/kpageflags at every look at huge pages,
 * a thread's /proc stat): ph_own_fd_open registers such a descriptor
 * where it was opened (usually a low number), ph_own_fd_close closes and
 * unregisters it.  Without that, a program closing every descriptor
 * while the engine reads pagemap closes pagehome's, gets its number for
 * its next file, and pagehome's close then closes the program's file.
 * Opening-and-registering and unregistering-and-closing are each one
 * step for the program: its close calls and pagehome's steps never
 * overlap (ph_own_fd_program_begin, _end).
 *
 * Lock-free: ph_own_fd_is may be called from any thread at any time,
 * including before anything was registered.  A full table (more than
 * PH_OWN_FD_MAX at once) keeps the descriptor, unregistered.
 */
#ifndef PH_BASE_OWN_FD_H
#define PH_BASE_OWN_FD_H

#include <stdio.h>

#define PH_OWN_FD_MAX 32
#define PH_OWN_FD_FLOOR 768

/* Keep fd (close-on-exec): move it to a high number and register it.
 * Returns the descriptor to use from now on (fd itself when it could not
 * be moved); fd < 0 is returned as is. */
int ph_own_fd_keep(int fd);
/* Open path (flags | O_CLOEXEC, mode for O_CREAT) as a short-lived
 * descriptor of pagehome's, registered where it is.  The descriptor, or
 * -1 with errno. */
int ph_own_fd_open(const char *path, int flags, unsigned mode);
/* The same as a stdio stream ("r", "w", "re"...); NULL with errno.
 * Close it with ph_own_fd_fclose. */
FILE *ph_own_fd_fopen(const char *path, const char *how);
/* Close fd and unregister it (fd < 0: nothing). */
void ph_own_fd_close(int fd);
/* fclose(f) for a stream of ph_own_fd_fopen; fclose's result. */
int ph_own_fd_fclose(FILE *f);
/* Around each of the program's calls that close or replace descriptors
 * (transparent mode's close, close_range, closefrom, dup2, dup3): begin
 * waits while another thread opens or closes one of pagehome's
 * descriptors, and holds such steps back until end.  Async-signal-safe. */
void ph_own_fd_program_begin(void);
void ph_own_fd_program_end(void);
/* fork() child: only the calling thread is left; what other threads were
 * opening or closing will not finish. */
void ph_own_fd_fork_child(void);
/* Whether fd is one of pagehome's kept descriptors. */
int ph_own_fd_is(int fd);
/* The kept descriptors in [lo, hi], ascending, into out (at most max);
 * how many. */
int ph_own_fd_list(int lo, int hi, int *out, int max);

#endif
