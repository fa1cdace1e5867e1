! prog_common.f90 -- the first-touch-trap sweep of prog_sweep.inc with its
! grids in a COMMON block (static storage, in the executable's .bss; under
! `pagehome run` the executable's large writable segment is a hot area),
! sized for 1024 rows; the columns in use are a leading part of it.
! prog_alloc.f90 is the same program with ALLOCATABLE grids.
!
!   prog_common [ROWS [STEPS]]  defaults 512 "rows" (columns of 1024
!                               doubles), 8 steps; 8 <= ROWS <= 1024
program prog_common
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  use omp_lib
  implicit none
  character(len=*), parameter :: prog = 'prog_common'
  character(len=*), parameter :: usage = 'usage: prog_common [ROWS (8..1024) [STEPS>=1]]'
  integer, parameter :: ncol = 1024, maxrows = 1024
  double precision, target :: a(ncol, maxrows), b(ncol, maxrows)
  common /grids/ a, b

  include 'prog_sweep.inc'

  subroutine alloc_grids()   ! static: nothing to allocate
  end subroutine

  subroutine free_grids()
  end subroutine

end program prog_common
