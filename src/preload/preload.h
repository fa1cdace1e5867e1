/*
 * preload.h -- transparent mode: what the parts of libpagehome_preload.so
 * share.  Private to src/preload/.
 *
 * libpagehome_preload.so is libpagehome plus these parts, loaded into an
 * unmodified OpenMP program by `pagehome run` (LD_PRELOAD):
 *   preload.c  start-up and exit: reads the tunables, registers the large
 *              writable static segments, writes the statistics at exit;
 *   malloc.c,  the malloc family and mmap/munmap/mremap: allocations of at
 *   mmap.c     least `hot_threshold` bytes made by the program come from
 *              the placement allocator and are registered as hot areas
 *              (hot.c decides and serves, blocks.c is the table of hot
 *              blocks, realsym.c finds the real functions);
 *   ompt.c     the OpenMP tools interface (ompt_start_tool): thread notes at
 *              implicit-task begin (the predictive criterion, per-thread
 *              signal stacks) and the stream of parallel regions;
 *   ompt_chain.c  another OMPT tool in the same process (a profiler) keeps
 *              its callbacks: it is started and multiplexed with ompt.c;
 *   period.c   finds the period of that stream (the outer iteration) and
 *              calls the engine's iteration end at each period boundary;
 *   syscalls.c, signals.c  system calls on watched pages, the program's
 *              own SIGSEGV handlers;
 *   mpi_env.c  the ranks of an MPI job under the mprotect mechanism: the
 *              MPI libraries' single-copy transfers between processes off.
 */
#ifndef PH_PRELOAD_PRELOAD_H
#define PH_PRELOAD_PRELOAD_H

#include <stddef.h>
#include <stdint.h>

/* 1 when the return address ra is inside libpagehome_preload.so itself:
 * pagehome's own allocations are never intercepted (hot.c). */
int ph_preload_is_internal(const void *ra);

/* 1 once the preload library has finished its constructor. */
int ph_preload_ready(void);
/* The program set a memory policy of its own for the process (own = 1)
 * or went back to the default (own = 0): the static segments pagehome
 * gave a first-touch policy (kernel_balancing=exclude) are handed to the
 * process's policy, or get theirs back -- except pages the program bound
 * itself (mbind). */
void ph_preload_static_policy(int own);

/* hot.c's counters: hot blocks served since start and their bytes. */
void ph_heap_stats(uint64_t *hot_blocks, uint64_t *hot_bytes);
/* Hot blocks and bytes alive now, large requests passed to the real
 * allocator (internal, not ready, unsupported shapes), placement
 * failures. */
void ph_heap_stats_more(uint64_t *live_blocks, uint64_t *live_bytes,
                        uint64_t *large_passed, uint64_t *failed);

/* ompt.c: at start-up (before any engine), an OMP_TOOL that lets the
 * runtime start no tool turns the default mechanism into the sampling
 * one, with a warning. */
void ph_preload_ompt_env(void);

/* ompt.c: the "openmp" object of the report (what the tools interface
 * saw; says so when no OpenMP runtime started the tool). */
struct ph_jw;
void ph_preload_ompt_report(struct ph_jw *w);

/* mpi_env.c: at start-up (before main), under a launcher that started
 * several processes and with the mprotect mechanism, the MPI libraries'
 * variables that turn their single-copy transfers off; and the report's
 * "mpi" object (nothing outside such a job). */
void ph_preload_mpi_env(void);
void ph_preload_mpi_report(struct ph_jw *w);

/* ompt.c: its lock across fork() (fork.c). */
void ph_preload_ompt_fork_prepare(void);
void ph_preload_ompt_fork_parent(void);
void ph_preload_ompt_fork_child(void);

#endif
