/*
 * bridge.c -- only in the shared libpagehome_cluster.so, which carries a
 * private copy of base/ (src/CMakeLists.txt): when the library is loaded
 * it points that copy's error sink (base/error.h) at libpagehome's
 * ph_internal_error_set (api/error_bridge.h), so every message the
 * cluster code records also becomes libpagehome's last error and
 * ph_last_error() -- one function, in libpagehome -- tells what the last
 * failing call of either library was.  The static library has no copy
 * and no bridge: the program's libpagehome.a is the one base/.
 */
#include "api/error_bridge.h"
#include "base/error.h"

static void to_libpagehome(int err, const char *msg)
{
    ph_internal_error_set(err, msg);
}

__attribute__((constructor)) static void ph_dsm_bridge_errors(void)
{
    ph_error_sink_set(to_libpagehome);
}
