/*
 * gomp_shim.c -- libgomp.so.1 for the gcc programs `pagehome run` moves
 * onto LLVM's libomp (libpagehome_gomp.so; not part of the preload layer's
 * objects: it calls nothing of pagehome's).
 *
 * WHY.  GNU libgomp has no OpenMP tools interface, so `pagehome run`
 * runs a gcc-built program on LLVM's libomp, which implements the GOMP_*
 * entry points gcc emits.  But libomp (14) stops at libgomp's version
 * names GOMP_5.0.1 and OMP_5.0, and leaves out the entry points of target
 * constructs.  A program built by gcc 12 that calls omp_alloc,
 * omp_get_device_num or omp_get_max_teams (versions OMP_5.0.1 ... OMP_5.1),
 * that has an `omp target` region (run on the host: GOMP_target_ext), or a
 * Fortran program built with -fdefault-integer-8 (omp_set_num_threads_8_),
 * would not even start: the loader refuses a version or a symbol that its
 * libgomp.so.1 lacks.
 *
 * WHAT.  This library's soname is libgomp.so.1 and it needs libomp.so.5;
 * the run's private directory links both names (tools/pagehome/cmd_run.c).
 * It defines every version name of GNU libgomp's OpenMP interface, so the
 * loader's version check passes, and only what libomp lacks:
 *   - the OpenMP 5 routines libomp has under its own version name,
 *     forwarded to it under libgomp's names;
 *   - target constructs, run on the host as libgomp runs them when no
 *     device is there: data mapping is the identity, a firstprivate
 *     variable gets a private copy, a region with dependences waits for
 *     the encountering task's children first and then runs at once (which
 *     a `nowait` allows); the thread_limit of a target region is not
 *     applied;
 *   - teams inside a target region (GOMP_teams4): the lower bound's number
 *     of teams, one after the other on the encountering thread, with
 *     omp_get_team_num / omp_get_num_teams answering for them;
 *   - omp_target_* memory routines for the host device;
 *   - the integer(8) Fortran entry points, converted to libomp's;
 *   - `omp error` (GOMP_error, GOMP_warning); offload registration (there
 *     is no device: nothing to register);
 *   - `omp scope` with task reductions, which libomp cannot run: a message
 *     naming --runtime=gomp, and exit.
 * Everything else the program asks of libgomp binds to libomp itself
 * (libomp comes after this library in the loader's search order).
 * OpenACC (libgomp's OACC and GOACC names) is not provided: a program
 * that needs it keeps GNU libgomp (cmd_run.c reads its version needs).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Every definition here is exported through gomp_shim.map: entry points
 * of libgomp's interface, which no header of ours declares. */
#define SHIM __attribute__((visibility("default")))
#pragma GCC diagnostic ignored "-Wmissing-prototypes"

/* ---- libomp's own routines ---------------------------------------------------- */

/* Declared here rather than by an omp.h: the types are the ABI's (an
 * allocator or memspace handle is pointer-sized, a Fortran argument is a
 * pointer). */
extern void omp_set_num_threads(int);
extern void omp_set_dynamic(int);
extern void omp_set_nested(int);
extern void omp_set_schedule(int, int);
extern void omp_get_schedule(int *, int *);
extern void omp_set_max_active_levels(int);
extern int omp_get_ancestor_thread_num(int);
extern int omp_get_team_size(int);
extern int omp_get_place_num_procs(int);
extern void omp_get_place_proc_ids(int, int *);
extern int omp_get_partition_num_places(void);
extern void omp_get_partition_place_nums(int *);
extern void omp_set_default_device(int);
extern int omp_get_initial_device(void);
extern void GOMP_taskwait(void);

/* libomp's definition of NAME (the next one after this library), or a
 * message and exit: a forwarder that cannot forward has nothing to run. */
static void *next_sym(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "pagehome: %s is not in LLVM's libomp; run the program with "
                        "`pagehome run --runtime=gomp`\n", name);
        _exit(127);
    }
    return f;
}

/* A routine libomp has under its own version name, under libgomp's:
 * FORWARD for one that returns a value, FORWARD_VOID for one that does
 * not.  libomp's definition is looked up at the first call. */
#define LOOKUP(name)                                                              \
    static void *fp;                                                              \
    void *f = __atomic_load_n(&fp, __ATOMIC_ACQUIRE);                             \
    if (!f) {                                                                     \
        f = next_sym(#name);                                                      \
        __atomic_store_n(&fp, f, __ATOMIC_RELEASE);                               \
    }
#define FORWARD(ret, name, params, args)                                          \
    SHIM ret name params                                                          \
    {                                                                             \
        LOOKUP(name)                                                              \
        return ((ret(*) params)f) args;                                           \
    }
#define FORWARD_VOID(name, params, args)                                          \
    SHIM void name params                                                         \
    {                                                                             \
        LOOKUP(name)                                                              \
        ((void(*) params)f) args;                                                 \
    }

/* OMP_5.0.1 */
FORWARD(void *, omp_alloc, (size_t size, uintptr_t a), (size, a))
FORWARD_VOID(omp_free, (void *p, uintptr_t a), (p, a))
FORWARD(uintptr_t, omp_init_allocator, (uintptr_t space, int n, const void *traits),
        (space, n, traits))
FORWARD(uintptr_t, omp_init_allocator_, (const void *space, const void *n, const void *traits),
        (space, n, traits))
FORWARD_VOID(omp_destroy_allocator, (uintptr_t a), (a))
FORWARD_VOID(omp_destroy_allocator_, (const void *a), (a))
FORWARD_VOID(omp_set_default_allocator, (uintptr_t a), (a))
FORWARD_VOID(omp_set_default_allocator_, (const void *a), (a))
FORWARD(uintptr_t, omp_get_default_allocator, (void), ())
FORWARD(uintptr_t, omp_get_default_allocator_, (void), ())
FORWARD_VOID(omp_fulfill_event, (uintptr_t e), (e))
FORWARD_VOID(omp_fulfill_event_, (const void *e), (e))
FORWARD(int, omp_get_supported_active_levels, (void), ())
FORWARD(int, omp_get_supported_active_levels_, (void), ())
/* OMP_5.0.2 */
FORWARD(void *, omp_aligned_alloc, (size_t align, size_t size, uintptr_t a), (align, size, a))
FORWARD(void *, omp_calloc, (size_t n, size_t size, uintptr_t a), (n, size, a))
FORWARD(void *, omp_aligned_calloc, (size_t align, size_t n, size_t size, uintptr_t a),
        (align, n, size, a))
FORWARD(void *, omp_realloc, (void *p, size_t size, uintptr_t a, uintptr_t fa), (p, size, a, fa))
FORWARD(int, omp_get_device_num, (void), ())
FORWARD(int, omp_get_device_num_, (void), ())
/* OMP_5.1 */
FORWARD_VOID(omp_display_env, (int verbose), (verbose))
FORWARD_VOID(omp_display_env_, (const void *verbose), (verbose))
FORWARD(int, omp_get_max_teams, (void), ())
FORWARD(int, omp_get_max_teams_, (void), ())
FORWARD_VOID(omp_set_num_teams, (int n), (n))
FORWARD_VOID(omp_set_num_teams_, (const void *n), (n))
FORWARD(int, omp_get_teams_thread_limit, (void), ())
FORWARD(int, omp_get_teams_thread_limit_, (void), ())
FORWARD_VOID(omp_set_teams_thread_limit, (int n), (n))
FORWARD_VOID(omp_set_teams_thread_limit_, (const void *n), (n))

/* ---- teams inside a target region -------------------------------------------- */

/* The host teams GOMP_teams4 is running on this thread: their count and
 * the current one (count 0: none). */
static __thread unsigned teams_count, team_now;

/* gcc calls it with first = true, runs the teams region's body while it
 * returns true, and calls it again (first = false) after each. */
SHIM bool GOMP_teams4(unsigned lower, unsigned upper, unsigned thread_limit, bool first)
{
    (void)upper;
    (void)thread_limit;
    if (first) {
        teams_count = lower ? lower : 1;
        team_now = 0;
        return true;
    }
    if (teams_count && team_now + 1 < teams_count) {
        team_now++;
        return true;
    }
    teams_count = team_now = 0;
    return false;
}

SHIM int omp_get_team_num(void)
{
    if (teams_count)
        return (int)team_now;
    LOOKUP(omp_get_team_num)
    return ((int (*)(void))f)();
}

SHIM int omp_get_num_teams(void)
{
    if (teams_count)
        return (int)teams_count;
    LOOKUP(omp_get_num_teams)
    return ((int (*)(void))f)();
}

SHIM int omp_get_team_num_(void) { return omp_get_team_num(); }
SHIM int omp_get_num_teams_(void) { return omp_get_num_teams(); }

/* ---- target constructs on the host ---------------------------------------------- */

/* The map kinds of the GOMP_4.5 interface: the low byte of kinds[i] is
 * the kind, the high byte the log2 of the variable's alignment. */
enum { MAP_FIRSTPRIVATE = 12 };

SHIM void GOMP_target_ext(int device, void (*fn)(void *), size_t mapnum, void **hostaddrs,
                          size_t *sizes, unsigned short *kinds, unsigned flags,
                          void **depend, void **args)
{
    (void)device;
    (void)flags;
    (void)args;
    if (depend)
        GOMP_taskwait(); /* its dependences are among these children */
    /* firstprivate variables: one private block, each copy at its
     * alignment, the region given the copies' addresses */
    size_t need = 0, align_max = 1;
    for (size_t i = 0; i < mapnum; i++)
        if ((kinds[i] & 0xff) == MAP_FIRSTPRIVATE) {
            size_t al = (size_t)1 << (kinds[i] >> 8);
            if (al > align_max)
                align_max = al;
            need = ((need + al - 1) & ~(al - 1)) + sizes[i];
        }
    char *block = NULL;
    if (need) {
        if (posix_memalign((void **)&block, align_max < sizeof(void *) ? sizeof(void *) : align_max,
                           need) != 0) {
            fprintf(stderr, "pagehome: target region: out of memory for %zu bytes of "
                            "firstprivate data\n", need);
            abort();
        }
        size_t at = 0;
        for (size_t i = 0; i < mapnum; i++)
            if ((kinds[i] & 0xff) == MAP_FIRSTPRIVATE && hostaddrs[i]) {
                size_t al = (size_t)1 << (kinds[i] >> 8);
                at = (at + al - 1) & ~(al - 1);
                memcpy(block + at, hostaddrs[i], sizes[i]);
                hostaddrs[i] = block + at;
                at += sizes[i];
            }
    }
    fn(hostaddrs);
    free(block);
}

/* Data on the host device is the host's: nothing to map, update or
 * unmap.  Dependences of such a construct order nothing else: the tasks
 * that depend on it depend on the same tasks it would have waited for. */
SHIM void GOMP_target_data_ext(int device, size_t mapnum, void **hostaddrs, size_t *sizes,
                               unsigned short *kinds)
{
    (void)device, (void)mapnum, (void)hostaddrs, (void)sizes, (void)kinds;
}

SHIM void GOMP_target_update_ext(int device, size_t mapnum, void **hostaddrs, size_t *sizes,
                                 unsigned short *kinds, unsigned flags, void **depend)
{
    (void)device, (void)mapnum, (void)hostaddrs, (void)sizes, (void)kinds, (void)flags,
        (void)depend;
}

SHIM void GOMP_target_enter_exit_data(int device, size_t mapnum, void **hostaddrs,
                                      size_t *sizes, unsigned short *kinds, unsigned flags,
                                      void **depend)
{
    (void)device, (void)mapnum, (void)hostaddrs, (void)sizes, (void)kinds, (void)flags,
        (void)depend;
}

/* Offload images of a program built with offloading: there is no device
 * here to load them on. */
SHIM void GOMP_offload_register_ver(unsigned version, const void *host_table, int type,
                                    const void *data)
{
    (void)version, (void)host_table, (void)type, (void)data;
}
SHIM void GOMP_offload_unregister_ver(unsigned version, const void *host_table, int type,
                                      const void *data)
{
    (void)version, (void)host_table, (void)type, (void)data;
}
SHIM void GOMP_offload_register(const void *host_table, int type, const void *data)
{
    (void)host_table, (void)type, (void)data;
}
SHIM void GOMP_offload_unregister(const void *host_table, int type, const void *data)
{
    (void)host_table, (void)type, (void)data;
}

/* ---- omp_target_* on the host device ------------------------------------------ */

/* The host is the only device: its number (omp_get_initial_device) or
 * omp_initial_device (-1, OpenMP 5.1). */
static int is_host(int device)
{
    return device == -1 || device == omp_get_initial_device();
}

SHIM void *omp_target_alloc(size_t size, int device)
{
    return is_host(device) ? malloc(size ? size : 1) : NULL;
}

SHIM void omp_target_free(void *p, int device)
{
    if (is_host(device))
        free(p);
}

SHIM int omp_target_is_present(const void *p, int device)
{
    (void)p;
    return is_host(device);
}

SHIM int omp_target_memcpy(void *dst, const void *src, size_t len, size_t dst_off,
                           size_t src_off, int dst_device, int src_device)
{
    if (!is_host(dst_device) || !is_host(src_device))
        return EINVAL;
    memmove((char *)dst + dst_off, (const char *)src + src_off, len);
    return 0;
}

/* One dimension of a rectangular copy: element runs of the last
 * dimension are contiguous. */
static void copy_rect(char *dst, const char *src, size_t elem, int ndims, const size_t *volume,
                      const size_t *dst_off, const size_t *src_off, const size_t *dst_dims,
                      const size_t *src_dims)
{
    if (ndims == 1) {
        memmove(dst + dst_off[0] * elem, src + src_off[0] * elem, volume[0] * elem);
        return;
    }
    /* bytes between two consecutive indices of this dimension */
    size_t dst_stride = elem, src_stride = elem;
    for (int d = 1; d < ndims; d++) {
        dst_stride *= dst_dims[d];
        src_stride *= src_dims[d];
    }
    for (size_t k = 0; k < volume[0]; k++)
        copy_rect(dst + (dst_off[0] + k) * dst_stride, src + (src_off[0] + k) * src_stride,
                  elem, ndims - 1, volume + 1, dst_off + 1, src_off + 1, dst_dims + 1,
                  src_dims + 1);
}

SHIM int omp_target_memcpy_rect(void *dst, const void *src, size_t elem, int ndims,
                                const size_t *volume, const size_t *dst_off,
                                const size_t *src_off, const size_t *dst_dims,
                                const size_t *src_dims, int dst_device, int src_device)
{
    if (!dst && !src)
        return INT_MAX; /* the number of dimensions supported */
    if (!dst || !src || ndims < 1 || !is_host(dst_device) || !is_host(src_device))
        return EINVAL;
    copy_rect(dst, src, elem, ndims, volume, dst_off, src_off, dst_dims, src_dims);
    return 0;
}

SHIM int omp_target_associate_ptr(const void *host, const void *dev, size_t size, size_t off,
                                  int device)
{
    (void)host, (void)dev, (void)size, (void)off, (void)device;
    return EINVAL; /* nothing to associate on the host device */
}

SHIM int omp_target_disassociate_ptr(const void *p, int device)
{
    (void)p, (void)device;
    return EINVAL;
}

/* ---- Fortran's integer(8) entry points (-fdefault-integer-8) ------------------ */

static int to_int(int64_t v)
{
    return v > INT_MAX ? INT_MAX : v < INT_MIN ? INT_MIN : (int)v;
}

SHIM void omp_set_num_threads_8_(const int64_t *n) { omp_set_num_threads(to_int(*n)); }
SHIM void omp_set_dynamic_8_(const int64_t *b) { omp_set_dynamic(*b != 0); }
SHIM void omp_set_nested_8_(const int64_t *b) { omp_set_nested(*b != 0); }
SHIM void omp_set_max_active_levels_8_(const int64_t *n)
{
    omp_set_max_active_levels(to_int(*n));
}
SHIM void omp_set_schedule_8_(const int32_t *kind, const int64_t *chunk)
{
    omp_set_schedule(*kind, to_int(*chunk));
}
SHIM void omp_get_schedule_8_(int32_t *kind, int64_t *chunk)
{
    int k = 0, c = 0;
    omp_get_schedule(&k, &c);
    *kind = k;
    *chunk = c;
}
SHIM int32_t omp_get_ancestor_thread_num_8_(const int64_t *level)
{
    return omp_get_ancestor_thread_num(to_int(*level));
}
SHIM int32_t omp_get_team_size_8_(const int64_t *level)
{
    return omp_get_team_size(to_int(*level));
}
SHIM int32_t omp_get_place_num_procs_8_(const int64_t *place)
{
    return omp_get_place_num_procs(to_int(*place));
}
SHIM void omp_get_place_proc_ids_8_(const int64_t *place, int64_t *ids)
{
    int n = omp_get_place_num_procs(to_int(*place));
    int *tmp = n > 0 ? malloc((size_t)n * sizeof *tmp) : NULL;
    if (!tmp)
        return;
    omp_get_place_proc_ids(to_int(*place), tmp);
    for (int i = 0; i < n; i++)
        ids[i] = tmp[i];
    free(tmp);
}
SHIM void omp_get_partition_place_nums_8_(int64_t *nums)
{
    int n = omp_get_partition_num_places();
    int *tmp = n > 0 ? malloc((size_t)n * sizeof *tmp) : NULL;
    if (!tmp)
        return;
    omp_get_partition_place_nums(tmp);
    for (int i = 0; i < n; i++)
        nums[i] = tmp[i];
    free(tmp);
}
SHIM void omp_set_default_device_8_(const int64_t *d) { omp_set_default_device(to_int(*d)); }
SHIM void omp_display_env_8_(const int64_t *verbose) { omp_display_env(*verbose != 0); }
SHIM void omp_set_num_teams_8_(const int64_t *n) { omp_set_num_teams(to_int(*n)); }
SHIM void omp_set_teams_thread_limit_8_(const int64_t *n)
{
    omp_set_teams_thread_limit(to_int(*n));
}
SHIM uintptr_t omp_init_allocator_8_(const uintptr_t *space, const int64_t *n,
                                     const void *traits)
{
    return omp_init_allocator(*space, to_int(*n), traits);
}

/* ---- the rest of gcc 12's interface ----------------------------------------- */

/* `omp error severity(fatal|warning) at(execution)`: MSG has LEN bytes,
 * or ends with a NUL when LEN is (size_t)-1; NULL: no message clause. */
static void say(const char *what, const char *msg, size_t len)
{
    if (!msg)
        fprintf(stderr, "libgomp: %serror directive encountered\n", what);
    else if (len == (size_t)-1)
        fprintf(stderr, "libgomp: %serror directive encountered: %s\n", what, msg);
    else
        fprintf(stderr, "libgomp: %serror directive encountered: %.*s\n", what,
                (int)(len > INT_MAX ? INT_MAX : len), msg);
}

SHIM void GOMP_error(const char *msg, size_t len)
{
    say("fatal error: ", msg, len);
    exit(EXIT_FAILURE);
}

SHIM void GOMP_warning(const char *msg, size_t len)
{
    say("", msg, len);
}

/* `omp scope`: only its task reductions need the runtime, and libomp has
 * none of libgomp's. */
SHIM void GOMP_scope_start(uintptr_t *reductions)
{
    if (!reductions)
        return;
    fprintf(stderr, "pagehome: `omp scope` with task reductions needs GNU libgomp: run the "
                    "program with `pagehome run --runtime=gomp`\n");
    exit(EXIT_FAILURE);
}
