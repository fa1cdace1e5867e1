/* error.c -- thread-local last-error message (see error.h). */
#include "base/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#define PH_ERROR_MAX 256

static _Thread_local char last_message[PH_ERROR_MAX];

static void (*sink)(int err, const char *msg);

void ph_error_sink_set(void (*fn)(int err, const char *msg))
{
    sink = fn;
}

static void record(int err, const char *fmt, va_list ap)
{
    vsnprintf(last_message, sizeof last_message, fmt, ap);
    if (sink)
        sink(err, last_message);
}

int ph_fail(int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(err, fmt, ap);
    va_end(ap);
    errno = err;
    return -1;
}

void *ph_fail_null(int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(err, fmt, ap);
    va_end(ap);
    errno = err;
    return NULL;
}

const char *ph_error_message(void)
{
    return last_message;
}

int ph_refail(const char *who)
{
    int e = errno;
    char msg[256];
    snprintf(msg, sizeof msg, "%s", last_message);
    return ph_fail(e, "%s: %s", who, msg);
}
