/*
 * number.h -- whole decimal numbers from text: sysfs counters and
 * command-line counts, where a sign, a blank or a trailing unit is an
 * error rather than something to skip.
 */
#ifndef PH_BASE_NUMBER_H
#define PH_BASE_NUMBER_H

#include <stdint.h>

/* A whole decimal number (digits only, no sign), at most INT64_MAX: 0,
 * or -1 (out untouched) when s is not one. */
static inline int ph_parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s)
        return -1;
    uint64_t v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (v > ((uint64_t)INT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    if (*s)
        return -1;
    *out = v;
    return 0;
}

#endif
