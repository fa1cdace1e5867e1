#!/usr/bin/env python3
"""table.py RAW -- the tables of bench/cluster/run.sh.

RAW holds one result line per measurement, tagged by run.sh:
  rep=R where=W mpi=M [prog=P] [exit=S] cluster-bench op=... median_us=... p90_us=...
  rep=R where=W mpi=M prog=P [exit=S] laplace ranks=N threads=T seconds=S checksum=C
Prints
  1. the operations: per (op, impl, MPI, window, where, ranks, k) the median
     over repetitions of each run's median and p90 (microseconds);
  2. Laplace: per (program, MPI, where, ranks) the median seconds, and the
     checksum (MISMATCH when runs of one grid disagree);
  3. DSM / MPI: where a DSM line and its baseline come from the same
     repetition (same MPI, place, ranks; the raw operations bench_dsm_ops
     measured in its own process when it printed them, else
     bench_mpi_rma's), the median of the per-repetition ratios -- read_miss/get, write_release/put, barrier/barrier,
     barrier_dirty/barrier, barrier_whole/barrier, lock_handover/fop, laplace_dsm/laplace_mpi
     (goal at 4 ranks: 1.5).
"""
import statistics
import sys

from kvlog import fields

BASELINE = {"read_miss": "get", "write_release": "put", "barrier": "barrier",
            "barrier_dirty": "barrier", "barrier_whole": "barrier",
            "lock_handover": "fop"}
WHERE_ORDER = {"shm": 0, "net:none": 1, "net:1gbit": 2, "net:100mbit": 3}


def parse(path):
    rows = []
    with open(path) as f:
        for line in f:
            d, words = fields(line)
            for kind in ("laplace", "cluster-bench"):
                if kind in words:
                    d["kind"] = kind
            if "kind" in d:
                rows.append(d)
    return rows


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def where_key(w):
    return (WHERE_ORDER.get(w, 9), w)


def main():
    rows = parse(sys.argv[1])
    ops = [r for r in rows if r["kind"] == "cluster-bench" and r.get("op") != "window"]
    laps = [r for r in rows if r["kind"] == "laplace"]
    notes = sorted({f"{r['mpi']} {r['where']} {r.get('ranks', '?')} ranks"
                    f"{' ' + r['prog'] if 'prog' in r else ''}: exit {r['exit']}"
                    for r in rows if "exit" in r})

    groups = {}
    for r in ops:
        impl = r.get("impl", "mpi")
        if impl == "mpi" and r.get("prog") == "bench_dsm_ops":
            impl = "mpi*"   # measured inside bench_dsm_ops's process
        key = (r["op"], impl, r["mpi"], r.get("win", "-"), r["where"],
               int(r["ranks"]), r.get("k", "-"))
        groups.setdefault(key, []).append(r)
    print("\noperations (us: median over repetitions of each run's median / p90)")
    print(f"{'op':<18} {'impl':<4} {'mpi':<8} {'win':<8} {'where':<12} {'ranks':>5} "
          f"{'k':>4} {'median':>10} {'p90':>10} {'reps':>4}")
    for key in sorted(groups, key=lambda k: (k[2], where_key(k[4]), k[5], k[1], k[0], k[3])):
        g = groups[key]
        op, impl, mpi, win, where, ranks, k = key
        print(f"{op:<18} {impl:<4} {mpi:<8} {win:<8} {where:<12} {ranks:>5} {k:>4} "
              f"{med([float(r['median_us']) for r in g]):>10.2f} "
              f"{med([float(r['p90_us']) for r in g]):>10.2f} {len(g):>4}")
    for r in rows:
        if r.get("op") == "window":
            print(f"window {r.get('win')} {r['mpi']} {r['where']}: {r.get('error')}")

    lgroups = {}
    for r in laps:
        key = (r.get("prog", "laplace"), r["mpi"], r["where"], int(r["ranks"]), r["threads"])
        lgroups.setdefault(key, []).append(r)
    sums = {r["checksum"] for r in laps}
    print("\nLaplace (seconds of the iterations: median over repetitions)")
    print(f"{'program':<12} {'mpi':<8} {'where':<12} {'ranks':>5} {'threads':>7} "
          f"{'seconds':>9} {'min':>9} {'reps':>4}  checksum")
    for key in sorted(lgroups, key=lambda k: (k[1], where_key(k[2]), k[3], k[0])):
        g = lgroups[key]
        s = [float(r["seconds"]) for r in g]
        cs = sorted({r["checksum"] for r in g})
        print(f"{key[0]:<12} {key[1]:<8} {key[2]:<12} {key[3]:>5} {key[4]:>7} "
              f"{med(s):>9.4f} {min(s):>9.4f} {len(g):>4}  {' '.join(cs)}")
    if len(sums) > 1:
        print(f"MISMATCH: the Laplace runs disagree: checksums {' '.join(sorted(sums))}")

    # DSM / MPI ratios, paired within a repetition
    ratios = {}
    by = {}
    for r in ops:
        by[(r["rep"], r["mpi"], r["where"], r["ranks"], r.get("prog", "-"),
            r.get("impl", "mpi"), r["op"], r.get("win", "-"),
            r.get("k", "-"))] = float(r["median_us"])
    for r in ops:
        if r.get("impl") != "dsm" or r["op"] not in BASELINE:
            continue
        win = r.get("win", "-")
        win = win if win in ("create", "allocate") else ("-" if BASELINE[r["op"]] == "barrier"
                                                          else "create")
        base = None
        for prog in (r.get("prog", "-"), "-"):
            base = base or by.get((r["rep"], r["mpi"], r["where"], r["ranks"], prog, "mpi",
                                   BASELINE[r["op"]], win, "-"))
        if base:
            key = (f"{r['op']}{'' if r.get('k', '-') == '-' else ' k=' + r['k']} / "
                   f"{BASELINE[r['op']]}", r["mpi"], r["where"], int(r["ranks"]))
            ratios.setdefault(key, []).append(float(r["median_us"]) / base)
    lap = {(r["rep"], r["mpi"], r["where"], r["ranks"], r.get("prog")): float(r["seconds"])
           for r in laps}
    for (rep, mpi, where, ranks, prog), s in lap.items():
        if prog != "laplace_dsm":
            continue
        base = lap.get((rep, mpi, where, ranks, "laplace_mpi"))
        if base:
            ratios.setdefault(("laplace_dsm / laplace_mpi", mpi, where, int(ranks)),
                              []).append(s / base)
    if ratios:
        print("\nDSM / MPI (median of per-repetition ratios; Laplace goal at 4 ranks: <= 1.5)")
        print(f"{'ratio':<28} {'mpi':<8} {'where':<12} {'ranks':>5} {'ratio':>8} {'reps':>4}")
        for key in sorted(ratios, key=lambda k: (k[1], where_key(k[2]), k[3], k[0])):
            print(f"{key[0]:<28} {key[1]:<8} {key[2]:<12} {key[3]:>5} "
                  f"{med(ratios[key]):>8.2f} {len(ratios[key]):>4}")
    else:
        print("\nDSM / MPI: no DSM benchmark ran (not built yet: run.sh's DSM section)")
    for n in notes:
        print(f"note: {n} after its lines were complete (MPICH 4.0.2 over TCP with 3+ "
              "ranks hangs in MPI_Finalize: tests/cluster-net/README.md)")


if __name__ == "__main__":
    main()
