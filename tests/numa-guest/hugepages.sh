#!/bin/sh
# hugepages.sh BUILD_DIR -- `pagehome hugepages` against the guest's kernel.
#
# Run by suite.sh inside the 4-node guest (256:256:256:64 MiB, as root):
#   - show the pools (text and JSON);
#   - reserve 8 x 2M pages on node 1: the JSON shows 8 more on node 1 and
#     no change on any other node; release them: back to where it was;
#   - ask node 3 (64 MiB) for 64 x 2M pages (128 MiB): the kernel grants
#     only part, the command says how much and exits 3, the JSON agrees,
#     and releasing what was granted brings node 3 back;
#   - errors on the real sysfs: unknown node, unsupported size, a release
#     beyond what exists (exit 2, nothing changed), and a write as an
#     unprivileged user ("needs root", exit 1).
# The pools are put back to their starting sizes at exit, whatever fails.
# Exit 0 all passed, 1 a check failed, 77 cannot run here.
build=${1:?usage: hugepages.sh BUILD_DIR}
ph=$build/tools/pagehome/pagehome
pass=0 fail=0

if ! command -v jq >/dev/null 2>&1; then
    echo "hugepages: jq not found: skipped"
    exit 77
fi
if [ ! -d /sys/kernel/mm/hugepages/hugepages-2048kB ] ||
    [ ! -d /sys/devices/system/node/node3/hugepages/hugepages-2048kB ]; then
    echo "hugepages: no 2M hugetlbfs pools on nodes 0-3 here: skipped"
    exit 77
fi

ok() { pass=$((pass + 1)); echo "  ok: $*"; }
bad() { fail=$((fail + 1)); echo "  FAILED: $*"; }

# total NODE [FIELD]: the node's 2M pool from `pagehome hugepages --json`
total() {
    "$ph" hugepages --json |
        jq -r ".nodes[] | select(.node == $1) | .pools[] | select(.size == \"2M\") | .${2:-total}"
}
# run_ph WANT_STATUS PATTERN ARGS...: pagehome hugepages ARGS, status and output
out=
run_ph() {
    want=$1 pattern=$2
    shift 2
    out=$("$ph" hugepages "$@" 2>&1)
    rc=$?
    echo "  \$ pagehome hugepages $*  -> exit $rc"
    echo "$out" | sed 's/^/    /'
    if [ "$rc" -eq "$want" ] && echo "$out" | grep -Eq -- "$pattern"; then
        ok "hugepages $* (exit $rc)"
    else
        bad "hugepages $*: want exit $want and /$pattern/, got exit $rc"
    fi
}

b0=$(total 0) b1=$(total 1) b2=$(total 2) b3=$(total 3)
g0=$("$ph" hugepages --json | jq -r '.global[] | select(.size == "2M") | .total')
restore() {
    for n in 0 1 2 3; do
        eval "want=\$b$n"
        [ "$(total "$n")" = "$want" ] || "$ph" hugepages --node "$n" --set "$want" >/dev/null
    done
}
trap restore EXIT
case "$b0$b1$b2$b3" in
*[!0-9]* | "") echo "hugepages: cannot read the pools (got '$b0' '$b1' '$b2' '$b3')"; exit 1 ;;
esac
echo "hugepages: 2M pools before: node0 $b0, node1 $b1, node2 $b2, node3 $b3, all $g0"

run_ph 0 '^all +2M '
run_ph 0 '"global"' --json

# 8 pages on node 1, and on node 1 only
run_ph 0 "^node 1: asked 8 more 2M pages, got 8 \(now $((b1 + 8)) total" --node 1 --reserve 8
a0=$(total 0) a1=$(total 1) a2=$(total 2) a3=$(total 3)
if [ "$a1" -eq $((b1 + 8)) ] && [ "$a0" -eq "$b0" ] && [ "$a2" -eq "$b2" ] && [ "$a3" -eq "$b3" ]
then ok "JSON: node 1 has 8 more 2M pages ($a1), nodes 0, 2, 3 unchanged"
else bad "JSON after reserving 8 on node 1: $a0 $a1 $a2 $a3 (before $b0 $b1 $b2 $b3)"; fi
f1=$(total 1 free)
if [ "$f1" -ge 8 ]; then ok "node 1 has $f1 free 2M pages"; else bad "node 1 free: $f1, want >= 8"; fi
g=$("$ph" hugepages --json | jq -r '.global[] | select(.size == "2M") | .total')
if [ "$g" -eq $((g0 + 8)) ]; then ok "global 2M total $g"; else bad "global 2M total $g, want $((g0 + 8))"; fi
run_ph 0 "^node 1: asked to release 8 2M pages, released 8 \(now $b1 total" --node 1 --release 8
if [ "$(total 1)" -eq "$b1" ]; then ok "node 1 back to $b1"; else bad "node 1 has $(total 1), want $b1"; fi

# node 3 (64 MiB) cannot hold 64 x 2M: a partial grant
run_ph 3 '^node 3: asked 64 more 2M pages, got [0-9]+ ' --node 3 --reserve 64
got=$(echo "$out" | sed -n 's/^node 3: asked 64 more 2M pages, got \([0-9]*\) .*/\1/p')
a3=$(total 3)
if [ -n "$got" ] && [ "$got" -ge 1 ] && [ "$got" -lt 64 ] && [ "$a3" -eq $((b3 + got)) ]; then
    ok "node 3 granted $got of 64; the JSON says $a3 total"
else
    bad "node 3: granted '$got', JSON total $a3, before $b3"
fi
if [ "$(total 0)" -eq "$b0" ] && [ "$(total 1)" -eq "$b1" ] && [ "$(total 2)" -eq "$b2" ]; then
    ok "nodes 0-2 unchanged by node 3's request"
else bad "another node changed: $(total 0) $(total 1) $(total 2)"; fi
if [ -n "$got" ]; then
    run_ph 0 "^node 3: asked to release $got 2M pages, released $got \(now $b3 total" \
        --node 3 --release "$got"
fi
if [ "$(total 3)" -eq "$b3" ]; then ok "node 3 back to $b3"; else bad "node 3 has $(total 3), want $b3"; fi

# errors against the real sysfs: nothing changes
run_ph 2 'no node 9 \(this machine has nodes 0-3\)' --node 9 --reserve 1
run_ph 2 'unsupported huge page size 4M' --node 1 --reserve 1 --size 4M
run_ph 2 "node 2 has $b2 2M pages?; cannot release $((b2 + 1))" --node 2 --release $((b2 + 1))
if command -v setpriv >/dev/null 2>&1; then
    out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$ph" hugepages --node 1 --reserve 1 2>&1)
    rc=$?
    echo "  \$ (as nobody) pagehome hugepages --node 1 --reserve 1  -> exit $rc: $out"
    if [ "$rc" -eq 1 ] && echo "$out" | grep -q 'nr_hugepages needs root'; then ok "needs root"
    else bad "as nobody: exit $rc, '$out'"; fi
fi
a0=$(total 0) a1=$(total 1) a2=$(total 2) a3=$(total 3)
if [ "$a0$a1$a2$a3" = "$b0$b1$b2$b3" ]; then ok "the errors changed no pool"
else bad "pools after the errors: $a0 $a1 $a2 $a3 (before $b0 $b1 $b2 $b3)"; fi

echo "hugepages: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
