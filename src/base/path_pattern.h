/*
 * path_pattern.h -- file names that name their process: the statistics
 * file of every rank of an MPI job.
 *
 * A hybrid MPI + OpenMP program started as `mpirun -n 4 pagehome run
 * --report r.json -- ./app` is four processes given one file name; each
 * would replace the others' statistics.  So the names pagehome writes
 * take, as valgrind's --log-file and LLVM_PROFILE_FILE do, keys that
 * become this process's own:
 *
 *   %r   the rank the MPI launcher gave the process (0 outside one)
 *   %p   the process ID of the process that writes the file
 *   %h   the host name (up to its first dot)
 *   %%   one %
 *
 * Any other character after a % is an error (EINVAL), not kept: a typo
 * would otherwise write one file for every rank again.  Pure functions:
 * the values come in (ph_path_vars), gathered at the edges.
 */
#ifndef PH_BASE_PATH_PATTERN_H
#define PH_BASE_PATH_PATTERN_H

#include <stddef.h>

typedef struct ph_path_vars {
    long rank;        /* %r */
    long pid;         /* %p */
    const char *host; /* %h (NULL: "localhost") */
} ph_path_vars;

/* The pattern with its keys replaced, into out (len bytes).  0, or -1
 * with errno: EINVAL (a % followed by anything but r, p, h, %, or at the
 * end), ENAMETOOLONG (out is too small).  out is "" on error. */
int ph_path_expand(const char *pattern, const ph_path_vars *v, char *out,
                   size_t len);

/* Whether the pattern holds the key %<key> (not a literal "%%<key>"). */
int ph_path_has_key(const char *pattern, char key);

/* Whether the pattern names its process (%r or %p): every process of a
 * job gets a file of its own. */
int ph_path_names_process(const char *pattern);

/* The pattern made per rank: ".rank-%r" inserted before the extension of
 * its last component ("out/r.json" -> "out/r.rank-%r.json", "out/r" ->
 * "out/r.rank-%r"; a leading dot is no extension).  0, or -1 with errno
 * ENAMETOOLONG. */
int ph_path_per_rank(const char *pattern, char *out, size_t len);

/* Every % of text doubled, so that ph_path_expand gives text back (a
 * directory name taken as it is).  0, or -1 with errno ENAMETOOLONG. */
int ph_path_escape(const char *text, char *out, size_t len);

#endif
