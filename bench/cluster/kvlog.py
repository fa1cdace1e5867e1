"""kvlog.py -- the result lines the cluster benchmarks print: words of the
form key=value (the first of a key wins) and bare words.  Shared by
table.py, laplace_table1.py, fft_table2.py and swim_tables.py."""


def fields(line):
    """The key=value words of line as a dict, and its bare words as a set."""
    d, words = {}, set()
    for tok in line.split():
        if "=" in tok:
            k, v = tok.split("=", 1)
            d.setdefault(k, v)
        else:
            words.add(tok)
    return d, words


def fmt(x, nd=3):
    """A table cell: nothing for None, a float to nd significant digits."""
    if x is None:
        return ""
    if isinstance(x, float):
        return f"{x:.{nd}g}"
    return str(x)
