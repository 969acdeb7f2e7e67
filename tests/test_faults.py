"""Faults: a killed workflow resumes to identical tables; a failing job leaves nothing behind;
a fault in one cohort leaves every other cohort's files as they were."""

import hashlib
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from helpers import background
from helpers.smallruns import SMALL

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.workflow


def tables(work):
    return {p.relative_to(work): p.read_bytes() for p in (work / "results").rglob("*.csv")}


def test_sigkill_mid_job_then_rerun_gives_identical_tables(small_run, killed_run):
    """The small configuration's --cores 1 run, killed once its first job had started,
    unlocked and resumed (conftest.killed_run), has the tables of the uninterrupted
    --cores 2 run (conftest.small_run): same bytes at the same paths. (Its figures are left
    out; tests/test_workflow.py compares the same two runs' tables across --cores.)"""
    killed, record = killed_run
    assert record["returncode"] == -signal.SIGKILL
    interrupted, resumed, clean = record["tables"], tables(killed), tables(small_run)
    assert len(interrupted) < len(resumed), "the kill came too late to interrupt anything"
    # the resume succeeded (smallruns checks), so every study's tables are there
    assert {p.parts[1] for p in resumed if p.parent.name == "tables"} >= {
        "ldp_indicators", "rrr_survival", "repr_transfer"}, sorted(resumed)
    assert set(resumed) <= set(clean), sorted(set(resumed) - set(clean))
    for path, content in resumed.items():
        assert content == clean[path], f"{path} differs from the uninterrupted run"
    assert not list((killed / "results").rglob("*.part")), "a half-written file was left behind"


@background.register("failing_job")
def _failing_job_run(tmp_path: Path) -> tuple[subprocess.CompletedProcess, Path]:
    """The run of test_failing_job_leaves_no_partial_output: a cohort read from an installed
    package (not on disk before the run, so checked by its job, not before it) whose group
    column does not exist; the process and the missing column's name."""
    bad = "no_such_column"
    config = yaml.safe_load(SMALL.read_text())
    config["datasets"]["ipssr"] = {"source": "package",
                                   "package": "lifelines.datasets:load_larynx",
                                   "columns": {"id": "", "time": "time", "status": "death",
                                               "group": bad}, "groups": ["I", "II"],
                                   "group_aliases": {}, "time_unit": "years"}
    configfile = tmp_path / "bad.yaml"
    configfile.write_text(yaml.safe_dump(config))
    target = "results/data/cohorts/ipssr.parquet"
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", target, "--cores", "1", "--snakefile",
         str(ROOT / "Snakefile"), "--directory", str(tmp_path), "--configfile", str(configfile)],
        capture_output=True, text=True, timeout=300)
    return proc, bad


@pytest.mark.background("failing_job")
def test_failing_job_leaves_no_partial_output(tmp_path):
    proc, bad = background.result("failing_job", tmp_path)
    tmp_path = background.folder("failing_job")
    assert proc.returncode != 0
    log = (tmp_path / "results" / "logs" / "rrr_cohort" / "ipssr.log").read_text()
    assert f"missing column(s) ['{bad}']" in log
    cohorts = tmp_path / "results" / "data" / "cohorts"
    assert not (cohorts / "ipssr.parquet").exists()
    assert not list(cohorts.glob("*")) if cohorts.exists() else True


FAULT_COHORT = '''"""A package cohort whose id p1 has rows in two arms (a test's fault)."""
import pandas as pd


def load():
    ids = [f"p{i}" for i in range(40)] + ["p1"]
    return pd.DataFrame({"id": ids, "time": [float(1 + i % 9) for i in range(41)],
                         "status": [1, 1, 0] * 13 + [1, 1],
                         "arm": ["A", "B"] * 20 + ["A"]})
'''
#: the privacy audit's tables, which the new cohort's RRR setting extends
AUDIT_TABLES = ("results/audit/privacy_audit.csv", "results/audit/claims.csv")
# the files that the failing jobs of the damaged cohort (toy) may take with them
TOY_JOB_FILES = ("results/rrr_survival/releases/toy/", "results/rrr_survival/cox/toy/")


def _state(work: Path) -> dict[str, tuple[str, int]]:
    """sha256 and mtime of every file under results/ but the logs and benchmarks."""
    return {p.relative_to(work).as_posix(): (hashlib.sha256(p.read_bytes()).hexdigest(),
                                             p.stat().st_mtime_ns)
            for p in (work / "results").rglob("*") if p.is_file()
            and not p.relative_to(work).as_posix().startswith(("results/logs/",
                                                               "results/benchmarks/"))}


def test_a_fault_in_one_cohort_leaves_every_other_cohorts_file_as_it_was(small_run, tmp_path):
    """A copy of the session's run, then a run with two faults found only inside jobs: a new
    cohort ``bad`` from a package (so not on disk before the run) with an id in two arms,
    and ``toy``'s cohort table damaged after it was built, which its analysis jobs read.
    With --keep-going every job that can run runs; the jobs that fail remove their own
    outputs, which are toy's and bad's alone: every other file (ipssr's, kidney's, the
    aggregated tables, claims.csv, the manifest) keeps its bytes and is not rewritten."""
    # a copy as deep as the run: bundled inputs are named relative to the run's folder, and
    # another relative path would rerun their cohorts' jobs (a change of input files)
    work = tmp_path
    shutil.copytree(small_run, work, symlinks=True, dirs_exist_ok=True)
    assert os.path.relpath(ROOT, work) == os.path.relpath(ROOT, small_run)
    (work / "results" / "data" / "cohorts" / "toy.parquet").write_bytes(b"no parquet")
    before = _state(work)
    audit_before = {name: (work / name).read_text().splitlines() for name in AUDIT_TABLES}
    package = tmp_path / "fault"
    package.mkdir()
    (package / "fault_cohort.py").write_text(FAULT_COHORT)
    config = yaml.safe_load(SMALL.read_text())
    config["rrr_survival"]["datasets"].append("bad")
    config["datasets"]["bad"] = {
        "source": "package", "package": "fault_cohort:load", "groups": ["A", "B"],
        "columns": {"id": "id", "time": "time", "status": "status", "group": "arm"},
        "rows_per_person": 2, "horizon": 9}
    configfile = package / "bad.yaml"
    configfile.write_text(yaml.safe_dump(config))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(package), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "2", "--keep-going", "--snakefile",
         str(ROOT / "Snakefile"), "--directory", str(work), "--configfile", str(configfile)],
        capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode != 0
    after = _state(work)
    gone = sorted(set(before) - set(after))
    assert gone and all(path.startswith(TOY_JOB_FILES) for path in gone), gone
    assert sorted(set(after) - set(before)) == []
    changed = sorted(path for path in after if after[path] != before[path])
    assert [path for path in changed if not path.startswith("results/audit/")] == [], changed
    # the privacy audit is the run's, not a cohort's: bad's two arms add an RRR setting
    # (k = 2) it audits, so its tables gain rows and keep every earlier row byte for byte
    # (each row's draws are keyed by its settings); nothing else of the audit's changes
    for name, lines in audit_before.items():
        now = (work / name).read_text().splitlines()
        assert now[0] == lines[0] and set(lines) <= set(now), name
        added = [line for line in now if line not in set(lines)]
        assert added and all("k=2" in line or "k_2" in line for line in added), added
    assert any("/ipssr/" in path for path in after) and "results/claims.csv" in after
    assert "results/run_manifest.json" in after
    # what failed inside a job names the cohort and its key
    logs = work / "results" / "logs"
    log = (logs / "rrr_cohort" / "bad.log").read_text()
    assert "'datasets.bad.columns.group'" in log and "id 'p1' in ['A', 'B']" in log
    log = (logs / "rrr_original" / "toy.log").read_text()
    assert "failed for cohort 'toy' (config key datasets.toy)" in log
