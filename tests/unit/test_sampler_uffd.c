/*
 * test_sampler_uffd.c -- the sampler's userfaultfd mechanism
 * (sample/uffd_service.c over os/uffd.c) on the simulated 4-node machine
 * (threads note their virtual node) -- skipped (77) where userfaultfd
 * with UFFDIO_MOVE is not usable.
 *
 * Covered: a full snapshot gives one sample per touched page with the
 * toucher's node, the data intact; the kernel's own accesses to watched
 * pages succeed and are samples (read(2) into them, write(2) from them,
 * raw syscall(SYS_getrandom), fstat into them); the physical page stays
 * the same through a sample (pagemap PFN, when readable: root), so its
 * NUMA node does; a fork() child sees every page while the parent was
 * armed; remove_range while two threads hammer the range; memory it
 * cannot move (MAP_SHARED) is accepted and never watched; a watched page
 * keeps its home on the simulated machine through its trip to the stash
 * and back (ph_os_note_moved), also when someone asks about it while it
 * is away; a query under a query hold, with the watched pages opened
 * first, never finds a page away while another thread arms and lifts
 * and a third touches pages (the service thread brings them back); with
 * the region gate enabled, serial code's traps (the OpenMP initial
 * thread's) are not samples and their runs are watched again when a
 * region begins, while a thread the runtime did not start gives samples
 * outside regions too.
 */
#include "check.h"

#include "base/error.h"
#include "config/options.h"
#include "os/os.h"
#include "sample/sigsegv.h"
#include "sample/source.h"
#include "topo/topo.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define PG PH_PAGE_4K

static ph_os *sim;

typedef struct coll {
    ph_sample s[4096];
    size_t n;
} coll;

static void collect(void *arg, const ph_sample *s, size_t n)
{
    coll *c = arg;
    for (size_t k = 0; k < n && c->n < 4096; k++)
        c->s[c->n++] = s[k];
}

static unsigned char *map_pages(size_t n)
{
    unsigned char *p = mmap(NULL, n * PG, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        abort();
    madvise(p, n * PG, MADV_NOHUGEPAGE);
    for (size_t i = 0; i < n; i++)
        p[i * PG + 7] = (unsigned char)i;
    return p;
}

/* Pages of buf[0, n) whose byte 7 is not what map_pages wrote. */
static int wrong_pages(const unsigned char *buf, size_t n)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += buf[i * PG + 7] != (unsigned char)i;
    return bad;
}

static ph_source *open_uffd(size_t budget)
{
    ph_sampler_opts o = {budget, 4096, 1, 4096, 0, PH_SAMPLER_USERFAULTFD};
    return ph_sampler_open(sim, &o);
}

/* ---- full snapshot, four threads on four nodes -------------------------- */

#define FS_PAGES 64
typedef struct fs_arg {
    unsigned char *buf;
    int node;
    int bad;
} fs_arg;

static void *fs_thread(void *p)
{
    fs_arg *a = p;
    ph_os_set_thread_node(sim, a->node);
    ph_sampler_note_node(a->node);
    for (size_t i = (size_t)a->node; i < FS_PAGES; i += 4) {
        a->bad += a->buf[i * PG + 7] != (unsigned char)i;
        a->buf[i * PG + 8] = 1;
    }
    return NULL;
}

/* Threads on nodes 0..3 run fn over buf; none read a wrong byte. */
static void four_threads(void *(*fn)(void *), unsigned char *buf)
{
    pthread_t th[4];
    fs_arg a[4];
    for (int t = 0; t < 4; t++) {
        a[t] = (fs_arg){buf, t, 0};
        pthread_create(&th[t], NULL, fn, &a[t]);
    }
    for (int t = 0; t < 4; t++) {
        pthread_join(th[t], NULL);
        CHECK_EQ(a[t].bad, 0);
    }
}

/* Drain s: FS_PAGES samples, page p's node (p / per_node) % 4. */
static void check_drained(ph_source *s, const unsigned char *buf, size_t per_node)
{
    static coll c;
    c.n = 0;
    CHECK_EQ(s->ops->drain(s, collect, &c), FS_PAGES);
    int wrong = 0;
    for (size_t k = 0; k < c.n; k++)
        wrong += c.s[k].node != (int)(((c.s[k].page - (uintptr_t)buf) / PG / per_node) % 4);
    CHECK_EQ(wrong, 0);
}

static void test_snapshot(void)
{
    unsigned char *buf = map_pages(FS_PAGES);
    ph_source *s = open_uffd(0);
    CHECK_STR(s->ops->name, "userfaultfd");
    CHECK_EQ(s->ops->add_range(s, buf, FS_PAGES * PG), 0);
    CHECK_EQ(s->ops->arm(s, 1), 0);
    four_threads(fs_thread, buf);
    check_drained(s, buf, 1);
    s->ops->close(s);
    munmap(buf, FS_PAGES * PG);
}

/* set_run_pages under userfaultfd: runs of 8 pages moved out and back
 * whole, the service thread's one sample a run credited to the run's
 * other pages with the toucher's node; the data intact. */
static void *cr_thread(void *p)
{
    fs_arg *a = p;
    ph_os_set_thread_node(sim, a->node);
    ph_sampler_note_node(a->node);
    for (size_t r = (size_t)a->node; r < FS_PAGES / 8; r += 4)
        for (size_t k = 0; k < 8; k++) { /* page 5 of the run first */
            size_t i = r * 8 + (k + 5) % 8;
            a->bad += a->buf[i * PG + 7] != (unsigned char)i;
        }
    return NULL;
}

static void test_credit_runs(void)
{
    unsigned char *buf = map_pages(FS_PAGES);
    ph_source *s = open_uffd(FS_PAGES);
    CHECK(s->ops->set_run_pages != NULL);
    CHECK_EQ(s->ops->add_range(s, buf, FS_PAGES * PG), 0);
    CHECK_EQ(s->ops->set_run_pages(s, 8), 0);
    CHECK_EQ(s->ops->arm(s, 0), 0);
    four_threads(cr_thread, buf);
    check_drained(s, buf, 8);
    ph_source_stats st;
    s->ops->stats(s, &st);
    CHECK_EQ(st.credited, FS_PAGES - FS_PAGES / 8);
    CHECK_EQ(wrong_pages(buf, FS_PAGES), 0);
    s->ops->close(s);
    munmap(buf, FS_PAGES * PG);
}

/* ---- the kernel's own accesses -------------------------------------------- */

static uint64_t pfn(const void *p)
{
    int fd = open("/proc/self/pagemap", O_RDONLY);
    uint64_t e = 0;
    if (fd >= 0) {
        if (pread(fd, &e, 8, (off_t)((uintptr_t)p / PG) * 8) != 8)
            e = 0;
        close(fd);
    }
    return e & (((uint64_t)1 << 55) - 1);
}

static void test_kernel_access(void)
{
    ph_sampler_note_node(2);
    unsigned char *buf = map_pages(8);
    uint64_t pfn0 = pfn(buf + 4 * PG);
    ph_source *s = open_uffd(0);
    CHECK_EQ(s->ops->add_range(s, buf, 8 * PG), 0);
    CHECK_EQ(s->ops->arm(s, 1), 0);
    int pp[2];
    CHECK_EQ(pipe(pp), 0);
    CHECK_EQ(write(pp[1], "hello", 5), 5);
    CHECK_EQ(read(pp[0], buf + 100, 5), 5);            /* kernel writes page 0 */
    CHECK(memcmp(buf + 100, "hello", 5) == 0);
    CHECK_EQ(write(pp[1], buf + PG + 7, 1), 1);         /* kernel reads page 1 */
    unsigned char b = 0;
    CHECK_EQ(read(pp[0], &b, 1), 1);
    CHECK_EQ(b, 1);
    CHECK_EQ(syscall(SYS_getrandom, buf + 2 * PG + 16, 32, 0), 32); /* raw */
    struct stat *st = (struct stat *)(void *)(buf + 3 * PG + 64);
    CHECK_EQ(fstat(pp[0], st), 0);
    CHECK(S_ISFIFO(st->st_mode));
    CHECK_EQ(buf[4 * PG + 7], 4);                       /* a user read */
    static coll c;
    c.n = 0;
    CHECK_EQ(s->ops->drain(s, collect, &c), 5);
    int node_ok = 1;
    for (size_t k = 0; k < c.n; k++)
        node_ok &= c.s[k].node == 2;
    CHECK(node_ok);
    uint64_t pfn1 = pfn(buf + 4 * PG);
    if (pfn0)
        CHECK_EQ(pfn1, pfn0); /* the same physical page: the same node */
    else
        printf("note: pagemap PFNs not readable (not root): PFN check skipped\n");
    close(pp[0]);
    close(pp[1]);
    s->ops->close(s);
    munmap(buf, 8 * PG);
}

/* ---- fork while armed ------------------------------------------------------- */

static void test_fork(void)
{
    unsigned char *buf = map_pages(32);
    ph_source *s = open_uffd(0);
    CHECK_EQ(s->ops->add_range(s, buf, 32 * PG), 0);
    CHECK_EQ(s->ops->arm(s, 1), 0);
    pid_t pid = fork();
    if (pid == 0) {
        int bad = wrong_pages(buf, 32);
        /* the child's sampler arms nothing and still works */
        bad += s->ops->arm(s, 1) != 0;
        buf[5 * PG] = 9;
        bad += buf[5 * PG] != 9;
        _exit(bad ? 1 : 0);
    }
    int status = 0;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_EQ(wrong_pages(buf, 32), 0);
    CHECK_EQ(buf[5 * PG], 0); /* the child's write stayed in the child */
    s->ops->close(s);
    munmap(buf, 32 * PG);
}

/* A child made past the fork handlers (a raw clone(2), as a fork that
 * met a run on its way back would leave it): its pages are still in its
 * copy of the stash and its copies are not registered.  The child's
 * handler (ph_sig_fork_child, which pthread_atfork runs after a fork())
 * puts them back with mremap, and never touches the inherited
 * userfaultfd: the parent's runs stay armed and still give samples. */
static void test_fork_past_handlers(void)
{
    unsigned char *buf = map_pages(32);
    ph_source *s = open_uffd(0);
    CHECK_EQ(s->ops->add_range(s, buf, 32 * PG), 0);
    CHECK_EQ(s->ops->arm(s, 1), 0);
    pid_t pid = (pid_t)syscall(SYS_clone, (unsigned long)SIGCHLD, 0UL, 0UL, 0UL, 0UL);
    if (pid == 0) {
        ph_sig_fork_child();
        int bad = wrong_pages(buf, 32);
        buf[3 * PG + 7] = 99;
        syscall(SYS_exit_group, bad ? 1 : 0);
    }
    CHECK(pid > 0);
    int status = 0;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* the parent: every run still armed (touching gives a sample), and
     * its data its own */
    CHECK_EQ(wrong_pages(buf, 32), 0);
    static coll c;
    c.n = 0;
    CHECK_EQ(s->ops->drain(s, collect, &c), 32);
    s->ops->close(s);
    munmap(buf, 32 * PG);
}

/* The machine's own calls that fault pages in (populate_on: placement)
 * may meet watched pages: the faulting call waits for the service
 * thread, which tells the machine the page is back (note_moved).  The
 * simulator must not hold its lock across such a fault. */
static atomic_int populate_done;

static void *populate_thread(void *p)
{
    unsigned char *buf = p;
    int rc = ph_os_populate_on(sim, buf, 32 * PG, sim->topo->nodes[2].id);
    atomic_store(&populate_done, rc == 0 ? 1 : -1);
    return NULL;
}

static void test_populate_watched(void)
{
    unsigned char *buf = map_pages(32);
    ph_source *s = open_uffd(0);
    CHECK_EQ(s->ops->add_range(s, buf, 32 * PG), 0);
    CHECK_EQ(s->ops->arm(s, 1), 0);
    atomic_store(&populate_done, 0);
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, populate_thread, buf), 0);
    for (int ms = 0; ms < 10000 && !atomic_load(&populate_done); ms++)
        usleep(1000);
    if (!atomic_load(&populate_done)) {
        fprintf(stderr, "populate_on over watched pages: no return in 10 s (deadlock)\n");
        _exit(1);
    }
    pthread_join(t, NULL);
    CHECK_EQ(atomic_load(&populate_done), 1);
    CHECK_EQ(wrong_pages(buf, 32), 0);
    s->ops->close(s);
    munmap(buf, 32 * PG);
}

/* ---- remove while hammered ---------------------------------------------------- */

typedef struct ham {
    unsigned char *buf;
    atomic_int stop;
    atomic_long n;
} ham;

typedef struct ham_arg {
    ham *h;
    size_t t; /* thread t writes the pages 2k + t: no race between them */
} ham_arg;

static void *ham_thread(void *p)
{
    const ham_arg *a = p;
    ham *h = a->h;
    ph_sampler_note_node(1);
    for (size_t i = 0; !atomic_load(&h->stop); i++) {
        volatile unsigned char *c = h->buf + ((i * 7 % 8) * 2 + a->t) * PG + 9;
        *c = (unsigned char)(*c + 1);
        atomic_fetch_add(&h->n, 1);
    }
    return NULL;
}

static void test_remove_hammered(void)
{
    int ok = 1;
    for (int round = 0; round < 40; round++) {
        unsigned char *buf = map_pages(16);
        ph_source *s = open_uffd(0);
        ok &= s->ops->add_range(s, buf, 16 * PG) == 0;
        ham h = {buf, 0, 0};
        pthread_t th[2];
        ham_arg args[2] = {{&h, 0}, {&h, 1}};
        for (int t = 0; t < 2; t++)
            pthread_create(&th[t], NULL, ham_thread, &args[t]);
        for (int k = 0; k < 5; k++)
            s->ops->arm(s, 1);
        ok &= s->ops->remove_range(s, buf, 16 * PG) == 0;
        atomic_store(&h.stop, 1);
        for (int t = 0; t < 2; t++)
            pthread_join(th[t], NULL);
        int bad = 0;
        for (size_t i = 0; i < 16; i++)
            bad += buf[i * PG + 7] != (unsigned char)i;
        ok &= bad == 0;
        s->ops->close(s);
        munmap(buf, 16 * PG);
    }
    CHECK(ok);
}

/* ---- memory it cannot move --------------------------------------------------- */

static void test_shared_not_watched(void)
{
    unsigned char *buf = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE,
                              MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    memset(buf, 3, 4 * PG);
    ph_source *s = open_uffd(0);
    CHECK_EQ(s->ops->add_range(s, buf, 4 * PG), 0);
    CHECK_EQ(s->ops->arm(s, 1), 0);
    CHECK_EQ(buf[PG], 3);
    static coll c;
    c.n = 0;
    CHECK_EQ(s->ops->drain(s, collect, &c), 0);
    s->ops->close(s);
    munmap(buf, 4 * PG);
}

/* ---- homes through the stash ---------------------------------------------- */

/* Pages homed on node i % 4, watched, asked about while away (the OS
 * answers "not faulted", as Linux's move_pages does), then touched from
 * node 0: each is back on its own node, not on the toucher's. */
static void test_homes_kept(void)
{
    enum { N = 32 };
    unsigned char *buf = map_pages(N);
    void *pages[N];
    int to[N], st[N];
    for (int i = 0; i < N; i++) {
        pages[i] = buf + (size_t)i * PG;
        to[i] = i % 4;
    }
    CHECK_EQ(ph_os_move(sim, N, pages, to, st), 0);
    ph_sim_counters c0, c1;
    CHECK_EQ(ph_sim_counters_get(sim, &c0), 0);
    ph_source *s = open_uffd(0);
    CHECK_EQ(s->ops->add_range(s, buf, N * PG), 0);
    CHECK_EQ(s->ops->arm(s, 1), 0);
    CHECK_EQ(ph_os_query(sim, N, pages, st), 0);
    int away = 0;
    for (int i = 0; i < N; i++)
        away += st[i] == -ENOENT;
    CHECK_EQ(away, N);
    ph_os_set_thread_node(sim, 0);
    ph_sampler_note_node(0);
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += buf[(size_t)i * PG + 7] != (unsigned char)i;
    CHECK_EQ(bad, 0);
    CHECK_EQ(ph_os_query(sim, N, pages, st), 0);
    int kept = 0;
    for (int i = 0; i < N; i++)
        kept += st[i] == i % 4;
    CHECK_EQ(kept, N);
    CHECK_EQ(ph_sim_counters_get(sim, &c1), 0);
    CHECK(c1.carried_pages - c0.carried_pages >= 2u * N);
    s->ops->close(s);
    ph_os_set_thread_node(sim, -1);
    munmap(buf, N * PG);
}

/* ---- queries while the sampler arms, lifts and brings pages back ---------- */

/* One thread arms (each arm lifts the interval before: every page
 * LIFTING on its way back, then ARMING on its way out), one touches
 * pages (the service thread brings them back: FIRING), and this one asks
 * where the pages are under a query hold, with the watched ones opened
 * first (as the preload's move_pages does): no page may be away. */
#define QH_PAGES 256
typedef struct qh {
    unsigned char *buf;
    ph_source *s;
    atomic_int stop;
    atomic_long arms; /* arms returned */
} qh;

static void *qh_armer(void *p)
{
    qh *h = p;
    while (!atomic_load(&h->stop)) {
        h->s->ops->arm(h->s, 1);
        atomic_fetch_add(&h->arms, 1);
    }
    return NULL;
}

static void *qh_toucher(void *p)
{
    qh *h = p;
    ph_os_set_thread_node(sim, 1);
    ph_sampler_note_node(1);
    for (size_t i = 0; !atomic_load(&h->stop); i = (i + 37) % QH_PAGES)
        (void)*(volatile unsigned char *)(h->buf + i * PG + 7);
    return NULL;
}

static void test_query_hold(void)
{
    unsigned char *buf = map_pages(QH_PAGES);
    void *pages[QH_PAGES];
    int st[QH_PAGES];
    for (int i = 0; i < QH_PAGES; i++)
        pages[i] = buf + (size_t)i * PG;
    qh h = {buf, open_uffd(0), 0, 0};
    CHECK_EQ(h.s->ops->add_range(h.s, buf, QH_PAGES * PG), 0);
    pthread_t th[2];
    pthread_create(&th[0], NULL, qh_armer, &h);
    pthread_create(&th[1], NULL, qh_toucher, &h);
    size_t away = 0, watched = 0, failed = 0;
    /* At least 1000 queries, and on until the armer has armed a few
     * times and a query met a watched page: on two loaded cores the
     * armer may not run at all during the first thousand.  Armings must
     * get through a stream of queries, so 60 s without them fails. */
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int k = 0;; k++) {
        if (k >= 1000 && atomic_load(&h.arms) >= 8 && watched > 0)
            break;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec > 60)
            break;
        ph_sampler_query_begin();
        watched += ph_sampler_open_pages(QH_PAGES, pages);
        failed += ph_os_query(sim, QH_PAGES, pages, st) < 0;
        ph_sampler_query_end();
        for (int i = 0; i < QH_PAGES; i++)
            away += st[i] == -ENOENT;
    }
    atomic_store(&h.stop, 1);
    for (int t = 0; t < 2; t++)
        pthread_join(th[t], NULL);
    ph_source_stats ss;
    h.s->ops->stats(h.s, &ss);
    printf("query hold: %llu arms (%llu pages armed); the queries found %zu pages "
           "watched and opened them, %zu away\n", (unsigned long long)ss.intervals,
           (unsigned long long)ss.armed_pages, watched, away);
    CHECK_EQ(failed, 0);
    CHECK_EQ(away, 0);
    CHECK(watched > 0); /* the queries did meet watched pages */
    int bad = 0;
    for (size_t i = 0; i < QH_PAGES; i++)
        bad += buf[i * PG + 7] != (unsigned char)i;
    CHECK_EQ(bad, 0);
    h.s->ops->close(h.s);
    ph_os_set_thread_node(sim, -1);
    munmap(buf, QH_PAGES * PG);
}

/* ---- the region gate: serial code's traps are no samples ---------------- */

#define SG_PAGES 16

/* A thread the OpenMP runtime did not start (a library's pthread), on
 * node 2, touching every page while no region runs. */
static void *other_thread(void *p)
{
    unsigned char *buf = p;
    ph_os_set_thread_node(sim, 2);
    ph_sampler_note_node(2);
    for (size_t i = 0; i < SG_PAGES; i++)
        buf[i * PG + 10] = 1;
    return (void *)(intptr_t)wrong_pages(buf, SG_PAGES);
}

/* A thread that becomes an initial thread of the runtime (a pthread
 * running OpenMP code of its own) and ends: its serial traps are no
 * samples; once it has ended, its id is forgotten. */
static void *initial_thread(void *p)
{
    unsigned char *buf = p;
    ph_sampler_note_serial_thread(1);
    int tid = (int)syscall(SYS_gettid);
    int bad = wrong_pages(buf, SG_PAGES);
    bad += ph_sig_runs_serial_code(tid) != 1;
    ph_sampler_note_serial_thread(0);
    bad += ph_sig_runs_serial_code(tid) != 0;
    bad += ph_sig_runs_serial_code(PH_SIG_TID_SELF) != 0;
    return (void *)(intptr_t)bad;
}

/* Last: the gate, once enabled, stays (as in a process with OpenMP). */
static void test_serial_gate(void)
{
    unsigned char *buf = map_pages(SG_PAGES);
    ph_source *s = open_uffd(0);
    CHECK_EQ(s->ops->add_range(s, buf, SG_PAGES * PG), 0);
    CHECK_EQ(s->ops->arm(s, 1), 0);
    ph_sampler_note_node(1);
    ph_os_set_thread_node(sim, 1);
    ph_sampler_note_serial_thread(1); /* this thread is OpenMP's initial one */
    ph_sampler_gate_enable(); /* no region running: closed */
    /* every page touched: stashed, then back in place with its run
     * SUSPENDED -- counted once either way */
    CHECK_EQ(s->ops->touched_pages(s, 1000), SG_PAGES);
    /* serial code (an initialisation, a check) touches every page: the
     * data is there, no sample is kept */
    CHECK_EQ(wrong_pages(buf, SG_PAGES), 0);
    CHECK_EQ(s->ops->touched_pages(s, 1000), SG_PAGES);
    static coll c;
    c.n = 0;
    CHECK_EQ(s->ops->drain(s, collect, &c), 0);
    ph_source_stats ss;
    s->ops->stats(s, &ss);
    CHECK_EQ(ss.serial, SG_PAGES);
    /* a region begins: the runs the serial code opened are watched
     * again, and the region's accesses are samples */
    ph_sampler_gate(1);
    for (size_t i = 0; i < SG_PAGES; i++)
        buf[i * PG + 9] = 1;
    CHECK_EQ(s->ops->drain(s, collect, &c), SG_PAGES);
    int wrong = 0;
    for (size_t k = 0; k < c.n; k++)
        wrong += c.s[k].node != 1;
    CHECK_EQ(wrong, 0);
    ph_sampler_gate(0);
    /* once taken, a run is not watched again by the gate */
    CHECK_EQ(wrong_pages(buf, SG_PAGES), 0);
    ph_sampler_gate(1);
    CHECK_EQ(wrong_pages(buf, SG_PAGES), 0);
    ph_sampler_gate(0);
    CHECK_EQ(s->ops->drain(s, collect, &c), 0);
    s->ops->stats(s, &ss);
    CHECK_EQ(ss.serial, SG_PAGES);
    /* the next interval, gate closed: another thread's accesses are
     * samples on its node, and the initial thread's still are not */
    CHECK_EQ(s->ops->arm(s, 1), 0);
    pthread_t th;
    void *bad = NULL;
    CHECK_EQ(pthread_create(&th, NULL, other_thread, buf), 0);
    pthread_join(th, &bad);
    CHECK_EQ((intptr_t)bad, 0);
    c.n = 0;
    CHECK_EQ(s->ops->drain(s, collect, &c), SG_PAGES);
    wrong = 0;
    for (size_t k = 0; k < c.n; k++)
        wrong += c.s[k].node != 2;
    CHECK_EQ(wrong, 0);
    CHECK_EQ(s->ops->arm(s, 1), 0);
    CHECK_EQ(wrong_pages(buf, SG_PAGES), 0);
    CHECK_EQ(s->ops->drain(s, collect, &c), 0);
    s->ops->stats(s, &ss);
    CHECK_EQ(ss.serial, 2 * SG_PAGES);
    CHECK_EQ(s->ops->arm(s, 1), 0);
    CHECK_EQ(pthread_create(&th, NULL, initial_thread, buf), 0);
    pthread_join(th, &bad);
    CHECK_EQ((intptr_t)bad, 0);
    CHECK_EQ(s->ops->drain(s, collect, &c), 0);
    s->ops->stats(s, &ss);
    CHECK_EQ(ss.serial, 3 * SG_PAGES);
    /* an initial thread that ends is forgotten (not the process's first
     * thread, whose exit handlers are serial code too) */
    ph_sampler_note_serial_thread(0);
    CHECK_EQ(ph_sig_runs_serial_code(PH_SIG_TID_SELF), 1);
    s->ops->close(s);
    munmap(buf, SG_PAGES * PG);
}

/* ---- many ranges: queries that open pages ------------------------------------ */

/* More ranges than the sampler once allowed (1024), each 2 pages, with a
 * 2-page gap of memory nobody watches after each.  A query over every
 * page, from the last down (the pages of one range, then a gap, then the
 * next range: the search's remembered slot and gap must both be left
 * correctly), opens exactly the watched pages, without a sample, and
 * every byte stays. */
#define MR_RANGES 1500
static void test_many_ranges(void)
{
    size_t npg = (size_t)MR_RANGES * 4;
    unsigned char *buf = map_pages(npg);
    ph_sampler_opts o = {0, 4 * MR_RANGES, 1, 4096, 0, PH_SAMPLER_USERFAULTFD};
    ph_source *s = ph_sampler_open(sim, &o);
    CHECK(s != NULL);
    if (!s)
        return;
    int added = 0;
    for (size_t r = 0; r < MR_RANGES; r++)
        added += s->ops->add_range(s, buf + r * 4 * PG, 2 * PG) == 0;
    CHECK_EQ(added, MR_RANGES);
    CHECK_EQ(s->ops->arm(s, 1), 0);
    void **pages = malloc(npg * sizeof *pages);
    for (size_t i = 0; i < npg; i++)
        pages[i] = buf + (npg - 1 - i) * PG;
    ph_sampler_query_begin();
    CHECK_EQ(ph_sampler_open_pages(npg, pages), 2 * MR_RANGES);
    ph_sampler_query_end();
    ph_sampler_query_begin();
    CHECK_EQ(ph_sampler_open_pages(npg, pages), 0); /* all open now */
    ph_sampler_query_end();
    CHECK_EQ(wrong_pages(buf, npg), 0);
    static coll c;
    c.n = 0;
    CHECK_EQ(s->ops->drain(s, collect, &c), 0);
    /* armed again: a query in address order this time */
    CHECK_EQ(s->ops->arm(s, 1), 0);
    for (size_t i = 0; i < npg; i++)
        pages[i] = buf + i * PG;
    ph_sampler_query_begin();
    CHECK_EQ(ph_sampler_open_pages(npg, pages), 2 * MR_RANGES);
    ph_sampler_query_end();
    CHECK_EQ(wrong_pages(buf, npg), 0);
    free(pages);
    s->ops->close(s);
    munmap(buf, npg * PG);
}

int main(void)
{
    ph_options_init();
    ph_topology *topo = ph_topo_from_spec("nodes=4,cpus_per_node=1");
    sim = topo ? ph_os_sim_open(topo) : NULL;
    if (!sim) {
        fprintf(stderr, "simulator: %s\n", ph_error_message());
        return 1;
    }
    ph_source *probe = open_uffd(0);
    if (!probe) {
        printf("userfaultfd mechanism not usable here: %s\n", ph_error_message());
        return 77;
    }
    probe->ops->close(probe);
    test_snapshot();
    test_credit_runs();
    test_kernel_access();
    test_fork();
    test_fork_past_handlers();
    test_populate_watched();
    test_remove_hammered();
    test_shared_not_watched();
    test_homes_kept();
    test_query_hold();
    test_serial_gate();
    test_many_ranges();
    ph_os_close(sim);
    ph_topo_free(topo);
    return check_summary("test_sampler_uffd");
}
