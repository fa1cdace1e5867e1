#!/bin/sh
# vs_autonuma.sh -- pagehome side by side with the kernel's NUMA balancing
# (automatic NUMA balancing, "AutoNUMA"), its peer: in one boot of the
# 4-node NUMA guest, the same unmodified workloads from the same wrong
# placement (every large array on node 0: serial initialisation; cg,
# which builds its matrix in parallel, with WL_SERIAL_BUILD=1) in three
# configurations:
#   kernel    kernel.numa_balancing=1, pagehome places and then moves nothing
#             (`pagehome run --migrate off`)
#   pagehome  kernel.numa_balancing=0, `pagehome run` (its own mechanism)
#   both      kernel.numa_balancing=1 and `pagehome run`
# the kernel's two under each scan delay asked for (its default, and a
# shorter one: the scanner waits that long after a program starts).  Every
# program prints its own owner-local share after every iteration
# (WL_LOCALITY=1: move_pages(2) status queries of its arrays, the same
# query in every configuration, workloads/nas/locality_probe.h).
#
#   bench/vs_autonuma.sh [options] BUILD_DIR
#
#   --workloads LIST   comma list (default laplace,bt,sp,cg,swim)
#   --delays LIST      the kernel's scan delays: "default" and/or
#                      milliseconds (default: default,100)
#   --smoke            laplace only, short, default scan delay only (ctest)
#   --outdir DIR       keep every run's output, report, vmstat and the plot
#                      in DIR (default: a temporary directory, removed at the
#                      end); vs_autonuma_table.py DIR/manifest.tsv prints the
#                      table again, with --plot PNG draws the plot
#   --plot PNG         the plot of owner-local share over time, one panel
#                      per workload (default DIR/vs_autonuma.png with
#                      --outdir; needs python3 with matplotlib, else a note)
#   --timeout SEC      guest time limit (default 2400)
#
# Builds nothing: BUILD_DIR must hold tools/pagehome/pagehome, the preload
# library and the workloads, and be visible in the guest (not under /tmp,
# /run or /mnt).  One guest boot (tests/numa-guest/run, NUMA balancing
# kept, 4 nodes of one CPU, 256:256:256:64 MiB) runs
# bench/vs_autonuma_inner.sh; the table and goals come from
# bench/vs_autonuma_table.py.  Progress lines go to stderr while it runs.
#
# Exit status: 0 every run verified (and printed the same result as the
# workload's first run); 1 a failed run; 2 bad usage or a missing build;
# 77 no guest can boot ("skipped: <reason>"); 125 the guest failed.
# Goals not met are reported, not turned into a status.
set -u

here=$(cd "$(dirname "$0")" && pwd -P)
root=$(cd "$here/.." && pwd -P)

usage() {
    sed -n '/^#   bench\/vs_autonuma.sh/,/^#   --timeout/p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

workloads=laplace,bt,sp,cg,swim
delays=default,100
sizes=full
outdir=
png=
timeout=2400
while [ $# -gt 0 ]; do
    case $1 in
        --workloads) [ $# -ge 2 ] || usage; workloads=$2; shift 2 ;;
        --delays) [ $# -ge 2 ] || usage; delays=$2; shift 2 ;;
        --smoke) workloads=laplace; delays=default; sizes=smoke; shift ;;
        --outdir) [ $# -ge 2 ] || usage; outdir=$2; shift 2 ;;
        --plot) [ $# -ge 2 ] || usage; png=$2; shift 2 ;;
        --timeout) [ $# -ge 2 ] || usage; timeout=$2; shift 2 ;;
        -h|--help) usage ;;
        --) shift; break ;;
        -*) echo "vs_autonuma: unknown option $1" >&2; usage ;;
        *) break ;;
    esac
done
[ $# -eq 1 ] || usage
for d in $(echo "$delays" | tr ',' ' '); do
    case $d in default) ;; ''|*[!0-9]*)
        echo "vs_autonuma: --delays wants default or milliseconds (got $d)" >&2; exit 2 ;;
    esac
done
case $timeout in ''|*[!0-9]*) echo "vs_autonuma: --timeout wants seconds" >&2; exit 2 ;; esac

. "$here/guest_batch.sh"
gb_root=$root
gb_build vs_autonuma "$1"
build=$gb_build_dir
gb_guest_check vs_autonuma
[ -n "$png" ] || [ -z "$outdir" ] || png=$outdir/vs_autonuma.png
gb_outdir vs_autonuma "$outdir"
outdir=$gb_out

echo "vs_autonuma: $(date -u '+%Y-%m-%d %H:%M UTC'), build $build"
echo "vs_autonuma: workloads $workloads; scan delays $delays; sizes $sizes"
gb_boot vs_autonuma "$timeout" --keep-balancing -- \
    sh "$here/vs_autonuma_inner.sh" "$build" /mnt/out "$workloads" "$delays" "$sizes"
rc=$?
if [ -n "$png" ] && [ -s "$outdir/manifest.tsv" ]; then
    # the plot on the host: a python3 with matplotlib (a virtualenv's
    # python3 first on PATH may lack it; the distribution's has it)
    for py in python3 /usr/bin/python3; do
        if "$py" -c 'import matplotlib' 2>/dev/null; then
            "$py" "$here/vs_autonuma_table.py" "$outdir/manifest.tsv" --plot "$png"
            break
        fi
        [ "$py" = /usr/bin/python3 ] &&
            echo "vs_autonuma: no python3 with matplotlib: no plot (apt-get install python3-matplotlib)"
    done
fi
case $rc in
    0) ;;
    1) echo "vs_autonuma: a run FAILED or printed another result: see above" ;;
    125) echo "vs_autonuma: FAILED: the guest did not finish (see the numa-guest lines above)" ;;
    *) echo "vs_autonuma: FAILED: exit status $rc" ;;
esac
exit "$rc"
