"""Quote ``benchmarks/everyday.csv`` in README.md and docs/*.md: the docs' numbers about
the everyday loop (run times, CPU seconds, test and file counts, claim counts) have one
source, the table ``benchmarks/bench_everyday.py`` writes.

A doc quotes a measure through a marked span that this module owns::

    in about <!-- everyday:quick_wall:dur -->85 s<!-- /everyday --> on two cores

``quick_wall`` is the table's ``measure``, ``dur`` how it is written (:data:`FORMATS`); the
text between the comments (invisible when the Markdown is rendered) is rewritten from the
table, the rest of the sentence is the doc's own. ``tests/test_docs_numbers.py`` fails
while a span disagrees with the table or such a number is printed outside a span.

    python benchmarks/bench_everyday.py --docs       # rewrite the spans from the table
    python benchmarks/bench_everyday.py --docs --check   # only say which files differ
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "benchmarks" / "everyday.csv"
FIELDS = ["measure", "value", "unit", "command", "measured_on"]

#: ``<!-- everyday:MEASURE:FORMAT -->TEXT<!-- /everyday -->``; TEXT holds no marker.
SPAN = re.compile(r"<!-- everyday:(?P<measure>[a-z0-9_]+):(?P<fmt>[a-z0-9]+) -->"
                  r"(?P<text>(?:(?!<!--).)*?)<!-- /everyday -->", re.S)
#: Anything that looks like a marker, well formed or not (to catch typos).
LOOSE_MARK = re.compile(r"<!--\s*/?\s*everyday\b[^>]*-->")


def docs(root: Path = ROOT) -> list[Path]:
    """The files whose spans this module rewrites: README.md and docs/*.md."""
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def _duration(seconds: float) -> str:
    # under two minutes to the nearest 5 s ("85 s"), else to the nearest minute ("5 min")
    if seconds < 117.5:
        return f"{5 * round(seconds / 5)} s"
    return f"{round(seconds / 60)} min"


def _mmss(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole // 60}:{whole % 60:02d}"


#: format name -> (the units it accepts, how a value is written).
FORMATS: dict[str, tuple[tuple[str, ...], Callable[[float], str]]] = {
    "int": (("CPU-s", "files", "tests", "claims"), lambda v: f"{round(v):,}"),
    "dur": (("s",), _duration),
    "mmss": (("s",), _mmss),
    "s1": (("s",), lambda v: f"{v:.1f} s"),
    "gb": (("GB",), lambda v: f"{v:.2f} GB"),
    "cpu2": (("CPU-s",), lambda v: f"{v:.2f} CPU-s"),
}
#: The date a measure was taken (the ISO date that opens its ``measured_on``).
DATE = "date"


def read_table(path: Path = TABLE) -> dict[str, dict[str, str]]:
    """The table's rows by measure; a malformed table raises ``ValueError`` naming it."""
    with Path(path).open(newline="") as fh:
        reader = csv.DictReader(fh)
        if reader.fieldnames != FIELDS:
            raise ValueError(f"{path}: columns {reader.fieldnames}, expected {FIELDS}")
        rows = list(reader)
    table = {row["measure"]: row for row in rows}
    if len(table) != len(rows):
        raise ValueError(f"{path}: a measure appears twice")
    return table


def render(measure: str, fmt: str, table: Mapping[str, Mapping[str, str]],
           where: str = "") -> str:
    """The text of the span ``<!-- everyday:measure:fmt -->``."""
    if measure not in table:
        raise KeyError(f"{where}: the docs quote {measure!r}, which benchmarks/everyday.csv "
                       f"does not have (measures: {sorted(table)}); run "
                       f"python benchmarks/bench_everyday.py, or fix the span")
    row = table[measure]
    if fmt == DATE:
        found = re.match(r"\d{4}-\d{2}-\d{2}", row["measured_on"])
        if found is None:
            raise ValueError(f"everyday.csv: {measure}'s measured_on {row['measured_on']!r} "
                             "does not open with an ISO date")
        return found.group(0)
    if fmt not in FORMATS:
        raise KeyError(f"{where}: unknown format {fmt!r} for {measure} (formats: "
                       f"{sorted([*FORMATS, DATE])})")
    units, write = FORMATS[fmt]
    if row["unit"] not in units:
        raise ValueError(f"{where}: {measure} is in {row['unit']}, which format {fmt!r} does "
                         f"not write (it takes {units})")
    try:
        value = float(row["value"])
    except ValueError:
        raise ValueError(f"everyday.csv: {measure} has no number ({row['value']!r}); "
                         "measure it again") from None
    return write(value)


def rewrite(text: str, table: Mapping[str, Mapping[str, str]], where: str = "") -> str:
    """``text`` with every span's text rewritten from ``table``.

    A marker that is not part of a well-formed span raises ``ValueError`` (a typo would
    otherwise leave its number unowned).
    """
    def one(match: re.Match) -> str:
        line = text.count("\n", 0, match.start()) + 1
        body = render(match["measure"], match["fmt"], table, f"{where}:{line}")
        return f"<!-- everyday:{match['measure']}:{match['fmt']} -->{body}<!-- /everyday -->"

    rest = SPAN.sub("", text)
    stray = LOOSE_MARK.search(rest)
    if stray:
        line = rest.count("\n", 0, stray.start()) + 1
        raise ValueError(f"{where}: marker {stray.group(0)!r} (line {line} once the spans "
                         "are removed) is not part of a span <!-- everyday:MEASURE:FORMAT "
                         "-->TEXT<!-- /everyday -->")
    return SPAN.sub(one, text)


def update_docs(table_path: Path = TABLE, root: Path = ROOT, *, check: bool = False
                ) -> list[Path]:
    """Rewrite every span of :func:`docs` from the table; returns the files that changed
    (with ``check``, that would change; nothing is written)."""
    table = read_table(table_path)
    changed = []
    for path in docs(root):
        text = path.read_text(encoding="utf-8")
        new = rewrite(text, table, str(path.relative_to(root)))
        if new != text:
            changed.append(path)
            if not check:
                path.write_text(new, encoding="utf-8")
    return changed
