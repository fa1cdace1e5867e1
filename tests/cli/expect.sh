# expect.sh -- sourced by the CLI tests (test_*.sh): the counters, the
# check of one command, and the summary line.
#
#   expect STATUS PATTERN -- cmd...   the command's exit status and an
#                                     extended regex in its stdout+stderr
#   ok; bad MESSAGE                   count a check that passed / failed
#   summary NAME                      "NAME: N passed, N failed"; status 1
#                                     when a check failed
# EXPECT_TIMEOUT=SEC: every command `expect` runs is killed after SEC s.
pass=0 fail=0

ok() { pass=$((pass + 1)); }
bad() {
    fail=$((fail + 1))
    printf 'FAILED: %s\n' "$*"
}

expect() {
    local want=$1 pattern=$2
    shift 3
    local out rc
    if [ -n "${EXPECT_TIMEOUT:-}" ]; then
        out=$(timeout "$EXPECT_TIMEOUT" "$@" 2>&1)
    else
        out=$("$@" 2>&1)
    fi
    rc=$?
    if [ "$rc" -eq "$want" ] && grep -Eq -- "$pattern" <<<"$out"; then
        ok
    else
        bad "$(printf '%s\n  want exit %s and /%s/, got exit %s:\n%s' "$*" "$want" \
            "$pattern" "$rc" "$(head -20 <<<"$out")")"
    fi
}

summary() {
    echo "$1: $pass passed, $fail failed"
    [ "$fail" -eq 0 ]
}
