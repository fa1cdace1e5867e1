/*
 * json_write.c -- the streaming JSON writer (see json_write.h).
 *
 * The writer keeps one ph_jw_level per open container and decides the
 * separator and indentation before each key or value.  Strings are
 * checked for UTF-8 as they are copied (invalid bytes become U+FFFD), so
 * the document is valid whatever the caller hands in.
 */
#include "base/json_write.h"

#include "base/error.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
