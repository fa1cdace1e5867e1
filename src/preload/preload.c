/*
 * preload.c -- transparent mode's start and end (see preload.h).
 *
 * The constructor runs before main(): it initialises pagehome (tunables
 * from the environment that `pagehome run` prepared, the machine), then
 * registers the program's large static arrays as hot areas, and marks the
 * library ready so that heap.c starts serving large allocations.
 *
 * Static arrays: C static arrays and Fortran COMMON blocks live in the
 * executable's writable segments -- .data (file-backed, "rw-p" with the
 * executable's path in /proc/self/maps) and .bss (the anonymous "rw-p"
 * mapping right after it).  Those of at least hot_threshold bytes are
 * registered (and marked MADV_NOHUGEPAGE, for 4 KiB precision).  The
 * first page of the file-backed segment is left out: it
 * holds the GOT and the runtime's small variables, which every call
 * through the PLT touches (watching it would trap all the time and tell
 * nothing about the program's data).  Shared libraries' segments are not
 * registered: their big writable data is rare and not the program's.
 *
 * At exit the destructor finalizes the engine (lifting every protection
 * while the OpenMP workers may still run) and writes stats_file.
 */
#include "preload/preload.h"

#include "pagehome.h"

#include "base/log.h"
#include "config/options.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static atomic_int ready;

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

static void register_static(size_t threshold)
{
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
        /* 4 KiB precision: with THP=always the kernel would back the
         * segment with 2 MiB pages, and moving one 4 KiB page of those
         * moves all 512 (pages not yet touched are not huge yet). */
        madvise((void *)lo, m.hi - lo, MADV_NOHUGEPAGE);
        char name[64];
        snprintf(name, sizeof name, "static %s #%d", what, count++);
        if (!ph_area_register((void *)lo, m.hi - lo, name))
            ph_warn("transparent mode: cannot watch the program's %s "
                    "segment %p-%p: %s", what, (void *)lo, (void *)m.hi,
                    ph_last_error());
        else
            ph_info("transparent mode: watching %s segment %p-%p (%zu KiB)",
                    what, (void *)lo, (void *)m.hi, (m.hi - lo) >> 10);
    }
    fclose(f);
}

__attribute__((constructor)) static void preload_start(void)
{
    if (ph_init() != 0) {
        ph_warn("transparent mode: pagehome cannot start (%s): the program "
                "runs without it", ph_last_error());
        return;
    }
    size_t threshold = (size_t)ph_opt_int(PH_OPT_HOT_THRESHOLD);
    if (ph_opt_int(PH_OPT_ENGINE) != 4 /* off */)
        register_static(threshold);
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
    ph_finalize();
}
