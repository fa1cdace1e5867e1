#!/bin/sh
# check_sim_first_touch.sh PAGEHOME MECHANISM PROGRAM [ARGS...] -- the
# first-touch trap on the simulated machine.  PROGRAM (prog_trap: a grid
# allocated and initialised by the master thread alone, before any
# parallel region, then swept by 4 threads) runs under
# `pagehome --topology nodes=4,cpus_per_node=1 run` with the given sample
# mechanism, twice:
#   --observe   the grid's pages must start where serial code put them,
#               on the master's node: at most 40% on their owner's node
#               (25% with 4 threads on 4 nodes) for some hot area;
#   engine on   every hot area must end at >= 90%.
# The simulator cannot see which thread faults a page; the sampler tells
# it the first toucher.  If serial code's first touches do not reach it,
# the pages get the node of the first thread that samples them and look
# local from the start (the mprotect mechanism did that while its runs
# were suspended in serial code).  Exit 77 when userfaultfd is asked for
# and the sampler falls back to mprotect.  POSIX sh.
ph=${1:?usage: check_sim_first_touch.sh PAGEHOME MECHANISM PROGRAM [ARGS...]}
mech=${2:?}
prog=${3:?}
shift 3
tmp=${TMPDIR:-/tmp}/check_sim_ft.$$
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
export OMP_NUM_THREADS=4 PAGEHOME_SAMPLE_MECHANISM="$mech"
# shares NAME.json: "min_start max_start min_end" over the hot areas
shares() {
    python3 - "$tmp/$1.json" <<'PY'
import json, sys
areas = [a for a in json.load(open(sys.argv[1]))["areas"] if a.get("start_pages")]
if not areas:
    print("none")
else:
    st = [a["owner_local_share_start"] for a in areas]
    en = [a["owner_local_share"] for a in areas]
    print("%.3f %.3f %.3f" % (min(st), max(st), min(en)))
PY
}
for run in observe on; do
    opt=
    [ $run = observe ] && opt=--observe
    PAGEHOME_VERBOSE=1 "$ph" --topology nodes=4,cpus_per_node=1 run $opt \
        --report "$tmp/$run.json" -- "$prog" "$@" > "$tmp/$run.out" 2>&1
    rc=$?
    got=$(sed -n 's/^pagehome: sampler: \([a-z-]*\) mechanism$/\1/p' "$tmp/$run.out" | head -1)
    if grep -q "sample_mechanism=userfaultfd: .*using mprotect" "$tmp/$run.out"; then
        echo "check_sim_first_touch: userfaultfd not usable here: skipped"
        exit 77
    fi
    if [ $rc -ne 0 ]; then
        echo "check_sim_first_touch: FAILED: $run run exit status $rc"
        sed 's|^|  |' "$tmp/$run.out"
        fail=1
        continue
    fi
    shares $run > "$tmp/$run.shares"
    read -r lo hi end < "$tmp/$run.shares"
    if [ "$lo" = none ]; then
        echo "check_sim_first_touch: FAILED: $run run: no hot area with sampled pages"
        fail=1
        continue
    fi
    echo "check_sim_first_touch: $mech (sampler: ${got:-?}), $run: owner-local share at start $lo (lowest area) .. $hi, at the end $end (lowest area)"
    if [ $run = observe ] && ! awk -v v="$lo" 'BEGIN { exit !(v <= 0.40) }'; then
        echo "check_sim_first_touch: FAILED: serially initialised pages look local from the start ($lo > 0.40): the simulator did not see their first touch"
        fail=1
    fi
    if [ $run = on ] && ! awk -v v="$end" 'BEGIN { exit !(v >= 0.90) }'; then
        echo "check_sim_first_touch: FAILED: an area ends at $end on its owner's node, want >= 0.90"
        "$ph" report --text-only "$tmp/on.json" 2>&1 | sed 's|^|  report: |'
        fail=1
    fi
done
[ $fail -eq 0 ] && echo "check_sim_first_touch: ok"
exit $fail
