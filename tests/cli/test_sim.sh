#!/usr/bin/env bash
# test_sim.sh PAGEHOME -- `pagehome sim` as a user meets it: an experiment
# prints its table and targets, writes CSV and JSON, and every bad input
# is a usage error (exit 2) that says what was wrong.
set -uo pipefail
ph=${1:?usage: test_sim.sh PATH_TO_PAGEHOME}
. "$(dirname "$0")/expect.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# e1 with 6 iterations: the table, one line per run, and the targets
"$ph" sim e1 --iterations 6 > "$tmp/e1.txt" 2> "$tmp/e1.err"
rc=$?
if [ "$rc" -eq 0 ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAILED: sim e1 --iterations 6 exited $rc"; cat "$tmp/e1.err"; fi
expect 0 '^program +thr +placement +engine +time s +time/ft +last-half/ft' -- cat "$tmp/e1.txt"
expect 0 '^BT +16 +first-touch +off +[0-9.]+ +1\.000 +1\.000 +7680 ' -- cat "$tmp/e1.txt"
expect 0 '^CG +32 +single-node +hybrid ' -- cat "$tmp/e1.txt"
expect 0 '^CG +32 +single-node +iter-competitive ' -- cat "$tmp/e1.txt"
expect 0 '^CG +32 +single-node +iter-amortised ' -- cat "$tmp/e1.txt"
expect 0 '^  (met|not met) +origin2000-16: single-node \+ pagehome hybrid <= 1\.05x' -- cat "$tmp/e1.txt"
expect 0 '^  (met|not met) +origin2000-16: single-node \+ pagehome iter-competitive <= 1\.05x' -- cat "$tmp/e1.txt"
rows=$(grep -Ec '^(BT|SP|CG) +(16|32) ' "$tmp/e1.txt")
if [ "$rows" -eq 90 ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAILED: e1 printed $rows runs, want 90 (3 x 2 x 3 x 5)"; fi

# data files: one CSV line per run, JSON with the per-iteration series
expect 0 '' -- "$ph" sim e3 --iterations 4 --csv "$tmp/e3.csv" --json "$tmp/e3.json"
lines=$(wc -l < "$tmp/e3.csv")
if [ "$lines" -eq 15 ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAILED: e3 CSV has $lines lines, want 15 (header + 14 runs)"; fi
expect 0 '^experiment,machine,group,program,threads,iterations,placement,engine' -- \
    head -1 "$tmp/e3.csv"
expect 0 '"per_iteration"' -- cat "$tmp/e3.json"
expect 0 '"label": "replay n=20"' -- cat "$tmp/e3.json"
expect 0 'replay n=20' -- "$ph" sim e3 --iterations 4 --machine epyc-2s-8n --threads 8

# the other experiments run, briefly
expect 0 'sampling' -- "$ph" sim e2 --iterations 4 --threads 8
expect 0 'predictive' -- "$ph" sim e4 --iterations 4 --threads 4
expect 0 '-- cxl-2tier' -- "$ph" sim e5 --iterations 3 --threads 8
expect 0 'spec: nodes=16,cpus_per_node=2' -- "$ph" sim presets
expect 0 'usage: pagehome sim EXPERIMENT' -- "$ph" help sim
expect 0 'sim +the UPMlib papers' -- "$ph" help

# e6: two workloads x three page policies, the target, the TLB in presets
"$ph" sim e6 --iterations 3 --threads 8 --csv "$tmp/e6.csv" > "$tmp/e6.txt" 2> "$tmp/e6.err"
rc=$?
if [ "$rc" -eq 0 ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAILED: sim e6 exited $rc"; cat "$tmp/e6.err"; fi
expect 0 '^workload +pages +time s +time/best +last-half/best +TLB miss/access +remote share' -- cat "$tmp/e6.txt"
expect 0 '^private blocks +4K +[0-9.]+ ' -- cat "$tmp/e6.txt"
expect 0 '^finely shared +mixed +[0-9.]+ ' -- cat "$tmp/e6.txt"
expect 0 '^  (met|not met) +epyc-2s-8n: mixed within 2% of the better' -- cat "$tmp/e6.txt"
expect 0 'private blocks: wins ' -- cat "$tmp/e6.txt"
rows=$(grep -Ec '^(private blocks|finely shared) +(4K|2M-nosplit|mixed) ' "$tmp/e6.txt")
if [ "$rows" -eq 6 ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAILED: e6 printed $rows runs, want 6 (2 x 3)"; fi
expect 0 ',tlb_misses,tlb_ns,remote_share,moved_4k,huge_migrated,huge_split,' -- head -1 "$tmp/e6.csv"
expect 0 'TLB per thread: 2048 x 4 KiB \+ 2048 x 2 MiB entries, 35 ns' -- "$ph" sim presets
expect 0 'e6 +large pages' -- "$ph" help sim
expect 2 '\-\-threads 65: epyc-2s-8n has 64 CPUs' -- "$ph" sim e6 --threads 65

# --plots: the table, and the plots and report.html written by pagehome
# report (needs python3 with matplotlib, as pagehome report does)
if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
    expect 0 "plots and report.html: $tmp/plots/" -- "$ph" sim e3 --iterations 4 --plots "$tmp/plots"
    for f in e3.json report.html time.png; do
        if [ -s "$tmp/plots/$f" ]; then pass=$((pass + 1)); else
            fail=$((fail + 1)); echo "FAILED: --plots wrote no $f"; fi
    done
fi
expect 2 '\-\-plots needs a directory' -- "$ph" sim e1 --plots
# the progress line: on when asked (on stderr), never in the table
expect 0 'pagehome: sim: [0-9]+ runs done' -- sh -c "PAGEHOME_PROGRESS=on \"$ph\" sim e3 --iterations 2 2>&1 >/dev/null"
expect 0 '^$' -- sh -c "\"$ph\" sim e3 --iterations 2 2>&1 >/dev/null"

# usage errors: exit 2, saying what was wrong
expect 2 'usage: pagehome sim' -- "$ph" sim
expect 2 "no experiment 'e9'" -- "$ph" sim e9
expect 2 "no machine preset 'vax' \(presets: origin2000-16, epyc-2s-8n, cxl-2tier\)" -- \
    "$ph" sim e1 --machine vax
expect 2 '\-\-threads 33: origin2000-16 has 32 CPUs' -- "$ph" sim e1 --threads 33
expect 2 '\-\-threads 17: origin2000-16 has 32 CPUs for two programs' -- \
    "$ph" sim e4 --threads 17
expect 2 '\-\-threads needs a number' -- "$ph" sim e1 --threads 0
expect 2 '\-\-threads needs a number' -- "$ph" sim e1 --threads lots
expect 2 '\-\-iterations needs a number' -- "$ph" sim e1 --iterations 1
expect 2 '\-\-machine needs a preset' -- "$ph" sim e1 --machine
expect 2 "unknown option '--fast'" -- "$ph" sim e1 --fast
expect 2 "one experiment at a time" -- "$ph" sim e1 e2
expect 1 'cannot write' -- "$ph" sim e3 --iterations 2 --csv /nonexistent/dir/x.csv

summary test_sim
