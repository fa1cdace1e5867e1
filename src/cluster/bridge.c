/*
 * bridge.c -- how the shared libpagehome_cluster reports errors: its
 * ph_fail / ph_fail_null / ph_error_message (base/error.h, which the
 * cluster code and the private copies of base/ and config/ in this library
 * call) hand the message to libpagehome's thread-local last error through
 * ph_internal_error_set, so that ph_last_error() -- one function, in
 * libpagehome -- tells what the last failing call of either library was.
 * Only in the shared library: the static one links libpagehome.a's
 * base/error.c directly.
 *
 * phc_sync_tunables copies the current value of every tunable the cluster
 * layer reads from libpagehome's table (public ph_config_get) into this
 * library's private copy, so ph_config_set before ph_cluster_init works
 * as for any tunable.
 */
#include "base/error.h"
#include "base/export.h"
#include "config/options.h"

#include <errno.h>
#include <pagehome.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void phc_sync_tunables(void);

static int forward(int err, const char *fmt, va_list ap)
{
    char msg[256];
    vsnprintf(msg, sizeof msg, fmt, ap);
    return ph_internal_error_set(err, msg);
}

int ph_fail(int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    forward(err, fmt, ap);
    va_end(ap);
    errno = err;
    return -1;
}

void *ph_fail_null(int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    forward(err, fmt, ap);
    va_end(ap);
    errno = err;
    return NULL;
}

const char *ph_error_message(void)
{
    return ph_last_error();
}

void phc_sync_tunables(void)
{
    int e = errno;
    for (int id = 0; id < PH_OPT_COUNT; id++) {
        const char *name = ph_opt_name((ph_opt_id)id);
        if (strncmp(name, "cluster_", 8) != 0 && strcmp(name, "verbose") != 0 &&
            strcmp(name, "seed") != 0)
            continue;
        char theirs[600], ours[600];
        if (ph_config_get(name, theirs, sizeof theirs) < 0)
            continue;
        ph_opt_format((ph_opt_id)id, ours, sizeof ours);
        if (strcmp(theirs, ours) != 0)
            ph_opt_set((ph_opt_id)id, theirs, PH_SRC_API);
    }
    errno = e;
}
