/*
 * fork.c -- fork() in a program under transparent mode: the order in which
 * pagehome's locks are taken across it, and the child's state.
 *
 * A fork() child has one thread, the one that called fork().  Any lock of
 * pagehome that another thread of the parent held at that moment would
 * stay taken in the child for good, and the engine's memory-manager
 * thread does not exist there.  So, with one pthread_atfork registration
 * made before anything else of pagehome runs (constructor priority 101,
 * before the constructors that make the engine):
 *
 *   prepare  1. hot.c's gate, for writing: every thread that is inside a
 *               call the interposition made into pagehome (ph_alloc,
 *               registering an area) has left it;
 *            2. the API layer's engine lock and the engine's own lock: an
 *               invocation of the memory manager in progress finishes
 *               first (api/transparent.h, ph_api_fork_prepare);
 *            2b. the sampler's region gate (sample/source.h), which the
 *               memory manager takes under the engine's lock;
 *            3. ompt.c's lock (OMPT callbacks of other threads);
 *            4. the table of hot blocks (blocks.c);
 *            5. the machine's locks (the simulator's registry: the
 *               userfaultfd sampler's service thread, which no lock
 *               above stops, notes every page it moves there).
 *   parent   releases them in the reverse order.
 *   child    makes each of them afresh (glibc's locks check the owner's
 *            TID, and the child's thread has another) and leaves the
 *            engine without its manager: it keeps its areas and counts
 *            and runs its invocations on the calling thread from then on
 *            (engine.h, ph_engine_fork_child).
 *
 * The order is the one every other path takes them in: a thread holding
 * the gate may go on to the engine's locks and the table, the memory
 * manager holding the engine's lock may look a pointer up in the table
 * (its own realloc/free), and nothing that holds the table or ompt.c's
 * lock waits for anything.  The child never writes the parent's
 * statistics file (api/stats_file.h: the file belongs to the process that
 * read the tunable), so exit(), _exit() or exec in a child leave the
 * parent's report alone.
 */
#include "preload/hot.h"
#include "preload/preload.h"

#include "base/own_fd.h"

#include "api/transparent.h"
#include "sample/source.h"

#include <pthread.h>

static void fork_prepare(void)
{
    ph_hot_fork_prepare();
    ph_api_fork_prepare();
    ph_sampler_gate_fork_prepare();
    ph_preload_ompt_fork_prepare();
    ph_blocks_lock(&ph_heap_blocks);
    ph_api_fork_prepare_machine();
}

static void fork_parent(void)
{
    ph_api_fork_parent_machine();
    ph_blocks_unlock(&ph_heap_blocks);
    ph_preload_ompt_fork_parent();
    ph_sampler_gate_fork_parent();
    ph_api_fork_parent();
    ph_hot_fork_parent();
}

static void fork_child(void)
{
    ph_own_fd_fork_child();
    ph_api_fork_child_machine();
    ph_blocks_reset_lock(&ph_heap_blocks);
    ph_preload_ompt_fork_child();
    ph_sampler_gate_fork_child();
    ph_api_fork_child();
    ph_hot_fork_child();
}

__attribute__((constructor(101))) static void fork_start(void)
{
    ph_api_fork_external();
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}
