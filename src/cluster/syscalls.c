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
 * the way the program's own access would: a load of one byte per page,
 * and when the kernel will write the buffer a store of the same byte (an
 * atomic compare-and-swap with itself, which changes no byte, not even
 * one another thread is writing: the page becomes a written page with its
 * twin, and its diff holds what the kernel stored).  Read-ahead and write
 * prediction make the following pages come with the first.  Pages in no
 * allocation (the live bitmap) are not touched -- the kernel's EFAULT
 * stays, rather than a SIGSEGV of the touch -- and neither is anything
 * outside the arena: a call on private memory costs two comparisons.
 * The libraries the program uses (MPI's sockets, libgfortran's I/O) get
 * the same wrappers, since they are found before libc's.
 */
/* First: it defines read() and the others (see its comment). */
#include "base/buffer_calls.h"

#include "cluster/cluster.h"

ph_dsm *_Atomic ph_dsm_kernel_prep;

static void ph_bc_prepare(const void *buf, size_t len, int kernel_writes)
{
    ph_dsm *c = atomic_load_explicit(&ph_dsm_kernel_prep, memory_order_acquire);
    if (!c || !buf || len == 0)
        return;
    uintptr_t base = (uintptr_t)c->arena, top = base + c->arena_bytes;
    uintptr_t lo = (uintptr_t)buf, hi;
    if (__builtin_add_overflow(lo, len, &hi) || hi <= base || lo >= top)
        return;
    if (lo < base)
        lo = base;
    if (hi > top)
        hi = top;
    size_t p0 = (lo - base) >> PH_DSM_PAGE_SHIFT;
    size_t p1 = (hi - base + PH_DSM_PAGE - 1) >> PH_DSM_PAGE_SHIFT;
    for (size_t p = p0; p < p1; p++)
        if (!ph_dsm_live(c, p))
            return;        /* not all shared memory: the kernel decides */
    for (size_t p = p0; p < p1; p++) {
        uintptr_t at = base + (p << PH_DSM_PAGE_SHIFT);
        unsigned char *b = (unsigned char *)(at > lo ? at : lo);
        /* a load, then (for the kernel's writes) a compare-and-swap of
         * the byte with itself, repeated until it stores: an OR of zero
         * would do, but compilers drop it as a no-op (clang 14 at -O3,
         * volatile or not) */
        unsigned char v = *(volatile unsigned char *)b;
        while (kernel_writes &&
               !__atomic_compare_exchange_n(b, &v, v, 0, __ATOMIC_RELAXED,
                                            __ATOMIC_RELAXED))
            ;
    }
}
