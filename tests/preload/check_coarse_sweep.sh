#!/bin/sh
# check_coarse_sweep.sh PAGEHOME PROGRAM [ARGS...] -- the first sweep in
# coarse runs where traps are dear.  PROGRAM (prog_trap: a grid the
# master initialises alone, then swept by 4 threads, each its own block)
# runs under `pagehome --topology nodes=4,cpus_per_node=1 run` (the mprotect
# sampler) with a trap said to cost 1 ms (sample_trap_ns), twice:
#   coarse   the sweep's traps would cost more than sample_first_ms: it
#            watches runs of the default coarsest size,
#            sample_first_run_pages as the report's tunables give it (16
#            pages; config.sweep_run_pages), a trap's sample credited to the
#            other pages of its run (source_stats.credited > 0, fewer
#            traps than pages swept), and every hot area ends >= 85% on
#            its owner's node (from about 25%): a run across two threads'
#            blocks is credited whole to whichever touched it first, and
#            under a 1 ms trap the budget's later intervals are few;
#   exact    sample_first_run_pages=1: every page trapped, none credited,
#            every area >= 90%.
# POSIX sh.
ph=${1:?usage: check_coarse_sweep.sh PAGEHOME PROGRAM [ARGS...]}
prog=${2:?}
shift 2
tmp=${TMPDIR:-/tmp}/check_coarse_sweep.$$
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
export OMP_NUM_THREADS=4
for run in coarse exact; do
    opt= want=0.85
    [ $run = exact ] && opt="--set sample_first_run_pages=1" want=0.90
    # shellcheck disable=SC2086
    PAGEHOME_VERBOSE=1 "$ph" --topology nodes=4,cpus_per_node=1 run \
        --set sample_mechanism=mprotect --set sample_trap_ns=1e6 \
        $opt --report "$tmp/$run.json" \
        -- "$prog" "$@" > "$tmp/$run.out" 2>&1
    rc=$?
    if [ $rc -ne 0 ]; then
        echo "check_coarse_sweep: FAILED: $run run exit status $rc"
        sed 's|^|  |' "$tmp/$run.out"
        fail=1
        continue
    fi
    # "run_pages credited samples lowest_end_share"
    python3 - "$tmp/$run.json" > "$tmp/$run.v" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
areas = [a for a in d["areas"] if a.get("start_pages")]
end = min(a["owner_local_share"] for a in areas) if areas else -1
src = d["source_stats"]
cap = d["config"]["tunables"]["sample_first_run_pages"]["value"]
print(d["config"]["sweep_run_pages"], src["credited"], src["samples"], "%.3f" % end, cap)
PY
    read -r runs credited samples end cap < "$tmp/$run.v"
    echo "check_coarse_sweep: $run: sweep runs of $runs pages, $credited of $samples samples credited, lowest area at the end $end on its owner's node"
    sed -n 's/^pagehome: \(engine: the first sweep.*\)/  \1/p' "$tmp/$run.out"
    if [ $run = coarse ]; then
        if [ "$cap" -le 1 ] || [ "$runs" -ne "$cap" ] || [ "$credited" -le 0 ] ||
            [ "$credited" -ge "$samples" ]; then
            echo "check_coarse_sweep: FAILED: a 1 ms trap should make the sweep coarse, in runs of $cap (the default coarsest)"
            fail=1
        fi
    elif [ "$runs" -ne 1 ] || [ "$credited" -ne 0 ]; then
        echo "check_coarse_sweep: FAILED: sample_first_run_pages=1 should sweep every page"
        fail=1
    fi
    if ! awk -v v="$end" -v w="$want" 'BEGIN { exit !(v >= w) }'; then
        echo "check_coarse_sweep: FAILED: $run: an area ends at $end on its owner's node, want >= $want"
        "$ph" report --text-only "$tmp/$run.json" 2>&1 | sed 's|^|  report: |'
        fail=1
    fi
done
[ $fail -eq 0 ] && echo "check_coarse_sweep: ok"
exit $fail
