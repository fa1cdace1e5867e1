"""dsmstats.py -- the DSM statistics the cluster workloads write with
--stats (ph_cluster_stats_write, JSON), reduced to the events of paper
002 Table 3.  Shared by laplace_table1.py and fft_table2.py."""
import glob
import json
import os

# the columns of counts(), in the tables' order
KEYS = ["rd_home", "rd_rem", "wr_home", "wr_rem", "fetched", "refreshed", "diffs",
        "diff_B", "sent_B", "msgs", "barriers", "mig_in", "mig_out"]


def load(path):
    """The statistics in path, or None when it is missing or unreadable."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def counts(d):
    """Faults by kind (read/write x home/remote), pages fetched on faults
    and by barriers' refreshes (statistics without them: 0), diffs
    (whole pages included) and their bytes, all bytes sent, MPI operations
    (one-sided calls + collectives), barriers, pages whose home moved to /
    away from the rank."""
    f, t, s, m = d["faults"], d["traffic"], d["sync"], d["migration"]
    return {"rd_home": f["fault_read_home"], "rd_rem": f["fault_read_remote"],
            "wr_home": f["fault_write_home"], "wr_rem": f["fault_write_remote"],
            "fetched": t["pages_fetched"], "refreshed": t.get("pages_refreshed", 0),
            "diffs": t["diffs_sent"] + t["whole_pages_sent"],
            "diff_B": t["diff_bytes"], "sent_B": t.get("bytes_sent", 0),
            "msgs": t["rma_calls"] + t["collectives"], "barriers": s["barriers"],
            "mig_in": m["migrated_in"], "mig_out": m["migrated_out"]}


def delta(a, b):
    """The events between two counts() (b taken after a)."""
    return {k: b[k] - a[k] for k in a}


def rank_events(base, k):
    """Rank k's events between base.rK.begin.json and base.rK.end.json,
    with its counts at the beginning; (None, None) when either is
    missing."""
    a, e = load(f"{base}.r{k}.begin.json"), load(f"{base}.r{k}.end.json")
    if not a or not e:
        return None, None
    return delta(counts(a), counts(e)), counts(a)


def missing_ends(out):
    """The begin snapshots under out/stats without their end snapshot."""
    return [p for p in glob.glob(os.path.join(out, "stats", "*.begin.json"))
            if not os.path.exists(p.replace(".begin.", ".end."))]

