#!/bin/sh
# check_plugin.sh PAGEHOME MODE PROGRAM [LIBRARY] -- OpenMP code in a
# process whose program names no OpenMP runtime, under `pagehome run`:
#   dlopen  PROGRAM (prog_plugin) loads LIBRARY (plugin_kern.c built with
#           gcc: libgomp, or clang: libomp) with dlopen(3);
#   python  python3 loads LIBRARY with ctypes, as an extension is loaded;
#   script  a shell script starts PROGRAM (prog_plugin_linked, gcc: it
#           needs libgomp.so.1), as a job script does.
# A libgomp that comes later must run on LLVM's libomp as a gcc program's
# does (its OpenMP regions seen through the tools interface), and the
# simulated machine must place the threads of a runtime loaded after
# pagehome on their nodes.  Every run: exit 0 and the same elements as a
# plain run (prog_plugin verifies them against a serial replay); the
# report sees the runtime (its regions, an iteration, one initial
# thread).  With 2 or more nodes (PAGEHOME_TOPOLOGY: the simulated
# machine; or a real NUMA machine) the arrays start on node 0
# (--placement node:0) and OMP_NUM_THREADS must be the node count (thread
# t on node t: the simulator's block rule, or OMP_PROC_BIND with one CPU
# a node): pages must be moved and >= 90% of each array's strips (the
# report's homes at the end) on their owner's node.  The arrays are
# initialised serially before the first parallel region, which in the
# dlopen and python modes also starts the runtime: what the sampler saw
# of that serial code must not count.  Exit 77 when PROGRAM or LIBRARY
# (or python3) is missing.
ph=${1:?usage: check_plugin.sh PAGEHOME MODE PROGRAM [LIBRARY]}
mode=${2:?}
prog=${3:?}
lib=${4:-}
[ -x "$prog" ] || { echo "check_plugin: $prog not built: skipped"; exit 77; }
if [ "$mode" != script ]; then
    [ -r "$lib" ] || { echo "check_plugin: $lib not built: skipped"; exit 77; }
fi
if [ "$mode" = python ] && ! command -v python3 > /dev/null; then
    echo "check_plugin: no python3: skipped"; exit 77
fi
tmp=${TMPDIR:-/tmp}/check_plugin.$$
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-4}
n=2000000 iters=30
fail=0
bad() { fail=$((fail + 1)); echo "check_plugin: FAILED: $mode: $*"; }

# the plain run: prog_plugin (or the linked one) verifies itself
if [ "$mode" = script ]; then
    "$prog" $n $iters > "$tmp/plain.out" 2> "$tmp/plain.err"
else
    "$prog" "$lib" $n $iters > "$tmp/plain.out" 2> "$tmp/plain.err"
fi
rc=$?
[ $rc -eq 0 ] && grep -q "verification: ok" "$tmp/plain.out" ||
    { bad "plain run: exit $rc"; cat "$tmp/plain.out" "$tmp/plain.err"; exit 1; }
nodes=$("$ph" topo --json 2>/dev/null | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["nodes"]))' 2>/dev/null)
nodes=${nodes:-1}
place=""
[ "$nodes" -ge 2 ] && place="--placement node:0"

case $mode in
    dlopen)
        set -- "$prog" "$lib" $n $iters ;;
    python)
        # ctypes: the library and its libgomp are loaded RTLD_LOCAL, after
        # pagehome; the elements printed as prog_plugin prints them
        cat > "$tmp/drive.py" <<'PY'
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
n, iters = int(sys.argv[2]), int(sys.argv[3])
pos = [0, 1, n // 4, n // 3, n // 2, 2 * n // 3, 3 * n // 4, n - 2, n - 1]
P = ctypes.c_long * len(pos)
D = ctypes.c_double * len(pos)
out = D()
lib.plugin_stencil.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_int, P, D]
if lib.plugin_stencil(n, iters, len(pos), P(*pos), out) != 0:
    sys.exit("out of memory")
for p, v in zip(pos, out):
    print("element %d: %.12f" % (p, v))
PY
        grep '^element' "$tmp/plain.out" > "$tmp/want.out"
        set -- python3 "$tmp/drive.py" "$lib" $n $iters ;;
    script)
        printf '#!/bin/sh\n# a job script: the program is its child\n"$@"\n' > "$tmp/job.sh"
        chmod +x "$tmp/job.sh"
        set -- "$tmp/job.sh" "$prog" $n $iters ;;
    *)
        echo "check_plugin: mode $mode?"; exit 2 ;;
esac
timeout 300 "$ph" run $place --report "$tmp/r.json" -- "$@" > "$tmp/ph.out" 2> "$tmp/ph.err"
rc=$?
[ $rc -eq 0 ] || { bad "exit status $rc"; sed 's/^/  /' "$tmp/ph.err" | tail -20; exit 1; }
if [ "$mode" = python ]; then
    cmp -s "$tmp/want.out" "$tmp/ph.out" ||
        { bad "elements differ from a plain run"; diff "$tmp/want.out" "$tmp/ph.out" | head; }
else
    cmp -s "$tmp/plain.out" "$tmp/ph.out" ||
        { bad "stdout differs from a plain run"; diff "$tmp/plain.out" "$tmp/ph.out" | head; }
fi
python3 - "$tmp/r.json" "$nodes" "$OMP_NUM_THREADS" $n <<'PY' || bad "report"
import json, sys
r = json.load(open(sys.argv[1]))
nodes, threads = int(sys.argv[2]), int(sys.argv[3])
omp = r["transparent"]["openmp"]
assert omp["runtime_seen"], "no OpenMP runtime seen: %s" % omp
assert omp["regions"] >= 60, "%d parallel regions seen, want 60" % omp["regions"]
assert omp["iteration"], "no iteration found: %s" % omp
init = omp["runtime_threads"]["initial"]
assert init == 1, "%d initial OpenMP threads, want 1" % init
# the plugin's two arrays (n doubles each; the name of their allocation
# site is the function's only where the library exports it)
n = int(sys.argv[4])
areas = [a for a in r["areas"] if a["name"].startswith("heap#") and a["bytes"] >= 8 * n]
assert len(areas) == 2, "the plugin's arrays as hot areas: %s" % [a["name"] for a in r["areas"]]
if nodes >= 2:
    assert threads == nodes, "OMP_NUM_THREADS %d, want one a node (%d)" % (threads, nodes)
    t = r["totals"]
    assert t["remote_accesses_before"] > 0, "no remote access sampled: every thread on one node?"
    assert t["migrated"] > 0, "no page moved"
    for a in areas:
        s = a["strip_end"]
        b = len(s)
        good = total = 0
        for k, home in enumerate(s):
            owner_f = (k + 0.5) * threads / b
            if abs(owner_f - round(owner_f)) < 1.0 * threads / b:
                continue  # a strip across two threads' blocks
            total += 1
            good += home == int(owner_f)
        share = 100.0 * good / max(total, 1)
        print("check_plugin: %s: %.1f%% of %d strips on their owner's node" % (a["name"], share, total))
        assert share >= 90, "%s: %.1f%% on the owner's node, want >= 90" % (a["name"], share)
PY
[ $fail -eq 0 ] && echo "check_plugin: ok"
[ $fail -eq 0 ]
