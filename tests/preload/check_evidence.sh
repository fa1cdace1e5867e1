#!/bin/sh
# check_evidence.sh PAGEHOME BUILD_DIR CASE -- programs shaped like the ones
# third-party OpenMP benchmarks showed pagehome misjudging, run unmodified
# under `pagehome run` on the simulated 4-node machine (PAGEHOME_TOPOLOGY
# from the caller, or nodes=4,cpus_per_node=1), each case checked against
# what the run's report says (`pagehome report --text-only`):
#
#   multigrid   mg_one: a V-cycle over grids of several sizes in one array,
#               from node:0.  The engine may not call the placement stable
#               on invocations that sampled nothing or next to nothing: it
#               must sample, move pages and end >= 85% owner-local.  100
#               V-cycles (0.1-1 s): 12 of them (20 ms) once ended inside a
#               single stall of the memory manager on a loaded host (its
#               arming took 123 ms; three invocations in all).  Again
#               with stable_after=1: set-up's quiet invocations, while
#               the grids are still being touched, are not a streak.
#   fft6        ft with 6 iterations, from node:0: few iterations still
#               give samples and moves, and >= 90% owner-local.
#   oneregion   xsbench: one long parallel region (no iteration, no
#               barrier) reading a shared table at random.  The engine
#               switches to the sampling mechanism by time, and moves at
#               most 1% of the table (every node reads every page).
#   adi         sp: an ADI solver whose z sweep owns the data differently
#               from its other regions, from node:0: >= 90% owner-local,
#               at most 5% of the pages moved twice.
#   observe     --migrate off, then --observe: the report holds the run's
#               statistics and its real thread count, and observing moves
#               nothing.
#   firsttouch  laplace (parallel initialisation) with first-touch
#               placement, observed: the simulated first touch is the
#               toucher's, so the pages start >= 75% owner-local (100% on
#               a quiet machine; 84% seen once on a machine loaded by a
#               QEMU guest and a parallel test run, which is not
#               understood; the asker's node, as before, gives 25%).
#   sweep       laplace with sample_pages=512 on the real machine (the
#               simulated one watches a new range whole while it learns
#               first touches): the first interval sweeps every resident
#               page (sample_first_pages), so the first two invocations
#               sample more than twice the budget (all 4226 pages of its
#               two arrays in the first when the first interval is a whole
#               iteration; when it is cut short, 59 pages seen once, the
#               sweep goes on for a second); with sample_first_pages=0 the
#               first samples at most 512.  With a trap costing 10
#               ms (sample_trap_ns) the sweep's cost cuts the next
#               interval to the floor (64 pages), and even that is over
#               the budget: the engine pauses between intervals (the
#               report's paused_arms).
#   threads     prog_threads: the work runs on the program's own pthreads
#               (one bound to each node) between its OpenMP regions, from
#               node:0, with the userfaultfd mechanism.  Their traps are
#               samples although no region runs (only the OpenMP initial
#               thread's are serial code's): pages move, >= 90%
#               owner-local.  The mprotect mechanism does not watch pages
#               outside regions: it must verify and move nothing.
#   setup       prog_setup: the grid initialised serially, a parallel
#               region, 1.5 s (or 2.5 s: the sampling mechanism stands in
#               from 2 s on) of serial set-up over the grid, then 200
#               steps with block ownership, from node:0, with both sample
#               mechanisms.  The serial code's traps must not use up the
#               first sweep nor leave the budget paused into the steps:
#               >= 90% of the 1536 pages away from their threads move
#               (half with userfaultfd: see below; before: none),
#               >= 90% owner-local at the end.
#   hybrid      laplace and ft (6 iterations) with the hybrid mechanism,
#               from node:0: its early looks may not spend the first
#               sweep on pages seen already, and its iterative part may
#               not hand over to the phases before it has seen the
#               placement: >= 95% of the hot pages sampled, >= 90%
#               owner-local at the end (before: 16-76% and 51-86%
#               sampled, the rest left on node 0).
#   serialwork  prog_threads with no pthread: the main thread sweeps the
#               grid between the regions at every step, with the
#               userfaultfd mechanism.  Serial code's traps give no
#               sample, and they are charged to the sampling budget: over
#               200 steps at most 8 a hot page (each step trapped every
#               watched page before: 200 a page).
#
# Exit 0 all checks passed, 1 a check failed (with the report's text), 77
# the case's program is not built.
ph=${1:?usage: check_evidence.sh PAGEHOME BUILD_DIR CASE}
build=${2:?}
case_=${3:?}
tmp=${TMPDIR:-/tmp}/check_evidence.$$
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT
: "${PAGEHOME_TOPOLOGY:=nodes=4,cpus_per_node=1}"
export PAGEHOME_TOPOLOGY
export OMP_NUM_THREADS=4
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "check_evidence $case_: FAILED: $*"; }

# run PLACEMENT [pagehome run options] -- PROGRAM ARGS: the program under
# pagehome with a report; its exit status must be 0 and its output say
# "verification: ok".  The report's text is in $tmp/report.txt.
run() {
    pl=$1
    shift
    for a in "$@"; do
        case $a in
            "$build"/*) [ -x "$a" ] || { echo "skipped: $a is not built"; exit 77; } ;;
        esac
    done
    rm -f "$tmp/r.json"
    "$ph" run --placement "$pl" --report "$tmp/r.json" "$@" > "$tmp/out" 2> "$tmp/err"
    rc=$?
    [ "$rc" -eq 0 ] && ok || bad "exit status $rc"
    grep -q '^verification: ok' "$tmp/out" && ok || bad "the program's verification failed"
    if "$ph" report "$tmp/r.json" --text-only > "$tmp/report.txt" 2> "$tmp/report.err"; then ok; else
        bad "pagehome report failed: $(cat "$tmp/report.err")"
        : > "$tmp/report.txt"
    fi
}

# The integer part of the first percentage after LABEL on a Result line;
# WHICH: start (the first %) or end (the last % of the line).
pct_of() {
    line=$(grep -m1 "^  $1 " "$tmp/report.txt")
    case $2 in
        start) echo "$line" | sed -n 's/^[^0-9]*\([0-9][0-9]*\)\.[0-9]*%.*/\1/p' ;;
        end) echo "$line" | sed -n 's/.* \([0-9][0-9]*\)\.[0-9]*% at the end.*/\1/p' ;;
        share) echo "$line" | sed -n 's/.*(\([0-9][0-9]*\.[0-9]*\)% of the hot pages.*/\1/p' ;;
    esac
}
at_least() { # VALUE MIN WHAT
    if [ -n "$1" ] && [ "$1" -ge "$2" ]; then ok; else bad "$3: ${1:-?}, want >= $2"; fi
}
at_most() { # DECIMAL MAX WHAT (decimal: 1.25)
    if [ -n "$1" ] && awk -v v="$1" -v m="$2" 'BEGIN { exit !(v <= m) }'; then ok; else
        bad "$3: ${1:-?}%, want <= $2%"; fi
}
samples() { sed -n 's/^  samples *\([0-9][0-9]*\) trapped.*/\1/p' "$tmp/report.txt"; }
moved() { sed -n 's/^  pages moved *\([0-9][0-9]*\) .*/\1/p' "$tmp/report.txt"; }
# The pages sampled by each iterative invocation (all its areas), in
# order, from the report's JSON.
scanned() {
    python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
by = {}
for i in r["invocations"]:
    if i["kind"] == "iterative":
        by[i["seq"]] = by.get(i["seq"], 0) + i["scanned"]
print(" ".join(str(by[k]) for k in sorted(by)))' "$tmp/r.json"
}
# The first integer value of KEY in the report's JSON ("" when none).
json_int() { sed -n "s/.*\"$1\": \([0-9]*\).*/\1/p" "$tmp/r.json" | head -1; }
observed_only() { grep -q '^  pages moved *none: the engine observed only' "$tmp/report.txt"; }

case $case_ in
    multigrid)
        run node:0 -- "$build/workloads/nas/mg_one" S 100
        at_least "$(samples)" 1 "samples"
        # three quarters of the pages are away from their owners: the
        # share below is of the pages sampled, which a placement called
        # stable on a few local samples would meet.  It ends at 93-97%
        # (the coarse grids' pages are shared by every thread, so 100% is
        # out of reach) and once, on a host loaded by a CI run, at 87.7%:
        # the sampling budget's pauses grow with what a trap costs, and
        # that run sampled 62% of the hot pages in its eight intervals,
        # more of them shared ones.  A placement called stable after the
        # first invocations leaves most of the misplaced three quarters
        # where they are.
        at_least "$(moved)" 1 "pages moved"
        at_least "$(pct_of 'owner-local share' end)" 85 "owner-local share at the end"
        # Iteration ends are found while the program still zeroes its
        # grids (smallest first: 2 pages touched at the first invocation,
        # about 100 at the second); quiet invocations then are of a set
        # still growing, no evidence.  A streak of one invocation makes it
        # plain (7 runs of 10 moved nothing before; a loaded CI host once
        # ended the default streak of 3 there, on 7 samples).
        run node:0 --set stable_after=1 -- "$build/workloads/nas/mg_one" S 100
        at_least "$(moved)" 1 "pages moved with stable_after=1"
        at_least "$(pct_of 'owner-local share' end)" 85 "owner-local share at the end with stable_after=1"
        ;;
    fft6)
        run node:0 -- "$build/workloads/nas/ft" S 6
        at_least "$(samples)" 1 "samples"
        at_least "$(moved)" 1 "pages moved"
        at_least "$(pct_of 'owner-local share' end)" 90 "owner-local share at the end"
        ;;
    oneregion)
        run first-touch -- "$build/workloads/xsbench" 4 3000000
        grep -q 'the sampling mechanism took over' "$tmp/report.txt" && ok ||
            bad "no switch to the sampling mechanism by time"
        at_least "$(samples)" 1 "samples"
        at_most "$(pct_of 'pages moved' share)" 1 "pages moved"
        ;;
    adi)
        run node:0 -- "$build/workloads/nas/sp" W 60
        at_least "$(pct_of 'owner-local share' end)" 90 "owner-local share at the end"
        at_most "$(pct_of 'moved twice or more' share)" 5 "pages moved twice or more"
        ;;
    observe)
        run node:0 --migrate off -- "$build/workloads/laplace" block 1040 20
        grep -q ' 4 threads' "$tmp/report.txt" && ok || bad "the report does not say 4 threads"
        grep -qi 'no OpenMP runtime' "$tmp/report.txt" && bad "the report says no OpenMP runtime was seen" || ok
        run node:0 --observe -- "$build/workloads/laplace" block 1040 20
        at_least "$(samples)" 1 "samples while observing"
        observed_only && ok || bad "observing moved pages: $(grep '^  pages moved' "$tmp/report.txt")"
        ;;
    sweep)
        unset PAGEHOME_TOPOLOGY
        lap="$build/workloads/laplace naive 1040 30"
        # shellcheck disable=SC2086 # lap is a word list
        run first-touch --set sample_pages=512 -- $lap
        set -- $(scanned)
        echo "  sampled per invocation, sweep: $*"
        at_least "$((${1:-0} + ${2:-0}))" 1025 "pages sampled by the first two invocations"
        # shellcheck disable=SC2086
        run first-touch --set sample_pages=512 --set sample_first_pages=0 -- $lap
        set -- $(scanned)
        echo "  sampled per invocation, no sweep: $*"
        [ -n "${1:-}" ] && [ "$1" -le 512 ] && ok || bad "first invocation without the sweep sampled ${1:-?}, want <= 512"
        # shellcheck disable=SC2086
        run first-touch --set sample_pages=512 --set sample_trap_ns=1e7 \
            --set stable_after=0 --set cold_after=0 -- $lap
        set -- $(scanned)
        echo "  sampled per invocation, adapting: $*"
        # the sweep ends with the first invocation that sampled an eighth
        # of what it watched (all the hot pages), or with the second
        hot=$(json_int hot_pages)
        after=
        swept=
        k=0
        for n in "$@"; do
            k=$((k + 1))
            [ "$k" -gt 1 ] && [ -n "$swept" ] && { after=$n; break; }
            swept=
            { [ "$((n * 8))" -ge "${hot:-0}" ] || [ "$k" -ge 2 ]; } && swept=1
        done
        [ -n "$after" ] && [ "$after" -le 64 ] && ok ||
            bad "the budget did not adapt: sampled $*, want <= 64 after the sweep"
        paused=$(json_int paused_arms)
        at_least "${paused:-0}" 1 "arms skipped while sampling pauses"
        # shellcheck disable=SC2086
        run first-touch --set sample_pages=512 -- $lap
        paused=$(json_int paused_arms)
        [ -n "$paused" ] && ok || bad "the report has no paused_arms"
        ;;
    threads)
        prog="$build/tests/preload/prog_threads"
        [ -x "$prog" ] || { echo "skipped: $prog is not built"; exit 77; }
        run node:0 --set sample_mechanism=userfaultfd -- "$prog" 512 30 4
        if ! grep -q 'access source userfaultfd' "$tmp/report.txt"; then
            echo "skipped: no userfaultfd here"; exit 77
        fi
        at_least "$(samples)" 1 "samples"
        at_least "$(moved)" 1 "pages moved"
        at_least "$(pct_of 'owner-local share' end)" 90 "owner-local share at the end"
        run node:0 --set sample_mechanism=mprotect -- "$prog" 512 10 4
        moved_m=$(moved)
        [ -z "$moved_m" ] || [ "$moved_m" -eq 0 ] && ok || bad "mprotect moved $moved_m pages"
        ;;
    serialwork)
        prog="$build/tests/preload/prog_threads"
        [ -x "$prog" ] || { echo "skipped: $prog is not built"; exit 77; }
        run first-touch --set sample_mechanism=userfaultfd -- "$prog" 512 200 0
        if ! grep -q 'access source userfaultfd' "$tmp/report.txt"; then
            echo "skipped: no userfaultfd here"; exit 77
        fi
        serial=$(json_int serial)
        hot=$(json_int hot_pages)
        echo "  serial code's traps: ${serial:-?} for ${hot:-?} hot pages"
        [ -n "$serial" ] && [ -n "$hot" ] && [ "$hot" -gt 0 ] && [ "$serial" -le $((8 * hot)) ] && ok ||
            bad "serial code's traps ${serial:-?}, want <= 8 x ${hot:-?} hot pages"
        ;;
    setup)
        # 1024 rows: 2048 hot pages, 1536 of them away from their thread
        prog="$build/tests/preload/prog_setup"
        [ -x "$prog" ] || { echo "skipped: $prog is not built"; exit 77; }
        # 1.5 s: the iterative mechanism throughout (the watchdog waits:
        # the first region's barriers were progress); 2.5 s: the sampling
        # mechanism stands in from 2 s until the steps give a period
        # 1383 pages: 90% of those away from their thread.  With
        # userfaultfd, 512 (a third): where the steps are short (1.4 ms
        # in a clang -O3 build) the first sweep's interval can end having
        # seen 1536 of the 2048 pages; the sweep is then over, and at 94 us
        # a sample the 1% budget affords a few 64-page intervals in the
        # rest of the run, not the 512 pages left (1024-1088 moved in 4 of
        # 27 runs here, 1217 in a CI run; 661 in the gcc step of a CI run
        # on 2026-12-02, where half was wanted).  The build before the
        # set-up fix moved 7.
        for how in "userfaultfd 1500 512" "userfaultfd 2500 512" "mprotect 1500 1383"; do
            set -- $how
            run node:0 --set sample_mechanism=$1 -- "$prog" 1024 $2 200
            at_least "$(moved)" $3 "pages moved after a set-up of $2 ms ($1)"
            at_least "$(pct_of 'owner-local share' end)" 90 "owner-local share at the end ($1, $2 ms)"
        done
        ;;
    firsttouch)
        run first-touch --observe -- "$build/workloads/laplace" block 1040 20
        at_least "$(pct_of 'owner-local share' start)" 75 "owner-local share at start"
        ;;
    hybrid)
        # shellcheck disable=SC2086 # the program and its arguments
        for prog in "laplace block 1040 40" "nas/ft S 6"; do
            run node:0 --migrate hybrid -- $build/workloads/$prog
            seen=$(sed -n 's/^  owner-local share .*pages sampled (\([0-9][0-9]*\)\.[0-9]*% of [0-9]* hot pages.*/\1/p' "$tmp/report.txt")
            at_least "$seen" 95 "$prog: share of the hot pages sampled"
            at_least "$(pct_of 'owner-local share' end)" 90 "$prog: owner-local share at the end"
        done
        ;;
    *)
        echo "check_evidence: unknown case $case_" >&2
        exit 2 ;;
esac
if [ "$fail" -ne 0 ]; then
    echo "--- report"
    cat "$tmp/report.txt"
    echo "--- stderr"
    tail -20 "$tmp/err"
fi
echo "check_evidence $case_: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
