/* error.c -- thread-local last-error message (see error.h). */
#include "base/error.h"
#include "base/export.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#define PH_ERROR_MAX 256

static _Thread_local char last_message[PH_ERROR_MAX];

static void record(const char *fmt, va_list ap)
{
    vsnprintf(last_message, sizeof last_message, fmt, ap);
}

int ph_fail(int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(fmt, ap);
    va_end(ap);
    errno = err;
    return -1;
}

void *ph_fail_null(int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(fmt, ap);
    va_end(ap);
    errno = err;
    return NULL;
}

const char *ph_error_message(void)
{
    return last_message;
}

int ph_internal_error_set(int err, const char *msg)
{
    return ph_fail(err, "%s", msg ? msg : "");
}
