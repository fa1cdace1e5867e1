/*
 * test_mpi_buffers.c -- a program that calls MPI itself (initialised
 * with MPI_THREAD_MULTIPLE before ph_cluster_init, as README says) and
 * passes shared memory to it: rank 0 sends 4 MiB from pages homed at
 * rank 1 that it never touched, and rank 1 receives them into pages
 * homed at rank 0 that it never touched.  Large messages between two
 * processes of one host take the MPI library's single-copy path
 * (process_vm_readv: the kernel, in the receiver, reads the sender's
 * pages and writes the receiver's); pagehome's MPI_Send and MPI_Recv
 * (cluster/mpi_calls.c) make both buffers accessible first.  The message
 * must arrive whole, and both arrays must still hold what the DSM says
 * they hold: rank 1 reads the sent pages afterwards, rank 0 reads the
 * received ones after a barrier.  Then a small message that the DSM's
 * service thread receives (see below).
 */
#include "common.h"

#include <mpi.h>
#include <time.h>

#define BYTES ((size_t)4 << 20)
#define SMALL ((size_t)2048)

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
    int bypass = argc > 1 && strcmp(argv[1], "bypass") == 0;
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

    /* A message small enough to go eagerly, received into shared pages
     * rank 1 never touched, while rank 1's only MPI activity is the
     * progress the DSM's service thread drives: the library copies the
     * message into the pages from that thread, which alone serves faults.
     * pagehome's MPI_Irecv touched the buffer first (mpi_calls.c);
     * without that, the copy faulted on the service thread and the rank
     * hung. */
    char *rbuf = ph_cluster_alloc(SMALL, &at0);
    CHECK(rbuf != NULL);
    if (me == 0)
        memset(rbuf, 0x5a, SMALL);
    ph_cluster_barrier();
    int token = 0;
    if (me == 0) {
        /* sent once rank 1's receive is posted: it is matched when it
         * arrives, by whichever thread drives progress then */
        CHECK(MPI_Recv(&token, 1, MPI_INT, 1, 9, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE) == MPI_SUCCESS);
        CHECK(MPI_Send(src + 8192, (int)SMALL, MPI_CHAR, 1, 8,
                       MPI_COMM_WORLD) == MPI_SUCCESS);
    } else {
        /* "bypass": the MPI library's own MPI_Irecv, which pagehome does
         * not see (what a program linked with MPI before pagehome calls):
         * the rank must end with a message naming the cause, not hang */
        MPI_Request q;
        if (bypass)
            CHECK(PMPI_Irecv(rbuf, (int)SMALL, MPI_CHAR, 0, 8,
                             MPI_COMM_WORLD, &q) == MPI_SUCCESS);
        else
            CHECK(MPI_Irecv(rbuf, (int)SMALL, MPI_CHAR, 0, 8,
                            MPI_COMM_WORLD, &q) == MPI_SUCCESS);
        CHECK(MPI_Send(&token, 1, MPI_INT, 0, 9, MPI_COMM_WORLD) ==
              MPI_SUCCESS);
        struct timespec ts = {0, 200 * 1000 * 1000};
        nanosleep(&ts, NULL);
        CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE) == MPI_SUCCESS);
        size_t bad = 0;
        for (size_t i = 0; i < SMALL; i++)
            bad += rbuf[i] != pattern(8192 + i, 0);
        CHECK_EQ(bad, 0);
    }
    ph_cluster_barrier();
    if (me == 0) {
        size_t bad = 0;
        for (size_t i = 0; i < SMALL; i++)
            bad += rbuf[i] != pattern(8192 + i, 0);
        CHECK_EQ(bad, 0);
    }
    ph_cluster_barrier();
    ph_cluster_free(rbuf);
    ph_cluster_free(dst);
    ph_cluster_free(src);
    int rc = cl_finish("mpi_buffers");
    MPI_Finalize();
    return rc;
}
