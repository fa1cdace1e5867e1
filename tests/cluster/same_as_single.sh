#!/usr/bin/env bash
# same_as_single.sh -- a cluster program's result equals its single-process
# (OpenMP) counterpart's: the parts of both outputs matching an extended
# regular expression must be the same, line for line, and non-empty, and
# the cluster run must print "verification: ok".
#
#   same_as_single.sh THREADS PATTERN PROGRAM ARGS... -- CLUSTER COMMAND...
# PROGRAM runs with OMP_NUM_THREADS=THREADS.
set -u
threads=$1 pattern=$2
shift 2
single=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do single+=("$1"); shift; done
[ $# -gt 1 ] || { echo "usage: same_as_single.sh THREADS PATTERN PROGRAM ARGS... -- COMMAND..." >&2; exit 2; }
shift
a=$(OMP_NUM_THREADS=$threads "${single[@]}" 2>&1) || { echo "$a"; echo "same_as_single: ${single[0]} failed"; exit 1; }
b=$("$@" 2>&1)
rc=$?
echo "$b"
[ "$rc" -eq 0 ] || exit "$rc"
grep -q '^verification: ok' <<<"$b" || { echo "same_as_single: the cluster run did not verify"; exit 1; }
ra=$(grep -oE -- "$pattern" <<<"$a")
rb=$(grep -oE -- "$pattern" <<<"$b")
echo "single-process ($threads threads):"; echo "$ra"
echo "cluster:"; echo "$rb"
if [ -z "$ra" ] || [ "$ra" != "$rb" ]; then
    echo "same_as_single: FAIL: the results differ (or are missing)"
    exit 1
fi
echo "same_as_single: equal"
