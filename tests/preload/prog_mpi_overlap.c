/*
 * prog_mpi_overlap.c -- an MPI + OpenMP program of the kind hybrid codes
 * are: each of two ranks sends a 32 MiB array to the other with
 * MPI_Isend/MPI_Irecv and, while the messages are in flight, a parallel
 * region reads the array being sent (MPI-3 allows it) and updates another.
 * Within one host the MPI library moves such messages by reading the
 * sender's memory from the receiver's process (CMA), the case
 * src/preload/mpi_env.c is about.  Checks what it received (exit 1 on a
 * wrong sum) and prints one line per rank.
 *
 *   prog_mpi_overlap [ITERATIONS]     (run with 2 ranks)
 */
#include <mpi.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int prov, me, np;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &prov);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np != 2) {
        if (me == 0)
            fprintf(stderr, "prog_mpi_overlap: run with 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int iters = argc > 1 ? atoi(argv[1]) : 30;
    const size_t n = (size_t)4 << 20; /* 32 MiB of doubles */
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b),
           *c = malloc(n * sizeof *c);
    if (!a || !b || !c)
        MPI_Abort(MPI_COMM_WORLD, 1);
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) {
        a[i] = (double)(i % 1000) + me;
        b[i] = 0;
        c[i] = 1;
    }
    int other = 1 - me, bad = 0;
    double t = 0;
    for (int it = 0; it < iters; it++) {
        MPI_Request rq[2];
        MPI_Status st[2]; /* not MPI_STATUSES_IGNORE: gcc 12 takes MPICH's
                           * for an empty array (-Wstringop-overflow) */
        MPI_Irecv(b, (int)n, MPI_DOUBLE, other, it, MPI_COMM_WORLD, &rq[0]);
        MPI_Isend(a, (int)n, MPI_DOUBLE, other, it, MPI_COMM_WORLD, &rq[1]);
#pragma omp parallel for schedule(static) reduction(+ : t)
        for (size_t i = 0; i < n; i++) {
            c[i] = c[i] * 0.5 + a[i];
            t += c[i];
        }
        MPI_Waitall(2, rq, st);
        long wrong = 0;
#pragma omp parallel for schedule(static) reduction(+ : wrong)
        for (size_t i = 0; i < n; i++)
            wrong += b[i] != (double)(i % 1000) + other;
        if (wrong) {
            fprintf(stderr, "prog_mpi_overlap: rank %d, iteration %d: %ld of %zu "
                    "values received wrong\n", me, it, wrong, n);
            bad = 1;
        }
    }
    printf("rank %d: %d iterations, received %s, checksum %.6e\n", me, iters,
           bad ? "WRONG" : "ok", isfinite(t) ? t : -1.0);
    free(a);
    free(b);
    free(c);
    MPI_Finalize();
    return bad;
}
