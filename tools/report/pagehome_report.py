#!/usr/bin/env python3
"""pagehome_report.py -- the report of one pagehome run (or simulation).

    pagehome report RUN.json [-o OUTDIR] [--text-only]
    pagehome report SIM.json [-o OUTDIR] [--text-only]
    pagehome report CLUSTER.json [-o OUTDIR] [--text-only]

SIM.json, a file `pagehome sim EXPERIMENT --json SIM.json` wrote (top-level
"experiment" and "runs"), is handed to sim_report.py: the experiment's
tables and plots, described there.  CLUSTER.json, the merged statistics of
a cluster run (`pagehome cluster run --report`, top-level
"pagehome_cluster_stats"), is handed to cluster_report.py: the ranks'
faults, traffic and migrations, the page classes, the home strips, per
barrier interval.  The rest of this comment is about RUN.json.

RUN.json is the statistics file a run wrote (`pagehome run --report`,
PAGEHOME_STATS_FILE, or ph_stats_write()).  Its schema is written by
src/engine/stats.c (config, totals, source_stats, areas, invocations) and,
in transparent mode, src/preload/preload.c and ompt.c (the "transparent"
object); `pagehome run` writes a minimal file ("engine": null and a
"note") when no engine started in the program.

Output:
  * a text summary on stdout that leads with the result, every figure
    labelled measured or estimated: the owner-local share at the start
    and at the end, the remote share of the samples in the first and the
    last iteration and its curve, the pages moved, moved twice and frozen;
    then what ran, the mechanism, the areas found,
    pages migrated / failed / frozen, the remote share of sampled accesses
    before -> after migration, a per-iteration table, the phases, and a
    table in the style of UPMlib's Table 1 (per area: hot pages,
    migrated / eligible, share of migrations in the first two iterations,
    sampled remote accesses per iteration);
  * unless --text-only, in OUTDIR (default: RUN's basename without .json
    plus "_report", in the current directory):
      homes.png         the home strip of every area: the node of evenly
                        spread pages at the first iteration (start) above
                        the same pages at the end, one colour per node,
                        grey where the home was unknown;
      remote_share.png  remote share of the sampled accesses per iteration,
                        before migration and as the engine estimates it
                        after, summed over areas;
      migrations.png    pages migrated per iteration, stacked by kind
                        (iterative, sampling, record, replay, undo);
      report.html       everything above in one self-contained page
                        (inline CSS, the PNGs as base64 data URIs).

Steps: rows of the iteration-driven mechanisms (iterative, record, replay,
undo) are grouped by their "iteration"; rows of the sampling mechanism,
which runs on a timer, are grouped by their invocation number ("seq") and
labelled "w<seq>" (memory-manager wake-up).

Only the standard library, plus matplotlib (Agg backend) for the plots; the
text summary (--text-only) needs no matplotlib.  What both reports share
(reading, text tables, the HTML page) is in report_common.py; the three
modules sit side by side (the build tree beside the pagehome binary,
PREFIX/DATADIR/pagehome/ once installed).

Hostile or broken input.  The file is checked before anything is rendered
(report_common.load_input): at most 128 MiB of UTF-8 JSON, every number
finite and within 64 bits, every field the report reads of the type it
expects, and the sizes within the writers' own bounds (config.nodes <=
PH_MAX_NODES, strips <= 256 buckets, areas <= 4096, log records <= 65536;
sim files: runs, engines and per-iteration series).  A file that does not
fit gets one line, "pagehome: report: FILE: field X: expected ..., got
...", and exit status 1.  The output files are made as new files in OUTDIR
and renamed over their names: a symbolic link there is replaced (and said
so on stderr), never written through.  A bug of the report itself prints
one line saying "internal error"; PAGEHOME_REPORT_DEBUG=1 shows its
traceback.

Exit status: 0 done, 1 the input cannot be read or taken or the output
cannot be written, 2 usage error.
"""

import argparse
import json
import math
import os
import sys

# the modules beside this script (report_common.py, sim_report.py): no
# __pycache__ written into PREFIX/share/pagehome or the source tree
sys.dont_write_bytecode = True
import cluster_report  # noqa: E402
import sim_report  # noqa: E402
from report_common import (  # noqa: E402
    ReportError, check_input, default_outdir, esc, fmt_bytes, html_figure, html_head,
    html_items, import_pyplot, load_input, lst, make_outdir, ms, no_data, num, obj,
    one_line, pct, plural, render_text_sections, save_figure, write_page)

KINDS = ("iterative", "sampling", "record", "replay", "undo")
KIND_COLOURS = {
    "iterative": "#1f77b4",
    "sampling": "#17becf",
    "record": "#9467bd",
    "replay": "#ff7f0e",
    "undo": "#d62728",
}
UNKNOWN_COLOUR = "#c8c8c8"
IMAGES = ("homes.png", "remote_share.png", "migrations.png")
TEXT_MAX_STEPS = 60      # longer per-iteration tables show head and tail
HTML_MAX_STEPS = 1000
PLOT_MAX_STEPS = 500     # more steps are summed into bins for the plots
HOMES_MAX_AREAS = 24     # the largest areas get a strip, the rest are listed


# ---- reading ----------------------------------------------------------------

def load_run(path):
    """The parsed and checked statistics file, or ReportError saying what is
    wrong (report_common.load_input: the schema, the bounds)."""
    return check_run(load_input(path)[1], path)


def check_run(data, path):
    """data (the parsed file path) when it is a statistics file within the
    schema, else ReportError."""
    kind, data = check_input(data, path)
    if kind != "run":
        raise ReportError(f"{path} is not a pagehome statistics file (no "
                          "\"pagehome_stats\" key)")
    return data


# ---- the run, digested ------------------------------------------------------

class Step:
    """All invocation rows of one iteration (or one sampling wake-up)."""

    FIELDS = ("scanned", "candidates", "migrated", "failed", "frozen", "melted",
              "accesses", "remote_before", "remote_after", "bytes_moved",
              "engine_ns", "move_ns", "sampler_ns")

    def __init__(self, label, order, key=None):
        self.label = label
        self.order = order         # smallest invocation number ("seq")
        self.key = key             # ("i", iteration) or ("w", seq)
        self.rows = 0
        self.kinds = {}            # kind -> pages migrated (0 counts too)
        for f in self.FIELDS:
            setattr(self, f, 0)

    def add(self, row):
        self.rows += 1
        kind = row.get("kind", "?")
        self.kinds[kind] = self.kinds.get(kind, 0) + num(row, "migrated")
        for f in self.FIELDS:
            setattr(self, f, getattr(self, f) + num(row, f))
        self.order = min(self.order, num(row, "seq"))

    def kinds_text(self):
        known = [k for k in KINDS if k in self.kinds]
        return "+".join(known + sorted(k for k in self.kinds if k not in KINDS))


class Run:
    """What the statistics file says, in the shapes the report needs."""

    def __init__(self, data, path):
        self.path = path
        self.data = data
        self.transparent = obj(data, "transparent")
        self.openmp = obj(self.transparent, "openmp")
        self.program = self.transparent.get("program") or ""
        self.engine_ran = "engine" not in data or data.get("engine") is not None
        if self.engine_ran and "totals" not in data:
            self.engine_ran = False
        self.note = data.get("note") if isinstance(data.get("note"), str) else ""
        if not self.engine_ran and not self.note:
            self.note = "the statistics file has no engine section"
        self.config = obj(data, "config")
        self.totals = obj(data, "totals")
        self.source = obj(data, "source_stats")
        self.areas = [a for a in lst(data, "areas") if isinstance(a, dict)]
        self.rows = [r for r in lst(data, "invocations") if isinstance(r, dict)]
        self.nodes = int(num(self.config, "nodes"))
        if self.nodes <= 0:
            seen = [v for a in self.areas for k in ("strip_start", "strip_end")
                    for v in lst(a, k) if isinstance(v, int)]
            self.nodes = max(seen, default=-1) + 1
        self.steps = self._steps()

    def _steps(self):
        groups = {}
        for r in self.rows:
            if r.get("kind") == "sampling":
                key = ("w", int(num(r, "seq")))
                label = f"w{key[1]}"
            else:
                key = ("i", int(num(r, "iteration")))
                label = str(key[1])
            st = groups.get(key)
            if st is None:
                st = groups[key] = Step(label, num(r, "seq"), key)
            st.add(r)
        # one kind of step: in its own order; both: in invocation order
        steps = list(groups.values())
        if len({s.key[0] for s in steps}) == 1:
            return sorted(steps, key=lambda s: s.key[1])
        return sorted(steps, key=lambda s: (s.order, s.key))

    def step_axis_name(self):
        kinds = {r.get("kind") for r in self.rows}
        if kinds == {"sampling"}:
            return "memory-manager wake-up (invocation)"
        if "sampling" in kinds:
            return "iteration / wake-up"
        return "iteration"

    def migrated_by_kind(self):
        out = {}
        for r in self.rows:
            k = r.get("kind", "?")
            out[k] = out.get(k, 0) + num(r, "migrated")
        return out

    def phases(self):
        """phase id -> what the log says of it."""
        out = {}
        for r in self.rows:
            ph = num(r, "phase", -1)
            if ph < 0:
                continue
            p = out.setdefault(int(ph), {"recorded": None, "wanted": 0, "records": 0,
                                         "replays": 0, "undos": 0, "moved_replay": 0,
                                         "moved_undo": 0})
            kind = r.get("kind")
            if kind == "record":
                p["records"] += 1
                p["wanted"] += num(r, "candidates")
                if p["recorded"] is None:
                    p["recorded"] = int(num(r, "iteration"))
            elif kind == "replay":
                p["replays"] += 1
                p["moved_replay"] += num(r, "migrated")
            elif kind == "undo":
                p["undos"] += 1
                p["moved_undo"] += num(r, "migrated")
        return dict(sorted(out.items()))


# ---- the summary, as sections both renderers share --------------------------
#
# A section is (title, items); an item is ("kv", key, value), ("table",
# headers, rows, note) or ("text", paragraph).

def area_failed(a):
    return sum(num(a, k) for k in ("failed_busy", "failed_nomem", "failed_access",
                                   "failed_fault", "failed_other"))


def area_name(a):
    return str(a.get("name") or f"area {num(a, 'id')}")


def curve_text(values, most=24):
    """Percentages as a compact curve: at most `most` of them, evenly spread."""
    if len(values) > most:
        values = [values[round(i * (len(values) - 1) / (most - 1))] for i in range(most)]
    return " ".join(f"{v:.0f}" for v in values)


def result_items(run):
    """The headline: what a user wants to know first, each figure labelled
    measured (homes asked of the OS, samples, move_pages results) or
    estimated (the engine's guess of what a migration changed)."""
    tot, cfg = run.totals, run.config
    items = []
    hot = sum(num(a, "pages") for a in run.areas)
    sp = sum(num(a, "sampled_pages") for a in run.areas)
    sl = sum(num(a, "sampled_pages_on_top_accessor") for a in run.areas)
    st = sum(num(a, "start_pages") for a in run.areas)
    stl = sum(num(a, "start_pages_on_top_accessor") for a in run.areas)
    has_start = any("start_pages" in a for a in run.areas)
    observe = bool(cfg.get("observe"))
    if sp:
        start = f"{pct(stl, st)} at start" if has_start and st else "- at start (not recorded)"
        items.append(("kv", "owner-local share",
                      f"{start} -> {pct(sl, sp)} at the end [measured: of the "
                      f"{int(sp)} pages sampled ({pct(sp, hot)} of {int(hot)} hot pages), "
                      "those on the node that sampled them most; homes asked of the OS "
                      "when the engine first looked at the page and at the end]"))
    else:
        items.append(("kv", "owner-local share",
                      f"- (no page was sampled; {int(hot)} hot pages)"))
    steps = [s for s in run.steps if s.accesses]
    if steps:
        curve = [100.0 * s.remote_before / s.accesses for s in steps]
        first, last = steps[0], steps[-1]
        items.append(("kv", "remote share of the samples",
                      f"{curve[0]:.1f}% in the first {run.step_axis_name()} "
                      f"({first.label}) -> {curve[-1]:.1f}% in the last ({last.label}) "
                      f"[measured: each step's samples against the homes then]"))
        items.append(("kv", "its curve (%)", curve_text(curve) +
                      (f"  [{len(curve)} steps, evenly picked]" if len(curve) > 24 else
                       f"  [{len(curve)} step{'s' if len(curve) != 1 else ''}]")))
        acc = num(tot, "accesses")
        if acc:
            items.append(("kv", "whole run", f"{pct(num(tot, 'remote_accesses_before'), acc)} "
                          f"of all samples remote [measured], {pct(num(tot, 'remote_accesses_after'), acc)} "
                          "after the migrations they caused [estimated]"))
    else:
        items.append(("kv", "remote share of the samples", "- (no access was sampled)"))
    moved = num(tot, "migrated")
    twice = sum(num(a, "pages_moved_twice") for a in run.areas)
    if observe:
        items.append(("kv", "pages moved", f"none: the engine observed only (it would have "
                      f"moved {int(num(tot, 'candidates'))} candidates) [measured]"))
    else:
        items.append(("kv", "pages moved", f"{int(moved)} ({pct(moved, hot)} of the hot "
                      f"pages, {fmt_bytes(num(tot, 'bytes_moved'))}) [measured]"))
    items.append(("kv", "moved twice or more", f"{int(twice)} pages ({pct(twice, hot)} of "
                  "the hot pages) [measured]"))
    items.append(("kv", "frozen", f"{int(num(tot, 'frozen'))} ping-pong freezes, "
                  f"{int(num(tot, 'melted'))} melted [measured]"))
    return items


def sampling_cost_text(cfg, src):
    """What the samples cost the program's threads, as the sampling budget
    counts it: arming, the handlers, and every trap's round trip at the
    cost the engine used (config.sample_trap_ns: measured when it started,
    the tunable when set, or the simulated machine's; files written before
    it was recorded give nothing)."""
    trap_ns = cfg.get("sample_trap_ns")
    if not isinstance(trap_ns, (int, float)) or trap_ns < 0:
        return ""
    # samples credited to a run's other pages (a coarse first sweep) took
    # no trap of their own
    n = int(num(src, "samples")) - int(num(src, "credited"))
    arm, handlers = num(src, "arm_ns"), num(src, "handler_ns")
    total = arm + handlers + n * trap_ns
    return (f"about {ms(total)} ms of the threads' time [estimated: arming "
            f"{ms(arm)} ms + handlers {ms(handlers)} ms + {n} traps x "
            f"{trap_ns / 1e3:.1f} us, the round trip the engine used: measured at "
            f"start unless sample_trap_ns was set, 3 us where not measured (a "
            f"simulated machine); "
            f"the sampling budget counts the same]")


def summary_sections(run, step_limit):
    """The summary; per-iteration tables longer than step_limit are cut."""
    if not run.engine_ran:
        return no_engine_sections(run)
    cfg, tot, tr, omp = run.config, run.totals, run.transparent, run.openmp
    secs = [("Result", result_items(run))]

    what = []
    what.append(("kv", "program", run.program or
                 "(not recorded: statistics written through the API)"))
    mech = (f"{cfg.get('mechanism', '?')} (access source {cfg.get('source', '?')}), "
            f"{plural(run.nodes, 'node')}")
    if tr:
        mech += f", placement {tr.get('placement', '?')}, hot threshold " \
                f"{fmt_bytes(num(tr, 'hot_threshold_bytes'))}"
    what.append(("kv", "mechanism", mech))
    if tr:
        what.append(("kv", "OpenMP", openmp_text(omp)))
    eng = (f"{plural(int(num(tot, 'iterations')), 'iteration')}, "
           f"{plural(int(num(tot, 'invocations')), 'invocation')}, "
           f"{'still active' if tot.get('active') else 'inactive'} at exit; "
           f"engine {ms(num(tot, 'engine_ns'))} ms, move_pages "
           f"{ms(num(tot, 'move_ns'))} ms, sampler {ms(num(tot, 'sampler_ns'))} ms")
    what.append(("kv", "engine", eng))
    src = run.source
    what.append(("kv", "samples", f"{int(num(src, 'samples'))} trapped in "
                 f"{plural(int(num(src, 'intervals')), 'interval')} "
                 f"({int(num(src, 'armed_pages'))} pages armed, "
                 f"{int(num(src, 'dropped'))} dropped, "
                 f"{int(num(src, 'foreign_faults'))} foreign faults)"))
    cost = sampling_cost_text(cfg, src)
    if cost:
        what.append(("kv", "their cost", cost))
    secs.append(("What ran", what))

    pages = []
    byk = run.migrated_by_kind()
    moved = (f"{int(num(tot, 'migrated'))} migrated ({fmt_bytes(num(tot, 'bytes_moved'))}), "
             f"{int(num(tot, 'failed'))} failed, {int(num(tot, 'frozen'))} frozen, "
             f"{int(num(tot, 'melted'))} melted")
    pages.append(("kv", "pages", moved))
    if byk:
        pages.append(("kv", "by kind", ", ".join(
            f"{k} {int(byk[k])}" for k in sorted(byk, key=lambda k: (
                KINDS.index(k) if k in KINDS else len(KINDS), k)))))
    logged = sum(byk.values())
    if logged < num(tot, "migrated"):
        pages.append(("text", f"the invocation log covers {int(logged)} of the "
                      f"{int(num(tot, 'migrated'))} migrated pages (the engine keeps "
                      "the first 65536 records)"))
    elif logged > num(tot, "migrated"):
        pages.append(("text", f"the invocation log adds up to {int(logged)} migrated "
                      f"pages, more than the totals' {int(num(tot, 'migrated'))}: the "
                      "file is inconsistent"))
    acc = num(tot, "accesses")
    rb, ra = num(tot, "remote_accesses_before"), num(tot, "remote_accesses_after")
    if acc:
        pages.append(("kv", "remote share", f"{pct(rb, acc)} -> {pct(ra, acc)} of the "
                      f"sampled accesses over the whole run, before [measured] -> after "
                      f"migration [estimated] ({int(rb)} -> {int(ra)} of {int(acc)})"))
    else:
        pages.append(("kv", "remote share", "- (no access was sampled)"))
    secs.append(("Pages", pages))

    secs.append(("Areas", areas_items(run)))
    secs.append((f"Per {run.step_axis_name()}", [steps_table(run, step_limit)]))
    ph = phases_items(run)
    if ph:
        secs.append(("Phases", ph))
    secs.append(("Table 1 (UPMlib style)", [table1(run)]))
    return secs


def openmp_text(omp):
    if not omp.get("runtime_seen"):
        linked = omp.get("runtime_linked")
        txt = "no OpenMP runtime with the tools interface was seen"
        if linked and linked != "none":
            txt += f" (the program links {linked})"
        elif omp.get("note"):
            txt += f" ({omp['note']})"
        return txt
    txt = (f"{omp.get('runtime', '?')}; {plural(int(num(omp, 'regions')), 'parallel region')}, "
           f"{plural(int(num(omp, 'threads')), 'thread')}")
    if "iteration" in omp:
        txt += f"; iteration: {omp['iteration']}"
        if num(omp, "period"):
            txt += f" (period {int(num(omp, 'period'))})"
        bounds = int(num(omp, "iteration_boundaries"))
        txt += f", {plural(bounds, 'iteration boundary', 'iteration boundaries')}"
        if omp.get("early_boundary"):
            txt += " (the first where the loop's first region came round again, before the period was sure)"
    if omp.get("fallback") == "time":
        txt += (f"; no iteration {int(num(omp, 'fallback_after_ms'))} ms after the first "
                "region: the sampling mechanism took over")
        if omp.get("back_to_iterative"):
            txt += " until one was found"
    elif omp.get("switched_to_sampling"):
        txt += "; switched to the sampling mechanism"
    if not omp.get("engine_calls", True):
        txt += "; engine off (statistics only)"
    return txt


def no_engine_sections(run):
    items = [("kv", "program", run.program or "(not recorded)"),
             ("kv", "engine", "none ran"),
             ("kv", "why", run.note)]
    if run.transparent:
        items.append(("kv", "OpenMP", openmp_text(run.openmp)))
    return [("What ran", items)]


def areas_items(run):
    tr = run.transparent
    items = []
    heap, static = obj(tr, "heap"), obj(tr, "static")
    total = sum(num(a, "bytes") for a in run.areas)
    found = f"{plural(len(run.areas), 'area')} registered, {fmt_bytes(total)}"
    if tr:
        found += (f"; heap: {plural(int(num(heap, 'hot_allocations')), 'hot allocation')} "
                  f"({fmt_bytes(num(heap, 'hot_bytes'))}), static: "
                  f"{plural(int(num(static, 'segments')), 'segment')} "
                  f"({fmt_bytes(num(static, 'bytes'))})")
    items.append(("kv", "found", found))
    if num(run.data, "areas_not_recorded"):
        items.append(("text", f"{int(num(run.data, 'areas_not_recorded'))} more areas "
                      "were registered but not recorded"))
    rows = []
    for a in run.areas:
        removed = a.get("removed_iteration")
        rows.append([str(int(num(a, "id"))), area_name(a), fmt_bytes(num(a, "bytes")),
                     str(int(num(a, "pages"))),
                     f"iter {int(num(a, 'registered_iteration'))}",
                     "live" if removed is None else f"iter {removed}",
                     str(int(num(a, "migrated"))), str(int(area_failed(a))),
                     str(int(num(a, "frozen"))),
                     pct(num(a, "remote_accesses"), num(a, "accesses"))])
    items.append(("table", ["id", "name", "size", "pages", "registered", "removed",
                            "migrated", "failed", "frozen", "remote share"], rows,
                  "migrated counts the area's own invocations; pages a phase replay "
                  "or undo moves are in the totals and the per-iteration table"))
    return items


def step_row(s):
    return [s.label, s.kinds_text(), str(int(s.scanned)), str(int(s.candidates)),
            str(int(s.migrated)), str(int(s.failed)), str(int(s.frozen)),
            str(int(s.accesses)), pct(s.remote_before, s.accesses),
            pct(s.remote_after, s.accesses), ms(s.engine_ns), ms(s.move_ns)]


STEP_HEADERS = ["step", "kinds", "scanned", "candidates", "migrated", "failed", "frozen",
                "accesses", "remote before", "remote after", "engine ms", "move ms"]


def steps_table(run, limit):
    steps = run.steps
    if not steps:
        return ("text", "no engine invocation was logged")
    note = ("remote before / after: share of the step's sampled accesses that were "
            "remote before migration, and as the engine estimates it after")
    if len(steps) > limit:
        head, tail = limit // 2, limit - limit // 2
        rows = [step_row(s) for s in steps[:head]]
        rows.append(["..."] + [""] * (len(STEP_HEADERS) - 1))
        rows += [step_row(s) for s in steps[-tail:]]
        note += f"; {len(steps) - limit} of {len(steps)} steps not shown"
    else:
        rows = [step_row(s) for s in steps]
    return ("table", STEP_HEADERS, rows, note)


def phases_items(run):
    phases = run.phases()
    info = obj(run.openmp, "phases")
    if not phases and not info:
        return []
    items = []
    if info:
        items.append(("kv", "regions as phases",
                      f"{int(num(info, 'regions_as_phases'))} "
                      f"({int(num(info, 'phase_calls'))} phase calls, "
                      f"{int(num(info, 'phase_errors'))} errors, "
                      f"{int(num(info, 'regions_beyond_limit'))} regions beyond the limit)"))
    rows = []
    for ph, p in phases.items():
        rows.append([str(ph), "-" if p["recorded"] is None else f"iter {p['recorded']}",
                     str(int(p["wanted"])), str(p["replays"]), str(int(p["moved_replay"])),
                     str(p["undos"]), str(int(p["moved_undo"]))])
    if rows:
        items.append(("table", ["phase", "recorded", "pages wanted", "replays",
                                "moved by replays", "undos", "moved by undos"], rows,
                      "pages wanted: the record's candidates; a replay moves them "
                      "before the phase, its undo moves them back after it"))
    return items


def table1(run):
    rows = []
    for a in run.areas:
        inv = num(a, "invocations")
        mig, cand = num(a, "migrated"), num(a, "candidates")
        rows.append([area_name(a), str(int(num(a, "pages"))),
                     f"{int(mig)}/{int(cand)}" + (f" ({pct(mig, cand)})" if cand else ""),
                     pct(num(a, "migrated_first2"), mig),
                     f"{num(a, 'remote_accesses') / inv:.0f}" if inv else "-"])
    return ("table", ["area", "hot pages", "migrated/eligible", "first 2 iter.",
                      "remote acc./iter"], rows,
            "eligible: pages that met the criterion (candidates); first 2 iter.: "
            "share of the area's migrations made in its first two invocations; "
            "remote acc./iter: sampled remote accesses per invocation of the area")


# ---- text -------------------------------------------------------------------

def render_text(run, sections):
    return render_text_sections(f"pagehome report: {run.path}", sections)


# ---- plots ------------------------------------------------------------------

def node_colours(matplotlib, n):
    """One colour per node; never grey, which means 'unknown'."""
    try:
        tab10 = matplotlib.colormaps["tab10"].colors
        turbo = matplotlib.colormaps["turbo"]
    except AttributeError:  # matplotlib < 3.5
        import matplotlib.cm as cm
        tab10, turbo = cm.get_cmap("tab10").colors, cm.get_cmap("turbo")
    base = [c for i, c in enumerate(tab10) if i != 7]   # 7 is tab10's grey
    if n <= len(base):
        return list(base[:n])
    return [turbo(i / (n - 1)) for i in range(n)]


def plot_homes(run, matplotlib, plt, path):
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch
    areas = run.areas
    if len(areas) > HOMES_MAX_AREAS:
        keep = sorted(areas, key=lambda a: -num(a, "pages"))[:HOMES_MAX_AREAS]
        areas = [a for a in run.areas if any(a is k for k in keep)]
    colours = node_colours(matplotlib, max(run.nodes, 1))
    cmap = ListedColormap([UNKNOWN_COLOUR] + colours)
    n = max(len(areas), 1)
    # fixed sizes in inches: header (title, legend), one strip pair per
    # area with its title and page axis, the x label
    top_in, bottom_in, strip_in, gap_in = 0.95, 0.55, 0.42, 0.62
    height = top_in + bottom_in + n * strip_in + (n - 1) * gap_in
    fig, axes = plt.subplots(n, 1, figsize=(10, height), squeeze=False)
    fig.subplots_adjust(left=0.08, right=0.98, top=1 - top_in / height,
                        bottom=bottom_in / height, hspace=gap_in / strip_in)
    for ax, a in zip(axes[:, 0], areas):
        pages = max(int(num(a, "pages")), 1)
        for row, key in enumerate(("strip_start", "strip_end")):
            strip = [v if isinstance(v, int) and 0 <= v < run.nodes else -1
                     for v in lst(a, key)] or [-1]
            ax.imshow([[v + 1 for v in strip]], cmap=cmap, vmin=0, vmax=len(colours),
                      aspect="auto", interpolation="nearest",
                      extent=(0, pages, row + 1, row))
        ax.set_xlim(0, pages)
        ax.set_ylim(2, 0)
        ax.set_yticks([0.5, 1.5])
        ax.set_yticklabels(["start" if lst(a, "strip_start") else "start (none)",
                            "end" if lst(a, "strip_end") else "end (none)"], fontsize=8)
        removed = a.get("removed_iteration")
        when = "live at exit" if removed is None else f"freed at iteration {removed}"
        ax.set_title(f"{area_name(a)}: {fmt_bytes(num(a, 'bytes'))}, "
                     f"{int(num(a, 'pages'))} pages, {when}", fontsize=9, loc="left")
        ax.tick_params(axis="x", labelsize=8)
    if not areas:
        ax = axes[0, 0]
        ax.axis("off")
        ax.text(0.5, 0.5, "no hot area was registered", ha="center", va="center")
    else:
        axes[-1, 0].set_xlabel("page within the area")
    handles = [Patch(color=c, label=f"node {i}") for i, c in enumerate(colours)]
    handles.append(Patch(color=UNKNOWN_COLOUR, label="unknown"))
    title = "Home of each area's pages: first iteration (start) and end"
    if len(areas) < len(run.areas):
        title += f" ({len(areas)} largest of {len(run.areas)} areas)"
    fig.suptitle(title, fontsize=11, y=1 - 0.08 / height, va="top")
    fig.legend(handles=handles, loc="upper center", ncol=min(len(handles), 9),
               fontsize=8, frameon=False, bbox_to_anchor=(0.5, 1 - 0.36 / height))
    save_figure(fig, path)
    plt.close(fig)


def bin_steps(steps, limit):
    """At most `limit` points: consecutive steps summed when there are more."""
    if len(steps) <= limit:
        return steps, 1
    k = math.ceil(len(steps) / limit)
    out = []
    for i in range(0, len(steps), k):
        group = steps[i:i + k]
        b = Step(group[0].label, group[0].order, group[0].key)
        for s in group:
            b.rows += s.rows
            for f in Step.FIELDS:
                setattr(b, f, getattr(b, f) + getattr(s, f))
            for kind, m in s.kinds.items():
                b.kinds[kind] = b.kinds.get(kind, 0) + m
        out.append(b)
    return out, k


def set_step_ticks(ax, steps, xlabel):
    n = len(steps)
    every = max(1, math.ceil(n / 20))
    idx = list(range(0, n, every))
    ax.set_xticks(idx)
    ax.set_xticklabels([steps[i].label for i in idx], fontsize=8,
                       rotation=45 if n > 12 else 0)
    ax.set_xlabel(xlabel)
    ax.set_xlim(-0.6, n - 0.4)


def plot_remote_share(run, plt, path):
    steps, k = bin_steps(run.steps, PLOT_MAX_STEPS)
    fig, ax = plt.subplots(figsize=(10, 4.2))
    xlabel = run.step_axis_name() + (f" (sums of {k})" if k > 1 else "")
    if any(s.accesses for s in steps):
        xs = list(range(len(steps)))
        nan = float("nan")
        before = [100.0 * s.remote_before / s.accesses if s.accesses else nan for s in steps]
        after = [100.0 * s.remote_after / s.accesses if s.accesses else nan for s in steps]
        ax.plot(xs, before, marker="o", color="#d62728",
                label="before migration (measured: samples vs homes then)")
        ax.plot(xs, after, marker="s", color="#2ca02c", label="after (engine's estimate)")
        top = max([v for v in before + after if v == v] + [1.0])
        ax.set_ylim(0, min(100.0, top * 1.15 + 1))
        ax.set_ylabel("remote share of sampled accesses (%)")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=9)
        set_step_ticks(ax, steps, xlabel)
        if any(not s.accesses for s in steps):
            ax.text(0.01, 0.97, "no point: no access sampled in that step",
                    transform=ax.transAxes, fontsize=8, color="#555", va="top")
        tot = run.totals
        ax.set_title(f"Remote share of sampled accesses per {run.step_axis_name()}: "
                     f"{pct(num(tot, 'remote_accesses_before'), num(tot, 'accesses'))} -> "
                     f"{pct(num(tot, 'remote_accesses_after'), num(tot, 'accesses'))} overall",
                     fontsize=11)
    else:
        no_data(ax, "no sampled accesses in the invocation log")
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)


def plot_migrations(run, plt, path):
    steps, k = bin_steps(run.steps, PLOT_MAX_STEPS)
    fig, ax = plt.subplots(figsize=(10, 4.2))
    kinds = [kd for kd in KINDS if any(s.kinds.get(kd) for s in steps)]
    kinds += sorted({kd for s in steps for kd, m in s.kinds.items() if m and kd not in KINDS})
    if steps and kinds:
        xs = list(range(len(steps)))
        bottom = [0.0] * len(steps)
        for kd in kinds:
            h = [s.kinds.get(kd, 0) for s in steps]
            ax.bar(xs, h, bottom=bottom, width=0.8, label=kd,
                   color=KIND_COLOURS.get(kd, "#7f7f7f"))
            bottom = [b + v for b, v in zip(bottom, h)]
        ax.set_ylabel("pages migrated")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=9)
        set_step_ticks(ax, steps, run.step_axis_name() + (f" (sums of {k})" if k > 1 else ""))
        ax.set_title(f"Pages migrated per {run.step_axis_name()}, by kind "
                     f"({int(num(run.totals, 'migrated'))} in all)", fontsize=11)
    else:
        no_data(ax, "no page was migrated" if steps else "no engine invocation was logged")
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)


def write_plots(run, outdir):
    matplotlib, plt = import_pyplot()
    paths = {name: os.path.join(outdir, name) for name in IMAGES}
    plot_homes(run, matplotlib, plt, paths["homes.png"])
    plot_remote_share(run, plt, paths["remote_share.png"])
    plot_migrations(run, plt, paths["migrations.png"])
    return paths


# ---- HTML -------------------------------------------------------------------

CAPTIONS = {
    "homes.png": "Home strips: each area cut into at most 256 buckets of consecutive "
                 "pages, coloured by the node of the bucket's middle page, at the first "
                 "iteration (start) and at the end (when the area was freed or the report "
                 "written); grey: not resident or unknown.",
    "remote_share.png": "Remote share of the sampled accesses of each step, summed over "
                        "areas: before migration (measured: the step's samples against "
                        "the homes at the time) and as the engine estimates it after.",
    "migrations.png": "Pages migrated in each step, stacked by the kind of invocation.",
}


def config_items(run):
    """The configuration the run recorded: every tunable with its value and
    where it came from (newer statistics files), else the engine's summary."""
    tun = run.config.get("tunables")
    items = []
    if isinstance(tun, dict) and tun:
        rows = [[k, str(v.get("value", "")), str(v.get("source", ""))]
                for k, v in tun.items() if isinstance(v, dict)]
        items.append(("table", ["tunable", "value", "source"], rows,
                      "every tunable of the run, as pagehome --print-config shows them"))
    rows = [[k, json.dumps(v) if not isinstance(v, str) else v]
            for k, v in run.config.items() if k != "tunables"]
    for k in ("placement", "hot_threshold_bytes"):
        if k in run.transparent:
            rows.append([k, str(run.transparent[k])])
    for k, v in run.source.items():
        rows.append([f"source_stats.{k}", str(v)])
    note = ("the engine's configuration and the sampler's counters" if items else
            "as recorded in the statistics file (an older one: it does not list "
            "every tunable; pagehome --print-config shows them)")
    items.append(("table", ["name", "value"], rows, note))
    return items


def render_html(run, sections, images):
    title = f"pagehome report: {os.path.basename(run.program) or os.path.basename(run.path)}"
    out = html_head(title) + [f"<p>Statistics file <code>{esc(run.path)}</code>.</p>"]
    if not run.engine_ran:
        out.append("<div class='noengine'><p><strong>No engine ran in this program.</strong>"
                   f"</p><p>{esc(run.note)}</p></div>")
    for sec_title, items in sections:
        out.append(f"<h2>{esc(sec_title)}</h2>")
        out.append(html_items(items))
        if sec_title == "Pages" and images:
            out.append("<h2>Plots</h2>")
            for name in IMAGES:
                out.append(html_figure(images[name], CAPTIONS[name]))
    if run.engine_ran:
        out.append("<h2>Configuration</h2>")
        out.append(html_items(config_items(run)))
    out.append("</body></html>")
    return "\n".join(out) + "\n"


# ---- main -------------------------------------------------------------------

class ArgParser(argparse.ArgumentParser):
    """Usage errors in the pagehome command's style, exit status 2."""

    def error(self, message):
        print(f"pagehome: report: {message} (pagehome help report)", file=sys.stderr)
        sys.exit(2)


def report(args):
    """The report of args.run; the exit status.  ReportError for bad input."""
    kind, data = load_input(args.run)
    if kind == "sim":
        return sim_report.report(data, args.run, args.output, args.text_only)
    if kind == "cluster":
        return cluster_report.report(data, args.run, args.output, args.text_only)
    run = Run(data, args.run)
    sys.stdout.write(render_text(run, summary_sections(run, TEXT_MAX_STEPS)))
    sys.stdout.flush()
    if args.text_only:
        return 0
    outdir = args.output or default_outdir(args.run)
    make_outdir(outdir)
    try:
        images = write_plots(run, outdir) if run.engine_ran else {}
    except OSError as e:
        raise ReportError(f"cannot write the plots in {outdir}: {e.strerror}") from None
    page = write_page(outdir, render_html(run, summary_sections(run, HTML_MAX_STEPS),
                                          images))
    wrote = ", ".join([page] + [os.path.basename(p) for p in images.values()])
    print(f"\nwrote {wrote}")
    return 0


def debugging():
    """PAGEHOME_REPORT_DEBUG set (and not 0): an internal error shows its
    traceback."""
    return os.environ.get("PAGEHOME_REPORT_DEBUG", "") not in ("", "0")


def fail(message):
    try:
        sys.stdout.flush()
    except OSError:
        pass
    print(f"pagehome: report: {one_line(message)}", file=sys.stderr)
    return 1


def main(argv=None):
    """Exit status 0 done, 1 the input cannot be read or taken or the output
    cannot be written (one line on stderr, never a traceback: an error of
    the report itself says "internal error" in one line, and shows its
    traceback with PAGEHOME_REPORT_DEBUG=1), 2 usage error, 130 interrupted."""
    ap = ArgParser(
        prog="pagehome report",
        description="Summarise a pagehome statistics file (pagehome run --report), "
                    "the data of a simulated experiment (pagehome sim E --json) or the "
                    "merged statistics of a cluster run (pagehome cluster run --report): "
                    "text on stdout, plots and report.html in OUTDIR.")
    ap.add_argument("run", metavar="RUN.json",
                    help="the statistics file, a pagehome sim --json file or the "
                         "merged statistics of a cluster run")
    ap.add_argument("-o", "--output", metavar="OUTDIR",
                    help="where report.html and the PNGs go "
                         "(default: RUN's basename + _report)")
    ap.add_argument("--text-only", action="store_true",
                    help="print the text summary only (no matplotlib needed)")
    args = ap.parse_args(argv)
    # text from the file that a non-UTF-8 terminal cannot show is escaped
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="backslashreplace")
    try:
        return report(args)
    except ReportError as e:
        return fail(str(e))
    except BrokenPipeError:
        # stdout closed early (pagehome report RUN.json | head): not an error
        # of the report; nothing more goes to the closed pipe
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        return 130
    except MemoryError:
        return fail(f"{args.run}: out of memory")
    except Exception as e:  # a bug of the report: one line unless debugging
        if debugging():
            raise
        return fail(f"internal error on {args.run}: {type(e).__name__}: {e} "
                    "(PAGEHOME_REPORT_DEBUG=1 shows the traceback)")


if __name__ == "__main__":
    sys.exit(main())
