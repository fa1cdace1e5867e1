#!/usr/bin/env bash
# as_user.sh RUN_SH [run.sh options] N PROGRAM [ARGS...]
#
# Runs a cluster-mode test as an unprivileged user, as cluster users run
# their programs: uid and gid 65534 (nobody), no supplementary groups, a
# fresh HOME and TMPDIR of its own.  What that changes: userfaultfd.
# Without root, with vm.unprivileged_userfaultfd = 0 (Debian's default)
# and /dev/userfaultfd not accessible, a process gets it only for faults
# taken in user mode (UFFD_USER_MODE_ONLY), so cluster mode runs with the
# mechanism "userfaultfd-user", where the kernel's own accesses to a page
# that is not accessible fail (the wrapped calls, read, fread, ..., must
# still work: test_syscalls); the root-run tests never see it.  Every
# rank must say (PAGEHOME_VERBOSE=1) "faults by M", M the mechanism this
# machine gives nobody, which this script works out from the same two
# settings.
#
# Exit: run.sh's; 77 when not root (the other cluster tests then run
# unprivileged already), without setpriv, or when nobody cannot read the
# test program.
set -u
run_sh=${1:?usage: as_user.sh RUN_SH [run.sh options] N PROGRAM [ARGS...]}
shift
[ "$(id -u)" -eq 0 ] || { echo "SKIP: not root: every cluster test runs unprivileged here already"; exit 77; }
command -v setpriv >/dev/null || { echo "SKIP: setpriv not installed (util-linux)"; exit 77; }
uid=65534

# the program is the first argument after N (run.sh's options take values)
args=("$@")
prog=""
i=0
while [ $i -lt ${#args[@]} ]; do
    case "${args[$i]}" in
        --timeout|--expect-output|--launcher-opts|--env) i=$((i + 2)) ;;
        --expect-fail) i=$((i + 1)) ;;
        *) prog=${args[$((i + 1))]:-}; break ;;
    esac
done
[ -n "$prog" ] || { echo "as_user.sh: no program in: $*" >&2; exit 2; }
setpriv --reuid=$uid --regid=$uid --clear-groups test -x "$prog" ||
    { echo "SKIP: uid $uid cannot execute $prog (the build tree is not readable by others)"; exit 77; }

mech=userfaultfd-user
if [ "$(cat /proc/sys/vm/unprivileged_userfaultfd 2>/dev/null || echo 0)" = 1 ] ||
    setpriv --reuid=$uid --regid=$uid --clear-groups test -r /dev/userfaultfd -a -w /dev/userfaultfd; then
    mech=userfaultfd
fi

home=$(mktemp -d "${TMPDIR:-/tmp}/ph-user.XXXXXX")
chown $uid:$uid "$home"
chmod 0700 "$home"
trap 'rm -rf "$home"' EXIT
setpriv --reuid=$uid --regid=$uid --clear-groups \
    env HOME="$home" TMPDIR="$home" USER=nobody LOGNAME=nobody \
    "$run_sh" --env PAGEHOME_VERBOSE=1 --expect-output "faults by $mech\$" "$@"
