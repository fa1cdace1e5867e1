#!/bin/sh
# check_blocks.sh PAGEHOME PROGRAM MECHANISM -- a program whose data is
# many separate blocks (prog_blocks: 1500 of 64 KiB, more than the 1024
# hot ranges the sampler once had room for) under `pagehome run` with a
# 64 KiB hot threshold, on the simulated 4-node machine from node:0, with
# the sample mechanism MECHANISM (mprotect or userfaultfd): every block
# is a watched hot area (no "cannot watch" warning, 1500 areas in the
# report), pages are moved, and stdout is a plain run's.  Exit 77 when
# userfaultfd is asked for and the sampler falls back to mprotect.
ph=${1:?usage: check_blocks.sh PAGEHOME PROGRAM MECHANISM}
prog=${2:?}
mech=${3:?}
[ -x "$prog" ] || { echo "check_blocks: $prog not built: skipped"; exit 77; }
tmp=${TMPDIR:-/tmp}/check_blocks.$$
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT
export OMP_NUM_THREADS=4
nb=1500
fail=0
bad() { fail=$((fail + 1)); echo "check_blocks: FAILED: $*"; }
"$prog" $nb 64 40 > "$tmp/plain.out" || { bad "plain run"; exit 1; }
PAGEHOME_TOPOLOGY=nodes=4,cpus_per_node=1 PAGEHOME_HOT_THRESHOLD=64K \
PAGEHOME_SAMPLE_MECHANISM=$mech timeout 300 "$ph" run --placement node:0 \
    --report "$tmp/r.json" -- "$prog" $nb 64 40 > "$tmp/ph.out" 2> "$tmp/ph.err"
rc=$?
if grep -q "sample_mechanism=userfaultfd: .*using mprotect" "$tmp/ph.err"; then
    echo "check_blocks: userfaultfd not usable here: skipped"
    exit 77
fi
[ $rc -eq 0 ] || { bad "exit $rc"; tail -5 "$tmp/ph.err"; }
cmp -s "$tmp/plain.out" "$tmp/ph.out" || bad "stdout differs from a plain run"
grep "cannot watch" "$tmp/ph.err" | head -2 | sed 's/^/  /'
grep -q "cannot watch" "$tmp/ph.err" && bad "a block was not watched"
python3 - "$tmp/r.json" $nb <<'PY' || bad "report"
import json, sys
r = json.load(open(sys.argv[1]))
nb = int(sys.argv[2])
areas = r["areas"]
assert len(areas) == nb, "%d hot areas in the report, want %d" % (len(areas), nb)
t = r["totals"]
assert t["remote_accesses_before"] > 0, "no remote access sampled"
assert t["migrated"] > 0, "no page moved"
print("check_blocks: %d areas, %d pages moved" % (len(areas), t["migrated"]))
PY
[ $fail -eq 0 ] && echo "check_blocks: ok"
[ $fail -eq 0 ]
