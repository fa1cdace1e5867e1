/*
 * json.h -- a small strict JSON reader (DOM) and a streaming writer.
 *
 * READER.  ph_json_parse() turns a complete RFC 8259 document into a tree
 * of ph_json values.  It is strict and bounded, because its input comes
 * from files people edit by hand and from the fuzzer:
 *   - no comments, no trailing commas, no NaN/Infinity, no leading zeros,
 *     no text after the document, no duplicate keys in an object;
 *   - strings must be valid UTF-8 without raw control characters; \u
 *     escapes are decoded (surrogate pairs joined); \u0000 is refused so
 *     every string is also a C string;
 *   - nesting is limited to PH_JSON_MAX_DEPTH, the text to
 *     PH_JSON_MAX_BYTES and the tree to PH_JSON_MAX_VALUES values, so no
 *     input can exhaust the stack or (much) memory;
 *   - numbers outside the double range are refused; an integer token that
 *     fits int64_t is also kept exactly (is_int, integer), so byte counts
 *     survive a round trip.
 * A failure says where and what: "line 3 col 17 (byte 52): expected ','
 * or '}', found ']'".  The message is in ph_json_error.msg and is also the
 * thread's error message (ph_fail), with errno EINVAL (syntax), EFBIG
 * (too large), ENOMEM, or the errno of a failed read.
 *
 * The tree is plain data: every value owns its children.  Arrays and
 * objects hold `len` values in items[]; objects also hold keys[].  Lookups
 * (ph_json_get) are linear: the documents read here are small.
 *
 * WRITER.  ph_jw appends to a growable buffer and keeps track of nesting,
 * so what it produces is always valid JSON: separators, string escapes
 * (invalid UTF-8 becomes U+FFFD) and number formatting are its job.
 * Misuse (a value where a key is due, closing too often) and allocation
 * failure are sticky: the calls after it do nothing and the final
 * ph_jw_text/ph_jw_write_* reports the error, so callers need not check
 * every call.  With `pretty`, containers put one element per line and
 * indent by two spaces; a container opened as `compact` keeps all of its
 * elements (and everything nested in them) on one line, which suits matrix
 * rows and small records.  Doubles are written with the fewest digits that
 * read back to the same value (at most 17), so a write/read round trip is
 * exact; NaN and infinities become null.  Numbers are formatted and parsed
 * in the C locale whatever the program's locale.
 */
#ifndef PH_BASE_JSON_H
#define PH_BASE_JSON_H

#include <stddef.h>
#include <stdint.h>

#define PH_JSON_MAX_DEPTH 64
#define PH_JSON_MAX_BYTES ((size_t)16 << 20)
#define PH_JSON_MAX_VALUES ((size_t)1 << 20)

typedef enum ph_json_type {
    PH_JSON_NULL,
    PH_JSON_BOOL,
    PH_JSON_NUMBER,
    PH_JSON_STRING,
    PH_JSON_ARRAY,
    PH_JSON_OBJECT
} ph_json_type;

typedef struct ph_json ph_json;
struct ph_json {
    ph_json_type type;
    int boolean;         /* BOOL: 0 or 1 */
    int is_int;          /* NUMBER: the token was an integer fitting int64 */
    int64_t integer;     /* NUMBER: exact value when is_int */
    double number;       /* NUMBER: value (always set) */
    char *str;           /* STRING: NUL-terminated UTF-8 */
    size_t len;          /* STRING: bytes; ARRAY/OBJECT: entries */
    ph_json *items;      /* ARRAY/OBJECT: len values */
    char **keys;         /* OBJECT: len keys, parallel to items */
};

typedef struct ph_json_error {
    size_t offset;       /* byte offset of the problem */
    int line, col;       /* 1-based; 0 when not a syntax error */
    char msg[192];       /* "line L col C (byte B): what" */
} ph_json_error;

/* Parse text[0..len).  NULL on failure with errno and a message (also in
 * *err when err is non-NULL). */
ph_json *ph_json_parse(const char *text, size_t len, ph_json_error *err);
/* Read and parse a file.  Messages start with the path. */
ph_json *ph_json_parse_file(const char *path, ph_json_error *err);
void ph_json_free(ph_json *v);

/* Member `key` of an object, or NULL (also when obj is not an object). */
const ph_json *ph_json_get(const ph_json *obj, const char *key);
/* Element i of an array, or NULL. */
const ph_json *ph_json_at(const ph_json *arr, size_t i);
/* "null", "boolean", "number", "string", "array", "object". */
const char *ph_json_type_name(ph_json_type type);

/* ---- writer ---- */

typedef struct ph_jw_level {
    unsigned char is_object, compact, has_items;
} ph_jw_level;

typedef struct ph_jw {
    char *buf;
    size_t len, cap;
    int err;             /* sticky errno: ENOMEM, or EINVAL on misuse */
    int pretty;
    int depth;
    int after_key;       /* a key was written, its value is due */
    int done;            /* the top-level value is complete */
    ph_jw_level level[PH_JSON_MAX_DEPTH];
} ph_jw;

void ph_jw_init(ph_jw *w, int pretty);
void ph_jw_free(ph_jw *w);

void ph_jw_object(ph_jw *w, int compact);
void ph_jw_array(ph_jw *w, int compact);
void ph_jw_end(ph_jw *w);            /* closes the innermost container */
void ph_jw_key(ph_jw *w, const char *key);
void ph_jw_string(ph_jw *w, const char *s);
void ph_jw_int(ph_jw *w, int64_t v);
void ph_jw_uint(ph_jw *w, uint64_t v);
void ph_jw_double(ph_jw *w, double v);
void ph_jw_bool(ph_jw *w, int v);
void ph_jw_null(ph_jw *w);
/* Write a parsed value (and everything in it). */
void ph_jw_value(ph_jw *w, const ph_json *v);

/* The finished document (NUL-terminated, no trailing newline), or NULL
 * with errno and a message when the writer failed or is incomplete. */
const char *ph_jw_text(ph_jw *w, size_t *len);
/* Write the document and a newline to fd / atomically to a file (written
 * beside it, then renamed).  0, or -1 with errno and a message. */
int ph_jw_write_fd(ph_jw *w, int fd);
int ph_jw_write_file(ph_jw *w, const char *path);

#endif
