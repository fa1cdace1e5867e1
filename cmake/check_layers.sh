#!/usr/bin/env bash
# check_layers.sh MANIFEST PAGEHOME_H [NM [SRC_DIR]] -- the layer rules,
# checked on the object files (and on the #includes under SRC_DIR).
#
# MANIFEST (written by src/CMakeLists.txt) has one line per layer, lowest
# first:
#     layer NAME USES... : OBJECT;OBJECT;...
# where USES are the layers NAME may call (each below it).  The rules:
#   1. a layer's objects reference pagehome's symbols (ph_*) only if they
#      are defined in the layer itself or in a layer it USES: never in a
#      layer above it, never in one it did not declare;
#   2. every global a layer defines is in the ph_ namespace, so that rule
#      1 sees it (preload/ is exempt: it defines malloc, mmap, move_pages,
#      ... to interpose on them; so are cluster/syscalls.c, which defines
#      read, fread, ... (base/buffer_calls.h) as preload/ does, and
#      cluster/signals.c, which defines sigaction, signal, ..., and
#      cluster/mpi_calls.c, which defines MPI_Send, MPI_Recv, ... over
#      PMPI_*: each is in its own shared library);
#   3. every function include/pagehome.h declares PH_API is defined in
#      api/, and in no other layer; every one it declares PH_CLUSTER_API
#      (cluster mode, libpagehome_cluster) in cluster/ -- all of them when
#      the cluster layer is built with MPI, none of them without;
#   4. with SRC_DIR: a file of SRC_DIR/NAME/ includes headers only of NAME
#      and of the layers it USES (a type or an inline function from above
#      is an upward dependency that nm cannot see).
# Prints each violation (layer, object, symbol, where it is defined) and
# exits 1 if there is any.
set -euo pipefail

manifest=$1
header=$2
nm=${3:-nm}
src=${4:-}

[ -r "$manifest" ] || { echo "check_layers: cannot read $manifest" >&2; exit 2; }
[ -r "$header" ] || { echo "check_layers: cannot read $header" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# layers.txt: NAME RANK USES(comma list); objs.txt: NAME OBJECT
rank=0
while read -r kw name rest; do
    [ "$kw" = layer ] || continue
    uses=${rest%%:*}
    objs=${rest#*:}
    uses=$(echo $uses | tr ' ' ',')
    echo "$name $rank ${uses:--}" >>"$work/layers.txt"
    IFS=';' read -ra list <<<"$(echo $objs)"
    for o in "${list[@]}"; do
        [ -n "$o" ] && echo "$name $o" >>"$work/objs.txt"
    done
    rank=$((rank + 1))
done <"$manifest"
[ -s "$work/objs.txt" ] || { echo "check_layers: no objects in $manifest" >&2; exit 2; }

# defs.txt: SYMBOL LAYER OBJECT TYPE; refs.txt: SYMBOL LAYER OBJECT
# (one nm over every object for each; -A names the object on each line)
objects=()
while read -r name obj; do
    [ -r "$obj" ] || { echo "check_layers: missing object $obj (build first)" >&2; exit 2; }
    objects+=("$obj")
done <"$work/objs.txt"
"$nm" -A -g --defined-only "${objects[@]}" >"$work/nm_defs.txt"
"$nm" -A -u "${objects[@]}" >"$work/nm_refs.txt"
# "OBJECT: [ADDR] TYPE SYMBOL" -> the object's layer and file name
split_nm='
    NR == FNR { layer[$2] = $1; next }
    {
        i = index($0, ":"); obj = substr($0, 1, i - 1); n = split(substr($0, i + 1), f, " ")
        if (!(obj in layer)) next
        base = obj; sub(/.*\//, "", base)
        if (want == "defs" && n == 3) print f[3], layer[obj], base, f[2]
        if (want == "refs" && n >= 2) print f[n], layer[obj], base
    }'
awk -v want=defs "$split_nm" "$work/objs.txt" "$work/nm_defs.txt" >"$work/defs.txt"
awk -v want=refs "$split_nm" "$work/objs.txt" "$work/nm_refs.txt" >"$work/refs.txt"
[ -s "$work/defs.txt" ] || { echo "check_layers: $nm found no symbols" >&2; exit 2; }

# incs.txt: LAYER FILE INCLUDED-LAYER, for the quoted "dir/file.h" includes
: >"$work/incs.txt"
if [ -n "$src" ]; then
    while read -r name _; do
        for f in "$src/$name"/*.[ch]; do
            [ -e "$f" ] || continue
            sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([a-z_]*\)\/.*/\1/p' "$f" |
                awk -v l="$name" -v f="${f##*/}" '{ print l, f, $1 }' >>"$work/incs.txt"
        done
    done <"$work/layers.txt"
fi

# The PH_API functions of the public header.
sed -n 's/^[[:space:]]*PH_API[^(]*[^a-zA-Z0-9_]\(ph_[a-zA-Z0-9_]*\)[[:space:]]*(.*/\1/p' "$header" \
    | sort -u >"$work/api.txt"
[ -s "$work/api.txt" ] || { echo "check_layers: no PH_API function found in $header" >&2; exit 2; }
sed -n 's/^[[:space:]]*PH_CLUSTER_API[^(]*[^a-zA-Z0-9_]\(ph_[a-zA-Z0-9_]*\)[[:space:]]*(.*/\1/p' "$header" \
    | sort -u >"$work/capi.txt"

awk -v hdr="${header##*/}" '
    FILENAME ~ /layers.txt$/ {
        rank[$1] = $2; nlayers++; nuses = split($3, u, ",")
        for (i = 1; i <= nuses; i++) if (u[i] != "-") uses[$1, u[i]] = 1
        next
    }
    FILENAME ~ /defs.txt$/ {
        interposer = $2 == "preload" || ($2 == "cluster" && ($3 == "syscalls.c.o" || $3 == "signals.c.o" || $3 == "mpi_calls.c.o"))
        if (!($1 in def)) { def[$1] = $2; defobj[$1] = $3 }
        else if (def[$1] != $2 && !(interposer && $1 !~ /^ph_/)) {
            printf "duplicate: %s is defined in %s (%s) and in %s (%s)\n", $1, def[$1], defobj[$1], $2, $3
            bad++
        }
        if ($1 !~ /^ph_/ && !interposer) {
            printf "namespace: %s (%s) defines the global %s, outside ph_*\n", $2, $3, $1
            bad++
        }
        if ($4 ~ /^[TtWi]$/) func[$1] = 1
        next
    }
    FILENAME ~ /refs.txt$/ {
        s = $1; l = $2
        if (s !~ /^ph_/ || !(s in def) || def[s] == l) next
        d = def[s]; refs++
        if (rank[d] > rank[l]) {
            printf "upward: %s (%s) calls %s, defined in %s (%s), a layer above it\n", l, $3, s, d, defobj[s]
            bad++
        } else if (!((l, d) in uses)) {
            printf "undeclared: %s (%s) calls %s, defined in %s (%s), which %s does not USE\n", l, $3, s, d, defobj[s], l
            bad++
        }
        next
    }
    FILENAME ~ /incs.txt$/ {
        if ($3 == $1) next
        if (!($3 in rank)) next   # not a layer (e.g. a test helper folder)
        if (rank[$3] > rank[$1]) {
            printf "upward: %s (%s) includes a header of %s, a layer above it\n", $1, $2, $3; bad++
        } else if (!(($1, $3) in uses)) {
            printf "undeclared: %s (%s) includes a header of %s, which %s does not USE\n", $1, $2, $3, $1; bad++
        }
        nincs++
        next
    }
    FILENAME ~ /\/api.txt$/ {
        napi++
        if (!($1 in def)) {
            printf "api: %s (PH_API in %s) is defined in no layer\n", $1, hdr; bad++
        } else if (def[$1] != "api" || !($1 in func)) {
            printf "api: %s (PH_API in %s) is defined in %s (%s), not in api/\n", $1, hdr, def[$1], defobj[$1]; bad++
        }
        next
    }
    FILENAME ~ /capi.txt$/ {
        ncapi++
        if (!($1 in def)) { cmissing[$1] = 1; next }
        ncdef++
        if (def[$1] != "cluster" || !($1 in func)) {
            printf "api: %s (PH_CLUSTER_API in %s) is defined in %s (%s), not in cluster/\n", $1, hdr, def[$1], defobj[$1]; bad++
        }
        next
    }
    END {
        if (ncdef > 0)
            for (f in cmissing) {
                printf "api: %s (PH_CLUSTER_API in %s) is defined in no layer\n", f, hdr; bad++
            }
        if (bad) { printf "check_layers: %d violation(s)\n", bad; exit 1 }
        printf "check_layers: %d layers, %d cross-layer references and %d cross-layer includes, all to declared layers below; %d PH_API functions, all in api/; %d of %d PH_CLUSTER_API functions built, all in cluster/\n", nlayers, refs, nincs, napi, ncdef, ncapi
    }
' "$work/layers.txt" "$work/defs.txt" "$work/refs.txt" "$work/incs.txt" "$work/api.txt" "$work/capi.txt"
