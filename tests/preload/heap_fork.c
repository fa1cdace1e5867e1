/*
 * heap_fork.c -- fork() under transparent mode (src/preload/heap.c).
 *
 * Two threads allocate small and large blocks without pause while the
 * main thread forks 16 times; each child checks an inherited large block,
 * frees it, allocates its own large and small blocks and exits.  A child
 * that inherited one of heap.c's locks (or one of pagehome's that heap.c
 * was inside) would hang: the test's timeout catches that.  Same output
 * with and without LD_PRELOAD (heap_compare.sh).
 */
#include "heap_common.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#define MiB ((size_t)1 << 20)

static atomic_int stop;

static void *churn(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    while (!atomic_load(&stop)) {
        seed = seed * 1103515245u + 12345u;
        size_t n = seed % 3 == 0 ? MiB + (seed >> 8) % MiB : 1 + (seed >> 8) % 8192;
        unsigned char *p = malloc(n);
        CHECK(p);
        p[0] = 1;
        p[n - 1] = 2;
        free(p);
    }
    return NULL;
}

static int child(unsigned char *inherited, int round)
{
    if (!heap_same(inherited, 4 * MiB, 11))
        return 2;
    free(inherited);
    unsigned char *p = malloc(8 * MiB);
    if (!p)
        return 3;
    heap_is_hot(p, 8 * MiB);
    heap_fill(p, 8 * MiB, (unsigned)round);
    if (!heap_same(p, 8 * MiB, (unsigned)round))
        return 4;
    p = realloc(p, 9 * MiB);
    if (!p || !heap_prefix(p, 8 * MiB, (unsigned)round))
        return 5;
    free(p);
    for (int i = 0; i < 1000; i++) {
        char *s = malloc((size_t)(1 + i % 300));
        if (!s)
            return 6;
        s[0] = 'x';
        free(s);
    }
    return 0;
}

int main(void)
{
    heap_setup();
    unsigned char *big = malloc(4 * MiB);
    CHECK(big);
    heap_is_hot(big, 4 * MiB);
    heap_fill(big, 4 * MiB, 11);

    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        CHECK(pthread_create(&t[i], NULL, churn, (void *)(uintptr_t)(i + 7)) == 0);
    int bad = 0;
    for (int round = 0; round < 16; round++) {
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0)
            _exit(child(big, round));
        int st = 0;
        CHECK(waitpid(pid, &st, 0) == pid);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "heap_fork: child %d: status %#x\n", round, st);
            bad++;
        }
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < 2; i++)
        CHECK(pthread_join(t[i], NULL) == 0);
    CHECK(bad == 0);
    CHECK(heap_same(big, 4 * MiB, 11));
    free(big);
    printf("16 forks while 2 threads allocate, children allocate: ok\n");
    printf("heap_fork: ok\n");
    return 0;
}
