/*
 * prog_robust.c -- an unmodified OpenMP program that does what ordinary
 * programs do with their large arrays, one item per argument; each item
 * prints "prog_robust ITEM: ok" or says what went wrong and exits 1.  Run
 * under `pagehome run` (tests/preload/check_robust.sh) in every mechanism
 * and sample_mechanism, on this machine and on a simulated 4-node one.
 * The arrays are watched by pagehome: an 8 MiB static one (.bss), a 4 MiB
 * initialised one (.data) and an 8 MiB heap one; parallel loops between
 * the steps give the engine iterations, so that pages are watched when
 * the serial code (and the kernel on its behalf) touches them.
 *
 * Items (the numbers of the issue):
 *   stdio     1  fwrite/fread of the arrays between parallel loops
 *   entry     2  pread (pread64), read/pread/recv (the _chk variants under
 *                _FORTIFY_SOURCE), preadv, syscall(SYS_read)
 *   shortread 2  read() into the arrays 100 times, never short
 *   syscalls  3  19 system calls whose buffers lie in the arrays
 *   sigblock  4  every signal blocked (the sigwait pattern)
 *   crash     6  a SIGSEGV handler installed by signal (strict ISO C:
 *                __sysv_signal), sigset and bsd_signal sees no trap of
 *                pagehome's, and still sees the program's own fault
 *   stacks    7  pthreads with 16 KiB stacks touching the arrays
 *   mprotect  8  the program's guard page and read-only page stay so
 *   mremap    9  mremap of part of a large mapping
 *   inregion  1  fread/fwrite inside a parallel region (omp single)
 *   churn    10  2 MiB buffers allocated, filled and freed in a loop;
 *                calloc after a free of the same size; realloc growth in
 *                64 KiB steps; realloc in place then growth; the bytes
 *                malloc_usable_size gives; aligned blocks
 *   closeall 11  descriptors the program did not open closed while the
 *                arrays are watched (a close() loop up to the limit,
 *                closefrom, close_range), files opened afterwards (on the
 *                freed numbers) keep their bytes; a descriptor of
 *                pagehome's (an anon_inode:[userfaultfd] the program never
 *                opened) stays open after close() and refuses dup2
 *   discard  12  madvise(MADV_DONTNEED) of watched pages (an mmap'd array,
 *                the heap one, the static one; whole or in part) reads
 *                zeros after, the rest keeps its bytes; MADV_FREE then
 *                written keeps what was written
 *   lock     13  mlockall(MCL_CURRENT | MCL_FUTURE) while the arrays are
 *                watched returns (every mapping is populated, pagehome's
 *                own included), an array allocated after it is watched
 *                and keeps its bytes, munlock and mlock of part of an
 *                array between steps, munlockall; each step's bytes kept
 *                (a step that hangs ends the program by alarm); 77
 *                where mlockall is not permitted
 *   async    --  transfers the kernel makes while the program goes on:
 *                POSIX AIO (aio_read, lio_listio LIO_WRITE; an aio_write
 *                checkpoint of the static array in flight across
 *                parallel regions that read it; aio_read from an omp
 *                single inside a region), preadv2/pwritev2,
 *                sendmmsg/recvmmsg, an io_uring read from serial code
 *                (where the kernel offers io_uring)
 */
#define _GNU_SOURCE
#include <aio.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <malloc.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PG 4096
#define SN (8 << 20)
#define DN (4 << 20)
#define HN (8 << 20)

static unsigned char sgrid[SN];
static unsigned char dgrid[DN] = {1};
static unsigned char *hgrid;
static const char *item = "?";
/* Sizes the compiler cannot see through: with _FORTIFY_SOURCE, reads into
 * arrays of known size then go through __read_chk, __pread64_chk,
 * __recv_chk. */
static volatile size_t v_sn = SN, v_dn = DN, v_256 = 256;

typedef void (*iso_handler)(int);
iso_handler prog_robust_iso_signal(int sig, iso_handler h);
extern void (*bsd_signal(int, void (*)(int)))(int);

static int bad(const char *what)
{
    fprintf(stderr, "prog_robust %s: FAILED: %s (errno %d: %s)\n", item, what, errno,
            strerror(errno));
    exit(1);
}

#define NEED(cond, what) ((cond) ? (void)0 : (void)bad(what))

/* A parallel loop over every page of the arrays: the engine's iteration. */
static void stir(int round)
{
#pragma omp parallel for schedule(static)
    for (long p = 0; p < SN / PG; p++) {
        sgrid[p * PG + PG - 1] = (unsigned char)(round + p);
        hgrid[p * PG + PG - 1] = (unsigned char)(round - p);
        if (p < DN / PG)
            dgrid[p * PG + PG - 1] = (unsigned char)(round * 3 + p);
    }
}

static uint64_t sum(const unsigned char *a, size_t n)
{
    uint64_t s = 0;
    for (size_t i = 0; i < n; i += 8)
        s = s * 31 + a[i];
    return s;
}

static int tmpfd(void)
{
    char path[] = "/tmp/prog_robust_XXXXXX";
    int fd = mkstemp(path);
    NEED(fd >= 0, "mkstemp");
    unlink(path);
    return fd;
}

/* ---- 1: stdio between and inside parallel loops --------------------------- */

static void stdio_round(int round, unsigned char *a, size_t n)
{
    FILE *f = tmpfile();
    NEED(f != NULL, "tmpfile");
    uint64_t before = sum(a, n);
    stir(round);
    NEED(fwrite(a, 1, n, f) == n, "fwrite count");
    NEED(fflush(f) == 0, "fflush");
    rewind(f);
    uint64_t written = sum(a, n);
    (void)before;
    stir(round + 1);
    NEED(fread(a, 1, n, f) == n, "fread count");
    NEED(sum(a, n) == written, "fread data");
    fclose(f);
}

static void do_stdio(void)
{
    for (int r = 0; r < 8; r++) {
        stdio_round(r, sgrid, SN);
        stdio_round(r, hgrid, HN);
        stdio_round(r, dgrid, DN);
    }
}

static void do_inregion(void)
{
    for (int r = 0; r < 8; r++) {
        stir(r);
        int ok = 1;
#pragma omp parallel
        {
#pragma omp for
            for (long p = 0; p < SN / PG; p++)
                sgrid[p * PG + 2] = (unsigned char)p;
#pragma omp single
            {
                FILE *f = tmpfile();
                uint64_t w = sum(hgrid, HN);
                ok &= f && fwrite(hgrid, 1, HN, f) == HN;
                if (f) {
                    rewind(f);
                    memset(hgrid, 0, PG);
                    ok &= fread(hgrid, 1, HN, f) == HN && sum(hgrid, HN) == w;
                    fclose(f);
                }
            }
        }
        NEED(ok, "fread/fwrite inside a parallel region");
    }
}

/* ---- 2: other entry points ------------------------------------------------------ */

static void do_entry(void)
{
    int fd = tmpfd();
    memset(hgrid, 0x5a, HN);
    NEED(write(fd, hgrid, HN) == HN, "write");
    int sv[2];
    NEED(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
    for (int r = 0; r < 8; r++) {
        stir(r);
        NEED(pread(fd, sgrid, SN, 0) == SN, "pread (pread64)");
        stir(r);
        NEED(lseek(fd, 0, SEEK_SET) == 0, "lseek");
        NEED(read(fd, sgrid, v_sn) == (ssize_t)SN, "read (__read_chk)");
        stir(r);
        NEED(pread(fd, dgrid, v_dn, 4096) == (ssize_t)DN, "pread (__pread64_chk)");
        stir(r);
        struct iovec iov[2] = {{sgrid, SN / 2}, {hgrid + HN / 2, HN / 2}};
        NEED(preadv(fd, iov, 2, 0) == SN / 2 + HN / 2, "preadv");
        stir(r);
        NEED(lseek(fd, 0, SEEK_SET) == 0, "lseek");
        NEED(syscall(SYS_read, fd, sgrid, (size_t)SN) == SN, "syscall(SYS_read)");
        NEED(sgrid[12345] == 0x5a, "data read");
        stir(r);
        NEED(send(sv[0], sgrid + 3 * PG, 256, 0) == 256, "send");
        NEED(recv(sv[1], dgrid + 5 * PG, v_256, 0) == 256, "recv (__recv_chk)");
    }
    close(sv[0]);
    close(sv[1]);
    close(fd);
}

static void do_shortread(void)
{
    int fd = tmpfd();
    memset(hgrid, 0x33, HN);
    NEED(write(fd, hgrid, HN) == HN, "write");
    int shorts = 0;
    for (int r = 0; r < 100; r++) {
        stir(r);
        ssize_t k = pread(fd, sgrid, SN, 0);
        shorts += k != SN;
        stir(r);
        NEED(lseek(fd, 0, SEEK_SET) == 0, "lseek");
        k = read(fd, hgrid, HN);
        shorts += k != HN;
    }
    if (shorts) {
        fprintf(stderr, "prog_robust shortread: %d short reads in 200\n", shorts);
        exit(1);
    }
    close(fd);
}

/* ---- 3: nineteen system calls ------------------------------------------------------ */

static unsigned char *page(int k)
{
    return sgrid + (size_t)(64 + k * 3) * PG; /* distinct, spread pages */
}

static void do_syscalls(void)
{
    int fd = tmpfd();
    NEED(write(fd, "abcdefgh", 8) == 8, "write");
    for (int r = 0; r < 6; r++) {
        stir(r);
        NEED(getrandom(page(0), 64, 0) == 64, "getrandom");
        stir(r);
        NEED(stat("/", (struct stat *)(void *)page(1)) == 0, "stat");
        stir(r);
        NEED(fstat(fd, (struct stat *)(void *)page(2)) == 0, "fstat");
        stir(r);
        NEED(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, (struct timespec *)(void *)page(3)) == 0,
             "clock_gettime(CLOCK_PROCESS_CPUTIME_ID)");
        stir(r);
        NEED(getcwd((char *)page(4), PG / 2) != NULL, "getcwd");
        stir(r);
        NEED(readlink("/proc/self/exe", (char *)page(5), PG / 2) > 0, "readlink");
        stir(r);
        NEED(uname((struct utsname *)(void *)page(6)) == 0, "uname");
        stir(r);
        NEED(getrusage(RUSAGE_SELF, (struct rusage *)(void *)page(7)) == 0, "getrusage");
        stir(r);
        NEED(sysinfo((struct sysinfo *)(void *)page(8)) == 0, "sysinfo");
        stir(r);
        int *pp = (int *)(void *)page(9);
        NEED(pipe(pp) == 0, "pipe");
        stir(r);
        NEED(sigprocmask(SIG_BLOCK, NULL, (sigset_t *)(void *)page(10)) == 0, "sigprocmask");
        stir(r);
        pid_t pid = fork();
        if (pid == 0)
            _exit(7);
        NEED(waitpid(pid, (int *)(void *)page(11), 0) == pid &&
                 WEXITSTATUS(*(int *)(void *)page(11)) == 7, "waitpid");
        stir(r);
        NEED(sched_getaffinity(0, sizeof(cpu_set_t), (cpu_set_t *)(void *)page(12)) == 0,
             "sched_getaffinity");
        stir(r);
        int ep = epoll_create1(0);
        struct epoll_event ev = {.events = EPOLLIN};
        NEED(write(pp[1], "x", 1) == 1, "write pipe");
        NEED(epoll_ctl(ep, EPOLL_CTL_ADD, pp[0], &ev) == 0, "epoll_ctl");
        NEED(epoll_wait(ep, (struct epoll_event *)(void *)page(13), 4, 1000) == 1, "epoll_wait");
        close(ep);
        stir(r);
        int dfd = open("/", O_RDONLY | O_DIRECTORY);
        NEED(syscall(SYS_getdents64, dfd, page(14), PG / 2) > 0, "getdents64");
        close(dfd);
        stir(r);
        struct iovec iov = {page(15), 8};
        NEED(pwritev(fd, &iov, 1, 0) == 8, "pwritev");
        stir(r);
        int sv[2];
        NEED(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) == 0, "socketpair");
        struct iovec si = {page(16), 128};
        struct msghdr mh = {.msg_iov = &si, .msg_iovlen = 1};
        NEED(sendmsg(sv[0], &mh, 0) == 128, "sendmsg");
        stir(r);
        struct iovec ri = {page(17), 128};
        struct msghdr rh = {.msg_iov = &ri, .msg_iovlen = 1};
        NEED(recvmsg(sv[1], &rh, 0) == 128, "recvmsg");
        close(sv[0]);
        close(sv[1]);
        close(pp[0]);
        close(pp[1]);
    }
    close(fd);
}

/* ---- 4: every signal blocked -------------------------------------------------------- */

static void *send_usr1(void *arg)
{
    (void)arg;
    usleep(100000);
    kill(getpid(), SIGUSR1);
    return NULL;
}

static void do_sigblock(void)
{
    sigset_t all;
    sigfillset(&all);
    NEED(pthread_sigmask(SIG_BLOCK, &all, NULL) == 0, "pthread_sigmask");
    for (int r = 0; r < 20; r++)
        stir(r);
    sigset_t now;
    NEED(pthread_sigmask(SIG_BLOCK, NULL, &now) == 0, "pthread_sigmask read");
    NEED(sigismember(&now, SIGSEGV) == 1, "the program's own mask shows SIGSEGV blocked");
    pthread_t t;
    pthread_create(&t, NULL, send_usr1, NULL);
    sigset_t w;
    sigemptyset(&w);
    sigaddset(&w, SIGUSR1);
    int sig = 0;
    NEED(sigwait(&w, &sig) == 0 && sig == SIGUSR1, "sigwait");
    pthread_join(t, NULL);
    for (int r = 0; r < 5; r++)
        stir(r);
}

/* ---- 6: crash handlers ------------------------------------------------------------- */

static volatile sig_atomic_t crashes;
static sigjmp_buf crash_jmp;

static void crash_handler(int sig)
{
    (void)sig;
    crashes++;
    siglongjmp(crash_jmp, 1);
}

static void crash_with(const char *how)
{
    crashes = 0;
    if (strcmp(how, "signal") == 0)
        prog_robust_iso_signal(SIGSEGV, crash_handler);
    else if (strcmp(how, "sigset") == 0) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
        sigset(SIGSEGV, crash_handler);
#pragma GCC diagnostic pop
    }
    else
        bsd_signal(SIGSEGV, crash_handler);
    if (sigsetjmp(crash_jmp, 1) == 0) {
        for (int r = 0; r < 20; r++) {
            stir(r);
            uint64_t s = sum(sgrid, SN) + sum(hgrid, HN); /* serial reads */
            (void)s;
        }
    }
    if (crashes) {
        fprintf(stderr, "prog_robust crash: the handler installed by %s saw %d fault(s) "
                "that were not the program's\n", how, (int)crashes);
        exit(1);
    }
    /* the program's own fault still reaches it */
    unsigned char *guard = mmap(NULL, PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (sigsetjmp(crash_jmp, 1) == 0)
        *(volatile unsigned char *)guard = 1;
    NEED(crashes == 1, "the program's own fault reached its handler");
    munmap(guard, PG);
    signal(SIGSEGV, SIG_DFL);
}

static void do_crash(void)
{
    crash_with("signal");
    crash_with("sigset");
    crash_with("bsd_signal");
}

/* ---- 7: small stacks ----------------------------------------------------------------- */

/* Sweep the arrays from `depth` KiB down the thread's stack: a thread
 * with a small stack that has used most of it, as deep call chains do. */
static unsigned sweep_deep(long t, int depth)
{
    volatile unsigned char pad[1000];
    __asm__ volatile("" : : "r"(pad) : "memory"); /* keeps the whole frame */
    pad[0] = (unsigned char)depth;
    if (depth > 0)
        return sweep_deep(t, depth - 1) + pad[0];
    unsigned s = 0;
    for (int r = 0; r < 300; r++)
        for (long p = t; p < SN / PG; p += 4) {
            s += sgrid[p * PG + 5];
            hgrid[p * PG + 5] = (unsigned char)(s + (unsigned)r);
        }
    return s;
}

static volatile int stack_kib = 10;

static void *small_thread(void *arg)
{
    return (void *)(uintptr_t)sweep_deep((long)arg, stack_kib);
}

static void do_stacks(void)
{
    for (int r = 0; r < 4; r++) {
        stir(r);
        pthread_attr_t a;
        pthread_attr_init(&a);
        NEED(pthread_attr_setstacksize(&a, 16384) == 0, "16 KiB stacks");
        pthread_t th[4];
        for (long t = 0; t < 4; t++)
            NEED(pthread_create(&th[t], &a, small_thread, (void *)t) == 0, "pthread_create");
        for (int t = 0; t < 4; t++)
            pthread_join(th[t], NULL);
        pthread_attr_destroy(&a);
    }
}

/* ---- 8: the program's own protections ----------------------------------------------- */

static volatile sig_atomic_t guard_faults;
static sigjmp_buf guard_jmp;

static void guard_handler(int sig, siginfo_t *si, void *ctx)
{
    (void)sig;
    (void)si;
    (void)ctx;
    guard_faults++;
    siglongjmp(guard_jmp, 1);
}

static int faults_on(volatile unsigned char *p, int write)
{
    int before = guard_faults;
    if (sigsetjmp(guard_jmp, 1) == 0) {
        if (write)
            *p = 7;
        else
            (void)*p;
    }
    return guard_faults - before;
}

static void do_mprotect(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = guard_handler;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    unsigned char *hp = (unsigned char *)(((uintptr_t)hgrid + PG - 1) & ~(uintptr_t)(PG - 1));
    unsigned char *guard = hp + 100 * PG, *ro = hp + 200 * PG;
    unsigned char *sp = (unsigned char *)(((uintptr_t)sgrid + PG - 1) & ~(uintptr_t)(PG - 1));
    unsigned char *sguard = sp + 300 * PG;
    /* several regions first: the pages are watched (armed) when the
     * program protects them in serial code */
    for (int r = 0; r < 8; r++)
        stir(r);
    NEED(mprotect(guard, PG, PROT_NONE) == 0, "mprotect guard");
    NEED(mprotect(sguard, 2 * PG, PROT_NONE) == 0, "mprotect static guard");
    NEED(mprotect(ro, PG, PROT_READ) == 0, "mprotect read-only");
    for (int r = 1; r < 30; r++) {
#pragma omp parallel for
        for (long p = 0; p < HN / PG - 1; p++) {
            if (p != 100 && p != 200)
                hp[p * PG + 9] = (unsigned char)(p + r);
            if (p != 300 && p != 301)
                sp[p * PG + 9] = (unsigned char)(p - r);
        }
        /* inside a region, every thread reads the read-only page */
        unsigned reads = 0;
#pragma omp parallel reduction(+ : reads)
        reads += ((volatile unsigned char *)ro)[64 + omp_get_thread_num()] != 0xAB;
        NEED(reads > 0, "the read-only page reads inside a region");
        NEED(faults_on(guard, 0) == 1, "the guard page still faults on read");
        NEED(faults_on(guard + 17, 1) == 1, "the guard page still faults on write");
        NEED(faults_on(sguard + PG, 0) == 1, "the static guard page still faults");
        NEED(faults_on(ro, 0) == 0, "the read-only page reads");
        NEED(faults_on(ro + 5, 1) == 1, "the read-only page stays read-only");
    }
    NEED(mprotect(guard, PG, PROT_READ | PROT_WRITE) == 0, "unguard");
    NEED(mprotect(sguard, 2 * PG, PROT_READ | PROT_WRITE) == 0, "unguard static");
    NEED(mprotect(ro, PG, PROT_READ | PROT_WRITE) == 0, "read-write again");
    for (int r = 0; r < 5; r++)
        stir(r);
    NEED(faults_on(guard, 1) == 0 && faults_on(ro, 1) == 0, "writable again");
    signal(SIGSEGV, SIG_DFL);
}

/* ---- 9: mremap of part of a mapping -------------------------------------------------- */

static void do_mremap(void)
{
    size_t n = 16 << 20;
    unsigned char *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    NEED(m != MAP_FAILED, "mmap");
    for (size_t i = 0; i < n; i += PG)
        m[i] = (unsigned char)(i / PG);
    stir(0);
    /* move the second quarter elsewhere, grown */
    unsigned char *q = mremap(m + n / 4, n / 4, n / 2, MREMAP_MAYMOVE);
    NEED(q != MAP_FAILED, "mremap of the second quarter");
    for (int r = 1; r < 6; r++)
        stir(r);
    int ok = 1;
    for (size_t i = 0; i < n / 4; i += PG)
        ok &= q[i] == (unsigned char)((n / 4 + i) / PG);
    for (size_t i = 0; i < n / 4; i += PG)
        ok &= m[i] == (unsigned char)(i / PG);
    for (size_t i = n / 2; i < n; i += PG)
        ok &= m[i] == (unsigned char)(i / PG);
    NEED(ok, "data after mremap");
    memset(q + n / 4, 1, n / 4); /* the grown part is usable */
    /* shrink the tail in place */
    NEED(mremap(m + n / 2, n / 2, n / 4, 0) == m + n / 2, "mremap shrinking the tail");
    ok = 1;
    for (size_t i = n / 2; i < 3 * n / 4; i += PG)
        ok &= m[i] == (unsigned char)(i / PG);
    NEED(ok, "data after shrinking");
    NEED(munmap(m, n / 4) == 0 && munmap(m + n / 2, n / 4) == 0 && munmap(q, n / 2) == 0,
         "munmap");
}

/* ---- 10: allocation churn ------------------------------------------------ */

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i += 512)
        p[i] = (unsigned char)(seed + i / 512);
    p[n - 1] = (unsigned char)(seed * 7);
}

static int filled(const unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i += 512)
        if (p[i] != (unsigned char)(seed + i / 512))
            return 0;
    return p[n - 1] == (unsigned char)(seed * 7);
}

static void do_churn(void)
{
    enum { BUF = 2 << 20 };
    for (unsigned r = 0; r < 2000; r++) {
        unsigned char *p = malloc(BUF);
        NEED(p != NULL, "malloc 2 MiB");
        fill(p, BUF, r);
        NEED(filled(p, BUF, r), "a 2 MiB buffer keeps what was written");
        free(p);
        if (r % 250 == 0)
            stir((int)r);
    }
    /* calloc after a dirty block of the same size was freed: zeros */
    for (int r = 0; r < 20; r++) {
        unsigned char *d = malloc(BUF);
        NEED(d != NULL, "malloc");
        memset(d, 0xa5, BUF);
        free(d);
        unsigned char *z = calloc(1, BUF);
        NEED(z != NULL, "calloc");
        for (size_t i = 0; i < BUF; i += 64)
            NEED(z[i] == 0, "calloc after a free of the same size: not zero");
        free(z);
    }
    /* realloc growth in 64 KiB steps, every step's bytes kept */
    unsigned char *g = NULL;
    size_t n = 0;
    while (n < ((size_t)32 << 20)) {
        unsigned char *q = realloc(g, n + 65536);
        NEED(q != NULL, "realloc growth");
        g = q;
        memset(g + n, (int)(n >> 16) & 0xff, 65536);
        n += 65536;
        if ((n >> 16) % 128 == 0)
            stir((int)(n >> 16));
    }
    for (size_t i = 0; i < n; i += 4096)
        NEED(g[i] == (unsigned char)((i >> 16) & 0xff), "realloc growth lost bytes");
    free(g);
    /* in place (a few bytes more), then moved: all bytes of the last size */
    size_t a = (1 << 20) + 1, b = (1 << 20) + 4000;
    unsigned char *h = malloc(a);
    NEED(h != NULL, "malloc");
    h = realloc(h, b);
    NEED(h != NULL, "realloc in place");
    fill(h, b, 77);
    h = realloc(h, 3 << 20);
    NEED(h != NULL, "realloc 3 MiB");
    NEED(filled(h, b, 77), "realloc after growth in place lost bytes");
    /* every byte malloc_usable_size gives is the program's and moves */
    size_t u = malloc_usable_size(h);
    NEED(u >= (3 << 20), "malloc_usable_size below the size asked");
    fill(h, u, 5);
    h = realloc(h, u + (1 << 20));
    NEED(h != NULL, "realloc beyond the usable size");
    NEED(filled(h, u, 5), "realloc lost bytes of malloc_usable_size");
    free(h);
    /* aligned blocks, freed and asked for again */
    for (int r = 0; r < 200; r++) {
        void *m = NULL;
        NEED(posix_memalign(&m, 65536, BUF) == 0, "posix_memalign");
        NEED(((uintptr_t)m & 65535) == 0, "posix_memalign alignment");
        fill(m, BUF, (unsigned)r);
        NEED(filled(m, BUF, (unsigned)r), "aligned block");
        free(m);
    }
}

/* ---- 11: descriptors the program did not open, closed ---------------------- */

/* Whether every page's byte that stir(round) wrote holds it. */
static int stirred(int round)
{
    for (long p = 0; p < SN / PG; p++)
        if (sgrid[p * PG + PG - 1] != (unsigned char)(round + p) ||
            hgrid[p * PG + PG - 1] != (unsigned char)(round - p) ||
            (p < DN / PG && dgrid[p * PG + PG - 1] != (unsigned char)(round * 3 + p)))
            return 0;
    return 1;
}

/* A descriptor in /proc/self/fd that is a userfaultfd (-1: none). */
static int find_uffd(void)
{
    DIR *d = opendir("/proc/self/fd");
    NEED(d != NULL, "opendir /proc/self/fd");
    int found = -1;
    struct dirent *e;
    while (found < 0 && (e = readdir(d)) != NULL) {
        char link[128];
        ssize_t n = readlinkat(dirfd(d), e->d_name, link, sizeof link - 1);
        if (n > 0) {
            link[n] = 0;
            if (strcmp(link, "anon_inode:[userfaultfd]") == 0)
                found = atoi(e->d_name);
        }
    }
    closedir(d);
    return found;
}

static void do_closeall(void)
{
    enum { FB = 1 << 20 };
    static unsigned char pat[FB], back[FB];
    int u = find_uffd();
    for (int way = 0; way < 3; way++) {
        int fd = -1;
        for (int r = 0; r < 12; r++) {
            int round = 40 + way * 16 + r;
            stir(round);
            NEED(stirred(round), "the arrays keep what the parallel loop wrote");
            if (r == 4) {
                /* the engine's next interval armed meanwhile: pages are
                 * watched when the descriptors go */
                usleep(30000);
                if (way == 0) {
                    long max = sysconf(_SC_OPEN_MAX);
                    for (int k = 3; k < (max > 0 && max < 65536 ? max : 65536); k++)
                        close(k);
                } else if (way == 1) {
                    closefrom(3);
                } else {
                    NEED(close_range(3, ~0u, 0) == 0, "close_range");
                }
                /* a file on the numbers just freed */
                fd = tmpfd();
                for (size_t i = 0; i < FB; i++)
                    pat[i] = (unsigned char)(i * 7 + (size_t)way);
                NEED(pwrite(fd, pat, FB, 0) == FB, "pwrite after closing");
            }
        }
        NEED(pread(fd, back, FB, 0) == FB, "pread");
        NEED(memcmp(pat, back, FB) == 0, "a file opened after closing keeps its bytes");
        off_t end = lseek(fd, 0, SEEK_END);
        NEED(end == FB, "the file's size");
        close(fd);
    }
    if (u >= 0) {
        NEED(find_uffd() == u, "pagehome's userfaultfd survives closefrom, close_range "
                               "and a close() loop");
        NEED(close(u) == 0, "close of pagehome's descriptor");
        NEED(fcntl(u, F_GETFD) >= 0, "pagehome's descriptor stays open after close()");
        NEED(close_range((unsigned)u, (unsigned)u, 0) == 0 && fcntl(u, F_GETFD) >= 0,
             "close_range of pagehome's descriptor alone");
        closefrom(u);
        NEED(fcntl(u, F_GETFD) >= 0, "closefrom at pagehome's descriptor");
        NEED(dup2(0, u) == -1 && errno == EBUSY, "dup2 onto pagehome's descriptor: EBUSY");
        NEED(dup3(0, u, O_CLOEXEC) == -1 && errno == EBUSY,
             "dup3 onto pagehome's descriptor: EBUSY");
        stir(99);
        NEED(stirred(99), "the arrays after a close of pagehome's descriptor");
    }
}

/* ---- 12: the program discards pages ---------------------------------------- */

/* Pages [0, n/PG) of a: byte 17 is `v` from page `from` on and `keep`
 * before it. */
static int discarded(const unsigned char *a, size_t n, size_t from, unsigned char keep,
                     unsigned char v)
{
    for (size_t p = 0; p < n / PG; p++)
        if (a[p * PG + 17] != (p * PG >= from ? v : keep))
            return 0;
    return 1;
}

static void do_discard(void)
{
    enum { MN = 8 << 20 };
    unsigned char *m = mmap(NULL, MN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    NEED(m != MAP_FAILED, "mmap");
    /* the page-aligned inside of the heap and static arrays */
    unsigned char *h = (unsigned char *)(((uintptr_t)hgrid + PG - 1) & ~(uintptr_t)(PG - 1));
    unsigned char *st = (unsigned char *)(((uintptr_t)sgrid + PG - 1) & ~(uintptr_t)(PG - 1));
    size_t hn = (HN - (size_t)(h - hgrid)) & ~(size_t)(PG - 1);
    size_t sn = (SN - (size_t)(st - sgrid)) & ~(size_t)(PG - 1);
    for (int r = 0; r < 8; r++) {
        unsigned char v = (unsigned char)(r + 1);
        for (int it = 0; it < 3; it++) {
#pragma omp parallel for schedule(static)
            for (long p = 0; p < MN / PG; p++) {
                m[p * PG + 17] = v;
                if ((size_t)p < hn / PG)
                    h[p * PG + 17] = v;
                if ((size_t)p < sn / PG)
                    st[p * PG + 17] = v;
            }
        }
        /* the engine's next interval armed meanwhile: pages are watched */
        usleep(30000);
        size_t off = r % 2 ? MN / 2 : 0;
        NEED(madvise(m + off, MN - off, MADV_DONTNEED) == 0, "madvise MADV_DONTNEED (mmap)");
        NEED(discarded(m, MN, off, v, 0), "MADV_DONTNEED of an mmap'd array: zeros there, "
                                          "the rest kept");
        NEED(madvise(h + off / 2, hn - off / 2, MADV_DONTNEED) == 0, "madvise (heap)");
        NEED(discarded(h, hn, off / 2, v, 0), "MADV_DONTNEED of the heap array");
        NEED(madvise(st, sn, MADV_DONTNEED) == 0, "madvise (static)");
        NEED(discarded(st, sn, 0, v, 0), "MADV_DONTNEED of the static array");
        /* MADV_FREE, then written: what was written */
#pragma omp parallel for schedule(static)
        for (long p = 0; p < MN / PG; p++)
            m[p * PG + 17] = 9;
        usleep(30000);
        NEED(madvise(m, MN, MADV_FREE) == 0, "madvise MADV_FREE");
        for (long p = 0; p < MN / PG; p++)
            m[p * PG + 17] = 11;
        NEED(discarded(m, MN, 0, 0, 11), "MADV_FREE then written");
    }
    NEED(munmap(m, MN) == 0, "munmap");
}

/* ---- 13: the program locks its memory --------------------------------------- */

static void do_lock(void)
{
    alarm(120); /* a population that waits for good kills the program */
    usleep(30000); /* the engine's next interval armed meanwhile */
    if (mlockall(MCL_CURRENT | MCL_FUTURE) != 0) {
        /* not permitted (RLIMIT_MEMLOCK without CAP_IPC_LOCK): nothing
         * to test, and nothing pagehome changed */
        printf("prog_robust lock: mlockall refused (%s): not tested\n", strerror(errno));
        exit(77);
    }
    enum { LN = 8 << 20 };
    unsigned char *l = malloc(LN); /* mapped locked: MCL_FUTURE */
    NEED(l != NULL, "malloc after mlockall");
    for (int r = 0; r < 24; r++) {
        int round = 60 + r;
        stir(round);
#pragma omp parallel for schedule(static)
        for (long p = 0; p < LN / PG; p++)
            l[p * PG + 9] = (unsigned char)(round ^ p);
        usleep(10000);
        NEED(stirred(round), "the arrays keep each step's bytes under mlockall");
        for (long p = 0; p < LN / PG; p++)
            if (l[p * PG + 9] != (unsigned char)(round ^ p))
                bad("an array allocated after mlockall keeps its bytes");
        /* the static array, in part, unlocked and locked again while
         * its pages may be out: the run and pagehome's copy of it are
         * then locked differently */
        if (r == 6)
            NEED(munlock(sgrid + SN / 4, SN / 2) == 0, "munlock of part of an array");
        if (r == 12)
            NEED(mlock(sgrid, SN) == 0, "mlock of an array");
        if (r == 18)
            NEED(munlockall() == 0, "munlockall");
    }
    free(l);
    alarm(0);
}

/* ---- 14: transfers the kernel makes outside the program's calls ---------- */

/* io_uring without liburing: a ring of one entry, a read of n bytes at
 * offset 0 of fd into buf; the completion's result, or -errno of the set-up
 * (-ENOSYS, -EPERM: no io_uring here). */
static long uring_read(int fd, void *buf, size_t n)
{
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    int rfd = (int)syscall(SYS_io_uring_setup, 1, &p);
    if (rfd < 0)
        return -errno;
    size_t sq_bytes = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    size_t cq_bytes = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    unsigned char *sq = mmap(NULL, sq_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
                             rfd, IORING_OFF_SQ_RING);
    unsigned char *cq = mmap(NULL, cq_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
                             rfd, IORING_OFF_CQ_RING);
    struct io_uring_sqe *sqe =
        mmap(NULL, p.sq_entries * sizeof *sqe, PROT_READ | PROT_WRITE,
             MAP_SHARED | MAP_POPULATE, rfd, IORING_OFF_SQES);
    NEED(sq != MAP_FAILED && cq != MAP_FAILED && sqe != MAP_FAILED, "io_uring rings");
    memset(sqe, 0, sizeof *sqe);
    sqe->opcode = IORING_OP_READ;
    sqe->fd = fd;
    sqe->addr = (uint64_t)(uintptr_t)buf;
    sqe->len = (unsigned)n;
    sqe->off = 0;
    unsigned *tail = (unsigned *)(void *)(sq + p.sq_off.tail);
    unsigned *mask = (unsigned *)(void *)(sq + p.sq_off.ring_mask);
    unsigned *arr = (unsigned *)(void *)(sq + p.sq_off.array);
    arr[*tail & *mask] = 0;
    __atomic_store_n(tail, *tail + 1, __ATOMIC_RELEASE);
    NEED(syscall(SYS_io_uring_enter, rfd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) == 1,
         "io_uring_enter");
    unsigned *chead = (unsigned *)(void *)(cq + p.cq_off.head);
    unsigned *cmask = (unsigned *)(void *)(cq + p.cq_off.ring_mask);
    struct io_uring_cqe *cqes = (struct io_uring_cqe *)(void *)(cq + p.cq_off.cqes);
    long res = cqes[*chead & *cmask].res;
    __atomic_store_n(chead, *chead + 1, __ATOMIC_RELEASE);
    munmap(sqe, p.sq_entries * sizeof *sqe);
    munmap(cq, cq_bytes);
    munmap(sq, sq_bytes);
    close(rfd);
    return res;
}

/* A control block for n bytes of buf at offset off of fd. */
static struct aiocb aio_of(int fd, void *buf, size_t n, off_t off)
{
    struct aiocb cb;
    memset(&cb, 0, sizeof cb);
    cb.aio_fildes = fd;
    cb.aio_buf = buf;
    cb.aio_nbytes = n;
    cb.aio_offset = off;
    return cb;
}

/* Wait for cb's transfer to end (aio_suspend); its aio_error. */
static int aio_wait(struct aiocb *cb)
{
    const struct aiocb *list[1] = {cb};
    while (aio_error(cb) == EINPROGRESS)
        aio_suspend(list, 1, NULL);
    return aio_error(cb);
}

static void do_async(void)
{
    int fd = tmpfd();
    /* the first HN bytes of the file are read, the writes go after them */
    memset(hgrid, 0x6b, HN);
    NEED(write(fd, hgrid, HN) == HN, "write");
    int sv[2];
    NEED(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) == 0, "socketpair");
    int uring = 1;
    for (int r = 0; r < 8; r++) {
        /* POSIX AIO: glibc's helper threads make the transfer */
        stir(r);
        usleep(10000);
        struct aiocb cb = aio_of(fd, sgrid, SN, 0);
        NEED(aio_read(&cb) == 0, "aio_read");
        errno = aio_wait(&cb);
        NEED(errno == 0 && aio_return(&cb) == (ssize_t)SN, "aio_read of a watched array");
        NEED(sgrid[12345] == 0x6b && sgrid[SN - 2] == 0x6b, "aio_read data");
        stir(r);
        usleep(10000);
        cb = aio_of(fd, dgrid, DN, HN);
        cb.aio_lio_opcode = LIO_WRITE;
        struct aiocb *wl[1] = {&cb};
        NEED(lio_listio(LIO_WAIT, wl, 1, NULL) == 0 && aio_return(&cb) == (ssize_t)DN,
             "lio_listio LIO_WRITE from a watched array");
        /* preadv2 / pwritev2 */
        stir(r);
        usleep(10000);
        struct iovec iov = {hgrid, HN};
        memset(hgrid + 100, 0, 100);
        NEED(preadv2(fd, &iov, 1, 0, 0) == (ssize_t)HN && hgrid[150] == 0x6b, "preadv2");
        stir(r);
        usleep(10000);
        iov = (struct iovec){sgrid, SN};
        NEED(pwritev2(fd, &iov, 1, HN, 0) == (ssize_t)SN, "pwritev2");
        /* sendmmsg / recvmmsg of two messages */
        stir(r);
        usleep(10000);
        struct iovec si[2] = {{sgrid + 7 * PG, 512}, {hgrid + 9 * PG, 512}};
        struct iovec ri[2] = {{dgrid + 11 * PG, 512}, {hgrid + 13 * PG, 512}};
        struct mmsghdr sm[2], rm[2];
        memset(sm, 0, sizeof sm);
        memset(rm, 0, sizeof rm);
        for (int k = 0; k < 2; k++) {
            sm[k].msg_hdr.msg_iov = &si[k];
            sm[k].msg_hdr.msg_iovlen = 1;
            rm[k].msg_hdr.msg_iov = &ri[k];
            rm[k].msg_hdr.msg_iovlen = 1;
        }
        NEED(sendmmsg(sv[0], sm, 2, 0) == 2, "sendmmsg");
        NEED(recvmmsg(sv[1], rm, 2, 0, NULL) == 2 && rm[0].msg_len == 512 &&
                 rm[1].msg_len == 512, "recvmmsg");
        /* io_uring: the kernel's own workers make the transfer */
        if (uring) {
            stir(r);
            usleep(10000);
            sgrid[12345] = 0;
            long k = uring_read(fd, sgrid, SN);
            if (k == -ENOSYS || k == -EPERM) {
                printf("prog_robust async: io_uring not available here (%s)\n",
                       strerror((int)-k));
                uring = 0;
            } else {
                errno = k < 0 ? (int)-k : 0;
                NEED(k == SN && sgrid[12345] == 0x6b, "io_uring read into a watched array");
            }
        }
    }
    /* a checkpoint written while the program computes: aio_write of the
     * static array, parallel regions (reading it, writing the others)
     * while it is in flight, then aio_suspend; the file holds the array */
    unsigned char *back = malloc(SN);
    NEED(back != NULL, "malloc");
    for (int r = 0; r < 8; r++) {
        stir(r);
        usleep(10000);
        struct aiocb cb = aio_of(fd, sgrid, SN, 2 * (off_t)HN);
        NEED(aio_write(&cb) == 0, "aio_write");
        uint64_t before = sum(sgrid, SN), seen = 0;
        for (int it = 0; it < 4; it++) {
#pragma omp parallel for schedule(static) reduction(+ : seen)
            for (long p = 0; p < SN / PG; p++) {
                seen += sgrid[p * PG + 5];
                hgrid[p * PG + 5] = (unsigned char)(it + p);
                if (p < DN / PG)
                    dgrid[p * PG + 5] = (unsigned char)(it - p);
            }
        }
        (void)seen;
        errno = aio_wait(&cb);
        NEED(errno == 0, "aio_write of an array read by parallel regions meanwhile");
        NEED(aio_return(&cb) == (ssize_t)SN, "aio_write: all of it written (aio_return)");
        NEED(pread(fd, back, SN, 2 * (off_t)HN) == SN && memcmp(back, sgrid, SN) == 0 &&
                 sum(sgrid, SN) == before, "aio_write: the file holds the array");
    }
    free(back);
    /* aio_read inside a parallel region (omp single), while the other
     * threads work on the arrays */
    for (int r = 0; r < 8; r++) {
        stir(r);
        int ok = 1;
#pragma omp parallel
        {
#pragma omp for
            for (long p = 0; p < SN / PG; p++)
                hgrid[p * PG + 3] = (unsigned char)p;
#pragma omp single
            {
                struct aiocb cb = aio_of(fd, sgrid, SN, 0);
                sgrid[12345] = 0;
                ok &= aio_read(&cb) == 0 && aio_wait(&cb) == 0 &&
                      aio_return(&cb) == (ssize_t)SN && sgrid[12345] == 0x6b;
            }
        }
        NEED(ok, "aio_read inside a parallel region");
    }
    close(sv[0]);
    close(sv[1]);
    close(fd);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: prog_robust ITEM\n");
        return 2;
    }
    item = argv[1];
    hgrid = malloc(HN);
    NEED(hgrid != NULL, "malloc");
    memset(hgrid, 0, HN);
    for (int r = 0; r < 4; r++)
        stir(r);
    static const struct {
        const char *name;
        void (*fn)(void);
    } items[] = {{"stdio", do_stdio},       {"inregion", do_inregion}, {"entry", do_entry},
                 {"shortread", do_shortread}, {"syscalls", do_syscalls}, {"sigblock", do_sigblock},
                 {"crash", do_crash},       {"stacks", do_stacks},     {"mprotect", do_mprotect},
                 {"mremap", do_mremap},     {"churn", do_churn},       {"closeall", do_closeall},
                 {"discard", do_discard},   {"lock", do_lock},         {"async", do_async}};
    for (size_t k = 0; k < sizeof items / sizeof items[0]; k++)
        if (strcmp(item, items[k].name) == 0) {
            items[k].fn();
            printf("prog_robust %s: ok\n", item);
            free(hgrid);
            return 0;
        }
    fprintf(stderr, "prog_robust: no item %s\n", item);
    return 2;
}
