/*
 * touch.c -- making a buffer in shared memory accessible before it goes
 * to someone who cannot take a fault on it.
 *
 * A shared page that is not accessible faults when this rank's threads
 * touch it, and the fault is served.  Two others reach shared pages
 * without that: the kernel, where the fault mechanism does not make it
 * wait (page protection, a user-mode-only userfaultfd: the call fails
 * with EFAULT; syscalls.c), and the MPI library, whose progress any
 * thread may drive -- also the one that holds the service role, whose
 * own fault nobody else may serve (mpi_calls.c).  So the calling thread
 * touches the buffer first, the way its own accesses would: a load of
 * one byte per page, and when the buffer will be written a store of the
 * same byte, an atomic compare-and-swap of the byte with itself that
 * changes no byte, not even one another thread writes meanwhile (the
 * page becomes a written page with its twin, and its diff at the next
 * release holds what was stored into it).  Read-ahead and write
 * prediction bring the following pages with the first fault.
 *
 * Nothing is touched unless every page of the buffer's part in the arena
 * is in an allocation (the live bitmap): a bad buffer keeps whatever
 * error the callee gives it rather than a SIGSEGV of the touch.  Nothing
 * outside the arena either -- a buffer in private memory costs two
 * comparisons -- and nothing in a child of fork() (no service thread) or
 * on the thread that holds the service role.
 */
#include "cluster/cluster.h"

void ph_dsm_touch(ph_dsm *c, const void *buf, size_t len, int writes)
{
    if (!c || !buf || len == 0 || ph_dsm_forked)
        return;
    uintptr_t base = (uintptr_t)c->arena, top = base + c->arena_bytes;
    uintptr_t lo = (uintptr_t)buf, hi;
    if (__builtin_add_overflow(lo, len, &hi) || hi <= base || lo >= top)
        return;
    if (!atomic_load(&c->running) || ph_dsm_role_mine(c))
        return;
    if (lo < base)
        lo = base;
    if (hi > top)
        hi = top;
    size_t p0 = (lo - base) >> PH_DSM_PAGE_SHIFT;
    size_t p1 = (hi - base + PH_DSM_PAGE - 1) >> PH_DSM_PAGE_SHIFT;
    for (size_t p = p0; p < p1; p++)
        if (!ph_dsm_live(c, p))
            return;
    for (size_t p = p0; p < p1; p++) {
        uintptr_t at = base + (p << PH_DSM_PAGE_SHIFT);
        unsigned char *b = (unsigned char *)(at > lo ? at : lo);
        /* a load, then (for a buffer to be written) a compare-and-swap of
         * the byte with itself, repeated until it stores: an OR of zero
         * would do, but compilers drop it as a no-op (clang 14 at -O3,
         * volatile or not) */
        unsigned char v = *(volatile unsigned char *)b;
        while (writes &&
               !__atomic_compare_exchange_n(b, &v, v, 0, __ATOMIC_RELAXED,
                                            __ATOMIC_RELAXED))
            ;
    }
}
