#!/usr/bin/env python3
"""vs_autonuma_table.py MANIFEST [--plot PNG] -- the table, the goals and
the plot of bench/vs_autonuma.sh (run by vs_autonuma_inner.sh in the NUMA
guest; also runs on the host on a kept output directory).

MANIFEST has one tab-separated line per run:
    workload config numa_balancing scan_delay_ms exit seconds base migrate placement
(config kernel.D, pagehome or both.D; base the path of the run's files
without extension: .out, .err, .json (pagehome's report), .vm0 and .vm1
(/proc/vmstat before and after)).

Per run:
  start, end    owner-local share at iteration 0 (the placement the loop
                starts from) and after the last iteration: the program's
                own "locality:" lines (move_pages(2) status queries of its
                arrays, the same query in every configuration)
  >=90% at      the first iteration whose share is >= 90%, and its time
                (seconds since the loop started); "-" if never
  kernel moved  numa_pages_migrated delta (NUMA balancing's migrations)
  ph moved      pagehome's report: totals.migrated
  all moved     pgmigrate_success delta (every migration: both of them)
  twice         pages the program saw on a new node at two or more of its
                iteration ends (a lower bound for every configuration),
                and pagehome's own count (its report's pages_moved_twice)
  hint faults   numa_hint_faults delta
  time s        guest wall seconds of the run
  ok            exit status 0 and "verification: ok", and stdout (timings
                removed) equal to the workload's first run's

Goals (per workload, judged on this one run):
  G1  pagehome alone reaches >= 90% owner-local within 2 iterations
  G2  ... sooner in time than the kernel alone (each scan delay; a kernel
      run that never reaches 90% counts as later)
  G3  ... with no more migrations than the kernel alone (pagehome's
      all-moved against the kernel run's all-moved, each scan delay)
  G4  both together never worse than pagehome alone: reaches 90% in no
      more iterations and ends no more than 1 point lower (each delay)

Exit status: 0 every run verified, 1 otherwise, 2 bad input.  Goals not
met do not change it.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from guest_output import normalise, read_lines  # noqa: E402

LOCAL_GOAL = 0.90
GOAL_ITERS = 2
BOTH_SLACK = 0.01
LOC = re.compile(r"^locality: iter=(\d+) t_s=(\S+) owner_local=(\S+) pages=(\d+) absent=(\d+)"
                 r" stale=(\d+) on=(\S+) moved=(\d+) moved_twice=(\d+)")



def vmstat(path):
    d = {}
    for line in read_lines(path) or []:
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            d[parts[0]] = int(parts[1])
    return d


def series(err_lines):
    """[(iter, t_s, share, moved_twice)] from the program's locality lines."""
    out = []
    for line in err_lines or []:
        m = LOC.match(line)
        if m:
            out.append((int(m.group(1)), float(m.group(2)), float(m.group(3)),
                        int(m.group(9))))
    return out


def report(path):
    try:
        with open(path, encoding="utf-8") as f:
            rep = json.load(f)
    except (OSError, ValueError):
        return None
    areas = rep.get("areas") or []
    return {
        "migrated": (rep.get("totals") or {}).get("migrated"),
        "twice": sum(a.get("pages_moved_twice") or 0 for a in areas),
        "mechanism": (rep.get("config") or {}).get("mechanism"),
    }


def load(manifest):
    runs = []
    first_out = {}
    for line in read_lines(manifest) or []:
        f = line.split("\t")
        if len(f) != 9:
            continue
        w, cfg, bal, delay, rc, secs, base, mig, placement = f
        if not os.path.exists(base + ".out"):  # the guest's path: read on the host
            base = os.path.join(os.path.dirname(os.path.abspath(manifest)), "runs",
                                os.path.basename(base))
        out = read_lines(base + ".out")
        err = read_lines(base + ".err")
        vm0, vm1 = vmstat(base + ".vm0"), vmstat(base + ".vm1")

        def delta(k, a=vm0, b=vm1):
            return b.get(k, 0) - a.get(k, 0) if k in a and k in b else None

        s = series(err)
        reached = next((p for p in s if p[0] >= 1 and p[2] >= LOCAL_GOAL), None)
        verified = rc == "0" and any(x.startswith("verification: ok") for x in out or [])
        norm = normalise(out or [])
        first_out.setdefault(w, norm)
        runs.append({
            "workload": w, "config": cfg, "placement": placement, "balancing": bal, "delay": delay, "rc": rc,
            "seconds": float(secs), "series": s,
            "start": s[0][2] if s else None, "end": s[-1][2] if s else None,
            "iters": s[-1][0] if s else 0,
            "reach_iter": reached[0] if reached else None,
            "reach_t": reached[1] if reached else None,
            "kmoved": delta("numa_pages_migrated"),
            "allmoved": delta("pgmigrate_success"),
            "hint": delta("numa_hint_faults"),
            "hint_local": delta("numa_hint_faults_local"),
            "twice": s[-1][3] if s else None,
            "rep": report(base + ".json") if mig != "off" else None,
            "ok": verified and norm == first_out[w],
            "verified": verified,
        })
    return runs


def pct(x):
    return "n/a" if x is None else "%.1f%%" % (100.0 * x)


def num(x):
    return "n/a" if x is None else str(x)


def table(runs):
    head = ["workload", "placement", "config", "delay ms", "iters", "start", "end", ">=90% at",
            "kernel moved", "ph moved", "all moved", "twice (ph)", "hint faults",
            "time s", "ok"]
    rows = []
    for r in runs:
        rep = r["rep"]
        reach = ("it %d, %.1f s" % (r["reach_iter"], r["reach_t"])
                 if r["reach_iter"] is not None else "-")
        twice = num(r["twice"]) + (" (%s)" % num(rep["twice"]) if rep else "")
        rows.append([r["workload"], r["placement"], r["config"].split(".")[0], r["delay"], str(r["iters"]),
                     pct(r["start"]), pct(r["end"]), reach, num(r["kmoved"]),
                     num(rep["migrated"]) if rep else "-", num(r["allmoved"]), twice,
                     num(r["hint"]), "%.1f" % r["seconds"],
                     "yes" if r["ok"] else ("MISMATCH" if r["verified"] else "FAILED")])
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h)
              for i, h in enumerate(head)]
    line = lambda cells: "| " + " | ".join(c.ljust(wd) for c, wd in zip(cells, widths)) + " |"
    print(line(head))
    print("|" + "|".join("-" * (wd + 2) for wd in widths) + "|")
    for row in rows:
        print(line(row))
    if any(r["placement"].startswith("node:") for r in runs):
        print()
        print("note: --placement node:N binds the arrays' mappings to node N (MPOL_PREFERRED);"
              " the kernel's NUMA balancing skips a mapping with a policy of its own, so in"
              " those rows it cannot move the arrays' pages")


def goals(runs):
    print()
    print("| goal | workload | result |")
    print("|---|---|---|")
    met_all = True
    for w in dict.fromkeys(r["workload"] for r in runs):
        rs = [r for r in runs if r["workload"] == w]
        ph = next((r for r in rs if r["config"] == "pagehome"), None)
        kern = [r for r in rs if r["config"].startswith("kernel.")]
        both = [r for r in rs if r["config"].startswith("both.")]
        results = []
        if ph is None:
            results.append(("G1-G4", "no pagehome run"))
        else:
            ok = ph["reach_iter"] is not None and ph["reach_iter"] <= GOAL_ITERS
            results.append(("G1 >=90%% in <=%d iterations" % GOAL_ITERS,
                            ("met" if ok else "**missed**") + ": %s at iteration %s (end %s)"
                            % ("reached" if ph["reach_iter"] is not None else "never",
                               num(ph["reach_iter"]), pct(ph["end"]))))
            for k in kern:
                kt = k["reach_t"]
                ok2 = ph["reach_t"] is not None and (kt is None or ph["reach_t"] < kt)
                results.append(("G2 sooner than kernel (delay %s ms)" % k["delay"],
                                ("met" if ok2 else "**missed**") + ": pagehome %s, kernel %s"
                                % ("%.1f s" % ph["reach_t"] if ph["reach_t"] is not None
                                   else "never",
                                   "%.1f s" % kt if kt is not None else "never (end %s)"
                                   % pct(k["end"]))))
                pm, km = ph["allmoved"], k["allmoved"]
                ok3 = pm is not None and km is not None and pm <= km
                results.append(("G3 no more migrations than kernel (delay %s ms)" % k["delay"],
                                ("met" if ok3 else "**missed**") + ": pagehome %s pages, kernel %s"
                                % (num(pm), num(km))))
            for b in both:
                bi, pi = b["reach_iter"], ph["reach_iter"]
                ok4 = (b["end"] is not None and ph["end"] is not None and
                       b["end"] >= ph["end"] - BOTH_SLACK and
                       (pi is None or (bi is not None and bi <= pi)))
                results.append(("G4 both not worse (delay %s ms)" % b["delay"],
                                ("met" if ok4 else "**missed**") +
                                ": both >=90%% at iteration %s, end %s; pagehome alone %s, %s"
                                % (num(bi), pct(b["end"]), num(pi), pct(ph["end"]))))
        for g, res in results:
            met_all = met_all and res.startswith("met")
            print("| %s | %s | %s |" % (g, w, res))
    print()
    print("goals: %s" % ("all met" if met_all else "NOT all met (see **missed** above)"))


def plot(runs, png):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot: no matplotlib (apt-get install python3-matplotlib): %s not written" % png)
        return
    wls = list(dict.fromkeys(r["workload"] for r in runs))
    if not wls:
        return
    fig, axes = plt.subplots(len(wls), 1, figsize=(8, 2.6 * len(wls)), squeeze=False)
    colour = {"kernel": "tab:blue", "pagehome": "tab:red", "both": "tab:green"}
    for ax, w in zip(axes[:, 0], wls):
        delays = sorted({r["delay"] for r in runs if r["delay"] != "-"},
                        key=lambda d: -int(d) if d.isdigit() else 0)
        for r in (r for r in runs if r["workload"] == w and r["series"]):
            kind = r["config"].split(".")[0]
            style = "-" if r["delay"] == "-" or r["delay"] == delays[0] else "--"
            label = kind if r["delay"] == "-" else "%s, scan delay %s ms" % (kind, r["delay"])
            xs = [p[1] for p in r["series"]]
            ys = [100.0 * p[2] for p in r["series"]]
            ax.plot(xs, ys, style, color=colour.get(kind, "black"), label=label, lw=1.4)
        ax.axhline(100.0 * LOCAL_GOAL, color="grey", lw=0.8, ls=":")
        ax.set_ylim(0, 102)
        ax.set_title(w, fontsize=10, loc="left")
        ax.set_ylabel("owner-local %")
        ax.legend(fontsize=7, loc="lower right")
    axes[-1, 0].set_xlabel("seconds since the loop started (guest)")
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    print("plot: %s" % png)


def main(argv):
    args = argv[1:]
    png = None
    if "--plot" in args:
        i = args.index("--plot")
        if i + 1 >= len(args):
            print(__doc__, file=sys.stderr)
            return 2
        png = args[i + 1]
        del args[i:i + 2]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    runs = load(args[0])
    if not runs:
        print("vs_autonuma_table: no runs in %s" % args[0], file=sys.stderr)
        return 2
    if png:
        plot(runs, png)
        return 0
    table(runs)
    goals(runs)
    bad = [r for r in runs if not r["ok"]]
    for r in bad:
        print("vs_autonuma: %s %s: %s (exit %s)" % (r["workload"], r["config"],
              "MISMATCH with the first run's stdout" if r["verified"] else "FAILED", r["rc"]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
