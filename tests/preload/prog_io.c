/*
 * prog_io.c -- an unmodified program that does I/O straight into and out
 * of a large static array (which transparent mode watches: its pages are
 * protected).  read(2)/write(2)/pread/readv on such pages would fail with
 * EFAULT without pagehome's system-call guard.  Prints "prog_io: ok".
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define BYTES (4 << 20)

static unsigned char grid[BYTES];

static int fail(const char *what)
{
    perror(what);
    return 1;
}

int main(void)
{
    char path[] = "/tmp/prog_io_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return fail("mkstemp");
    unlink(path);
    unsigned char *src = malloc(BYTES);
    for (size_t i = 0; i < BYTES; i++)
        src[i] = (unsigned char)(i * 31 + 7);
    if (write(fd, src, BYTES) != BYTES)
        return fail("write from the heap");
    if (pread(fd, grid, BYTES, 0) != BYTES)
        return fail("pread into the static array");
    if (memcmp(grid, src, BYTES) != 0)
        return fail("pread data");
    memset(grid + 100, 0, 8192); /* touch a little, as programs do */
    if (pwrite(fd, grid, BYTES, 0) != BYTES)
        return fail("pwrite from the static array");
    struct iovec iov[2] = {{grid, BYTES / 2}, {grid + BYTES / 2, BYTES / 2}};
    if (lseek(fd, 0, SEEK_SET) != 0 || readv(fd, iov, 2) != BYTES)
        return fail("readv into the static array");
    if (lseek(fd, 0, SEEK_SET) != 0 || read(fd, grid, BYTES) != BYTES)
        return fail("read into the static array");
    for (size_t i = 0; i < BYTES; i++)
        if (grid[i] != ((i >= 100 && i < 100 + 8192) ? 0 : src[i]))
            return fail("read data");
    close(fd);
    free(src);
    printf("prog_io: ok\n");
    return 0;
}
