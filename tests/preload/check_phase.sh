#!/bin/sh
# check_phase.sh PAGEHOME PROG_PHASE [ARGS...] -- the hybrid mechanism finds
# the phase of an unmodified program by itself: under `pagehome run
# --migrate hybrid` every outermost parallel region of the period becomes a
# phase, the region whose accesses differ from the rest (prog_phase.c's
# sweep_z) records migrations and has them replayed and undone, the others
# record none; stdout is the same as without pagehome.  Run it on a
# simulated machine (PAGEHOME_TOPOLOGY) or a NUMA one.  CHECK_PHASE_EXPECT=none:
# the phases are found but none is worth its round trip (no migration
# recorded, nothing replayed).
ph=${1:?usage: check_phase.sh PAGEHOME PROG_PHASE [ARGS...]}
prog=${2:?}
shift 2
tmp=${TMPDIR:-/tmp}/check_phase.$$
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "check_phase: FAILED: $*"; fail=1; }
"$prog" "$@" > "$tmp/plain.out" 2>/dev/null || bad "plain run failed"
"$ph" run --migrate hybrid --report "$tmp/r.json" -- "$prog" "$@" > "$tmp/ph.out" 2> "$tmp/ph.err" ||
    bad "run under pagehome failed"
sed 's|^|  pagehome run:  |' "$tmp/ph.err"
cmp -s "$tmp/plain.out" "$tmp/ph.out" || bad "stdout differs under pagehome"
grep -q '"regions_as_phases": 3' "$tmp/r.json" || bad "not 3 regions as phases"
grep -q '"phase_errors": 0' "$tmp/r.json" || bad "phase calls failed"
with=$(grep -o '"kind": "record"[^}]*' "$tmp/r.json" | grep -vc '"candidates": 0,')
if [ "${CHECK_PHASE_EXPECT:-one}" = none ]; then
    # the amortised criterion: one sweep of a page saves less than its
    # move there and back costs while the team waits, so no phase records
    # a migration and nothing is replayed
    grep -q '"replayed": 0' "$tmp/r.json" || bad "pages replayed"
    [ "$with" = 0 ] || bad "$with phases recorded migrations, want 0"
else
    grep -q '"replayed": [1-9]' "$tmp/r.json" || bad "nothing replayed"
    grep -q '"undone": [1-9]' "$tmp/r.json" || bad "nothing undone"
    # exactly one of the three phases records candidate migrations
    [ "$with" = 1 ] || bad "$with phases recorded migrations, want 1 (sweep_z)"
fi
[ "$fail" = 0 ] && echo "check_phase: ok"
exit $fail
