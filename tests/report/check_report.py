#!/usr/bin/env python3
"""check_report.py -- tests of `pagehome report` on recorded statistics files
and on the data of the simulated experiments (`pagehome sim E --json`).

    check_report.py render          PAGEHOME DATA_DIR INSTALL_DATADIR CMAKE BUILD_DIR
    check_report.py chromium        PAGEHOME DATA_DIR
    check_report.py sim-render      PAGEHOME DATA_DIR INSTALL_DATADIR CMAKE BUILD_DIR
    check_report.py sim-experiments PAGEHOME
    check_report.py sim-chromium    PAGEHOME DATA_DIR

DATA_DIR holds two files `pagehome run --report` wrote:
report_prog_phase_hybrid.json (tests/preload/prog_phase 256 12 under
--migrate hybrid on a simulated 4-node machine) and report_minimal.json
(/bin/echo: no engine ran).

render: renders both through the pagehome command and checks
  * the text summary against numbers taken from the JSON here, with a parse
    of its own (totals, remote share before -> after, each area, each
    iteration's row, Table 1), not with the report script's code;
  * report.html exists, is self-contained (no external URL, script or
    stylesheet) and embeds exactly the three PNGs, byte for byte;
  * each PNG is not blank (pixel variance > 0, read with matplotlib), and
    homes.png shows at least one distinct colour per node in the strips;
  * the minimal file gives a page and a summary that say no engine ran and
    why, and no plots;
  * the default OUTDIR, --text-only, the errors (missing file, not a
    statistics file, no argument, no matplotlib), `pagehome help report`,
    and the installed layout (`cmake --install BUILD_DIR` into a fresh
    prefix: bin/pagehome and DATADIR/pagehome/ with every module).
chromium: opens both pages in headless Chromium and checks the screenshots
  are not blank (several distinct colours); exit 77 without chromium.

DATA_DIR also holds two files `pagehome sim --json` wrote (the commands are
in SIM_FIXTURES below): sim_e1_small.json (e1, 6 iterations,
origin2000-16) and sim_e3_small.json (e3, 6 iterations, epyc-2s-8n, where
the replays move pages).
sim-render: renders both and checks
  * the text against the JSON, parsed here: e1: every run's time /
    baseline (overall / last half) in its case's row under its engine,
    pages migrated / eligible and the first-2 share, the targets; e3: the
    row of every run (times, z-phase time, pages recorded, moved and
    critical-path time per iteration);
  * report.html self-contained, embedding exactly the PNGs the experiment
    gets (time, last half, migrations when a run moved a page, e3's
    replay), byte for byte; each PNG not blank, and time.png with one
    colour per engine over large areas (its bars);
  * a file with no run, the default OUTDIR, --text-only, `pagehome help
    sim` naming the report, and the installed layout rendering the plots.
sim-experiments: runs every experiment `pagehome help sim` lists with
  --iterations 4, renders its JSON and checks the exit status, the PNGs it
  should get (not blank) and every run's time / baseline where it belongs
  in the text: a change of what `pagehome sim --json` writes shows here.
sim-chromium: the two sim pages in headless Chromium, as chromium does.

Needs python3 with matplotlib (CMake runs it with one).  Prints one line per
failed check; exit 0 all passed, 1 some failed, 77 skipped.
"""

import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import matplotlib
matplotlib.use("Agg")
import matplotlib.image as mpimg  # noqa: E402

FULL = "report_prog_phase_hybrid.json"
MINIMAL = "report_minimal.json"
IMAGES = ("homes.png", "remote_share.png", "migrations.png")
# how the sim fixtures were recorded (pagehome ...)
SIM_FIXTURES = {
    "sim_e1_small.json": "sim e1 --iterations 6 --json tests/data/sim_e1_small.json",
    "sim_e3_small.json": "sim e3 --machine epyc-2s-8n --iterations 6 "
                         "--json tests/data/sim_e3_small.json",
}

failures = []
passed = 0


def check(cond, what):
    global passed
    if cond:
        passed += 1
    else:
        failures.append(what)
        print(f"FAIL: {what}")


def run(cmd, cwd=None, env=None, timeout=120):
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def pct(part, whole):
    return f"{100.0 * part / whole:.1f}%" if whole else "-"


# ---- the expected numbers, from the JSON --------------------------------

def expected_steps(data):
    """iteration label -> sums of its rows (sampling rows by their seq)."""
    steps = {}
    for r in data["invocations"]:
        label = f"w{r['seq']}" if r["kind"] == "sampling" else str(r["iteration"])
        s = steps.setdefault(label, {"migrated": 0, "accesses": 0, "remote_before": 0,
                                     "remote_after": 0, "candidates": 0})
        for k in s:
            s[k] += r[k]
    return steps


def expected_steps_ordered(data):
    """The steps of an iteration-driven run in iteration order, with sums."""
    steps = {}
    for r in data["invocations"]:
        if r["kind"] == "sampling":
            continue
        s = steps.setdefault(r["iteration"], {"label": str(r["iteration"]), "accesses": 0,
                                              "remote_before": 0})
        s["accesses"] += r["accesses"]
        s["remote_before"] += r["remote_before"]
    return [steps[k] for k in sorted(steps)]


def section(text, title):
    """The lines of one section of the summary (up to the blank line)."""
    lines = text.splitlines()
    try:
        i = lines.index(title + ":")
    except ValueError:
        return []
    out = []
    for ln in lines[i + 1:]:
        if not ln.strip():
            break
        out.append(ln)
    return out


def table(lines, first_header):
    """Rows of the table whose header starts with first_header, as dicts."""
    for i, ln in enumerate(lines):
        cells = re.split(r"\s{2,}", ln.strip())
        if cells and cells[0] == first_header:
            header = cells
            rows = []
            for row in lines[i + 1:]:
                if row.strip().startswith("("):
                    break
                vals = re.split(r"\s{2,}", row.strip())
                if len(vals) == len(header):
                    rows.append(dict(zip(header, vals)))
            return rows
    return []


def check_text(text, data):
    tot = data["totals"]
    check(re.search(rf"^  program\s+{re.escape(data['transparent']['program'])}$", text,
                    re.M) is not None, "text: program line")
    check(re.search(rf"mechanism\s+{data['config']['mechanism']} ", text) is not None,
          "text: mechanism")
    check(f"{data['config']['nodes']} nodes" in text, "text: node count")
    check(re.search(rf"pages\s+{tot['migrated']} migrated \(", text) is not None,
          f"text: {tot['migrated']} pages migrated")
    check(f", {tot['failed']} failed, {tot['frozen']} frozen," in text,
          "text: failed and frozen totals")
    share = (f"{pct(tot['remote_accesses_before'], tot['accesses'])} -> "
             f"{pct(tot['remote_accesses_after'], tot['accesses'])}")
    check(re.search(rf"remote share\s+{re.escape(share)} ", text) is not None,
          f"text: remote share {share}")
    check(f"{tot['iterations']} iterations, {tot['invocations']} invocations" in text,
          "text: iterations and invocations")

    # the result leads, each figure labelled measured or estimated
    first = [ln for ln in text.splitlines()[1:] if ln.strip()][0]
    check(first == "Result:", f"text: the Result section comes first (got {first!r})")
    res = section(text, "Result")
    sp = sum(a["sampled_pages"] for a in data["areas"])
    sl = sum(a["sampled_pages_on_top_accessor"] for a in data["areas"])
    hot = sum(a["pages"] for a in data["areas"])
    twice = sum(a["pages_moved_twice"] for a in data["areas"])
    own = [ln for ln in res if ln.strip().startswith("owner-local share")]
    check(len(own) == 1 and f"-> {pct(sl, sp)} at the end [measured" in own[0],
          f"text: owner-local share at the end {pct(sl, sp)}: {own}")
    steps_acc = [s for s in expected_steps_ordered(data) if s["accesses"]]
    if steps_acc:
        f0, fl = steps_acc[0], steps_acc[-1]
        want = (f"{100.0 * f0['remote_before'] / f0['accesses']:.1f}% in the first "
                f"iteration ({f0['label']}) -> "
                f"{100.0 * fl['remote_before'] / fl['accesses']:.1f}% in the last "
                f"({fl['label']}) [measured")
        check(any(want in ln for ln in res), f"text: first/last remote share: {want}")
    check(any(f"{twice} pages ({pct(twice, hot)} of the hot pages) [measured]" in ln
              for ln in res), f"text: pages moved twice {twice}")
    check(any(f"{tot['frozen']} ping-pong freezes" in ln for ln in res), "text: frozen")
    check(any("[estimated]" in ln for ln in res), "text: an estimated figure says so")

    areas = table(section(text, "Areas"), "id")
    check(len(areas) == len(data["areas"]), f"text: {len(data['areas'])} area rows")
    for a, row in zip(data["areas"], areas):
        check(row.get("name") == a["name"] and row.get("pages") == str(a["pages"]) and
              row.get("migrated") == str(a["migrated"]) and
              row.get("frozen") == str(a["frozen"]),
              f"text: area row of {a['name']}: {row}")

    steps = expected_steps(data)
    rows = table(section(text, "Per iteration"), "step")
    check(len(rows) == len(steps), f"text: {len(steps)} iteration rows (got {len(rows)})")
    got = {r["step"]: r for r in rows}
    for label, s in steps.items():
        r = got.get(label, {})
        check(r.get("migrated") == str(s["migrated"]) and
              r.get("accesses") == str(s["accesses"]) and
              r.get("candidates") == str(s["candidates"]) and
              r.get("remote before") == pct(s["remote_before"], s["accesses"]) and
              r.get("remote after") == pct(s["remote_after"], s["accesses"]),
              f"text: iteration {label}: expected {s}, got {r}")

    phases = {r["phase"] for r in data["invocations"] if r["phase"] >= 0}
    prow = table(section(text, "Phases"), "phase")
    check(sorted(r["phase"] for r in prow) == sorted(str(p) for p in phases),
          f"text: phases {sorted(phases)}")
    for r in prow:
        ph = int(r["phase"])
        moved = sum(v["migrated"] for v in data["invocations"]
                    if v["phase"] == ph and v["kind"] == "replay")
        check(r.get("moved by replays") == str(moved), f"text: phase {ph} replays moved {moved}")

    t1 = table(section(text, "Table 1 (UPMlib style)"), "area")
    check(len(t1) == len(data["areas"]), "text: Table 1 rows")
    for a, row in zip(data["areas"], t1):
        check(row.get("hot pages") == str(a["pages"]) and
              row.get("migrated/eligible", "").startswith(f"{a['migrated']}/{a['candidates']}")
              and row.get("first 2 iter.") == pct(a["migrated_first2"], a["migrated"]),
              f"text: Table 1 row of {a['name']}: {row}")


# ---- HTML and images ----------------------------------------------------

def check_html(outdir, n_images, images=IMAGES):
    page = os.path.join(outdir, "report.html")
    check(os.path.isfile(page), f"{page} exists")
    if not os.path.isfile(page):
        return ""
    with open(page, encoding="utf-8") as f:
        doc = f.read()
    embedded = re.findall(r"src='data:image/png;base64,([A-Za-z0-9+/=]+)'", doc)
    check(len(embedded) == n_images and doc.count("<img") == n_images,
          f"report.html embeds {n_images} images (found {len(embedded)})")
    check(not re.search(r"(src|href)\s*=\s*['\"](?!data:)", doc) and "<script" not in doc
          and "<link" not in doc and "url(" not in doc,
          "report.html is self-contained")
    if n_images:
        files = set()
        for name in images:
            p = os.path.join(outdir, name)
            check(os.path.isfile(p), f"{name} exists")
            if os.path.isfile(p):
                with open(p, "rb") as f:
                    files.add(f.read())
        check({base64.b64decode(e) for e in embedded} == files,
              "the embedded images are the PNG files")
    return doc


def colour_areas(img):
    """Pixel count of each clearly coloured (not grey, white or black) value."""
    out = {}
    for row in img[:, :, :3]:
        for px in row:
            if max(px) - min(px) > 0.3:
                key = tuple(round(float(c), 2) for c in px)
                out[key] = out.get(key, 0) + 1
    return out


def check_pngs(outdir, data):
    for name in IMAGES:
        p = os.path.join(outdir, name)
        if not os.path.isfile(p):
            continue
        img = mpimg.imread(p)
        check(img.ndim == 3 and img.shape[0] > 50 and img.shape[1] > 50,
              f"{name}: an image ({img.shape})")
        check(float(img.var()) > 0.0, f"{name}: not blank (pixel variance > 0)")
    p = os.path.join(outdir, "homes.png")
    if os.path.isfile(p):
        nodes = {v for a in data["areas"] for k in ("strip_start", "strip_end")
                 for v in a[k] if v >= 0}
        # a strip segment is thousands of pixels; a legend patch ~200
        big = [n for n in colour_areas(mpimg.imread(p)).values() if n >= 1000]
        check(len(big) >= len(nodes),
              f"homes.png: >= {len(nodes)} node colours over large areas (found {len(big)})")


# ---- the modes ----------------------------------------------------------

def render(pagehome, data_dir, install_datadir, cmake, build_dir):
    full, minimal = os.path.join(data_dir, FULL), os.path.join(data_dir, MINIMAL)
    with open(full) as f:
        data = json.load(f)
    with open(minimal) as f:
        mdata = json.load(f)
    tmp = tempfile.mkdtemp(prefix="ph-report-")
    try:
        out = os.path.join(tmp, "full")
        rc, text, err = run([pagehome, "report", full, "-o", out])
        check(rc == 0, f"report {FULL}: exit {rc}: {err}")
        check_text(text, data)
        check_html(out, 3)
        check_pngs(out, data)

        # the samples' cost, from the trap's cost the engine recorded (a
        # file from before it was recorded, as the fixture: no such line)
        check("their cost" not in text, "no sample_trap_ns: no cost line")
        costed = os.path.join(tmp, "costed.json")
        with open(costed, "w") as f:
            json.dump(dict(data, config=dict(data["config"], sample_trap_ns=2500.0)), f)
        rc, ctext, err = run([pagehome, "report", "--text-only", costed])
        src = data["source_stats"]
        want_ns = src["arm_ns"] + src["handler_ns"] + src["samples"] * 2500.0
        line = [ln for ln in ctext.splitlines() if ln.strip().startswith("their cost")]
        check(rc == 0 and len(line) == 1 and
              f"about {want_ns / 1e6:.2f} ms" in line[0] and
              f"{src['samples']} traps x 2.5 us" in line[0],
              f"the samples' cost: {line} (want {want_ns / 1e6:.2f} ms): {err}")

        # the minimal file: no engine, a page that says why, no plots
        out = os.path.join(tmp, "minimal")
        rc, text, err = run([pagehome, "report", minimal, "-o", out])
        check(rc == 0, f"report {MINIMAL}: exit {rc}: {err}")
        check("none ran" in text and mdata["note"] in text,
              "minimal: the summary says no engine ran and why")
        check(mdata["transparent"]["program"] in text, "minimal: the program")
        doc = check_html(out, 0)
        check("No engine ran" in doc and mdata["note"] in doc,
              "minimal: report.html says no engine ran and why")
        check(not any(os.path.exists(os.path.join(out, n)) for n in IMAGES),
              "minimal: no plots")

        # default OUTDIR (RUN's basename + _report, here) and --text-only
        cwd = os.path.join(tmp, "cwd")
        os.mkdir(cwd)
        rc, text2, err = run([pagehome, "report", full], cwd=cwd)
        default = os.path.join(cwd, FULL[:-5] + "_report", "report.html")
        check(rc == 0 and os.path.isfile(default), f"default OUTDIR {default}: {err}")
        cwd = os.path.join(tmp, "cwd2")
        os.mkdir(cwd)
        rc, text3, err = run([pagehome, "report", "--text-only", full], cwd=cwd)
        check(rc == 0 and os.listdir(cwd) == [], "--text-only writes no file")
        check(text3.split("\nwrote ")[0] == text2.split("\nwrote ")[0],
              "--text-only prints the same summary")

        # errors
        rc, _, err = run([pagehome, "report", os.path.join(tmp, "none.json")])
        check(rc == 1 and "cannot read" in err, f"missing file: exit {rc}: {err}")
        notstats = os.path.join(tmp, "other.json")
        with open(notstats, "w") as f:
            f.write('{"nodes": 4}\n')
        rc, _, err = run([pagehome, "report", notstats])
        check(rc == 1 and "not a pagehome statistics file" in err,
              f"not a statistics file: exit {rc}: {err}")
        rc, _, err = run([pagehome, "report"])
        check(rc == 2 and "no statistics file" in err, f"no argument: exit {rc}: {err}")
        rc, _, err = run([pagehome, "report", full, "--no-such-option"])
        check(rc == 2 and "--no-such-option" in err, f"bad option: exit {rc}: {err}")
        rc, text4, _ = run([pagehome, "help", "report"])
        check(rc == 0 and "usage: pagehome report" in text4, "help report")

        # an interpreter without matplotlib: told which package, --text-only works
        fake = os.path.join(tmp, "python-no-mpl")
        with open(fake, "w") as f:
            f.write('#!/bin/sh\n[ "$1" = -c ] && exit 1\nexec "%s" "$@"\n' % sys.executable)
        os.chmod(fake, 0o755)
        env = dict(os.environ, PAGEHOME_PYTHON=fake)
        rc, _, err = run([pagehome, "report", full, "-o", os.path.join(tmp, "x")], env=env)
        check(rc == 1 and "python3-matplotlib" in err, f"no matplotlib: exit {rc}: {err}")
        rc, text5, err = run([pagehome, "report", "--text-only", full], env=env)
        check(rc == 0 and text5 == text3, f"no matplotlib, --text-only: exit {rc}: {err}")
        env = dict(os.environ, PAGEHOME_REPORT_SCRIPT=os.path.join(tmp, "nope.py"))
        rc, _, err = run([pagehome, "report", full], env=env)
        check(rc == 1 and "PAGEHOME_REPORT_SCRIPT" in err, f"bad script path: {err}")

        # the installed layout: PREFIX/bin/pagehome finds DATADIR/pagehome/
        installed = install(cmake, build_dir, os.path.join(tmp, "prefix"), install_datadir)
        if installed:
            rc, text6, err = run([installed, "report", "--text-only", full])
            check(rc == 0 and text6 == text3, f"installed layout: exit {rc}: {err}")
            out = os.path.join(tmp, "installed")
            rc, _, err = run([installed, "report", full, "-o", out])
            check(rc == 0 and all(os.path.isfile(os.path.join(out, n)) for n in IMAGES),
                  f"installed layout, with plots: exit {rc}: {err}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def install(cmake, build_dir, prefix, install_datadir):
    """`cmake --install` into prefix: PREFIX/bin/pagehome, or None (and a failed check)."""
    rc, _, err = run([cmake, "--install", build_dir, "--prefix", prefix], timeout=300)
    check(rc == 0, f"cmake --install {build_dir}: exit {rc}: {err[-500:]}")
    share = os.path.join(prefix, install_datadir, "pagehome")
    check(os.path.isfile(os.path.join(share, "pagehome_report.py")),
          f"installed: {share}/pagehome_report.py")
    exe = os.path.join(prefix, "bin", "pagehome")
    return exe if rc == 0 and os.path.isfile(exe) else None


def screenshot(browser, tmp, page, shot):
    rc, _, err = run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                      f"--user-data-dir={os.path.join(tmp, 'profile')}",
                      f"--screenshot={shot}", "--window-size=1200,2000",
                      "file://" + page], timeout=180)
    check(rc == 0 and os.path.isfile(shot), f"chromium screenshot of {page}: "
          f"exit {rc}: {err[-500:]}")
    return mpimg.imread(shot)[:, :, :3] if os.path.isfile(shot) else None


def chromium(pagehome, data_dir, files=((FULL, 12), (MINIMAL, 3)), plot_colour=None):
    """Each file's page in headless Chromium: not blank; plot_colour (RGB):
    the screenshot shows it over at least 300 pixels (the plots are drawn)."""
    browser = next((shutil.which(b) for b in ("chromium", "chromium-browser")
                    if shutil.which(b)), None)
    if not browser:
        print("skipped: no chromium (apt-get install chromium)")
        return 77
    tmp = tempfile.mkdtemp(prefix="ph-report-chromium-")
    try:
        for name, min_colours in files:
            out = os.path.join(tmp, name[:-5])
            rc, _, err = run([pagehome, "report", os.path.join(data_dir, name), "-o", out])
            check(rc == 0, f"report {name}: exit {rc}: {err}")
            img = screenshot(browser, tmp, os.path.join(out, "report.html"),
                             os.path.join(tmp, name[:-5] + ".png"))
            if img is None:
                continue
            colours = {tuple(int(c * 15) for c in px) for row in img[::4] for px in row[::4]}
            check(len(colours) >= min_colours,
                  f"{name}: the screenshot has {len(colours)} distinct colours "
                  f"(want >= {min_colours})")
            white = float((img.min(axis=2) > 0.97).mean())
            check(white < 0.99, f"{name}: the screenshot is not all white ({white:.3f})")
            if plot_colour is not None:
                near = int((abs(img - plot_colour).max(axis=2) < 0.06).sum())
                check(near >= 300, f"{name}: the screenshot shows the plots' colour "
                      f"{plot_colour} over {near} pixels (want >= 300)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


# ---- the simulated experiments ---------------------------------------------

TAB10_ORANGE = (1.0, 0.498, 0.055)     # the second engine's colour in the plots


def expected_sim_images(data):
    """The PNGs the report of a sim file should make (sim_report.py's rule)."""
    runs = data["runs"]
    if not runs:
        return []
    out = ["time.png", "time_last_half.png"]
    if any(any(r["per_iteration"]["moved"]) for r in runs):
        out.append("migrations.png")
    out += {"e2": ["remote.png"], "e3": ["replay.png"], "e4": ["remote.png"],
            "e6": ["pages.png"]}.get(data["experiment"], [])
    return out


def labels_of(data):
    return list(dict.fromkeys(r["label"] for r in data["runs"]))


def first_header(lines):
    return re.split(r"\s{2,}", lines[0].strip())[0] if lines else ""


def check_sim_pivot(text, data):
    """The table 'Modelled time / baseline' (e1, e2, e5, ...): a row per
    case, a column per engine, cells 'overall / last half'.  The run's
    known fields that are columns must match its row."""
    lines = section(text, "Modelled time / baseline")
    rows = table(lines, first_header(lines))
    check(rows, f"{data['experiment']}: the time table")
    columns = {"machine": "machine", "program": "program", "thr": "threads",
               "placement": "placement", "iter": "iterations"}
    for r in data["runs"]:
        want = f"{r['norm_total']:.3f} / {r['norm_last']:.3f}"
        match = [row for row in rows
                 if all(row[c] == str(r[f]) for c, f in columns.items() if c in row)]
        check(len(match) == 1 and match[0].get(r["label"]) == want,
              f"{data['experiment']}: {r['program']} {r['threads']} {r['placement']} "
              f"{r['label']} on {r['machine']}: want {want} in one row, got {match}")


def check_sim_rows(text, data, title, label_column):
    """A table with a row per run in the file's order (e3, e4, e6)."""
    lines = section(text, title)
    rows = table(lines, first_header(lines))
    check(len(rows) == len(data["runs"]),
          f"{data['experiment']}: {len(data['runs'])} rows under {title} (got {len(rows)})")
    for r, row in zip(data["runs"], rows):
        check(row.get(label_column) == r["label"] and
              row.get("time/base") == f"{r['norm_total']:.3f}" and
              row.get("last half/base") == f"{r['norm_last']:.3f}",
              f"{data['experiment']}: row of {r['group']} {r['label']}: {row}")
    return rows


LONG_TABLES = {"e3": ("Record / replay", "engine"), "e4": ("Runs", "engine"),
               "e6": ("Page sizes", "page policy")}


def check_sim_times(text, data):
    if data["experiment"] not in LONG_TABLES:
        check_sim_pivot(text, data)
        return
    rows = check_sim_rows(text, data, *LONG_TABLES[data["experiment"]])
    if data["experiment"] != "e6":
        return
    for r, row in zip(data["runs"], rows):
        want = {"TLB miss/access": pct(r["tlb_misses"], r["accesses"]),
                "remote share": f"{100.0 * r['remote_share']:.1f}%",
                "moved 4K pages": str(r["moved_4k"]), "moved 2M units": str(r["huge_migrated"]),
                "split": str(r["huge_split"])}
        got = {k: row.get(k) for k in want}
        check(got == want, f"e6: row of {r['group']} {r['label']}: want {want}, got {got}")


def check_sim_targets(text, data):
    for t in data["targets"]:
        res = "met" if t["met"] else "not met"
        check(re.search(rf"^  {res:<7}  {re.escape(t['what'])}$", text, re.M) is not None,
              f"{data['experiment']}: target '{t['what']}' {res}")
        check(re.search(rf"^\s+{re.escape(t['detail'])}$", text, re.M) is not None,
              f"{data['experiment']}: the detail of '{t['what']}'")


def check_sim_e1_text(text, data):
    runs, labels = data["runs"], labels_of(data)
    cases = list(dict.fromkeys((r["program"], r["threads"], r["placement"]) for r in runs))
    check(re.search(rf"^  runs\s+{len(runs)}: {len(cases)} cases x {len(labels)} variants "
                    rf"\({re.escape(', '.join(labels))}\)$", text, re.M) is not None,
          "e1: the runs line")
    check(re.search(rf"^  machines\s+{re.escape(data['machines'])}$", text, re.M)
          is not None, "e1: the machine")
    lines = section(text, "Modelled time / baseline")
    rows = table(lines, "program")
    check(len(rows) == len(cases), f"e1: {len(cases)} rows of times (got {len(rows)})")
    check(rows and list(rows[0]) == ["program", "thr", "placement", "iter"] + labels,
          f"e1: the time table's columns: {list(rows[0]) if rows else None}")
    check_sim_pivot(text, data)

    moving = [lb for lb in labels
              if any(r["migrated"] or r["eligible"] for r in runs if r["label"] == lb)]
    rows = table(section(text, "Pages migrated"), "program")
    check(rows and list(rows[0]) == ["program", "thr", "placement"] + moving,
          f"e1: the migration table's columns (want {moving})")
    got = {(row["program"], row["thr"], row["placement"]): row for row in rows}
    for r in runs:
        if r["label"] not in moving:
            continue
        cell = got.get((r["program"], str(r["threads"]), r["placement"]), {}).get(r["label"], "")
        first2 = f"{100.0 * r['first2'] / r['migrated']:.0f}%" if r["migrated"] else "-"
        check(cell.startswith(f"{r['migrated']}/{r['eligible']}") and
              cell.endswith(f", {first2}"),
              f"e1: migrations of {r['program']} {r['threads']} {r['placement']} "
              f"{r['label']}: want {r['migrated']}/{r['eligible']} .. {first2}, got {cell!r}")
    check_sim_targets(text, data)
    check(f"{len(data['notes'])} in report.html" in text, "e1: the notes are counted")


def check_sim_e3_text(text, data):
    rows = check_sim_rows(text, data, "Record / replay", "engine")
    for r, row in zip(data["runs"], rows):
        it = r["iterations"]
        z = r["per_iteration"]["z_phase_ns"][it // 2:]
        want = {"phases": r["group"], "engine": r["label"],
                "z ms/iter": f"{sum(z) / len(z) / 1e6:.2f}",
                "pages recorded": str(r["phase_pages"]) if r["phase_pages"] >= 0 else "-",
                "moved/iter": f"{r['migrated'] / it:.1f}",
                "crit ms/iter": f"{r['critical_ns'] / it / 1e6:.2f}"}
        got = {k: row.get(k) for k in want}
        check(got == want, f"e3: row of {r['group']} {r['label']}: want {want}, got {got}")
    check(any(r["phase_pages"] > 0 for r in data["runs"]),
          "e3 fixture: some recording selected pages (else record again)")


def engine_colours(n):
    """The plots' colour of each of n engines, in the file's order: tab10
    without its grey (sim_report.py)."""
    try:
        tab10 = matplotlib.colormaps["tab10"].colors
    except AttributeError:  # matplotlib < 3.5
        import matplotlib.cm as cm
        tab10 = cm.get_cmap("tab10").colors
    tab = [c for i, c in enumerate(tab10) if i != 7]
    return [tab[i % len(tab)] for i in range(n)]


def colour_pixels(path, colour):
    img = mpimg.imread(path)[:, :, :3]
    return int((abs(img - colour).max(axis=2) < 0.02).sum())


def check_sim_pngs(outdir, data, images):
    for name in images:
        p = os.path.join(outdir, name)
        if not os.path.isfile(p):
            continue
        img = mpimg.imread(p)
        check(img.ndim == 3 and img.shape[0] > 100 and img.shape[1] > 100,
              f"{data['experiment']} {name}: an image ({img.shape})")
        check(float(img.var()) > 0.0, f"{data['experiment']} {name}: not blank")
    p = os.path.join(outdir, "time.png")
    if os.path.isfile(p):
        # every engine's bars: its colour over large areas (a legend patch
        # is ~250 pixels)
        labels = labels_of(data)
        for lb, colour in zip(labels, engine_colours(len(labels))):
            n = colour_pixels(p, colour)
            check(n >= 1000, f"{data['experiment']} time.png: the bars of {lb} "
                  f"(colour {tuple(round(c, 2) for c in colour)}) over {n} pixels, want >= 1000")


def render_sim(pagehome, path, out):
    with open(path) as f:
        data = json.load(f)
    rc, text, err = run([pagehome, "report", path, "-o", out])
    check(rc == 0, f"report {path}: exit {rc}: {err}")
    images = expected_sim_images(data)
    check_html(out, len(images), images)
    check_sim_pngs(out, data, images)
    check(sorted(f for f in os.listdir(out) if f.endswith(".png")) == sorted(images)
          if os.path.isdir(out) else False,
          f"{path}: the PNGs in {out} are {images}")
    return data, text


def sim_render(pagehome, data_dir, install_datadir, cmake, build_dir):
    tmp = tempfile.mkdtemp(prefix="ph-sim-report-")
    try:
        e1 = os.path.join(data_dir, "sim_e1_small.json")
        e3 = os.path.join(data_dir, "sim_e3_small.json")
        for p in (e1, e3):
            check(os.path.getsize(p) < 200 * 1024, f"{p} is small (< 200 KB)")
        data, text = render_sim(pagehome, e1, os.path.join(tmp, "e1"))
        check(text.startswith(f"pagehome report: {e1}\n"), "e1: the first line")
        check_sim_e1_text(text, data)
        check("migrations.png" in expected_sim_images(data),
              "e1 fixture: some run moved pages (else record again)")
        data3, text3 = render_sim(pagehome, e3, os.path.join(tmp, "e3"))
        check_sim_e3_text(text3, data3)

        # a file with no run: a summary and a page that say so, no plots
        empty = os.path.join(tmp, "empty.json")
        with open(empty, "w") as f:
            json.dump({"experiment": "e1", "title": "e1: nothing", "machines": "m",
                       "baseline": "b", "runs": [], "targets": [], "notes": []}, f)
        out = os.path.join(tmp, "empty")
        rc, text0, err = run([pagehome, "report", empty, "-o", out])
        check(rc == 0 and "the file has no run" in text0, f"no run: exit {rc}: {err}")
        check_html(out, 0)

        # default OUTDIR, --text-only
        cwd = os.path.join(tmp, "cwd")
        os.mkdir(cwd)
        rc, text2, err = run([pagehome, "report", e1], cwd=cwd)
        check(rc == 0 and os.path.isfile(os.path.join(cwd, "sim_e1_small_report",
                                                      "report.html")),
              f"sim: default OUTDIR: exit {rc}: {err}")
        cwd = os.path.join(tmp, "cwd2")
        os.mkdir(cwd)
        rc, text4, err = run([pagehome, "report", "--text-only", e1], cwd=cwd)
        check(rc == 0 and os.listdir(cwd) == [] and
              text4 == text2.split("\nwrote ")[0] == text.split("\nwrote ")[0],
              f"sim: --text-only prints the same summary and writes nothing: {err}")
        rc, help_text, _ = run([pagehome, "help", "sim"])
        check(rc == 0 and re.search(r"pagehome report \S+\.json", help_text) is not None,
              "pagehome help sim names pagehome report")

        installed = install(cmake, build_dir, os.path.join(tmp, "prefix"), install_datadir)
        if installed:
            data, text5 = render_sim(installed, e1, os.path.join(tmp, "installed"))
            check(text5.split("\nwrote ")[0] == text.split("\nwrote ")[0],
                  "sim: the installed report prints the same summary")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def sim_experiments(pagehome):
    rc, help_text, err = run([pagehome, "help", "sim"])
    exps = re.findall(r"^  (e\d+)\s", help_text, re.M)
    check(rc == 0 and len(exps) >= 5, f"pagehome help sim lists the experiments: {exps}")
    tmp = tempfile.mkdtemp(prefix="ph-sim-experiments-")
    try:
        for e in exps:
            js = os.path.join(tmp, e + ".json")
            rc, _, err = run([pagehome, "sim", e, "--iterations", "4", "--json", js],
                             timeout=600)
            check(rc == 0 and os.path.isfile(js), f"sim {e}: exit {rc}: {err[-500:]}")
            if not os.path.isfile(js):
                continue
            data, text = render_sim(pagehome, js, os.path.join(tmp, e))
            check(data["experiment"] == e and data["runs"], f"{e}: the JSON has runs")
            check_sim_times(text, data)
            check_sim_targets(text, data)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


MODES = {"render": 5, "chromium": 2, "sim-render": 5, "sim-experiments": 1,
         "sim-chromium": 2}     # mode -> its number of arguments


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode not in MODES or len(sys.argv) < 2 + MODES[mode]:
        print(__doc__, file=sys.stderr)
        return 2
    args = [os.path.abspath(a) for a in sys.argv[2:4]] + sys.argv[4:]
    if mode == "render":
        render(*args[:5])
    elif mode == "sim-render":
        sim_render(*args[:5])
    elif mode == "sim-experiments":
        sim_experiments(args[0])
    elif mode == "chromium":
        if chromium(args[0], args[1]) == 77:
            return 77
    elif chromium(args[0], args[1], (("sim_e1_small.json", 12), ("sim_e3_small.json", 12)),
                  plot_colour=TAB10_ORANGE) == 77:
        return 77
    print(f"check_report {mode}: {passed} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
