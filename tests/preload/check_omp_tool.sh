#!/bin/sh
# check_omp_tool.sh PAGEHOME PROGRAM PRELOAD -- `pagehome run` when the user's
# environment has OMP_TOOL set so that the OpenMP runtime starts no tool
# (OMP_TOOL=disabled, in any case, or a value libomp rejects): pagehome
# respects it, says so, and its engine, left at its default mechanism,
# samples instead of waiting for iterations that never come.  PROGRAM is
# prog_cxx (a C++ Jacobi sweep over two std::vector grids).
#   1. OMP_TOOL=disabled: the warning; the report names the value, saw no
#      region, ran the sampling mechanism (invocations > 0); the same
#      stdout as a plain run.  On the simulated 4-node machine from
#      node:0, pages are moved and >= 40% of the grids' strips end on
#      their owner's node (25% at the start), with the mprotect sample
#      mechanism chosen by itself: on the simulated machine only a thread
#      itself can tell its OpenMP thread number, and a userfaultfd
#      service thread without the runtime's thread notes would see every
#      thread where it started.
#   2. OMP_TOOL=DISABLED and OMP_TOOL=bogus: the same warning.
#   3. --migrate iterative with OMP_TOOL=disabled: kept, with the warning
#      that it will not act; nothing is moved.
#   4. OMP_TOOL=enabled: no warning, the runtime seen.
#   5. --runtime=gomp (GNU libgomp: no tools interface) on the simulated
#      machine from node:0: pages moved as in 1, mprotect chosen.
#   6. PRELOAD (libpagehome_preload.so) preloaded by hand into PROGRAM,
#      which runs on GNU libgomp then: the warning, the sampling mechanism.
# 5 and 6 only for a PROGRAM linked to GNU libgomp (a gcc build).
ph=${1:?usage: check_omp_tool.sh PAGEHOME PROGRAM PRELOAD}
prog=${2:?}
pre=${3:?}
[ -x "$prog" ] || { echo "check_omp_tool: $prog not built: skipped"; exit 77; }
tmp=${TMPDIR:-/tmp}/check_omp_tool.$$
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT
export OMP_NUM_THREADS=4
unset OMP_TOOL PAGEHOME_ENGINE PAGEHOME_TOPOLOGY PAGEHOME_MACHINE
fail=0
bad() { fail=$((fail + 1)); echo "check_omp_tool: FAILED: $*"; }
rows=1024 steps=6000
warn="lets the OpenMP runtime start no tool"

"$prog" $rows $steps > "$tmp/plain.out" 2> /dev/null || { bad "plain run"; exit 1; }

# run LABEL TOOL [pagehome run options...]: the report is $tmp/LABEL.json
run() {
    label=$1 tool=$2
    shift 2
    if [ "$tool" = - ]; then
        timeout 300 "$ph" run --report "$tmp/$label.json" "$@" -- \
            "$prog" $rows $steps > "$tmp/$label.out" 2> "$tmp/$label.err"
    else
        OMP_TOOL=$tool timeout 300 "$ph" run --report "$tmp/$label.json" "$@" -- \
            "$prog" $rows $steps > "$tmp/$label.out" 2> "$tmp/$label.err"
    fi
    rc=$?
    [ $rc -eq 0 ] || { bad "$label: exit $rc"; sed 's/^/  /' "$tmp/$label.err" | tail -8; }
    cmp -s "$tmp/plain.out" "$tmp/$label.out" || bad "$label: stdout differs from a plain run"
}
# report LABEL TOOL MECHANISM NODES: what the report must say
report() {
    python3 - "$tmp/$1.json" "$2" "$3" "$4" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
tool, mech, nodes = sys.argv[2], sys.argv[3], int(sys.argv[4])
omp = r["transparent"]["openmp"]
mech_run = r["config"]["mechanism"]
assert mech_run == mech, "mechanism %s, want %s" % (mech_run, mech)
t = r["totals"]
if tool.lower() == "enabled":
    assert omp["runtime_seen"] and omp["omp_tool"] is None, omp
    sys.exit(0)
want = None if tool == "-" else tool
assert omp["omp_tool"] == want, "omp_tool %r, want %r" % (omp["omp_tool"], want)
assert not omp["runtime_seen"], "a runtime seen with OMP_TOOL=%s" % tool
if mech != "sampling":
    assert t["migrated"] == 0, "%d pages moved by a mechanism that cannot act" % t["migrated"]
    sys.exit(0)
assert t["invocations"] > 0, "the engine never ran"
if nodes < 2:
    sys.exit(0)
assert t["remote_accesses_before"] > 0, "no remote access sampled"
assert t["migrated"] > 0, "no page moved"
# the sampling mechanism acts from its periods (200 ms each; about 2 s of
# run here, not enough to finish): the grids' strips, 25% on their
# owner's node at the start, must have gone towards them.  With 3000 steps
# (about 1 s, 5 invocations) the share was 33-50% from run to run, on
# both sides of the bar; 6000 steps gave 62% (10 invocations).
good = total = 0
for a in r["areas"]:
    s = a["strip_end"]
    for k, home in enumerate(s):
        owner_f = (k + 0.5) * 4 / len(s)
        if abs(owner_f - round(owner_f)) < 4.0 / len(s):
            continue  # a strip across two threads' rows
        total += 1
        good += home == int(owner_f)
share = 100.0 * good / max(total, 1)
print("check_omp_tool: %.1f%% of %d strips on their owner's node" % (share, total))
assert share >= 40, "%.1f%% on the owner's node, want >= 40" % share
PY
}

# 1. disabled, on this machine and on the simulated 4-node one
run disabled disabled
grep -q "OMP_TOOL=disabled $warn, pagehome's included" "$tmp/disabled.err" ||
    bad "disabled: no warning: $(head -3 "$tmp/disabled.err")"
report disabled disabled sampling 1 || bad "disabled: report"
PAGEHOME_TOPOLOGY=nodes=4,cpus_per_node=1 run sim disabled -v --placement node:0
grep -q "OMP_TOOL=disabled $warn" "$tmp/sim.err" || bad "sim: no warning"
grep -q "sampler: no OpenMP tool notes the threads' places.*the mprotect mechanism" "$tmp/sim.err" ||
    bad "sim: not the mprotect mechanism"
report sim disabled sampling 4 || bad "sim: report"

# 2. other values that start no tool
for v in DISABLED bogus; do
    run "v$v" "$v"
    grep -q "OMP_TOOL=$v $warn" "$tmp/v$v.err" || bad "$v: no warning"
    report "v$v" "$v" sampling 1 || bad "$v: report"
done

# 3. a mechanism the user chose is kept, and said not to act
run chosen disabled --migrate iterative
grep -q "OMP_TOOL=disabled $warn.*the iterative mechanism.*will not act" "$tmp/chosen.err" ||
    bad "chosen: no warning that iterative will not act: $(head -3 "$tmp/chosen.err")"
report chosen disabled iterative 1 || bad "chosen: report"

# 4. enabled: nothing changes
run enabled enabled
grep -q "$warn" "$tmp/enabled.err" && bad "enabled: warned"
report enabled enabled iterative 1 || bad "enabled: report"

# 5 and 6 need a program on GNU libgomp (a clang build's runs on libomp)
if ! ldd "$prog" 2> /dev/null | grep -q "libgomp"; then
    echo "check_omp_tool: $prog does not use GNU libgomp: cases 5 and 6 skipped"
    [ $fail -eq 0 ] && echo "check_omp_tool: ok"
    exit $((fail != 0))
fi

# 5. GNU libgomp kept (--runtime=gomp) on the simulated machine: the
#    sampling mechanism (pagehome run chooses it), with mprotect
PAGEHOME_TOPOLOGY=nodes=4,cpus_per_node=1 run gomp - -v --runtime=gomp --placement node:0
grep -q "sampler: no OpenMP tool notes the threads' places.*the mprotect mechanism" "$tmp/gomp.err" ||
    bad "gomp: not the mprotect mechanism"
report gomp - sampling 4 || bad "gomp: report"

# 6. preloaded by hand: GNU libgomp stays
LD_PRELOAD=$pre PAGEHOME_STATS_FILE=$tmp/pre.json "$prog" $rows $steps \
    > "$tmp/pre.out" 2> "$tmp/pre.err" || bad "pre: exit $?"
cmp -s "$tmp/plain.out" "$tmp/pre.out" || bad "pre: stdout differs from a plain run"
grep -q "the program's OpenMP runtime is GNU libgomp, which has no tools interface, so .*sampling mechanism only" \
    "$tmp/pre.err" || bad "pre: no warning: $(head -3 "$tmp/pre.err")"
report pre - sampling 1 || bad "pre: report"

[ $fail -eq 0 ] && echo "check_omp_tool: ok"
[ $fail -eq 0 ]
