/*
 * json_write.h -- the streaming JSON writer of every document pagehome
 * writes (statistics, reports, topologies, `--json` output).
 *
 * Reading JSON is jansson's job (Debian's libjansson-dev, linked as a
 * shared library so that libpagehome and the preload library export none
 * of its symbols): topo_json.c parses with JSON_REJECT_DUPLICATES, and its
 * errors give line and column.  jansson has no equivalent of this writer:
 * its encoder needs the whole document as a tree first and has one
 * layout for all of it, while ph_jw appends as the caller goes and keeps
 * small containers (matrix rows, records) on one line inside a pretty
 * document.
 *
 * ph_jw appends to a growable buffer and keeps track of nesting, so what
 * it produces is always valid JSON: separators, string escapes (invalid
 * UTF-8 becomes U+FFFD) and number formatting are its job.  Misuse (a
 * value where a key is due, closing too often) and allocation failure are
 * sticky: the calls after it do nothing and the final ph_jw_text or
 * ph_jw_write_* reports the error, so callers need not check every call.
 * With `pretty`, containers put one element per line and indent by two
 * spaces; a container opened as `compact` keeps all of its elements (and
 * everything nested in them) on one line.  Doubles are written with the
 * fewest digits that read back to the same value (at most 17), so a
 * write/read round trip is exact; NaN and infinities become null.
 * Numbers are formatted in the C locale whatever the program's locale.
 */
#ifndef PH_BASE_JSON_WRITE_H
#define PH_BASE_JSON_WRITE_H

#include <stddef.h>
#include <stdint.h>

/* Nesting a writer can hold. */
#define PH_JSON_MAX_DEPTH 64

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

/* The finished document (NUL-terminated, no trailing newline), or NULL
 * with errno and a message when the writer failed or is incomplete. */
const char *ph_jw_text(ph_jw *w, size_t *len);
/* Write the document and a newline to fd / atomically to a file (written
 * beside it, then renamed).  0, or -1 with errno and a message. */
int ph_jw_write_fd(ph_jw *w, int fd);
int ph_jw_write_file(ph_jw *w, const char *path);

#endif
