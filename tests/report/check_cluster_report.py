#!/usr/bin/env python3
"""check_cluster_report.py -- `pagehome report` on the merged statistics of
cluster runs (tools/report/cluster_report.py).

    check_cluster_report.py render PAGEHOME DATA_DIR
    check_cluster_report.py live   PAGEHOME LAPLACE_DSM

DATA_DIR/cluster_laplace_rr.json was written by
    OMP_NUM_THREADS=2 pagehome cluster run -n 2 --placement round-robin \\
        --report tests/data/cluster_laplace_rr.json -- \\
        workloads/cluster/laplace_dsm 256 20 round-robin
(shared memory, Open MPI, home migration on: both grids' round-robin homes
become one band per rank at the first barrier).

render: renders it through the pagehome command and checks
  * the text against numbers taken from the JSON here, with a parse of its
    own: every rank's row (faults by kind, fetched, diffs, messages,
    barriers, pages moved in and out), the page classes, every
    allocation's pages per rank at start -> end, its strips (one character
    per bucket), every interval's remote faults per rank and homes moved;
  * report.html self-contained, embedding exactly homes.png,
    remote_faults.png and migrations.png, byte for byte; each PNG not
    blank, homes.png with a colour per rank over large areas;
  * --text-only (no OUTDIR made), the default OUTDIR, and the merge of
    tests/data/cluster (rank objects in other layouts): rendered, the
    DSM's numbers shown as "-".
live: runs laplace_dsm 256 20 round-robin at 2 ranks on shared memory
  through `pagehome cluster run --report` and reports on it: the start
  strips alternate between the ranks, the end strips are one band per rank
  (the homes migrated), each rank homes 64 of 128 pages at the end, the
  per-interval records add up to the ranks' fault counters; the same with
  PAGEHOME_CLUSTER_MIGRATE=0 (the end strips are the start strips, no home
  moved); and 5000 iterations of a 16 x 16 grid (5005 barriers): the
  interval records are bounded (2503 records of 2 barriers, the last one
  of 1), they still add up to the counters, the text says so.  Exit 77
  where no MPI run can start here.

Needs python3 with matplotlib.  Prints one line per failed check; exit 0
all passed, 1 some failed.
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

FIXTURE = "cluster_laplace_rr.json"
IMAGES = ("homes.png", "remote_faults.png", "migrations.png")
STRIP_CHARS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

failures = []
passed = 0


def check(cond, what):
    global passed
    if cond:
        passed += 1
    else:
        failures.append(what)
        print(f"FAIL: {what}")
    return cond


def run(cmd, env=None, timeout=200):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout,
                       stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout, p.stderr


def section(text, title):
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
            rows = []
            for row in lines[i + 1:]:
                if row.strip().startswith("("):
                    break
                vals = re.split(r"\s{2,}", row.strip())
                if len(vals) == len(cells):
                    rows.append(dict(zip(cells, vals)))
            return rows
    return []


def strip_chars(strip):
    return "".join("." if v == -1 else "*" if v == -2 else STRIP_CHARS[v] for v in strip)


def text_strips(lines):
    """{seq: (start, end)} from the Homes section's strip lines."""
    out, seq, key = {}, None, None
    for ln in lines:
        m = re.match(r"\s+#(\d+) \(", ln)
        if m:
            seq = int(m.group(1))
            out[seq] = ["", ""]
            continue
        m = re.match(r"\s+(start|end  |     ) (\S+)$", ln)
        if m and seq is not None:
            if m.group(1).strip():
                key = 0 if m.group(1) == "start" else 1
            out[seq][key] += m.group(2)
    return {k: tuple(v) for k, v in out.items()}


# ---- the text against the JSON ----------------------------------------------

def check_text(text, data, label):
    ranks = sorted(data["ranks"], key=lambda r: r["rank"])
    rows = table(section(text, "Per rank"), "rank")
    check(len(rows) == len(ranks), f"{label}: a row per rank ({len(rows)})")
    for r, row in zip(ranks, rows):
        f, t, s, m = r["faults"], r["traffic"], r["sync"], r["migration"]
        want = {"rank": str(r["rank"]), "read remote": f["fault_read_remote"],
                "write remote": f["fault_write_remote"], "read home": f["fault_read_home"],
                "write home": f["fault_write_home"], "fetched": t["pages_fetched"],
                "diffs": t["diffs_sent"], "messages": t["rma_calls"] + t["collectives"],
                "barriers": s["barriers"], "moved in": m["migrated_in"],
                "moved out": m["migrated_out"]}
        for k, v in want.items():
            check(row.get(k) == str(v), f"{label}: rank {r['rank']} {k}: {row.get(k)} == {v}")
    classes = {row["class"]: row["pages"] for row in table(section(text, "Page classes"), "class")}
    for k, v in ranks[0]["page_classes"].items():
        check(classes.get(k.replace("_", "-")) == str(v),
              f"{label}: page class {k}: {classes.get(k.replace('_', '-'))} == {v}")
    homes = section(text, "Homes")
    hrows = {row["allocation"]: row for row in table(homes, "allocation")}
    strips = text_strips(homes)
    for a in ranks[0]["allocations"]:
        row = hrows.get(f"#{a['seq']}", {})
        check(row.get("pages") == str(a["pages"]) and row.get("placement") == a["placement"],
              f"{label}: allocation #{a['seq']}: pages, placement: {row}")
        for r in ranks:
            mine = next(x for x in r["allocations"] if x["seq"] == a["seq"])
            want = f"{mine['home_pages_start']}->{mine['home_pages_end']}"
            got = row.get(f"rank {r['rank']} start->end")
            check(got == want, f"{label}: allocation #{a['seq']} rank {r['rank']}: {got} == {want}")
        check(strips.get(a["seq"]) == (strip_chars(a["strip_start"]), strip_chars(a["strip_end"])),
              f"{label}: allocation #{a['seq']}: the strips as text: {strips.get(a['seq'])}")
    ivs = table(section(text, "Per barrier interval"), "interval")
    n = len(ranks[0]["intervals"])
    check(len(ivs) == min(n, 41), f"{label}: interval rows {len(ivs)} for {n} records")
    fields = ranks[0]["interval_fields"]
    ix = {k: fields.index(k) for k in ("read_remote", "write_remote", "migrated", "fetched")}
    for row in ivs:
        if row["interval"] == "...":
            continue
        i = int(row["interval"]) - 1
        for r in ranks:
            rec = r["intervals"][i]
            want = rec[ix["read_remote"]] + rec[ix["write_remote"]]
            got = row.get(f"remote r{r['rank']}")
            check(got == str(want),
                  f"{label}: interval {i + 1} rank {r['rank']} remote: {got} == {want}")
        check(row.get("homes moved") == str(ranks[0]["intervals"][i][ix["migrated"]]),
              f"{label}: interval {i + 1} homes moved")
        check(row.get("fetched") == str(sum(r["intervals"][i][ix["fetched"]] for r in ranks)),
              f"{label}: interval {i + 1} fetched")
    moved = ranks[0]["migration"]["migrations"]
    check(re.search(rf"homes moved\s+{moved} pages", text) is not None,
          f"{label}: the result names {moved} homes moved")


def check_html(outdir, label):
    page = os.path.join(outdir, "report.html")
    if not check(os.path.isfile(page), f"{label}: {page} exists"):
        return ""
    with open(page, encoding="utf-8") as f:
        doc = f.read()
    embedded = re.findall(r"src='data:image/png;base64,([A-Za-z0-9+/=]+)'", doc)
    check(len(embedded) == 3 and doc.count("<img") == 3,
          f"{label}: report.html embeds 3 images (found {len(embedded)})")
    check(not re.search(r"(src|href)\s*=\s*['\"](?!data:)", doc) and "<script" not in doc
          and "<link" not in doc and "url(" not in doc, f"{label}: report.html self-contained")
    files = set()
    for name in IMAGES:
        p = os.path.join(outdir, name)
        if check(os.path.isfile(p), f"{label}: {name} exists"):
            with open(p, "rb") as f:
                files.add(f.read())
            img = mpimg.imread(p)
            check(img.ndim == 3 and img.shape[0] > 50 and float(img.var()) > 0.0,
                  f"{label}: {name} is an image, not blank")
    check({base64.b64decode(e) for e in embedded} == files,
          f"{label}: the embedded images are the PNG files")
    for h in ("Per rank", "Page classes", "Homes", "Per barrier interval", "Plots"):
        check(f"<h2>{h}</h2>" in doc, f"{label}: report.html has a section {h}")
    return doc


def colour_areas(img):
    """Pixel count of each clearly coloured (not grey, white or black) value."""
    import numpy as np    # matplotlib's own dependency
    rgb = img[:, :, :3]
    px = np.round(rgb[(rgb.max(axis=2) - rgb.min(axis=2)) > 0.3], 2)
    if not len(px):
        return {}
    values, counts = np.unique(px, axis=0, return_counts=True)
    return {tuple(v): int(n) for v, n in zip(values, counts)}


# ---- the modes ----------------------------------------------------------------

def render(pagehome, data_dir):
    path = os.path.join(data_dir, FIXTURE)
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    tmp = tempfile.mkdtemp(prefix="ph-cluster-report-")
    try:
        out = os.path.join(tmp, "out")
        rc, text, err = run([pagehome, "report", path, "-o", out])
        check(rc == 0 and text.startswith(f"pagehome report: {path}"),
              f"render: exit {rc}: {err[-500:]}")
        check_text(text, data, "render")
        check_html(out, "render")
        p = os.path.join(out, "homes.png")
        if os.path.isfile(p):
            big = [n for n in colour_areas(mpimg.imread(p)).values() if n >= 1000]
            check(len(big) >= 2, f"homes.png: a colour per rank over large areas ({len(big)})")
        # the page says the same as the text
        doc = open(os.path.join(out, "report.html"), encoding="utf-8").read() \
            if os.path.isfile(os.path.join(out, "report.html")) else ""
        r0 = data["ranks"][0]
        check(f"<td>{r0['faults']['fault_write_remote']}</td>" in doc,
              "report.html: rank 0's write-remote faults in the table")
        # --text-only: the same text, no OUTDIR
        rc, text2, _ = run([pagehome, "report", path, "--text-only"])
        check(rc == 0 and text2 == text.split("\nwrote ")[0],
              "--text-only: the same text, and nothing written")
        # the default OUTDIR: the file's basename + _report, here
        p = subprocess.run([pagehome, "report", path], cwd=tmp, capture_output=True, text=True,
                           timeout=200)
        check(p.returncode == 0 and os.path.isfile(os.path.join(
            tmp, "cluster_laplace_rr_report", "report.html")),
            f"the default OUTDIR: exit {p.returncode}: {p.stderr[-300:]}")
        # rank objects in other layouts (the merge takes any object)
        ranks = sorted(os.path.join(data_dir, "cluster", f)
                       for f in os.listdir(os.path.join(data_dir, "cluster"))
                       if f.startswith(("rank", "stats", "dsm")))
        merged = os.path.join(tmp, "foreign.json")
        rc, _, err = run([pagehome, "cluster", "merge", "-o", merged] + ranks)
        if check(rc == 0, f"cluster merge of tests/data/cluster: {err}"):
            rc, text, err = run([pagehome, "report", merged, "-o", os.path.join(tmp, "f")])
            check(rc == 0 and "Per rank:" in text, f"foreign layouts rendered: exit {rc}: {err}")
            rows = table(section(text, "Per rank"), "rank")
            check(rows and rows[0]["read remote"] == "-" and
                  any(r["read remote"] == "7" for r in rows),
                  f"foreign layouts: '-' where the DSM's counters are missing: {rows}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def cluster_run(pagehome, prog, report, args, env):
    cmd = [pagehome, "cluster", "run", "-n", "2", "--transport", "shm", "--report", report]
    # the launcher of the MPI the program was built with (ctest's
    # environment says which: the MPICH build's tests run with mpich)
    if os.environ.get("PH_MPI_FLAVOR"):
        cmd += ["--mpi", os.environ["PH_MPI_FLAVOR"]]
    cmd += ["--", prog] + args
    rc, out, err = run(cmd, env=env)
    return rc, out + err


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def intervals_add_up(data, label):
    for r in data["ranks"]:
        f = r["interval_fields"]
        for field, counter in (("read_remote", "fault_read_remote"),
                               ("write_remote", "fault_write_remote"),
                               ("read_home", "fault_read_home"),
                               ("write_home", "fault_write_home")):
            got = sum(rec[f.index(field)] for rec in r["intervals"])
            check(got == r["faults"][counter],
                  f"{label}: rank {r['rank']}: the intervals' {field} add up to "
                  f"{counter}: {got} == {r['faults'][counter]}")
        moved = sum(rec[f.index("migrated")] for rec in r["intervals"])
        check(moved == r["migration"]["migrations"],
              f"{label}: rank {r['rank']}: the intervals' homes moved add up: {moved}")


def live(pagehome, laplace):
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "2")
    env.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
    tmp = tempfile.mkdtemp(prefix="ph-cluster-live-")
    try:
        report = os.path.join(tmp, "laplace.json")
        rc, out = cluster_run(pagehome, laplace, report, ["256", "20", "round-robin"], env)
        if rc != 0 and ("MPI" in out or "mpirun" in out) and "verification" not in out:
            print(f"skipped: no MPI run can start here: {out[-400:]}")
            return 77
        check(rc == 0 and "verification: ok" in out, f"live: laplace_dsm ran: {out[-600:]}")
        if not check(os.path.isfile(report), "live: the merged report exists"):
            return 1
        data = load(report)
        ranks = sorted(data["ranks"], key=lambda r: r["rank"])
        check(len(ranks) == 2, "live: two ranks reported")
        for a in ranks[0]["allocations"][:2]:
            check(a["pages"] == 128 and a["placement"] == "round-robin" and a["ended"] == "freed",
                  f"live: grid #{a['seq']}: 128 pages, round-robin, freed: {a['pages']}")
            check(a["strip_start"] == [0, 1] * 64,
                  f"live: grid #{a['seq']}: the start strip alternates: {a['strip_start']}")
            end = a["strip_end"]
            check(end == sorted(end) and set(end) == {0, 1},
                  f"live: grid #{a['seq']}: the end strip is one band per rank: {end}")
            for r in ranks:
                mine = next(x for x in r["allocations"] if x["seq"] == a["seq"])
                check(mine["home_pages_start"] == 64 and mine["home_pages_end"] == 64,
                      f"live: grid #{a['seq']}: rank {r['rank']} homes 64 pages at start "
                      f"and end: {mine['home_pages_start']} {mine['home_pages_end']}")
                check(mine["strip_end"] == end, "live: the ranks agree on the end strip")
        intervals_add_up(data, "live")
        check(ranks[0]["migration"]["migrations"] >= 128, "live: at least 128 homes moved")
        outdir = os.path.join(tmp, "out")
        rc, text, err = run([pagehome, "report", report, "-o", outdir])
        check(rc == 0, f"live: pagehome report: exit {rc}: {err[-400:]}")
        check_text(text, data, "live")
        check_html(outdir, "live")
        strips = text_strips(section(text, "Homes"))
        check(strips.get(0, ("", ""))[0] == "01" * 64, f"live: the text's start strip: {strips.get(0)}")
        # the initialisation writes pages homed at the other rank that nobody
        # wrote yet: mapped as zeroes, not fetched (cluster_pristine)
        zeroed = sum(r["traffic"].get("pristine_mapped", 0) for r in ranks)
        check(zeroed > 0 and f"{zeroed} never written, mapped as zeroes" in text,
              f"live: pages mapped as zeroes counted and reported: {zeroed}")

        # no migration: the homes stay where the formula put them
        off = os.path.join(tmp, "off.json")
        rc, out = cluster_run(pagehome, laplace, off, ["256", "20", "round-robin"],
                              dict(env, PAGEHOME_CLUSTER_MIGRATE="0"))
        check(rc == 0, f"live, migration off: {out[-400:]}")
        if os.path.isfile(off):
            d = load(off)
            for a in d["ranks"][0]["allocations"][:2]:
                check(a["strip_end"] == a["strip_start"] == [0, 1] * 64,
                      f"live, migration off: grid #{a['seq']}: the end strip is the start's")
            rc, text, err = run([pagehome, "report", off, "-o", os.path.join(tmp, "off")])
            check(rc == 0 and re.search(r"homes moved\s+0 pages", text) is not None and
                  "off (cluster_migrate=0)" in text,
                  f"live, migration off: the report says no home moved: {err[-300:]}")

        # many barriers: the interval records are bounded
        many = os.path.join(tmp, "many.json")
        rc, out = cluster_run(pagehome, laplace, many, ["16", "5000", "--no-check"], env)
        check(rc == 0, f"live, 5000 iterations: {out[-400:]}")
        if os.path.isfile(many):
            d = load(many)
            for r in d["ranks"]:
                c, n = r["cluster"], len(r["intervals"])
                b = r["sync"]["barriers"]
                check(c["interval_barriers"] == 2 and n <= 4097 and
                      (n - 1) * 2 + c["interval_last_barriers"] == b,
                      f"live, {b} barriers: {n} records of {c['interval_barriers']}, the last "
                      f"of {c['interval_last_barriers']}")
            intervals_add_up(d, "live, 5000 iterations")
            rc, text, err = run([pagehome, "report", many, "--text-only"])
            check(rc == 0 and "each record covers 2 barriers" in text,
                  f"live, 5000 iterations: the text says each record covers 2 barriers: "
                  f"{err[-300:]}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("render", "live"):
        print(__doc__, file=sys.stderr)
        return 2
    pagehome, other = (os.path.abspath(a) for a in sys.argv[2:4])
    if sys.argv[1] == "render":
        render(pagehome, other)
    elif live(pagehome, other) == 77:
        return 77
    print(f"check_cluster_report {sys.argv[1]}: {passed} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
