#!/usr/bin/env bash
# readonly_stats.sh -- run a cluster program with per-rank statistics files
# and check them with check_stats: pages declared read-only are fetched in
# one interval per rank at most, never after it, and at least MIN_TOTAL
# times over all ranks.
#
#   readonly_stats.sh CHECK_STATS MIN_TOTAL RUN.SH [RUN.SH ARGS: N PROGRAM ARGS...]
set -u
check=$1 min_total=$2 run=$3
shift 3
dir=$(mktemp -d "${TMPDIR:-/tmp}/ph-readonly-stats.XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$run" --env "PAGEHOME_CLUSTER_STATS_FILE=$dir/rank%r.json" "$@"
rc=$?
[ "$rc" -eq 0 ] || exit "$rc"
set -- "$dir"/rank*.json
[ -e "$1" ] || { echo "readonly_stats: no statistics file was written"; exit 1; }
"$check" "$min_total" "$@"
