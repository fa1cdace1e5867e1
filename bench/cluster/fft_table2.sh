#!/usr/bin/env bash
# bench/cluster/fft_table2.sh -- paper 002 Table 2 (and the event counts of
# its Table 3) on cluster mode: the FFT implementations 0-4 with gangs and
# `flat` (the same transform without gangs) of workloads/cluster/fft_dsm,
# at ranks x threads 1x1, 1x2, 2x1 and 4x1 on this machine's shared memory
# and -- where network namespaces can be made -- in the namespace cluster
# of tests/cluster-net/run (one rank per host), unshaped and at 100 Mbit/s.
# Every job goes through `pagehome cluster run` and must pass its
# verification (every point equal to the sequential hybrid transform).
# Prints the tables (fft_table2.py): the median seconds of a transform
# with the paper's figures beside, the pages fetched and gets per
# transform, the targets of issue 12 and per rank the events of one
# transform.  See bench/README.md, "Cluster", "FFT with gangs".
#
#   bench/cluster/fft_table2.sh [options] BUILD_DIR
#     --reps R        transforms in each job; the table takes their median
#                     (fft_dsm --reps; default 5)
#     --log2n L       N = 2^L points (default 19, the paper's 524288)
#     --configs LIST  ranks x threads (default 1x1,1x2,2x1,4x1); across
#                     hosts only the configurations of 2 ranks or more run
#                     (1 rank is the shared-memory run), one thread a rank
#     --impls LIST    of 0,1,2,3,4,flat (default all)
#     --where LIST    shm and/or net (default shm,net)
#     --rates LIST    net link rates: none, 100mbit, any tc rate
#                     (default none,100mbit)
#     --require-net   exit 77 when the namespace cluster cannot be made
#                     (default: go on with shared memory only, and say so)
#     --out DIR       keep the raw lines and every rank's statistics there
#                     (default: a temporary directory, removed)
#     --smoke         a quick pass for ctest: 2^13 points, 1 transform,
#                     1x1 and 2x1, implementations 4 and flat, net
#                     unshaped only, --require-net
# Exit status: 0 when every job verified; 1 when one failed (shown as
# FAILED with its output); 77 as above; 2 on bad usage.
set -uo pipefail

HERE=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
SRC=$(cd -- "$HERE/../.." && pwd -P)
NET=$SRC/tests/cluster-net/run

reps=5 log2n=19 configs=1x1,1x2,2x1,4x1 impls=0,1,2,3,4,flat
where=shm,net rates=none,100mbit require_net= out= smoke= inner=
while (($#)); do
	case $1 in
	--reps) reps=$2; shift 2 ;;
	--log2n) log2n=$2; shift 2 ;;
	--configs) configs=$2; shift 2 ;;
	--impls) impls=$2; shift 2 ;;
	--where) where=$2; shift 2 ;;
	--rates) rates=$2; shift 2 ;;
	--require-net) require_net=1; shift ;;
	--out) out=$2; shift 2 ;;
	--smoke) smoke=1; shift ;;
	--inner) inner=$2; shift 2 ;;   # internal: run the jobs of one place
	-h | --help) sed -n '2,34p' "${BASH_SOURCE[0]}"; exit 0 ;;
	-*) echo "fft_table2.sh: unknown option '$1'" >&2; exit 2 ;;
	*) break ;;
	esac
done
build=${1:?usage: bench/cluster/fft_table2.sh [options] BUILD_DIR}
build=$(cd -- "$build" && pwd -P) || exit 2
ph=$build/tools/pagehome/pagehome
prog=$build/workloads/cluster/fft_dsm
if [[ ! -x $ph || ! -x $prog ]]; then
	echo "fft_table2.sh: build $build first (pagehome, fft_dsm; cluster mode needs MPI)" >&2
	exit 77
fi
if [[ -n $smoke ]]; then
	reps=1 log2n=13 configs=1x1,2x1 impls=4,flat where=net rates=none require_net=1
fi
[[ $reps =~ ^[1-9][0-9]*$ && $log2n =~ ^[1-9][0-9]*$ ]] ||
	{ echo "fft_table2.sh: --reps and --log2n take positive numbers" >&2; exit 2; }
for c in ${configs//,/ }; do
	[[ $c =~ ^[1-9][0-9]*x[1-9][0-9]*$ ]] ||
		{ echo "fft_table2.sh: --configs takes RANKSxTHREADS, e.g. 2x1 (got '$c')" >&2; exit 2; }
done
for i in ${impls//,/ }; do
	[[ $i =~ ^([0-4]|flat)$ ]] ||
		{ echo "fft_table2.sh: --impls takes 0-4 and flat (got '$i')" >&2; exit 2; }
done

# ---- the jobs of one place (shm, or net:RATE inside the namespace cluster)
ME=fft_table2.sh
# shellcheck source=tables.sh
. "$HERE/tables.sh"
one_job() { tables_one_job 'median_seconds=' "$@"; }

run_place() { # PLACE (shm | net:RATE)
	local place=$1 status=0 cfg r t impl transport=()
	[[ $place == shm ]] || transport=(--transport auto)
	for impl in ${impls//,/ }; do
		for cfg in ${configs//,/ }; do
			r=${cfg%x*} t=${cfg#*x}
			# the sequential transform runs on rank 0 alone: once
			[[ $impl == 0 && $cfg != 1x1 ]] && continue
			# across hosts: one thread a rank, 2 ranks or more (1 rank is
			# the shared-memory run)
			[[ $place != shm && ($r == 1 || $t != 1) ]] && continue
			echo "  $place: implementation $impl, $cfg" >&2
			one_job "where=$place" -- env OMP_NUM_THREADS="$t" \
				timeout -k 5 "${JOB_TIMEOUT:-900}" "$ph" cluster run -n "$r" "${transport[@]}" \
				-- "$prog" "$impl" "$log2n" --reps "$reps" \
				--stats "$out/stats/${place/:/-}.$impl.$cfg" || status=1
		done
	done
	return $status
}

if [[ -n $inner ]]; then
	[[ -n $out && -d $out ]] || { echo "fft_table2.sh: --inner needs --out" >&2; exit 2; }
	run_place "$inner"
	exit $?
fi

# ---- the places ---------------------------------------------------------------
maxranks=1
for c in ${configs//,/ }; do ((${c%x*} > maxranks)) && maxranks=${c%x*}; done
tables_run "$where" "$rates" "$maxranks" "$require_net" -- \
	"$HERE/fft_table2.sh" --reps "$reps" --log2n "$log2n" --configs "$configs" \
	--impls "$impls" "$build"
status=$tables_status

echo "paper 002 Table 2 on cluster mode: N = 2^$log2n points, the median of $reps transform(s)" \
	"per job; $(nproc) CPU(s), $(uname -r); MPI $(cat "$build/bench/cluster/dsm-mpi" 2>/dev/null)"
for note in "${tables_notes[@]}"; do echo "note: $note"; done
python3 "$HERE/fft_table2.py" "$out" || status=1
[[ -z $tables_keep ]] || echo "raw lines and statistics kept in $out"
exit $status
