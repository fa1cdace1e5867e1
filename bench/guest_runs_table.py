#!/usr/bin/env python3
"""guest_runs_table.py MANIFEST -- the table and the targets of
bench/guest_runs.sh (run by guest_runs_inner.sh in the NUMA guest; also
runs on the host on a kept output directory: guest_runs.sh --outdir DIR).

MANIFEST has one tab-separated line per run:
    workload placement mode exit_status seconds stdout report plain_stdout
(placement "-" and report "-" for the plain run, mode "plain").

Per run, from the `pagehome run --report` JSON:
  owner-local  page-weighted over the areas: sum of
               sampled_pages_on_top_accessor / sum of sampled_pages (of the
               pages the sampler ever saw, those whose home at the end is
               the node that accessed them most); n/a when nothing was
               sampled.  A plain run cannot measure it.
  migrated, frozen, failed    the report's totals
  moved twice  sum of the areas' pages_moved_twice, as % of their pages
  bound        "NO" when the OpenMP runtime said on stderr that it could
               not bind threads (libomp: "affinity not supported"): then
               OMP_PROC_BIND did not pin one thread per node in that run
  match        the program's stdout, timing fields (*_s=...) removed, equal
               to the plain run's, its verification line "verification:
               ok", exit status 0 in both.  Anything else: MISMATCH.

Targets (runs with pagehome on: auto, iterative, sampling, hybrid):
  - from node:0, every iterative workload (laplace, laplace_f, swim, bt,
    sp, cg, mg, ft) >= 90% owner-local at the end with pagehome's own
    choice of mechanism (mode auto, what `pagehome run` does unasked);
    the forced mechanisms' figures are printed beside it, for information;
  - xsbench (a table every thread reads at random): <= 1% of its pages
    migrated, in every run with pagehome on;
  - every workload, every run with pagehome on: <= 5% of its pages
    migrated more than once.
(Modes auto and the forced ones of an older output directory without auto:
the forced ones are judged.)

Exit status: 0 every run matched its plain run, 1 otherwise (MISMATCH or a
failed run), 2 bad input.  Targets not met do not change it.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from guest_output import normalise, read_lines  # noqa: E402

ON_MODES = ("auto", "iterative", "sampling", "hybrid")
LOCAL_TARGET = 0.90
LOCAL_WORKLOADS = ("laplace", "laplace_f", "swim", "bt", "sp", "cg", "mg", "ft")
SHARED_MOVED_TARGET = 0.01
TWICE_TARGET = 0.05




def verification(lines):
    found = [line for line in lines or [] if line.startswith("verification:")]
    return found[-1] if found else None


UNBOUND = re.compile(r"affinity not supported|getaffinity system call not supported")


def unbound(out_path):
    """1 when the run's stderr (next to its stdout) says threads were not bound."""
    err = read_lines(out_path[:-4] + ".err" if out_path.endswith(".out") else out_path + ".err")
    return any(UNBOUND.search(line) for line in err or [])


def load_report(path):
    if path == "-":
        return None, None
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f), None
    except OSError as e:
        return None, "no report (%s)" % e.strerror
    except ValueError as e:
        return None, "unreadable report (%s)" % e


def summarise(rep):
    """The numbers of one report, None where it has none."""
    areas = rep.get("areas") or []
    totals = rep.get("totals") or {}
    sampled = sum(a.get("sampled_pages") or 0 for a in areas)
    local = sum(a.get("sampled_pages_on_top_accessor") or 0 for a in areas)
    pages = sum(a.get("pages") or 0 for a in areas)
    twice = sum(a.get("pages_moved_twice") or 0 for a in areas)
    huge = {k: totals.get(k, 0) for k in ("huge_migrated", "huge_split", "huge_collapsed")}
    return {
        "sampled": sampled,
        "local": local / sampled if sampled else None,
        "pages": pages,
        "twice": twice,
        "twice_share": twice / pages if pages else None,
        "migrated": totals.get("migrated"),
        "frozen": totals.get("frozen"),
        "failed": totals.get("failed"),
        "huge": huge,
        "areas": len(areas),
        "iteration": ((rep.get("transparent") or {}).get("openmp") or {}).get("iteration"),
        "mechanism": (rep.get("config") or {}).get("mechanism"),
        "observe": (rep.get("config") or {}).get("observe"),
    }


def pct(x, digits=1):
    return "n/a" if x is None else "%.*f%%" % (digits, 100.0 * x)


def num(x):
    return "-" if x is None else str(x)


def main(argv):
    if len(argv) != 2:
        print("usage: guest_runs_table.py MANIFEST", file=sys.stderr)
        return 2
    rows = []
    try:
        with open(argv[1], encoding="utf-8") as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                if len(parts) != 8:
                    continue
                rows.append(parts)
    except OSError as e:
        print("guest_runs_table: %s: %s" % (argv[1], e.strerror), file=sys.stderr)
        return 2
    # a manifest written in the guest names /mnt/out/...; read on the
    # host, the files are next to it
    base = os.path.dirname(os.path.abspath(argv[1]))

    def local_path(p):
        if p == "-" or os.path.exists(p):
            return p
        q = os.path.join(base, "runs", os.path.basename(p))
        return q if os.path.exists(q) else p

    table = []
    mismatches = []
    notes = []
    results = []
    for w, place, mode, rc, secs, out, rep_path, plain_out in rows:
        out, rep_path, plain_out = local_path(out), local_path(rep_path), local_path(plain_out)
        lines = read_lines(out)
        ref = read_lines(plain_out)
        ver = verification(lines)
        if mode == "plain":
            ok = rc == "0" and ver is not None and ver.startswith("verification: ok")
            match = "reference" if ok else "FAILED"
            if not ok:
                mismatches.append("%s plain: exit %s, %s" % (w, rc, ver or "no verification line"))
            table.append([w, "-", "plain", "n/a", "-", "-", "-", "-", "-",
                          "NO" if unbound(out) else "yes", secs, match])
            continue
        why = []
        if rc != "0":
            why.append("exit status %s" % rc)
        if lines is None:
            why.append("no stdout")
        elif ref is not None and normalise(lines) != normalise(ref):
            rv = verification(ref)
            if ver != rv:
                why.append("verification line %r, plain run %r" % (ver, rv))
            else:
                diff = [(a, b) for a, b in zip(normalise(lines), normalise(ref)) if a != b]
                if diff:
                    why.append("stdout differs: %r, plain run %r" % diff[0])
                else:
                    why.append("stdout differs: %d lines, plain run %d" % (len(lines), len(ref)))
        if ver is None or not ver.startswith("verification: ok"):
            why.append("verification: %s" % (ver or "no line"))
        rep, err = load_report(rep_path)
        s = summarise(rep) if rep is not None else None
        if s is None:
            why.append(err or "no report")
        match = "MISMATCH" if why else "yes"
        if why:
            mismatches.append("%s %s %s: %s" % (w, place, mode, "; ".join(why)))
        bound = "NO" if unbound(out) else "yes"
        if s is None:
            table.append([w, place, mode, "n/a", "-", "-", "-", "-", "-", bound, secs, match])
            continue
        s["bound"] = bound == "yes"
        results.append((w, place, mode, s))
        if any(s["huge"].values()):
            notes.append("%s %s %s: huge pages migrated %d, split %d, collapsed %d"
                         % (w, place, mode, s["huge"]["huge_migrated"], s["huge"]["huge_split"],
                            s["huge"]["huge_collapsed"]))
        if mode == "off" and (s["migrated"] or 0) > 0:
            notes.append("%s %s off: %s pages migrated with PAGEHOME_OBSERVE=1" % (w, place, s["migrated"]))
        table.append([w, place, mode, pct(s["local"]), "%d/%d" % (s["sampled"], s["pages"]),
                      num(s["migrated"]), num(s["frozen"]), num(s["failed"]),
                      "%s (%d)" % (pct(s["twice_share"], 2), s["twice"]), bound, secs, match])

    head = ["workload", "placement", "mode", "owner-local", "sampled/hot pages", "migrated",
            "frozen", "failed", "moved twice", "bound", "time s", "match"]
    widths = [max(len(str(r[i])) for r in table + [head]) for i in range(len(head))]

    def fmt(r):
        return "| " + " | ".join(str(c).ljust(widths[i]) for i, c in enumerate(r)) + " |"
    print()
    print(fmt(head))
    print("|" + "|".join("-" * (wd + 2) for wd in widths) + "|")
    for r in table:
        print(fmt(r))
    print()
    print("owner-local: share of the sampled pages whose home at the end is the node that")
    print("accessed them most (page-weighted over the areas); moved twice: % of the hot pages;")
    print("mode off = PAGEHOME_OBSERVE=1 (samples, never moves); time: guest wall seconds;")
    print("bound NO: the OpenMP runtime could not bind the threads (OMP_PROC_BIND had no effect).")
    nunbound = sum(1 for r in table if r[9] == "NO")
    if nunbound:
        print("WARNING: %d run(s) ran with unbound threads (see the bound column)" % nunbound)
    for n in notes:
        print("note: " + n)

    # ---- targets
    print()
    print("targets:")
    tally = {"met": 0, "not met": 0, "n/a": 0}

    def judge(met, line, counted=True):
        if counted:
            tally["met" if met else "not met"] += 1
            print("  %s, %s" % (line, "met" if met else "not met"))
        else:
            print("  %s (for information)" % line)

    for w in LOCAL_WORKLOADS:
        runs = [(m, s) for (ww, p, m, s) in results if ww == w and p == "node:0" and m in ON_MODES]
        if not runs:
            print("  %-9s from node:0, owner-local >= 90%%: not evaluated (no run)" % w)
            tally["n/a"] += 1
            continue
        has_auto = any(m == "auto" for m, _ in runs)
        for m, s in runs:
            line = "%-9s from node:0, owner-local >= 90%% (%s): %s%s" % (
                w, m, pct(s["local"]), "" if s["bound"] else " (threads not bound)")
            judge(s["local"] is not None and s["local"] >= LOCAL_TARGET, line,
                  m == "auto" or not has_auto)
    xs = [(p, m, s) for (ww, p, m, s) in results if ww == "xsbench" and m in ON_MODES]
    if not xs:
        print("  xsbench   <= 1% of its pages migrated: not evaluated (no run)")
        tally["n/a"] += 1
    for p, m, s in xs:
        if not s["sampled"] and not s["migrated"]:
            print("  xsbench   <= 1%% of its pages migrated (%s, %s): not evaluated "
                  "(the engine sampled nothing; iteration found: %s)" % (p, m, s["iteration"] or "none"))
            tally["n/a"] += 1
            continue
        share = (s["migrated"] or 0) / s["pages"] if s["pages"] else None
        judge(share is not None and share <= SHARED_MOVED_TARGET,
              "xsbench   <= 1%% of its pages migrated (%s, %s): %s (%d moves, %d pages)%s" %
              (p, m, pct(share, 2), s["migrated"] or 0, s["pages"],
               "" if s["bound"] else " (threads not bound)"))
    over = [(w, p, m, s) for (w, p, m, s) in results
            if m in ON_MODES and s["twice_share"] is not None and s["twice_share"] > TWICE_TARGET]
    on_runs = sum(1 for r in results if r[2] in ON_MODES)
    for w, p, m, s in over:
        judge(False, "%-9s <= 5%% of its pages migrated twice (%s, %s): %s (%d of %d pages)" %
              (w, p, m, pct(s["twice_share"], 2), s["twice"], s["pages"]))
    if on_runs and not over:
        judge(True, "every run: <= 5%% of its pages migrated twice (%d runs with pagehome on)" % on_runs)

    print("targets: %d met, %d not met, %d not evaluated" % (tally["met"], tally["not met"], tally["n/a"]))

    print()
    if mismatches:
        print("!" * 72)
        for m in mismatches:
            print("MISMATCH: " + m)
        print("!" * 72)
        print("guest_runs: %d of %d runs did NOT match the plain run" % (len(mismatches), len(rows)))
        return 1
    print("guest_runs: all %d runs matched their plain run (stdout and verification line)" % len(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
