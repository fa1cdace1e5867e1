/*
 * log.h -- pagehome's own messages.
 *
 * Everything pagehome says goes to stderr with a "pagehome: " prefix so it
 * can be told apart from the program's output.  Warnings always print;
 * ph_info() prints only when the `verbose` tunable is on.  Not for use in
 * a signal handler.
 */
#ifndef PH_BASE_LOG_H
#define PH_BASE_LOG_H

#include "base/error.h"

#include <stdatomic.h>

void ph_warn(const char *fmt, ...) PH_PRINTF(1, 2);
void ph_info(const char *fmt, ...) PH_PRINTF(1, 2);
/* Print a warning once per `once` flag (a static atomic_int owned by the caller). */
void ph_warn_once(atomic_int *once, const char *fmt, ...) PH_PRINTF(2, 3);

#endif
