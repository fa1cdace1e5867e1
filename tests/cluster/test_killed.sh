#!/usr/bin/env bash
# test_killed.sh RUN_SH PROG_DIE -- a rank killed (SIGKILL) or stopped
# (SIGSTOP) mid-run: every other rank ends within a bounded time and the
# output names the rank and the cause.
#   - killed, default launcher behaviour: the MPI launcher notices the
#     death and ends the job (Open MPI: "mpirun noticed that process rank 1
#     ... exited on signal 9"; MPICH: "BAD TERMINATION ... RANK 1");
#   - stopped: the launcher notices nothing; the cluster layer's timeout
#     (PAGEHOME_CLUSTER_TIMEOUT_MS, 3 s here) must end the job, naming
#     rank 1;
#   - killed, MPICH with -disable-auto-cleanup (the launcher keeps the
#     others running): the cluster layer must notice.
set -u
run=$1
prog=$2
fail=0
bound=60
check() {   # name, output file, regex
    if grep -Eq "$3" "$2"; then
        echo "ok: $1 names the rank"
    else
        echo "FAIL: $1: the output does not match /$3/"; fail=1
    fi
}
elapsed_ok() {  # name, seconds
    if awk -v e="$2" -v b="$bound" 'BEGIN { exit !(e < b) }'; then
        echo "ok: $1 ended in ${2}s (bound ${bound}s)"
    else
        echo "FAIL: $1 took ${2}s (bound ${bound}s)"; fail=1
    fi
}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

"$run" --timeout 120 --expect-fail 4 "$prog" kill 1 >"$out" 2>&1
rc=$?
cat "$out"
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || { echo "FAIL: killed rank: run.sh exit $rc"; fail=1; }
check "killed rank" "$out" "rank 1|RANK 1|rank: 1"
elapsed_ok "killed rank" "$(sed -n 's/.*exit [0-9]*, \([0-9.]*\)s$/\1/p' "$out" | tail -1)"

"$run" --timeout 120 --expect-fail --env PAGEHOME_CLUSTER_TIMEOUT_MS=3000 \
    4 "$prog" stop 1 >"$out" 2>&1
rc=$?
cat "$out"
[ $rc -eq 0 ] || { echo "FAIL: stopped rank: run.sh exit $rc"; fail=1; }
check "stopped rank" "$out" "rank 1 \(host [^)]*\) did not answer"
elapsed_ok "stopped rank" "$(sed -n 's/.*exit [0-9]*, \([0-9.]*\)s$/\1/p' "$out" | tail -1)"

if [ "${PH_MPI_FLAVOR:-openmpi}" = mpich ]; then
    "$run" --timeout 120 --expect-fail --launcher-opts -disable-auto-cleanup \
        --env PAGEHOME_CLUSTER_TIMEOUT_MS=3000 4 "$prog" kill 1 >"$out" 2>&1
    rc=$?
    cat "$out"
    [ $rc -eq 0 ] || { echo "FAIL: killed rank, no auto-cleanup: exit $rc"; fail=1; }
    check "killed rank (no launcher clean-up)" "$out" "rank 1 \(host [^)]*\)"
    elapsed_ok "killed rank (no launcher clean-up)" \
        "$(sed -n 's/.*exit [0-9]*, \([0-9.]*\)s$/\1/p' "$out" | tail -1)"
fi
exit $fail
