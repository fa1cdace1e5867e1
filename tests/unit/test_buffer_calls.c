/*
 * test_buffer_calls.c -- base/buffer_calls.h's wrappers, defined in this
 * program over a ph_bc_prepare that opens a PROT_NONE page only from its
 * k-th call on: the first real call fails with EFAULT and the wrapper
 * must prepare and call again (system calls and stdio, the part of a
 * stdio transfer already done kept); a page that never opens gives the
 * caller EFAULT after the bounded retries, or the kernel's short count
 * when the buffer starts on an open page; a stream that had an error
 * before is not retried; the _FORTIFY_SOURCE checkers check, then copy.
 */
#include "base/buffer_calls.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>

static int fails;
#define CHECK(c)                                                             \
    do {                                                                     \
        if (!(c)) {                                                          \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, \
                    #c);                                                     \
            fails++;                                                         \
        }                                                                    \
    } while (0)

#define PG 4096

static unsigned char *guarded;  /* 4 pages; page 2 is the trapping one */
static int prepares, open_at;   /* open page 2 at the open_at-th prepare */

static void ph_bc_prepare(const void *buf, size_t len, int kernel_writes)
{
    (void)kernel_writes;
    uintptr_t lo = (uintptr_t)buf, hi = lo + len;
    uintptr_t p2 = (uintptr_t)(guarded + 2 * PG);
    if (hi <= p2 || lo >= p2 + PG)
        return;
    if (++prepares == open_at)
        mprotect(guarded + 2 * PG, PG, PROT_READ | PROT_WRITE);
}

static void arm(int at)
{
    mprotect(guarded + 2 * PG, PG, PROT_NONE);
    prepares = 0;
    open_at = at;
}

static int tmpfile_with(const unsigned char *data, size_t n)
{
    char path[] = "/tmp/ph-bc-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        abort();
    unlink(path);
    if (data && write(fd, data, n) != (ssize_t)n)
        abort();
    return fd;
}

int main(void)
{
    guarded = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(guarded != MAP_FAILED);
    static unsigned char data[4 * PG];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (unsigned char)(i * 5 + 3);
    int fd = tmpfile_with(data, sizeof data);

    /* pread into pages 2-3: EFAULT once, then the whole read.  (A call
     * whose buffer starts on an open page copies up to the closed one and
     * returns that short count: the kernel's EFAULT comes only when
     * nothing was copied.) */
    memset(guarded, 0, 4 * PG);
    arm(2);
    CHECK(pread(fd, guarded + 2 * PG, 2 * PG, 0) == 2 * PG);
    CHECK(prepares == 2);
    CHECK(memcmp(guarded + 2 * PG, data, 2 * PG) == 0);

    /* a page that never opens: EFAULT after 1 + PH_BC_RETRIES calls,
     * errno as the kernel left it */
    arm(0);
    errno = 0;
    CHECK(pread(fd, guarded + 2 * PG, PG, 0) == -1 && errno == EFAULT);
    CHECK(prepares == 1 + PH_BC_RETRIES);

    /* a buffer that starts on an open page: the kernel copies up to the
     * closed one and returns that short count, which is not retried */
    arm(0);
    CHECK(pread(fd, guarded + PG, 2 * PG, 0) == PG);
    CHECK(prepares == 1);

    /* the 64-bit-offset and vector names */
    arm(2);
    CHECK(pread64(fd, guarded + 2 * PG, PG, PG) == PG);
    CHECK(memcmp(guarded + 2 * PG, data + PG, PG) == 0);
    arm(2);
    struct iovec iov[2] = {{guarded + 2 * PG, PG}, {guarded, 10}};
    CHECK(preadv(fd, iov, 2, 0) == PG + 10);
    CHECK(memcmp(guarded + 2 * PG, data, PG) == 0);
    CHECK(memcmp(guarded, data + PG, 10) == 0);
    CHECK(prepares == 2);
    arm(2);
    CHECK(pwrite64(fd, guarded + 2 * PG, PG, 3 * PG) == PG);

    /* a socket pair: send from, recv into the trapping page */
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    arm(2);
    CHECK(send(sv[0], data, 100, 0) == 100);
    CHECK(recv(sv[1], guarded + 2 * PG, 100, 0) == 100);
    CHECK(memcmp(guarded + 2 * PG, data, 100) == 0);
    arm(2);
    CHECK(send(sv[0], guarded + 2 * PG, 100, 0) == 100);
    unsigned char small[100];
    CHECK(recv(sv[1], small, 100, 0) == 100);
    CHECK(memcmp(small, data, 100) == 0);
    close(sv[0]);
    close(sv[1]);

    /* fread, unbuffered (glibc reads straight into the buffer): pages 1-2
     * from offset 0.  The first call reads page 1 (a short read), then
     * stops at page 2 with the stream's error set; the wrapper clears it
     * and asks for the rest, twice: page 2 opens at the third prepare */
    arm(3);
    memset(guarded, 0, 2 * PG);
    FILE *f = fdopen(dup(fd), "rb");
    CHECK(f != NULL);
    setvbuf(f, NULL, _IONBF, 0);
    CHECK(fseek(f, 0, SEEK_SET) == 0);
    CHECK(fread(guarded + PG, 8, 2 * PG / 8, f) == 2 * PG / 8);
    CHECK(!ferror(f));
    CHECK(memcmp(guarded + PG, data, 2 * PG) == 0);
    CHECK(ftell(f) == 2 * PG);
    CHECK(prepares == 3);
    /* a page that never opens: the stream's error stays; a stream that
     * had an error before the call is not retried */
    arm(0);
    CHECK(fread(guarded + 2 * PG, 1, PG, f) == 0);
    CHECK(ferror(f) && prepares == 1 + PH_BC_RETRIES);
    arm(2);
    CHECK(fread(guarded + 2 * PG, 1, PG, f) == 0);
    CHECK(ferror(f) && prepares == 1);
    fclose(f);

    /* fwrite, unbuffered, from the trapping page */
    arm(2);
    f = fdopen(dup(fd), "r+b");
    CHECK(f != NULL);
    setvbuf(f, NULL, _IONBF, 0);
    CHECK(fseek(f, 0, SEEK_SET) == 0);
    memset(guarded + PG, 0x5a, PG);
    CHECK(fwrite(guarded + PG, 1, 2 * PG, f) == 2 * PG);
    CHECK(!ferror(f));
    fclose(f);
    unsigned char back[2 * PG];
    CHECK(pread(fd, back, sizeof back, 0) == (ssize_t)sizeof back);
    CHECK(memcmp(back, guarded + PG, 2 * PG) == 0);

    /* the checkers: a size within the object copies, one beyond it is
     * glibc's "buffer overflow detected" (SIGABRT) */
    arm(2);
    CHECK(lseek(fd, 0, SEEK_SET) == 0);
    CHECK(__read_chk(fd, guarded + 2 * PG, PG, PG) == PG);
    CHECK(memcmp(guarded + 2 * PG, back, PG) == 0 && prepares == 2);
    arm(2);
    CHECK(__pread64_chk(fd, guarded + 2 * PG, PG, PG, PG) == PG);
    CHECK(memcmp(guarded + 2 * PG, back + PG, PG) == 0 && prepares == 2);
    f = fdopen(dup(fd), "rb");
    CHECK(f != NULL);
    CHECK(__fread_chk(small, sizeof small, 10, 10, f) == 10);
    fclose(f);
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 2);
        __read_chk(fd, small, sizeof small + 1, sizeof small);
        _exit(0);
    }
    int st = 0;
    CHECK(waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);

    close(fd);
    if (fails) {
        fprintf(stderr, "test_buffer_calls: %d failure(s)\n", fails);
        return 1;
    }
    printf("test_buffer_calls: ok\n");
    return 0;
}
