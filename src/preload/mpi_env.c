/*
 * mpi_env.c -- an MPI + OpenMP program's ranks under the mprotect
 * mechanism: no single-copy transfers between processes.
 *
 * MPI libraries move a large message between two processes of one host
 * with one copy: the receiver reads the sender's buffer with
 * process_vm_readv(2) (Cross Memory Attach; Open MPI's vader, UCX's cma
 * transport, libfabric's shm, MVAPICH, Intel MPI).  That read runs in the
 * *other* process's kernel context, so nothing in this process can open
 * a page the mprotect mechanism watches (PROT_NONE) before it: the call
 * fails with EFAULT -- Open MPI prints "Read -1, expected N, errno = 14",
 * UCX aborts the job.  An MPI_Isend whose buffer a parallel region reads
 * while the message is in flight is enough.  (The userfaultfd mechanism
 * has no such gap: the other process's access waits for the page like a
 * system call's does.)
 *
 * So, when the launcher started several processes (config/launcher.h)
 * and this one's engine will protect pages (ph_api_sampler_protects),
 * the preload library's constructor -- before main, so before MPI_Init
 * reads its environment -- tells each MPI library to copy through its
 * shared-memory segments instead, through the variable each reads (UCX:
 * see ucx_off).  A variable the user set is left as it is (and said, by
 * rank 0).  Costs
 * the second copy of large intra-host messages; the report lists what
 * was set ("transparent": {"mpi": ...}).
 */
#include "preload/preload.h"

#include "api/transparent.h"
#include "base/json_write.h"
#include "base/log.h"
#include "config/launcher.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Each library's switch: variable, value that turns single-copy off. */
static const char *const knobs[][2] = {
    {"OMPI_MCA_btl_vader_single_copy_mechanism", "none"}, /* Open MPI 4 */
    {"OMPI_MCA_btl_sm_single_copy_mechanism", "none"},    /* Open MPI 5 */
    {"FI_SHM_DISABLE_CMA", "1"},       /* libfabric's shm (MPICH ch4:ofi) */
    {"MV2_SMP_USE_CMA", "0"},          /* MVAPICH2 */
    {"I_MPI_SHM_CMA", "0"},            /* Intel MPI */
};
#define NKNOBS (sizeof knobs / sizeof knobs[0])

static ph_launcher job;
static int applied;            /* 1: the job's single-copy is off */
static int set_by_us[NKNOBS + 1];
static char ucx_tls[64];       /* what UCX_TLS was set to ("" none) */
static const char *kept[NKNOBS + 1]; /* variables the user had set */
static size_t nkept;

/* UCX (Open MPI's pml ucx, MPICH's ch4:ucx) takes a list of transports to
 * leave out: cma, and xpmem / knem where their devices exist (naming a
 * transport UCX does not have makes it warn).  Without them UCX sends a
 * large message between two processes of one host over TCP on the
 * loopback, not through its shared memory -- and MPICH 4.0.2 over UCX
 * 1.13 then hangs in MPI_Finalize now and then (one rank waits in UCX for
 * the other, which waits in the PMI barrier: 1 run in about 100 on two
 * loaded cores, without pagehome too; tests/cluster-net/README.md has the
 * same hang in cluster mode over TCP).  So when every rank of the job is
 * on this host, tcp is left out as well: the messages go through shared
 * memory.  Across hosts UCX needs its network transport, which may be
 * tcp. */
static void ucx_off(void)
{
    if (getenv("UCX_TLS")) {
        kept[nkept++] = "UCX_TLS";
        return;
    }
    snprintf(ucx_tls, sizeof ucx_tls, "^cma%s%s%s",
             job.local_size == job.size ? ",tcp" : "",
             access("/dev/xpmem", F_OK) == 0 ? ",xpmem" : "",
             access("/dev/knem", F_OK) == 0 ? ",knem" : "");
    if (setenv("UCX_TLS", ucx_tls, 0) != 0)
        ucx_tls[0] = '\0';
}

void ph_preload_mpi_env(void)
{
    job = ph_launcher_get();
    if (job.size < 2 || !ph_api_sampler_protects())
        return;
    applied = 1;
    for (size_t i = 0; i < NKNOBS; i++) {
        if (getenv(knobs[i][0])) {
            kept[nkept++] = knobs[i][0];
            continue;
        }
        set_by_us[i] = setenv(knobs[i][0], knobs[i][1], 0) == 0;
    }
    ucx_off();
    ph_info("rank %ld of %ld (%s), mprotect mechanism: the MPI libraries' "
            "single-copy transfers between processes are off (they would read "
            "watched pages of another process and fail)",
            job.rank, job.size, job.from);
    if (nkept && job.rank == 0)
        ph_warn("mprotect mechanism under an MPI launcher: %s%s set by you, "
                "left as it is; if it lets the MPI library read other "
                "processes' memory directly (CMA), messages from watched "
                "arrays fail with EFAULT",
                kept[0], nkept > 1 ? " and others" : "");
}

void ph_preload_mpi_report(struct ph_jw *w)
{
    if (job.size < 2)
        return;
    ph_jw_key(w, "mpi");
    ph_jw_object(w, 1);
    ph_jw_key(w, "launcher");
    ph_jw_string(w, job.from ? job.from : "");
    ph_jw_key(w, "rank");
    ph_jw_int(w, job.rank);
    ph_jw_key(w, "size");
    ph_jw_int(w, job.size);
    ph_jw_key(w, "local_size");
    ph_jw_int(w, job.local_size);
    ph_jw_key(w, "single_copy_off");
    ph_jw_bool(w, applied);
    ph_jw_key(w, "set");
    ph_jw_array(w, 1);
    for (size_t i = 0; i < NKNOBS; i++)
        if (set_by_us[i])
            ph_jw_string(w, knobs[i][0]);
    if (ucx_tls[0])
        ph_jw_string(w, "UCX_TLS");
    ph_jw_end(w);
    ph_jw_key(w, "ucx_tls");
    ph_jw_string(w, ucx_tls);
    ph_jw_key(w, "kept");
    ph_jw_array(w, 1);
    for (size_t i = 0; i < nkept; i++)
        ph_jw_string(w, kept[i]);
    ph_jw_end(w);
    ph_jw_end(w);
}
