/*
 * stats_file.h -- the statistics file of the tunable stats_file
 * (PAGEHOME_STATS_FILE, `pagehome run --report`): where, who, when
 * (stats_file.c).  Private to src/api/.
 *
 * WHERE.  The path is read and made absolute once, against the working
 * directory the process had then (ph_init(): the preload library's
 * constructor, before main), so a program that chdir()s later still
 * writes where it was asked to.  Its keys %r (the MPI launcher's rank),
 * %p (the PID), %h (the host) and %% are replaced then
 * (base/path_pattern.h): the ranks of an MPI job each write their own.
 *
 * WHO.  The process that read it first owns the file: a fork() child
 * (another PID) never writes it, so its statistics cannot clobber its
 * parent's.  A program started by exec gets its own preload library,
 * reads the tunable again and owns the file in turn (a wrapper script's
 * program writes it).
 *
 * WHEN.  When the engine is made, a notice that says the statistics were
 * not written yet ("incomplete": true); at exit(), quick_exit(),
 * ph_finalize() and the transparent mode's _exit() the engine's
 * statistics replace it.  A process that ends without any of those
 * (killed, a fatal signal) leaves the notice, which says so instead of
 * pretending that nothing was measured.  Every write goes to a file
 * beside the target and is renamed over it: a reader never sees half a
 * file, and two writers never interleave.
 */
#ifndef PH_API_STATS_FILE_H
#define PH_API_STATS_FILE_H

#include "engine/engine.h"

/* Read the tunable and make it absolute (once; later calls do nothing). */
void ph_statsfile_init(void);

/* 1 when this process owns a statistics file (a path is set and this is
 * the process that read it). */
int ph_statsfile_owned(void);

/* The notice, written when the engine is made (owner only). */
void ph_statsfile_notice(void);

/* e's statistics (owner only).  0, or -1 with a warning said. */
int ph_statsfile_write(ph_engine *e);

/* A finished JSON document instead, when there is no engine (transparent
 * mode with the engine off, through ph_api_write_stats_doc of
 * transparent.h).  Owner only; 0, or -1 with a warning said. */
struct ph_jw;
int ph_statsfile_write_doc(struct ph_jw *w);

#endif
