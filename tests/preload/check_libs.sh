#!/bin/sh
# check_libs.sh PAGEHOME PROGRAM ARGS... -- a program on a runtime or a
# library of its own (prog_fftw: FFTW's OpenMP threads; prog_blas:
# OpenBLAS's pthreads and its mmap'd buffer; prog_omp5: gcc 12's OpenMP 5
# and target regions; prog_int8: gfortran -fdefault-integer-8) under
# `pagehome run`: the default mode, each mechanism, both sample mechanisms
# and a node:0 placement.  Every run must exit as a plain run does with the same stdout
# (the program verifies its own result), and write a report whose hot
# areas hold the program's arrays (CHECK_LIBS_MIN_HOT of them, default 2)
# and one initial OpenMP thread (the main one: a library's own pthreads
# must not become the runtime's).  The runs of the iterative mechanism
# must have sampled (it sweeps at the first iteration's end); the
# sampling mechanism's intervals follow the clock, and a short run may
# end before its first.  PAGEHOME_TOPOLOGY in the environment: the simulated machine.
# CHECK_LIBS_KEEPS_GOMP=1: a program that keeps GNU libgomp (prog_acc):
# the default mode and --migrate off only, and the run must say why.
# Exit 77 when PROGRAM was not built (its library or compiler is missing).
ph=${1:?usage: check_libs.sh PAGEHOME PROGRAM ARGS...}
prog=${2:?}
shift 2
[ -x "$prog" ] || { echo "check_libs: $prog not built (library missing): skipped"; exit 77; }
name=$(basename "$prog")
tmp=${TMPDIR:-/tmp}/check_libs.$$
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
pass=0 fail=0
bad() { fail=$((fail + 1)); echo "check_libs: FAILED: $name $*"; }

timeout 120 "$prog" "$@" > "$tmp/plain.out" 2> "$tmp/plain.err"
rc_plain=$?
[ $rc_plain -eq 0 ] && grep -q "verification: ok" "$tmp/plain.out" ||
    { bad "plain run: exit $rc_plain"; cat "$tmp/plain.out" "$tmp/plain.err"; exit 1; }

# what: label; want_samples: 1 when the run must have sampled; then options
run_one() {
    what=$1 want_samples=$2
    shift 2
    rm -f "$tmp/r.json"
    timeout 300 "$ph" run --report "$tmp/r.json" "$@" -- "$prog" $args \
        > "$tmp/ph.out" 2> "$tmp/ph.err"
    rc=$?
    if [ $rc -eq 124 ]; then bad "$what: hangs (killed after 300 s)"; return; fi
    [ $rc -eq 0 ] || { bad "$what: exit status $rc"; sed 's/^/  /' "$tmp/ph.err" | tail -20; return; }
    cmp -s "$tmp/plain.out" "$tmp/ph.out" ||
        { bad "$what: stdout differs from a plain run"; diff "$tmp/plain.out" "$tmp/ph.out" | sed 's/^/  /'; return; }
    python3 - "$tmp/r.json" "$want_samples" <<'PY' || { bad "$what: report"; return; }
import json, os, sys
d = json.load(open(sys.argv[1]))
want = int(sys.argv[2])
heap = d["transparent"]["heap"]
want_hot = int(os.environ.get("CHECK_LIBS_MIN_HOT", "2"))
assert heap["hot_allocations"] >= want_hot, "hot allocations %d, want %d" % (heap["hot_allocations"], want_hot)
assert heap["placement_failures"] == 0, "placement failures %d" % heap["placement_failures"]
# only the main thread runs OpenMP's serial code: a library's own threads
# must not become the runtime's initial threads (pagehome asking the
# runtime about them made them so on the simulated machine)
omp = d["transparent"].get("openmp") or {}
if omp.get("runtime_seen") and omp.get("runtime_threads"):
    init = omp["runtime_threads"]["initial"]
    assert init == 1, "%d initial OpenMP threads, want 1" % init
if want:
    s = d["source_stats"]
    assert s["samples"] > 0, "no sample"
    assert s["dropped"] == 0, "%d samples dropped" % s["dropped"]
    t = d["totals"]
    assert t["failed"] == 0, "%d moves failed" % t["failed"]
PY
    pass=$((pass + 1))
}

args="$*"
if [ "${CHECK_LIBS_KEEPS_GOMP:-0}" = 1 ]; then
    # a program pagehome cannot move onto libomp: it keeps GNU libgomp,
    # says so, and runs
    run_one auto 0
    grep -q "keeps GNU libgomp" "$tmp/ph.err" || { bad "auto: no word of keeping libgomp"; cat "$tmp/ph.err"; }
    run_one off 0 --migrate off
else
    run_one iterative 1 --migrate iterative
    run_one auto 0
    run_one sampling 0 --migrate sampling
    run_one off 0 --migrate off
    run_one observe 1 --observe --migrate iterative
    run_one mprotect 1 --migrate iterative --set sample_mechanism=mprotect
    run_one node0 1 --migrate iterative --placement node:0
    run_one interleave 0 --placement interleave --migrate sampling
fi

echo "check_libs: $name: $pass runs, $fail failures"
[ $fail -eq 0 ] && echo "check_libs: ok"
[ $fail -eq 0 ]
