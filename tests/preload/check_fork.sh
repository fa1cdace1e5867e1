#!/bin/sh
# check_fork.sh PAGEHOME PROGRAM -- prog_fork (a program that forks in the
# middle of its time steps) with every ending of the child (exit, _exit,
# exec, a child that outlives its parent) under every mechanism (iterative,
# sampling, replay, hybrid, off): nothing hangs (each run has a deadline),
# the exit status and stdout are those of a plain run, and the report is
# the parent's -- written, and naming the parent's PID, also when a child
# ended after it.  PAGEHOME_TOPOLOGY in the environment: the simulated
# machine.
ph=${1:?usage: check_fork.sh PAGEHOME PROGRAM}
prog=${2:?}
tmp=${TMPDIR:-/tmp}/check_fork.$$
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
bad() { fail=$((fail + 1)); echo "check_fork: FAILED: $*"; }
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
for mode in exit _exit exec late; do
    timeout 60 "$prog" "$mode" > "$tmp/plain.out" 2> "$tmp/plain.err"
    rc_plain=$?
    if [ $rc_plain -ne 0 ]; then bad "$mode: plain run exits $rc_plain"; cat "$tmp/plain.err"; fi
    for mech in iterative sampling replay hybrid off; do
        rm -f "$tmp/r.json"
        PAGEHOME_ENGINE=$mech timeout 60 "$ph" run --report "$tmp/r.json" -- "$prog" "$mode" \
            > "$tmp/ph.out" 2> "$tmp/ph.err"
        rc=$?
        what="$mode/$mech"
        if [ $rc -eq 124 ]; then bad "$what: hangs (killed after 60 s)"; continue; fi
        [ $rc -eq $rc_plain ] || { bad "$what: exit status $rc, plain $rc_plain"; sed 's/^/  /' "$tmp/ph.err"; }
        cmp -s "$tmp/plain.out" "$tmp/ph.out" || {
            bad "$what: stdout differs from a plain run"
            diff "$tmp/plain.out" "$tmp/ph.out" | sed 's/^/  /'
            sed 's/^/  stderr: /' "$tmp/ph.err" | tail -5
        }
        parent=$(sed -n 's/^prog_fork: parent pid \([0-9]*\)$/\1/p' "$tmp/ph.err")
        late=$(sed -n 's/^prog_fork: late child pid \([0-9]*\)$/\1/p' "$tmp/ph.err")
        if [ -n "$late" ]; then # the late child ends after its parent
            n=0
            while kill -0 "$late" 2>/dev/null && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done
            kill -0 "$late" 2>/dev/null && { bad "$what: the child outlives its parent by 60 s"; kill -9 "$late"; }
        fi
        if [ "$mech" = off ]; then
            grep -q '"engine": null' "$tmp/r.json" 2>/dev/null || bad "$what: no engine-off report"
        elif ! grep -q "\"pid\": $parent," "$tmp/r.json" 2>/dev/null; then
            bad "$what: the report is not the parent's (pid $parent): $(grep -o '"pid": [0-9]*' "$tmp/r.json" 2>/dev/null || echo none)"
        elif grep -q '"incomplete": true' "$tmp/r.json"; then
            bad "$what: the parent's statistics were not written"
        fi
        pass=$((pass + 1))
    done
done
echo "check_fork: $pass runs, $fail failures"
[ $fail -eq 0 ] && echo "check_fork: ok"
[ $fail -eq 0 ]
