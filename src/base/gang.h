/*
 * gang.h -- gangs: a team of threads split into contiguous sub-teams,
 * recursively (internal; paper 002 section 3's proposed `divide`
 * directive, as calls).  Shared by NUMA mode (api/api_gang.c: the OpenMP
 * team of one process) and cluster mode (cluster/gang.c: the team of
 * every rank's threads, numbered rank * team + thread).
 *
 * THE MODEL
 *   - The root gang is the whole team: T threads numbered 0..T-1 (global
 *     numbers).  A process holds the threads [lo, hi) of it (NUMA mode:
 *     all; cluster mode: its rank's).
 *   - A split of a gang of S threads into G gangs (1 <= G <= S) is made by
 *     all its threads.  Gang g gets the contiguous threads of libgomp's
 *     balanced split of S over G: S / G each, the first S % G gangs one
 *     more (sizes differ by at most one: the paper's `partition(block,
 *     nGangs, 1)`).  G > S fails with EINVAL on every thread (a gang needs
 *     a thread; a gang of 1 splits only into 1).
 *   - A join is made by all threads of the gang that split: it ends the
 *     level (every thread is back in the parent gang).  Split and join are
 *     synchronisation points of the parent gang (they wait for all its
 *     threads, like the paper's two barriers around the recursion); a gang
 *     barrier is one of the gang alone.
 *   - Each synchronisation is a meeting point (base/meet.h) of the gang's
 *     threads in this process; when the gang has threads in other
 *     processes the last local thread runs a hook (cluster mode: release,
 *     meet the other ranks, acquire) before the local threads go on.
 *
 * Records: one ph_gang per gang per process, made by the split (its last
 * arriving thread) and freed by the join (likewise, when every local
 * thread of the parent has arrived, so none still looks at them).  Each
 * thread keeps a pointer to its innermost gang (NULL = the root) in a
 * thread-local variable of the caller's module (ph_gang_state).
 */
#ifndef PH_BASE_GANG_H
#define PH_BASE_GANG_H

#include "base/meet.h"

#include <stddef.h>
#include <stdint.h>

enum { PH_GANG_SPLIT = 0, PH_GANG_BARRIER = 1, PH_GANG_JOIN = 2,
       PH_GANG_KINDS = 3 };

typedef struct ph_gang ph_gang;
struct ph_gang {
    ph_gang *parent;           /* NULL: the parent is the root */
    int first, size;           /* global thread numbers [first, first+size) */
    int num, count;            /* number among its siblings, their count */
    int level;                 /* root 0 */
    int team;                  /* threads of the root team */
    ph_meet meet;              /* this process's threads of the gang */
    ph_gang *children;         /* after a split: count records */
    int nchildren;
    int nodes[64];             /* NUMA: distinct nodes of its threads here,
                                * in thread order (first 64) */
    int nnodes;
    ph_gang *stale_next;       /* first of an array of gangs left by a split
                                * never joined: the next such array */
};

/* The root of one library's gangs: its meeting point and its split. */
typedef struct ph_gang_root {
    ph_meet meet;
    ph_gang *children;
    int nchildren;
    int nodes[64];             /* the nodes of the root team here */
    int nnodes;
} ph_gang_root;

/* A gang as the caller sees it (the root or a record). */
typedef struct ph_gang_view {
    int first, size, num, count, level;
    ph_meet *meet;
    ph_gang *g;                /* NULL: the root */
    ph_gang **children;
    int *nchildren;
    const int *nodes;
    int nnodes;
} ph_gang_view;

/* What a synchronisation tells the hook of a gang that spans processes. */
typedef struct ph_gang_sync {
    int kind;                  /* PH_GANG_*; -1: the local threads' calls
                                * did not match (fail everywhere) */
    long arg;                  /* the split's count */
    int first, size, level, team;
} ph_gang_sync;

/* The calling thread's place and its library's rules, per call. */
typedef struct ph_gang_call {
    ph_gang_root *root;
    ph_gang **cur;             /* the thread's innermost gang (TLS) */
    int team;                  /* threads of the root team (T) */
    int tid;                   /* this thread's global number */
    int lo, hi;                /* this process's threads [lo, hi) */
    long node;                 /* this thread's node (NUMA), or -1 */
    uint64_t timeout_ns;       /* 0 = wait for ever */
    const char *const *names;  /* call names by kind, for messages */
    /* Gangs with threads in other processes: run by the last local thread
     * of each synchronisation.  0, or -1 with errno and a message. */
    int (*remote)(void *arg, const ph_gang_sync *s);
    void *remote_arg;
} ph_gang_call;

/* ---- arithmetic (pure) ---- */
/* Threads [*first, *first + *gsize) of gang g when S threads split into
 * G gangs (offsets from the parent's first thread). */
void ph_gang_shape(int S, int G, int g, int *first, int *gsize);
/* The gang of thread t (0 <= t < S) of that split. */
int ph_gang_of(int S, int G, int t);
/* [*b, *e): the part of [0, n) of threads [first, first+size) when [0, n)
 * is split over T threads in proportion (floor(n * k / T) at each thread
 * boundary k: contiguous, disjoint, covering). */
void ph_gang_block_of(uint64_t n, int first, int size, int T, uint64_t *b,
                      uint64_t *e);
/* [*b, *e): thread t's share of [0, n) over S threads (schedule(static):
 * n / S each, the first n % S one more). */
void ph_gang_share(uint64_t n, int S, int t, uint64_t *b, uint64_t *e);

/* ---- the calling thread's gang ---- */
/* Its innermost gang; -1 (EINVAL) when the state left in this thread is
 * from a team of another size (a split not joined before a parallel
 * region ended): the state is reset to the root. */
int ph_gang_current(const ph_gang_call *k, ph_gang_view *v, const char *who);
/* The collective calls (0 / -1 with errno and message). */
int ph_gang_split_do(const ph_gang_call *k, int count, const char *who);
int ph_gang_join_do(const ph_gang_call *k, const char *who);
int ph_gang_barrier_do(const ph_gang_call *k, const char *who);

#endif
