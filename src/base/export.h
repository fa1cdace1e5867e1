/*
 * export.h -- internal functions of libpagehome that its sibling library
 * libpagehome_cluster calls (errors, messages, tunables), so that both
 * share one error message per thread and one table of tunables.  They are
 * exported under the version node PAGEHOME_INTERNAL (src/pagehome.map),
 * not declared in pagehome.h, and are not part of the public API.
 */
#ifndef PH_BASE_EXPORT_H
#define PH_BASE_EXPORT_H

#if defined(__GNUC__)
#define PH_INTERNAL_API __attribute__((visibility("default")))
#else
#define PH_INTERNAL_API
#endif

#endif
