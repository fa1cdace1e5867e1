#!/usr/bin/env python3
"""laplace_table1.py OUT -- the tables of bench/cluster/laplace_table1.sh.

OUT/raw holds one result line per job, tagged by the script:
  rep=R where=W laplace7 variant=V homes=H ranks=N threads=1 n=.. iters=..
      seconds=S first_half=A second_half=B barriers=P checksum=C
  rep=R where=W prog=laplace_mpi laplace ranks=N threads=1 seconds=S checksum=C
and OUT/stats/W.V.H.N.R.rK.{begin,half,end}.json every rank's DSM
statistics before the iterations, at the barrier ending half of them, and
after them (laplace7_dsm --stats).  Prints, per place:
  1. paper 002 Table 1: seconds at 1, 2, 4 ranks (the minimum over the
     runs, as the paper took), speedups over the same implementation and
     homes at 1 rank, and the paper's figures beside (its homes: round-robin
     for 1 and 2, block for 3 to 6);
  2. the targets of issue 12 (bench/README.md): block homes at 2 ranks
     faster than 1 rank; at 4 ranks within 1.5x of laplace_mpi; round-robin
     homes (with migration) within 10% of block homes in the second half;
  3. per rank, the event counts of paper 002 Table 3 during the
     iterations (end - begin): faults by kind, pages fetched, diffs and
     their bytes, all bytes sent, MPI operations (one-sided calls +
     collectives), barriers, pages whose home moved to / away from it
     (and to it before the iterations: at the initialisation's barrier).
"""
import os
import sys

from dsmstats import KEYS, missing_ends, rank_events
from kvlog import fields, fmt

VARIANTS = ["seq", "naive", "barrier", "manual", "manual_barrier",
            "affinity", "affinity_barrier"]
# paper 002 Table 1: seconds at 1, 2, 4 machines; speedups at 2, 4
PAPER = {0: (7.5, None, None, None, None),
         1: (7.5, 63.7, 78.7, 0.12, 0.10),
         2: (7.5, 63.5, 70.8, 0.12, 0.11),
         3: (7.5, 6.9, 5.2, 1.10, 1.44),
         4: (7.5, 6.7, 4.2, 1.12, 1.79),
         5: (7.5, 6.9, 4.9, 1.10, 1.53),
         6: (7.5, 6.8, 4.6, 1.11, 1.62)}
PAPER_HOMES = {1: "round-robin", 2: "round-robin", 3: "block", 4: "block",
               5: "block", 6: "block"}
WHERE_ORDER = {"shm": 0, "net:none": 1, "net:100mbit": 2}
TARGET_VARIANT = "manual_barrier"      # paper 002's best, laplace_dsm's


def parse(path):
    rows = []
    with open(path) as f:
        for line in f:
            d, _ = fields(line)
            if "seconds" in d:
                d["kind"] = "mpi" if d.get("prog") == "laplace_mpi" else "dsm"
                rows.append(d)
    return rows


def best(rows):
    """the run with the minimum seconds"""
    return min(rows, key=lambda r: float(r["seconds"])) if rows else None


def main():
    out = sys.argv[1]
    rows = parse(os.path.join(out, "raw"))
    places = sorted({r["where"] for r in rows},
                    key=lambda w: (WHERE_ORDER.get(w, 9), w))
    dsm = {}
    for r in rows:
        if r["kind"] == "dsm":
            dsm.setdefault((r["where"], r["variant"], r["homes"], int(r["ranks"])), []).append(r)
    mpi = {}
    for r in rows:
        if r["kind"] == "mpi":
            mpi.setdefault((r["where"], int(r["ranks"])), []).append(r)
    sums = {r["checksum"] for r in rows}
    homes_all = sorted({r["homes"] for r in rows if r["kind"] == "dsm"},
                       key=lambda h: ({"round-robin": 0, "round-robin-static": 1}.get(h, 2), h))
    status = 0
    if len(sums) > 1:
        print(f"MISMATCH: the runs printed {len(sums)} different checksums: {sorted(sums)}")
        status = 1
    elif sums:
        print(f"every run printed checksum {sums.pop()} and verified bit for bit")

    def t(place, v, h, n, field="seconds"):
        # 1 rank happens on shared memory only: the net tables use it
        key = (place if n > 1 else "shm", v, h, n)
        if v == "seq":
            if n != 1:
                return None
            key = ("shm", v, next((x for x in homes_all if ("shm", v, x, 1) in dsm), h), 1)
        b = best(dsm.get(key, []))
        return float(b[field]) if b else None

    for place in places:
        print()
        print(f"== {place}: paper 002 Table 1 (seconds; speedup = same implementation "
              f"and homes at 1 rank / here; paper columns: SCASH, 2 x 550 MHz PIII per "
              f"node, 100 Mbit Ethernet, * = the paper's homes) ==")
        hdr = ["impl", "homes", "1", "2", "4", "speedup 2", "speedup 4",
               "2nd half 2", "2nd half 4", "paper 1", "paper 2", "paper 4",
               "paper sp 2", "paper sp 4"]
        print("| " + " | ".join(hdr) + " |")
        print("|" + "---|" * len(hdr))
        for i, v in enumerate(VARIANTS):
            for h in homes_all if v != "seq" else homes_all[:1]:
                t1, t2, t4 = (t(place, v, h, n) for n in (1, 2, 4))
                if t1 is None and t2 is None and t4 is None:
                    continue
                s2 = t1 / t2 if t1 and t2 else None
                s4 = t1 / t4 if t1 and t4 else None
                h2, h4 = (t(place, v, h, n, "second_half") for n in (2, 4))
                p = PAPER[i]
                mark = "*" if PAPER_HOMES.get(i) == h.replace("-static", "") else ""
                hname = "-" if v == "seq" else h + mark
                print("| " + " | ".join([f"{i} {v}", hname, fmt(t1), fmt(t2), fmt(t4),
                                         fmt(s2), fmt(s4), fmt(h2), fmt(h4),
                                         fmt(p[0]), fmt(p[1]), fmt(p[2]),
                                         fmt(p[3]), fmt(p[4])]) + " |")
        m = {n: best(mpi.get((place if n > 1 else "shm", n), [])) for n in (1, 2, 4)}
        if any(m.values()):
            ms = {n: float(m[n]["seconds"]) if m[n] else None for n in m}
            print("| laplace_mpi | - | " + " | ".join(fmt(ms[n]) for n in (1, 2, 4)) +
                  f" | {fmt(ms[1] / ms[2]) if ms[1] and ms[2] else ''}"
                  f" | {fmt(ms[1] / ms[4]) if ms[1] and ms[4] else ''} | | | | | | | |")

        print()
        print(f"targets ({place}; {TARGET_VARIANT}, paper 002's implementation 4):")
        b1, b2, b4 = (t(place, TARGET_VARIANT, "block", n) for n in (1, 2, 4))
        if b1 and b2:
            print(f"  block homes, 2 ranks faster than 1: {b1:.3f} s -> {b2:.3f} s, "
                  f"speedup {b1 / b2:.2f}: {'met' if b2 < b1 else 'NOT met'}")
        m4 = m.get(4)
        if b4 and m4:
            r = b4 / float(m4["seconds"])
            print(f"  4 ranks within 1.5x of laplace_mpi: {b4:.3f} s / {float(m4['seconds']):.3f} s "
                  f"= {r:.2f}: {'met' if r <= 1.5 else 'NOT met'}")
        for n in (2, 4):
            rr = t(place, TARGET_VARIANT, "round-robin", n, "second_half")
            bl = t(place, TARGET_VARIANT, "block", n, "second_half")
            if rr and bl:
                r = rr / bl
                print(f"  round-robin (migration on) within 10% of block, second half, {n} ranks: "
                      f"{rr:.3f} s / {bl:.3f} s = {r:.2f}: {'met' if r <= 1.10 else 'NOT met'}")

        print()
        print(f"== {place}: events per rank during the iterations (paper 002 Table 3's "
              f"counts; msgs = MPI one-sided calls + collectives; B = bytes) ==")
        keys = KEYS
        print("| impl | homes | ranks | rank | " + " | ".join(keys) + " | mig_in before |")
        print("|" + "---|" * (len(keys) + 5))
        for v in VARIANTS:
            for h in homes_all:
                for n in (2, 4):
                    b = best(dsm.get((place, v, h, n), []))
                    if not b:
                        continue
                    base = os.path.join(out, "stats",
                                        f"{place.replace(':', '-')}.{v}.{h}.{n}.{b['rep']}")
                    for k in range(n):
                        d, before = rank_events(base, k)
                        if d is None:
                            print(f"| {v} | {h} | {n} | {k} | (no statistics) |")
                            continue
                        print(f"| {v} | {h} | {n} | {k} | " +
                              " | ".join(str(d[x]) for x in keys) +
                              f" | {before['mig_in']} |")
    missing = missing_ends(out)
    if missing:
        print(f"{len(missing)} rank(s) wrote statistics before the iterations but not after")
        status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
