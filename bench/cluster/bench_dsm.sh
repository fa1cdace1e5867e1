#!/usr/bin/env bash
# bench/cluster/bench_dsm.sh -- the figures of bench/README.md "Cluster mode:
# the DSM": cluster mode's operations against the raw MPI operations (in one
# run, bench_dsm_ops) and the Laplace solver on the DSM (laplace_dsm) against
# the hand-written MPI one (laplace_mpi), alternating in each repetition, on
# shared memory with each MPI stack built, and over TCP loopback.
#
#   bench/cluster/bench_dsm.sh [options]
#     --build DIR        the Open MPI build tree (default build-dev, then build)
#     --mpich-build DIR  the MPICH build tree (default build-mpich, if present)
#     --laplace-mpi EXE  the hand-written MPI Laplace for the Open MPI build
#                        (default: DIR/workloads/mpi/laplace_mpi-openmpi or
#                        DIR/workloads/mpi/laplace_mpi, when built)
#     --laplace-mpi-mpich EXE   the same for MPICH
#     --reps N           repetitions (default 5)
#     --ops-iters N      operations per repetition of bench_dsm_ops (200)
#     --grid N --steps K Laplace size and iterations (1024 100: paper 002)
#     --threads T        OpenMP threads per rank for Laplace (default 1)
#     --tcp              also run over TCP (Open MPI tcp+pt2pt, MPICH UCX)
# Prints the tables; the Laplace ratio is the median of the per-repetition
# ratios laplace_dsm / laplace_mpi at the same rank count.
set -uo pipefail
HERE=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
SRC=$(cd -- "$HERE/../.." && pwd -P)
RUN=$SRC/tests/cluster/run.sh

build= mbuild= lmpi= lmpi_mpich= reps=5 iters=200 grid=1024 steps=100 threads=1 tcp=
while (($#)); do
    case $1 in
    --build) build=$2; shift 2 ;;
    --mpich-build) mbuild=$2; shift 2 ;;
    --laplace-mpi) lmpi=$2; shift 2 ;;
    --laplace-mpi-mpich) lmpi_mpich=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --ops-iters) iters=$2; shift 2 ;;
    --grid) grid=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --tcp) tcp=1; shift ;;
    *) echo "bench_dsm.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ -n "$build" ] || for d in build-dev build; do [ -d "$SRC/$d" ] && { build=$SRC/$d; break; }; done
[ -n "$mbuild" ] || { [ -d "$SRC/build-mpich" ] && mbuild=$SRC/build-mpich; }
find_lmpi() {  # build flavor
    for f in "$1/workloads/mpi/laplace_mpi-$2" "$1/workloads/mpi/laplace_mpi"; do
        [ -x "$f" ] && { echo "$f"; return; }
    done
}
[ -n "$lmpi" ] || lmpi=$(find_lmpi "$build" openmpi)
[ -n "$mbuild" ] && [ -z "$lmpi_mpich" ] && lmpi_mpich=$(find_lmpi "$mbuild" mpich)

raw=$(mktemp)
trap 'rm -f "$raw"' EXIT

stacks=("openmpi:$build:$lmpi")
[ -n "$mbuild" ] && [ -x "$mbuild/bench/cluster/bench_dsm_ops" ] && stacks+=("mpich:$mbuild:$lmpi_mpich")

wheres=(shm)
[ -n "$tcp" ] && wheres+=(tcp)
for st in "${stacks[@]}"; do
    IFS=: read -r flavor dir lm <<<"$st"
    mpx=mpirun
    [ "$flavor" = mpich ] && mpx=mpiexec.mpich
    for where in "${wheres[@]}"; do
        opts=()
        if [ "$where" = tcp ]; then
            if [ "$flavor" = openmpi ]; then
                opts=(--launcher-opts "--mca btl self,tcp --mca osc pt2pt --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo")
            else
                opts=(--env UCX_TLS=tcp,self --env UCX_NET_DEVICES=lo)
            fi
        fi
        echo "== $flavor $where: operations" >&2
        PH_MPI_FLAVOR=$flavor PH_MPIEXEC=$mpx "$RUN" "${opts[@]}" 2 \
            "$dir/bench/cluster/bench_dsm_ops" --iters "$iters" --reps "$reps" |
            sed -n "s/^cluster-bench /where=$where cluster-bench /p" >>"$raw"
        for rep in $(seq 1 "$reps"); do
            for n in 1 2 4; do
                echo "== $flavor $where: laplace rep $rep, $n rank(s)" >&2
                for prog in dsm mpi; do
                    if [ $prog = dsm ]; then
                        exe=$dir/workloads/cluster/laplace_dsm
                    else
                        exe=$lm
                        [ -n "$exe" ] || continue
                    fi
                    PH_MPI_FLAVOR=$flavor PH_MPIEXEC=$mpx OMP_NUM_THREADS=$threads \
                        "$RUN" "${opts[@]}" --env OMP_NUM_THREADS="$threads" "$n" "$exe" \
                        "$grid" "$steps" --no-check |
                        sed -n "s/^laplace /mpi=$flavor where=$where rep=$rep prog=laplace_$prog laplace /p" >>"$raw"
                done
            done
        done
    done
done

python3 - "$raw" <<'PY'
import statistics, sys
rows = []
for line in open(sys.argv[1]):
    d = {}
    for tok in line.split():
        if "=" in tok:
            k, v = tok.split("=", 1)
            d.setdefault(k, v)
    rows.append(d)
ops = [r for r in rows if "op" in r]
print("\noperations, 2 ranks (us: median over repetitions of each repetition's mean)")
print(f"{'mpi':8} {'where':5} {'operation':20} {'k':>3} {'dsm':>9} {'raw MPI':>9} {'ratio':>7} goal")
base = {"read_miss": "get", "write_release": "put", "barrier": "barrier",
        "barrier_dirty": "barrier", "lock_handover": "fop",
        "write_miss_release": None, "local_fault": None}
goals = {"read_miss": 2, "write_release": 3, "barrier": 5}
for r in ops:
    if r["impl"] != "dsm":
        continue
    b = base.get(r["op"])
    raw = None
    if b:
        m = [x for x in ops if x["impl"] == "mpi" and x["op"] == b and
             x["mpi"] == r["mpi"] and x["where"] == r["where"]]
        raw = float(m[0]["median_us"]) if m else None
    v = float(r["median_us"])
    ratio = f"{v / raw:7.2f}" if raw else "      -"
    g = goals.get(r["op"]) if r.get("k", "-") == "-" else None
    goal = ""
    if g and raw:
        goal = f"<= {g} " + ("met" if v / raw <= g else "NOT met")
    print(f"{r['mpi']:8} {r['where']:5} {r['op']:20} {r.get('k','-'):>3} {v:9.2f} "
          f"{(f'{raw:9.2f}' if raw else '        -')} {ratio} {goal}")
laps = [r for r in rows if "seconds" in r]
if laps:
    print("\nLaplace 1024x1024 x 100 (seconds: median over repetitions; ratio: median of "
          "per-repetition dsm/mpi)")
    print(f"{'mpi':8} {'where':5} {'ranks':>5} {'dsm':>8} {'mpi':>8} {'ratio':>7}  goal (4 ranks) / checksums")
    keys = sorted({(r["mpi"], r["where"], int(r["ranks"])) for r in laps})
    for mpi, where, n in keys:
        g = [r for r in laps if (r["mpi"], r["where"], int(r["ranks"])) == (mpi, where, n)]
        d = [float(r["seconds"]) for r in g if r["prog"] == "laplace_dsm"]
        m = [float(r["seconds"]) for r in g if r["prog"] == "laplace_mpi"]
        ratios = []
        for rep in {r["rep"] for r in g}:
            a = [float(r["seconds"]) for r in g if r["rep"] == rep and r["prog"] == "laplace_dsm"]
            b = [float(r["seconds"]) for r in g if r["rep"] == rep and r["prog"] == "laplace_mpi"]
            if a and b:
                ratios.append(a[0] / b[0])
        sums = {r["checksum"] for r in g}
        dm = f"{statistics.median(d):8.3f}" if d else "       -"
        mm = f"{statistics.median(m):8.3f}" if m else "       -"
        rt = statistics.median(ratios) if ratios else None
        goal = ""
        if n == 4 and rt is not None:
            goal = "<= 1.5 " + ("met" if rt <= 1.5 else "NOT met")
        print(f"{mpi:8} {where:5} {n:5} {dm} {mm} {(f'{rt:7.2f}' if rt else '      -')}  {goal} "
              f"{'checksums equal' if len(sums) == 1 else 'CHECKSUMS DIFFER: ' + ' '.join(sums)}")
PY
