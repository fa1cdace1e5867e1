#!/usr/bin/env bash
# slurm_bed.sh -- a private one-node Slurm for the length of one command.
#
#   slurm_bed.sh [--cpus N] -- COMMAND [ARGS...]
#
# Starts munged (its own key and socket), slurmctld and slurmd as root, all
# on 127.0.0.1, with their configuration, state, spool and logs in a fresh
# temporary directory and their two ports chosen among free ones; runs
# COMMAND with SLURM_CONF naming that configuration (so salloc, srun,
# sbatch, squeue and `pagehome cluster run` inside the job all use this
# Slurm and no other); then cancels every job, stops the daemons and
# removes the directory -- also when COMMAND fails or the script is killed.
#
# The node has N CPUs (default 8) whatever the machine has
# (SlurmdParameters=config_overrides), in one partition "test" that
# oversubscribes, so jobs of more ranks than cores run as they do under
# mpirun --oversubscribe.  The MPI plugins are the ones Debian's Slurm
# ships (pmix, pmi2); the site default (MpiDefault) is none, as in Slurm's
# own example configuration, so nothing chooses a plugin for the ranks
# but the command.
#
# Exit: COMMAND's status; 77 (with the reason) when the bed cannot start
# here: not root, Slurm or munge not installed, or the daemons did not
# come up (their logs are printed).
set -u

cpus=8
while [ $# -gt 0 ]; do
    case "$1" in
        --cpus) cpus=$2; shift 2 ;;
        --) shift; break ;;
        *) echo "usage: slurm_bed.sh [--cpus N] -- COMMAND [ARGS...]" >&2; exit 2 ;;
    esac
done
[ $# -ge 1 ] || { echo "usage: slurm_bed.sh [--cpus N] -- COMMAND [ARGS...]" >&2; exit 2; }

skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "the Slurm test bed runs its daemons as root"
for b in munged slurmctld slurmd srun salloc sbatch sinfo scancel; do
    command -v "$b" >/dev/null 2>&1 || skip "$b not installed (Debian: slurmd slurmctld slurm-client munge)"
done

bed=$(mktemp -d "${TMPDIR:-/tmp}/ph-slurm.XXXXXX")
chmod 0755 "$bed"
mkdir -p "$bed/state" "$bed/spool" "$bed/log" "$bed/munge"
chmod 0700 "$bed/munge"

stop_bed() {
    local rc=$?
    if [ -f "$bed/slurm.conf" ]; then
        SLURM_CONF=$bed/slurm.conf scancel --full --quiet --partition=test 2>/dev/null
        # the jobs' steps end first (scancel), then the daemons
        local pids=""
        for f in slurmd slurmctld; do
            [ -f "$bed/$f.pid" ] && pids="$pids $(cat "$bed/$f.pid")"
        done
        for _ in $(seq 30); do
            pgrep -f "slurmstepd: \[" >/dev/null 2>&1 || break
            sleep 0.1
        done
        # shellcheck disable=SC2086
        [ -n "$pids" ] && kill -TERM $pids 2>/dev/null
        for _ in $(seq 50); do
            local alive=0
            for p in $pids; do kill -0 "$p" 2>/dev/null && alive=1; done
            [ $alive -eq 0 ] && break
            sleep 0.1
        done
        # shellcheck disable=SC2086
        [ -n "$pids" ] && kill -KILL $pids 2>/dev/null
    fi
    [ -S "$bed/munge/sock" ] && munged --stop --socket="$bed/munge/sock" >/dev/null 2>&1
    [ -f "$bed/munge/pid" ] && kill -KILL "$(cat "$bed/munge/pid")" 2>/dev/null
    rm -rf "$bed"
    exit "$rc"
}
trap stop_bed EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

show_logs() {
    for f in "$bed"/log/*; do
        [ -f "$f" ] || continue
        echo "---- ${f##*/}"
        tail -n 20 "$f"
    done
}

# two free TCP ports, from a random start so that beds side by side differ
port_free() { [ -z "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]; }
pick_port() {
    local p=$(( 20000 + (RANDOM * 7 + $$) % 30000 ))
    for _ in $(seq 200); do
        if port_free "$p" && [ "$p" != "${1:-}" ]; then echo "$p"; return 0; fi
        p=$(( p + 1 ))
    done
    return 1
}
ctld_port=$(pick_port) || skip "no free TCP port for slurmctld"
slurmd_port=$(pick_port "$ctld_port") || skip "no free TCP port for slurmd"

dd if=/dev/urandom of="$bed/munge/key" bs=1024 count=1 status=none
chmod 0600 "$bed/munge/key"
munged --force --socket="$bed/munge/sock" --key-file="$bed/munge/key" \
    --log-file="$bed/log/munged.log" --pid-file="$bed/munge/pid" \
    --seed-file="$bed/munge/seed" >"$bed/log/munged.out" 2>&1 ||
    { show_logs; skip "munged did not start"; }

host=$(hostname -s)
cat >"$bed/slurm.conf" <<EOF
ClusterName=phbed
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$bed/munge/sock
CredType=cred/munge
StateSaveLocation=$bed/state
SlurmdSpoolDir=$bed/spool/%n
SlurmctldPidFile=$bed/slurmctld.pid
SlurmdPidFile=$bed/slurmd.pid
SlurmctldLogFile=$bed/log/slurmctld.log
SlurmdLogFile=$bed/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus Boards=1 SocketsPerBoard=1 CoresPerSocket=$cpus ThreadsPerCore=1 RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
export SLURM_CONF=$bed/slurm.conf
# a job environment around this script (the CI's own Slurm) must not leak in
unset SLURM_JOB_ID SLURM_JOBID SLURM_MPI_TYPE SLURM_JOB_NUM_NODES SLURM_NNODES

slurmctld -f "$SLURM_CONF" -i >"$bed/log/slurmctld.out" 2>&1 ||
    { show_logs; skip "slurmctld did not start"; }
slurmd -f "$SLURM_CONF" -N "$host" >"$bed/log/slurmd.out" 2>&1 ||
    { show_logs; skip "slurmd did not start"; }
state=""
for _ in $(seq 100); do
    state=$(sinfo -h -o %T 2>/dev/null | head -n 1)
    [ "$state" = "idle" ] && break
    sleep 0.2
done
[ "$state" = "idle" ] || { show_logs; skip "the Slurm node did not become idle (state '$state')"; }

"$@"
rc=$?
[ $rc -eq 0 ] || [ $rc -eq 77 ] || show_logs
exit $rc
