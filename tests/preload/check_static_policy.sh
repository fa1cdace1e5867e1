#!/bin/sh
# check_static_policy.sh PAGEHOME PROGRAM -- transparent mode gives a large
# static segment a first-touch policy of its own ("local" in numa_maps)
# exactly when the engine is to manage it alone (kernel_balancing=exclude,
# the engine on, not observing), so that the kernel's NUMA balancing
# leaves it to the engine, as it does the heap's hot blocks -- unless the
# process was started under a policy of its own (numactl) or sets one
# (set_mempolicy, libnuma's numa_set_membind), which the kernel's
# balancing skips anyway and which must keep placing it.  Exit 77
# where the kernel lists no memory policies.
ph=${1:?usage: check_static_policy.sh PAGEHOME PROGRAM}
prog=${2:?}
pass=0 fail=0
policy() { sed -n 's/^policy //p'; }
plain=$("$prog") ; rc=$?
[ "$rc" -eq 77 ] && { echo "check_static_policy: no numa_maps: skipped"; exit 77; }
[ "$rc" -eq 0 ] || { echo "check_static_policy: FAILED: plain run exit $rc"; exit 1; }
args= # the program's
expect() { # WANT WHAT OPTIONS...
    want=$1 what=$2
    shift 2
    got=$("$ph" run "$@" -- "$prog" $args | policy)
    if [ "$got" = "$want" ]; then pass=$((pass + 1)); else
        fail=$((fail + 1)); echo "check_static_policy: FAILED: $what: policy '$got', want '$want'"; fi
    echo "  $what: $got"
}
echo "  plain: $(echo "$plain" | policy)"
[ "$(echo "$plain" | policy)" = default ] && pass=$((pass + 1)) || {
    fail=$((fail + 1)); echo "check_static_policy: FAILED: plain run's policy is not default"; }
expect local "pagehome run (exclude)"
expect default "kernel_balancing=share" --set kernel_balancing=share
expect default "--migrate off" --migrate off
expect default "--observe" --observe
# started under a memory policy of its own (numactl --membind): the
# process's policy places the segment (numa_maps shows it), no range
# policy overrides it
if command -v numactl > /dev/null 2>&1; then
    got=$(numactl --membind=0 "$ph" run -- "$prog" | policy)
    if [ "$got" = bind:0 ]; then pass=$((pass + 1)); else
        fail=$((fail + 1)); echo "check_static_policy: FAILED: numactl --membind=0: policy '$got', want 'bind:0'"; fi
    echo "  numactl --membind=0: $got"
fi
# the program binds its memory itself first thing in main: the segment is
# handed to that policy; back to MPOL_DEFAULT, it gets its own again
args=bind
expect bind:0 "set_mempolicy(MPOL_BIND, 0)"
args=default
expect local "set_mempolicy(MPOL_BIND, 0), then MPOL_DEFAULT"
echo "check_static_policy: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
