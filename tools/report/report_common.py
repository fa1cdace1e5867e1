"""report_common.py -- what the reports of `pagehome report` share.

pagehome_report.py (the report of a run's statistics file) and
sim_report.py (the report of a `pagehome sim EXPERIMENT --json OUT` file)
both use these: reading the JSON and checking it against the schema of
its kind before anything is rendered (load_input: one line naming the
field for a file that does not fit, see "reading" below), picking numbers
out of it, the text tables, matplotlib with the Agg backend, the
self-contained HTML page (inline CSS, the PNGs as base64 data URIs), and
writing the output files without following links (write_file).

A summary is a list of sections (title, items); an item is ("kv", key,
value), ("table", headers, rows, note) or ("text", paragraph).  Both
renderers (render_text_sections, html_items) take that shape.

Only the standard library; matplotlib is imported by import_pyplot() alone,
so the text summaries need none.
"""

import base64
import html
import json
import math
import os
import stat
import sys
import tempfile

# Table columns written left-aligned (text) or with class 'l' (HTML): the
# run report's and the simulation report's names.
LEFT_COLUMNS = {"step", "kinds", "name", "area", "registered", "removed", "recorded",
                "value",
                "machine", "group", "program", "placement", "engine", "phases",
                "workload", "target", "result", "what", "page policy",
                "host", "ended", "class", "allocation"}


class ReportError(Exception):
    """A problem with the input or the output, reported in one line."""


# ---- reading ----------------------------------------------------------------
#
# Every input goes through load_input(): the file is read (at most
# INPUT_MAX_BYTES), parsed, and checked against the schema of its kind
# (RUN_SCHEMA, SIM_SCHEMA, CLUSTER_SCHEMA below) before anything is rendered, so the
# renderers meet only the types and sizes the schema allows.  A file that
# does not fit is refused with one line naming the field, what was expected
# and what was found (InputError).

INPUT_MAX_BYTES = 128 << 20     # a full run file (4096 areas, 65536 log records) is ~50 MB
U64_MAX = 2**64 - 1
I64_MIN = -2**63


class InputError(ReportError):
    """A field of the input that the report cannot take: one line."""

    def __init__(self, path, field, expected, got):
        super().__init__(f"{path}: field {field}: expected {expected}, got {got}")


def read_input(path):
    """The bytes of path (at most INPUT_MAX_BYTES), or ReportError."""
    try:
        with open(path, "rb") as f:
            raw = f.read(INPUT_MAX_BYTES + 1)
    except OSError as e:
        raise ReportError(f"cannot read {path}: {e.strerror}") from None
    except MemoryError:
        raise ReportError(f"cannot read {path}: out of memory") from None
    if len(raw) > INPUT_MAX_BYTES:
        raise ReportError(f"{path}: expected at most {INPUT_MAX_BYTES >> 20} MiB, got more "
                          "(not a pagehome statistics file?)")
    if not raw.strip():
        raise ReportError(f"{path} is empty (not a pagehome statistics file)")
    return raw


def parse_input(raw, path):
    """(the document in raw, whether a value in it may be out of range), or
    ReportError saying what is wrong with the text."""
    try:
        return parse(raw)
    except UnicodeDecodeError:
        raise ReportError(f"{path} is not a pagehome statistics file (not text)") from None
    except json.JSONDecodeError as e:
        raise ReportError(f"{path} is not valid JSON: {e.msg} at line {e.lineno} "
                          f"column {e.colno}") from None
    except RecursionError:
        raise ReportError(f"{path}: expected JSON nested a few levels deep, got "
                          "deeper nesting than the parser takes") from None
    except ValueError as e:   # an integer of more than 4300 digits
        raise ReportError(f"{path} is not valid JSON for the report: {e}") from None
    except MemoryError:
        raise ReportError(f"cannot read {path}: out of memory") from None


def load_json(path):
    """The parsed file, or ReportError saying what is wrong with it (not
    checked against a schema: load_input does that)."""
    return parse_input(read_input(path), path)[0]


def describe(v):
    """A value as the one-line messages show it."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        t = str(v) if abs(v) < 10**30 else f"an integer of {len(str(abs(v)))} digits"
        return t
    if isinstance(v, float):
        if v != v:
            return "NaN"
        if v in (float("inf"), float("-inf")):
            return "Infinity" if v > 0 else "-Infinity"
        return repr(v)
    if isinstance(v, str):
        return "a string " + json.dumps(v if len(v) <= 24 else v[:24] + "...")
    if isinstance(v, list):
        return f"a list of {len(v)} item{'' if len(v) == 1 else 's'}"
    if isinstance(v, dict):
        return "an object"
    return type(v).__name__


class Bad(Exception):
    """Raised inside the checks: (field, expected, got); field is a path
    (see field_name)."""

    def __init__(self, field, expected, got):
        super().__init__(expected)
        self.field, self.expected, self.got = field, expected, got


MISSING = object()


def _got(v):
    return "nothing (the field is missing)" if v is MISSING else describe(v)


# A path is "" (the document) or (parent path, key): built as tuples while
# checking, written out only for a message.
def field_name(at):
    parts = []
    while at:
        at, key = at
        parts.append(f"[{key}]" if isinstance(key, int) else f".{key}")
    return one_line("".join(reversed(parts)).lstrip(".")) or "(the document)"


class Spec:
    """What a field may hold.  nullable: null is allowed too.  int_range:
    (lo, hi) when every integer in it passes (the fast path), str_ok:
    every string passes."""
    nullable = False
    int_range = None
    str_ok = False

    def check(self, v, at):
        if v is None and self.nullable:
            return
        self.check_value(v, at)

    def fail(self, v, at):
        raise Bad(at, self.expected() + (" or null" if self.nullable else ""), _got(v))


class Num(Spec):
    """A finite number in [lo, hi]; integer=True: a whole number (no 2.5, no true)."""

    def __init__(self, lo=I64_MIN, hi=U64_MAX, integer=False, nullable=False, what=None):
        self.lo, self.hi, self.integer, self.nullable, self.what = lo, hi, integer, nullable, what
        self.int_range = (lo, hi)
        self.types = (int,) if integer else (int, float)

    def expected(self):
        noun = "an integer" if self.integer else "a number"
        if self.what:
            return f"{noun} from {self.lo} to {self.hi} ({self.what})"
        if self.lo == 0 and self.hi == U64_MAX:
            return f"{noun} >= 0 (a count)"
        if self.lo == I64_MIN and self.hi == U64_MAX:
            return noun
        return f"{noun} from {self.lo} to {self.hi}"

    def check_value(self, v, at):
        if type(v) not in self.types or not (self.lo <= v <= self.hi):  # NaN: refused
            self.fail(v, at)

    def check_items(self, v, at):
        """Every item of list v (the fast path of Arr)."""
        if (all(type(x) in self.types for x in v) and
                (not v or (self.lo <= min(v) and max(v) <= self.hi))):
            return
        for i, x in enumerate(v):
            self.check(x, (at, i))


def Int(lo=I64_MIN, hi=U64_MAX, nullable=False, what=None):
    return Num(lo, hi, integer=True, nullable=nullable, what=what)


def Count(nullable=False):
    """A counter: pages, bytes, nanoseconds, events."""
    return Num(0, U64_MAX, nullable=nullable)


class Str(Spec):
    str_ok = True

    def __init__(self, nullable=False):
        self.nullable = nullable

    def expected(self):
        return "a string"

    def check_value(self, v, at):
        if not isinstance(v, str):
            self.fail(v, at)


class Bool(Spec):
    def __init__(self, nullable=False):
        self.nullable = nullable

    def expected(self):
        return "true or false"

    def check_value(self, v, at):
        if not isinstance(v, bool):
            self.fail(v, at)


class Scalar(Spec):
    """A string, a number, true/false or null: a value printed as it is."""
    int_range = (I64_MIN, U64_MAX)
    str_ok = True

    def expected(self):
        return "a string, a number, true, false or null"

    def check_value(self, v, at):
        if v is not None and not isinstance(v, (str, int, float, bool)):
            self.fail(v, at)
        if type(v) is int and not I64_MIN <= v <= U64_MAX:
            self.fail(v, at)


class Any(Spec):
    int_range = (I64_MIN, U64_MAX)
    str_ok = True

    def check_value(self, v, at):
        pass


class Arr(Spec):
    """A list of at most `most` items, each `item`."""

    def __init__(self, item, most, nullable=False, what="items"):
        self.item, self.most, self.nullable, self.what = item, most, nullable, what

    def expected(self):
        return f"a list of at most {self.most} {self.what}"

    def check_value(self, v, at):
        if not isinstance(v, list):
            self.fail(v, at)
        if len(v) > self.most:
            raise Bad(at, self.expected(), describe(v))
        item = self.item
        if isinstance(item, Num):
            item.check_items(v, at)
            return
        for i, x in enumerate(v):
            item.check(x, (at, i))


class Obj(Spec):
    """An object: the listed fields checked when present (`required` ones
    must be), others by `rest` (unchecked when None); then `post(v, at)`
    for what ties fields together."""

    def __init__(self, fields=None, required=(), rest=None, most=None, post=None,
                 nullable=False):
        self.fields, self.required, self.rest = fields or {}, required, rest
        self.most, self.post, self.nullable = most, post, nullable

    def expected(self):
        return "an object" + (f" of at most {self.most} members" if self.most else "")

    def check_value(self, v, at):
        if not isinstance(v, dict):
            self.fail(v, at)
        if self.most is not None and len(v) > self.most:
            raise Bad(at, self.expected(), f"an object of {len(v)} members")
        for k in self.required:
            if k not in v:
                raise Bad((at, k), self.fields[k].expected(), _got(MISSING))
        get, rest = self.fields.get, self.rest
        for k, x in v.items():
            spec = get(k, rest)
            if spec is None:
                continue
            t = type(x)     # the fast paths: most members are counts or names
            if t is int:
                r = spec.int_range
                if r is not None and r[0] <= x <= r[1]:
                    continue
            elif t is str and spec.str_ok:
                continue
            spec.check(x, (at, k))
        if self.post:
            self.post(v, at)


def _utf8(s):
    try:
        s.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def find_bad_value(data):
    """Every number in the document finite and within 64 bits (the writers'
    range), every string and key text that UTF-8 can write, whatever field
    it is in: no NaN, Infinity, 1e400 or unpaired surrogate ("\\ud800")
    reaches a renderer; Bad for the first that is not.  Iterative: any
    depth the parser took.  (Slow: parse() calls it only when the text has
    a sign of such a value.)"""
    todo = [(data, "")]
    while todo:
        v, at = todo.pop()
        if isinstance(v, dict):
            for k, x in v.items():
                if not _utf8(k):
                    raise Bad((at, k), "a name in UTF-8", "an unpaired surrogate in the name")
                todo.append((x, (at, k)))
        elif isinstance(v, list):
            todo.extend((x, (at, i)) for i, x in enumerate(v))
        elif isinstance(v, str):
            if not _utf8(v):
                raise Bad(at, "text in UTF-8", "a string with an unpaired surrogate")
        elif isinstance(v, float):
            if not math.isfinite(v):
                raise Bad(at, "a finite number", describe(v))
        elif isinstance(v, int) and not isinstance(v, bool) and not I64_MIN <= v <= U64_MAX:
            raise Bad(at, f"a number from {I64_MIN} to {U64_MAX}", describe(v))


def parse(raw):
    """The document of raw (UTF-8 JSON) and whether a value in it may be
    out of range: NaN, Infinity or 1e400 (the parser's hooks see them) or
    a \\ud800-\\udfff escape; then find_bad_value looks for it.  (An
    integer beyond 64 bits needs no sign: the schema bounds every number
    the report reads.)"""
    suspect = [raw.find(b"\\ud") >= 0 or raw.find(b"\\uD") >= 0]

    def constant(name):         # NaN, Infinity, -Infinity
        suspect[0] = True
        return float(name)

    def real(text):
        f = float(text)
        if not math.isfinite(f):     # 1e400
            suspect[0] = True
        return f
    data = json.loads(raw.decode("utf-8"), parse_constant=constant, parse_float=real)
    return data, suspect[0]


# ---- the schemas --------------------------------------------------------------
#
# The bounds are the writers' own: a file beyond them was not written by
# pagehome, and the report refuses it rather than drawing 10^7 nodes.
# tests/report/check_hostile.py compares these with the C definitions.

MAX_NODES = 64           # src/topo/topo.h PH_MAX_NODES
MAX_STRIP = 256          # src/engine/engine_int.h PH_STRIP_MAX
MAX_AREAS = 4096         # src/engine/engine_int.h PH_HISTORY_MAX
MAX_LOG = 65536          # src/engine/stats.c PH_LOG_MAX (invocation records)
MAX_THREADS = 1 << 20
MAX_TUNABLES = 1024
MAX_SIM_ITERATIONS = 100000   # pagehome sim --iterations (tools/pagehome/cmd_sim.c)
MAX_SIM_RUNS = 1024      # the largest experiment (e5) has 180 runs
MAX_SIM_LABELS = 64      # engines (variants) of one experiment: a bar each
MAX_SIM_VALUES = 8000000  # per_iteration values of all runs together
MAX_LIST = 1024          # targets, notes


def _run_post(d, at):
    """What ties the fields of a statistics file together."""
    if "totals" in d and d.get("engine", 0) is not None:
        for k in ("config", "areas", "invocations"):
            if k not in d:
                spec = RUN_SCHEMA.fields[k]
                raise Bad((at, k), spec.expected() + " (the file has totals: an engine ran)",
                          _got(MISSING))
    nodes = obj(d, "config").get("nodes")
    if not isinstance(nodes, int) or isinstance(nodes, bool):
        return
    for i, a in enumerate(lst(d, "areas")):
        for key in ("strip_start", "strip_end"):
            strip = lst(a, key)
            if max(strip, default=-1) >= nodes:
                b = next(b for b, v in enumerate(strip) if v >= nodes)
                raise Bad(((((at, "areas"), i), key), b),
                          f"a node from -1 (unknown) to {nodes - 1} (config.nodes is "
                          f"{nodes})", describe(strip[b]))


COUNTS = Obj(rest=Count())
NODE_IN_STRIP = Int(-1, MAX_NODES - 1, what="a node, -1 unknown")
AREA = Obj({
    "id": Int(), "name": Str(nullable=True), "base": Count(), "pages": Count(),
    "bytes": Count(), "live": Bool(), "cold": Bool(),
    "registered_iteration": Int(), "removed_iteration": Int(nullable=True),
    "invocations": Count(), "scanned": Count(), "candidates": Count(),
    "migrated": Count(), "failed_busy": Count(), "failed_nomem": Count(),
    "failed_access": Count(), "failed_fault": Count(), "failed_other": Count(),
    "frozen": Count(), "melted": Count(), "accesses": Count(),
    "remote_accesses": Count(), "migrated_first2": Count(), "bytes_moved": Count(),
    "sampled_pages": Count(), "sampled_pages_on_top_accessor": Count(),
    "pages_moved_twice": Count(), "start_pages": Count(),
    "start_pages_on_top_accessor": Count(),
    "owner_local_share": Num(0, 1, nullable=True),
    "owner_local_share_start": Num(0, 1, nullable=True),
    "strip_pages_per_bucket": Num(0, U64_MAX, nullable=True),
    "strip_start": Arr(NODE_IN_STRIP, MAX_STRIP, what="buckets"),
    "strip_end": Arr(NODE_IN_STRIP, MAX_STRIP, what="buckets"),
})
INVOCATION = Obj(dict({
    "kind": Str(), "criterion": Str(nullable=True), "seq": Int(), "iteration": Int(),
    "phase": Int(), "area": Int(), "factor": Num(nullable=True),
    "remote_ns": Num(nullable=True),
}, **{k: Count() for k in (
    "scanned", "candidates", "migrated", "failed", "frozen", "melted", "accesses",
    "remote_before", "remote_after", "bytes_moved", "engine_ns", "move_ns",
    "sampler_ns")}), rest=Scalar())
OPENMP = Obj({
    "runtime_seen": Bool(), "runtime_linked": Str(nullable=True), "note": Str(),
    "omp_tool": Str(nullable=True),
    "runtime": Str(nullable=True), "regions": Count(),
    "threads": Int(0, MAX_THREADS), "iteration": Scalar(), "period": Count(),
    "iteration_boundaries": Count(), "early_boundary": Bool(),
    "fallback": Str(nullable=True),
    "fallback_after_ms": Count(nullable=True), "back_to_iterative": Bool(),
    "switched_to_sampling": Bool(), "engine_calls": Bool(),
    "phases": COUNTS, "runtime_threads": COUNTS,
})
RUN_SCHEMA = Obj({
    "pagehome_stats": Int(0, 1 << 31, what="the version of the file"),
    "engine": Any(),
    "note": Str(),
    "config": Obj({
        "nodes": Int(1, MAX_NODES, what="NUMA nodes; PH_MAX_NODES"),
        "mechanism": Str(), "source": Str(), "observe": Bool(), "optimistic": Bool(),
        "critical_pages": Count(),
        "tunables": Obj(rest=Obj({"value": Scalar(), "source": Scalar()}),
                        most=MAX_TUNABLES),
    }),
    "totals": Obj({"active": Bool()}, rest=Count()),
    "source_stats": COUNTS,
    "areas_not_recorded": Count(),
    "areas": Arr(AREA, MAX_AREAS, what="areas (PH_HISTORY_MAX)"),
    "invocations": Arr(INVOCATION, MAX_LOG, what="records (PH_LOG_MAX)"),
    "transparent": Obj({
        "program": Str(nullable=True), "placement": Scalar(),
        "hot_threshold_bytes": Count(), "openmp": OPENMP,
        "heap": COUNTS, "static": COUNTS,
    }),
}, required=("pagehome_stats",), post=_run_post)


def _sim_run_post(r, at):
    its = r.get("iterations")
    most = its if isinstance(its, int) and not isinstance(its, bool) else MAX_SIM_ITERATIONS
    for k, v in obj(r, "per_iteration").items():
        if len(v) > most:
            raise Bad(((at, "per_iteration"), k),
                      f"a list of at most {most} values ({field_name(at)}.iterations)",
                      describe(v))


def _sim_post(d, at):
    runs = d.get("runs", [])
    labels = {str(r.get("label") or r.get("engine") or "?") for r in runs}
    if len(labels) > MAX_SIM_LABELS:
        raise Bad((at, "runs"), f"at most {MAX_SIM_LABELS} distinct labels (engines)",
                  f"{len(labels)}")
    values = sum(len(v) for r in runs for v in obj(r, "per_iteration").values())
    if values > MAX_SIM_VALUES:
        raise Bad((at, "runs"), f"at most {MAX_SIM_VALUES} per_iteration values in all",
                  f"{values}")


SIM_RUN = Obj({
    "machine": Scalar(), "group": Scalar(), "program": Scalar(),
    "threads": Int(0, MAX_THREADS), "placement": Scalar(), "repeat": Scalar(),
    "critical_pages": Scalar(), "thread_notes": Scalar(), "keep_active": Scalar(),
    "label": Str(nullable=True), "engine": Str(nullable=True),
    "iterations": Int(0, MAX_SIM_ITERATIONS),
    "migrate_at": Int(), "phase_pages": Int(),
    "per_iteration": Obj(rest=Arr(Num(), MAX_SIM_ITERATIONS, what="values")),
}, rest=Scalar(), post=_sim_run_post)
SIM_SCHEMA = Obj({
    "experiment": Str(), "title": Scalar(), "machines": Scalar(), "baseline": Scalar(),
    "runs": Arr(SIM_RUN, MAX_SIM_RUNS, what="runs"),
    "targets": Arr(Obj({"met": Scalar(), "what": Scalar(), "detail": Scalar()}),
                   MAX_LIST, what="targets"),
    "notes": Arr(Str(), MAX_LIST, what="notes"),
}, required=("experiment", "runs"), post=_sim_post)


# The merged statistics of a cluster run (tools/pagehome/cluster_merge.c:
# {"pagehome_cluster_stats": 1, "cluster": {the run, "totals"}, "ranks":
# [each rank's object]}), each rank's object as src/cluster/stats.c writes
# it.  The merge takes any JSON object for a rank: members the DSM does
# not write are not read, and not checked.
MAX_RANKS = 1000000          # pagehome cluster run -n (cmd_cluster.c parse_ranks)
MAX_CLUSTER_STRIP = 256      # src/cluster/cluster.h PH_DSM_STRIP_MAX
MAX_CLUSTER_ALLOCS = 256     # src/cluster/cluster.h PH_DSM_RECS_MAX
MAX_INTERVALS = 4097         # src/cluster/cluster.h PH_DSM_IVS_MAX, + the last part
MAX_INTERVAL_FIELDS = 64
MAX_ARGS = 65536             # a command line's words


def _cluster_rank_post(r, at):
    """Interval records as long as their field list; strip values within
    the job's ranks."""
    fields = r.get("interval_fields")
    if isinstance(fields, list):
        for i, rec in enumerate(lst(r, "intervals")):
            if len(rec) > len(fields):
                raise Bad(((at, "intervals"), i),
                          f"a list of at most {len(fields)} counts (one per "
                          "interval_fields name)", describe(rec))
    nranks = obj(r, "cluster").get("nranks")
    if not isinstance(nranks, int) or isinstance(nranks, bool):
        return
    for i, a in enumerate(lst(r, "allocations")):
        for key in ("strip_start", "strip_end"):
            strip = lst(a, key)
            if max(strip, default=-1) >= nranks:
                b = next(b for b, v in enumerate(strip) if v >= nranks)
                raise Bad(((((at, "allocations"), i), key), b),
                          f"a rank from -2 (several) to {nranks - 1} (cluster.nranks "
                          f"is {nranks})", describe(strip[b]))


def _cluster_post(d, at):
    ranks = lst(d, "ranks")
    seen = set()
    for i, r in enumerate(ranks):
        k = r.get("rank")
        if isinstance(k, int) and not isinstance(k, bool):
            if k in seen:
                raise Bad(((at, "ranks"), i), "one object per rank", f"rank {k} again")
            seen.add(k)


RANK_IN_STRIP = Int(-2, MAX_RANKS - 1, what="a rank, -1 none, -2 several")
CLUSTER_ALLOC = Obj({
    "seq": Count(), "pages": Count(), "bytes": Count(), "placement": Str(),
    "ended": Str(), "home_pages_start": Count(), "home_pages_end": Count(),
    "strip_start": Arr(RANK_IN_STRIP, MAX_CLUSTER_STRIP, what="buckets"),
    "strip_end": Arr(RANK_IN_STRIP, MAX_CLUSTER_STRIP, what="buckets"),
})
CLUSTER_RANK = Obj({
    "rank": Int(0, MAX_RANKS - 1, what="a rank"),
    "cluster": Obj({
        "rank": Int(0, MAX_RANKS - 1, what="a rank"),
        "nranks": Int(1, MAX_RANKS, what="ranks; pagehome cluster run -n"),
        "threads": Int(0, MAX_THREADS), "host": Str(), "transport": Str(),
        "fault_mechanism": Str(), "arena_bytes": Count(), "used_bytes": Count(),
        "page_bytes": Int(1, 1 << 30), "interval_barriers": Int(1, U64_MAX),
        "interval_last_barriers": Count(), "allocations_not_recorded": Count(),
    }),
    "faults": COUNTS, "traffic": COUNTS, "sync": COUNTS, "time_ns": COUNTS,
    "page_classes": COUNTS,
    "migration": Obj({"on": Int(0, 1)}, rest=Count()),
    "interval_fields": Arr(Str(), MAX_INTERVAL_FIELDS, what="names"),
    "intervals": Arr(Arr(Count(), MAX_INTERVAL_FIELDS, what="counts"), MAX_INTERVALS,
                     what="records (PH_DSM_IVS_MAX + 1)"),
    "allocations": Arr(CLUSTER_ALLOC, MAX_CLUSTER_ALLOCS,
                       what="allocations (PH_DSM_RECS_MAX)"),
}, post=_cluster_rank_post)
CLUSTER_SCHEMA = Obj({
    "pagehome_cluster_stats": Int(0, 1 << 31, what="the version of the file"),
    "cluster": Obj({
        "program": Str(), "args": Arr(Str(), MAX_ARGS, what="words"),
        "ranks": Int(0, MAX_RANKS, what="ranks; pagehome cluster run -n"),
        "mpi": Str(), "launcher": Str(), "transport": Str(),
        "hosts": Str(nullable=True), "hostfile": Str(nullable=True),
        "placement": Str(nullable=True),
        "command": Arr(Str(), MAX_ARGS, what="words"),
        "seconds": Num(0, 1e12), "exit_status": Int(0, 255), "signal": Int(0, 255),
        "ranks_reported": Int(0, MAX_RANKS),
        "missing_ranks": Arr(Int(0, MAX_RANKS - 1), MAX_RANKS, what="ranks"),
        "unreadable": Arr(Obj({"file": Str(), "error": Str()}), MAX_RANKS, what="files"),
        "totals": Obj(),
    }),
    "ranks": Arr(CLUSTER_RANK, MAX_RANKS, what="ranks"),
}, required=("pagehome_cluster_stats", "ranks"), post=_cluster_post)


def kind_of(data):
    """'run' (a statistics file), 'sim' (`pagehome sim --json`), 'cluster'
    (the merged statistics of a cluster run), or None."""
    if not isinstance(data, dict):
        return None
    if "pagehome_stats" in data:
        return "run"
    if "experiment" in data:
        return "sim"
    if "pagehome_cluster_stats" in data:
        return "cluster"
    return None


def check_input(data, path, suspect=True):
    """data when it is a statistics file, a sim file or a merged cluster
    file within its schema, else ReportError (InputError naming the
    field).  (kind, data).
    suspect=False: parse() saw no sign of a value out of range."""
    kind = kind_of(data)
    if kind is None:
        raise ReportError(f"{path} is not a pagehome statistics file "
                          "(no \"pagehome_stats\" key), a `pagehome sim --json` file "
                          "(no \"experiment\" and \"runs\") nor the merged statistics "
                          "of a cluster run (no \"pagehome_cluster_stats\")")
    try:
        if suspect:
            find_bad_value(data)
        {"run": RUN_SCHEMA, "sim": SIM_SCHEMA, "cluster": CLUSTER_SCHEMA}[kind].check(data, "")
    except Bad as b:
        raise InputError(path, field_name(b.field), b.expected, b.got) from None
    except RecursionError:     # a nested value where the schema takes any
        raise ReportError(f"{path}: expected JSON nested a few levels deep, got "
                          "deeper nesting") from None
    return kind, data


def load_input(path):
    """Read, parse and check path: (kind, data), or ReportError."""
    data, suspect = parse_input(read_input(path), path)
    return check_input(data, path, suspect)


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
    """OUTDIR and its parents (an OUTDIR that is a link to a directory is
    used: the files are made in the directory it names)."""
    try:
        os.makedirs(outdir, exist_ok=True)
    except OSError as e:
        raise ReportError(f"cannot make {outdir}: {e.strerror}") from None


def _umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_file(path, write):
    """Make path with write(binary file): never through what is there.

    The content goes to a new file in the same directory (mkstemp:
    O_CREAT|O_EXCL, so no link is followed), which is then renamed over
    path.  A symbolic link at path is replaced, not written through: its
    target is left as it was, and a line on stderr says so.  A directory
    at path is refused."""
    link = None
    try:
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            link = os.readlink(path)
        elif stat.S_ISDIR(st.st_mode):
            raise ReportError(f"cannot write {path}: it is a directory")
    except FileNotFoundError:
        pass
    except OSError as e:
        raise ReportError(f"cannot write {path}: {e.strerror}") from None
    folder, name = os.path.split(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder or ".")
    except OSError as e:
        raise ReportError(f"cannot write {path}: {e.strerror}") from None
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, path)
    except OSError as e:
        _unlink(tmp)
        raise ReportError(f"cannot write {path}: {e.strerror}") from None
    except BaseException:
        _unlink(tmp)
        raise
    if link is not None:
        print(f"pagehome: report: {one_line(path)} was a symbolic link to "
              f"{one_line(link)}: replaced by the report's file; {one_line(link)} "
              "is unchanged", file=sys.stderr)
    return path


def _unlink(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def save_figure(fig, path):
    """A matplotlib figure as PNG at path, through write_file."""
    write_file(path, lambda f: fig.savefig(f, format="png", dpi=100))


def write_page(outdir, page_text):
    """outdir/report.html; its path."""
    data = page_text.encode("utf-8")
    return write_file(os.path.join(outdir, "report.html"), lambda f: f.write(data))


def one_line(text):
    """text with its control characters escaped: a message stays one line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))


def write_report(model, path, outdir, text_only, sections, plots, html_of):
    """A report's text on stdout and, unless text_only, its plots and HTML
    page in outdir (by default beside path): sections(model, html) gives
    the sections, plots(model, outdir) writes the figures ({name: path}),
    html_of(model, sections, images) makes the page.  The exit status."""
    sys.stdout.write(render_text_sections(f"pagehome report: {path}",
                                          sections(model, False)))
    sys.stdout.flush()
    if text_only:
        return 0
    outdir = outdir or default_outdir(path)
    make_outdir(outdir)
    try:
        images = plots(model, outdir)
    except OSError as e:
        raise ReportError(f"cannot write the plots in {outdir}: {e.strerror}") from None
    page = write_page(outdir, html_of(model, sections(model, True), images))
    wrote = ", ".join([page] + [os.path.basename(p) for p in images.values()])
    print(f"\nwrote {wrote}")
    return 0
