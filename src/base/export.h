/*
 * export.h -- the one internal function of libpagehome that its sibling
 * library libpagehome_cluster calls: ph_internal_error_set, so that a
 * failing ph_cluster_* call leaves its message where ph_last_error() (in
 * libpagehome) finds it.  Exported under the version node
 * PAGEHOME_INTERNAL (src/pagehome.map), not declared in pagehome.h, not
 * for programs.  (Everything else the cluster library needs from base/
 * and config/ it compiles in privately; it reads the tunables' current
 * values through the public ph_config_get.)
 */
#ifndef PH_BASE_EXPORT_H
#define PH_BASE_EXPORT_H

#if defined(__GNUC__)
#define PH_INTERNAL_API __attribute__((visibility("default")))
#else
#define PH_INTERNAL_API
#endif

/* Record msg as the calling thread's last error (ph_last_error), set
 * errno = err, return -1. */
PH_INTERNAL_API int ph_internal_error_set(int err, const char *msg);

#endif
