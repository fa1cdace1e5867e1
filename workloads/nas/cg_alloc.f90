! cg_alloc.f90 -- the CG-like kernel (cg_kernel.inc) with its data in
! ALLOCATABLE arrays, allocated to the problem's size (heap).  cg_common.f90
! is the same kernel with the data in COMMON blocks; the two print the same
! numbers (test workload.nas_cg_f_variants_agree).
!
!   cg_alloc CLASS [NITER [NA]]   CLASS S (NA=1400), W (7000), A (14000);
!                                 1 <= NITER <= 10000, 100 <= NA <= 2000000
program cg_alloc
  use omp_lib
  use, intrinsic :: iso_c_binding, only: c_int
  use, intrinsic :: iso_fortran_env, only: int64, real64, error_unit, output_unit
  implicit none
  character(len=*), parameter :: prog = 'cg_alloc'
  integer, parameter :: na_max = 2000000

  ! ---- the data: heap arrays -------------------------------------------
  integer(int64), allocatable :: rowstr(:), cnt(:), cursor(:)
  integer, allocatable :: colidx(:)
  real(real64), allocatable :: a(:), x(:), z(:), p(:), q(:), r(:)

  include 'cg_kernel.inc'

  ! ---- storage: allocated when the sizes are known ----------------------
  subroutine alloc_rows()
    allocate(rowstr(na + 1), cnt(na), cursor(na))
  end subroutine

  subroutine free_row_work()
    deallocate(cnt, cursor)
  end subroutine

  subroutine alloc_entries()
    allocate(colidx(nnz), a(nnz))
  end subroutine

  subroutine alloc_vectors()
    allocate(x(na), z(na), p(na), q(na), r(na))
  end subroutine

end program cg_alloc
