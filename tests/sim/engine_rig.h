/*
 * engine_rig.h -- the migration engine set up on the simulated machine the
 * way the engine tests (tests/unit/test_engine.c, test_huge_engine.c) and
 * bench/bench_engine.c drive it: a synthetic access source over a model of
 * the program's accesses, and an engine whose invocations run on the
 * calling thread.  The caller owns the machine (simulator, perhaps behind
 * the fault injector), the mover and the array; what each test changes in
 * the configuration it changes on the struct rig_engine_cfg() returns.
 */
#ifndef PH_TESTS_ENGINE_RIG_H
#define PH_TESTS_ENGINE_RIG_H

#include "engine/engine.h"
#include "sample/source.h"

#include <stddef.h>
#include <stdint.h>

/* The tunables' defaults, then: the iterative mechanism, synchronous
 * invocations (ph_engine_iteration_end runs the engine on the caller's
 * thread), full-snapshot sampling with every sample counted once, no
 * sample budget -- exact counts in, deterministic decisions out. */
ph_engine_cfg rig_engine_cfg(void);

/* A synthetic source over fn/model (pages_per_interval, noise and seed as
 * ph_synth_open takes them) and an engine on topo, os and mover with cfg.
 * On failure prints "rig: ..." with the reason and exits 1. */
ph_engine *rig_engine_open(const ph_topology *topo, ph_os *os, ph_mover *mover,
                           const ph_engine_cfg *cfg, ph_synth_model_fn fn, void *model,
                           size_t pages_per_interval, double noise, uint64_t seed);

#endif
