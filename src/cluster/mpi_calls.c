/*
 * mpi_calls.c -- the program's own MPI calls on shared memory.
 *
 * A program that calls MPI itself (initialised with MPI_THREAD_MULTIPLE
 * before ph_cluster_init) may send from and receive into shared arrays.
 * The MPI library copies those messages from whichever thread drives its
 * progress -- the caller, or the DSM's own service code, which drives
 * progress for the one-sided operations on its windows.  A copy into a
 * page that is not accessible faults on that thread; when that thread is
 * the one that holds the service role, nobody else may serve the fault:
 * the rank would hang (page protection's handler and the watchdog now end
 * it with a message instead).  Between two processes of one host the
 * library's single copy (process_vm_readv) reads the sender's pages from
 * the receiver's kernel: under page protection the read fails, under
 * userfaultfd it waits for the sender's service, while the sender may be
 * waiting for the receiver.
 *
 * So the calls that name a buffer are defined here over the MPI library's
 * (the profiling interface: PMPI_*): before the real call the calling
 * thread touches the buffer's part in shared memory (touch.c) -- a load
 * per page of what MPI will read, a store of the same byte per page of
 * what it will write -- and the pages are then accessible to whoever
 * copies.  A buffer in private memory costs two extent queries and two
 * comparisons; a buffer not in the arena, MPI_IN_PLACE and MPI_BOTTOM are
 * passed through untouched.  A nonblocking call touches at its start: its
 * pages stay accessible until this rank's next acquire or barrier drops a
 * copy another rank wrote, so a program must complete it before that (as
 * an OpenMP program completes its messages before its next barrier).
 *
 * Wrapped: point to point (MPI_Send, Bsend, Ssend, Rsend, their
 * nonblocking forms, Recv, Irecv, Sendrecv, Sendrecv_replace), the
 * collectives on intracommunicators (Bcast, Reduce, Allreduce, Scan,
 * Exscan, Reduce_scatter_block, Gather(v), Scatter(v), Allgather(v),
 * Alltoall(v), and Ibcast, Ireduce, Iallreduce, Iallgather, Ialltoall),
 * and one-sided origin buffers (Put, Get, Accumulate, Get_accumulate,
 * Rput, Rget).  Not: persistent requests (MPI_Start names no buffer),
 * derived datatypes at MPI_BOTTOM, intercommunicators, the large-count
 * (_c) forms, and calls that bypass the C names (Open MPI 4.1's Fortran
 * bindings call PMPI_* directly; MPICH's call the C names).
 *
 * These definitions are found first when the program's link puts
 * pagehome's cluster library before the MPI library (what pkg-config's
 * and CMake's orders and the MPI compiler wrappers give); otherwise the
 * MPI library's own are, and ph_cluster_init says so when
 * PAGEHOME_VERBOSE is set (ph_dsm_mpi_calls_found).
 */
#include "cluster/cluster.h"

#include <dlfcn.h>

/* exported whatever the build's default visibility: the MPI library's
 * header declares them without a visibility of their own (MPICH's) */
#define PH_MPI_EXPORT __attribute__((visibility("default")))

/* the cluster, when it runs and the caller is not its service code (the
 * DSM's own one-sided calls come here too, holding the role: their
 * buffers are never in the arena, and they pay two loads) */
static ph_dsm *running(void)
{
    ph_dsm *c = __atomic_load_n(&ph_dsm_g, __ATOMIC_ACQUIRE);
    if (!c || !atomic_load_explicit(&c->running, memory_order_relaxed) ||
        ph_dsm_role_mine(c))
        return NULL;
    return c;
}

/* elements [first, first + n) of `type` at buf */
static void touch_elems(const void *buf, MPI_Aint first, MPI_Aint n,
                        MPI_Datatype type, int writes)
{
    if (n <= 0 || !buf || buf == MPI_IN_PLACE || buf == MPI_BOTTOM)
        return;
    ph_dsm *c = running();
    if (!c)
        return;
    MPI_Aint lb, ext, tlb, text;
    if (PMPI_Type_get_extent(type, &lb, &ext) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(type, &tlb, &text) != MPI_SUCCESS ||
        text <= 0)
        return;
    MPI_Aint a = first * ext, b = (first + n - 1) * ext;
    MPI_Aint lo = (a < b ? a : b) + tlb, hi = (a < b ? b : a) + tlb + text;
    ph_dsm_touch(c, (const void *)((uintptr_t)buf + (uintptr_t)lo),
                 (size_t)(hi - lo), writes);
}

static void touch_n(const void *buf, int count, MPI_Datatype type,
                    int writes)
{
    touch_elems(buf, 0, count, type, writes);
}

/* the blocks of a v-collective: counts[i] elements at displs[i] */
static void touch_v(const void *buf, const int counts[], const int displs[],
                    int n, MPI_Datatype type, int writes)
{
    if (!buf || buf == MPI_IN_PLACE || !counts || !displs || !running())
        return;
    MPI_Aint lo = 0, hi = 0;
    int any = 0;
    for (int i = 0; i < n; i++) {
        if (counts[i] <= 0)
            continue;
        MPI_Aint a = displs[i], b = (MPI_Aint)displs[i] + counts[i];
        if (!any || a < lo)
            lo = a;
        if (!any || b > hi)
            hi = b;
        any = 1;
    }
    if (any)
        touch_elems(buf, lo, hi - lo, type, writes);
}

/* an intracommunicator's size, and whether this rank is `root` in it;
 * 0 for an intercommunicator (not touched) or an error */
static int intra(MPI_Comm comm, int root, int *is_root)
{
    int inter = 0, me = -1, size = 0;
    if (!running() || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS ||
        inter || PMPI_Comm_rank(comm, &me) != MPI_SUCCESS ||
        PMPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return 0;
    if (is_root)
        *is_root = me == root;
    return size;
}

/* ---- point to point ------------------------------------------------- */

#define SEND_LIKE(name)                                                       \
    PH_MPI_EXPORT int MPI_##name(const void *buf, int count,                 \
                                 MPI_Datatype type, int dest, int tag,        \
                                 MPI_Comm comm)                               \
    {                                                                         \
        touch_n(buf, count, type, 0);                                         \
        return PMPI_##name(buf, count, type, dest, tag, comm);                \
    }
#define ISEND_LIKE(name)                                                      \
    PH_MPI_EXPORT int MPI_##name(const void *buf, int count,                 \
                                 MPI_Datatype type, int dest, int tag,        \
                                 MPI_Comm comm, MPI_Request *req)             \
    {                                                                         \
        touch_n(buf, count, type, 0);                                         \
        return PMPI_##name(buf, count, type, dest, tag, comm, req);           \
    }
SEND_LIKE(Send)
SEND_LIKE(Bsend)
SEND_LIKE(Ssend)
SEND_LIKE(Rsend)
ISEND_LIKE(Isend)
ISEND_LIKE(Ibsend)
ISEND_LIKE(Issend)
ISEND_LIKE(Irsend)

PH_MPI_EXPORT
int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag,
             MPI_Comm comm, MPI_Status *status)
{
    touch_n(buf, count, type, 1);
    return PMPI_Recv(buf, count, type, source, tag, comm, status);
}

PH_MPI_EXPORT
int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag,
              MPI_Comm comm, MPI_Request *req)
{
    touch_n(buf, count, type, 1);
    return PMPI_Irecv(buf, count, type, source, tag, comm, req);
}

PH_MPI_EXPORT
int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                 int dest, int sendtag, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status *status)
{
    touch_n(sendbuf, sendcount, sendtype, 0);
    touch_n(recvbuf, recvcount, recvtype, 1);
    return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag,
                         recvbuf, recvcount, recvtype, source, recvtag, comm,
                         status);
}

PH_MPI_EXPORT
int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest,
                         int sendtag, int source, int recvtag, MPI_Comm comm,
                         MPI_Status *status)
{
    touch_n(buf, count, type, 1);
    return PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source,
                                 recvtag, comm, status);
}

/* ---- collectives ---------------------------------------------------- */

static void bcast_touch(void *buf, int count, MPI_Datatype type, int root,
                        MPI_Comm comm)
{
    int is_root = 0;
    if (intra(comm, root, &is_root))
        touch_n(buf, count, type, !is_root);
}

PH_MPI_EXPORT
int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root,
              MPI_Comm comm)
{
    bcast_touch(buf, count, type, root, comm);
    return PMPI_Bcast(buf, count, type, root, comm);
}

PH_MPI_EXPORT
int MPI_Ibcast(void *buf, int count, MPI_Datatype type, int root,
               MPI_Comm comm, MPI_Request *req)
{
    bcast_touch(buf, count, type, root, comm);
    return PMPI_Ibcast(buf, count, type, root, comm, req);
}

/* sendbuf read (in place: recvbuf is), recvbuf written where a result
 * lands (everywhere, or at the root only) */
static void reduce_touch(const void *sendbuf, void *recvbuf, int count,
                         MPI_Datatype type, int result_here)
{
    touch_n(sendbuf, count, type, 0);
    if (result_here)
        touch_n(recvbuf, count, type, 1);
}

PH_MPI_EXPORT
int MPI_Reduce(const void *sendbuf, void *recvbuf, int count,
               MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm)
{
    int is_root = 0;
    if (intra(comm, root, &is_root))
        reduce_touch(sendbuf, recvbuf, count, type, is_root);
    return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
}

PH_MPI_EXPORT
int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count,
                MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
                MPI_Request *req)
{
    int is_root = 0;
    if (intra(comm, root, &is_root))
        reduce_touch(sendbuf, recvbuf, count, type, is_root);
    return PMPI_Ireduce(sendbuf, recvbuf, count, type, op, root, comm, req);
}

#define ALLREDUCE_LIKE(name)                                                  \
    PH_MPI_EXPORT int MPI_##name(const void *sendbuf, void *recvbuf,         \
                                 int count, MPI_Datatype type, MPI_Op op,     \
                                 MPI_Comm comm)                               \
    {                                                                         \
        if (intra(comm, 0, NULL))                                             \
            reduce_touch(sendbuf, recvbuf, count, type, 1);                   \
        return PMPI_##name(sendbuf, recvbuf, count, type, op, comm);          \
    }
ALLREDUCE_LIKE(Allreduce)
ALLREDUCE_LIKE(Scan)
ALLREDUCE_LIKE(Exscan)

PH_MPI_EXPORT
int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count,
                   MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                   MPI_Request *req)
{
    if (intra(comm, 0, NULL))
        reduce_touch(sendbuf, recvbuf, count, type, 1);
    return PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, req);
}

PH_MPI_EXPORT
int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf,
                             int recvcount, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm)
{
    int n = intra(comm, 0, NULL);
    if (n) {
        touch_elems(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, 0,
                    (MPI_Aint)recvcount * n, type, sendbuf == MPI_IN_PLACE);
        touch_n(recvbuf, recvcount, type, 1);
    }
    return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op,
                                     comm);
}

PH_MPI_EXPORT
int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
               void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
               MPI_Comm comm)
{
    int is_root = 0, n = intra(comm, root, &is_root);
    if (n) {
        touch_n(sendbuf, sendcount, sendtype, 0);
        if (is_root)
            touch_elems(recvbuf, 0, (MPI_Aint)recvcount * n, recvtype, 1);
    }
    return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                       recvtype, root, comm);
}

PH_MPI_EXPORT
int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                void *recvbuf, const int recvcounts[], const int displs[],
                MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    int is_root = 0, n = intra(comm, root, &is_root);
    if (n) {
        touch_n(sendbuf, sendcount, sendtype, 0);
        if (is_root)
            touch_v(recvbuf, recvcounts, displs, n, recvtype, 1);
    }
    return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                        displs, recvtype, root, comm);
}

PH_MPI_EXPORT
int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                MPI_Comm comm)
{
    int is_root = 0, n = intra(comm, root, &is_root);
    if (n) {
        if (is_root)
            touch_elems(sendbuf, 0, (MPI_Aint)sendcount * n, sendtype, 0);
        touch_n(recvbuf, recvcount, recvtype, 1);
    }
    return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, root, comm);
}

PH_MPI_EXPORT
int MPI_Scatterv(const void *sendbuf, const int sendcounts[],
                 const int displs[], MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root,
                 MPI_Comm comm)
{
    int is_root = 0, n = intra(comm, root, &is_root);
    if (n) {
        if (is_root)
            touch_v(sendbuf, sendcounts, displs, n, sendtype, 0);
        touch_n(recvbuf, recvcount, recvtype, 1);
    }
    return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf,
                         recvcount, recvtype, root, comm);
}

/* Allgather and Alltoall: the send buffer holds one block (allgather)
 * or one a rank (alltoall, blocks = the size), the receive buffer one a
 * rank */
static void all_touch(const void *sendbuf, int sendcount,
                      MPI_Datatype sendtype, void *recvbuf, int recvcount,
                      MPI_Datatype recvtype, MPI_Comm comm, int send_per_rank)
{
    int n = intra(comm, 0, NULL);
    if (n) {
        touch_elems(sendbuf, 0, (MPI_Aint)sendcount * (send_per_rank ? n : 1),
                    sendtype, 0);
        touch_elems(recvbuf, 0, (MPI_Aint)recvcount * n, recvtype, 1);
    }
}

PH_MPI_EXPORT
int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  MPI_Comm comm)
{
    all_touch(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
              comm, 0);
    return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                          recvtype, comm);
}

PH_MPI_EXPORT
int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                   void *recvbuf, int recvcount, MPI_Datatype recvtype,
                   MPI_Comm comm, MPI_Request *req)
{
    all_touch(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
              comm, 0);
    return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                           recvtype, comm, req);
}

PH_MPI_EXPORT
int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                   void *recvbuf, const int recvcounts[], const int displs[],
                   MPI_Datatype recvtype, MPI_Comm comm)
{
    int n = intra(comm, 0, NULL);
    if (n) {
        touch_n(sendbuf, sendcount, sendtype, 0);
        touch_v(recvbuf, recvcounts, displs, n, recvtype, 1);
    }
    return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                           displs, recvtype, comm);
}

PH_MPI_EXPORT
int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 MPI_Comm comm)
{
    all_touch(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
              comm, 1);
    return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                         recvtype, comm);
}

PH_MPI_EXPORT
int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  MPI_Comm comm, MPI_Request *req)
{
    all_touch(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
              comm, 1);
    return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                          recvtype, comm, req);
}

PH_MPI_EXPORT
int MPI_Alltoallv(const void *sendbuf, const int sendcounts[],
                  const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                  const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm)
{
    int n = intra(comm, 0, NULL);
    if (n) {
        touch_v(sendbuf, sendcounts, sdispls, n, sendtype, 0);
        touch_v(recvbuf, recvcounts, rdispls, n, recvtype, 1);
    }
    return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                          recvcounts, rdispls, recvtype, comm);
}

/* ---- one-sided: the origin's buffers -------------------------------- */

PH_MPI_EXPORT
int MPI_Put(const void *origin, int origin_count, MPI_Datatype origin_type,
            int target, MPI_Aint disp, int target_count,
            MPI_Datatype target_type, MPI_Win win)
{
    touch_n(origin, origin_count, origin_type, 0);
    return PMPI_Put(origin, origin_count, origin_type, target, disp,
                    target_count, target_type, win);
}

PH_MPI_EXPORT
int MPI_Rput(const void *origin, int origin_count, MPI_Datatype origin_type,
             int target, MPI_Aint disp, int target_count,
             MPI_Datatype target_type, MPI_Win win, MPI_Request *req)
{
    touch_n(origin, origin_count, origin_type, 0);
    return PMPI_Rput(origin, origin_count, origin_type, target, disp,
                     target_count, target_type, win, req);
}

PH_MPI_EXPORT
int MPI_Get(void *origin, int origin_count, MPI_Datatype origin_type,
            int target, MPI_Aint disp, int target_count,
            MPI_Datatype target_type, MPI_Win win)
{
    touch_n(origin, origin_count, origin_type, 1);
    return PMPI_Get(origin, origin_count, origin_type, target, disp,
                    target_count, target_type, win);
}

PH_MPI_EXPORT
int MPI_Rget(void *origin, int origin_count, MPI_Datatype origin_type,
             int target, MPI_Aint disp, int target_count,
             MPI_Datatype target_type, MPI_Win win, MPI_Request *req)
{
    touch_n(origin, origin_count, origin_type, 1);
    return PMPI_Rget(origin, origin_count, origin_type, target, disp,
                     target_count, target_type, win, req);
}

PH_MPI_EXPORT
int MPI_Accumulate(const void *origin, int origin_count,
                   MPI_Datatype origin_type, int target, MPI_Aint disp,
                   int target_count, MPI_Datatype target_type, MPI_Op op,
                   MPI_Win win)
{
    touch_n(origin, origin_count, origin_type, 0);
    return PMPI_Accumulate(origin, origin_count, origin_type, target, disp,
                           target_count, target_type, op, win);
}

PH_MPI_EXPORT
int MPI_Get_accumulate(const void *origin, int origin_count,
                       MPI_Datatype origin_type, void *result,
                       int result_count, MPI_Datatype result_type, int target,
                       MPI_Aint disp, int target_count,
                       MPI_Datatype target_type, MPI_Op op, MPI_Win win)
{
    touch_n(origin, origin_count, origin_type, 0);
    touch_n(result, result_count, result_type, 1);
    return PMPI_Get_accumulate(origin, origin_count, origin_type, result,
                               result_count, result_type, target, disp,
                               target_count, target_type, op, win);
}

/* ---- are they the ones the program calls? --------------------------- */

int ph_dsm_mpi_calls_found(void)
{
    void *f = dlsym(RTLD_DEFAULT, "MPI_Send");
    return f == (void *)&MPI_Send;
}
