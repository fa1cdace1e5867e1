#!/usr/bin/env python3
"""check_report.py -- tests of `pagehome report` on recorded statistics files.

    check_report.py render   PAGEHOME DATA_DIR INSTALL_DATADIR
    check_report.py chromium PAGEHOME DATA_DIR

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
    and the installed layout (bin/pagehome + DATADIR/pagehome/script).
chromium: opens both pages in headless Chromium and checks the screenshots
  are not blank (several distinct colours); exit 77 without chromium.

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

def check_html(outdir, n_images):
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
        for name in IMAGES:
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

def render(pagehome, data_dir, install_datadir):
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
        prefix = os.path.join(tmp, "prefix")
        os.makedirs(os.path.join(prefix, "bin"))
        share = os.path.join(prefix, install_datadir, "pagehome")
        os.makedirs(share)
        shutil.copy(pagehome, os.path.join(prefix, "bin", "pagehome"))
        shutil.copy(os.path.join(os.path.dirname(pagehome), "pagehome_report.py"), share)
        rc, text6, err = run([os.path.join(prefix, "bin", "pagehome"), "report",
                              "--text-only", full])
        check(rc == 0 and text6 == text3, f"installed layout: exit {rc}: {err}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def chromium(pagehome, data_dir):
    browser = next((shutil.which(b) for b in ("chromium", "chromium-browser")
                    if shutil.which(b)), None)
    if not browser:
        print("skipped: no chromium (apt-get install chromium)")
        return 77
    tmp = tempfile.mkdtemp(prefix="ph-report-chromium-")
    try:
        for name, min_colours in ((FULL, 12), (MINIMAL, 3)):
            out = os.path.join(tmp, name[:-5])
            rc, _, err = run([pagehome, "report", os.path.join(data_dir, name), "-o", out])
            check(rc == 0, f"report {name}: exit {rc}: {err}")
            shot = os.path.join(tmp, name[:-5] + ".png")
            rc, _, err = run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                              f"--user-data-dir={os.path.join(tmp, 'profile')}",
                              f"--screenshot={shot}", "--window-size=1200,2000",
                              "file://" + os.path.join(out, "report.html")], timeout=180)
            check(rc == 0 and os.path.isfile(shot), f"chromium screenshot of {name}: "
                  f"exit {rc}: {err[-500:]}")
            if not os.path.isfile(shot):
                continue
            img = mpimg.imread(shot)[:, :, :3]
            colours = {tuple(int(c * 15) for c in px) for row in img[::4] for px in row[::4]}
            check(len(colours) >= min_colours,
                  f"{name}: the screenshot has {len(colours)} distinct colours "
                  f"(want >= {min_colours})")
            white = float((img.min(axis=2) > 0.97).mean())
            check(white < 0.99, f"{name}: the screenshot is not all white ({white:.3f})")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def main():
    if len(sys.argv) < 4 or sys.argv[1] not in ("render", "chromium"):
        print(__doc__, file=sys.stderr)
        return 2
    pagehome, data_dir = os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
    if sys.argv[1] == "render":
        if len(sys.argv) < 5:
            print(__doc__, file=sys.stderr)
            return 2
        render(pagehome, data_dir, sys.argv[4])
    elif chromium(pagehome, data_dir) == 77:
        return 77
    print(f"check_report {sys.argv[1]}: {passed} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
