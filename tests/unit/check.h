/*
 * check.h -- the unit tests' assertions.
 *
 * CHECK(cond) records a failure with file:line and goes on; CHECK_EQ and
 * friends print both values.  A test file's main() ends with
 * `return check_summary("name");`, which prints "N passed, N failed" and
 * returns 1 if anything failed.  TEST_SKIP(reason) exits 77 (ctest SKIP).
 */
#ifndef PH_TESTS_CHECK_H
#define PH_TESTS_CHECK_H

#include "base/error.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_passed_, check_failed_;

#define CHECK(cond)                                                         \
    do {                                                                    \
        if (cond) {                                                         \
            check_passed_++;                                                \
        } else {                                                            \
            check_failed_++;                                                \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__,          \
                    __LINE__, #cond);                                       \
        }                                                                   \
    } while (0)

#define CHECK_EQ(a, b)                                                      \
    do {                                                                    \
        long long check_a_ = (long long)(a), check_b_ = (long long)(b);     \
        if (check_a_ == check_b_) {                                         \
            check_passed_++;                                                \
        } else {                                                            \
            check_failed_++;                                                \
            fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %s (%lld vs %lld)\n", \
                    __FILE__, __LINE__, #a, #b, check_a_, check_b_);        \
        }                                                                   \
    } while (0)

#define CHECK_STR(a, b)                                                     \
    do {                                                                    \
        const char *check_a_ = (a), *check_b_ = (b);                        \
        if (check_a_ && check_b_ && strcmp(check_a_, check_b_) == 0) {      \
            check_passed_++;                                                \
        } else {                                                            \
            check_failed_++;                                                \
            fprintf(stderr, "%s:%d: CHECK_STR failed: %s == %s (\"%s\" vs \"%s\")\n", \
                    __FILE__, __LINE__, #a, #b, check_a_ ? check_a_ : "(null)", \
                    check_b_ ? check_b_ : "(null)");                        \
        }                                                                   \
    } while (0)

/* The message of the last failure contains `needle` (ph_last_error()'s
 * text, read from base/ so that tests below api/ can check it too). */
#define CHECK_MSG(needle) CHECK_CONTAINS(ph_error_message(), needle)
#define CHECK_CONTAINS(hay, needle)                                         \
    do {                                                                    \
        const char *check_h_ = (hay);                                       \
        if (check_h_ && strstr(check_h_, (needle))) {                       \
            check_passed_++;                                                \
        } else {                                                            \
            check_failed_++;                                                \
            fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n",      \
                    __FILE__, __LINE__, check_h_ ? check_h_ : "(null)",     \
                    (needle));                                              \
        }                                                                   \
    } while (0)

#define TEST_SKIP(reason)                                                   \
    do {                                                                    \
        printf("SKIP: %s\n", reason);                                       \
        exit(77);                                                           \
    } while (0)

static inline int check_summary(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, check_passed_, check_failed_);
    return check_failed_ ? 1 : 0;
}

#endif
