#!/usr/bin/env bash
# bench/cluster/run.sh -- cluster mode's benchmarks: the raw MPI operations
# (bench_mpi_rma) and the hand-written MPI Laplace (laplace_mpi), and the
# DSM's own microbenchmarks (bench_dsm_ops) and Laplace (laplace_dsm; the
# marked section below), on shared memory (both MPI stacks, 1, 2, 4 ranks) and
# across the namespace cluster (tests/cluster-net/run) at 100 Mbit/s,
# 1 Gbit/s and unshaped.  Every run goes through `pagehome cluster run`.
# Prints a table (table.py): per measurement the median over --reps
# repetitions; where a DSM line and its MPI baseline come from the same
# repetition, the median of their per-repetition ratios.  See
# bench/README.md, "Cluster".
#
#   bench/cluster/run.sh [options] BUILD_DIR
#     --reps N           repetitions of every job (default 3)
#     --mpi LIST         openmpi,mpich (default: both, those built)
#     --where LIST       shm and/or net (default shm,net)
#     --rates LIST       100mbit,1gbit,none (default all three)
#     --ranks LIST       1,2,4 (default)
#     --iters N          bench_mpi_rma iterations (default 1000)
#     --dsm-iters N      bench_dsm_ops operations per sample (default 200;
#                        it takes 7 samples and measures its own raw MPI
#                        operations in the same process)
#     --grid N --steps K Laplace size and iterations (default 1024 100,
#                        paper 002's Table 1)
#     --transport T      pagehome cluster --transport for the net runs
#                        (default auto: Open MPI on UCX)
#     --out FILE         keep the raw lines (default: a temporary file)
#     --smoke            one quick pass (ctest): shm, the first MPI, 2 ranks,
#                        50 iterations, a 128x128 grid, 1 repetition
# Exit status 0 when every job produced its lines; a job that fails is
# reported as FAILED (its output is shown) and the status is 1.
set -uo pipefail

HERE=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
SRC=$(cd -- "$HERE/../.." && pwd -P)
NET=$SRC/tests/cluster-net/run

reps=3 mpis= where=shm,net rates=100mbit,1gbit,none ranks_list=1,2,4
iters=1000 dsm_iters=200 grid=1024 steps=100 transport=auto out= smoke=
while (($#)); do
	case $1 in
	--reps) reps=$2; shift 2 ;;
	--mpi) mpis=$2; shift 2 ;;
	--where) where=$2; shift 2 ;;
	--rates) rates=$2; shift 2 ;;
	--ranks) ranks_list=$2; shift 2 ;;
	--iters) iters=$2; shift 2 ;;
	--dsm-iters) dsm_iters=$2; shift 2 ;;
	--grid) grid=$2; shift 2 ;;
	--steps) steps=$2; shift 2 ;;
	--transport) transport=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--smoke) smoke=1; shift ;;
	-h | --help) sed -n '2,30p' "${BASH_SOURCE[0]}"; exit 0 ;;
	-*) echo "run.sh: unknown option '$1'" >&2; exit 2 ;;
	*) break ;;
	esac
done
build=${1:?usage: bench/cluster/run.sh [options] BUILD_DIR}
build=$(cd -- "$build" && pwd -P)
ph=$build/tools/pagehome/pagehome
[[ -x $ph ]] || { echo "run.sh: $ph is not built" >&2; exit 2; }

if [[ -z $mpis ]]; then
	for s in openmpi mpich; do
		[[ -x $build/bench/cluster/bench_mpi_rma-$s ]] && mpis+=${mpis:+,}$s
	done
fi
[[ -n $mpis ]] || { echo "run.sh: no MPI benchmark is built (libopenmpi-dev, libmpich-dev)" >&2; exit 77; }
if [[ -n $smoke ]]; then
	reps=1 mpis=${mpis%%,*} where=shm ranks_list=2 iters=50 dsm_iters=20 grid=128 steps=10
fi

# ---- the DSM's programs ------------------------------------------------------
# Cluster mode's own benchmarks print the same lines as their baselines --
# bench_dsm_ops "cluster-bench op=OP impl=dsm mpi=M ... median_us= p90_us="
# (ops read_miss, write_release, barrier, barrier_dirty with k=K,
# lock_handover; their baselines get, put, barrier, fop) and laplace_dsm
# "laplace ranks=R threads=T seconds=S checksum=C" -- and are skipped where
# not built (no libpagehome_cluster).  libpagehome_cluster is built against
# one MPI (DSM_MPI, which the build writes to bench/cluster/dsm-mpi): only
# that stack runs them.  DSM_MICRO / DSM_LAPLACE point elsewhere.
DSM_MICRO=${DSM_MICRO:-$build/bench/cluster/bench_dsm_ops}
DSM_LAPLACE=${DSM_LAPLACE:-$build/workloads/cluster/laplace_dsm}
DSM_LAPLACE_ARGS=${DSM_LAPLACE_ARGS:-}   # e.g. a variant name before N ITERS
DSM_MPI=${DSM_MPI:-$(cat "$build/bench/cluster/dsm-mpi" 2>/dev/null)}
# -------------------------------------------------------------------------------

raw=${out:-$(mktemp "${TMPDIR:-/tmp}/pagehome-cluster-bench.XXXXXX")}
[[ -n $out ]] || trap 'rm -f "$raw"' EXIT
: >"$raw"
failed=0
ncpu=$(nproc)

# job TAGS DONE -- COMMAND...: runs it (in a process group of its own),
# appends every result line with TAGS in front; a job that printed no
# result line, or a failed verification, is FAILED.  DONE (an extended
# regular expression, or "") matches the program's last line: a job still
# running GRACE seconds after it is stopped (SIGTERM to its group; MPICH
# 4.0.2 over TCP with 3+ ranks hangs in MPI_Finalize, see
# tests/cluster-net/README.md) and noted with its exit status.
GRACE=${GRACE:-10}
job() {
	local tags=$1 done_re=$2 rc lines pid seen= f
	shift 3
	f=$(mktemp "${TMPDIR:-/tmp}/pagehome-cluster-job.XXXXXX")
	set -m
	"$@" >"$f" 2>&1 </dev/null &
	pid=$!
	set +m
	while kill -0 "$pid" 2>/dev/null; do
		sleep 0.5
		if [[ -n $done_re ]] && grep -Eq -- "$done_re" "$f"; then
			seen=${seen:-$SECONDS}
			if ((SECONDS - seen >= GRACE)); then
				kill -TERM -- "-$pid" 2>/dev/null
				sleep 2
				kill -KILL -- "-$pid" 2>/dev/null
			fi
		fi
	done
	wait "$pid"
	rc=$?
	lines=$(grep -E '^(cluster-bench op=|laplace ranks=)' "$f")
	if [[ -z $lines ]] || grep -q '^verification: FAILED' "$f"; then
		echo "FAILED ($rc): $tags: $*" >&2
		tail -15 "$f" | sed 's/^/    /' >&2
		failed=1
		rm -f "$f"
		return
	fi
	rm -f "$f"
	((rc == 0)) || tags+=" exit=$rc"
	sed "s|^|$tags |" <<<"$lines" >>"$raw"
}

# launch WHERE RATE MPI RANKS THREADS -- PROGRAM ARGS...: through pagehome
# cluster run, in the namespace cluster for WHERE=net (ranks = hosts)
launch() {
	local w=$1 rate=$2 m=$3 n=$4 t=$5
	shift 6
	if [[ $w == shm ]]; then
		OMP_NUM_THREADS=$t timeout -k 5 600 "$ph" cluster run -n "$n" --mpi "$m" -- "$@"
	else
		"$NET" --hosts "$n" --rate "$rate" --timeout "${NET_TIMEOUT:-300}" -- \
			env OMP_NUM_THREADS="$t" "$ph" cluster run -n "$n" --mpi "$m" \
			--transport "$transport" -- "$@"
	fi
}

threads_for() { # ranks -> OpenMP threads per rank (the CPUs shared out)
	local t=$((ncpu / $1))
	((t >= 1)) || t=1
	echo "$t"
}

places=()
for w in ${where//,/ }; do
	if [[ $w == shm ]]; then
		places+=("shm -")
	else
		for r in ${rates//,/ }; do places+=("net $r"); done
	fi
done
if [[ $where == *net* ]] && ! "$NET" --check 2>/dev/null; then
	echo "run.sh: the namespace cluster cannot run here (not root?): shared memory only" >&2
	places=("shm -")
fi

for ((rep = 1; rep <= reps; rep++)); do
	for m in ${mpis//,/ }; do
		rma=$build/bench/cluster/bench_mpi_rma-$m
		lap=$build/workloads/mpi/laplace_mpi-$m
		for place in "${places[@]}"; do
			read -r w rate <<<"$place"
			label=$([[ $w == shm ]] && echo shm || echo "net:$rate")
			for n in ${ranks_list//,/ }; do
				# across hosts, 1 rank is the shared-memory run
				[[ $w == net && $n == 1 ]] && continue
				t=$(threads_for "$n")
				tags="rep=$rep where=$label mpi=$m"
				if ((n >= 2)); then
					job "$tags" 'op=barrier' -- launch "$w" "$rate" "$m" "$n" 1 -- "$rma" --iters "$iters"
					if [[ $m == "$DSM_MPI" && -x $DSM_MICRO ]]; then
						job "$tags prog=bench_dsm_ops" "" -- launch "$w" "$rate" "$m" "$n" 1 -- "$DSM_MICRO" --iters "$dsm_iters"
					fi
				fi
				job "$tags prog=laplace_mpi" '^verification:' -- launch "$w" "$rate" "$m" "$n" "$t" -- "$lap" "$grid" "$steps"
				if [[ $m == "$DSM_MPI" && -x $DSM_LAPLACE ]]; then
					# shellcheck disable=SC2086 # DSM_LAPLACE_ARGS: words
					job "$tags prog=laplace_dsm" "" -- launch "$w" "$rate" "$m" "$n" "$t" -- \
						"$DSM_LAPLACE" $DSM_LAPLACE_ARGS "$grid" "$steps"
				fi
			done
		done
	done
done

echo "cluster benchmarks: $reps repetition(s), $ncpu CPU(s), $(uname -r); grid ${grid}x$grid, $steps iterations; $iters RMA iterations"
python3 "$HERE/table.py" "$raw"
exit $failed
