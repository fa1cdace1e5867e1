/*
 * engine_rig.c -- the engine tests' and bench_engine's engine set-up (see
 * engine_rig.h).
 */
#include "engine_rig.h"

#include "base/error.h"
#include "config/options.h"

#include <stdio.h>
#include <stdlib.h>

ph_engine_cfg rig_engine_cfg(void)
{
    ph_engine_cfg c;
    ph_engine_cfg_from_options(&c);
    c.mech = PH_MECH_ITERATIVE;
    c.sync = 1;
    c.full_snapshot = 1;
    c.sample_weight = 1;
    c.sample_budget = 0;
    /* the rig gives the source its budget apart from cfg.sample_pages
     * (rig_engine_open), so the first sweep, which returns to
     * cfg.sample_pages, is off; its own test sets both */
    c.sample_first_pages = 0;
    /* the engine tests check UPMlib's criterion (eq. 1, ping-pong,
     * self-tuning) on hand-made counts; the amortised criterion (the
     * default) has cases of its own that set it */
    c.criterion = PH_CRITERION_COMPETITIVE;
    return c;
}

ph_engine *rig_engine_open(const ph_topology *topo, ph_os *os, ph_mover *mover,
                           const ph_engine_cfg *cfg, ph_synth_model_fn fn, void *model,
                           size_t pages_per_interval, double noise, uint64_t seed)
{
    ph_source *src = ph_synth_open(topo, fn, model, pages_per_interval, noise, seed);
    if (!src) {
        fprintf(stderr, "rig: synthetic source: %s\n", ph_error_message());
        exit(1);
    }
    ph_engine *e = ph_engine_new(topo, os, mover, src, cfg);
    if (!e) {
        fprintf(stderr, "rig: engine: %s\n", ph_error_message());
        exit(1);
    }
    return e;
}
