/*
 * syscalls.c -- system calls and stdio on shared memory, where the kernel
 * does not wait for a page.
 *
 * With userfaultfd (root, or vm.unprivileged_userfaultfd=1, or access to
 * /dev/userfaultfd) a kernel access to an inaccessible shared page waits
 * for the service thread like any fault, and read(fd, shared, n) just
 * works.  Two mechanisms leave the kernel's own accesses failing with
 * EFAULT instead: page protection (cluster_fault=sigsegv), and a
 * userfaultfd opened for user-mode faults only -- what an unprivileged
 * process gets on a default Debian or RHEL system ("userfaultfd-user").
 * Under them (ph_dsm_kernel_prep set), the calls that copy through a
 * caller's buffer (base/buffer_calls.h: read, pread, readv, recv, fread,
 * write, fwrite, ... and their _FORTIFY_SOURCE checkers) first make the
 * part of the buffer that lies in the arena accessible from user space,
 * the way the program's own access would (touch.c): a load of a byte per
 * page, and when the kernel will write the buffer a store of the same
 * byte, so that the page becomes a written page whose diff holds what the
 * kernel stored.  Pages in no allocation are not touched -- the kernel's
 * EFAULT stays -- and a call on private memory costs two comparisons.
 * The libraries the program uses (MPI's sockets, libgfortran's I/O) get
 * the same wrappers, since they are found before libc's.
 */
/* First: it defines read() and the others (see its comment). */
#include "base/buffer_calls.h"

#include "cluster/cluster.h"

ph_dsm *_Atomic ph_dsm_kernel_prep;

static void ph_bc_prepare(const void *buf, size_t len, int kernel_writes)
{
    ph_dsm_touch(atomic_load_explicit(&ph_dsm_kernel_prep,
                                      memory_order_acquire),
                 buf, len, kernel_writes);
}
