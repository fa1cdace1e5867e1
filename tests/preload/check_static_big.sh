#!/bin/sh
# check_static_big.sh PAGEHOME PROGRAM MECHANISM ROWS STEPS -- a program
# whose static grids are sized for the largest input (prog_static_big: 1
# GiB of .bss, of which ROWS rows are used), plain and under `pagehome run`
# with sample_mechanism=MECHANISM: the same stdout and exit status; the
# sampler's rotation looked at every page of the segment (swept_pages in
# the report at least its hot pages) and the engine's samples cover at
# least a quarter of the pages in use.  The build before the rotation
# passed untouched stretches over in one step looked at 131000-192000 of
# the 262144 pages in 64 steps, with 70-1057 samples for 2046 pages in
# use; this one looks at all of them twice, with 1011-2207 samples, as
# prog_static with grids of its size gets (911-2207: a short run's first
# sweep can end having seen part of the grid).  POSIX sh.
ph=${1:?usage: check_static_big.sh PAGEHOME PROGRAM MECHANISM ROWS STEPS}
prog=${2:?}
mech=${3:?}
rows=${4:?}
steps=${5:?}
tmp=${TMPDIR:-/tmp}/check_static_big.$$
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "check_static_big: FAILED: $*"; }

"$prog" "$rows" "$steps" > "$tmp/plain.out" 2> "$tmp/plain.err"
rc_plain=$?
"$ph" run -v --set "sample_mechanism=$mech" --report "$tmp/r.json" -- "$prog" "$rows" "$steps" \
    > "$tmp/ph.out" 2> "$tmp/ph.err"
rc_ph=$?
grep -E "prog_static|engine:|sampler:" "$tmp/ph.err" | sed 's|^|  pagehome run:  |'
said=$mech
[ "$mech" = mprotect ] && said=sigsegv
if grep -q "sampler: $said mechanism" "$tmp/ph.err"; then ok; else
    if [ "$mech" = userfaultfd ] && grep -q "sampler: sigsegv mechanism" "$tmp/ph.err"; then
        echo "check_static_big: no userfaultfd mechanism here: skipped"
        exit 77
    fi
    bad "not the $mech mechanism"
fi
[ "$rc_plain" -eq "$rc_ph" ] && ok || bad "exit status $rc_ph under pagehome, $rc_plain plain"
cmp -s "$tmp/plain.out" "$tmp/ph.out" && ok || bad "stdout differs under pagehome"
used=$(sed -n 's/.* threads, \([0-9]*\) pages, .*/\1/p' "$tmp/ph.err" | tail -1)
field() { tr ',{' '\n\n' < "$tmp/r.json" | sed -n "s/^ *\"$1\": *\([0-9]*\).*/\1/p" | head -1; }
samples=$(field samples)
swept=$(field swept_pages)
hot=$(field hot_pages)
echo "check_static_big: ${samples:-?} samples for ${used:-?} pages in use;" \
    "${swept:-?} pages looked at of ${hot:-?}"
if [ -n "$used" ] && [ -n "$samples" ] && [ $((samples * 4)) -ge "$used" ]; then ok; else
    bad "${samples:-?} samples for ${used:-?} pages in use, want a quarter"; fi
if [ -n "$swept" ] && [ -n "$hot" ] && [ "$hot" -gt 0 ] && [ "$swept" -ge "$hot" ]; then ok; else
    bad "${swept:-?} pages looked at, want every one of the ${hot:-?} hot pages"; fi
echo "check_static_big: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
