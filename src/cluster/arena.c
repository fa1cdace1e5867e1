/*
 * arena.c -- the shared arena: one memfd per rank, mapped twice, the
 * arena view at the same virtual address in every rank.
 *
 * The memfd is as large as the arena and sparse (ftruncate only): a page
 * exists when it was written, fetched or populated, and punching it out
 * returns the memory.  The WINDOW view (kernel-chosen address, read-write)
 * is what MPI and the service thread use; the ARENA view is what the
 * program uses, PROT_NONE outside allocations.
 *
 * The same address everywhere: every rank tries to reserve the arena at a
 * candidate address with MAP_FIXED_NOREPLACE, the ranks agree with one
 * MPI_Allreduce, and on disagreement everybody releases and tries the
 * next candidate.  The candidates lie where neither executables, heaps,
 * thread stacks nor shared libraries are placed by Linux x86-64, and
 * where AddressSanitizer keeps application memory (0x2000_0000_0000 and
 * up); the last one (0x5600_0000_0000 + ...) is inside ThreadSanitizer's
 * application range.  As a last resort rank 0's kernel-chosen address is
 * offered to everybody.  If none works, init fails naming the ranks.
 *
 * Per-page tables (state, home override, twin slot, home write history,
 * page info, last home move, the cost rule's evidence; a bit each for
 * "in an allocation" and "pristine") are anonymous MAP_NORESERVE mappings
 * over the whole arena: about 53 bytes per 4 KiB page of address space,
 * physical only where pages are touched.
 */
#include "cluster/cluster.h"

#include "base/error.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void *anon(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static size_t live_bytes(const ph_dsm *c)
{
    return (c->npages + 63) / 64 * sizeof(uint64_t);
}

int ph_dsm_arena_create(ph_dsm *c)
{
    c->npages = c->arena_bytes >> PH_DSM_PAGE_SHIFT;
    c->memfd = memfd_create("pagehome-arena", MFD_CLOEXEC);
    if (c->memfd < 0)
        return ph_fail(errno, "memfd_create: %s", strerror(errno));
    if (ftruncate(c->memfd, (off_t)c->arena_bytes) < 0)
        return ph_fail(errno, "ftruncate of the arena memfd to %zu bytes: "
                       "%s", c->arena_bytes, strerror(errno));
    void *w = mmap(NULL, c->arena_bytes, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_NORESERVE, c->memfd, 0);
    if (w == MAP_FAILED)
        return ph_fail(errno, "mapping the arena's window view (%zu "
                       "bytes): %s", c->arena_bytes, strerror(errno));
    c->wview = w;
    c->state = anon(c->npages);
    c->home_ovr = anon(c->npages * sizeof *c->home_ovr);
    c->twin_slot = anon(c->npages * sizeof *c->twin_slot);
    c->home_hist = anon(c->npages * sizeof *c->home_hist);
    c->pinfo = anon(c->npages * sizeof *c->pinfo);
    c->moved_at = anon(c->npages * sizeof *c->moved_at);
    c->evid = anon(c->npages * sizeof *c->evid);
    c->live = anon(live_bytes(c));
    c->pristine = anon(live_bytes(c));
    if (!c->state || !c->home_ovr || !c->twin_slot || !c->home_hist ||
        !c->pinfo || !c->moved_at || !c->evid || !c->live || !c->pristine)
        return ph_fail(ENOMEM, "mapping the arena's page tables (%zu "
                       "pages): %s", c->npages, strerror(errno));
    return 0;
}

static void *try_at(ph_dsm *c, uintptr_t addr)
{
    void *p = mmap((void *)addr, c->arena_bytes, PROT_NONE,
                   MAP_SHARED | MAP_FIXED_NOREPLACE | MAP_NORESERVE,
                   c->memfd, 0);
    if (p == MAP_FAILED)
        return NULL;
    if ((uintptr_t)p != addr) {     /* a kernel that ignores the flag */
        munmap(p, c->arena_bytes);
        return NULL;
    }
    return p;
}

int ph_dsm_arena_place(ph_dsm *c)
{
#if defined(__SANITIZE_THREAD__)
#define PH_DSM_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PH_DSM_TSAN 1
#endif
#endif
#ifdef PH_DSM_TSAN
    /* ThreadSanitizer only maps shadow memory for its application ranges
     * and turns a fixed mapping elsewhere into a fatal error */
    static const uintptr_t cand[] = {0x567000000000ull};
#else
    static const uintptr_t cand[] = {
        0x200000000000ull, 0x280000000000ull, 0x300000000000ull,
        0x380000000000ull, 0x400000000000ull, 0x480000000000ull,
        0x567000000000ull,
    };
#endif
    size_t nc = sizeof cand / sizeof cand[0];
    for (size_t i = 0; i <= nc; i++) {
        uintptr_t want;
        if (i < nc) {
            want = cand[i];
            if (want + c->arena_bytes < want)
                continue;
        } else {
            /* rank 0's kernel-chosen address */
            uint64_t a = 0;
            if (c->rank == 0) {
                void *p = mmap(NULL, c->arena_bytes, PROT_NONE,
                               MAP_SHARED | MAP_NORESERVE, c->memfd, 0);
                if (p != MAP_FAILED) {
                    a = (uint64_t)(uintptr_t)p;
                    munmap(p, c->arena_bytes);
                }
            }
            MPI_Bcast(&a, 1, MPI_UINT64_T, 0, c->comm);
            if (!a)
                break;
            want = (uintptr_t)a;
        }
        void *p = try_at(c, want);
        int ok = p != NULL, all = 0;
        MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, c->comm);
        if (all) {
            c->arena = p;
            return 0;
        }
        if (p)
            munmap(p, c->arena_bytes);
    }
    return ph_fail(ENOMEM, "no address range of %zu bytes is free in every "
                   "rank for the shared arena (lower cluster_arena_size)",
                   c->arena_bytes);
}

void ph_dsm_arena_destroy(ph_dsm *c)
{
    if (c->arena)
        munmap(c->arena, c->arena_bytes);
    if (c->wview)
        munmap(c->wview, c->arena_bytes);
    if (c->state)
        munmap(c->state, c->npages);
    if (c->home_ovr)
        munmap(c->home_ovr, c->npages * sizeof *c->home_ovr);
    if (c->twin_slot)
        munmap(c->twin_slot, c->npages * sizeof *c->twin_slot);
    if (c->home_hist)
        munmap(c->home_hist, c->npages * sizeof *c->home_hist);
    c->home_hist = NULL;
    if (c->pinfo)
        munmap(c->pinfo, c->npages * sizeof *c->pinfo);
    c->pinfo = NULL;
    if (c->moved_at)
        munmap(c->moved_at, c->npages * sizeof *c->moved_at);
    c->moved_at = NULL;
    if (c->evid)
        munmap(c->evid, c->npages * sizeof *c->evid);
    c->evid = NULL;
    if (c->live)
        munmap((void *)c->live, live_bytes(c));
    c->live = NULL;
    if (c->pristine)
        munmap(c->pristine, live_bytes(c));
    c->pristine = NULL;
    if (c->memfd >= 0)
        close(c->memfd);
    c->arena = c->wview = NULL;
    c->state = NULL;
    c->home_ovr = NULL;
    c->twin_slot = NULL;
    c->memfd = -1;
}

/* The bits of pages [*p, end) in the word of *p (one bit per page, 64 a
 * word); *p moves past them. */
static uint64_t word_bits(size_t *p, size_t end, size_t *word)
{
    size_t b = *p % 64, k = end - *p < 64 - b ? end - *p : 64 - b;
    *word = *p / 64;
    *p += k;
    return (k == 64 ? ~(uint64_t)0 : (((uint64_t)1 << k) - 1)) << b;
}

/* Pages [page, page + n) enter (on) or leave an allocation: each word
 * changed atomically, so the bits of a neighbouring allocation never
 * move. */
void ph_dsm_live_mark(ph_dsm *c, size_t page, size_t n, int on)
{
    for (size_t p = page, w; p < page + n;) {
        uint64_t bits = word_bits(&p, page + n, &w);
        if (on)
            atomic_fetch_or_explicit(&c->live[w], bits, memory_order_release);
        else
            atomic_fetch_and_explicit(&c->live[w], ~bits, memory_order_release);
    }
}

void ph_dsm_pristine_mark(ph_dsm *c, size_t page, size_t n, int on)
{
    size_t end = page + n < c->npages ? page + n : c->npages;
    for (size_t p = page, w; p < end;) {
        uint64_t bits = word_bits(&p, end, &w);
        if (on)
            c->pristine[w] |= bits;
        else
            c->pristine[w] &= ~bits;
    }
}
