! cg_common.f90 -- the CG-like kernel (cg_kernel.inc) with its data in
! COMMON blocks: static storage in the executable's .bss, sized for the
! largest class (NAMAX = 14000 rows, NZMAX = NAMAX * (2 * 48 + 1) entries,
! 17 MB whatever the class).  cg_alloc.f90 is the same kernel with the data
! in ALLOCATABLE arrays; the two print the same numbers (test
! workload.nas_cg_f_variants_agree).
!
!   COMMON blocks /cgmat/ (a), /cgidx/ (colidx), /cgrow/ (rowstr, cnt,
!   cursor) and /cgvec/ (x, z, p, q, r).
!
!   cg_common CLASS [NITER [NA]]   CLASS S (NA=1400), W (7000), A (14000);
!                                  1 <= NITER <= 10000, 100 <= NA <= 14000
program cg_common
  use omp_lib
  use, intrinsic :: iso_c_binding, only: c_int
  use, intrinsic :: iso_fortran_env, only: int64, real64, error_unit, output_unit
  implicit none
  character(len=*), parameter :: prog = 'cg_common'
  integer, parameter :: namax = 14000, nzmax = namax * (2 * 48 + 1)
  integer, parameter :: na_max = namax

  ! ---- the data: COMMON blocks sized for the largest class ---------------
  real(real64) :: a(nzmax)
  integer :: colidx(nzmax)
  integer(int64) :: rowstr(namax + 1), cnt(namax), cursor(namax)
  real(real64) :: x(namax), z(namax), p(namax), q(namax), r(namax)
  common /cgmat/ a
  common /cgidx/ colidx
  common /cgrow/ rowstr, cnt, cursor
  common /cgvec/ x, z, p, q, r

  include 'cg_kernel.inc'

  ! ---- storage: static, nothing to allocate ----------------------------
  subroutine alloc_rows()
  end subroutine

  subroutine free_row_work()
  end subroutine

  subroutine alloc_entries()
    if (nnz > nzmax) then     ! cannot happen: nnz <= na * (2 * nonzer + 1)
      write(error_unit, '(2a)') prog, ': matrix too large for the COMMON blocks'
      call c_exit(1_c_int)
    end if
  end subroutine

  subroutine alloc_vectors()
  end subroutine

end program cg_common
