#!/usr/bin/env python3
"""demo_table.py -- the demo's table: one row per `pagehome run` of the demo.

Usage: demo_table.py RUN.json[:WALL_S[:VERIFY]] ...

Each RUN.json is a statistics file written by `pagehome run --report`; its
name is PLACEMENT__ENGINE.json.  Per run the table shows the owner-local
share at the end (of the pages the sampler saw, the share that lives on
the node that accessed it most, asked of the OS), the pages migrated, the
remote share of all sampled accesses with the pages where the engine found
them and where they were after its moves, the wall time of the run and
whether the program verified its result.
"""
import json
import os
import sys

from report_common import text_table


def row(arg):
    path, _, rest = arg.partition(":")
    wall, _, verify = rest.partition(":")
    name = os.path.basename(path)[: -len(".json")]
    placement, _, engine = name.partition("__")
    with open(path) as f:
        d = json.load(f)
    areas = [a for a in d.get("areas") or [] if a.get("sampled_pages")]
    seen = sum(a["sampled_pages"] for a in areas)
    local = sum(a["sampled_pages_on_top_accessor"] for a in areas)
    t = d.get("totals") or {}
    acc = t.get("accesses", 0)
    fmt = lambda v: "-" if v is None else "%.1f%%" % v
    before = 100.0 * t.get("remote_accesses_before", 0) / acc if acc else None
    after = 100.0 * t.get("remote_accesses_after", 0) / acc if acc else None
    return [placement.replace("node-0", "node:0"), engine,
            fmt(100.0 * local / seen if seen else None),
            str(t.get("migrated", 0)), fmt(before), fmt(after),
            wall + " s" if wall else "-", verify or "-"]


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    head = ["placement", "engine", "owner-local", "migrated", "remote (as found)",
            "remote (after moves)", "time", "verified"]
    print("\n".join(text_table(head, [row(a) for a in argv[1:]])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
