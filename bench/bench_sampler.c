/*
 * bench_sampler.c -- what one sample of the SIGSEGV sampler costs, against
 * the bare mechanism it is built on.
 *
 * pagehome:  arm a range of N pages in full-snapshot mode (one page per
 *            run), touch each page once (each touch traps: the handler
 *            finds the range, claims the run, records the sample into the
 *            thread's ring, mprotects the page back), drain the N samples.
 * bare:      mprotect(PROT_NONE) the same N pages, touch each page once
 *            with a minimal SIGSEGV handler that checks the address range
 *            and mprotects the page back to read-write.
 * Both are timed end to end (protect + touches + drain) and reported in
 * ns per sample; the ratio pagehome / bare is the sampler's overhead over
 * the kernel's fault round trip (goal <= 1.2).  Rounds alternate which
 * one runs first; the median ratio is the result.
 *
 * Usage: bench_sampler [--pages N] [--rounds R] [--sim] [--uffd]
 *   --sim  answer current_node() from the simulated machine instead of
 *          sched_getcpu() and the real topology.
 *   --uffd also time the userfaultfd mechanism the same way (pages moved
 *          out, each touch waits for the service thread) on its own
 *          pages, in the same rounds: the column uffd_ns and its median
 *          ratio to the mprotect mechanism's time per sample.
 */
#include "bench_common.h"

#include "base/clock.h"
#include "base/error.h"
#include "config/options.h"
#include "os/os.h"
#include "sample/source.h"
#include "topo/topo.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define PG ((size_t)4096)
#define MAX_ROUNDS 101

static unsigned char *map_faulted(size_t pages)
{
    void *p = mmap(NULL, pages * PG, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    memset(p, 1, pages * PG);
    return p;
}

static void touch_all(unsigned char *buf, size_t pages)
{
    for (size_t i = 0; i < pages; i++)
        ((volatile unsigned char *)buf)[i * PG] += 1;
}

/* ---- the bare mechanism ------------------------------------------------------ */

static uintptr_t bare_lo, bare_hi;

static void bare_handler(int sig, siginfo_t *si, void *ctx)
{
    (void)sig;
    (void)ctx;
    uintptr_t a = (uintptr_t)si->si_addr;
    if (a >= bare_lo && a < bare_hi) {
        mprotect((void *)(a & ~(uintptr_t)(PG - 1)), PG, PROT_READ | PROT_WRITE);
        return;
    }
    signal(SIGSEGV, SIG_DFL);
}

static double bare_ns_per_sample(unsigned char *buf, size_t pages)
{
    struct sigaction sa, saved;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = bare_handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &saved);
    bare_lo = (uintptr_t)buf;
    bare_hi = bare_lo + pages * PG;
    uint64_t t0 = ph_now_ns();
    mprotect(buf, pages * PG, PROT_NONE);
    touch_all(buf, pages);
    uint64_t t1 = ph_now_ns();
    sigaction(SIGSEGV, &saved, NULL);
    return (double)(t1 - t0) / (double)pages;
}

/* ---- pagehome ----------------------------------------------------------------- */

static void count_samples(void *arg, const ph_sample *s, size_t n)
{
    (void)s;
    *(size_t *)arg += n;
}

static double pagehome_ns_per_sample(ph_source *src, unsigned char *buf, size_t pages)
{
    size_t got = 0;
    uint64_t t0 = ph_now_ns();
    src->ops->arm(src, 1);
    touch_all(buf, pages);
    src->ops->drain(src, count_samples, &got);
    uint64_t t1 = ph_now_ns();
    src->ops->disarm(src);
    if (got != pages) {
        fprintf(stderr, "bench_sampler: %zu samples for %zu pages\n", got, pages);
        exit(1);
    }
    return (double)(t1 - t0) / (double)pages;
}

/* ---- driver -------------------------------------------------------------------- */

static void usage(void)
{
    fprintf(stderr, "usage: bench_sampler [--pages N] [--rounds R] [--sim] [--uffd]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    size_t pages = 16384, v;
    int rounds = 7, use_sim = 0, use_uffd = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--pages") && i + 1 < argc) {
            if (bench_parse_count(argv[++i], 1, (size_t)1 << 22, &pages) != 0)
                usage();
        } else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
            if (bench_parse_count(argv[++i], 1, MAX_ROUNDS, &v) != 0)
                usage();
            rounds = (int)v;
        } else if (!strcmp(argv[i], "--sim")) {
            use_sim = 1;
        } else if (!strcmp(argv[i], "--uffd")) {
            use_uffd = 1;
        } else {
            usage();
        }
    }

    ph_options_init();
    ph_topology *topo = use_sim ? ph_topo_from_spec("nodes=2,cpus_per_node=1")
                                : ph_topo_from_hwloc();
    ph_os *os = !topo ? NULL : use_sim ? ph_os_sim_open(topo) : ph_os_linux_open(topo);
    if (!os) {
        fprintf(stderr, "bench_sampler: cannot open the machine: %s\n", ph_error_message());
        return 1;
    }
    ph_sampler_opts o = {0, pages, 1, pages, 0, PH_SAMPLER_MPROTECT};
    ph_source *src = ph_sampler_open(os, &o);
    if (!src || ph_sampler_thread_init() != 0) {
        fprintf(stderr, "bench_sampler: %s\n", ph_error_message());
        return 1;
    }
    unsigned char *buf = map_faulted(pages), *bare_buf = map_faulted(pages);
    if (src->ops->add_range(src, buf, pages * PG) != 0) {
        fprintf(stderr, "bench_sampler: %s\n", ph_error_message());
        return 1;
    }
    ph_source *usrc = NULL;
    unsigned char *ubuf = NULL;
    if (use_uffd) {
        ph_sampler_opts uo = o;
        uo.mechanism = PH_SAMPLER_USERFAULTFD;
        ubuf = map_faulted(pages);
        if (!(usrc = ph_sampler_open(os, &uo)) ||
            usrc->ops->add_range(usrc, ubuf, pages * PG) != 0) {
            fprintf(stderr, "bench_sampler: userfaultfd: %s\n", ph_error_message());
            return 1;
        }
        pagehome_ns_per_sample(usrc, ubuf, pages);
    }
    pagehome_ns_per_sample(src, buf, pages); /* warm-up: page tables, rings */
    bare_ns_per_sample(bare_buf, pages);

    printf("bench_sampler: %zu pages, %d rounds, machine %s\n", pages, rounds,
           ph_os_name(os));
    printf("%5s %14s %14s %7s\n", "round", "pagehome_ns", "bare_ns", "ratio");
    double ratio[MAX_ROUNDS], ph_ns[MAX_ROUNDS], bare_ns[MAX_ROUNDS], u_ratio[MAX_ROUNDS];
    for (int r = 0; r < rounds; r++) {
        if (r % 2) {
            bare_ns[r] = bare_ns_per_sample(bare_buf, pages);
            ph_ns[r] = pagehome_ns_per_sample(src, buf, pages);
        } else {
            ph_ns[r] = pagehome_ns_per_sample(src, buf, pages);
            bare_ns[r] = bare_ns_per_sample(bare_buf, pages);
        }
        ratio[r] = ph_ns[r] / bare_ns[r];
        printf("%5d %14.1f %14.1f %7.3f", r, ph_ns[r], bare_ns[r], ratio[r]);
        if (usrc) {
            double u = pagehome_ns_per_sample(usrc, ubuf, pages);
            u_ratio[r] = u / ph_ns[r];
            printf("   uffd_ns %10.1f  uffd/mprotect %6.3f", u, u_ratio[r]);
        }
        printf("\n");
    }
    ph_source_stats st;
    src->ops->stats(src, &st);
    double mr = bench_median(ratio, rounds);
    printf("median: pagehome %.1f ns/sample, bare %.1f ns/sample, ratio %.3f (goal <= 1.2)\n",
           bench_median(ph_ns, rounds), bench_median(bare_ns, rounds), mr);
    printf("sampler: %.1f ns/sample inside the handler, %.1f ns/sample arming, %llu dropped\n",
           (double)st.handler_ns / (double)st.samples,
           (double)st.arm_ns / (double)st.samples, (unsigned long long)st.dropped);
    if (usrc) {
        printf("userfaultfd: median %.3f x the mprotect mechanism's time per sample\n",
               bench_median(u_ratio, rounds));
        usrc->ops->close(usrc);
        munmap(ubuf, pages * PG);
    }
    src->ops->close(src);
    munmap(buf, pages * PG);
    munmap(bare_buf, pages * PG);
    ph_os_close(os);
    ph_topo_free(topo);
    return 0;
}
