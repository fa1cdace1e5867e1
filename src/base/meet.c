/*
 * meet.c -- a meeting point of a known number of threads (meet.h).
 *
 * A mutex guards the arrivals (a gang meets at the rate of its barriers,
 * not of its memory accesses); the wait is on the generation counter:
 * about 20 us of yielding spins, then FUTEX_WAIT in slices of at most
 * 100 ms, so that a timeout and a broken meeting point are noticed.
 */
#include "base/meet.h"

#include "base/clock.h"
#include "base/error.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int ph_meet_init(ph_meet *m)
{
    memset(m, 0, sizeof *m);
    if (pthread_mutex_init(&m->lock, NULL) != 0)
        return ph_fail(ENOMEM, "cannot create a mutex");
    return 0;
}

void ph_meet_destroy(ph_meet *m)
{
    pthread_mutex_destroy(&m->lock);
    free(m->here);
    free(m->val);
    m->here = NULL;
    m->val = NULL;
    m->cap = 0;
}

static void wake_all(ph_meet *m)
{
    syscall(SYS_futex, (int *)&m->gen, FUTEX_WAKE_PRIVATE, INT_MAX, NULL,
            NULL, 0);
}

static const char *name_of(const ph_meet_arrival *a, int kind)
{
    return a->names ? a->names[kind] : "a call";
}

/* The members that did not arrive, as "1, 3, 4" (thread numbers). */
static void missing_list(const ph_meet *m, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    int shown = 0;
    for (int i = 0; i < m->expected && at + 16 < len; i++) {
        if (m->here[i])
            continue;
        at += (size_t)snprintf(buf + at, len - at, "%s%d", shown ? ", " : "",
                               m->base + i);
        shown++;
    }
}

static int fail_from(const ph_meet_result *r, const char *what, void **payload)
{
    if (payload)
        *payload = r->payload;
    if (r->ret == 0)
        return 0;
    return ph_fail(r->err, "%s: %s", what, r->msg);
}

int ph_meet_arrive(ph_meet *m, const ph_meet_arrival *a, ph_meet_fn fn,
                   void *ctx, uint64_t timeout_ns, const char *what,
                   void **payload)
{
    if (payload)
        *payload = NULL;
    pthread_mutex_lock(&m->lock);
    if (atomic_load(&m->broken)) {
        pthread_mutex_unlock(&m->lock);
        return ph_fail(EPROTO, "%s: %s", what, m->broken_msg);
    }
    if (m->arrived == 0) {
        if (a->expected > m->cap) {
            unsigned char *h = realloc(m->here, (size_t)a->expected);
            long *v = h ? realloc(m->val, (size_t)a->expected * sizeof *v)
                        : NULL;
            if (h)
                m->here = h;
            if (!h || !v) {
                pthread_mutex_unlock(&m->lock);
                return ph_fail(ENOMEM, "%s: out of memory", what);
            }
            m->val = v;
            m->cap = a->expected;
        }
        memset(m->here, 0, (size_t)m->cap);
        m->expected = a->expected;
        m->kind = a->kind;
        m->arg = a->arg;
        m->base = a->who_base;
        m->first_who = a->who;
        m->bad = 0;
    } else if (!m->bad && (a->kind != m->kind || a->arg != m->arg ||
                           a->expected != m->expected)) {
        m->bad = 1;
        if (a->kind != m->kind)
            snprintf(m->bad_msg, sizeof m->bad_msg,
                     "thread %d is in %s while thread %d is in %s: every "
                     "thread of a gang makes the same gang calls in the same "
                     "order", m->base + m->first_who, name_of(a, m->kind),
                     a->who_base + a->who, name_of(a, a->kind));
        else
            snprintf(m->bad_msg, sizeof m->bad_msg,
                     "thread %d called %s(%ld) while thread %d called "
                     "%s(%ld): the threads of a gang must pass the same "
                     "arguments", m->base + m->first_who, name_of(a, m->kind),
                     m->arg, a->who_base + a->who, name_of(a, a->kind),
                     a->arg);
    }
    int who = a->who;
    if (who < 0 || who >= m->expected || m->here[who]) {
        if (!m->bad) {
            m->bad = 1;
            snprintf(m->bad_msg, sizeof m->bad_msg,
                     "thread %d arrived twice at one %s (gang state of "
                     "another team?)", a->who_base + who, name_of(a, m->kind));
        }
        who = -1;
    }
    if (who >= 0) {
        m->here[who] = 1;
        m->val[who] = a->val;
    }
    m->arrived++;
    int g = atomic_load(&m->gen);
    ph_meet_result *res = &m->res[g & 1];
    if (m->arrived >= m->expected) {
        /* the last member: nobody arrives again before the generation
         * moves on, so the values stay put outside the lock */
        m->arrived = 0;
        atomic_store(&m->completing, 1);
        pthread_mutex_unlock(&m->lock);
        memset(res, 0, sizeof *res);
        ph_meet_view v = {m->kind, m->expected, m->base, m->arg, m->val,
                          m->bad};
        if (m->bad) {
            res->ret = -1;
            res->err = EPROTO;
            snprintf(res->msg, sizeof res->msg, "%s", m->bad_msg);
        }
        if (fn)
            fn(ctx, &v, res);
        if (m->bad) {
            res->ret = -1;
            res->err = EPROTO;
            pthread_mutex_lock(&m->lock);
            snprintf(m->broken_msg, sizeof m->broken_msg,
                     "the gang is unusable after an earlier error: %.190s",
                     m->bad_msg);
            atomic_store(&m->broken, 1);
            pthread_mutex_unlock(&m->lock);
        }
        atomic_store(&m->completing, 0);
        atomic_store(&m->gen, g + 1);
        wake_all(m);
        return fail_from(res, what, payload);
    }
    pthread_mutex_unlock(&m->lock);

    uint64_t start = ph_now_ns();
    uint64_t spin_until = start + 20000;
    while (atomic_load(&m->gen) == g && !atomic_load(&m->broken)) {
        uint64_t now = ph_now_ns();
        if (now < spin_until) {
            sched_yield();
            continue;
        }
        if (timeout_ns && now - start >= timeout_ns &&
            !atomic_load(&m->completing)) {
            pthread_mutex_lock(&m->lock);
            if (atomic_load(&m->gen) == g && !atomic_load(&m->broken) &&
                !atomic_load(&m->completing)) {
                char miss[120];
                missing_list(m, miss, sizeof miss);
                snprintf(m->broken_msg, sizeof m->broken_msg,
                         "waited %.3g s in %s for thread(s) %s of the gang, "
                         "which did not come (every thread of a gang makes the "
                         "same gang calls)", (double)(now - start) / 1e9,
                         name_of(a, m->kind), miss);
                atomic_store(&m->broken, 1);
                pthread_mutex_unlock(&m->lock);
                wake_all(m);
                return ph_fail(ETIMEDOUT, "%s: %s", what, m->broken_msg);
            }
            pthread_mutex_unlock(&m->lock);
            continue;
        }
        uint64_t slice = 100000000u;
        if (timeout_ns && timeout_ns > now - start &&
            timeout_ns - (now - start) < slice)
            slice = timeout_ns - (now - start);
        struct timespec ts = {(time_t)(slice / 1000000000u),
                              (long)(slice % 1000000000u)};
        syscall(SYS_futex, (int *)&m->gen, FUTEX_WAIT_PRIVATE, g, &ts, NULL,
                0);
    }
    if (atomic_load(&m->gen) != g)
        return fail_from(res, what, payload);
    return ph_fail(EPROTO, "%s: %s", what, m->broken_msg);
}
