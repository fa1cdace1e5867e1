/*
 * log.h -- pagehome's own messages.
 *
 * Everything pagehome says goes to stderr with a "pagehome: " prefix so it
 * can be told apart from the program's output.  Warnings always print;
 * ph_info() prints only when verbose is on: the `verbose` tunable, which
 * config/ pushes here with ph_log_set_verbose().  Not for use in a signal
 * handler.
 */
#ifndef PH_BASE_LOG_H
#define PH_BASE_LOG_H

#include "base/error.h"

#include <stdatomic.h>

/* Verbosity of ph_info (off until set). */
void ph_log_set_verbose(int on);
int ph_log_verbose(void);

void ph_warn(const char *fmt, ...) PH_PRINTF(1, 2);
void ph_info(const char *fmt, ...) PH_PRINTF(1, 2);
/* Print a warning once per `once` flag (a static atomic_int owned by the caller). */
void ph_warn_once(atomic_int *once, const char *fmt, ...) PH_PRINTF(2, 3);

#endif
