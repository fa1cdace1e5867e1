/*
 * transparent.h -- what the API layer offers the transparent mode
 * (src/preload/) beyond the public header: calls that are not part of
 * pagehome.h because only libpagehome_preload.so needs them.  Not
 * exported from either library (hidden visibility), same error
 * convention as pagehome.h (-1 + errno, ph_last_error()).
 * Implemented in api_engine.c, over the process engine.
 */
#ifndef PH_API_TRANSPARENT_H
#define PH_API_TRANSPARENT_H

#include "pagehome.h"

/* Switch the process engine's mechanism at run time: "iterative",
 * "sampling", "replay", "hybrid" or "off" (the OMPT front end falls back
 * to sampling when the parallel regions show no period).  0, or -1:
 * EINVAL (unknown name, or after ph_finalize), or the engine's error. */
__attribute__((visibility("hidden")))
int ph_api_engine_switch(const char *mechanism);

/* The engine's totals, unless it is busy (a migration in progress) or
 * there is no engine: then -1 at once, without waiting (the progress
 * line of the transparent mode). */
__attribute__((visibility("hidden")))
int ph_api_engine_try_stats(ph_engine_stats_t *out);

/* A thread of the program starts (transparent mode's pthread_create):
 * give it an alternate signal stack before it can trap.  Does not make
 * the engine; 0 or -1. */
int ph_api_thread_start(void);

#endif
