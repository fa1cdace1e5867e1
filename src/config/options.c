/*
 * options.c -- the tunables: defaults, environment, API, printing.
 *
 * Design (after mimalloc's options.c and LLVM's kmp_settings.cpp):
 *   - options.def is the only list.  Everything here is generated from it:
 *     the descriptor table, the environment variable names, the README
 *     table (ph_options_print(.., markdown=1)).
 *   - A value is parsed once, when set, into an int64 or a double (plus
 *     the text for strings and enums) and stored with its source.  Readers
 *     use relaxed atomic loads: cheap enough for hot paths, safe in a
 *     signal handler.  String values are kept in a fixed per-option buffer
 *     pair (current/previous) so a reader's pointer stays valid until the
 *     next-but-one set; setting strings is rare (start-up, tests).
 *   - A bad value is never fatal: it warns, naming the variable, the value
 *     and what is used instead, and the previous value stays.
 */
#include "config/options.h"

#include "base/error.h"
#include "base/json_write.h"
#include "base/log.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PH_OPT_STR_MAX 512

typedef struct opt_desc {
    const char *name;
    const char *env;
    ph_opt_type type;
    const char *def;
    double min, max;
    const char *unit;
    const char *choices;
    const char *doc;
} opt_desc;

static const opt_desc descs[PH_OPT_COUNT] = {
#define PH_OPT(id, nm, ty, df, mn, mx, un, ch, dc) \
    [PH_OPT_##id] = {nm, "PAGEHOME_" #id, PH_OT_##ty, df, (double)(mn), (double)(mx), un, ch, dc},
#include "config/options.def"
#undef PH_OPT
};

typedef struct opt_value {
    _Atomic int64_t i;
    _Atomic double d;
    _Atomic int str_slot;              /* which of str[] is current */
    char str[2][PH_OPT_STR_MAX];
    _Atomic int source;
} opt_value;

static opt_value values[PH_OPT_COUNT];
static pthread_mutex_t set_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* ---- parsing --------------------------------------------------------- */

int ph_parse_size(const char *text, uint64_t *out)
{
    if (!text || !*text)
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(text, &end, 10);
    if (end == text || errno || text[0] == '-')
        return -1;
    unsigned shift = 0;
    if (*end) {
        switch (toupper((unsigned char)*end)) {
        case 'K': shift = 10; break;
        case 'M': shift = 20; break;
        case 'G': shift = 30; break;
        case 'T': shift = 40; break;
        default: return -1;
        }
        end++;
        if (toupper((unsigned char)*end) == 'I')
            end++;
        if (toupper((unsigned char)*end) == 'B')
            end++;
        if (*end)
            return -1;
    }
    if (shift && v > (UINT64_MAX >> shift))
        return -1;
    *out = (uint64_t)v << shift;
    return 0;
}

static int parse_bool(const char *t, int64_t *out)
{
    static const char *yes[] = {"1", "true", "yes", "on"};
    static const char *no[] = {"0", "false", "no", "off"};
    for (size_t k = 0; k < 4; k++) {
        if (strcasecmp(t, yes[k]) == 0) { *out = 1; return 0; }
        if (strcasecmp(t, no[k]) == 0) { *out = 0; return 0; }
    }
    return -1;
}

/* Index of `t` in "a|b|c", or -1. */
static int enum_index(const char *choices, const char *t)
{
    size_t tl = strlen(t);
    int idx = 0;
    for (const char *p = choices; *p; idx++) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == tl && strncasecmp(p, t, len) == 0)
            return idx;
        if (!bar)
            break;
        p = bar + 1;
    }
    return -1;
}

static void enum_text(const char *choices, int64_t idx, char *buf, size_t len)
{
    const char *p = choices;
    for (int64_t k = 0; k < idx && p; k++) {
        p = strchr(p, '|');
        if (p)
            p++;
    }
    if (!p) {
        snprintf(buf, len, "?");
        return;
    }
    const char *bar = strchr(p, '|');
    size_t n = bar ? (size_t)(bar - p) : strlen(p);
    snprintf(buf, len, "%.*s", (int)n, p);
}

/* Parse `text` for option d into *i / *d. 0 or -1 with `why` filled. */
static int parse_value(const opt_desc *d, const char *text, int64_t *i,
                       double *dv, char *why, size_t wlen)
{
    while (isspace((unsigned char)*text))
        text++;
    switch (d->type) {
    case PH_OT_BOOL:
        if (parse_bool(text, i) < 0) {
            snprintf(why, wlen, "expected 0/1, true/false, yes/no or on/off");
            return -1;
        }
        return 0;
    case PH_OT_INT: {
        errno = 0;
        char *end;
        long long v = strtoll(text, &end, 10);
        if (end == text || *end || errno) {
            snprintf(why, wlen, "expected an integer");
            return -1;
        }
        if ((double)v < d->min || (double)v > d->max) {
            snprintf(why, wlen, "out of range %.0f..%.0f", d->min, d->max);
            return -1;
        }
        *i = v;
        return 0;
    }
    case PH_OT_SIZE: {
        uint64_t v;
        if (ph_parse_size(text, &v) < 0) {
            snprintf(why, wlen, "expected a size such as 4096, 4K, 2M or 1G");
            return -1;
        }
        if (d->choices[0]) {
            /* A size restricted to listed values ("4K|2M"). */
            int ok = 0;
            for (const char *p = d->choices; p && *p;) {
                char one[32];
                const char *bar = strchr(p, '|');
                size_t n = bar ? (size_t)(bar - p) : strlen(p);
                snprintf(one, sizeof one, "%.*s", (int)n, p);
                uint64_t c;
                if (ph_parse_size(one, &c) == 0 && c == v)
                    ok = 1;
                p = bar ? bar + 1 : NULL;
            }
            if (!ok) {
                snprintf(why, wlen, "must be one of %s", d->choices);
                return -1;
            }
        } else if ((double)v < d->min || (double)v > d->max) {
            snprintf(why, wlen, "out of range %.0f..%.0f bytes", d->min, d->max);
            return -1;
        }
        *i = (int64_t)v;
        return 0;
    }
    case PH_OT_DOUBLE: {
        errno = 0;
        char *end;
        double v = strtod(text, &end);
        if (end == text || *end || errno || !isfinite(v)) {
            snprintf(why, wlen, "expected a number");
            return -1;
        }
        if (v < d->min || v > d->max) {
            snprintf(why, wlen, "out of range %g..%g", d->min, d->max);
            return -1;
        }
        *dv = v;
        return 0;
    }
    case PH_OT_ENUM: {
        int k = enum_index(d->choices, text);
        if (k < 0) {
            snprintf(why, wlen, "expected one of %s", d->choices);
            return -1;
        }
        *i = k;
        return 0;
    }
    case PH_OT_STRING:
        if (strlen(text) >= PH_OPT_STR_MAX) {
            snprintf(why, wlen, "longer than %d characters", PH_OPT_STR_MAX - 1);
            return -1;
        }
        return 0;
    }
    return -1;
}

static void store(ph_opt_id id, const char *text, int64_t i, double d,
                  ph_opt_source src)
{
    opt_value *v = &values[id];
    if (descs[id].type == PH_OT_STRING) {
        int next = !atomic_load(&v->str_slot);
        const char *t = text;
        while (isspace((unsigned char)*t))
            t++;
        snprintf(v->str[next], PH_OPT_STR_MAX, "%s", t);
        atomic_store(&v->str_slot, next);
    } else if (descs[id].type == PH_OT_ENUM) {
        int next = !atomic_load(&v->str_slot);
        enum_text(descs[id].choices, i, v->str[next], PH_OPT_STR_MAX);
        atomic_store(&v->str_slot, next);
    }
    atomic_store_explicit(&v->i, i, memory_order_relaxed);
    atomic_store_explicit(&v->d, d, memory_order_relaxed);
    atomic_store_explicit(&v->source, (int)src, memory_order_relaxed);
    /* The logger does not read the tunables: its flag is pushed. */
    if (id == PH_OPT_VERBOSE)
        ph_log_set_verbose(i != 0);
}

static void set_default(ph_opt_id id)
{
    const opt_desc *d = &descs[id];
    int64_t i = 0;
    double dv = 0;
    char why[128];
    if (parse_value(d, d->def, &i, &dv, why, sizeof why) < 0)
        abort(); /* a bad default in options.def is a programming error */
    store(id, d->def, i, dv, PH_SRC_DEFAULT);
}

static void format_raw(ph_opt_id id, char *buf, size_t len);

/* Set from text; on a bad value warn (env) or fail (API). */
int ph_opt_set(ph_opt_id id, const char *text, ph_opt_source src)
{
    if ((int)id < 0 || id >= PH_OPT_COUNT || !text)
        return ph_fail(EINVAL, "tunable: bad id or NULL value");
    /* Defaults and the environment first: an API value set before any
     * read must not be overwritten by the first read.  (read_environment
     * calls back in here with src == ENV, inside pthread_once.) */
    if (src != PH_SRC_ENV)
        ph_options_init();
    const opt_desc *d = &descs[id];
    int64_t i = 0;
    double dv = 0;
    char why[160];
    pthread_mutex_lock(&set_lock);
    int rc = parse_value(d, text, &i, &dv, why, sizeof why);
    if (rc == 0)
        store(id, text, i, dv, src);
    pthread_mutex_unlock(&set_lock);
    if (rc < 0) {
        char cur[PH_OPT_STR_MAX];
        format_raw(id, cur, sizeof cur);
        if (src == PH_SRC_ENV)
            ph_warn("%s=\"%s\" is invalid (%s); using %s", d->env, text, why, cur);
        /* neutral wording: an API caller goes on with the current value,
         * the command line stops */
        return ph_fail(EINVAL, "%s=\"%s\" is invalid (%s; the current value is %s)",
                       d->name, text, why, cur);
    }
    return 0;
}

static void read_environment(void)
{
    for (int id = 0; id < PH_OPT_COUNT; id++) {
        set_default((ph_opt_id)id);
        const char *e = getenv(descs[id].env);
        if (e)
            ph_opt_set((ph_opt_id)id, e, PH_SRC_ENV);
    }
}

void ph_options_init(void)
{
    pthread_once(&init_once, read_environment);
}

void ph_options_reset(void)
{
    ph_options_init();
    read_environment();
}

/* ---- readers --------------------------------------------------------- */

int ph_opt_bool(ph_opt_id id)
{
    return ph_opt_int(id) != 0;
}

int64_t ph_opt_int(ph_opt_id id)
{
    ph_options_init();
    return atomic_load_explicit(&values[id].i, memory_order_relaxed);
}

double ph_opt_double(ph_opt_id id)
{
    ph_options_init();
    if (descs[id].type != PH_OT_DOUBLE)
        return (double)ph_opt_int(id);
    return atomic_load_explicit(&values[id].d, memory_order_relaxed);
}

const char *ph_opt_str(ph_opt_id id)
{
    ph_options_init();
    opt_value *v = &values[id];
    if (descs[id].type != PH_OT_STRING && descs[id].type != PH_OT_ENUM)
        return "";
    return v->str[atomic_load(&v->str_slot)];
}

int ph_opt_find(const char *name)
{
    if (!name)
        return -1;
    for (int id = 0; id < PH_OPT_COUNT; id++) {
        if (strcasecmp(name, descs[id].name) == 0 ||
            strcasecmp(name, descs[id].env) == 0)
            return id;
    }
    return -1;
}

const char *ph_opt_name(ph_opt_id id)
{
    return descs[id].name;
}

ph_opt_source ph_opt_source_of(ph_opt_id id)
{
    ph_options_init();
    return (ph_opt_source)atomic_load(&values[id].source);
}

const char *ph_opt_source_name(ph_opt_source src)
{
    switch (src) {
    case PH_SRC_DEFAULT: return "default";
    case PH_SRC_ENV: return "env";
    case PH_SRC_API: return "api";
    }
    return "?";
}

static void format_size(uint64_t v, char *buf, size_t len)
{
    static const char suffix[] = {'T', 'G', 'M', 'K'};
    for (int k = 0; k < 4; k++) {
        unsigned shift = 40u - 10u * (unsigned)k;
        uint64_t unit = (uint64_t)1 << shift;
        if (v >= unit && v % unit == 0) {
            snprintf(buf, len, "%" PRIu64 "%c", v / unit, suffix[k]);
            return;
        }
    }
    snprintf(buf, len, "%" PRIu64, v);
}

/* The current value as text, read straight from the table: no
 * ph_options_init(), so that it can run inside read_environment (a bad
 * environment value reports the value used). */
static void format_raw(ph_opt_id id, char *buf, size_t len)
{
    const opt_value *v = &values[id];
    int64_t i = atomic_load_explicit(&v->i, memory_order_relaxed);
    switch (descs[id].type) {
    case PH_OT_BOOL:
        snprintf(buf, len, "%d", i != 0);
        break;
    case PH_OT_INT:
        snprintf(buf, len, "%" PRId64, i);
        break;
    case PH_OT_SIZE:
        format_size((uint64_t)i, buf, len);
        break;
    case PH_OT_DOUBLE:
        snprintf(buf, len, "%g",
                 atomic_load_explicit(&v->d, memory_order_relaxed));
        break;
    case PH_OT_ENUM:
    case PH_OT_STRING:
        snprintf(buf, len, "%s", v->str[atomic_load(&v->str_slot)]);
        break;
    }
}

void ph_opt_format(ph_opt_id id, char *buf, size_t len)
{
    ph_options_init();
    format_raw(id, buf, len);
}

/* ---- printing -------------------------------------------------------- */

static const char *type_name(ph_opt_type t)
{
    switch (t) {
    case PH_OT_BOOL: return "bool";
    case PH_OT_INT: return "int";
    case PH_OT_SIZE: return "size";
    case PH_OT_DOUBLE: return "double";
    case PH_OT_ENUM: return "enum";
    case PH_OT_STRING: return "string";
    }
    return "?";
}

static void range_text(const opt_desc *d, char *buf, size_t len)
{
    switch (d->type) {
    case PH_OT_BOOL:
        snprintf(buf, len, "0, 1");
        break;
    case PH_OT_ENUM:
        snprintf(buf, len, "%s", d->choices);
        break;
    case PH_OT_SIZE:
        if (d->choices[0]) {
            snprintf(buf, len, "%s", d->choices);
        } else {
            char lo[32], hi[32];
            format_size((uint64_t)d->min, lo, sizeof lo);
            format_size((uint64_t)d->max, hi, sizeof hi);
            snprintf(buf, len, "%s..%s", lo, hi);
        }
        break;
    case PH_OT_INT:
    case PH_OT_DOUBLE:
        if (d->max >= 9e18)
            snprintf(buf, len, ">= %g", d->min);
        else
            snprintf(buf, len, "%g..%g", d->min, d->max);
        break;
    case PH_OT_STRING:
        snprintf(buf, len, "text");
        break;
    }
}

void ph_options_print(FILE *out, int markdown)
{
    ph_options_init();
    if (markdown) {
        fprintf(out, "| name | environment variable | type | default | range | unit | meaning |\n");
        fprintf(out, "|---|---|---|---|---|---|---|\n");
    }
    for (int id = 0; id < PH_OPT_COUNT; id++) {
        const opt_desc *d = &descs[id];
        char range[PH_OPT_STR_MAX];
        range_text(d, range, sizeof range);
        if (markdown) {
            fprintf(out, "| `%s` | `%s` | %s | `%s` | %s | %s | %s |\n", d->name,
                    d->env, type_name(d->type), d->def[0] ? d->def : "\"\"",
                    range, d->unit[0] ? d->unit : "", d->doc);
        } else {
            char cur[PH_OPT_STR_MAX];
            ph_opt_format((ph_opt_id)id, cur, sizeof cur);
            fprintf(out, "%-22s = %-14s (%s)  %s  [%s, %s%s%s]\n", d->name,
                    cur[0] ? cur : "\"\"",
                    ph_opt_source_name(ph_opt_source_of((ph_opt_id)id)), d->env,
                    type_name(d->type), range, d->unit[0] ? ", " : "", d->unit);
        }
    }
}

void ph_opt_write_json(struct ph_jw *w)
{
    ph_jw_object(w, 0);
    for (int id = 0; id < PH_OPT_COUNT; id++) {
        char val[256];
        ph_opt_format((ph_opt_id)id, val, sizeof val);
        ph_jw_key(w, ph_opt_name((ph_opt_id)id));
        ph_jw_object(w, 1);
        ph_jw_key(w, "value");
        ph_jw_string(w, val);
        ph_jw_key(w, "source");
        ph_jw_string(w, ph_opt_source_name(ph_opt_source_of((ph_opt_id)id)));
        ph_jw_end(w);
    }
    ph_jw_end(w);
}
