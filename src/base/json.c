/*
 * json.c -- strict JSON reader and streaming writer (see json.h).
 *
 * The reader is a recursive-descent parser over (text, len): one function
 * per grammar rule, each of which either fills its output value or leaves
 * it owning nothing and reports the error through jp_fail(), which turns
 * a byte offset into "line L col C (byte B): ...".  Recursion is bounded
 * by PH_JSON_MAX_DEPTH; containers collect their members in a growable
 * jbuild and hand the arrays over when complete.  Duplicate keys are found
 * after an object is complete by sorting its keys (n log n, so a large
 * object cannot make the check quadratic).
 *
 * The writer keeps one ph_jw_level per open container and decides the
 * separator and indentation before each key or value.
 */
#include "base/json.h"

#include "base/error.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* C locale for number conversion                                      */
/* ------------------------------------------------------------------ */

static locale_t c_locale_handle;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;

static void c_locale_create(void)
{
    c_locale_handle = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

static locale_t c_locale(void)
{
    pthread_once(&c_locale_once, c_locale_create);
    return c_locale_handle;
}

static double strtod_c(const char *s, char **end)
{
    locale_t loc = c_locale();
    return loc ? strtod_l(s, end, loc) : strtod(s, end);
}

/* snprintf of one double in the C locale. */
static void format_double_c(char *buf, size_t n, int precision, double v)
{
    locale_t loc = c_locale();
    locale_t old = loc ? uselocale(loc) : (locale_t)0;
    snprintf(buf, n, "%.*g", precision, v);
    if (loc)
        uselocale(old);
}

/* ------------------------------------------------------------------ */
/* UTF-8                                                                */
/* ------------------------------------------------------------------ */

static int in_range(unsigned char c, unsigned lo, unsigned hi)
{
    return c >= lo && c <= hi;
}

/* Length of the well-formed UTF-8 sequence at s (1..4), or 0 when the
 * bytes there are not one (overlong forms, surrogates and code points
 * above U+10FFFF are not). */
static size_t utf8_len(const unsigned char *s, size_t avail)
{
    unsigned char c = s[0];
    size_t need;
    unsigned lo = 0x80, hi = 0xBF; /* range of the second byte */

    if (c < 0x80)
        return 1;
    if (in_range(c, 0xC2, 0xDF))
        need = 2;
    else if (in_range(c, 0xE0, 0xEF))
        need = 3;
    else if (in_range(c, 0xF0, 0xF4))
        need = 4;
    else
        return 0;
    if (c == 0xE0)
        lo = 0xA0;
    else if (c == 0xED)
        hi = 0x9F;
    else if (c == 0xF0)
        lo = 0x90;
    else if (c == 0xF4)
        hi = 0x8F;
    if (avail < need || !in_range(s[1], lo, hi))
        return 0;
    for (size_t i = 2; i < need; i++)
        if (!in_range(s[i], 0x80, 0xBF))
            return 0;
    return need;
}

static size_t utf8_encode(uint32_t cp, char out[4])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* ------------------------------------------------------------------ */
/* Values                                                               */
/* ------------------------------------------------------------------ */

static void value_clear(ph_json *v)
{
    if (v->type == PH_JSON_STRING) {
        free(v->str);
    } else if (v->type == PH_JSON_ARRAY || v->type == PH_JSON_OBJECT) {
        for (size_t i = 0; i < v->len; i++) {
            value_clear(&v->items[i]);
            if (v->keys)
                free(v->keys[i]);
        }
        free(v->items);
        free(v->keys);
    }
    memset(v, 0, sizeof *v);
}

void ph_json_free(ph_json *v)
{
    if (!v)
        return;
    value_clear(v);
    free(v);
}

const ph_json *ph_json_get(const ph_json *obj, const char *key)
{
    if (!obj || obj->type != PH_JSON_OBJECT || !key)
        return NULL;
    for (size_t i = 0; i < obj->len; i++)
        if (strcmp(obj->keys[i], key) == 0)
            return &obj->items[i];
    return NULL;
}

const ph_json *ph_json_at(const ph_json *arr, size_t i)
{
    if (!arr || arr->type != PH_JSON_ARRAY || i >= arr->len)
        return NULL;
    return &arr->items[i];
}

const char *ph_json_type_name(ph_json_type type)
{
    switch (type) {
    case PH_JSON_NULL: return "null";
    case PH_JSON_BOOL: return "boolean";
    case PH_JSON_NUMBER: return "number";
    case PH_JSON_STRING: return "string";
    case PH_JSON_ARRAY: return "array";
    case PH_JSON_OBJECT: return "object";
    }
    return "?";
}

/* ------------------------------------------------------------------ */
/* Parser                                                               */
/* ------------------------------------------------------------------ */

typedef struct jparser {
    const char *s;
    size_t len, pos;
    int depth;
    size_t values;
    ph_json_error *err;
} jparser;

static int jp_fail(jparser *p, int err, size_t at, const char *fmt, ...)
    PH_PRINTF(4, 5);

static int jp_fail(jparser *p, int err, size_t at, const char *fmt, ...)
{
    char what[128];
    va_list ap;
    int line = 1;
    size_t line_start = 0;

    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (at > p->len)
        at = p->len;
    for (size_t i = 0; i < at; i++) {
        if (p->s[i] == '\n') {
            line++;
            line_start = i + 1;
        }
    }
    p->err->offset = at;
    p->err->line = line;
    p->err->col = (int)(at - line_start) + 1;
    snprintf(p->err->msg, sizeof p->err->msg, "line %d col %d (byte %zu): %s",
             line, p->err->col, at, what);
    return ph_fail(err, "%s", p->err->msg);
}

/* "'x'", "byte 0x01" or "end of input" for the byte at p->pos. */
static const char *jp_found(const jparser *p, char *buf, size_t n)
{
    if (p->pos >= p->len)
        return "end of input";
    unsigned char c = (unsigned char)p->s[p->pos];
    if (c > 0x20 && c < 0x7F)
        snprintf(buf, n, "'%c'", c);
    else
        snprintf(buf, n, "byte 0x%02x", c);
    return buf;
}

static int jp_expected(jparser *p, const char *what)
{
    char buf[16];
    return jp_fail(p, EINVAL, p->pos, "expected %s, found %s", what,
                   jp_found(p, buf, sizeof buf));
}

static void jp_skip_ws(jparser *p)
{
    while (p->pos < p->len) {
        char c = p->s[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            break;
        p->pos++;
    }
}

static int jp_peek(const jparser *p)
{
    return p->pos < p->len ? (unsigned char)p->s[p->pos] : -1;
}

static int is_digit(int c)
{
    return c >= '0' && c <= '9';
}

/* A growable byte string. */
typedef struct jstr {
    char *d;
    size_t len, cap;
} jstr;

static int jstr_put(jstr *b, const char *src, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 32;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *d = realloc(b->d, cap);
        if (!d)
            return -1;
        b->d = d;
        b->cap = cap;
    }
    memcpy(b->d + b->len, src, n);
    b->len += n;
    b->d[b->len] = '\0';
    return 0;
}

static int hex4(const char *s, uint32_t *out)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        v <<= 4;
        if (is_digit(c))
            v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (uint32_t)(c - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

/* p->pos is at "\u": decode one code point (joining a surrogate pair). */
static int jp_unicode_escape(jparser *p, uint32_t *cp)
{
    size_t at = p->pos;
    uint32_t lo;

    if (p->len - p->pos < 6 || hex4(p->s + p->pos + 2, cp))
        return jp_fail(p, EINVAL, at, "expected 4 hex digits after \\u");
    p->pos += 6;
    if (*cp >= 0xDC00 && *cp <= 0xDFFF)
        return jp_fail(p, EINVAL, at, "unpaired surrogate \\u%04X", *cp);
    if (*cp >= 0xD800 && *cp <= 0xDBFF) {
        if (p->len - p->pos < 6 || p->s[p->pos] != '\\' ||
            p->s[p->pos + 1] != 'u' || hex4(p->s + p->pos + 2, &lo) ||
            lo < 0xDC00 || lo > 0xDFFF)
            return jp_fail(p, EINVAL, at, "unpaired surrogate \\u%04X", *cp);
        p->pos += 6;
        *cp = 0x10000 + ((*cp - 0xD800) << 10) + (lo - 0xDC00);
    }
    if (*cp == 0)
        return jp_fail(p, EINVAL, at, "\\u0000 is not supported");
    return 0;
}

/* p->pos is at a backslash: append the escaped character. */
static int jp_escape(jparser *p, jstr *b)
{
    size_t at = p->pos;
    char out[4];
    size_t n = 1;

    if (p->pos + 1 >= p->len)
        return jp_fail(p, EINVAL, at, "unterminated escape");
    switch (p->s[p->pos + 1]) {
    case '"': out[0] = '"'; break;
    case '\\': out[0] = '\\'; break;
    case '/': out[0] = '/'; break;
    case 'b': out[0] = '\b'; break;
    case 'f': out[0] = '\f'; break;
    case 'n': out[0] = '\n'; break;
    case 'r': out[0] = '\r'; break;
    case 't': out[0] = '\t'; break;
    case 'u': {
        uint32_t cp = 0;
        if (jp_unicode_escape(p, &cp))
            return -1;
        n = utf8_encode(cp, out);
        return jstr_put(b, out, n) ? jp_fail(p, ENOMEM, at, "out of memory")
                                   : 0;
    }
    default: {
        unsigned char c = (unsigned char)p->s[p->pos + 1];
        if (c > 0x20 && c < 0x7F)
            return jp_fail(p, EINVAL, at, "invalid escape '\\%c'", c);
        return jp_fail(p, EINVAL, at, "invalid escape (byte 0x%02x)", c);
    }
    }
    p->pos += 2;
    return jstr_put(b, out, n) ? jp_fail(p, ENOMEM, at, "out of memory") : 0;
}

/* p->pos is at the opening quote.  On success *out is a malloc'd string. */
static int jp_string_raw(jparser *p, char **out, size_t *out_len)
{
    size_t start = p->pos;
    jstr b = {0};

    p->pos++;
    if (jstr_put(&b, "", 0))
        return jp_fail(p, ENOMEM, start, "out of memory");
    for (;;) {
        if (p->pos >= p->len) {
            free(b.d);
            return jp_fail(p, EINVAL, start, "unterminated string");
        }
        unsigned char c = (unsigned char)p->s[p->pos];
        int rc = 0;
        if (c == '"') {
            p->pos++;
            break;
        } else if (c == '\\') {
            rc = jp_escape(p, &b);
        } else if (c < 0x20) {
            rc = jp_fail(p, EINVAL, p->pos,
                         "control character 0x%02x in string (escape it)",
                         c);
        } else {
            size_t n = utf8_len((const unsigned char *)p->s + p->pos,
                                p->len - p->pos);
            if (n == 0)
                rc = jp_fail(p, EINVAL, p->pos, "invalid UTF-8 in string");
            else if (jstr_put(&b, p->s + p->pos, n))
                rc = jp_fail(p, ENOMEM, p->pos, "out of memory");
            else
                p->pos += n;
        }
        if (rc) {
            free(b.d);
            return -1;
        }
    }
    *out = b.d;
    *out_len = b.len;
    return 0;
}

static int jp_skip_digits(jparser *p)
{
    size_t start = p->pos;
    while (p->pos < p->len && is_digit((unsigned char)p->s[p->pos]))
        p->pos++;
    return p->pos > start;
}

/* Check the number grammar from p->pos; leave p->pos after the token. */
static int jp_number_token(jparser *p, int *is_int)
{
    size_t start = p->pos;

    *is_int = 1;
    if (jp_peek(p) == '-')
        p->pos++;
    if (jp_peek(p) == '0') {
        p->pos++;
        if (is_digit(jp_peek(p)))
            return jp_fail(p, EINVAL, start, "leading zero in number");
    } else if (!jp_skip_digits(p)) {
        return jp_expected(p, "a digit after '-'");
    }
    if (jp_peek(p) == '.') {
        p->pos++;
        *is_int = 0;
        if (!jp_skip_digits(p))
            return jp_expected(p, "a digit after '.'");
    }
    if (jp_peek(p) == 'e' || jp_peek(p) == 'E') {
        p->pos++;
        *is_int = 0;
        if (jp_peek(p) == '+' || jp_peek(p) == '-')
            p->pos++;
        if (!jp_skip_digits(p))
            return jp_expected(p, "a digit in the exponent");
    }
    return 0;
}

static int jp_number(jparser *p, ph_json *out)
{
    enum { MAX_TOKEN = 256 };
    size_t start = p->pos;
    char tok[MAX_TOKEN + 1];
    int is_int;

    if (jp_number_token(p, &is_int))
        return -1;
    size_t n = p->pos - start;
    if (n > MAX_TOKEN)
        return jp_fail(p, EINVAL, start, "number longer than %d characters",
                       MAX_TOKEN);
    memcpy(tok, p->s + start, n);
    tok[n] = '\0';
    out->type = PH_JSON_NUMBER;
    out->number = strtod_c(tok, NULL);
    if (!isfinite(out->number))
        return jp_fail(p, EINVAL, start, "number out of range");
    if (is_int) {
        errno = 0;
        long long v = strtoll(tok, NULL, 10);
        if (errno != ERANGE) {
            out->is_int = 1;
            out->integer = (int64_t)v;
        }
    }
    return 0;
}

static int jp_literal(jparser *p, ph_json *out)
{
    static const struct {
        const char *text;
        ph_json_type type;
        int boolean;
    } lits[] = {
        {"true", PH_JSON_BOOL, 1},
        {"false", PH_JSON_BOOL, 0},
        {"null", PH_JSON_NULL, 0},
    };
    for (size_t i = 0; i < sizeof lits / sizeof lits[0]; i++) {
        size_t n = strlen(lits[i].text);
        if (p->s[p->pos] != lits[i].text[0])
            continue;
        if (p->len - p->pos < n || memcmp(p->s + p->pos, lits[i].text, n))
            return jp_fail(p, EINVAL, p->pos, "invalid literal (expected '%s')",
                           lits[i].text);
        p->pos += n;
        out->type = lits[i].type;
        out->boolean = lits[i].boolean;
        return 0;
    }
    return jp_expected(p, "a value");
}

/* Members of an array or object under construction. */
typedef struct jbuild {
    ph_json *items;
    char **keys;
    size_t *key_at;
    size_t len, cap;
} jbuild;

static void jb_free(jbuild *b)
{
    for (size_t i = 0; i < b->len; i++) {
        value_clear(&b->items[i]);
        if (b->keys)
            free(b->keys[i]);
    }
    free(b->items);
    free(b->keys);
    free(b->key_at);
    memset(b, 0, sizeof *b);
}

static int jb_reserve(jbuild *b, int with_keys)
{
    if (b->len < b->cap)
        return 0;
    size_t cap = b->cap ? b->cap * 2 : 8;
    ph_json *items = realloc(b->items, cap * sizeof *items);
    if (!items)
        return -1;
    b->items = items;
    if (with_keys) {
        char **keys = realloc(b->keys, cap * sizeof *keys);
        if (!keys)
            return -1;
        b->keys = keys;
        size_t *at = realloc(b->key_at, cap * sizeof *at);
        if (!at)
            return -1;
        b->key_at = at;
    }
    b->cap = cap;
    return 0;
}

static void jb_finish(jbuild *b, ph_json *out, ph_json_type type)
{
    out->type = type;
    out->len = b->len;
    out->items = b->items;
    out->keys = b->keys;
    free(b->key_at);
    memset(b, 0, sizeof *b);
}

static int jp_value(jparser *p, ph_json *out);

static int jp_enter(jparser *p)
{
    if (p->depth >= PH_JSON_MAX_DEPTH)
        return jp_fail(p, EINVAL, p->pos, "nesting deeper than %d",
                       PH_JSON_MAX_DEPTH);
    p->depth++;
    p->pos++; /* the '[' or '{' */
    jp_skip_ws(p);
    return 0;
}

static int jp_array(jparser *p, ph_json *out)
{
    jbuild b = {0};

    if (jp_enter(p))
        return -1;
    if (jp_peek(p) == ']') {
        p->pos++;
        p->depth--;
        jb_finish(&b, out, PH_JSON_ARRAY);
        return 0;
    }
    for (;;) {
        if (jb_reserve(&b, 0)) {
            jp_fail(p, ENOMEM, p->pos, "out of memory");
            break;
        }
        memset(&b.items[b.len], 0, sizeof b.items[0]);
        if (jp_value(p, &b.items[b.len]))
            break;
        b.len++;
        jp_skip_ws(p);
        if (jp_peek(p) == ']') {
            p->pos++;
            p->depth--;
            jb_finish(&b, out, PH_JSON_ARRAY);
            return 0;
        }
        if (jp_peek(p) != ',') {
            jp_expected(p, "',' or ']'");
            break;
        }
        p->pos++;
        jp_skip_ws(p);
    }
    jb_free(&b);
    return -1;
}

typedef struct key_ref {
    const char *key;
    size_t at;
} key_ref;

static int key_ref_cmp(const void *a, const void *b)
{
    const key_ref *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    if (c)
        return c;
    return (x->at > y->at) - (x->at < y->at);
}

/* After an object is complete: refuse a key given twice, pointing at the
 * second occurrence. */
static int jp_check_duplicates(jparser *p, const jbuild *b)
{
    if (b->len < 2)
        return 0;
    key_ref *refs = malloc(b->len * sizeof *refs);
    if (!refs)
        return jp_fail(p, ENOMEM, p->pos, "out of memory");
    for (size_t i = 0; i < b->len; i++) {
        refs[i].key = b->keys[i];
        refs[i].at = b->key_at[i];
    }
    qsort(refs, b->len, sizeof *refs, key_ref_cmp);
    size_t dup = 0;
    int found = 0;
    for (size_t i = 1; i < b->len; i++) {
        if (strcmp(refs[i].key, refs[i - 1].key) == 0 &&
            (!found || refs[i].at < refs[dup].at)) {
            dup = i;
            found = 1;
        }
    }
    int rc = 0;
    if (found)
        rc = jp_fail(p, EINVAL, refs[dup].at, "duplicate key \"%.64s\"",
                     refs[dup].key);
    free(refs);
    return rc;
}

/* One "key": value member into b (space reserved). */
static int jp_member(jparser *p, jbuild *b)
{
    size_t key_len;

    if (jp_peek(p) != '"')
        return jp_expected(p, "a string key");
    b->key_at[b->len] = p->pos;
    if (jp_string_raw(p, &b->keys[b->len], &key_len))
        return -1;
    jp_skip_ws(p);
    if (jp_peek(p) != ':') {
        free(b->keys[b->len]);
        return jp_expected(p, "':'");
    }
    p->pos++;
    jp_skip_ws(p);
    memset(&b->items[b->len], 0, sizeof b->items[0]);
    if (jp_value(p, &b->items[b->len])) {
        free(b->keys[b->len]);
        return -1;
    }
    b->len++;
    return 0;
}

static int jp_object(jparser *p, ph_json *out)
{
    jbuild b = {0};

    if (jp_enter(p))
        return -1;
    if (jp_peek(p) == '}') {
        p->pos++;
        p->depth--;
        jb_finish(&b, out, PH_JSON_OBJECT);
        return 0;
    }
    for (;;) {
        if (jb_reserve(&b, 1)) {
            jp_fail(p, ENOMEM, p->pos, "out of memory");
            break;
        }
        if (jp_member(p, &b))
            break;
        jp_skip_ws(p);
        if (jp_peek(p) == '}') {
            p->pos++;
            if (jp_check_duplicates(p, &b))
                break;
            p->depth--;
            jb_finish(&b, out, PH_JSON_OBJECT);
            return 0;
        }
        if (jp_peek(p) != ',') {
            jp_expected(p, "',' or '}'");
            break;
        }
        p->pos++;
        jp_skip_ws(p);
    }
    jb_free(&b);
    return -1;
}

/* Parse one value at p->pos (whitespace already skipped) into *out, which
 * is zeroed.  On failure *out owns nothing. */
static int jp_value(jparser *p, ph_json *out)
{
    if (++p->values > PH_JSON_MAX_VALUES)
        return jp_fail(p, EFBIG, p->pos, "more than %zu values",
                       PH_JSON_MAX_VALUES);
    int c = jp_peek(p);
    switch (c) {
    case '{':
        return jp_object(p, out);
    case '[':
        return jp_array(p, out);
    case '"':
        out->type = PH_JSON_STRING;
        if (jp_string_raw(p, &out->str, &out->len)) {
            memset(out, 0, sizeof *out);
            return -1;
        }
        return 0;
    case 't':
    case 'f':
    case 'n':
        return jp_literal(p, out);
    default:
        if (c == '-' || is_digit(c))
            return jp_number(p, out);
        return jp_expected(p, "a value");
    }
}

ph_json *ph_json_parse(const char *text, size_t len, ph_json_error *err)
{
    ph_json_error local;
    if (!err)
        err = &local;
    memset(err, 0, sizeof *err);

    if (!text && len) {
        snprintf(err->msg, sizeof err->msg, "no text");
        return ph_fail_null(EINVAL, "json: no text");
    }
    if (len > PH_JSON_MAX_BYTES) {
        snprintf(err->msg, sizeof err->msg,
                 "%zu bytes is more than the limit of %zu", len,
                 PH_JSON_MAX_BYTES);
        return ph_fail_null(EFBIG, "%s", err->msg);
    }
    jparser p = {.s = text ? text : "", .len = len, .err = err};
    ph_json *root = calloc(1, sizeof *root);
    if (!root) {
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return ph_fail_null(ENOMEM, "json: out of memory");
    }
    jp_skip_ws(&p);
    if (jp_value(&p, root)) {
        free(root);
        return NULL;
    }
    jp_skip_ws(&p);
    if (p.pos != p.len) {
        char buf[16];
        ph_json_free(root);
        jp_fail(&p, EINVAL, p.pos, "unexpected %s after the document",
                jp_found(&p, buf, sizeof buf));
        return NULL;
    }
    return root;
}

/* Read a whole file (at most PH_JSON_MAX_BYTES). */
static char *read_file(const char *path, size_t *len, ph_json_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        snprintf(err->msg, sizeof err->msg, "cannot open: %s", strerror(e));
        return ph_fail_null(e, "%s: %s", path, err->msg);
    }
    jstr b = {0};
    char chunk[8192];
    int e = 0;
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            e = errno;
            snprintf(err->msg, sizeof err->msg, "cannot read: %s",
                     strerror(e));
            break;
        }
        if (n == 0)
            break;
        if (b.len + (size_t)n > PH_JSON_MAX_BYTES) {
            e = EFBIG;
            snprintf(err->msg, sizeof err->msg,
                     "larger than the limit of %zu bytes", PH_JSON_MAX_BYTES);
            break;
        }
        if (jstr_put(&b, chunk, (size_t)n)) {
            e = ENOMEM;
            snprintf(err->msg, sizeof err->msg, "out of memory");
            break;
        }
    }
    close(fd);
    if (e) {
        free(b.d);
        return ph_fail_null(e, "%s: %s", path, err->msg);
    }
    if (!b.d && jstr_put(&b, "", 0)) {
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return ph_fail_null(ENOMEM, "%s: %s", path, err->msg);
    }
    *len = b.len;
    return b.d;
}

ph_json *ph_json_parse_file(const char *path, ph_json_error *err)
{
    ph_json_error local;
    size_t len = 0;

    if (!err)
        err = &local;
    memset(err, 0, sizeof *err);
    char *text = read_file(path, &len, err);
    if (!text)
        return NULL;
    ph_json *v = ph_json_parse(text, len, err);
    free(text);
    if (!v) {
        int e = errno;
        ph_fail(e, "%s: %s", path, err->msg);
    }
    return v;
}

/* ------------------------------------------------------------------ */
/* Writer                                                               */
/* ------------------------------------------------------------------ */

void ph_jw_init(ph_jw *w, int pretty)
{
    memset(w, 0, sizeof *w);
    w->pretty = pretty;
}

void ph_jw_free(ph_jw *w)
{
    free(w->buf);
    memset(w, 0, sizeof *w);
}

static void jw_put(ph_jw *w, const char *s, size_t n)
{
    if (w->err)
        return;
    if (n + 1 > w->cap - w->len || !w->buf) {
        size_t cap = w->cap ? w->cap : 256;
        while (cap - w->len < n + 1) {
            if (cap > ((size_t)-1) / 2) {
                w->err = ENOMEM;
                return;
            }
            cap *= 2;
        }
        char *buf = realloc(w->buf, cap);
        if (!buf) {
            w->err = ENOMEM;
            return;
        }
        w->buf = buf;
        w->cap = cap;
    }
    memcpy(w->buf + w->len, s, n);
    w->len += n;
    w->buf[w->len] = '\0';
}

static void jw_puts(ph_jw *w, const char *s)
{
    jw_put(w, s, strlen(s));
}

static void jw_newline(ph_jw *w, int depth)
{
    jw_put(w, "\n", 1);
    for (int i = 0; i < depth; i++)
        jw_put(w, "  ", 2);
}

/* Separator and layout before a member of the innermost container. */
static void jw_separate(ph_jw *w)
{
    ph_jw_level *l = &w->level[w->depth - 1];
    if (l->has_items)
        jw_put(w, ",", 1);
    if (w->pretty) {
        if (!l->compact)
            jw_newline(w, w->depth);
        else if (l->has_items)
            jw_put(w, " ", 1);
    }
    l->has_items = 1;
}

/* Before any value: 0 when a value may be written here. */
static int jw_before_value(ph_jw *w)
{
    if (w->err)
        return -1;
    if (w->after_key) {
        w->after_key = 0;
        return 0;
    }
    if (w->depth == 0) {
        if (w->done)
            w->err = EINVAL;
        return w->err ? -1 : 0;
    }
    if (w->level[w->depth - 1].is_object) {
        w->err = EINVAL; /* a value where a key is due */
        return -1;
    }
    jw_separate(w);
    return 0;
}

static void jw_after_value(ph_jw *w)
{
    if (w->depth == 0)
        w->done = 1;
}

static void jw_escaped(ph_jw *w, const char *s)
{
    const unsigned char *u = (const unsigned char *)(s ? s : "");
    size_t n = strlen((const char *)u);

    jw_put(w, "\"", 1);
    for (size_t i = 0; i < n;) {
        unsigned char c = u[i];
        char esc[8];
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            jw_put(w, esc, 2);
            i++;
        } else if (c < 0x20) {
            const char *named = c == '\n'   ? "\\n"
                                : c == '\t' ? "\\t"
                                : c == '\r' ? "\\r"
                                : c == '\b' ? "\\b"
                                : c == '\f' ? "\\f"
                                            : NULL;
            if (named) {
                jw_puts(w, named);
            } else {
                snprintf(esc, sizeof esc, "\\u%04x", c);
                jw_puts(w, esc);
            }
            i++;
        } else {
            size_t k = utf8_len(u + i, n - i);
            if (k == 0) {
                jw_puts(w, "\\ufffd");
                i++;
            } else {
                jw_put(w, (const char *)u + i, k);
                i += k;
            }
        }
    }
    jw_put(w, "\"", 1);
}

static void jw_open(ph_jw *w, int is_object, int compact)
{
    if (jw_before_value(w))
        return;
    if (w->depth >= PH_JSON_MAX_DEPTH) {
        w->err = EINVAL;
        return;
    }
    int parent_compact = w->depth > 0 && w->level[w->depth - 1].compact;
    ph_jw_level *l = &w->level[w->depth++];
    l->is_object = (unsigned char)is_object;
    l->compact = (unsigned char)(compact || parent_compact);
    l->has_items = 0;
    jw_put(w, is_object ? "{" : "[", 1);
}

void ph_jw_object(ph_jw *w, int compact)
{
    jw_open(w, 1, compact);
}

void ph_jw_array(ph_jw *w, int compact)
{
    jw_open(w, 0, compact);
}

void ph_jw_end(ph_jw *w)
{
    if (w->err)
        return;
    if (w->depth == 0 || w->after_key) {
        w->err = EINVAL;
        return;
    }
    ph_jw_level l = w->level[--w->depth];
    if (w->pretty && !l.compact && l.has_items)
        jw_newline(w, w->depth);
    jw_put(w, l.is_object ? "}" : "]", 1);
    jw_after_value(w);
}

void ph_jw_key(ph_jw *w, const char *key)
{
    if (w->err)
        return;
    if (w->depth == 0 || !w->level[w->depth - 1].is_object || w->after_key) {
        w->err = EINVAL;
        return;
    }
    jw_separate(w);
    jw_escaped(w, key);
    jw_puts(w, w->pretty ? ": " : ":");
    w->after_key = 1;
}

static void jw_scalar(ph_jw *w, const char *text)
{
    if (jw_before_value(w))
        return;
    jw_puts(w, text);
    jw_after_value(w);
}

void ph_jw_string(ph_jw *w, const char *s)
{
    if (jw_before_value(w))
        return;
    jw_escaped(w, s);
    jw_after_value(w);
}

void ph_jw_int(ph_jw *w, int64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)v);
    jw_scalar(w, buf);
}

void ph_jw_uint(ph_jw *w, uint64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    jw_scalar(w, buf);
}

void ph_jw_double(ph_jw *w, double v)
{
    char buf[40];
    if (!isfinite(v)) {
        jw_scalar(w, "null");
        return;
    }
    /* The shortest of 15..17 significant digits that reads back exactly. */
    for (int precision = 15; precision <= 17; precision++) {
        format_double_c(buf, sizeof buf, precision, v);
        if (strtod_c(buf, NULL) == v)
            break;
    }
    jw_scalar(w, buf);
}

void ph_jw_bool(ph_jw *w, int v)
{
    jw_scalar(w, v ? "true" : "false");
}

void ph_jw_null(ph_jw *w)
{
    jw_scalar(w, "null");
}

static int all_scalars(const ph_json *v)
{
    for (size_t i = 0; i < v->len; i++)
        if (v->items[i].type == PH_JSON_ARRAY ||
            v->items[i].type == PH_JSON_OBJECT)
            return 0;
    return 1;
}

void ph_jw_value(ph_jw *w, const ph_json *v)
{
    switch (v->type) {
    case PH_JSON_NULL:
        ph_jw_null(w);
        break;
    case PH_JSON_BOOL:
        ph_jw_bool(w, v->boolean);
        break;
    case PH_JSON_NUMBER:
        if (v->is_int)
            ph_jw_int(w, v->integer);
        else
            ph_jw_double(w, v->number);
        break;
    case PH_JSON_STRING:
        ph_jw_string(w, v->str);
        break;
    case PH_JSON_ARRAY:
    case PH_JSON_OBJECT:
        if (v->type == PH_JSON_ARRAY)
            ph_jw_array(w, all_scalars(v));
        else
            ph_jw_object(w, 0);
        for (size_t i = 0; i < v->len; i++) {
            if (v->type == PH_JSON_OBJECT)
                ph_jw_key(w, v->keys[i]);
            ph_jw_value(w, &v->items[i]);
        }
        ph_jw_end(w);
        break;
    }
}

const char *ph_jw_text(ph_jw *w, size_t *len)
{
    if (w->err == ENOMEM)
        return ph_fail_null(ENOMEM, "json writer: out of memory");
    if (w->err)
        return ph_fail_null(w->err,
                            "json writer: misplaced key, value or end");
    if (!w->done)
        return ph_fail_null(EINVAL, "json writer: document not complete");
    if (len)
        *len = w->len;
    return w->buf;
}

static int write_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t k = write(fd, s, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -1;
        s += k;
        n -= (size_t)k;
    }
    return 0;
}

int ph_jw_write_fd(ph_jw *w, int fd)
{
    size_t len = 0;
    const char *text = ph_jw_text(w, &len);
    if (!text)
        return -1;
    if (write_all(fd, text, len) || write_all(fd, "\n", 1)) {
        int e = errno;
        return ph_fail(e, "json: write to fd %d failed: %s", fd, strerror(e));
    }
    return 0;
}

int ph_jw_write_file(ph_jw *w, const char *path)
{
    char tmp[4096];
    size_t len = 0;
    const char *text = ph_jw_text(w, &len);

    if (!text)
        return -1;
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path,
                         (long)getpid()) >= sizeof tmp)
        return ph_fail(ENAMETOOLONG, "%s: path too long", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        int e = errno;
        return ph_fail(e, "%s: cannot create: %s", tmp, strerror(e));
    }
    int rc = write_all(fd, text, len) || write_all(fd, "\n", 1) ? -1 : 0;
    int e = errno;
    if (close(fd) && rc == 0) {
        rc = -1;
        e = errno;
    }
    if (rc == 0 && rename(tmp, path)) {
        rc = -1;
        e = errno;
    }
    if (rc) {
        unlink(tmp);
        return ph_fail(e, "%s: cannot write: %s", path, strerror(e));
    }
    return 0;
}
