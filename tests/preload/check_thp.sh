#!/bin/sh
# check_thp.sh PAGEHOME PROGRAM MACHINE MECHANISM -- 2 MiB pages kept
# mapped whole: prog_thp's 8 MiB array under `pagehome run --pagesize 2M`
# (MACHINE sim: the simulated 4-node machine from node:0; linux: this
# machine) with the sample mechanism MECHANISM.  Watching 4 KiB pages
# makes the kernel map a huge page with 4 KiB entries (mprotect) or split
# it into 4 KiB pages (userfaultfd's UFFDIO_MOVE); once the engine
# has stopped watching the array (the placement is stable), the array
# must be mapped whole again (the report's huge_remapped, and the
# program's own AnonHugePages at its end), and stdout's checksum is a
# plain run's.  Exit 77 where this run gets no huge pages at all (THP
# off, or none free) or userfaultfd is asked for and not usable.
ph=${1:?usage: check_thp.sh PAGEHOME PROGRAM MACHINE MECHANISM}
prog=${2:?}
machine=${3:?}
mech=${4:?}
[ -x "$prog" ] || { echo "check_thp: $prog not built: skipped"; exit 77; }
thp=/sys/kernel/mm/transparent_hugepage/enabled
if [ ! -r $thp ] || grep -q '\[never\]' $thp; then
    echo "check_thp: transparent huge pages are off here: skipped"
    exit 77
fi
tmp=${TMPDIR:-/tmp}/check_thp.$$
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT
export OMP_NUM_THREADS=4
if [ "$machine" = sim ]; then
    export PAGEHOME_TOPOLOGY=nodes=4,cpus_per_node=1
    place="--placement node:0"
else
    export PAGEHOME_MACHINE=linux
    place=
fi
mib=8 steps=400 want=$((8 * 1024))
fail=0
bad() { fail=$((fail + 1)); echo "check_thp: FAILED: $*"; }
field() { sed -n "s/^$1: AnonHugePages \([0-9-]*\) kB$/\1/p" "$2"; }
"$prog" $mib $steps > "$tmp/plain.out" || { bad "plain run"; exit 1; }
# Without the engine: the array is huge from its first touch, or this
# run cannot tell anything.
timeout 120 "$ph" run $place --pagesize 2M --migrate off -- "$prog" $mib $steps \
    > "$tmp/off.out" 2> "$tmp/off.err" || { bad "--migrate off: exit $?"; cat "$tmp/off.err"; exit 1; }
if [ "$(field start "$tmp/off.out")" != $want ]; then
    echo "check_thp: the array is not mapped huge even without the engine" \
         "($(field start "$tmp/off.out") kB of $want): skipped"
    exit 77
fi
# The engine, with a sampling budget that lets it sweep the array in a
# few iterations, so that it stops early in the run.
PAGEHOME_SAMPLE_MECHANISM=$mech PAGEHOME_SAMPLE_BUDGET=1 timeout 120 \
    "$ph" run -v $place --pagesize 2M --report "$tmp/r.json" -- "$prog" $mib $steps \
    > "$tmp/ph.out" 2> "$tmp/ph.err"
rc=$?
if grep -q "sample_mechanism=userfaultfd: .*using mprotect" "$tmp/ph.err"; then
    echo "check_thp: userfaultfd not usable here: skipped"
    exit 77
fi
[ $rc -eq 0 ] || { bad "exit $rc"; tail -5 "$tmp/ph.err"; }
[ "$(grep checksum "$tmp/plain.out")" = "$(grep checksum "$tmp/ph.out")" ] ||
    bad "checksum differs from a plain run"
end=$(field end "$tmp/ph.out")
grep -E "engine: (placement stable|.*watched no more)" "$tmp/ph.err" | sed 's/^/  /'
python3 - "$tmp/r.json" $mib <<'PY' || bad "report"
import json, sys
t = json.load(open(sys.argv[1]))["totals"]
units = int(sys.argv[2]) // 2
assert t["scanned"] > 0, "the engine sampled nothing"
assert not t["active"], "the engine never stopped watching (active at exit)"
assert t["huge_remapped"] == units, \
    "%d 2 MiB pages mapped whole again, want %d" % (t["huge_remapped"], units)
PY
[ "$end" = $want ] || bad "$end kB of the array mapped huge at the end, want $want"
[ $fail -eq 0 ] && echo "check_thp: ok (start $(field start "$tmp/ph.out") kB, end $end kB)"
[ $fail -eq 0 ]
