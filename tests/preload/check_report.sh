#!/bin/sh
# check_report.sh PAGEHOME OMP_PROGRAM -- `pagehome run --report` says what
# transparent mode found: for an OpenMP program with large heap arrays, the
# areas (names with their allocation site, sizes, home strips), the OpenMP
# runtime and the iteration it detected; for a program that is not OpenMP
# and allocates nothing large, a report that says no engine started and
# no OpenMP runtime was seen.  The program's output is untouched.
ph=${1:?usage: check_report.sh PAGEHOME OMP_PROGRAM}
prog=${2:?}
tmp=${TMPDIR:-/tmp}/check_report.$$
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
want() { # FILE PATTERN WHAT
    if grep -q -- "$2" "$1"; then :; else echo "check_report: FAILED: $3 (no /$2/ in $1)"; fail=1; fi
}
echo stale > "$tmp/r1.json"
out=$("$ph" run --report "$tmp/r1.json" -- /bin/echo not-openmp) || fail=1
[ "$out" = not-openmp ] || { echo "check_report: FAILED: output '$out'"; fail=1; }
want "$tmp/r1.json" '"runtime_seen": false' "non-OpenMP program: no runtime seen"
want "$tmp/r1.json" '"engine": null' "non-OpenMP program: no engine"
# The program checks itself that no page vanishes from move_pages(2) or
# get_mempolicy(2) under the default sampling (its exit status).
OMP_NUM_THREADS=2 "$ph" run --report "$tmp/r2.json" -- "$prog" > "$tmp/out2" 2>&1 ||
    { echo "check_report: FAILED: the OpenMP program under pagehome run"; cat "$tmp/out2"; fail=1; }
want "$tmp/r2.json" '"runtime_seen": true' "OpenMP program: runtime seen"
want "$tmp/r2.json" '"iteration": "period of the parallel regions"' "OpenMP program: iteration found"
want "$tmp/r2.json" '"name": "heap#0 (8 MiB) prog_query+0x' "OpenMP program: its 8 MiB grid with its site"
want "$tmp/r2.json" '"bytes": 8388608' "OpenMP program: the grid's size"
want "$tmp/r2.json" '"strip_end": \[0' "OpenMP program: a home strip"
want "$tmp/r2.json" '"hot_allocations": [1-9]' "OpenMP program: heap counters"
if grep -q '"name": "heap#[0-9]* ([^)]*) lib[gi]*omp' "$tmp/r2.json"; then
    echo "check_report: FAILED: the OpenMP runtime's own allocation became a hot area"; fail=1
fi
"$ph" run --migrate off --report "$tmp/r4.json" -- /bin/true || fail=1
want "$tmp/r4.json" 'the engine was off' "--migrate off: the report says so"
# observe: the engine samples and decides but moves nothing; the report
# still measures where pages are against their top accessor
PAGEHOME_OBSERVE=1 PAGEHOME_ENGINE_SYNC=1 PAGEHOME_SAMPLE_PAGES=0 OMP_NUM_THREADS=2 "$ph" run --report "$tmp/r3.json" -- "$prog" > "$tmp/out3" 2>&1 ||
    { echo "check_report: FAILED: the observing run"; cat "$tmp/out3"; fail=1; }
want "$tmp/r3.json" '"observe": true' "observe: configuration"
want "$tmp/r3.json" '"migrated": 0,' "observe: nothing migrated"
want "$tmp/r3.json" '"owner_local_share": [0-9]' "observe: owner-local share measured"
want "$tmp/r2.json" '"pages_moved_twice": 0' "pages moved twice counted"
[ $fail = 0 ] && echo "check_report: ok"
exit $fail
