#!/bin/sh
# guest_runs.sh -- real-kernel placement runs: every bundled workload in the
# 4-node NUMA guest, from first-touch, interleave and single-node (node:0)
# placement, with pagehome off (PAGEHOME_OBSERVE=1: samples and measures,
# moves nothing) and on (auto: the mechanism `pagehome run` picks by itself,
# as a user gets it; iterative, sampling, and hybrid for the ADI kernels bt
# and sp, which have phases), plus one plain run per workload (no pagehome)
# whose stdout and verification line are the reference.  With --sim the same
# runs go on the simulated 4-node machine on this host instead (no guest).
#
#   bench/guest_runs.sh [options] BUILD_DIR
#
#   --workloads LIST   comma list (default laplace,laplace_f,fft,swim,xsbench,
#                      bt,sp,cg,mg,ft; a workload not built is skipped with a note)
#   --placements LIST  default first-touch,interleave,node:0
#   --modes LIST       default off,auto,iterative,sampling,hybrid
#   --smoke            laplace only, node:0 only, modes off,iterative (ctest)
#   --sim [SPEC]       run on this host on a simulated machine (SPEC as
#                      pagehome's --topology; default nodes=4,cpus_per_node=1)
#                      with the sizes made for it (10x the iterations: the
#                      host runs the programs 10-50x faster than the guest)
#   --outdir DIR       keep every run's stdout, stderr and JSON report in DIR
#                      (default: a temporary directory, removed at the end);
#                      guest_runs_table.py DIR/manifest.tsv prints the table again
#   --timeout SEC      guest time limit (default 1800)
#
# Builds nothing: BUILD_DIR must hold tools/pagehome/pagehome, the preload
# library and the workloads, and be visible in the guest (not under /tmp,
# /run or /mnt).  One guest boot (tests/numa-guest/run, 4 nodes of one CPU,
# 256:256:256:64 MiB) runs bench/guest_runs_inner.sh; the table comes from
# bench/guest_runs_table.py.  Progress lines go to stderr while it runs.
#
# Exit status: 0 every run matched its plain run; 1 a MISMATCH or a failed
# run (printed loudly); 2 bad usage or a missing build; 77 no guest can boot
# ("skipped: <reason>", never a pass); 125 the guest failed (timeout, qemu).
# Targets not met are reported, not turned into a status.
set -u

here=$(cd "$(dirname "$0")" && pwd -P)
root=$(cd "$here/.." && pwd -P)

usage() {
    sed -n '/^#   bench\/guest_runs.sh/,/^#   --timeout/p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

workloads=laplace,laplace_f,fft,swim,xsbench,bt,sp,cg,mg,ft
placements=first-touch,interleave,node:0
modes=off,auto,iterative,sampling,hybrid
outdir=
timeout=1800
sim=
while [ $# -gt 0 ]; do
    case $1 in
        --workloads) [ $# -ge 2 ] || usage; workloads=$2; shift 2 ;;
        --placements) [ $# -ge 2 ] || usage; placements=$2; shift 2 ;;
        --modes) [ $# -ge 2 ] || usage; modes=$2; shift 2 ;;
        --smoke) workloads=laplace; placements=node:0; modes=off,iterative; shift ;;
        --outdir) [ $# -ge 2 ] || usage; outdir=$2; shift 2 ;;
        --sim)
            case ${2:-} in
                *=*|*.json) sim=$2; shift 2 ;;
                *) sim=nodes=4,cpus_per_node=1; shift ;;
            esac ;;
        --timeout) [ $# -ge 2 ] || usage; timeout=$2; shift 2 ;;
        -h|--help) usage ;;
        --) shift; break ;;
        -*) echo "guest_runs: unknown option $1" >&2; usage ;;
        *) break ;;
    esac
done
[ $# -eq 1 ] || usage
for m in $(echo "$modes" | tr ',' ' '); do
    case $m in off|auto|iterative|sampling|hybrid) ;;
        *) echo "guest_runs: unknown mode $m (off, auto, iterative, sampling, hybrid)" >&2; exit 2 ;;
    esac
done
case $timeout in ''|*[!0-9]*) echo "guest_runs: --timeout wants seconds" >&2; exit 2 ;; esac

. "$here/guest_batch.sh"
gb_root=$root
gb_build guest_runs "$1"
build=$gb_build_dir
[ -n "$sim" ] || gb_guest_check guest_runs
gb_outdir guest_runs "$outdir"
outdir=$gb_out

echo "guest_runs: $(date -u '+%Y-%m-%d %H:%M UTC'), build $build${sim:+, simulated machine $sim}"
echo "guest_runs: workloads $workloads; placements $placements; modes $modes"
start=$(date +%s)
if [ -n "$sim" ]; then
    # the simulated machine: the same inner script on this host, every
    # `pagehome run` on the machine SPEC describes (PAGEHOME_TOPOLOGY)
    cd "$root" || exit 2
    PAGEHOME_TOPOLOGY=$sim timeout "$timeout" \
        sh "$here/guest_runs_inner.sh" "$build" "$outdir" "$workloads" "$placements" "$modes"
    rc=$?
    sleep 1 # let tail print the last progress lines
    echo "guest_runs: wall time $(( $(date +%s) - start )) s, exit $rc"
    [ "$rc" -eq 124 ] && { echo "guest_runs: FAILED: --timeout $timeout s reached"; exit 125; }
    exit "$rc"
fi
gb_boot guest_runs "$timeout" -- \
    sh "$here/guest_runs_inner.sh" "$build" /mnt/out "$workloads" "$placements" "$modes"
rc=$?
case $rc in
    0) ;;
    1) echo "guest_runs: MISMATCH or failed run: see above" ;;
    125) echo "guest_runs: FAILED: the guest did not finish (see the numa-guest lines above)" ;;
    *) echo "guest_runs: FAILED: exit status $rc" ;;
esac
exit "$rc"
