/*
 * syscalls.c -- system calls on watched pages, in transparent mode.
 *
 * A page the sampler has protected (PROT_NONE) traps when the program
 * touches it, but a system call that copies to or from it fails with
 * EFAULT instead: the kernel does not raise SIGSEGV for its own accesses.
 * A program that read(2)s into a static or heap array that pagehome
 * watches would see an error it never had.  So the data-moving calls are
 * wrapped: first the buffer is touched once per page from user space
 * (a read: it traps on a watched page, which the handler opens; it costs
 * nothing on an open one), then the real call runs; if it still fails with
 * EFAULT (the memory manager re-armed the page in between), touch and try
 * again, a bounded number of times.  A buffer that is really bad (a hole):
 * the kernel's copy would have failed with EFAULT, not SIGSEGV: to keep
 * that, pages are touched only when the whole buffer is mapped (mincore
 * succeeds), else the call goes straight through and fails as before.
 *
 * The wrappers themselves are base/buffer_calls.h's (read, write, the
 * p-, v- and 64-bit-offset variants, the socket calls, fread, fwrite and
 * the _FORTIFY_SOURCE checkers); this file gives them the touch.
 *
 * NUMA queries and moves.  A page the userfaultfd mechanism watches is
 * out of the page table (moved to the sampler's stash), and before Linux
 * 6.5 a PROT_NONE page is treated the same way: move_pages(2) reports it
 * absent (status -ENOENT) and does not move it, get_mempolicy(MPOL_F_ADDR)
 * fails with EFAULT on it.  A program that checks where its pages are (or
 * moves them) would see watched pages vanish.  Touching would count the
 * caller as an accessor of every page it asks about, so these take a
 * query hold (no arm watches a page until it ends), open the watched
 * pages *without* sampling them (ph_sampler_open_pages, which also waits
 * for runs other threads are opening or arming), call the kernel, and
 * end the hold: the kernel sees every page where it is.  Only calls on
 * this process are touched.  Wrapped: move_pages, get_mempolicy
 * (libnuma's numa_move_pages calls move_pages).  pagehome's own mover
 * goes through the same move_pages.
 *
 * The program's own placement.  A program that binds a range with
 * mbind(2) (libnuma's numa_tonode_memory, numa_interleave_memory,
 * numa_alloc_onnode... all call it) has placed that data on purpose --
 * a table on the HBM or CXL node, a buffer next to a device -- and the
 * kernel's NUMA balancing leaves such ranges alone.  So does pagehome:
 * the wrapper opens the watched runs of the range (so that MPOL_MF_MOVE
 * finds the pages in place) and, when the kernel accepted the policy,
 * tells the sampler that the range is the program's
 * (ph_sampler_note_policy): it is never watched again, so the engine
 * gets no samples of it and moves none of its pages.  MPOL_DEFAULT hands
 * the range back.  pagehome's own binds (the placements, LOCAL) come from
 * inside this library and go straight to the kernel.  set_mempolicy(2)
 * on the program's initial thread (libnuma's numa_set_membind...) is the
 * process's policy, which its later threads inherit: it goes to the OS
 * table (the engine keeps to a binding) and the static segments are
 * handed to it (ph_preload_static_policy).  Not seen: raw syscall(2).
 */
/* First: it defines read() and the others (see its comment). */
#include "base/buffer_calls.h"

#include "preload/preload.h"

#include "api/transparent.h"
#include "base/log.h"

#include "sample/source.h"

#include <numaif.h>
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Open the watched pages of [buf, buf+len) by reading one byte of each,
 * provided the whole range is mapped (checked with mincore, 16 MiB at a
 * time). */
static void touch(const void *buf, size_t len)
{
    if (!buf || len == 0 || !ph_preload_ready())
        return;
    uintptr_t first = (uintptr_t)buf & ~(uintptr_t)4095;
    uintptr_t end = (uintptr_t)buf + len;
    if (end < first)
        return;
    unsigned char vec[4096];
    for (uintptr_t q = first; q < end; q += sizeof vec * 4096) {
        size_t span = end - q < sizeof vec * 4096 ? end - q : sizeof vec * 4096;
        if (mincore((void *)q, span, vec) != 0)
            return; /* a hole: let the kernel say EFAULT */
    }
    for (uintptr_t p = first; p < end; p += 4096) {
        uintptr_t at = p > (uintptr_t)buf ? p : (uintptr_t)buf;
        (void)*(volatile const unsigned char *)at;
    }
}

static void ph_bc_prepare(const void *buf, size_t len, int kernel_writes)
{
    (void)kernel_writes; /* any access opens a watched page */
    touch(buf, len);
}

/* ---- move_pages, get_mempolicy ---------------------------------------------- */

static int is_self(int pid)
{
    return pid == 0 || pid == getpid();
}

PH_BC_EXPORT long move_pages(int pid, unsigned long count, void **pages,
                          const int *nodes, int *status, int flags)
{
    int self = is_self(pid) && ph_preload_ready() && pages && status;
    if (!self)
        return syscall(SYS_move_pages, pid, count, pages, nodes, status, flags);
    int saved = errno;
    ph_sampler_query_begin();
    (void)ph_sampler_open_pages(count, pages);
    errno = saved;
    long r = syscall(SYS_move_pages, pid, count, pages, nodes, status, flags);
    saved = errno;
    ph_sampler_query_end();
    errno = saved;
    return r;
}

PH_BC_EXPORT long mbind(void *addr, unsigned long len, int mode,
                         const unsigned long *nodemask, unsigned long maxnode,
                         unsigned flags)
{
    if (!ph_preload_ready() || ph_preload_is_internal(__builtin_return_address(0)))
        return syscall(SYS_mbind, addr, len, mode, nodemask, maxnode, flags);
    /* the mode without MPOL_F_STATIC_NODES and the other flags */
    int own = (mode & 0xff) != MPOL_DEFAULT;
    int saved = errno;
    ph_sampler_query_begin();
    (void)ph_sampler_open_range(addr, len);
    errno = saved;
    long r = syscall(SYS_mbind, addr, len, mode, nodemask, maxnode, flags);
    saved = errno;
    if (r == 0)
        ph_sampler_note_policy(addr, len, own);
    ph_sampler_query_end();
    errno = saved;
    return r;
}

/* The program's initial thread sets the process's memory policy (threads
 * it starts afterwards, the OpenMP team's among them, inherit it): what
 * the kernel made of it (relative and static node flags applied) is
 * asked back and passed on.  Another thread's policy is its own. */
PH_BC_EXPORT long set_mempolicy(int mode, const unsigned long *nodemask,
                                unsigned long maxnode)
{
    long r = syscall(SYS_set_mempolicy, mode, nodemask, maxnode);
    if (r != 0 || !ph_preload_ready() ||
        ph_preload_is_internal(__builtin_return_address(0)) ||
        (pid_t)syscall(SYS_gettid) != getpid())
        return r;
    int saved = errno;
    int now = 0;
    unsigned long mask[1024 / (8 * sizeof(unsigned long))];
    if (syscall(SYS_get_mempolicy, &now, mask, (unsigned long)1024, NULL, 0ul) == 0) {
        now &= 0xff; /* without MPOL_F_STATIC_NODES and the other flags */
        int nodes[64], n = 0;
        for (int id = 0; now == MPOL_BIND && id < 1024 && n < 64; id++)
            if ((mask[id / (8 * (int)sizeof mask[0])] >> (id % (8 * (int)sizeof mask[0]))) & 1u)
                nodes[n++] = id;
        int own = now != MPOL_DEFAULT;
        if (ph_api_process_policy(own, n ? nodes : NULL, n) == 0)
            ph_preload_static_policy(own);
        else
            ph_warn("transparent mode: the program's memory policy: %s",
                    ph_last_error());
    }
    errno = saved;
    return r;
}

PH_BC_EXPORT long get_mempolicy(int *mode, unsigned long *nodemask,
                             unsigned long maxnode, void *addr, unsigned flags)
{
    if (!(flags & MPOL_F_ADDR) || !ph_preload_ready())
        return syscall(SYS_get_mempolicy, mode, nodemask, maxnode, addr, flags);
    int saved = errno;
    ph_sampler_query_begin();
    (void)ph_sampler_open_pages(1, &addr);
    errno = saved;
    long r = syscall(SYS_get_mempolicy, mode, nodemask, maxnode, addr, flags);
    saved = errno;
    ph_sampler_query_end();
    errno = saved;
    return r;
}
