#!/bin/sh
# check_segment.sh PAGEHOME PROGRAM SPREAD POLICY... -- ARGS -- a program
# whose grids are sized for the largest input (prog_static_big: 1 GiB of
# .bss; prog_pool_big: the same calloc'ed), a few MiB of them used, under
# `pagehome run --placement POLICY --migrate off`, for each POLICY: the
# same stdout as a plain run, and a peak resident memory within 128 MiB
# of the plain run's (the placement binds the unused part, it does not
# fault it in: the build before reached the whole GiB under interleave,
# cyclic, random and block-static for the segment, and under the last
# three for the heap block).  SPREAD=1 (on a machine with several nodes:
# the NUMA guest) also wants the pages in use spread, no node holding
# more than 40% of them.  The program prints "NAME: peak resident memory:
# K KiB" and "NAME: pages per node: ..." (prog_locality.c).  POSIX sh.
ph=${1:?usage: check_segment.sh PAGEHOME PROGRAM SPREAD POLICY... -- ARGS}
prog=${2:?}
spread=${3:?}
shift 3
policies=
while [ $# -gt 0 ] && [ "$1" != -- ]; do policies="$policies $1"; shift; done
[ $# -gt 0 ] && shift
tmp=${TMPDIR:-/tmp}/check_segment.$$
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "check_segment: FAILED: $*"; }
peak() { sed -n 's/.*peak resident memory: \([0-9]*\) KiB.*/\1/p' "$1" | tail -1; }

"$prog" "$@" > "$tmp/plain.out" 2> "$tmp/plain.err"
plain=$(peak "$tmp/plain.err")
echo "check_segment: plain run: ${plain:-?} KiB at peak"
for pol in $policies; do
    "$ph" run --placement "$pol" --migrate off -- "$prog" "$@" > "$tmp/ph.out" 2> "$tmp/ph.err"
    rc=$?
    sed "s|^|  $pol:  |" "$tmp/ph.err"
    [ "$rc" -eq 0 ] && ok || bad "$pol: exit status $rc under pagehome"
    cmp -s "$tmp/plain.out" "$tmp/ph.out" && ok || bad "$pol: stdout differs under pagehome"
    got=$(peak "$tmp/ph.err")
    if [ -n "$plain" ] && [ -n "$got" ] && [ "$got" -le $((plain + 131072)) ]; then ok; else
        bad "$pol: ${got:-?} KiB at peak, the plain run ${plain:-?} KiB: the unused part was faulted in"; fi
    if [ "$spread" = 1 ]; then
        line=$(grep 'pages per node:' "$tmp/ph.err" | tail -1)
        total=$(echo "$line" | sed -n 's/.*(of \([0-9]*\)).*/\1/p')
        most=$(echo "$line" | sed -n 's/.*pages per node: \([0-9 ]*\) (of.*/\1/p' |
            awk '{ m = 0; for (i = 1; i <= NF; i++) if ($i > m) m = $i; print m }')
        if [ -n "$total" ] && [ "$total" -gt 0 ] && [ $((most * 100)) -le $((total * 40)) ]; then ok; else
            bad "$pol: ${line:-no pages per node}: want no node above 40%"; fi
    fi
done
echo "check_segment: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
