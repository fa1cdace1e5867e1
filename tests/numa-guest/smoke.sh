#!/bin/sh
# Smoke test of the NUMA guest; run it through the test bed:
#   tests/numa-guest/run -- sh tests/numa-guest/smoke.sh
# Prints the guest kernel's view of the topology and checks it against the
# expected one (default: the test bed's default 4-node topology). Override:
#   PAGEHOME_SMOKE_NODES=2 PAGEHOME_SMOKE_DIST0="10 20" \
#       tests/numa-guest/run --nodes 2 --dist 10:20/20:10 -- sh tests/numa-guest/smoke.sh

want_nodes=${PAGEHOME_SMOKE_NODES:-4}
want_dist0=${PAGEHOME_SMOKE_DIST0:-10 12 32 32}
want_cpus=${PAGEHOME_SMOKE_CPUS_PER_NODE:-1}
fail=0

bad() {
	echo "FAIL: $*"
	fail=1
}

[ "${PAGEHOME_GUEST:-}" = 1 ] || bad "PAGEHOME_GUEST is not 1 (not running in the guest?)"

nodes=0
for d in /sys/devices/system/node/node[0-9]*; do
	[ -d "$d" ] || continue
	n=${d##*/node}
	nodes=$((nodes + 1))
	cpulist=$(cat "$d/cpulist")
	dist=$(cat "$d/distance")
	mem=$(awk '/MemTotal/ { print $4, $5 }' "$d/meminfo")
	echo "node$n: cpulist=$cpulist distance=[$dist] MemTotal=$mem"
	ncpu=0
	for c in "$d"/cpu[0-9]*; do
		[ -e "$c" ] && ncpu=$((ncpu + 1))
	done
	[ "$ncpu" -eq "$want_cpus" ] || bad "node$n has $ncpu CPUs, expected $want_cpus"
done

echo "online nodes: $(cat /sys/devices/system/node/online)"
echo "numa_balancing: $(cat /proc/sys/kernel/numa_balancing 2>/dev/null || echo n/a)"
echo "THP: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo n/a)"
echo "kernel: $(uname -r), cpus online: $(cat /sys/devices/system/cpu/online)"

[ "$nodes" -eq "$want_nodes" ] || bad "found $nodes nodes, expected $want_nodes"
dist0=$(cat /sys/devices/system/node/node0/distance 2>/dev/null)
[ "$dist0" = "$want_dist0" ] || bad "node0 distances are '$dist0', expected '$want_dist0'"

if [ "$fail" -eq 0 ]; then
	echo "smoke: OK"
else
	echo "smoke: FAILED"
fi
exit "$fail"
