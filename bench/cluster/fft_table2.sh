#!/usr/bin/env bash
# bench/cluster/fft_table2.sh -- paper 002 Table 2 on cluster mode: the
# FFT implementations 0-4 with gangs and `flat` (the same transform
# without gangs) of workloads/cluster/fft_dsm, at ranks x threads 1x1,
# 1x2 and 2x1 on this machine's shared memory, through `pagehome cluster
# run`.  Prints one line per job: the median seconds over the repetitions
# (fft_dsm --reps, one process per job) and the pages all ranks fetched
# during one transform (the DSM's statistics).  See bench/README.md,
# "Cluster", "FFT with gangs".
#
#   bench/cluster/fft_table2.sh [--reps N] [--log2n L] [--configs LIST] BUILD_DIR
#     --reps N      repetitions inside each job (default 5)
#     --log2n L     N = 2^L points (default 19, the paper's 524288)
#     --configs L   ranks x threads, e.g. 1x1,2x1 (default 1x1,1x2,2x1)
set -uo pipefail
reps=5 log2n=19 configs=1x1,1x2,2x1
while (($#)); do
    case $1 in
        --reps) reps=$2; shift 2 ;;
        --log2n) log2n=$2; shift 2 ;;
        --configs) configs=$2; shift 2 ;;
        -*) echo "fft_table2.sh: unknown option $1" >&2; exit 2 ;;
        *) break ;;
    esac
done
build=${1:?usage: fft_table2.sh [options] BUILD_DIR}
ph=$build/tools/pagehome/pagehome
prog=$build/workloads/cluster/fft_dsm
[ -x "$ph" ] && [ -x "$prog" ] || { echo "fft_table2.sh: build $build first (pagehome, fft_dsm)" >&2; exit 2; }
status=0
printf '%-6s %-5s %12s %9s %6s  %s\n' impl RxT median_s fetched gets verification
IFS=, read -ra cfgs <<<"$configs"
for impl in 0 1 2 3 4 flat; do
    for cfg in "${cfgs[@]}"; do
        r=${cfg%x*} t=${cfg#*x}
        if [ "$impl" = 0 ] && [ "$cfg" != 1x1 ]; then continue; fi
        out=$(OMP_NUM_THREADS=$t "$ph" cluster run -n "$r" -- "$prog" "$impl" "$log2n" \
              --reps "$reps" </dev/null 2>&1)
        line=$(grep -m1 'median_seconds=' <<<"$out")
        ver=$(grep -m1 '^verification:' <<<"$out")
        if [ -z "$line" ] || [[ $ver != "verification: ok"* ]]; then
            echo "FAILED: impl $impl $cfg"; echo "$out" | tail -20; status=1; continue
        fi
        sec=$(sed -n 's/.*median_seconds=\([0-9.]*\).*/\1/p' <<<"$line")
        fet=$(sed -n 's/.*fetched=\([0-9]*\).*/\1/p' <<<"$line")
        gets=$(sed -n 's/.*gets=\([0-9]*\).*/\1/p' <<<"$line")
        printf '%-6s %-5s %12s %9s %6s  %s\n' "$impl" "$cfg" "$sec" "$fet" "$gets" "${ver%% (*}"
    done
done
exit $status
