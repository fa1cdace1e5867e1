/*
 * api_config.c -- the public entry points of the tunables:
 * ph_config_set, ph_config_get, ph_config_print (config/options.h holds
 * the table).
 */
#include "pagehome.h"

#include "base/error.h"
#include "config/options.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

/* ---- tunables ---------------------------------------------------------- */

static int find_option(const char *fn, const char *name)
{
    if (!name)
        return ph_fail(EINVAL, "%s: tunable name is NULL", fn);
    int id = ph_opt_find(name);
    if (id < 0)
        return ph_fail(EINVAL, "%s: no tunable named \"%s\" (pagehome --print-config lists them)",
                       fn, name);
    return id;
}

PH_API int ph_config_set(const char *name, const char *value)
{
    int id = find_option("ph_config_set", name);
    if (id < 0)
        return -1;
    if (!value)
        return ph_fail(EINVAL, "ph_config_set: value of \"%s\" is NULL", name);
    return ph_opt_set((ph_opt_id)id, value, PH_SRC_API);
}

PH_API int ph_config_get(const char *name, char *buf, size_t len)
{
    int id = find_option("ph_config_get", name);
    if (id < 0)
        return -1;
    if (!buf || len == 0)
        return ph_fail(EINVAL, "ph_config_get: no buffer for \"%s\"", name);
    ph_opt_format((ph_opt_id)id, buf, len);
    return 0;
}

PH_API int ph_config_print(int fd)
{
    int dup_fd = dup(fd);
    if (dup_fd < 0)
        return ph_fail(errno, "ph_config_print: bad file descriptor %d", fd);
    FILE *f = fdopen(dup_fd, "w");
    if (!f) {
        close(dup_fd);
        return ph_fail(errno, "ph_config_print: cannot write to fd %d", fd);
    }
    ph_options_print(f, 0);
    return fclose(f) == 0 ? 0 : ph_fail(errno, "ph_config_print: write failed");
}
