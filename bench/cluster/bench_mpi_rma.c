/*
 * bench_mpi_rma.c -- the raw MPI operations cluster mode's DSM is made of,
 * timed one by one: the baseline its read miss, write miss + release,
 * barrier and lock hand-over are measured against (bench/README.md,
 * "Cluster").
 *
 *   bench_mpi_rma [--iters N] [--bytes B] [--target R] [--win create|allocate|both]
 *
 * Rank 0 is the origin, rank R (default: the last rank, on another host
 * in the namespace cluster) the target; every rank exposes the same
 * window of N distinct pages (+1 for the counter), so no operation
 * touches a page an earlier one did.  Inside one MPI_Win_lock_all epoch
 * rank 0 times, N times each:
 *   get      MPI_Get of B bytes (default 4 KiB) from page i + MPI_Win_flush
 *   put      MPI_Put of B bytes to page i + MPI_Win_flush
 *   fop      MPI_Fetch_and_op (8 bytes, MPI_SUM) + MPI_Win_flush: one
 *            atomic round trip, what a lock hand-over is built on
 * on an MPI_Win_create window (memory from mmap) and an MPI_Win_allocate
 * window; the other ranks wait in MPI_Barrier meanwhile (which progresses
 * their passive side).  Then every rank runs
 *   barrier  MPI_Barrier, timed on rank 0.
 * One line per measurement (the format the DSM's benchmarks print too):
 *   cluster-bench op=get impl=mpi mpi=NAME win=create ranks=2 target=1
 *     bytes=4096 iters=1000 median_us=2.01 p90_us=2.40 mean_us=2.10
 * A window kind the MPI cannot make (Open MPI over TCP without osc pt2pt
 * or ucx) is reported as "cluster-bench op=window ... error=..." and
 * skipped.  One rank runs the barrier only.
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define PAGE_BYTES 4096

static int rank, nranks;
static char mpi_name[32];

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void report(const char *op, const char *win, int target, long bytes, double *t,
                   int n)
{
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += t[i];
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    int p90 = (int)((double)n * 0.9);
    if (p90 >= n)
        p90 = n - 1;
    printf("cluster-bench op=%s impl=mpi mpi=%s win=%s ranks=%d target=%d bytes=%ld "
           "iters=%d median_us=%.2f p90_us=%.2f mean_us=%.2f\n",
           op, mpi_name, win, nranks, target, bytes, n, t[n / 2] * 1e6, t[p90] * 1e6,
           sum / n * 1e6);
    fflush(stdout);
}

static void rma(int allocate, int iters, long bytes, int target, double *t)
{
    const char *kind = allocate ? "allocate" : "create";
    size_t pages_bytes = (size_t)(iters + 1) * PAGE_BYTES;
    MPI_Win win;
    unsigned char *base = NULL;
    int rc;
    if (allocate) {
        rc = MPI_Win_allocate((MPI_Aint)pages_bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                              &win);
    } else {
        base = mmap(NULL, pages_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                    -1, 0);
        if (base == MAP_FAILED) {
            perror("bench_mpi_rma: mmap");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        rc = MPI_Win_create(base, (MPI_Aint)pages_bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD,
                            &win);
    }
    int ok = rc == MPI_SUCCESS, all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!all) {
        char err[MPI_MAX_ERROR_STRING] = "failed on another rank";
        int len;
        if (!ok)
            MPI_Error_string(rc, err, &len);
        for (char *p = err; *p; p++)
            if (*p == ' ' || *p == '\n')
                *p = '_';
        if (rank == 0)
            printf("cluster-bench op=window impl=mpi mpi=%s win=%s ranks=%d error=%s\n",
                   mpi_name, kind, nranks, err);
        if (ok)
            MPI_Win_free(&win);
        if (!allocate)
            munmap(base, pages_bytes);
        return;
    }
    memset(base, rank & 0xff, pages_bytes);
    unsigned char *buf = malloc((size_t)bytes), *src = malloc((size_t)bytes);
    if (!buf || !src)
        MPI_Abort(MPI_COMM_WORLD, 1);
    memset(src, 0x5a, (size_t)bytes);
    MPI_Aint counter = (MPI_Aint)iters * PAGE_BYTES;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    if (rank == 0) {
        /* warm-up: connections, registration, first-use paths */
        for (int i = 0; i < 16 && i < iters; i++) {
            MPI_Get(buf, (int)bytes, MPI_BYTE, target, (MPI_Aint)i * PAGE_BYTES, (int)bytes,
                    MPI_BYTE, win);
            MPI_Win_flush(target, win);
        }
        for (int i = 0; i < iters; i++) {
            double t0 = MPI_Wtime();
            MPI_Get(buf, (int)bytes, MPI_BYTE, target, (MPI_Aint)i * PAGE_BYTES, (int)bytes,
                    MPI_BYTE, win);
            MPI_Win_flush(target, win);
            t[i] = MPI_Wtime() - t0;
        }
        if (buf[0] != (unsigned char)(target & 0xff)) {
            fprintf(stderr, "bench_mpi_rma: MPI_Get returned the wrong data\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        report("get", kind, target, bytes, t, iters);
        for (int i = 0; i < iters; i++) {
            double t0 = MPI_Wtime();
            MPI_Put(src, (int)bytes, MPI_BYTE, target, (MPI_Aint)i * PAGE_BYTES, (int)bytes,
                    MPI_BYTE, win);
            MPI_Win_flush(target, win);
            t[i] = MPI_Wtime() - t0;
        }
        report("put", kind, target, bytes, t, iters);
        long one = 1, old = 0;
        for (int i = 0; i < iters; i++) {
            double t0 = MPI_Wtime();
            MPI_Fetch_and_op(&one, &old, MPI_LONG, target, counter, MPI_SUM, win);
            MPI_Win_flush(target, win);
            t[i] = MPI_Wtime() - t0;
        }
        report("fop", kind, target, 8, t, iters);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == target) {
        /* the puts landed (a page of 0x5a) and the counter counted */
        unsigned long c, init = 0x0101010101010101UL * (unsigned long)(target & 0xff);
        MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
        memcpy(&c, base + counter, sizeof c);
        MPI_Win_unlock(target, win);
        if (base[0] != 0x5a || c != init + (unsigned long)iters) {
            fprintf(stderr, "bench_mpi_rma: the target's window does not hold what was "
                            "put (page 0 %#x, counter %#lx)\n", base[0], c);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    MPI_Win_free(&win);
    if (!allocate)
        munmap(base, pages_bytes);
    free(buf);
    free(src);
}

int main(int argc, char **argv)
{
    int iters = 1000, target = -1, wins = 3;
    long bytes = PAGE_BYTES;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (strcmp(argv[i], "--bytes") == 0 && i + 1 < argc)
            bytes = atol(argv[++i]);
        else if (strcmp(argv[i], "--target") == 0 && i + 1 < argc)
            target = atoi(argv[++i]);
        else if (strcmp(argv[i], "--win") == 0 && i + 1 < argc) {
            const char *w = argv[++i];
            wins = strcmp(w, "create") == 0 ? 1 : strcmp(w, "allocate") == 0 ? 2
                   : strcmp(w, "both") == 0 ? 3 : 0;
        } else {
            wins = 0;
            break;
        }
    }
    if (wins == 0 || iters < 10 || iters > 1000000 || bytes < 1 || bytes > PAGE_BYTES) {
        fprintf(stderr, "usage: bench_mpi_rma [--iters N>=10] [--bytes 1..4096] "
                        "[--target RANK] [--win create|allocate|both]\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(version, &len);
    snprintf(mpi_name, sizeof mpi_name, "%s",
             strstr(version, "Open MPI") ? "openmpi" : strstr(version, "MPICH") ? "mpich"
                                                                                 : "other");
    if (target < 0)
        target = nranks - 1;
    if (target >= nranks || (nranks > 1 && target == 0)) {
        if (rank == 0)
            fprintf(stderr, "bench_mpi_rma: --target must be 1..%d\n", nranks - 1);
        MPI_Finalize();
        return 2;
    }
    double *t = malloc((size_t)iters * sizeof *t);
    if (!t)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (nranks > 1) {
        if (wins & 1)
            rma(0, iters, bytes, target, t);
        if (wins & 2)
            rma(1, iters, bytes, target, t);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < 16; i++)
        MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < iters; i++) {
        double t0 = MPI_Wtime();
        MPI_Barrier(MPI_COMM_WORLD);
        t[i] = MPI_Wtime() - t0;
    }
    if (rank == 0)
        report("barrier", "-", -1, 0, t, iters);
    free(t);
    MPI_Finalize();
    return 0;
}
