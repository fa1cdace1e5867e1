/*
 * test_syscalls.c -- system calls and stdio that copy into or out of
 * shared memory, on pages homed elsewhere (or at home) and never touched
 * by this rank before: pread, read (through _FORTIFY_SOURCE's __read_chk),
 * readv, fread on an unbuffered stream (glibc's own read straight into
 * the buffer, which no wrapper of read sees), recv on a socket pair into
 * them; pwrite, fwrite, send, writev out of pages another rank just
 * wrote.  Every mechanism must make them work: userfaultfd because the
 * kernel waits for the page, page protection (cluster_fault=sigsegv) and
 * a userfaultfd for user-mode faults only (an unprivileged user:
 * cluster.user_syscalls) because the library's wrappers make the pages
 * accessible first (cluster/syscalls.c).  What the kernel stored is seen
 * by every rank after a barrier.  A buffer in a freed allocation still
 * fails with EFAULT, and the process lives on.  A child of fork() is no
 * rank: read() into shared memory fails there with EFAULT and a touch of
 * it is a segfault -- never a hang (sigsegv mode: no service thread in
 * the child) nor a page the child fills behind the DSM's back (userfaultfd
 * is not inherited), which the parent would then map as its copy.
 *
 * Built with a distribution's flags (-O2 -D_FORTIFY_SOURCE=2
 * -D_FILE_OFFSET_BITS=64: pread is pread64 then).
 */
#include "common.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>

/* glibc declares it only under _FORTIFY_SOURCE */
extern ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);

#define PAGE 4096
#define PER_RANK 16 /* pages of the shared array per rank */

/* Region r's page k, as used below:
 *   0-1  pread          2  __read_chk      3-4  readv (two pieces)
 *   5-7  fread          8  recv
 *   9-12 written by the rank, then sent out by the next one with pwrite,
 *        fwrite, send, writev
 *   13   written by the rank, touched by the previous one's forked child */
static unsigned char *pg(unsigned char *p, int r, int k)
{
    return p + ((size_t)r * PER_RANK + (size_t)k) * PAGE;
}

static unsigned char pat(size_t i, int r)
{
    return (unsigned char)(i * 7 + (size_t)r * 13 + 1);
}

static unsigned char mine_pat(size_t i, int r, int k)
{
    return (unsigned char)(i ^ (size_t)(r * 31 + k));
}

/* bytes of s[0..n) that differ from pat(off + i, r) */
static size_t diff_pat(const unsigned char *s, size_t n, size_t off, int r)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += s[i] != pat(off + i, r);
    return bad;
}

int main(int argc, char **argv)
{
    cl_init(&argc, &argv);
    int me = ph_cluster_rank(), n = ph_cluster_nranks();
    ph_cluster_info_t info;
    ph_cluster_info(&info);
    if (me == 0)
        printf("syscalls: faults by %s\n", info.fault_mechanism);
    ph_placement_t pl;
    ph_placement_parse(&pl, "cyclic:1");
    unsigned char *p = ph_cluster_alloc((size_t)n * PER_RANK * PAGE, &pl);
    CHECK(p != NULL);
    if (!p)
        return cl_finish("syscalls");
    /* a file with a known pattern, one per rank */
    char path[256];
    snprintf(path, sizeof path, "%s/ph-syscalls-%d-%ld",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", me, (long)getpid());
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    static unsigned char buf[4 * PAGE];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = pat(i, me);
    CHECK(write(fd, buf, sizeof buf) == (ssize_t)sizeof buf);
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    ph_cluster_barrier();

    /* ---- the kernel writes shared pages -------------------------------- */
    errno = 0;
    CHECK_EQ(pread(fd, pg(p, me, 0), 2 * PAGE, 0), 2 * PAGE);
    volatile size_t len = PAGE; /* a size only known at run time */
    CHECK(lseek(fd, PAGE, SEEK_SET) == PAGE);
    CHECK_EQ(__read_chk(fd, pg(p, me, 2), len, len), PAGE);
    struct iovec iov[2] = {{pg(p, me, 3) + 100, 200}, {pg(p, me, 4), PAGE}};
    CHECK_EQ(preadv(fd, iov, 2, 0), 200 + PAGE);
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    if (f) {
        setvbuf(f, NULL, _IONBF, 0);
        CHECK_EQ(fread(pg(p, me, 5), PAGE, 3, f), 3);
        CHECK(!ferror(f));
        fclose(f);
    }
    CHECK(write(sv[0], buf, PAGE) == PAGE);
    size_t got = 0;
    while (got < PAGE) {
        ssize_t r = recv(sv[1], pg(p, me, 8) + got, PAGE - got, 0);
        CHECK(r > 0);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    /* the pages for the other direction */
    for (int k = 9; k <= 13; k++)
        for (size_t i = 0; i < PAGE; i++)
            pg(p, me, k)[i] = mine_pat(i, me, k);
    ph_cluster_barrier();

    /* every rank sees what every rank's kernel stored */
    for (int r = 0; r < n; r++) {
        CHECK_EQ(diff_pat(pg(p, r, 0), 2 * PAGE, 0, r), 0);
        CHECK_EQ(diff_pat(pg(p, r, 2), PAGE, PAGE, r), 0);
        CHECK_EQ(diff_pat(pg(p, r, 3) + 100, 200, 0, r), 0);
        CHECK_EQ(diff_pat(pg(p, r, 4), PAGE, 200, r), 0);
        CHECK_EQ(diff_pat(pg(p, r, 5), 3 * PAGE, 0, r), 0);
        CHECK_EQ(diff_pat(pg(p, r, 8), PAGE, 0, r), 0);
        size_t zero = 0; /* around the readv piece: untouched */
        for (size_t i = 0; i < 100; i++)
            zero += pg(p, r, 3)[i] != 0;
        CHECK_EQ(zero, 0);
    }
    ph_cluster_barrier();

    /* ---- the kernel reads shared pages the next rank wrote ------------- */
    int nx = (me + 1) % n;
    unsigned char back[PAGE];
    size_t bad;
#define CHECK_BACK(k)                                                        \
    do {                                                                     \
        bad = 0;                                                             \
        for (size_t i = 0; i < PAGE; i++)                                    \
            bad += back[i] != mine_pat(i, nx, (k));                          \
        CHECK_EQ(bad, 0);                                                    \
    } while (0)
    CHECK_EQ(pwrite(fd, pg(p, nx, 9), PAGE, 0), PAGE);
    CHECK(pread(fd, back, PAGE, 0) == PAGE);
    CHECK_BACK(9);
    f = fopen(path, "r+b");
    CHECK(f != NULL);
    if (f) {
        setvbuf(f, NULL, _IONBF, 0);
        CHECK_EQ(fwrite(pg(p, nx, 10), 1, PAGE, f), PAGE);
        CHECK(!ferror(f));
        fclose(f);
        CHECK(pread(fd, back, PAGE, 0) == PAGE);
        CHECK_BACK(10);
    }
    CHECK_EQ(send(sv[0], pg(p, nx, 11), PAGE, 0), PAGE);
    got = 0;
    while (got < PAGE) {
        ssize_t r = read(sv[1], back + got, PAGE - got);
        CHECK(r > 0);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    CHECK_BACK(11);
    struct iovec wv[2] = {{pg(p, nx, 12), PAGE / 2}, {pg(p, nx, 12) + PAGE / 2, PAGE / 2}};
    CHECK_EQ(pwritev(fd, wv, 2, 0), PAGE);
    CHECK(pread(fd, back, PAGE, 0) == PAGE);
    CHECK_BACK(12);
    ph_cluster_barrier();

    /* ---- a forked child: EFAULT and a segfault, never a hang ----------- */
    unsigned char *other = pg(p, nx, 13); /* never touched by this rank */
    pid_t pid = fork();
    if (pid == 0) {
        errno = 0;
        if (!(pread(fd, other, PAGE, 0) == -1 && errno == EFAULT))
            _exit(3);
        (void)*(volatile unsigned char *)other;
        _exit(4);
    }
    CHECK(pid > 0);
    int st = 0, waited = 0;
    for (int i = 0; pid > 0 && i < 2000 && !waited; i++) {
        waited = waitpid(pid, &st, WNOHANG) == pid;
        if (!waited)
            nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    if (pid > 0 && !waited) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
    }
    CHECK(waited);   /* 20 s: a child waiting for a fault that never ends */
    /* a segfault (or a sanitizer's report of one: exit 1); 3: the read
     * did not fail, 4: the touch did not fault */
    CHECK(!WIFEXITED(st) || (WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 3 &&
                             WEXITSTATUS(st) != 4));
    if (WIFEXITED(st) && (WEXITSTATUS(st) == 3 || WEXITSTATUS(st) == 4))
        fprintf(stderr, "rank %d: the forked child exited %d\n", me, WEXITSTATUS(st));
    bad = 0;
    for (size_t i = 0; i < PAGE; i++)
        bad += other[i] != mine_pat(i, nx, 13);
    CHECK_EQ(bad, 0);   /* the parent's copy is the writer's data */
    ph_cluster_barrier();

    /* ---- a buffer in no allocation: EFAULT, as without pagehome -------- */
    unsigned char *q = ph_cluster_alloc(2 * PAGE, &pl);
    CHECK(q != NULL);
    CHECK(ph_cluster_free(q) == 0);
    errno = 0;
    CHECK(pread(fd, q, PAGE, 0) == -1 && errno == EFAULT);
    errno = 0;
    CHECK(write(fd, q, PAGE) == -1 && errno == EFAULT);

    close(sv[0]);
    close(sv[1]);
    close(fd);
    unlink(path);
    ph_cluster_barrier();
    ph_cluster_free(p);
    return cl_finish("syscalls");
}
