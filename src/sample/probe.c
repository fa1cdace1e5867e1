/*
 * probe.c -- what one sample costs the thread that takes it, measured.
 *
 * The engine keeps sampling near sample_budget of the run by charging
 * every sample the time in the handler (measured: handler_ns) plus the
 * part of the round trip nobody can time from inside -- the fault's entry
 * and exit, and for the userfaultfd mechanism the faulting thread's wait
 * while the service thread is woken and answers (two context switches).
 * That part differs by mechanism and machine: about 3 us for a SIGSEGV
 * trap here, ten times that for a userfaultfd round trip.  A constant
 * for both had the userfaultfd sampler spend about ten times its budget.
 *
 * The probe takes a few samples on a private buffer with the source the
 * engine will use, before the engine has any range: each touch is timed
 * by the touching thread, and the handler's own time (stats) is taken
 * out when the handler runs on that thread (SIGSEGV; userfaultfd's runs
 * on the service thread, and its time is charged on top of the wait).
 * The median is the answer: one preemption cannot make it.
 *
 * The program's threads will be running on the other CPUs when its pages
 * trap, and a change of protection (the handler's unprotect, the arm's
 * protect) is then flushed from their TLBs too: the kernel interrupts
 * each CPU the process runs on and waits for it.  A lone thread pays no
 * such flush.  So the probe keeps `busy` helper threads spinning while it
 * times the touches, on other CPUs than its own, as the program's team
 * will be.  In the 4-node TCG guest a lone thread's trap cost 60 us and
 * one among four busy threads 150-200 us.
 *
 * The helpers run on the calling thread's CPUs but the one it is on, and
 * on every other CPU online when it is bound to one: an OpenMP runtime
 * that binds its threads (OMP_PROC_BIND) has bound the caller by now, and
 * its team will run on the others (taking the caller's affinity, none
 * would start there, and the probe would time a lone thread's trap).
 */
#include "sample/probe.h"

#include "base/clock.h"
#include "base/thread.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PG ((size_t)4096)
#define PROBE_MAX_RUNS 64
#define PROBE_MAX_BUSY 63
/* how long the probe waits for its helpers to be running */
#define PROBE_BUSY_WAIT_NS 200000000ull

typedef struct probe_busy {
    atomic_int stop;
    atomic_int running;
    cpu_set_t away;         /* where the helpers run: not the caller's CPU */
    pthread_t t[PROBE_MAX_BUSY];
    int n;
} probe_busy;

static void *spin(void *arg)
{
    probe_busy *b = arg;
    /* off the caller's CPU (the kernel keeps it within the process's
     * cpuset); a refusal leaves it where it started */
    (void)pthread_setaffinity_np(pthread_self(), sizeof b->away, &b->away);
    atomic_fetch_add(&b->running, 1);
    while (!atomic_load_explicit(&b->stop, memory_order_relaxed))
        __asm__ __volatile__("" ::: "memory");
    return NULL;
}

/* Start up to `want` spinning helpers, no more than the CPUs they may
 * run on (above) besides this thread's (a helper sharing the probe's CPU
 * would time the scheduler, not the trap), and wait (a bounded time)
 * until they run; those that could not start are simply fewer. */
static void busy_start(probe_busy *b, int want)
{
    atomic_init(&b->stop, 0);
    atomic_init(&b->running, 0);
    b->n = 0;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (sched_getaffinity(0, sizeof b->away, &b->away) == 0 && CPU_COUNT(&b->away) > 1) {
        cpus = CPU_COUNT(&b->away);
    } else {
        CPU_ZERO(&b->away);
        for (int c = 0; c < CPU_SETSIZE; c++)
            CPU_SET(c, &b->away);
    }
    int here = sched_getcpu();
    if (here >= 0 && here < CPU_SETSIZE)
        CPU_CLR(here, &b->away);
    int others = cpus > 1 ? (int)(cpus - 1) : 0;
    if (want > others)
        want = others;
    if (want > PROBE_MAX_BUSY)
        want = PROBE_MAX_BUSY;
    for (int i = 0; i < want; i++)
        if (ph_thread_start(&b->t[b->n], "ph-probe", spin, b) == 0)
            b->n++;
    uint64_t until = ph_now_ns() + PROBE_BUSY_WAIT_NS;
    while (atomic_load(&b->running) < b->n && ph_now_ns() < until)
        sched_yield();
}

static void busy_stop(probe_busy *b)
{
    atomic_store(&b->stop, 1);
    for (int i = 0; i < b->n; i++)
        pthread_join(b->t[i], NULL);
    b->n = 0;
}

static void discard(void *arg, const ph_sample *s, size_t n)
{
    (void)arg;
    (void)s;
    (void)n;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

double ph_source_probe_trap_ns(ph_source *src, size_t runs, size_t run_pages, int busy,
                               double *handler_ns, int *busy_ran)
{
    if (handler_ns)
        *handler_ns = 0;
    if (busy_ran)
        *busy_ran = 0;
    if (!src || runs == 0 || runs > PROBE_MAX_RUNS || run_pages == 0 || busy < 0)
        return -1;
    size_t bytes = runs * run_pages * PG;
    unsigned char *buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED)
        return -1;
    /* 4 KiB pages (what both mechanisms watch), resident */
    madvise(buf, bytes, MADV_NOHUGEPAGE);
    memset(buf, 1, bytes);
    double out = -1;
    if (src->ops->add_range(src, buf, bytes) != 0)
        goto unmap;
    ph_source_stats s0, s1;
    memset(&s0, 0, sizeof s0);
    memset(&s1, 0, sizeof s1);
    uint64_t dt[PROBE_MAX_RUNS];
    size_t n = 0;
    /* as inside a parallel region: with the region gate closed the
     * mprotect mechanism would not protect (the serial code's system
     * calls must not fail) and the userfaultfd one would not sample */
    ph_sampler_gate(1);
    /* one round untimed: the first trap of a thread sets up its ring and
     * signal stack, which later samples do not pay */
    if (src->ops->arm(src, 1) == 0) {
        for (size_t r = 0; r < runs; r++) {
            volatile unsigned char *p = buf + r * run_pages * PG;
            *p = (unsigned char)(*p + 1);
        }
        src->ops->disarm(src);
    }
    src->ops->drain(src, discard, NULL);
    src->ops->stats(src, &s0);
    probe_busy *b = busy > 0 ? malloc(sizeof *b) : NULL;
    if (b)
        busy_start(b, busy);
    /* the helpers spinning when the timing starts */
    int ran = b ? atomic_load(&b->running) : 0;
    if (src->ops->arm(src, 1) == 0) {
        /* the first page of every run: each touch is one trap */
        for (size_t r = 0; r < runs; r++) {
            volatile unsigned char *p = buf + r * run_pages * PG;
            uint64_t t0 = ph_now_ns();
            *p = (unsigned char)(*p + 1);
            dt[n++] = ph_now_ns() - t0;
        }
        src->ops->disarm(src);
    }
    if (b) {
        busy_stop(b);
        free(b);
    }
    ph_sampler_gate(0);
    src->ops->drain(src, discard, NULL);
    src->ops->stats(src, &s1);
    src->ops->remove_range(src, buf, bytes);
    /* traps seen: samples, and those the region gate counted as serial */
    uint64_t traps = (s1.samples - s0.samples) + (s1.serial - s0.serial);
    if (n == 0 || traps < n / 2)
        goto unmap; /* the touches did not trap: nothing measured */
    qsort(dt, n, sizeof dt[0], cmp_u64);
    /* a handler on the faulting thread is inside its wait: taken out.
     * One on another thread (userfaultfd) may end after the wait does
     * (the move back wakes the thread before the unregister): the whole
     * wait is the trap's, and the engine charges the handler on top */
    double mean = (double)(s1.handler_ns - s0.handler_ns) / (double)traps;
    double handler = src->ops->handler_elsewhere ? 0 : mean;
    if (handler_ns)
        *handler_ns = mean;
    if (busy_ran)
        *busy_ran = ran;
    out = (double)dt[n / 2] - handler;
    if (out < 0)
        out = 0;
unmap:
    munmap(buf, bytes);
    return out;
}
