/*
 * settings.c -- the tunables a public call needs, read at the call (see
 * settings.h).
 */
#include "api/settings.h"

#include "config/options.h"

#include <stdio.h>
#include <string.h>

void ph_settings_place(ph_place_cfg *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->plan.placement, sizeof out->plan.placement, "%s",
             ph_opt_str(PH_OPT_PLACEMENT));
    out->plan.page_bytes = (size_t)ph_opt_int(PH_OPT_PAGESIZE);
    out->plan.seed = (uint64_t)ph_opt_int(PH_OPT_SEED);
    out->huge_tlbfs = strcmp(ph_opt_str(PH_OPT_HUGE_SOURCE), "hugetlbfs") == 0;
    out->huge_fallback = ph_opt_bool(PH_OPT_HUGE_FALLBACK);
    out->plan.own_policy = strcmp(ph_opt_str(PH_OPT_KERNEL_BALANCING), "exclude") == 0 &&
                           strcmp(ph_opt_str(PH_OPT_ENGINE), "off") != 0 &&
                           !ph_opt_bool(PH_OPT_OBSERVE);
}
