/*
 * test_syscalls.c -- system calls that read into or write from shared
 * memory: read(2) into pages homed elsewhere (and never touched here) and
 * into home pages, write(2) from remote pages, pread into a page being
 * written by a local thread's twin.  With userfaultfd the kernel waits for
 * the page and they work; with page protection (cluster_fault=sigsegv) a
 * system call on an inaccessible page fails with EFAULT, as documented --
 * the test checks that too.
 */
#include "common.h"

#include <fcntl.h>

#define PAGE 4096

int main(int argc, char **argv)
{
    cl_init(&argc, &argv);
    int me = ph_cluster_rank(), n = ph_cluster_nranks();
    ph_cluster_info_t info;
    ph_cluster_info(&info);
    int uffd = strcmp(info.fault_mechanism, "userfaultfd") == 0;
    ph_placement_t pl;
    ph_placement_parse(&pl, "cyclic:1");
    size_t pages = 4 * (size_t)n;
    unsigned char *p = ph_cluster_alloc(pages * PAGE, &pl);
    CHECK(p != NULL);
    if (!p)
        return cl_finish("syscalls");
    /* a file with a known pattern, one per rank */
    char path[256];
    snprintf(path, sizeof path, "%s/ph-syscalls-%d-%ld",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", me, (long)getpid());
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    unsigned char buf[2 * PAGE];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (unsigned char)(i * 7 + (size_t)me);
    CHECK(write(fd, buf, sizeof buf) == (ssize_t)sizeof buf);
    ph_cluster_barrier();
    /* rank r reads into page 4r + 1 (homed at (4r+1) % n) and 4r + 2,
     * never touched before on this rank */
    unsigned char *dst = p + ((size_t)me * 4 + 1) * PAGE;
    errno = 0;
    ssize_t got = pread(fd, dst, 2 * PAGE, 0);
    if (uffd) {
        CHECK_EQ(got, 2 * PAGE);
        CHECK(memcmp(dst, buf, 2 * PAGE) == 0);
    } else {
        /* page protection: the kernel cannot fault the page in */
        CHECK(got == -1 && errno == EFAULT);
        memcpy(dst, buf, 2 * PAGE);      /* the program's own access works */
    }
    ph_cluster_barrier();
    /* everybody sees what rank r read */
    for (int r = 0; r < n; r++) {
        unsigned char *s = p + ((size_t)r * 4 + 1) * PAGE;
        size_t bad = 0;
        for (size_t i = 0; i < 2 * PAGE; i++)
            bad += s[i] != (unsigned char)(i * 7 + (size_t)r);
        CHECK_EQ(bad, 0);
    }
    ph_cluster_barrier();
    /* write(2) from a remote page this rank has not touched since the
     * barrier invalidated nothing... use the next rank's page 4r+3 after
     * that rank wrote it */
    int nx = (me + 1) % n;
    unsigned char *mine = p + ((size_t)me * 4 + 3) * PAGE;
    for (size_t i = 0; i < PAGE; i++)
        mine[i] = (unsigned char)(i ^ (size_t)me);
    ph_cluster_barrier();
    unsigned char *src = p + ((size_t)nx * 4 + 3) * PAGE;
    errno = 0;
    ssize_t put = pwrite(fd, src, PAGE, 0);
    if (uffd || n == 1) {
        CHECK_EQ(put, PAGE);
        unsigned char back[PAGE];
        CHECK(pread(fd, back, PAGE, 0) == PAGE);
        size_t bad = 0;
        for (size_t i = 0; i < PAGE; i++)
            bad += back[i] != (unsigned char)(i ^ (size_t)nx);
        CHECK_EQ(bad, 0);
    } else {
        CHECK(put == -1 && errno == EFAULT);
    }
    close(fd);
    unlink(path);
    ph_cluster_barrier();
    ph_cluster_free(p);
    return cl_finish("syscalls");
}
