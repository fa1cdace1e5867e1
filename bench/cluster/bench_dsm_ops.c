/*
 * bench_dsm_ops.c -- cluster mode's basic operations against the raw MPI
 * operations they are made of, measured in one run (2 ranks or more; rank
 * 0 measures, rank 1 is the home/peer, the others wait in barriers).
 *
 *   read miss          a load from an invalid page homed at rank 1:
 *                      fault, MPI_Get + flush of the page, map    vs raw
 *                      MPI_Get + MPI_Win_flush of 4 KiB (same window kind:
 *                      MPI_Win_create over a memfd mapping)
 *   write + release    a store to a cached page just read, then
 *                      ph_cluster_release of it: (write fault, twin,)
 *                      diff, MPI_Put + flush                    vs raw
 *                      MPI_Put + flush of 4 KiB.  From the second
 *                      repetition on, rank 0 wrote these pages before,
 *                      so the store to the first of a run faults and
 *                      makes the run (up to 64 pages) writable with
 *                      twins (cluster_write_predict): the others' stores
 *                      do not fault; then a second store and a release
 *                      alone, timed apart
 *   write fault        the first store to a read-only copy this rank
 *                      never wrote (fresh pages each repetition): the
 *                      fault path's cost (no MPI)
 *   write miss+release the same on an invalid page (fetch first) vs raw
 *                      Get+flush + Put+flush
 *   barrier, 0 dirty   ph_cluster_barrier with nothing written vs
 *                      MPI_Barrier
 *   barrier, k dirty   every rank writes k pages homed at the next rank,
 *                      then ph_cluster_barrier (diffs, notices, invalidations)
 *   barrier, k whole   every rank rewrites all bytes of k consecutive pages
 *                      homed at the next rank (what a solver writing its
 *                      rows does), then ph_cluster_barrier: the pages go
 *                      home whole
 *   lock hand-over     ranks 0 and 1 take turns on one lock (the turn is a
 *                      shared word read under the lock)          vs raw
 *                      MPI_Fetch_and_op + flush round trip
 *   local fault        the first read of a home page (no MPI): the fault
 *                      path's own cost (userfaultfd round trip or SIGSEGV)
 *   uffd round trip    the kernel's part of a write fault, without
 *                      pagehome (rank 0, before ph_cluster_init): a store
 *                      to a write-protected page of a memfd mapping, a
 *                      second thread that waits in poll(), reads the
 *                      fault and lifts the protection (UFFDIO_WRITEPROTECT,
 *                      which wakes the writer) -- the floor under "first
 *                      store to a read-only copy"; "-" where userfaultfd's
 *                      write-protect mode cannot be had
 * The pages keep the homes their placement gives (the program sets
 * cluster_migrate=0 unless PAGEHOME_CLUSTER_MIGRATE is set): home
 * migration would move rank 0's pages to it after a few repetitions and
 * the operations measured would no longer be the ones named.  For the
 * same reason cluster_refresh=0 unless PAGEHOME_CLUSTER_REFRESH is set:
 * rank 0 reads the same pages after every barrier, and the barriers
 * would fetch them before the read misses timed.
 * The raw operations run before ph_cluster_init and again after
 * ph_cluster_finalize, in the same process (MPI stays initialised: the
 * program initialises it itself, with MPI_THREAD_SERIALIZED); the raw
 * figure is the lower of the two medians.  Medians over --reps samples
 * of --count operations each; cluster mode's after one more repetition
 * that is not recorded (its first one allocates the twins' memory and
 * faults it in: 45 us a store instead of 1-2), as the raw operations'
 * second run is warm.
 *
 * Output: a table (rank 0), and one line per measurement in the format
 * of bench/cluster's raw MPI benchmark, which bench/cluster/run.sh and
 * table.py read:
 *   cluster-bench op=read_miss impl=dsm mpi=openmpi win=create ranks=2
 *     k=- iters=N median_us=.. p90_us=..     (over the repetitions' means)
 * with op read_miss, write_release, write_miss_release, write_fault,
 * barrier, barrier_dirty and barrier_whole (k = dirty pages per rank),
 * lock_handover,
 * and impl=mpi lines for get, put, fop, barrier measured in this run (and
 * op=uffd_wp impl=os: the kernel's round trip).
 *
 *   bench_dsm_ops [--iters N] [--reps R] [--quick]
 *   bench_dsm_ops --barrier-loop N    only N empty barriers in a row
 *   bench_dsm_ops --release-loop N    only N repetitions of the table's
 *                                     write + release (to profile it)
 */
#include <pagehome.h>

#include <mpi.h>

#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096
#define MAXREPS 64

static int me, n;
static int count = 200, reps = 7;
static long barrier_loop;  /* --barrier-loop N: only N empty barriers */
static long release_loop;  /* --release-loop N: only write + release */

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int k)
{
    qsort(v, (size_t)k, sizeof *v, cmpd);
    return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}

static char mpi_name[16];

/* one machine-readable line (rank 0) */
static void line(const char *op, const char *impl, const char *k, double *v,
                 int nv)
{
    if (me != 0)
        return;
    double s[MAXREPS];
    memcpy(s, v, (size_t)nv * sizeof *s);
    qsort(s, (size_t)nv, sizeof *s, cmpd);
    int p90 = (int)((double)nv * 0.9);
    if (p90 >= nv)
        p90 = nv - 1;
    printf("cluster-bench op=%s impl=%s mpi=%s win=create ranks=%d k=%s "
           "iters=%d median_us=%.2f p90_us=%.2f\n", op, impl, mpi_name, n, k,
           count, median(s, nv), s[p90]);
}

/* ---- the kernel's userfaultfd round trip ------------------------------ */

static int uffd_fd = -1;
static atomic_int uffd_stop;

static void *uffd_server(void *arg)
{
    (void)arg;
    while (!atomic_load(&uffd_stop)) {
        struct pollfd pf = {uffd_fd, POLLIN, 0};
        if (poll(&pf, 1, 100) <= 0)
            continue;
        struct uffd_msg m;
        if (read(uffd_fd, &m, sizeof m) != (ssize_t)sizeof m ||
            m.event != UFFD_EVENT_PAGEFAULT)
            continue;
        struct uffdio_writeprotect w = {
            .range = {m.arg.pagefault.address & ~(uint64_t)(PAGE - 1), PAGE},
            .mode = 0};
        if (ioctl(uffd_fd, UFFDIO_WRITEPROTECT, &w) < 0)
            perror("bench_dsm_ops: UFFDIO_WRITEPROTECT");
    }
    return NULL;
}

/* Median us per write-protect fault over reps x count stores, or -1 where
 * it cannot be measured (no userfaultfd for this process, or no
 * write-protect mode for shared memory: Linux < 5.19). */
static double measure_uffd_wp(double *per_rep)
{
    size_t bytes = (size_t)count * PAGE;
    int mfd = memfd_create("bench-uffd", 0);
    char *m = MAP_FAILED;
    if (mfd >= 0 && ftruncate(mfd, (off_t)bytes) == 0)
        m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    if (m == MAP_FAILED) {
        if (mfd >= 0)
            close(mfd);
        return -1;
    }
    memset(m, 1, bytes);
    double result = -1;
    uffd_fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
    struct uffdio_api api = {.api = UFFD_API,
                             .features = UFFD_FEATURE_WP_HUGETLBFS_SHMEM};
    struct uffdio_register reg = {.range = {(uint64_t)(uintptr_t)m, bytes},
                                  .mode = UFFDIO_REGISTER_MODE_WP};
    pthread_t t;
    atomic_store(&uffd_stop, 0);
    if (uffd_fd >= 0 && ioctl(uffd_fd, UFFDIO_API, &api) == 0 &&
        ioctl(uffd_fd, UFFDIO_REGISTER, &reg) == 0 &&
        pthread_create(&t, NULL, uffd_server, NULL) == 0) {
        int ok = 1;
        for (int r = 0; r < reps && ok; r++) {
            struct uffdio_writeprotect w = {
                .range = {(uint64_t)(uintptr_t)m, bytes},
                .mode = UFFDIO_WRITEPROTECT_MODE_WP};
            if (ioctl(uffd_fd, UFFDIO_WRITEPROTECT, &w) < 0) {
                ok = 0;
                break;
            }
            double t0 = now_us();
            for (int i = 0; i < count; i++)
                m[(size_t)i * PAGE] = (char)(r + 2);
            per_rep[r] = (now_us() - t0) / count;
        }
        atomic_store(&uffd_stop, 1);
        pthread_join(t, NULL);
        if (ok) {
            double s[MAXREPS];
            memcpy(s, per_rep, (size_t)reps * sizeof *s);
            result = median(s, reps);
        }
    }
    if (uffd_fd >= 0)
        close(uffd_fd);
    uffd_fd = -1;
    munmap(m, bytes);
    close(mfd);
    return result;
}

/* ---- raw MPI ---------------------------------------------------------- */

typedef struct raw {
    double get, put, fop, barrier;
} raw;

static raw measure_raw(void)
{
    raw out = {0};
    size_t bytes = (size_t)count * 2 * PAGE;
    int mfd = memfd_create("bench-raw", 0);
    if (mfd < 0 || ftruncate(mfd, (off_t)bytes) < 0) {
        perror("memfd");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    char *w = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    memset(w, 1, bytes);
    MPI_Win win;
    MPI_Win_create(w, (MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD,
                   &win);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    double g[MAXREPS], p[MAXREPS], f[MAXREPS], b[MAXREPS];
    for (int r = 0; r < reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0) {
            double t0 = now_us();
            for (int i = 0; i < count; i++) {
                MPI_Get(w + (size_t)(count + i) * PAGE, PAGE, MPI_BYTE, 1,
                        (MPI_Aint)i * PAGE, PAGE, MPI_BYTE, win);
                MPI_Win_flush(1, win);
            }
            double t1 = now_us();
            for (int i = 0; i < count; i++) {
                MPI_Put(w + (size_t)i * PAGE, PAGE, MPI_BYTE, 1,
                        (MPI_Aint)(count + i) * PAGE, PAGE, MPI_BYTE, win);
                MPI_Win_flush(1, win);
            }
            double t2 = now_us();
            int64_t one = 1, old;
            for (int i = 0; i < count; i++) {
                MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 1, 0, MPI_SUM, win);
                MPI_Win_flush(1, win);
            }
            double t3 = now_us();
            g[r] = (t1 - t0) / count;
            p[r] = (t2 - t1) / count;
            f[r] = (t3 - t2) / count;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        double t4 = now_us();
        for (int i = 0; i < count; i++)
            MPI_Barrier(MPI_COMM_WORLD);
        b[r] = (now_us() - t4) / count;
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    munmap(w, bytes);
    close(mfd);
    line("get", "mpi", "-", g, reps);
    line("put", "mpi", "-", p, reps);
    line("fop", "mpi", "-", f, reps);
    line("barrier", "mpi", "-", b, reps);
    if (me == 0) {
        out.get = median(g, reps);
        out.put = median(p, reps);
        out.fop = median(f, reps);
    }
    out.barrier = median(b, reps);
    return out;
}

/* ---- cluster mode ----------------------------------------------------- */

/* Rank 0's write + release of the table: a store to each of the count
 * pages at a, each followed by ph_cluster_release of it; us per page. */
static double store_release_us(char *a, long it)
{
    double t0 = now_us();
    for (int i = 0; i < count; i++) {
        a[(size_t)i * PAGE + 8] = (char)it;
        ph_cluster_release(a + (size_t)i * PAGE, 16);
    }
    return (now_us() - t0) / count;
}

/* --release-loop: the table's write + release alone, release_loop times
 * (rank 1 writes its pages, a barrier invalidates rank 0's copies, rank 0
 * reads them, then stores to each and releases it); the median us of a
 * write + release over the repetitions, rank 0's. */
static double measure_release_loop(void)
{
    ph_placement_t pl;
    ph_placement_parse(&pl, "node:1");
    char *a = ph_cluster_alloc((size_t)count * PAGE, &pl);
    double *t = calloc((size_t)release_loop, sizeof *t);
    if (!a || !t) {
        fprintf(stderr, "bench_dsm_ops: allocation failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (long it = 0; it < release_loop; it++) {
        if (me == 1)
            for (int i = 0; i < count; i++)
                a[(size_t)i * PAGE] = (char)(it + 1);
        ph_cluster_barrier();
        if (me == 0) {
            volatile char s = 0;
            for (int i = 0; i < count; i++)
                s += a[(size_t)i * PAGE];
            (void)s;
            t[it] = store_release_us(a, it);
        }
        ph_cluster_barrier();
    }
    double m = median(t, (int)release_loop);
    free(t);
    ph_cluster_free(a);
    return m;
}

typedef struct dsm {
    double read_miss, write_release, write_miss_release, barrier0;
    double barrier_k[3], barrier_whole[2];
    double lock, local_fault, write_again, release, first_write;
} dsm;

static const int kdirty[3] = {1, 16, 64};
static const int kwhole[2] = {16, 64};

static dsm measure_dsm(void)
{
    dsm out = {0};
    ph_placement_t pl;
    ph_placement_parse(&pl, "node:1");
    /* pages homed at rank 1: rank 0 misses on them */
    char *a = ph_cluster_alloc((size_t)count * PAGE, &pl);
    ph_placement_parse(&pl, "node:0");
    char *home = ph_cluster_alloc((size_t)count * PAGE, &pl);
    ph_placement_parse(&pl, "cyclic:1");
    char *dirty = ph_cluster_alloc((size_t)n * 64 * PAGE, &pl);
    ph_placement_parse(&pl, "block");
    /* 64 pages homed at each rank, in rank order */
    char *whole = ph_cluster_alloc((size_t)n * 64 * PAGE, &pl);
    long *turn = ph_cluster_alloc(PAGE, NULL);
    ph_placement_parse(&pl, "node:1");
    /* fresh pages for each repetition's first writes */
    char *fresh = ph_cluster_alloc((size_t)(reps + 1) * (size_t)count * PAGE,
                                   &pl);
    if (!a || !home || !dirty || !whole || !turn || !fresh) {
        fprintf(stderr, "bench_dsm_ops: allocation failed: %s\n",
                ph_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double rm[MAXREPS], wr[MAXREPS], wm[MAXREPS], b0[MAXREPS], lf[MAXREPS];
    double bk[3][MAXREPS], bw[2][MAXREPS], lk[MAXREPS], wf[MAXREPS];
    double rl[MAXREPS];
    double fw[MAXREPS];
    for (int it = 0; it <= reps; it++) {
        /* repetition 0 warms up (twins allocated, code and data in
         * cache, as for the raw operations' loops): not recorded */
        int r = it > 0 ? it - 1 : 0;
        /* read miss: rank 1 writes its pages, rank 0 reads one word each */
        if (me == 1)
            for (int i = 0; i < count; i++)
                a[(size_t)i * PAGE] = (char)(it + 1);
        ph_cluster_barrier();          /* invalidates rank 0's copies */
        if (me == 0) {
            volatile char s = 0;
            double t0 = now_us();
            for (int i = 0; i < count; i++)
                s += a[(size_t)i * PAGE];
            double t1 = now_us();
            rm[r] = (t1 - t0) / count;
            (void)s;
            /* write + release on the cached pages */
            wr[r] = store_release_us(a, it);
            /* a second store to each page, then the releases alone */
            t0 = now_us();
            for (int i = 0; i < count; i++)
                a[(size_t)i * PAGE + 24] = (char)it;
            t1 = now_us();
            for (int i = 0; i < count; i++)
                ph_cluster_release(a + (size_t)i * PAGE, 32);
            double t2 = now_us();
            wf[r] = (t1 - t0) / count;
            rl[r] = (t2 - t1) / count;
            /* first stores to read-only copies never written here */
            char *f = fresh + (size_t)it * (size_t)count * PAGE;
            for (int i = 0; i < count; i++)
                s += f[(size_t)i * PAGE];
            t0 = now_us();
            for (int i = 0; i < count; i++)
                f[(size_t)i * PAGE + 8] = (char)it;
            fw[r] = (now_us() - t0) / count;
            ph_cluster_release(f, (size_t)count * PAGE);
        }
        ph_cluster_barrier();
        if (me == 1)
            for (int i = 0; i < count; i++)
                a[(size_t)i * PAGE + 100] = (char)(it + 2);
        ph_cluster_barrier();          /* rank 0's copies invalid again */
        if (me == 0) {
            double t0 = now_us();
            for (int i = 0; i < count; i++) {
                a[(size_t)i * PAGE + 16] = (char)it;
                ph_cluster_release(a + (size_t)i * PAGE + 16, 8);
            }
            wm[r] = (now_us() - t0) / count;
            /* a local fault: the first read of a home page after the
             * barrier made it... home pages never fault twice: use the
             * fresh home allocation's pages once per rep */
        }
        ph_cluster_barrier();
        /* empty barriers */
        double t0 = now_us();
        for (int i = 0; i < count; i++)
            ph_cluster_barrier();
        b0[r] = (now_us() - t0) / count;
        /* barriers with k dirty pages per rank (homed elsewhere) */
        for (int k = 0; k < 3; k++) {
            int iters = count / 4 > 4 ? count / 4 : 4;
            double acc = 0;
            for (int i = 0; i < iters; i++) {
                for (int j = 0; j < kdirty[k]; j++) {
                    /* page (j * n + me + 1) % (64 n) has home me + 1 */
                    size_t pg = ((size_t)j * (size_t)n + (size_t)me + 1) %
                                ((size_t)n * 64);
                    dirty[pg * PAGE + (size_t)me * 8] = (char)i;
                }
                double s0 = now_us();
                ph_cluster_barrier();
                acc += now_us() - s0;
            }
            bk[k][r] = acc / iters;
        }
        /* barriers with k whole pages per rank, consecutive, homed at the
         * next rank */
        for (int k = 0; k < 2; k++) {
            int iters = count / 4 > 4 ? count / 4 : 4;
            double acc = 0;
            char *mine = whole + (size_t)((me + 1) % n) * 64 * PAGE;
            for (int i = 0; i < iters; i++) {
                memset(mine, (char)(i + 1), (size_t)kwhole[k] * PAGE);
                double s0 = now_us();
                ph_cluster_barrier();
                acc += now_us() - s0;
            }
            bw[k][r] = acc / iters;
        }
        /* lock hand-over between ranks 0 and 1 */
        *turn = 0;
        ph_cluster_barrier();
        if (me <= 1) {
            int rounds = count;
            double s0 = now_us();
            for (int i = 0; i < rounds;) {
                ph_cluster_lock(1);
                if (*turn % 2 == me) {
                    *turn += 1;
                    i++;
                }
                ph_cluster_unlock(1);
            }
            lk[r] = (now_us() - s0) / (2.0 * rounds);
        }
        ph_cluster_barrier();
        lf[r] = 0;
    }
    /* local faults: first touch of home pages (rank 0's own pages) */
    if (me == 0) {
        volatile char s = 0;
        double t0 = now_us();
        for (int i = 0; i < count; i++)
            s += home[(size_t)i * PAGE];
        out.local_fault = (now_us() - t0) / count;
        (void)s;
    }
    ph_cluster_barrier();
    line("read_miss", "dsm", "-", rm, reps);
    line("write_release", "dsm", "-", wr, reps);
    line("write_miss_release", "dsm", "-", wm, reps);
    line("write_fault", "dsm", "-", fw, reps);
    line("barrier", "dsm", "-", b0, reps);
    for (int k = 0; k < 3; k++) {
        char kk[16];
        snprintf(kk, sizeof kk, "%d", kdirty[k]);
        line("barrier_dirty", "dsm", kk, bk[k], reps);
    }
    for (int k = 0; k < 2; k++) {
        char kk[16];
        snprintf(kk, sizeof kk, "%d", kwhole[k]);
        line("barrier_whole", "dsm", kk, bw[k], reps);
    }
    line("lock_handover", "dsm", "-", lk, reps);
    if (me == 0) {
        out.read_miss = median(rm, reps);
        out.write_release = median(wr, reps);
        out.write_again = median(wf, reps);
        out.release = median(rl, reps);
        out.first_write = median(fw, reps);
        out.write_miss_release = median(wm, reps);
        out.lock = median(lk, reps);
    }
    out.barrier0 = median(b0, reps);
    for (int k = 0; k < 3; k++)
        out.barrier_k[k] = median(bk[k], reps);
    for (int k = 0; k < 2; k++)
        out.barrier_whole[k] = median(bw[k], reps);
    ph_cluster_free(fresh);
    ph_cluster_free(turn);
    ph_cluster_free(whole);
    ph_cluster_free(dirty);
    ph_cluster_free(home);
    ph_cluster_free(a);
    (void)lf;
    return out;
}

static const char *met(double ratio, double goal)
{
    return ratio <= goal ? "met" : "NOT met";
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if ((!strcmp(argv[i], "--count") || !strcmp(argv[i], "--iters")) &&
            i + 1 < argc)
            count = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--quick")) {
            count = 40;
            reps = 3;
        } else if (!strcmp(argv[i], "--barrier-loop") && i + 1 < argc)
            barrier_loop = atol(argv[++i]);
        else if (!strcmp(argv[i], "--release-loop") && i + 1 < argc)
            release_loop = atol(argv[++i]);
    }
    if (reps > MAXREPS)
        reps = MAXREPS;
    if (count < 4)
        count = 4;
    int prov;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &prov);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int vlen;
    MPI_Get_library_version(version, &vlen);
    snprintf(mpi_name, sizeof mpi_name, "%s",
             strstr(version, "Open MPI") ? "openmpi"
             : strstr(version, "MPICH")  ? "mpich"
                                         : "other");
    if (n < 2) {
        if (me == 0)
            fprintf(stderr, "bench_dsm_ops: needs at least 2 ranks\n");
        MPI_Finalize();
        return 77;
    }
    raw r1 = measure_raw();
    double uffd_rep[MAXREPS], uffd_us = -1;
    if (me == 0) {
        uffd_us = measure_uffd_wp(uffd_rep);
        if (uffd_us >= 0)
            line("uffd_wp", "os", "-", uffd_rep, reps);
    }
    /* fixed homes (see the top) unless the user chose */
    int migrate = getenv("PAGEHOME_CLUSTER_MIGRATE") != NULL;
    if (!migrate)
        ph_config_set("cluster_migrate", "0");
    if (!getenv("PAGEHOME_CLUSTER_REFRESH"))
        ph_config_set("cluster_refresh", "0");
    if (ph_cluster_init(&argc, &argv) < 0) {
        fprintf(stderr, "ph_cluster_init: %s\n", ph_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    ph_cluster_info_t info;
    ph_cluster_info(&info);
    if (barrier_loop > 0) {
        /* only empty barriers, back to back, right after the start */
        double t0 = now_us();
        for (long i = 0; i < barrier_loop; i++)
            ph_cluster_barrier();
        double us = (now_us() - t0) / (double)barrier_loop;
        if (me == 0)
            printf("bench_dsm_ops: %d ranks, %ld empty barriers: %.2f us "
                   "each (MPI_Barrier before the start: %.2f us)\n", n,
                   barrier_loop, us, r1.barrier);
        ph_cluster_finalize();
        MPI_Finalize();
        return 0;
    }
    if (release_loop > 0) {
        double us = measure_release_loop();
        if (me == 0)
            printf("bench_dsm_ops: %d ranks, %ld x %d writes + releases: "
                   "median %.2f us each (MPI_Put + flush before the start: "
                   "%.2f us)\n", n, release_loop, count, us, r1.put);
        ph_cluster_finalize();
        MPI_Finalize();
        return 0;
    }
    dsm d = measure_dsm();
    ph_cluster_finalize();
    raw r2 = measure_raw();
    raw rw = {
        r1.get < r2.get ? r1.get : r2.get, r1.put < r2.put ? r1.put : r2.put,
        r1.fop < r2.fop ? r1.fop : r2.fop,
        r1.barrier < r2.barrier ? r1.barrier : r2.barrier};
    if (me == 0) {
        char mig[16] = "?", rfr[16] = "?";
        ph_config_get("cluster_migrate", mig, sizeof mig);
        ph_config_get("cluster_refresh", rfr, sizeof rfr);
        printf("bench_dsm_ops: %d ranks, %s, faults by %s, %d x %d operations, "
               "cluster_migrate=%s, cluster_refresh=%s, medians in us\n", n,
               info.transport, info.fault_mechanism, reps, count, mig, rfr);
        printf("%-32s %10s %10s %8s %8s\n", "operation", "cluster", "raw MPI",
               "ratio", "goal");
        printf("%-32s %10.2f %10.2f %8.2f %8s %s\n", "read miss (Get+flush)",
               d.read_miss, rw.get, d.read_miss / rw.get, "<= 2",
               met(d.read_miss / rw.get, 2));
        printf("%-32s %10.2f %10.2f %8.2f %8s %s\n",
               "write + release (Put+flush)", d.write_release, rw.put,
               d.write_release / rw.put, "<= 3",
               met(d.write_release / rw.put, 3));
        printf("%-32s %10.2f %10s\n", "  a second store", d.write_again,
               "-");
        printf("%-32s %10.2f %10.2f %8.2f\n", "  a release alone", d.release,
               rw.put, d.release / rw.put);
        if (uffd_us >= 0)
            printf("%-32s %10.2f %10.2f %8.2f   (raw: the kernel's "
                   "userfaultfd round trip)\n",
                   "first store to a read-only copy", d.first_write, uffd_us,
                   d.first_write / uffd_us);
        else
            printf("%-32s %10.2f %10s\n", "first store to a read-only copy",
                   d.first_write, "-");
        printf("%-32s %10.2f %10.2f %8.2f %8s\n",
               "write miss + release (Get+Put)", d.write_miss_release,
               rw.get + rw.put, d.write_miss_release / (rw.get + rw.put), "");
        printf("%-32s %10.2f %10.2f %8.2f %8s %s\n",
               "barrier, 0 dirty (MPI_Barrier)", d.barrier0, rw.barrier,
               d.barrier0 / rw.barrier, "<= 5",
               met(d.barrier0 / rw.barrier, 5));
        for (int k = 0; k < 3; k++) {
            char name[64];
            snprintf(name, sizeof name, "barrier, %d dirty/rank", kdirty[k]);
            printf("%-32s %10.2f %10.2f %8.2f\n", name, d.barrier_k[k],
                   rw.barrier, d.barrier_k[k] / rw.barrier);
        }
        for (int k = 0; k < 2; k++) {
            char name[64];
            snprintf(name, sizeof name, "barrier, %d whole/rank", kwhole[k]);
            printf("%-32s %10.2f %10.2f %8.2f\n", name, d.barrier_whole[k],
                   rw.barrier, d.barrier_whole[k] / rw.barrier);
        }
        printf("%-32s %10.2f %10.2f %8.2f\n", "lock hand-over (FOP+flush)",
               d.lock, rw.fop, d.lock / rw.fop);
        printf("%-32s %10.2f %10s\n", "local fault (no MPI)", d.local_fault,
               "-");
        printf("raw before/after: Get %.2f/%.2f Put %.2f/%.2f FOP %.2f/%.2f "
               "Barrier %.2f/%.2f\n", r1.get, r2.get, r1.put, r2.put, r1.fop,
               r2.fop, r1.barrier, r2.barrier);
    }
    MPI_Finalize();
    return 0;
}
