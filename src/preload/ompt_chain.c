/*
 * ompt_chain.c -- the OpenMP tools interface shared with another tool.
 *
 * WHY
 *   An OpenMP runtime starts one tool: libomp calls the first
 *   ompt_start_tool in the loader's search order and, only when that
 *   returns NULL, the ones named by OMP_TOOL_LIBRARIES.  libpagehome_
 *   preload.so comes first (LD_PRELOAD, put in front by `pagehome run`),
 *   so a program run under a profiler or a correctness tool that uses
 *   OMPT would silently lose it.  This file exports ompt_start_tool and
 *   starts that other tool too, as LLVM's tools do for each other
 *   (openmp/tools/multiplex): both get their own initialize and finalize
 *   and every callback they registered.
 *
 * FINDING THE OTHER TOOL (once, at the runtime's first call)
 *   1. dlsym(RTLD_NEXT, "ompt_start_tool"): the next definition after this
 *      library -- a tool preloaded after it, a tool the program links, or
 *      libomp's own default, which looks further along in the same way.
 *   2. If that gives no tool (none, or it returned NULL): each library of
 *      OMP_TOOL_LIBRARIES (':'-separated) in turn, dlopen(RTLD_LAZY) and
 *      its ompt_start_tool, the first that returns a result -- what libomp
 *      would have done had pagehome's ompt_start_tool returned NULL.
 *      A library that fails to load is skipped with a note (verbose), a
 *      library that declines is closed again.
 *   A definition that is pagehome's own is skipped (this library named in
 *   OMP_TOOL_LIBRARIES too).  libomp's last resort, libarcher.so for
 *   programs built with ThreadSanitizer, is not imitated.  With no other
 *   tool, pagehome's own result goes to the runtime as it is: nothing
 *   below runs.
 *
 * MULTIPLEXING
 *   The runtime gets a result whose initialize calls pagehome's initialize,
 *   then the other tool's, each with its own lookup function and its own
 *   tool_data, and returns 1 when either accepted; finalize calls the
 *   other tool's finalize, then pagehome's (each only if its initialize
 *   accepted).  The lookups answer "ompt_set_callback" and
 *   "ompt_get_callback" with wrappers, and every other entry point with
 *   the runtime's own.
 *
 *   The events pagehome registers (thread_begin, parallel_begin,
 *   parallel_end, implicit_task, sync_region) are registered with the
 *   runtime once, with a dispatcher that calls pagehome's callback and the
 *   other tool's: at a begin pagehome's first, at an end the other's
 *   first, so that the other tool's view of a region excludes the work
 *   pagehome does at its edges (an iteration end's migrations happen
 *   before the region begins for it).  Any other event the other tool
 *   registers goes straight to the runtime: it pays nothing for sharing.
 *   pagehome registering an event that has no dispatcher is refused
 *   (ompt_set_error, and a warning): it would silently take the event
 *   from the other tool.  ompt_get_callback answers each tool with its own
 *   callback.  A tool whose initialize declines loses its registrations
 *   (those that went straight to the runtime are unregistered).
 *
 * TOOL DATA
 *   Each OMPT callback receives the runtime's ompt_data_t slots (thread,
 *   parallel region, task), one word each, meant for one tool.
 *   pagehome's callbacks keep nothing in them (ompt.c keys its state by
 *   thread-local variables and code addresses), so the slots belong
 *   wholly to the other tool: it receives the runtime's pointers
 *   unchanged, and its ompt_get_thread_data / get_task_info /
 *   get_parallel_info are the runtime's, while pagehome's callbacks get
 *   NULL for them.  multiplex.h instead allocates a pair of words per slot
 *   at every begin event and frees it at the end; that is needed only when
 *   both tools use the slots, costs an allocation per region and thread,
 *   and leaves a tool without data for the events neither tool's begin
 *   callback covered.
 *
 * The tables are written while the tools initialize (the runtime's
 * initial thread, before any region) and read by every thread after:
 * atomics, relaxed loads (the runtime's own start-up orders them).
 */
#include "preload/ompt_chain.h"

#include "pagehome.h"
#include "base/log.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

PH_API ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version,
                                                 const char *runtime_version);

/* The events with a dispatcher: those ompt.c registers. */
enum { EV_THREAD_BEGIN, EV_PARALLEL_BEGIN, EV_PARALLEL_END, EV_IMPLICIT_TASK,
       EV_SYNC_REGION, EV_COUNT };

static const ompt_callbacks_t ev_id[EV_COUNT] = {
    ompt_callback_thread_begin, ompt_callback_parallel_begin,
    ompt_callback_parallel_end, ompt_callback_implicit_task,
    ompt_callback_sync_region,
};

enum { OWN = 0, OTHER = 1 };

static struct {
    ompt_start_tool_result_t *tool[2]; /* pagehome's, the other tool's */
    int accepted[2];                   /* initialize returned non-zero */
    ompt_function_lookup_t rt_lookup;
    ompt_set_callback_t rt_set;
    ompt_get_callback_t rt_get;
    _Atomic(ompt_callback_t) cb[2][EV_COUNT];
    int registered[EV_COUNT];          /* dispatcher given to the runtime */
    ompt_set_result_t result[EV_COUNT];/* what the runtime said then */
    /* events the other tool registered straight with the runtime */
    unsigned char direct[64];
    char other[PATH_MAX + 48];         /* "FILE (how found)" */
} ch;

const char *ph_ompt_chain_other(void)
{
    return ch.tool[OTHER] && ch.accepted[OTHER] ? ch.other : NULL;
}

static int ev_index(ompt_callbacks_t which)
{
    for (int e = 0; e < EV_COUNT; e++)
        if (ev_id[e] == which)
            return e;
    return -1;
}

static ompt_callback_t cb_of(int tool, int e)
{
    return atomic_load_explicit(&ch.cb[tool][e], memory_order_relaxed);
}

/* ---- dispatchers ------------------------------------------------------- */

static void d_thread_begin(ompt_thread_t type, ompt_data_t *data)
{
    ompt_callback_thread_begin_t f;
    if ((f = (ompt_callback_thread_begin_t)cb_of(OWN, EV_THREAD_BEGIN)))
        f(type, NULL);
    if ((f = (ompt_callback_thread_begin_t)cb_of(OTHER, EV_THREAD_BEGIN)))
        f(type, data);
}

static void d_parallel_begin(ompt_data_t *task, const ompt_frame_t *frame,
                             ompt_data_t *par, unsigned int requested,
                             int flags, const void *codeptr)
{
    ompt_callback_parallel_begin_t f;
    if ((f = (ompt_callback_parallel_begin_t)cb_of(OWN, EV_PARALLEL_BEGIN)))
        f(NULL, frame, NULL, requested, flags, codeptr);
    if ((f = (ompt_callback_parallel_begin_t)cb_of(OTHER, EV_PARALLEL_BEGIN)))
        f(task, frame, par, requested, flags, codeptr);
}

static void d_parallel_end(ompt_data_t *par, ompt_data_t *task, int flags,
                           const void *codeptr)
{
    ompt_callback_parallel_end_t f;
    if ((f = (ompt_callback_parallel_end_t)cb_of(OTHER, EV_PARALLEL_END)))
        f(par, task, flags, codeptr);
    if ((f = (ompt_callback_parallel_end_t)cb_of(OWN, EV_PARALLEL_END)))
        f(NULL, NULL, flags, codeptr);
}

static void d_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t *par,
                            ompt_data_t *task, unsigned int nthreads,
                            unsigned int index, int flags)
{
    ompt_callback_implicit_task_t own =
        (ompt_callback_implicit_task_t)cb_of(OWN, EV_IMPLICIT_TASK);
    ompt_callback_implicit_task_t other =
        (ompt_callback_implicit_task_t)cb_of(OTHER, EV_IMPLICIT_TASK);
    if (endpoint == ompt_scope_end) {
        if (other)
            other(endpoint, par, task, nthreads, index, flags);
        if (own)
            own(endpoint, NULL, NULL, nthreads, index, flags);
        return;
    }
    if (own)
        own(endpoint, NULL, NULL, nthreads, index, flags);
    if (other)
        other(endpoint, par, task, nthreads, index, flags);
}

static void d_sync_region(ompt_sync_region_t kind,
                          ompt_scope_endpoint_t endpoint, ompt_data_t *par,
                          ompt_data_t *task, const void *codeptr)
{
    ompt_callback_sync_region_t own =
        (ompt_callback_sync_region_t)cb_of(OWN, EV_SYNC_REGION);
    ompt_callback_sync_region_t other =
        (ompt_callback_sync_region_t)cb_of(OTHER, EV_SYNC_REGION);
    if (endpoint == ompt_scope_end) {
        if (other)
            other(kind, endpoint, par, task, codeptr);
        if (own)
            own(kind, endpoint, NULL, NULL, codeptr);
        return;
    }
    if (own)
        own(kind, endpoint, NULL, NULL, codeptr);
    if (other)
        other(kind, endpoint, par, task, codeptr);
}

static const ompt_callback_t dispatcher[EV_COUNT] = {
    (ompt_callback_t)d_thread_begin, (ompt_callback_t)d_parallel_begin,
    (ompt_callback_t)d_parallel_end, (ompt_callback_t)d_implicit_task,
    (ompt_callback_t)d_sync_region,
};

/* ---- the tools' entry points -------------------------------------------- */

static ompt_set_result_t set_for(int tool, ompt_callbacks_t which,
                                 ompt_callback_t fn)
{
    int e = ev_index(which);
    if (e < 0) {
        if (tool == OWN) {
            ph_warn("ompt: callback %d cannot be shared with the other tool "
                    "(%s): not registered", (int)which, ch.other);
            return ompt_set_error;
        }
        if ((int)which > 0 && (size_t)which < sizeof ch.direct)
            ch.direct[which] = fn != NULL;
        return ch.rt_set(which, fn);
    }
    atomic_store_explicit(&ch.cb[tool][e], fn, memory_order_relaxed);
    if (!ch.registered[e]) {
        ch.result[e] = ch.rt_set(which, dispatcher[e]);
        ch.registered[e] = 1;
    }
    return ch.result[e];
}

static int get_for(int tool, ompt_callbacks_t which, ompt_callback_t *fn)
{
    int e = ev_index(which);
    if (e < 0)
        return ch.rt_get ? ch.rt_get(which, fn) : 0;
    ompt_callback_t f = cb_of(tool, e);
    if (!f)
        return 0;
    *fn = f;
    return 1;
}

static ompt_set_result_t own_set(ompt_callbacks_t which, ompt_callback_t fn)
{
    return set_for(OWN, which, fn);
}

static ompt_set_result_t other_set(ompt_callbacks_t which, ompt_callback_t fn)
{
    return set_for(OTHER, which, fn);
}

static int own_get(ompt_callbacks_t which, ompt_callback_t *fn)
{
    return get_for(OWN, which, fn);
}

static int other_get(ompt_callbacks_t which, ompt_callback_t *fn)
{
    return get_for(OTHER, which, fn);
}

static ompt_interface_fn_t own_lookup(const char *name)
{
    if (strcmp(name, "ompt_set_callback") == 0)
        return (ompt_interface_fn_t)own_set;
    if (strcmp(name, "ompt_get_callback") == 0)
        return (ompt_interface_fn_t)own_get;
    return ch.rt_lookup(name);
}

static ompt_interface_fn_t other_lookup(const char *name)
{
    if (strcmp(name, "ompt_set_callback") == 0)
        return (ompt_interface_fn_t)other_set;
    if (strcmp(name, "ompt_get_callback") == 0)
        return (ompt_interface_fn_t)other_get;
    return ch.rt_lookup(name);
}

/* A tool declined at initialize: it gets nothing. */
static void drop(int tool)
{
    for (int e = 0; e < EV_COUNT; e++)
        atomic_store_explicit(&ch.cb[tool][e], NULL, memory_order_relaxed);
    if (tool == OTHER)
        for (size_t w = 1; w < sizeof ch.direct; w++)
            if (ch.direct[w]) {
                ch.rt_set((ompt_callbacks_t)w, NULL);
                ch.direct[w] = 0;
            }
}

static int chain_initialize(ompt_function_lookup_t lookup, int device,
                            ompt_data_t *data)
{
    (void)data;
    ch.rt_lookup = lookup;
    ch.rt_set = (ompt_set_callback_t)lookup("ompt_set_callback");
    ch.rt_get = (ompt_get_callback_t)lookup("ompt_get_callback");
    if (!ch.rt_set)
        return 0; /* no callbacks at all: neither tool can work */
    for (int t = OWN; t <= OTHER; t++) {
        ompt_start_tool_result_t *r = ch.tool[t];
        ompt_function_lookup_t l = t == OWN ? own_lookup : other_lookup;
        ch.accepted[t] = r->initialize ? r->initialize(l, device, &r->tool_data) != 0 : 0;
        if (!ch.accepted[t])
            drop(t);
    }
    if (ch.accepted[OTHER])
        ph_info("ompt: sharing the tools interface with %s", ch.other);
    else
        ph_info("ompt: the other tool %s declined at initialize", ch.other);
    return ch.accepted[OWN] || ch.accepted[OTHER];
}

static void chain_finalize(ompt_data_t *data)
{
    (void)data;
    for (int t = OTHER; t >= OWN; t--) {
        ompt_start_tool_result_t *r = ch.tool[t];
        if (ch.accepted[t] && r->finalize)
            r->finalize(&r->tool_data);
    }
}

/* ---- finding the other tool --------------------------------------------- */

typedef ompt_start_tool_result_t *(*start_fn)(unsigned int, const char *);

static void name_other(start_fn f, const char *how)
{
    Dl_info di;
    const char *file = dladdr((void *)f, &di) && di.dli_fname ? di.dli_fname : "?";
    snprintf(ch.other, sizeof ch.other, "%s (%s)", file, how);
}

/* 1 when f is defined in this library (pagehome's own ompt_start_tool,
 * however it was reached). */
static int is_ours(start_fn f)
{
    Dl_info a, b;
    return dladdr((void *)f, &a) && dladdr((void *)chain_initialize, &b) &&
           a.dli_fbase == b.dli_fbase;
}

/* Each library of OMP_TOOL_LIBRARIES in turn, as libomp does. */
static ompt_start_tool_result_t *from_tool_libraries(unsigned int v,
                                                     const char *rv)
{
    const char *libs = getenv("OMP_TOOL_LIBRARIES");
    if (!libs)
        return NULL;
    char name[PATH_MAX];
    for (const char *p = libs; *p;) {
        size_t n = strcspn(p, ":");
        const char *next = p[n] ? p + n + 1 : p + n;
        if (n == 0 || n >= sizeof name) {
            p = next;
            continue;
        }
        memcpy(name, p, n);
        name[n] = '\0';
        p = next;
        void *h = dlopen(name, RTLD_LAZY);
        if (!h) {
            ph_info("ompt: OMP_TOOL_LIBRARIES: %s", dlerror());
            continue;
        }
        start_fn f = (start_fn)dlsym(h, "ompt_start_tool");
        ompt_start_tool_result_t *r = NULL;
        if (f && !is_ours(f))
            r = f(v, rv);
        if (r) {
            name_other(f, "OMP_TOOL_LIBRARIES");
            return r; /* h stays open for the process's life */
        }
        dlclose(h);
    }
    return NULL;
}

static ompt_start_tool_result_t *find_other(unsigned int v, const char *rv)
{
    start_fn f = (start_fn)dlsym(RTLD_NEXT, "ompt_start_tool");
    if (f && !is_ours(f)) {
        ompt_start_tool_result_t *r = f(v, rv);
        if (r) {
            name_other(f, "next in the search order");
            return r;
        }
    }
    return from_tool_libraries(v, rv);
}

PH_API ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version,
                                                 const char *runtime_version)
{
    /* Recursive: a tool whose start calls back here gets NULL. */
    static pthread_mutex_t once = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
    static int started, busy;
    static ompt_start_tool_result_t *answer;
    static ompt_start_tool_result_t chained = {
        .initialize = chain_initialize,
        .finalize = chain_finalize,
        .tool_data = {.value = 0},
    };
    pthread_mutex_lock(&once);
    if (busy) { /* the other tool's start called back here */
        pthread_mutex_unlock(&once);
        return NULL;
    }
    if (!started) {
        busy = 1;
        ompt_start_tool_result_t *own = ph_ompt_own_tool(omp_version, runtime_version);
        ompt_start_tool_result_t *other = find_other(omp_version, runtime_version);
        busy = 0;
        started = 1;
        if (!other || other == own) {
            answer = own;
        } else {
            ch.tool[OWN] = own;
            ch.tool[OTHER] = other;
            answer = &chained;
        }
    }
    pthread_mutex_unlock(&once);
    return answer;
}
