#!/usr/bin/env bash
# bench_nas_pages.sh -- the NAS-style kernels (workloads/nas: bt, sp, cg,
# mg, ft) on 4 KiB and on 2 MiB pages under `pagehome run`.
#
#   bench_nas_pages.sh [--reps N] [--class C] [--threads N] [--only LIST]
#                      [--migrate MODE] PAGEHOME NAS_DIR
#
# PAGEHOME is the pagehome command, NAS_DIR the directory holding the
# built kernels (BUILD/workloads/nas).  Each kernel runs at class C
# (default A) under
#     pagehome run --migrate off --pagesize 4K -- KERNEL C
#     pagehome run --migrate off --pagesize 2M -- KERNEL C
# N repetitions each (default 3), the order alternating (4K first on odd
# repetitions, 2M first on even ones), OMP_NUM_THREADS=N (default 2),
# OMP_WAIT_POLICY=passive unless the environment sets it (on a shared
# machine a spinning barrier whose partner thread is descheduled waits a
# scheduler quantum: cg A took 0.15-8 s with active waiting here, 0.21-
# 0.33 s with passive).  --migrate MODE replaces `off` (pagehome registers
# and converts static segments only when an engine runs).  The
# time is the kernel's own (its "KERNEL: time S s" line on stderr: the
# timed part, without set-up and verification).  With 4K the placement
# allocator marks the large heap blocks MADV_NOHUGEPAGE; with 2M it backs
# them with THP (MADV_HUGEPAGE, so this also works with THP mode
# `madvise`) and moves the program's large static segments onto THP.
#
# Before timing, a check run per kernel and page size (not timed) with -v
# shows what pagehome did (its ph_alloc / static-segment / hot-area
# lines) and the program's peak AnonHugePages (from
# /proc/PID/smaps_rollup, polled every 0.02 s), so the table says whether
# the 2M runs really had 2 MiB pages.
#
# Prints every run, then per kernel the median (and the range) of each
# page size and the ratio of the medians ("ratio 4K/2M: KERNEL R": > 1 means 2 MiB pages
# are faster).  A kernel whose executable is missing is reported as not
# built and skipped.  Never asserts a time; exit status 1 only when a run
# fails (non-zero status, no "verification: ok", no time line), 2 for a
# usage error.
set -u
usage() {
    echo "usage: bench_nas_pages.sh [--reps N] [--class S|W|A] [--threads N] [--only LIST] [--migrate MODE] PAGEHOME NAS_DIR" >&2
    exit 2
}
reps=3 class=A threads=2 only="bt sp cg mg ft" migrate=off
while [ $# -gt 0 ]; do
    case $1 in
        --reps) [ $# -ge 2 ] || usage; reps=$2; shift 2 ;;
        --class) [ $# -ge 2 ] || usage; class=$2; shift 2 ;;
        --threads) [ $# -ge 2 ] || usage; threads=$2; shift 2 ;;
        --only) [ $# -ge 2 ] || usage; only=${2//,/ }; shift 2 ;;
        --migrate) [ $# -ge 2 ] || usage; migrate=$2; shift 2 ;;
        -h|--help) usage ;;
        -*) echo "bench_nas_pages.sh: unknown option $1" >&2; usage ;;
        *) break ;;
    esac
done
[ $# -eq 2 ] || usage
case $reps in ''|*[!0-9]*|0) echo "bench_nas_pages.sh: --reps wants a positive integer" >&2; exit 2 ;; esac
case $threads in ''|*[!0-9]*|0) echo "bench_nas_pages.sh: --threads wants a positive integer" >&2; exit 2 ;; esac
case $class in S|W|A|s|w|a) ;; *) echo "bench_nas_pages.sh: --class wants S, W or A" >&2; exit 2 ;; esac
case $migrate in off|iterative|sampling|hybrid|auto) ;; *) echo "bench_nas_pages.sh: --migrate wants off, iterative, sampling, hybrid or auto" >&2; exit 2 ;; esac
for k in $only; do
    case $k in bt|sp|cg|mg|ft) ;; *) echo "bench_nas_pages.sh: --only: no kernel '$k' (bt sp cg mg ft)" >&2; exit 2 ;; esac
done
ph=$1 dir=$2
[ -x "$ph" ] || { echo "bench_nas_pages.sh: $ph is not an executable" >&2; exit 2; }
[ -d "$dir" ] || { echo "bench_nas_pages.sh: $dir is not a directory" >&2; exit 2; }
export OMP_NUM_THREADS=$threads
# the engine off on a one-node machine unless asked for (one_node_engine):
# --migrate other than off measures it there too
export PAGEHOME_ONE_NODE_ENGINE=${PAGEHOME_ONE_NODE_ENGINE:-1}
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "bench_nas_pages: class $class, --migrate $migrate, OMP_NUM_THREADS=$threads," \
     "OMP_WAIT_POLICY=$OMP_WAIT_POLICY, $reps repetition(s);" \
     "THP mode: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo unknown)"

kernels=() missing=()
for k in $only; do
    if [ -x "$dir/$k" ]; then kernels+=("$k"); else missing+=("$k"); fi
done
[ ${#missing[@]} -eq 0 ] || echo "not built (skipped): ${missing[*]}"
[ ${#kernels[@]} -gt 0 ] || { echo "bench_nas_pages.sh: no kernel built in $dir" >&2; exit 1; }

# The peak and the last AnonHugePages (KiB) of the program that
# `pagehome run` (PID $1) forks, polled until pagehome exits.
peak_thp() {
    local pid=$1 peak=0 last=0 child v
    while kill -0 "$pid" 2>/dev/null; do
        child=$(pgrep -P "$pid" 2>/dev/null | head -1)
        if [ -n "$child" ]; then
            v=$(awk '/^AnonHugePages:/ { print $2 }' "/proc/$child/smaps_rollup" 2>/dev/null)
            if [ -n "$v" ]; then
                last=$v
                [ "$v" -gt "$peak" ] && peak=$v
            fi
        fi
        sleep 0.02
    done
    echo "$peak $last"
}

# check KERNEL SIZE: one -v run, what pagehome said, the THP peak
check() {
    local k=$1 size=$2 pid peak last
    local out=$tmp/check.$k.$size
    "$ph" run -v --migrate "$migrate" --pagesize "$size" -- "$dir/$k" "$class" > "$out.out" 2> "$out.err" &
    pid=$!
    read -r peak last < <(peak_thp "$pid")
    wait "$pid"
    local st=$?
    local heap static
    heap=$(grep -o 'transparent mode: [0-9]* large allocations ([0-9]* MiB) were hot areas' "$out.err" |
           sed 's/transparent mode: //; s/ were hot areas//')
    static=$(grep -E '(static|watching) (data|bss) segment' "$out.err" | sed 's/^pagehome: transparent mode: //' |
             tr '\n' ';' | sed 's/;$//')
    printf 'check %-2s %s: exit %s, AnonHugePages peak %d MiB, last seen %d MiB; hot heap: %s; static: %s\n' \
        "$k" "$size" "$st" $((peak / 1024)) $((last / 1024)) "${heap:-none}" "${static:-none registered}"
    grep -E 'ph_alloc: .* pages of 2 MiB' "$out.err" | sort | uniq -c |
        sed 's/^ */      /; s/pagehome: //'
}
for k in "${kernels[@]}"; do
    check "$k" 4K
    check "$k" 2M
done

# run KERNEL SIZE REP: one timed run; appends the time to $tmp/t.KERNEL.SIZE
fail=0
run() {
    local k=$1 size=$2 rep=$3
    local out=$tmp/run.$k.$size
    "$ph" run --migrate "$migrate" --pagesize "$size" -- "$dir/$k" "$class" > "$out.out" 2> "$out.err"
    local st=$?
    local t
    t=$(sed -n "s/^$k: time \([0-9.]*\) s.*/\1/p" "$out.err" | tail -1)
    if [ "$st" -ne 0 ] || ! grep -q '^verification: ok' "$out.out" || [ -z "$t" ]; then
        echo "FAILED: $k $size rep $rep: exit $st" >&2
        tail -5 "$out.err" >&2
        fail=1
        return
    fi
    printf '%-2s %s rep %d: %s s\n' "$k" "$size" "$rep" "$t"
    echo "$t" >> "$tmp/t.$k.$size"
}
for r in $(seq 1 "$reps"); do
    for k in "${kernels[@]}"; do
        if [ $((r % 2)) -eq 1 ]; then run "$k" 4K "$r"; run "$k" 2M "$r"
        else run "$k" 2M "$r"; run "$k" 4K "$r"; fi
    done
done

median() { sort -g "$1" | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan";
    else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
range() { sort -g "$1" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo "-" hi }'; }
echo
printf '%-6s %10s %16s %10s %16s %8s\n' kernel "4K med s" "4K range" "2M med s" "2M range" "4K/2M"
for k in "${kernels[@]}"; do
    [ -s "$tmp/t.$k.4K" ] && [ -s "$tmp/t.$k.2M" ] || continue
    a=$(median "$tmp/t.$k.4K") b=$(median "$tmp/t.$k.2M")
    printf '%-6s %10s %16s %10s %16s %8s\n' "$k" "$a" "$(range "$tmp/t.$k.4K")" "$b" \
        "$(range "$tmp/t.$k.2M")" "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", a / b }')"
done
echo
for k in "${kernels[@]}"; do
    [ -s "$tmp/t.$k.4K" ] && [ -s "$tmp/t.$k.2M" ] || continue
    a=$(median "$tmp/t.$k.4K") b=$(median "$tmp/t.$k.2M")
    echo "ratio 4K/2M: $k $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", a / b }')"
done
exit $fail
