"""Runs of two configurations kept apart: run_name folders, and leftovers listed or removed."""

import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from dprepro.runtime.run_folder import (
    launch_relative,
    remove_outputs,
    run_directory,
    stale_outputs,
    write_stale_list,
)
from helpers import background
from helpers.recipes import planned_jobs

ROOT = Path(__file__).resolve().parents[1]


def touch(root: Path, *names: str) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")


def test_run_directory_is_here_unless_the_run_is_named():
    assert run_directory({"run_name": ""}) == ""
    assert run_directory({}) == ""
    assert run_directory({"run_name": "trial_2"}) == "runs/trial_2"


@pytest.mark.parametrize("name", ["my run", "a/b", "-x", "é", "x" * 65])
def test_a_run_name_that_is_no_folder_name_states_the_characters_allowed(name):
    from dprepro.config.schema import ConfigError, check_config, load_schema

    schema = load_schema(ROOT / "workflow" / "schemas" / "config.schema.yaml")
    with pytest.raises(ConfigError) as error:
        check_config({"run_name": name}, schema)
    message = str(error.value)
    assert f"config key 'run_name': got {name!r}" in message
    assert "letters (A-Z, a-z), digits, dots, underscores or hyphens" in message
    check_config({"run_name": "my_cohort-2024.1"}, schema)


def test_a_relative_path_keeps_meaning_the_launch_directory(tmp_path):
    work = tmp_path / "runs" / "a"
    work.mkdir(parents=True)
    assert launch_relative("data/x.csv", tmp_path, tmp_path) == "data/x.csv"
    assert launch_relative("data/x.csv", tmp_path, work) == "../../data/x.csv"
    assert (work / launch_relative("data/x.csv", tmp_path, work)).resolve() == \
        (tmp_path / "data/x.csv").resolve()
    assert launch_relative("/abs/x.csv", tmp_path, work) == "/abs/x.csv"


def test_stale_outputs_are_files_no_expected_output_accounts_for(tmp_path):
    touch(tmp_path, "results/t/a.csv", "results/t/a.csv.prov.json", "results/t/old.csv",
          "results/t/old.csv.prov.json", "results/dir/inner/f.parquet",
          "results/logs/old/x.log", "results/benchmarks/x.tsv", "results/data/raw/big.gz",
          "results/report.html", "other/file.txt")
    stale = stale_outputs(["results/t/a.csv", "results/dir"], tmp_path)
    assert stale == ["results/t/old.csv", "results/t/old.csv.prov.json"]


def test_the_stale_list_is_written_and_removed_and_files_deleted(tmp_path):
    touch(tmp_path, "results/t/sub/old.csv", "results/t/keep.csv")
    listed = write_stale_list(["results/t/sub/old.csv"], tmp_path)
    assert listed.read_text() == "results/t/sub/old.csv\n"
    assert remove_outputs(["results/t/sub/old.csv"], tmp_path) == 1
    assert not (tmp_path / "results/t/sub").exists()  # emptied folders go too
    assert (tmp_path / "results/t/keep.csv").exists()
    assert write_stale_list([], tmp_path) is None and not listed.exists()


CONFIG = {
    "studies": ["rrr_survival"],
    "figures": {"dpi": 50},
    "rrr_survival": {"datasets": ["toy"], "epsilons": [1, 3], "draws": 3, "grid_points": 20},
    "datasets": {"toy": {"source": "file", "path": "cohort/toy.csv",
                         "event_values": ["dead"], "censored_values": ["alive"],
                         "groups": ["arm A", "arm B", "arm C"], "horizon": 100,
                         "lnte_grid_bins": 4}},
}


def run(work: Path, config: dict, *extra: str) -> subprocess.CompletedProcess:
    (work / "overlay.yaml").write_text(yaml.safe_dump(config))
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"),
                           "--cores", "2", "--configfile", "overlay.yaml", *extra],
                          cwd=work, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


@background.register("run_folder")
def _configurations_in_one_folder(work: Path) -> dict:
    """The runs of test_a_new_configuration_in_one_folder_lists_then_removes_what_the_old_one_left
    in one folder, one after another (a background run, tests/helpers/background.py): a
    configuration, a changed one, then the changed one again with remove_stale_outputs
    (the README's recipe: only the two jobs that take the whole configuration as a
    parameter rerun); what each left, read between them."""
    (work / "cohort").mkdir()
    shutil.copy(ROOT / "tests" / "data" / "toy_cohort.csv", work / "cohort" / "toy.csv")
    figures = work / "results" / "rrr_survival" / "figures"
    stale = work / "results" / "stale_outputs.txt"
    seen = {}
    run(work, CONFIG)
    seen["first"] = {"eps3_figure": (figures / "figure2_toy_rrr_eps3.png").exists(),
                     "stale_list": stale.exists()}
    changed = {**CONFIG, "rrr_survival": {**CONFIG["rrr_survival"], "epsilons": [1, 2]}}
    proc = run(work, changed)
    seen["changed"] = {
        "listed": stale.read_text().split() if stale.exists() else None, "stdout": proc.stdout,
        "medians": pd.read_csv(work / "results/rrr_survival/tables/median_survival.csv"),
        "claims": pd.read_csv(work / "results" / "claims.csv")}
    # the README's recipe: the same configuration again, with remove_stale_outputs
    kept = figures / "figure2_toy_rrr_eps1.png"
    before = kept.stat().st_mtime_ns
    proc = run(work, {**changed, "remove_stale_outputs": True})
    seen["again"] = {"stale_list": stale.exists(), "stdout": proc.stdout,
                     "left": [name for name in seen["changed"]["listed"] or ()
                              if (work / name).exists()],
                     "figures": {eps: (figures / f"figure2_toy_rrr_eps{eps}.png").exists()
                                 for eps in (1, 2, 3)},
                     "kept_rewritten": kept.stat().st_mtime_ns != before,
                     "jobs": planned_jobs(proc.stderr)}
    return seen


@pytest.mark.workflow
@pytest.mark.background("run_folder")
def test_a_new_configuration_in_one_folder_lists_then_removes_what_the_old_one_left(tmp_path):
    seen = background.result("run_folder", tmp_path)
    first, changed, again = seen["first"], seen["changed"], seen["again"]
    assert first["eps3_figure"]
    assert not first["stale_list"]

    listed = changed["listed"]
    assert listed is not None, "no stale_outputs.txt after the change"
    assert "results/rrr_survival/figures/figure2_toy_rrr_eps3.png" in listed
    assert "results/rrr_survival/releases/toy/rrr_eps3/medians.csv" in listed
    assert all("eps3" in name for name in listed), listed
    assert "come from an earlier configuration" in changed["stdout"]
    # the tables and the merged claims follow the new configuration
    assert set(changed["medians"]["epsilon"].dropna()) == {1.0, 2.0}
    assert not changed["claims"]["claim_id"].str.contains("eps3").any()

    # the flag removes exactly what was listed, and reruns no job of the study
    assert f"dprepro: removed {len(listed)} files of earlier configurations" in again["stdout"]
    assert again["left"] == []
    assert not again["stale_list"]
    assert again["figures"] == {1: True, 2: True, 3: False}
    assert not again["kept_rewritten"]
    assert again["jobs"] == {"all": 1, "report_introduction": 1, "run_manifest": 1}
