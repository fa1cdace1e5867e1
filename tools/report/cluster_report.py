"""cluster_report.py -- the report of a cluster run.

    pagehome report CLUSTER.json [-o OUTDIR] [--text-only]

CLUSTER.json is the merged statistics of a cluster run (`pagehome cluster
run --report CLUSTER.json`, or `pagehome cluster merge`): top-level
"pagehome_cluster_stats", "cluster" (the run: program, ranks, MPI,
launcher, transport, seconds, exit status, the ranks that wrote nothing or
an unreadable file) and "ranks", each rank's statistics as the DSM writes
them (src/cluster/stats.c): faults by kind, traffic, synchronisation, home
migration, page classes, times, one record per barrier interval
("interval_fields" names the columns) and the homes of each allocation
("allocations": strips at its start and end, the pages each rank homed
then).  pagehome_report.py hands a file here when it has
"pagehome_cluster_stats"; report_common.CLUSTER_SCHEMA has checked it.  A
rank's object may lack any of these (the merge takes any JSON object): what
is missing shows as "-".

Output:
  * on stdout: what ran; the result (remote faults, pages fetched, diffs,
    homes moved); a table per rank (faults by kind, fetches, diffs,
    messages, barriers, locks, migrations, times); the page classes; per
    allocation the pages each rank homed at the start and at the end and
    the home strips as text (one character per bucket: the rank 0-9, a-z,
    A-Z; '+' a rank beyond those; '*' several ranks; '.' none claimed);
    and a table per barrier interval (remote faults per rank, pages
    fetched, homes moved);
  * unless --text-only, in OUTDIR (default: CLUSTER's basename without
    .json plus "_report"):
      homes.png          each allocation's home strip at its start above
                         its end, one colour per rank, dark grey where
                         several ranks home the bucket's pages, light grey
                         where none was claimed;
      remote_faults.png  remote faults (read + write) per barrier
                         interval, a line per rank;
      migrations.png     pages whose home moved per barrier interval,
                         stacked by the rank they moved to;
      report.html        all of it in one self-contained page, in the
                         NUMA report's style (report_common).
Bounds: the strips have at most 256 buckets, a rank at most 4097 interval
records (past 4096 barriers the DSM sums neighbours, "interval_barriers"
says how many each covers), at most 256 allocations (more are counted in
"allocations_not_recorded"); the tables and plots show at most
TABLE_RANKS / PLOT_RANKS ranks one by one, the others summed.
"""

import math
import os
import sys

from report_common import (write_report, esc, fmt_bytes, html_figure, html_head, html_items,
                           import_pyplot, lst, ms, no_data, num, obj, pct, plural, save_figure)

IMAGES = ("homes.png", "remote_faults.png", "migrations.png")
TABLE_RANKS = 8          # per-rank columns of the interval table
PLOT_RANKS = 16          # lines of the remote-fault plot
TEXT_MAX_INTERVALS = 40  # longer interval tables show head and tail
HTML_MAX_INTERVALS = 400
TEXT_MAX_RANK_ROWS = 64  # rows of the per-rank table (text)
HTML_MAX_RANK_ROWS = 1024
HOMES_MAX_ALLOCS = 24    # strips drawn: the largest allocations
TEXT_MAX_ALLOCS = 32
PLOT_MAX_POINTS = 500    # more interval records are summed into bins for the plots
STRIP_CHARS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
STRIP_LINE = 64          # strip characters per text line
UNCLAIMED_COLOUR = "#e4e4e4"
MIXED_COLOUR = "#4d4d4d"
CLASSES = ("private", "read_only", "single_writer", "shared")


# ---- the run, digested ------------------------------------------------------

class Rank:
    """One rank's statistics, with the interval records by field name."""

    def __init__(self, d, index):
        self.d = d
        desc = obj(d, "cluster")
        r = d.get("rank", desc.get("rank"))
        self.rank = r if isinstance(r, int) and not isinstance(r, bool) else index
        self.desc = desc
        self.host = str(desc.get("host") or d.get("host") or "")
        self.faults, self.traffic, self.sync = obj(d, "faults"), obj(d, "traffic"), obj(d, "sync")
        self.mig, self.classes, self.time = obj(d, "migration"), obj(d, "page_classes"), obj(d, "time_ns")
        fields = [f for f in lst(d, "interval_fields")]
        self.intervals = []
        for rec in lst(d, "intervals"):
            self.intervals.append({f: rec[i] for i, f in enumerate(fields) if i < len(rec)})
        self.allocs = lst(d, "allocations")
        self.is_dsm = bool(desc) or "fault_read_remote" in self.faults

    def remote(self, iv):
        return num(iv, "read_remote") + num(iv, "write_remote")


class Cluster:
    def __init__(self, data, path):
        self.path = path
        self.info = obj(data, "cluster")
        self.ranks = sorted((Rank(r, i) for i, r in enumerate(lst(data, "ranks"))),
                            key=lambda r: r.rank)
        expected = self.info.get("ranks")
        known = [r.desc.get("nranks") for r in self.ranks if isinstance(r.desc.get("nranks"), int)]
        self.nranks = expected if isinstance(expected, int) and expected > 0 else \
            max(known + [len(self.ranks), 1])
        self.nranks = max([self.nranks] + [r.rank + 1 for r in self.ranks])
        self.nintervals = max([len(r.intervals) for r in self.ranks] + [0])
        per = [num(r.desc, "interval_barriers", 1) for r in self.ranks]
        self.per_record = int(max(per + [1]))
        self.allocs = self._allocs()

    def _allocs(self):
        """Allocations by seq: the strips (the first rank's that has them:
        the ranks agree on them) and the pages each rank homed."""
        out = {}
        for r in self.ranks:
            for a in r.allocs:
                seq = int(num(a, "seq", -1))
                e = out.get(seq)
                if e is None:
                    e = out[seq] = {"seq": seq, "pages": int(num(a, "pages")),
                                    "bytes": int(num(a, "bytes")),
                                    "placement": str(a.get("placement", "?")),
                                    "ended": str(a.get("ended", "?")),
                                    "strip_start": lst(a, "strip_start"),
                                    "strip_end": lst(a, "strip_end"),
                                    "start": {}, "end": {}, "disagree": False}
                elif (lst(a, "strip_start"), lst(a, "strip_end")) != \
                        (e["strip_start"], e["strip_end"]) and a.get("ended") != "live":
                    e["disagree"] = True
                e["start"][r.rank] = int(num(a, "home_pages_start"))
                e["end"][r.rank] = int(num(a, "home_pages_end"))
        return [out[k] for k in sorted(out)]

    def total(self, group, key):
        return sum(num(getattr(r, group), key) for r in self.ranks)

    def interval_axis(self):
        if self.per_record > 1:
            return f"barrier interval (records of {self.per_record} barriers)"
        return "barrier interval"


# ---- the summary ------------------------------------------------------------

def first(cl, attr, key, default="?"):
    for r in cl.ranks:
        v = getattr(r, attr).get(key)
        if v is not None and v != "":
            return v
    return default


def run_items(cl):
    info = cl.info
    items = []
    prog = str(info.get("program") or "(not recorded)")
    args = " ".join(str(a) for a in lst(info, "args"))
    items.append(("kv", "program", (prog + " " + args).strip()))
    reported = len(cl.ranks)
    txt = f"{reported} of {cl.nranks} reported"
    missing = lst(info, "missing_ranks")
    if missing:
        shown = ", ".join(str(m) for m in missing[:16])
        txt += f"; no statistics from rank{'s' if len(missing) > 1 else ''} {shown}" + \
            (f" and {len(missing) - 16} more" if len(missing) > 16 else "")
    threads = first(cl, "desc", "threads", None)
    if threads is not None:
        txt += f"; {plural(int(threads), 'thread')} per rank"
    items.append(("kv", "ranks", txt))
    hosts = sorted({r.host for r in cl.ranks if r.host})
    if hosts:
        items.append(("kv", "hosts", ", ".join(hosts[:16]) +
                      (f" and {len(hosts) - 16} more" if len(hosts) > 16 else "")))
    items.append(("kv", "MPI", f"{info.get('mpi', '?')} through {info.get('launcher', '?')}, "
                  f"transport {info.get('transport', '?')} "
                  f"({first(cl, 'desc', 'transport')})"))
    items.append(("kv", "faults", f"{first(cl, 'desc', 'fault_mechanism')}; placement "
                  f"{info.get('placement') or 'the default (cluster_placement)'}"))
    if any("on" in r.mig for r in cl.ranks):
        on = any(num(r.mig, "on") for r in cl.ranks)
        unsent = ""
        if on and any("migrated_unsent" in r.mig for r in cl.ranks):
            unsent = (f"; {int(sum(num(r.mig, 'migrated_unsent') for r in cl.ranks))} "
                      "written pages moved to their writer without a diff")
        items.append(("kv", "home migration", "on, a page moves again at most every "
                      f"{int(num(cl.ranks[0].mig, 'min_intervals'))} barriers{unsent}" if on
                      else "off (cluster_migrate=0)"))
        m0 = cl.ranks[0].mig
        if on and "cost_rule" in m0:
            if num(m0, "cost_rule"):
                bycost = max([num(r.mig, "migrations_cost") for r in cl.ranks] + [0])
                carried = sum(num(r.mig, "migrated_carried") for r in cl.ranks)
                frozen = max([num(r.mig, "cost_frozen") for r in cl.ranks] + [0])
                items.append(("kv", "migration by cost",
                              f"{int(bycost)} pages moved ({int(carried)} with their data), "
                              f"{int(frozen)} frozen; start-up model: page fetch "
                              f"{num(m0, 'fetch_ns') / 1000:.1f} us, diff "
                              f"{num(m0, 'diff_ns') / 1000:.1f} us"))
            else:
                items.append(("kv", "migration by cost", "off (cluster_migrate_reads=0)"))
    end = ""
    if "exit_status" in info:
        end = f"exit status {info['exit_status']}"
    elif "signal" in info:
        end = f"killed by signal {info['signal']}"
    if "seconds" in info:
        end += f"{', ' if end else ''}{num(info, 'seconds'):.2f} s"
    if end:
        items.append(("kv", "ended", end))
    for u in lst(info, "unreadable")[:16]:
        items.append(("kv", "unreadable", f"{u.get('file', '?')}: {u.get('error', '?')}"))
    return items


def result_items(cl):
    items = []
    if not any(r.is_dsm for r in cl.ranks):
        items.append(("text", "no rank's object has the DSM's statistics (faults, "
                      "traffic, sync): not written by pagehome's cluster library"))
        return items
    rr, wr = cl.total("faults", "fault_read_remote"), cl.total("faults", "fault_write_remote")
    rh, wh = cl.total("faults", "fault_read_home"), cl.total("faults", "fault_write_home")
    allf = rr + wr + rh + wh
    items.append(("kv", "remote faults", f"{int(rr + wr)} ({int(rr)} read, {int(wr)} write; "
                  f"{pct(rr + wr, allf)} of {int(allf)} faults)"))
    items.append(("kv", "pages fetched", f"{int(cl.total('traffic', 'pages_fetched'))} in "
                  f"{int(cl.total('traffic', 'fetch_calls'))} gets on faults, "
                  f"{int(cl.total('traffic', 'pages_refreshed'))} refreshed at barriers "
                  f"({int(cl.total('traffic', 'refresh_used'))} of them read)" +
                  (f"; {int(cl.total('traffic', 'pristine_mapped'))} never written, "
                   "mapped as zeroes without a get"
                   if cl.total('traffic', 'pristine_mapped') else "")))
    items.append(("kv", "diffs", f"{int(cl.total('traffic', 'diffs_sent'))} sent "
                  f"({fmt_bytes(cl.total('traffic', 'diff_bytes'))}), "
                  f"{int(cl.total('traffic', 'whole_pages_sent'))} whole pages"))
    moved = max([num(r.mig, "migrations") for r in cl.ranks] + [0])
    pages = sum(a["pages"] for a in cl.allocs)
    items.append(("kv", "homes moved", f"{int(moved)} pages" +
                  (f" ({pct(moved, pages)} of the {pages} pages allocated)" if pages else "")))
    if cl.nintervals:
        first_iv = sum(r.remote(r.intervals[0]) for r in cl.ranks if r.intervals)
        last_iv = sum(r.remote(r.intervals[-1]) for r in cl.ranks if r.intervals)
        items.append(("kv", "remote faults per interval",
                      f"{int(first_iv)} in the first -> {int(last_iv)} in the last "
                      f"({plural(cl.nintervals, 'record')}, all ranks)"))
    return items


RANK_HEADERS = ["rank", "host", "read remote", "write remote", "read home", "write home",
                "fetched", "diffs", "whole pages", "messages", "barriers", "locks",
                "moved in", "moved out", "fault ms", "barrier ms"]


def rank_row(r):
    f, t, s, m, tm = r.faults, r.traffic, r.sync, r.mig, r.time

    def n(o, k):
        return str(int(num(o, k))) if k in o else "-"
    msgs = "-"
    if any(k in t for k in ("rma_calls", "collectives")):
        msgs = str(int(num(t, "rma_calls") + num(t, "collectives")))
    locks = n(s, "lock_acquires")
    return [str(r.rank), r.host or "-", n(f, "fault_read_remote"), n(f, "fault_write_remote"),
            n(f, "fault_read_home"), n(f, "fault_write_home"), n(t, "pages_fetched"),
            n(t, "diffs_sent"), n(t, "whole_pages_sent"), msgs, n(s, "barriers"), locks,
            n(m, "migrated_in"), n(m, "migrated_out"),
            ms(num(tm, "fault")) if "fault" in tm else "-",
            ms(num(tm, "barrier")) if "barrier" in tm else "-"]


def ranks_table(cl, limit):
    rows = [rank_row(r) for r in cl.ranks[:limit]]
    note = ("faults by kind (a fault on a page homed elsewhere is remote); fetched: pages "
            "got from their homes; messages: one-sided operations and collectives; moved "
            "in/out: pages whose home moved to / away from the rank")
    if len(cl.ranks) > limit:
        note += f"; {len(cl.ranks) - limit} of {len(cl.ranks)} ranks not shown"
    return ("table", RANK_HEADERS, rows, note)


def classes_items(cl):
    have = [r for r in cl.ranks if r.classes]
    if not have:
        return [("text", "not recorded")]
    c = have[0].classes
    total = sum(num(c, k) for k in c)
    rows = [[k.replace("_", "-"), str(int(num(c, k))), pct(num(c, k), total)]
            for k in list(CLASSES) + sorted(k for k in c if k not in CLASSES) if k in c]
    note = ("pages counted when their allocation went (free, finalize): private: one rank "
            "accessed it; read-only: nobody wrote it after its first interval; "
            "single-writer: one rank wrote it; shared: several did")
    if any(r.classes != c for r in have):
        note += "; the ranks' counts differ (these are rank %d's)" % have[0].rank
    return [("table", ["class", "pages", "share"], rows, note)]


def strip_text(strip):
    out = []
    for v in strip:
        if not isinstance(v, int) or v == -1:
            out.append(".")
        elif v == -2:
            out.append("*")
        elif 0 <= v < len(STRIP_CHARS):
            out.append(STRIP_CHARS[v])
        else:
            out.append("+")
    return "".join(out)


def homes_items(cl, for_html):
    if not cl.allocs:
        return [("text", "no allocation was recorded")]
    items = []
    nr = min(cl.nranks, TABLE_RANKS)
    headers = ["allocation", "pages", "placement", "ended"] + \
        [f"rank {k} start->end" for k in range(nr)] + \
        (["other ranks start->end"] if cl.nranks > nr else [])
    rows = []
    for a in cl.allocs[:TEXT_MAX_ALLOCS if not for_html else len(cl.allocs)]:
        row = [f"#{a['seq']}", str(a["pages"]), a["placement"], a["ended"]]
        for k in range(nr):
            row.append(f"{a['start'].get(k, '-')}->{a['end'].get(k, '-')}"
                       if k in a["start"] else "-")
        if cl.nranks > nr:
            s = sum(v for k, v in a["start"].items() if k >= nr)
            e = sum(v for k, v in a["end"].items() if k >= nr)
            row.append(f"{s}->{e}")
        rows.append(row)
    note = "pages each rank was the home of when the allocation was made and when it went"
    if len(rows) < len(cl.allocs):
        note += f"; {len(cl.allocs) - len(rows)} of {len(cl.allocs)} allocations not shown"
    dropped = max([int(num(r.desc, "allocations_not_recorded")) for r in cl.ranks] + [0])
    if dropped:
        note += f"; {dropped} later allocations were not recorded (the DSM keeps 256)"
    items.append(("table", headers, rows, note))
    if for_html:
        return items
    for a in cl.allocs[:TEXT_MAX_ALLOCS]:
        per = a["pages"] / max(len(a["strip_start"]), 1)
        head = (f"#{a['seq']} ({fmt_bytes(a['bytes'])}, {a['placement']}, "
                f"{per:.3g} page{'s' if per != 1 else ''} per character)")
        items.append(("text", head + (" [the ranks' strips differ]" if a["disagree"] else "")))
        for label, key in (("start", "strip_start"), ("end  ", "strip_end")):
            text = strip_text(a[key]) or "(none)"
            for i in range(0, len(text), STRIP_LINE):
                items.append(("text", f"  {label if i == 0 else '     '} {text[i:i + STRIP_LINE]}"))
    items.append(("text", "strips: one character per bucket of consecutive pages, the "
                  "rank homing them (0-9 a-z A-Z, + beyond), * several ranks, . none claimed"))
    return items


def interval_row(cl, i, shown):
    ivs = [r.intervals[i] if i < len(r.intervals) else {} for r in cl.ranks]
    row = [str(i + 1)]
    for r, iv in zip(cl.ranks, ivs):
        if r in shown:
            row.append(str(int(r.remote(iv))))
    rest = [r.remote(iv) for r, iv in zip(cl.ranks, ivs) if r not in shown]
    if rest:
        row.append(str(int(sum(rest))))
    row.append(str(int(sum(num(iv, "fetched") for iv in ivs))))
    row.append(str(int(sum(num(iv, "invalidated") for iv in ivs))))
    moved = max([num(iv, "migrated") for iv in ivs] + [0])
    row.append(str(int(moved)))
    row.append(ms(max([num(iv, "barrier_ns") for iv in ivs] + [0])))
    return row


def intervals_table(cl, limit):
    if not cl.nintervals:
        return ("text", "no interval was recorded")
    shown = cl.ranks[:TABLE_RANKS]
    headers = ["interval"] + [f"remote r{r.rank}" for r in shown]
    if len(cl.ranks) > len(shown):
        headers.append("remote, other ranks")
    headers += ["fetched", "invalidated", "homes moved", "barrier ms"]
    n = cl.nintervals
    note = ("remote: read + write faults on pages homed elsewhere in the interval before "
            "the barrier; fetched, invalidated: all ranks; homes moved: pages whose home "
            "moved at its barrier; barrier ms: the slowest rank's")
    if cl.per_record > 1:
        note += f"; each record covers {cl.per_record} barriers"
    if n > limit:
        head, tail = limit // 2, limit - limit // 2
        rows = [interval_row(cl, i, shown) for i in range(head)]
        rows.append(["..."] + [""] * (len(headers) - 1))
        rows += [interval_row(cl, i, shown) for i in range(n - tail, n)]
        note += f"; {n - limit} of {n} intervals not shown"
    else:
        rows = [interval_row(cl, i, shown) for i in range(n)]
    return ("table", headers, rows, note)


def summary_sections(cl, for_html):
    secs = [("What ran", run_items(cl)), ("Result", result_items(cl))]
    if not cl.ranks:
        secs.append(("Ranks", [("text", "no rank wrote statistics")]))
        return secs
    secs.append(("Per rank", [ranks_table(cl, HTML_MAX_RANK_ROWS if for_html
                                          else TEXT_MAX_RANK_ROWS)]))
    secs.append(("Page classes", classes_items(cl)))
    secs.append(("Homes", homes_items(cl, for_html)))
    secs.append(("Per barrier interval", [intervals_table(
        cl, HTML_MAX_INTERVALS if for_html else TEXT_MAX_INTERVALS)]))
    return secs


# ---- plots ------------------------------------------------------------------

def rank_colours(matplotlib, n):
    """One colour per rank, never grey (grey: none claimed or several)."""
    try:
        tab10 = matplotlib.colormaps["tab10"].colors
        turbo = matplotlib.colormaps["turbo"]
    except AttributeError:  # matplotlib < 3.5
        import matplotlib.cm as cm
        tab10, turbo = cm.get_cmap("tab10").colors, cm.get_cmap("turbo")
    base = [c for i, c in enumerate(tab10) if i != 7]
    if n <= len(base):
        return list(base[:n])
    return [turbo(i / (n - 1)) for i in range(n)]


def strip_rgb(strip, colour_of):
    out = []
    for v in strip:
        if v == -1 or not isinstance(v, int):
            out.append(UNCLAIMED_COLOUR)
        elif v == -2:
            out.append(MIXED_COLOUR)
        else:
            out.append(colour_of(v))
    return out


def plot_homes(cl, matplotlib, plt, path):
    from matplotlib.colors import to_rgb
    from matplotlib.patches import Patch
    allocs = cl.allocs
    if len(allocs) > HOMES_MAX_ALLOCS:
        keep = sorted(allocs, key=lambda a: -a["pages"])[:HOMES_MAX_ALLOCS]
        allocs = [a for a in cl.allocs if any(a is k for k in keep)]
    many = cl.nranks > 24
    if many:
        try:
            turbo = matplotlib.colormaps["turbo"]
        except AttributeError:
            import matplotlib.cm as cm
            turbo = cm.get_cmap("turbo")

        def colour_of(v):
            return turbo(v / max(cl.nranks - 1, 1))
    else:
        colours = rank_colours(matplotlib, max(cl.nranks, 1))

        def colour_of(v):
            return colours[v] if v < len(colours) else MIXED_COLOUR
    n = max(len(allocs), 1)
    top_in, bottom_in, strip_in, gap_in = 0.95, 0.55, 0.42, 0.62
    height = top_in + bottom_in + n * strip_in + (n - 1) * gap_in
    fig, axes = plt.subplots(n, 1, figsize=(10, height), squeeze=False)
    fig.subplots_adjust(left=0.08, right=0.98, top=1 - top_in / height,
                        bottom=bottom_in / height, hspace=gap_in / strip_in)
    for ax, a in zip(axes[:, 0], allocs):
        pages = max(a["pages"], 1)
        for row, key in enumerate(("strip_start", "strip_end")):
            rgb = [to_rgb(c) for c in strip_rgb(a[key] or [-1], colour_of)]
            ax.imshow([rgb], aspect="auto", interpolation="nearest",
                      extent=(0, pages, row + 1, row))
        ax.set_xlim(0, pages)
        ax.set_ylim(2, 0)
        ax.set_yticks([0.5, 1.5])
        ax.set_yticklabels(["start" if a["strip_start"] else "start (none)",
                            "end" if a["strip_end"] else "end (none)"], fontsize=8)
        ended = {"freed": "freed", "finalize": "live until finalize",
                 "live": "live when written"}.get(a["ended"], a["ended"])
        ax.set_title(f"allocation #{a['seq']}: {fmt_bytes(a['bytes'])}, {plural(a['pages'], 'page')}, "
                     f"{a['placement']}, {ended}", fontsize=9, loc="left")
        ax.tick_params(axis="x", labelsize=8)
    if not allocs:
        ax = axes[0, 0]
        ax.axis("off")
        ax.text(0.5, 0.5, "no allocation was recorded", ha="center", va="center")
    else:
        axes[-1, 0].set_xlabel("page within the allocation")
    if many:
        handles = [Patch(color=colour_of(0), label="rank 0"),
                   Patch(color=colour_of(cl.nranks - 1), label=f"rank {cl.nranks - 1}")]
    else:
        handles = [Patch(color=c, label=f"rank {i}") for i, c in enumerate(colours)]
    handles += [Patch(color=MIXED_COLOUR, label="several ranks"),
                Patch(color=UNCLAIMED_COLOUR, label="none claimed")]
    title = "Home of each allocation's pages: when allocated (start) and when it went (end)"
    if len(allocs) < len(cl.allocs):
        title += f" ({len(allocs)} largest of {len(cl.allocs)})"
    fig.suptitle(title, fontsize=11, y=1 - 0.08 / height, va="top")
    fig.legend(handles=handles, loc="upper center", ncol=min(len(handles), 9),
               fontsize=8, frameon=False, bbox_to_anchor=(0.5, 1 - 0.36 / height))
    save_figure(fig, path)
    plt.close(fig)


def binned(values, k):
    return [sum(values[i:i + k]) for i in range(0, len(values), k)]


def plot_axis(cl, ax, npoints, k):
    ax.set_xlabel(cl.interval_axis() + (f", sums of {k} records" if k > 1 else ""))
    ax.set_xlim(-0.6, npoints - 0.4)
    every = max(1, math.ceil(npoints / 20))
    idx = list(range(0, npoints, every))
    ax.set_xticks(idx)
    ax.set_xticklabels([str(i * k + 1) for i in idx], fontsize=8,
                       rotation=45 if npoints > 12 else 0)


def plot_remote(cl, matplotlib, plt, path):
    fig, ax = plt.subplots(figsize=(10, 4.2))
    n = cl.nintervals
    k = max(1, math.ceil(n / PLOT_MAX_POINTS))
    if n and any(r.intervals for r in cl.ranks):
        shown = cl.ranks[:PLOT_RANKS]
        colours = rank_colours(matplotlib, max(len(shown), 1))
        for r, c in zip(shown, colours):
            ys = binned([r.remote(iv) for iv in r.intervals], k)
            ax.plot(range(len(ys)), ys, marker="o" if len(ys) <= 60 else None,
                    markersize=3, color=c, label=f"rank {r.rank}")
        rest = cl.ranks[PLOT_RANKS:]
        if rest:
            tot = [0] * n
            for r in rest:
                for i, iv in enumerate(r.intervals[:n]):
                    tot[i] += r.remote(iv)
            ys = binned(tot, k)
            ax.plot(range(len(ys)), ys, color="#7f7f7f", linestyle="--",
                    label=f"{len(rest)} other ranks, summed")
        ax.set_ylabel("remote faults (read + write)")
        ax.set_ylim(bottom=0)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=8, ncol=min(len(shown) + bool(rest), 6))
        plot_axis(cl, ax, math.ceil(n / k), k)
        rr = cl.total("faults", "fault_read_remote") + cl.total("faults", "fault_write_remote")
        ax.set_title(f"Remote faults per {cl.interval_axis()}, per rank "
                     f"({int(rr)} in all)", fontsize=11)
    else:
        no_data(ax, "no interval was recorded")
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)


def plot_migrations(cl, matplotlib, plt, path):
    fig, ax = plt.subplots(figsize=(10, 4.2))
    n = cl.nintervals
    k = max(1, math.ceil(n / PLOT_MAX_POINTS))
    moved_in = [[num(iv, "migrated_in") for iv in r.intervals] for r in cl.ranks]
    if n and any(any(v) for v in moved_in):
        shown = cl.ranks[:PLOT_RANKS]
        colours = rank_colours(matplotlib, max(len(shown), 1))
        npts = math.ceil(n / k)
        bottom = [0.0] * npts
        series = [(f"to rank {r.rank}", c, binned(v + [0] * (n - len(v)), k))
                  for r, c, v in zip(shown, colours, moved_in)]
        if len(cl.ranks) > PLOT_RANKS:
            tot = [0] * n
            for v in moved_in[PLOT_RANKS:]:
                for i, x in enumerate(v[:n]):
                    tot[i] += x
            series.append((f"to the {len(cl.ranks) - PLOT_RANKS} other ranks", "#7f7f7f",
                           binned(tot, k)))
        for label, c, h in series:
            if not any(h):
                continue
            ax.bar(range(npts), h, bottom=bottom, width=0.8, color=c, label=label)
            bottom = [b + v for b, v in zip(bottom, h)]
        ax.set_ylabel("pages whose home moved")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=8)
        plot_axis(cl, ax, npts, k)
        moved = max([num(r.mig, "migrations") for r in cl.ranks] + [0])
        ax.set_title(f"Home migrations per {cl.interval_axis()}, by the rank the pages "
                     f"moved to ({int(moved)} in all)", fontsize=11)
    else:
        on = any(num(r.mig, "on") for r in cl.ranks)
        no_data(ax, "no home moved" if on or not cl.ranks else
                "home migration was off (cluster_migrate=0) or not recorded")
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)


def write_plots(cl, outdir):
    matplotlib, plt = import_pyplot()
    paths = {name: os.path.join(outdir, name) for name in IMAGES}
    plot_homes(cl, matplotlib, plt, paths["homes.png"])
    plot_remote(cl, matplotlib, plt, paths["remote_faults.png"])
    plot_migrations(cl, matplotlib, plt, paths["migrations.png"])
    return paths


# ---- HTML and main ------------------------------------------------------------

CAPTIONS = {
    "homes.png": "Home strips: each allocation cut into at most 256 buckets of consecutive "
                 "pages, coloured by the rank homing the bucket's pages, when the "
                 "allocation was made (first-touch: the first claims) and when it went "
                 "(freed or at ph_cluster_finalize); dark grey: several ranks home pages "
                 "of the bucket; light grey: none was claimed.",
    "remote_faults.png": "Read and write faults on pages homed on another rank, in each "
                         "barrier interval, one line per rank.",
    "migrations.png": "Pages whose home moved at each barrier, stacked by the rank they "
                      "moved to.",
}


def render_html(cl, sections, images):
    prog = os.path.basename(str(cl.info.get("program") or "")) or os.path.basename(cl.path)
    out = html_head(f"pagehome report: {prog} on {plural(cl.nranks, 'rank')}")
    out.append(f"<p>Merged statistics of a cluster run, file <code>{esc(cl.path)}</code>.</p>")
    for title, items in sections:
        out.append(f"<h2>{esc(title)}</h2>")
        out.append(html_items(items))
        if title == "Result" and images:
            out.append("<h2>Plots</h2>")
            for name in IMAGES:
                out.append(html_figure(images[name], CAPTIONS[name]))
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def report(data, path, outdir, text_only):
    """The whole report of a merged cluster file; the exit status."""
    return write_report(Cluster(data, path), path, outdir, text_only, summary_sections,
                        write_plots, render_html)
