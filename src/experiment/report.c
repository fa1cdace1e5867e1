/*
 * report.c -- what `pagehome sim` prints and writes (experiments.h).
 *
 * The table of each experiment is aligned text with numbers a person can
 * read: times in seconds and as ratios to the experiment's baseline,
 * counts with k/M suffixes, shares in percent.  Under it come the targets
 * ("met" / "not met" with the numbers) and the notes.  The CSV has one
 * line per run with every scalar at full precision; the JSON has
 * everything, including the per-iteration series (time, remote accesses,
 * pages moved, critical-path migration, z-phase time) that plots need.
 */
#include "experiment/experiments.h"

#include "experiment/workload.h"

#include "base/error.h"
#include "base/json_write.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COLS 14
#define CELL 64

typedef struct table {
    int ncols;
    const char *head[MAX_COLS];
    int right[MAX_COLS];       /* right-aligned (numbers) */
    size_t nrows, cap;
    char (*cell)[MAX_COLS][CELL];
} table;

static int table_row(table *t)
{
    if (t->nrows == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        void *n = realloc(t->cell, cap * sizeof *t->cell);
        if (!n)
            return -1;
        t->cell = n;
        t->cap = cap;
    }
    memset(t->cell[t->nrows], 0, sizeof t->cell[0]);
    t->nrows++;
    return 0;
}

static void set(table *t, int col, const char *fmt, ...) PH_PRINTF(3, 4);
static void set(table *t, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->cell[t->nrows - 1][col], CELL, fmt, ap);
    va_end(ap);
}

static void table_print(const table *t, FILE *out)
{
    int w[MAX_COLS];
    for (int c = 0; c < t->ncols; c++) {
        w[c] = (int)strlen(t->head[c]);
        for (size_t r = 0; r < t->nrows; r++) {
            int l = (int)strlen(t->cell[r][c]);
            if (l > w[c])
                w[c] = l;
        }
    }
    for (int c = 0; c < t->ncols; c++)
        fprintf(out, "%s%*s", c ? "  " : "", t->right[c] ? w[c] : -w[c],
                t->head[c]);
    fputc('\n', out);
    for (size_t r = 0; r < t->nrows; r++) {
        if (t->cell[r][0][0] == '\f') { /* a group heading */
            fprintf(out, "%s\n", t->cell[r][0] + 1);
            continue;
        }
        for (int c = 0; c < t->ncols; c++)
            fprintf(out, "%s%*s", c ? "  " : "", t->right[c] ? w[c] : -w[c],
                    t->cell[r][c]);
        fputc('\n', out);
    }
}

/* 123, 12.3k, 1.23M */
static void human(char *buf, size_t len, double v)
{
    if (v < 1e3)
        snprintf(buf, len, "%.0f", v);
    else if (v < 1e6)
        snprintf(buf, len, "%.1fk", v / 1e3);
    else if (v < 1e9)
        snprintf(buf, len, "%.2fM", v / 1e6);
    else
        snprintf(buf, len, "%.2fG", v / 1e9);
}

static double last_half_mean(const double *v, int n)
{
    double s = 0;
    int k = 0;
    for (int i = n / 2; i < n; i++, k++)
        s += v[i];
    return k ? s / k : 0;
}

static void share(char *buf, size_t len, uint64_t a, uint64_t b)
{
    if (b == 0)
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.0f%%", 100.0 * (double)a / (double)b);
}

/* ---- the tables ------------------------------------------------------ */

static void heading(table *t, const char *fmt, const char *a)
{
    if (table_row(t) != 0)
        return;
    char *c = t->cell[t->nrows - 1][0];
    c[0] = '\f';
    snprintf(c + 1, CELL - 1, fmt, a);
}

static void table_e1(const ph_exp_table *x, table *t)
{
    static const char *h[] = {"program", "thr", "placement", "engine",
                              "time s", "time/ft", "last-half/ft",
                              "hot pages", "migrated/eligible", "first-2",
                              "remote/iter"};
    static const int right[] = {0, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1};
    t->ncols = 11;
    for (int c = 0; c < t->ncols; c++) {
        t->head[c] = h[c];
        t->right[c] = right[c];
    }
    const ph_exp_preset *cur = NULL;
    for (size_t i = 0; i < x->nrows; i++) {
        const ph_exp_row *r = &x->rows[i];
        if (r->cell.preset != cur) {
            cur = r->cell.preset;
            heading(t, "-- %s", cur->name);
        }
        if (table_row(t) != 0)
            return;
        char m[48], s[16], rem[16];
        snprintf(m, sizeof m, "%llu/%llu",
                 (unsigned long long)r->res.migrated,
                 (unsigned long long)r->res.eligible);
        if (r->res.eligible) {
            size_t l = strlen(m);
            snprintf(m + l, sizeof m - l, " (%.0f%%)",
                     100.0 * (double)r->res.migrated /
                         (double)r->res.eligible);
        }
        share(s, sizeof s, r->res.first2, r->res.migrated);
        human(rem, sizeof rem, r->res.remote_per_iter);
        set(t, 0, "%s", ph_exp_app_name(r->cell.app));
        set(t, 1, "%d", r->cell.nthreads);
        set(t, 2, "%s", ph_exp_placement_name(r->cell.placement));
        set(t, 3, "%s", r->label);
        set(t, 4, "%.3f", r->res.total_ns / 1e9);
        set(t, 5, "%.3f", r->norm_total);
        set(t, 6, "%.3f", r->norm_last);
        set(t, 7, "%zu", r->res.hot_pages);
        set(t, 8, "%s", m);
        set(t, 9, "%s", s);
        set(t, 10, "%s", rem);
    }
}

static void table_e2(const ph_exp_table *x, table *t)
{
    static const char *h[] = {"program", "placement", "engine", "time s",
                              "time/ft", "last-half/ft", "migrated",
                              "first-2", "invocations", "remote/iter",
                              "remote last"};
    static const int right[] = {0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
    t->ncols = 11;
    for (int c = 0; c < t->ncols; c++) {
        t->head[c] = h[c];
        t->right[c] = right[c];
    }
    for (size_t i = 0; i < x->nrows; i++) {
        const ph_exp_row *r = &x->rows[i];
        if (table_row(t) != 0)
            return;
        char s[16], rem[16], last[16];
        share(s, sizeof s, r->res.first2, r->res.migrated);
        human(rem, sizeof rem, r->res.remote_per_iter);
        human(last, sizeof last,
              r->res.iterations ? r->res.iter_remote[r->res.iterations - 1]
                                : 0);
        set(t, 0, "%s %d it", ph_exp_app_name(r->cell.app),
            r->res.iterations);
        set(t, 1, "%s", ph_exp_placement_name(r->cell.placement));
        set(t, 2, "%s", r->label);
        set(t, 3, "%.3f", r->res.total_ns / 1e9);
        set(t, 4, "%.3f", r->norm_total);
        set(t, 5, "%.3f", r->norm_last);
        set(t, 6, "%llu", (unsigned long long)r->res.migrated);
        set(t, 7, "%s", s);
        set(t, 8, "%llu", (unsigned long long)r->res.invocations);
        set(t, 9, "%s", rem);
        set(t, 10, "%s", last);
    }
}

static void table_e3(const ph_exp_table *x, table *t)
{
    static const char *h[] = {"phases", "engine", "time s", "time/ft",
                              "last-half/ft", "z ms/iter", "recorded",
                              "moved/iter", "crit ms/iter", "remote/iter"};
    static const int right[] = {0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
    t->ncols = 10;
    for (int c = 0; c < t->ncols; c++) {
        t->head[c] = h[c];
        t->right[c] = right[c];
    }
    for (size_t i = 0; i < x->nrows; i++) {
        const ph_exp_row *r = &x->rows[i];
        if (table_row(t) != 0)
            return;
        int I = r->res.iterations;
        char rem[16], rec[24];
        human(rem, sizeof rem, r->res.remote_per_iter);
        if (r->res.phase_pages >= 0)
            snprintf(rec, sizeof rec, "%ld", r->res.phase_pages);
        else
            snprintf(rec, sizeof rec, "-");
        set(t, 0, "%s", r->group);
        set(t, 1, "%s", r->label);
        set(t, 2, "%.3f", r->res.total_ns / 1e9);
        set(t, 3, "%.3f", r->norm_total);
        set(t, 4, "%.3f", r->norm_last);
        set(t, 5, "%.2f", last_half_mean(r->res.iter_z_ns, I) / 1e6);
        set(t, 6, "%s", rec);
        set(t, 7, "%.1f", I ? (double)r->res.migrated / I : 0.0);
        set(t, 8, "%.2f", I ? r->res.critical_ns / I / 1e6 : 0.0);
        set(t, 9, "%s", rem);
    }
}

static void table_e4(const ph_exp_table *x, table *t)
{
    static const char *h[] = {"engine", "time s", "time/off",
                              "last-half/off", "migrated", "after swap",
                              "predictive", "remote/iter last half"};
    static const int right[] = {0, 1, 1, 1, 1, 1, 1, 1};
    t->ncols = 8;
    for (int c = 0; c < t->ncols; c++) {
        t->head[c] = h[c];
        t->right[c] = right[c];
    }
    const char *cur = NULL;
    for (size_t i = 0; i < x->nrows; i++) {
        const ph_exp_row *r = &x->rows[i];
        if (!cur || strcmp(cur, r->group) != 0) {
            cur = r->group;
            heading(t, "-- %s", cur);
        }
        if (table_row(t) != 0)
            return;
        char rem[16];
        human(rem, sizeof rem,
              last_half_mean(r->res.iter_remote, r->res.iterations));
        set(t, 0, "%s", r->label);
        set(t, 1, "%.3f", r->res.total_ns / 1e9);
        set(t, 2, "%.3f", r->norm_total);
        set(t, 3, "%.3f", r->norm_last);
        set(t, 4, "%llu", (unsigned long long)r->res.migrated);
        set(t, 5, "%llu", (unsigned long long)r->res.after_migrate);
        set(t, 6, "%llu", (unsigned long long)r->res.predictive_switches);
        set(t, 7, "%s", rem);
    }
}

static void pct(char *buf, size_t len, double a, double b)
{
    if (!(b > 0))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.1f%%", 100.0 * a / b);
}

static void table_e6(const ph_exp_table *x, table *t)
{
    static const char *h[] = {"workload", "pages", "time s", "time/best",
                              "last-half/best", "TLB miss/access",
                              "remote share", "moved 4K pages",
                              "moved 2M units", "split", "collapsed",
                              "2M units at end"};
    static const int right[] = {0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    t->ncols = 12;
    for (int c = 0; c < t->ncols; c++) {
        t->head[c] = h[c];
        t->right[c] = right[c];
    }
    for (size_t i = 0; i < x->nrows; i++) {
        const ph_exp_row *r = &x->rows[i];
        if (table_row(t) != 0)
            return;
        char tlb[16], rem[16];
        pct(tlb, sizeof tlb, r->res.tlb_misses, r->res.accesses);
        snprintf(rem, sizeof rem, "%.1f%%", 100.0 * r->res.remote_share);
        set(t, 0, "%s", r->group);
        set(t, 1, "%s", r->label);
        set(t, 2, "%.3f", r->res.total_ns / 1e9);
        set(t, 3, "%.3f", r->norm_total);
        set(t, 4, "%.3f", r->norm_last);
        set(t, 5, "%s", tlb);
        set(t, 6, "%s", rem);
        set(t, 7, "%llu", (unsigned long long)r->res.moved_4k);
        set(t, 8, "%llu", (unsigned long long)r->res.huge_migrated);
        set(t, 9, "%llu", (unsigned long long)r->res.huge_split);
        set(t, 10, "%llu", (unsigned long long)r->res.huge_collapsed);
        set(t, 11, "%zu", r->res.huge_units_end);
    }
}

int ph_exp_print(const ph_exp_table *x, FILE *out)
{
    table t;
    memset(&t, 0, sizeof t);
    switch (x->name[1]) {
    case '2':
        table_e2(x, &t);
        break;
    case '3':
        table_e3(x, &t);
        break;
    case '4':
        table_e4(x, &t);
        break;
    case '6':
        table_e6(x, &t);
        break;
    default:
        table_e1(x, &t);
        break;
    }
    fprintf(out, "%s\nmachine: %s; times are modelled (doc/sim-model.md), "
            "ratios against %s\n\n", x->title, x->machines, x->baseline);
    table_print(&t, out);
    free(t.cell);
    if (x->ntargets) {
        fprintf(out, "\ntargets:\n");
        for (int i = 0; i < x->ntargets; i++)
            fprintf(out, "  %-7s %s\n          %s\n",
                    x->targets[i].met ? "met" : "not met",
                    x->targets[i].what, x->targets[i].detail);
    }
    if (x->nnotes) {
        fprintf(out, "\nnotes:\n");
        for (int i = 0; i < x->nnotes; i++)
            fprintf(out, "  - %s\n", x->notes[i]);
    }
    return ferror(out) ? -1 : 0;
}

/* ---- CSV --------------------------------------------------------------- */

static void csv_text(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

int ph_exp_write_csv(const ph_exp_table *x, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return ph_fail(errno, "sim: cannot write %s: %s", path,
                       strerror(errno));
    fprintf(f, "experiment,machine,group,program,threads,iterations,"
               "placement,engine,label,repeat,critical_pages,thread_notes,"
               "keep_active,migrate_at,time_ns,last_half_ns,norm_total,"
               "norm_last,hot_pages,migrated,eligible,first2,"
               "after_migrate,migrate_ns,critical_ns,remote_per_iter,"
               "z_ns_last_half,replayed,undone,phase_pages,invocations,"
               "predictive_switches,frozen,melted,misplaced,qualify,"
               "median_gain_ns,max_gain_ns,ml_ns,pages_2m,no_split,tlb,"
               "accesses,tlb_misses,tlb_ns,remote_share,moved_4k,"
               "huge_migrated,huge_split,huge_collapsed,huge_units_end\n");
    for (size_t i = 0; i < x->nrows; i++) {
        const ph_exp_row *r = &x->rows[i];
        const ph_exp_result *s = &r->res;
        fprintf(f, "%s,%s,", x->name, r->cell.preset->name);
        csv_text(f, r->group);
        fprintf(f, ",%s,%d,%d,%s,%s,", ph_exp_app_name(r->cell.app),
                r->cell.nthreads, s->iterations,
                ph_exp_placement_name(r->cell.placement),
                ph_exp_engine_name(r->cell.engine));
        csv_text(f, r->label);
        fprintf(f,
                ",%u,%ld,%d,%d,%d,%.6g,%.6g,%.6f,%.6f,%zu,%llu,%llu,%llu,"
                "%llu,%.6g,%.6g,%.6g,%.6g,%llu,%llu,%ld,%llu,%llu,%llu,"
                "%llu,%zu,%zu,%.6g,%.6g,%.6g,",
                r->cell.repeat ? r->cell.repeat : 1, r->cell.critical_pages,
                r->cell.notes, r->cell.keep_active, r->cell.migrate_at,
                s->total_ns, s->last_half_ns, r->norm_total, r->norm_last,
                s->hot_pages, (unsigned long long)s->migrated,
                (unsigned long long)s->eligible,
                (unsigned long long)s->first2,
                (unsigned long long)s->after_migrate, s->migrate_ns,
                s->critical_ns, s->remote_per_iter,
                last_half_mean(s->iter_z_ns, s->iterations),
                (unsigned long long)s->replayed,
                (unsigned long long)s->undone, s->phase_pages,
                (unsigned long long)s->invocations,
                (unsigned long long)s->predictive_switches,
                (unsigned long long)s->frozen, (unsigned long long)s->melted,
                s->misplaced, s->qualify, s->median_gain_ns, s->max_gain_ns,
                s->ml_ns);
        fprintf(f, "%d,%d,%d,%.6g,%.6g,%.6g,%.6f,%llu,%llu,%llu,%llu,%zu\n",
                r->cell.huge, r->cell.no_split, r->cell.tlb, s->accesses,
                s->tlb_misses, s->tlb_ns, s->remote_share,
                (unsigned long long)s->moved_4k,
                (unsigned long long)s->huge_migrated,
                (unsigned long long)s->huge_split,
                (unsigned long long)s->huge_collapsed, s->huge_units_end);
    }
    int bad = ferror(f);
    if (fclose(f) != 0 || bad)
        return ph_fail(EIO, "sim: writing %s failed", path);
    return 0;
}

/* ---- JSON -------------------------------------------------------------- */

static void series_d(ph_jw *w, const char *key, const double *v, int n)
{
    ph_jw_key(w, key);
    ph_jw_array(w, 1);
    for (int i = 0; i < n; i++)
        ph_jw_double(w, v[i]);
    ph_jw_end(w);
}

#define KD(w, k, v) (ph_jw_key(w, k), ph_jw_double(w, (double)(v)))
#define KU(w, k, v) (ph_jw_key(w, k), ph_jw_uint(w, (uint64_t)(v)))
#define KI(w, k, v) (ph_jw_key(w, k), ph_jw_int(w, (int64_t)(v)))
#define KS(w, k, v) (ph_jw_key(w, k), ph_jw_string(w, v))

int ph_exp_write_json(const ph_exp_table *x, const char *path)
{
    ph_jw w;
    ph_jw_init(&w, 1);
    ph_jw_object(&w, 0);
    KS(&w, "experiment", x->name);
    KS(&w, "title", x->title);
    KS(&w, "machines", x->machines);
    KS(&w, "baseline", x->baseline);
    ph_jw_key(&w, "runs");
    ph_jw_array(&w, 0);
    for (size_t i = 0; i < x->nrows; i++) {
        const ph_exp_row *r = &x->rows[i];
        const ph_exp_result *s = &r->res;
        ph_jw_object(&w, 0);
        KS(&w, "machine", r->cell.preset->name);
        KS(&w, "group", r->group);
        KS(&w, "program", ph_exp_app_name(r->cell.app));
        KI(&w, "threads", r->cell.nthreads);
        KI(&w, "iterations", s->iterations);
        KS(&w, "placement", ph_exp_placement_name(r->cell.placement));
        KS(&w, "engine", ph_exp_engine_name(r->cell.engine));
        KS(&w, "label", r->label);
        KI(&w, "repeat", r->cell.repeat ? r->cell.repeat : 1);
        KI(&w, "critical_pages", r->cell.critical_pages);
        KI(&w, "thread_notes", r->cell.notes);
        KI(&w, "keep_active", r->cell.keep_active);
        KI(&w, "migrate_at", r->cell.migrate_at);
        KI(&w, "baseline_run", r->baseline);
        KD(&w, "time_ns", s->total_ns);
        KD(&w, "last_half_ns", s->last_half_ns);
        KD(&w, "norm_total", r->norm_total);
        KD(&w, "norm_last", r->norm_last);
        KU(&w, "hot_pages", s->hot_pages);
        KU(&w, "migrated", s->migrated);
        KU(&w, "eligible", s->eligible);
        KU(&w, "first2", s->first2);
        KU(&w, "after_migrate", s->after_migrate);
        KD(&w, "migrate_ns", s->migrate_ns);
        KD(&w, "critical_ns", s->critical_ns);
        KI(&w, "lanes", s->lanes);
        KD(&w, "manager_ns", s->manager_ns);
        KD(&w, "lanes_loss_ns", s->lanes_loss_ns);
        KD(&w, "remote_per_iter", s->remote_per_iter);
        KU(&w, "replayed", s->replayed);
        KU(&w, "undone", s->undone);
        KI(&w, "phase_pages", s->phase_pages);
        KU(&w, "invocations", s->invocations);
        KU(&w, "predictive_switches", s->predictive_switches);
        KU(&w, "frozen", s->frozen);
        KU(&w, "melted", s->melted);
        KU(&w, "misplaced", s->misplaced);
        KU(&w, "qualify", s->qualify);
        KD(&w, "median_gain_ns", s->median_gain_ns);
        KD(&w, "max_gain_ns", s->max_gain_ns);
        KD(&w, "ml_ns", s->ml_ns);
        KI(&w, "pages_2m", r->cell.huge);
        KI(&w, "no_split", r->cell.no_split);
        KI(&w, "tlb", r->cell.tlb);
        KD(&w, "accesses", s->accesses);
        KD(&w, "tlb_misses", s->tlb_misses);
        KD(&w, "tlb_ns", s->tlb_ns);
        KD(&w, "remote_share", s->remote_share);
        KU(&w, "moved_4k", s->moved_4k);
        KU(&w, "huge_migrated", s->huge_migrated);
        KU(&w, "huge_split", s->huge_split);
        KU(&w, "huge_collapsed", s->huge_collapsed);
        KU(&w, "huge_units_end", s->huge_units_end);
        ph_jw_key(&w, "per_iteration");
        ph_jw_object(&w, 0);
        series_d(&w, "time_ns", s->iter_ns, s->iterations);
        series_d(&w, "remote", s->iter_remote, s->iterations);
        ph_jw_key(&w, "moved");
        ph_jw_array(&w, 1);
        for (int k = 0; k < s->iterations; k++)
            ph_jw_uint(&w, s->iter_moves[k]);
        ph_jw_end(&w);
        series_d(&w, "critical_ns", s->iter_crit_ns, s->iterations);
        series_d(&w, "z_phase_ns", s->iter_z_ns, s->iterations);
        series_d(&w, "tlb_misses", s->iter_tlb_misses, s->iterations);
        ph_jw_end(&w);
        ph_jw_end(&w);
    }
    ph_jw_end(&w);
    ph_jw_key(&w, "targets");
    ph_jw_array(&w, 0);
    for (int i = 0; i < x->ntargets; i++) {
        ph_jw_object(&w, 1);
        KS(&w, "what", x->targets[i].what);
        ph_jw_key(&w, "met");
        ph_jw_bool(&w, x->targets[i].met);
        KS(&w, "detail", x->targets[i].detail);
        ph_jw_end(&w);
    }
    ph_jw_end(&w);
    ph_jw_key(&w, "notes");
    ph_jw_array(&w, 0);
    for (int i = 0; i < x->nnotes; i++)
        ph_jw_string(&w, x->notes[i]);
    ph_jw_end(&w);
    ph_jw_end(&w);
    int rc = ph_jw_write_file(&w, path);
    ph_jw_free(&w);
    if (rc != 0)
        return ph_fail(errno ? errno : EIO, "sim: cannot write %s", path);
    return 0;
}

/* ---- presets ------------------------------------------------------------ */

int ph_exp_print_presets(FILE *out)
{
    for (size_t i = 0; ph_exp_preset_at(i); i++) {
        const ph_exp_preset *p = ph_exp_preset_at(i);
        char spec[2048];
        ph_topology *t = ph_exp_preset_topology(p);
        if (!t)
            return -1;
        int n = t->nnodes;
        double lo = 1e300, hi = 0;
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++) {
                if (t->nodes[a].ncpus == 0)
                    continue;
                double l = t->latency_ns[a * n + b];
                if (l < lo)
                    lo = l;
                if (l > hi)
                    hi = l;
            }
        fprintf(out, "%s\n  %s\n", p->name, p->summary);
        fprintf(out, "  nodes %d, CPUs %d; load latency %.0f..%.0f ns; "
                "contention %.0f ns per competing node\n", n, ph_exp_cpus(t),
                lo, hi, p->contention_ns);
        fprintf(out, "  migration: %.1f us per 4 KiB page, %.1f us per 2 MiB "
                "page, %.1f us per call; %u-byte lines; %s binding\n",
                p->migrate_ns_4k / 1e3, p->migrate_ns_2m / 1e3,
                p->migrate_ns_call / 1e3, p->line_bytes,
                p->binding == PH_EXP_BIND_SPREAD ? "spread" : "compact");
        fprintf(out, "  TLB per thread: %.0f x 4 KiB + %.0f x 2 MiB entries, "
                "%.0f ns per miss (page walk; e6)\n", p->tlb_entries_4k,
                p->tlb_entries_2m, p->tlb_walk_ns);
        fprintf(out, "  spec: %s\n", ph_exp_preset_spec(p, spec,
                                                          sizeof spec));
        ph_topo_free(t);
    }
    return ferror(out) ? -1 : 0;
}
