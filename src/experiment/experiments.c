/*
 * experiments.c -- what e1..e6 run (experiments.h), and the targets.
 *
 * The experiments are one table (`experiments[]`, at the end): name,
 * title, baseline, default machines and thread counts, how many programs
 * share a machine, and the runner.  The driver looks the name up, opens
 * and checks the machines, and calls the runner on each machine in turn
 * (e5 is e1's runner on two machines).
 *
 * Every run uses the presets' parameters and the tunables as they are
 * (their defaults unless the user set them: `pagehome --set NAME=VALUE
 * sim ...`); no engine gets parameters of its own, with two stated
 * exceptions that ARE the experiment: e3's n = 20 most critical pages
 * (critical_pages, as in WOMPAT 2000) next to the tunable's own value,
 * and e4's extra row "competitive, kept active" (stable_after = 0,
 * cold_after = 0), which separates the criterion from the engine's
 * deactivation.  Programs run their class A iteration counts unless
 * --iterations says otherwise.
 *
 * TARGETS (the issue's, checked under e1 and, per machine, e5):
 *   T1 worst-case placement (single-node) with pagehome iterative
 *      <= 1.05 x first-touch without migration, over the whole run;
 *   T2 the same <= 1.01 x over the last half of the iterations;
 *   T3 >= 90% of the eligible pages migrated (pagehome's migrated /
 *      candidates, every pagehome run that had candidates);
 *   T4 >= 90% of the migrations in the first 2 iterations (every
 *      pagehome run that migrated).
 * A target is met when every run it covers meets it; each line gives the
 * count, the mean and the worst run.  A target with nothing to measure
 * (no candidates, no migration) is not met.
 *
 * e4's two programs: program A's threads start on the first CPUs (compact
 * binding), program B's on the next ones; at a quarter of the iterations
 * the threads on the first half of A's nodes and those on the first half
 * of B's nodes swap nodes (a gang rescheduling that both programs keep),
 * each program's pages staying where they were.  Programs do not share
 * pages, and the cost model has no contention between programs, so each
 * program runs on its own simulated machine with its own engine.
 *
 * e6 (large pages): the two synthetic layouts of workload.c ("private
 * blocks", "finely shared"), single-node placement, pagehome iterative,
 * with the cost model's TLB term, each run three ways:
 *   4K          4 KiB pages (no THP);
 *   2M-nosplit  2 MiB pages, huge_split_share = 0 (units only move whole:
 *               the experiment's subject, like e3's n = 20);
 *   mixed       2 MiB pages, every tunable as it is (huge_split_share
 *               0.25 by default: shared units are split, private ones stay
 *               huge and move whole).
 * Times are normalised to the best of the three (per workload; the last
 * half to the best last half).  TARGET: mixed within 2% of the better of
 * the other two on both workloads (overall time).
 */
#include "experiment/experiments.h"

#include "experiment/workload.h"

#include "base/error.h"
#include "config/options.h"
#include "engine/engine.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- rows ------------------------------------------------------------ */

static void note(ph_exp_table *x, const char *fmt, ...) PH_PRINTF(2, 3);
static void note(ph_exp_table *x, const char *fmt, ...)
{
    if (x->nnotes == PH_EXP_MAX_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->notes[x->nnotes++], sizeof x->notes[0], fmt, ap);
    va_end(ap);
}

static ph_exp_target *target(ph_exp_table *x, int met, const char *what)
{
    if (x->ntargets == PH_EXP_MAX_TARGETS)
        return NULL;
    ph_exp_target *t = &x->targets[x->ntargets++];
    snprintf(t->what, sizeof t->what, "%s", what);
    t->met = met;
    t->detail[0] = '\0';
    return t;
}

static ph_exp_progress_fn progress_fn;

void ph_exp_set_progress(ph_exp_progress_fn fn)
{
    progress_fn = fn;
}

/* Run a cell and append it; baseline < 0: the row is its own. */
static long add_row(ph_exp_table *x, const ph_exp_cell *c, const char *group,
                    const char *label, long baseline)
{
    if (x->nrows == x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 32;
        ph_exp_row *r = realloc(x->rows, cap * sizeof *r);
        if (!r)
            return ph_fail(ENOMEM, "sim: out of memory");
        x->rows = r;
        x->cap = cap;
    }
    ph_exp_row *row = &x->rows[x->nrows];
    memset(row, 0, sizeof *row);
    row->cell = *c;
    snprintf(row->group, sizeof row->group, "%s", group ? group : "");
    snprintf(row->label, sizeof row->label, "%s",
             label ? label : ph_exp_engine_name(c->engine));
    if (ph_exp_run_cell(c, &row->res) != 0)
        return -1;
    long me = (long)x->nrows++;
    if (progress_fn)
        progress_fn(row->group, row->label, x->nrows);
    row->baseline = baseline < 0 ? me : baseline;
    const ph_exp_row *b = &x->rows[row->baseline];
    row->norm_total = b->res.total_ns > 0 ? row->res.total_ns / b->res.total_ns
                                          : 0;
    row->norm_last = b->res.last_half_ns > 0
                         ? row->res.last_half_ns / b->res.last_half_ns
                         : 0;
    return me;
}

/* ---- machines -------------------------------------------------------- */

typedef struct machine {
    const ph_exp_preset *p;
    ph_topology *t;
} machine;

static int open_machine(machine *m, const char *name)
{
    m->p = ph_exp_preset_find(name);
    if (!m->p) {
        char known[160] = "";
        for (size_t i = 0; ph_exp_preset_at(i); i++) {
            size_t l = strlen(known);
            snprintf(known + l, sizeof known - l, "%s%s", i ? ", " : "",
                     ph_exp_preset_at(i)->name);
        }
        return ph_fail(EINVAL, "sim: no machine preset '%s' (presets: %s)",
                       name, known);
    }
    m->t = ph_exp_preset_topology(m->p);
    return m->t ? 0 : -1;
}

static int check_threads(const machine *m, int threads, int programs)
{
    int cpus = ph_exp_cpus(m->t);
    if (threads < 1 || threads * programs > cpus)
        return ph_fail(EINVAL, "sim: --threads %d: %s has %d CPUs%s",
                       threads, m->p->name, cpus,
                       programs > 1 ? " for two programs" : "");
    return 0;
}

static void add_machine(ph_exp_table *x, const char *name)
{
    size_t l = strlen(x->machines);
    snprintf(x->machines + l, sizeof x->machines - l, "%s%s", l ? ", " : "",
             name);
}

static ph_exp_cell base_cell(const machine *m, int app, int T,
                             const ph_exp_opts *o)
{
    ph_exp_cell c;
    memset(&c, 0, sizeof c);
    c.preset = m->p;
    c.topo = m->t;
    c.app = app;
    c.nthreads = T;
    c.iterations = o->iterations;
    c.repeat = 1;
    c.critical_pages = -1;
    c.notes = 1;
    c.migrate_at = -1;
    c.criterion = PH_EXP_CRIT_TUNABLE;
    return c;
}

/* ---- targets of e1 / e5 ------------------------------------------------ */

static void agg(double v, double *sum, double *worst, int *n)
{
    *sum += v;
    if (*n == 0 || v > *worst)
        *worst = v;
    (*n)++;
}

/* The pagehome rows of e1/e5: their labels, the first the one the
 * issue's targets are stated for (the hybrid mechanism, which acts inside
 * the first iteration), then the iterative mechanism with each
 * criterion. */
static const char *const e1_pagehome[] = {"hybrid", "iter-amortised",
                                          "iter-competitive"};

static int is_label(const ph_exp_row *r, const char *label)
{
    return strcmp(r->label, label) == 0;
}

static void e1_targets(ph_exp_table *x, size_t first, const machine *m,
                       const char *label)
{
    double s1 = 0, w1 = 0, s2 = 0, w2 = 0, w3 = 2, w4 = 2;
    int n1 = 0, ok1 = 0, ok2 = 0, n3 = 0, ok3 = 0, n4 = 0, ok4 = 0, n2 = 0;
    const ph_exp_row *worst1 = NULL, *worst3 = NULL, *worst4 = NULL;
    uint64_t mig = 0, elig = 0, f2 = 0;
    for (size_t i = first; i < x->nrows; i++) {
        const ph_exp_row *r = &x->rows[i];
        if (r->cell.preset != m->p || !is_label(r, label))
            continue;
        if (r->cell.placement == PH_EXP_SINGLE_NODE) {
            if (!worst1 || r->norm_total > worst1->norm_total)
                worst1 = r;
            agg(r->norm_total, &s1, &w1, &n1);
            ok1 += r->norm_total <= 1.05;
            agg(r->norm_last, &s2, &w2, &n2);
            ok2 += r->norm_last <= 1.01;
        }
        mig += r->res.migrated;
        elig += r->res.eligible;
        f2 += r->res.first2;
        if (r->res.eligible > 0) {
            double v = (double)r->res.migrated / (double)r->res.eligible;
            if (!worst3 || v < w3) {
                w3 = v;
                worst3 = r;
            }
            n3++;
            ok3 += v >= 0.90;
        }
        if (r->res.migrated > 0) {
            double v = (double)r->res.first2 / (double)r->res.migrated;
            if (!worst4 || v < w4) {
                w4 = v;
                worst4 = r;
            }
            n4++;
            ok4 += v >= 0.90;
        }
    }
    char what[128];
    ph_exp_target *t;
    snprintf(what, sizeof what, "%s: single-node + pagehome %s <= 1.05x "
             "first-touch (overall)", m->p->name, label);
    t = target(x, n1 > 0 && ok1 == n1, what);
    if (t && n1)
        snprintf(t->detail, sizeof t->detail,
                 "%d of %d runs; mean %.3fx, worst %.3fx (%s, %d threads)",
                 ok1, n1, s1 / n1, w1, ph_exp_app_name(worst1->cell.app),
                 worst1->cell.nthreads);
    snprintf(what, sizeof what, "%s: single-node + pagehome %s <= 1.01x "
             "first-touch (last half)", m->p->name, label);
    t = target(x, n2 > 0 && ok2 == n2, what);
    if (t && n2)
        snprintf(t->detail, sizeof t->detail,
                 "%d of %d runs; mean %.3fx, worst %.3fx", ok2, n2, s2 / n2,
                 w2);
    snprintf(what, sizeof what, "%s: pagehome %s >= 90%% of eligible pages "
             "migrated", m->p->name, label);
    t = target(x, n3 > 0 && ok3 == n3, what);
    if (t) {
        if (n3)
            snprintf(t->detail, sizeof t->detail,
                     "%d of %d runs with candidates; %llu of %llu in all "
                     "(%.1f%%), worst %.1f%% (%s, %d threads, %s)",
                     ok3, n3, (unsigned long long)mig,
                     (unsigned long long)elig,
                     elig ? 100.0 * (double)mig / (double)elig : 0.0,
                     100 * w3, ph_exp_app_name(worst3->cell.app),
                     worst3->cell.nthreads,
                     ph_exp_placement_name(worst3->cell.placement));
        else
            snprintf(t->detail, sizeof t->detail,
                     "no pagehome run had a candidate page");
    }
    snprintf(what, sizeof what, "%s: pagehome %s >= 90%% of migrations in "
             "the first 2 iterations", m->p->name, label);
    t = target(x, n4 > 0 && ok4 == n4, what);
    if (t) {
        if (n4)
            snprintf(t->detail, sizeof t->detail,
                     "%d of %d runs that migrated; %llu of %llu in all "
                     "(%.1f%%), worst %.1f%% (%s, %d threads, %s)",
                     ok4, n4, (unsigned long long)f2,
                     (unsigned long long)mig,
                     mig ? 100.0 * (double)f2 / (double)mig : 0.0, 100 * w4,
                     ph_exp_app_name(worst4->cell.app),
                     worst4->cell.nthreads,
                     ph_exp_placement_name(worst4->cell.placement));
        else
            snprintf(t->detail, sizeof t->detail,
                     "pagehome migrated no page on %s", m->p->name);
    }
    /* why, in numbers: every single-node run that missed T1 or T2 */
    for (size_t i = first; i < x->nrows; i++) {
        const ph_exp_row *r = &x->rows[i];
        if (r->cell.preset != m->p || !is_label(r, label) ||
            r->cell.placement != PH_EXP_SINGLE_NODE ||
            (r->norm_total <= 1.05 && r->norm_last <= 1.01))
            continue;
        const ph_exp_row *off = NULL, *ft = NULL;
        for (size_t j = first; j < x->nrows; j++)
            if (x->rows[j].cell.preset == m->p &&
                x->rows[j].cell.app == r->cell.app &&
                x->rows[j].cell.nthreads == r->cell.nthreads &&
                x->rows[j].cell.engine == PH_EXP_ENG_OFF) {
                if (x->rows[j].cell.placement == PH_EXP_SINGLE_NODE)
                    off = &x->rows[j];
                if (x->rows[j].cell.placement == PH_EXP_FIRST_TOUCH)
                    ft = &x->rows[j];
            }
        const ph_exp_result *s = &r->res;
        int I = s->iterations;
        double it_ft = ft && I ? ft->res.total_ns / I : 0;
        double S = off ? off->norm_total : 0;
        int competitive = r->cell.criterion == PH_EXP_CRIT_COMPETITIVE;
        if (s->migrated < s->misplaced / 2 && competitive) {
            note(x, "%s, %s %d threads, %s: %llu pages moved of %zu misplaced "
                 "(most accesses from another node than their home); with "
                 "one iteration's exact counts %zu of them pass eq. 1: the "
                 "median misplaced page accumulates %.1f us of remote "
                 "latency per iteration (racc x rc), against the cost of one "
                 "migration ml = %.1f us added to the local side: one "
                 "move costs as much as %.0f iterations of that remote "
                 "latency, so one iteration's counts do not justify it",
                 m->p->name, ph_exp_app_name(r->cell.app),
                 r->cell.nthreads, label, (unsigned long long)s->migrated,
                 s->misplaced, s->qualify, s->median_gain_ns / 1e3,
                 s->ml_ns / 1e3,
                 s->median_gain_ns > 0 ? ceil(s->ml_ns / s->median_gain_ns)
                                       : 0.0);
        } else if (r->cell.engine == PH_EXP_ENG_ITERATIVE &&
                   s->migrate_ns < 0.5 * it_ft) {
            note(x, "%s, %s %d threads, %s: %.3fx overall, %.3fx last half; "
                 "the first iteration runs on the initial placement (the "
                 "engine learns from it), so with a single-node slowdown "
                 "of %.2fx over %d iterations the overall ratio is about "
                 "1 + (S - 1) / I = %.3fx (no less if the later iterations "
                 "ran at first-touch's speed); %llu pages moved, %.3f s "
                 "of migration (%.1f iterations' time)",
                 m->p->name, ph_exp_app_name(r->cell.app),
                 r->cell.nthreads, label, r->norm_total, r->norm_last, S, I,
                 I ? 1 + (S - 1) / I : 0.0, (unsigned long long)s->migrated,
                 s->migrate_ns / 1e9,
                 it_ft > 0 ? s->migrate_ns / it_ft : 0.0);
        } else {
            char took[160] = "";
            if (s->lanes > 1) {
                int cpus = ph_exp_cpus(m->t);
                int idle = cpus > r->cell.nthreads ? cpus - r->cell.nthreads : 0;
                if (s->lanes_loss_ns > 0)
                    snprintf(took, sizeof took,
                             "; with %d of %d CPUs idle, the lanes took %.1f ms "
                             "from the program's threads (on the critical path)",
                             idle, cpus, s->lanes_loss_ns / 1e6);
                else
                    snprintf(took, sizeof took, "; the lanes ran on the %d idle CPUs",
                             idle);
            }
            char by[48] = "by the memory manager alone";
            if (s->lanes > 1)
                snprintf(by, sizeof by, "in up to %d lanes side by side", s->lanes);
            note(x, "%s, %s %d threads, %s: %.3fx overall, %.3fx last half; "
                 "%llu pages moved (%llu decided in the first iteration), "
                 "%.3f s of migration work, done %s in %.3f s (%.1f "
                 "iterations' time at first touch, %.1f ms each, %d "
                 "iterations), while the pages not yet moved are used at "
                 "their old home (single-node slowdown %.2fx)%s",
                 m->p->name, ph_exp_app_name(r->cell.app),
                 r->cell.nthreads, label, r->norm_total, r->norm_last,
                 (unsigned long long)s->migrated,
                 (unsigned long long)(I ? s->iter_moves[0] : 0),
                 s->migrate_ns / 1e9, by, s->manager_ns / 1e9,
                 it_ft > 0 ? s->manager_ns / it_ft : 0.0, it_ft / 1e6, I, S, took);
        }
    }
}

/* ---- the experiments --------------------------------------------------- */

/* e1/e5's engines: UPMlib's iterative mechanism with each criterion,
 * and the hybrid mechanism with the tunable one (the default). */
static const struct {
    int engine, criterion;
    const char *label;
} e1_engines[] = {
    {PH_EXP_ENG_OFF, PH_EXP_CRIT_TUNABLE, "off"},
    {PH_EXP_ENG_IRIX, PH_EXP_CRIT_TUNABLE, "IRIX-like"},
    {PH_EXP_ENG_ITERATIVE, PH_EXP_CRIT_COMPETITIVE, "iter-competitive"},
    {PH_EXP_ENG_ITERATIVE, PH_EXP_CRIT_AMORTISED, "iter-amortised"},
    {PH_EXP_ENG_HYBRID, PH_EXP_CRIT_TUNABLE, "hybrid"},
};
#define E1_NENGINES (int)(sizeof e1_engines / sizeof e1_engines[0])
static const int placements[] = {PH_EXP_FIRST_TOUCH, PH_EXP_ROUND_ROBIN,
                                  PH_EXP_SINGLE_NODE};

static int run_e1(ph_exp_table *x, const machine *m, const ph_exp_opts *o,
                  const int *threads, int nt)
{
    size_t first = x->nrows;
    for (int app = PH_EXP_BT; app <= PH_EXP_CG; app++)
        for (int k = 0; k < nt; k++) {
            long base = -1;
            for (int pl = 0; pl < 3; pl++)
                for (int en = 0; en < E1_NENGINES; en++) {
                    ph_exp_cell c = base_cell(m, app, threads[k], o);
                    c.placement = placements[pl];
                    c.engine = e1_engines[en].engine;
                    c.criterion = e1_engines[en].criterion;
                    long r = add_row(x, &c, m->p->name, e1_engines[en].label,
                                     base);
                    if (r < 0)
                        return -1;
                    if (base < 0)
                        base = r;
                }
        }
    for (size_t k = 0; k < sizeof e1_pagehome / sizeof e1_pagehome[0]; k++)
        e1_targets(x, first, m, e1_pagehome[k]);
    /* the run-length calibration of this machine's programs */
    char cal[700] = "";
    for (size_t i = first; i < x->nrows; i++) {
        const ph_exp_row *r = &x->rows[i];
        if (r->cell.engine != PH_EXP_ENG_OFF ||
            r->cell.placement != PH_EXP_FIRST_TOUCH ||
            !(r->res.compute_per_iter_ns > 0) || !r->res.iterations)
            continue;
        size_t l = strlen(cal);
        snprintf(cal + l, sizeof cal - l, "%s%s %d thr: accesses x %.1f, "
                 "%.0f of %.0f ms an iteration computing",
                 l ? "; " : "", ph_exp_app_name(r->cell.app),
                 r->cell.nthreads, r->res.mem_scale,
                 r->res.compute_per_iter_ns / 1e6,
                 r->res.total_ns / r->res.iterations / 1e6);
    }
    if (cal[0])
        note(x, "%s, run length calibrated to the real machine "
             "(doc/sim-model.md): %s", m->p->name, cal);
    return 0;
}

static int run_e2(ph_exp_table *x, const machine *m, const ph_exp_opts *o,
                  const int *threads, int nt)
{
    static const int engines[] = {PH_EXP_ENG_OFF, PH_EXP_ENG_ITERATIVE,
                                  PH_EXP_ENG_ITER_SAMPLED,
                                  PH_EXP_ENG_SAMPLING};
    static const int apps[] = {PH_EXP_BT, PH_EXP_CG};
    int T = threads[0];
    (void)nt;
    for (int a = 0; a < 2; a++) {
        long base = -1;
        for (int pl = 0; pl < 3; pl++)
            for (int en = 0; en < 4; en++) {
                ph_exp_cell c = base_cell(m, apps[a], T, o);
                c.placement = placements[pl];
                c.engine = engines[en];
                long r = add_row(x, &c, m->p->name, NULL, base);
                if (r < 0)
                    return -1;
                if (base < 0)
                    base = r;
            }
    }
    note(x, "iterative: exact counts of every page (UPMlib's counters); "
         "iterative-sampled and sampling: the sampler's view, %lld pages "
         "watched per interval, each access seen with probability 1/%lld "
         "(sample_pages, sample_weight); sampling wakes every %lld ms of "
         "modelled time and moves at most %lld pages (sample_period_ms, "
         "sample_max_moves)",
         (long long)ph_opt_int(PH_OPT_SAMPLE_PAGES),
         (long long)ph_opt_int(PH_OPT_SAMPLE_WEIGHT),
         (long long)ph_opt_int(PH_OPT_SAMPLE_PERIOD_MS),
         (long long)ph_opt_int(PH_OPT_SAMPLE_MAX_MOVES));
    double period_ns = (double)ph_opt_int(PH_OPT_SAMPLE_PERIOD_MS) * 1e6;
    for (size_t i = 0; i < x->nrows; i++) {
        const ph_exp_row *r = &x->rows[i];
        if (r->cell.engine != PH_EXP_ENG_OFF ||
            r->cell.placement != PH_EXP_FIRST_TOUCH || !r->res.iterations)
            continue;
        double it_ns = r->res.total_ns / r->res.iterations;
        note(x, "%s: an iteration takes %.1f ms at first touch, so one "
             "sampling window holds %.1f iterations' accesses (the "
             "iterative mechanism's: 1)", ph_exp_app_name(r->cell.app),
             it_ns / 1e6, period_ns / it_ns);
    }
    for (size_t i = 0; i < x->nrows; i++) {
        const ph_exp_row *r = &x->rows[i];
        if (r->res.melted == 0 || r->res.frozen <= r->res.migrated)
            continue;
        note(x, "%s, %s, %s: %llu migrations, %llu freezes, %llu melts: "
             "with an access seen with probability 1/%lld, a page gets a few "
             "samples per interval and some pages are sent to a node that "
             "only reads them; the move back is a move to the "
             "previous home, which ping-pong prevention freezes, and a page "
             "that melts keeps its previous home and freezes again on the "
             "same move, so it never returns",
             ph_exp_app_name(r->cell.app),
             ph_exp_placement_name(r->cell.placement), r->label,
             (unsigned long long)r->res.migrated,
             (unsigned long long)r->res.frozen,
             (unsigned long long)r->res.melted,
             (long long)ph_opt_int(PH_OPT_SAMPLE_WEIGHT));
        break;
    }
    return 0;
}

static int run_e3(ph_exp_table *x, const machine *m, const ph_exp_opts *o,
                  const int *threads, int nt)
{
    int T = threads[0];
    (void)nt;
    long tun = (long)ph_opt_int(PH_OPT_CRITICAL_PAGES);
    char dflt_r[48], dflt_h[48];
    snprintf(dflt_r, sizeof dflt_r, "replay n=%s", tun ? "" : "all");
    snprintf(dflt_h, sizeof dflt_h, "hybrid n=%s", tun ? "" : "all");
    if (tun) {
        snprintf(dflt_r, sizeof dflt_r, "replay n=%ld", tun);
        snprintf(dflt_h, sizeof dflt_h, "hybrid n=%ld", tun);
    }
    const struct {
        int engine;
        long critical;
        const char *label;
    } rows[] = {
        {PH_EXP_ENG_OFF, -1, "off"},
        {PH_EXP_ENG_IRIX, -1, "IRIX-like"},
        {PH_EXP_ENG_ITERATIVE, -1, "iterative"},
        {PH_EXP_ENG_REPLAY, 20, "replay n=20"},
        {PH_EXP_ENG_HYBRID, 20, "hybrid n=20"},
        {PH_EXP_ENG_REPLAY, -1, dflt_r},
        {PH_EXP_ENG_HYBRID, -1, dflt_h},
    };
    for (unsigned rep = 1; rep <= 4; rep += 3) {
        long base = -1;
        char group[48];
        snprintf(group, sizeof group, "%ux phases", rep);
        for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
            ph_exp_cell c = base_cell(m, PH_EXP_BT, T, o);
            c.placement = PH_EXP_FIRST_TOUCH;
            c.engine = rows[k].engine;
            c.critical_pages = rows[k].critical;
            c.repeat = rep;
            long r = add_row(x, &c, group, rows[k].label, base);
            if (r < 0)
                return -1;
            if (base < 0)
                base = r;
        }
    }
    note(x, "replay and undo run on the program's thread before and after "
         "the z phase: their migrations are on the critical path; "
         "4x phases: x, y, z and add do four times the work per iteration, "
         "compute_rhs once (WOMPAT 2000, Fig. 6)");
    for (size_t i = 0; i < x->nrows; i++)
        if (x->rows[i].cell.engine == PH_EXP_ENG_REPLAY &&
            x->rows[i].res.phase_pages == 0) {
            const ph_exp_row *r = &x->rows[i];
            if (ph_opt_int(PH_OPT_CRITERION) == PH_CRITERION_COMPETITIVE)
                note(x, "the recording selected no page: in the z phase the "
                     "largest remote latency of any page is %.1f us (%ux "
                     "phases, racc x rc), below the migration cost ml = "
                     "%.1f us that eq. 1 adds to the local side",
                     r->res.z_max_gain_ns / 1e3, r->cell.repeat,
                     r->res.ml_ns / 1e3);
            else
                note(x, "the recording selected no page (%ux phases): the "
                     "amortised criterion moves a page for a phase only "
                     "when one occurrence saves more than its move there "
                     "and back costs while the %d threads wait (2 x ml x "
                     "threads = %.1f us a page, and each node's batch its "
                     "calls); the largest remote latency of any page in "
                     "the z phase is %.1f us (racc x rc); --set "
                     "criterion=competitive weighs one move (ml = %.1f us) "
                     "as eq. 1 does",
                     r->cell.repeat, r->cell.nthreads,
                     2.0 * r->res.ml_ns * r->cell.nthreads / 1e3,
                     r->res.z_max_gain_ns / 1e3, r->res.ml_ns / 1e3);
            break;
        }
    return 0;
}

/* e4: swap the threads on the first half of A's nodes with those on the
 * first half of B's nodes. */
static void swap_nodes(const int *a, const int *b, int T, int *a_after,
                       int *b_after)
{
    int na = 0, nb = 0, la[PH_MAX_NODES], lb[PH_MAX_NODES];
    for (int t = 0; t < T; t++) {
        if (na == 0 || la[na - 1] != a[t])
            la[na++] = a[t];
        if (nb == 0 || lb[nb - 1] != b[t])
            lb[nb++] = b[t];
    }
    int half = (na < nb ? na : nb) / 2;
    for (int t = 0; t < T; t++) {
        a_after[t] = a[t];
        b_after[t] = b[t];
        for (int k = 0; k < half; k++) {
            if (a[t] == la[k])
                a_after[t] = lb[k];
            if (b[t] == lb[k])
                b_after[t] = la[k];
        }
    }
}

static int run_e4(ph_exp_table *x, const machine *m0, const ph_exp_opts *o,
                  const int *threads, int nt)
{
    int T = threads[0];
    (void)nt;
    /* two programs split the CPUs: compact binding for both */
    static ph_exp_preset compact;
    compact = *m0->p;
    compact.binding = PH_EXP_BIND_COMPACT;
    machine m = {&compact, m0->t};
    int *a = malloc(4 * (size_t)T * sizeof *a);
    if (!a)
        return ph_fail(ENOMEM, "sim: out of memory");
    int *b = a + T, *a_after = a + 2 * T, *b_after = a + 3 * T;
    if (ph_exp_bind_threads(&compact, m.t, T, 0, a) != 0 ||
        ph_exp_bind_threads(&compact, m.t, T, T, b) != 0) {
        free(a);
        return -1;
    }
    swap_nodes(a, b, T, a_after, b_after);
    const int wl[3][2] = {{PH_EXP_BT, PH_EXP_BT},
                          {PH_EXP_SP, PH_EXP_SP},
                          {PH_EXP_BT, PH_EXP_SP}};
    const struct {
        int engine, notes, keep;
        const char *label;
    } rows[] = {
        {PH_EXP_ENG_OFF, 0, 0, "off"},
        {PH_EXP_ENG_IRIX, 0, 0, "IRIX-like"},
        {PH_EXP_ENG_ITERATIVE, 0, 0, "competitive only"},
        {PH_EXP_ENG_ITERATIVE, 0, 1, "competitive, kept active"},
        {PH_EXP_ENG_ITERATIVE, 1, 0, "predictive"},
    };
    int rc = 0;
    for (int w = 0; w < 3 && rc == 0; w++)
        for (int prog = 0; prog < 2 && rc == 0; prog++) {
            char group[48];
            snprintf(group, sizeof group, "wl-%d %s+%s, %c: %s", w + 1,
                     ph_exp_app_name(wl[w][0]), ph_exp_app_name(wl[w][1]),
                     'A' + prog, ph_exp_app_name(wl[w][prog]));
            long base = -1;
            for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
                ph_exp_cell c = base_cell(&m, wl[w][prog], T, o);
                c.placement = PH_EXP_FIRST_TOUCH;
                c.engine = rows[k].engine;
                c.notes = rows[k].notes;
                c.keep_active = rows[k].keep;
                /* 003's Fig. 4 compares UPMlib's criteria: eq. 1 alone
                 * with eq. 3 after thread migrations */
                c.criterion = PH_EXP_CRIT_COMPETITIVE;
                c.first_cpu = prog ? T : 0;
                int iters = o->iterations > 0
                                ? o->iterations
                                : ph_exp_app_iterations(wl[w][prog]);
                c.migrate_at = iters / 4;
                c.nodes_after = prog ? b_after : a_after;
                long r = add_row(x, &c, group, rows[k].label, base);
                if (r < 0) {
                    rc = -1;
                    break;
                }
                if (base < 0)
                    base = r;
            }
        }
    if (rc == 0) {
        int moved = 0;
        for (int t = 0; t < T; t++)
            moved += a_after[t] != a[t];
        note(x, "program A: %d threads from CPU 0 (nodes %d-%d), program B: "
             "%d threads from CPU %d (nodes %d-%d); at a quarter of the "
             "iterations %d threads of each program swap nodes with the "
             "other's and stay there; first-touch placement",
             T, m.t->nodes[a[0]].id, m.t->nodes[a[T - 1]].id, T, T,
             m.t->nodes[b[0]].id, m.t->nodes[b[T - 1]].id, moved);
        /* pages whose owner moved: what the predictive criterion should
         * move (first-touch: a page's home is its first toucher's node) */
        for (int w = 0; w < 2; w++) {
            ph_exp_app app;
            if (ph_exp_app_build(&app, w ? PH_EXP_SP : PH_EXP_BT, T,
                                 compact.line_bytes, 1) != 0)
                continue;
            size_t own = 0;
            for (size_t p = 0; p < app.npages; p++)
                own += a_after[app.first_toucher[p]] !=
                       a[app.first_toucher[p]];
            uint64_t pred = 0, frozen = 0;
            for (size_t i = 0; i < x->nrows; i++)
                if (x->rows[i].cell.app == app.kind &&
                    x->rows[i].cell.notes &&
                    x->rows[i].res.after_migrate > pred) {
                    pred = x->rows[i].res.after_migrate;
                    frozen = x->rows[i].res.frozen;
                }
            char why[640] = "";
            if (pred != own)
                snprintf(why, sizeof why,
                         ": the first interval after the trigger starts "
                         "mid-iteration (the engine arms when a thread is "
                         "seen on its new node at the second region "
                         "boundary) and is compared with the last full "
                         "one, so pages the moved threads touch only "
                         "before that point (f, read by compute_rhs alone) "
                         "show no new accesses and are left to the "
                         "competitive criterion, while pages they "
                         "only read later (other threads' z-phase rows) "
                         "look like theirs and follow them%s",
                         frozen ? "; the competitive criterion then wants "
                                  "those back, and ping-pong prevention "
                                  "freezes them" : "");
            note(x, "%s: %zu pages belong to the moved threads; the "
                 "predictive runs moved up to %llu after the swap%s",
                 app.name, own, (unsigned long long)pred, why);
            ph_exp_app_free(&app);
        }
        note(x, "competitive only: the engine is not told where threads "
             "run (no thread notes), as with a runtime without OMPT; "
             "predictive: thread notes at every parallel-region boundary");
    }
    free(a);
    return rc;
}

/* e6: three page policies on two layouts (see the top of this file). */
static int run_e6(ph_exp_table *x, const machine *m, const ph_exp_opts *o,
                  const int *threads, int nt)
{
    int T = threads[0];
    (void)nt;
    static const struct {
        int huge, no_split;
        const char *label;
    } pol[3] = {{0, 0, "4K"}, {1, 1, "2M-nosplit"}, {1, 0, "mixed"}};
    static const int wl[2] = {PH_EXP_PRIVATE, PH_EXP_SHARED};
    double gap[2] = {0, 0};
    char what[128], detail[2][190];
    for (int w = 0; w < 2; w++) {
        size_t first = x->nrows;
        for (int k = 0; k < 3; k++) {
            ph_exp_cell c = base_cell(m, wl[w], T, o);
            c.placement = PH_EXP_SINGLE_NODE;
            c.engine = PH_EXP_ENG_ITERATIVE;
            c.huge = pol[k].huge;
            c.no_split = pol[k].no_split;
            c.tlb = 1;
            if (add_row(x, &c, ph_exp_app_name(wl[w]), pol[k].label, -1) < 0)
                return -1;
        }
        ph_exp_row *r = &x->rows[first];
        size_t best = 0, best_last = 0;
        for (size_t k = 1; k < 3; k++) {
            if (r[k].res.total_ns < r[best].res.total_ns)
                best = k;
            if (r[k].res.last_half_ns < r[best_last].res.last_half_ns)
                best_last = k;
        }
        for (size_t k = 0; k < 3; k++) {
            r[k].baseline = (long)(first + best);
            r[k].norm_total = r[best].res.total_ns > 0
                                  ? r[k].res.total_ns / r[best].res.total_ns
                                  : 0;
            r[k].norm_last = r[best_last].res.last_half_ns > 0
                                 ? r[k].res.last_half_ns /
                                       r[best_last].res.last_half_ns
                                 : 0;
        }
        char win[96] = "";
        for (size_t k = 0; k < 3; k++)
            if (r[k].res.total_ns <= r[best].res.total_ns * (1 + 1e-9)) {
                size_t l = strlen(win);
                snprintf(win + l, sizeof win - l, "%s%s", l ? " = " : "",
                         pol[k].label);
            }
        /* the better of 4K and 2M-nosplit */
        size_t other = r[0].res.total_ns <= r[1].res.total_ns ? 0 : 1;
        gap[w] = r[other].res.total_ns > 0
                     ? r[2].res.total_ns / r[other].res.total_ns
                     : 0;
        note(x, "%s: wins %s (time/best 4K %.3f, 2M-nosplit %.3f, mixed "
             "%.3f; last half %.3f, %.3f, %.3f); TLB misses per access 4K "
             "%.1f%%, 2M-nosplit %.1f%%, mixed %.1f%%; remote share %.1f%%, "
             "%.1f%%, %.1f%%",
             ph_exp_app_name(wl[w]), win, r[0].norm_total, r[1].norm_total,
             r[2].norm_total, r[0].norm_last, r[1].norm_last,
             r[2].norm_last,
             100 * (r[0].res.accesses > 0
                        ? r[0].res.tlb_misses / r[0].res.accesses : 0),
             100 * (r[1].res.accesses > 0
                        ? r[1].res.tlb_misses / r[1].res.accesses : 0),
             100 * (r[2].res.accesses > 0
                        ? r[2].res.tlb_misses / r[2].res.accesses : 0),
             100 * r[0].res.remote_share, 100 * r[1].res.remote_share,
             100 * r[2].res.remote_share);
        snprintf(detail[w], sizeof detail[w],
                 "%s: mixed %.3fx of %s (%.3f s vs %.3f s)",
                 ph_exp_app_name(wl[w]), gap[w], pol[other].label,
                 r[2].res.total_ns / 1e9, r[other].res.total_ns / 1e9);
    }
    snprintf(what, sizeof what, "%s: mixed within 2%% of the better of 4K "
             "and 2M-nosplit on both workloads", m->p->name);
    ph_exp_target *t = target(x, gap[0] > 0 && gap[0] <= 1.02 &&
                                      gap[1] > 0 && gap[1] <= 1.02,
                               what);
    if (t)
        snprintf(t->detail, sizeof t->detail, "%s; %s", detail[0],
                 detail[1]);
    note(x, "every thread owns %zu MiB (%zu pages of 4 KiB, %zu units of "
         "2 MiB); a thread's TLB holds %.0f 4 KiB and %.0f 2 MiB "
         "translations, a miss costs %.0f ns (%s preset; doc/sim-model.md): "
         "a gather over W pages with E entries misses on max(0, 1 - E/W) "
         "of its page switches",
         PH_EXP_E6_THREAD_BYTES >> 20, PH_EXP_E6_THREAD_BYTES / 4096,
         PH_EXP_E6_THREAD_BYTES / ((size_t)2 << 20), m->p->tlb_entries_4k,
         m->p->tlb_entries_2m, m->p->tlb_walk_ns, m->p->name);
    note(x, "single-node placement (every page on the partition's last "
         "node), pagehome iterative, exact counts; 2M-nosplit is the only "
         "run with a tunable changed (huge_split_share = 0: the experiment's "
         "subject); a split or collapse costs nothing in the model, the "
         "moves that follow it are charged as usual");
    return 0;
}

/* ---- the table of experiments -------------------------------------------- */

/* Runs an experiment on one machine with the thread counts it is given
 * (the table's defaults, or --threads), already checked against the
 * machine; a runner with one thread count uses threads[0]. */
typedef int (*exp_runner)(ph_exp_table *x, const machine *m, const ph_exp_opts *o,
                          const int *threads, int nthreads);

typedef struct experiment {
    const char *name;
    const char *title;       /* the table's heading */
    const char *baseline;    /* what its times are normalised to */
    const char *machines[2]; /* the presets it runs on, in turn, unless --machine */
    int threads[2];          /* its thread counts unless --threads (0: none) */
    int programs;            /* programs sharing a machine (their threads add up) */
    exp_runner run;
} experiment;

static const experiment experiments[] = {
    {"e1", "e1: placements x engines, BT/SP/CG-like (003 Fig. 2, Table 1)",
     "first-touch, off (same program and threads)", {"origin2000-16", NULL}, {16, 32}, 1,
     run_e1},
    {"e2",
     "e2: sampling vs iterative, long (BT-like) and short (CG-like) runs (WOMPAT 2000 "
     "Fig. 4)",
     "first-touch, off (same program)", {"origin2000-16", NULL}, {16, 0}, 1, run_e2},
    {"e3",
     "e3: record/replay of the BT-like z phase, n = 20 most critical pages (WOMPAT 2000 "
     "Fig. 5, 6)",
     "first-touch, off (same phase length)", {"origin2000-16", NULL}, {16, 0}, 1, run_e3},
    {"e4",
     "e4: two programs sharing the machine, threads migrated: predictive vs competitive "
     "only (003 Fig. 4)",
     "the same program, off", {"origin2000-16", NULL}, {16, 0}, 2, run_e4},
    {"e5", "e5: e1 on today's machines",
     "first-touch, off (same machine, program and threads)", {"epyc-2s-8n", "cxl-2tier"},
     {16, 32}, 1, run_e1},
    {"e6",
     "e6: large pages: 4 KiB, 2 MiB without splitting, and mixed (split when shared), "
     "with a TLB model (seed 001)",
     "the best of the three (same workload)", {"epyc-2s-8n", NULL}, {16, 0}, 1, run_e6},
};

#define NEXPERIMENTS (sizeof experiments / sizeof experiments[0])

static const experiment *find_experiment(const char *name)
{
    for (size_t i = 0; name && i < NEXPERIMENTS; i++)
        if (strcmp(name, experiments[i].name) == 0)
            return &experiments[i];
    return NULL;
}

int ph_exp_is_experiment(const char *name)
{
    return find_experiment(name) != NULL;
}

/* The thread counts of a run of e: --threads, or the table's. */
static int thread_counts(const experiment *e, const ph_exp_opts *o, int threads[2])
{
    if (o->threads > 0) {
        threads[0] = o->threads;
        return 1;
    }
    threads[0] = e->threads[0];
    threads[1] = e->threads[1];
    return threads[1] > 0 ? 2 : 1;
}

/* The experiment of a name and its machines, opened and checked against
 * the options (EINVAL: a usage error). */
static int machines(const char *name, const ph_exp_opts *o, const experiment **ep,
                    machine ms[2])
{
    ms[0] = ms[1] = (machine){NULL, NULL};
    const experiment *e = find_experiment(name);
    if (!e) {
        char known[64] = "";
        for (size_t i = 0; i < NEXPERIMENTS; i++) {
            size_t l = strlen(known);
            snprintf(known + l, sizeof known - l, "%s%s", i ? ", " : "",
                     experiments[i].name);
        }
        return ph_fail(EINVAL, "sim: no experiment '%s' (%s)", name ? name : "", known);
    }
    if (o->iterations < 0 || o->iterations > 100000 ||
        (o->iterations > 0 && o->iterations < 2))
        return ph_fail(EINVAL, "sim: --iterations %d: must be 2..100000",
                       o->iterations);
    if (o->threads < 0)
        return ph_fail(EINVAL, "sim: --threads %d: must be positive",
                       o->threads);
    const char *list[2] = {e->machines[0], e->machines[1]};
    if (o->machine) {
        list[0] = o->machine;
        list[1] = NULL;
    }
    int rc = 0;
    for (int i = 0; i < 2 && list[i] && rc == 0; i++)
        rc = open_machine(&ms[i], list[i]);
    if (rc == 0 && o->threads > 0)
        for (int i = 0; i < 2 && ms[i].t && rc == 0; i++)
            rc = check_threads(&ms[i], o->threads, e->programs);
    if (rc != 0) {
        int err = errno;
        ph_topo_free(ms[0].t);
        ph_topo_free(ms[1].t);
        ms[0] = ms[1] = (machine){NULL, NULL};
        errno = err;
    }
    *ep = e;
    return rc;
}

int ph_exp_check(const char *name, const ph_exp_opts *o)
{
    ph_exp_opts none = {NULL, 0, 0};
    const experiment *e;
    machine ms[2];
    if (machines(name, o ? o : &none, &e, ms) != 0)
        return -1;
    ph_topo_free(ms[0].t);
    ph_topo_free(ms[1].t);
    return 0;
}

/* Runs e on machine m: its thread counts checked, the machine named. */
static int run_on(ph_exp_table *x, const experiment *e, const machine *m,
                  const ph_exp_opts *o)
{
    int threads[2], nt = thread_counts(e, o, threads);
    for (int k = 0; k < nt; k++)
        if (check_threads(m, threads[k], e->programs) != 0)
            return -1;
    add_machine(x, m->p->name);
    return e->run(x, m, o, threads, nt);
}

int ph_exp_run(const char *name, const ph_exp_opts *o,
               ph_exp_table *x)
{
    memset(x, 0, sizeof *x);
    ph_exp_opts none = {NULL, 0, 0};
    if (!o)
        o = &none;
    const experiment *e;
    machine ms[2];
    if (machines(name, o, &e, ms) != 0)
        return -1;
    snprintf(x->name, sizeof x->name, "%s", e->name);
    snprintf(x->title, sizeof x->title, "%s", e->title);
    snprintf(x->baseline, sizeof x->baseline, "%s", e->baseline);
    int rc = 0;
    for (int i = 0; i < 2 && ms[i].t && rc == 0; i++)
        rc = run_on(x, e, &ms[i], o);
    int err = errno;
    for (size_t i = 0; i < x->nrows; i++)
        x->rows[i].cell.topo = NULL; /* freed below */
    for (int i = 0; i < 2; i++)
        ph_topo_free(ms[i].t);
    if (rc != 0) {
        ph_exp_table_free(x);
        errno = err;
    }
    return rc;
}

void ph_exp_table_free(ph_exp_table *x)
{
    for (size_t i = 0; i < x->nrows; i++)
        ph_exp_result_free(&x->rows[i].res);
    free(x->rows);
    x->rows = NULL;
    x->nrows = x->cap = 0;
}
