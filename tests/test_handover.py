"""Results that travel: a run moved or handed over stays up to date and verifies itself.

One small run of the rrr_survival study (kidney, one ε) is made in a copy of the
checkout, the way a user runs it (no --directory); the tests copy it, run it again
elsewhere, edit copies and unpack an archive of it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

from helpers import background, snakerun
from helpers.recipes import (
    code_blocks,
    inline_commands,
    run,
    run_shell_block,
    section,
    snakemake_command,
)

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.workflow

CHECKOUT = ("Snakefile", "workflow", "scripts", "config", "envs", "profiles", "resources")
CONFIG = {"studies": ["rrr_survival"], "figures": {"dpi": 50},
          "rrr_survival": {"datasets": ["kidney"], "epsilons": [1], "draws": 3}}


def snakemake(work: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    # targets before --configfile, which takes several files
    cmd = [sys.executable, "-m", "snakemake", *args, "--cores", "2", "--configfile",
           "handover.yaml"]
    if "-n" in args:  # no job runs: a fork of tests/helpers/snakerun.py's server
        proc = snakerun.run(cmd[3:], cwd=work, timeout=900)
    else:
        proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=900)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed in {work}:\n"
                             f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def checkout_copy(folder: Path) -> Path:
    folder.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", ".snakemake", "results")
    for name in CHECKOUT:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, folder / name, ignore=ignore)
        else:
            shutil.copy2(source, folder / name)
    (folder / "handover.yaml").write_text(yaml.safe_dump(CONFIG))
    return folder


def _run(folder: Path) -> Path:
    """A run of CONFIG in a checkout copy of its own under ``folder``: the copy."""
    work = checkout_copy(folder / "work")
    snakemake(work)
    return work


# The two runs are background runs (tests/helpers/background.py), started with the
# workflow tests: they share the cores with the other runs instead of queueing behind them.
RUNS = ("handover:first", "handover:second")
for _name in RUNS:
    background.register(_name)(_run)
pytestmark = [pytestmark, *(pytest.mark.background(name) for name in RUNS)]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two runs of the same configuration in two directories; a folder for copies of them."""
    first, second = (background.result(name, tmp_path_factory.mktemp("handover"))
                     for name in RUNS)
    return tmp_path_factory.mktemp("handover_copies"), first, second


def sidecars(work: Path) -> dict[str, bytes]:
    return {p.relative_to(work).as_posix(): p.read_bytes()
            for p in sorted((work / "results").rglob("*.prov.json"))}


def test_a_run_copied_elsewhere_plans_no_job(runs):
    base, first, _ = runs
    moved = base / "moved"
    shutil.copytree(first, moved, symlinks=True)
    out = snakemake(moved, "-n").stdout
    assert "Nothing to be done" in out, out[-2000:]


def test_two_runs_in_two_directories_write_identical_sidecars(runs):
    _, first, second = runs
    one, two = sidecars(first), sidecars(second)
    assert one and one.keys() == two.keys()
    assert [name for name in one if one[name] != two[name]] == []
    for text in one.values():  # no producer's directory in a sidecar
        assert not any(str(work.parent).encode() in text for work in (first, second))


def test_verify_passes_on_a_complete_run(runs):
    _, first, _ = runs
    out = snakemake(first, "verify").stdout
    assert ", 0 with mismatches" in out, out[-2000:]
    assert "MISMATCH" not in out
    every_file = (first / "results" / "logs" / "verify" / "verify_report.txt").read_text()
    assert every_file.count("ok       results/") >= 10


def test_verify_names_each_kind_of_change(runs):
    base, first, _ = runs
    work = base / "edited"
    shutil.copytree(first, work, symlinks=True)
    results = work / "results" / "rrr_survival"
    table = results / "tables" / "median_survival.csv"
    table.write_text(table.read_text() + "kidney,edited\n")
    cohort = work / "resources" / "kidney" / "kidney.csv"
    cohort.write_text(cohort.read_text() + "\n")
    (work / "scripts" / "rrr_plot.py").write_text(
        (work / "scripts" / "rrr_plot.py").read_text() + "\n# edited\n")
    km = work / "scripts" / "dprepro" / "survival" / "kaplan_meier.py"
    km.write_text(km.read_text() + "\n# edited\n")
    rules = work / "workflow" / "rules" / "rrr_survival.smk"
    rules.write_text(rules.read_text() + "\n# edited\n")
    for gone in (results / "tables" / "utility.csv", results / "tables" / "utility.csv.prov.json"):
        gone.unlink()
    (results / "tables" / "extra.csv").write_text("x\n1\n")
    changed = dict(CONFIG, rrr_survival={**CONFIG["rrr_survival"], "draws": 4})
    (work / "handover.yaml").write_text(yaml.safe_dump(changed))
    proc = snakemake(work, "verify", check=False)
    assert proc.returncode != 0
    out = proc.stdout
    tables = "results/rrr_survival/tables"
    assert f"MISMATCH {tables}/median_survival.csv: output: sha256" in out
    assert "input: table (resources/kidney/kidney.csv) changed since" in out
    assert "results/rrr_survival/figures/utility.pdf: script: scripts/rrr_plot.py" in out
    # the changed module is named
    assert ("library_code: library modules reached by scripts/rrr_analyse.py differ from "
            "those that made the file: dprepro/survival/kaplan_meier.py") in out
    # the rule file's edit (a comment) changes no job's params: Snakemake remakes nothing
    # for it, and verify flags nothing for it
    assert ": rules:" not in out and ": rule:" not in out
    # the changed setting is named in the plan of each job that reads it
    releases = "results/rrr_survival/releases/kidney"
    assert (f"MISMATCH {releases}/lnte_eps1/medians.csv: params: plan.draws = 3 when made; "
            "4 now") in out
    # the manifest and the report's introduction take the whole configuration (by digest);
    # the hint names the key, from the last complete run's manifest
    assert "parameters that differ (files): configuration_sha256 (3), plan.draws (" in out
    assert "differs from the last complete run's, results/run_manifest.json, in " \
           "rrr_survival.draws" in out
    assert (f"MISMATCH {tables}/utility.csv: output: expected by the workflow's targets, "
            "absent with its sidecar") in out
    assert f"MISMATCH {tables}/extra.csv: sidecar: none" in out


def test_an_unpacked_archive_verifies_and_is_up_to_date(runs):
    """The README's handover, as written: the files git tracks (code, configuration,
    bundled inputs) and the results with Snakemake's metadata, less the raw data, packed
    by the README's commands and unpacked elsewhere, where its ``snakemake -n`` finds
    nothing to do and its ``snakemake verify`` passes (with the run's configuration)."""
    text = section("README.md", "hand a run over")
    (block,) = code_blocks(text, "bash")
    commands = inline_commands(text)
    (verify,) = [c for c in commands if c.split()[1] == "verify"]
    (dry_run,) = [c for c in commands if c == "snakemake -n"]
    base, first, _ = runs
    work = base / "archived"
    shutil.copytree(first, work, symlinks=True)
    assert (work / "results" / "data").is_dir()  # raw data the handover leaves out
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], cwd=work, check=True)
    subprocess.run([*git, "add", *CHECKOUT, "handover.yaml"], cwd=work, check=True)
    subprocess.run([*git, "commit", "-qm", "run"], cwd=work, check=True)
    run_shell_block(block, work)
    unpacked = base / "unpacked"
    unpacked.mkdir()
    for name in ("code.tar.gz", "results.tar.gz"):
        with tarfile.open(work / name) as archive:
            assert not any(m.startswith("results/data") for m in archive.getnames())
            archive.extractall(unpacked, filter="tar")
    mine = [Path("handover.yaml")]
    out = run(snakemake_command(dry_run, under=mine), unpacked)
    assert "Nothing to be done" in out.stdout + out.stderr
    assert ", 0 with mismatches" in run(snakemake_command(verify, under=mine), unpacked).stdout
