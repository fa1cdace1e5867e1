#!/usr/bin/env python3
"""swim_tables.py RESULTS -- the tables of bench/cluster/swim_tables.sh.

RESULTS holds one line per job:
  where=W config=C stats=DIR swim_dsm: N=.. steps=.. ranks=R ... time_s=S
with DIR/rank*.json the ranks' statistics (src/cluster/stats.c).  Prints
paper 004's Tables 1, 3 and 4 (swim: no placement, placement by home
migration, + privatisation) per place beside the paper's wall times, the
per-rank counts of every job, and issue 12's swim targets with met / not
met.
"""
import glob
import json
import statistics
import sys

from kvlog import fields

# Paper 004, wall time in seconds of swim (train data set, 300 iterations)
# at 1, 2, 4 and 8 threads on JIAJIA: Table 1 (no placement), Table 3 (page
# placement by home migration), Table 4 (placement and privatisation).
PAPER = {
    "none": ("Table 1", {1: 267.67, 2: 200.28, 4: 153.8, 8: 132.13}),
    "migration": ("Table 3", {1: 248.27, 2: 172.54, 4: 112.32, 8: 84.01}),
    "private": ("Table 4", {1: 247.67, 2: 169.28, 4: 107.9, 8: 77.13}),
}
CONFIGS = ["none", "block", "migration", "private"]
WHERE_ORDER = {"shm": 0, "net:none": 1, "net:1gbit": 2, "net:100mbit": 3}


def parse(path):
    jobs = []
    with open(path) as f:
        for line in f:
            d, _ = fields(line)
            if "time_s" in d:
                d["ranks"] = int(d["ranks"])
                d["time_s"] = float(d["time_s"])
                jobs.append(d)
    return jobs


def rank_stats(job):
    out = []
    for path in sorted(glob.glob(job["stats"] + "/rank*.json")):
        with open(path) as f:
            out.append(json.load(f))
    out.sort(key=lambda s: s["cluster"]["rank"])
    return out


def ro_after_first(s):
    """Read-only page fetches after the first interval that had any."""
    k = s["interval_fields"].index("fetched_readonly")
    seen, later = False, 0
    for iv in s["intervals"]:
        if iv[k] and not seen:
            seen = True
        elif iv[k]:
            later += iv[k]
    return later


def main():
    jobs = parse(sys.argv[1])
    if not jobs:
        print("swim_tables: no results")
        return 1
    places = sorted({j["where"] for j in jobs}, key=lambda w: WHERE_ORDER.get(w, 9))
    ranks = sorted({j["ranks"] for j in jobs})
    med = {}
    for j in jobs:
        med.setdefault((j["where"], j["config"], j["ranks"]), []).append(j["time_s"])
    med = {k: statistics.median(v) for k, v in med.items()}
    base1 = {c: med.get(("shm", c, 1)) for c in CONFIGS}

    for w in places:
        print(f"\n== {w}: swim_dsm wall time of the steps, seconds (speedup over 1 rank, shm), "
              f"paper 004 beside it ==")
        hdr = f"{'configuration':<34}" + "".join(f"{r:>8} rank{'s' if r > 1 else ' '}" for r in ranks)
        print(hdr + "   | paper 004 wall s (speedup) at " + ", ".join(str(r) for r in ranks) + " threads")
        for c in CONFIGS:
            name = {"none": "Table 1: none (round-robin)", "block": "static block homes",
                    "migration": "Table 3: placement by migration",
                    "private": "Table 4: + privatisation"}[c]
            cells = ""
            for r in ranks:
                t = med.get((w, c, r))
                if t is None:
                    cells += f"{'-':>14}"
                else:
                    b = base1.get(c)
                    sp = f"({b / t:.2f})" if b else ""
                    cells += f"{t:>8.3f}{sp:>6}"
            paper = ""
            if c in PAPER:
                tab, p = PAPER[c]
                paper = ", ".join(f"{p[r]:.1f} ({p[1] / p[r]:.2f})" for r in ranks if r in p)
            print(f"{name:<34}{cells}   | {paper}")

    print("\n== per-rank counts (first repetition of each job) ==")
    print("faults: read remote/home, write remote/home; fetched: pages (read-only ones, "
          "after their first interval); diffs sent; migrations in/out; page classes "
          "private/read_only/single_writer/shared")
    seen = set()
    for j in sorted(jobs, key=lambda j: (WHERE_ORDER.get(j["where"], 9), j["ranks"],
                                         CONFIGS.index(j["config"]))):
        key = (j["where"], j["config"], j["ranks"])
        if key in seen:
            continue
        seen.add(key)
        print(f"{j['where']} {j['config']} ranks={j['ranks']} time_s={j['time_s']:.3f}")
        for s in rank_stats(j):
            f, t, y, m, pc = s["faults"], s["traffic"], s["sync"], s["migration"], s["page_classes"]
            print(f"  rank {s['cluster']['rank']}: faults {f['fault_read_remote']}/"
                  f"{f['fault_read_home']} {f['fault_write_remote']}/{f['fault_write_home']}"
                  f"  fetched {t['pages_fetched']} + {t.get('pages_refreshed', 0)} refreshed (ro {y.get('readonly_fetched', 0)}, after "
                  f"{ro_after_first(s)})  diffs {t['diffs_sent']}  migrations "
                  f"{m['migrated_in']}/{m['migrated_out']} of {m['migrations']}  classes "
                  f"{pc.get('private', 0)}/{pc.get('read_only', 0)}/"
                  f"{pc.get('single_writer', 0)}/{pc.get('shared', 0)}  barriers {y['barriers']}")

    print("\n== targets (issue 12 item 6) ==")
    for w in places:
        r = max(ranks)
        mig, blk, non = (med.get((w, c, r)) for c in ("migration", "block", "none"))
        if mig and blk and non:
            best = min(blk, non)
            ratio = mig / best
            print(f"{w}, {r} ranks: first-touch by migration {mig:.3f} s / best static "
                  f"({'block' if blk <= non else 'round-robin'}) {best:.3f} s = {ratio:.3f}: "
                  f"{'met' if ratio <= 1.10 else 'NOT met'} (target <= 1.10)")
        later = total = 0
        nj = 0
        for j in jobs:
            if j["where"] == w and j["config"] == "private":
                for s in rank_stats(j):
                    later += ro_after_first(s)
                    total += s["sync"].get("readonly_fetched", 0)
                nj += 1
        if nj:
            print(f"{w}: privatisation, {nj} job(s): {total} read-only page fetches in all, "
                  f"{later} after the first interval: {'met' if later == 0 else 'NOT met'} "
                  f"(target 0)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
