#!/bin/sh
# heap_compare.sh PRELOAD_LIB PROGRAM... -- each heap_* test program run
# plain and with LD_PRELOAD=PRELOAD_LIB (on the simulated 4-node machine,
# heap_reuse=0 so that an area lives exactly as long as its block,
# engine on and off) must exit 0 and print the same stdout.
lib=${1:?usage: heap_compare.sh PRELOAD_LIB PROGRAM...}
shift
tmp=${TMPDIR:-/tmp}/heap_compare.$$
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
for prog in "$@"; do
    name=$(basename "$prog")
    env -u LD_PRELOAD HEAP_EXPECT=plain "$prog" > "$tmp/plain.out" 2> "$tmp/plain.err"
    rc=$?
    if [ $rc -ne 0 ]; then
        fail=$((fail + 1)); echo "FAILED: $name plain: exit $rc"; cat "$tmp/plain.err"
        continue
    fi
    for engine in "PAGEHOME_ENGINE_SYNC=1" "PAGEHOME_ENGINE=off"; do
        env LD_PRELOAD="$lib" HEAP_EXPECT=hot PAGEHOME_TOPOLOGY=nodes=4,cpus_per_node=1 PAGEHOME_HEAP_REUSE=0 \
            $engine "$prog" > "$tmp/hot.out" 2> "$tmp/hot.err"
        rc=$?
        if [ $rc -ne 0 ]; then
            fail=$((fail + 1)); echo "FAILED: $name preloaded ($engine): exit $rc"
            cat "$tmp/hot.err"
        elif ! cmp -s "$tmp/plain.out" "$tmp/hot.out"; then
            fail=$((fail + 1)); echo "FAILED: $name preloaded ($engine): stdout differs"
            diff "$tmp/plain.out" "$tmp/hot.out"
        else
            pass=$((pass + 1))
        fi
    done
done
echo "heap_compare: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
