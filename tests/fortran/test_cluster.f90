! test_cluster.f90 -- cluster mode from Fortran, under MPI (run by
! tests/cluster/run.sh on 2 ranks): init without arguments, info, a
! block-placed shared real(8) array through c_f_pointer, every rank writes
! its block, a barrier, every rank reads all; a lock-protected counter;
! the static split of the global team; homes; bad input as text;
! unformatted stream I/O straight into and out of shared pages another
! rank homes and this one never touched (libgfortran's read(2) and
! write(2) of the array itself: under cluster_fault=sigsegv and for users
! without root they work only through libpagehome_cluster's wrappers);
! finalize.
program test_cluster
  use, intrinsic :: iso_c_binding
  use pagehome
  implicit none
  integer :: passed = 0, failed = 0, rc, r
  integer(c_int) :: me, nr
  type(ph_cluster_info_t) :: info
  type(ph_placement_t), target :: pl
  type(c_ptr) :: p, q
  real(c_double), pointer :: u(:)
  integer(c_long), pointer :: counter(:)
  integer(c_size_t) :: n, i, per
  integer(c_long) :: b, e, total
  integer(c_int) :: st(4)
  integer(c_long_long) :: nstat
  real(c_double), pointer :: v(:), y(:)
  real(c_double), allocatable :: w(:)
  type(c_ptr) :: pv, py
  integer :: fu, ios
  integer(c_size_t) :: lo, hi, pio
  character(len=512) :: dir, fname
  interface
     function c_getpid() bind(c, name="getpid")
       import :: c_int
       integer(c_int) :: c_getpid
     end function c_getpid
  end interface

  call check(ph_cluster_init() == 0, "ph_cluster_init")
  me = ph_cluster_rank()
  nr = ph_cluster_nranks()
  call check(ph_cluster_info(info) == 0, "ph_cluster_info")
  call check(info%rank == me .and. info%nranks == nr, "info rank/nranks")
  call check(info%page_bytes == 4096, "4 KiB pages")

  per = 4096_c_size_t                    ! 8 pages of doubles per rank
  n = per * nr
  rc = ph_placement_parse(pl, "block" // c_null_char)
  p = ph_cluster_alloc(n * 8_c_size_t, c_loc(pl))
  call check(c_associated(p), "ph_cluster_alloc: " // ph_f_last_error())
  call c_f_pointer(p, u, [n])
  do i = me * per + 1, (me + 1) * per
     u(i) = real(i, c_double) * 0.5d0
  end do
  call check(ph_cluster_barrier() == 0, "barrier")
  total = 0
  do i = 1, n
     if (u(i) /= real(i, c_double) * 0.5d0) total = total + 1
  end do
  call check(total == 0, "every rank sees every block")
  call check(ph_cluster_home(c_loc(u(1))) == 0, "first page homed at rank 0")
  call check(ph_cluster_home(c_loc(u(n))) == nr - 1, "last page at the last rank")
  call check(ph_cluster_homes(c_loc(u(1)), 4_c_size_t * 4096, st) == 0, "homes")

  ! a lock-protected counter
  q = ph_cluster_alloc(8_c_size_t, c_null_ptr)
  call c_f_pointer(q, counter, [1])
  call check(ph_cluster_barrier() == 0, "barrier")
  do r = 1, 50
     rc = ph_cluster_lock(3)
     counter(1) = counter(1) + 1
     rc = ph_cluster_unlock(3)
  end do
  call check(ph_cluster_barrier() == 0, "barrier")
  call check(counter(1) == 50 * nr, "lock-protected counter")

  ! the static split of the global team (one thread per rank here)
  call check(ph_cluster_static_range(int(n, c_long), 0_c_long, b, e) == 0, "static range")
  call check(b == me * per .and. e == (me + 1) * per, "static range = the block")

  ! bad input comes back as text
  call check(ph_cluster_lock(-1) == -1, "lock -1 fails")
  call check(index(ph_f_last_error(), "does not exist") > 0, "message: " // ph_f_last_error())

  ! unformatted I/O of shared pages this rank never touched, homed at the
  ! next rank: read from a file into them, and write them out.  512 KiB a
  ! rank: libgfortran moves a transfer larger than its buffer (128 KiB for
  ! unformatted files) with one read(2) or write(2) of the array itself,
  ! a smaller one through its buffer (a copy in user space, which the
  ! DSM's fault path serves in any case)
  pio = 65536_c_size_t
  call get_environment_variable("TMPDIR", dir, status=ios)
  if (ios /= 0 .or. len_trim(dir) == 0) dir = "/tmp"
  write (fname, '(a,a,i0,a,i0,a)') trim(dir), "/ph_fortran_io_", c_getpid(), &
       "_", me, ".bin"
  allocate (w(pio))
  do i = 1, pio
     w(i) = real(me, c_double) * 1.0d6 + real(i, c_double)
  end do
  open (newunit=fu, file=trim(fname), access="stream", form="unformatted", &
       status="replace", iostat=ios)
  call check(ios == 0, "open for writing " // trim(fname))
  write (fu, iostat=ios) w
  call check(ios == 0, "write the private array")
  close (fu)
  pv = ph_cluster_alloc(pio * nr * 8_c_size_t, c_loc(pl))
  py = ph_cluster_alloc(pio * nr * 8_c_size_t, c_loc(pl))
  call check(c_associated(pv) .and. c_associated(py), "ph_cluster_alloc: " // &
       ph_f_last_error())
  call c_f_pointer(pv, v, [pio * nr])
  call c_f_pointer(py, y, [pio * nr])
  lo = mod(me + 1, nr) * pio + 1      ! the next rank's block
  hi = lo + pio - 1
  call check(ph_cluster_home(c_loc(v(lo))) == mod(me + 1, nr), "v's block homed next")
  open (newunit=fu, file=trim(fname), access="stream", form="unformatted", &
       status="old", iostat=ios)
  call check(ios == 0, "open for reading")
  read (fu, iostat=ios) v(lo:hi)
  call check(ios == 0, "read into untouched remote shared pages")
  close (fu)
  ! and out of them: y's pages here are fresh (zero)
  open (newunit=fu, file=trim(fname), access="stream", form="unformatted", &
       status="replace", iostat=ios)
  write (fu, iostat=ios) y(lo:hi)
  call check(ios == 0, "write from untouched remote shared pages")
  close (fu)
  w = -1
  open (newunit=fu, file=trim(fname), access="stream", form="unformatted", &
       status="old", iostat=ios)
  read (fu, iostat=ios) w
  close (fu, status="delete")
  call check(ios == 0 .and. all(w == 0), "the file holds y's zeros")
  call check(ph_cluster_barrier() == 0, "barrier")
  total = 0
  do r = 0, nr - 1                    ! block of rank r: what rank r - 1 read
     do i = 1, pio
        if (v(r * pio + i) /= real(mod(r - 1 + nr, nr), c_double) * 1.0d6 + &
             real(i, c_double)) total = total + 1
     end do
  end do
  call check(total == 0, "every rank sees what each read from its file")
  call check(ph_cluster_free(pv) == 0 .and. ph_cluster_free(py) == 0, "free")

  call check(ph_cluster_barrier() == 0, "barrier")
  ! counters by name: the barriers so far; an unknown name fails
  call check(ph_cluster_stat("barriers" // c_null_char, nstat) == 0, "ph_cluster_stat")
  call check(nstat >= 4, "at least 4 barriers counted")
  call check(ph_cluster_stat("no_such_counter" // c_null_char, nstat) == -1, &
       "ph_cluster_stat of an unknown name fails")
  call check(ph_cluster_free(q) == 0, "free")
  call check(ph_cluster_free(p) == 0, "free")
  if (me == 0) print '(a,i0,a,i0,a)', "test_cluster (Fortran): ", passed, " passed, ", failed, " failed"
  call check(ph_cluster_finalize() == 0, "finalize")
  if (failed > 0) stop 1

contains
  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(*), intent(in) :: what
    if (cond) then
       passed = passed + 1
    else
       failed = failed + 1
       print '(a,i0,a,a)', "rank ", me, ": FAILED: ", what
    end if
  end subroutine check
end program test_cluster
