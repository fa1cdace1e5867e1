#!/usr/bin/env python3
"""check_hostile.py -- `pagehome report` on hostile and broken inputs.

    check_hostile.py PAGEHOME DATA_DIR SOURCE_DIR

Every case runs the pagehome command as a user does and checks its exit
status and stderr: 0 and a report, or 1 and exactly one line
"pagehome: report: ..." -- never a traceback, never an "internal error",
never longer than RUN_TIMEOUT_S (a hang detector: before the checks a
file with config.nodes = 1e7 ran for minutes).
  * links: report.html and a PNG in OUTDIR are symbolic links to files
    outside (and one dangling): after the run the targets hold what they
    held (the dangling one is still absent), the names are regular files,
    stderr says what was replaced; report.html a directory: refused; no
    temporary file left behind; the same for a sim report and a cluster
    report;
  * sizes: config.nodes 1e7 and 10000000, 4097 areas, a strip of 257
    buckets, 65537 log records, 65 engines in a sim file, a per-iteration
    series longer than its run's iterations; cluster files: a strip of 257
    buckets, 4098 interval records, a record longer than its field list,
    257 allocations, 65 interval fields, 1000001 expected ranks: refused
    naming the field and the bound;
  * values: NaN, Infinity, -Infinity, 1e400, a 30-digit integer, a string
    where a number goes, an object where a list goes, a list where an
    object goes, true as a count, negative counts, missing required
    fields, a strip node beyond config.nodes, an unpaired surrogate; in
    cluster files a strip rank beyond cluster.nranks or below -2, a rank
    twice, NaN and strings for counters, no "ranks": the message names
    the field, what was expected and what was found;
  * files: truncated JSON, an empty file, blanks only, a directory, bytes
    that are not UTF-8, a top-level list, nesting 100000 deep, an integer
    of 5000 digits: one line each; the merged statistics of rank files in
    other layouts (pagehome cluster merge of tests/data/cluster): rendered,
    with and without plots; `pagehome cluster merge -o LINK` replaces the
    link, its target unchanged;
  * a fuzz loop: the fixtures of DATA_DIR mutated FUZZ_CASES times with a
    fixed seed (a field replaced by NaN, a huge or negative number, a
    string, a list, an object, null, removed, a list repeated, the text
    cut or a byte changed), rendered --text-only and every PLOT_EVERY-th
    with the plots: success or the one line;
  * an internal error (a copy of the script with a planted bug, through
    PAGEHOME_REPORT_SCRIPT): one line without PAGEHOME_REPORT_DEBUG, the
    traceback with PAGEHOME_REPORT_DEBUG=1;
  * stdout closed early (| head -1): no traceback;
  * the bounds in tools/report/report_common.py equal the C definitions
    they stand for (PH_MAX_NODES, PH_STRIP_MAX, PH_HISTORY_MAX,
    PH_LOG_MAX, pagehome sim --iterations' maximum, PH_DSM_STRIP_MAX,
    PH_DSM_RECS_MAX, PH_DSM_IVS_MAX, pagehome cluster run -n's maximum).
Prints one line per failed check, the slowest run's time; exit 0 all
passed, 1 some failed.
"""

import copy
import filecmp
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

FULL = "report_prog_phase_hybrid.json"
MINIMAL = "report_minimal.json"
SIM_FIXTURES = ("sim_e1_small.json", "sim_e3_small.json")
CLUSTER = "cluster_laplace_rr.json"
RUN_TIMEOUT_S = 60
FUZZ_SEED = 15
FUZZ_CASES = 250
PLOT_EVERY = 10

failures = []
passed = 0
slowest = [0.0, ""]


def check(cond, what):
    global passed
    if cond:
        passed += 1
    else:
        failures.append(what)
        print(f"FAIL: {what}")
    return cond


def run(cmd, env=None, cwd=None):
    """(exit status, stdout, stderr); a run past RUN_TIMEOUT_S fails."""
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True,
                           errors="backslashreplace", timeout=RUN_TIMEOUT_S,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        check(False, f"{' '.join(cmd)}: still running after {RUN_TIMEOUT_S} s")
        return -1, "", ""
    dt = time.monotonic() - t0
    if dt > slowest[0]:
        slowest[:] = [dt, " ".join(os.path.basename(c) for c in cmd[1:])]
    return p.returncode, p.stdout, p.stderr


def clean(rc, out, err):
    """None when the run succeeded or refused in one line, else why not."""
    if "Traceback" in err or "internal error" in err:
        return f"exit {rc}, a traceback or an internal error: {err[-800:]}"
    if rc == 0:
        return None if out.startswith("pagehome report: ") else f"exit 0, stdout {out[:200]!r}"
    lines = err.splitlines()
    if rc != 1:
        return f"exit {rc} (1 expected): {err[-400:]}"
    if len(lines) != 1 or not lines[0].startswith("pagehome: report: "):
        return f"exit 1 but not one line 'pagehome: report: ...': {err[-400:]!r}"
    return None


def refused(pagehome, path, what, *needles, text_only=True):
    """path is refused in one line containing every needle."""
    cmd = [pagehome, "report", path] + (["--text-only"] if text_only else
                                        ["-o", path + "_out"])
    rc, out, err = run(cmd)
    why = clean(rc, out, err)
    if check(why is None and rc == 1, f"{what}: refused in one line: {why or 'exit 0'}"):
        check(all(n in err for n in needles), f"{what}: the line names {needles}: {err!r}")
    return err


def dump(path, data):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, allow_nan=True)
    return path


# ---- links ------------------------------------------------------------------

def links(pagehome, data_dir, tmp):
    for name, files in ((FULL, ("report.html", "homes.png")),
                        ("sim_e1_small.json", ("report.html", "time.png")),
                        (CLUSTER, ("report.html", "remote_faults.png"))):
        out = os.path.join(tmp, "links-" + name)
        os.mkdir(out)
        targets = {}
        for f in files:
            target = os.path.join(tmp, f"precious-{name}-{f}")
            with open(target, "w") as fh:
                fh.write("the user's file\n")
            os.symlink(target, os.path.join(out, f))
            targets[f] = target
        dangling = os.path.join(tmp, f"absent-{name}")
        os.symlink(dangling, os.path.join(out, "migrations.png"))
        rc, text, err = run([pagehome, "report", os.path.join(data_dir, name), "-o", out])
        check(rc == 0, f"{name} into links: exit {rc}: {err}")
        for f, target in targets.items():
            with open(target) as fh:
                check(fh.read() == "the user's file\n", f"{name}: {target} unchanged")
            p = os.path.join(out, f)
            check(not os.path.islink(p) and os.path.isfile(p) and os.path.getsize(p) > 100,
                  f"{name}: {f} is the report's own file now")
            check(f"{p} was a symbolic link to {target}" in err,
                  f"{name}: stderr says {f} was a link: {err!r}")
        check(not os.path.lexists(dangling), f"{name}: the dangling link's target not made")
        check(not [f for f in os.listdir(out) if f.endswith(".tmp")],
              f"{name}: no temporary file left: {os.listdir(out)}")
        mode = os.stat(os.path.join(out, "report.html")).st_mode & 0o777
        check(mode == 0o666 & ~current_umask(), f"{name}: report.html mode {oct(mode)}")
    # report.html a directory: one line, nothing else of it touched
    out = os.path.join(tmp, "dir-page")
    os.makedirs(os.path.join(out, "report.html"))
    rc, _, err = run([pagehome, "report", os.path.join(data_dir, MINIMAL), "-o", out])
    check(rc == 1 and clean(rc, "", err) is None and "is a directory" in err,
          f"report.html a directory: exit {rc}: {err!r}")
    check(os.listdir(out) == ["report.html"], f"nothing left beside it: {os.listdir(out)}")


def current_umask():
    m = os.umask(0o022)
    os.umask(m)
    return m


# ---- sizes and values -------------------------------------------------------

def fixture(data_dir, name):
    with open(os.path.join(data_dir, name), encoding="utf-8") as f:
        return json.load(f)


def bad_values(pagehome, data_dir, tmp):
    full = fixture(data_dir, FULL)
    sim = fixture(data_dir, "sim_e1_small.json")
    cl = fixture(data_dir, CLUSTER)
    cases = []   # (name, data, needles)

    def with_(base, edit, name, *needles):
        d = copy.deepcopy(base)
        edit(d)
        cases.append((name, d, needles))

    def setf(path, value):
        def edit(d):
            o = d
            for k in path[:-1]:
                o = o[k]
            o[path[-1]] = value
        return edit

    def delf(path):
        def edit(d):
            o = d
            for k in path[:-1]:
                o = o[k]
            del o[path[-1]]
        return edit

    # sizes
    with_(full, setf(["config", "nodes"], 1e7), "nodes 1e7", "config.nodes", "64",
          "10000000.0")
    with_(full, setf(["config", "nodes"], 10**7), "nodes 10000000", "config.nodes", "64")
    with_(full, setf(["areas"], full["areas"] * 4097), "4097 areas", "field areas:",
          "4096")
    with_(full, setf(["areas", 0, "strip_start"], [0] * 257), "a strip of 257",
          "areas[0].strip_start", "256")
    rec = {"kind": "iterative", "seq": 1, "iteration": 1, "migrated": 1}
    with_(full, setf(["invocations"], [rec] * 65537), "65537 records", "invocations",
          "65536")
    with_(sim, setf(["runs"], [dict(r, label=f"engine {i}")
                               for i, r in enumerate((sim["runs"] * 2)[:65])]),
          "65 engines", "field runs:", "64 distinct labels")
    with_(sim, setf(["runs", 0, "per_iteration", "time_ns"], [1] * 7),
          "a series longer than its iterations", "runs[0].per_iteration.time_ns",
          "at most 6 values")
    with_(sim, setf(["runs", 0, "iterations"], 10**9), "iterations 1e9",
          "runs[0].iterations", "100000")
    # values
    with_(full, setf(["config", "nodes"], float("nan")), "nodes NaN", "config.nodes",
          "finite", "NaN")
    with_(full, setf(["totals", "migrated"], float("inf")), "Infinity",
          "totals.migrated", "Infinity")
    with_(full, setf(["areas", 0, "pages"], float("-inf")), "-Infinity",
          "areas[0].pages", "-Infinity")
    with_(full, setf(["totals", "accesses"], 10**30), "a 31-digit integer",
          "totals.accesses", "31 digits")
    with_(full, setf(["totals", "migrated"], "many"), "a string for a count",
          "totals.migrated", "a number >= 0", 'a string "many"')
    with_(full, setf(["areas"], {}), "an object for the areas", "field areas:",
          "a list of at most 4096", "an object")
    with_(full, setf(["config"], []), "a list for config", "field config:",
          "an object", "a list of 0 items")
    with_(full, setf(["totals", "frozen"], True), "true for a count", "totals.frozen",
          "got true")
    with_(full, setf(["totals", "migrated"], -5), "a negative count", "totals.migrated",
          "got -5")
    with_(full, setf(["areas", 0, "pages"], -1), "negative pages", "areas[0].pages")
    with_(full, setf(["config", "nodes"], 0), "nodes 0", "config.nodes", "got 0")
    with_(full, setf(["config", "nodes"], 2), "strip beyond nodes",
          "areas[0].strip_", "config.nodes is 2")
    with_(full, setf(["invocations", 3, "kind"], ["iterative"]), "a list for a kind",
          "invocations[3].kind", "a string")
    with_(full, delf(["areas"]), "no areas with totals", "field areas:", "missing")
    with_(full, delf(["pagehome_stats"]), "no pagehome_stats",
          "not a pagehome statistics file")
    with_(full, setf(["areas", 0, "name"], "\ud800x"), "an unpaired surrogate",
          "areas[0].name", "surrogate")
    with_(full, setf(["transparent", "openmp", "threads"], 10**7), "10^7 threads",
          "transparent.openmp.threads", "1048576")
    with_(sim, delf(["runs"]), "sim without runs", "field runs:", "missing")
    with_(sim, setf(["experiment"], 5), "a number for the experiment",
          "field experiment:", "a string", "got 5")
    with_(sim, setf(["runs", 2, "norm_total"], float("nan")), "sim NaN",
          "runs[2].norm_total", "NaN")
    with_(sim, setf(["runs", 1, "per_iteration"], [1, 2]), "sim list for an object",
          "runs[1].per_iteration", "an object")
    # cluster files: sizes
    with_(cl, setf(["ranks", 0, "allocations", 0, "strip_start"], [0] * 257),
          "cluster: a strip of 257", "ranks[0].allocations[0].strip_start", "256")
    with_(cl, setf(["ranks", 1, "intervals"], cl["ranks"][1]["intervals"] * 200),
          "cluster: 5000 interval records", "ranks[1].intervals", "4097")
    with_(cl, setf(["ranks", 0, "intervals", 3], [1] * 11), "cluster: a record longer "
          "than its fields", "ranks[0].intervals[3]", "at most 10 counts")
    with_(cl, setf(["ranks", 0, "allocations"], cl["ranks"][0]["allocations"] * 86),
          "cluster: 258 allocations", "ranks[0].allocations", "256")
    with_(cl, setf(["ranks", 0, "interval_fields"], ["f"] * 65), "cluster: 65 fields",
          "ranks[0].interval_fields", "64")
    with_(cl, setf(["cluster", "ranks"], 10**6 + 1), "cluster: 1000001 ranks",
          "cluster.ranks", "1000000")
    # cluster files: values
    with_(cl, setf(["ranks", 1, "allocations", 0, "strip_end", 5], 2),
          "cluster: a strip rank beyond nranks", "ranks[1].allocations[0].strip_end[5]",
          "cluster.nranks is 2")
    with_(cl, setf(["ranks", 0, "allocations", 1, "strip_start", 0], -3),
          "cluster: a strip value -3", "ranks[0].allocations[1].strip_start[0]", "got -3")
    with_(cl, setf(["ranks", 1, "rank"], 0), "cluster: a rank twice", "field ranks[1]",
          "rank 0 again")
    with_(cl, setf(["ranks", 0, "faults", "fault_read_remote"], float("nan")),
          "cluster: NaN faults", "ranks[0].faults.fault_read_remote", "NaN")
    with_(cl, setf(["ranks", 1, "migration", "migrations"], "many"),
          "cluster: a string for migrations", "ranks[1].migration.migrations", "a number")
    with_(cl, setf(["ranks", 0, "intervals", 0, 2], -1), "cluster: a negative count",
          "ranks[0].intervals[0][2]", "got -1")
    with_(cl, setf(["ranks", 0, "cluster", "nranks"], 0), "cluster: nranks 0",
          "ranks[0].cluster.nranks", "got 0")
    with_(cl, setf(["cluster", "missing_ranks"], {}), "cluster: an object for a list",
          "cluster.missing_ranks", "a list")
    with_(cl, delf(["ranks"]), "cluster: no ranks", "field ranks:", "missing")
    for name, data, needles in cases:
        path = dump(os.path.join(tmp, re.sub(r"\W+", "_", name) + ".json"), data)
        refused(pagehome, path, name, *needles)
    # the plots too: the refusal comes before any output
    path = os.path.join(tmp, "nodes_1e7.json")
    refused(pagehome, path, "nodes 1e7, with plots", "config.nodes", text_only=False)
    check(not os.path.exists(path + "_out"), "nodes 1e7: no OUTDIR made")


def bad_files(pagehome, data_dir, tmp):
    with open(os.path.join(data_dir, FULL), encoding="utf-8") as f:
        text = f.read()
    files = {
        "truncated": (text[:len(text) // 2], ("not valid JSON",)),
        "empty": ("", ("is empty",)),
        "blanks": ("  \n\t\n", ("is empty",)),
        "not utf-8": (b"{\"pagehome_stats\": 1, \"note\": \"\xff\xfe\"}", ("not text",)),
        "a list": ("[1, 2, 3]", ("not a pagehome statistics file",)),
        "deep": ("[" * 100000 + "]" * 100000, ("nest",)),
        "5000 digits": ('{"pagehome_stats": 1, "totals": {"migrated": ' + "9" * 5000 + "}}",
                        ("JSON",)),
        "1e400": ('{"pagehome_stats": 1, "config": {"nodes": 1e400}}',
                  ("config.nodes", "Infinity")),
        "NaN literal": (text.replace('"nodes": 4', '"nodes": NaN'),
                        ("config.nodes", "NaN")),
    }
    for name, (content, needles) in files.items():
        path = os.path.join(tmp, re.sub(r"\W+", "_", name) + ".json")
        with open(path, "wb") as f:
            f.write(content if isinstance(content, bytes) else content.encode())
        refused(pagehome, path, name, *needles)
    d = os.path.join(tmp, "a_directory.json")
    os.mkdir(d)
    refused(pagehome, d, "a directory", "cannot read", "directory")
    # the merged statistics of rank files in layouts other than the DSM's
    ranks = sorted(os.path.join(data_dir, "cluster", f)
                   for f in os.listdir(os.path.join(data_dir, "cluster"))
                   if f.startswith(("rank", "stats")))
    merged = os.path.join(tmp, "cluster.json")
    rc, _, err = run([pagehome, "cluster", "merge", "-o", merged] + ranks)
    if check(rc == 0 and os.path.isfile(merged), f"cluster merge: exit {rc}: {err}"):
        for plots in (False, True):
            cmd = [pagehome, "report", merged] + (["-o", merged + "_out"] if plots
                                                  else ["--text-only"])
            rc, out, err = run(cmd)
            check(rc == 0 and clean(rc, out, err) is None,
                  f"a merged cluster report of other layouts (plots {plots}): rendered: "
                  f"exit {rc}: {err[-400:]}")
    # pagehome cluster merge -o LINK: the link replaced, its target as it was
    precious = os.path.join(tmp, "precious-cluster")
    with open(precious, "w") as f:
        f.write("the user's file\n")
    link = os.path.join(tmp, "cluster-link.json")
    os.symlink(precious, link)
    rc, _, err = run([pagehome, "cluster", "merge", "-o", link] + ranks)
    with open(precious) as f:
        check(f.read() == "the user's file\n", "cluster merge -o LINK: the target unchanged")
    check(rc == 0 and not os.path.islink(link) and filecmp.cmp(link, merged, shallow=False)
          and f"{link} was a symbolic link to {precious}" in err,
          f"cluster merge -o LINK: the link replaced by the merged file: exit {rc}: {err!r}")
    check(not [f for f in os.listdir(tmp) if f.startswith("cluster-link.json.")],
          "cluster merge: no temporary file left")


# ---- fuzz -------------------------------------------------------------------

SPECIAL = [float("nan"), float("inf"), float("-inf"), -1, -2**63 - 1, 2**64, 1e7, 10**7,
           0, 1, 65, 257, 4097, 1.5, -0.5, "x", "", [], {}, None, True, False,
           [1, 2, 3], {"a": 1}, "\ud800", [[[[]]]], 2**63, -2**63, 1e-300]


def places(data):
    """Every (container, key) in data."""
    out, todo = [], [data]
    while todo:
        v = todo.pop()
        items = v.items() if isinstance(v, dict) else enumerate(v) \
            if isinstance(v, list) else ()
        for k, x in items:
            out.append((v, k))
            if isinstance(x, (dict, list)):
                todo.append(x)
    return out


def mutate(rng, data, text):
    """(bytes of a mutated file, what was done)."""
    op = rng.random()
    if op < 0.08:
        cut = rng.randrange(len(text))
        return text[:cut].encode(), f"cut at {cut}"
    if op < 0.14:
        b = bytearray(text.encode())
        i = rng.randrange(len(b))
        b[i] = rng.randrange(256)
        return bytes(b), f"byte {i} changed"
    d = copy.deepcopy(data)
    what = []
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        spots = places(d)
        if not spots:
            break
        # the small fields are many: half the time pick a list or an object
        containers = [s for s in spots if isinstance(s[0][s[1]], (dict, list))]
        parent, key = rng.choice(containers if containers and rng.random() < 0.3 else spots)
        r = rng.random()
        if r < 0.15:
            del parent[key]
            what.append(f"del {key!r}")
            continue
        if r < 0.25 and isinstance(parent[key], list) and parent[key]:
            n = rng.choice((2, 50, 300))
            parent[key] = (parent[key] * n)[:max(len(parent[key]) * n, 1)]
            what.append(f"{key!r} x{n}")
            continue
        v = rng.choice(SPECIAL)
        parent[key] = copy.deepcopy(v)
        what.append(f"{key!r}={v!r}")
    return json.dumps(d, allow_nan=True).encode(), ", ".join(what)


def fuzz(pagehome, data_dir, tmp):
    rng = random.Random(FUZZ_SEED)
    bases = []
    for name in (FULL, MINIMAL, CLUSTER) + SIM_FIXTURES:
        with open(os.path.join(data_dir, name), encoding="utf-8") as f:
            text = f.read()
        bases.append((name, json.loads(text), text))
    ok = refused_n = 0
    for i in range(FUZZ_CASES):
        name, data, text = bases[rng.randrange(len(bases))]
        content, what = mutate(rng, data, text)
        path = os.path.join(tmp, f"fuzz{i}.json")
        with open(path, "wb") as f:
            f.write(content)
        plots = i % PLOT_EVERY == 0
        cmd = [pagehome, "report", path] + (["-o", os.path.join(tmp, f"fuzz{i}_out")]
                                            if plots else ["--text-only"])
        rc, out, err = run(cmd)
        why = clean(rc, out, err)
        check(why is None, f"fuzz {i} ({name}: {what}; plots {plots}): {why}")
        ok += rc == 0
        refused_n += rc == 1
        os.unlink(path)
        shutil.rmtree(os.path.join(tmp, f"fuzz{i}_out"), ignore_errors=True)
    print(f"fuzz: {FUZZ_CASES} mutations (seed {FUZZ_SEED}): {ok} rendered, "
          f"{refused_n} refused in one line")
    check(ok >= FUZZ_CASES // 10 and refused_n >= FUZZ_CASES // 10,
          f"the fuzz reaches both outcomes ({ok} rendered, {refused_n} refused)")


# ---- internal errors, closed stdout, bounds ---------------------------------

def internal_error(pagehome, data_dir, tmp):
    """A planted bug: one line, or the traceback with PAGEHOME_REPORT_DEBUG=1."""
    src = os.path.dirname(os.path.realpath(pagehome))
    copy_dir = os.path.join(tmp, "buggy")
    os.mkdir(copy_dir)
    for f in ("pagehome_report.py", "report_common.py", "sim_report.py", "cluster_report.py"):
        shutil.copy(os.path.join(src, f), copy_dir)
    script = os.path.join(copy_dir, "pagehome_report.py")
    with open(script, encoding="utf-8") as f:
        code = f.read()
    planted = code.replace("def render_text(run, sections):\n",
                           "def render_text(run, sections):\n    {}['planted bug']\n")
    if not check(planted != code, "the bug can be planted in render_text"):
        return
    with open(script, "w", encoding="utf-8") as f:
        f.write(planted)
    full = os.path.join(data_dir, FULL)
    env = dict(os.environ, PAGEHOME_REPORT_SCRIPT=script)
    env.pop("PAGEHOME_REPORT_DEBUG", None)
    rc, _, err = run([pagehome, "report", "--text-only", full], env=env)
    check(rc == 1 and len(err.splitlines()) == 1 and "internal error" in err and
          "KeyError" in err and "Traceback" not in err,
          f"internal error: one line: exit {rc}: {err!r}")
    env["PAGEHOME_REPORT_DEBUG"] = "1"
    rc, _, err = run([pagehome, "report", "--text-only", full], env=env)
    check(rc != 0 and "Traceback" in err and "planted bug" in err,
          f"PAGEHOME_REPORT_DEBUG=1: the traceback: exit {rc}: {err[-300:]!r}")


def closed_stdout(pagehome, data_dir):
    p = subprocess.Popen([pagehome, "report", "--text-only", os.path.join(data_dir, FULL)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL)
    p.stdout.readline()
    p.stdout.close()
    err = p.stderr.read().decode(errors="replace")
    p.wait(timeout=RUN_TIMEOUT_S)
    p.stderr.close()
    check("Traceback" not in err and "Exception" not in err,
          f"stdout closed early: no traceback: {err!r}")


def bounds(source_dir):
    sys.path.insert(0, os.path.join(source_dir, "tools", "report"))
    sys.dont_write_bytecode = True
    import report_common as rc

    def define(rel, name):
        with open(os.path.join(source_dir, rel), encoding="utf-8") as f:
            m = re.search(rf"#define {name} (\d+)", f.read())
        return int(m.group(1)) if m else None
    for const, rel, name in (("MAX_NODES", "src/topo/topo.h", "PH_MAX_NODES"),
                             ("MAX_STRIP", "src/engine/engine_int.h", "PH_STRIP_MAX"),
                             ("MAX_AREAS", "src/engine/engine_int.h", "PH_HISTORY_MAX"),
                             ("MAX_LOG", "src/engine/stats.c", "PH_LOG_MAX")):
        check(getattr(rc, const) == define(rel, name),
              f"report_common.{const} {getattr(rc, const)} == {name} {define(rel, name)}")
    with open(os.path.join(source_dir, "tools/pagehome/cmd_sim.c"), encoding="utf-8") as f:
        m = re.search(r'parse_int\("--iterations", v, \d+, (\d+)', f.read())
    check(m and int(m.group(1)) == rc.MAX_SIM_ITERATIONS,
          f"report_common.MAX_SIM_ITERATIONS == pagehome sim --iterations' maximum")
    for const, name, plus in (("MAX_CLUSTER_STRIP", "PH_DSM_STRIP_MAX", 0),
                              ("MAX_CLUSTER_ALLOCS", "PH_DSM_RECS_MAX", 0),
                              ("MAX_INTERVALS", "PH_DSM_IVS_MAX", 1)):
        c = define("src/cluster/cluster.h", name)
        check(c is not None and getattr(rc, const) == c + plus,
              f"report_common.{const} {getattr(rc, const)} == {name} {c} + {plus}")
    with open(os.path.join(source_dir, "tools/pagehome/cmd_cluster.c"), encoding="utf-8") as f:
        m = re.search(r"v < 1 \|\| v > (\d+)", f.read())
    check(m and int(m.group(1)) == rc.MAX_RANKS,
          "report_common.MAX_RANKS == pagehome cluster run -n's maximum")


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    pagehome, data_dir, source_dir = (os.path.abspath(a) for a in sys.argv[1:4])
    tmp = tempfile.mkdtemp(prefix="ph-report-hostile-")
    try:
        bounds(source_dir)
        links(pagehome, data_dir, tmp)
        bad_values(pagehome, data_dir, tmp)
        bad_files(pagehome, data_dir, tmp)
        internal_error(pagehome, data_dir, tmp)
        closed_stdout(pagehome, data_dir)
        fuzz(pagehome, data_dir, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"slowest run: {slowest[0]:.2f} s ({slowest[1]})")
    print(f"check_hostile: {passed} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
