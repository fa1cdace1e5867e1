#!/bin/sh
# check_churn.sh PAGEHOME PROGRAM -- allocation churn under `pagehome run`:
# prog_robust's churn item (2000 x malloc 2 MiB, fill, free, and more)
# serves the freed buffers again (the report's heap.reused counts them),
# and heap_reuse=0 turns that off with the program still right.
ph=${1:?usage: check_churn.sh PAGEHOME PROGRAM}
prog=${2:?}
dir=$(mktemp -d "${TMPDIR:-/tmp}/check_churn.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
fail=0
reused() {
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["transparent"]["heap"]["reused"])' "$1"
}
timeout 300 "$ph" run --report "$dir/on.json" -- "$prog" churn > "$dir/on.out" 2>&1 ||
    { echo "check_churn: run failed:"; tail -5 "$dir/on.out"; exit 1; }
n=$(reused "$dir/on.json") || exit 1
echo "check_churn: heap_reuse default: $n blocks reused"
# 2000 buffers of the loop, all but the first one reused; the aligned loop
# and the calloc rounds' malloc half add more
[ "$n" -ge 1999 ] || { echo "check_churn: FAILED: only $n reused (at least 1999)"; fail=1; }
timeout 300 "$ph" run --set heap_reuse=0 --report "$dir/off.json" -- "$prog" churn > "$dir/off.out" 2>&1 ||
    { echo "check_churn: run with heap_reuse=0 failed:"; tail -5 "$dir/off.out"; exit 1; }
n=$(reused "$dir/off.json") || exit 1
echo "check_churn: heap_reuse=0: $n blocks reused"
[ "$n" -eq 0 ] || { echo "check_churn: FAILED: heap_reuse=0 reused $n"; fail=1; }
exit $fail
