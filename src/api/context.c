/*
 * context.c -- the process-wide machine (see context.h).
 *
 * Created on first use under a mutex and published with a release store;
 * readers take the fast path (one acquire load).  Choosing the machine:
 *   machine=linux  the kernel, over the real topology (hwloc);
 *   machine=sim    the simulator, over the topology given (or the real
 *                  machine's shape when none is);
 *   machine=auto   sim when `topology` is set, else linux.
 * Failure to create the context is remembered, so every later call fails
 * fast with the same message instead of retrying hwloc each time.
 */
#include "api/context.h"

#include "base/error.h"
#include "base/log.h"
#include "config/options.h"
#include "os/hugetlb.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(ph_context *) ctx_ptr;
static int ctx_errno;
static char ctx_error[256];

static void ctx_destroy(ph_context *c)
{
    if (!c)
        return;
    ph_mover_free(c->mover);
    ph_os_close(c->os);
    ph_topo_free(c->topo);
    free(c);
}

static ph_context *ctx_create(void)
{
    ph_options_init();
    ph_context *c = calloc(1, sizeof *c);
    if (!c)
        return ph_fail_null(ENOMEM, "pagehome: out of memory creating the context");
    const char *spec = ph_opt_str(PH_OPT_TOPOLOGY);
    c->topo = ph_topo_load(spec);
    if (!c->topo)
        goto fail;
    /* The real machine's hugetlbfs pools (hwloc knows none): the snapshot
     * `pagehome topo` shows, and the simulator's model over this shape. */
    if (!c->topo->synthetic)
        ph_hugetlb_topology_pools(c->topo, NULL);
    const char *machine = ph_opt_str(PH_OPT_MACHINE);
    int sim = strcmp(machine, "sim") == 0 ||
              (strcmp(machine, "auto") == 0 && c->topo->synthetic);
    if (!sim && c->topo->synthetic) {
        ph_warn("machine=linux with a synthetic topology (%s): using the simulator",
                c->topo->source);
        sim = 1;
    }
    c->os = sim ? ph_os_sim_open(c->topo) : ph_os_linux_open(c->topo);
    if (!c->os)
        goto fail;
    c->mover = ph_mover_new(c->os);
    if (!c->mover)
        goto fail;
    if (ph_opt_bool(PH_OPT_VERBOSE)) {
        ph_info("machine %s, %d node(s), topology from %s", ph_os_name(c->os),
                c->topo->nnodes, c->topo->source);
        ph_options_print(stderr, 0);
    }
    return c;
fail:;
    int err = errno;
    char msg[256];
    snprintf(msg, sizeof msg, "%s", ph_error_message());
    ctx_destroy(c);
    ph_fail(err, "%s", msg);
    return NULL;
}

ph_context *ph_ctx(void)
{
    ph_context *c = atomic_load_explicit(&ctx_ptr, memory_order_acquire);
    if (c)
        return c;
    pthread_mutex_lock(&ctx_lock);
    c = atomic_load_explicit(&ctx_ptr, memory_order_relaxed);
    if (!c && !ctx_errno) {
        c = ctx_create();
        if (c) {
            atomic_store_explicit(&ctx_ptr, c, memory_order_release);
        } else {
            ctx_errno = errno ? errno : EIO;
            snprintf(ctx_error, sizeof ctx_error, "%s", ph_error_message());
        }
    }
    pthread_mutex_unlock(&ctx_lock);
    if (!c)
        ph_fail(ctx_errno, "%s", ctx_error);
    return c;
}

void ph_ctx_reset(void)
{
    pthread_mutex_lock(&ctx_lock);
    ph_context *c = atomic_exchange(&ctx_ptr, NULL);
    ctx_errno = 0;
    ctx_error[0] = '\0';
    pthread_mutex_unlock(&ctx_lock);
    ctx_destroy(c);
}
