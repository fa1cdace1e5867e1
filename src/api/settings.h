/*
 * settings.h -- the tunables a public call needs, read at the call.
 *
 * The cores below api/ read no tunable (the machine layer reads the ones
 * that describe the machine, once).  The placement defaults are read at
 * each placement call instead, so that ph_config_set("placement", ...)
 * applies to the next ph_alloc.  Tools and tests that make plans the way
 * ph_alloc does read them here too.
 */
#ifndef PH_API_SETTINGS_H
#define PH_API_SETTINGS_H

#include "place/place.h"

/* The tunables placement, pagesize, seed, huge_source and huge_fallback,
 * read now. */
void ph_settings_place(ph_place_cfg *out);

#endif
