"""The numbers README.md and docs/*.md print about the everyday loop (run times, CPU
seconds, peak memory, test, file and claim counts) are the ones benchmarks/everyday.csv
records, and they are printed only through the marked spans that
``python benchmarks/bench_everyday.py --docs`` rewrites. Offline and fast: no run.

The files ``snakemake verify`` checks are also compared with what the workflow plans
(tests/test_workflow.py, on the dry runs it makes anyway).
"""

import csv
import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "benchmarks" / "everyday.csv"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# the generated catalogue (its counts are the declarations', tests/test_claims_registry.py)
# and the history (CHANGELOG.md is not among DOCS) quote no everyday figure
UNQUOTED = {ROOT / "docs" / "claims.md"}
# the span syntax, written here again rather than imported: the test reads the docs as a
# reader's tool would
SPAN = re.compile(r"<!-- everyday:([a-z0-9_]+):([a-z0-9]+) -->(.*?)<!-- /everyday -->", re.S)
PLACEHOLDER = "‹quoted›"
COUNT_UNITS = {"files", "tests", "claims"}
UNITS = {"s", "CPU-s", "GB", *COUNT_UNITS}


def load_module(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_docs_module():
    return load_module("everyday_docs")


def read_table() -> list[dict]:
    with TABLE.open(newline="") as fh:
        return list(csv.DictReader(fh))


TABLE_ROWS = read_table()
BY_MEASURE = {row["measure"]: row for row in TABLE_ROWS}


def spans():
    """(doc, line, measure, format, text) of every marked span."""
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for match in SPAN.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            yield path.relative_to(ROOT).as_posix(), line, *match.groups()


def value(measure: str) -> float:
    return float(BY_MEASURE[measure]["value"])


def test_the_table_is_well_formed():
    with TABLE.open(newline="") as fh:
        assert csv.DictReader(fh).fieldnames == ["measure", "value", "unit", "command",
                                                 "measured_on"]
    measures = [row["measure"] for row in TABLE_ROWS]
    assert measures == sorted(set(measures)), "one row per measure, sorted (as the bench writes)"
    for row in TABLE_ROWS:
        where = f"everyday.csv, {row['measure']}"
        assert row["unit"] in UNITS, where
        number = float(row["value"])
        assert number >= 0, where
        if row["unit"] in COUNT_UNITS:
            assert row["value"].isdigit(), f"{where}: a count is a whole number"
        assert re.match(r"\d{4}-\d{2}-\d{2}, \d+ cores", row["measured_on"]), where
        assert row["command"].strip(), where


def test_the_tables_counts_agree_with_each_other():
    """Relations the measures must satisfy whatever the code: a slip in the bench or a
    hand edit shows here."""
    verdicts = ("holds", "fails", "inconclusive", "untestable")
    assert value("ldp_claims_full") == sum(value(f"ldp_claims_full_{v}") for v in verdicts)
    compared = sum(value(m) for m in ("claims_both_hold", "claims_both_fail",
                                      "claims_decided_to_inconclusive",
                                      "claims_inconclusive_to_decided", "claims_opposite"))
    assert compared <= min(value("claims_rows_quick"), value("claims_rows_full"))
    # the full run's ldp claims are among its rows; the quick default's outputs are among
    # the full run's (tests/test_workflow.py)
    assert value("ldp_claims_full") <= value("claims_rows_full")
    assert value("verify_files_quick") <= value("verify_files_full")
    assert value("cox_cpu_quick_ipssr") <= value("cox_cpu_quick") < value("quick_cpu")
    assert value("pytest_unit_wall") < value("pytest_wall")


def parsed(fmt: str, text: str) -> tuple[float, float]:
    """(the quantity a span's text states, the step it was rounded to)."""
    patterns = {
        "int": (r"(\d{1,3}(?:,\d{3})*)", lambda m: (int(m[1].replace(",", "")), 1)),
        "mmss": (r"(\d+):([0-5]\d)", lambda m: (60 * int(m[1]) + int(m[2]), 1)),
        "s1": (r"(\d+\.\d) s", lambda m: (float(m[1]), 0.1)),
        "cpu2": (r"(\d+\.\d\d) CPU-s", lambda m: (float(m[1]), 0.01)),
        "gb": (r"(\d+\.\d\d) GB", lambda m: (float(m[1]), 0.01)),
        "dur": (r"(\d+) (s|min)", lambda m: ((int(m[1]), 5) if m[2] == "s"
                                             else (60 * int(m[1]), 60))),
    }
    assert fmt in patterns, f"unknown format {fmt!r}"
    pattern, read = patterns[fmt]
    match = re.fullmatch(pattern, text)
    assert match, f"{text!r} is not written as format {fmt!r} writes"
    return read(match)


def test_every_quoted_number_is_the_tables():
    wrong = []
    for doc, line, measure, fmt, text in spans():
        where = f"{doc}:{line}: {measure}"
        assert measure in BY_MEASURE, f"{where}: not a measure of benchmarks/everyday.csv"
        row = BY_MEASURE[measure]
        if fmt == "date":
            if text != row["measured_on"][:10]:
                wrong.append(f"{where} dated {text!r}, measured {row['measured_on']}")
            continue
        stated, step = parsed(fmt, text)
        recorded = float(row["value"])
        if abs(stated - recorded) > step / 2 + 1e-9:
            wrong.append(f"{where} quoted as {text!r}, the table has {row['value']} "
                         f"{row['unit']}")
    assert not wrong, ("docs disagree with benchmarks/everyday.csv (python "
                       "benchmarks/bench_everyday.py --docs rewrites them):\n"
                       + "\n".join(wrong))


def test_the_docs_step_would_change_nothing():
    """The exact text ``--docs`` writes (rounding, separators, units) is what the docs
    have."""
    stale = load_docs_module().update_docs(TABLE, ROOT, check=True)
    assert not stale, (f"{[p.relative_to(ROOT).as_posix() for p in stale]} differ from "
                       "what python benchmarks/bench_everyday.py --docs writes")


def test_every_measure_is_quoted_and_the_readme_quotes_the_loop():
    quoted = {measure for _, _, measure, _, _ in spans()}
    assert quoted == set(BY_MEASURE), (
        f"measured, never quoted: {sorted(set(BY_MEASURE) - quoted)}; quoted, never "
        f"measured: {sorted(quoted - set(BY_MEASURE))}")
    readme = {measure for doc, _, measure, _, _ in spans() if doc == "README.md"}
    assert {"quick_wall", "quick_cpu", "full_wall", "pytest_wall",
            "verify_files_quick"} <= readme


def test_no_span_sits_where_its_markers_would_show():
    """In code the comments print as text; a line that opens with ``<!--`` starts an HTML
    block in CommonMark, which ends the paragraph and shows the rest of the line raw."""
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        opening = re.search(r"(?m)^ {0,3}<!-- */?everyday", text)
        assert opening is None, (f"{path.name}:{text.count(chr(10), 0, opening.start()) + 1}: "
                                 "a line opens with a span; reflow so a word comes first")
        for block in re.findall(r"```.*?```", text, re.S) + re.findall(r"`[^`\n]*`", text):
            assert "everyday:" not in block, f"{path.name}: a span inside code: {block[:80]!r}"


TIME = r"\d[\d.,:]*\s*(?:s|min|minutes|CPU-s|GB)\b|\b\d+:\d\d\b"
#: What the everyday loop's numbers look like when printed by hand; each pattern is
#: matched on the docs with every span replaced by a placeholder without digits.
FORBIDDEN = {
    "a time on two cores": rf"(?:{TIME})[^.|;]{{0,40}}?\bon\s+(?:2|two)\s+cores",
    "a count of tests, files or claims": r"\b\d[\d,]*\s+(?:tests|files|claims)\b",
    "verify's time": r"\bfiles\s+in\s+\d",
    "the Cox jobs' CPU": r"\bCox\s+jobs?\b[^.|]{0,30}?\d[\d.]*\s*CPU-s",
    "the test suite's time": r"\b(?:unit\s+tests|test\s+suite|whole\s+suite)\b[^.|]{0,50}?"
                             rf"(?:{TIME})",
    "a figure in the everyday loop's table rows": r"(?m)^\|\s*(?:quick default|full run|"
                                                  r"`python -m pytest`|`snakemake verify`)"
                                                  rf"\b[^\n]*?(?:{TIME})",
}


def unquoted_everyday_numbers(text: str) -> list[tuple[str, str]]:
    """(kind, text) of each everyday number ``text`` prints outside a span."""
    bare = SPAN.sub(PLACEHOLDER, text)
    return [(kind, match.group(0)) for kind, pattern in FORBIDDEN.items()
            for match in re.finditer(pattern, bare)]


def test_no_everyday_number_is_printed_outside_a_span():
    found = []
    for path in DOCS:
        if path in UNQUOTED:
            continue
        text = path.read_text(encoding="utf-8")
        bare = SPAN.sub(PLACEHOLDER, text)
        for kind, pattern in FORBIDDEN.items():
            for match in re.finditer(pattern, bare):
                line = bare.count("\n", 0, match.start()) + 1
                found.append(f"{path.name}:{line}: {kind}: {match.group(0)[:90]!r}")
    assert not found, ("quote these from benchmarks/everyday.csv through a span "
                       "<!-- everyday:MEASURE:FORMAT -->…<!-- /everyday --> (see "
                       "benchmarks/everyday_docs.py), or date them as history:\n"
                       + "\n".join(found))


@pytest.mark.parametrize("old", [
    # the phrasings the docs used before the table, each of which went stale
    "offline, in about 90 s\non two cores (about 160 CPU-s)",
    "python -m pytest -m \"not workflow\"  # unit tests only (about 70 s on 2 cores)",
    "*inconclusive* or *untestable*; 143 claims at 95 % each",
    "It has 235 claims rows",
    "mismatches and fails on any (<!-- everyday:verify_files_quick:int -->270"
    "<!-- /everyday --> files in 1.7 s for the quick default)",
    "quick default (40 draws, B = 8; Cox jobs about 11 CPU-s together",
    "| quick default | `snakemake --cores all` | none | about 90 s |",
    "| full run, from nothing | **5:16.9 wall** (2026-12-05) | how |",
    "| `python -m pytest` | 1,493 tests in 6:18 wall | `python -m pytest` |",
    "runs the unit tests alone (about 3 minutes).",
    "B = 50 took the full run from 5:27 to 8:46 on two cores",
])
def test_the_guard_catches_the_old_phrasings(old):
    assert unquoted_everyday_numbers(old)


def test_the_guard_passes_the_same_phrasings_through_spans():
    ok = ("offline, in about <!-- everyday:quick_wall:dur -->85 s<!-- /everyday -->\non two "
          "cores (<!-- everyday:quick_cpu:int -->146<!-- /everyday --> CPU-s); "
          "| quick default | `snakemake --cores 2` | about "
          "<!-- everyday:quick_wall:dur -->85 s<!-- /everyday --> on 2 cores |")
    assert unquoted_everyday_numbers(ok) == []


def test_the_docs_step_rounds_and_refuses_as_documented():
    docs = load_docs_module()
    table = {"t": {"measure": "t", "value": "117.4", "unit": "s", "command": "c",
                   "measured_on": "2026-12-06, 2 cores"},
             "u": {"measure": "u", "value": "117.6", "unit": "s", "command": "c",
                   "measured_on": "2026-12-06, 2 cores"},
             "n": {"measure": "n", "value": "1493", "unit": "tests", "command": "c",
                   "measured_on": "2026-12-06, 2 cores"}}
    text = ("<!-- everyday:t:dur -->?<!-- /everyday --> <!-- everyday:u:dur -->?<!-- "
            "/everyday --> <!-- everyday:t:mmss -->?<!-- /everyday --> <!-- everyday:n:int "
            "-->?<!-- /everyday --> <!-- everyday:n:date -->?<!-- /everyday -->")
    out = SPAN.sub(lambda m: m[3], docs.rewrite(text, table, "x.md"))
    assert out == "115 s 2 min 1:57 1,493 2026-12-06"
    with pytest.raises(KeyError, match="'gone'.*bench_everyday"):
        docs.rewrite("<!-- everyday:gone:int -->1<!-- /everyday -->", table, "x.md")
    with pytest.raises(ValueError, match="n is in tests.*'dur'"):
        docs.rewrite("<!-- everyday:n:dur -->1<!-- /everyday -->", table, "x.md")
    with pytest.raises(ValueError, match="not part of a span"):
        docs.rewrite("<!-- everyday:n:int -->1 <!-- /everyday", table, "x.md")


@pytest.fixture
def bench(monkeypatch):
    """benchmarks/bench_everyday.py as a module (run as a script, its folder is on sys.path
    and it imports everyday_docs from there)."""
    monkeypatch.setitem(sys.modules, "everyday_docs", load_docs_module())
    return load_module("bench_everyday")


def test_the_bench_compares_verdicts_claim_by_claim(bench):
    full = {"a": "holds", "b": "fails", "c": "holds", "d": "inconclusive", "e": "fails",
            "f": "untestable", "only_full": "holds"}
    quick = {"a": "holds", "b": "fails", "c": "inconclusive", "d": "holds", "e": "holds",
             "f": "inconclusive", "only_quick": "fails"}
    assert bench.compare_claims(quick, full) == {
        "claims_both_hold": 1, "claims_both_fail": 1, "claims_decided_to_inconclusive": 1,
        "claims_inconclusive_to_decided": 1, "claims_opposite": 1}


def test_the_bench_reads_the_cox_jobs_cpu_from_snakemakes_benchmark_files(bench, tmp_path):
    folder = tmp_path / "results" / "benchmarks" / "rrr_cox"
    folder.mkdir(parents=True)
    header = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    for cohort, cpu in (("ipssr", "7.91"), ("kidney", "1.20"), ("sim300", "2.05")):
        (folder / f"{cohort}.tsv").write_text(
            header + f"9.1\t0:00:09\t300.1\t900.2\t250.0\t260.0\t0.00\t0.01\t90.0\t{cpu}\n")
    assert bench.cox_cpu(tmp_path) == {"ipssr": 7.91, "kidney": 1.2, "sim300": 2.05}


def test_the_bench_times_the_whole_process_tree(bench):
    """CPU and peak RSS of a command include its children's (a Snakemake run's jobs)."""
    child = "x = bytearray(100 * 2**20); sum(range(10**6))"
    code = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {child!r}])"
    wall, cpu, rss, _ = bench._timed([sys.executable, "-c", code], ROOT)
    assert rss >= 0.095 and 0 < cpu and 0 < wall
    with pytest.raises(SystemExit, match="exit 3"):
        bench._timed([sys.executable, "-c", "import sys; sys.exit(3)"], ROOT)
