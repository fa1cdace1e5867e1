#!/bin/sh
# as_user.sh COMMAND [ARGS...] -- runs a transparent-mode test as an
# unprivileged user, as most users run `pagehome run`: uid and gid 65534
# (nobody), no supplementary groups, a fresh HOME and TMPDIR of its own.
# What that changes: with vm.unprivileged_userfaultfd = 0 (Debian's
# default) and /dev/userfaultfd not accessible, userfaultfd is refused
# (pagehome does not take user-mode-only faults for sampling), so the
# sample mechanism `auto` picks mprotect, whose watched pages are open
# while serial code runs (the region gate) -- and every other path the
# root-run tests never see.
# The command's stdout and stderr pass through; its exit status is this
# script's.  Exit 77 when not root (every test then runs unprivileged
# already), without setpriv, or when nobody cannot execute COMMAND.  POSIX sh.
[ $# -ge 1 ] || { echo "usage: as_user.sh COMMAND [ARGS...]" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "SKIP: not root: the tests run unprivileged here already"; exit 77; }
command -v setpriv >/dev/null 2>&1 || { echo "SKIP: setpriv not installed (util-linux)"; exit 77; }
uid=65534
for f in "$@"; do
    case "$f" in
        /*) [ -e "$f" ] || continue
            setpriv --reuid=$uid --regid=$uid --clear-groups test -r "$f" ||
                { echo "SKIP: uid $uid cannot read $f (the tree is not readable by others)"; exit 77; } ;;
    esac
done
home=$(mktemp -d "${TMPDIR:-/tmp}/ph-user.XXXXXX") || exit 1
chown $uid:$uid "$home" && chmod 0700 "$home" || { rm -rf "$home"; exit 1; }
setpriv --reuid=$uid --regid=$uid --clear-groups \
    env HOME="$home" TMPDIR="$home" USER=nobody LOGNAME=nobody "$@"
rc=$?
rm -rf "$home"
exit $rc
