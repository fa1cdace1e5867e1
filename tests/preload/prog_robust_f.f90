! prog_robust_f.f90 -- prog_robust's items that a Fortran program meets,
! written as a Fortran program would (run by check_robust.sh like
! prog_robust.c): an 8 MiB COMMON block and an 8 MiB ALLOCATABLE array,
! parallel loops between the steps, and
!   stdio   unformatted stream WRITE and READ of both arrays to a scratch
!           file between parallel loops (libgfortran's own read/write)
!   formatted  formatted WRITE and READ of a part of each array
!   churn   ALLOCATE, fill, DEALLOCATE of 2 MiB arrays in a loop
! Prints "prog_robust ITEM: ok", or says what went wrong and stops with 1.
program prog_robust_f
  use omp_lib
  implicit none
  integer, parameter :: n = 1048576, per_page = 512
  real(8) :: s(n)
  common /grid/ s
  real(8), allocatable :: h(:)
  character(len=32) :: item
  integer :: r

  if (command_argument_count() /= 1) then
    write (0, '(a)') 'usage: prog_robust_f ITEM'
    stop 2
  end if
  call get_command_argument(1, item)
  allocate (h(n))
  h = 0
  s = 0
  do r = 1, 4
    call stir(r)
  end do
  select case (trim(item))
  case ('stdio')
    call do_stdio()
  case ('formatted')
    call do_formatted()
  case ('churn')
    call do_churn()
  case default
    write (0, '(2a)') 'prog_robust_f: no item ', trim(item)
    stop 2
  end select
  write (*, '(3a)') 'prog_robust ', trim(item), ': ok'
  deallocate (h)

contains

  subroutine bad(what)
    character(len=*), intent(in) :: what
    write (0, '(4a)') 'prog_robust ', trim(item), ': FAILED: ', what
    stop 1
  end subroutine bad

  ! one element of every page of both arrays: the engine's iteration
  subroutine stir(round)
    integer, intent(in) :: round
    integer :: p
    !$omp parallel do schedule(static)
    do p = 0, n / per_page - 1
      s(p * per_page + per_page) = real(round + p, 8)
      h(p * per_page + per_page) = real(round - p, 8)
    end do
    !$omp end parallel do
  end subroutine stir

  real(8) function checksum(a)
    real(8), intent(in) :: a(:)
    integer :: i
    checksum = 0
    do i = 1, size(a), 64
      checksum = checksum * 0.5d0 + a(i) + real(i, 8) * 1d-9
    end do
  end function checksum

  subroutine do_stdio()
    integer :: u, round, ios
    real(8) :: cs, ch
    do round = 1, 3
      open (newunit=u, status='scratch', access='stream', form='unformatted', iostat=ios)
      if (ios /= 0) call bad('open scratch')
      call stir(10 * round)
      write (u, iostat=ios) s
      if (ios /= 0) call bad('write of the COMMON block')
      write (u, iostat=ios) h
      if (ios /= 0) call bad('write of the allocatable')
      cs = checksum(s)
      ch = checksum(h)
      call stir(10 * round + 1)
      rewind (u)
      read (u, iostat=ios) s
      if (ios /= 0) call bad('read into the COMMON block')
      read (u, iostat=ios) h
      if (ios /= 0) call bad('read into the allocatable')
      if (checksum(s) /= cs) call bad('COMMON block read back differs')
      if (checksum(h) /= ch) call bad('allocatable read back differs')
      close (u)
    end do
  end subroutine do_stdio

  subroutine do_formatted()
    integer :: u, ios, k
    real(8) :: cs, ch
    open (newunit=u, status='scratch', form='formatted', iostat=ios)
    if (ios /= 0) call bad('open scratch')
    call stir(21)
    do k = 1, n, 4096
      s(k) = real(k, 8) / 3
      h(k) = real(k, 8) / 7
    end do
    write (u, '(4096es24.16)', iostat=ios) s(1:n:256)
    if (ios /= 0) call bad('formatted write of the COMMON block')
    write (u, '(4096es24.16)', iostat=ios) h(1:n:256)
    if (ios /= 0) call bad('formatted write of the allocatable')
    cs = checksum(s)
    ch = checksum(h)
    call stir(22)
    rewind (u)
    read (u, '(4096es24.16)', iostat=ios) s(1:n:256)
    if (ios /= 0) call bad('formatted read into the COMMON block')
    read (u, '(4096es24.16)', iostat=ios) h(1:n:256)
    if (ios /= 0) call bad('formatted read into the allocatable')
    do k = 1, n, 4096
      if (abs(s(k) - real(k, 8) / 3) > 1d-12 * real(k, 8)) call bad('COMMON block value')
      if (abs(h(k) - real(k, 8) / 7) > 1d-12 * real(k, 8)) call bad('allocatable value')
    end do
    close (u)
    if (cs == ch) call bad('checksums of different data agree')
  end subroutine do_formatted

  subroutine do_churn()
    real(8), allocatable :: b(:)
    integer :: round, i
    do round = 1, 2000
      allocate (b(262144))
      do i = 1, size(b), 512
        b(i) = real(round + i, 8)
      end do
      do i = 1, size(b), 512
        if (b(i) /= real(round + i, 8)) call bad('a 2 MiB array lost what was written')
      end do
      deallocate (b)
      if (mod(round, 250) == 0) call stir(round)
    end do
  end subroutine do_churn

end program prog_robust_f
