/*
 * pagehome.h -- the one public header of libpagehome.
 *
 * pagehome decides and corrects the NUMA home of every page of a program's
 * shared data: it places arrays (first-touch, interleave, cyclic, block,
 * block matched to schedule(static), random, single node; 4 KiB or 2 MiB
 * pages), reports where pages live, and moves them.  The same calls run on
 * the real machine (Linux, move_pages(2)/mbind(2)) and on a simulated
 * machine described by a synthetic topology (PAGEHOME_TOPOLOGY).
 *
 * ERROR CONVENTION (the only one in this API)
 *   - Calls returning int return a value >= 0 on success and -1 on failure,
 *     with errno set.  Calls returning a pointer return NULL on failure, with
 *     errno set.  ph_last_error() then gives a one-line message naming what
 *     was wrong (thread-local, valid until the thread's next failing call).
 *   - Batch calls (one entry per page) take a caller-provided `int status[]`
 *     with one slot per page.  On return each slot holds the node the page
 *     is on (>= 0), or a negative errno value for that page (e.g. -ENOENT:
 *     not yet touched; -ENOMEM: target node full; -EBUSY: page busy).  The
 *     call returns the number of pages that did not reach the requested
 *     state (0 = all did), or -1 with errno when nothing was attempted.
 *   - Nodes are the operating system's node numbers (as numactl shows them).
 *     Sizes are in bytes unless the name says otherwise.
 *
 * Every entry point initialises the library on first use; ph_init() only
 * makes that moment explicit.  All calls are thread-safe unless noted.
 */
#ifndef PAGEHOME_H
#define PAGEHOME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define PH_API __attribute__((visibility("default")))
#else
#define PH_API
#endif
/* The entry points of cluster mode, in libpagehome_cluster (link with
 * -lpagehome_cluster, pkg-config pagehome-cluster). */
#define PH_CLUSTER_API PH_API

#define PAGEHOME_VERSION_MAJOR 0
#define PAGEHOME_VERSION_MINOR 1
#define PAGEHOME_VERSION_PATCH 0

/* ------------------------------------------------------------------ */
/* Library                                                             */
/* ------------------------------------------------------------------ */

/* Initialise (read the environment, open the machine).  Idempotent. */
PH_API int ph_init(void);
/* "MAJOR.MINOR.PATCH" */
PH_API const char *ph_version(void);
/* Message for the calling thread's last failure ("" if none). */
PH_API const char *ph_last_error(void);

/* ------------------------------------------------------------------ */
/* Tunables: every one is listed by `pagehome --print-config`, can be    */
/* set by its PAGEHOME_<NAME> environment variable, or here.            */
/* ------------------------------------------------------------------ */

/* Set tunable `name` (e.g. "move_retries") from text.  A bad value fails
 * with EINVAL and leaves the current value in place. */
PH_API int ph_config_set(const char *name, const char *value);
/* Current value of `name` as text into buf (truncated to len). */
PH_API int ph_config_get(const char *name, char *buf, size_t len);
/* Write every tunable, its value and its source to file descriptor fd. */
PH_API int ph_config_print(int fd);

/* ------------------------------------------------------------------ */
/* Topology: the real machine's or a synthetic one                     */
/* ------------------------------------------------------------------ */

typedef struct ph_topology ph_topology_t;

/* The topology of the machine pagehome runs on (real, or simulated when
 * PAGEHOME_TOPOLOGY is set).  Owned by the library: do not destroy. */
PH_API const ph_topology_t *ph_machine_topology(void);
/* Load a topology: NULL or "" = the real machine (hwloc); otherwise a
 * synthetic spec ("nodes=4,cpus_per_node=2,dist=10:20/20:10...") or the
 * path of a JSON file as written by `pagehome topo --json`. */
PH_API ph_topology_t *ph_topology_load(const char *spec);
PH_API void ph_topology_destroy(ph_topology_t *topo);

PH_API int ph_topology_is_synthetic(const ph_topology_t *topo);
/* Number of NUMA nodes, and the OS node number of the idx-th one. */
PH_API int ph_topology_nnodes(const ph_topology_t *topo);
PH_API int ph_topology_node(const ph_topology_t *topo, int idx);
/* Number of CPUs, the idx-th CPU's OS number, and the node of an OS CPU. */
PH_API int ph_topology_ncpus(const ph_topology_t *topo);
PH_API int ph_topology_cpu(const ph_topology_t *topo, int idx);
PH_API int ph_topology_cpu_node(const ph_topology_t *topo, int cpu);
/* CPUs of a node: writes up to max OS cpu numbers, returns how many the
 * node has (may exceed max). */
PH_API int ph_topology_node_cpus(const ph_topology_t *topo, int node,
                                 int *cpus, int max);
/* Memory of a node in bytes (free is a snapshot; 0 when unknown). */
PH_API int ph_topology_node_memory(const ph_topology_t *topo, int node,
                                   uint64_t *total_bytes,
                                   uint64_t *free_bytes);
/* ACPI SLIT distance (10 = local). */
PH_API int ph_topology_distance(const ph_topology_t *topo, int from_node,
                                int to_node);
/* Latency model: load latency from a CPU of from_node to memory on
 * to_node, in ns (measured values when loaded, else local * dist / 10). */
PH_API double ph_topology_latency_ns(const ph_topology_t *topo,
                                     int from_node, int to_node);
/* Cost of migrating one page of page_bytes (4096 or 2 MiB) between two
 * nodes, in ns (measured values when loaded, else the model's). */
PH_API double ph_topology_migrate_ns(const ph_topology_t *topo, int from_node,
                                     int to_node, size_t page_bytes);

/* Node of the calling thread (virtual node on the simulated machine). */
PH_API int ph_current_node(void);
/* Simulated machine: bind the calling thread to a virtual node (node < 0
 * returns to the default rule).  On Linux: fails with ENOTSUP (use
 * sched_setaffinity / OMP_PLACES). */
PH_API int ph_thread_set_node(int node);

/* ------------------------------------------------------------------ */
/* Placement                                                           */
/* ------------------------------------------------------------------ */

typedef enum ph_policy {
    PH_POLICY_FIRST_TOUCH = 0, /* the OS default: where first touched     */
    PH_POLICY_INTERLEAVE = 1,  /* page by page round-robin over nodes     */
    PH_POLICY_CYCLIC = 2,      /* round-robin in blocks of block_pages    */
    PH_POLICY_BLOCK = 3,       /* equal contiguous chunks, one per node   */
    PH_POLICY_BLOCK_STATIC = 4,/* chunks matching schedule(static) rows   */
    PH_POLICY_RANDOM = 5,      /* uniformly random node, seeded           */
    PH_POLICY_SINGLE_NODE = 6  /* every page on `node`                    */
} ph_policy_t;

/* How OpenMP splits `schedule(static)` without a chunk over T threads. */
typedef enum ph_static_split {
    PH_SPLIT_BALANCED = 0, /* libgomp: first N%T threads get one more     */
    PH_SPLIT_GREEDY = 1    /* libomp:  every thread gets ceil(N/T)        */
} ph_static_split_t;

/* A placement request.  Start from ph_placement_init() (or
 * ph_placement_parse()), then set the fields the policy uses. */
typedef struct ph_placement {
    ph_policy_t policy;
    size_t page_bytes;      /* 0 = tunable `pagesize`; 4096 or 2097152   */
    const int *nodes;       /* nodes to spread over, in order; NULL = all */
    int nnodes;             /* entries in nodes (ignored when NULL)       */
    int node;               /* SINGLE_NODE: the node                      */
    size_t block_pages;     /* CYCLIC: pages per block (>= 1)             */
    uint64_t seed;          /* RANDOM: seed (same seed, same placement)   */
    /* BLOCK_STATIC: the array holds `elems` elements of `elem_bytes`,
     * iterated by `schedule(static[, chunk])` over nthreads threads, thread
     * t running on node thread_node[t].  A page goes to the node whose
     * threads touch most of its bytes. */
    size_t elems;
    size_t elem_bytes;
    int nthreads;           /* 0 = the machine's CPU count               */
    size_t chunk;           /* 0 = no chunk (one block per thread)        */
    ph_static_split_t split;
    const int *thread_node; /* NULL = the machine's binding rule          */
} ph_placement_t;

/* Fill *pl with `policy` and defaults for every other field. */
PH_API int ph_placement_init(ph_placement_t *pl, ph_policy_t policy);
/* Parse "first-touch", "interleave", "cyclic:K", "block", "block-static",
 * "random[:SEED]", "node:N" (also "single-node:N"); an optional
 * "@2M"/"@4K" suffix sets the page size. */
PH_API int ph_placement_parse(ph_placement_t *pl, const char *text);
/* Canonical name of a policy ("interleave", ...), or NULL. */
PH_API const char *ph_policy_name(ph_policy_t policy);

/* Map `bytes` of zeroed memory placed by `pl` (NULL = tunable `placement`).
 * Pages the OS can place lazily are bound for their first touch; policies
 * the OS cannot express per range (cyclic, random, block-static) are
 * placed when allocated.  2 MiB pages come from THP or the hugetlbfs pool
 * (tunable `huge_source`); an empty pool fails with ENOMEM. */
PH_API void *ph_alloc(size_t bytes, const ph_placement_t *pl);
/* Release memory from ph_alloc.  A pointer not from ph_alloc, or freed
 * twice, fails with EINVAL and changes nothing. */
PH_API int ph_free(void *ptr);
/* Size requested for a ph_alloc block, and its page size (0 on error). */
PH_API size_t ph_alloc_size(const void *ptr);
PH_API size_t ph_alloc_page_bytes(const void *ptr);

/* Apply `pl` to memory the program already has (static arrays, COMMON
 * blocks, heap): resident pages are moved, untouched ones bound.  The
 * range is widened to whole pages.  status: NULL or one slot per page of
 * the placement's page size.  Batch convention. */
PH_API int ph_place(void *addr, size_t bytes, const ph_placement_t *pl,
                    int *status);

/* Where each 4 KiB page of [addr, addr+bytes) is: status per page.
 * Batch convention (untouched pages report -ENOENT and count as not
 * reaching the state). */
PH_API int ph_query(const void *addr, size_t bytes, int *status);
/* Count resident 4 KiB pages per node: pages_per_node[i] for the i-th
 * node of the machine topology (max entries); returns pages counted. */
PH_API long ph_node_histogram(const void *addr, size_t bytes,
                              size_t *pages_per_node, int max);
/* Move `count` pages (any address inside each page) to nodes[i].
 * Batch convention.  Pages inside a 2 MiB page move with it. */
PH_API int ph_move(size_t count, void *const *pages, const int *nodes,
                   int *status);

/* Affinity: the element range [*begin, *end) of an array whose pages are
 * on `node` (-1 = the calling thread's node): the chunk for a block
 * placement, else the longest run of local elements.  ENOENT if none. */
PH_API int ph_affinity_range(const void *base, size_t elem_bytes,
                             size_t elems, int node, size_t *begin,
                             size_t *end);

/* ------------------------------------------------------------------ */
/* Gangs: the team split into sub-teams, recursively (paper 002's      */
/* proposed `divide` directive, for divide-and-conquer)                */
/* ------------------------------------------------------------------ */
/*
 * Inside a parallel region the team (omp_get_num_threads() threads) is
 * the root gang.  ph_gang_split(G), made by every thread of the current
 * gang, splits it into G gangs of contiguous thread numbers: S / G
 * threads each, the first S % G gangs one more (sizes differ by at most
 * one); it returns the calling thread's gang number.  Gangs nest: a split
 * inside a gang splits that gang.  ph_gang_join(), made by every thread of
 * the gang that split, ends the level.  Split and join wait for every
 * thread of the gang that splits (the barriers before and after the
 * recursion); ph_gang_barrier waits for the thread's innermost gang only.
 *
 *     #pragma omp parallel
 *     {
 *         size_t b, e;
 *         ph_gang_range(n, &b, &e);        // this thread's share, in its gang
 *         ... work on [b, e) of the gang's problem ...
 *         int g = ph_gang_split(2);        // two gangs, recursing apart
 *         ... each gang its half: ph_gang_range, ph_gang_barrier ...
 *         ph_gang_join();                  // the whole team again
 *     }
 *
 * Errors (every thread of the gang gets the same): a count below 1 or
 * above the gang's size (a gang of one splits only into one) fails with
 * EINVAL; threads of one gang in different gang calls, or passing
 * different counts, fail with EPROTO (the gang is unusable afterwards);
 * with the tunable gang_timeout_ms > 0 a thread that waits longer fails
 * with ETIMEDOUT naming the threads that did not come (0, the default,
 * waits like an OpenMP barrier).  Outside a parallel region the team is
 * the calling thread.  One team at a time uses gangs (not nested parallel
 * regions); a region must end with every split joined.
 */
/* Split the current gang into `count` gangs; returns this thread's gang
 * number (0 .. count-1). */
PH_API int ph_gang_split(int count);
/* Back to the parent gang (0), EINVAL when the team is not split. */
PH_API int ph_gang_join(void);
/* A barrier of the calling thread's gang only. */
PH_API int ph_gang_barrier(void);
/* The calling thread's gang: its number among its siblings, their count,
 * its size, the thread's number in it (0 .. size-1), the nesting level
 * (0 = the whole team).  Outside gangs: 0, 1, team, thread, 0. */
PH_API int ph_gang_num(void);
PH_API int ph_gang_count(void);
PH_API int ph_gang_size(void);
PH_API int ph_gang_thread_num(void);
PH_API int ph_gang_level(void);
/* The gang's block of [0, n): [0, n) divided over the whole team in
 * proportion to thread numbers (floor(n * k / T) at each thread
 * boundary k), the part of the gang's threads. */
PH_API int ph_gang_block(size_t n, size_t *begin, size_t *end);
/* The calling thread's share of [0, n) among its gang's threads
 * (schedule(static): n / size each, the first n % size one more). */
PH_API int ph_gang_range(size_t n, size_t *begin, size_t *end);
/* Place [addr, addr+bytes) on the nodes of the gang's threads (as seen at
 * the split that made it: ph_current_node of each), in equal contiguous
 * chunks in thread order (block over those nodes); the whole machine
 * before any split.  Batch convention as ph_place. */
PH_API int ph_gang_place(void *addr, size_t bytes, int *status);
/* Gang-scoped release and acquire of a range: in one process memory is
 * coherent, so these are the memory fences (release / acquire) that order
 * this thread's accesses to the range with the gang's synchronisation;
 * cluster mode's ph_cluster_gang_acquire/release move data. */
PH_API int ph_gang_release(const void *addr, size_t bytes);
PH_API int ph_gang_acquire(const void *addr, size_t bytes);

/* ------------------------------------------------------------------ */
/* The migration engine (UPMlib): hot areas, iterations, phases        */
/* ------------------------------------------------------------------ */
/*
 * Register the arrays that matter (hot areas), then tell the engine where
 * the program is:
 *
 *     ph_hotarea_t *u = ph_area_register(u_array, bytes, "u");
 *     for (step = 0; step < nsteps; step++) {
 *         ... parallel work ...
 *         ph_iteration_end();      // upmlib_migrate_memory()
 *     }
 *     ph_area_unregister(u);       // before freeing the array
 *
 * The engine samples accesses to hot pages (page protection: the first
 * touch of a watched page traps and is counted), applies its criterion
 * (tunable `criterion`: amortised over the expected rest of the run, or
 * UPMlib's competitive one; the predictive one after a thread
 * migration), freezes
 * ping-pong pages, self-tunes, and migrates pages on a memory-manager
 * thread.  The mechanism is the tunable `engine` (PAGEHOME_ENGINE):
 * iterative, sampling (no ph_iteration_end needed), replay (phases),
 * hybrid, off.  On a machine with one NUMA node no page can move, and the
 * engine is off whatever `engine` says (ph_config_get("engine") then
 * reads "off"; the calls below still succeed and the statistics stay
 * zero) unless the tunable `one_node_engine` is 1.
 */

typedef struct ph_hot ph_hotarea_t;

/* Watch the whole 4 KiB pages inside [addr, addr+bytes) (a partial page
 * at either end is not watched: it may hold other data); name is for
 * reports.  EINVAL when no whole page is inside, EEXIST when it overlaps a
 * registered area.  A watched page passed to a system call (read(2) into
 * it) fails with EFAULT instead of trapping: do not register I/O
 * buffers. */
PH_API ph_hotarea_t *ph_area_register(void *addr, size_t bytes,
                                      const char *name);
/* Stop watching; safe while the engine works.  Call it before the memory
 * is freed.  ENOENT for a handle that is not registered. */
PH_API int ph_area_unregister(ph_hotarea_t *area);
/* End of an outer iteration: the iterative mechanism's invocation (runs
 * on the memory-manager thread unless engine_sync is set). */
PH_API int ph_iteration_end(void);
/* The program runs `total` outer iterations in all (0: unknown, the
 * default; the tunable `iterations` says the same): the amortised
 * criterion weighs a move against the rest of the run, and without a
 * count expects the run to last as long again as it has so far.  EINVAL
 * for a negative total. */
PH_API int ph_iterations_expected(long total);
/* Each OpenMP thread at a parallel-region boundary (the transparent mode
 * does it for you): lets the engine see thread migrations and prepares
 * the thread for sampling (an alternate signal stack). */
PH_API int ph_thread_note(int thread_num, int nthreads);
/* Bracket a phase of the iteration (0..63).  Under the replay/hybrid
 * mechanisms the first occurrence records its accesses, later ones move
 * the phase's pages before it and back after it. */
PH_API int ph_phase_begin(int phase);
PH_API int ph_phase_end(int phase);
/* Wait until the memory manager has served every posted iteration. */
PH_API int ph_engine_flush(void);

typedef struct ph_engine_stats {
    uint64_t invocations, iterations;
    uint64_t scanned;        /* pages examined (sampled) */
    uint64_t candidates;     /* pages a criterion selected ("eligible") */
    uint64_t migrated, failed, frozen, melted;
    /* accesses the samples stand for (each sample counts sample_weight),
     * and those of them not made from the page's home, before and after
     * the invocations' migrations */
    uint64_t accesses, remote_accesses_before, remote_accesses_after;
    uint64_t bytes_moved;
    uint64_t predictive_switches, thread_migrations;
    uint64_t replayed, undone;  /* pages moved by phase replay / undo */
    /* 2 MiB pages: moved whole (also counted in migrated), split into
     * 4 KiB pages, collapsed again */
    uint64_t huge_migrated, huge_split, huge_collapsed;
    uint64_t engine_ns, move_ns, sampler_ns;
    int active;              /* the iterative mechanism is still running */
    int predictive;          /* the predictive criterion is in force */
    size_t areas, hot_pages, bookkeeping_bytes;
} ph_engine_stats_t;

typedef struct ph_area_stats {
    uint64_t invocations, scanned, candidates, migrated;
    uint64_t failed_busy, failed_nomem, failed_access, failed_fault,
        failed_other;
    uint64_t frozen, melted;
    uint64_t accesses, remote_accesses; /* estimated, see above */
    uint64_t bytes_moved;
    uint64_t migrated_first2;  /* migrations in the first 2 invocations */
    uint64_t huge_migrated, huge_split, huge_collapsed; /* 2 MiB pages */
} ph_area_stats_t;

PH_API int ph_engine_stats(ph_engine_stats_t *out);
PH_API int ph_area_stats(const ph_hotarea_t *area, ph_area_stats_t *out);
/* Everything the engine knows (totals, areas, every invocation) as JSON
 * to file descriptor fd.  Also written at exit to the tunable
 * `stats_file` when it is set. */
PH_API int ph_stats_write(int fd);
/* Stop the engine (lifting every protection, writing stats_file).  Engine
 * calls after it fail with EINVAL; placement calls keep working. */
PH_API int ph_finalize(void);

/* ------------------------------------------------------------------ */
/* Cluster mode: a page-based distributed shared memory over MPI       */
/* (libpagehome_cluster: pkg-config pagehome-cluster, CMake target     */
/* pagehome::cluster; links libpagehome and MPI)                       */
/* ------------------------------------------------------------------ */
/*
 * SPMD over MPI ranks, one rank per machine (or NUMA domain), an OpenMP
 * team inside each.  ph_cluster_alloc returns memory of a shared arena
 * mapped at the same address in every rank, so pointers into it are valid
 * everywhere.  Every page of it has a home rank (the placement: block,
 * cyclic:K, round-robin, node:R, random, first-touch -- the same texts as
 * NUMA mode, "node" read as "rank"); other ranks fetch copies when they
 * touch it.  Memory is release-consistent: writes become visible to other
 * ranks at ph_cluster_barrier, through a lock (ph_cluster_unlock ...
 * ph_cluster_lock), or through ph_cluster_release ... ph_cluster_acquire
 * of the range.  A data-race-free program gets the results it gets on one
 * machine.
 *
 *     ph_cluster_init(&argc, &argv);
 *     double *u = ph_cluster_alloc(n * sizeof *u, NULL); // cluster_placement
 *     #pragma omp parallel
 *     {
 *         long b, e;
 *         ph_cluster_static_range(n, 0, &b, &e);     // schedule(static)
 *         for (long i = b; i < e; i++) u[i] = f(i);   //  over all ranks
 *         ph_cluster_barrier();                       // all threads, all ranks
 *     }
 *     ph_cluster_free(u);
 *     ph_cluster_finalize();
 *
 * After ph_cluster_init, pagehome's service thread is the only thread of
 * the process that calls MPI; a program that makes MPI calls of its own
 * must initialise MPI itself with MPI_THREAD_MULTIPLE.  Collective calls
 * (init, finalize, alloc, free) are made by one thread per rank, in the
 * same order on every rank.  A rank that dies or stops answering makes
 * the others abort within cluster_timeout_ms with a message naming it.
 */

typedef struct ph_cluster_info {
    int rank, nranks;          /* this rank, ranks in the job */
    int threads;               /* OpenMP threads per rank (omp_get_max_threads at init) */
    void *arena;               /* the shared arena: same address in every rank */
    size_t arena_bytes, used_bytes;
    size_t page_bytes;         /* coherence unit: 4096 */
    char transport[64];        /* e.g. "Open MPI 4.1.4 (1 host)", "MPICH 4.0.2 (2 hosts)" */
    char host[64];             /* this rank's host name */
    char fault_mechanism[32];  /* "userfaultfd", "userfaultfd-user", "userfaultfd-compat" (Linux < 6.5) or "sigsegv" */
} ph_cluster_info_t;

/* Collective.  Calls MPI_Init_thread(MPI_THREAD_SERIALIZED) when MPI is
 * not initialised (argc/argv may be NULL), reserves the arena
 * (cluster_arena_size) and starts the service thread. */
PH_CLUSTER_API int ph_cluster_init(int *argc, char ***argv);
/* ph_cluster_init(NULL, NULL), for languages without argc/argv (the
 * Fortran module binds it as ph_cluster_init()). */
PH_CLUSTER_API int ph_cluster_init_noargs(void);
/* Collective: a final barrier, writes cluster_stats_file, stops the
 * service thread, MPI_Finalize if ph_cluster_init initialised MPI. */
PH_CLUSTER_API int ph_cluster_finalize(void);
PH_CLUSTER_API int ph_cluster_info(ph_cluster_info_t *out);
PH_CLUSTER_API int ph_cluster_rank(void);
PH_CLUSTER_API int ph_cluster_nranks(void);

/* Collective: the same sizes and placements in the same order on every
 * rank (checked: a mismatch fails on every rank with EINVAL and a message
 * naming the ranks and their sizes).  NULL pl = the tunable
 * cluster_placement.  Memory reads as zero.  ENOMEM when it does not fit
 * in the arena. */
PH_CLUSTER_API void *ph_cluster_alloc(size_t bytes, const ph_placement_t *pl);
/* Collective. */
PH_CLUSTER_API int ph_cluster_free(void *ptr);
/* Home rank of the page holding addr; -1/ENOENT for a first-touch page
 * nobody touched yet, -1/EINVAL for an address that is not shared. */
PH_CLUSTER_API int ph_cluster_home(const void *addr);
/* Batch: status[i] = home rank of the i-th 4 KiB page of
 * [addr, addr + bytes) (addr rounded down to a page), or -ENOENT / -EINVAL
 * as above; returns the number of pages without a home. */
PH_CLUSTER_API int ph_cluster_homes(const void *addr, size_t bytes, int *status);

/* Every thread of the current team of every rank (or the one thread
 * outside a parallel region): like an OpenMP barrier, across the job.
 * Everything written before it anywhere is visible after it everywhere. */
PH_CLUSTER_API int ph_cluster_barrier(void);
/* Global locks 0 <= lock_id < cluster_locks, from any thread.  What was
 * written before an unlock is visible after a later lock of any lock
 * (transitively). */
PH_CLUSTER_API int ph_cluster_lock(int lock_id);
PH_CLUSTER_API int ph_cluster_unlock(int lock_id);
/* Selective acquire: the pages of the range become current (cached
 * copies are dropped).  Selective release: this rank's writes to the range
 * reach home.  A release of a range followed (in time, by any agreement)
 * by an acquire of it elsewhere makes the writes visible there. */
PH_CLUSTER_API int ph_cluster_acquire(const void *addr, size_t bytes);
PH_CLUSTER_API int ph_cluster_release(const void *addr, size_t bytes);

/* Collective, and a barrier: declare [addr, addr + bytes) read-only from
 * now on (every rank, the same range, inside memory from
 * ph_cluster_alloc; else -1/EINVAL on every rank).  What was written
 * before is visible after it; the ranks' copies of its pages then stay
 * valid at every barrier and acquire, even one that drops every other
 * copy, and are never fetched again.  A later write to the range, by any
 * thread of any rank, is a fatal error: the job stops with a message
 * naming the address (never a silent stale copy). */
PH_CLUSTER_API int ph_cluster_readonly(const void *addr, size_t bytes);

/* rank * threads + omp_get_thread_num(), and nranks * threads. */
PH_CLUSTER_API int ph_cluster_thread_num(void);
PH_CLUSTER_API int ph_cluster_num_threads(void);
/* This thread's share of [0, n) under schedule(static[, chunk]) as if all
 * ranks' teams were one team (thread rank * team + omp_get_thread_num()).
 * chunk 0: one balanced share (libgomp's split; *begin == *end when the
 * thread gets nothing).  chunk > 0: the first chunk; the next ones from
 * ph_cluster_static_next, which fails with ENOENT when there are no
 * more:
 *     for (rc = ph_cluster_static_range(n, k, &b, &e); rc == 0;
 *          rc = ph_cluster_static_next(n, k, &b, &e))
 *         for (i = b; i < e; i++) ...                                   */
PH_CLUSTER_API int ph_cluster_static_range(long n, long chunk, long *begin,
                                   long *end);
PH_CLUSTER_API int ph_cluster_static_next(long n, long chunk, long *begin,
                                  long *end);
/* Omni's schedule(affinity): the elements of base[0..n) whose first byte
 * lies in a page homed on this rank, split over this rank's team; the
 * thread's share as [*begin, *end), ENOENT when it has none.  The share
 * may span several runs (cyclic homes): ph_cluster_affinity_next gives
 * the piece after *end, ENOENT when done. */
PH_CLUSTER_API int ph_cluster_affinity_range(const void *base, size_t elem_bytes,
                                     size_t n, long *begin, long *end);
PH_CLUSTER_API int ph_cluster_affinity_next(const void *base, size_t elem_bytes,
                                    size_t n, long *begin, long *end);
/* This rank's statistics (faults by kind, traffic, synchronisation, time,
 * one record per barrier interval) as JSON. */
PH_CLUSTER_API int ph_cluster_stats_write(int fd);
/* One of this rank's counters by the key it has in that JSON's "faults",
 * "traffic", "sync", "migration" and "page_classes" objects
 * ("pages_fetched", "whole_pages_sent", "barriers", "migrated_in",
 * "read_only", ...), since ph_cluster_init.  0; -1 with ENOENT for a name that is not a counter,
 * EINVAL for NULL. */
PH_CLUSTER_API int ph_cluster_stat(const char *name, unsigned long long *value);

/* Gangs over the cluster's team: the threads of every rank, numbered
 * rank * team + thread (ph_cluster_thread_num), split into gangs of
 * contiguous numbers exactly as ph_gang_split does over one process's
 * team (sizes, nesting, errors: see "Gangs" above; the calls are made by
 * every thread of the gang on every rank).  Memory: a gang
 * synchronisation (split, join, barrier) whose gang has threads on
 * several ranks is a release of everything this rank wrote (diffs home,
 * write notices into the job's notice log) followed, once every rank of
 * the gang has released, by an acquire on those ranks (copies that any
 * rank wrote since are dropped).  THE CONTRACT: writes made before a
 * gang synchronisation are visible after it to the threads of that gang;
 * threads of other gangs see them after a synchronisation they take part
 * in that follows it (the join of a common parent, ph_cluster_barrier, a
 * lock taken later, or their own next gang synchronisation, which reads
 * the same log).  A synchronisation of a gang holding every thread of
 * every rank (a split of the whole team, the join back to it) is a
 * ph_cluster_barrier in effect: the same memory effects, and homes may
 * move there.  A gang whose threads all live on one rank synchronises
 * inside that rank and moves no data.  Do not mix a gang call on some
 * ranks with ph_cluster_barrier on others at the same point. */
PH_CLUSTER_API int ph_cluster_gang_split(int count);
PH_CLUSTER_API int ph_cluster_gang_join(void);
PH_CLUSTER_API int ph_cluster_gang_barrier(void);
PH_CLUSTER_API int ph_cluster_gang_num(void);
PH_CLUSTER_API int ph_cluster_gang_count(void);
PH_CLUSTER_API int ph_cluster_gang_size(void);
PH_CLUSTER_API int ph_cluster_gang_thread_num(void);
PH_CLUSTER_API int ph_cluster_gang_level(void);
/* The gang's block of [0, n) over the cluster's team, and this thread's
 * share of [0, n) in its gang (as ph_gang_block / ph_gang_range). */
PH_CLUSTER_API int ph_cluster_gang_block(long n, long *begin, long *end);
PH_CLUSTER_API int ph_cluster_gang_range(long n, long *begin, long *end);
/* Gang-scoped release / acquire of a range without a barrier: a gang on
 * one rank only orders memory (a fence); a gang across ranks releases
 * this rank's writes to the range home / drops its copies of the range
 * (ph_cluster_release / ph_cluster_acquire). */
PH_CLUSTER_API int ph_cluster_gang_release(const void *addr, size_t bytes);
PH_CLUSTER_API int ph_cluster_gang_acquire(const void *addr, size_t bytes);

#ifdef __cplusplus
}
#endif
#endif /* PAGEHOME_H */
