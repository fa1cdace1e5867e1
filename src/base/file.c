/*
 * file.c -- reading a file whole (see file.h).
 */
#include "base/file.h"
#include "base/own_fd.h"

#include "base/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

long ph_read_text(const char *path, char *buf, size_t len)
{
    if (len == 0) {
        errno = EINVAL;
        return -1;
    }
    int fd = ph_own_fd_open(path, O_RDONLY, 0);
    if (fd < 0)
        return -1;
    size_t used = 0;
    for (;;) {
        /* One byte beyond the room: reading it means the file is too big. */
        char extra;
        char *dst = used + 1 < len ? buf + used : &extra;
        size_t want = used + 1 < len ? len - 1 - used : 1;
        ssize_t r = read(fd, dst, want);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            ph_own_fd_close(fd);
            errno = e;
            return -1;
        }
        if (r == 0)
            break;
        if (dst == &extra) {
            ph_own_fd_close(fd);
            buf[used] = '\0';
            errno = EFBIG;
            return -1;
        }
        used += (size_t)r;
    }
    ph_own_fd_close(fd);
    buf[used] = '\0';
    return (long)used;
}

char *ph_read_file(const char *path, size_t max_bytes, size_t *len)
{
    int fd = ph_own_fd_open(path, O_RDONLY, 0);
    if (fd < 0) {
        int e = errno;
        return ph_fail_null(e, "%s: cannot open: %s", path, strerror(e));
    }
    char *buf = NULL;
    size_t used = 0, cap = 0;
    int e = 0;
    for (;;) {
        if (cap - used < 8192 + 1) {
            size_t ncap = cap ? cap * 2 : 16384;
            char *nb = realloc(buf, ncap);
            if (!nb) {
                e = ENOMEM;
                break;
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t r = read(fd, buf + used, cap - 1 - used);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            e = errno;
            break;
        }
        if (r == 0)
            break;
        used += (size_t)r;
        if (used > max_bytes) {
            e = EFBIG;
            break;
        }
    }
    ph_own_fd_close(fd);
    if (e) {
        free(buf);
        if (e == EFBIG)
            return ph_fail_null(e, "%s: larger than the limit of %zu bytes", path,
                                max_bytes);
        if (e == ENOMEM)
            return ph_fail_null(e, "%s: out of memory reading it", path);
        return ph_fail_null(e, "%s: cannot read: %s", path, strerror(e));
    }
    buf[used] = '\0';
    *len = used;
    return buf;
}
