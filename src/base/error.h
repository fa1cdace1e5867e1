/*
 * error.h -- how internal code reports a failure.
 *
 * Internal functions follow the public convention (pagehome.h): -1 or NULL
 * with errno set.  ph_fail() does the three things a failure needs in one
 * call: set errno, record a one-line message for ph_last_error(), and
 * return -1.  Messages name what was wrong ("ph_free: 0x7f.. was not
 * returned by ph_alloc"), never just an errno string.
 */
#ifndef PH_BASE_ERROR_H
#define PH_BASE_ERROR_H

#include <stddef.h>

#if defined(__GNUC__)
#define PH_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define PH_PRINTF(a, b)
#endif

/* Record message, set errno = err, return -1. */
int ph_fail(int err, const char *fmt, ...) PH_PRINTF(2, 3);
/* Same, returning NULL. */
void *ph_fail_null(int err, const char *fmt, ...) PH_PRINTF(2, 3);
/* The calling thread's last message ("" if none). */
const char *ph_error_message(void);
/* Fail again with the calling thread's last message prefixed by "who: "
 * (errno kept).  Returns -1. */
int ph_refail(const char *who);
/* Also hand every message recorded from now on to fn (with its errno):
 * the copy of base/ inside libpagehome_cluster.so passes its messages on
 * to libpagehome's ph_last_error this way (src/cluster/bridge.c).  NULL
 * stops it.  Set once, before threads fail. */
void ph_error_sink_set(void (*fn)(int err, const char *msg));

#endif
