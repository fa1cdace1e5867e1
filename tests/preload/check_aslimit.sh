#!/bin/sh
# check_aslimit.sh PAGEHOME PROGRAM -- prog_aslimit under a limit on its
# address space (`ulimit -v`), as some sites and users set one.  The limit
# is what the program's peak came to under pagehome with the mprotect
# mechanism, plus 96 MiB: less than the 256 MiB of its arrays that the
# userfaultfd mechanism would reserve again.  Under it `pagehome run`
# (sample_mechanism auto) must choose the mprotect mechanism and the
# program run as without the limit; asked for userfaultfd, pagehome warns
# that the limit is tight.  PAGEHOME_TOPOLOGY in the environment: the
# simulated machine.
ph=${1:?usage: check_aslimit.sh PAGEHOME PROGRAM}
prog=${2:?}
tmp=${TMPDIR:-/tmp}/check_aslimit.$$
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { fail=1; echo "check_aslimit: FAILED: $*"; }
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
peak_of() { sed -n 's/^prog_aslimit: VmPeak \([0-9]*\)$/\1/p' "$1"; }

timeout 120 "$prog" > "$tmp/plain.out" 2>&1 || { cat "$tmp/plain.out"; bad "plain run"; exit 1; }
PAGEHOME_SAMPLE_MECHANISM=mprotect timeout 120 "$ph" run --placement node:0 -- "$prog" \
    > "$tmp/mp.out" 2>&1 || { cat "$tmp/mp.out"; bad "unlimited run, mprotect"; exit 1; }
plain=$(peak_of "$tmp/plain.out") mp=$(peak_of "$tmp/mp.out")
limit=$((mp + 96 * 1024))
echo "check_aslimit: VmPeak $plain KiB plain, $mp under pagehome (mprotect); ulimit -v $limit"

( ulimit -v "$limit" && PAGEHOME_VERBOSE=1 timeout 120 "$ph" run --placement node:0 -- "$prog" ) \
    > "$tmp/auto.out" 2>&1
rc=$?
grep -q "^prog_aslimit: ok" "$tmp/auto.out" && [ $rc -eq 0 ] ||
    { bad "under ulimit -v $limit: exit $rc"; grep -v "^ *[a-z_0-9]* *= " "$tmp/auto.out" | tail -6; }
grep -q "pagehome: sampler: sigsegv mechanism" "$tmp/auto.out" ||
    bad "under ulimit -v the mprotect mechanism was not chosen"
grep -q "RLIMIT_AS (ulimit -v) is $((limit / 1024)) MiB" "$tmp/auto.out" ||
    bad "pagehome does not say why it chose the mprotect mechanism"

# asked for userfaultfd: a warning (where userfaultfd is usable at all)
( ulimit -v "$limit" && PAGEHOME_SAMPLE_MECHANISM=userfaultfd timeout 120 "$ph" run \
    --placement node:0 -- "$prog" ) > "$tmp/uffd.out" 2>&1
grep -q "sample_mechanism=userfaultfd: .*using mprotect" "$tmp/uffd.out" ||
    grep -q "warning: sample_mechanism=userfaultfd under RLIMIT_AS" "$tmp/uffd.out" ||
    bad "asked for userfaultfd under ulimit -v: no warning"
[ $fail -eq 0 ] && echo "check_aslimit: ok"
