#!/bin/sh
# test_laplace_mpi.sh PAGEHOME STACK LAPLACE_MPI LAPLACE -- the hand-written
# MPI Laplace through `pagehome cluster run --mpi STACK` on this machine.
set -u
ph=$1 stack=$2 prog=$3 seq=$4
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() {
    fail=$((fail + 1))
    echo "FAILED: $1"
    [ -z "${2:-}" ] || echo "$2" | sed 's/^/    /'
}
ref=$("$seq" seq 66 25 | sed -n 's/.*checksum=\([^ ]*\).*/\1/p')
[ -n "$ref" ] || bad "laplace seq 66 25 printed no checksum"
for ranks in 1 3; do
    out=$("$ph" cluster run -n "$ranks" --mpi "$stack" -- "$prog" 66 25 2>&1)
    rc=$?
    sum=$(echo "$out" | sed -n "s/^laplace ranks=$ranks threads=[0-9]* seconds=[0-9.]* checksum=\([^ ]*\)$/\1/p")
    if [ $rc -eq 0 ] && echo "$out" | grep -q '^verification: ok (every value and the checksum against a sequential run: 0 of 4356 values differ' &&
        [ -n "$sum" ] && awk -v a="$sum" -v b="$ref" 'BEGIN { exit !(a + 0 == b + 0) }'; then
        ok
    else
        bad "$ranks rank(s): exit $rc, checksum '$sum' (laplace seq: $ref)" "$out"
    fi
done
out=$(WL_FAULT=1 "$ph" cluster run -n 2 --mpi "$stack" -- "$prog" 66 25 2>&1)
rc=$?
if [ $rc -eq 1 ] && echo "$out" | grep -q '^verification: FAILED .* 1 of 4356 values differ'; then ok; else bad "WL_FAULT=1: exit $rc" "$out"; fi
out=$("$prog" 4 10 2>&1)
rc=$?
if [ $rc -eq 2 ] && echo "$out" | grep -q '^usage: laplace_mpi N ITERS'; then ok; else bad "N=4: exit $rc" "$out"; fi
out=$("$prog" 64 2>&1)
rc=$?
if [ $rc -eq 2 ] && echo "$out" | grep -q '^usage:'; then ok; else bad "one argument: exit $rc" "$out"; fi
echo "laplace_mpi: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
