/*
 * api.c -- the public entry points of the library itself: ph_init,
 * ph_version, ph_last_error (and ph_internal_error_set, the way
 * libpagehome_cluster's messages reach it: api/error_bridge.h).
 *
 * src/api/ is the top of the library: every function pagehome.h declares
 * is defined here, one file per concept (api_config.c the tunables,
 * api_topo.c topologies and threads, api_place.c placement, api_engine.c
 * the migration engine).  Each is thin: it checks its arguments (naming
 * what was wrong), gets the process machine (machine/machine.h), reads
 * the tunables a call needs (settings.c), and calls the layer below.
 */
#include "pagehome.h"

#include "api/error_bridge.h"
#include "api/stats_file.h"
#include "api/transparent.h"
#include "base/error.h"
#include "machine/machine.h"

#define PH_STR2(x) #x
#define PH_STR(x) PH_STR2(x)

/* ---- library ----------------------------------------------------------- */

PH_API int ph_init(void)
{
    ph_statsfile_init(); /* the statistics file's path, before any chdir */
    if (!ph_machine_get())
        return -1;
    (void)ph_api_engine_one_node();
    return 0;
}

PH_API const char *ph_version(void)
{
    return PH_STR(PAGEHOME_VERSION_MAJOR) "." PH_STR(PAGEHOME_VERSION_MINOR) "."
        PH_STR(PAGEHOME_VERSION_PATCH);
}

PH_API const char *ph_last_error(void)
{
    return ph_error_message();
}

PH_INTERNAL_API int ph_internal_error_set(int err, const char *msg)
{
    return ph_fail(err, "%s", msg ? msg : "");
}
