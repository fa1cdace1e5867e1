! pagehome.f90 -- the Fortran module of pagehome (ISO_C_BINDING).
!
! Every function of pagehome.h is bound under its C name with C types, so
! the C documentation applies as it is (including the error convention:
! -1 / a null pointer on failure, ph_last_error() says why).  A few
! helpers make the common cases natural from Fortran:
!   ph_f_placement(text)          -> a ph_placement_t parsed from text
!   ph_f_alloc_real64(a, n, text) -> a(1:n) real(c_double) pointer, placed
!   ph_f_free_real64(a)           -> release it
!   ph_f_place(array, text)       -> apply a placement to an existing array
!                                    (static, COMMON, ALLOCATABLE)
!   ph_f_config_set(name, value), ph_f_last_error()
!   ph_f_area_register(array, name) -> watch an array (the migration engine)
!
! Cluster mode (link libpagehome_cluster too: pkg-config pagehome-cluster):
! the ph_cluster_* calls are bound under their C names, as interfaces only
! (NUMA-mode programs link no MPI); ph_cluster_init() takes no arguments
! from Fortran.  Shared arrays come back as c_ptr:
!   type(c_ptr) :: p
!   real(c_double), pointer :: u(:)
!   p = ph_cluster_alloc(n * 8_c_size_t, c_null_ptr)    ! cluster_placement
!   call c_f_pointer(p, u, [n])
module pagehome
  use, intrinsic :: iso_c_binding
  implicit none
  private

  integer(c_int), parameter, public :: PH_POLICY_FIRST_TOUCH = 0, &
       PH_POLICY_INTERLEAVE = 1, PH_POLICY_CYCLIC = 2, PH_POLICY_BLOCK = 3, &
       PH_POLICY_BLOCK_STATIC = 4, PH_POLICY_RANDOM = 5, PH_POLICY_SINGLE_NODE = 6
  integer(c_int), parameter, public :: PH_SPLIT_BALANCED = 0, PH_SPLIT_GREEDY = 1

  ! Same layout as struct ph_placement in pagehome.h.
  type, bind(c), public :: ph_placement_t
     integer(c_int) :: policy = 0
     integer(c_size_t) :: page_bytes = 0
     type(c_ptr) :: nodes = c_null_ptr
     integer(c_int) :: nnodes = 0
     integer(c_int) :: node = 0
     integer(c_size_t) :: block_pages = 1
     integer(c_int64_t) :: seed = 0
     integer(c_size_t) :: elems = 0
     integer(c_size_t) :: elem_bytes = 0
     integer(c_int) :: nthreads = 0
     integer(c_size_t) :: chunk = 0
     integer(c_int) :: split = 0
     type(c_ptr) :: thread_node = c_null_ptr
  end type ph_placement_t

  public :: ph_init, ph_version, ph_last_error, ph_config_set, ph_config_get, &
       ph_config_print, ph_machine_topology, ph_topology_nnodes, ph_topology_node, &
       ph_topology_ncpus, ph_topology_cpu, ph_topology_cpu_node, ph_topology_node_cpus, &
       ph_topology_node_memory, ph_topology_distance, ph_topology_latency_ns, &
       ph_topology_migrate_ns, ph_topology_is_synthetic, ph_topology_load, &
       ph_topology_destroy, ph_current_node, ph_thread_set_node, ph_placement_init, &
       ph_placement_parse, ph_policy_name, ph_alloc, ph_free, ph_alloc_size, &
       ph_alloc_page_bytes, ph_place, ph_query, ph_node_histogram, ph_move, &
       ph_affinity_range, ph_area_register, ph_area_unregister, ph_iteration_end, &
       ph_iterations_expected, &
       ph_thread_note, ph_phase_begin, ph_phase_end, ph_engine_flush, &
       ph_engine_stats, ph_stats_write, ph_finalize
  public :: ph_f_area_register
  public :: ph_gang_split, ph_gang_join, ph_gang_barrier, ph_gang_num, ph_gang_count, &
       ph_gang_size, ph_gang_thread_num, ph_gang_level, ph_gang_block, ph_gang_range, &
       ph_gang_place, ph_gang_release, ph_gang_acquire
  public :: ph_cluster_gang_split, ph_cluster_gang_join, ph_cluster_gang_barrier, &
       ph_cluster_gang_num, ph_cluster_gang_count, ph_cluster_gang_size, &
       ph_cluster_gang_thread_num, ph_cluster_gang_level, ph_cluster_gang_block, &
       ph_cluster_gang_range, ph_cluster_gang_release, ph_cluster_gang_acquire
  public :: ph_cluster_init, ph_cluster_finalize, ph_cluster_info, ph_cluster_rank, &
       ph_cluster_nranks, ph_cluster_alloc, ph_cluster_free, ph_cluster_home, &
       ph_cluster_homes, ph_cluster_barrier, ph_cluster_lock, ph_cluster_unlock, &
       ph_cluster_acquire, ph_cluster_release, ph_cluster_readonly, ph_cluster_thread_num, &
       ph_cluster_num_threads, ph_cluster_static_range, ph_cluster_static_next, &
       ph_cluster_affinity_range, ph_cluster_affinity_next, ph_cluster_stats_write, &
       ph_cluster_stat
  ! Same layout as struct ph_cluster_info in pagehome.h.
  type, bind(c), public :: ph_cluster_info_t
     integer(c_int) :: rank = 0, nranks = 0, threads = 0
     type(c_ptr) :: arena = c_null_ptr
     integer(c_size_t) :: arena_bytes = 0, used_bytes = 0, page_bytes = 0
     character(kind=c_char) :: transport(64) = c_null_char
     character(kind=c_char) :: host(64) = c_null_char
     character(kind=c_char) :: fault_mechanism(32) = c_null_char
  end type ph_cluster_info_t
  ! Same layout as struct ph_engine_stats in pagehome.h.
  type, bind(c), public :: ph_engine_stats_t
     integer(c_int64_t) :: invocations = 0, iterations = 0, scanned = 0, &
          candidates = 0, migrated = 0, failed = 0, frozen = 0, melted = 0, &
          accesses = 0, remote_accesses_before = 0, remote_accesses_after = 0, &
          bytes_moved = 0, predictive_switches = 0, thread_migrations = 0, &
          replayed = 0, undone = 0, engine_ns = 0, move_ns = 0, sampler_ns = 0
     integer(c_int) :: active = 0, predictive = 0
     integer(c_size_t) :: areas = 0, hot_pages = 0, bookkeeping_bytes = 0
  end type ph_engine_stats_t

  public :: ph_f_placement, ph_f_alloc_real64, ph_f_free_real64, ph_f_place, &
       ph_f_config_set, ph_f_last_error, ph_f_c_string

  interface
     function ph_init() bind(c, name="ph_init")
       import :: c_int
       integer(c_int) :: ph_init
     end function
     function ph_version() bind(c, name="ph_version")
       import :: c_ptr
       type(c_ptr) :: ph_version
     end function
     function ph_last_error() bind(c, name="ph_last_error")
       import :: c_ptr
       type(c_ptr) :: ph_last_error
     end function
     function ph_config_set(name, value) bind(c, name="ph_config_set")
       import :: c_int, c_char
       character(kind=c_char), dimension(*), intent(in) :: name, value
       integer(c_int) :: ph_config_set
     end function
     function ph_config_get(name, buf, len) bind(c, name="ph_config_get")
       import :: c_int, c_char, c_size_t
       character(kind=c_char), dimension(*), intent(in) :: name
       character(kind=c_char), dimension(*), intent(out) :: buf
       integer(c_size_t), value :: len
       integer(c_int) :: ph_config_get
     end function
     function ph_config_print(fd) bind(c, name="ph_config_print")
       import :: c_int
       integer(c_int), value :: fd
       integer(c_int) :: ph_config_print
     end function
     function ph_machine_topology() bind(c, name="ph_machine_topology")
       import :: c_ptr
       type(c_ptr) :: ph_machine_topology
     end function
     function ph_topology_load(spec) bind(c, name="ph_topology_load")
       import :: c_ptr, c_char
       character(kind=c_char), dimension(*), intent(in) :: spec
       type(c_ptr) :: ph_topology_load
     end function
     subroutine ph_topology_destroy(t) bind(c, name="ph_topology_destroy")
       import :: c_ptr
       type(c_ptr), value :: t
     end subroutine
     function ph_topology_is_synthetic(t) bind(c, name="ph_topology_is_synthetic")
       import :: c_ptr, c_int
       type(c_ptr), value :: t
       integer(c_int) :: ph_topology_is_synthetic
     end function
     function ph_topology_nnodes(t) bind(c, name="ph_topology_nnodes")
       import :: c_ptr, c_int
       type(c_ptr), value :: t
       integer(c_int) :: ph_topology_nnodes
     end function
     function ph_topology_node(t, idx) bind(c, name="ph_topology_node")
       import :: c_ptr, c_int
       type(c_ptr), value :: t
       integer(c_int), value :: idx
       integer(c_int) :: ph_topology_node
     end function
     function ph_topology_ncpus(t) bind(c, name="ph_topology_ncpus")
       import :: c_ptr, c_int
       type(c_ptr), value :: t
       integer(c_int) :: ph_topology_ncpus
     end function
     function ph_topology_cpu(t, idx) bind(c, name="ph_topology_cpu")
       import :: c_ptr, c_int
       type(c_ptr), value :: t
       integer(c_int), value :: idx
       integer(c_int) :: ph_topology_cpu
     end function
     function ph_topology_cpu_node(t, cpu) bind(c, name="ph_topology_cpu_node")
       import :: c_ptr, c_int
       type(c_ptr), value :: t
       integer(c_int), value :: cpu
       integer(c_int) :: ph_topology_cpu_node
     end function
     function ph_topology_node_cpus(t, node, cpus, max) bind(c, name="ph_topology_node_cpus")
       import :: c_ptr, c_int
       type(c_ptr), value :: t
       integer(c_int), value :: node, max
       integer(c_int), dimension(*), intent(out) :: cpus
       integer(c_int) :: ph_topology_node_cpus
     end function
     function ph_topology_node_memory(t, node, total, free) &
          bind(c, name="ph_topology_node_memory")
       import :: c_ptr, c_int, c_int64_t
       type(c_ptr), value :: t
       integer(c_int), value :: node
       integer(c_int64_t), intent(out) :: total, free
       integer(c_int) :: ph_topology_node_memory
     end function
     function ph_topology_distance(t, a, b) bind(c, name="ph_topology_distance")
       import :: c_ptr, c_int
       type(c_ptr), value :: t
       integer(c_int), value :: a, b
       integer(c_int) :: ph_topology_distance
     end function
     function ph_topology_latency_ns(t, a, b) bind(c, name="ph_topology_latency_ns")
       import :: c_ptr, c_int, c_double
       type(c_ptr), value :: t
       integer(c_int), value :: a, b
       real(c_double) :: ph_topology_latency_ns
     end function
     function ph_topology_migrate_ns(t, a, b, page_bytes) bind(c, name="ph_topology_migrate_ns")
       import :: c_ptr, c_int, c_double, c_size_t
       type(c_ptr), value :: t
       integer(c_int), value :: a, b
       integer(c_size_t), value :: page_bytes
       real(c_double) :: ph_topology_migrate_ns
     end function
     function ph_current_node() bind(c, name="ph_current_node")
       import :: c_int
       integer(c_int) :: ph_current_node
     end function
     function ph_thread_set_node(node) bind(c, name="ph_thread_set_node")
       import :: c_int
       integer(c_int), value :: node
       integer(c_int) :: ph_thread_set_node
     end function
     function ph_placement_init(pl, policy) bind(c, name="ph_placement_init")
       import :: c_int, ph_placement_t
       type(ph_placement_t), intent(out) :: pl
       integer(c_int), value :: policy
       integer(c_int) :: ph_placement_init
     end function
     function ph_placement_parse(pl, text) bind(c, name="ph_placement_parse")
       import :: c_int, c_char, ph_placement_t
       type(ph_placement_t), intent(out) :: pl
       character(kind=c_char), dimension(*), intent(in) :: text
       integer(c_int) :: ph_placement_parse
     end function
     function ph_policy_name(policy) bind(c, name="ph_policy_name")
       import :: c_int, c_ptr
       integer(c_int), value :: policy
       type(c_ptr) :: ph_policy_name
     end function
     function ph_alloc(bytes, pl) bind(c, name="ph_alloc")
       import :: c_size_t, c_ptr, ph_placement_t
       integer(c_size_t), value :: bytes
       type(ph_placement_t), intent(in) :: pl
       type(c_ptr) :: ph_alloc
     end function
     function ph_free(p) bind(c, name="ph_free")
       import :: c_ptr, c_int
       type(c_ptr), value :: p
       integer(c_int) :: ph_free
     end function
     function ph_alloc_size(p) bind(c, name="ph_alloc_size")
       import :: c_ptr, c_size_t
       type(c_ptr), value :: p
       integer(c_size_t) :: ph_alloc_size
     end function
     function ph_alloc_page_bytes(p) bind(c, name="ph_alloc_page_bytes")
       import :: c_ptr, c_size_t
       type(c_ptr), value :: p
       integer(c_size_t) :: ph_alloc_page_bytes
     end function
     function ph_place(addr, bytes, pl, status) bind(c, name="ph_place")
       import :: c_ptr, c_size_t, c_int, ph_placement_t
       type(c_ptr), value :: addr, status
       integer(c_size_t), value :: bytes
       type(ph_placement_t), intent(in) :: pl
       integer(c_int) :: ph_place
     end function
     function ph_query(addr, bytes, status) bind(c, name="ph_query")
       import :: c_ptr, c_size_t, c_int
       type(c_ptr), value :: addr
       integer(c_size_t), value :: bytes
       integer(c_int), dimension(*), intent(out) :: status
       integer(c_int) :: ph_query
     end function
     function ph_node_histogram(addr, bytes, pages_per_node, max) &
          bind(c, name="ph_node_histogram")
       import :: c_ptr, c_size_t, c_int, c_long
       type(c_ptr), value :: addr
       integer(c_size_t), value :: bytes
       integer(c_size_t), dimension(*), intent(out) :: pages_per_node
       integer(c_int), value :: max
       integer(c_long) :: ph_node_histogram
     end function
     function ph_move(count, pages, nodes, status) bind(c, name="ph_move")
       import :: c_size_t, c_ptr, c_int
       integer(c_size_t), value :: count
       type(c_ptr), dimension(*), intent(in) :: pages
       integer(c_int), dimension(*), intent(in) :: nodes
       integer(c_int), dimension(*), intent(out) :: status
       integer(c_int) :: ph_move
     end function
     function ph_affinity_range(base, elem_bytes, elems, node, first, last) &
          bind(c, name="ph_affinity_range")
       import :: c_ptr, c_size_t, c_int
       type(c_ptr), value :: base
       integer(c_size_t), value :: elem_bytes, elems
       integer(c_int), value :: node
       integer(c_size_t), intent(out) :: first, last
       integer(c_int) :: ph_affinity_range
     end function
     function ph_area_register(addr, bytes, name) bind(c, name="ph_area_register")
       import :: c_ptr, c_size_t, c_char
       type(c_ptr), value :: addr
       integer(c_size_t), value :: bytes
       character(kind=c_char), dimension(*), intent(in) :: name
       type(c_ptr) :: ph_area_register
     end function
     function ph_area_unregister(area) bind(c, name="ph_area_unregister")
       import :: c_ptr, c_int
       type(c_ptr), value :: area
       integer(c_int) :: ph_area_unregister
     end function
     function ph_iteration_end() bind(c, name="ph_iteration_end")
       import :: c_int
       integer(c_int) :: ph_iteration_end
     end function
     function ph_iterations_expected(total) bind(c, name="ph_iterations_expected")
       import :: c_int, c_long
       integer(c_long), value :: total
       integer(c_int) :: ph_iterations_expected
     end function
     function ph_thread_note(thread_num, nthreads) bind(c, name="ph_thread_note")
       import :: c_int
       integer(c_int), value :: thread_num, nthreads
       integer(c_int) :: ph_thread_note
     end function
     function ph_phase_begin(phase) bind(c, name="ph_phase_begin")
       import :: c_int
       integer(c_int), value :: phase
       integer(c_int) :: ph_phase_begin
     end function
     function ph_phase_end(phase) bind(c, name="ph_phase_end")
       import :: c_int
       integer(c_int), value :: phase
       integer(c_int) :: ph_phase_end
     end function
     function ph_engine_flush() bind(c, name="ph_engine_flush")
       import :: c_int
       integer(c_int) :: ph_engine_flush
     end function
     function ph_engine_stats(out) bind(c, name="ph_engine_stats")
       import :: c_int, ph_engine_stats_t
       type(ph_engine_stats_t), intent(out) :: out
       integer(c_int) :: ph_engine_stats
     end function
     function ph_stats_write(fd) bind(c, name="ph_stats_write")
       import :: c_int
       integer(c_int), value :: fd
       integer(c_int) :: ph_stats_write
     end function
     ! ---- cluster mode (libpagehome_cluster) ----
     function ph_cluster_init() bind(c, name="ph_cluster_init_noargs")
       import :: c_int
       integer(c_int) :: ph_cluster_init
     end function
     function ph_cluster_finalize() bind(c, name="ph_cluster_finalize")
       import :: c_int
       integer(c_int) :: ph_cluster_finalize
     end function
     function ph_cluster_info(out) bind(c, name="ph_cluster_info")
       import :: c_int, ph_cluster_info_t
       type(ph_cluster_info_t), intent(out) :: out
       integer(c_int) :: ph_cluster_info
     end function
     function ph_cluster_rank() bind(c, name="ph_cluster_rank")
       import :: c_int
       integer(c_int) :: ph_cluster_rank
     end function
     function ph_cluster_nranks() bind(c, name="ph_cluster_nranks")
       import :: c_int
       integer(c_int) :: ph_cluster_nranks
     end function
     function ph_cluster_alloc(bytes, pl) bind(c, name="ph_cluster_alloc")
       import :: c_ptr, c_size_t
       integer(c_size_t), value :: bytes
       type(c_ptr), value :: pl
       type(c_ptr) :: ph_cluster_alloc
     end function
     function ph_cluster_free(ptr) bind(c, name="ph_cluster_free")
       import :: c_ptr, c_int
       type(c_ptr), value :: ptr
       integer(c_int) :: ph_cluster_free
     end function
     function ph_cluster_home(addr) bind(c, name="ph_cluster_home")
       import :: c_ptr, c_int
       type(c_ptr), value :: addr
       integer(c_int) :: ph_cluster_home
     end function
     function ph_cluster_homes(addr, bytes, status) bind(c, name="ph_cluster_homes")
       import :: c_ptr, c_int, c_size_t
       type(c_ptr), value :: addr
       integer(c_size_t), value :: bytes
       integer(c_int), dimension(*), intent(out) :: status
       integer(c_int) :: ph_cluster_homes
     end function
     function ph_cluster_barrier() bind(c, name="ph_cluster_barrier")
       import :: c_int
       integer(c_int) :: ph_cluster_barrier
     end function
     function ph_cluster_lock(id) bind(c, name="ph_cluster_lock")
       import :: c_int
       integer(c_int), value :: id
       integer(c_int) :: ph_cluster_lock
     end function
     function ph_cluster_unlock(id) bind(c, name="ph_cluster_unlock")
       import :: c_int
       integer(c_int), value :: id
       integer(c_int) :: ph_cluster_unlock
     end function
     function ph_cluster_acquire(addr, bytes) bind(c, name="ph_cluster_acquire")
       import :: c_ptr, c_int, c_size_t
       type(c_ptr), value :: addr
       integer(c_size_t), value :: bytes
       integer(c_int) :: ph_cluster_acquire
     end function
     function ph_cluster_release(addr, bytes) bind(c, name="ph_cluster_release")
       import :: c_ptr, c_int, c_size_t
       type(c_ptr), value :: addr
       integer(c_size_t), value :: bytes
       integer(c_int) :: ph_cluster_release
     end function
     function ph_cluster_readonly(addr, bytes) bind(c, name="ph_cluster_readonly")
       import :: c_ptr, c_int, c_size_t
       type(c_ptr), value :: addr
       integer(c_size_t), value :: bytes
       integer(c_int) :: ph_cluster_readonly
     end function
     function ph_cluster_thread_num() bind(c, name="ph_cluster_thread_num")
       import :: c_int
       integer(c_int) :: ph_cluster_thread_num
     end function
     function ph_cluster_num_threads() bind(c, name="ph_cluster_num_threads")
       import :: c_int
       integer(c_int) :: ph_cluster_num_threads
     end function
     function ph_cluster_static_range(n, chunk, b, e) bind(c, name="ph_cluster_static_range")
       import :: c_long, c_int
       integer(c_long), value :: n, chunk
       integer(c_long), intent(out) :: b, e
       integer(c_int) :: ph_cluster_static_range
     end function
     function ph_cluster_static_next(n, chunk, b, e) bind(c, name="ph_cluster_static_next")
       import :: c_long, c_int
       integer(c_long), value :: n, chunk
       integer(c_long), intent(inout) :: b, e
       integer(c_int) :: ph_cluster_static_next
     end function
     function ph_cluster_affinity_range(base, elem_bytes, n, b, e) &
          bind(c, name="ph_cluster_affinity_range")
       import :: c_ptr, c_size_t, c_long, c_int
       type(c_ptr), value :: base
       integer(c_size_t), value :: elem_bytes, n
       integer(c_long), intent(out) :: b, e
       integer(c_int) :: ph_cluster_affinity_range
     end function
     function ph_cluster_affinity_next(base, elem_bytes, n, b, e) &
          bind(c, name="ph_cluster_affinity_next")
       import :: c_ptr, c_size_t, c_long, c_int
       type(c_ptr), value :: base
       integer(c_size_t), value :: elem_bytes, n
       integer(c_long), intent(inout) :: b, e
       integer(c_int) :: ph_cluster_affinity_next
     end function
     function ph_cluster_stats_write(fd) bind(c, name="ph_cluster_stats_write")
       import :: c_int
       integer(c_int), value :: fd
       integer(c_int) :: ph_cluster_stats_write
     end function
     ! name: a C string (trim(name) // c_null_char)
     function ph_cluster_stat(name, value) bind(c, name="ph_cluster_stat")
       import :: c_int, c_char, c_long_long
       character(kind=c_char), dimension(*), intent(in) :: name
       integer(c_long_long), intent(out) :: value
       integer(c_int) :: ph_cluster_stat
     end function
     function ph_finalize() bind(c, name="ph_finalize")
       import :: c_int
       integer(c_int) :: ph_finalize
     end function
     function c_strlen(s) bind(c, name="strlen")
       import :: c_ptr, c_size_t
       type(c_ptr), value :: s
       integer(c_size_t) :: c_strlen
     end function
     ! ---- gangs (pagehome.h "Gangs") ----
     function ph_gang_split(count) bind(c, name="ph_gang_split")
       import :: c_int
       integer(c_int), value :: count
       integer(c_int) :: ph_gang_split
     end function
     function ph_gang_join() bind(c, name="ph_gang_join")
       import :: c_int
       integer(c_int) :: ph_gang_join
     end function
     function ph_gang_barrier() bind(c, name="ph_gang_barrier")
       import :: c_int
       integer(c_int) :: ph_gang_barrier
     end function
     function ph_gang_num() bind(c, name="ph_gang_num")
       import :: c_int
       integer(c_int) :: ph_gang_num
     end function
     function ph_gang_count() bind(c, name="ph_gang_count")
       import :: c_int
       integer(c_int) :: ph_gang_count
     end function
     function ph_gang_size() bind(c, name="ph_gang_size")
       import :: c_int
       integer(c_int) :: ph_gang_size
     end function
     function ph_gang_thread_num() bind(c, name="ph_gang_thread_num")
       import :: c_int
       integer(c_int) :: ph_gang_thread_num
     end function
     function ph_gang_level() bind(c, name="ph_gang_level")
       import :: c_int
       integer(c_int) :: ph_gang_level
     end function
     function ph_gang_block(n, b, e) bind(c, name="ph_gang_block")
       import :: c_size_t, c_int
       integer(c_size_t), value :: n
       integer(c_size_t), intent(out) :: b, e
       integer(c_int) :: ph_gang_block
     end function
     function ph_gang_range(n, b, e) bind(c, name="ph_gang_range")
       import :: c_size_t, c_int
       integer(c_size_t), value :: n
       integer(c_size_t), intent(out) :: b, e
       integer(c_int) :: ph_gang_range
     end function
     function ph_gang_place(addr, bytes, status) bind(c, name="ph_gang_place")
       import :: c_ptr, c_size_t, c_int
       type(c_ptr), value :: addr, status
       integer(c_size_t), value :: bytes
       integer(c_int) :: ph_gang_place
     end function
     function ph_gang_release(addr, bytes) bind(c, name="ph_gang_release")
       import :: c_ptr, c_int, c_size_t
       type(c_ptr), value :: addr
       integer(c_size_t), value :: bytes
       integer(c_int) :: ph_gang_release
     end function
     function ph_gang_acquire(addr, bytes) bind(c, name="ph_gang_acquire")
       import :: c_ptr, c_int, c_size_t
       type(c_ptr), value :: addr
       integer(c_size_t), value :: bytes
       integer(c_int) :: ph_gang_acquire
     end function
     function ph_cluster_gang_release(addr, bytes) bind(c, name="ph_cluster_gang_release")
       import :: c_ptr, c_int, c_size_t
       type(c_ptr), value :: addr
       integer(c_size_t), value :: bytes
       integer(c_int) :: ph_cluster_gang_release
     end function
     function ph_cluster_gang_acquire(addr, bytes) bind(c, name="ph_cluster_gang_acquire")
       import :: c_ptr, c_int, c_size_t
       type(c_ptr), value :: addr
       integer(c_size_t), value :: bytes
       integer(c_int) :: ph_cluster_gang_acquire
     end function
     function ph_cluster_gang_split(count) bind(c, name="ph_cluster_gang_split")
       import :: c_int
       integer(c_int), value :: count
       integer(c_int) :: ph_cluster_gang_split
     end function
     function ph_cluster_gang_join() bind(c, name="ph_cluster_gang_join")
       import :: c_int
       integer(c_int) :: ph_cluster_gang_join
     end function
     function ph_cluster_gang_barrier() bind(c, name="ph_cluster_gang_barrier")
       import :: c_int
       integer(c_int) :: ph_cluster_gang_barrier
     end function
     function ph_cluster_gang_num() bind(c, name="ph_cluster_gang_num")
       import :: c_int
       integer(c_int) :: ph_cluster_gang_num
     end function
     function ph_cluster_gang_count() bind(c, name="ph_cluster_gang_count")
       import :: c_int
       integer(c_int) :: ph_cluster_gang_count
     end function
     function ph_cluster_gang_size() bind(c, name="ph_cluster_gang_size")
       import :: c_int
       integer(c_int) :: ph_cluster_gang_size
     end function
     function ph_cluster_gang_thread_num() bind(c, name="ph_cluster_gang_thread_num")
       import :: c_int
       integer(c_int) :: ph_cluster_gang_thread_num
     end function
     function ph_cluster_gang_level() bind(c, name="ph_cluster_gang_level")
       import :: c_int
       integer(c_int) :: ph_cluster_gang_level
     end function
     function ph_cluster_gang_block(n, b, e) bind(c, name="ph_cluster_gang_block")
       import :: c_long, c_int
       integer(c_long), value :: n
       integer(c_long), intent(out) :: b, e
       integer(c_int) :: ph_cluster_gang_block
     end function
     function ph_cluster_gang_range(n, b, e) bind(c, name="ph_cluster_gang_range")
       import :: c_long, c_int
       integer(c_long), value :: n
       integer(c_long), intent(out) :: b, e
       integer(c_int) :: ph_cluster_gang_range
     end function
  end interface

contains

  !> Register a real(c_double) array as a hot area (UPMlib's
  !> upmlib_memrefcnt); pass a multi-dimensional array as a(:, 1) style
  !> contiguous storage or by sequence association.  Returns the handle,
  !> c_null_ptr on failure.
  function ph_f_area_register(array, name) result(area)
    real(c_double), dimension(:), contiguous, target, intent(in) :: array
    character(len=*), intent(in) :: name
    type(c_ptr) :: area
    area = ph_area_register(c_loc(array(1)), size(array, kind=c_size_t) * &
         c_sizeof(0.0_c_double), ph_f_c_string(name))
  end function

  !> A NUL-terminated copy of a Fortran string, for the C calls.
  pure function ph_f_c_string(s) result(c)
    character(len=*), intent(in) :: s
    character(kind=c_char, len=len_trim(s) + 1) :: c
    c = trim(s) // c_null_char
  end function

  !> A C string as a Fortran string.
  function from_c(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer(c_size_t) :: n, i
    if (.not. c_associated(p)) then
       s = ""
       return
    end if
    n = c_strlen(p)
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: s)
    do i = 1, n
       s(i:i) = chars(i)
    end do
  end function

  !> The message of the calling thread's last failure.
  function ph_f_last_error() result(s)
    character(len=:), allocatable :: s
    s = from_c(ph_last_error())
  end function

  !> Set a tunable by name; returns 0 or -1.
  integer function ph_f_config_set(name, value)
    character(len=*), intent(in) :: name, value
    ph_f_config_set = ph_config_set(ph_f_c_string(name), ph_f_c_string(value))
  end function

  !> Parse a placement ("block", "cyclic:4@2M", ...); stat = 0 or -1.
  function ph_f_placement(text, stat) result(pl)
    character(len=*), intent(in) :: text
    integer, intent(out), optional :: stat
    type(ph_placement_t) :: pl
    integer(c_int) :: rc
    rc = ph_placement_parse(pl, ph_f_c_string(text))
    if (present(stat)) stat = rc
  end function

  !> Allocate a(1:n) of real(c_double), placed by `text`.  a is null and
  !> stat = -1 on failure.
  subroutine ph_f_alloc_real64(a, n, text, stat)
    real(c_double), pointer, intent(out) :: a(:)
    integer(c_size_t), intent(in) :: n
    character(len=*), intent(in) :: text
    integer, intent(out), optional :: stat
    type(ph_placement_t) :: pl
    type(c_ptr) :: p
    integer :: rc
    nullify(a)
    pl = ph_f_placement(text, rc)
    if (rc == 0) then
       if (pl%policy == PH_POLICY_BLOCK_STATIC) then
          pl%elems = n
          pl%elem_bytes = c_sizeof(0.0_c_double)
       end if
       p = ph_alloc(n * c_sizeof(0.0_c_double), pl)
       if (c_associated(p)) then
          call c_f_pointer(p, a, [n])
       else
          rc = -1
       end if
    end if
    if (present(stat)) stat = rc
  end subroutine

  !> Release an array from ph_f_alloc_real64; returns 0 or -1.
  integer function ph_f_free_real64(a)
    real(c_double), pointer, intent(inout) :: a(:)
    ph_f_free_real64 = ph_free(c_loc(a(1)))
    if (ph_f_free_real64 == 0) nullify(a)
  end function

  !> Apply a placement to an existing contiguous real(c_double) array
  !> (static, COMMON or ALLOCATABLE); returns pages not placed, or -1.
  integer function ph_f_place(array, text)
    real(c_double), intent(inout), target, contiguous :: array(:)
    character(len=*), intent(in) :: text
    type(ph_placement_t) :: pl
    integer :: rc
    pl = ph_f_placement(text, rc)
    if (rc /= 0) then
       ph_f_place = -1
       return
    end if
    if (pl%policy == PH_POLICY_BLOCK_STATIC) then
       pl%elems = size(array, kind=c_size_t)
       pl%elem_bytes = c_sizeof(0.0_c_double)
    end if
    ph_f_place = ph_place(c_loc(array(1)), size(array, kind=c_size_t) * &
         c_sizeof(0.0_c_double), pl, c_null_ptr)
  end function
end module pagehome
