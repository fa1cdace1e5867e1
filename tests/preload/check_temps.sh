#!/bin/sh
# check_temps.sh PAGEHOME PROGRAM -- a temporary of a new size allocated
# and freed in every iteration (prog_temps) does not keep the engine
# going: under `pagehome run`, with each sampling mechanism, the program
# is right and the engine has stopped by the end ("active": false in the
# report) after a handful of invocations.  Before, every registration
# made it start over and it swept the stable array for the whole run.
# On the simulated machine (PAGEHOME_TOPOLOGY set) only the mprotect
# mechanism: there the userfaultfd one traps every first touch of a new
# range, and the temporaries' traps keep its budget paused.
ph=${1:?usage: check_temps.sh PAGEHOME PROGRAM}
prog=${2:?}
dir=$(mktemp -d "${TMPDIR:-/tmp}/check_temps.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
mechs="mprotect userfaultfd"
[ -n "${PAGEHOME_TOPOLOGY:-}" ] && mechs=mprotect
fail=0
for m in $mechs; do
    if ! timeout 300 "$ph" run --set sample_mechanism="$m" --report "$dir/$m.json" \
            -- "$prog" 150 > "$dir/$m.out" 2>&1; then
        echo "check_temps: $m: FAILED: the run failed:"; tail -5 "$dir/$m.out"; fail=1; continue
    fi
    grep -q "sample_mechanism=userfaultfd: .*using mprotect" "$dir/$m.out" &&
        echo "check_temps: userfaultfd not usable here: mprotect instead"
    grep -q "prog_temps: .* ok$" "$dir/$m.out" ||
        { echo "check_temps: $m: FAILED: wrong result"; tail -3 "$dir/$m.out"; fail=1; }
    line=$(python3 - "$dir/$m.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t, s = d["totals"], d["source_stats"]
print(t["active"], t["invocations"], s["intervals"], t["iterations"])
PY
) || { echo "check_temps: $m: FAILED: no report"; fail=1; continue; }
    set -- $line
    echo "check_temps: $m: active at the end $1, $2 invocations, $3 intervals, $4 iterations"
    if [ "$1" != False ] || [ "$2" -gt 20 ]; then
        echo "check_temps: $m: FAILED: the engine did not stop (want inactive after at most 20 invocations)"
        fail=1
    fi
done
[ $fail -eq 0 ] && echo "check_temps: ok"
exit $fail
