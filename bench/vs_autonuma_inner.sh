#!/bin/sh
# vs_autonuma_inner.sh BUILD OUTDIR WORKLOADS DELAYS SIZES -- the inside of
# bench/vs_autonuma.sh: runs in the 4-node NUMA guest (as root, booted with
# NUMA balancing left on, host root read-only), never on its own.
#
#   WORKLOADS  comma list of laplace,bt,sp,cg,swim
#   DELAYS     comma list of the kernel's scan delays to run it with:
#              "default" (the kernel's own value) and/or milliseconds
#   SIZES      full or smoke (the smoke test's short runs)
#
# Per workload, the same program, arguments and placement in every
# configuration, each started by `pagehome run` (the same OpenMP runtime,
# the same 4 KiB pages in every run), with WL_LOCALITY=1 (the program
# prints its owner-local share after every iteration, locality_probe.h).
# The placement is wrong on purpose: laplace (naive), bt, sp and swim
# initialise their arrays serially, so first touch puts every page on the
# master's node 0; cg builds its matrix in parallel, so it runs with
# WL_SERIAL_BUILD=1 (the same matrix, built by the master alone: first
# touch puts it on node 0 too).  No mapping gets a memory policy, so the
# kernel's NUMA balancing may move every page.  (Until 2026-11-30 cg ran
# with --placement node:0, which binds its mappings: the kernel's
# balancing leaves such a mapping alone, so it could not act on cg.)
# The configurations:
#   kernel.D   numa_balancing=1, scan delay D, pagehome's engine off
#              (--migrate off: it places and moves nothing after)
#   pagehome   numa_balancing=0, pagehome's own choice (auto)
#   both.D     numa_balancing=1, scan delay D, pagehome auto
# /proc/vmstat before and after each run goes next to its output.  At the
# end vs_autonuma_table.py prints the table and the goals; its exit status
# is ours (0 every run verified, 1 otherwise).  POSIX sh.
set -u
build=${1:?usage: vs_autonuma_inner.sh BUILD OUTDIR WORKLOADS DELAYS SIZES}
out=${2:?}
workloads=${3:?}
delays=${4:?}
sizes=${5:?}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/guest_batch.sh"
ph=$build/tools/pagehome/pagehome

mkdir -p "$out/runs" || exit 125
manifest=$out/manifest.tsv
progress=$out/progress.log
: > "$manifest"
: > "$progress"
say() { echo "vs_autonuma: $*" >> "$progress"; }

# The scan delay: a sysctl before Linux 6.6, debugfs since.
knob=/proc/sys/kernel/numa_balancing_scan_delay_ms
if [ ! -e "$knob" ]; then
    knob=/sys/kernel/debug/sched/numa_balancing/scan_delay_ms
    [ -e "$knob" ] || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
fi
[ -w "$knob" ] || { echo "vs_autonuma: no writable scan delay ($knob)"; exit 125; }
[ -w /proc/sys/kernel/numa_balancing ] ||
    { echo "vs_autonuma: cannot set kernel.numa_balancing"; exit 125; }
default_delay=$(cat "$knob")

export OMP_NUM_THREADS=4 OMP_PROC_BIND=true OMP_PLACES=cores
# passive: four spinning vCPUs on a shared host make a barrier a time slice
export OMP_WAIT_POLICY=passive
export WL_LOCALITY=1
export WL_SERIAL_BUILD=1 # cg's matrix (the others build serially anyway)
unset PAGEHOME_OBSERVE PAGEHOME_STATS_FILE PAGEHOME_ENGINE PAGEHOME_PLACEMENT

# name|executable (relative to BUILD)|arguments|placement.  Long enough for the
# kernel's scanner: it starts a scan delay after the program starts, marks
# up to 256 MiB per scan period (1 s at least), and migrates a page on its
# second hinting fault from the same node, so a few seconds pass before the
# first move; each run lasts 30-60 s in the guest.
wl_def() {
    if [ "$sizes" = smoke ]; then
        case $1 in
            laplace) echo "workloads/laplace|naive 1040 60|first-touch" ;;
            *) return 1 ;;
        esac
        return 0
    fi
    case $1 in
        laplace) echo "workloads/laplace|naive 1040 400|first-touch" ;;
        bt)      echo "workloads/nas/bt|W 50|first-touch" ;;
        sp)      echo "workloads/nas/sp|W 100|first-touch" ;;
        cg)      echo "workloads/nas/cg|W 40|first-touch" ;;
        swim)    echo "workloads/swim|288 100|first-touch" ;;
        *) return 1 ;;
    esac
}

vmstat() {
    grep -E '^(numa_|pgmigrate_success |pgmigrate_fail |thp_migration_success )' /proc/vmstat > "$1"
}

{
    gb_topology
    echo "scan delay knob $knob, default ${default_delay} ms; runs with: $delays"
    for k in scan_period_min_ms scan_period_max_ms scan_size_mb; do
        f=$(dirname "$knob")/$(case $knob in /proc/*) echo "numa_balancing_$k" ;; *) echo "$k" ;; esac)
        [ -e "$f" ] && echo "  $k=$(cat "$f")"
    done
    echo "thp=$(sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)"
    echo "OMP_NUM_THREADS=$OMP_NUM_THREADS OMP_PROC_BIND=$OMP_PROC_BIND" \
         "OMP_PLACES=$OMP_PLACES OMP_WAIT_POLICY=$OMP_WAIT_POLICY WL_LOCALITY=1 WL_SERIAL_BUILD=1"
    tun=$(env | grep '^PAGEHOME_' | grep -v '^PAGEHOME_GUEST' | tr '\n' ' ')
    echo "pagehome tunables from the caller: ${tun:-none}"
} > "$out/header.txt"
cat "$out/header.txt"

# The configurations in run order: name|numa_balancing|delay|--migrate
configs=
for d in $(echo "$delays" | tr ',' ' '); do
    configs="$configs kernel.$d|1|$d|off"
done
configs="$configs pagehome|0|-|auto"
for d in $(echo "$delays" | tr ',' ' '); do
    configs="$configs both.$d|1|$d|auto"
done

notes=$out/notes.txt
: > "$notes"
t_all=$(gb_now)
for w in $(echo "$workloads" | tr ',' ' '); do
    def=$(wl_def "$w") || { echo "note: unknown workload $w" >> "$notes"; continue; }
    exe=$build/${def%%|*}
    rest=${def#*|}
    args=${rest%|*}
    placement=${rest#*|}
    if [ ! -x "$exe" ]; then
        echo "note: $w skipped: no executable $exe" >> "$notes"
        say "$w: skipped (no $exe)"
        continue
    fi
    for c in $configs; do
        name=${c%%|*}
        rest=${c#*|}
        bal=${rest%%|*}
        rest=${rest#*|}
        delay=${rest%%|*}
        mig=${rest#*|}
        ms=$default_delay
        [ "$delay" = default ] || [ "$delay" = - ] || ms=$delay
        echo "$ms" > "$knob"
        echo "$bal" > /proc/sys/kernel/numa_balancing
        base=$out/runs/$w.$name
        rep=$base.json
        rm -f "$rep"
        vmstat "$base.vm0"
        t0=$(gb_now)
        # shellcheck disable=SC2086 # args is a word list
        "$ph" run --placement "$placement" --migrate "$mig" --report "$rep" -- \
            "$exe" $args > "$base.out" 2> "$base.err"
        rc=$?
        t1=$(gb_now)
        vmstat "$base.vm1"
        echo 0 > /proc/sys/kernel/numa_balancing
        say "$w $name: exit $rc, $(gb_elapsed "$t0" "$t1") s"
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$w" "$name" "$bal" \
            "$([ "$bal" = 1 ] && echo "$ms" || echo -)" "$rc" "$(gb_elapsed "$t0" "$t1")" \
            "$base" "$mig" "$placement" >> "$manifest"
    done
done
echo "$default_delay" > "$knob"
say "all runs: $(gb_elapsed "$t_all" "$(gb_now)") s"
cat "$notes"
python3 "$here/vs_autonuma_table.py" "$manifest"
