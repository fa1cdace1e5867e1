"""guest_output.py -- reading a guest batch's run outputs, shared by
guest_runs_table.py and vs_autonuma_table.py: a file's lines, and a run's
stdout with its timing fields (NAME_s=...) taken out, so that runs can be
compared with their plain run."""
import re

TIMING = re.compile(r" [A-Za-z_]*_s=\S+")


def read_lines(path):
    """The file's lines, or None when it cannot be read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().splitlines()
    except OSError:
        return None


def normalise(lines):
    """The lines without their timing fields."""
    return [TIMING.sub("", line) for line in lines]
