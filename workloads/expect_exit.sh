#!/bin/sh
# expect_exit.sh -- run a workload program and check how it ended.
#
#   expect_exit.sh 0 PROG ARGS...      exit status 0
#   expect_exit.sh 1 PROG ARGS...      exit status 1 (WL_FAULT=1 tests)
#   expect_exit.sh usage PROG ARGS...  exit status 2, nothing on stdout and
#                                      exactly one line on stderr, starting
#                                      with "usage: "
#
# The program's output is passed through; the last line says whether the
# ending was the expected one ("... as expected": the tests' regular
# expressions require it), and so does this script's exit status.
set -u
want=$1
shift
prog=$(basename "$1")
if [ "$want" = usage ]; then
    out=$(mktemp) err=$(mktemp)
    trap 'rm -f "$out" "$err"' EXIT
    "$@" >"$out" 2>"$err"
    st=$?
    cat "$out"
    cat "$err" >&2
    lines=$(wc -l <"$err")
    if [ "$st" -eq 2 ] && [ ! -s "$out" ] && [ "$lines" -eq 1 ] &&
        head -n 1 "$err" | grep -q '^usage: '; then
        echo "expect_exit: $prog: usage line and exit status 2 as expected"
        exit 0
    fi
    echo "expect_exit: $prog: exit status $st, $lines stderr line(s); expected status 2 and one usage line"
    exit 1
fi
"$@"
st=$?
if [ "$st" -eq "$want" ]; then
    echo "expect_exit: $prog: exit status $st as expected"
    exit 0
fi
echo "expect_exit: $prog: exit status $st, expected $want"
exit 1
