#!/bin/sh
# check_ompt_chain.sh PAGEHOME PRELOAD_LIB DUMMY_TOOL PROGRAM -- another
# OMPT tool keeps working beside pagehome (src/preload/ompt_chain.c).
#
# PROGRAM (ompt_chain_prog: 30 outermost regions) runs with
# OMP_NUM_THREADS=4: plain; under the dummy tool alone (LD_PRELOAD, then
# OMP_TOOL_LIBRARIES); under `pagehome run` alone; under `pagehome run`
# with the dummy as the next preload and through OMP_TOOL_LIBRARIES, and
# both at once; with a dummy that declines to start or refuses at
# initialize; with pagehome named in OMP_TOOL_LIBRARIES too.  Checked:
# the program's output never changes; the dummy's counts and data checks
# (its line at finalize) are right alone and identical beside pagehome;
# pagehome's report shows the 30 regions, the period, and which other
# tool ran.
ph=${1:?usage: check_ompt_chain.sh PAGEHOME PRELOAD_LIB DUMMY_TOOL PROGRAM}
pre=${2:?}
dummy=${3:?}
prog=${4:?}
tmp=${TMPDIR:-/tmp}/check_ompt_chain.$$
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT
export OMP_NUM_THREADS=4 PAGEHOME_TOPOLOGY=nodes=4,cpus_per_node=1 PAGEHOME_ENGINE_SYNC=1
unset OMP_TOOL_LIBRARIES LD_PRELOAD DUMMY_DECLINE DUMMY_REFUSE
fail=0
failed() { echo "check_ompt_chain: FAILED: $*"; fail=1; }
want() { # FILE PATTERN WHAT
    grep -q -- "$2" "$1" || failed "$3 (no /$2/ in $(basename "$1"))"
}
wantnot() { # FILE PATTERN WHAT
    if grep -q -- "$2" "$1"; then failed "$3 (/$2/ in $(basename "$1"))"; fi
}
# RUN NAME [ENV=V...] -- COMMAND...: stdout to NAME.out, stderr to NAME.err
run() {
    name=$1
    shift
    env "$@" > "$tmp/$name.out" 2> "$tmp/$name.err" || failed "$name: exit status $?"
    cmp -s "$tmp/plain.out" "$tmp/$name.out" || failed "$name: the program's output changed"
}
dummy_line() { grep '^ompt_dummy_tool: parallel_begin' "$tmp/$1.err"; }
same_dummy() { # NAME: the dummy saw exactly what it saw alone, once
    [ "$(dummy_line "$1" | wc -l)" = 1 ] || failed "$1: the dummy printed $(dummy_line "$1" | wc -l) lines"
    [ "$(dummy_line "$1")" = "$(dummy_line alone_preload)" ] ||
        failed "$1: the dummy saw '$(dummy_line "$1")', alone '$(dummy_line alone_preload)'"
}
pagehome_saw() { # NAME: pagehome's report
    want "$tmp/$1.json" '"runtime_seen": true' "$1: pagehome saw the runtime"
    want "$tmp/$1.json" '"regions": 30,' "$1: pagehome saw the 30 regions"
    want "$tmp/$1.json" '"iteration": "period of the parallel regions"' "$1: pagehome found the period"
    want "$tmp/$1.json" '"period": 3,' "$1: period 3"
    want "$tmp/$1.json" '"thread_notes": [1-9]' "$1: pagehome's thread notes"
}

"$prog" > "$tmp/plain.out" 2> "$tmp/plain.err" || failed "plain run"
want "$tmp/plain.out" '^ompt_chain_prog: 30 regions, checksum [0-9]' "plain output"

# The dummy alone: its counts are those of the program.
run alone_preload LD_PRELOAD="$dummy" "$prog"
want "$tmp/alone_preload.err" \
    'parallel_begin=30 parallel_end=30 thread_begin=4 (initial 1, worker 3) implicit_task=120/120 work=[0-9]* data_errors=0 tool_data=ok' \
    "the dummy alone (LD_PRELOAD): counts and data"
run alone_env OMP_TOOL_LIBRARIES="$dummy" "$prog"
same_dummy alone_env

# pagehome alone.
run ph_alone "$ph" run --report "$tmp/ph_alone.json" -- "$prog"
pagehome_saw ph_alone
want "$tmp/ph_alone.json" '"other_tool": null' "ph_alone: no other tool"
wantnot "$tmp/ph_alone.err" ompt_dummy_tool "ph_alone: no dummy"

# Both: the dummy as the next preload, through OMP_TOOL_LIBRARIES, and
# both ways at once (one dummy, found in the search order).
run both_preload LD_PRELOAD="$dummy" "$ph" run --report "$tmp/both_preload.json" -- "$prog"
same_dummy both_preload
pagehome_saw both_preload
want "$tmp/both_preload.json" '"other_tool": ".*ompt_dummy_tool[^"]* (next in the search order)"' \
    "both_preload: the report names the other tool"
run both_env OMP_TOOL_LIBRARIES="$dummy" "$ph" run --report "$tmp/both_env.json" -- "$prog"
same_dummy both_env
pagehome_saw both_env
want "$tmp/both_env.json" '"other_tool": ".*ompt_dummy_tool[^"]* (OMP_TOOL_LIBRARIES)"' \
    "both_env: the report names the other tool"
run both_twice LD_PRELOAD="$dummy" OMP_TOOL_LIBRARIES="$dummy" \
    "$ph" run --report "$tmp/both_twice.json" -- "$prog"
same_dummy both_twice
pagehome_saw both_twice
want "$tmp/both_twice.json" '(next in the search order)' "both_twice: found in the search order"

# A dummy that declines to start, one that refuses at initialize, a
# missing library in OMP_TOOL_LIBRARIES, and pagehome named there itself:
# pagehome works alone.
run declines LD_PRELOAD="$dummy" DUMMY_DECLINE=1 OMP_TOOL_LIBRARIES="/nonexistent/libx.so:$dummy" \
    "$ph" run --report "$tmp/declines.json" -- "$prog"
pagehome_saw declines
want "$tmp/declines.json" '"other_tool": null' "declines: no other tool"
wantnot "$tmp/declines.err" ompt_dummy_tool "declines: the dummy says nothing"
run refuses LD_PRELOAD="$dummy" DUMMY_REFUSE=1 "$ph" run --report "$tmp/refuses.json" -- "$prog"
pagehome_saw refuses
want "$tmp/refuses.json" '"other_tool": null' "refuses: no other tool"
want "$tmp/refuses.err" '^ompt_dummy_tool: refused at initialize; callbacks received since: 0$' \
    "refuses: no callback reaches a tool that refused"
wantnot "$tmp/refuses.err" 'ompt_dummy_tool: parallel_begin' "refuses: no finalize"
run self OMP_TOOL_LIBRARIES="$pre" "$ph" run --report "$tmp/self.json" -- "$prog"
pagehome_saw self
want "$tmp/self.json" '"other_tool": null' "self: pagehome is not its own other tool"

if [ $fail != 0 ]; then
    for f in "$tmp"/*.err; do echo "--- $(basename "$f")"; cat "$f"; done
    exit 1
fi
echo "check_ompt_chain: ok ($(dummy_line alone_preload))"
