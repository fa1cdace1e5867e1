/*
 * path_pattern.c -- file names that name their process (path_pattern.h).
 */
#include "base/path_pattern.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Append n bytes of s to out at *k; -1 when they do not fit (with the
 * terminating NUL). */
static int put(char *out, size_t len, size_t *k, const char *s, size_t n)
{
    if (*k + n >= len)
        return -1;
    memcpy(out + *k, s, n);
    *k += n;
    out[*k] = '\0';
    return 0;
}

static int fail(char *out, size_t len, int e)
{
    if (len)
        out[0] = '\0';
    errno = e;
    return -1;
}

int ph_path_expand(const char *pattern, const ph_path_vars *v, char *out,
                   size_t len)
{
    if (!len)
        return fail(out, len, ENAMETOOLONG);
    size_t k = 0;
    out[0] = '\0';
    for (const char *s = pattern; *s; s++) {
        char num[32];
        const char *text = s;
        size_t n = 1;
        if (*s == '%') {
            switch (s[1]) {
            case '%':
                text = "%";
                break;
            case 'r':
                n = (size_t)snprintf(num, sizeof num, "%ld", v->rank);
                text = num;
                break;
            case 'p':
                n = (size_t)snprintf(num, sizeof num, "%ld", v->pid);
                text = num;
                break;
            case 'h':
                text = v->host && *v->host ? v->host : "localhost";
                n = strcspn(text, ".");
                break;
            default: /* an unknown key, or a % at the end */
                return fail(out, len, EINVAL);
            }
            s++;
        }
        if (put(out, len, &k, text, n) != 0)
            return fail(out, len, ENAMETOOLONG);
    }
    return 0;
}

int ph_path_has_key(const char *pattern, char key)
{
    for (const char *s = pattern; *s; s++)
        if (*s == '%') {
            if (s[1] == key)
                return 1;
            if (s[1] == '\0')
                break;
            s++; /* the key's letter, or the second % of %% */
        }
    return 0;
}

int ph_path_names_process(const char *pattern)
{
    return ph_path_has_key(pattern, 'r') || ph_path_has_key(pattern, 'p');
}

int ph_path_per_rank(const char *pattern, char *out, size_t len)
{
    const char *base = strrchr(pattern, '/');
    base = base ? base + 1 : pattern;
    const char *dot = strrchr(base, '.');
    size_t at = dot && dot != base ? (size_t)(dot - pattern) : strlen(pattern);
    size_t k = 0;
    if (!len)
        return fail(out, len, ENAMETOOLONG);
    out[0] = '\0';
    if (put(out, len, &k, pattern, at) != 0 ||
        put(out, len, &k, ".rank-%r", 8) != 0 ||
        put(out, len, &k, pattern + at, strlen(pattern + at)) != 0)
        return fail(out, len, ENAMETOOLONG);
    return 0;
}

int ph_path_escape(const char *text, char *out, size_t len)
{
    size_t k = 0;
    if (!len)
        return fail(out, len, ENAMETOOLONG);
    out[0] = '\0';
    for (const char *s = text; *s; s++)
        if (put(out, len, &k, s, 1) != 0 ||
            (*s == '%' && put(out, len, &k, s, 1) != 0))
            return fail(out, len, ENAMETOOLONG);
    return 0;
}
