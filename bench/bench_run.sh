#!/bin/sh
# bench_run.sh -- whole-program overhead of transparent mode (`pagehome run`).
#
#   bench_run.sh [--reps N] [--opts "RUN OPTIONS"] [--no-libomp] PAGEHOME PROGRAM [ARGS...]
#
# Runs PROGRAM N times (default 7) in each configuration, the order of the
# configurations reversed on every other repetition, and times each whole
# process with `date +%s%N`:
#
#   plain    PROGRAM ARGS                                  (its own runtime)
#   libomp   PROGRAM ARGS on LLVM's libomp, no pagehome    (only for a program
#            linked to GNU libgomp: `pagehome run` swaps the runtime to get
#            OMPT, so this separates the runtime's cost from pagehome's)
#   off      PAGEHOME run --migrate off -- PROGRAM ARGS    (interposition:
#            preload, allocator, OMPT, iteration detection; no sampling)
#   run      PAGEHOME run [OPTS] -- PROGRAM ARGS           (default settings:
#            sampling and migration on)
#
# On a single-node machine no page can be better placed, so every difference
# from plain is pure overhead (the engine runs there because this script
# sets one_node_engine=1; a user's run on one node has it off).  It prints
# every run, the median of each configuration and, against plain, the
# median of the per-repetition ratios
# (the figure to quote; goal for `run`: <= 1.02 on long-running kernels) and
# the ratio of the medians.  The program's stdout must be the same in every
# run (it is kept; a difference fails), apart from the timings it prints
# itself ("..._s=N" such as time_s= or lookups_per_s=, and "time N s" are
# left out of the comparison).
# Never asserts a time.
#
# --opts adds options to the `run` configuration only (e.g. "--budget 0.005",
# "--report /tmp/stats.json").  --no-libomp drops the libomp configuration.
# OMP_NUM_THREADS and the rest of the environment are passed through.
set -u

usage() {
    echo "usage: bench_run.sh [--reps N] [--opts \"RUN OPTIONS\"] [--no-libomp] PAGEHOME PROGRAM [ARGS...]" >&2
    exit 2
}

reps=7
opts=""
want_libomp=1
while [ $# -gt 0 ]; do
    case $1 in
        --reps) [ $# -ge 2 ] || usage; reps=$2; shift 2 ;;
        --reps=*) reps=${1#--reps=}; shift ;;
        --opts) [ $# -ge 2 ] || usage; opts=$2; shift 2 ;;
        --opts=*) opts=${1#--opts=}; shift ;;
        --no-libomp) want_libomp=0; shift ;;
        -h|--help) usage ;;
        --) shift; break ;;
        -*) echo "bench_run.sh: unknown option $1" >&2; usage ;;
        *) break ;;
    esac
done
case $reps in ''|*[!0-9]*) echo "bench_run.sh: --reps wants a positive integer" >&2; exit 2 ;; esac
[ "$reps" -ge 1 ] || { echo "bench_run.sh: --reps wants a positive integer" >&2; exit 2; }
[ $# -ge 2 ] || usage
pagehome=$1
shift
[ -x "$pagehome" ] || { echo "bench_run.sh: $pagehome is not executable" >&2; exit 2; }
command -v "$1" >/dev/null 2>&1 || [ -x "$1" ] || { echo "bench_run.sh: no program $1" >&2; exit 2; }
case $(date +%N) in *N*|'') echo "bench_run.sh: date +%N is not supported here" >&2; exit 2 ;; esac

# On a one-node machine the engine is off by default (one_node_engine):
# the run configuration asks for it, so that its cost is what is measured.
export PAGEHOME_ONE_NODE_ENGINE=${PAGEHOME_ONE_NODE_ENGINE:-1}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench_run.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# The libomp configuration: what `pagehome run` does to a libgomp program
# (libgomp.so.1 -> libomp first on LD_LIBRARY_PATH), without the preload.
configs="plain off run"
if [ "$want_libomp" = 1 ]; then
    prog_path=$(command -v "$1" 2>/dev/null || echo "$1")
    if command -v readelf >/dev/null 2>&1 &&
       readelf -d "$prog_path" 2>/dev/null | grep -q 'NEEDED.*libgomp\.so'; then
        lib=""
        for c in ${PAGEHOME_LIBOMP:-} /usr/lib/llvm-14/lib/libomp.so.5 /usr/lib/llvm-14/lib/libomp.so \
                 /usr/lib/x86_64-linux-gnu/libomp.so.5 /usr/lib/llvm-15/lib/libomp.so.5 \
                 /usr/lib/llvm-16/lib/libomp.so.5; do
            [ -r "$c" ] && { lib=$c; break; }
        done
        if [ -n "$lib" ]; then
            mkdir "$tmp/libomp" && ln -s "$lib" "$tmp/libomp/libgomp.so.1"
            configs="plain libomp off run"
        fi
    fi
fi
rconfigs=""
for c in $configs; do rconfigs="$c $rconfigs"; done

now() { date +%s%N; }

# run_one CONFIG REP PROGRAM ARGS...: times one run, appends the seconds to
# $tmp/CONFIG.times, keeps stdout in $tmp/CONFIG.REP.out
run_one() {
    cfg=$1 rep=$2
    shift 2
    out=$tmp/$cfg.$rep.out err=$tmp/$cfg.$rep.err
    t0=$(now)
    case $cfg in
        plain) "$@" >"$out" 2>"$err" ;;
        libomp) LD_LIBRARY_PATH="$tmp/libomp${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$@" >"$out" 2>"$err" ;;
        off) "$pagehome" run --migrate off -- "$@" >"$out" 2>"$err" ;;
        # $opts is split into words on purpose
        run) "$pagehome" run $opts -- "$@" >"$out" 2>"$err" ;;
    esac
    st=$?
    t1=$(now)
    if [ $st -ne 0 ]; then
        echo "bench_run.sh: $cfg run $rep exited with status $st; its stderr:" >&2
        cat "$err" >&2
        exit 1
    fi
    if [ -s "$err" ]; then
        sed "s/^/  [$cfg stderr] /" "$err" >&2
    fi
    # the programs' own timings are not part of their output
    sed -E -e 's/[a-z_]+_s=[0-9.eE+-]+//g' -e 's/time [0-9.]+ s//g' "$out" >"$out.cmp"
    mv "$out.cmp" "$out"
    if [ -f "$tmp/reference.out" ]; then
        if ! cmp -s "$tmp/reference.out" "$out"; then
            echo "bench_run.sh: $cfg run $rep printed something else than the first run:" >&2
            diff "$tmp/reference.out" "$out" >&2
            exit 1
        fi
    else
        cp "$out" "$tmp/reference.out"
    fi
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
    echo "$secs" >>"$tmp/$cfg.times"
    eval "time_$cfg=\$secs"
}

median() { sort -g "$1" | awk '{ v[NR] = $1 } END { if (NR % 2) printf "%.3f", v[(NR + 1) / 2]; else printf "%.3f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "bench_run: $* (OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset}, reps=$reps)"
echo "bench_run: configurations: $configs${opts:+ (run: $opts)}"
for r in $(seq 1 "$reps"); do
    if [ $((r % 2)) = 1 ]; then order=$configs; else order=$rconfigs; fi
    line="rep $r:"
    for c in $order; do
        run_one "$c" "$r" "$@"
        eval "line=\"\$line  $c \$time_$c s\""
    done
    for c in $configs; do
        [ "$c" = plain ] && continue
        eval "echo \"\$time_$c \$time_plain\"" | awk '{ printf "%.4f\n", $1 / $2 }' >>"$tmp/$c.ratios"
    done
    echo "$line"
done
echo "output: $(head -c 200 "$tmp/reference.out" | head -n 1)"
mp=$(median "$tmp/plain.times")
echo "median plain: $mp s"
for c in $configs; do
    [ "$c" = plain ] && continue
    m=$(median "$tmp/$c.times")
    mr=$(median "$tmp/$c.ratios")
    rm_=$(awk -v a="$m" -v b="$mp" 'BEGIN { printf "%.4f", a / b }')
    case $c in
        libomp) what="plain on LLVM libomp (the runtime pagehome run uses)" ;;
        off) what="pagehome run --migrate off (interposition only)" ;;
        run) what="pagehome run${opts:+ $opts} (default: migration on)" ;;
    esac
    echo "median $c: $m s  ratio $c/plain: median $mr, of medians $rm_  -- $what"
done
