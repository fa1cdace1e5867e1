/*
 * nettest.c -- the namespace cluster's own check: which host each rank is
 * on, point-to-point and one-sided MPI across the hosts, and the bandwidth
 * between two hosts.
 *
 *   nettest [--bytes N] [--reps R] [--win create|allocate] [--thread serialized|multiple]
 *
 * Every rank reports its host name, the inode of its network namespace
 * (/proc/self/ns/net) and its first non-loopback IPv4 address; rank 0
 * prints one line per rank, then
 *   - a ring: a token passed once around all ranks with MPI_Send/MPI_Recv,
 *     each adding its rank (the sum must be n(n-1)/2);
 *   - RMA inside one MPI_Win_lock_all epoch: every rank MPI_Puts a page
 *     pattern into its right neighbour's window and flushes, then reads it
 *     back with MPI_Get; after a barrier and MPI_Win_sync each rank checks
 *     the page its left neighbour put; every rank adds 1 to a counter on
 *     rank 0 with MPI_Fetch_and_op (the total must be n);
 *   - bandwidth: rank 0 sends N bytes (default 1 MiB) R times to the
 *     first rank in another network namespace (else rank n-1), which
 *     answers with one byte at the end; bits over wall time.
 * Lines are "nettest: KEY ..." so scripts can grep them; any check that
 * fails prints "nettest: FAILED ..." and exits 1.
 */
#include <mpi.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAGE_BYTES 4096
#define WIN_PAGES 4
#define ID_LEN 192

static int rank, nranks;

static void fail(const char *what)
{
    fprintf(stderr, "nettest: FAILED rank %d: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void first_ipv4(char *out, size_t len)
{
    struct ifaddrs *ifa = NULL, *p;
    snprintf(out, len, "none");
    if (getifaddrs(&ifa) != 0)
        return;
    for (p = ifa; p; p = p->ifa_next) {
        if (!p->ifa_addr || p->ifa_addr->sa_family != AF_INET || (p->ifa_flags & IFF_LOOPBACK))
            continue;
        inet_ntop(AF_INET, &((struct sockaddr_in *)(void *)p->ifa_addr)->sin_addr, out,
                  (socklen_t)len);
        break;
    }
    freeifaddrs(ifa);
}

static unsigned long netns_inode(void)
{
    struct stat st;
    return stat("/proc/self/ns/net", &st) == 0 ? (unsigned long)st.st_ino : 0;
}

static void fill(unsigned char *page, int who, int k)
{
    for (int i = 0; i < PAGE_BYTES; i++)
        page[i] = (unsigned char)(who * 31 + k * 7 + i);
}

static int check(const unsigned char *page, int who, int k)
{
    for (int i = 0; i < PAGE_BYTES; i++)
        if (page[i] != (unsigned char)(who * 31 + k * 7 + i))
            return -1;
    return 0;
}

static void ring(void)
{
    long token = 0;
    if (nranks == 1) {
        printf("nettest: ring ok 1 rank\n");
        return;
    }
    if (rank == 0) {
        MPI_Send(&token, 1, MPI_LONG, 1, 1, MPI_COMM_WORLD);
        MPI_Recv(&token, 1, MPI_LONG, nranks - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (token != (long)nranks * (nranks - 1) / 2)
            fail("ring: wrong token sum");
        printf("nettest: ring ok sum=%ld\n", token);
    } else {
        MPI_Recv(&token, 1, MPI_LONG, rank - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        token += rank;
        MPI_Send(&token, 1, MPI_LONG, (rank + 1) % nranks, 1, MPI_COMM_WORLD);
    }
}

static void rma(int allocate)
{
    MPI_Win win;
    unsigned char *base;
    /* whole pages, the counter on the last one: MPICH 4.0.2 misplaces the
     * other ranks' memory of a shared-memory MPI_Win_allocate window whose
     * size is not a multiple of the page size (README.md) */
    MPI_Aint bytes = (MPI_Aint)(WIN_PAGES + 1) * PAGE_BYTES;
    if (allocate) {
        if (MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win) != MPI_SUCCESS)
            fail("MPI_Win_allocate");
    } else {
        if (MPI_Alloc_mem(bytes, MPI_INFO_NULL, &base) != MPI_SUCCESS)
            fail("MPI_Alloc_mem");
        if (MPI_Win_create(base, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win) != MPI_SUCCESS)
            fail("MPI_Win_create");
    }
    memset(base, 0, (size_t)bytes);
    long *counter = (long *)(void *)(base + (size_t)WIN_PAGES * PAGE_BYTES);
    MPI_Barrier(MPI_COMM_WORLD);

    int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
    unsigned char *buf = malloc(PAGE_BYTES), *back = malloc(PAGE_BYTES);
    if (!buf || !back)
        fail("malloc");
    MPI_Win_lock_all(0, win);
    for (int k = 0; k < WIN_PAGES; k++) {
        fill(buf, rank, k);
        MPI_Put(buf, PAGE_BYTES, MPI_BYTE, right, (MPI_Aint)k * PAGE_BYTES, PAGE_BYTES,
                MPI_BYTE, win);
        MPI_Win_flush(right, win);
        MPI_Get(back, PAGE_BYTES, MPI_BYTE, right, (MPI_Aint)k * PAGE_BYTES, PAGE_BYTES,
                MPI_BYTE, win);
        MPI_Win_flush(right, win);
        if (check(back, rank, k) != 0)
            fail("MPI_Get did not return what MPI_Put wrote");
    }
    long one = 1, old = -1;
    MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, (MPI_Aint)WIN_PAGES * PAGE_BYTES, MPI_SUM, win);
    MPI_Win_flush(0, win);
    if (old < 0 || old >= nranks)
        fail("MPI_Fetch_and_op returned an impossible value");
    MPI_Win_sync(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(win);
    for (int k = 0; k < WIN_PAGES; k++)
        if (check(base + (size_t)k * PAGE_BYTES, left, k) != 0)
            fail("the left neighbour's MPI_Put is not in the window");
    if (rank == 0 && *counter != nranks)
        fail("MPI_Fetch_and_op total is not the number of ranks");
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    if (!allocate)
        MPI_Free_mem(base);
    free(buf);
    free(back);
    if (rank == 0)
        printf("nettest: rma ok win=%s pages=%d fetch_and_op=%d\n",
               allocate ? "allocate" : "create", WIN_PAGES, nranks);
}

static void bandwidth(const unsigned long *ns, long bytes, int reps)
{
    int peer = nranks - 1;
    for (int r = 1; r < nranks; r++)
        if (ns[r] != ns[0]) {
            peer = r;
            break;
        }
    if (nranks == 1)
        return;
    char *buf = malloc((size_t)bytes);
    if (!buf)
        fail("malloc");
    memset(buf, rank, (size_t)bytes);
    char ack = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        /* one warm-up message opens the connection */
        MPI_Send(buf, 1, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
        MPI_Recv(&ack, 1, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double t0 = MPI_Wtime();
        for (int i = 0; i < reps; i++)
            MPI_Send(buf, (int)bytes, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
        MPI_Recv(&ack, 1, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double s = MPI_Wtime() - t0;
        printf("nettest: bandwidth from=0 to=%d other_netns=%d bytes=%ld reps=%d "
               "seconds=%.6f mbit=%.1f\n",
               peer, ns[peer] != ns[0], bytes, reps, s, (double)bytes * reps * 8 / s / 1e6);
    } else if (rank == peer) {
        MPI_Recv(buf, 1, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&ack, 1, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
        for (int i = 0; i < reps; i++)
            MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&ack, 1, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
    }
    free(buf);
}

int main(int argc, char **argv)
{
    long bytes = 1L << 20;
    int reps = 4, allocate = 1, want = MPI_THREAD_SERIALIZED;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--bytes") == 0 && i + 1 < argc)
            bytes = atol(argv[++i]);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--win") == 0 && i + 1 < argc)
            allocate = strcmp(argv[++i], "create") != 0;
        else if (strcmp(argv[i], "--thread") == 0 && i + 1 < argc)
            want = strcmp(argv[++i], "multiple") == 0 ? MPI_THREAD_MULTIPLE
                                                      : MPI_THREAD_SERIALIZED;
        else {
            fprintf(stderr, "usage: nettest [--bytes N] [--reps R] [--win create|allocate] "
                            "[--thread serialized|multiple]\n");
            return 2;
        }
    }
    if (bytes < 1 || bytes > (1L << 30) || reps < 1) {
        fprintf(stderr, "nettest: --bytes must be 1..1G and --reps >= 1\n");
        return 2;
    }
    int got;
    MPI_Init_thread(&argc, &argv, want, &got);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    char id[ID_LEN], host[64] = "?", addr[64];
    gethostname(host, sizeof host - 1);
    first_ipv4(addr, sizeof addr);
    unsigned long ns = netns_inode();
    snprintf(id, sizeof id, "host=%s netns=%lu addr=%s", host, ns, addr);
    char *ids = rank == 0 ? malloc((size_t)nranks * ID_LEN) : NULL;
    unsigned long *nss = malloc((size_t)nranks * sizeof *nss);
    if ((rank == 0 && !ids) || !nss)
        fail("malloc");
    MPI_Gather(id, ID_LEN, MPI_CHAR, ids, ID_LEN, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Allgather(&ns, 1, MPI_UNSIGNED_LONG, nss, 1, MPI_UNSIGNED_LONG, MPI_COMM_WORLD);
    if (rank == 0) {
        char version[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(version, &len);
        version[strcspn(version, "\n")] = '\0';
        int distinct = 0;
        for (int r = 0; r < nranks; r++) {
            int seen = 0;
            for (int q = 0; q < r; q++)
                seen |= nss[q] == nss[r];
            distinct += !seen;
            printf("nettest: rank %d %s\n", r, ids + (size_t)r * ID_LEN);
        }
        printf("nettest: ranks=%d netns=%d thread=%s library=%s\n", nranks, distinct,
               got >= MPI_THREAD_MULTIPLE ? "multiple" : got >= MPI_THREAD_SERIALIZED
                                                             ? "serialized" : "lower",
               version);
        fflush(stdout);
    }
    ring();
    rma(allocate);
    bandwidth(nss, bytes, reps);
    free(ids);
    free(nss);
    MPI_Finalize();
    return 0;
}
