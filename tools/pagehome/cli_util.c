/* cli_util.c -- formatting and argument helpers of the pagehome command. */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cli_error(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("pagehome: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return status;
}

void cli_bytes(uint64_t bytes, char *buf, size_t len)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024.0 && u < 4) {
        v /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%llu B", (unsigned long long)bytes);
    else
        snprintf(buf, len, "%.1f %s", v, units[u]);
}

void cli_cpulist(const int *cpus, int n, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    if (n == 0) {
        snprintf(buf, len, "-");
        return;
    }
    for (int k = 0; k < n;) {
        int j = k;
        while (j + 1 < n && cpus[j + 1] == cpus[j] + 1)
            j++;
        int w = (j > k) ? snprintf(buf + used, len - used, "%s%d-%d", k ? "," : "",
                                   cpus[k], cpus[j])
                        : snprintf(buf + used, len - used, "%s%d", k ? "," : "", cpus[k]);
        if (w < 0 || (size_t)w >= len - used)
            return;
        used += (size_t)w;
        k = j + 1;
    }
}

const char *cli_value(int argc, char **argv, int *i, const char *name, int *missing)
{
    size_t n = strlen(name);
    const char *a = argv[*i];
    *missing = 0;
    if (strncmp(a, name, n) != 0)
        return NULL;
    if (a[n] == '=')
        return a + n + 1;
    if (a[n] != '\0')
        return NULL;
    if (*i + 1 >= argc) {
        *missing = 1;
        return NULL;
    }
    return argv[++*i];
}

int cli_find_on_path(const char *name, char *out, size_t len)
{
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, ":");
        snprintf(out, len, "%.*s/%s", (int)n, n ? p : ".", name);
        if (access(out, X_OK) == 0)
            return 0;
        p += n;
        if (*p == ':')
            p++;
    }
    return -1;
}
