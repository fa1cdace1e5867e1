/*
 * test_probe.c -- the trap-cost probe (src/sample/probe.c) on the real
 * samplers: it measures something with each mechanism, leaves the source
 * as it found it (no range, no sample drained later), and says "nothing
 * measured" for a source that does not trap.  No timing is judged: the
 * figures are printed, bench_sampler is where costs are compared.
 */
#include "check.h"

#include "base/error.h"
#include "config/options.h"
#include "os/os.h"
#include "sample/probe.h"
#include "sample/source.h"
#include "topo/topo.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>

#define PG PH_PAGE_4K

static ph_os *sim;
static size_t delivered;

static void count(void *arg, const ph_sample *s, size_t n)
{
    (void)arg;
    (void)s;
    delivered += n;
}

/* the threads of this process now */
static int count_tasks(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static void probe_mechanism(int mech, const char *name)
{
    ph_sampler_opts o = {64, 4096, 1, 4096, 0, mech};
    ph_source *s = ph_sampler_open(sim, &o);
    if (!s) {
        printf("%s: not usable here (%s), skipped\n", name, ph_error_message());
        return;
    }
    CHECK_STR(s->ops->name, name);
    ph_sampler_note_node(0);
    double h1 = -1, h2 = -1, h3 = -1;
    int tasks = count_tasks();
    double first = ph_source_probe_trap_ns(s, 16, 1, 0, &h1, NULL);
    double again = ph_source_probe_trap_ns(s, 8, 4, 0, &h2, NULL); /* runs of 4 pages */
    /* with helpers busy on the other CPUs (as many as there are; more
     * asked for than CPUs are not started), joined before it returns */
    double busy = ph_source_probe_trap_ns(s, 16, 1, 1000, &h3, NULL);
    CHECK_EQ(count_tasks(), tasks);
    printf("%s: a trap costs %.0f ns, then %.0f ns, besides the handler's time "
           "(%.0f ns, then %.0f ns); with the other CPUs busy %.0f ns (handler %.0f ns)\n",
           name, first, again, h1, h2, busy, h3);
    CHECK(busy >= 0 && busy < 1e8);
    CHECK(h3 > 0 && h3 < 1e8);
    CHECK(ph_source_probe_trap_ns(s, 16, 1, -1, NULL, NULL) < 0); /* busy < 0 */
    /* a caller bound to one CPU, as OMP_PROC_BIND binds the master: the
     * helpers still spin, on the other CPUs (how many start in time is
     * the scheduler's; at least one where this process may use two) */
    cpu_set_t was, one;
    CHECK_EQ(pthread_getaffinity_np(pthread_self(), sizeof was, &was), 0);
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu(), &one);
    CHECK_EQ(pthread_setaffinity_np(pthread_self(), sizeof one, &one), 0);
    int ran = -1;
    double h4 = -1;
    double bound = ph_source_probe_trap_ns(s, 16, 1, 1000, &h4, &ran);
    CHECK(bound >= 0 && bound < 1e8);
    CHECK(ran >= (CPU_COUNT(&was) > 1 ? 1 : 0));
    CHECK(ran <= 63);
    CHECK_EQ(count_tasks(), tasks);
    CHECK_EQ(pthread_setaffinity_np(pthread_self(), sizeof was, &was), 0);
    printf("%s: bound to one CPU, beside %d busy threads: %.0f ns (handler %.0f ns)\n",
           name, ran, bound, h4);
    /* measured (not -1); 0 is a figure too: a SIGSEGV trap whose handler
     * took as long as the median touch.  The handler takes time (an
     * mprotect, or the service thread's move back). */
    CHECK(first >= 0 && first < 1e8);
    CHECK(again >= 0 && again < 1e8);
    CHECK(h1 > 0 && h1 < 1e8);
    CHECK(h2 > 0 && h2 < 1e8);
    /* the probe's samples are gone and its range with them: a range of
     * the program's, armed and touched, is all that the next drain gives */
    ph_source_stats st;
    s->ops->stats(s, &st);
    unsigned char *buf = mmap(NULL, 8 * PG, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(buf != MAP_FAILED);
    memset(buf, 3, 8 * PG);
    CHECK_EQ(s->ops->add_range(s, buf, 8 * PG), 0);
    CHECK_EQ(s->ops->arm(s, 1), 0);
    int bad = 0;
    for (int i = 0; i < 8; i++)
        bad += buf[(size_t)i * PG] != 3;
    CHECK_EQ(bad, 0);
    delivered = 0;
    CHECK_EQ(s->ops->drain(s, count, NULL), 8);
    CHECK_EQ(delivered, 8);
    /* and the probe's buffer went back (its pages no longer watched) */
    CHECK_EQ(s->ops->remove_range(s, buf, 8 * PG), 0);
    s->ops->close(s);
    munmap(buf, 8 * PG);
    /* bad arguments */
    double h = -1;
    CHECK(ph_source_probe_trap_ns(NULL, 16, 1, 0, &h, NULL) < 0);
    CHECK_EQ(h, 0);
}

static int zero_model(void *model, size_t range, size_t page, uint32_t *acc, int nnodes)
{
    (void)model;
    (void)range;
    (void)page;
    memset(acc, 0, (size_t)nnodes * sizeof *acc);
    return 0;
}

int main(void)
{
    ph_options_init();
    ph_topology *topo = ph_topo_from_spec("nodes=2,cpus_per_node=1");
    sim = topo ? ph_os_sim_open(topo) : NULL;
    if (!sim) {
        fprintf(stderr, "simulator: %s\n", ph_error_message());
        return 1;
    }
    probe_mechanism(PH_SAMPLER_MPROTECT, "sigsegv");
    probe_mechanism(PH_SAMPLER_USERFAULTFD, "userfaultfd");
    /* a source whose watching does not trap: nothing is measured */
    ph_source *syn = ph_synth_open(topo, zero_model, NULL, 0, 0, 1);
    CHECK(syn != NULL);
    CHECK(ph_source_probe_trap_ns(syn, 16, 1, 0, NULL, NULL) < 0);
    CHECK(ph_source_probe_trap_ns(syn, 0, 1, 0, NULL, NULL) < 0);
    CHECK(ph_source_probe_trap_ns(syn, 65, 1, 0, NULL, NULL) < 0);
    CHECK(ph_source_probe_trap_ns(syn, 16, 1, 4, NULL, NULL) < 0);
    syn->ops->close(syn);
    ph_os_close(sim);
    ph_topo_free(topo);
    return check_summary("test_probe");
}
