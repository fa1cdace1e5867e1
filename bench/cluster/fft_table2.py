#!/usr/bin/env python3
"""fft_table2.py OUT -- the tables of bench/cluster/fft_table2.sh.

OUT/raw holds one result line per job, tagged by the script:
  where=W fft_dsm impl=I N=n ranks=R threads=T homes=H median_seconds=S
      fetched=P gets=G
(S: the median seconds of the job's transforms; P and G: the pages all
ranks fetched and the gets that fetched them, during its last transform),
and OUT/stats/W.I.RxT.rK.{begin,end}.json every rank's DSM statistics
around that last transform (fft_dsm --stats).  Prints, per place:
  1. paper 002 Table 2: seconds per transform at 1x1, 1x2, 2x1, 4x1
     (ranks x threads; across hosts the 1-rank columns are the
     shared-memory runs), the speedup of 2x1 over 1x1, the pages fetched
     and gets of one transform, and the paper's seconds beside;
  2. the targets of issue 12 (bench/README.md), implementation 4 (gangs,
     block homes): 2 ranks faster than 1 rank; fewer pages fetched than the
     same transform without gangs (flat) at the same ranks;
  3. per rank, the event counts of paper 002 Table 3 during one transform
     (end - begin), with the paper's 4x1 counts of implementation 4.
"""
import os
import sys

from dsmstats import KEYS, missing_ends, rank_events
from kvlog import fields, fmt

IMPLS = ["0", "1", "2", "3", "4", "flat"]
DESCR = {"0": "sequential hybrid", "1": "gangs, recursive leaves",
         "2": "gangs, hybrid leaves", "3": "gangs, recursive leaves",
         "4": "gangs, hybrid leaves", "flat": "no gangs, a barrier a stage"}
CONFIGS = ["1x1", "1x2", "2x1", "4x1"]
# paper 002 Table 2: seconds on 550 MHz Pentium III boxes, 100 Mbit Ethernet
PAPER = {"0": {"1x1": 1.5},
         "1": {"1x1": 3.4, "1x2": 2.3, "2x1": 5.9, "4x1": 5.5},
         "2": {"1x1": 1.6, "1x2": 1.4, "2x1": 5.0, "4x1": 5.1},
         "3": {"1x1": 3.3, "1x2": 2.0, "2x1": 3.7, "4x1": 3.3},
         "4": {"1x1": 1.6, "1x2": 1.4, "2x1": 2.8, "4x1": 2.9}}
# paper 002 Table 3: implementation 4, 4x1 (every box the same counts)
PAPER_T3 = ("remote write faults 768, remote read faults 1026, barriers 6, "
            "messages 4170, bytes sent 2384168")
WHERE_ORDER = {"shm": 0, "net:none": 1, "net:100mbit": 2}
TARGET = "4"


def parse(path):
    rows = {}
    with open(path) as f:
        for line in f:
            d, _ = fields(line)
            if "median_seconds" in d:
                cfg = f"{d['ranks']}x{d['threads']}"
                rows[(d["where"], d["impl"], cfg)] = d
    return rows


def main():
    out = sys.argv[1]
    rows = parse(os.path.join(out, "raw"))
    places = sorted({w for (w, _, _) in rows}, key=lambda w: (WHERE_ORDER.get(w, 9), w))
    status = 0

    def row(place, impl, cfg):
        # 1 rank runs on shared memory only: the net tables use it
        return rows.get((place if not cfg.startswith("1x") else "shm", impl, cfg))

    def secs(place, impl, cfg):
        r = row(place, impl, cfg)
        return float(r["median_seconds"]) if r else None

    for place in places:
        print()
        print(f"== {place}: paper 002 Table 2 (seconds per transform, the median; "
              f"ranks x threads; speedup = 1x1 / 2x1 of the same implementation; "
              f"fetched / gets: one transform, all ranks; paper: SCASH, 550 MHz "
              f"Pentium III boxes, 100 Mbit Ethernet) ==")
        hdr = ["impl", "homes"] + CONFIGS + ["speedup 2x1", "fetched 2x1", "gets 2x1",
                                             "fetched 4x1", "gets 4x1"] + \
              [f"paper {c}" for c in CONFIGS]
        print("| " + " | ".join(hdr) + " |")
        print("|" + "---|" * len(hdr))
        for impl in IMPLS:
            t = {c: secs(place, impl, c) for c in CONFIGS}
            if not any(t.values()):
                continue
            homes = next((row(place, impl, c)["homes"] for c in CONFIGS if row(place, impl, c)), "")
            sp = t["1x1"] / t["2x1"] if t["1x1"] and t["2x1"] else None
            r2, r4 = row(place, impl, "2x1"), row(place, impl, "4x1")
            p = PAPER.get(impl, {})
            print("| " + " | ".join([f"{impl} ({DESCR[impl]})", homes] +
                                    [fmt(t[c]) for c in CONFIGS] +
                                    [fmt(sp), r2["fetched"] if r2 else "", r2["gets"] if r2 else "",
                                     r4["fetched"] if r4 else "", r4["gets"] if r4 else ""] +
                                    [fmt(p.get(c)) for c in CONFIGS]) + " |")

        print()
        print(f"targets ({place}; implementation {TARGET}: gangs, hybrid leaves, block homes):")
        t1, t2 = secs(place, TARGET, "1x1"), secs(place, TARGET, "2x1")
        if t1 and t2:
            print(f"  2 ranks faster than 1 rank: {t1:.4f} s -> {t2:.4f} s, speedup "
                  f"{t1 / t2:.2f}: {'met' if t2 < t1 else 'NOT met'}")
        for cfg in ("2x1", "4x1"):
            g, f = row(place, TARGET, cfg), row(place, "flat", cfg)
            if g and f:
                a, b = int(g["fetched"]), int(f["fetched"])
                print(f"  fewer pages fetched than without gangs, {cfg}: {a} against {b} "
                      f"(flat): {'met' if a < b else 'NOT met'}")

        print()
        print(f"== {place}: events per rank during one transform (paper 002 Table 3's "
              f"counts; msgs = MPI one-sided calls + collectives; B = bytes; "
              f"paper, implementation 4 at 4x1: {PAPER_T3}) ==")
        print("| impl | ranks x threads | rank | " + " | ".join(KEYS) + " |")
        print("|" + "---|" * (len(KEYS) + 3))
        for impl in IMPLS:
            for cfg in ("2x1", "4x1"):
                if (place, impl, cfg) not in rows:
                    continue
                n = int(cfg.split("x")[0])
                base = os.path.join(out, "stats", f"{place.replace(':', '-')}.{impl}.{cfg}")
                for k in range(n):
                    d, _ = rank_events(base, k)
                    if d is None:
                        print(f"| {impl} | {cfg} | {k} | (no statistics) |")
                        status = 1
                        continue
                    print(f"| {impl} | {cfg} | {k} | " + " | ".join(str(d[x]) for x in KEYS) + " |")
    missing = missing_ends(out)
    if missing:
        print(f"{len(missing)} rank(s) wrote statistics before the transform but not after")
        status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
