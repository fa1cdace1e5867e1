! prog_alloc.f90 -- an unmodified OpenMP Fortran program in the first-touch
! trap: its grids are ALLOCATABLE 2-D arrays, allocated and initialised by
! the master thread alone (every page on the master's node), then swept by
! all threads for STEPS time steps, two `!$omp parallel do
! schedule(static)` loops per step over the columns (contiguous in
! Fortran):
!
!   1. b = 4-point stencil of a
!   2. a = a + 0.5 (b - a)
!
! It knows nothing of pagehome (under `pagehome run` the allocations come
! from the placement allocator).  At the end it prints its checksum to
! stdout and, measured with move_pages(2) by the C helper prog_locality.c
! (through ISO_C_BINDING), the share of the grids' pages on the node of the
! thread owning their columns to stderr.
!
!   prog_alloc [ROWS [STEPS]]   defaults 512 "rows" (columns of 1024
!                               doubles), 8 steps
program prog_alloc
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  use omp_lib
  implicit none
  interface
    subroutine prog_note_thread(tid) bind(c, name='prog_note_thread')
      import :: c_int
      integer(c_int), value :: tid
    end subroutine
    subroutine prog_tally(base, unit_bytes, nunits, lo, hi, nthreads) bind(c, name='prog_tally')
      import :: c_ptr, c_size_t, c_int
      type(c_ptr), value :: base
      integer(c_size_t), value :: unit_bytes
      integer(c_int), value :: nunits, lo, hi, nthreads
    end subroutine
    subroutine prog_report(name, nthreads) bind(c, name='prog_report')
      import :: c_char, c_int
      character(kind=c_char), dimension(*) :: name
      integer(c_int), value :: nthreads
    end subroutine
    subroutine c_exit(status) bind(c, name='exit')
      import :: c_int
      integer(c_int), value :: status
    end subroutine
  end interface
  integer, parameter :: ncol = 1024
  double precision, allocatable, target :: a(:,:), b(:,:)
  integer :: rows, steps, nthreads, i, j, s
  double precision :: total

  rows = 512
  steps = 8
  call get_args(rows, steps)
  allocate(a(ncol, rows), b(ncol, rows))
  do j = 1, rows              ! serial: the first-touch trap
    do i = 1, ncol
      a(i, j) = dble(mod((int(j - 1, 8) * ncol + (i - 1)) * 7, 101_8))
      b(i, j) = 0
    end do
  end do
  nthreads = omp_get_max_threads()
  do s = 1, steps
    !$omp parallel do schedule(static) private(i)
    do j = 2, rows - 1
      call prog_note_thread(int(omp_get_thread_num(), c_int))
      do i = 2, ncol - 1
        b(i, j) = 0.25d0 * (a(i - 1, j) + a(i + 1, j) + a(i, j - 1) + a(i, j + 1))
      end do
    end do
    !$omp end parallel do
    !$omp parallel do schedule(static) private(i)
    do j = 2, rows - 1
      do i = 2, ncol - 1
        a(i, j) = a(i, j) + 0.5d0 * (b(i, j) - a(i, j))
      end do
    end do
    !$omp end parallel do
  end do
  total = 0
  do j = 1, rows
    do i = 1, ncol
      total = total + a(i, j) * dble(mod(int(j - 1, 8) * ncol + (i - 1), 7_8) + 1)
    end do
  end do
  write(*, '(a, es25.17)') 'prog_alloc: checksum ', total
  call prog_tally(c_loc(a(1, 1)), int(ncol * 8, c_size_t), int(rows, c_int), 1_c_int, &
                  int(rows - 2, c_int), int(nthreads, c_int))
  call prog_tally(c_loc(b(1, 1)), int(ncol * 8, c_size_t), int(rows, c_int), 1_c_int, &
                  int(rows - 2, c_int), int(nthreads, c_int))
  flush(error_unit)
  call prog_report('prog_alloc' // c_null_char, int(nthreads, c_int))
  deallocate(a, b)

contains

  subroutine get_args(rows, steps)
    integer, intent(inout) :: rows, steps
    character(len=64) :: buf
    integer :: st, ios, n
    n = command_argument_count()
    ios = 0
    if (n > 2) ios = 1
    if (ios == 0 .and. n >= 1) then
      call get_command_argument(1, buf, status=st)
      read(buf, *, iostat=ios) rows
      if (st /= 0 .or. rows < 8) ios = 1
    end if
    if (ios == 0 .and. n >= 2) then
      call get_command_argument(2, buf, status=st)
      read(buf, *, iostat=ios) steps
      if (st /= 0 .or. steps < 1) ios = 1
    end if
    if (ios /= 0) then
      write(error_unit, '(a)') 'usage: prog_alloc [ROWS>=8 [STEPS>=1]]'
      flush(error_unit)
      call c_exit(2_c_int)
    end if
  end subroutine get_args

end program prog_alloc
