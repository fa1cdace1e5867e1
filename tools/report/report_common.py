"""report_common.py -- what the reports of `pagehome report` share.

pagehome_report.py (the report of a run's statistics file) and
sim_report.py (the report of a `pagehome sim EXPERIMENT --json OUT` file)
both use these: reading the JSON, picking numbers out of it, the text
tables, matplotlib with the Agg backend, and the self-contained HTML page
(inline CSS, the PNGs as base64 data URIs).

A summary is a list of sections (title, items); an item is ("kv", key,
value), ("table", headers, rows, note) or ("text", paragraph).  Both
renderers (render_text_sections, html_items) take that shape.

Only the standard library; matplotlib is imported by import_pyplot() alone,
so the text summaries need none.
"""

import base64
import html
import json
import os
import sys

# Table columns written left-aligned (text) or with class 'l' (HTML): the
# run report's and the simulation report's names.
LEFT_COLUMNS = {"step", "kinds", "name", "area", "registered", "removed", "recorded",
                "value",
                "machine", "group", "program", "placement", "engine", "phases",
                "workload", "target", "result", "what", "page policy"}


class ReportError(Exception):
    """A problem with the input or the output, reported in one line."""


# ---- reading ----------------------------------------------------------------

def load_json(path):
    """The parsed file, or ReportError saying what is wrong with it."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise ReportError(f"cannot read {path}: {e.strerror}") from None
    except UnicodeDecodeError:
        raise ReportError(f"{path} is not a pagehome statistics file (not text)") from None
    except json.JSONDecodeError as e:
        raise ReportError(f"{path} is not valid JSON: {e.msg} at line {e.lineno} "
                          f"column {e.colno}") from None


def num(obj, key, default=0):
    """obj[key] as a number, default when absent or not a number."""
    if not isinstance(obj, dict):
        return default
    v = obj.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return default
    return v


def obj(parent, key):
    """parent[key] when it is an object, else {}."""
    v = parent.get(key) if isinstance(parent, dict) else None
    return v if isinstance(v, dict) else {}


def lst(parent, key):
    """parent[key] when it is an array, else []."""
    v = parent.get(key) if isinstance(parent, dict) else None
    return v if isinstance(v, list) else []


# ---- formatting -------------------------------------------------------------

def fmt_bytes(n):
    """1536 -> '1.5 KiB' (the pagehome command's style)."""
    units = ("B", "KiB", "MiB", "GiB", "TiB")
    v, u = float(n), 0
    while v >= 1024.0 and u < len(units) - 1:
        v /= 1024.0
        u += 1
    return f"{int(n)} B" if u == 0 else f"{v:.1f} {units[u]}"


def pct(part, whole):
    """'12.5%', or '-' when there is nothing to divide."""
    return f"{100.0 * part / whole:.1f}%" if whole else "-"


def ms(ns):
    return f"{ns / 1e6:.2f}"


def plural(n, word, words=None):
    return f"{n} {word if n == 1 else (words or word + 's')}"


# ---- text -------------------------------------------------------------------

def text_table(headers, rows):
    widths = [len(h) for h in headers]
    for r in rows:
        for i, c in enumerate(r):
            widths[i] = max(widths[i], len(c))
    left = {i for i, h in enumerate(headers) if h in LEFT_COLUMNS}

    def line(cells):
        out = []
        for i, c in enumerate(cells):
            out.append(c.ljust(widths[i]) if i in left else c.rjust(widths[i]))
        return "  " + "  ".join(out).rstrip()
    return [line(headers)] + [line(r) for r in rows]


def render_text_sections(first_line, sections):
    """The summary as text: first_line, then each section under its title."""
    out = [first_line]
    for title, items in sections:
        out.append("")
        out.append(f"{title}:")
        width = max([len(it[1]) for it in items if it[0] == "kv"] + [0])
        for it in items:
            if it[0] == "kv":
                out.append(f"  {it[1]:<{width}}  {it[2]}")
            elif it[0] == "text":
                out.append(f"  {it[1]}")
            else:
                out += text_table(it[1], it[2])
                if it[3]:
                    out.append(f"  ({it[3]})")
    return "\n".join(out) + "\n"


# ---- plots ------------------------------------------------------------------

def import_pyplot():
    try:
        import matplotlib
    except ImportError:
        raise ReportError("matplotlib is missing for " + sys.executable +
                          ": apt-get install python3-matplotlib (or --text-only "
                          "for the text summary alone)") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return matplotlib, plt


def no_data(ax, text):
    ax.axis("off")
    ax.text(0.5, 0.5, text, ha="center", va="center", fontsize=12)


# ---- HTML -------------------------------------------------------------------

CSS = """
body { font-family: sans-serif; margin: 2em auto; max-width: 72em; color: #222;
       background: #fff; line-height: 1.4; }
h1 { font-size: 1.5em; border-bottom: 3px solid #1f77b4; padding-bottom: .3em; }
h2 { font-size: 1.15em; margin-top: 1.8em; color: #1f4e79; }
table { border-collapse: collapse; margin: .5em 0; font-size: .9em; }
th, td { border: 1px solid #ccc; padding: .25em .6em; text-align: right; }
th { background: #e8eef5; }
td.l, th.l { text-align: left; }
table.kv td:first-child { font-weight: bold; background: #f4f6f9; text-align: left; }
table.kv td { text-align: left; }
tr:nth-child(even) td { background: #fafafa; }
p.note { color: #555; font-size: .85em; margin-top: 0; }
figure { margin: 1em 0; }
figure img { max-width: 100%; border: 1px solid #ddd; }
figcaption { color: #555; font-size: .85em; }
.noengine { background: #fff4e5; border-left: 6px solid #ff7f0e; padding: .8em 1.2em; }
.met { color: #2ca02c; font-weight: bold; }
.notmet { color: #d62728; font-weight: bold; }
"""


def esc(x):
    return html.escape(str(x), quote=True)


def html_table(headers, rows, left):
    out = ["<table><tr>"]
    out += [f"<th class='l'>{esc(h)}</th>" if i in left else f"<th>{esc(h)}</th>"
            for i, h in enumerate(headers)]
    out.append("</tr>")
    for r in rows:
        out.append("<tr>" + "".join(f"<td class='l'>{esc(c)}</td>" if i in left
                                     else f"<td>{esc(c)}</td>" for i, c in enumerate(r))
                   + "</tr>")
    out.append("</table>")
    return "".join(out)


def html_items(items):
    out, kv = [], []

    def flush():
        if kv:
            out.append("<table class='kv'>" + "".join(
                f"<tr><td>{esc(k)}</td><td>{esc(v)}</td></tr>" for k, v in kv) + "</table>")
            kv.clear()
    for it in items:
        if it[0] == "kv":
            kv.append((it[1], it[2]))
            continue
        flush()
        if it[0] == "text":
            out.append(f"<p>{esc(it[1])}</p>")
        else:
            left = {i for i, h in enumerate(it[1]) if h in LEFT_COLUMNS}
            out.append(html_table(it[1], it[2], left))
            if it[3]:
                out.append(f"<p class='note'>{esc(it[3])}</p>")
    flush()
    return "\n".join(out)


def html_figure(path, caption):
    """One PNG as a <figure>, the image embedded as a data URI."""
    name = os.path.basename(path)
    with open(path, "rb") as f:
        data = base64.b64encode(f.read()).decode("ascii")
    return (f"<figure><img alt='{esc(name)}' src='data:image/png;base64,{data}'>"
            f"<figcaption>{esc(name)}: {esc(caption)}</figcaption></figure>")


def html_head(title):
    """The page up to and including its <h1>."""
    return ["<!DOCTYPE html>", "<html lang='en'><head><meta charset='utf-8'>",
            f"<title>{esc(title)}</title>", f"<style>{CSS}</style></head><body>",
            f"<h1>{esc(title)}</h1>"]


# ---- output -----------------------------------------------------------------

def default_outdir(path):
    """RUN.json -> RUN_report (in the current directory)."""
    base = os.path.basename(path)
    if base.endswith(".json"):
        base = base[:-5]
    return (base or "run") + "_report"


def make_outdir(outdir):
    try:
        os.makedirs(outdir, exist_ok=True)
    except OSError as e:
        raise ReportError(f"cannot make {outdir}: {e.strerror}") from None


def write_page(outdir, page_text):
    """outdir/report.html; its path."""
    page = os.path.join(outdir, "report.html")
    try:
        with open(page, "w", encoding="utf-8") as f:
            f.write(page_text)
    except OSError as e:
        raise ReportError(f"cannot write {page}: {e.strerror}") from None
    return page
