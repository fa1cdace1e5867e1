/*
 * error_bridge.h -- the one internal function libpagehome.so exports:
 * ph_internal_error_set, for its sibling libpagehome_cluster.so.  That
 * library carries its own copy of base/ (linked in, hidden); its messages
 * are handed on here (cluster/bridge.c sets the copy's error sink), so
 * that ph_last_error() -- one function, in libpagehome -- tells what the
 * last failing call of either library was.  Exported under the version
 * node PAGEHOME_INTERNAL (src/pagehome.map), not declared in pagehome.h,
 * not for programs.
 */
#ifndef PH_API_ERROR_BRIDGE_H
#define PH_API_ERROR_BRIDGE_H

#if defined(__GNUC__)
#define PH_INTERNAL_API __attribute__((visibility("default")))
#else
#define PH_INTERNAL_API
#endif

/* Record msg as the calling thread's last error (ph_last_error), set
 * errno = err, return -1. */
PH_INTERNAL_API int ph_internal_error_set(int err, const char *msg);

#endif
