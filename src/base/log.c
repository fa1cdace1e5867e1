/* log.c -- stderr messages with the "pagehome: " prefix (see log.h). */
#include "base/log.h"

#include "config/options.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

static void emit(const char *kind, const char *fmt, va_list ap)
{
    char line[1024];
    int n = snprintf(line, sizeof line, "pagehome: %s", kind);
    if (n < 0 || (size_t)n >= sizeof line)
        n = 0;
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    /* One fputs per line keeps lines from different threads whole. */
    fprintf(stderr, "%s\n", line);
}

void ph_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit("warning: ", fmt, ap);
    va_end(ap);
}

void ph_info(const char *fmt, ...)
{
    if (!ph_opt_bool(PH_OPT_VERBOSE))
        return;
    va_list ap;
    va_start(ap, fmt);
    emit("", fmt, ap);
    va_end(ap);
}

void ph_warn_once(atomic_int *once, const char *fmt, ...)
{
    if (atomic_exchange(once, 1))
        return;
    va_list ap;
    va_start(ap, fmt);
    emit("warning: ", fmt, ap);
    va_end(ap);
}
