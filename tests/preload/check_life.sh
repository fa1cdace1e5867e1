#!/bin/sh
# check_life.sh PAGEHOME PROG_LIFE -- the life of a run under `pagehome run`
# (prog_life.c: an OpenMP program that can end in every way, count the
# signals it gets, chdir, print per-step lines):
#   ends     exit, _exit, _Exit, quick_exit, return: same exit status as a
#            plain run and a complete report -- where --report named it
#            (a relative path, though the program chdir()s), the
#            program's own (its PID); abort and SIGKILL: the report says
#            the program was killed by that signal before its statistics
#            were written, never that nothing was hot
#   signals  SIGTERM, SIGHUP and SIGINT sent to pagehome reach the program
#            exactly once (also from timeout(1), which signals its whole
#            process group), pagehome returns the program's status and
#            leaves no private directory; killed outright (SIGKILL),
#            pagehome takes the program with it (SIGTERM) and the next run
#            removes the directory it left; ^C typed at a terminal reaches
#            the program once
#   progress the progress line (PAGEHOME_PROGRESS=on) is erased before the
#            program's lines and at exit: on the screen (screen.awk) no
#            line of the program is glued to it and none of it is left
#   options  --report -- PROG, --report in a missing directory, a
#            placement on a node the machine does not have: one line, a
#            non-zero status, the program never started; a script without
#            "#!" runs with /bin/sh
# PAGEHOME_TOPOLOGY in the environment: the simulated machine.
ph=${1:?usage: check_life.sh PAGEHOME PROG_LIFE}
prog=${2:?}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/check_life.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
export TMPDIR=$tmp/tmp          # pagehome run's private directories, ours alone
mkdir -p "$TMPDIR" "$tmp/work/sub"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
fail=0 n=0
bad() { fail=$((fail + 1)); echo "check_life: FAILED: $*"; }
ok() { n=$((n + 1)); }
rundirs() { ls -d "$TMPDIR"/pagehome-run-* 2>/dev/null | wc -l; }
cd "$tmp/work" || exit 1

# ---- ends ----
for end in exit _exit _Exit quick_exit return abort kill; do
    timeout 60 "$prog" --end $end > plain.out 2>/dev/null
    rc_plain=$?
    rm -f r.json
    timeout 60 "$ph" run --report r.json -- "$prog" --end $end --chdir sub > ph.out 2> ph.err
    rc=$?
    [ $rc -eq $rc_plain ] || bad "end $end: status $rc, plain $rc_plain"
    cmp -s plain.out ph.out || bad "end $end: stdout differs"
    [ -e sub/r.json ] && bad "end $end: the report went to the program's new directory"
    if [ ! -f r.json ]; then bad "end $end: no report"; continue; fi
    case $end in
    abort|kill)
        sig=6; [ $end = kill ] && sig=9
        grep -q '"incomplete": true' r.json || bad "end $end: the report does not say it is incomplete"
        grep -q "killed by signal $sig .*before pagehome could write" r.json ||
            bad "end $end: the report does not say how the program ended: $(grep note r.json)"
        grep -q 'started no engine' r.json && bad "end $end: the report says no engine started" ;;
    *)
        grep -q '"incomplete"' r.json && bad "end $end: the statistics were not written: $(grep note r.json)"
        grep -q '"totals"' r.json || bad "end $end: the report has no totals"
        pid=$(sed -n 's/^ *"pid": \([0-9]*\),*$/\1/p' r.json)
        [ -n "$pid" ] || bad "end $end: the report names no PID" ;;
    esac
    ok
done

# ---- signals ----
wait_for() { # FILE PATTERN: up to 30 s
    i=0
    while ! grep -q "$2" "$1" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
}
for sig in TERM HUP INT; do
    : > s.out; : > s.err # no stale "step 1" from the run before
    "$ph" run -- "$prog" --signals --steps 100000 --ms 5 --print > s.out 2> s.err &
    pid=$!
    wait_for s.err "step 1"
    kill -$sig $pid
    wait $pid
    rc=$?
    want="INT=0 TERM=0 HUP=0"
    want=$(echo "$want" | sed "s/$sig=0/$sig=1/")
    grep -q "signals $want" s.out || bad "kill -$sig pagehome: the program saw '$(cat s.out)', want '$want'"
    [ $rc -eq 10 ] || bad "kill -$sig pagehome: status $rc, want the program's 10"
    [ "$(rundirs)" -eq 0 ] || bad "kill -$sig pagehome: private directory left behind"
    ok
done
: > s.out; : > s.err
timeout 3 "$ph" run -- "$prog" --signals --steps 100000 --ms 5 > s.out 2> s.err
rc=$?
grep -q "signals INT=0 TERM=1 HUP=0" s.out || bad "timeout: the program saw '$(cat s.out)', want TERM=1"
[ $rc -eq 124 ] || bad "timeout: status $rc, want 124"
[ "$(rundirs)" -eq 0 ] || bad "timeout: private directory left behind"
ok
: > s.out; : > s.err
"$ph" run -- "$prog" --signals --steps 100000 --ms 5 --print > s.out 2> s.err &
pid=$!
wait_for s.err "step 1"
kill -KILL $pid
wait $pid 2>/dev/null
wait_for s.out "signals"
grep -q "signals INT=0 TERM=1 HUP=0" s.out || bad "kill -KILL pagehome: the program did not get SIGTERM: '$(cat s.out)'"
if grep -q libgomp "$prog" 2>/dev/null; then # gcc: a private directory was made
    [ "$(rundirs)" -eq 1 ] || bad "kill -KILL pagehome: expected its private directory to be left ($(rundirs))"
    "$ph" run -- /bin/true
    [ "$(rundirs)" -eq 0 ] || bad "the next run did not remove the directory of the killed one"
fi
ok
if command -v script > /dev/null; then # ^C typed at a terminal (a pty)
    : > s.out; : > s.err # no stale "step 1" from the run before
    (sleep 2; printf '\003'; sleep 2) |
        script -qec "'$ph' run -- '$prog' --signals --steps 100000 --ms 5 > '$tmp/work/s.out'" /dev/null > /dev/null 2>&1
    grep -q "signals INT=1 TERM=0 HUP=0" s.out || bad "^C at a terminal: the program saw '$(cat s.out)', want INT=1"
    ok
fi

# ---- progress ----
PAGEHOME_PROGRESS=on "$ph" run -- "$prog" --steps 8 --ms 150 --print --end exit > /dev/null 2> p.err
awk -f "$here/screen.awk" p.err > p.screen
grep -q "pagehome: iteration" p.err || bad "progress: never drawn"
grep -q "pagehome: iteration" p.screen && bad "progress: left on the screen: $(grep 'pagehome: iteration' p.screen | head -2)"
[ "$(grep -c '^prog_life: step [0-9]*$' p.screen)" -eq 8 ] || bad "progress: the program's lines are garbled: $(head -3 p.screen)"
ok

# ---- options ----
printf 'echo "script ran $1"\nexit 4\n' > noshebang.sh
chmod +x noshebang.sh
out=$("$ph" run -- ./noshebang.sh arg 2>&1)
rc=$?
[ "$out" = "script ran arg" ] && [ $rc -eq 4 ] || bad "script without #!: '$out' status $rc"
one_error() { # WHAT CMD...: exit status non-zero, one line on stderr, no program output
    what=$1; shift
    "$@" > o.out 2> o.err
    rc=$?
    [ $rc -ne 0 ] || bad "$what: status 0"
    [ "$(wc -l < o.err)" -eq 1 ] || bad "$what: $(wc -l < o.err) lines on stderr: $(cat o.err)"
    [ -s o.out ] && bad "$what: the program ran"
    ok
}
one_error "--report -- PROG" "$ph" run --report -- "$prog"
grep -q "needs a path" o.err || bad "--report --: '$(cat o.err)'"
one_error "--report in a missing directory" "$ph" run --report /nonexistent/x.json -- "$prog"
one_error "--placement node:99" "$ph" run --placement node:99 -- "$prog"
grep -q "node 99" o.err || bad "--placement node:99: '$(cat o.err)'"
one_error "PAGEHOME_PLACEMENT=node:99" env PAGEHOME_PLACEMENT=node:99 "$ph" run -- "$prog"
last=$("$ph" topo --json | grep -o '"id": [0-9]*' | tail -1 | grep -o '[0-9]*$')
"$ph" run --placement "node:$last" -- "$prog" > /dev/null 2>&1
[ $? -eq 3 ] || bad "--placement node:$last (the last node) refused"
echo "check_life: $n checks, $fail failed"
[ $fail -eq 0 ] && echo "check_life: ok"
[ $fail -eq 0 ]
