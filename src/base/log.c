/*
 * log.c -- stderr messages with the "pagehome: " prefix (see log.h).
 *
 * The logger keeps its own verbosity flag.  It does not read the tunables
 * (base/ is below config/): config/options.c pushes the `verbose` value
 * here whenever it is set, from the default, the environment or the API.
 */
#include "base/log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int log_verbose;

void ph_log_set_verbose(int on)
{
    atomic_store_explicit(&log_verbose, on != 0, memory_order_relaxed);
}

int ph_log_verbose(void)
{
    return atomic_load_explicit(&log_verbose, memory_order_relaxed);
}

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
    if (!ph_log_verbose())
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
