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
 */
#include "sample/probe.h"

#include "base/clock.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define PG ((size_t)4096)
#define PROBE_MAX_RUNS 64

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

double ph_source_probe_trap_ns(ph_source *src, size_t runs, size_t run_pages,
                               double *handler_ns)
{
    if (handler_ns)
        *handler_ns = 0;
    if (!src || runs == 0 || runs > PROBE_MAX_RUNS || run_pages == 0)
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
    out = (double)dt[n / 2] - handler;
    if (out < 0)
        out = 0;
unmap:
    munmap(buf, bytes);
    return out;
}
