/*
 * hot.c -- which of the program's allocations become hot blocks, and
 * serving and releasing them (see hot.h; the interposed functions are in
 * malloc.c and mmap.c, the table in blocks.c, the real functions in
 * realsym.c).
 *
 * WHICH REQUESTS
 *   A request of at least `hot_threshold` bytes (default 1 MiB) made by the
 *   program -- any caller outside this library: the executable,
 *   libgfortran, libstdc++'s operator new, libc's strdup... -- is served by
 *   ph_alloc() with the `placement` tunable (ph_api_alloc_hot: a placement
 *   the kernel cannot hold per range binds the block rather than faulting
 *   it in) and registered as a hot area
 *   "heap#N (SIZE) caller" (mmap: "mmap#N").  Not hot:
 *   - before ph_preload_ready() (preload.c's constructor) and after its
 *     destructor: the threshold reads as 0;
 *   - pagehome's own requests: ph_preload_is_internal(return address) is
 *     1 for any caller inside this library's text (found once with
 *     dl_iterate_phdr);
 *   - requests made while this thread is already inside a call that the
 *     interposition makes into pagehome (ph_heap_depth > 0: ph_alloc,
 *     ph_area_register/unregister, ph_free, dladdr, option reads), which
 *     reach other libraries (hwloc, libc's stdio);
 *   - the OpenMP runtime's own (caller inside libomp / libgomp / libiomp,
 *     found with dladdr): not the program's data, and libomp makes some
 *     while holding its locks, which registering an area could need;
 *   - sizes whose page rounding overflows.
 *   The configuration (threshold, placement, engine on/off) is read once,
 *   by the first request after ready.  When the `engine` tunable is off,
 *   blocks are placed but not registered (as preload.c does for static
 *   segments).
 *
 * SERVING
 *   ph_alloc blocks are 4 KiB aligned, fresh zeroed mmap memory that is
 *   never touched here (calloc needs no memset), so first-touch and lazy
 *   bindings see the program's own first touch.  A larger alignment
 *   over-allocates by align - 4 KiB and hands out the aligned address
 *   inside; the table (blocks.c) maps it back to the ph_alloc base.  A
 *   failed placement or registration falls back to the real allocator
 *   (said once on stderr); errno is preserved on every hot path.
 *
 * LOCKS AND fork()
 *   A read-write "gate" is held for reading around every call made into
 *   pagehome, and for writing across fork() (fork.c takes it first, then
 *   the engine's locks and the table's mutex): a child never starts with
 *   one of pagehome's own locks (ph_alloc's registry, the engine's) taken
 *   by a thread of the parent that this file sent there.  Writers are
 *   preferred, so that a fork is not starved by threads allocating large
 *   blocks in a loop; read locks never nest (ph_heap_depth keeps the
 *   interposition from re-entering itself).  The child starts the gate
 *   afresh (glibc's rwlock checks the writer's TID on unlock, and the
 *   child's thread has another).
 *
 * COUNTERS
 *   blocks and bytes served, large requests passed to the real allocator,
 *   placement failures (ph_heap_stats*, preload.c's report).
 */
#include "preload/hot.h"

#include "preload/preload.h"
#include "preload/realsym.h"
#include "preload/reuse.h"

#include "pagehome.h"

#include "api/transparent.h"

#include "base/file.h"
#include "base/log.h"
#include "config/options.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define PAGE PH_HOT_PAGE_BYTES

__thread int ph_heap_depth __attribute__((tls_model("initial-exec")));

/* The table's storage: the real mmap, never the interposed malloc. */
static void *table_map(size_t bytes)
{
    void *m = ph_real_mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return m == MAP_FAILED ? NULL : m;
}

static void table_unmap(void *mem, size_t bytes)
{
    ph_real_munmap(mem, bytes);
}

ph_blocks ph_heap_blocks = PH_BLOCKS_INIT(table_map, table_unmap);

static atomic_uint_least64_t served_blocks, served_bytes, large_passed,
    hot_failed;
static atomic_uint serial;

/* ------------------------------------------------------------------ */
/* Is the caller pagehome itself?                                      */
/* ------------------------------------------------------------------ */

static atomic_int self_known;
static uintptr_t self_lo, self_hi; /* our executable segments' span */

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    uintptr_t me = (uintptr_t)arg;
    int mine = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && me >= lo && me < lo + ph->p_memsz)
            mine = 1;
    }
    if (!mine)
        return 0;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (a < lo)
            lo = a;
        if (a + ph->p_memsz > hi)
            hi = a + ph->p_memsz;
    }
    self_lo = lo;
    self_hi = hi;
    return 1;
}

static void learn_self(void)
{
    /* Idempotent: racing threads compute the same values. */
    dl_iterate_phdr(find_self, (void *)(uintptr_t)&find_self);
    atomic_store_explicit(&self_known, 1, memory_order_release);
}

int ph_preload_is_internal(const void *ra)
{
    if (!atomic_load_explicit(&self_known, memory_order_acquire))
        learn_self();
    uintptr_t a = (uintptr_t)ra;
    return a >= self_lo && a < self_hi;
}

/* ------------------------------------------------------------------ */
/* The gate, and fork()                                                */
/* ------------------------------------------------------------------ */

static pthread_rwlock_t gate = PTHREAD_RWLOCK_INITIALIZER;

void ph_hot_fork_prepare(void)
{
    pthread_rwlock_wrlock(&gate);
}

void ph_hot_fork_parent(void)
{
    pthread_rwlock_unlock(&gate);
}

static void gate_init(void)
{
    pthread_rwlockattr_t a;
    pthread_rwlockattr_init(&a);
    pthread_rwlockattr_setkind_np(&a,
                                  PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&gate, &a);
    pthread_rwlockattr_destroy(&a);
}

void ph_hot_fork_child(void)
{
    gate_init();
}

/* Before main: no other thread can be using the gate yet. */
__attribute__((constructor)) static void hot_start(void)
{
    gate_init();
    if (!atomic_load(&self_known))
        learn_self();
}

/* ------------------------------------------------------------------ */
/* Configuration                                                       */
/* ------------------------------------------------------------------ */

atomic_size_t ph_hot_threshold; /* 0 until the library is ready */
static atomic_int engine_on;
static ph_placement_t placement;
static const ph_placement_t *placement_p;

/* A block leaving the reuse cache (called with the gate held). */
static void release_kept(void *base, struct ph_hot *area)
{
    if (area)
        ph_area_unregister(area);
    if (ph_free(base) != 0) {
        static atomic_int warned;
        ph_warn_once(&warned, "transparent mode: cannot release the block "
                     "at %p: %s (said once)", base, ph_last_error());
    }
}

/* MemAvailable and MemTotal of /proc/meminfo, in bytes.  0 or -1. */
static int read_meminfo(unsigned long long *avail, unsigned long long *total)
{
    char buf[8192];
    if (ph_read_text("/proc/meminfo", buf, sizeof buf) < 0)
        return -1;
    const char *a = strstr(buf, "MemAvailable:"), *t = strstr(buf, "MemTotal:");
    if (!a || !t)
        return -1;
    *avail = strtoull(a + strlen("MemAvailable:"), NULL, 10) << 10;
    *total = strtoull(t + strlen("MemTotal:"), NULL, 10) << 10;
    return 0;
}

/* Called with ph_heap_depth raised, once ready. */
static void learn_config(void)
{
    int64_t t = ph_opt_int(PH_OPT_HOT_THRESHOLD);
    const char *text = ph_opt_str(PH_OPT_PLACEMENT);
    static pthread_mutex_t once = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&once);
    if (!atomic_load(&ph_hot_threshold)) {
        if (ph_placement_parse(&placement, text && *text ? text : "first-touch") == 0)
            placement_p = &placement;
        else
            ph_warn("transparent mode: placement \"%s\": %s (using the "
                    "default)", text ? text : "", ph_last_error());
        atomic_store(&engine_on, strcmp(ph_opt_str(PH_OPT_ENGINE), "off") != 0);
        int64_t keep = ph_opt_int(PH_OPT_HEAP_REUSE);
        ph_reuse_configure(keep > 0 ? (size_t)keep : 0, release_kept, read_meminfo,
                           100000000ull);
        atomic_store(&ph_hot_threshold, t > 0 ? (size_t)t : ((size_t)1 << 20));
    }
    pthread_mutex_unlock(&once);
}

/* The threshold, or 0 when nothing may be hot right now. */
static size_t threshold_now(void)
{
    if (ph_heap_depth || !ph_preload_ready())
        return 0;
    size_t t = atomic_load_explicit(&ph_hot_threshold, memory_order_relaxed);
    if (!t) {
        ph_heap_depth++;
        learn_config();
        ph_heap_depth--;
        t = atomic_load(&ph_hot_threshold);
    }
    return t;
}

void ph_hot_note_large(size_t size)
{
    size_t t = atomic_load_explicit(&ph_hot_threshold, memory_order_relaxed);
    if (t && size >= t)
        atomic_fetch_add(&large_passed, 1);
}

/* ------------------------------------------------------------------ */
/* Names and callers                                                   */
/* ------------------------------------------------------------------ */

static void size_text(char *buf, size_t len, size_t n)
{
    if (n >= ((size_t)1 << 30) && n % ((size_t)1 << 30) == 0)
        snprintf(buf, len, "%zu GiB", n >> 30);
    else if (n >= ((size_t)1 << 20) && n % ((size_t)1 << 20) == 0)
        snprintf(buf, len, "%zu MiB", n >> 20);
    else if (n >= 1024 && n % 1024 == 0)
        snprintf(buf, len, "%zu KiB", n >> 10);
    else
        snprintf(buf, len, "%zu B", n);
}

static void block_name(char *buf, size_t len, int kind, unsigned id,
                       size_t size, const void *ra)
{
    char sz[32], who[48] = "";
    size_text(sz, sizeof sz, size);
    Dl_info di;
    if (ra && dladdr(ra, &di)) {
        if (di.dli_sname && di.dli_saddr)
            snprintf(who, sizeof who, " %s+%#lx", di.dli_sname,
                     (unsigned long)((uintptr_t)ra - (uintptr_t)di.dli_saddr));
        else if (di.dli_fname) {
            const char *f = strrchr(di.dli_fname, '/');
            snprintf(who, sizeof who, " %s+%#lx", f ? f + 1 : di.dli_fname,
                     (unsigned long)((uintptr_t)ra - (uintptr_t)di.dli_fbase));
        }
    }
    snprintf(buf, len, "%s#%u (%s)%s", kind == PH_BLOCK_MMAP ? "mmap" : "heap",
             id, sz, who);
}

/* 1 when ra is inside the OpenMP runtime (libomp, libgomp, libiomp): its
 * own large allocations (thread pools, task queues) are not the
 * program's data, and it may make them while holding its own locks --
 * which registering a hot area could need (the simulated machine asks the
 * runtime for the thread's number). */
static int from_openmp_runtime(const void *ra)
{
    Dl_info di;
    if (!ra || !dladdr(ra, &di) || !di.dli_fname)
        return 0;
    const char *f = strrchr(di.dli_fname, '/');
    f = f ? f + 1 : di.dli_fname;
    return strncmp(f, "libomp", 6) == 0 || strncmp(f, "libgomp", 7) == 0 ||
           strncmp(f, "libiomp", 7) == 0;
}

/* ------------------------------------------------------------------ */
/* Serving and releasing                                               */
/* ------------------------------------------------------------------ */

/* capacity >= size: the bytes the block has room for (realloc headroom). */
static void *hot_alloc(size_t size, size_t capacity, size_t align, int kind, unsigned flags,
                       const void *ra)
{
    size_t t = threshold_now();
    if (!t || size < t)
        return NULL;
    if (ph_preload_is_internal(ra))
        return NULL;
    ph_heap_depth++;
    int runtime = from_openmp_runtime(ra);
    ph_heap_depth--;
    if (runtime) {
        atomic_fetch_add(&large_passed, 1);
        return NULL;
    }
    size_t usable = (capacity + PAGE - 1) & ~(PAGE - 1);
    size_t extra = align > PAGE ? align - PAGE : 0;
    if (usable < capacity || usable + extra < usable) {
        atomic_fetch_add(&large_passed, 1);
        return NULL;
    }
    int saved = errno;
    ph_heap_depth++;
    pthread_rwlock_rdlock(&gate);
    void *base = NULL;
    ph_hotarea_t *kept_area = NULL;
    if (kind == PH_BLOCK_HEAP && !(flags & PH_HOT_ZEROED) && extra == 0)
        base = ph_reuse_take(usable, &kept_area);
    if (!base)
        base = ph_api_alloc_hot(usable + extra, placement_p);
    if (!base) {
        static atomic_int warned;
        ph_warn_once(&warned, "transparent mode: a %zu-byte allocation "
                     "cannot be placed (%s): served by the real allocator "
                     "(said once)", size, ph_last_error());
        atomic_fetch_add(&hot_failed, 1);
        pthread_rwlock_unlock(&gate);
        ph_heap_depth--;
        errno = saved;
        return NULL;
    }
    uintptr_t user = ((uintptr_t)base + align - 1) & ~(uintptr_t)(align - 1);
    ph_block b = {.user = user, .base = base, .size = size,
                  .usable = usable, .mapped = usable + extra, .left = usable,
                  .area = kept_area, .kind = kind};
    unsigned id = atomic_fetch_add(&serial, 1);
    if (b.area && ph_api_area_idle(b.area, 0) != 0) {
        /* a reused block keeps its area, watched again */
        ph_area_unregister(b.area);
        b.area = NULL;
    }
    if (!b.area && atomic_load(&engine_on)) {
        char name[64];
        block_name(name, sizeof name, kind, id, size, ra);
        b.area = ph_area_register((void *)user, usable, name);
        if (!b.area) {
            static atomic_int warned;
            ph_warn_once(&warned, "transparent mode: cannot watch %s: %s "
                         "(said once)", name, ph_last_error());
        }
    }
    if (ph_blocks_insert(&ph_heap_blocks, &b) != 0) {
        if (b.area)
            ph_area_unregister(b.area);
        ph_free(base);
        atomic_fetch_add(&hot_failed, 1);
        pthread_rwlock_unlock(&gate);
        ph_heap_depth--;
        errno = saved;
        return NULL;
    }
    atomic_fetch_add(&served_blocks, 1);
    atomic_fetch_add(&served_bytes, size);
    pthread_rwlock_unlock(&gate);
    ph_heap_depth--;
    errno = saved;
    return (void *)user;
}

void *ph_hot_alloc(size_t size, size_t align, int kind, unsigned flags, const void *ra)
{
    return hot_alloc(size, size, align, kind, flags, ra);
}

void *ph_hot_alloc_grow(size_t size, size_t old_usable, const void *ra)
{
    enum { MAX_HEADROOM = 1u << 30 };
    size_t cap = size;
    if (placement_p && placement_p->policy == PH_POLICY_FIRST_TOUCH && old_usable < size) {
        size_t twice = old_usable * 2 > old_usable ? old_usable * 2 : size;
        cap = twice > size ? twice : size;
        if (cap - size > MAX_HEADROOM)
            cap = size + MAX_HEADROOM;
    }
    return hot_alloc(size, cap, PAGE, PH_BLOCK_HEAP, 0, ra);
}

void ph_hot_release(const ph_block *b, int keep)
{
    int saved = errno;
    ph_heap_depth++;
    pthread_rwlock_rdlock(&gate);
    /* a heap block is kept for the next request of its size (reuse.c),
     * still registered when its area is what a reuse would register */
    ph_hotarea_t *area = b->area;
    if (keep && b->kind == PH_BLOCK_HEAP) {
        if (area && !(b->user == (uintptr_t)b->base && b->usable == b->mapped)) {
            ph_area_unregister(area);
            area = NULL;
        }
        /* kept, it is no evidence: out of the engine's watch until a
         * request takes it (a stopped engine would start over at every
         * new one otherwise, engine.c mark_fresh) */
        if (area && ph_api_area_idle(area, 1) != 0) {
            ph_area_unregister(area);
            area = NULL;
        }
        if (ph_reuse_put(b->base, b->mapped, area)) {
            pthread_rwlock_unlock(&gate);
            ph_heap_depth--;
            errno = saved;
            return;
        }
    }
    if (area)
        ph_area_unregister(area);
    if (ph_free(b->base) != 0) {
        static atomic_int warned;
        ph_warn_once(&warned, "transparent mode: cannot release the block "
                     "at %p: %s (said once)", b->base, ph_last_error());
    }
    pthread_rwlock_unlock(&gate);
    ph_heap_depth--;
    errno = saved;
}

void ph_hot_unwatch(ph_hotarea_t *area)
{
    int saved = errno;
    ph_heap_depth++;
    pthread_rwlock_rdlock(&gate);
    ph_area_unregister(area);
    pthread_rwlock_unlock(&gate);
    ph_heap_depth--;
    errno = saved;
}

/* ------------------------------------------------------------------ */
/* Counters                                                            */
/* ------------------------------------------------------------------ */

void ph_heap_stats(uint64_t *hot_blocks, uint64_t *hot_bytes)
{
    if (hot_blocks)
        *hot_blocks = atomic_load(&served_blocks);
    if (hot_bytes)
        *hot_bytes = atomic_load(&served_bytes);
}

void ph_heap_stats_more(uint64_t *live, uint64_t *live_b,
                        uint64_t *passed, uint64_t *failed)
{
    if (live)
        *live = ph_blocks_live(&ph_heap_blocks);
    if (live_b)
        *live_b = ph_blocks_live_bytes(&ph_heap_blocks);
    if (passed)
        *passed = atomic_load(&large_passed);
    if (failed)
        *failed = atomic_load(&hot_failed);
}
