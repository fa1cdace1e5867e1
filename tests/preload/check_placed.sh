#!/bin/sh
# check_placed.sh PAGEHOME PROGRAM NODE [ARGS...] -- `pagehome run
# --placement node:NODE --migrate off` must put every page of an
# unmodified program's grids on NODE, static (.bss) arrays included; the
# program measures where its pages are itself (prog_locality.c: "NAME:
# pages per node: C0 C1 ... (of P)" on stderr).  Its stdout must be the
# plain run's.  POSIX sh: it runs inside the NUMA guest, where the nodes
# are real (on a one-node host every page is on node 0 whatever happens).
ph=${1:?usage: check_placed.sh PAGEHOME PROGRAM NODE [ARGS...]}
prog=${2:?}
node=${3:?}
shift 3
tmp=${TMPDIR:-/tmp}/check_placed.$$
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "check_placed: FAILED: $*"; }

"$prog" "$@" > "$tmp/plain.out" 2> /dev/null
"$ph" run --placement "node:$node" --migrate off -- "$prog" "$@" > "$tmp/ph.out" 2> "$tmp/ph.err"
rc=$?
sed 's|^|  pagehome run:  |' "$tmp/ph.err"
[ "$rc" -eq 0 ] && ok || bad "exit status $rc under pagehome"
cmp -s "$tmp/plain.out" "$tmp/ph.out" && ok || bad "stdout differs under pagehome"
line=$(grep 'pages per node:' "$tmp/ph.err" | tail -1)
total=$(echo "$line" | sed -n 's/.*(of \([0-9]*\)).*/\1/p')
counts=$(echo "$line" | sed -n 's/.*pages per node: \([0-9 ]*\) (of.*/\1/p')
on=$(echo "$counts" | awk -v n="$node" '{ print (n + 1 <= NF) ? $(n + 1) : 0 }')
if [ -n "$total" ] && [ "$total" -gt 0 ] && [ "$on" = "$total" ]; then ok; else
    bad "pages per node: ${counts:-?} (of ${total:-?}), want all on node $node"; fi
echo "check_placed: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
