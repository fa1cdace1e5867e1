/*
 * stats_file.c -- the statistics file: where, who, when (see
 * stats_file.h).
 */
#include "api/stats_file.h"

#include "base/error.h"
#include "base/json_write.h"
#include "base/log.h"
#include "base/path_pattern.h"
#include "config/launcher.h"
#include "config/options.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int inited;
static char path[PATH_MAX]; /* absolute, "" = no file */
static pid_t owner;

/* The tunable's keys (base/path_pattern.h) for this process: its rank
 * from the launcher's environment, its PID, the host.  Under a launcher
 * that started several processes, a name without %r or %p is one file
 * for all of them: said once, by rank 0, and written as given (each
 * process replaces the file whole; `pagehome run --report` names a file
 * per rank by itself). */
static int expand(const char *pat, char *out, size_t len)
{
    ph_launcher l = ph_launcher_get();
    if (ph_launcher_expand_path(pat, (long)getpid(), out, len) != 0) {
        ph_warn("stats_file %s: %s: no statistics file", pat,
                errno == EINVAL ? "a % must be followed by r (rank), p (PID), "
                                  "h (host) or % (one %)"
                                : "path too long");
        return -1;
    }
    if (l.size > 1 && l.rank == 0 && !ph_path_names_process(pat))
        ph_warn("stats_file %s: every one of the %ld processes (%s) writes "
                "this one file: name %%r (the rank) in it for one each",
                pat, l.size, l.from);
    return 0;
}

void ph_statsfile_init(void)
{
    if (atomic_load_explicit(&inited, memory_order_acquire))
        return;
    pthread_mutex_lock(&init_lock);
    if (!atomic_load(&inited)) {
        const char *pat = ph_opt_str(PH_OPT_STATS_FILE);
        char p[PATH_MAX];
        path[0] = '\0';
        if (pat && *pat && expand(pat, p, sizeof p) == 0) {
            char cwd[PATH_MAX];
            if (p[0] == '/' || !getcwd(cwd, sizeof cwd))
                snprintf(path, sizeof path, "%s", p);
            else if ((size_t)snprintf(path, sizeof path, "%s/%s", cwd, p) >=
                     sizeof path) {
                ph_warn("stats_file: %s/%s: path too long: no statistics file",
                        cwd, p);
                path[0] = '\0';
            }
        }
        owner = getpid();
        atomic_store_explicit(&inited, 1, memory_order_release);
    }
    pthread_mutex_unlock(&init_lock);
}

int ph_statsfile_owned(void)
{
    ph_statsfile_init();
    return path[0] && getpid() == owner;
}

/* Write through a file beside the target, renamed over it.  write_fn
 * fills fd; 0 or -1 (errno, message). */
static int write_atomic(int (*write_fn)(int fd, void *arg), void *arg)
{
    char tmp[PATH_MAX + 32];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path,
                         (long)getpid()) >= sizeof tmp)
        return ph_fail(ENAMETOOLONG, "%s: path too long", path);
    unlink(tmp); /* a leftover of this PID, never another writer's */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                  0644);
    if (fd < 0) {
        int e = errno;
        return ph_fail(e, "cannot create %s: %s", tmp, strerror(e));
    }
    int rc = write_fn(fd, arg);
    int e = errno;
    char msg[256];
    snprintf(msg, sizeof msg, "%s", rc ? ph_error_message() : "");
    if (close(fd) != 0 && rc == 0) {
        rc = -1;
        e = errno;
        snprintf(msg, sizeof msg, "%s", strerror(e));
    }
    if (rc == 0 && rename(tmp, path) != 0) {
        rc = -1;
        e = errno;
        snprintf(msg, sizeof msg, "%s", strerror(e));
    }
    if (rc != 0) {
        unlink(tmp);
        return ph_fail(e ? e : EIO, "%s", msg);
    }
    return 0;
}

static int notice_fn(int fd, void *arg)
{
    (void)arg;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    ph_jw w;
    ph_jw_init(&w, 1);
    ph_stats_begin_engineless(&w);
    ph_jw_key(&w, "incomplete");
    ph_jw_bool(&w, 1);
    ph_jw_key(&w, "note");
    ph_jw_string(&w, "the program ended before pagehome could write its "
                     "statistics: it was killed, or it ended without running "
                     "its exit handlers");
    ph_jw_key(&w, "pid");
    ph_jw_int(&w, (int64_t)getpid());
    ph_jw_key(&w, "transparent");
    ph_jw_object(&w, 0);
    ph_jw_key(&w, "program");
    ph_jw_string(&w, exe);
    ph_jw_end(&w);
    ph_jw_end(&w);
    int rc = ph_jw_write_fd(&w, fd);
    ph_jw_free(&w);
    return rc;
}

void ph_statsfile_notice(void)
{
    if (!ph_statsfile_owned())
        return;
    if (write_atomic(notice_fn, NULL) != 0)
        ph_warn("stats_file %s: %s", path, ph_error_message());
}

static int engine_fn(int fd, void *arg)
{
    return ph_engine_write_json(arg, fd);
}

int ph_statsfile_write(ph_engine *e)
{
    if (!e || !ph_statsfile_owned())
        return 0;
    if (write_atomic(engine_fn, e) != 0) {
        ph_warn("stats_file %s: %s", path, ph_error_message());
        return -1;
    }
    return 0;
}

static int doc_fn(int fd, void *arg)
{
    return ph_jw_write_fd(arg, fd);
}

int ph_statsfile_write_doc(struct ph_jw *w)
{
    if (!ph_statsfile_owned())
        return 0;
    if (write_atomic(doc_fn, w) != 0) {
        ph_warn("stats_file %s: %s", path, ph_error_message());
        return -1;
    }
    return 0;
}
