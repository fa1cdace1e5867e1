/*
 * test_signals.c -- SIGSEGV handlers the program installs after
 * ph_cluster_init, as a crash reporter does: with signal() and then with
 * sigaction().  The DSM must keep serving remote accesses (under
 * cluster_fault=sigsegv its own handler does: the program's goes behind
 * it), asking for the disposition returns the program's handler, a real
 * segfault at an address outside the arena reaches the program's handler
 * (which jumps back here), and after ph_cluster_finalize the program's
 * handler is the one installed.  Before libpagehome_cluster interposed
 * these calls, the first remote access under page protection ran the
 * program's handler.
 *
 * Masks: a thread that blocks every signal (started by a thread that did,
 * as a thread pool's workers are) reads pages homed elsewhere, and so does
 * a SIGUSR1 handler installed with a full sa_mask; the program's view of
 * its mask keeps SIGSEGV blocked.  Under page protection both died of the
 * kernel's SIGSEGV before cluster mode interposed the mask calls.
 */
#include "common.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>

static volatile sig_atomic_t plain_calls;
static void plain_handler(int sig)
{
    (void)sig;
    plain_calls++;
    _exit(97); /* a remote access must never get here */
}

static sigjmp_buf back;
static void *volatile fault_addr;
static volatile sig_atomic_t info_calls;
static void info_handler(int sig, siginfo_t *si, void *ctx)
{
    (void)sig;
    (void)ctx;
    info_calls++;
    fault_addr = si->si_addr;
    siglongjmp(back, 1);
}

/* The sum of the first word of each rank's page of a, whose values
 * exchange() left: a read fault per page homed elsewhere. */
static long sum_words(const long *a, int n)
{
    long s = 0;
    for (int r = 0; r < n; r++)
        s += a[(size_t)r * 512 + (size_t)r];
    return s;
}

typedef struct reader {
    const long *a;
    int n;
    long sum;
} reader;

static void *blocked_reader(void *p)
{
    reader *r = p;
    r->sum = sum_words(r->a, r->n);
    return NULL;
}

static const long *usr1_pages;
static int usr1_n;
static volatile long usr1_sum = -1;
static void usr1_handler(int sig)
{
    (void)sig;
    usr1_sum = sum_words(usr1_pages, usr1_n);
}

/* Every rank writes its word into a page homed at each other rank and
 * reads them all after a barrier: remote faults of both kinds. */
static void exchange(long *a, int me, int n, long round)
{
    for (int r = 0; r < n; r++)
        a[(size_t)r * 512 + (size_t)me] = round * 100 + me;
    ph_cluster_barrier();
    long bad = 0;
    for (int r = 0; r < n; r++)
        for (int w = 0; w < n; w++)
            bad += a[(size_t)r * 512 + (size_t)w] != round * 100 + w;
    CHECK_EQ(bad, 0);
    ph_cluster_barrier();
}

int main(int argc, char **argv)
{
    cl_init(&argc, &argv);
    int me = ph_cluster_rank(), n = ph_cluster_nranks();
    ph_placement_t pl;
    ph_placement_parse(&pl, "cyclic:1");

    struct sigaction orig;
    CHECK(sigaction(SIGSEGV, NULL, &orig) == 0);

    /* signal(): the DSM still serves the faults */
    long *a = ph_cluster_alloc((size_t)n * 4096, &pl);
    CHECK(a != NULL);
    CHECK(signal(SIGSEGV, plain_handler) != SIG_ERR);
    struct sigaction cur;
    CHECK(sigaction(SIGSEGV, NULL, &cur) == 0);
    CHECK(!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == plain_handler);
    exchange(a, me, n, 1);
    CHECK_EQ(plain_calls, 0);

    /* sigaction() with SA_SIGINFO: the old one returned is the program's */
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = info_handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGSEGV, &sa, &old) == 0);
    CHECK(!(old.sa_flags & SA_SIGINFO) && old.sa_handler == plain_handler);
    /* pages never touched here: freshly allocated, every home */
    long *b = ph_cluster_alloc((size_t)n * 4096, &pl);
    CHECK(b != NULL);
    exchange(b, me, n, 2);
    exchange(a, me, n, 3);
    CHECK_EQ(info_calls, 0);

    /* a real segfault reaches the program's handler */
    const char *e = getenv("PH_TEST_BAD_ADDRESS");
    volatile long *bad = (volatile long *)(uintptr_t)strtoull(e ? e : "16", NULL, 0);
    if (sigsetjmp(back, 1) == 0) {
        *bad = 1;
        CHECK(0); /* not reached */
    }
    CHECK_EQ(info_calls, 1);
    CHECK(fault_addr == (void *)bad);
    /* and the DSM still works after it */
    exchange(b, me, n, 4);

    /* masks: every signal blocked, SIGSEGV included, in this thread and
     * so in the threads it starts */
    long want = 0;
    for (int r = 0; r < n; r++)
        want += 500 + r;
    long *c = ph_cluster_alloc((size_t)n * 4096, &pl);
    long *d = ph_cluster_alloc((size_t)n * 4096, &pl);
    CHECK(c != NULL && d != NULL);
    /* every rank writes every page: at the barrier the copies here of
     * pages homed elsewhere go stale, so the reads below fault */
    for (int r = 0; r < n; r++)
        c[(size_t)r * 512 + (size_t)me] = d[(size_t)r * 512 + (size_t)me] = 500 + me;
    ph_cluster_barrier();
    sigset_t all, before, view;
    sigfillset(&all);
    CHECK(pthread_sigmask(SIG_BLOCK, &all, &before) == 0);
    CHECK(pthread_sigmask(SIG_SETMASK, NULL, &view) == 0);
    CHECK(sigismember(&view, SIGSEGV) == 1);
    CHECK(sigprocmask(SIG_BLOCK, NULL, &view) == 0);
    CHECK(sigismember(&view, SIGSEGV) == 1);
    reader rd = {c, n, -1};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, blocked_reader, &rd) == 0);
    CHECK(pthread_join(th, NULL) == 0);
    CHECK_EQ(rd.sum, want);
    CHECK(pthread_sigmask(SIG_SETMASK, &before, NULL) == 0);
    CHECK(pthread_sigmask(SIG_SETMASK, NULL, &view) == 0);
    CHECK_EQ(sigismember(&view, SIGSEGV), sigismember(&before, SIGSEGV));
    /* a handler that blocks every signal while it runs */
    struct sigaction us;
    memset(&us, 0, sizeof us);
    us.sa_handler = usr1_handler;
    sigfillset(&us.sa_mask);
    CHECK(sigaction(SIGUSR1, &us, NULL) == 0);
    usr1_pages = d;
    usr1_n = n;
    CHECK(raise(SIGUSR1) == 0);
    CHECK_EQ(usr1_sum, want);
    signal(SIGUSR1, SIG_DFL);
    ph_cluster_barrier();
    ph_cluster_free(d);
    ph_cluster_free(c);

    /* the start-up disposition back; after finalize it is the one in
     * place, not the DSM's */
    CHECK(sigaction(SIGSEGV, &orig, NULL) == 0);
    ph_cluster_free(b);
    ph_cluster_free(a);
    int rc = cl_finish("signals");
    struct sigaction after;
    sigaction(SIGSEGV, NULL, &after);
    int same = (after.sa_flags & SA_SIGINFO) == (orig.sa_flags & SA_SIGINFO) &&
               ((after.sa_flags & SA_SIGINFO)
                    ? after.sa_sigaction == orig.sa_sigaction
                    : after.sa_handler == orig.sa_handler);
    if (!same) {
        fprintf(stderr, "rank %d: after ph_cluster_finalize the SIGSEGV "
                "disposition is not the program's\n", me);
        return 1;
    }
    return rc;
}
