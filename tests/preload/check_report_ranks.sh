#!/bin/sh
# check_report_ranks.sh PAGEHOME OMP_PROGRAM -- one statistics file per
# process of an MPI job.  `pagehome run --report r.json` started by a
# launcher that started several processes writes r.rank-N.json in each
# (rank 0 says so once); the keys %r, %p, %h and %% of --report and of the
# tunable stats_file are replaced; an unknown key is a usage error.  The
# launchers are first imitated by their environment (Open MPI, Hydra,
# Slurm), then, where one is installed, Open MPI's and MPICH's mpirun
# start two real processes.
ph=${1:?usage: check_report_ranks.sh PAGEHOME OMP_PROGRAM}
prog=${2:?}
case $ph in /*) ;; *) ph=$(pwd)/$ph ;; esac
tmp=${TMPDIR:-/tmp}/check_report_ranks.$$
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT
exec </dev/null
fail=0
bad() { echo "check_report_ranks: FAILED: $*"; fail=1; }
want() { # FILE PATTERN WHAT
    [ -f "$1" ] || { bad "$3 (no file $1)"; return; }
    grep -q -- "$2" "$1" || bad "$3 (no /$2/ in $1)"
}
export OMP_NUM_THREADS=2

# rank 1 of 2 (Open MPI's environment): its own file, no note from it
OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 \
    "$ph" run --report "$tmp/a.json" -- "$prog" > "$tmp/out1" 2>&1 || bad "rank 1 run"
want "$tmp/a.rank-1.json" '"runtime_seen": true' "rank 1 writes a.rank-1.json"
[ -e "$tmp/a.json" ] && bad "rank 1 wrote a.json"
grep -q 'each writes its own' "$tmp/out1" && bad "rank 1 printed the note"
# rank 0: its file and the note
OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2 \
    "$ph" run --report "$tmp/a.json" -- "$prog" > "$tmp/out0" 2>&1 || bad "rank 0 run"
want "$tmp/a.rank-0.json" '"runtime_seen": true' "rank 0 writes a.rank-0.json"
want "$tmp/out0" "each writes its own, $tmp/a.rank-%r.json" "rank 0 says where"
# one process (size 1): the name as given
OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=1 \
    "$ph" run --report "$tmp/one.json" -- /bin/true || bad "size 1 run"
want "$tmp/one.json" '"engine": null' "a job of one process writes the name as given"

# keys named by the user (Hydra's environment): no rank inserted
host=$(hostname); host=${host%%.*}
PMI_RANK=2 PMI_SIZE=3 "$ph" run --report "$tmp/k-%r-%h-%p-%%.json" -- "$prog" \
    > "$tmp/out2" 2>&1 || bad "keys run"
n=$(ls "$tmp" | grep -c "^k-2-$host-[0-9][0-9]*-%\.json\$")
[ "$n" = 1 ] || { bad "%r %h %p %%: $(ls "$tmp")"; }
grep -q 'each writes its own' "$tmp/out2" && bad "a name with %r got the note"

# an unknown key: a usage error before the program runs
"$ph" run --report "$tmp/bad%x.json" -- /bin/echo PROGRAM-RAN > "$tmp/out3" 2>&1
rc=$?
[ $rc = 2 ] || bad "--report with %x: exit $rc, not 2"
grep -q PROGRAM-RAN "$tmp/out3" && bad "--report with %x: the program ran"
grep -q 'a % must be followed by r' "$tmp/out3" || bad "--report with %x: no message"

# a relative name from a directory whose name holds a %
mkdir "$tmp/d%r" && (cd "$tmp/d%r" && OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 \
    "$ph" run --report rel.json -- /bin/true) || bad "run in d%r"
want "$tmp/d%r/rel.rank-1.json" '"engine": null' "a % in the working directory is kept"

# the tunable itself (the library), engine off, Slurm's environment
PAGEHOME_STATS_FILE="$tmp/t-%r.json" SLURM_PROCID=2 SLURM_STEP_NUM_TASKS=4 \
    "$ph" run --migrate off -- /bin/true || bad "tunable run"
want "$tmp/t-2.json" 'the engine was off' "stats_file with %r, engine off"
# one name for several processes: rank 0 warns, and the file is written
PAGEHOME_STATS_FILE="$tmp/same.json" SLURM_PROCID=0 SLURM_STEP_NUM_TASKS=4 \
    "$ph" run --migrate off -- /bin/true > "$tmp/out4" 2>&1 || bad "shared-name run"
want "$tmp/out4" 'every one of the 4 processes (SLURM_PROCID)' "one name for 4 processes: a warning"
want "$tmp/same.json" 'the engine was off' "one name for 4 processes: still written"

# real launchers, two processes each
for mpx in mpirun.openmpi mpirun.mpich; do
    command -v $mpx > /dev/null || { echo "check_report_ranks: no $mpx: that part skipped"; continue; }
    set -- -n 2
    case $mpx in
    *openmpi) set -- "$@" --oversubscribe --mca btl self,vader
              [ "$(id -u)" = 0 ] && set -- "$@" --allow-run-as-root ;;
    esac
    rm -f "$tmp"/m.*
    timeout 120 $mpx "$@" "$ph" run --report "$tmp/m.json" -- "$prog" > "$tmp/out5" 2>&1 ||
        { bad "$mpx run"; cat "$tmp/out5"; }
    echo "check_report_ranks: $mpx wrote" $(cd "$tmp" && echo m.*)
    want "$tmp/m.rank-0.json" '"runtime_seen": true' "$mpx: rank 0's file"
    want "$tmp/m.rank-1.json" '"runtime_seen": true' "$mpx: rank 1's file"
    [ "$(grep -c 'each writes its own' "$tmp/out5")" = 1 ] || bad "$mpx: the note not said once"
done
[ $fail = 0 ] && echo "check_report_ranks: ok"
exit $fail
