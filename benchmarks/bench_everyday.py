"""The everyday loop, measured once and quoted everywhere: quick default, full run,
``snakemake verify`` and the test suite, each from a fresh clone's state.

Writes ``benchmarks/everyday.csv`` (one row per measure); README.md and docs/ quote
these values rounded, and tests/test_docs_numbers.py fails while a quoted number and
the recorded one disagree. Goals (issue: the everyday loop): quick default <= 90 s, full
run <= 2:30, ``python -m pytest`` <= 5 min, all on 2 cores.

Run on an otherwise idle machine (CPU seconds are comparable under load, wall times
are not):

    python benchmarks/bench_everyday.py            # runs and verify (about 5 min)
    python benchmarks/bench_everyday.py --pytest   # also the test suite (minutes more)
"""

from __future__ import annotations

import argparse
import csv
import datetime
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "benchmarks" / "everyday.csv"
FIELDS = ["measure", "value", "unit", "command", "measured_on"]


def _timed(cmd: list[str], cwd: Path) -> tuple[float, float, str]:
    """(wall s, CPU s of the command and its children, output)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stdout + proc.stderr


def _snakemake(work: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "snakemake", "--snakefile", str(ROOT / "Snakefile"),
            "--directory", str(work), "--configfile", str(ROOT / "config" / "config.yaml"),
            *args]


def measure_runs() -> list[dict]:
    rows = []
    for name, overlay in (("quick", []), ("full", [str(ROOT / "config" / "full.yaml")])):
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            extra = [*overlay] if overlay else []
            cmd = _snakemake(work, "--cores", "2", *extra)
            wall, cpu, _ = _timed(cmd, ROOT)
            label = "snakemake --cores 2" + (" --configfile config/full.yaml" if overlay else "")
            rows += [{"measure": f"{name}_wall", "value": f"{wall:.1f}", "unit": "s",
                      "command": label},
                     {"measure": f"{name}_cpu", "value": f"{cpu:.1f}", "unit": "CPU-s",
                      "command": label}]
            if name == "quick":
                wall, _, output = _timed(_snakemake(work, "verify", "--cores", "1"), ROOT)
                log = work / "results" / "logs" / "verify" / "verify.log"
                output += log.read_text() if log.exists() else ""
                found = re.search(r"(\d+) files checked", output)
                if found is None:
                    raise SystemExit(f"verify printed no file count:\n{output[-2000:]}")
                rows += [{"measure": "verify_files_quick", "value": found.group(1),
                          "unit": "files", "command": "snakemake verify --cores 1"},
                         {"measure": "verify_wall_quick", "value": f"{wall:.1f}", "unit": "s",
                          "command": "snakemake verify --cores 1"}]
    return rows


def measure_pytest() -> list[dict]:
    wall, _, output = _timed([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                             ROOT)
    found = re.search(r"(\d+) passed", output)
    return [{"measure": "pytest_wall", "value": f"{wall:.1f}", "unit": "s",
             "command": "python -m pytest"},
            {"measure": "pytest_passed", "value": found.group(1) if found else "",
             "unit": "tests", "command": "python -m pytest"}]


def record(rows: list[dict]) -> None:
    """Merge ``rows`` into the table (a measure not measured now keeps its old row)."""
    today = datetime.date.today().isoformat()
    machine = f"{os.cpu_count()} cores"
    kept = {}
    if TABLE.exists():
        with TABLE.open(newline="") as fh:
            kept = {row["measure"]: row for row in csv.DictReader(fh)}
    for row in rows:
        kept[row["measure"]] = {**row, "measured_on": f"{today}, {machine}"}
    with TABLE.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(kept[m] for m in sorted(kept))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pytest", action="store_true", help="also time python -m pytest")
    parser.add_argument("--only-pytest", action="store_true", help="time python -m pytest only")
    args = parser.parse_args()
    rows = [] if args.only_pytest else measure_runs()
    if args.pytest or args.only_pytest:
        rows += measure_pytest()
    record(rows)
    for row in rows:
        print(f"{row['measure']:>20}: {row['value']} {row['unit']}")
