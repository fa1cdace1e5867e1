#!/bin/sh
# check_robust.sh PAGEHOME PROGRAM ITEM [MECHS] -- one item of prog_robust
# (or prog_robust_f) run plainly and under `pagehome run` in every engine
# mechanism (iterative, sampling, hybrid), with each sample_mechanism
# (userfaultfd where usable, and the mprotect fallback forced), on this
# machine and on the simulated 4-node one.  Every run must print the
# program's "ok" line and exit 0.  The engine is kept watching pages the
# whole run (stable_after=0, full snapshots, the sampling mechanism waking
# every 5 ms), so the program's steps meet watched pages.  Asked for
# userfaultfd alone (an item only it can pass) where it is not usable, or
# the program's plain run exits 77 (it cannot test the item here): 77.
ph=${1:?usage: check_robust.sh PAGEHOME PROGRAM ITEM [SAMPLE_MECHANISMS]}
prog=${2:?}
item=${3:?}
mechs=${4:-"userfaultfd mprotect"}
pass=0 fail=0 fallback=0
out=${TMPDIR:-/tmp}/check_robust.$$
trap 'rm -f "$out"' EXIT
run() {
    label=$1
    shift
    timeout 300 "$@" "$prog" "$item" > "$out" 2>&1
    rc=$?
    if [ $rc -eq 77 ] && [ "$label" = plain ]; then
        # the program cannot test the item here (mlockall not permitted)
        echo "check_robust $item: SKIPPED: $(tail -1 "$out")"
        exit 77
    fi
    # asked for userfaultfd, given mprotect (kernel < 6.8, not permitted)
    grep -q "sample_mechanism=userfaultfd: .*using mprotect" "$out" && fallback=$((fallback + 1))
    if [ $rc -eq 0 ] && grep -q "^prog_robust $item: ok" "$out"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "check_robust: FAILED: $item, $label:"
        sed 's/^/    /' "$out" | grep -v '^    [a-z_0-9]* *= ' | tail -8
    fi
}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-4}
run "plain" env
for sm in $mechs; do
    for machine in real sim; do
        topo=
        [ "$machine" = sim ] && topo=nodes=4,cpus_per_node=2
        for mig in iterative sampling hybrid; do
            run "$sm, $machine machine, --migrate $mig" env PAGEHOME_SAMPLE_MECHANISM=$sm \
                PAGEHOME_TOPOLOGY=$topo PAGEHOME_STABLE_AFTER=0 PAGEHOME_SAMPLE_PAGES=0 \
                PAGEHOME_SAMPLE_PERIOD_MS=5 PAGEHOME_VERBOSE=1 \
                "$ph" run --migrate $mig --
        done
    done
done
echo "check_robust $item: $pass passed, $fail failed"
if [ "$mechs" = userfaultfd ] && [ "$fallback" -gt 0 ]; then
    echo "check_robust $item: SKIPPED: userfaultfd is not usable here (run with mprotect)"
    exit 77
fi
[ "$fail" -eq 0 ]
