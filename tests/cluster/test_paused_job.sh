#!/usr/bin/env bash
# test_paused_job.sh RUN_SH PROG_DIE [RUN_SH OPTIONS...] -- the whole job
# stopped for longer than the cluster timeout, then continued (a shell's
# ^Z and fg; a debugger holding every rank): it must go on and end well.
# Rank 1 stops itself right after a barrier, before the others read its
# page (over a transport whose one-sided operations need the target's
# progress, rank 0's page fetch is then in flight: "did not answer a page
# fetch" after 3 s if nothing else happened), 0.5 s later rank 0 is
# stopped too, 6 s later (cluster timeout 3 s) rank 0 is continued and
# 0.3 s after it rank 1.  The watchdog must not take the stop for a dead
# peer (src/cluster/watch.h): it counts about 1.2 s for the fetch, and
# before it counted 6.8 s -- a rank whose operation was in flight when
# the job stopped ended the job when it went on (3 runs of 3).
set -u
run=$1
prog=$2
shift 2
out=$(mktemp)
dir=$(mktemp -d)
chmod 777 "$dir"
trap 'rm -rf "$out" "$dir"; [ -n "${job:-}" ] && kill "$job" 2>/dev/null' EXIT

# (no refresh: rank 0 must miss on rank 1's page after the barrier, not
# find it fetched in the barrier)
"$run" --timeout 100 --env PAGEHOME_CLUSTER_TIMEOUT_MS=3000 \
    --env PAGEHOME_CLUSTER_REFRESH=0 --env PH_TEST_PAUSE_DIR="$dir" "$@" \
    2 "$prog" pause 1 >"$out" 2>&1 &
job=$!
# rank 1 stopped itself (it writes "paused" first)
for _ in $(seq 1200); do
    [ -e "$dir/paused" ] && break
    kill -0 "$job" 2>/dev/null || break
    sleep 0.05
done
if [ ! -e "$dir/paused" ]; then
    wait "$job"
    rc=$?
    cat "$out"
    [ $rc -eq 77 ] && exit 77
    echo "FAIL: rank 1 never paused"
    exit 1
fi
sleep 0.5
kill -STOP "$(cat "$dir/rank.0")"
sleep 6
# rank 0 first: its watchdog looks while the fetch still waits (0.5 s
# before the stop + a tick for the stop + 0.3 s: under the timeout)
kill -CONT "$(cat "$dir/rank.0")"
sleep 0.3
kill -CONT "$(cat "$dir/rank.1")"
wait "$job"
rc=$?
job=
cat "$out"
[ $rc -eq 77 ] && exit 77
if [ $rc -ne 0 ]; then
    echo "FAIL: the job stopped for 6 s (timeout 3 s) and continued ended with $rc"
    exit 1
fi
if grep -q "did not answer\|did not complete\|stuck for" "$out"; then
    echo "FAIL: a rank was taken for dead"
    exit 1
fi
echo "ok: the job stopped and continued ended well"
