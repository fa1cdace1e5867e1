#!/usr/bin/env bash
# test_cli.sh PAGEHOME -- the pagehome command as a user meets it.
set -uo pipefail
ph=${1:?usage: test_cli.sh PATH_TO_PAGEHOME [run|norun]}
with_run=${2:-norun}
. "$(dirname "$0")/expect.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sim="nodes=4,cpus_per_node=2,sockets=2,local=10,remote=12,remote_socket=32"

expect 0 '^pagehome [0-9]+\.[0-9]+\.[0-9]+$' -- "$ph" --version
expect 0 'commands:' -- "$ph" help
expect 0 'usage: pagehome topo' -- "$ph" help topo
expect 0 'usage: pagehome place' -- "$ph" help place
expect 2 'usage:' -- "$ph"
expect 2 "unknown command 'frobnicate'" -- "$ph" frobnicate
expect 2 "unknown option '--frob'" -- "$ph" --frob topo
expect 2 "help: no command 'nothing'" -- "$ph" help nothing

# topo on this machine: nodes, distances, kernel state
expect 0 'machine: +linux' -- "$ph" topo
expect 0 'distances \(ACPI SLIT' -- "$ph" topo
expect 0 'move_pages: ' -- "$ph" topo
expect 0 'numa balancing: ' -- "$ph" topo
expect 2 "topo: unknown option '--jsn'" -- "$ph" topo --jsn

# topo on a synthetic machine, and the JSON round trip
expect 0 'nodes: +4 +cpus: 8' -- "$ph" --topology "$sim" topo
expect 0 '^ +0 +10 +12 +32 +32$' -- "$ph" --topology "$sim" topo
"$ph" --topology "$sim" topo --json > "$tmp/t.json"
expect 0 '"nodes"' -- cat "$tmp/t.json"
expect 0 '^ +3 +32 +32 +12 +10$' -- "$ph" --topology "$tmp/t.json" topo
expect 0 'machine: +sim' -- env PAGEHOME_TOPOLOGY="$tmp/t.json" "$ph" topo
expect 1 'topology: .*nodes=0' -- "$ph" --topology "nodes=0" topo
expect 1 "unknown key 'nodez'" -- "$ph" --topology "nodez=4" topo
echo '{"nodes": [' > "$tmp/bad.json"
expect 1 'bad.json' -- "$ph" --topology "$tmp/bad.json" topo
expect 1 'measures the real machine' -- "$ph" --topology "$sim" topo --measure
expect 2 'topo: --save .*give --measure too' -- "$ph" topo --save "$tmp/never.json"

# tunables
expect 0 'move_retries += 3 +\(default\)' -- "$ph" --print-config
expect 0 'move_retries += 5 +\(env\)' -- env PAGEHOME_MOVE_RETRIES=5 "$ph" --print-config
expect 0 'move_retries += 9 +\(api\)' -- "$ph" --set move_retries=9 --print-config
expect 0 'PAGEHOME_MOVE_RETRIES="lots" is invalid \(expected an integer\); using 3' -- \
    env PAGEHOME_MOVE_RETRIES=lots "$ph" --print-config
expect 2 'move_retries="lots" is invalid' -- "$ph" --set move_retries=lots --print-config
expect 2 'no tunable named "nope"' -- "$ph" --set nope=1 --print-config
expect 2 '\-\-set needs NAME=VALUE' -- "$ph" --set novalue --print-config
expect 0 '^\| `move_retries` \| `PAGEHOME_MOVE_RETRIES` \| int \| `3` \|' -- \
    "$ph" --print-config --markdown
expect 0 'machine sim, 4 node' -- "$ph" --verbose --topology "$sim" place --size 64K --policy block

# placement on the simulated machine: every policy where its plan says
expect 0 'interleave +256 +64 +64 +64 +64 +0 +100.0%' -- "$ph" --topology "$sim" place --size 1M
expect 0 'block +256 +64 +64 +64 +64 +0 +100.0%' -- "$ph" --topology "$sim" place --size 1M
expect 0 'node:3 +256 +0 +0 +0 +256 +0 +100.0%' -- "$ph" --topology "$sim" place --size 1M
expect 0 'first-touch +256 +256 +0 +0 +0 +0 +100.0%' -- \
    "$ph" --topology "$sim" place --size 1M --touch serial --policy first-touch
expect 0 'interleave@2M +2048 +512 +512 +512 +512 +0 +100.0%' -- \
    "$ph" --topology "$sim" place --size 8M --pagesize 2M --policy interleave
expect 2 'unknown policy "cyclc"' -- "$ph" --topology "$sim" place --policy cyclc:4
expect 1 '9 is not a node' -- "$ph" --topology "$sim" place --policy node:9
expect 2 '\-\-size needs a size' -- "$ph" place --size lots
expect 2 '\-\-size needs a size' -- "$ph" place --size 0
expect 2 '\-\-pagesize must be 4K or 2M' -- "$ph" place --pagesize 1G
expect 2 '\-\-touch must be serial or parallel' -- "$ph" place --touch sometimes
# and on this machine, for real
expect 0 'block +' -- "$ph" place --size 1M

# pagehome run: bad input, and a program's status and output untouched
expect 2 'no program given' -- "$ph" run
expect 2 "unknown option '--frob'" -- "$ph" run --frob -- /bin/true
expect 1 "no program '/no/such/program'" -- "$ph" run -- /no/such/program
expect 1 "no program 'no-such-program-xyz' \(not found on PATH\)" -- "$ph" run -- no-such-program-xyz
printf 'data\n' > "$tmp/notexec" && chmod 644 "$tmp/notexec"
expect 1 "is not an executable file" -- "$ph" run -- "$tmp/notexec"
expect 2 '\-\-migrate must be off, iterative' -- "$ph" run --migrate fast -- /bin/true
expect 2 'unknown policy "cyclc"' -- "$ph" run --placement cyclc -- /bin/true
expect 2 'budget="lots" is invalid' -- "$ph" run --budget lots -- /bin/true
expect 2 '\-\-runtime must be libomp or gomp' -- "$ph" run --runtime icc -- /bin/true
expect 0 'usage: pagehome run' -- "$ph" help run
# global options a command cannot honour are refused, with the reason
expect 2 'global option --topology does not apply to `report`' -- \
    "$ph" --topology "$sim" report "$tmp/none.json"
expect 2 'global option --topology does not apply to `sim`' -- "$ph" --topology "$sim" sim e1
expect 2 'run: --set nope=1: .*no tunable named "nope"' -- "$ph" run --set nope=1 -- /bin/true
expect 2 '\-\-observe needs the engine' -- "$ph" run --migrate off --observe -- /bin/true
expect 2 'run: --placement node:7: this machine has no node 7 \(4 nodes' -- \
    "$ph" --topology "$sim" run --placement node:7 -- /bin/true
if [ "$with_run" = run ]; then
    # every tunable the command line set reaches the program: the global
    # --topology, --set and -v, and run's own --set and --observe
    expect 0 "PAGEHOME_TOPOLOGY=$sim" -- "$ph" --topology "$sim" run --migrate off -- env
    expect 0 'PAGEHOME_STABLE_AFTER=0' -- "$ph" --set stable_after=0 run --migrate off -- env
    expect 0 'PAGEHOME_VERBOSE=1' -- "$ph" -v run --migrate off -- env
    expect 0 'PAGEHOME_COLD_AFTER=5' -- "$ph" run --set cold_after=5 -- env
    expect 0 'PAGEHOME_OBSERVE=1' -- "$ph" run --observe -- env
fi
if [ "$with_run" = run ]; then
    expect 7 '^hello world$' -- "$ph" run -- /bin/sh -c 'echo hello world; exit 7'
    expect 0 '^a b$' -- "$ph" run --migrate off -- echo a b
    # a program killed by a signal: pagehome dies of the same signal
    "$ph" run -- /bin/sh -c 'kill -TERM $$' >/dev/null 2>&1
    rc=$?
    if [ "$rc" -eq 143 ]; then pass=$((pass + 1)); else
        fail=$((fail + 1)); echo "FAILED: run of a program killed by SIGTERM: exit $rc, want 143"; fi
    if command -v gcc >/dev/null && printf 'int main(void){return 0;}\n' > "$tmp/s.c" &&
        gcc -static -o "$tmp/static" "$tmp/s.c" 2>/dev/null; then
        expect 1 'is a static binary: LD_PRELOAD cannot' -- "$ph" run -- "$tmp/static"
    fi
    cp /bin/true "$tmp/suid" && chmod u+s "$tmp/suid"
    expect 1 'is setuid/setgid' -- "$ph" run -- "$tmp/suid"
fi

summary test_cli
