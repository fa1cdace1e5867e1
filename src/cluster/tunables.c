/*
 * tunables.c -- the cluster layer reads the tunables of the one table
 * (src/config/options.def) through config/ like every edge of pagehome.
 * Built into libpagehome_cluster.so that config/ is a private copy, so
 * before reading, ph_dsm_sync_tunables copies the current value of every
 * tunable the layer reads (cluster_*, gang_*, verbose, seed) from libpagehome's
 * table (public ph_config_get: environment, ph_config_set, --set) into the
 * copy it reads.  Linked statically with libpagehome.a there is one table
 * and the copy finds every value equal.
 */
#include "cluster/cluster.h"

#include "config/options.h"

#include <errno.h>
#include <pagehome.h>
#include <string.h>

void ph_dsm_sync_tunables(void)
{
    int e = errno;
    for (int id = 0; id < PH_OPT_COUNT; id++) {
        const char *name = ph_opt_name((ph_opt_id)id);
        if (strncmp(name, "cluster_", 8) != 0 && strncmp(name, "gang_", 5) != 0 &&
            strcmp(name, "verbose") != 0 && strcmp(name, "seed") != 0)
            continue;
        char theirs[600], ours[600];
        if (ph_config_get(name, theirs, sizeof theirs) < 0)
            continue;
        ph_opt_format((ph_opt_id)id, ours, sizeof ours);
        if (strcmp(theirs, ours) != 0)
            ph_opt_set((ph_opt_id)id, theirs, PH_SRC_API);
    }
    errno = e;
}
