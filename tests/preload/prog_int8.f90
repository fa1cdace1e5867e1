! prog_int8.f90 -- an OpenMP Fortran program built with -fdefault-integer-8,
! as some codes are: omp_lib then calls libgomp's integer(8) entry points
! (omp_set_num_threads_8_, ...), which `pagehome run` provides on LLVM's
! libomp (src/preload/gomp_shim.c).  check_libs.sh compares its stdout with
! a plain run's.
program prog_int8
  use omp_lib
  implicit none
  integer(omp_sched_kind) :: kind_
  integer :: chunk, n, i, it
  real(8), allocatable :: a(:), b(:)
  call omp_set_num_threads(2)
  call omp_set_dynamic(.false.)
  call omp_set_max_active_levels(1)
  call omp_set_schedule(omp_sched_dynamic, 4)
  call omp_get_schedule(kind_, chunk)
  allocate(a(2000000), b(2000000))
  n = 0
  do it = 1, 6
!$omp parallel do schedule(static) reduction(+:n)
    do i = 1, size(a)
      a(i) = i + it
      b(i) = 2 * a(i)
      if (omp_get_team_size(1) == omp_get_num_threads()) n = n + 1
    end do
!$omp end parallel do
  end do
  print '(a,i0,a,i0)', 'prog_int8: schedule kind ', kind_, ' chunk ', chunk
  if (kind_ == omp_sched_dynamic .and. chunk == 4 .and. n == 6 * size(a) .and. &
      b(size(b)) == 2 * (size(a) + 6)) then
    print '(a)', 'prog_int8: verification: ok'
  else
    print '(a,i0)', 'prog_int8: verification: FAILED ', n
    stop 1
  end if
end program
