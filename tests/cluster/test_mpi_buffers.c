/*
 * test_mpi_buffers.c -- a program that calls MPI itself (initialised
 * with MPI_THREAD_MULTIPLE before ph_cluster_init, as README says) and
 * passes shared memory to it: rank 0 sends 4 MiB from pages homed at
 * rank 1 that it never touched, and rank 1 receives them into pages
 * homed at rank 0 that it never touched.  Large messages between two
 * processes of one host take the MPI library's single-copy path
 * (process_vm_readv: the kernel, in the receiver, reads the sender's
 * pages and writes the receiver's), so under page protection neither
 * side's pages are accessible to it: Open MPI's vader reports the failed
 * read and copies instead.  Either way the message must arrive whole,
 * and both arrays must still hold what the DSM says they hold: rank 1
 * reads the sent pages afterwards (read faults), rank 0 reads the
 * received ones after a barrier.
 */
#include "common.h"

#include <mpi.h>

#define BYTES ((size_t)4 << 20)

static char pattern(size_t i, int k)
{
    return (char)(i * 7 + 3 + (size_t)k * 13);
}

int main(int argc, char **argv)
{
    int provided = 0;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) !=
            MPI_SUCCESS ||
        provided < MPI_THREAD_MULTIPLE) {
        printf("SKIP: the MPI library does not provide MPI_THREAD_MULTIPLE\n");
        MPI_Finalize();
        return 77;
    }
    cl_init(&argc, &argv);
    int me = ph_cluster_rank(), n = ph_cluster_nranks();
    if (n != 2)
        cl_skip("two ranks");
    ph_placement_t at0, at1;
    ph_placement_parse(&at0, "node:0");
    ph_placement_parse(&at1, "node:1");
    char *src = ph_cluster_alloc(BYTES, &at1); /* written by rank 1 */
    char *dst = ph_cluster_alloc(BYTES, &at0); /* rank 0 fills it first */
    CHECK(src != NULL && dst != NULL);
    if (me == 1)
        for (size_t i = 0; i < BYTES; i++)
            src[i] = pattern(i, 0);
    if (me == 0)
        memset(dst, 0x5a, BYTES);
    ph_cluster_barrier();

    if (me == 0) {
        CHECK(MPI_Send(src, (int)BYTES, MPI_CHAR, 1, 7, MPI_COMM_WORLD) ==
              MPI_SUCCESS);
    } else {
        CHECK(MPI_Recv(dst, (int)BYTES, MPI_CHAR, 0, 7, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE) == MPI_SUCCESS);
        size_t bad = 0;
        for (size_t i = 0; i < BYTES; i++)
            bad += dst[i] != pattern(i, 0);
        CHECK_EQ(bad, 0);
        /* the source pages are still the DSM's: read them here */
        bad = 0;
        for (size_t i = 0; i < BYTES; i++)
            bad += src[i] != pattern(i, 0);
        CHECK_EQ(bad, 0);
    }
    /* rank 1's received data went home with the barrier */
    ph_cluster_barrier();
    if (me == 0) {
        size_t bad = 0;
        for (size_t i = 0; i < BYTES; i++)
            bad += dst[i] != pattern(i, 0);
        CHECK_EQ(bad, 0);
    }
    ph_cluster_barrier();
    ph_cluster_free(dst);
    ph_cluster_free(src);
    int rc = cl_finish("mpi_buffers");
    MPI_Finalize();
    return rc;
}
