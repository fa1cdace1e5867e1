/*
 * file.h -- reading a file whole: the small text files of /proc and /sys
 * (one number, a node list, a mode word) and the documents pagehome reads
 * (JSON topologies and measurements).
 *
 * Both read to the end of the file, so a file that hands its content over
 * in pieces (sysfs, a pipe, a FIFO) is read whole, and both retry reads
 * interrupted by a signal.  A file larger than the caller allows is an
 * error (EFBIG), never silently cut: a truncated number or list would be
 * wrong, not short.
 */
#ifndef PH_BASE_FILE_H
#define PH_BASE_FILE_H

#include <stddef.h>

/* The whole file into buf (NUL-terminated; at most len - 1 bytes).  The
 * length, or -1 with errno (EFBIG: the file does not fit; EINVAL: len 0;
 * or open/read's errno).  No message: callers say what they were after. */
long ph_read_text(const char *path, char *buf, size_t len);

/* The whole file, malloc'd and NUL-terminated, its length in *len.  NULL
 * with errno (EFBIG when larger than max_bytes) and a message that names
 * the path ("PATH: cannot open: No such file or directory"). */
char *ph_read_file(const char *path, size_t max_bytes, size_t *len);

#endif
