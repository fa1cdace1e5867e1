#!/bin/sh
# check_one_node.sh PAGEHOME PROGRAM [ARGS...] -- `pagehome run` on a
# machine with one NUMA node, where no page can move: the engine is off
# there (no sampling, no migration) unless one_node_engine=1 asks for it.
#   1. a simulated one-node machine (--topology nodes=1): the program's
#      stdout and exit status are a plain run's; the report says the engine
#      was off because of the one node, and no page was watched;
#   2. the same with --migrate iterative given: still off (no page can
#      move whatever the mechanism);
#   3. with --set one_node_engine=1: the engine runs and watches pages;
#   4. on the real machine, when it has one node (skipped otherwise): as 1.
# POSIX sh.
ph=${1:?usage: check_one_node.sh PAGEHOME PROGRAM [ARGS...]}
prog=${2:?}
shift 2
tmp=${TMPDIR:-/tmp}/check_one_node.$$
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "check_one_node: FAILED: $*"; }

"$prog" "$@" > "$tmp/plain.out" 2> /dev/null
rc_plain=$?

# run NAME [pagehome options...] -- runs the program under pagehome, checks
# its stdout and exit status against the plain run's, and leaves the
# report's text in $tmp/NAME.txt
run() {
    name=$1
    shift
    "$ph" "$@" --report "$tmp/$name.json" -- "$prog" $prog_args \
        > "$tmp/$name.out" 2> "$tmp/$name.err"
    rc=$?
    [ "$rc" -eq "$rc_plain" ] && ok || bad "$name: exit status $rc, $rc_plain plain"
    cmp -s "$tmp/plain.out" "$tmp/$name.out" && ok || bad "$name: stdout differs from a plain run"
    "$ph" report --text-only "$tmp/$name.json" > "$tmp/$name.txt" 2>&1 ||
        bad "$name: no report"
}
prog_args="$*"

# the engine was off for the one node: the report says so, nothing trapped
expect_off() {
    name=$1
    grep -q "engine *none ran" "$tmp/$name.txt" && ok ||
        bad "$name: an engine ran on one node"
    grep -q "one NUMA node" "$tmp/$name.txt" && ok ||
        bad "$name: the report does not say the one node turned the engine off"
    grep -q "trapped" "$tmp/$name.txt" && bad "$name: pages were watched" || ok
}

run sim --topology nodes=1,cpus_per_node=2 run
expect_off sim

run sim_iterative --topology nodes=1,cpus_per_node=2 run --migrate iterative
expect_off sim_iterative

run sim_forced --topology nodes=1,cpus_per_node=2 run --set one_node_engine=1
# pages watched (how many of them trapped depends on the threads' timing
# in so short a run)
armed=$(sed -n 's/^ *samples .*(\([0-9][0-9]*\) pages armed.*/\1/p' "$tmp/sim_forced.txt")
[ "${armed:-0}" -gt 0 ] && ok ||
    bad "sim_forced: one_node_engine=1, yet no page was watched (${armed:-none})"
grep -q "one NUMA node" "$tmp/sim_forced.txt" &&
    bad "sim_forced: the report blames the one node for an engine that ran" || ok

nodes=$("$ph" topo 2>/dev/null | sed -n 's/^nodes: *\([0-9][0-9]*\).*/\1/p')
if [ "$nodes" = 1 ]; then
    run real run
    expect_off real
else
    echo "check_one_node: the real machine has ${nodes:-?} nodes: its part skipped"
fi

[ "$fail" -gt 0 ] && for f in "$tmp"/*.txt; do sed "s|^|  $(basename "$f" .txt): |" "$f"; done
echo "check_one_node: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
