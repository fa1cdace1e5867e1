! laplace.f90 -- the Laplace (steady heat) Jacobi relaxation of laplace.c
! as a Fortran programmer writes it: ALLOCATABLE grids, initialised
! serially by the master thread (the first-touch trap), OpenMP directives
! on the row loop.
!
!   laplace_f seq|naive|barrier N ITERS
!
!   seq      one thread
!   naive    one PARALLEL DO per sweep
!   barrier  one PARALLEL region around the time loop, a DO per sweep
!
! The grid is stored as u(j, i): column index j first, so that memory
! holds row i of the C program's u[i][j] at the same place; the boundary
! values, the point update and the checksum order are those of laplace.c,
! so both programs print the same checksum for the same N and ITERS.
! Verification: every value within the boundary's [0, 1] (maximum
! principle), and the result equals, value for value, that of a second
! run by other code on fresh grids: seq for naive and barrier, barrier
! for seq.  Bad arguments: one usage line on stderr, exit status 2.
! WL_FAULT=1 in the environment corrupts one value of the result (the
! self-test of the verification, as in the C programs).
program laplace_f
  use omp_lib
  use, intrinsic :: iso_fortran_env, only: error_unit, real64
  implicit none
  integer, parameter :: dp = real64
  character(len=*), parameter :: usage = 'usage: laplace_f seq|naive|barrier N ITERS' // &
       '  (8 <= N <= 16384, 1 <= ITERS <= 10000000)'
  character(len=32) :: variant
  character(len=20) :: time_txt
  integer :: n, iters, other
  logical :: ok, bounded, same
  real(dp) :: t0, time_s, chk, chk_ref
  real(dp), allocatable :: a(:, :), b(:, :), ra(:, :), rb(:, :)

  call parse_args(variant, n, iters)

  allocate(a(0:n-1, 0:n-1), b(0:n-1, 0:n-1))
  call init_grid(a, n)
  call init_grid(b, n)
  t0 = omp_get_wtime()
  call run(trim(variant), a, b, n, iters)
  time_s = omp_get_wtime() - t0
  if (fault_injected()) then
     ! WL_FAULT=1: corrupt one interior value, the verification must fail
     a(n/2, n/2) = a(n/2, n/2) + 1.0e-9_dp
     b(n/2, n/2) = b(n/2, n/2) + 1.0e-9_dp
  end if

  if (mod(iters, 2) == 0) then
     chk = checksum(a, n)
     bounded = all(a >= 0.0_dp .and. a <= 1.0_dp)
  else
     chk = checksum(b, n)
     bounded = all(b >= 0.0_dp .and. b <= 1.0_dp)
  end if
  write(time_txt, '(f20.6)') time_s
  write(*, '(a, " ", a, ": N=", i0, " iters=", i0, " checksum=", es25.17e3, " time_s=", a)') &
       'laplace_f', trim(variant), n, iters, chk, trim(adjustl(time_txt))

  ! the second run, by the other code
  allocate(ra(0:n-1, 0:n-1), rb(0:n-1, 0:n-1))
  call init_grid(ra, n)
  call init_grid(rb, n)
  if (trim(variant) == 'seq') then
     call run('barrier', ra, rb, n, iters)
  else
     call run('seq', ra, rb, n, iters)
  end if
  if (mod(iters, 2) == 0) then
     chk_ref = checksum(ra, n)
     same = all(ra == a)
  else
     chk_ref = checksum(rb, n)
     same = all(rb == b)
  end if
  same = same .and. chk_ref == chk
  ok = bounded .and. same
  other = merge(1, 0, trim(variant) == 'seq')
  if (ok) then
     write(*, '(a, a, a)') 'verification: ok (values in [0,1]: yes; ', &
          trim(merge('barrier', 'seq    ', other == 1)), ' rerun: every value equal)'
  else
     write(*, '(a, l1, a, l1, a)') 'verification: FAILED (values in [0,1]: ', bounded, &
          '; rerun equal: ', same, ')'
  end if
  deallocate(a, b, ra, rb)
  if (.not. ok) stop 1, quiet=.true.

contains

  subroutine parse_args(var, nn, it)
    character(len=*), intent(out) :: var
    integer, intent(out) :: nn, it
    character(len=32) :: arg
    if (command_argument_count() /= 3) call bad_usage()
    call get_command_argument(1, var)
    if (var /= 'seq' .and. var /= 'naive' .and. var /= 'barrier') call bad_usage()
    call get_command_argument(2, arg)
    nn = to_int(arg, 8, 16384)
    call get_command_argument(3, arg)
    it = to_int(arg, 1, 10000000)
  end subroutine parse_args

  ! A whole decimal number of at most 8 digits in [lo, hi], else usage.
  integer function to_int(s, lo, hi)
    character(len=*), intent(in) :: s
    integer, intent(in) :: lo, hi
    integer :: ios
    if (len_trim(s) < 1 .or. len_trim(s) > 8 .or. verify(trim(s), '0123456789') /= 0) &
         call bad_usage()
    read(s, *, iostat=ios) to_int
    if (ios /= 0 .or. to_int < lo .or. to_int > hi) call bad_usage()
  end function to_int

  logical function fault_injected()
    character(len=8) :: val
    integer :: st
    call get_environment_variable('WL_FAULT', val, status=st)
    fault_injected = st == 0 .and. trim(val) == '1'
  end function fault_injected

  subroutine bad_usage()
    write(error_unit, '(a)') usage
    stop 2, quiet=.true.
  end subroutine bad_usage

  ! Serial, by the master thread.
  subroutine init_grid(u, nn)
    integer, intent(in) :: nn
    real(dp), intent(out) :: u(0:nn-1, 0:nn-1)
    integer :: i, j
    real(dp) :: s
    do i = 0, nn - 1
       s = 1.0_dp - real(i, dp) / real(nn - 1, dp)
       do j = 0, nn - 1
          if (i == 0) then
             u(j, i) = 1.0_dp
          else if (i == nn - 1) then
             u(j, i) = 0.0_dp
          else if (j == 0) then
             u(j, i) = s
          else if (j == nn - 1) then
             u(j, i) = s * s
          else
             u(j, i) = 0.0_dp
          end if
       end do
    end do
  end subroutine init_grid

  ! Interior row i of dst from src: the only place a point is computed.
  subroutine sweep_row(dst, src, nn, i)
    integer, intent(in) :: nn, i
    real(dp), intent(inout) :: dst(0:nn-1, 0:nn-1)
    real(dp), intent(in) :: src(0:nn-1, 0:nn-1)
    integer :: j
    do j = 1, nn - 2
       dst(j, i) = 0.25_dp * ((src(j, i-1) + src(j, i+1)) + (src(j-1, i) + src(j+1, i)))
    end do
  end subroutine sweep_row

  ! Sweep t (1-based) writes b from a when t is odd, a from b when even.
  subroutine run(var, u, w, nn, it)
    character(len=*), intent(in) :: var
    integer, intent(in) :: nn, it
    real(dp), intent(inout) :: u(0:nn-1, 0:nn-1), w(0:nn-1, 0:nn-1)
    integer :: t, i
    select case (var)
    case ('seq')
       do t = 1, it
          do i = 1, nn - 2
             if (mod(t, 2) == 1) then
                call sweep_row(w, u, nn, i)
             else
                call sweep_row(u, w, nn, i)
             end if
          end do
       end do
    case ('naive')
       do t = 1, it
          if (mod(t, 2) == 1) then
             !$omp parallel do schedule(static)
             do i = 1, nn - 2
                call sweep_row(w, u, nn, i)
             end do
             !$omp end parallel do
          else
             !$omp parallel do schedule(static)
             do i = 1, nn - 2
                call sweep_row(u, w, nn, i)
             end do
             !$omp end parallel do
          end if
       end do
    case default ! barrier
       !$omp parallel private(t)
       do t = 1, it
          if (mod(t, 2) == 1) then
             !$omp do schedule(static)
             do i = 1, nn - 2
                call sweep_row(w, u, nn, i)
             end do
             !$omp end do
          else
             !$omp do schedule(static)
             do i = 1, nn - 2
                call sweep_row(u, w, nn, i)
             end do
             !$omp end do
          end if
       end do
       !$omp end parallel
    end select
  end subroutine run

  real(dp) function checksum(u, nn)
    integer, intent(in) :: nn
    real(dp), intent(in) :: u(0:nn-1, 0:nn-1)
    integer :: i, j
    checksum = 0.0_dp
    do i = 0, nn - 1
       do j = 0, nn - 1
          checksum = checksum + u(j, i)
       end do
    end do
  end function checksum

end program laplace_f
