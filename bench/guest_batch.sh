# guest_batch.sh -- what the guest batch commands of bench/ share
# (guest_runs.sh, vs_autonuma.sh and their inner scripts); sourced, POSIX
# sh, no state but the variables named below.
#
# On the host:
#   gb_build NAME DIR     gb_build_dir := DIR made absolute; exit 2 when it
#                         holds no tools/pagehome/pagehome or preload library
#   gb_guest_check NAME   returns when the 4-node guest can boot; else prints
#                         "skipped: REASON" and exits 77 (no guest, or a
#                         build directory the guest cannot see: /tmp, /run,
#                         /mnt are its own), or exits 125 (the check failed)
#   gb_outdir NAME DIR    gb_out := DIR made absolute (created), or a new
#                         temporary directory removed at exit when DIR is
#                         empty; DIR/progress.log is followed on stderr
#                         until the script exits
#   gb_boot NAME TIMEOUT [GUEST_OPTION...] -- COMMAND...
#                         one boot of the guest (tests/numa-guest/run: 4
#                         nodes of one CPU, 256:256:256:64 MiB, gb_out
#                         mounted at /mnt/out) running COMMAND from the
#                         repository root; its stderr is kept in
#                         gb_out/guest.stderr and replayed after; prints
#                         the wall time; a guest that cannot boot: exit 77
#                         with "skipped: REASON"; else returns the status
# In the guest (or on the host with --sim):
#   gb_now                seconds since the epoch, with nanoseconds
#   gb_elapsed T0 T1      T1 - T0 with one decimal
#   gb_topology           the kernel and every node's CPUs, distances and
#                         memory, one line each (for header.txt)
# The caller sets gb_root (the repository root) before sourcing.

gb_build() {
    [ -d "$2" ] || { echo "$1: no build directory $2" >&2; exit 2; }
    gb_build_dir=$(cd "$2" && pwd -P)
    [ -x "$gb_build_dir/tools/pagehome/pagehome" ] ||
        { echo "$1: $gb_build_dir/tools/pagehome/pagehome is missing (build it first)" >&2; exit 2; }
    [ -e "$gb_build_dir/src/libpagehome_preload.so" ] ||
        { echo "$1: no libpagehome_preload.so in $gb_build_dir (build it first)" >&2; exit 2; }
}

gb_guest_check() {
    case $gb_build_dir in
        /tmp|/tmp/*|/run|/run/*|/mnt|/mnt/*)
            echo "skipped: build directory $gb_build_dir is not visible in the guest" \
                 "(the guest has its own /tmp, /run and /mnt)"
            exit 77 ;;
    esac
    # A guest at all?  (77 with the reason when qemu, the kernel or busybox
    # are missing and cannot be installed)
    gb_check_err=$("$gb_root/tests/numa-guest/run" --check 2>&1 >/dev/null)
    gb_rc=$?
    if [ "$gb_rc" -eq 77 ]; then
        echo "skipped: $(printf '%s\n' "$gb_check_err" | sed -n 's/^numa-guest: SKIP: //p' | head -1)"
        exit 77
    elif [ "$gb_rc" -ne 0 ]; then
        printf '%s\n' "$gb_check_err" >&2
        echo "$1: FAILED: the NUMA guest check failed (exit $gb_rc)"
        exit 125
    fi
}

gb_outdir() {
    gb_made_out=
    gb_out=$2
    if [ -z "$gb_out" ]; then
        gb_out=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX") || exit 125
        gb_made_out=$gb_out
    fi
    mkdir -p "$gb_out" || exit 2
    gb_out=$(cd "$gb_out" && pwd -P)
    : > "$gb_out/progress.log"
    # live progress: the guest writes progress.log in the shared directory
    tail -n +1 -f --pid=$$ "$gb_out/progress.log" >&2 2>/dev/null &
    gb_tail_pid=$!
    trap gb_cleanup EXIT
    trap 'exit 125' INT TERM HUP
}

gb_cleanup() {
    kill "$gb_tail_pid" 2>/dev/null
    [ -z "$gb_made_out" ] || rm -rf "$gb_made_out"
}

gb_boot() {
    gb_name=$1
    gb_timeout=$2
    shift 2
    gb_opts=
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        gb_opts="$gb_opts $1"
        shift
    done
    [ $# -gt 0 ] && shift
    gb_start=$(date +%s)
    # the guest runs from the caller's cwd, which must be visible there
    cd "$gb_root" || exit 2
    # shellcheck disable=SC2086 # gb_opts is a word list
    "$gb_root/tests/numa-guest/run" --nodes 4 --mem-per-node 256:256:256:64 $gb_opts \
        --timeout "$gb_timeout" --outdir "$gb_out" -- "$@" 2> "$gb_out/guest.stderr"
    gb_rc=$?
    sleep 1 # let tail print the last progress lines
    grep -v '^$' "$gb_out/guest.stderr" >&2
    echo "$gb_name: guest wall time $(( $(date +%s) - gb_start )) s, exit $gb_rc"
    if [ "$gb_rc" -eq 77 ]; then
        echo "skipped: $(sed -n 's/^numa-guest: SKIP: //p' "$gb_out/guest.stderr" | head -1)"
        exit 77
    fi
    return "$gb_rc"
}

gb_now() { date +%s.%N; }
gb_elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

gb_topology() {
    echo "guest: $(uname -r), $(ls -d /sys/devices/system/node/node[0-9]* | wc -l) nodes:"
    for n in /sys/devices/system/node/node[0-9]*; do
        echo "  $(basename "$n"): cpus $(cat "$n/cpulist"), distances $(cat "$n/distance")," \
             "$(awk '/MemTotal/ { printf "%d MiB", $4 / 1024 }' "$n/meminfo")"
    done
}
