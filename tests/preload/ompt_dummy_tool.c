/*
 * ompt_dummy_tool.c -- a second OMPT tool, standing in for a profiler, for
 * the tests of tool chaining (src/preload/ompt_chain.c, check_ompt_chain.sh).
 * Built as a shared library; loaded with LD_PRELOAD or OMP_TOOL_LIBRARIES.
 *
 * It registers thread_begin, parallel_begin, parallel_end, implicit_task
 * (events pagehome's tool registers too) and work (one pagehome does not),
 * counts them, and uses every data slot the runtime gives a tool: its
 * tool_data, the thread data (checked again through ompt_get_thread_data),
 * the parallel data (set at parallel_begin, checked at the implicit
 * tasks' begin and at parallel_end) and the task data (set at an implicit
 * task's begin, checked at its end and in the work callback).  Anything
 * found wrong, or an ompt_get_callback answer (asked at the first region)
 * that is not its own callback, counts as a data error.  At finalize it prints one line on stderr:
 *
 *   ompt_dummy_tool: parallel_begin=P parallel_end=P thread_begin=T
 *   (initial I, worker W) implicit_task=B/E work=K data_errors=0 tool_data=ok
 *
 * DUMMY_DECLINE=1: its ompt_start_tool returns NULL (no tool).
 * DUMMY_REFUSE=1: it registers its callbacks, then its initialize returns
 * 0; at exit it prints how many callbacks still reached it (must be 0).
 */
#include <omp-tools.h>

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define MAGIC_TOOL 0xD0D0F00Du
#define MAGIC_THREAD 0x7E000000u
#define MAGIC_PAR 0x9A000000u
#define MAGIC_TASK 0x7A000000u
#define MAGIC_MASK 0xFF000000u

static atomic_int par_begin, par_end, thr_initial, thr_worker, impl_begin,
    impl_end, work_begin, data_errors, calls;
static int refused;
static ompt_get_thread_data_t get_thread_data;
static ompt_get_callback_t get_callback;

static void bad(void)
{
    atomic_fetch_add(&data_errors, 1);
}

static void on_thread_begin(ompt_thread_t type, ompt_data_t *data)
{
    atomic_fetch_add(&calls, 1);
    if (!data) {
        bad();
        return;
    }
    if (type == ompt_thread_initial)
        atomic_fetch_add(&thr_initial, 1);
    else if (type == ompt_thread_worker)
        atomic_fetch_add(&thr_worker, 1);
    data->value = MAGIC_THREAD | (uint64_t)type;
}

static void on_work(ompt_work_t kind, ompt_scope_endpoint_t endpoint,
                    ompt_data_t *par, ompt_data_t *task, uint64_t count,
                    const void *codeptr);

static void on_parallel_begin(ompt_data_t *task, const ompt_frame_t *frame,
                              ompt_data_t *par, unsigned int requested,
                              int flags, const void *codeptr)
{
    (void)task;
    (void)frame;
    (void)requested;
    (void)flags;
    (void)codeptr;
    atomic_fetch_add(&calls, 1);
    int n = atomic_fetch_add(&par_begin, 1);
    if (!par || par->value != 0) /* fresh slot: the runtime zeroes it */
        bad();
    if (n == 0) {
        /* ompt_get_callback gives back this tool's own callbacks (libomp
         * answers it only once the tool is initialized). */
        ompt_callback_t f = NULL, g = NULL;
        if (!get_callback(ompt_callback_parallel_begin, &f) ||
            f != (ompt_callback_t)on_parallel_begin ||
            !get_callback(ompt_callback_work, &g) || g != (ompt_callback_t)on_work)
            bad();
    }
    if (par)
        par->value = MAGIC_PAR | (uint64_t)(n & 0xffffff);
}

static void on_parallel_end(ompt_data_t *par, ompt_data_t *task, int flags,
                            const void *codeptr)
{
    (void)task;
    (void)flags;
    (void)codeptr;
    atomic_fetch_add(&calls, 1);
    atomic_fetch_add(&par_end, 1);
    if (!par || (par->value & MAGIC_MASK) != MAGIC_PAR)
        bad();
}

static void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t *par,
                             ompt_data_t *task, unsigned int nthreads,
                             unsigned int index, int flags)
{
    (void)nthreads;
    atomic_fetch_add(&calls, 1);
    if (!(flags & ompt_task_implicit) || (flags & ompt_task_initial) || !task)
        return;
    if (endpoint == ompt_scope_begin) {
        atomic_fetch_add(&impl_begin, 1);
        if (!par || (par->value & MAGIC_MASK) != MAGIC_PAR)
            bad();
        ompt_data_t *t = get_thread_data ? get_thread_data() : NULL;
        if (!t || (t->value & MAGIC_MASK) != MAGIC_THREAD)
            bad();
        task->value = MAGIC_TASK | index;
    } else if (endpoint == ompt_scope_end) {
        atomic_fetch_add(&impl_end, 1);
        if ((task->value & MAGIC_MASK) != MAGIC_TASK)
            bad();
    }
}

static void on_work(ompt_work_t kind, ompt_scope_endpoint_t endpoint,
                    ompt_data_t *par, ompt_data_t *task, uint64_t count,
                    const void *codeptr)
{
    (void)par;
    (void)count;
    (void)codeptr;
    atomic_fetch_add(&calls, 1);
    if (endpoint != ompt_scope_begin || kind != ompt_work_loop)
        return;
    atomic_fetch_add(&work_begin, 1);
    if (!task || (task->value & MAGIC_MASK) != MAGIC_TASK)
        bad();
}

static int dummy_initialize(ompt_function_lookup_t lookup, int device,
                            ompt_data_t *tool_data)
{
    (void)device;
    ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
    get_callback = (ompt_get_callback_t)lookup("ompt_get_callback");
    get_thread_data = (ompt_get_thread_data_t)lookup("ompt_get_thread_data");
    if (!set || !get_callback || !get_thread_data) {
        fprintf(stderr, "ompt_dummy_tool: entry points missing\n");
        return 0;
    }
    tool_data->value = MAGIC_TOOL;
    struct {
        ompt_callbacks_t event;
        ompt_callback_t fn;
    } cbs[] = {
        {ompt_callback_thread_begin, (ompt_callback_t)on_thread_begin},
        {ompt_callback_parallel_begin, (ompt_callback_t)on_parallel_begin},
        {ompt_callback_parallel_end, (ompt_callback_t)on_parallel_end},
        {ompt_callback_implicit_task, (ompt_callback_t)on_implicit_task},
        {ompt_callback_work, (ompt_callback_t)on_work},
    };
    for (size_t i = 0; i < sizeof cbs / sizeof cbs[0]; i++) {
        if (set(cbs[i].event, cbs[i].fn) == ompt_set_error)
            bad();
    }
    const char *r = getenv("DUMMY_REFUSE");
    if (r && *r == '1') {
        refused = 1;
        return 0;
    }
    return 1;
}

static void dummy_finalize(ompt_data_t *tool_data)
{
    fprintf(stderr,
            "ompt_dummy_tool: parallel_begin=%d parallel_end=%d thread_begin=%d "
            "(initial %d, worker %d) implicit_task=%d/%d work=%d data_errors=%d "
            "tool_data=%s\n",
            atomic_load(&par_begin), atomic_load(&par_end),
            atomic_load(&thr_initial) + atomic_load(&thr_worker),
            atomic_load(&thr_initial), atomic_load(&thr_worker),
            atomic_load(&impl_begin), atomic_load(&impl_end),
            atomic_load(&work_begin), atomic_load(&data_errors),
            tool_data->value == MAGIC_TOOL ? "ok" : "WRONG");
}

__attribute__((destructor)) static void dummy_at_exit(void)
{
    if (refused)
        fprintf(stderr, "ompt_dummy_tool: refused at initialize; callbacks "
                        "received since: %d\n", atomic_load(&calls));
}

/* Exported (the build hides symbols by default). */
__attribute__((visibility("default"))) ompt_start_tool_result_t *
ompt_start_tool(unsigned int omp_version, const char *runtime_version);
ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version,
                                          const char *runtime_version)
{
    (void)omp_version;
    (void)runtime_version;
    const char *d = getenv("DUMMY_DECLINE");
    if (d && *d == '1')
        return NULL;
    static ompt_start_tool_result_t result = {
        .initialize = dummy_initialize,
        .finalize = dummy_finalize,
        .tool_data = {.value = 0},
    };
    return &result;
}
