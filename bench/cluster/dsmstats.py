"""dsmstats.py -- the DSM statistics the cluster workloads write with
--stats (ph_cluster_stats_write, JSON), reduced to the events of paper
002 Table 3.  Shared by laplace_table1.py and fft_table2.py."""
import json

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
