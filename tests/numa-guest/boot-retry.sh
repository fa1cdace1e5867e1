#!/usr/bin/env bash
# The runner's boot watchdog (tests/numa-guest/run --boot-timeout,
# --boot-retries): a boot that does not start the command in time is
# stopped and the guest booted again; after the last retry the run ends
# with the infrastructure status 125 and says why.  The hung boots are made
# by the runner's test hook (PAGEHOME_GUEST_TEST_HUNG_BOOTS).  Three boots,
# about 1.5 min.  Exit 77 when no guest can be booted here.
set -uo pipefail

HERE=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
RUN=$HERE/run
cd -- "$HERE" || exit 1

rc=0
"$RUN" --check 2>/dev/null || rc=$?
((rc != 77)) || exit 77
((rc == 0)) || { echo "boot-retry: run --check failed with $rc" >&2; exit 1; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/pagehome-boot-retry.XXXXXX") || exit 1
trap 'rm -rf -- "$TMP"' EXIT
failed=0
fail() {
	echo "FAILED: $1" >&2
	sed 's/^/    /' "$TMP/out" "$TMP/err" >&2
	failed=1
}

# hung_boots N SEC CMD: a 2-node guest whose first N boots hang, with a
# boot timeout of SEC s and one retry; sets got, $TMP/out and $TMP/err.
hung_boots() {
	local n=$1 sec=$2
	shift 2
	got=0
	PAGEHOME_GUEST_TEST_HUNG_BOOTS=$n "$RUN" --nodes 2 --mem-per-node 128 \
		--boot-timeout "$sec" --boot-retries 1 -- "$@" \
		>"$TMP/out" 2>"$TMP/err" || got=$?
}

# 1. The first boot hangs, the second runs the command: its output and
#    status are the command's.  The hung boot is killed after 60 s (a
#    good boot takes about 15 s here, more under load).
hung_boots 1 60 sh -c 'echo command-ran; exit 3'
if ((got != 3)); then
	fail "one hung boot then a good one: exit $got, expected the command's 3"
elif [[ $(<"$TMP/out") != command-ran ]]; then
	fail "one hung boot then a good one: the command's output is missing"
elif ! grep -q 'boot 1 of 2: the guest did not start the command within 60 s' "$TMP/err" ||
	! grep -q 'booting again' "$TMP/err" ||
	! grep -q 'test hook: this boot hangs' "$TMP/err"; then
	fail "one hung boot then a good one: the hung boot is not reported"
else
	echo "ok - a hung boot is stopped after 60 s and the guest booted again"
fi

# 2. Every boot hangs: 125 after the retries, and the command never ran.
hung_boots 2 15 sh -c 'echo command-ran'
if ((got != 125)); then
	fail "two hung boots: exit $got, expected 125"
elif [[ -s $TMP/out ]]; then
	fail "two hung boots: the command ran"
elif ! grep -q 'did not start the command within 15 s in 2 boots' "$TMP/err"; then
	fail "two hung boots: no reason given"
else
	echo "ok - hung boots after the last retry end with 125 and the reason"
fi

# 3. Bad values are refused before any boot.
for bad in "--boot-timeout -1" "--boot-retries 6" "--boot-timeout x"; do
	got=0
	# shellcheck disable=SC2086 # the option and its value
	"$RUN" $bad -- true >"$TMP/out" 2>"$TMP/err" || got=$?
	if ((got != 125)) || ! grep -q 'must be an integer' "$TMP/err"; then
		fail "$bad: exit $got, expected 125 and the range"
	fi
done
((failed)) || echo "ok - out-of-range boot options are refused"

exit "$failed"
