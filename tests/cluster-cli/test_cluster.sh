#!/usr/bin/env bash
# test_cluster.sh PAGEHOME DATA_DIR "MPI_STACKS" [CLUSTER_MPI] -- `pagehome cluster`:
# launcher command lines (--dry-run) for Open MPI, MPICH and srun, bad
# input, the merge of per-rank statistics (DATA_DIR: sample rank files),
# and, for each MPI built (MPI_STACKS: "openmpi;mpich"), real runs on this
# machine: exit status, the tunables in every rank, --report, `info`, and
# SIGTERM reaching the ranks.  CLUSTER_MPI: the MPI libpagehome_cluster is
# built with (its probe starts cluster mode and reports the arena).
set -uo pipefail
ph=${1:?usage: test_cluster.sh PAGEHOME DATA_DIR MPI_STACKS}
data=${2:?}
stacks=${3:-}
cluster_mpi=${4:-}
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# No input: MPICH's mpiexec forwards its stdin to rank 0 and dies of
# SIGPIPE (exit 141) when that rank has already ended, as `true` does, so
# a test run whose stdin is an open pipe would fail for the launcher's sake
exec </dev/null

# expect STATUS PATTERN -- cmd...: exit status and a pattern in stdout+stderr
expect() {
    local want=$1 pattern=$2
    shift 3
    local out rc
    out=$("$@" 2>&1)
    rc=$?
    if [ "$rc" -eq "$want" ] && grep -Eq -- "$pattern" <<<"$out"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        printf 'FAILED: %s\n  want exit %s and /%s/, got exit %s:\n%s\n' "$*" "$want" \
            "$pattern" "$rc" "$(head -20 <<<"$out")"
    fi
}
# refute PATTERN -- cmd...: exit 0 and PATTERN absent
refute() {
    local pattern=$1
    shift 2
    local out rc
    out=$("$@" 2>&1)
    rc=$?
    if [ "$rc" -eq 0 ] && ! grep -Eq -- "$pattern" <<<"$out"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        printf 'FAILED: %s\n  want exit 0 without /%s/, got exit %s:\n%s\n' "$*" "$pattern" \
            "$rc" "$(head -20 <<<"$out")"
    fi
}

# The dry runs see a fixed environment: no Slurm, no test-bed host files,
# launchers named by PAGEHOME_CLUSTER_LAUNCHER or found on a PATH we make.
bin=$tmp/bin
mkdir -p "$bin"
# clean [NAME=VALUE...] CMD...: CMD in that environment only
clean() { env -i PATH="$bin:/usr/bin:/bin" HOME="$tmp" "$@"; }
# run [NAME=VALUE...] ARGS...: pagehome cluster run ARGS there
run() {
    local vars=()
    while [[ $1 == [A-Z]*=* ]]; do
        vars+=("$1")
        shift
    done
    clean "${vars[@]}" "$ph" cluster run "$@"
}

# ---- Open MPI
expect 0 '^PAGEHOME_CLUSTER_PLACEMENT=block mpirun -n 4 (--oversubscribe )?(--allow-run-as-root )?--bind-to none -x PAGEHOME_CLUSTER_PLACEMENT ./prog a '"'b c'"'$' -- \
    run PAGEHOME_CLUSTER_LAUNCHER=mpirun -n 4 --mpi openmpi --placement block --dry-run -- ./prog a 'b c'
expect 0 'mpirun -n 2 --host h0,h1 (--allow-run-as-root )?--bind-to none --mca pml ucx --mca osc ucx --mca pml_ucx_tls any --mca pml_ucx_devices any ' -- \
    run PAGEHOME_CLUSTER_LAUNCHER=mpirun -n 2 --hosts h0,h1 --mpi openmpi --dry-run -- ./prog
expect 0 '--mca pml ob1 --mca osc pt2pt --mca btl self,vader,tcp -x OMP_NUM_THREADS ./prog$' -- \
    run PAGEHOME_CLUSTER_LAUNCHER=mpirun OMP_NUM_THREADS=2 -n 2 --hosts h0:1,h1:1 --mpi openmpi --transport tcp --dry-run -- ./prog
expect 0 '--mca btl self,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo ' -- \
    run PAGEHOME_CLUSTER_LAUNCHER=mpirun -n 2 --mpi openmpi --transport tcp --dry-run -- ./prog
expect 0 '^UCX_NET_DEVICES=lo mpirun .*--mca osc ucx .*-x UCX_NET_DEVICES ./prog$' -- \
    run PAGEHOME_CLUSTER_LAUNCHER=mpirun -n 2 --mpi openmpi --transport ucx --dry-run -- ./prog
expect 0 'mpirun -n 2 --hostfile '"$data"'/rank-0.json ' -- \
    run PAGEHOME_CLUSTER_LAUNCHER=mpirun -n 2 --hostfile "$data/rank-0.json" --mpi openmpi --dry-run -- ./prog
refute '--mca' -- run PAGEHOME_CLUSTER_LAUNCHER=mpirun -n 2 --mpi openmpi --dry-run -- ./prog
# a host file in the launcher's environment (the namespace test bed) means several hosts
expect 0 '--mca pml ucx' -- \
    run PAGEHOME_CLUSTER_LAUNCHER=mpirun OMPI_MCA_orte_default_hostfile=/x -n 2 --mpi openmpi --dry-run -- ./prog
# tunables: --set (checked against options.def when it has the name), the
# global --set, --report's per-rank files
expect 0 '^PAGEHOME_MOVE_RETRIES=5 PAGEHOME_SOME_NEW_TUNABLE=x mpirun .*-x PAGEHOME_MOVE_RETRIES -x PAGEHOME_SOME_NEW_TUNABLE ./prog$' -- \
    run PAGEHOME_CLUSTER_LAUNCHER=mpirun -n 2 --mpi openmpi --set move_retries=5 --set some_new_tunable=x --dry-run -- ./prog
expect 0 '^PAGEHOME_SEED=7 mpirun .*-x PAGEHOME_SEED ./prog$' -- \
    clean PAGEHOME_CLUSTER_LAUNCHER=mpirun  "$ph" --set seed=7 cluster run -n 2 --mpi openmpi --dry-run -- ./prog
expect 0 "^PAGEHOME_CLUSTER_STATS_FILE=$tmp/r.json.ranks/rank-%r.json mpirun .*-x PAGEHOME_CLUSTER_STATS_FILE ./prog\$" -- \
    run PAGEHOME_CLUSTER_LAUNCHER=mpirun -n 2 --mpi openmpi --report "$tmp/r.json" --dry-run -- ./prog
[ ! -e "$tmp/r.json.ranks" ] && pass=$((pass + 1)) ||
    { fail=$((fail + 1)); echo "FAILED: --dry-run made $tmp/r.json.ranks"; }
# launcher found on PATH: the Debian names first
printf '#!/bin/sh\nexit 0\n' >"$bin/mpirun.openmpi"
printf '#!/bin/sh\nexit 0\n' >"$bin/mpiexec.hydra"
printf '#!/bin/sh\nexit 0\n' >"$bin/srun"
chmod +x "$bin"/*
expect 0 "^$bin/mpirun.openmpi -n 2 " -- run -n 2 --mpi openmpi --dry-run -- ./prog
expect 0 "^$bin/mpiexec.hydra -n 2 " -- run -n 2 --mpi mpich --dry-run -- ./prog

# ---- MPICH
expect 0 '^PAGEHOME_CLUSTER_PLACEMENT=cyclic:4 mpiexec -n 3 -hosts h0,h1 -genv OMP_NUM_THREADS 1 -genv PAGEHOME_CLUSTER_PLACEMENT cyclic:4 ./prog -x$' -- \
    run PAGEHOME_CLUSTER_LAUNCHER=mpiexec OMP_NUM_THREADS=1 -n 3 --hosts h0,h1 --mpi mpich --placement cyclic:4 --dry-run -- ./prog -x
expect 0 '^UCX_TLS=tcp,self UCX_NET_DEVICES=lo mpiexec -n 2 -genv UCX_TLS tcp,self -genv UCX_NET_DEVICES lo ./prog$' -- \
    run PAGEHOME_CLUSTER_LAUNCHER=mpiexec -n 2 --mpi mpich --transport tcp --dry-run -- ./prog
expect 0 '^mpiexec -n 2 -f /etc/hostname -genv UCX_TLS rc ./prog$' -- \
    run PAGEHOME_CLUSTER_LAUNCHER=mpiexec UCX_TLS=rc -n 2 --mpi mpich --hostfile /etc/hostname --transport tcp --dry-run -- ./prog

# ---- Slurm: srun inside a job (SLURM_JOB_ID and srun on PATH), or asked for
# (Open MPI's transport as OMPI_MCA_ variables, srun passes the environment;
# this srun lists no MPI plugin, so none is named)
expect 0 "^OMPI_MCA_pml=ucx OMPI_MCA_osc=ucx OMPI_MCA_pml_ucx_tls=any OMPI_MCA_pml_ucx_devices=any $bin/srun --ntasks=4 --nodelist=n1,n2 --cpu-bind=none --export=ALL --quit-on-interrupt --kill-on-bad-exit=1 ./prog 1\$" -- \
    run SLURM_JOB_ID=42 -n 4 --hosts n1,n2 --mpi openmpi --dry-run -- ./prog 1
expect 0 "^$bin/srun --ntasks=2 --nodefile=/etc/hostname --cpu-bind=none --export=ALL --quit-on-interrupt --kill-on-bad-exit=1 ./prog\$" -- \
    run -n 2 --launcher srun --mpi mpich --hostfile /etc/hostname --dry-run -- ./prog
# -n defaults to the job's task count inside a Slurm job (srun launching)
expect 0 "^$bin/srun --ntasks=3 --cpu-bind=none --export=ALL --quit-on-interrupt --kill-on-bad-exit=1 ./prog\$" -- \
    run SLURM_JOB_ID=42 SLURM_NTASKS=3 --mpi mpich --dry-run -- ./prog
expect 2 '-n N \(the number of ranks\) is required' -- \
    run SLURM_JOB_ID=42 SLURM_NTASKS=3 --launcher mpirun --dry-run -- ./prog
expect 2 '-n N \(the number of ranks\) is required' -- \
    run SLURM_JOB_ID=42 SLURM_NTASKS=many --mpi mpich --dry-run -- ./prog
# the MPI plugin, from what `srun --mpi=list` offers: PMIx for Open MPI,
# PMI-2 for MPICH; the site's SLURM_MPI_TYPE kept; a job on one node is shm;
# a user's OMPI_MCA_ variable kept
cat >"$tmp/srun-plugins" <<'EOS'
#!/bin/sh
[ "$1" = "--mpi=list" ] && printf 'MPI plugin types are...\n\tpmix\n\tnone\n\tpmi2\nspecific pmix plugin versions available: pmix_v4\n' >&2
exit 0
EOS
printf '#!/bin/sh\n[ "$1" = "--mpi=list" ] && printf "MPI plugin types are...\\n\\tnone\\n" >&2\nexit 0\n' \
    >"$tmp/srun-none"
chmod +x "$tmp/srun-plugins" "$tmp/srun-none"
expect 0 "^$tmp/srun-plugins --ntasks=2 --cpu-bind=none --export=ALL --quit-on-interrupt --kill-on-bad-exit=1 --mpi=pmix ./prog\$" -- \
    run PAGEHOME_CLUSTER_LAUNCHER=$tmp/srun-plugins SLURM_JOB_ID=42 SLURM_JOB_NUM_NODES=1 -n 2 --mpi openmpi --dry-run -- ./prog
expect 0 "^$tmp/srun-plugins --ntasks=2 --cpu-bind=none --export=ALL --quit-on-interrupt --kill-on-bad-exit=1 --mpi=pmi2 ./prog\$" -- \
    run PAGEHOME_CLUSTER_LAUNCHER=$tmp/srun-plugins SLURM_JOB_ID=42 -n 2 --mpi mpich --dry-run -- ./prog
expect 0 "^$tmp/srun-plugins --ntasks=2 --cpu-bind=none --export=ALL --quit-on-interrupt --kill-on-bad-exit=1 ./prog\$" -- \
    run PAGEHOME_CLUSTER_LAUNCHER=$tmp/srun-plugins SLURM_JOB_ID=42 SLURM_MPI_TYPE=pmix -n 2 --mpi mpich --dry-run -- ./prog
expect 0 "^$tmp/srun-none --ntasks=2 --cpu-bind=none --export=ALL --quit-on-interrupt --kill-on-bad-exit=1 ./prog\$" -- \
    run PAGEHOME_CLUSTER_LAUNCHER=$tmp/srun-none SLURM_JOB_ID=42 -n 2 --mpi mpich --dry-run -- ./prog
expect 0 "^OMPI_MCA_osc=ucx OMPI_MCA_pml_ucx_tls=any OMPI_MCA_pml_ucx_devices=any $tmp/srun-plugins --ntasks=2 --cpu-bind=none --export=ALL --quit-on-interrupt --kill-on-bad-exit=1 --mpi=pmix ./prog\$" -- \
    run PAGEHOME_CLUSTER_LAUNCHER=$tmp/srun-plugins SLURM_JOB_ID=42 SLURM_JOB_NUM_NODES=2 OMPI_MCA_pml=ob1 -n 2 --mpi openmpi --dry-run -- ./prog
expect 0 "^$bin/mpiexec.hydra -n 2 " -- \
    run SLURM_JOB_ID=42 -n 2 --launcher mpirun --mpi mpich --dry-run -- ./prog

# ---- bad input
expect 2 'put -- before the program' -- run -n 2 ./prog
expect 2 'no program given' -- run -n 2 --
expect 2 '-n needs a number of ranks >= 1 \(got .0.\)' -- run -n 0 -- ./prog
expect 2 '-n needs a number of ranks >= 1 \(got .-3.\)' -- run -n -3 -- ./prog
expect 2 '-n needs a number of ranks >= 1 \(got .two.\)' -- run -n two -- ./prog
expect 2 '-n needs a value' -- run -n
expect 2 '-n N \(the number of ranks\) is required' -- run -- ./prog
expect 2 "--mpi must be openmpi, mpich or auto \(got 'lam'\)" -- run -n 2 --mpi lam -- ./prog
expect 2 "--transport must be auto, shm, tcp or ucx \(got 'ib'\)" -- run -n 2 --transport ib -- ./prog
expect 2 "--launcher must be auto, mpirun or srun" -- run -n 2 --launcher aprun -- ./prog
expect 2 '--hostfile /nonexistent/hosts: No such file' -- run -n 2 --hostfile /nonexistent/hosts -- ./prog
expect 2 'give --hosts or --hostfile, not both' -- run -n 2 --hosts a --hostfile /etc/hostname -- ./prog
expect 2 '--hosts needs a list' -- run -n 2 --hosts '' -- ./prog
expect 2 'move_retries="lots" is invalid' -- run -n 2 --set move_retries=lots -- ./prog
expect 2 "'bad-name' is not a tunable name" -- run -n 2 --set bad-name=1 -- ./prog
expect 2 '--set needs NAME=VALUE' -- run -n 2 --set novalue -- ./prog
expect 2 "unknown option '--frob'" -- run -n 2 --frob -- ./prog
expect 2 "unknown subcommand 'walk'" -- clean "$ph" cluster walk
expect 2 'usage: pagehome cluster run' -- clean "$ph" cluster
expect 0 'usage: pagehome cluster run' -- clean "$ph" help cluster
expect 2 "unexpected argument 'extra'" -- clean "$ph" cluster info extra
expect 1 'cluster info: .*cluster-probe-mpich not found' -- \
    clean PAGEHOME_CLUSTER_PROBE=/nonexistent/cluster-probe-mpich  "$ph" cluster info --mpi mpich
expect 127 'cannot execute /nonexistent/mpirun' -- \
    run PAGEHOME_CLUSTER_LAUNCHER=/nonexistent/mpirun -n 1 --mpi openmpi -- true

# ---- the merge of per-rank files
expect 0 '^3 rank\(s\) merged into' -- clean "$ph" cluster merge -o "$tmp/m.json" \
    "$data/rank-0.json" "$data/stats.rank1.json" "$data/rank-2.json" "$data/rank-3.json" "$data/rank-4.json"
expect 0 'merge ok' -- python3 - "$tmp/m.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
c, r = d["cluster"], d["ranks"]
t = c["totals"]
assert d["pagehome_cluster_stats"] == 1
assert [x["rank"] for x in r] == [0, 1, 3], [x["rank"] for x in r]
assert r[1]["host"] == "h1" and r[1]["rank"] == 1          # rank from the file name
assert c["ranks_reported"] == 3 and c["missing_ranks"] == []
bad = sorted(u["file"].rsplit("/", 1)[1] for u in c["unreadable"])
assert bad == ["rank-2.json", "rank-4.json"], bad
assert t["faults"] == {"read_miss": 201, "write_miss": 100, "read_miss_ns": 112300.5}, t["faults"]
assert isinstance(t["faults"]["read_miss"], int)
assert t["barriers"] == 303 and t["bytes_fetched"] == 1183744
assert t["locks"] == {"acquired": 5, "handover_ns": 4000.25}, t["locks"]
assert t["arena"] == {"home_pages": 16384} and t["extra"] == {"only_here": 5}
for k in ("rank", "pid", "version", "config", "node_id", "host", "per_page"):
    assert k not in t, k
print("merge ok")
EOF
# the DSM's own layout: the rank inside "cluster", which is a description
expect 0 '^2 rank\(s\) merged into' -- clean "$ph" cluster merge -o "$tmp/d.json" "$data/dsm-layout.json" "$data/rank-0.json"
expect 0 'dsm layout ok' -- python3 - "$tmp/d.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
t = d["cluster"]["totals"]
assert [x["rank"] for x in d["ranks"]] == [0, 2]
assert d["ranks"][1]["cluster"]["host"] == "h2"
assert "cluster" not in t and "intervals" not in t, t
assert t["faults"] == {"fault_read_remote": 7, "fault_write_remote": 3, "read_miss": 120,
                       "write_miss": 40, "read_miss_ns": 70800.5}, t["faults"]
assert t["sync"] == {"barriers": 101} and t["barriers"] == 101
print("dsm layout ok")
EOF
expect 1 '^0 rank\(s\) merged' -- clean "$ph" cluster merge -o "$tmp/m0.json" "$data/rank-4.json"
expect 2 'cluster merge: -o FILE is required' -- clean "$ph" cluster merge "$data/rank-0.json"
expect 2 'no per-rank files given' -- clean "$ph" cluster merge -o "$tmp/x.json"
expect 1 'cluster merge: /nonexistent.json: No such file' -- clean "$ph" cluster merge -o "$tmp/x.json" /nonexistent.json
expect 1 'cannot write /nonexistent/dir/m.json' -- clean "$ph" cluster merge -o /nonexistent/dir/m.json "$data/rank-0.json"

# ---- a launcher that dies of a signal: the same exit status as the
# launcher's own death would give a shell (128 + signal), and a message
# naming it (the launcher says nothing itself); an injected failure, the
# launcher being a script that sends itself SIGPIPE
mkdir -p "$tmp/deadbin"
printf '#!/bin/sh\nkill -PIPE $$\nsleep 5\n' >"$tmp/deadbin/mpiexec.hydra"
chmod +x "$tmp/deadbin/mpiexec.hydra"
expect 141 "mpiexec.hydra was ended by signal 13 " -- \
    env PATH="$tmp/deadbin:$PATH" "$ph" cluster run -n 2 --mpi mpich -- true

# ---- real runs on this machine, with each MPI built
# A rank program that does what the DSM's statistics writer does: replace
# %r in PAGEHOME_CLUSTER_STATS_FILE by its rank and write one JSON object.
cat >"$tmp/rankprog" <<'EOF'
#!/bin/sh
r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${SLURM_PROCID:-?}}}
echo "rank $r placement=$PAGEHOME_CLUSTER_PLACEMENT retries=$PAGEHOME_MOVE_RETRIES"
[ -n "$PAGEHOME_CLUSTER_STATS_FILE" ] || exit 0
[ "$r" = 1 ] && [ -n "$SKIP_RANK1" ] && exit 0
f=$(echo "$PAGEHOME_CLUSTER_STATS_FILE" | sed "s/%r/$r/")
printf '{"faults": {"read_miss": %d}, "barriers": 10, "host": "%s"}\n' $((r + 1)) "$(hostname)" >"$f"
EOF
chmod +x "$tmp/rankprog"
for stack in ${stacks//;/ }; do
    m=(--mpi "$stack")
    expect 0 "^rank 1 placement=block retries=4\$" -- \
        "$ph" cluster run -n 2 "${m[@]}" --placement block --set move_retries=4 -- "$tmp/rankprog"
    expect 3 '' -- "$ph" cluster run -n 2 "${m[@]}" -- sh -c 'exit 3'
    expect 0 'rank 2 placement=cyclic' -- \
        "$ph" cluster run -n 3 "${m[@]}" --placement cyclic --report "$tmp/$stack.json" -- "$tmp/rankprog"
    expect 0 "report ok" -- python3 - "$tmp/$stack.json" "$stack" <<'EOF'
import json, os, sys
d = json.load(open(sys.argv[1]))
c = d["cluster"]
assert c["ranks"] == 3 and c["ranks_reported"] == 3 and c["missing_ranks"] == [], c
assert c["mpi"] == sys.argv[2] and c["placement"] == "cyclic" and c["exit_status"] == 0, c
assert c["program"].endswith("rankprog") and c["command"][-1].endswith("rankprog")
assert c["totals"] == {"faults": {"read_miss": 6}, "barriers": 30}, c["totals"]
assert [r["rank"] for r in d["ranks"]] == [0, 1, 2]
assert not os.path.exists(sys.argv[1] + ".ranks")
print("report ok")
EOF
    expect 0 '2 of 3 ranks wrote statistics' -- \
        env SKIP_RANK1=1 "$ph" cluster run -n 3 "${m[@]}" --report "$tmp/$stack-1.json" -- "$tmp/rankprog"
    expect 0 '"missing_ranks": \[$' -- cat "$tmp/$stack-1.json"
    expect 0 'no rank wrote statistics' -- "$ph" cluster run -n 2 "${m[@]}" --report "$tmp/$stack-0.json" -- true
    expect 0 '"ranks_reported": 0' -- cat "$tmp/$stack-0.json"
    name=$([ "$stack" = mpich ] && echo MPICH || echo "Open MPI")
    expect 0 "ranks: 2 on 1 host\(s\)" -- "$ph" cluster info "${m[@]}"
    expect 0 "^mpi: $name" -- "$ph" cluster info "${m[@]}"
    expect 0 '^rma: ok .* median [0-9.]+ us' -- "$ph" cluster info -n 3 "${m[@]}"
    expect 0 '^arena: ' -- "$ph" cluster info -n 1 "${m[@]}"
    if [ "$stack" = "$cluster_mpi" ]; then
        # the DSM started on every rank: its arena, page, mechanism, placement
        expect 0 '^arena: 0x[0-9a-f]+, 8589934592 bytes \(8\.0 GiB\) at the same address in every rank; page 4096 bytes; faults by (userfaultfd|userfaultfd-user|sigsegv) \(every rank\); default placement block; ' -- \
            "$ph" cluster info "${m[@]}"
        expect 0 '^arena: 0x[0-9a-f]+, 1073741824 bytes \(1\.0 GiB\) .* faults by sigsegv \(every rank\); default placement cyclic:2; ' -- \
            "$ph" cluster info -n 3 "${m[@]}" --placement cyclic:2 --set cluster_fault=sigsegv --set cluster_arena_size=1G
        # a default placement the DSM refuses (rank 5 of 2): said, exit 1
        expect 1 '^arena: 0x[0-9a-f]+, .* default placement node:5 \(refused: .*rank 5 does not exist' -- \
            "$ph" cluster info "${m[@]}" --placement node:5
    elif [ -n "$cluster_mpi" ]; then
        expect 0 "^arena: libpagehome_cluster is built with the other MPI \\($cluster_mpi\\)" -- \
            "$ph" cluster info "${m[@]}"
    fi
    # SIGTERM to pagehome reaches the launcher, which stops the ranks
    marker=pagehome-cluster-test-$$-$stack
    "$ph" cluster run -n 2 "${m[@]}" -- bash -c "exec -a $marker sleep 60" >/dev/null 2>&1 &
    pid=$!
    # waits generous enough for a loaded machine (30 s to start, 10 s for
    # pagehome and then the ranks to be gone): only a rank that never ends
    # fails this
    for _ in $(seq 1 300); do
        [ "$(pgrep -fc "^$marker")" = 2 ] && break
        sleep 0.1
    done
    started=$(pgrep -fc "^$marker")
    kill -TERM "$pid"
    for _ in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    for _ in $(seq 1 100); do
        [ "$(pgrep -fc "^$marker")" = 0 ] && break
        sleep 0.1
    done
    if [ "$started" = 2 ] && ! kill -0 "$pid" 2>/dev/null && [ "$(pgrep -fc "^$marker")" = 0 ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAILED: $stack: SIGTERM to pagehome cluster run: ranks started $started, left $(pgrep -fc "^$marker")"
        left=$(pgrep -f "^$marker")
        [ -z "$left" ] || kill -KILL $left
        kill -KILL "$pid" 2>/dev/null
    fi
    wait "$pid" 2>/dev/null
done

echo "cluster cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
