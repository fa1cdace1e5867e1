/*
 * test_map_gap.c SEED [ROUNDS [SPREAD]] -- writes that land while another thread's
 * read fault maps the same page.
 *
 * On Linux < 6.5 (and with cluster_fault=userfaultfd-compat) a read-only
 * mapping takes two steps, mapped then write-protected; a thread that
 * writes the page between them takes no fault.  Each round here, one
 * thread of every rank (the reader) goes through the pages reading a word
 * nobody writes, and announces each page before it touches it; the other
 * threads (the writers) follow it and aim at that moment: each watches
 * the announced page's entry in /proc/self/pagemap and writes its own
 * word of the page as soon as the page is present but not yet
 * write-protected (or present and protected, or after a seeded wait when
 * pagemap cannot be read) -- a thread that touches the page before it is
 * present waits in the reader's fault and would miss the moment.  After a
 * barrier every thread checks every writer's word of every page; a write
 * that no twin or write notice caught is a stale word.  The count of
 * writes caught between the steps is printed (gap_writes; 0 where the
 * kernel maps in one step).
 *
 * test_map_gap.c alias SEED [ROUNDS [MIN_PERCENT]] -- the same catch, made certain
 * (cluster_fault=userfaultfd-compat, 2+ CPUs, SCHED_FIFO allowed; else
 * skipped).  A write between the two steps is one the protection did not
 * see; a write through a second mapping of the rank's arena memfd is
 * another, and one that can be kept going for the whole of a fault: while
 * rank 0's reader misses on each page (homed at rank 1, fetched one page
 * at a time: cluster_fetch_pages=1 and no read-ahead,
 * cluster_fetch_max_pages=1), a writer thread, raised to SCHED_FIFO
 * on a CPU of its own (every other thread of both ranks is moved off it)
 * so that nothing preempts it while the service thread maps the page,
 * writes a word of that page through the alias without pause from before
 * the miss begins until the read returns, then writes its final value.  The comparison after the
 * mapping sees the page changed, so the page is a written page and the
 * final value goes home at the barrier: rank 1 checks it (a page whose
 * writer was preempted for the whole moment is not caught; rank 0 counts
 * those from its statistics and rank 1 allows as many lost values).
 * Without the comparison no page is caught and the final values never
 * leave rank 0: rank 0 requires MIN_PERCENT (default 90) of the pages
 * caught.
 */
#include "common.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/stat.h>
#include <time.h>
#include <stdatomic.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define PAGE 4096
#define NPAGES 128
#define WORDS_PER_PAGE (PAGE / 8)
#define MAX_WRITERS 7

static uint64_t value(uint64_t seed, int round, int rank, int t, size_t p)
{
    return cl_h3(seed, (uint64_t)round, (uint64_t)(rank * 16 + t), p) | 1;
}

static inline void pause_for(uint64_t spins)
{
    for (uint64_t i = 0; i < spins; i++)
        __asm__ __volatile__("" ::: "memory");
}

/* Wait until the page at `addr` is mapped here (pagemap bit 63), at most
 * about `limit` polls; 1 when pagemap answered at all. */
static int wait_present(int pm, const void *addr, long limit)
{
    off_t at = (off_t)((uintptr_t)addr / PAGE) * 8;
    for (long i = 0; i < limit; i++) {
        uint64_t e = 0;
        if (pread(pm, &e, sizeof e, at) != (ssize_t)sizeof e)
            return 0;
        if (e >> 63)
            return 1;
    }
    return 1;
}

/* A second mapping of this rank's arena memfd (found among the open
 * descriptors by its name), or NULL. */
static char *map_arena_memfd(size_t *bytes)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return NULL;
    char *base = NULL;
    struct dirent *e;
    while (!base && (e = readdir(d)) != NULL) {
        char path[300], target[256];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t k = readlink(path, target, sizeof target - 1);
        if (k <= 0)
            continue;
        target[k] = '\0';
        if (!strstr(target, "memfd:pagehome-arena"))
            continue;
        int fd = atoi(e->d_name);
        struct stat st;
        if (fstat(fd, &st) == 0 && st.st_size > 0) {
            void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
                           MAP_SHARED, fd, 0);
            if (p != MAP_FAILED) {
                base = p;
                *bytes = (size_t)st.st_size;
            }
        }
    }
    closedir(d);
    return base;
}

static int set_fifo(int on)
{
    struct sched_param sp = {.sched_priority = on ? 1 : 0};
    return pthread_setschedparam(pthread_self(), on ? SCHED_FIFO : SCHED_OTHER,
                                 &sp);
}

/* CPU `w` (the last one) for rank 0's SCHED_FIFO writer alone, and
 * every other thread of every rank -- the service threads, and the
 * threads that drive MPI progress for a get from rank 1 (MPICH needs the
 * target's) -- on the other CPUs, so that the writer keeps nobody from
 * running.  Ranks a launcher bound to a core are moved. */
static int writer_cpu(void)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    return ncpu >= 2 && ncpu <= CPU_SETSIZE ? (int)ncpu - 1 : -1;
}

static void pin_process_apart(void)
{
    int w = writer_cpu();
    if (w < 0)
        return;
    cpu_set_t rest;
    CPU_ZERO(&rest);
    for (int i = 0; i < w; i++)
        CPU_SET(i, &rest);
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            sched_setaffinity((pid_t)atoi(e->d_name), sizeof rest, &rest);
    closedir(d);
}

static void pin_writer(void)
{
    int w = writer_cpu();
    if (w < 0)
        return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(w, &one);
    sched_setaffinity(0, sizeof one, &one);
}

static uint64_t final_value(uint64_t seed, int round, size_t p)
{
    return cl_h3(seed, 0xf1a1, (uint64_t)round, p) | 1;
}

static int alias_mode(uint64_t seed, int rounds, int min_pct)
{
    int me = ph_cluster_rank(), n = ph_cluster_nranks();
    ph_cluster_info_t info;
    ph_cluster_info(&info);
    if (strcmp(info.fault_mechanism, "userfaultfd-compat") != 0 || n < 2 ||
        cl_max_threads() < 2 || sysconf(_SC_NPROCESSORS_ONLN) < 2) {
        cl_skip("needs the two-step mapping (cluster_fault=userfaultfd-"
                "compat), 2 ranks, 2 threads and 2 CPUs");
        return cl_finish("map_gap alias");
    }
    /* every rank must agree to run: SCHED_FIFO is for rank 0 only */
    int can = 1;
    if (me == 0) {
        can = set_fifo(1) == 0;
        set_fifo(0);
    }
    ph_placement_t pl;
    ph_placement_parse(&pl, "node:1");
    uint64_t *x = ph_cluster_alloc((size_t)NPAGES * PAGE, &pl);
    uint64_t *flag = ph_cluster_alloc(PAGE, &pl);
    CHECK(x != NULL && flag != NULL);
    if (!x || !flag)
        return cl_finish("map_gap alias");
    if (me == 0)
        *flag = (uint64_t)can;
    ph_cluster_barrier();
    if (!*flag) {
        cl_skip("rank 0 may not use SCHED_FIFO here");
        return cl_finish("map_gap alias");
    }
    size_t alias_bytes = 0;
    char *alias = me == 0 ? map_arena_memfd(&alias_bytes) : NULL;
    if (me == 0)
        CHECK(alias != NULL);
    pin_process_apart();   /* the OpenMP threads made next inherit it */
    _Atomic long go = -1, writing = -1, read_done = -1;
    long bad = 0, stale = 0, caught = 0;
#pragma omp parallel num_threads(2) reduction(+ : bad, stale, caught)
    {
        int tid = cl_thread_num();
        for (int r = 0; r < rounds; r++) {
            if (me == 1 && tid == 0)
                for (size_t p = 0; p < NPAGES; p++)
                    x[p * WORDS_PER_PAGE] = value(seed, r, 1, 0, p);
            ph_cluster_barrier();      /* rank 0's copies are stale now */
            if (me == 0 && alias && tid == 0) {
                long long g0 = cl_stat_of("gap_writes");
                for (size_t p = 0; p < NPAGES; p++) {
                    atomic_store(&go, (long)p);
                    /* the writer is writing before the miss begins */
                    while (atomic_load(&writing) < (long)p)
                        ;
                    bad += x[p * WORDS_PER_PAGE] != value(seed, r, 1, 0, p);
                    atomic_store(&read_done, (long)p);
                }
                /* a page the writer did not write between the two steps
                 * (it was preempted all that time: seen once in some
                 * thousand) is not caught, and its final value is lost;
                 * rank 1 allows that many */
                long got = (long)(cl_stat_of("gap_writes") - g0);
                caught += got;
                flag[1] = (uint64_t)(NPAGES - got);
            } else if (me == 0 && alias && tid == 1) {
                if (r == 0)
                    pin_writer();
                size_t off = (size_t)((char *)x - (char *)info.arena);
                for (size_t p = 0; p < NPAGES; p++) {
                    /* the stream of writes goes to word 3, the final
                     * value to word 2: the page's content from before the
                     * miss (the twin) must be the home's where the final
                     * value lands, as it is for a write in the real gap
                     * (the page cannot be written before it is mapped) */
                    volatile uint64_t *w =
                        (volatile uint64_t *)(alias + off + p * PAGE);
                    while (atomic_load(&go) < (long)p)
                        ;
                    set_fifo(1);
                    w[3] = 0;
                    atomic_store(&writing, (long)p);
                    /* a miss takes some 10 us; on a machine too busy to
                     * serve it within 2 ms, give the CPU back (the page
                     * may then go uncaught, which is allowed for) */
                    struct timespec t0, t1;
                    clock_gettime(CLOCK_MONOTONIC, &t0);
                    int fifo = 1;
                    for (uint64_t k = 1; atomic_load(&read_done) < (long)p;
                         k++) {
                        w[3] = k;
                        if (fifo && (k & 1023) == 0) {
                            clock_gettime(CLOCK_MONOTONIC, &t1);
                            if ((t1.tv_sec - t0.tv_sec) * 1000000000L +
                                    (t1.tv_nsec - t0.tv_nsec) > 2000000L) {
                                set_fifo(0);
                                fifo = 0;
                            }
                        }
                    }
                    w[2] = final_value(seed, r, p);
                    set_fifo(0);
                }
            }
            ph_cluster_barrier();
            if (me == 1 && tid == 0) {
                long missing = 0;
                for (size_t p = 0; p < NPAGES; p++)
                    missing += x[p * WORDS_PER_PAGE + 2] !=
                               final_value(seed, r, p);
                if (missing > (long)flag[1])
                    stale += missing - (long)flag[1];
            }
#pragma omp single
            {
                atomic_store(&go, -1);
                atomic_store(&writing, -1);
                atomic_store(&read_done, -1);
            }
            ph_cluster_barrier();
        }
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(stale, 0);
    if (me == 0) {
        /* the comparison must have been exercised, nearly every time */
        CHECK(caught * 100 >= (long)rounds * NPAGES * min_pct);
        printf("map_gap alias: %d rounds x %d pages, %ld pages caught "
               "changed between map and protect\n", rounds, NPAGES, caught);
    } else {
        printf("map_gap alias: rank %d: %ld final values missing beyond the "
               "pages not caught\n", me, stale);
    }
    if (alias)
        munmap(alias, alias_bytes);
    ph_cluster_free(flag);
    ph_cluster_free(x);
    return cl_finish("map_gap alias");
}

int main(int argc, char **argv)
{
    cl_init(&argc, &argv);
    if (argc > 1 && !strcmp(argv[1], "alias"))
        return alias_mode(argc > 2 ? strtoull(argv[2], NULL, 0) : 1,
                          argc > 3 ? atoi(argv[3]) : 10,
                          argc > 4 ? atoi(argv[4]) : 90);
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 1;
    int rounds = argc > 2 ? atoi(argv[2]) : 40;
    uint64_t spread = argc > 3 ? strtoull(argv[3], NULL, 0) : 40000;
    int me = ph_cluster_rank(), n = ph_cluster_nranks();
    if (cl_max_threads() < 2 || n > 8) {
        cl_skip("needs 2 or more threads a rank and at most 8 ranks");
        return cl_finish("map_gap");
    }
    ph_placement_t pl;
    ph_placement_parse(&pl, "cyclic:1");
    uint64_t *x = ph_cluster_alloc((size_t)NPAGES * PAGE, &pl);
    CHECK(x != NULL);
    if (!x)
        return cl_finish("map_gap");
    _Atomic long announced = -1;
    int pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    long bad = 0;
    int writers = cl_max_threads() - 1;
    if (writers > MAX_WRITERS)
        writers = MAX_WRITERS;
#pragma omp parallel num_threads(writers + 1) reduction(+ : bad)
    {
        int tid = cl_thread_num();
        for (int r = 0; r < rounds; r++) {
            if (tid == 0) {
                volatile uint64_t sink = 0;
                for (size_t p = 0; p < NPAGES; p++) {
                    atomic_store(&announced, (long)p);
                    sink += x[p * WORDS_PER_PAGE];   /* nobody writes it */
                }
                (void)sink;
            } else if (tid <= writers) {
                for (size_t p = 0; p < NPAGES; p++) {
                    while (atomic_load(&announced) < (long)p)
                        ;
                    uint64_t *w = &x[p * WORDS_PER_PAGE];
                    if (pm < 0 || !wait_present(pm, w, 20000))
                        pause_for(cl_h3(seed ^ 0x9a9, (uint64_t)r,
                                        (uint64_t)tid, p) % spread);
                    x[p * WORDS_PER_PAGE + 1 + (size_t)me * MAX_WRITERS +
                      (size_t)(tid - 1)] = value(seed, r, me, tid, p);
                }
            }
            ph_cluster_barrier();
            for (size_t p = 0; p < NPAGES; p++)
                for (int q = 0; q < n; q++)
                    for (int t = 1; t <= writers; t++) {
                        uint64_t got = x[p * WORDS_PER_PAGE + 1 +
                                         (size_t)q * MAX_WRITERS +
                                         (size_t)(t - 1)];
                        bad += got != value(seed, r, q, t, p);
                    }
#pragma omp single
            atomic_store(&announced, -1);
            ph_cluster_barrier();
        }
    }
    if (pm >= 0)
        close(pm);
    CHECK_EQ(bad, 0);
    printf("map_gap: rank %d: %d rounds, %d writers, %lld writes caught "
           "between map and protect, %ld stale words\n",
           me, rounds, writers, cl_stat_of("gap_writes"), bad);
    ph_cluster_free(x);
    return cl_finish("map_gap");
}
