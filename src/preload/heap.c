/*
 * heap.c -- transparent mode's allocator interposition (see preload.h).
 *
 * WHAT IT DOES
 *   libpagehome_preload.so exports the malloc family (malloc, calloc,
 *   realloc, free, posix_memalign, aligned_alloc, memalign, valloc, pvalloc,
 *   malloc_usable_size) and mmap/mmap64/munmap/mremap.  A request of at
 *   least `hot_threshold` bytes made by the program (any caller outside
 *   this library: the executable, libgfortran, libstdc++'s operator new,
 *   libc's strdup...) is served by ph_alloc() with the `placement` tunable
 *   and registered as a hot area "heap#N (SIZE) caller" (mmap: "mmap#N").
 *   Everything else goes to the real allocator, found with
 *   dlsym(RTLD_NEXT, ...).  ph_alloc memory is fresh zeroed mmap memory and
 *   is never touched here (calloc needs no memset), so first-touch and lazy
 *   bindings see the program's own first touch.
 *
 * WHICH BLOCKS ARE HOT: our own table
 *   A hash table (open addressing, keyed by the pointer the program got)
 *   records every hot block: the ph_alloc base, the size asked for, the
 *   usable size (whole 4 KiB pages), the hot area handle.  free() looks a
 *   pointer up only when some hot block lives and the pointer is 4 KiB
 *   aligned (every hot pointer is; glibc's almost never are), so the cost
 *   for ordinary frees is two loads.  ph_alloc_size() is not used for that:
 *   on a foreign pointer it takes ph_alloc's registry lock and records an
 *   error message.  The table's storage comes from the real mmap.  One
 *   mutex guards it; it is never held across a call into pagehome or the
 *   real allocator, and pthread_atfork takes it around fork() so that a
 *   child never inherits it locked.
 *
 * ALIGNMENT
 *   ph_alloc blocks are 4 KiB aligned.  A larger alignment (posix_memalign
 *   with 2 MiB, say) over-allocates by align - 4 KiB and hands out the
 *   aligned address inside; the table maps it back to the ph_alloc base.
 *   Alignments that are not a power of two go to the real allocator.
 *
 * realloc
 *   Hot block: shrinking to at least half of it (and still >= threshold)
 *   stays in place; otherwise a new block (hot if >= threshold), copy,
 *   unregister + ph_free of the old one.  A small block grown to >=
 *   threshold becomes hot (new block, copy of the real usable size, real
 *   free).  The copy touches the new pages from the calling thread.
 *
 * mmap / munmap / mremap
 *   Only mmap(NULL, len >= threshold, PROT_READ|PROT_WRITE,
 *   MAP_PRIVATE|MAP_ANONYMOUS [|MAP_NORESERVE], -1, 0) becomes hot.
 *   munmap of exactly a hot block releases it; a munmap that covers part
 *   of one stops watching it and punches the part (replaced by a PROT_NONE
 *   MAP_NORESERVE mapping: memory returned, addresses kept reserved so
 *   that ph_free can later unmap its whole mapping safely); the block is
 *   released when punches have covered all of it (a program that unmaps
 *   the same pages twice keeps the reservation until exit).  Parts of a
 *   munmap range outside hot blocks go to the real munmap.  mremap of a
 *   hot block: shrinking keeps it in place (the tail stays mapped, unused);
 *   growing with MREMAP_MAYMOVE moves it to a new block (copy); without
 *   MAYMOVE it fails with ENOMEM (as the kernel may); MREMAP_FIXED /
 *   MREMAP_DONTUNMAP and ranges starting inside a hot block fail with
 *   EINVAL.  mremap of an ordinary mapping is passed through (it does not
 *   become hot when it grows).  MAP_FIXED mappings placed over a hot block
 *   by the program are not detected.
 *
 * RE-ENTRANCY (async-signal-safety is not claimed: like malloc itself)
 *   - the OpenMP runtime's own large allocations (caller inside libomp /
 *     libgomp, found with dladdr) go to the real allocator: they are not
 *     the program's data, and libomp makes some while holding its locks.
 *   - pagehome's own allocations: ph_preload_is_internal(return address)
 *     is 1 for any caller inside this library's text (found once with
 *     dl_iterate_phdr); those calls go straight to the real functions.
 *     That covers ph_alloc's mmap, the engine's malloc, ...
 *   - A thread-local depth counter is raised while heap.c calls into
 *     pagehome (ph_alloc, ph_area_register/unregister, ph_free, dladdr,
 *     option reads): anything those reach through other libraries (hwloc,
 *     libc's stdio) goes to the real allocator.
 *   - Start-up: dlsym itself may allocate.  While the real symbols are
 *     being resolved, this thread's requests come from a 64 KiB static
 *     bump arena (free of arena memory is a no-op; realloc copies out of
 *     it).  Other threads wait for the resolution to finish.
 *   - Before ph_preload_ready() (preload.c's constructor) and after its
 *     destructor, new requests go to the real allocator; free/realloc of
 *     hot blocks keeps working at any time (ph_free works after
 *     ph_finalize; the unregistration then fails harmlessly).
 *   - errno is preserved across the hot paths when they succeed.
 *   - When the `engine` tunable is off, blocks are still placed but not
 *     registered (as preload.c does for static segments).
 *
 * LIMITS
 *   A hot block handed to a system call while the sampler protects some of
 *   its pages fails with EFAULT (pagehome.h: do not register I/O buffers);
 *   transparent mode cannot tell I/O buffers from arrays.  libc functions
 *   that allocate on behalf of pagehome's own code (qsort's buffer, hwloc)
 *   outside heap.c's calls look like the program's: only large ones
 *   (>= threshold) become hot.
 */
#include "preload/preload.h"

#include "pagehome.h"

#include "base/log.h"
#include "config/options.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define TLS_IE __thread __attribute__((tls_model("initial-exec")))
#define PAGE ((size_t)4096)


/* ------------------------------------------------------------------ */
/* The real functions                                                  */
/* ------------------------------------------------------------------ */

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void *(*real_memalign)(size_t, size_t);
static void *(*real_valloc)(size_t);
static void *(*real_pvalloc)(size_t);
static size_t (*real_usable)(void *);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static int (*real_munmap)(void *, size_t);
static void *(*real_mremap)(void *, size_t, size_t, int, ...);

static atomic_int real_state; /* 0 unresolved, 1 resolving, 2 resolved */
static TLS_IE int resolving;  /* this thread is inside dlsym */
static TLS_IE int depth;      /* this thread is inside a pagehome call */

static void die(const char *msg)
{
    ssize_t r = write(2, msg, strlen(msg));
    (void)r;
    abort();
}

static void *next_sym(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

/* 1 when the real functions can be used; 0 while this thread resolves
 * them (serve from the bootstrap arena). */
static int resolve_real(void)
{
    if (atomic_load_explicit(&real_state, memory_order_acquire) == 2)
        return 1;
    if (resolving)
        return 0;
    int expect = 0;
    if (atomic_compare_exchange_strong(&real_state, &expect, 1)) {
        resolving = 1;
        *(void **)&real_malloc = next_sym("malloc");
        *(void **)&real_calloc = next_sym("calloc");
        *(void **)&real_realloc = next_sym("realloc");
        *(void **)&real_free = next_sym("free");
        *(void **)&real_posix_memalign = next_sym("posix_memalign");
        *(void **)&real_aligned_alloc = next_sym("aligned_alloc");
        *(void **)&real_memalign = next_sym("memalign");
        *(void **)&real_valloc = next_sym("valloc");
        *(void **)&real_pvalloc = next_sym("pvalloc");
        *(void **)&real_usable = next_sym("malloc_usable_size");
        *(void **)&real_mmap = next_sym("mmap");
        *(void **)&real_munmap = next_sym("munmap");
        *(void **)&real_mremap = next_sym("mremap");
        resolving = 0;
        if (!real_malloc || !real_calloc || !real_realloc || !real_free ||
            !real_posix_memalign || !real_memalign || !real_mmap ||
            !real_munmap || !real_mremap)
            die("pagehome: transparent mode: cannot find the real malloc "
                "or mmap (dlsym RTLD_NEXT)\n");
        atomic_store_explicit(&real_state, 2, memory_order_release);
        return 1;
    }
    while (atomic_load_explicit(&real_state, memory_order_acquire) != 2)
        sched_yield();
    return 1;
}

#define REAL_OK() (atomic_load_explicit(&real_state, memory_order_acquire) == 2 || resolve_real())

/* ------------------------------------------------------------------ */
/* Bootstrap arena: what dlsym allocates while we resolve              */
/* ------------------------------------------------------------------ */

#define BOOT_BYTES ((size_t)64 << 10)
static _Alignas(64) unsigned char boot_arena[BOOT_BYTES];
static atomic_size_t boot_used;

static int is_boot(const void *p)
{
    return (const unsigned char *)p >= boot_arena &&
           (const unsigned char *)p < boot_arena + BOOT_BYTES;
}

/* 16-byte header holding the size before each block. */
static void *boot_alloc(size_t size, size_t align)
{
    if (align < 16)
        align = 16;
    size_t cur = atomic_load(&boot_used);
    for (;;) {
        size_t start = (cur + 16 + align - 1) & ~(align - 1);
        if (size > BOOT_BYTES || start > BOOT_BYTES - size) {
            errno = ENOMEM;
            return NULL;
        }
        if (atomic_compare_exchange_weak(&boot_used, &cur, start + size)) {
            memcpy(boot_arena + start - 16, &size, sizeof size);
            return boot_arena + start;
        }
    }
}

static size_t boot_size(const void *p)
{
    size_t s;
    memcpy(&s, (const unsigned char *)p - 16, sizeof s);
    return s;
}

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
/* The table of hot blocks                                             */
/* ------------------------------------------------------------------ */

enum { KIND_HEAP = 0, KIND_MMAP = 1 };

typedef struct hot_block {
    uintptr_t user;       /* what the program got; 0 empty, 1 tombstone */
    void *base;           /* what ph_alloc returned */
    size_t size;          /* bytes asked for */
    size_t usable;        /* whole 4 KiB pages from user */
    size_t left;          /* mmap blocks: bytes not yet punched */
    ph_hotarea_t *area;   /* NULL: not (or no longer) watched */
    int kind;
} hot_block;

#define TOMB ((uintptr_t)1)

static pthread_mutex_t tab_lock = PTHREAD_MUTEX_INITIALIZER;
static hot_block *tab;
static size_t tab_cap, tab_used /* live + tombstones */;
static atomic_size_t live_blocks;
static atomic_uint_least64_t live_bytes, served_blocks, served_bytes,
    large_passed, hot_failed;
static atomic_uint serial;

static size_t slot_of(uintptr_t key, size_t cap)
{
    uint64_t h = (uint64_t)(key >> 12) * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 17) & (cap - 1);
}

/* Grow (or clean) the table.  Lock held.  -1 when memory is short. */
static int tab_rehash(size_t cap)
{
    void *m = real_mmap(NULL, cap * sizeof(hot_block), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return -1;
    hot_block *n = m;
    for (size_t i = 0; i < tab_cap; i++) {
        if (tab[i].user <= TOMB)
            continue;
        size_t j = slot_of(tab[i].user, cap);
        while (n[j].user)
            j = (j + 1) & (cap - 1);
        n[j] = tab[i];
    }
    if (tab)
        real_munmap(tab, tab_cap * sizeof(hot_block));
    tab = n;
    tab_cap = cap;
    tab_used = atomic_load(&live_blocks);
    return 0;
}

/* Index of key's entry, or SIZE_MAX.  Lock held. */
static size_t tab_find(uintptr_t key)
{
    if (!tab_cap)
        return SIZE_MAX;
    size_t j = slot_of(key, tab_cap);
    while (tab[j].user) {
        if (tab[j].user == key)
            return j;
        j = (j + 1) & (tab_cap - 1);
    }
    return SIZE_MAX;
}

static int tab_insert(const hot_block *b)
{
    int rc = 0;
    pthread_mutex_lock(&tab_lock);
    size_t live = atomic_load(&live_blocks);
    if ((tab_used + 1) * 2 > tab_cap) {
        size_t cap = tab_cap ? tab_cap : 256;
        while ((live + 1) * 4 > cap)
            cap *= 2;
        rc = tab_rehash(cap);
    }
    if (rc == 0) {
        size_t j = slot_of(b->user, tab_cap);
        while (tab[j].user > TOMB)
            j = (j + 1) & (tab_cap - 1);
        if (!tab[j].user)
            tab_used++;
        tab[j] = *b;
        atomic_fetch_add(&live_blocks, 1);
        atomic_fetch_add(&live_bytes, b->usable);
    }
    pthread_mutex_unlock(&tab_lock);
    return rc;
}

/* Cheap test before taking the lock. */
static int maybe_hot(const void *p)
{
    return atomic_load_explicit(&live_blocks, memory_order_relaxed) != 0 &&
           ((uintptr_t)p & (PAGE - 1)) == 0;
}

/* Copy of p's entry (take = 1: and remove it).  1 when p is hot. */
static int tab_get(const void *p, hot_block *out, int take)
{
    if (!maybe_hot(p))
        return 0;
    pthread_mutex_lock(&tab_lock);
    size_t j = tab_find((uintptr_t)p);
    if (j != SIZE_MAX) {
        *out = tab[j];
        if (take) {
            tab[j].user = TOMB;
            atomic_fetch_sub(&live_blocks, 1);
            atomic_fetch_sub(&live_bytes, out->usable);
        }
    }
    pthread_mutex_unlock(&tab_lock);
    return j != SIZE_MAX;
}

/* Held for reading around every call heap.c makes into pagehome, and for
 * writing across fork(): a child never starts with one of pagehome's own
 * locks (ph_alloc's registry, the engine's) taken by a thread of the
 * parent that heap.c sent there. */
static pthread_rwlock_t gate = PTHREAD_RWLOCK_INITIALIZER;

static void tab_prefork(void)
{
    pthread_rwlock_wrlock(&gate);
    pthread_mutex_lock(&tab_lock);
}

static void tab_postfork(void)
{
    pthread_mutex_unlock(&tab_lock);
    pthread_rwlock_unlock(&gate);
}

/* The child's thread has another TID than the one that took the locks
 * (glibc's rwlock checks the writer's TID on unlock): start them afresh. */
static void gate_init(void)
{
    /* Writers first: with glibc's default (readers first) a fork would
     * wait for a moment when no thread is placing a block, which threads
     * allocating large blocks in a loop may never leave.  Read locks never
     * nest (depth keeps heap.c from re-entering itself). */
    pthread_rwlockattr_t a;
    pthread_rwlockattr_init(&a);
    pthread_rwlockattr_setkind_np(&a,
                                  PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&gate, &a);
    pthread_rwlockattr_destroy(&a);
}

static void tab_postfork_child(void)
{
    pthread_mutex_init(&tab_lock, NULL);
    gate_init();
}

/* Before main: no other thread can be using the gate yet. */
__attribute__((constructor)) static void heap_start(void)
{
    gate_init();
    pthread_atfork(tab_prefork, tab_postfork, tab_postfork_child);
    if (!atomic_load(&self_known))
        learn_self();
}

/* ------------------------------------------------------------------ */
/* Serving and releasing hot blocks                                    */
/* ------------------------------------------------------------------ */

static atomic_size_t threshold; /* 0 until the library is ready */
static atomic_int engine_on;
static ph_placement_t placement;
static const ph_placement_t *placement_p;

/* Called with depth raised, once ready. */
static void learn_config(void)
{
    int64_t t = ph_opt_int(PH_OPT_HOT_THRESHOLD);
    const char *text = ph_opt_str(PH_OPT_PLACEMENT);
    static pthread_mutex_t once = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&once);
    if (!atomic_load(&threshold)) {
        if (ph_placement_parse(&placement, text && *text ? text : "first-touch") == 0)
            placement_p = &placement;
        else
            ph_warn("transparent mode: placement \"%s\": %s (using the "
                    "default)", text ? text : "", ph_last_error());
        atomic_store(&engine_on, strcmp(ph_opt_str(PH_OPT_ENGINE), "off") != 0);
        atomic_store(&threshold, t > 0 ? (size_t)t : ((size_t)1 << 20));
    }
    pthread_mutex_unlock(&once);
}

/* The threshold, or 0 when nothing may be hot right now. */
static size_t hot_threshold(void)
{
    if (depth || !ph_preload_ready())
        return 0;
    size_t t = atomic_load_explicit(&threshold, memory_order_relaxed);
    if (!t) {
        depth++;
        learn_config();
        depth--;
        t = atomic_load(&threshold);
    }
    return t;
}

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
    snprintf(buf, len, "%s#%u (%s)%s", kind == KIND_MMAP ? "mmap" : "heap",
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

static int pow2(size_t a)
{
    return a && !(a & (a - 1));
}

/* A hot block of size bytes aligned to align (a power of two), or NULL:
 * then the caller uses the real allocator.  ra: the program's call site. */
static void *hot_alloc(size_t size, size_t align, int kind, const void *ra)
{
    size_t t = hot_threshold();
    if (!t || size < t)
        return NULL;
    if (ph_preload_is_internal(ra))
        return NULL;
    depth++;
    int runtime = from_openmp_runtime(ra);
    depth--;
    if (runtime) {
        atomic_fetch_add(&large_passed, 1);
        return NULL;
    }
    size_t usable = (size + PAGE - 1) & ~(PAGE - 1);
    size_t extra = align > PAGE ? align - PAGE : 0;
    if (usable < size || usable + extra < usable) {
        atomic_fetch_add(&large_passed, 1);
        return NULL;
    }
    int saved = errno;
    depth++;
    pthread_rwlock_rdlock(&gate);
    void *base = ph_alloc(usable + extra, placement_p);
    if (!base) {
        static atomic_int warned;
        ph_warn_once(&warned, "transparent mode: a %zu-byte allocation "
                     "cannot be placed (%s): served by the real allocator "
                     "(said once)", size, ph_last_error());
        atomic_fetch_add(&hot_failed, 1);
        pthread_rwlock_unlock(&gate);
        depth--;
        errno = saved;
        return NULL;
    }
    uintptr_t user = ((uintptr_t)base + align - 1) & ~(uintptr_t)(align - 1);
    hot_block b = {.user = user, .base = base, .size = size,
                   .usable = usable, .left = usable, .area = NULL,
                   .kind = kind};
    unsigned id = atomic_fetch_add(&serial, 1);
    if (atomic_load(&engine_on)) {
        char name[64];
        block_name(name, sizeof name, kind, id, size, ra);
        b.area = ph_area_register((void *)user, usable, name);
        if (!b.area) {
            static atomic_int warned;
            ph_warn_once(&warned, "transparent mode: cannot watch %s: %s "
                         "(said once)", name, ph_last_error());
        }
    }
    if (tab_insert(&b) != 0) {
        if (b.area)
            ph_area_unregister(b.area);
        ph_free(base);
        atomic_fetch_add(&hot_failed, 1);
        pthread_rwlock_unlock(&gate);
        depth--;
        errno = saved;
        return NULL;
    }
    atomic_fetch_add(&served_blocks, 1);
    atomic_fetch_add(&served_bytes, size);
    pthread_rwlock_unlock(&gate);
    depth--;
    errno = saved;
    return (void *)user;
}

/* Unwatch and free a block already taken out of the table. */
static void hot_release(const hot_block *b)
{
    int saved = errno;
    depth++;
    pthread_rwlock_rdlock(&gate);
    if (b->area)
        ph_area_unregister(b->area);
    if (ph_free(b->base) != 0) {
        static atomic_int warned;
        ph_warn_once(&warned, "transparent mode: cannot release the block "
                     "at %p: %s (said once)", b->base, ph_last_error());
    }
    pthread_rwlock_unlock(&gate);
    depth--;
    errno = saved;
}

/* A large request that was not served hot: counted. */
static void note_large(size_t size)
{
    size_t t = atomic_load_explicit(&threshold, memory_order_relaxed);
    if (t && size >= t)
        atomic_fetch_add(&large_passed, 1);
}

/* ------------------------------------------------------------------ */
/* The malloc family                                                   */
/* ------------------------------------------------------------------ */

/* Fast test: can a request of this size be hot at all? */
static int large(size_t size)
{
    size_t t = atomic_load_explicit(&threshold, memory_order_relaxed);
    return !t || size >= t; /* 0 = not known yet: ask */
}

static void *do_malloc(size_t size, const void *ra)
{
    if (!REAL_OK())
        return boot_alloc(size, 16);
    if (large(size)) {
        void *p = hot_alloc(size, PAGE, KIND_HEAP, ra);
        if (p)
            return p;
        note_large(size);
    }
    return real_malloc(size);
}

static void *do_memalign(size_t align, size_t size, const void *ra)
{
    if (!REAL_OK())
        return boot_alloc(size, align);
    if (large(size) && pow2(align)) {
        void *p = hot_alloc(size, align < PAGE ? PAGE : align, KIND_HEAP, ra);
        if (p)
            return p;
        note_large(size);
    }
    return real_memalign(align, size);
}

EXPORT void *malloc(size_t size)
{
    return do_malloc(size, __builtin_return_address(0));
}

EXPORT void *calloc(size_t n, size_t size)
{
    size_t bytes;
    if (__builtin_mul_overflow(n, size, &bytes)) {
        errno = ENOMEM;
        return NULL;
    }
    if (!REAL_OK()) {
        void *p = boot_alloc(bytes, 16);
        if (p)
            memset(p, 0, bytes);
        return p;
    }
    if (large(bytes)) {
        /* ph_alloc memory is fresh and zeroed: no memset, no touch. */
        void *p = hot_alloc(bytes, PAGE, KIND_HEAP,
                            __builtin_return_address(0));
        if (p)
            return p;
        note_large(bytes);
    }
    return real_calloc(n, size);
}

EXPORT void free(void *p)
{
    if (!p || is_boot(p))
        return;
    hot_block b;
    if (tab_get(p, &b, 1)) {
        hot_release(&b);
        return;
    }
    if (!REAL_OK())
        return; /* cannot happen: nothing real was handed out yet */
    real_free(p);
}

EXPORT void *realloc(void *p, size_t size)
{
    const void *ra = __builtin_return_address(0);
    if (!p)
        return do_malloc(size, ra);
    if (is_boot(p)) {
        void *n = do_malloc(size ? size : 1, ra);
        if (n) {
            size_t old = boot_size(p);
            memcpy(n, p, old < size ? old : size);
        }
        return n;
    }
    hot_block b;
    if (tab_get(p, &b, 0)) {
        if (size == 0) {
            if (tab_get(p, &b, 1))
                hot_release(&b);
            return NULL;
        }
        size_t t = atomic_load(&threshold);
        if (size <= b.usable && size >= t && size >= b.usable / 2)
            return p; /* shrink in place */
        void *n = size >= t ? hot_alloc(size, PAGE, KIND_HEAP, ra) : NULL;
        if (!n)
            n = real_malloc(size);
        if (!n)
            return NULL; /* errno from the real malloc; p untouched */
        memcpy(n, p, b.size < size ? b.size : size);
        if (tab_get(p, &b, 1))
            hot_release(&b);
        return n;
    }
    if (!REAL_OK())
        return NULL;
    if (large(size) && real_usable) {
        void *n = hot_alloc(size, PAGE, KIND_HEAP, ra);
        if (n) {
            size_t old = real_usable(p);
            memcpy(n, p, old < size ? old : size);
            real_free(p);
            return n;
        }
        note_large(size);
    }
    return real_realloc(p, size);
}

EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
    if (!pow2(align) || align % sizeof(void *) != 0)
        return EINVAL;
    if (!REAL_OK()) {
        void *p = boot_alloc(size, align);
        if (!p)
            return ENOMEM;
        *out = p;
        return 0;
    }
    if (large(size)) {
        void *p = hot_alloc(size, align < PAGE ? PAGE : align, KIND_HEAP,
                            __builtin_return_address(0));
        if (p) {
            *out = p;
            return 0;
        }
        note_large(size);
    }
    return real_posix_memalign(out, align, size);
}

EXPORT void *aligned_alloc(size_t align, size_t size)
{
    const void *ra = __builtin_return_address(0);
    if (REAL_OK() && real_aligned_alloc && !(large(size) && pow2(align)))
        return real_aligned_alloc(align, size);
    return do_memalign(align, size, ra);
}

EXPORT void *memalign(size_t align, size_t size)
{
    return do_memalign(align, size, __builtin_return_address(0));
}

EXPORT void *valloc(size_t size)
{
    const void *ra = __builtin_return_address(0);
    if (REAL_OK() && real_valloc && !large(size))
        return real_valloc(size);
    return do_memalign(PAGE, size, ra);
}

EXPORT void *pvalloc(size_t size)
{
    const void *ra = __builtin_return_address(0);
    size_t r = size ? (size + PAGE - 1) & ~(PAGE - 1) : PAGE;
    if (r < size) {
        errno = ENOMEM;
        return NULL;
    }
    if (REAL_OK() && real_pvalloc && !large(r))
        return real_pvalloc(size);
    return do_memalign(PAGE, r, ra);
}

EXPORT size_t malloc_usable_size(void *p)
{
    if (!p)
        return 0;
    if (is_boot(p))
        return boot_size(p);
    hot_block b;
    if (tab_get(p, &b, 0))
        return b.usable;
    if (!REAL_OK() || !real_usable)
        return 0;
    return real_usable(p);
}

/* ------------------------------------------------------------------ */
/* mmap, munmap, mremap                                                */
/* ------------------------------------------------------------------ */

static void *raw_mmap(void *addr, size_t len, int prot, int flags, int fd,
                      off_t off)
{
    if (REAL_OK())
        return real_mmap(addr, len, prot, flags, fd, off);
    return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

static void *do_mmap(void *addr, size_t len, int prot, int flags, int fd,
                     off_t off, const void *ra)
{
    if (!addr && fd == -1 && off == 0 && prot == (PROT_READ | PROT_WRITE) &&
        (flags & ~MAP_NORESERVE) == (MAP_PRIVATE | MAP_ANONYMOUS) &&
        large(len) && REAL_OK()) {
        void *p = hot_alloc(len, PAGE, KIND_MMAP, ra);
        if (p)
            return p;
        note_large(len);
    }
    return raw_mmap(addr, len, prot, flags, fd, off);
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd,
                  off_t off)
{
    return do_mmap(addr, len, prot, flags, fd, off,
                   __builtin_return_address(0));
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd,
                    off_t off)
{
    return do_mmap(addr, len, prot, flags, fd, off,
                   __builtin_return_address(0));
}

static int raw_munmap(void *addr, size_t len)
{
    if (REAL_OK())
        return real_munmap(addr, len);
    return (int)syscall(SYS_munmap, addr, len);
}

#define MAX_OVERLAP 64

/* Hot blocks overlapping [lo, hi), sorted by address (at most max). */
static size_t overlaps(uintptr_t lo, uintptr_t hi, hot_block *out,
                       size_t max)
{
    size_t n = 0;
    pthread_mutex_lock(&tab_lock);
    for (size_t i = 0; i < tab_cap && n < max; i++) {
        const hot_block *b = &tab[i];
        if (b->user <= TOMB || b->user >= hi || b->user + b->usable <= lo)
            continue;
        size_t k = n++;
        while (k > 0 && out[k - 1].user > b->user) {
            out[k] = out[k - 1];
            k--;
        }
        out[k] = *b;
    }
    pthread_mutex_unlock(&tab_lock);
    return n;
}

/* The program unmaps [lo, hi) of hot block b: punch it, stop watching the
 * block; release it when nothing of it is left. */
static int punch(const hot_block *b, uintptr_t lo, uintptr_t hi)
{
    if (lo == b->user && hi == b->user + b->usable) {
        hot_block t;
        if (tab_get((void *)b->user, &t, 1))
            hot_release(&t);
        return 0;
    }
    void *m = real_mmap((void *)lo, hi - lo, PROT_NONE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED |
                            MAP_NORESERVE,
                        -1, 0);
    if (m == MAP_FAILED)
        return -1;
    ph_hotarea_t *area = NULL;
    int done = 0;
    pthread_mutex_lock(&tab_lock);
    size_t j = tab_find(b->user);
    if (j != SIZE_MAX) {
        area = tab[j].area;
        tab[j].area = NULL;
        tab[j].left -= hi - lo < tab[j].left ? hi - lo : tab[j].left;
        done = tab[j].left == 0;
    }
    pthread_mutex_unlock(&tab_lock);
    if (area) {
        int saved = errno;
        depth++;
        pthread_rwlock_rdlock(&gate);
        ph_area_unregister(area);
        pthread_rwlock_unlock(&gate);
        depth--;
        errno = saved;
    }
    if (done) {
        hot_block t;
        if (tab_get((void *)b->user, &t, 1)) {
            t.area = NULL;
            hot_release(&t);
        }
    }
    return 0;
}

EXPORT int munmap(void *addr, size_t len)
{
    const void *ra = __builtin_return_address(0);
    if (depth || atomic_load_explicit(&live_blocks, memory_order_relaxed) == 0 ||
        ph_preload_is_internal(ra) || len == 0)
        return raw_munmap(addr, len);
    uintptr_t lo = (uintptr_t)addr;
    if (lo & (PAGE - 1)) {
        errno = EINVAL;
        return -1;
    }
    uintptr_t hi = (lo + len + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
    if (hi < lo) {
        errno = EINVAL;
        return -1;
    }
    hot_block ov[MAX_OVERLAP];
    size_t n = overlaps(lo, hi, ov, MAX_OVERLAP);
    if (n == 0)
        return raw_munmap(addr, len);
    int rc = 0;
    uintptr_t at = lo;
    for (size_t i = 0; i < n; i++) {
        uintptr_t s = ov[i].user > lo ? ov[i].user : lo;
        uintptr_t e = ov[i].user + ov[i].usable < hi ? ov[i].user + ov[i].usable
                                                     : hi;
        if (s > at && raw_munmap((void *)at, s - at) != 0)
            rc = -1;
        if (punch(&ov[i], s, e) != 0)
            rc = -1;
        at = e;
    }
    if (at < hi && raw_munmap((void *)at, hi - at) != 0)
        rc = -1;
    return rc;
}

EXPORT void *mremap(void *old, size_t old_size, size_t new_size, int flags,
                    ...)
{
    void *new_addr = NULL;
    if (flags & MREMAP_FIXED) {
        va_list ap;
        va_start(ap, flags);
        new_addr = va_arg(ap, void *);
        va_end(ap);
    }
    const void *ra = __builtin_return_address(0);
    hot_block b;
    int hot = 0;
    if (!depth && atomic_load_explicit(&live_blocks, memory_order_relaxed) &&
        !ph_preload_is_internal(ra)) {
        hot = tab_get(old, &b, 0);
        if (!hot) {
            uintptr_t lo = (uintptr_t)old;
            hot_block ov[1];
            if (overlaps(lo, lo + (old_size ? old_size : 1), ov, 1)) {
                errno = EINVAL; /* inside a hot block: not supported */
                return MAP_FAILED;
            }
        }
    }
    if (!hot) {
        if (!REAL_OK())
            return (void *)syscall(SYS_mremap, old, old_size, new_size,
                                   flags, new_addr);
        return (flags & MREMAP_FIXED)
                   ? real_mremap(old, old_size, new_size, flags, new_addr)
                   : real_mremap(old, old_size, new_size, flags);
    }
#ifdef MREMAP_DONTUNMAP
    if (flags & MREMAP_DONTUNMAP) {
        errno = EINVAL;
        return MAP_FAILED;
    }
#endif
    if ((flags & MREMAP_FIXED) || new_size == 0) {
        errno = EINVAL;
        return MAP_FAILED;
    }
    if (new_size <= b.usable)
        return old; /* shrink in place: the tail stays mapped, unused */
    if (!(flags & MREMAP_MAYMOVE)) {
        errno = ENOMEM;
        return MAP_FAILED;
    }
    void *n = hot_alloc(new_size, PAGE, KIND_MMAP, ra);
    if (!n) {
        n = real_mmap(NULL, new_size, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (n == MAP_FAILED)
            return MAP_FAILED;
    }
    size_t keep = old_size < b.usable ? old_size : b.usable;
    memcpy(n, old, keep);
    if (tab_get(old, &b, 1))
        hot_release(&b);
    return n;
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
        *live = atomic_load(&live_blocks);
    if (live_b)
        *live_b = atomic_load(&live_bytes);
    if (passed)
        *passed = atomic_load(&large_passed);
    if (failed)
        *failed = atomic_load(&hot_failed);
}
