#!/bin/sh
# suite.sh BUILD_DIR -- every NUMA-guest test, run inside ONE guest boot.
#
# Booting costs ~15 s and code runs 10-50x slower in the guest, so the
# guest tests are small programs run back to back here.  Each prints its
# own "name: N passed, N failed" line; this script prints one line per
# program and exits non-zero if any failed.  A program exiting 77 (cannot
# run on this machine) counts as skipped, not passed.
build=${1:?usage: suite.sh BUILD_DIR}
pass=0 fail=0 skip=0 failed= again=
logs=/tmp/suite-logs
mkdir -p "$logs"
# A program's output is shown only when it fails (or PAGEHOME_GUEST_VERBOSE
# is set in the guest's environment), so a failure stands near the top of
# the log.
run() {
    name=$1
    shift
    t0=$(date +%s)
    "$@" > "$logs/$name" 2>&1
    rc=$?
    dt=$(($(date +%s) - t0))
    case $rc in
        0) pass=$((pass + 1)); echo "=== $name: ok (${dt} s)"
           # passed on a second run (check_run.sh's CHECK_RUN_TRIES): the
           # first run's shortfall and report are shown all the same
           if grep -q "run again" "$logs/$name"; then
               again="$again $name"
               sed 's|^|    |' "$logs/$name"
           fi ;;
        77) skip=$((skip + 1)); echo "=== $name: skipped (${dt} s)" ;;
        *) fail=$((fail + 1)); failed="$failed $name"
           echo "=== $name: FAILED (exit $rc, ${dt} s): $*"
           sed 's|^|    |' "$logs/$name" ;;
    esac
    [ -n "${PAGEHOME_GUEST_VERBOSE:-}" ] && [ "$rc" -eq 0 ] && sed 's|^|    |' "$logs/$name"
    return 0
}
# The mover and the allocator must see the kernel's own placement only.
echo 0 > /proc/sys/kernel/numa_balancing 2>/dev/null
run topo "$build/tools/pagehome/pagehome" topo
run topo-json "$build/tools/pagehome/pagehome" topo --json
run place-4k "$build/tools/pagehome/pagehome" place --size 1M
run place-serial "$build/tools/pagehome/pagehome" place --size 1M --touch serial
run place-2m "$build/tools/pagehome/pagehome" place --size 16M --pagesize 2M \
    --policy interleave,block,node:3
run guest_place "$build/tests/guest/guest_place"
run guest_mover "$build/tests/guest/guest_mover"
run guest_thp "$build/tests/guest/guest_thp"
run guest_enomem "$build/tests/guest/guest_enomem"
# the kernel's cost of a migration beside busy threads (bench/README.md)
run bench_move_flush "$build/bench/bench_move_flush" --pages 64 --rounds 1
if [ -x "$build/tests/guest/guest_engine" ]; then
    run guest_engine env OMP_NUM_THREADS=4 OMP_PROC_BIND=true OMP_PLACES=cores \
        PAGEHOME_STATS_FILE=/tmp/engine_stats.json "$build/tests/guest/guest_engine"
fi
if [ -x "$build/tests/guest/guest_huge" ]; then
    run guest_huge env OMP_NUM_THREADS=4 OMP_PROC_BIND=true OMP_PLACES=cores \
        PAGEHOME_ENGINE_SYNC=1 PAGEHOME_SAMPLE_PAGES=0 PAGEHOME_STABLE_AFTER=0 \
        "$build/tests/guest/guest_huge"
fi
# transparent mode: unmodified programs in the first-touch trap, gcc
# (run on LLVM's libomp) and clang builds, plain and under `pagehome run`.
# The sampling budget is fixed (sample_budget=0): its adaptation follows
# wall time, which a loaded host stretches at random in the guest (a trap
# preempted for milliseconds halved the watched pages and left a run at
# 88% local); these checks are about where pages end up, and the budget's
# adaptation is tested by unit.test_engine (test_budget_adapts).
# A share short of 90% is measured again in a second run (CHECK_RUN_TRIES):
# one CI host (a guest suite 3.3x slower than here) left prog_trap_clang at
# 69.7% once, which no run here reproduced (35 runs at 99.6-100%, with the
# guest pinned to a quarter of one host core or a vCPU kept busy in it).
# Both runs' shares and the first run's engine report are printed.
for prog in prog_trap prog_trap_clang prog_static prog_static_clang prog_oneregion prog_oneregion_clang prog_sigsegv prog_sigsegv_clang prog_phase prog_cxx prog_cxx_clang prog_alloc prog_common prog_common_nobt; do
    if [ -x "$build/tests/preload/$prog" ]; then
        run "run-$prog" env OMP_NUM_THREADS=4 OMP_PROC_BIND=true OMP_PLACES=cores \
            PAGEHOME_SAMPLE_BUDGET=0 CHECK_RUN_TRIES=2 sh "$(dirname "$0")/../preload/check_run.sh" \
            "$build/tools/pagehome/pagehome" "$build/tests/preload/$prog" 90 512 12
    fi
done
# grids sized for the largest input (1 GiB of .bss, 8 MiB in use): Linux
# 6.1 has no PAGEMAP_SCAN, so the sampler's rotation passes the unused
# part by mincore(2) -- the pages in use must still be found and moved.
# The guest has 1 GiB of memory: the kernel's heuristic overcommit would
# refuse the segment at exec (SIGSEGV), so overcommit is allowed meanwhile.
if [ -x "$build/tests/preload/prog_static_big" ]; then
    overcommit=$(cat /proc/sys/vm/overcommit_memory)
    echo 1 > /proc/sys/vm/overcommit_memory
    run run-prog_static_big env OMP_NUM_THREADS=4 OMP_PROC_BIND=true OMP_PLACES=cores \
        PAGEHOME_SAMPLE_BUDGET=0 CHECK_RUN_TRIES=2 sh "$(dirname "$0")/../preload/check_run.sh" \
        "$build/tools/pagehome/pagehome" "$build/tests/preload/prog_static_big" 90 512 12
    run static-big-mprotect env OMP_NUM_THREADS=4 OMP_PROC_BIND=true OMP_PLACES=cores \
        PAGEHOME_SAMPLE_BUDGET=0 sh "$(dirname "$0")/../preload/check_static_big.sh" \
        "$build/tools/pagehome/pagehome" "$build/tests/preload/prog_static_big" mprotect 512 64
    # a placement binds the segment's unused part (faulting it in would
    # take the guest's whole memory) and spreads the part in use: 4096
    # rows, 64 MiB, as THP interleaves by 2 MiB page (512 rows were 4 of
    # them: 936 12 61 1037 pages per node)
    run static-big-placements env OMP_NUM_THREADS=4 OMP_PROC_BIND=true OMP_PLACES=cores \
        sh "$(dirname "$0")/../preload/check_segment.sh" \
        "$build/tools/pagehome/pagehome" "$build/tests/preload/prog_static_big" 1 \
        interleave cyclic:2 random -- 4096 4
    echo "$overcommit" > /proc/sys/vm/overcommit_memory
fi
# pagesize 2M: static grids on THP; 1 MiB blocks per thread share each
# 2 MiB page between two threads, so the engine splits them
if [ -x "$build/tests/preload/prog_static" ]; then
    run run-prog_static-2m env OMP_NUM_THREADS=4 OMP_PROC_BIND=true OMP_PLACES=cores \
        PAGEHOME_PAGESIZE=2M PAGEHOME_SAMPLE_BUDGET=0 CHECK_RUN_TRIES=2 sh "$(dirname "$0")/../preload/check_run.sh" \
        "$build/tools/pagehome/pagehome" "$build/tests/preload/prog_static" 90 512 12
fi
# --placement reaches static (.bss) arrays too: every page of prog_static's
# grids on node 2 (a serial initialisation by the master on node 0 would
# put them there under first touch; not node 3, whose 64 MiB left one page
# of 2046 unplaced once)
for prog in prog_static prog_static_clang; do
    if [ -x "$build/tests/preload/$prog" ]; then
        run "placed-$prog-node2" env OMP_NUM_THREADS=4 OMP_PROC_BIND=true OMP_PLACES=cores \
            sh "$(dirname "$0")/../preload/check_placed.sh" \
            "$build/tools/pagehome/pagehome" "$build/tests/preload/$prog" 2 512 4
    fi
done
# the hybrid mechanism finds prog_phase's phase by itself (real moves)
if [ -x "$build/tests/preload/prog_phase" ]; then
    run run-prog_phase-hybrid env OMP_NUM_THREADS=4 OMP_PROC_BIND=true OMP_PLACES=cores PAGEHOME_ENGINE_SYNC=1 \
        PAGEHOME_CRITERION=competitive \
        sh "$(dirname "$0")/../preload/check_phase.sh" \
        "$build/tools/pagehome/pagehome" "$build/tests/preload/prog_phase" 256 12
fi
# move_pages/get_mempolicy on pages the sampler is watching (Linux 6.1
# hides PROT_NONE pages from them; the preload opens them first)
# the program's own placement: arrays it binds itself stay where it put
# them, and numactl --membind=0,1 keeps every page on nodes 0 and 1
if [ -x "$build/tests/preload/prog_mbind" ]; then
    run mbind env OMP_NUM_THREADS=4 OMP_PROC_BIND=true OMP_PLACES=cores \
        PAGEHOME_SAMPLE_BUDGET=0 sh "$(dirname "$0")/../preload/check_mbind.sh" \
        "$build/tools/pagehome/pagehome" "$build/tests/preload/prog_mbind"
fi
# OpenMP code in a process whose program names no OpenMP runtime: a gcc
# library (libgomp) that prog_plugin loads with dlopen, a clang one that
# python3 loads with ctypes (check_plugin.sh), the arrays initialised
# serially before the runtime starts: they must end on their threads'
# nodes
for case in dlopen:libplugin_gcc.so python:libplugin_clang.so; do
    mode=${case%%:*} lib=${case#*:}
    if [ -x "$build/tests/preload/prog_plugin" ] && [ -r "$build/tests/preload/$lib" ]; then
        run "plugin-$mode-$lib" env OMP_NUM_THREADS=4 OMP_PROC_BIND=true OMP_PLACES=cores \
            PAGEHOME_SAMPLE_BUDGET=0 sh "$(dirname "$0")/../preload/check_plugin.sh" \
            "$build/tools/pagehome/pagehome" "$mode" "$build/tests/preload/prog_plugin" \
            "$build/tests/preload/$lib"
    fi
done
if [ -x "$build/tests/preload/prog_query" ]; then
    run run-prog_query env OMP_NUM_THREADS=4 OMP_PROC_BIND=true OMP_PLACES=cores \
        PAGEHOME_SAMPLE_PAGES=0 PAGEHOME_ENGINE_SYNC=1 PAGEHOME_STABLE_AFTER=0 PAGEHOME_COLD_AFTER=0 \
        "$build/tools/pagehome/pagehome" run -- "$build/tests/preload/prog_query"
fi
# transparent mode's robustness items on the real kernel of a NUMA machine
# (prog_robust.c: kernel accesses to watched arrays, signals, the program's
# mprotect and mremap, allocation churn, mlockall, asynchronous I/O), the engine watching
# every page.
# The guest's Linux 6.1 has no UFFDIO_MOVE, so the mprotect mechanism (the
# userfaultfd one is tested on the host).
if [ -x "$build/tests/preload/prog_robust_gcc" ]; then
    # async under the hybrid mechanism too: its memory manager arms pages
    # while an aio_write is in flight across parallel regions
    for item in stdio syscalls crash mprotect mremap sigblock churn lock async async:hybrid; do
        mig=${item#*:}
        [ "$mig" = "$item" ] && mig=iterative
        run "robust-$item" env OMP_NUM_THREADS=4 OMP_PROC_BIND=true OMP_PLACES=cores \
            PAGEHOME_SAMPLE_MECHANISM=mprotect PAGEHOME_STABLE_AFTER=0 PAGEHOME_SAMPLE_PAGES=0 \
            PAGEHOME_SAMPLE_PERIOD_MS=5 sh -c '"$1" run --migrate "$4" -- "$2" "$3" > /tmp/robust.out 2>&1
                rc=$?; grep -q "^prog_robust $3: ok" /tmp/robust.out && [ $rc -eq 0 ] && exit 0
                cat /tmp/robust.out; exit 1' robust \
            "$build/tools/pagehome/pagehome" "$build/tests/preload/prog_robust_gcc" "${item%:*}" "$mig"
    done
fi
run hugepages sh "$(dirname "$0")/hugepages.sh" "$build"
run measure "$build/tools/pagehome/pagehome" topo --measure --quick --save /tmp/lat.json
echo "numa-guest suite: $pass passed, $fail failed, $skip skipped${failed:+ (failed:$failed)}${again:+ (passed on a second run:$again)}"
[ "$fail" -eq 0 ]
