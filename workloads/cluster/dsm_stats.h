/*
 * dsm_stats.h -- the cluster workloads' statistics snapshots: every rank
 * writes its DSM statistics (ph_cluster_stats_write, JSON) to
 * PREFIX.rRANK.WHEN.json, so that a table script can take the counts of a
 * phase as the difference of two snapshots (laplace_table1.py and
 * fft_table2.py in bench/cluster).
 * A NULL prefix writes nothing.  Dies with a message when the file cannot
 * be written.
 */
#ifndef WL_DSM_STATS_H
#define WL_DSM_STATS_H

#include "common.h"

#include <pagehome.h>

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

static inline void wl_dsm_stats_snapshot(const char *prog, const char *prefix,
                                         int rank, const char *when)
{
    if (!prefix)
        return;
    char path[4096];
    snprintf(path, sizeof path, "%s.r%d.%s.json", prefix, rank, when);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        perror(path);
        wl_die(prog, "cannot write the statistics");
    }
    if (ph_cluster_stats_write(fd) < 0)
        wl_die(prog, ph_last_error());
    close(fd);
}

#endif
