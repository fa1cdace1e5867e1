#!/bin/sh
# bench_workloads.sh -- whole-program overhead of `pagehome run` on every
# bundled workload (bench_run.sh on each, then one summary table).
#
#   bench_workloads.sh [--reps N] [--scale F] [--only NAME] BUILD_DIR
#
# Each workload runs at a size that takes 10-16 s on two threads on the
# quiet 2-core VM this was written on, clang builds (--scale F multiplies the
# iteration counts: 0.1 for a quick look; fft has none and keeps its size), plain, under `pagehome run --migrate off`
# (interposition only) and under `pagehome run` (default: sampling and
# migration on), N repetitions each (default 3), the order alternating.
# The clang builds (LLVM's libomp) are used where they exist, so that the
# program runs on the same OpenMP runtime plain and under pagehome (a
# gcc-built program is moved from libgomp to libomp by `pagehome run`).
# On one NUMA node nothing can be placed better: every difference is
# overhead.  Prints, per workload, the plain median and the median of the
# per-repetition ratios; the goal for `run` is <= 1.02.  Never asserts a time;
# exits non-zero only when a run fails or prints something else than the
# first run (bench_run.sh checks that).
set -u
usage() {
    echo "usage: bench_workloads.sh [--reps N] [--scale F] [--only NAME] BUILD_DIR" >&2
    exit 2
}
reps=3 scale=1 only=""
while [ $# -gt 0 ]; do
    case $1 in
        --reps) [ $# -ge 2 ] || usage; reps=$2; shift 2 ;;
        --scale) [ $# -ge 2 ] || usage; scale=$2; shift 2 ;;
        --only) [ $# -ge 2 ] || usage; only=$2; shift 2 ;;
        -h|--help) usage ;;
        -*) echo "bench_workloads.sh: unknown option $1" >&2; usage ;;
        *) break ;;
    esac
done
[ $# -eq 1 ] || usage
case $reps in ''|*[!0-9]*|0) echo "bench_workloads.sh: --reps wants a positive integer" >&2; exit 2 ;; esac
awk -v s="$scale" 'BEGIN { exit !(s > 0 && s <= 100) }' ||
    { echo "bench_workloads.sh: --scale wants a number in (0, 100]" >&2; exit 2; }
build=$1
ph=$build/tools/pagehome/pagehome
[ -x "$ph" ] || { echo "bench_workloads.sh: no $ph (build first)" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}

# it N: N iterations scaled, at least 1
it() { awk -v n="$1" -v s="$scale" 'BEGIN { v = int(n * s + 0.5); print (v < 1 ? 1 : v) }'; }

# name | program (without the _clang suffix) | arguments
list="laplace|workloads/laplace|naive 2048 $(it 2600)
swim|workloads/swim|1024 $(it 1080)
xsbench|workloads/xsbench|64 $(it 6100000)
fft|workloads/fft|interleave 26
bt|workloads/nas/bt|A $(it 200)
sp|workloads/nas/sp|A $(it 720)
cg|workloads/nas/cg|A $(it 1150)
mg|workloads/nas/mg|A $(it 120)
ft|workloads/nas/ft|A $(it 46)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench_workloads.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
status=0
printf '%s\n' "$list" | while IFS='|' read -r name prog args; do
    [ -n "$only" ] && [ "$name" != "$only" ] && continue
    bin=$build/${prog}_clang
    [ -x "$bin" ] || bin=$build/$prog
    if [ ! -x "$bin" ]; then
        echo "$name: not built, skipped"
        continue
    fi
    echo "==== $name: $(basename "$bin") $args"
    # shellcheck disable=SC2086 # $args is split into words on purpose
    if ! sh "$here/bench_run.sh" --reps "$reps" --no-libomp "$ph" "$bin" $args >"$tmp/$name.log" 2>&1; then
        cat "$tmp/$name.log"
        echo "$name: FAILED" >"$tmp/$name.sum"
        continue
    fi
    grep -E '^rep |^median ' "$tmp/$name.log"
    plain=$(sed -n 's/^median plain: \([0-9.]*\) s$/\1/p' "$tmp/$name.log")
    off=$(sed -n 's/^median off: .* ratio off\/plain: median \([0-9.]*\),.*/\1/p' "$tmp/$name.log")
    run=$(sed -n 's/^median run: .* ratio run\/plain: median \([0-9.]*\),.*/\1/p' "$tmp/$name.log")
    printf '%-8s %8s s %8s %8s\n' "$name" "$plain" "$off" "$run" >"$tmp/$name.sum"
done
echo
echo "workload    plain  off/plain  run/plain   (medians of $reps paired repetitions; goal run/plain <= 1.02)"
for f in "$tmp"/*.sum; do
    [ -f "$f" ] || continue
    cat "$f"
    grep -q FAILED "$f" && status=1
done
exit $status
