#!/bin/sh
# cluster-compat.sh BUILD_DIR -- inside the guest (tests/numa-guest/
# cluster-compat): cluster mode on a kernel without the one-step
# write-protected mapping.
build=${1:?usage: cluster-compat.sh BUILD_DIR}
here=$(dirname "$0")
ph=$build/tools/pagehome/pagehome
mech=$("$ph" cluster info ${PH_MPI_FLAVOR:+--mpi "$PH_MPI_FLAVOR"} 2>&1 |
       sed -n 's/.*faults by \([a-z-]*\).*/\1/p')
echo "guest kernel $(uname -r): cluster mode's faults by ${mech:-?}"
case $mech in
userfaultfd-compat) ;;
userfaultfd)
    echo "cluster-compat: SKIP: this kernel maps write-protected in one step"
    exit 77 ;;
*)
    echo "cluster-compat: FAIL: no userfaultfd mechanism in the guest"
    exit 1 ;;
esac
fail=0
# writes through a second mapping all through each miss must reach home
# (a SCHED_FIFO writer on the second CPU; at least a quarter caught, as
# the host may deschedule the guest's CPUs under it)
"$here/../cluster/run.sh" --timeout 300 2 --env OMP_NUM_THREADS=2 \
    --env PAGEHOME_CLUSTER_MIGRATE=0 --env PAGEHOME_CLUSTER_FETCH_PAGES=1 \
    --env PAGEHOME_CLUSTER_FETCH_MAX_PAGES=1 \
    "$build/tests/cluster/test_map_gap" alias 48 3 25 || fail=1
# the seeded stress and the litmus tests on the two-step path
"$here/../cluster/run.sh" --timeout 300 2 \
    "$build/tests/cluster/test_stress" 49 cyclic:1 || fail=1
"$here/../cluster/run.sh" --timeout 300 2 \
    "$build/tests/cluster/test_litmus" || fail=1
exit $fail
