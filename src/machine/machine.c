/*
 * machine.c -- the machine pagehome runs on (see machine.h).
 *
 * Choosing the OS table:
 *   machine=linux  the kernel, over the real topology (hwloc);
 *   machine=sim    the simulator, over the topology given (or the real
 *                  machine's shape when none is);
 *   machine=auto   sim when `topology` is set, else linux.
 * The process machine is made on first use under a mutex and published
 * with a release store; readers take the fast path (one acquire load).
 * Failure to make it is remembered, so every later call fails fast with
 * the same message instead of retrying hwloc each time.
 */
#include "machine/machine.h"

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

/* ---- the tunables, read once ------------------------------------------- */

void ph_machine_cfg_from_options(ph_machine_cfg *cfg)
{
    ph_options_init();
    memset(cfg, 0, sizeof *cfg);
    const char *kind = ph_opt_str(PH_OPT_MACHINE);
    cfg->kind = strcmp(kind, "linux") == 0 ? PH_MACHINE_LINUX
                : strcmp(kind, "sim") == 0 ? PH_MACHINE_SIM
                                           : PH_MACHINE_AUTO;
    snprintf(cfg->topology, sizeof cfg->topology, "%s", ph_opt_str(PH_OPT_TOPOLOGY));
    cfg->sim_binding = ph_opt_int(PH_OPT_SIM_BINDING) == 1 ? PH_SIM_BIND_CYCLIC
                                                          : PH_SIM_BIND_BLOCK;
    cfg->mover.batch_pages = (size_t)ph_opt_int(PH_OPT_MOVE_BATCH_PAGES);
    cfg->mover.retries = (int)ph_opt_int(PH_OPT_MOVE_RETRIES);
    cfg->mover.threads = (int)ph_opt_int(PH_OPT_MOVE_THREADS);
    cfg->mover.node_full_backoff_ns =
        (uint64_t)ph_opt_int(PH_OPT_NODE_FULL_BACKOFF_MS) * 1000000ull;
    cfg->verbose = ph_opt_bool(PH_OPT_VERBOSE);
}

/* ---- one machine --------------------------------------------------------- */

void ph_machine_close(ph_machine *m)
{
    if (!m)
        return;
    ph_mover_free(m->mover);
    ph_os_close(m->os);
    ph_topo_free(m->topo);
    free(m);
}

ph_machine *ph_machine_open(const ph_machine_cfg *cfg)
{
    if (!cfg)
        return ph_fail_null(EINVAL, "pagehome: no machine configuration");
    ph_machine *m = calloc(1, sizeof *m);
    if (!m)
        return ph_fail_null(ENOMEM, "pagehome: out of memory creating the context");
    m->cfg = *cfg;
    m->topo = ph_topo_load(cfg->topology);
    if (!m->topo)
        goto fail;
    /* The real machine's hugetlbfs pools (hwloc knows none): the snapshot
     * `pagehome topo` shows, and the simulator's model over this shape. */
    if (!m->topo->synthetic)
        ph_hugetlb_topology_pools(m->topo, NULL);
    int sim = cfg->kind == PH_MACHINE_SIM ||
              (cfg->kind == PH_MACHINE_AUTO && m->topo->synthetic);
    if (!sim && m->topo->synthetic) {
        ph_warn("machine=linux with a synthetic topology (%s): using the simulator",
                m->topo->source);
        sim = 1;
    }
    m->os = sim ? ph_os_sim_open(m->topo) : ph_os_linux_open(m->topo);
    if (!m->os)
        goto fail;
    if (sim && ph_sim_set_binding(m->os, cfg->sim_binding) != 0)
        goto fail;
    m->mover = ph_mover_new(m->os, &cfg->mover);
    if (!m->mover)
        goto fail;
    if (cfg->verbose) {
        ph_info("machine %s, %d node(s), topology from %s", ph_os_name(m->os),
                m->topo->nnodes, m->topo->source);
        ph_options_print(stderr, 0);
    }
    return m;
fail:;
    int err = errno;
    char msg[256];
    snprintf(msg, sizeof msg, "%s", ph_error_message());
    ph_machine_close(m);
    ph_fail(err, "%s", msg);
    return NULL;
}

/* ---- the process machine ------------------------------------------------- */

static pthread_mutex_t proc_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(ph_machine *) proc_ptr;
static int proc_errno;
static char proc_error[256];

ph_machine *ph_machine_get(void)
{
    ph_machine *m = atomic_load_explicit(&proc_ptr, memory_order_acquire);
    if (m)
        return m;
    pthread_mutex_lock(&proc_lock);
    m = atomic_load_explicit(&proc_ptr, memory_order_relaxed);
    if (!m && !proc_errno) {
        ph_machine_cfg cfg;
        ph_machine_cfg_from_options(&cfg);
        m = ph_machine_open(&cfg);
        if (m) {
            atomic_store_explicit(&proc_ptr, m, memory_order_release);
        } else {
            proc_errno = errno ? errno : EIO;
            snprintf(proc_error, sizeof proc_error, "%s", ph_error_message());
        }
    }
    pthread_mutex_unlock(&proc_lock);
    if (!m)
        ph_fail(proc_errno, "%s", proc_error);
    return m;
}

void ph_machine_fork_prepare(void)
{
    pthread_mutex_lock(&proc_lock);
    ph_machine *m = atomic_load(&proc_ptr);
    if (m)
        ph_os_fork_prepare(m->os);
}

void ph_machine_fork_parent(void)
{
    ph_machine *m = atomic_load(&proc_ptr);
    if (m)
        ph_os_fork_parent(m->os);
    pthread_mutex_unlock(&proc_lock);
}

void ph_machine_fork_child(void)
{
    ph_machine *m = atomic_load(&proc_ptr);
    if (m)
        ph_os_fork_child(m->os);
    pthread_mutex_init(&proc_lock, NULL);
}

ph_machine *ph_machine_get_for(const char *who)
{
    ph_machine *m = ph_machine_get();
    if (!m)
        ph_refail(who);
    return m;
}

void ph_machine_reset(void)
{
    pthread_mutex_lock(&proc_lock);
    ph_machine *m = atomic_exchange(&proc_ptr, NULL);
    proc_errno = 0;
    proc_error[0] = '\0';
    pthread_mutex_unlock(&proc_lock);
    ph_machine_close(m);
}
