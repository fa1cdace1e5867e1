/*
 * test_badinput.c -- bad input fails cleanly on every rank, with a message
 * naming what was wrong, and leaves cluster mode usable:
 *   mismatched collective allocations (sizes, order, placements) -> EINVAL
 *   naming the ranks and their sizes; an allocation beyond the arena ->
 *   ENOMEM; unknown placement texts; placements that name missing ranks;
 *   non-shared pointers to the range calls, home queries and free; lock
 *   ids out of range; unlocking a lock not held; calls before init.
 */
#include "common.h"

#define PAGE 4096

int main(int argc, char **argv)
{
    /* before init */
    errno = 0;
    CHECK(ph_cluster_barrier() == -1 && errno == EINVAL);
    CHECK(ph_cluster_alloc(PAGE, NULL) == NULL);
    CHECK_MSG("call ph_cluster_init first");
    /* a tunable set through the API before init is the one in force */
    CHECK(ph_config_set("cluster_locks", "64") == 0);
    cl_init(&argc, &argv);
    CHECK(ph_cluster_lock(64) == -1 && errno == EINVAL);
    CHECK_MSG("(0-63; tunable cluster_locks)");
    int me = ph_cluster_rank(), n = ph_cluster_nranks();
    CHECK(ph_cluster_init(&argc, &argv) == -1 && errno == EBUSY);

    /* sizes differ on one rank */
    errno = 0;
    void *p = ph_cluster_alloc(me == n - 1 ? 3 * PAGE : 2 * PAGE, NULL);
    if (n > 1) {
        CHECK(p == NULL);
        CHECK_EQ(errno, EINVAL);
        CHECK_MSG("disagree");
        CHECK_MSG("8192 bytes");
        CHECK_MSG("12288 bytes");
        char want[32];
        snprintf(want, sizeof want, "rank %d", n - 1);
        CHECK_MSG(want);
    } else {
        CHECK(p != NULL);
        ph_cluster_free(p);
    }
    /* placements differ */
    ph_placement_t a, b;
    ph_placement_parse(&a, "block");
    ph_placement_parse(&b, "cyclic:2");
    p = ph_cluster_alloc(4 * PAGE, me == 0 ? &a : &b);
    if (n > 1) {
        CHECK(p == NULL);
        CHECK_MSG("cyclic:2");
    } else {
        ph_cluster_free(p);
    }
    /* order differs: rank 0 allocates one page then two, the others two
     * then one: both calls fail everywhere */
    void *o1 = ph_cluster_alloc(me == 0 ? PAGE : 2 * PAGE, &a);
    void *o2 = ph_cluster_alloc(me == 0 ? 2 * PAGE : PAGE, &a);
    if (n > 1) {
        CHECK(o1 == NULL && o2 == NULL);
        CHECK_MSG("same sizes in the same order");
    } else {
        ph_cluster_free(o1);
        ph_cluster_free(o2);
    }
    /* different collective calls: one rank frees while the others
     * allocate */
    void *z = ph_cluster_alloc(PAGE, &a);
    if (n > 1) {
        if (me == 0) {
            CHECK(ph_cluster_free(z) == -1);
        } else {
            CHECK(ph_cluster_alloc(PAGE, &a) == NULL);
        }
        CHECK_MSG("collective calls must match");
    }
    CHECK(ph_cluster_free(z) == 0);

    /* still usable */
    long *ok = ph_cluster_alloc(PAGE * (size_t)n, &a);
    CHECK(ok != NULL);
    if (ok) {
        ok[(size_t)me * 512] = me + 1;
        ph_cluster_barrier();
        for (int r = 0; r < n; r++)
            CHECK_EQ(ok[(size_t)r * 512], r + 1);
    }
    /* beyond the arena */
    ph_cluster_info_t info;
    ph_cluster_info(&info);
    errno = 0;
    CHECK(ph_cluster_alloc(info.arena_bytes + PAGE, &a) == NULL);
    CHECK_EQ(errno, ENOMEM);
    CHECK_MSG("do not fit");
    /* 0 bytes */
    errno = 0;
    CHECK(ph_cluster_alloc(0, &a) == NULL);
    CHECK_EQ(errno, EINVAL);
    /* unknown placement texts (the parser is NUMA mode's) */
    ph_placement_t c;
    CHECK(ph_placement_parse(&c, "blocky") == -1);
    CHECK_MSG("unknown policy");
    CHECK(ph_placement_parse(&c, "cyclic:0") == -1);
    /* placements that cannot be cluster placements, on every rank */
    char bad[32];
    snprintf(bad, sizeof bad, "node:%d", n);
    ph_placement_parse(&c, bad);
    errno = 0;
    CHECK(ph_cluster_alloc(PAGE, &c) == NULL);
    CHECK_EQ(errno, EINVAL);
    CHECK_MSG("does not exist");
    ph_placement_parse(&c, "block-static");
    CHECK(ph_cluster_alloc(PAGE, &c) == NULL);
    CHECK_MSG("block-static");
    ph_placement_parse(&c, "block@2M");
    CHECK(ph_cluster_alloc(PAGE, &c) == NULL);
    CHECK_MSG("4 KiB");
    /* the tunable's text is checked too (read at each NULL allocation) */
    CHECK(ph_config_set("cluster_placement", "scatter") == 0);
    errno = 0;
    CHECK(ph_cluster_alloc(PAGE, NULL) == NULL);
    CHECK_EQ(errno, EINVAL);
    CHECK_MSG("tunable cluster_placement");
    CHECK_MSG("unknown policy \"scatter\"");
    CHECK(ph_config_set("cluster_placement", "cyclic:2") == 0);
    void *cp = ph_cluster_alloc(4 * PAGE * (size_t)n, NULL);
    CHECK(cp != NULL);
    if (cp) {
        CHECK_EQ(ph_cluster_home((char *)cp + 2 * PAGE), 1 % n);
        ph_cluster_free(cp);
    }
    CHECK(ph_config_set("cluster_placement", "block") == 0);

    /* non-shared pointers */
    int local = 0;
    errno = 0;
    CHECK(ph_cluster_acquire(&local, sizeof local) == -1 && errno == EINVAL);
    CHECK_MSG("not shared memory");
    CHECK(ph_cluster_release(&local, sizeof local) == -1 && errno == EINVAL);
    CHECK(ph_cluster_acquire(NULL, 8) == -1 && errno == EINVAL);
    CHECK(ph_cluster_home(&local) == -1 && errno == EINVAL);
    /* sizeof local: an aligned int never spans two pages (8 bytes from
     * it did when the stack put it 4 bytes before a page's end, as a
     * TSan build once did: 2 pages, both -EINVAL) */
    int st[2];
    CHECK_EQ(ph_cluster_homes(&local, sizeof local, st), 1);
    CHECK_EQ(st[0], -EINVAL);
    /* inside the arena but not allocated */
    char *hole = (char *)info.arena + info.arena_bytes - 2 * PAGE;
    CHECK(ph_cluster_acquire(hole, 16) == -1 && errno == EINVAL);
    CHECK_MSG("not inside memory from ph_cluster_alloc");
    CHECK(ph_cluster_home(hole) == -1 && errno == EINVAL);
    /* free of a pointer that was not allocated: every rank fails alike */
    CHECK(ph_cluster_free(&local) == -1 && errno == EINVAL);
    CHECK(ph_cluster_free((char *)ok + 8) == -1 && errno == EINVAL);
    /* locks */
    CHECK(ph_cluster_lock(-1) == -1 && errno == EINVAL);
    CHECK(ph_cluster_lock(1 << 30) == -1 && errno == EINVAL);
    CHECK_MSG("cluster_locks");
    CHECK(ph_cluster_unlock(2) == -1 && errno == EPERM);
    CHECK(ph_cluster_lock(2) == 0);
    CHECK(ph_cluster_lock(2) == -1 && errno == EDEADLK);
    CHECK(ph_cluster_unlock(2) == 0);
    /* still working */
    ph_cluster_barrier();
    if (ok) {
        ok[(size_t)me * 512] = me + 10;
        ph_cluster_barrier();
        for (int r = 0; r < n; r++)
            CHECK_EQ(ok[(size_t)r * 512], r + 10);
        ph_cluster_barrier();
        CHECK(ph_cluster_free(ok) == 0);
    }
    /* mismatched free: ranks free different allocations */
    void *x = ph_cluster_alloc(PAGE, &a), *y = ph_cluster_alloc(PAGE, &a);
    if (n > 1) {
        CHECK(ph_cluster_free(me == 0 ? x : y) == -1 && errno == EINVAL);
        CHECK_MSG("disagree");
    }
    CHECK(ph_cluster_free(x) == 0);
    CHECK(ph_cluster_free(y) == 0);
    /* counters by name */
    unsigned long long v = 0, frees = 0;
    CHECK(ph_cluster_stat(NULL, &v) == -1 && errno == EINVAL);
    CHECK(ph_cluster_stat("barriers", NULL) == -1 && errno == EINVAL);
    CHECK(ph_cluster_stat("no_such_counter", &v) == -1 && errno == ENOENT);
    CHECK_MSG("no counter named");
    CHECK(ph_cluster_stat("rank", &v) == -1 && errno == ENOENT); /* not a counter */
    CHECK(ph_cluster_stat("frees", &frees) == 0 && frees >= 3);
    CHECK(ph_cluster_stat("private", &v) == 0);               /* a page class */
    return cl_finish("badinput");
}
