/*
 * transparent.h -- what the API layer offers the transparent mode
 * (src/preload/) beyond the public header: calls that are not part of
 * pagehome.h because only libpagehome_preload.so needs them.  Not
 * exported from either library (hidden visibility), same error
 * convention as pagehome.h (-1 + errno, ph_last_error()).
 * Implemented in api_engine.c, over the process engine, and (placing
 * static segments and hot blocks) in api_place.c.
 */
#ifndef PH_API_TRANSPARENT_H
#define PH_API_TRANSPARENT_H

#include "pagehome.h"

/* Whether the process engine is off because the machine has one NUMA
 * node (no page can move there; the tunable one_node_engine keeps it).
 * On such a machine it sets the engine tunable to off, so call it before
 * reading the mechanism (ph_init and the making of the engine do). */
__attribute__((visibility("hidden")))
int ph_api_engine_one_node(void);

/* Switch the process engine's mechanism at run time: "iterative",
 * "sampling", "replay", "hybrid" or "off" (the OMPT front end falls back
 * to sampling when the parallel regions show no period).  0, or -1:
 * EINVAL (unknown name, or after ph_finalize), or the engine's error. */
__attribute__((visibility("hidden")))
int ph_api_engine_switch(const char *mechanism);

/* A hot area's memory goes out of use (idle 1: transparent mode keeps a
 * freed block for the next request of its size) or into use again (0):
 * ph_engine_area_idle.  0, or -1: EINVAL (NULL area, no engine), ENOENT,
 * or the sampler's error. */
__attribute__((visibility("hidden")))
int ph_api_area_idle(ph_hotarea_t *area, int idle);

/* The engine's totals, unless it is busy (a migration in progress) or
 * there is no engine: then -1 at once, without waiting (the progress
 * line of the transparent mode). */
__attribute__((visibility("hidden")))
int ph_api_engine_try_stats(ph_engine_stats_t *out);

/* ph_place for a static segment of the program: resident pages are
 * moved to the placement's nodes, untouched ones only bound for their
 * first touch, whatever the placement (a segment sized for the largest
 * input is not faulted in whole; place.c, bind_untouched).  No status;
 * returns the pages not placed, or -1. */
__attribute__((visibility("hidden")))
int ph_api_place_segment(void *addr, size_t bytes, const ph_placement_t *pl);

/* The program set a memory policy of its own for the process (its
 * initial thread's set_mempolicy(2)): own 0 (MPOL_DEFAULT) or 1, and the
 * node ids of an MPOL_BIND (NULL, 0 otherwise).  The engine's decisions
 * keep to a binding from then on, and pagehome's first-touch policy for
 * hot ranges made later leaves them to the process's (os.h,
 * process_policy).  0 or -1. */
__attribute__((visibility("hidden")))
int ph_api_process_policy(int own, const int *bind_nodes, int nbind);

/* ph_alloc for a hot heap block of the program: a placement the kernel
 * cannot hold per range (cyclic, random, block-static) binds the block
 * for its first touch instead of faulting every page in (a pool of which
 * the program uses a part). */
__attribute__((visibility("hidden")))
void *ph_api_alloc_hot(size_t bytes, const ph_placement_t *pl);

/* The OpenMP runtime started pagehome's tool (OMPT initialize);
 * runtime_addr is an address inside it (the lookup function it passed).
 * A runtime loaded after pagehome -- by dlopen: a plugin, a Python
 * extension -- is made known to what asks OpenMP about the calling thread
 * (the simulated machine's binding rule).  Not async-signal-safe; 0 or
 * -1. */
__attribute__((visibility("hidden")))
int ph_api_openmp_started(const void *runtime_addr);

/* No OpenMP tool will run in this process (OMP_TOOL turns tools off, or
 * the runtime is GNU libgomp): no thread will note its place at its
 * implicit tasks.  Said before the engine is made; then, on the
 * simulated machine, whose threads' places only the threads themselves
 * can ask, the automatic sample mechanism is mprotect (its traps run in
 * the faulting thread), not userfaultfd (a service thread answers). */
__attribute__((visibility("hidden")))
void ph_api_openmp_tool_absent(void);

/* A thread of the program starts (transparent mode's pthread_create):
 * give it an alternate signal stack before it can trap.  Does not make
 * the engine; 0 or -1. */
int ph_api_thread_start(void);

/* fork(): the preload library orders pagehome's locks across fork()
 * itself (src/preload/fork.c) and says so before the engine is made
 * (ph_api_fork_external); then these are not registered with
 * pthread_atfork by the API layer.  prepare takes the engine's locks
 * (an invocation in progress finishes first), parent releases them,
 * child makes them afresh and leaves the engine without its memory
 * manager thread (engine.h, ph_engine_fork_child). */
__attribute__((visibility("hidden"))) void ph_api_fork_external(void);
__attribute__((visibility("hidden"))) void ph_api_fork_prepare(void);
__attribute__((visibility("hidden"))) void ph_api_fork_parent(void);
__attribute__((visibility("hidden"))) void ph_api_fork_child(void);
/* The machine's locks (machine.h), taken last: after every lock whose
 * holder may call the machine (the sampler's gate too). */
__attribute__((visibility("hidden"))) void ph_api_fork_prepare_machine(void);
__attribute__((visibility("hidden"))) void ph_api_fork_parent_machine(void);
__attribute__((visibility("hidden"))) void ph_api_fork_child_machine(void);

/* Exit paths that run no atexit handler (_exit, _Exit): due is 1 when
 * this process has statistics to write (an engine, a stats_file it owns,
 * not finalized); exit_stats waits for the engine and writes them: 1
 * written, 0 nothing to write, -1 failed (a warning was said). */
__attribute__((visibility("hidden"))) int ph_api_exit_stats_due(void);
__attribute__((visibility("hidden"))) int ph_api_exit_stats(void);

/* 1 when the engine this process will make samples with page protection
 * (the mprotect mechanism: sample_mechanism=mprotect; 2 MiB pages; or
 * userfaultfd asked for or chosen by auto but not usable here), so that
 * a watched page is PROT_NONE to the kernel and another process's
 * accesses to it (process_vm_readv) fail; 0 when it uses userfaultfd
 * (kernel accesses wait) or the engine is off.  Probes userfaultfd. */
__attribute__((visibility("hidden"))) int ph_api_sampler_protects(void);

/* The statistics file as a finished JSON document (the engine off: there
 * are no engine statistics), written where and by whom the engine's
 * would be (api/stats_file.h: the tunable's keys replaced, the owning
 * process only, through a file renamed over it).  0, or -1 (a warning
 * was said). */
struct ph_jw;
__attribute__((visibility("hidden"))) int ph_api_write_stats_doc(struct ph_jw *w);

#endif
