/*
 * aio.c -- the program's asynchronous transfers (POSIX AIO), in
 * transparent mode: their buffers are not watched while in flight.
 *
 * glibc carries out aio_read/aio_write and lio_listio on helper threads
 * of its own, through internal calls no wrapper sees, while the program
 * goes on -- typically into a parallel region, where the mprotect
 * mechanism protects the pages it watches.  The kernel's copy of such a
 * page fails: a read comes back short, a write short or with EFAULT, and
 * a checkpoint written this way would silently miss its tail.  So every
 * transfer submitted here keeps its buffer out of the watch
 * (ph_sampler_busy_begin: the pages watched there are opened, none is
 * watched again) until the program has seen it end:
 *   aio_error    returns something other than EINPROGRESS;
 *   aio_return   is called (POSIX: once per transfer);
 *   lio_listio   in LIO_WAIT mode returns (every transfer of the list).
 * A submission that fails ends the keep at once.  A transfer the program
 * never asks about keeps its buffer unwatched (it is not harmful: those
 * pages give no samples), and its control block's next submission
 * replaces the buffer.  At most 256 transfers at once are kept; beyond,
 * a transfer goes unprotected and a warning says so, once.  The 64-bit
 * offset names (what -D_FILE_OFFSET_BITS=64 calls) are wrapped alike.
 * aio_suspend and aio_cancel change nothing: the program asks aio_error
 * or aio_return after them.
 *
 * io_uring, whose buffers the kernel reaches through a ring the program
 * shares with it, is not seen (README.md, "Asynchronous I/O").
 */
/* The definitions below are the unredirected names: no 64-bit-offset
 * renaming (the build may set -D_FILE_OFFSET_BITS=64). */
#undef _FILE_OFFSET_BITS
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "base/log.h"
#include "preload/realsym.h"
#include "sample/source.h"

#include <aio.h>
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

#define PH_EXPORT __attribute__((visibility("default")))

static _Atomic(void *) r_read, r_read64, r_write, r_write64, r_lio, r_lio64, r_error,
    r_error64, r_return, r_return64;
static atomic_int full_once;

/* Keep buf out of the watch while the transfer `key` is in flight. */
static void keep(const void *key, volatile void *buf, size_t bytes)
{
    if (ph_sampler_busy_begin(key, (const void *)buf, bytes) != 0)
        ph_warn_once(&full_once, "transparent mode: more than 256 asynchronous transfers in "
                                 "flight; the others' buffers may be watched meanwhile "
                                 "(a short transfer is possible under the mprotect "
                                 "mechanism)");
}

static int is_transfer(int op)
{
    return op == LIO_READ || op == LIO_WRITE;
}

/* The transfer cb has ended: its buffer may be watched again (errno
 * kept for the caller). */
static void unkeep(const void *cb)
{
    int e = errno;
    (void)ph_sampler_busy_end(cb);
    errno = e;
}

/* After a submission of cb that returned r: a failed one is not in
 * flight. */
static int submitted(const void *cb, int r)
{
    if (r != 0)
        unkeep(cb);
    return r;
}

/* After aio_error(cb) returned r: the transfer has ended unless r is
 * EINPROGRESS. */
static int errored(const void *cb, int r)
{
    if (r != EINPROGRESS)
        unkeep(cb);
    return r;
}

/* After aio_return(cb) returned r: the transfer has ended. */
static ssize_t returned(const void *cb, ssize_t r)
{
    unkeep(cb);
    return r;
}

typedef int (*submit_fn)(struct aiocb *);
typedef int (*submit64_fn)(struct aiocb64 *);
typedef int (*lio_fn)(int, struct aiocb *const[], int, struct sigevent *);
typedef int (*lio64_fn)(int, struct aiocb64 *const[], int, struct sigevent *);
typedef int (*error_fn)(const struct aiocb *);
typedef int (*error64_fn)(const struct aiocb64 *);
typedef ssize_t (*return_fn)(struct aiocb *);
typedef ssize_t (*return64_fn)(struct aiocb64 *);

/* r = the next definition of NAME (of type TYPE) called with the
 * arguments, or -1/ENOSYS when there is none. */
#define CALL_NEXT(CACHE, NAME, TYPE, ...)                                                 \
    do {                                                                                  \
        TYPE f_ = (TYPE)ph_real_next(&(CACHE), NAME);                                     \
        if (!f_) {                                                                        \
            errno = ENOSYS;                                                               \
            r = -1;                                                                       \
        } else {                                                                          \
            r = f_(__VA_ARGS__);                                                          \
        }                                                                                 \
    } while (0)

#define SUBMIT(CACHE, NAME, TYPE)                                                       \
    int r;                                                                                \
    keep(cb, cb->aio_buf, cb->aio_nbytes);                                                \
    CALL_NEXT(CACHE, NAME, TYPE, cb);                                                     \
    return submitted(cb, r)

PH_EXPORT int aio_read(struct aiocb *cb)
{
    SUBMIT(r_read, "aio_read", submit_fn);
}

PH_EXPORT int aio_read64(struct aiocb64 *cb)
{
    SUBMIT(r_read64, "aio_read64", submit64_fn);
}

PH_EXPORT int aio_write(struct aiocb *cb)
{
    SUBMIT(r_write, "aio_write", submit_fn);
}

PH_EXPORT int aio_write64(struct aiocb64 *cb)
{
    SUBMIT(r_write64, "aio_write64", submit64_fn);
}

/* lio_listio over a list of aiocb or aiocb64: every transfer of the list
 * kept; in LIO_WAIT mode all have ended when it returns, whatever the
 * result; a failed LIO_NOWAIT may have queued some (aio_error tells, and
 * ends them). */
#define LIO(CACHE, NAME, TYPE)                                                          \
    int r;                                                                                \
    for (int i = 0; i < nent; i++)                                                        \
        if (list[i] && is_transfer(list[i]->aio_lio_opcode))                              \
            keep(list[i], list[i]->aio_buf, list[i]->aio_nbytes);                         \
    CALL_NEXT(CACHE, NAME, TYPE, mode, list, nent, sev);                                  \
    for (int i = 0; i < nent; i++)                                                        \
        if (list[i] && mode == LIO_WAIT)                                                  \
            unkeep(list[i]);                                                              \
    return r

PH_EXPORT int lio_listio(int mode, struct aiocb *const list[], int nent, struct sigevent *sev)
{
    LIO(r_lio, "lio_listio", lio_fn);
}

PH_EXPORT int lio_listio64(int mode, struct aiocb64 *const list[], int nent,
                           struct sigevent *sev)
{
    LIO(r_lio64, "lio_listio64", lio64_fn);
}

PH_EXPORT int aio_error(const struct aiocb *cb)
{
    int r;
    CALL_NEXT(r_error, "aio_error", error_fn, cb);
    return errored(cb, r);
}

PH_EXPORT int aio_error64(const struct aiocb64 *cb)
{
    int r;
    CALL_NEXT(r_error64, "aio_error64", error64_fn, cb);
    return errored(cb, r);
}

PH_EXPORT ssize_t aio_return(struct aiocb *cb)
{
    ssize_t r;
    CALL_NEXT(r_return, "aio_return", return_fn, cb);
    return returned(cb, r);
}

PH_EXPORT ssize_t aio_return64(struct aiocb64 *cb)
{
    ssize_t r;
    CALL_NEXT(r_return64, "aio_return64", return64_fn, cb);
    return returned(cb, r);
}
