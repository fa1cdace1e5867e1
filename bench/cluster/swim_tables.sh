#!/usr/bin/env bash
# bench/cluster/swim_tables.sh -- paper 004's swim tables on cluster mode,
# one command: workloads/cluster/swim_dsm at 1, 2 and 4 ranks (one OpenMP
# thread each) on this machine's shared memory and, where network
# namespaces can be made, in the namespace cluster (tests/cluster-net/run,
# one rank per host) unshaped and at 100 Mbit/s, through `pagehome cluster
# run`, in the configurations of paper 004:
#   none        Table 1: homes round-robin, no migration, the coefficients
#               in shared pages written by the master before every loop
#   block       the best static placement candidate (block homes, no migration)
#   migration   Table 3: homes start round-robin and move to their single
#               writer at barriers (cluster_migrate=1: first touch by migration)
#   private     Table 4: as migration, plus privatisation (--private: the
#               constants page declared read-only, coefficients firstprivate)
# Prints (swim_tables.py) the tables beside the paper's wall times, the per-rank
# counts of every job (faults by kind, pages fetched, diffs, migrations,
# page classes, read-only fetches) and the targets of issue 12 item 6 with
# met / not met.  See bench/README.md, "Cluster", "swim".
#
#   bench/cluster/swim_tables.sh [options] BUILD_DIR
#     --n N --steps S  grid and steps (default 512 100)
#     --ranks LIST     default 1,2,4
#     --where LIST     shm and/or net (default shm,net)
#     --rates LIST     net link rates (default none,100mbit)
#     --reps K         repetitions (default 1; the table takes the median)
#     --smoke          tiny sizes (ctest): 48 x 4, shm 1,2 ranks and net at
#                      2 hosts unshaped; exit 77 when the namespace cluster
#                      cannot be made
# Exit 0 when every job verified and printed its line.
set -uo pipefail
HERE=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
SRC=$(cd -- "$HERE/../.." && pwd -P)
NET=$SRC/tests/cluster-net/run

n=512 steps=100 ranks_list=1,2,4 where=shm,net rates=none,100mbit reps=1 smoke=
# seconds one run may take (the smoke's are short: a hang shows as its FAILED
# line and its output, within ctest's own timeout)
job_timeout_s=900
while (($#)); do
	case $1 in
	--n) n=$2; shift 2 ;;
	--steps) steps=$2; shift 2 ;;
	--ranks) ranks_list=$2; shift 2 ;;
	--where) where=$2; shift 2 ;;
	--rates) rates=$2; shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--smoke) smoke=1; shift ;;
	-h | --help) sed -n '2,30p' "${BASH_SOURCE[0]}"; exit 0 ;;
	-*) echo "swim_tables.sh: unknown option '$1'" >&2; exit 2 ;;
	*) break ;;
	esac
done
build=${1:?usage: bench/cluster/swim_tables.sh [options] BUILD_DIR}
build=$(cd -- "$build" && pwd -P)
ph=$build/tools/pagehome/pagehome
prog=$build/workloads/cluster/swim_dsm
[[ -x $ph && -x $prog ]] || { echo "swim_tables.sh: build $build first (pagehome, swim_dsm)" >&2; exit 2; }
mpi=$(cat "$build/bench/cluster/dsm-mpi" 2>/dev/null || echo auto)
if [[ -n $smoke ]]; then
	n=48 steps=4 ranks_list=1,2 where=shm,net rates=none reps=1 job_timeout_s=120
	"$NET" --check >/dev/null 2>&1 || { echo "SKIP: the namespace cluster cannot be made here"; exit 77; }
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/pagehome-swim-tables.XXXXXX")
trap 'rm -rf "$work"' EXIT
places=()
for w in ${where//,/ }; do
	if [[ $w == shm ]]; then
		places+=("shm")
	else
		for r in ${rates//,/ }; do places+=("net:$r"); done
	fi
done
if [[ $where == *net* ]] && ! "$NET" --check >/dev/null 2>&1; then
	echo "swim_tables.sh: the namespace cluster cannot be made here: shared memory only" >&2
	places=("shm")
fi

failed=0 job=0
# run WHERE RANKS CONFIG: one job, its result line and statistics files into $work
run() {
	local w=$1 r=$2 cfg=$3 place args=() envs=() out dir
	case $cfg in
	none) place=round-robin envs=(PAGEHOME_CLUSTER_MIGRATE=0) ;;
	block) place=block envs=(PAGEHOME_CLUSTER_MIGRATE=0) ;;
	migration) place=round-robin envs=(PAGEHOME_CLUSTER_MIGRATE=1) ;;
	private) place=round-robin envs=(PAGEHOME_CLUSTER_MIGRATE=1) args=(--private) ;;
	esac
	job=$((job + 1))
	dir=$work/job$job
	mkdir -p "$dir"
	envs+=(OMP_NUM_THREADS=1 "PAGEHOME_CLUSTER_STATS_FILE=$dir/rank%r.json")
	local cmd=(env "${envs[@]}" "$ph" cluster run -n "$r" --mpi "$mpi")
	if [[ $w == shm ]]; then
		out=$(timeout -k 5 "$job_timeout_s" "${cmd[@]}" -- "$prog" "$n" "$steps" "$place" "${args[@]}" --no-check </dev/null 2>&1)
	else
		out=$("$NET" --hosts "$r" --rate "${w#net:}" --timeout "$job_timeout_s" -- \
			"${cmd[@]}" -- "$prog" "$n" "$steps" "$place" "${args[@]}" --no-check </dev/null 2>&1)
	fi
	local line
	line=$(grep -m1 '^swim_dsm: N=' <<<"$out")
	if [[ -z $line ]] || ! grep -q '^verification: ok' <<<"$out"; then
		echo "FAILED: $w ranks=$r $cfg" >&2
		tail -15 <<<"$out" | sed 's/^/    /' >&2
		failed=1
		return
	fi
	echo "where=$w config=$cfg stats=$dir $line" >>"$work/results"
}

: >"$work/results"
for ((rep = 1; rep <= reps; rep++)); do
	for w in "${places[@]}"; do
		for r in ${ranks_list//,/ }; do
			[[ $w != shm && $r == 1 ]] && continue   # across hosts, 1 rank is the shm run
			for cfg in none block migration private; do
				run "$w" "$r" "$cfg"
			done
		done
	done
done
echo "swim_tables: N=$n steps=$steps, $reps repetition(s), ranks $ranks_list x 1 thread, $(nproc) CPU(s), MPI $mpi"
python3 "$HERE/swim_tables.py" "$work/results" || failed=1
exit $failed
