! cg_alloc.f90 -- the CG-like kernel of cg.c in Fortran 90 + OpenMP, its
! data in ALLOCATABLE arrays (heap); cg_common.f90 is the same program
! with the data in COMMON blocks (static storage, .bss).  Written for this
! project from the NAS Parallel Benchmarks' public description of CG; no
! NPB code.
!
! WHAT IT MODELS
!   Inverse power iteration with conjugate gradient solves on a random
!   sparse symmetric positive definite NA x NA matrix in CSR form: row i
!   draws NONZER random columns j with values v in [-1, 1) (a 32-bit hash
!   of the draw's index, so the matrix does not depend on the thread
!   count); each draw puts v at (i, j) and (j, i); the diagonal is the sum
!   of the row's |v| plus SHIFT (strictly diagonally dominant, hence SPD).
!   Each of NITER outer iterations solves A z = x with 25 CG iterations,
!   estimates the smallest eigenvalue as (x.x) / (x.z) and sets
!   x = z / ||z||.  (Another generator than cg.c's: the numbers differ.)
!
! PARALLEL STRUCTURE
!   One parallel region per outer iteration; inside it orphaned
!   `!$omp do schedule(static)` loops over rows: q = A p (every thread
!   reads the whole shared vector p) and the vector updates.  Dot products
!   are deterministic (per-thread partial sums added in thread order).
!
! DATA
!   The matrix is built IN PARALLEL (atomic row counts, a parallel prefix
!   sum, the CSR arrays first touched by their rows' owners, atomic fill
!   cursors, rows sorted by their owners); the vectors x, z, r, p, q are
!   initialised SERIALLY by the master thread (the first-touch trap).
!
! VERIFICATION (as cg.c)
!   Every outer iteration: the true residual ||x - A z|| / ||x|| <= 1e-10,
!   the eigenvalue estimate inside A's Gershgorin interval and not
!   increasing (relative slack 1e-9).  Prints "verification: ok" (exit 0)
!   or "verification: FAILED" (exit 1).
!
!   cg_alloc CLASS [NITER [NA]]   CLASS S (NA=1400), W (7000), A (14000);
!                                 1 <= NITER <= 10000, 100 <= NA <= 2000000
program cg_alloc
  use omp_lib
  use, intrinsic :: iso_c_binding, only: c_int
  use, intrinsic :: iso_fortran_env, only: int64, real64, error_unit, output_unit
  implicit none
  interface
    subroutine c_exit(status) bind(c, name='exit')
      import :: c_int
      integer(c_int), value :: status
    end subroutine
  end interface
  integer, parameter :: dp = real64, i8 = int64, cgit = 25, pad = 8
  integer(i8), parameter :: mask32 = 4294967295_i8
  integer(i8), parameter :: seed_col = 314159265_i8, seed_val = 271828183_i8
  character(len=*), parameter :: usage = 'usage: cg_alloc CLASS [NITER [NA]]  ' // &
       '(CLASS = S, W or A; 1 <= NITER <= 10000; 100 <= NA <= 2000000)'
  integer, parameter :: class_na(3) = (/ 1400, 7000, 14000 /)
  integer, parameter :: class_nonzer(3) = (/ 12, 20, 48 /)
  integer, parameter :: class_niter(3) = (/ 15, 15, 15 /)
  real(dp), parameter :: class_shift(3) = (/ 1.0_dp, 1.0_dp, 1.0_dp /)
  character(len=3), parameter :: letters = 'SWA'

  ! ---- the data: heap arrays -------------------------------------------
  integer(i8), allocatable :: rowstr(:), cnt(:), cursor(:), tsum(:)
  integer, allocatable :: colidx(:)
  real(dp), allocatable :: a(:), x(:), z(:), p(:), q(:), r(:), part(:)
  real(dp), allocatable :: resid(:), lambda(:), glo_t(:), ghi_t(:)

  integer :: cls, na, nonzer, niter, nthreads, it
  integer(i8) :: nnz
  real(dp) :: shift, glo, ghi, t0, secs, worst
  logical :: ok, inside, mono, fault, fault_now
  character(len=16) :: tbuf

  call parse_args()
  nthreads = omp_get_max_threads()
  allocate(part(0:nthreads * pad - 1), tsum(0:nthreads), glo_t(0:nthreads - 1), ghi_t(0:nthreads - 1))
  allocate(rowstr(na + 1), cnt(na), cursor(na))
  call build_matrix()
  deallocate(cnt, cursor)

  write(output_unit, '(a,a1,a,i0,a,i0,a,i0,a,f0.1,a,i0,a,i0,a)') 'cg_alloc: class ', &
       letters(cls:cls), ', NA=', na, ', ', nnz, ' nonzeros (NONZER=', nonzer, ', SHIFT=', shift, &
       '), ', niter, ' iterations, ', nthreads, ' threads'

  ! vectors: serial initialisation by the master thread
  allocate(x(na), z(na), p(na), q(na), r(na), resid(niter), lambda(niter))
  x(1:na) = 1.0_dp
  z(1:na) = 0.0_dp
  p(1:na) = 0.0_dp
  q(1:na) = 0.0_dp
  r(1:na) = 0.0_dp

  fault = fault_requested()
  t0 = omp_get_wtime()
  do it = 1, niter
    fault_now = fault .and. it == niter
    !$omp parallel
    call outer_iteration(it)
    !$omp end parallel
  end do
  secs = omp_get_wtime() - t0

  worst = 0.0_dp
  inside = .true.
  mono = .true.
  do it = 1, niter
    worst = max(worst, resid(it))
    if (.not. (lambda(it) >= glo .and. lambda(it) <= ghi)) inside = .false.
    if (it > 1) then
      if (.not. (lambda(it) <= lambda(it - 1) * (1.0_dp + 1.0e-9_dp))) mono = .false.
    end if
    if (it <= 3 .or. it == niter) write(output_unit, '(a,i3,a,es10.3,a,f0.12)') &
         'cg_alloc: iteration ', it, ': ||x - A z|| / ||x|| = ', resid(it), &
         ', lambda_min estimate ', lambda(it)
  end do
  ok = worst <= 1.0e-10_dp
  write(output_unit, '(a,es13.6,a,a)') 'cg_alloc: max ||x - A z|| / ||x|| = ', worst, &
       ' (must be <= 1.000000e-10): ', merge('yes', 'NO ', ok)
  write(output_unit, '(a,f0.12,a,f0.6,a,f0.6,a,a)') 'cg_alloc: lambda_min estimate ', &
       lambda(niter), ' in Gershgorin interval [', glo, ', ', ghi, ']: ', merge('yes', 'NO ', inside)
  write(output_unit, '(a,a)') 'cg_alloc: lambda_min estimate non-increasing: ', merge('yes', 'NO ', mono)
  ok = ok .and. inside .and. mono
  write(tbuf, '(f12.3)') secs
  write(error_unit, '(a,a,a)') 'cg_alloc: time ', trim(adjustl(tbuf)), ' s'
  if (ok) then
    write(output_unit, '(a)') 'verification: ok'
  else
    write(output_unit, '(a)') 'verification: FAILED'
    flush(output_unit)
    call c_exit(1_c_int)
  end if

contains

  ! WL_FAULT=1: corrupt one value during the run (the workload.nas_fault_*
  ! tests: the verification must then fail).
  logical function fault_requested()
    character(len=8) :: v
    integer :: st
    call get_environment_variable('WL_FAULT', v, status=st)
    fault_requested = st == 0 .and. v == '1'
    if (fault_requested) write(error_unit, '(a)') &
         'cg_alloc: WL_FAULT=1: q(NA/2) *= 1.001 in the last solve''s first CG iteration'
  end function

  subroutine bad_usage()
    write(error_unit, '(a)') usage
    flush(error_unit)
    call c_exit(2_c_int)
  end subroutine

  ! A whole decimal number in [lo, hi], or bad_usage.
  integer function parse_int(s, lo, hi)
    character(len=*), intent(in) :: s
    integer, intent(in) :: lo, hi
    integer(i8) :: v
    integer :: k
    if (len_trim(s) == 0 .or. len_trim(s) > 12) call bad_usage()
    v = 0
    do k = 1, len_trim(s)
      if (s(k:k) < '0' .or. s(k:k) > '9') call bad_usage()
      v = v * 10 + (iachar(s(k:k)) - iachar('0'))
    end do
    if (v < lo .or. v > hi) call bad_usage()
    parse_int = int(v)
  end function

  subroutine parse_args()
    character(len=64) :: arg
    integer :: nargs, alen
    nargs = command_argument_count()
    if (nargs < 1 .or. nargs > 3) call bad_usage()
    call get_command_argument(1, arg, alen)
    cls = 0
    if (alen == 1) cls = index('SWA', arg(1:1)) + index('swa', arg(1:1))
    if (cls == 0) call bad_usage()
    na = class_na(cls)
    nonzer = class_nonzer(cls)
    niter = class_niter(cls)
    shift = class_shift(cls)
    if (nargs >= 2) then
      call get_command_argument(2, arg, alen)
      if (alen > len(arg)) call bad_usage()
      niter = parse_int(arg, 1, 10000)
    end if
    if (nargs >= 3) then
      call get_command_argument(3, arg, alen)
      if (alen > len(arg)) call bad_usage()
      na = parse_int(arg, 100, 2000000)
    end if
  end subroutine

  ! (x * c) mod 2^32 for 0 <= x, c < 2^32 without overflowing int64.
  pure integer(i8) function mulmod32(xx, c)
    integer(i8), intent(in) :: xx, c
    mulmod32 = iand(iand(xx, 65535_i8) * c + ishft(iand(ishft(xx, -16) * c, 65535_i8), 16), mask32)
  end function

  ! A bijective 32-bit mix (xor-shift-multiply).
  pure integer(i8) function hash32(v)
    integer(i8), intent(in) :: v
    integer(i8) :: h
    h = iand(v, mask32)
    h = ieor(h, ishft(h, -16))
    h = mulmod32(h, 2146121005_i8)
    h = ieor(h, ishft(h, -15))
    h = mulmod32(h, 2221713035_i8)
    h = ieor(h, ishft(h, -16))
    hash32 = h
  end function

  ! Uniform in [0, 1) for (seed, index).
  pure real(dp) function uniform(seed, idx)
    integer(i8), intent(in) :: seed, idx
    uniform = real(hash32(ieor(hash32(idx), hash32(seed)) + 1013904223_i8), dp) / 4294967296.0_dp
  end function

  ! Column (1-based) and value of draw d (1-based) of row i.
  pure integer function draw_col(i, d)
    integer, intent(in) :: i, d
    draw_col = 1 + int(uniform(seed_col, int(i - 1, i8) * nonzer + (d - 1)) * na)
  end function

  pure real(dp) function draw_val(i, d)
    integer, intent(in) :: i, d
    draw_val = 2.0_dp * uniform(seed_val, int(i - 1, i8) * nonzer + (d - 1)) - 1.0_dp
  end function

  subroutine build_matrix()
    integer :: i, d, j, tid, nt, u
    integer(i8) :: s, run, k, qi, qj, b, e, dg
    real(dp) :: v, rs, lo, hi
    !$omp parallel private(i, d, j, tid, nt, u, s, run, k, qi, qj, b, e, dg, v, rs, lo, hi)
    tid = omp_get_thread_num()
    nt = omp_get_num_threads()
    !$omp do schedule(static)
    do i = 1, na
      cnt(i) = 1              ! the diagonal
    end do
    !$omp end do
    !$omp do schedule(static)
    do i = 1, na
      do d = 1, nonzer
        j = draw_col(i, d)
        if (j /= i) then
          !$omp atomic
          cnt(i) = cnt(i) + 1
          !$omp atomic
          cnt(j) = cnt(j) + 1
        end if
      end do
    end do
    !$omp end do
    ! parallel prefix sum over the same static blocks
    s = 0
    !$omp do schedule(static)
    do i = 1, na
      s = s + cnt(i)
    end do
    !$omp end do
    tsum(tid + 1) = s
    !$omp barrier
    !$omp single
    tsum(0) = 0
    do u = 1, nt
      tsum(u) = tsum(u) + tsum(u - 1)
    end do
    nnz = tsum(nt)
    rowstr(na + 1) = nnz + 1
    allocate(colidx(nnz), a(nnz))
    !$omp end single
    run = tsum(tid) + 1
    !$omp do schedule(static)
    do i = 1, na
      rowstr(i) = run
      cursor(i) = run + 1      ! slot 1 of the row: the diagonal
      run = run + cnt(i)
    end do
    !$omp end do
    ! first touch of the entries by their rows' owner
    !$omp do schedule(static)
    do i = 1, na
      colidx(rowstr(i)) = i
      a(rowstr(i)) = 0.0_dp
      do k = rowstr(i) + 1, rowstr(i + 1) - 1
        colidx(k) = 0
        a(k) = 0.0_dp
      end do
    end do
    !$omp end do
    !$omp do schedule(static)
    do i = 1, na
      do d = 1, nonzer
        j = draw_col(i, d)
        if (j /= i) then
          v = draw_val(i, d)
          !$omp atomic capture
          qi = cursor(i)
          cursor(i) = cursor(i) + 1
          !$omp end atomic
          !$omp atomic capture
          qj = cursor(j)
          cursor(j) = cursor(j) + 1
          !$omp end atomic
          colidx(qi) = j
          a(qi) = v
          colidx(qj) = i
          a(qj) = v
        end if
      end do
    end do
    !$omp end do
    ! sort each row, set the diagonal, Gershgorin bounds
    lo = huge(1.0_dp)
    hi = -huge(1.0_dp)
    !$omp do schedule(static)
    do i = 1, na
      b = rowstr(i)
      e = rowstr(i + 1) - 1
      ! sorted first, so that the sum's order (and bits) do not depend on
      ! the order the atomic cursors filled the row in
      call sort_row(b, e)
      rs = 0.0_dp
      dg = b
      do k = b, e
        if (colidx(k) == i) then
          dg = k
        else
          rs = rs + abs(a(k))
        end if
      end do
      a(dg) = rs + shift
      lo = min(lo, shift)             ! d - R
      hi = max(hi, 2.0_dp * rs + shift) ! d + R
    end do
    !$omp end do
    glo_t(tid) = lo
    ghi_t(tid) = hi
    !$omp end parallel
    glo = minval(glo_t)
    ghi = maxval(ghi_t)
  end subroutine

  ! Insertion sort of entries b..e by (column, value).
  subroutine sort_row(b, e)
    integer(i8), intent(in) :: b, e
    integer(i8) :: m, l
    integer :: ck
    real(dp) :: vk
    do m = b + 1, e
      ck = colidx(m)
      vk = a(m)
      l = m - 1
      do while (l >= b)
        if (.not. (colidx(l) > ck .or. (colidx(l) == ck .and. a(l) > vk))) exit
        colidx(l + 1) = colidx(l)
        a(l + 1) = a(l)
        l = l - 1
      end do
      colidx(l + 1) = ck
      a(l + 1) = vk
    end do
  end subroutine

  ! Deterministic team sum of nv values (every thread gets the result).
  ! Callers alternate two slots of `part` so that no thread overwrites
  ! partials another may still be reading.
  subroutine team_sum(mine, nv, slot, res)
    integer, intent(in) :: nv, slot
    real(dp), intent(in) :: mine(nv)
    real(dp), intent(out) :: res(nv)
    integer :: t, v, base
    base = slot * (pad / 2)
    do v = 1, nv
      part(omp_get_thread_num() * pad + base + v - 1) = mine(v)
    end do
    !$omp barrier
    res = 0.0_dp
    do t = 0, omp_get_num_threads() - 1
      do v = 1, nv
        res(v) = res(v) + part(t * pad + base + v - 1)
      end do
    end do
  end subroutine

  real(dp) function row_dot(i, v)
    integer, intent(in) :: i
    real(dp), intent(in) :: v(:)
    integer(i8) :: k
    row_dot = 0.0_dp
    do k = rowstr(i), rowstr(i + 1) - 1
      row_dot = row_dot + a(k) * v(colidx(k))
    end do
  end function

  ! One outer iteration; called by every thread of the team.
  subroutine outer_iteration(itn)
    integer, intent(in) :: itn
    integer :: i, cgi
    real(dp) :: mine(4), sums(4), rho, pq, alpha, beta, zinv, dd
    mine = 0.0_dp
    !$omp do schedule(static)
    do i = 1, na
      z(i) = 0.0_dp
      r(i) = x(i)
      p(i) = x(i)
      mine(1) = mine(1) + x(i) * x(i)
    end do
    !$omp end do
    call team_sum(mine, 1, 0, sums)
    rho = sums(1)
    do cgi = 1, cgit
      mine(1) = 0.0_dp
      !$omp do schedule(static)
      do i = 1, na                    ! q = A p: p read whole
        q(i) = row_dot(i, p)
        if (fault_now .and. cgi == 1 .and. i == na / 2) q(i) = q(i) * 1.001_dp
        mine(1) = mine(1) + p(i) * q(i)
      end do
      !$omp end do
      call team_sum(mine, 1, 1, sums)
      pq = sums(1)
      alpha = rho / pq
      mine(1) = 0.0_dp
      !$omp do schedule(static)
      do i = 1, na
        z(i) = z(i) + alpha * p(i)
        r(i) = r(i) - alpha * q(i)
        mine(1) = mine(1) + r(i) * r(i)
      end do
      !$omp end do
      call team_sum(mine, 1, 0, sums)
      beta = sums(1) / rho
      rho = sums(1)
      !$omp do schedule(static)
      do i = 1, na
        p(i) = r(i) + beta * p(i)
      end do
      !$omp end do
    end do
    ! true residual x - A z, x.z, z.z, x.x
    mine = 0.0_dp
    !$omp do schedule(static)
    do i = 1, na
      dd = x(i) - row_dot(i, z)
      mine(1) = mine(1) + dd * dd
      mine(2) = mine(2) + x(i) * z(i)
      mine(3) = mine(3) + z(i) * z(i)
      mine(4) = mine(4) + x(i) * x(i)
    end do
    !$omp end do
    call team_sum(mine, 4, 1, sums)
    zinv = 1.0_dp / sqrt(sums(3))
    !$omp do schedule(static)
    do i = 1, na
      x(i) = z(i) * zinv
    end do
    !$omp end do
    !$omp master
    resid(itn) = sqrt(sums(1) / sums(4))
    lambda(itn) = sums(4) / sums(2)
    !$omp end master
  end subroutine

end program cg_alloc
