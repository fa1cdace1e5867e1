"""sim_report.py -- the report of a simulated experiment.

    pagehome report SIM.json [-o OUTDIR] [--text-only]

SIM.json is what `pagehome sim EXPERIMENT --json SIM.json` writes
(src/experiment/report.c): top-level "experiment", "title", "machines",
"baseline", "runs", "targets" and "notes"; each run names its machine,
group, program, threads, iterations, placement, engine and label (the
engine as the tables name it), has its modelled times ("time_ns",
"last_half_ns") and their ratios to its baseline run ("norm_total",
"norm_last": e1/e2/e5 first-touch without migration, e3 the same phase
length without migration, e4 the same program without migration, e6
the best of the three page policies on the same workload), its
page counts (migrated, eligible, first2, ...) and "per_iteration" series
(time_ns, remote, moved, critical_ns, z_phase_ns); e6's runs add TLB and
2 MiB page counts (accesses, tlb_misses, remote_share, moved_4k,
huge_migrated, huge_split, huge_collapsed, huge_units_end).  pagehome_report.py
hands a file here when it has "experiment" and "runs" at the top level.

Cases.  A run's case is what it ran apart from the engine: the fields
among machine, group, program, threads, placement, repeat, critical_pages,
thread_notes and keep_active (and any other string field a newer
experiment adds) that differ between the runs, each kept only when the
fields kept before it and the label do not already determine it.  e1:
program, threads, placement; e5: machine too; e2: program, placement; e3:
the phase length (group); e4: the workload and program (group); e6: the
workload (group), the label being the page policy.  Tables
and bar charts have one row or one group of bars per case and one column
or bar per label, in the file's order.

Output:
  * on stdout: the experiment, a table of modelled time / baseline per
    case and label, overall and over the last half of the iterations, and
    one of pages migrated / eligible and the share migrated in the first
    two iterations (e3: its own columns: z-phase time, pages recorded,
    moved and critical-path time per iteration; e4: one row per run with
    the pages moved after the threads' swap; e6: one row per run with the
    TLB misses per access, the remote share, 4 KiB pages and 2 MiB pages
    moved, split and collapsed), then the targets (met / not met); the
    notes go to the page only;
  * unless --text-only, in OUTDIR (default: SIM's basename without .json
    plus "_report"):
      time.png            grouped bars: modelled time / baseline of each
                          run, a group per case, a bar per label, a panel
                          per machine when there are several;
      time_last_half.png  the same over the last half of the iterations;
      migrations.png      pages moved in each iteration, a panel per case
                          in which some run moved a page, a line per label
                          (only when some run moved a page);
      remote.png          e2 and e4: remote accesses per iteration, a panel
                          per case, a line per label (e4: the iteration of
                          the threads' swap marked);
      replay.png          e3: z-phase time, pages moved and critical-path
                          migration time per iteration, grouped bars;
      pages.png           e6: TLB misses per access, remote share, 4 KiB
                          pages moved, 2 MiB pages moved whole and split,
                          grouped bars per workload and page policy;
      report.html         all of it in one self-contained page.
"""

import math
import os
import sys

from report_common import (write_report, esc, html_figure, html_head, html_items,
                           import_pyplot, kind_of, lst, no_data, num, obj, save_figure)

CASE_FIELDS = ("machine", "group", "program", "threads", "placement", "repeat",
               "critical_pages", "thread_notes", "keep_active")
# Fields of a run that are not a case (the engine, results, series).
KNOWN_FIELDS = set(CASE_FIELDS) | {
    "iterations", "engine", "label", "migrate_at", "baseline_run", "time_ns",
    "last_half_ns", "norm_total", "norm_last", "hot_pages", "migrated", "eligible",
    "first2", "after_migrate", "migrate_ns", "critical_ns", "remote_per_iter",
    "replayed", "undone", "phase_pages", "invocations", "predictive_switches",
    "frozen", "melted", "misplaced", "qualify", "median_gain_ns", "max_gain_ns",
    "ml_ns", "per_iteration"}
HEADERS = {"threads": "thr", "repeat": "phase length", "critical_pages": "n critical",
           "thread_notes": "thread notes", "keep_active": "kept active"}
GROUP_HEADERS = {"e3": "phases", "e4": "workload", "e6": "workload"}
MAX_PANELS = 48


def is_sim(data):
    """Is data (parsed JSON) a `pagehome sim --json` file?  (It is checked
    against report_common.SIM_SCHEMA before it comes to report().)"""
    return kind_of(data) == "sim"


def label(r):
    return str(r.get("label") or r.get("engine") or "?")


def series(r, key):
    return [float(v) for v in lst(obj(r, "per_iteration"), key)
            if isinstance(v, (int, float)) and not isinstance(v, bool)]


def human(v, _pos=None):
    """An axis tick: 950, 12k, 1.5M (the tables of pagehome sim say 12.3k)."""
    a = abs(v)
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if a >= div:
            return f"{v / div:.3g}{suffix}"
    return f"{v:.3g}"


def ratio(v):
    return f"{v:.3f}" if v else "-"


def hashable(v):
    return v if isinstance(v, (str, int, float, bool, type(None))) else repr(v)


class Sim:
    """The experiment's runs, arranged by case and label."""

    def __init__(self, data, path):
        self.path = path
        self.name = data["experiment"]
        self.title = str(data.get("title") or self.name)
        self.machines = str(data.get("machines") or "")
        self.baseline = str(data.get("baseline") or "")
        self.runs = [r for r in lst(data, "runs") if isinstance(r, dict)]
        self.targets = [t for t in lst(data, "targets") if isinstance(t, dict)]
        self.notes = [n for n in lst(data, "notes") if isinstance(n, str)]
        self.labels = list(dict.fromkeys(label(r) for r in self.runs))
        self.fields = self._case_fields()
        self.cases = list(dict.fromkeys(self.case(r) for r in self.runs))
        self.cell = {}
        for r in self.runs:
            self.cell.setdefault((self.case(r), label(r)), r)

    def _case_fields(self):
        extra = sorted({k for r in self.runs for k, v in r.items()
                        if k not in KNOWN_FIELDS and isinstance(v, str)})
        chosen = []
        for f in list(CASE_FIELDS) + extra:
            if len({hashable(r.get(f)) for r in self.runs}) < 2:
                continue
            seen, determined = {}, True
            for r in self.runs:
                k = tuple(hashable(r.get(c)) for c in chosen) + (label(r),)
                if seen.setdefault(k, hashable(r.get(f))) != hashable(r.get(f)):
                    determined = False
                    break
            if not determined:
                chosen.append(f)
        return chosen

    def case(self, r):
        return tuple(hashable(r.get(f)) for f in self.fields)

    def header(self, f):
        if f == "group":
            return GROUP_HEADERS.get(self.name, "group")
        return HEADERS.get(f, f)

    def case_cells(self, case):
        return ["-" if v is None else str(v) for v in case]

    def case_text(self, case, skip=(), sep="\n"):
        """A case as a bar-chart label: its values, threads as 'N thr'."""
        parts = []
        for f, v in zip(self.fields, case):
            if f in skip:
                continue
            if f == "threads":
                parts.append(f"{v} thr")
            elif f == "group" and isinstance(v, str):
                parts += v.split(", ") if sep == "\n" else [v]
            elif f in ("program", "placement", "machine") or isinstance(v, str):
                parts.append(str(v))
            else:
                parts.append(f"{self.header(f)} {v}")
        return sep.join(parts) or self.name

    def iterations(self, case):
        its = list(dict.fromkeys(int(num(r, "iterations")) for r in self.runs
                                 if self.case(r) == case))
        return "/".join(str(i) for i in its)

    def migrating_labels(self):
        return [lb for lb in self.labels
                if any(num(r, "migrated") or num(r, "eligible")
                       for r in self.runs if label(r) == lb)]

    def moved_any(self):
        return any(any(series(r, "moved")) for r in self.runs)

    def images(self):
        """The PNGs this experiment gets, in order."""
        if not self.runs:
            return []
        out = ["time.png", "time_last_half.png"]
        if self.moved_any():
            out.append("migrations.png")
        if self.name in ("e2", "e4"):
            out.append("remote.png")
        if self.name == "e3":
            out.append("replay.png")
        if self.name == "e6":
            out.append("pages.png")
        return out


# ---- the summary ------------------------------------------------------------

def summary_sections(sim, for_html):
    secs = []
    about = [("kv", "experiment", sim.title),
             ("kv", "machines", sim.machines or "-"),
             ("kv", "times", "modelled (doc/sim-model.md), deterministic"),
             ("kv", "baseline", f"ratios against {sim.baseline}" if sim.baseline else "-"),
             ("kv", "runs", f"{len(sim.runs)}: {len(sim.cases)} cases x "
                            f"{len(sim.labels)} variants ({', '.join(sim.labels)})")]
    progs = {}
    for r in sim.runs:
        progs.setdefault(str(r.get("program", "?")), set()).add(int(num(r, "iterations")))
    if progs:
        about.append(("kv", "iterations", ", ".join(
            f"{p} {'/'.join(str(i) for i in sorted(its))}" for p, its in progs.items())))
    secs.append(("Experiment", about))
    if not sim.runs:
        secs.append(("Runs", [("text", "the file has no run")]))
        return secs
    if sim.name == "e3":
        secs.append(("Record / replay", [e3_table(sim)]))
    elif sim.name == "e4":
        secs.append(("Runs", [e4_table(sim)]))
    elif sim.name == "e6":
        secs.append(("Page sizes", [e6_table(sim)]))
    else:
        secs.append(("Modelled time / baseline", [time_table(sim)]))
        mig = migration_table(sim)
        if mig:
            secs.append(("Pages migrated", [mig]))
    if sim.targets:
        secs.append(("Targets", targets_items(sim, for_html)))
    if sim.notes:
        if for_html:
            secs.append(("Notes", [("text", n) for n in sim.notes]))
        else:
            secs.append(("Notes", [("text", f"{len(sim.notes)} in report.html (pagehome "
                                            "sim prints them under its table)")]))
    return secs


def time_table(sim):
    headers = [sim.header(f) for f in sim.fields] + ["iter"] + sim.labels
    rows = []
    for c in sim.cases:
        row = sim.case_cells(c) + [sim.iterations(c)]
        for lb in sim.labels:
            r = sim.cell.get((c, lb))
            row.append(f"{ratio(num(r, 'norm_total'))} / {ratio(num(r, 'norm_last'))}"
                       if r else "")
        rows.append(row)
    return ("table", headers, rows,
            f"each cell: modelled time / {sim.baseline or 'the baseline run'}, over the "
            "whole run / over the last half of the iterations")


def migrated_cell(r):
    """'3602/7206 (50%), 2%': migrated/eligible, share in the first 2 iterations."""
    mig, elig = int(num(r, "migrated")), int(num(r, "eligible"))
    first2 = f"{100.0 * num(r, 'first2') / mig:.0f}%" if mig else "-"
    return f"{mig}/{elig}" + (f" ({100.0 * mig / elig:.0f}%)" if elig else "") + f", {first2}"


def migration_table(sim):
    labels = sim.migrating_labels()
    if not labels:
        return None
    headers = [sim.header(f) for f in sim.fields] + labels
    rows = []
    for c in sim.cases:
        row = sim.case_cells(c)
        for lb in labels:
            r = sim.cell.get((c, lb))
            row.append(migrated_cell(r) if r else "")
        rows.append(row)
    return ("table", headers, rows,
            "each cell: pages migrated / eligible (pages that met the migration "
            "criterion), then the share of the migrations made in the first two "
            "iterations; engines that never migrated are left out")


def last_half_mean(v):
    tail = v[len(v) // 2:]
    return sum(tail) / len(tail) if tail else 0.0


def per_iter(r, key):
    it = num(r, "iterations")
    return num(r, key) / it if it else 0.0


def e3_table(sim):
    headers = [sim.header(f) for f in sim.fields] + [
        "engine", "time/base", "last half/base", "z ms/iter", "pages recorded",
        "moved/iter",
        "crit ms/iter"]
    rows = []
    for r in sim.runs:
        rec = int(num(r, "phase_pages", -1))
        rows.append(sim.case_cells(sim.case(r)) + [
            label(r), ratio(num(r, "norm_total")), ratio(num(r, "norm_last")),
            f"{last_half_mean(series(r, 'z_phase_ns')) / 1e6:.2f}",
            str(rec) if rec >= 0 else "-", f"{per_iter(r, 'migrated'):.1f}",
            f"{per_iter(r, 'critical_ns') / 1e6:.2f}"])
    return ("table", headers, rows,
            "z ms/iter: the z phase's modelled time per iteration (last half); recorded: "
            "pages the record selected; moved/iter: pages migrated per iteration (replay "
            "and undo both count); crit ms/iter: migration time on the program's critical "
            "path per iteration")


def e4_table(sim):
    headers = [sim.header(f) for f in sim.fields] + [
        "engine", "time/base", "last half/base", "migrated", "after swap", "predictive"]
    rows = []
    for r in sim.runs:
        rows.append(sim.case_cells(sim.case(r)) + [
            label(r), ratio(num(r, "norm_total")), ratio(num(r, "norm_last")),
            str(int(num(r, "migrated"))), str(int(num(r, "after_migrate"))),
            str(int(num(r, "predictive_switches")))])
    return ("table", headers, rows,
            "after swap: pages migrated after the threads swapped nodes; predictive: "
            "times the predictive criterion was armed")


def share(part, whole):
    return f"{100.0 * part / whole:.1f}%" if whole > 0 else "-"


def e6_table(sim):
    headers = [sim.header(f) for f in sim.fields] + [
        "page policy", "time/base", "last half/base", "TLB miss/access", "remote share",
        "moved 4K pages", "moved 2M units", "split", "collapsed", "2M units at end"]
    rows = []
    for r in sim.runs:
        rows.append(sim.case_cells(sim.case(r)) + [
            label(r), ratio(num(r, "norm_total")), ratio(num(r, "norm_last")),
            share(num(r, "tlb_misses"), num(r, "accesses")),
            share(num(r, "remote_share"), 1.0),
            str(int(num(r, "moved_4k"))), str(int(num(r, "huge_migrated"))),
            str(int(num(r, "huge_split"))), str(int(num(r, "huge_collapsed"))),
            str(int(num(r, "huge_units_end")))])
    return ("table", headers, rows,
            "page policy: 4 KiB pages, 2 MiB pages never split, or mixed (2 MiB, split when "
            "shared); TLB miss/access: modelled TLB misses per access; moved 2M units: "
            "2 MiB pages moved whole; split / collapsed: 2 MiB pages split into 4 KiB "
            "ones / made whole again")


def targets_items(sim, for_html):
    if for_html:
        rows = [["met" if t.get("met") else "not met", str(t.get("what", "")),
                 str(t.get("detail", ""))] for t in sim.targets]
        return [("table", ["result", "target", "detail"], rows, None)]
    items = []
    for t in sim.targets:
        items.append(("text", f"{'met' if t.get('met') else 'not met':<7}  {t.get('what', '')}"))
        if t.get("detail"):
            items.append(("text", f"{'':7}  {t['detail']}"))
    return items


# ---- plots ------------------------------------------------------------------
#
# Every figure is laid out in inches (grid_figure): the title on the first
# line, the legend under it (as many rows as its entries need), then the
# panels, so that nothing overlaps whatever the number of engines or cases.

LEGEND_ENTRY_IN = 1.45   # room per legend entry (label of ~20 characters)


def label_colours(matplotlib, labels):
    """One colour per label, in the file's order (tab10 without its grey)."""
    try:
        tab = matplotlib.colormaps["tab10"].colors
    except AttributeError:  # matplotlib < 3.5
        import matplotlib.cm as cm
        tab = cm.get_cmap("tab10").colors
    base = [c for i, c in enumerate(tab) if i != 7]
    return {lb: base[i % len(base)] for i, lb in enumerate(labels)}


def grid_figure(plt, rows, cols, panel_w, panel_h, title, handles, below_in,
                above_in=0.3, left_in=0.8, gap_w_in=0.8):
    """A figure of rows x cols panels of panel_w x panel_h inches; below_in
    under each panel (tick labels, x label), above_in over it (its title);
    the title and a legend of handles on top.  (fig, axes)."""
    width = left_in + cols * panel_w + (cols - 1) * gap_w_in + 0.25
    ncol = max(1, min(len(handles), int((width - 0.4) / LEGEND_ENTRY_IN)))
    legend_in = 0.26 * math.ceil(len(handles) / ncol) if handles else 0.0
    top_in = 0.42 + legend_in + above_in
    gap_h_in = below_in + above_in
    height = top_in + rows * panel_h + (rows - 1) * gap_h_in + below_in
    fig, axes = plt.subplots(rows, cols, figsize=(width, height), squeeze=False)
    fig.subplots_adjust(left=left_in / width, right=1 - 0.25 / width,
                        top=1 - top_in / height, bottom=below_in / height,
                        wspace=gap_w_in / panel_w, hspace=gap_h_in / panel_h)
    fig.suptitle(title, fontsize=10, x=0.1 / width, y=1 - 0.1 / height, ha="left",
                 va="top")
    if handles:
        fig.legend(handles=handles, loc="upper left", ncol=ncol, fontsize=8,
                   frameon=False, bbox_to_anchor=(0.05 / width, 1 - 0.38 / height),
                   borderaxespad=0, handlelength=2.5)
    return fig, axes


def human_axis(ax):
    from matplotlib.ticker import FuncFormatter
    ax.yaxis.set_major_formatter(FuncFormatter(human))


def bar_handles(colours, labels):
    from matplotlib.patches import Patch
    return [Patch(color=colours[lb], label=lb) for lb in labels]


def draw_bars(ax, sim, cases, value, colours, skip=()):
    """Grouped bars: a group per case, a bar per label; value(run) -> height.
    The highest bar."""
    n = max(len(sim.labels), 1)
    width = 0.8 / n
    top = 0.0
    for k, lb in enumerate(sim.labels):
        xs, hs = [], []
        for i, c in enumerate(cases):
            r = sim.cell.get((c, lb))
            v = value(r) if r else 0
            if v:
                xs.append(i - 0.4 + width * (k + 0.5))
                hs.append(v)
        top = max([top] + hs)
        ax.bar(xs, hs, width=width * 0.95, color=colours[lb], label=lb)
    ax.set_xticks(range(len(cases)))
    ax.set_xticklabels([sim.case_text(c, skip) for c in cases], fontsize=7)
    ax.set_xlim(-0.6, len(cases) - 0.4)
    ax.grid(axis="y", alpha=0.3)
    ax.tick_params(axis="y", labelsize=8)
    return top


def case_lines(sim, cases, skip=()):
    return max([sim.case_text(c, skip).count("\n") + 1 for c in cases] + [1])


def panel_machines(sim):
    """[(title, cases)]: one panel per machine when machine is a case field."""
    if "machine" not in sim.fields:
        return [("", sim.cases)]
    i = sim.fields.index("machine")
    machines = list(dict.fromkeys(c[i] for c in sim.cases))
    return [(str(m), [c for c in sim.cases if c[i] == m]) for m in machines]


def plot_ratio_bars(sim, matplotlib, plt, path, key, what):
    colours = label_colours(matplotlib, sim.labels)
    panels = panel_machines(sim)
    ncases = max(len(cs) for _, cs in panels)
    panel_w = min(21.0, max(6.5, ncases * max(0.8, 0.2 * len(sim.labels))))
    below = 0.25 + 0.13 * case_lines(sim, sim.cases, skip=("machine",))
    fig, axes = grid_figure(
        plt, len(panels), 1, panel_w, 3.0,
        f"{sim.name}: modelled {what} / {sim.baseline or 'baseline'} (dashed: 1)",
        bar_handles(colours, sim.labels), below, above_in=0.3 if len(panels) > 1 else 0.1)
    for ax, (machine, cases) in zip(axes[:, 0], panels):
        top = draw_bars(ax, sim, cases, lambda r: num(r, key), colours, skip=("machine",))
        ax.axhline(1.0, color="#444", linestyle="--", linewidth=0.9)
        ax.set_ylim(0, max(top, 1.0) * 1.08)
        ax.set_ylabel(f"{what} / baseline", fontsize=8)
        if machine:
            ax.set_title(machine, fontsize=9, loc="left")
    save_figure(fig, path)
    plt.close(fig)


def plot_series(sim, matplotlib, plt, path, key, ylabel, title, only_moving=False,
                mark_swap=False):
    """A panel per case (only_moving: cases where some run moved a page), a
    line per label (only_moving: labels that moved a page somewhere): the
    run's per-iteration series `key`."""
    from matplotlib.lines import Line2D
    colours = label_colours(matplotlib, sim.labels)
    cases = [c for c in sim.cases
             if not only_moving or any(any(series(sim.cell[(c, lb)], "moved"))
                                       for lb in sim.labels if (c, lb) in sim.cell)]
    shown = cases[:MAX_PANELS]
    labels = [lb for lb in sim.labels
              if not only_moving or any(any(series(r, "moved")) for r in sim.runs
                                        if label(r) == lb)]
    # overlapping lines stay visible: the later ones dashed or dotted
    styles = {lb: ("-", "--", "-.", ":")[k % 4] for k, lb in enumerate(labels)}
    cols = min(3, max(len(shown), 1))
    rows = max(1, math.ceil(len(shown) / cols))
    more = f" ({len(shown)} of {len(cases)} cases)" if len(shown) < len(cases) else ""
    handles = [Line2D([], [], color=colours[lb], linestyle=styles[lb], label=lb)
               for lb in labels]
    fig, axes = grid_figure(plt, rows, cols, 4.2, 1.9, f"{sim.name}: {title}{more}",
                            handles, 0.5)
    for ax in axes.flat[len(shown):]:
        ax.axis("off")
    if not shown:
        no_data(axes[0, 0], "no data")
    for ax, c in zip(axes.flat, shown):
        for lb in labels:
            r = sim.cell.get((c, lb))
            v = series(r, key) if r else []
            if not v:
                continue
            ax.plot(range(len(v)), v, color=colours[lb], label=lb, linewidth=1.3,
                    linestyle=styles[lb], marker="o" if len(v) <= 30 else None,
                    markersize=3)
            if mark_swap and num(r, "migrate_at", -1) >= 0:
                ax.axvline(num(r, "migrate_at"), color="#444", linestyle=":", linewidth=0.9)
        ax.set_title(sim.case_text(c, sep=", "), fontsize=8, loc="left")
        human_axis(ax)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
        ax.set_ylim(bottom=0)
        ax.set_xlabel("iteration", fontsize=7, labelpad=1)
        ax.set_ylabel(ylabel, fontsize=7)
    save_figure(fig, path)
    plt.close(fig)


def plot_replay(sim, matplotlib, plt, path):
    colours = label_colours(matplotlib, sim.labels)
    panels = (("z phase, ms per iteration (last half)",
               lambda r: last_half_mean(series(r, "z_phase_ns")) / 1e6),
              ("pages moved per iteration", lambda r: per_iter(r, "migrated")),
              ("migration on the critical path, ms per iteration",
               lambda r: per_iter(r, "critical_ns") / 1e6))
    panel_w = max(4.0, len(sim.cases) * max(0.8, 0.2 * len(sim.labels)))
    fig, axes = grid_figure(plt, 1, 3, panel_w, 3.0,
                            f"{sim.name}: record / replay of the z phase",
                            bar_handles(colours, sim.labels),
                            0.25 + 0.13 * case_lines(sim, sim.cases), gap_w_in=0.6)
    for ax, (what, fn) in zip(axes[0], panels):
        top = draw_bars(ax, sim, sim.cases, fn, colours)
        ax.set_ylim(0, max(top, 1e-9) * 1.1)
        ax.set_title(what, fontsize=9, loc="left")
    save_figure(fig, path)
    plt.close(fig)


def plot_pages(sim, matplotlib, plt, path):
    colours = label_colours(matplotlib, sim.labels)
    panels = (("TLB misses per access (%)",
               lambda r: 100.0 * num(r, "tlb_misses") / num(r, "accesses")
               if num(r, "accesses") > 0 else 0),
              ("remote share of the accesses (%)", lambda r: 100.0 * num(r, "remote_share")),
              ("4 KiB pages moved", lambda r: num(r, "moved_4k")),
              ("2 MiB pages moved whole", lambda r: num(r, "huge_migrated")),
              ("2 MiB pages split", lambda r: num(r, "huge_split")))
    panel_w = max(2.6, len(sim.cases) * max(0.8, 0.25 * len(sim.labels)))
    fig, axes = grid_figure(plt, 1, len(panels), panel_w, 3.0,
                            f"{sim.name}: page sizes (time: time.png)",
                            bar_handles(colours, sim.labels),
                            0.25 + 0.13 * case_lines(sim, sim.cases), gap_w_in=0.7)
    for ax, (what, fn) in zip(axes[0], panels):
        top = draw_bars(ax, sim, sim.cases, fn, colours)
        ax.set_ylim(0, max(top, 1.0) * 1.1)
        human_axis(ax)
        ax.set_title(what, fontsize=9, loc="left")
    save_figure(fig, path)
    plt.close(fig)


def write_plots(sim, outdir):
    matplotlib, plt = import_pyplot()
    paths = {}
    for name in sim.images():
        p = paths[name] = os.path.join(outdir, name)
        if name == "time.png":
            plot_ratio_bars(sim, matplotlib, plt, p, "norm_total", "time")
        elif name == "time_last_half.png":
            plot_ratio_bars(sim, matplotlib, plt, p, "norm_last", "time of the last half")
        elif name == "migrations.png":
            plot_series(sim, matplotlib, plt, p, "moved", "pages moved",
                        "pages moved per iteration", only_moving=True)
        elif name == "remote.png":
            plot_series(sim, matplotlib, plt, p, "remote", "remote accesses",
                        "remote accesses per iteration" +
                        (" (dotted: the threads' swap)" if sim.name == "e4" else ""),
                        mark_swap=sim.name == "e4")
        elif name == "replay.png":
            plot_replay(sim, matplotlib, plt, p)
        elif name == "pages.png":
            plot_pages(sim, matplotlib, plt, p)
    return paths


CAPTIONS = {
    "time.png": "Modelled time of each run over its baseline's, a group of bars per case "
                "and a bar per engine (dashed line: as fast as the baseline).",
    "time_last_half.png": "The same over the last half of the iterations, after the "
                          "engines have settled.",
    "migrations.png": "Pages moved in each iteration, one panel per case in which a run "
                      "moved pages, one line per engine.",
    "remote.png": "Remote accesses in each iteration, one panel per case, one line per "
                  "engine.",
    "pages.png": "Page sizes: modelled TLB misses per access, the remote share of the "
                 "accesses, 4 KiB pages moved, 2 MiB pages moved whole and split, per "
                 "workload and page policy.",
    "replay.png": "Record / replay: the z phase's time, the pages moved and the migration "
                  "time on the critical path, per iteration, per phase length and engine.",
}


# ---- HTML and main ------------------------------------------------------------

def render_html(sim, sections, images):
    out = html_head(f"pagehome report: {sim.name} ({sim.machines})")
    out.append(f"<p>Data of <code>pagehome sim {esc(sim.name)}</code>, file "
               f"<code>{esc(sim.path)}</code>.</p>")
    for i, (title, items) in enumerate(sections):
        cls = ""
        if title == "Targets":
            met = sum(1 for t in sim.targets if t.get("met"))
            cls = "met" if met == len(sim.targets) else "notmet"
            title = f"{title}: {met} of {len(sim.targets)} met"
        out.append(f"<h2 class='{cls}'>{esc(title)}</h2>" if cls else f"<h2>{esc(title)}</h2>")
        out.append(html_items(items))
        if i == 1 and images:
            out.append("<h2>Plots</h2>")
            for name, p in images.items():
                out.append(html_figure(p, CAPTIONS.get(name, "")))
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def report(data, path, outdir, text_only):
    """The whole report of a sim file; the exit status."""
    return write_report(Sim(data, path), path, outdir, text_only, summary_sections,
                        write_plots, render_html)
