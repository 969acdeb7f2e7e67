"""The everyday loop, measured once and quoted everywhere: quick default, full run,
``snakemake verify`` and the test suite, each from a fresh clone's state.

Writes ``benchmarks/everyday.csv`` (one row per measure: value, unit, command, date and
cores). README.md and docs/*.md quote these values only through marked spans, which
``--docs`` rewrites from the table (``benchmarks/everyday_docs.py``);
tests/test_docs_numbers.py fails while a quoted number and the recorded one disagree.
Goals (issue: the everyday loop): quick default <= 90 s, full run <= 2:30,
``python -m pytest`` <= 5 min, all on 2 cores.

Besides times it records what the runs count: the files ``snakemake verify`` checks, the
rows of the claims tables (and, of the claims in both runs, how the quick verdicts
compare with the full ones), the full run's ``ldp_indicators`` verdicts, and the CPU
seconds of the quick default's Cox jobs (from Snakemake's ``benchmark:`` files, which
sample a job's processes every 0.5 s: up to about 0.5 CPU-s a job goes uncounted).

The same work takes this machine more or less CPU from one hour to the next. Before the
runs and after them it times two probes of fixed work, each the fastest of three: a
pure-Python loop (``machine_loop_cpu``, ``machine_loop_cpu_after``: the core's speed) and a
fresh interpreter importing pandas (``machine_import_cpu``, ``machine_import_cpu_after``:
what every job starts with, libraries mapped and memory first touched). Two measurements
are comparable where their probes agree.

Run on an otherwise idle machine (CPU seconds are comparable under load, wall times
are not), then quote the new values:

    python benchmarks/bench_everyday.py --pytest   # runs, verify, the test suite (~15 min)
    python benchmarks/bench_everyday.py            # runs and verify only (about 7 min)
    python benchmarks/bench_everyday.py --docs     # rewrite README.md and docs/ from it
"""

from __future__ import annotations

import argparse
import csv
import datetime
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

# run as a script, its folder is on sys.path
from everyday_docs import FIELDS, TABLE, update_docs

ROOT = Path(__file__).resolve().parents[1]
VERDICTS = ("holds", "fails", "inconclusive", "untestable")
DECIDED = ("holds", "fails")


def _timed(cmd: list[str], cwd: Path) -> tuple[float, float, float, str]:
    """(wall s, CPU s, peak RSS GB, output) of ``cmd`` with the children it waited for."""
    with tempfile.TemporaryFile("w+") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, text=True)
        # wait4: this child's own rusage (its reaped descendants included), not the sum
        # over every child this process ever had
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        output = out.read()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed (exit {proc.returncode}):\n{output[-5000:]}")
    # ru_maxrss is in KiB on Linux
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024**2, output


def _snakemake(work: Path, configfiles: list[str], *args: str) -> list[str]:
    # --configfile takes every word after it: it goes last
    return [sys.executable, "-m", "snakemake", "--snakefile", str(ROOT / "Snakefile"),
            "--directory", str(work), *args, "--configfile",
            *(str(ROOT / "config" / name) for name in configfiles)]


#: fixed work for the machine's speed: no import, no allocation beyond small integers
MACHINE_LOOP = "total = 0\nfor i in range(20_000_000):\n    total += i & 7\n"


#: what a job starts with: an interpreter, its site-packages and pandas (numpy, pyarrow)
MACHINE_IMPORT = "import pandas"


def machine_probe(code: str, *args: str, repeats: int = 3) -> float:
    """CPU seconds of ``python *args -c code`` in a fresh interpreter, the fastest of
    ``repeats``."""
    return min(_timed([sys.executable, *args, "-c", code], ROOT)[1] for _ in range(repeats))


def machine_rows(suffix: str = "") -> list[dict]:
    """The two probes of the machine's speed (see the module's docstring)."""
    loop = f"python -S -c <{MACHINE_LOOP.count(chr(10))}-line loop in bench_everyday.py>"
    return [_row(f"machine_loop_cpu{suffix}", machine_probe(MACHINE_LOOP, "-S"), "CPU-s",
                 loop, digits=2),
            _row(f"machine_import_cpu{suffix}", machine_probe(MACHINE_IMPORT), "CPU-s",
                 f'python -c "{MACHINE_IMPORT}"', digits=2)]


def _row(measure: str, value, unit: str, command: str, digits: int = 1) -> dict:
    text = f"{value:.{digits}f}" if isinstance(value, float) else str(value)
    return {"measure": measure, "value": text, "unit": unit, "command": command}


def _verify(work: Path, configfiles: list[str], name: str) -> list[dict]:
    wall, _, _, output = _timed(_snakemake(work, configfiles, "verify", "--cores", "1"), ROOT)
    log = work / "results" / "logs" / "verify" / "verify.log"
    output += log.read_text() if log.exists() else ""
    found = re.search(r"(\d+) files checked, 0 with mismatches", output)
    if found is None:
        raise SystemExit(f"verify of the {name} run reported no clean file count:\n"
                         f"{output[-2000:]}")
    command = "snakemake verify --cores 1"
    rows = [_row(f"verify_files_{name}", int(found.group(1)), "files", command)]
    # the docs quote the quick default's time (the full run's is about twice it)
    return rows + ([_row("verify_wall_quick", wall, "s", command)] if name == "quick" else [])


def _verdicts(path: Path) -> dict[str, str]:
    """claim_id -> verdict of a claims table."""
    with path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    verdicts = {row["claim_id"]: row["verdict"] for row in rows}
    if len(verdicts) != len(rows):
        raise SystemExit(f"{path}: a claim_id appears twice")
    return verdicts


def cox_cpu(work: Path) -> dict[str, float]:
    """CPU seconds of each ``rrr_cox`` job (by cohort), from its benchmark file."""
    found = {}
    for tsv in sorted((work / "results" / "benchmarks" / "rrr_cox").glob("*.tsv")):
        with tsv.open(newline="") as fh:
            (record,) = list(csv.DictReader(fh, delimiter="\t"))
        found[tsv.stem] = float(record["cpu_time"])
    if "ipssr" not in found:
        raise SystemExit(f"no rrr_cox benchmark of ipssr under {work}/results/benchmarks")
    return found


def compare_claims(quick: dict[str, str], full: dict[str, str]) -> dict[str, int]:
    """How the quick default's verdicts compare with the full run's, over the claims both
    runs have (by ``claim_id``)."""
    both = sorted(set(quick) & set(full))
    pairs = Counter((full[c], quick[c]) for c in both)
    return {
        "claims_both_hold": pairs["holds", "holds"],
        "claims_both_fail": pairs["fails", "fails"],
        "claims_decided_to_inconclusive": sum(pairs[d, "inconclusive"] for d in DECIDED),
        "claims_inconclusive_to_decided": sum(pairs["inconclusive", d] for d in DECIDED),
        "claims_opposite": pairs["holds", "fails"] + pairs["fails", "holds"],
    }


def measure_runs() -> list[dict]:
    rows, verdicts = [], {}
    for name, configfiles in (("quick", ["config.yaml"]), ("full", ["full.yaml"])):
        command = "snakemake --cores 2" + (" --configfile config/full.yaml"
                                           if name == "full" else "")
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            wall, cpu, rss, _ = _timed(_snakemake(work, configfiles, "--cores", "2"), ROOT)
            rows += [_row(f"{name}_wall", wall, "s", command),
                     _row(f"{name}_cpu", cpu, "CPU-s", command),
                     _row(f"{name}_rss", rss, "GB", command, digits=3)]
            rows += _verify(work, configfiles, name)
            verdicts[name] = _verdicts(work / "results" / "claims.csv")
            rows.append(_row(f"claims_rows_{name}", len(verdicts[name]), "claims", command))
            if name == "quick":
                cox = cox_cpu(work)
                rows += [_row("cox_cpu_quick", sum(cox.values()), "CPU-s", command),
                         _row("cox_cpu_quick_ipssr", cox["ipssr"], "CPU-s", command)]
            else:
                ldp = _verdicts(work / "results" / "ldp_indicators" / "tables" / "claims.csv")
                counts = Counter(ldp.values())
                rows.append(_row("ldp_claims_full", len(ldp), "claims", command))
                rows += [_row(f"ldp_claims_full_{v}", counts[v], "claims", command)
                         for v in VERDICTS]
    both = "both runs' results/claims.csv"
    rows += [_row(m, n, "claims", both)
             for m, n in compare_claims(verdicts["quick"], verdicts["full"]).items()]
    return rows


def measure_pytest() -> list[dict]:
    rows = []
    for measure, extra in (("pytest", []), ("pytest_unit", ["-m", "not workflow"])):
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra]
        wall, _, _, output = _timed(cmd, ROOT)
        command = "python -m pytest" + (' -m "not workflow"' if extra else "")
        rows.append(_row(f"{measure}_wall", wall, "s", command))
        if not extra:
            found = re.search(r"(\d+) passed", output)
            if found is None:
                raise SystemExit(f"pytest printed no count of passed tests:\n{output[-2000:]}")
            rows.append(_row("pytest_passed", int(found.group(1)), "tests", command))
    return rows


def record(rows: list[dict], table: Path = TABLE) -> None:
    """Merge ``rows`` into the table (a measure not measured now keeps its old row)."""
    today = datetime.date.today().isoformat()
    machine = f"{os.cpu_count()} cores"
    kept = {}
    if table.exists():
        with table.open(newline="") as fh:
            kept = {row["measure"]: row for row in csv.DictReader(fh)}
    for row in rows:
        kept[row["measure"]] = {**row, "measured_on": f"{today}, {machine}"}
    with table.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(kept[m] for m in sorted(kept))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pytest", action="store_true", help="also time python -m pytest")
    parser.add_argument("--only-pytest", action="store_true", help="time python -m pytest only")
    parser.add_argument("--docs", action="store_true",
                        help="measure nothing: rewrite the numbers README.md and docs/*.md "
                             "quote from benchmarks/everyday.csv")
    parser.add_argument("--check", action="store_true",
                        help="with --docs: write nothing, exit 1 if a doc is out of date")
    parser.add_argument("--table", type=Path, default=TABLE,
                        help="the table (default: %(default)s)")
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="with --docs: the checkout whose docs to rewrite")
    args = parser.parse_args()
    if args.docs:
        changed = update_docs(args.table, args.root, check=args.check)
        for path in changed:
            print(f"{'out of date' if args.check else 'updated'}: {path.relative_to(args.root)}")
        sys.exit(1 if args.check and changed else 0)
    rows = machine_rows()
    rows += [] if args.only_pytest else measure_runs()
    if args.pytest or args.only_pytest:
        rows += measure_pytest()
    rows += machine_rows("_after")
    record(rows, args.table)
    for row in rows:
        print(f"{row['measure']:>32}: {row['value']} {row['unit']}")
    print("now: python benchmarks/bench_everyday.py --docs")
