#!/usr/bin/env bash
# test_hugepages.sh PAGEHOME -- `pagehome hugepages` against a fake sysfs.
#
# The command reads and writes sysfs under $PAGEHOME_SYSFS_ROOT, so each
# case here runs against a tree built in a temp dir: nodes 0 and 1 with
# 2M and 1G pools, global counts with reserved pages, a THP mode.  A plain
# file takes any write, so that tree shows a kernel that grants
# everything.  For the partial grants (the kernel allocates less than
# asked, or keeps pages in use) nr_hugepages becomes a FIFO served by a
# small shell "kernel": it answers the command's first read with the
# current count, takes the write, and answers the read-back with what it
# chose to grant.  The command reads nr_hugepages exactly twice and writes
# it once, so the exchange is deterministic; `timeout` guards against a
# command that would not follow it.  The real kernel's behaviour is
# checked in the NUMA guest (tests/numa-guest/hugepages.sh).
set -uo pipefail
ph=${1:?usage: test_hugepages.sh PATH_TO_PAGEHOME}
. "$(dirname "$0")/expect.sh"
EXPECT_TIMEOUT=20
tmp=$(mktemp -d)
kernel_pid=
trap '[ -n "$kernel_pid" ] && kill "$kernel_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
root=$tmp/fake
export PAGEHOME_SYSFS_ROOT=$root

# snapshot: every file of the fake tree with its content
snapshot() { (cd "$root" && find . -type f -print0 | sort -z | xargs -0 grep -H '') 2>/dev/null; }

# expect_unchanged STATUS PATTERN -- cmd...: as expect, and no file changed
expect_unchanged() {
    local before
    before=$(snapshot)
    expect "$@"
    if [ "$(snapshot)" != "$before" ]; then
        shift 3
        bad "$* changed the fake sysfs"
    else
        ok
    fi
}

# value FILE WANT: a file of the fake tree holds WANT
value() {
    local got
    got=$(cat "$root/$1")
    if [ "$got" = "$2" ]; then ok; else bad "$1 holds '$got', want '$2'"; fi
}

nodepool() { echo "sys/devices/system/node/node$1/hugepages/hugepages-$2kB"; }

# make_tree: the fake sysfs (counts in the comments below)
make_tree() {
    rm -rf "$root"
    local g=$root/sys/kernel/mm/hugepages
    mkdir -p "$g/hugepages-2048kB" "$g/hugepages-1048576kB" \
        "$root/sys/kernel/mm/transparent_hugepage"
    echo 'always [madvise] never' > "$root/sys/kernel/mm/transparent_hugepage/enabled"
    local f
    set -- 18 9 1 4
    for f in nr_hugepages free_hugepages surplus_hugepages resv_hugepages; do
        echo "$1" > "$g/hugepages-2048kB/$f"
        shift
    done
    set -- 1 1 0 0
    for f in nr_hugepages free_hugepages surplus_hugepages resv_hugepages; do
        echo "$1" > "$g/hugepages-1048576kB/$f"
        shift
    done
    local nd=$root/sys/devices/system/node
    mkdir -p "$nd"
    echo 0-1 > "$nd/online"
    echo 0-1 > "$nd/has_memory"
    # node0: 2M 10/7/1, 1G 1/1/0; node1: 2M 8/2/0, 1G 0/0/0
    local spec
    for spec in "0 2048 10 7 1" "0 1048576 1 1 0" "1 2048 8 2 0" "1 1048576 0 0 0"; do
        set -- $spec
        mkdir -p "$root/$(nodepool "$1" "$2")"
        echo "$3" > "$root/$(nodepool "$1" "$2")/nr_hugepages"
        echo "$4" > "$root/$(nodepool "$1" "$2")/free_hugepages"
        echo "$5" > "$root/$(nodepool "$1" "$2")/surplus_hugepages"
    done
}

make_tree

# ---- help and the table
expect 0 'usage: pagehome hugepages' -- "$ph" help hugepages
expect 0 'PAGEHOME_SYSFS_ROOT' -- "$ph" hugepages --help
expect 0 'hugepages +show the huge page pools' -- "$ph" help
expect 0 '^huge page sizes: +2M 1G$' -- "$ph" hugepages
expect 0 '^transparent huge pages: madvise$' -- "$ph" hugepages
expect 0 '^node +size +total +free +surplus +reserved$' -- "$ph" hugepages
expect 0 '^0 +2M +10 +7 +1 +-$' -- "$ph" hugepages
expect 0 '^0 +1G +1 +1 +0 +-$' -- "$ph" hugepages
expect 0 '^1 +2M +8 +2 +0 +-$' -- "$ph" hugepages
expect 0 '^all +2M +18 +9 +1 +4$' -- "$ph" hugepages
expect 0 '^all +1G +1 +1 +0 +0$' -- "$ph" hugepages
out=$("$ph" hugepages)
if [ "$(grep -Ec '^[0-9]+ ' <<<"$out")" -eq 4 ]; then ok; else bad "table: want 4 node rows:
$out"; fi
# the columns line up: every row as long as the header
if [ "$(awk 'NR > 3 && NF { print length($0) }' <<<"$out" | sort -u | wc -l)" -eq 1 ]; then ok
else bad "table rows are not aligned:
$out"; fi
# --node and --size select rows; the sizes line still lists all sizes
out=$("$ph" hugepages --node 1 --size 1G)
if grep -Eq '^1 +1G +0 +0 +0 +-$' <<<"$out" && ! grep -Eq '^0 |^[0-9a-z]+ +2M' <<<"$out" &&
    grep -Eq '^all +1G ' <<<"$out" && grep -Eq '^huge page sizes: +2M 1G$' <<<"$out"; then ok
else bad "--node 1 --size 1G shows the wrong rows:
$out"; fi
# a node without memory has no pools: shown as '-', absent from the JSON
mkdir -p "$root/sys/devices/system/node/node2"
expect 0 '^2 +2M +- +- +- +-$' -- "$ph" hugepages
if command -v jq >/dev/null; then
    expect 0 '^0$' -- sh -c '"$1" hugepages --json | jq ".nodes[] | select(.node == 2) | .pools | length"' sh "$ph"
fi
expect 1 'node 2 has no 2M pool' -- "$ph" hugepages --node 2 --reserve 1
rmdir "$root/sys/devices/system/node/node2"
# THP missing (kernel without THP)
mv "$root/sys/kernel/mm/transparent_hugepage" "$tmp/thp"
expect 0 '^transparent huge pages: not available$' -- "$ph" hugepages
mv "$tmp/thp" "$root/sys/kernel/mm/transparent_hugepage"

# ---- JSON
if command -v jq >/dev/null; then
    "$ph" hugepages --json > "$tmp/h.json"
    jqt() { # jqt FILTER WANT
        local got
        got=$(jq -c "$1" "$tmp/h.json" 2>&1)
        if [ "$got" = "$2" ]; then ok; else bad "jq '$1': got '$got', want '$2'"; fi
    }
    jqt '.thp' '"madvise"'
    jqt '.sizes' '["2M","1G"]'
    jqt '[.nodes[].node]' '[0,1]'
    jqt '.nodes[0].pools[0]' '{"size":"2M","page_bytes":2097152,"total":10,"free":7,"surplus":1}'
    jqt '.nodes[1].pools[1]' '{"size":"1G","page_bytes":1073741824,"total":0,"free":0,"surplus":0}'
    jqt '.global[0]' '{"size":"2M","page_bytes":2097152,"total":18,"free":9,"surplus":1,"reserved":4}'
    jqt '.global[1].reserved' '0'
    jqt '.nodes[0].pools[0] | has("reserved")' 'false'
    "$ph" hugepages --json --node 1 --size 2M > "$tmp/h.json"
    jqt '[.nodes[].node]' '[1]'
    jqt '[.nodes[0].pools[].size]' '["2M"]'
    jqt '[.global[].size]' '["2M"]'
else
    echo "test_hugepages: jq not found: JSON content checks skipped"
    expect 0 '"nodes"' -- "$ph" hugepages --json
fi

# ---- changes that the (fake) kernel grants in full
expect 0 '^node 1: asked 5 more 2M pages, got 5 \(now 13 total, 2 free\)$' -- \
    "$ph" hugepages --node 1 --reserve 5
value "$(nodepool 1 2048)/nr_hugepages" 13
value "$(nodepool 0 2048)/nr_hugepages" 10
expect 0 '^node 1: asked to release 3 2M pages, released 3 \(now 10 total, 2 free\)$' -- \
    "$ph" hugepages --node 1 --release=3
value "$(nodepool 1 2048)/nr_hugepages" 10
expect 0 '^node 1: asked for 0 2M pages in all \(had 10\), now 0 total, 2 free$' -- \
    "$ph" hugepages --node 1 --set 0
value "$(nodepool 1 2048)/nr_hugepages" 0
expect 0 '^node 0: asked 2 more 1G pages, got 2 \(now 3 total, 1 free\)$' -- \
    "$ph" hugepages --node 0 --reserve 2 --size 1G
value "$(nodepool 0 1048576)/nr_hugepages" 3
value "$(nodepool 0 2048)/nr_hugepages" 10
expect 0 'node 0: asked 1 more 2M page, got 1 \(now 11 total, 7 free, 1 surplus\)' -- \
    "$ph" hugepages --node 0 --reserve 1 --size 2048kB
if command -v jq >/dev/null; then
    "$ph" hugepages --node 0 --release 1 --json > "$tmp/r.json"
    got=$(jq -c '[.node, .size, .action, .asked, .before, .target, .total, .granted, .complete]' "$tmp/r.json")
    want='[0,"2M","release",1,11,10,10,1,true]'
    if [ "$got" = "$want" ]; then ok; else bad "release --json: got $got, want $want"; fi
else
    "$ph" hugepages --node 0 --release 1 > /dev/null
fi
value "$(nodepool 0 2048)/nr_hugepages" 10
# reserving 0 writes nothing and succeeds
chmod 444 "$root/$(nodepool 0 2048)/nr_hugepages"
expect_unchanged 0 'asked 0 more 2M pages, got 0' -- "$ph" hugepages --node 0 --reserve 0
chmod 644 "$root/$(nodepool 0 2048)/nr_hugepages"

# ---- errors: one line, the right status, nothing written
expect_unchanged 2 "pagehome: hugepages: no node 5 \(this machine has nodes 0-1\)" -- \
    "$ph" hugepages --node 5 --reserve 1
expect_unchanged 2 "no node 5" -- "$ph" hugepages --node 5
expect_unchanged 2 'unsupported huge page size 4M \(this kernel offers 2M, 1G\)' -- \
    "$ph" hugepages --node 0 --reserve 1 --size 4M
expect_unchanged 2 "\-\-size needs a page size like 2M or 1G, not '2X'" -- \
    "$ph" hugepages --node 0 --reserve 1 --size 2X
expect_unchanged 2 "\-\-size needs a page size" -- "$ph" hugepages --size
for c in -1 abc 1.5 '' 2M ' 3' 99999999999999999999 +4; do
    expect_unchanged 2 "\-\-reserve needs a number of pages \(0 or more\)" -- \
        "$ph" hugepages --node 0 --reserve "$c"
done
expect_unchanged 2 "\-\-release needs a number of pages" -- "$ph" hugepages --node 0 --release -2
expect_unchanged 2 "\-\-set needs a number of pages" -- "$ph" hugepages --node 0 --set x
expect_unchanged 2 "\-\-set needs a number of pages" -- "$ph" hugepages --node 0 --set
expect_unchanged 2 "\-\-node needs a node number, not 'one'" -- "$ph" hugepages --node one --set 1
expect_unchanged 2 "\-\-node needs a node number" -- "$ph" hugepages --node -1 --set 1
expect_unchanged 2 'need --node N' -- "$ph" hugepages --reserve 1
expect_unchanged 2 'only one of --reserve, --release, --set' -- \
    "$ph" hugepages --node 0 --reserve 1 --release 1
expect_unchanged 2 "hugepages: unknown option '--frob'" -- "$ph" hugepages --frob
expect_unchanged 2 'node 1 has 0 2M pages; cannot release 1$' -- \
    "$ph" hugepages --node 1 --release 1
expect_unchanged 2 'node 0 has 10 2M pages; cannot release 11$' -- \
    "$ph" hugepages --node 0 --release 11
echo 9223372036854775800 > "$root/$(nodepool 1 2048)/nr_hugepages"
expect_unchanged 2 '\-\-reserve 100 is too many' -- "$ph" hugepages --node 1 --reserve 100
echo 0 > "$root/$(nodepool 1 2048)/nr_hugepages"
# a sysfs file that does not hold a number
echo junk > "$root/$(nodepool 1 2048)/free_hugepages"
expect_unchanged 1 "cannot read .*node1/hugepages/hugepages-2048kB/free_hugepages: Invalid argument" -- \
    "$ph" hugepages
echo junk > "$root/$(nodepool 1 2048)/nr_hugepages"
expect_unchanged 1 "cannot read .*node1/hugepages/hugepages-2048kB/nr_hugepages" -- \
    "$ph" hugepages --node 1 --reserve 1
echo 0 > "$root/$(nodepool 1 2048)/nr_hugepages"
echo 0 > "$root/$(nodepool 1 2048)/free_hugepages"
# no hugetlbfs in the kernel
mkdir -p "$tmp/nohuge/sys/devices/system/node/node0"
expect 1 '^pagehome: hugepages: this kernel has no huge page \(hugetlbfs\) support \(no .*/nohuge/sys/kernel/mm/hugepages\)$' -- \
    env PAGEHOME_SYSFS_ROOT="$tmp/nohuge" "$ph" hugepages
expect 1 'no huge page \(hugetlbfs\) support' -- \
    env PAGEHOME_SYSFS_ROOT="$tmp/nohuge" "$ph" hugepages --node 0 --reserve 1
# no NUMA nodes (a kernel without CONFIG_NUMA): global pools only
mkdir -p "$tmp/nonuma" && cp -r "$root/sys" "$tmp/nonuma/" && rm -rf "$tmp/nonuma/sys/devices"
expect 0 '^all +2M +18 +9 +1 +4$' -- env PAGEHOME_SYSFS_ROOT="$tmp/nonuma" "$ph" hugepages
expect 0 'no NUMA nodes in sysfs' -- env PAGEHOME_SYSFS_ROOT="$tmp/nonuma" "$ph" hugepages
expect 1 'no NUMA nodes in sysfs' -- \
    env PAGEHOME_SYSFS_ROOT="$tmp/nonuma" "$ph" hugepages --node 0 --reserve 1
# not root: the write is refused
f=$root/$(nodepool 0 2048)/nr_hugepages
chmod 444 "$f"
if [ "$(id -u)" -ne 0 ]; then
    expect_unchanged 1 "writing .*node0/hugepages/hugepages-2048kB/nr_hugepages needs root \(Permission denied\)" -- \
        "$ph" hugepages --node 0 --reserve 1
elif command -v setpriv >/dev/null && chmod -R a+rX "$tmp" &&
    setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$ph"; then
    # root ignores file modes: run as nobody
    expect_unchanged 1 "writing .*node0/hugepages/hugepages-2048kB/nr_hugepages needs root \(Permission denied\)" -- \
        setpriv --reuid=65534 --regid=65534 --clear-groups env PAGEHOME_SYSFS_ROOT="$root" \
        "$ph" hugepages --node 0 --reserve 1
else
    echo "test_hugepages: cannot drop root here: 'needs root' check skipped"
fi
chmod 644 "$f"

# ---- partial grants, through a FIFO "kernel"
# fake_kernel POOL_DIR BEFORE RULE: serves one read / write / read exchange
# on POOL_DIR/nr_hugepages; RULE is a shell expression of $want (the count
# written) giving the new total; free and surplus are set by SET_FREE /
# SET_SURPLUS expressions of $got before the read-back is answered.
start_kernel() {
    local dir=$root/$1 before=$2 rule=$3 set_free=$4 set_surplus=$5
    rm -f "$dir/nr_hugepages"
    mkfifo "$dir/nr_hugepages"
    (
        echo "$before" > "$dir/nr_hugepages"
        read -r want < "$dir/nr_hugepages"
        echo "$want" > "$tmp/written"
        got=$((rule))
        echo $((set_free)) > "$dir/free_hugepages"
        echo $((set_surplus)) > "$dir/surplus_hugepages"
        echo "$got" > "$dir/nr_hugepages"
    ) &
    kernel_pid=$!
}
stop_kernel() { # stop_kernel POOL_DIR VALUE: back to a plain file
    kill "$kernel_pid" 2>/dev/null
    wait "$kernel_pid" 2>/dev/null
    kernel_pid=
    rm -f "$root/$1/nr_hugepages"
    echo "$2" > "$root/$1/nr_hugepages"
}
p1=$(nodepool 1 2048)
# only 40 of 64 fit on the node
rm -f "$tmp/written"
start_kernel "$p1" 0 'want < 40 ? want : 40' got 0
expect 3 '^node 1: asked 64 more 2M pages, got 40 \(now 40 total, 40 free\)$' -- \
    "$ph" hugepages --node 1 --reserve 64
expect 0 '^64$' -- cat "$tmp/written"
stop_kernel "$p1" 40
# the same with --json
start_kernel "$p1" 40 'want < 50 ? want : 50' got 0
if command -v jq >/dev/null; then
    got=$(timeout 20 "$ph" hugepages --node 1 --reserve 20 --json | jq -c '[.before, .target, .total, .granted, .complete]')
    if [ "$got" = '[40,60,50,10,false]' ]; then ok; else bad "partial --json: got $got"; fi
else
    expect 3 '"complete": false' -- "$ph" hugepages --node 1 --reserve 20 --json
fi
stop_kernel "$p1" 50
# a release of pages still in use: the kernel keeps them as surplus
start_kernel "$p1" 8 '3' 0 3
expect 3 '^node 1: asked to release 8 2M pages, released 5 \(now 3 total, 0 free, 3 surplus\)$' -- \
    "$ph" hugepages --node 1 --release 8
stop_kernel "$p1" 3
# --set that the kernel cannot meet, in each direction
start_kernel "$p1" 3 '30' got 0
expect 3 'node 1: asked for 100 2M pages in all \(had 3\), now 30 total, 30 free' -- \
    "$ph" hugepages --node 1 --set 100
stop_kernel "$p1" 30
start_kernel "$p1" 30 '4' 0 4
expect 3 'partial: pages still in use stay in the pool' -- "$ph" hugepages --node 1 --set 0
stop_kernel "$p1" 0
# and an exchange the kernel grants in full still exits 0 through the FIFO
start_kernel "$p1" 0 'want' got 0
expect 0 '^node 1: asked 7 more 2M pages, got 7 \(now 7 total, 7 free\)$' -- \
    "$ph" hugepages --node 1 --reserve 7
stop_kernel "$p1" 0

summary test_hugepages
