#!/usr/bin/env bash
# run.sh -- start a cluster-mode test program on N MPI ranks, with a time
# limit that kills the whole job and fails the test on a hang.
#
#   run.sh [options] N PROGRAM [ARGS...]
#     --timeout S        kill the job after S seconds (default 240): exit 124
#     --expect-fail      the job must fail (exit != 0), within the time limit
#     --expect-output RE the combined output must match the extended regex RE
#     --launcher-opts S  extra launcher options (e.g. -disable-auto-cleanup)
#     --env NAME=VALUE   set in every rank (repeatable)
#
# The launcher: PAGEHOME_TEST_LAUNCHER when set, used as
#     $PAGEHOME_TEST_LAUNCHER -n N -- PROGRAM ARGS     (`pagehome cluster run`
# form; the namespace test bed sets it), else the MPI the build used
# (PH_MPI_FLAVOR=openmpi|mpich, PH_MPIEXEC = its mpirun): Open MPI with
# --oversubscribe (and the root flags when run as root), MPICH's mpirun.mpich.
# PAGEHOME_TEST_HOSTFILE adds a host file (--hostfile / -f).
#
# Exit: the job's status (0 pass, 77 skip); 124 on a timeout; 1 when an
# expectation fails.  Ranks left behind are killed by their pids (each test
# program writes its pid into PH_TEST_PIDDIR).
set -u
timeout_s=240
expect_fail=0
expect_re=""
lopts=""
envs=()
n=""
while [ $# -gt 0 ]; do
    case "$1" in
        --timeout) timeout_s=$2; shift 2 ;;
        --expect-fail) expect_fail=1; shift ;;
        --expect-output) expect_re=$2; shift 2 ;;
        --launcher-opts) lopts=$2; shift 2 ;;
        --env) envs+=("$2"); shift 2 ;;
        --) shift; break ;;
        -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
        *) if [ -z "$n" ]; then n=$1; shift; else break; fi ;;
    esac
done
[ -n "$n" ] && [ $# -ge 1 ] || { echo "usage: run.sh [options] N PROGRAM [ARGS...]" >&2; exit 2; }
prog=$1; shift

flavor=${PH_MPI_FLAVOR:-openmpi}
piddir=$(mktemp -d "${TMPDIR:-/tmp}/ph-cluster-test.XXXXXX")
out="$piddir/output"
cleanup() {
    for f in "$piddir"/pid.*; do
        [ -e "$f" ] || continue
        p=${f##*.}
        kill -KILL "$p" 2>/dev/null
    done
    rm -rf "$piddir"
}
trap cleanup EXIT

cmd=()
if [ -n "${PAGEHOME_TEST_LAUNCHER:-}" ]; then
    # shellcheck disable=SC2206
    cmd=($PAGEHOME_TEST_LAUNCHER -n "$n" -- "$prog" "$@")
    export PH_TEST_PIDDIR="$piddir"
    for e in "${envs[@]}"; do export "${e?}"; done
elif [ "$flavor" = mpich ]; then
    mpx=${PH_MPIEXEC:-mpirun.mpich}
    command -v "$mpx" >/dev/null || { echo "SKIP: $mpx not found"; exit 77; }
    cmd=("$mpx" -n "$n")
    [ -n "${PAGEHOME_TEST_HOSTFILE:-}" ] && cmd+=(-f "$PAGEHOME_TEST_HOSTFILE")
    cmd+=(-genv PH_TEST_PIDDIR "$piddir")
    for e in "${envs[@]}"; do cmd+=(-genv "${e%%=*}" "${e#*=}"); done
    # shellcheck disable=SC2206
    [ -n "$lopts" ] && cmd+=($lopts)
    cmd+=("$prog" "$@")
else
    mpx=${PH_MPIEXEC:-mpirun}
    command -v "$mpx" >/dev/null || { echo "SKIP: $mpx not found"; exit 77; }
    cmd=("$mpx" -n "$n" --oversubscribe)
    [ "$(id -u)" -eq 0 ] && cmd+=(--allow-run-as-root)
    [ -n "${PAGEHOME_TEST_HOSTFILE:-}" ] && cmd+=(--hostfile "$PAGEHOME_TEST_HOSTFILE")
    cmd+=(-x PH_TEST_PIDDIR="$piddir")
    for e in "${envs[@]}"; do cmd+=(-x "$e"); done
    # shellcheck disable=SC2206
    [ -n "$lopts" ] && cmd+=($lopts)
    cmd+=("$prog" "$@")
fi

# A hang's evidence: every rank's threads' stacks (and, where the DSM is
# up, its wake-up and queue state), before the job is killed.
# PAGEHOME_TEST_HANG_GDB=0 turns it off; PAGEHOME_TEST_HANG_GDB_CMDS names
# a file of more gdb commands.
dump_ranks() {
    [ "${PAGEHOME_TEST_HANG_GDB:-1}" = 0 ] && return
    command -v gdb >/dev/null || return
    # within a minute in all: ctest's TIMEOUT (the caller's time limit plus
    # that) must not end this script before it printed what it found
    local until=$(( $(date +%s) + 60 ))
    for f in "$piddir"/pid.*; do
        [ -e "$f" ] || continue
        p=${f##*.}
        if [ "$(date +%s)" -ge "$until" ]; then
            echo "run.sh: no time left for the stacks of rank process $p"
            continue
        fi
        echo "run.sh: threads of rank process $p (tid, state, kernel wait)"
        for t in /proc/"$p"/task/*; do
            echo "  ${t##*/} $(cut -d' ' -f3 "$t/stat" 2>/dev/null)" \
                "$(cat "$t/wchan" 2>/dev/null)"
        done
        echo "run.sh: stacks of rank process $p"
        timeout 20 gdb -p "$p" -batch -nx \
            -ex 'thread apply all bt 12' \
            -ex 'print *ph_dsm_g' ${PAGEHOME_TEST_HANG_GDB_CMDS:+-x "$PAGEHOME_TEST_HANG_GDB_CMDS"} </dev/null 2>&1 |
            grep -v '^\[New LWP\|^warning: \|^Download' | head -400
    done
}

start=$(date +%s.%N)
setsid "${cmd[@]}" >"$out" 2>&1 &
pid=$!
status=""
deadline=$(( $(date +%s) + timeout_s ))
while kill -0 "$pid" 2>/dev/null; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
        echo "run.sh: the job did not finish in ${timeout_s}s: killing it" >>"$out"
        dump_ranks >>"$out" 2>&1
        kill -TERM -- "-$pid" 2>/dev/null
        for _ in 1 2 3 4 5; do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
        kill -KILL -- "-$pid" 2>/dev/null
        status=124
        break
    fi
    sleep 0.2
done
wait "$pid" 2>/dev/null
rc=$?
[ -n "$status" ] || status=$rc
end=$(date +%s.%N)
elapsed=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
cat "$out"
echo "run.sh: $n rank(s), $flavor, exit $status, ${elapsed}s"
export RUN_ELAPSED=$elapsed

if [ "$status" -eq 124 ]; then
    exit 124
fi
if [ -n "$expect_re" ] && ! grep -Eq "$expect_re" "$out"; then
    echo "run.sh: FAIL: the output does not match /$expect_re/"
    exit 1
fi
if [ "$expect_fail" -eq 1 ]; then
    if [ "$status" -eq 0 ]; then
        echo "run.sh: FAIL: the job was expected to fail"
        exit 1
    fi
    exit 0
fi
# every rank skipping -> skip (Open MPI reports a rank's 77 as the job's)
if [ "$status" -ne 0 ] && grep -q '^SKIP:' "$out" && ! grep -q 'CHECK failed\|^FAIL' "$out"; then
    exit 77
fi
exit "$status"
