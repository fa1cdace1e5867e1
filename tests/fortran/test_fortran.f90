! test_fortran.f90 -- the Fortran module on the simulated 4-node machine
! (ctest sets PAGEHOME_TOPOLOGY=nodes=4,cpus_per_node=1): topology, a
! block-placed ALLOCATABLE-style array, ph_place on a COMMON block, bad
! input, the migration engine on the COMMON block, and errors that come
! back as text.
program test_fortran
  use, intrinsic :: iso_c_binding
  use pagehome
  implicit none
  integer :: passed = 0, failed = 0, rc, i
  real(c_double), pointer :: a(:)
  integer(c_size_t) :: n, counts(4), first, last
  integer(c_long) :: total
  type(c_ptr) :: topo
  type(ph_placement_t) :: pl
  type(c_ptr) :: area
  type(ph_engine_stats_t) :: est
  real(c_double), target :: grid(262144)
  common /fields/ grid

  call check(ph_init() == 0, "ph_init")
  topo = ph_machine_topology()
  call check(ph_topology_nnodes(topo) == 4, "four simulated nodes")
  call check(ph_topology_distance(topo, 0, 0) == 10, "local distance 10")
  call check(ph_topology_is_synthetic(topo) == 1, "synthetic topology")

  ! A block-placed array: each quarter on its node.
  n = 4 * 131072_c_size_t  ! 4 MiB of doubles = 1024 pages
  call ph_f_alloc_real64(a, n, "block", rc)
  call check(rc == 0 .and. associated(a), "allocate block: " // ph_f_last_error())
  do i = 1, int(n)
     a(i) = real(i, c_double)
  end do
  total = ph_node_histogram(c_loc(a(1)), n * 8_c_size_t, counts, 4_c_int)
  call check(total == 1024, "1024 pages resident")
  call check(all(counts == 256), "256 pages per node")
  rc = ph_affinity_range(c_loc(a(1)), 8_c_size_t, n, 2_c_int, first, last)
  call check(rc == 0 .and. first == n / 2 .and. last == 3 * n / 4, "affinity range of node 2")
  call check(abs(a(n) - real(n, c_double)) < 0.5_c_double, "data intact")
  call check(ph_f_free_real64(a) == 0, "free")

  ! A COMMON block placed after the fact: all of it on node 3.
  grid = 1.0_c_double
  rc = ph_f_place(grid, "node:3")
  call check(rc == 0, "place COMMON on node 3: " // ph_f_last_error())
  total = ph_node_histogram(c_loc(grid(1)), size(grid, kind=c_size_t) * 8_c_size_t, &
       counts, 4_c_int)
  call check(counts(4) >= 511, "COMMON block on node 3")
  call check(abs(sum(grid) - 262144.0_c_double) < 0.5_c_double, "COMMON data intact")

  ! The migration engine: the COMMON block (on node 3) is watched; the
  ! main thread runs on simulated node 0 and sweeps it: the iterative
  ! mechanism moves it to node 0.
  call check(ph_f_config_set("engine_sync", "1") == 0, "engine_sync")
  call check(ph_f_config_set("sample_pages", "0") == 0, "full snapshot")
  area = ph_f_area_register(grid, "grid")
  call check(c_associated(area), "register COMMON grid: " // ph_f_last_error())
  grid = grid + 1.0_c_double
  call check(ph_iteration_end() == 0, "iteration end")
  call check(ph_engine_stats(est) == 0, "engine stats")
  call check(est%migrated >= 511, "grid pages migrated")
  total = ph_node_histogram(c_loc(grid(1)), size(grid, kind=c_size_t) * 8_c_size_t, &
       counts, 4_c_int)
  call check(counts(1) >= 511, "COMMON block followed its user to node 0")
  call check(abs(sum(grid) - 2.0_c_double * 262144.0_c_double) < 0.5_c_double, &
       "COMMON data intact after migration")
  call check(ph_area_unregister(area) == 0, "unregister")
  call check(ph_area_unregister(area) == -1, "unregister twice rejected")
  call check(ph_phase_end(3_c_int) == -1, "phase end without begin rejected")
  ! gangs outside a parallel region: a team of one thread
  call check(ph_gang_size() == 1 .and. ph_gang_count() == 1, "gang of one")
  call check(ph_gang_split(2_c_int) == -1, "a gang of one splits only into one")
  call check(ph_gang_split(1_c_int) == 0 .and. ph_gang_level() == 1, "gang split")
  call check(ph_gang_block(10_c_size_t, first, last) == 0 .and. first == 0 .and. &
       last == 10, "gang block")
  call check(ph_gang_join() == 0 .and. ph_gang_level() == 0, "gang join")
  call check(ph_finalize() == 0, "finalize")
  call check(ph_iteration_end() == -1, "engine call after finalize rejected")

  ! Bad input comes back as -1 and a message.
  pl = ph_f_placement("cyclc:4", rc)
  call check(rc == -1, "unknown policy rejected")
  call check(index(ph_f_last_error(), "cyclc") > 0, "message names it: " // ph_f_last_error())
  rc = ph_f_place(grid, "node:9")
  call check(rc == -1, "node 9 rejected")
  call check(ph_free(c_loc(grid(1))) == -1, "foreign pointer rejected")
  call check(ph_f_config_set("move_retries", "many") == -1, "bad tunable value rejected")

  print '(a,i0,a,i0,a)', "test_fortran: ", passed, " passed, ", failed, " failed"
  if (failed > 0) error stop 1
contains
  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    if (cond) then
       passed = passed + 1
    else
       failed = failed + 1
       print '(a,a)', "FAILED: ", what
    end if
  end subroutine
end program test_fortran
