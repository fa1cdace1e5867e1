/*
 * preload.c -- transparent mode's start and end (see preload.h).
 *
 * The constructor runs before main(): it initialises pagehome (tunables
 * from the environment that `pagehome run` prepared, the machine), then
 * registers the program's large static arrays as hot areas, and marks the
 * library ready so that hot.c starts serving large allocations.
 *
 * Static arrays: C static arrays and Fortran COMMON blocks live in the
 * executable's writable segments -- .data (file-backed, "rw-p" with the
 * executable's path in /proc/self/maps) and .bss (the anonymous "rw-p"
 * mapping right after it).  Those of at least hot_threshold bytes are
 * registered (and marked MADV_NOHUGEPAGE, for 4 KiB precision; with
 * pagesize 2M their whole 2 MiB pages are moved onto THP instead, see
 * to_huge()).  The
 * first page of the file-backed segment is left out: it
 * holds the GOT and the runtime's small variables, which every call
 * through the PLT touches (watching it would trap all the time and tell
 * nothing about the program's data).  A placement the user chose
 * (`placement` set, `pagehome run --placement`) applies to them as to the
 * heap: ph_place before they are watched (resident pages move, the rest
 * are bound for their first touch), whether the engine is on or not; the
 * report counts them (transparent.static).  Under first touch, where the
 * engine is to manage them alone (kernel_balancing=exclude), they get a
 * first-touch policy of their own instead, as the heap's hot blocks do,
 * so that the kernel's NUMA balancing leaves them to the engine.  Shared
 * libraries' segments are not registered: their big writable data is
 * rare and not the program's.
 *
 * At exit the destructor finalizes the engine (lifting every protection
 * while the OpenMP workers may still run) and writes stats_file.  With
 * the engine off there is no engine to write it: the file then says so
 * ("engine": null) and holds what transparent mode saw all the same (the
 * OpenMP runtime, its regions and iteration, the heap and static
 * segments), so that it never contradicts what stderr said.
 */
#include "preload/preload.h"
#include "preload/reuse.h"

#include "pagehome.h"

#include "api/settings.h"
#include "api/transparent.h"
#include "base/json_write.h"
#include "base/log.h"
#include "engine/engine.h"
#include "config/options.h"
#include "sample/source.h"

#include <errno.h>
#include <limits.h>
#include <numaif.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define HUGE_BYTES ((uintptr_t)2 << 20)

static atomic_int ready;
/* Static segments registered at start-up, and their bytes; those the
 * chosen placement was applied to, and their pages that did not reach it. */
static unsigned static_segments;
static uint64_t static_bytes;
static unsigned static_placed;
static uint64_t static_place_failed;
/* Static segments given a first-touch policy of their own (LOCAL, for
 * kernel_balancing=exclude): handed to the process's own policy when the
 * program sets one (ph_preload_static_policy). */
#define MAX_LOCAL_SEGMENTS 16
static struct { uintptr_t lo, hi; } local_segs[MAX_LOCAL_SEGMENTS];
static atomic_uint nlocal_segs;

/* Apply the placement the user chose to a static segment [lo, hi) (on
 * 2 MiB pages from a to b when it was put on THP).  First touch (the
 * default) moves nothing; where the engine is to manage the segment alone
 * (kernel_balancing=exclude, as for the heap's hot blocks: settings.c's
 * own_policy) it gives the segment its own first-touch policy, so that
 * the kernel's NUMA balancing leaves it to the engine. */
static void place_static(uintptr_t lo, uintptr_t hi, uintptr_t a, uintptr_t b,
                         const char *what)
{
    ph_placement_t pl;
    int chosen = ph_opt_source_of(PH_OPT_PLACEMENT) != PH_SRC_DEFAULT;
    if (ph_placement_parse(&pl, chosen ? ph_opt_str(PH_OPT_PLACEMENT)
                                       : "first-touch") != 0) {
        ph_warn("transparent mode: placement \"%s\": %s: the static %s segment is "
                "left as it is", ph_opt_str(PH_OPT_PLACEMENT), ph_last_error(), what);
        return;
    }
    /* first touch moves nothing: only the segment's own policy is set */
    int policy_only = pl.policy == PH_POLICY_FIRST_TOUCH;
    if (policy_only) {
        ph_place_cfg cfg;
        ph_settings_place(&cfg);
        if (!cfg.plan.own_policy)
            return;
    }
    typedef struct part { uintptr_t from, to; size_t page; } part;
    part parts[3] = {{lo, hi, 4096}, {0, 0, 0}, {0, 0, 0}};
    if (b > a) { /* THP in the middle, 4 KiB at the ends */
        parts[0] = (part){lo, a, 4096};
        parts[1] = (part){a, b, (size_t)HUGE_BYTES};
        parts[2] = (part){b, hi, 4096};
    }
    long failed = 0;
    for (int k = 0; k < 3; k++) {
        if (parts[k].to <= parts[k].from)
            continue;
        pl.page_bytes = parts[k].page;
        int rc = ph_api_place_segment((void *)parts[k].from, parts[k].to - parts[k].from, &pl);
        if (rc < 0) {
            ph_warn("transparent mode: cannot apply placement \"%s\" to the static %s "
                    "segment %p-%p: %s", ph_opt_str(PH_OPT_PLACEMENT), what,
                    (void *)parts[k].from, (void *)parts[k].to, ph_last_error());
            return;
        }
        failed += rc;
    }
    if (policy_only) {
        unsigned k = atomic_load(&nlocal_segs);
        if (k < MAX_LOCAL_SEGMENTS) {
            local_segs[k].lo = lo;
            local_segs[k].hi = hi;
            atomic_store(&nlocal_segs, k + 1);
        }
        ph_info("transparent mode: the static %s segment %p-%p has a first-touch "
                "policy of its own: the kernel's NUMA balancing leaves it to the "
                "engine (kernel_balancing=exclude)", what, (void *)lo, (void *)hi);
        return;
    }
    static_placed++;
    static_place_failed += (uint64_t)failed;
    ph_info("transparent mode: placement \"%s\" applied to the static %s segment %p-%p%s",
            ph_opt_str(PH_OPT_PLACEMENT), what, (void *)lo, (void *)hi,
            failed ? " (some pages did not reach it)" : "");
}

void ph_preload_static_policy(int own)
{
    unsigned char marked[4096]; /* one byte a page: 16 MiB at a time */
    unsigned n = atomic_load(&nlocal_segs);
    for (unsigned k = 0; k < n; k++) {
        for (uintptr_t at = local_segs[k].lo; at < local_segs[k].hi;) {
            size_t pages = (local_segs[k].hi - at) / 4096;
            if (pages > sizeof marked)
                pages = sizeof marked;
            (void)ph_sampler_policy_marks((void *)at, pages * 4096, marked);
            /* the runs without a policy of the program's own */
            for (size_t i = 0; i < pages;) {
                size_t j = i;
                while (j < pages && !marked[j])
                    j++;
                if (j > i &&
                    syscall(SYS_mbind, at + i * 4096, (j - i) * 4096,
                            own ? MPOL_DEFAULT : MPOL_LOCAL, NULL, 0, 0) != 0)
                    ph_warn("transparent mode: the static segment's pages %#lx-%#lx: "
                            "mbind(%s): %s", (unsigned long)(at + i * 4096),
                            (unsigned long)(at + j * 4096),
                            own ? "MPOL_DEFAULT" : "MPOL_LOCAL", strerror(errno));
                i = j;
                while (i < pages && marked[i])
                    i++;
            }
            at += pages * 4096;
        }
    }
}

int ph_preload_ready(void)
{
    return atomic_load_explicit(&ready, memory_order_acquire);
}

/* One line of /proc/self/maps: range, permissions, path ("" if none). */
typedef struct map_line {
    uintptr_t lo, hi;
    char perms[8];
    char path[PATH_MAX];
} map_line;

static int parse_map_line(const char *s, map_line *m)
{
    unsigned long lo, hi;
    int off = 0;
    m->path[0] = '\0';
    if (sscanf(s, "%lx-%lx %7s %*s %*s %*s %n", &lo, &hi, m->perms, &off) < 3)
        return -1;
    m->lo = lo;
    m->hi = hi;
    if (off > 0) {
        snprintf(m->path, sizeof m->path, "%s", s + off);
        m->path[strcspn(m->path, "\n")] = '\0';
    }
    return 0;
}


/* pagesize 2M: put the whole 2 MiB pages inside the static segment
 * [lo, hi) on THP (returns 1 when done).  A new THP mapping is made elsewhere, the segment's
 * contents are copied into it (for .bss only the pages that are resident:
 * the others are zero and stay untouched, so first touch still places
 * them), and mremap moves it over the segment.  Runs in the constructor,
 * before main(), while the program has no threads of its own: nothing
 * writes the segment between the copy and the remap.  The parts before
 * the first and after the last 2 MiB boundary stay 4 KiB pages. */
static int to_huge(uintptr_t lo, uintptr_t hi, const char *what)
{
    uintptr_t a = (lo + HUGE_BYTES - 1) & ~(HUGE_BYTES - 1);
    uintptr_t b = hi & ~(HUGE_BYTES - 1);
    if (b <= a) {
        ph_info("transparent mode: static %s segment %p-%p holds no whole 2 MiB "
                "page: not convertible, 4 KiB pages", what, (void *)lo, (void *)hi);
        madvise((void *)lo, hi - lo, MADV_NOHUGEPAGE);
        return 0;
    }
    size_t len = b - a;
    char *raw = mmap(NULL, len + HUGE_BYTES, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED) {
        ph_warn("transparent mode: static %s segment: no memory to convert it to "
                "2 MiB pages: 4 KiB pages", what);
        return 0;
    }
    uintptr_t n = ((uintptr_t)raw + HUGE_BYTES - 1) & ~(HUGE_BYTES - 1);
    if (n > (uintptr_t)raw)
        munmap(raw, n - (uintptr_t)raw);
    if ((uintptr_t)raw + len + HUGE_BYTES > n + len)
        munmap((void *)(n + len), (uintptr_t)raw + len + HUGE_BYTES - (n + len));
    if (madvise((void *)n, len, MADV_HUGEPAGE) != 0) {
        munmap((void *)n, len);
        ph_info("transparent mode: static %s segment: THP refused by the kernel: "
                "4 KiB pages", what);
        return 0;
    }
    int bss = strcmp(what, "bss") == 0;
    unsigned char vec[512];
    size_t copied = 0;
    for (uintptr_t u = a; u < b; u += HUGE_BYTES) {
        int resident = !bss || mincore((void *)u, HUGE_BYTES, vec) != 0;
        for (size_t k = 0; k < 512; k++) {
            if (!resident && !(vec[k] & 1))
                continue;
            memcpy((void *)(n + (u - a) + k * 4096), (void *)(u + k * 4096), 4096);
            copied += 4096;
        }
    }
    if (mremap((void *)n, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)a) == MAP_FAILED) {
        ph_warn("transparent mode: static %s segment: mremap failed (%s): 4 KiB pages",
                what, strerror(errno));
        munmap((void *)n, len);
        return 0;
    }
    if (a > lo)
        madvise((void *)lo, a - lo, MADV_NOHUGEPAGE);
    if (hi > b)
        madvise((void *)b, hi - b, MADV_NOHUGEPAGE);
    ph_info("transparent mode: static %s segment: %zu MiB on 2 MiB pages "
            "(%zu KiB copied), %zu KiB at its ends on 4 KiB pages", what, len >> 20,
            copied >> 10, (size_t)((a - lo) + (hi - b)) >> 10);
    return 1;
}

/* watch = 0 (engine off): the segments are only put on 2 MiB pages when
 * pagesize is 2M, not registered. */
static void register_static(size_t threshold, int watch)
{
    int huge = ph_opt_int(PH_OPT_PAGESIZE) == (int64_t)HUGE_BYTES;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return;
    exe[n] = '\0';
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return;
    char line[PATH_MAX + 128];
    int after_exe_data = 0; /* the previous line was the exe's rw data */
    int count = 0;
    while (fgets(line, sizeof line, f)) {
        map_line m;
        if (parse_map_line(line, &m) != 0)
            continue;
        int rw = strncmp(m.perms, "rw-p", 4) == 0;
        int is_exe = strcmp(m.path, exe) == 0;
        uintptr_t lo = m.lo;
        const char *what = NULL;
        if (rw && is_exe) {
            lo += 4096; /* GOT and small variables */
            what = "data";
        } else if (rw && !m.path[0] && after_exe_data) {
            what = "bss";
        }
        after_exe_data = rw && is_exe;
        if (!what || m.hi <= lo || m.hi - lo < threshold)
            continue;
        if (!watch && !huge) {
            /* engine off, 4 KiB: the segment keeps its pages, but a chosen
             * placement still applies */
            place_static(lo, m.hi, 0, 0, what);
            continue;
        }
        uintptr_t ha = 0, hb = 0;
        if (huge && to_huge(lo, m.hi, what)) {
            ha = (lo + HUGE_BYTES - 1) & ~(HUGE_BYTES - 1);
            hb = m.hi & ~(HUGE_BYTES - 1);
        } else if (!huge) {
            /* 4 KiB precision: with THP=always the kernel would back the
             * segment with 2 MiB pages, and moving one 4 KiB page of those
             * moves all 512 (pages not yet touched are not huge yet). */
            madvise((void *)lo, m.hi - lo, MADV_NOHUGEPAGE);
        }
        place_static(lo, m.hi, ha, hb, what);
        if (!watch)
            continue;
        char name[64];
        snprintf(name, sizeof name, "static %s #%d", what, count++);
        if (!ph_area_register((void *)lo, m.hi - lo, name))
            ph_warn("transparent mode: cannot watch the program's %s "
                    "segment %p-%p: %s", what, (void *)lo, (void *)m.hi,
                    ph_last_error());
        else {
            static_segments++;
            static_bytes += m.hi - lo;
            ph_info("transparent mode: watching %s segment %p-%p (%zu KiB)",
                    what, (void *)lo, (void *)m.hi, (m.hi - lo) >> 10);
        }
    }
    fclose(f);
}

/* The "transparent" object of the statistics file (engine/stats.c calls
 * it while writing; the engine lock is held). */
static void report_transparent(ph_jw *w)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    uint64_t blocks = 0, bytes = 0, live = 0, live_bytes = 0, passed = 0,
             failed = 0;
    ph_heap_stats(&blocks, &bytes);
    ph_heap_stats_more(&live, &live_bytes, &passed, &failed);
    ph_jw_key(w, "transparent");
    ph_jw_object(w, 0);
    ph_jw_key(w, "program");
    ph_jw_string(w, exe);
    ph_jw_key(w, "pid");
    ph_jw_int(w, (int64_t)getpid());
    ph_jw_key(w, "hot_threshold_bytes");
    ph_jw_uint(w, (uint64_t)ph_opt_int(PH_OPT_HOT_THRESHOLD));
    ph_jw_key(w, "placement");
    ph_jw_string(w, ph_opt_str(PH_OPT_PLACEMENT));
    ph_jw_key(w, "heap");
    ph_jw_object(w, 1);
    ph_jw_key(w, "hot_allocations");
    ph_jw_uint(w, blocks);
    ph_jw_key(w, "hot_bytes");
    ph_jw_uint(w, bytes);
    ph_jw_key(w, "live_at_report");
    ph_jw_uint(w, live);
    ph_jw_key(w, "large_passed_to_libc");
    ph_jw_uint(w, passed);
    ph_jw_key(w, "placement_failures");
    ph_jw_uint(w, failed);
    unsigned long long reused = 0, evicted = 0, pressured = 0;
    size_t kept = 0, kept_bytes = 0;
    ph_reuse_stats(&reused, &evicted, &pressured, &kept, &kept_bytes);
    ph_jw_key(w, "reused");
    ph_jw_uint(w, reused);
    ph_jw_key(w, "reuse_released");
    ph_jw_uint(w, evicted);
    ph_jw_key(w, "reuse_emptied_by_pressure");
    ph_jw_uint(w, pressured);
    ph_jw_key(w, "reuse_held_bytes");
    ph_jw_uint(w, kept_bytes);
    ph_jw_end(w);
    ph_jw_key(w, "static");
    ph_jw_object(w, 1);
    ph_jw_key(w, "segments");
    ph_jw_uint(w, static_segments);
    ph_jw_key(w, "bytes");
    ph_jw_uint(w, static_bytes);
    ph_jw_key(w, "placement_applied");
    ph_jw_uint(w, static_placed);
    ph_jw_key(w, "placement_pages_failed");
    ph_jw_uint(w, static_place_failed);
    ph_jw_end(w);
    ph_preload_ompt_report(w);
    ph_preload_mpi_report(w);
    ph_jw_end(w);
}

/* Engine off: the statistics file, without an engine. */
static void write_engine_off_stats(void)
{
    const char *path = ph_opt_str(PH_OPT_STATS_FILE);
    if (!path || !*path)
        return;
    /* where and by whom as the engine's statistics (the tunable's %r, %p
     * and %h replaced, the owning process only) */
    ph_jw w;
    ph_jw_init(&w, 1);
    ph_stats_begin_engineless(&w);
    ph_jw_key(&w, "note");
    ph_jw_string(&w, ph_api_engine_one_node()
                         ? "the engine was off: the machine has one NUMA node, where no "
                           "page can move (one_node_engine=1 runs it anyway): placement "
                           "and interposition only, no sampling and no migration; what "
                           "transparent mode saw is below"
                         : "the engine was off (--migrate off, engine=off): placement and "
                           "interposition only, no sampling and no migration; what "
                           "transparent mode saw is below");
    ph_jw_key(&w, "config");
    ph_jw_object(&w, 0);
    ph_jw_key(&w, "mechanism");
    ph_jw_string(&w, "off");
    ph_jw_key(&w, "tunables");
    ph_opt_write_json(&w);
    ph_jw_end(&w);
    report_transparent(&w);
    ph_jw_end(&w);
    ph_api_write_stats_doc(&w);
    ph_jw_free(&w);
}

__attribute__((constructor)) static void preload_start(void)
{
    if (ph_init() != 0) {
        ph_warn("transparent mode: pagehome cannot start (%s): the program "
                "runs without it", ph_last_error());
        return;
    }
    ph_engine_set_report_extra(report_transparent);
    /* first: it may change the sample mechanism mpi_env asks about */
    ph_preload_ompt_env();
    ph_preload_mpi_env();
    size_t threshold = (size_t)ph_opt_int(PH_OPT_HOT_THRESHOLD);
    register_static(threshold, ph_opt_int(PH_OPT_ENGINE) != 4 /* off */);
    atomic_store_explicit(&ready, 1, memory_order_release);
}

__attribute__((destructor)) static void preload_end(void)
{
    if (!ph_preload_ready())
        return;
    atomic_store_explicit(&ready, 0, memory_order_release);
    uint64_t blocks = 0, bytes = 0;
    ph_heap_stats(&blocks, &bytes);
    ph_info("transparent mode: %llu large allocations (%llu MiB) were hot "
            "areas", (unsigned long long)blocks,
            (unsigned long long)(bytes >> 20));
    if (ph_opt_int(PH_OPT_ENGINE) == 4 /* off */)
        write_engine_off_stats();
    ph_finalize();
}
