! prog_alloc.f90 -- the first-touch-trap sweep of prog_sweep.inc with its
! grids in ALLOCATABLE 2-D arrays, allocated by the master thread (under
! `pagehome run` the allocations come from the placement allocator).
! prog_common.f90 is the same program with the grids in a COMMON block.
!
!   prog_alloc [ROWS [STEPS]]   defaults 512 "rows" (columns of 1024
!                               doubles), 8 steps
program prog_alloc
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  use omp_lib
  implicit none
  character(len=*), parameter :: prog = 'prog_alloc'
  character(len=*), parameter :: usage = 'usage: prog_alloc [ROWS>=8 [STEPS>=1]]'
  integer, parameter :: ncol = 1024, maxrows = huge(0)
  double precision, allocatable, target :: a(:,:), b(:,:)

  include 'prog_sweep.inc'

  subroutine alloc_grids()
    allocate(a(ncol, rows), b(ncol, rows))
  end subroutine

  subroutine free_grids()
    deallocate(a, b)
  end subroutine

end program prog_alloc
