/*
 * meet.h -- a meeting point of a known number of threads (internal).
 *
 * The one synchronisation primitive under gangs (base/gang.h): the local
 * members of a gang arrive, each saying which call it is in (a kind and
 * an argument) and one value of its own; the last to arrive checks that
 * all said the same, runs the caller's completion function once (which
 * may talk to other processes: cluster mode's gang barrier), publishes its
 * verdict and wakes the others, who all return that verdict.  Waiters
 * spin briefly, then sleep on a futex.
 *
 * Bad use is an error, never a hang where it can be seen: members in
 * different calls (one in a split, another in a barrier) or passing
 * different arguments all fail with EPROTO and a message naming both; a
 * member that waits longer than the timeout (0 = for ever, like an OpenMP
 * barrier) fails with ETIMEDOUT naming the members that did not come.
 * Either leaves the meeting point broken: every later arrival fails at
 * once with the same message (the program's gang calls no longer match).
 *
 * Generations: the verdict of generation g is kept in res[g & 1].  The
 * generation after next cannot complete before every member has left g,
 * so a slow waiter always reads its own verdict.
 */
#ifndef PH_BASE_MEET_H
#define PH_BASE_MEET_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#define PH_MEET_MSG 240

typedef struct ph_meet_result {
    int ret, err;              /* 0, or -1 and an errno value */
    char msg[PH_MEET_MSG];
    void *payload;             /* what the completion made (a split's gangs) */
} ph_meet_result;

/* One member's arrival. */
typedef struct ph_meet_arrival {
    int who;                   /* 0 .. expected-1, distinct per member */
    int expected;              /* members meeting (the same for all) */
    int who_base;              /* added to who in messages (thread numbers) */
    int kind;                  /* the call: index into names */
    long arg;                  /* its argument (compared) */
    long val;                  /* this member's own value (not compared) */
    const char *const *names;  /* call names, by kind */
} ph_meet_arrival;

typedef struct ph_meet {
    pthread_mutex_t lock;
    _Atomic int gen;           /* generations completed (the futex word) */
    int arrived, expected, kind, base, first_who;
    long arg;
    int bad;                   /* this generation's calls do not match */
    char bad_msg[PH_MEET_MSG];
    int cap;
    unsigned char *here;       /* per member: arrived in this generation */
    long *val;                 /* per member: its value */
    _Atomic int completing;    /* the last member runs the completion */
    _Atomic int broken;
    char broken_msg[PH_MEET_MSG];
    ph_meet_result res[2];
} ph_meet;

/* What the completion sees: the members' common call and their values
 * (val[who], expected entries). */
typedef struct ph_meet_view {
    int kind, expected, base;
    long arg;
    const long *val;
    int bad;                   /* the calls did not match (res is failed) */
} ph_meet_view;

/* Runs once per generation on the last member, outside the lock; fills
 * res (ret 0 = success).  With bad set it only has to tell others. */
typedef void (*ph_meet_fn)(void *ctx, const ph_meet_view *v,
                           ph_meet_result *res);

int ph_meet_init(ph_meet *m);
void ph_meet_destroy(ph_meet *m);
/* Arrive and wait for the others.  0, or -1 with errno and a message
 * (prefixed by `what`).  *payload (may be NULL) gets the completion's
 * payload, also on failure. */
int ph_meet_arrive(ph_meet *m, const ph_meet_arrival *a, ph_meet_fn fn,
                   void *ctx, uint64_t timeout_ns, const char *what,
                   void **payload);

#endif
