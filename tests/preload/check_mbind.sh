#!/bin/sh
# check_mbind.sh PAGEHOME PROGRAM -- pagehome leaves the program's own
# placement alone (prog_mbind.c): arrays the program binds with mbind(2)
# or libnuma stay on their node under `pagehome run`, and a process
# started under numactl --membind, or binding its memory itself
# (numa_set_membind), keeps every page on the nodes of its binding; the
# rest is still moved to its owners (>= 90% where it should be, also
# with the hybrid mechanism), and the output is the plain run's.  Needs 3 NUMA nodes or more
# (the NUMA guest); exit 77 elsewhere.  POSIX sh: it runs in the guest.
ph=${1:?usage: check_mbind.sh PAGEHOME PROGRAM}
prog=${2:?}
tmp=${TMPDIR:-/tmp}/check_mbind.$$
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "check_mbind: FAILED: $*"; }
nodes=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)
if [ "$nodes" -lt 3 ]; then
    echo "check_mbind: $nodes NUMA node(s): skipped"
    exit 77
fi
# run LABEL CMD... : stdout to $tmp/LABEL.out, stderr to $tmp/LABEL.err
run() {
    label=$1
    shift
    "$@" > "$tmp/$label.out" 2> "$tmp/$label.err"
    rc=$?
    sed "s|^|  $label: |" "$tmp/$label.err" | grep "prog_mbind:"
    [ "$rc" -eq 0 ] && ok || { bad "$label: exit $rc"; sed 's/^/    /' "$tmp/$label.err" | tail -5; }
}
off() { sed -n 's/^prog_mbind: bound [0-9]* pages, \([0-9]*\) off.*/\1/p' "$tmp/$1.err"; }
right() { sed -n 's/^prog_mbind: free .*, \([0-9]*\)[.0-9]*% where.*/\1/p' "$tmp/$1.err"; }
outside() { sed -n 's/^prog_mbind: free .*, \([0-9]*\) outside.*/\1/p' "$tmp/$1.err"; }
same() { cmp -s "$tmp/plain.out" "$tmp/$1.out" && ok || bad "$1: stdout differs from the plain run"; }

run plain "$prog" 2
[ "$(off plain)" = 0 ] && ok || bad "plain: bound pages off their node"

# the program's own mbind: its bound arrays stay, the rest is moved
run bound "$ph" run -- "$prog" 2
same bound
[ "$(off bound)" = 0 ] && ok || bad "pagehome run: $(off bound) bound pages moved off their node"
[ "$(right bound)" -ge 90 ] 2>/dev/null && ok || bad "pagehome run: free arrays $(right bound)% where they should be, want >= 90%"

# the hybrid mechanism: its early looks leave the first sweep's traps
# armed, and its iterative part hands over to the phases only once it has
# looked at every page (before, re-armed sweep and phases from the second
# iteration on: 28.6% where they should be)
run hybrid "$ph" run --migrate hybrid -- "$prog" -1
[ "$(right hybrid)" -ge 90 ] 2>/dev/null && ok || bad "--migrate hybrid: $(right hybrid)% where they should be, want >= 90%"

# the program binds its memory itself, first thing in main (libnuma's
# numa_set_membind: set_mempolicy(2)): the same as numactl --membind
run selfbind "$ph" run -- "$prog" -1 0,1
[ "$(outside selfbind)" = 0 ] && ok || bad "numa_set_membind(0,1): $(outside selfbind) pages outside the binding"
[ "$(right selfbind)" -ge 90 ] 2>/dev/null && ok || bad "numa_set_membind(0,1): $(right selfbind)% where they should be, want >= 90%"
grep -q "^prog_mbind: checksum" "$tmp/selfbind.out" && ok || bad "selfbind: no checksum"

# numactl --membind=0,1: nothing outside the binding, the rest moved
# within it
if command -v numactl > /dev/null 2>&1; then
    run membind numactl --membind=0,1 "$ph" run -- "$prog" -1
    [ "$(outside membind)" = 0 ] && ok || bad "numactl --membind=0,1: $(outside membind) pages outside the binding"
    [ "$(right membind)" -ge 90 ] 2>/dev/null && ok || bad "numactl --membind=0,1: $(right membind)% where they should be, want >= 90%"
    grep -q "^prog_mbind: checksum" "$tmp/membind.out" && ok || bad "membind: no checksum"
else
    echo "check_mbind: no numactl: the --membind part is skipped"
fi
echo "check_mbind: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
