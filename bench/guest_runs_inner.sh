#!/bin/sh
# guest_runs_inner.sh BUILD OUTDIR WORKLOADS PLACEMENTS MODES -- the inside
# of bench/guest_runs.sh: runs in the 4-node NUMA guest (as root, host root
# read-only, /tmp the guest's own), never on its own.
#
#   WORKLOADS   comma list of laplace,laplace_f,fft,swim,xsbench,bt,sp,cg,mg,ft
#   PLACEMENTS  comma list of first-touch,interleave,node:0 (any pagehome placement)
#   MODES       comma list of off,auto,iterative,sampling,hybrid (auto: no
#               --migrate, pagehome's own choice; hybrid: only for the
#               workloads with phases, bt and sp)
#
# For each workload whose executable exists in BUILD (a missing one is a
# note, not a failure): one plain run (no pagehome: its stdout is the
# reference), then one `pagehome run --report` per placement and mode.
# "off" is PAGEHOME_OBSERVE=1: the engine samples and measures but moves
# nothing.  Every run: 4 threads, one per node (OMP_PROC_BIND=true,
# OMP_PLACES=cores; the guest has one CPU per node), NUMA balancing off.
# Everything goes to OUTDIR (the host sees it); progress.log says what runs.
# At the end guest_runs_table.py prints the table and the targets; its exit
# status is ours (0 all runs matched the plain run, 1 a mismatch or a failed
# run).  POSIX sh (it runs in the guest's chroot of the host root).
#
# With PAGEHOME_TOPOLOGY set (guest_runs.sh --sim) it runs on the host, on
# that simulated machine: NUMA balancing is left alone and the sizes are
# the simulated ones (10x the iterations: the host is 10-50x faster than
# the guest, and the sampling mechanism wakes by time).
set -u
build=${1:?usage: guest_runs_inner.sh BUILD OUTDIR WORKLOADS PLACEMENTS MODES}
out=${2:?}
workloads=${3:?}
placements=${4:?}
modes=${5:?}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/guest_batch.sh"
ph=$build/tools/pagehome/pagehome

mkdir -p "$out/runs" || exit 125
manifest=$out/manifest.tsv
progress=$out/progress.log
: > "$manifest"
: > "$progress"
say() { echo "guest_runs: $*" >> "$progress"; }

# NUMA balancing off: the kernel must not move pages behind the engine
sim=${PAGEHOME_TOPOLOGY:-}
if [ -n "$sim" ]; then
    :
elif ! echo 0 > /proc/sys/kernel/numa_balancing 2>/dev/null; then
    [ "$(cat /proc/sys/kernel/numa_balancing 2>/dev/null)" = 0 ] ||
        { echo "guest_runs: cannot turn NUMA balancing off"; exit 125; }
fi
export OMP_NUM_THREADS=4 OMP_PROC_BIND=true OMP_PLACES=cores
# The kernels run hundreds of parallel regions; four spinning vCPUs on a
# shared host make a barrier cost a time slice (results do not change).
export OMP_WAIT_POLICY=passive
# the script decides these per run; a caller's would change every row
unset PAGEHOME_OBSERVE PAGEHOME_STATS_FILE PAGEHOME_ENGINE PAGEHOME_PLACEMENT

# The workloads: name, executable (relative to BUILD), arguments, phases.
# Small sizes: each run a few seconds in the guest (10-50x slower than the
# host).  Sizes are chosen so that no program runs its sequential
# re-verification on fresh or the same arrays (laplace N > 1024, swim
# N > 256, xsbench LOOKUPS > 10^5): that would make the master the
# main accessor of pages at the end.  laplace_f always reruns seq on fresh
# grids.  fft's arrays come from its own ph_alloc ("first-touch",
# initialised serially: every page on the master's node) whatever
# --placement says, and `pagehome run` does not watch them.  Long enough
# for the engine to act: laplace_f's sampling mechanism missed the main
# grids at 60 sweeps in one run; xsbench's memory manager must wake up
# many times (200 ms apart) for repeated moves to show (at 120000 lookups
# the run was over after a few wake-ups).
wl_def() {
    if [ -n "$sim" ]; then
        case $1 in
            laplace)   echo "workloads/laplace|block 1040 400|0" ;;
            laplace_f) echo "workloads/laplace_f|naive 512 1500|0" ;;
            fft)       echo "workloads/fft|first-touch 18|0" ;;
            swim)      echo "workloads/swim|288 300|0" ;;
            xsbench)   echo "workloads/xsbench|4 5000000|0" ;;
            bt)        echo "workloads/nas/bt|W 120|1" ;;
            sp)        echo "workloads/nas/sp|W 200|1" ;;
            cg)        echo "workloads/nas/cg|W 100|0" ;;
            mg)        echo "workloads/nas/mg|W 100|0" ;;
            ft)        echo "workloads/nas/ft|S 40|0" ;;
            *) return 1 ;;
        esac
        return 0
    fi
    case $1 in
        laplace)   echo "workloads/laplace|block 1040 40|0" ;;
        laplace_f) echo "workloads/laplace_f|naive 512 150|0" ;;
        fft)       echo "workloads/fft|first-touch 18|0" ;;
        swim)      echo "workloads/swim|288 30|0" ;;
        xsbench)   echo "workloads/xsbench|4 500000|0" ;;
        bt)        echo "workloads/nas/bt|W 12|1" ;;
        sp)        echo "workloads/nas/sp|W 20|1" ;;
        cg)        echo "workloads/nas/cg|W 10|0" ;;
        mg)        echo "workloads/nas/mg|W 10|0" ;;
        ft)        echo "workloads/nas/ft|S 4|0" ;;
        *) return 1 ;;
    esac
}

now() { gb_now; }
elapsed() { gb_elapsed "$@"; }

{
    if [ -n "$sim" ]; then
        echo "simulated machine $sim on the host ($(uname -r), $(nproc) CPUs)"
    else
        gb_topology
    fi
    echo "numa_balancing=$(cat /proc/sys/kernel/numa_balancing)" \
         "thp=$(sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)"
    echo "OMP_NUM_THREADS=$OMP_NUM_THREADS OMP_PROC_BIND=$OMP_PROC_BIND" \
         "OMP_PLACES=$OMP_PLACES OMP_WAIT_POLICY=$OMP_WAIT_POLICY"
    tun=$(env | grep '^PAGEHOME_' | grep -v '^PAGEHOME_GUEST' | tr '\n' ' ')
    echo "pagehome tunables from the caller: ${tun:-none}"
} > "$out/header.txt"
cat "$out/header.txt"

notes=$out/notes.txt
: > "$notes"
t_all=$(now)
for w in $(echo "$workloads" | tr ',' ' '); do
    def=$(wl_def "$w") || { echo "note: unknown workload $w" >> "$notes"; continue; }
    exe=$build/${def%%|*}
    rest=${def#*|}
    args=${rest%|*}
    phases=${rest#*|}
    if [ ! -x "$exe" ]; then
        echo "note: $w skipped: no executable $exe" >> "$notes"
        say "$w: skipped (no $exe)"
        continue
    fi
    base=$out/runs/$w
    # the reference: no pagehome at all
    t0=$(now)
    # shellcheck disable=SC2086 # args is a word list
    "$exe" $args > "$base.plain.out" 2> "$base.plain.err"
    rc=$?
    t1=$(now)
    say "$w plain: exit $rc, $(elapsed "$t0" "$t1") s"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$w" "-" "plain" "$rc" "$(elapsed "$t0" "$t1")" \
        "$base.plain.out" "-" "$base.plain.out" >> "$manifest"
    for p in $(echo "$placements" | tr ',' ' '); do
        for m in $(echo "$modes" | tr ',' ' '); do
            if [ "$m" = hybrid ] && [ "$phases" != 1 ]; then
                continue
            fi
            tag=$(echo "$p.$m" | tr ':' '_')
            rep=$base.$tag.json
            rm -f "$rep"
            t0=$(now)
            case $m in
                off)
                    # shellcheck disable=SC2086
                    PAGEHOME_OBSERVE=1 "$ph" run --placement "$p" --report "$rep" -- \
                        "$exe" $args > "$base.$tag.out" 2> "$base.$tag.err" ;;
                auto)
                    # shellcheck disable=SC2086
                    "$ph" run --placement "$p" --report "$rep" -- \
                        "$exe" $args > "$base.$tag.out" 2> "$base.$tag.err" ;;
                *)
                    # shellcheck disable=SC2086
                    "$ph" run --placement "$p" --migrate "$m" --report "$rep" -- \
                        "$exe" $args > "$base.$tag.out" 2> "$base.$tag.err" ;;
            esac
            rc=$?
            t1=$(now)
            say "$w $p $m: exit $rc, $(elapsed "$t0" "$t1") s"
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$w" "$p" "$m" "$rc" "$(elapsed "$t0" "$t1")" \
                "$base.$tag.out" "$rep" "$base.plain.out" >> "$manifest"
        done
    done
done
say "all runs: $(elapsed "$t_all" "$(now)") s"
cat "$notes"
python3 "$here/guest_runs_table.py" "$manifest"
