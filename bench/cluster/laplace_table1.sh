#!/usr/bin/env bash
# bench/cluster/laplace_table1.sh -- paper 002 Table 1 (and the event counts
# of its Table 3) on cluster mode: the seven Laplace implementations of
# workloads/cluster/laplace7_dsm x round-robin and block homes x 1, 2 and 4
# ranks (1 OpenMP thread each: the paper's 1, 2 and 4 machines), with the
# hand-written MPI solver (workloads/mpi/laplace_mpi) beside them, on this
# machine's shared memory and -- where network namespaces can be made --
# in the namespace cluster of tests/cluster-net/run (one rank per host),
# unshaped and at 100 Mbit/s.  Every job goes through `pagehome cluster
# run` and must pass its verification (bit for bit against the sequential
# code).  Prints the tables (laplace_table1.py) with the paper's figures
# beside.  See bench/README.md, "Cluster", "Laplace: paper 002 Table 1".
#
#   bench/cluster/laplace_table1.sh [options] BUILD_DIR
#     --grid N        grid N x N (default 1024, the paper's)
#     --steps K       iterations (default 100, the paper's)
#     --reps R        runs of every job; the table takes the minimum, as
#                     the paper did (default 1)
#     --ranks LIST    default 1,2,4
#     --variants LIST laplace7_dsm variants, names or 0-6 (default all)
#     --homes LIST    round-robin, block (default both), round-robin-static
#                     (round-robin homes, cluster_migrate=0: no home
#                     migration, as on the paper's SCASH)
#     --where LIST    shm and/or net (default shm,net)
#     --rates LIST    net link rates: none, 100mbit, any tc rate
#                     (default none,100mbit)
#     --require-net   exit 77 when the namespace cluster cannot be made
#                     (default: go on with shared memory only, and say so)
#     --out DIR       keep the raw lines and every rank's statistics there
#                     (default: a temporary directory, removed)
#     --smoke         a quick pass for ctest: grid 64, 4 iterations,
#                     ranks 1,2, net unshaped only, --require-net
# Exit status: 0 when every job verified; 1 when one failed (shown as
# FAILED with its output); 77 as above; 2 on bad usage.
set -uo pipefail

HERE=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
SRC=$(cd -- "$HERE/../.." && pwd -P)
NET=$SRC/tests/cluster-net/run

grid=1024 steps=100 reps=1 ranks_list=1,2,4 variants=all homes_list=round-robin,block
where=shm,net rates=none,100mbit require_net= out= smoke= inner=
while (($#)); do
	case $1 in
	--grid) grid=$2; shift 2 ;;
	--steps) steps=$2; shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--ranks) ranks_list=$2; shift 2 ;;
	--variants) variants=$2; shift 2 ;;
	--homes) homes_list=$2; shift 2 ;;
	--where) where=$2; shift 2 ;;
	--rates) rates=$2; shift 2 ;;
	--require-net) require_net=1; shift ;;
	--out) out=$2; shift 2 ;;
	--smoke) smoke=1; shift ;;
	--inner) inner=$2; shift 2 ;;   # internal: run the jobs of one place
	-h | --help) sed -n '2,34p' "${BASH_SOURCE[0]}"; exit 0 ;;
	-*) echo "laplace_table1.sh: unknown option '$1'" >&2; exit 2 ;;
	*) break ;;
	esac
done
build=${1:?usage: bench/cluster/laplace_table1.sh [options] BUILD_DIR}
build=$(cd -- "$build" && pwd -P) || exit 2
ph=$build/tools/pagehome/pagehome
prog=$build/workloads/cluster/laplace7_dsm
dsm_mpi=$(cat "$build/bench/cluster/dsm-mpi" 2>/dev/null)
mpi_prog=$build/workloads/mpi/laplace_mpi-$dsm_mpi
if [[ ! -x $ph || ! -x $prog ]]; then
	echo "laplace_table1.sh: build $build first (pagehome, laplace7_dsm; cluster mode needs MPI)" >&2
	exit 77
fi
names=(seq naive barrier manual manual_barrier affinity affinity_barrier)
[[ $variants == all ]] && variants=$(IFS=,; echo "${names[*]}")
# numbers to names: the statistics files are named as the result lines
# name the variant
v_named=
for v in ${variants//,/ }; do
	[[ $v =~ ^[0-6]$ ]] && v=${names[$v]}
	v_named+=${v_named:+,}$v
done
variants=$v_named
if [[ -n $smoke ]]; then
	grid=64 steps=4 reps=1 ranks_list=1,2 where=net rates=none require_net=1
fi
for x in "$grid" "$steps" "$reps"; do
	[[ $x =~ ^[1-9][0-9]*$ ]] || { echo "laplace_table1.sh: --grid, --steps and --reps take positive numbers" >&2; exit 2; }
done

# ---- the jobs of one place (shm, or net:RATE inside the namespace cluster)
ME=laplace_table1.sh
# shellcheck source=tables.sh
. "$HERE/tables.sh"
one_job() { tables_one_job '^(laplace7 variant=|laplace ranks=)' "$@"; }

run_place() { # PLACE (shm | net:RATE)
	local place=$1 status=0 n h v rep tag transport=()
	[[ $place == shm ]] || transport=(--transport auto)
	for ((rep = 1; rep <= reps; rep++)); do
		for n in ${ranks_list//,/ }; do
			# across hosts, 1 rank is the shared-memory run
			[[ $place != shm && $n == 1 ]] && continue
			for h in ${homes_list//,/ }; do
				for v in ${variants//,/ }; do
					# the sequential code runs on one rank
					[[ $v == seq && $n != 1 ]] && continue
					# and has no homes: once
					[[ $v == seq && $h != "${homes_list%%,*}" ]] && continue
					tag="$out/stats/${place/:/-}.$v.$h.$n.$rep"
					# round-robin-static: round-robin homes, migration off
					# (the paper's SCASH had none)
					placement=$h set=()
					if [[ $h == round-robin-static ]]; then
						placement=round-robin set=(--set cluster_migrate=0)
					fi
					echo "  $place rep $rep: $v $h, $n rank(s)" >&2
					one_job "rep=$rep where=$place homes=$h" -- env OMP_NUM_THREADS=1 \
						timeout -k 5 "${JOB_TIMEOUT:-900}" "$ph" cluster run -n "$n" "${transport[@]}" \
						"${set[@]}" -- "$prog" "$v" "$grid" "$steps" "$placement" --stats "$tag" || status=1
				done
			done
			if [[ -x $mpi_prog ]]; then
				echo "  $place rep $rep: laplace_mpi-$dsm_mpi, $n rank(s)" >&2
				one_job "rep=$rep where=$place prog=laplace_mpi" -- env OMP_NUM_THREADS=1 \
					timeout -k 5 "${JOB_TIMEOUT:-900}" "$ph" cluster run -n "$n" --mpi "$dsm_mpi" \
					"${transport[@]}" -- "$mpi_prog" "$grid" "$steps" || status=1
			fi
		done
	done
	return $status
}

if [[ -n $inner ]]; then
	[[ -n $out && -d $out ]] || { echo "laplace_table1.sh: --inner needs --out" >&2; exit 2; }
	run_place "$inner"
	exit $?
fi

# ---- the places ---------------------------------------------------------------
maxranks=1
for n in ${ranks_list//,/ }; do ((n > maxranks)) && maxranks=$n; done
tables_run "$where" "$rates" "$maxranks" "$require_net" -- \
	"$HERE/laplace_table1.sh" --grid "$grid" --steps "$steps" --reps "$reps" \
	--ranks "$ranks_list" --variants "$variants" --homes "$homes_list" "$build"
status=$tables_status

echo "paper 002 Table 1 on cluster mode: grid ${grid}x$grid, $steps iterations, $reps run(s) per job" \
	"(minimum), 1 thread per rank; $(nproc) CPU(s), $(uname -r); MPI $dsm_mpi"
for note in "${tables_notes[@]}"; do echo "note: $note"; done
python3 "$HERE/laplace_table1.py" "$out" || status=1
[[ -z $tables_keep ]] || echo "raw lines and statistics kept in $out"
exit $status
