#!/usr/bin/env bash
# test_slurm.sh PAGEHOME MPI TEST_BASIC TEST_STRESS [PLAIN_PROG ARGS...]
#
# `pagehome cluster run` and `pagehome run` under a real Slurm, as users
# on a cluster start them: inside `salloc` and `sbatch` jobs, where the
# launcher is srun.  Run by slurm_bed.sh (SLURM_CONF names a private
# one-node Slurm whose site default is no MPI plugin).  MPI: the MPI of
# libpagehome_cluster in this build (openmpi or mpich), which the test
# programs link.  PLAIN_PROG ("-" or absent: not run): a program that
# knows nothing of pagehome or MPI, for transparent mode's per-rank
# reports under srun.
#
# Checks: the ranks meet (one DSM, not N single-rank ones) at 2 and 3
# ranks and under sbatch; the MPI plugin srun was given; the merged
# report; `cluster info`; one SIGINT to `pagehome cluster run` ends the
# job and leaves no rank, and so does a rank that exits with an error; srun without the plugin is refused by every rank
# with the reason; `pagehome run --report` writes one file per task.
set -uo pipefail
ph=${1:?usage: test_slurm.sh PAGEHOME MPI TEST_BASIC TEST_STRESS [PLAIN_PROG ARGS...]}
mpi=${2:?}
basic=${3:?}
stress=${4:?}
shift 4
plain=("${@:--}")
[ -n "${SLURM_CONF:-}" ] || { echo "test_slurm.sh: run it through slurm_bed.sh" >&2; exit 2; }
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
exec </dev/null
case "$mpi" in
    openmpi) plugin=pmix ;;
    mpich) plugin=pmi2 ;;
    *) echo "test_slurm.sh: MPI must be openmpi or mpich (got '$mpi')" >&2; exit 2 ;;
esac

ok() { pass=$((pass + 1)); }
bad() {
    fail=$((fail + 1))
    printf 'FAILED: %s\n' "$1"
    [ -n "${2:-}" ] && head -n 25 <<<"$2" | sed 's/^/  | /'
}
# check NAME STATUS WANT OUT PATTERN...: status and every pattern in OUT
check() {
    local name=$1 rc=$2 want=$3 out=$4
    shift 4
    if [ "$rc" -ne "$want" ]; then
        bad "$name: exit $rc, want $want" "$out"
        return
    fi
    for re in "$@"; do
        if ! grep -Eq -- "$re" <<<"$out"; then
            bad "$name: no /$re/ in the output" "$out"
            return
        fi
    done
    ok
}

# ---- salloc: 2 ranks, -v shows the command, --report merges both ranks
out=$(timeout 120 salloc -n 2 "$ph" cluster run -n 2 -v --report "$tmp/r.json" -- "$basic" 2>&1)
check "salloc -n 2 cluster run" $? 0 "$out" \
    "srun --ntasks=2 .*--quit-on-interrupt --kill-on-bad-exit=1 --mpi=$plugin " \
    'PASS basic \(42 checks on rank 0, 0 failures in all\)'
n=$(grep -c 'PASS basic' <<<"$out")
[ "$n" -eq 1 ] && ok || bad "2 ranks made $n DSM jobs (PASS lines), want 1" "$out"
if python3 - "$tmp/r.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
c = d["cluster"]
assert c["launcher"] == "srun", c["launcher"]
assert c["ranks"] == 2, c["ranks"]
assert len(d["ranks"]) == 2, len(d["ranks"])
assert "--quit-on-interrupt" in c["command"], c["command"]
EOF
then ok; else bad "the merged report of the salloc run" "$(cat "$tmp/r.json" 2>&1)"; fi

# ---- 3 ranks (not a power of two), the seeded stress against its reference
out=$(timeout 240 salloc -n 3 "$ph" cluster run -n 3 -- "$stress" 2 block 2>&1)
check "salloc -n 3 cluster run stress" $? 0 "$out" '^PASS'

# ---- sbatch: a batch script, as most jobs are (no -n: the job's tasks)
cat >"$tmp/job.sh" <<EOF
#!/bin/sh
exec "$ph" cluster run -- "$basic"
EOF
chmod +x "$tmp/job.sh"
out=$(timeout 120 sbatch --wait -n 2 -o "$tmp/job.out" "$tmp/job.sh" 2>&1)
rc=$?
check "sbatch --wait" "$rc" 0 "$out$(cat "$tmp/job.out" 2>/dev/null)" \
    'PASS basic \(42 checks on rank 0, 0 failures in all\)'

# ---- cluster info through srun (PH_TEST_CLUSTER_INFO=0: this build made
# no probe for its MPI, as sanitizer builds)
if [ "${PH_TEST_CLUSTER_INFO:-1}" = 1 ]; then
    out=$(timeout 120 salloc -n 2 "$ph" cluster info -n 2 -v 2>&1)
    check "salloc cluster info" $? 0 "$out" "srun --ntasks=2 .*--mpi=$plugin " \
        '^ranks: 2 on 1 host' '^arena: 0x[0-9a-f]+, [0-9]+ bytes'
fi

# ---- one SIGINT ends the job (srun alone would only print the tasks'
# states), and no rank is left
mark=$((300 + RANDOM % 600))
timeout 120 salloc -n 2 sh -c '"$0" cluster run -n 2 -- sleep '"$mark"' & p=$!
    sleep 2; kill -INT $p; wait $p' "$ph" >"$tmp/int.out" 2>&1
rc=$?
if [ "$rc" -eq 130 ] || [ "$rc" -eq 1 ]; then ok; else bad "SIGINT: exit $rc, want 130" "$(cat "$tmp/int.out")"; fi
left=0
for _ in $(seq 50); do
    pgrep -f "^sleep $mark\$" >/dev/null || { left=0; break; }
    left=1
    sleep 0.1
done
if [ $left -eq 0 ]; then ok; else bad "SIGINT left ranks running" "$(pgrep -af "sleep $mark")"; pkill -f "^sleep $mark\$"; fi

# ---- a rank that fails ends the job (srun alone would let the other
# wait for it until the time limit)
mark=$((300 + RANDOM % 600))
t0=$(date +%s)
out=$(timeout 120 salloc -n 2 "$ph" cluster run -n 2 -- sh -c \
    '[ "$SLURM_PROCID" = 1 ] && exit 3; exec sleep '"$mark" 2>&1)
rc=$? took=$(( $(date +%s) - t0 ))
if [ "$rc" -ne 0 ] && [ "$took" -lt 60 ]; then ok; else
    bad "rank 1 exited 3: the job ended with $rc after ${took} s, want non-zero at once" "$out"; fi
if pgrep -f "^sleep $mark\$" >/dev/null; then
    bad "a failed rank left the other running" "$(pgrep -af "sleep $mark")"; pkill -f "^sleep $mark\$"
else ok; fi

# ---- srun without the MPI plugin: every rank alone; cluster mode refuses
# (MPICH starts singletons, which the DSM names; Open MPI aborts itself)
out=$(timeout 120 salloc -n 2 srun -n 2 --mpi=none "$basic" 2>&1)
rc=$?
if [ "$mpi" = mpich ]; then
    check "srun --mpi=none" "$rc" 1 "$out" \
        'SLURM_PROCID=0 of 2 processes, but MPI sees 1' 'SLURM_PROCID=1 of 2 processes'
else
    [ "$rc" -ne 0 ] && ok || bad "srun --mpi=none: exit 0 (two single-rank jobs?)" "$out"
fi
grep -q 'PASS basic' <<<"$out" && bad "srun --mpi=none: a rank ran the test alone" "$out" || ok

# ---- transparent mode: one report per task of srun
if [ "${plain[0]}" != "-" ]; then
    out=$(cd "$tmp" && timeout 120 salloc -n 2 srun -n 2 "$ph" run --report "$tmp/t.json" -- \
        "${plain[@]}" 2>&1)
    check "srun -n 2 pagehome run --report" $? 0 "$out" '2 processes of one job \(SLURM_PROCID\): each writes its own'
    for r in 0 1; do
        if python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$tmp/t.rank-$r.json" \
            2>/dev/null; then ok; else bad "no report t.rank-$r.json" "$(ls "$tmp")"; fi
    done
    [ ! -e "$tmp/t.json" ] && ok || bad "t.json written beside the per-rank reports"
    # srun's MPI plugins give a rank variable of their own (--mpi=pmix:
    # PMIX_RANK without a size), which must not make rank 0 think it is alone
    for p in pmix pmi2; do
        out=$(cd "$tmp" && timeout 120 salloc -n 2 srun -n 2 --mpi=$p "$ph" run \
            --report "$tmp/t-$p.json" -- "${plain[@]}" 2>&1)
        check "srun --mpi=$p pagehome run --report" $? 0 "$out" '2 processes of one job'
        if [ -e "$tmp/t-$p.rank-0.json" ] && [ -e "$tmp/t-$p.rank-1.json" ] &&
            [ ! -e "$tmp/t-$p.json" ]; then ok; else bad "srun --mpi=$p: reports $(ls "$tmp" | grep "t-$p" | tr '\n' ' ')"; fi
    done
fi

echo "cluster slurm ($mpi): $pass passed, $fail failed"
[ "$fail" -eq 0 ]
