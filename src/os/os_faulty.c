/*
 * os_faulty.c -- an OS-operations table that wraps another and injects
 * failures (see os.h).  Used by tests to drive the mover's retry,
 * back-off and degrade paths, over the simulator or over Linux.
 *
 * Per-page draws come from splitmix64 over (seed, n) where n counts the
 * pages the wrapper has been asked to move since the plan was set, so a
 * single-threaded test sees the same failures on every run.  Pages given a
 * failure are not passed to the inner table: they are not moved.  The
 * front door (os.c) checked the arguments; the inner table is called
 * through its ops directly, so they are not checked twice.
 */
#include "os/os.h"

#include "base/error.h"
#include "base/rng.h"
#include "topo/topo.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(((ph_fault_stats *)0)->pages_to_node) / sizeof(uint64_t) ==
                   PH_MAX_NODES,
               "pages_to_node has one slot per node index");

typedef struct faulty_state {
    ph_os *inner;
    pthread_mutex_t lock;   /* plan, draw counter and stats */
    ph_fault_plan plan;
    uint64_t draws;
    ph_fault_stats st;
    char name[48];
    ph_os_ops ops;          /* faulty_ops with this instance's name */
} faulty_state;

static const ph_os_ops faulty_ops;
static void fy_close(ph_os *os);

static faulty_state *faulty_of(ph_os *os)
{
    return (os && os->ops && os->ops->close == fy_close) ? os->impl : NULL;
}

/* Uniform in [0, 1). */
static double draw(faulty_state *f)
{
    return ph_rng_unit(ph_splitmix64(f->plan.seed ^ ph_splitmix64(f->draws++)));
}

void ph_fault_plan_init(ph_fault_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    plan->enomem_node = -1;
}

/* ---- move ------------------------------------------------------------------ */

static long fy_move(ph_os *os, size_t count, void *const *pages, const int *nodes,
                    int *status)
{
    faulty_state *f = os->impl;
    void **ip = malloc(count * sizeof *ip);
    int *in = malloc(count * sizeof *in);
    int *is = malloc(count * sizeof *is);
    size_t *ii = malloc(count * sizeof *ii);
    if (!ip || !in || !is || !ii) {
        free(ip);
        free(in);
        free(is);
        free(ii);
        return ph_fail(ENOMEM, "move: out of memory for %zu pages", count);
    }

    /* Decide every page's fate under the lock (deterministic order). */
    size_t n = 0;
    pthread_mutex_lock(&f->lock);
    f->st.move_calls++;
    f->st.move_pages += count;
    for (size_t i = 0; i < count; i++)
        f->st.pages_to_node[ph_topo_node_index(os->topo, nodes[i])]++;
    int refuse = f->plan.refuse_move_errno;
    if (refuse) {
        f->st.refused_moves++;
    } else {
        int aborted = 0;
        uintptr_t pinned = f->plan.pinned_page & ~(uintptr_t)(PH_PAGE_4K - 1);
        for (size_t i = 0; i < count; i++) {
            double r = draw(f);
            if (aborted) {
                status[i] = -EAGAIN;
            } else if ((pinned && ((uintptr_t)pages[i] & ~(uintptr_t)(PH_PAGE_4K - 1)) ==
                                      pinned) ||
                       r < f->plan.p_busy) {
                status[i] = -EBUSY;
                f->st.injected_busy++;
                aborted = f->plan.kernel_abort != 0;
            } else if (r < f->plan.p_busy + f->plan.p_again) {
                status[i] = -EAGAIN;
                f->st.injected_again++;
            } else if (r < f->plan.p_busy + f->plan.p_again + f->plan.p_fault) {
                status[i] = -EFAULT;
                f->st.injected_fault++;
            } else if (f->plan.enomem_node >= 0 && nodes[i] == f->plan.enomem_node) {
                status[i] = -ENOMEM;
                f->st.injected_nomem++;
            } else {
                ip[n] = pages[i];
                in[n] = nodes[i];
                ii[n++] = i;
            }
        }
        if (n > 0)
            f->st.inner_calls++;
    }
    pthread_mutex_unlock(&f->lock);

    long rc = 0;
    if (refuse) {
        for (size_t i = 0; i < count; i++)
            status[i] = -refuse;
        rc = ph_fail(refuse, "move: refused as a whole (injected %s)",
                     refuse == EPERM ? "EPERM" : refuse == ENOSYS ? "ENOSYS" : strerror(refuse));
    } else if (n > 0) {
        long r = f->inner->ops->move(f->inner, n, ip, in, is);
        if (r < 0) {
            int e = errno;
            for (size_t i = 0; i < count; i++)
                status[i] = -e;
            rc = -1;
            errno = e;
        } else {
            for (size_t k = 0; k < n; k++)
                status[ii[k]] = is[k];
        }
    }
    if (rc == 0)
        for (size_t i = 0; i < count; i++)
            if (status[i] != nodes[i])
                rc++;
    free(ip);
    free(in);
    free(is);
    free(ii);
    return rc;
}

/* ---- the rest: forwarded, some with injected failures ---------------------- */

static int fy_query(ph_os *os, size_t count, void *const *pages, int *status)
{
    faulty_state *f = os->impl;
    return f->inner->ops->query(f->inner, count, pages, status);
}

static int fy_bind(ph_os *os, void *addr, size_t len, enum ph_bind_kind kind,
                   const int *nodes, int nnodes)
{
    faulty_state *f = os->impl;
    pthread_mutex_lock(&f->lock);
    int e = f->plan.fail_bind_errno;
    if (e)
        f->st.failed_binds++;
    pthread_mutex_unlock(&f->lock);
    if (e)
        return ph_fail(e, "bind: mbind of %zu bytes failed (injected: %s)", len, strerror(e));
    return f->inner->ops->bind(f->inner, addr, len, kind, nodes, nnodes);
}

static int fy_populate_on(ph_os *os, void *addr, size_t len, int node)
{
    faulty_state *f = os->impl;
    return f->inner->ops->populate_on(f->inner, addr, len, node);
}

static void *fy_map(ph_os *os, size_t len, size_t align, unsigned flags)
{
    faulty_state *f = os->impl;
    pthread_mutex_lock(&f->lock);
    int e = f->plan.fail_map_errno;
    if (e)
        f->st.failed_maps++;
    pthread_mutex_unlock(&f->lock);
    if (e)
        return ph_fail_null(e, "map: %zu bytes failed (injected: %s)", len, strerror(e));
    return f->inner->ops->map(f->inner, len, align, flags);
}

static int fy_unmap(ph_os *os, void *addr, size_t len)
{
    faulty_state *f = os->impl;
    return f->inner->ops->unmap(f->inner, addr, len);
}

static int fy_advise_huge(ph_os *os, void *addr, size_t len, int on)
{
    faulty_state *f = os->impl;
    return f->inner->ops->advise_huge(f->inner, addr, len, on);
}

static int fy_huge_split(ph_os *os, void *addr, size_t len, int split)
{
    faulty_state *f = os->impl;
    return f->inner->ops->huge_split(f->inner, addr, len, split);
}

static int fy_huge_eligible(ph_os *os, void *addr, size_t len)
{
    faulty_state *f = os->impl;
    return f->inner->ops->huge_eligible(f->inner, addr, len);
}

static int fy_huge_state(ph_os *os, void *addr, size_t n, uint8_t *huge)
{
    faulty_state *f = os->impl;
    return f->inner->ops->huge_state(f->inner, addr, n, huge);
}

static int fy_huge_pool(ph_os *os, int node, size_t page_bytes, ph_os_pool *out)
{
    faulty_state *f = os->impl;
    return f->inner->ops->huge_pool(f->inner, node, page_bytes, out);
}

static int fy_current_cpu(ph_os *os)
{
    faulty_state *f = os->impl;
    return f->inner->ops->current_cpu(f->inner);
}

static int fy_current_node(ph_os *os)
{
    faulty_state *f = os->impl;
    return f->inner->ops->current_node(f->inner);
}

static int fy_set_thread_node(ph_os *os, int node)
{
    faulty_state *f = os->impl;
    return f->inner->ops->set_thread_node(f->inner, node);
}

static uint64_t fy_allowed(ph_os *os)
{
    faulty_state *f = os->impl;
    return f->inner->ops->allowed(f->inner);
}

static int fy_process_policy(ph_os *os, int own, const int *bind_nodes, int nbind)
{
    faulty_state *f = os->impl;
    return f->inner->ops->process_policy(f->inner, own, bind_nodes, nbind);
}

static int fy_probe(ph_os *os, ph_os_probe *out)
{
    faulty_state *f = os->impl;
    if (f->inner->ops->probe(f->inner, out) != 0)
        return -1;
    pthread_mutex_lock(&f->lock);
    int e = f->plan.refuse_move_errno;
    pthread_mutex_unlock(&f->lock);
    if (e) {
        out->move_permitted = 0;
        out->move_errno = e;
    }
    return 0;
}

static void fy_close(ph_os *os)
{
    if (!os)
        return;
    faulty_state *f = os->impl;
    if (f) {
        ph_os_close(f->inner);
        pthread_mutex_destroy(&f->lock);
        free(f);
    }
    free(os);
}

/* fork(): this wrapper's lock, then the inner machine's (os.h). */
static void fy_fork_prepare(ph_os *os)
{
    faulty_state *f = os->impl;
    pthread_mutex_lock(&f->lock);
    ph_os_fork_prepare(f->inner);
}

static void fy_fork_parent(ph_os *os)
{
    faulty_state *f = os->impl;
    ph_os_fork_parent(f->inner);
    pthread_mutex_unlock(&f->lock);
}

static void fy_fork_child(ph_os *os)
{
    faulty_state *f = os->impl;
    ph_os_fork_child(f->inner);
    pthread_mutex_init(&f->lock, NULL);
}

static const ph_os_ops faulty_ops = {
    .name = "faulty",
    .query = fy_query,
    .move = fy_move,
    .bind = fy_bind,
    .populate_on = fy_populate_on,
    .map = fy_map,
    .unmap = fy_unmap,
    .advise_huge = fy_advise_huge,
    .huge_state = fy_huge_state,
    .huge_eligible = fy_huge_eligible,
    .huge_split = fy_huge_split,
    .huge_pool = fy_huge_pool,
    .current_cpu = fy_current_cpu,
    .current_node = fy_current_node,
    .set_thread_node = fy_set_thread_node,
    .probe = fy_probe,
    .allowed = fy_allowed,
    .process_policy = fy_process_policy,
    .close = fy_close,
    .fork_prepare = fy_fork_prepare,
    .fork_parent = fy_fork_parent,
    .fork_child = fy_fork_child,
};

ph_os *ph_os_faulty_open(ph_os *inner, const ph_fault_plan *plan)
{
    if (!inner)
        return ph_fail_null(EINVAL, "faulty machine: no inner machine");
    faulty_state *f = calloc(1, sizeof *f);
    if (!f)
        return ph_fail_null(ENOMEM, "faulty machine: out of memory");
    f->inner = inner;
    pthread_mutex_init(&f->lock, NULL);
    if (plan)
        f->plan = *plan;
    else
        ph_fault_plan_init(&f->plan);
    snprintf(f->name, sizeof f->name, "faulty(%s)", inner->ops->name);
    f->ops = faulty_ops;
    f->ops.name = f->name;
    ph_os *os = ph_os_new(&f->ops, inner->topo, f);
    if (!os) {
        pthread_mutex_destroy(&f->lock);
        free(f);
    }
    return os;
}

int ph_os_faulty_set_plan(ph_os *os, const ph_fault_plan *plan)
{
    faulty_state *f = faulty_of(os);
    if (!f || !plan)
        return ph_fail(EINVAL, "ph_os_faulty_set_plan: not a faulty machine");
    pthread_mutex_lock(&f->lock);
    f->plan = *plan;
    f->draws = 0;
    pthread_mutex_unlock(&f->lock);
    return 0;
}

int ph_os_faulty_stats(ph_os *os, ph_fault_stats *out)
{
    faulty_state *f = faulty_of(os);
    if (!f || !out)
        return ph_fail(EINVAL, "ph_os_faulty_stats: not a faulty machine");
    pthread_mutex_lock(&f->lock);
    *out = f->st;
    pthread_mutex_unlock(&f->lock);
    return 0;
}

ph_os *ph_os_faulty_inner(ph_os *os)
{
    faulty_state *f = faulty_of(os);
    return f ? f->inner : NULL;
}
