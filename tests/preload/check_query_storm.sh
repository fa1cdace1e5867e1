#!/bin/sh
# check_query_storm.sh PAGEHOME PROG_QUERY_STORM [SECONDS] -- move_pages(2)
# status queries from every thread of an OpenMP program, in a tight loop,
# while pagehome arms and lifts its watched runs at every parallel region
# and brings touched pages back: the program must never see a page of its
# grid absent (prog_query_storm.c exits 1 if it does), and the sampler
# must really have been watching meanwhile (the report's intervals and
# armed pages), or the storm proved nothing.
ph=${1:?usage: check_query_storm.sh PAGEHOME PROG_QUERY_STORM [SECONDS]}
prog=${2:?}
secs=${3:-3}
tmp=${TMPDIR:-/tmp}/check_query_storm.$$
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "check_query_storm: FAILED: $*"; fail=1; }
"$ph" run --report "$tmp/r.json" -- "$prog" "$secs" > "$tmp/out" 2>&1 ||
    bad "the program saw pages vanish (or failed)"
cat "$tmp/out"
num() { # KEY: the first number the report gives for "KEY"
    grep -o "\"$1\": [0-9]*" "$tmp/r.json" | head -n 1 | grep -o '[0-9]*$'
}
src=$(grep -o '"source": "[a-z]*"' "$tmp/r.json" | head -n 1)
intervals=$(num intervals)
armed=$(num armed_pages)
echo "check_query_storm: sampler $src, ${intervals:-?} intervals, ${armed:-?} pages armed"
[ "${intervals:-0}" -ge 10 ] || bad "fewer than 10 sampling intervals: nothing was stormed"
[ "${armed:-0}" -ge 1000 ] || bad "fewer than 1000 pages armed: nothing was stormed"
[ "$fail" = 0 ] && echo "check_query_storm: ok"
exit "$fail"
