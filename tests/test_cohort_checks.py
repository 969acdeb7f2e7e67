"""A user's cohort table is checked before any job: each problem names the key, the file
and the fix, and a run with one leaves nothing behind."""

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from dprepro.data.cohort_checks import check_cohort_tables
from dprepro.data.cohort_spec import CohortSpec, build_cohort

ROOT = Path(__file__).resolve().parents[1]

GOOD = pd.DataFrame({"id": [f"p{i}" for i in range(8)],
                     "time": [5, 3, 8, 2, 7, 1, 4, 6],
                     "status": ["dead", "alive"] * 4,
                     "group": ["a", "b", "c", "a", "b", "c", "a", "b"],
                     "age": [50, 60, 70, 40, 55, 65, 45, 58]})
SPEC = {"source": "file", "path": "cohort.csv", "groups": ["a", "b", "c"],
        "event_values": ["dead"], "censored_values": ["alive"], "horizon": 10}


def check(tmp_path, frame, **spec):
    frame.to_csv(tmp_path / "cohort.csv", index=False)
    config = {"rrr_survival": {"datasets": ["mine"]}, "datasets": {"mine": {**SPEC, **spec}}}
    return check_cohort_tables(config, workflow_dir=ROOT, working_dir=tmp_path)


def test_a_good_table_passes(tmp_path):
    result = check(tmp_path, GOOD)
    assert result.problems == [] and result.warnings == []


def test_status_codes_outside_the_configured_values_suggest_the_keys(tmp_path):
    result = check(tmp_path, GOOD, event_values=[1], censored_values=[0])
    (problem,) = result.problems
    assert "'datasets.mine'" in problem and "cohort.csv" in problem
    assert "datasets.mine.event_values" in problem
    assert "event_values: ['dead'] and censored_values: ['alive']" in problem


def test_a_negative_time_names_the_ids(tmp_path):
    frame = GOOD.assign(time=[5, -3, 8, 2, 7, -1, 4, 6])
    (problem,) = check(tmp_path, frame).problems
    assert "must be finite and >= 0" in problem and "ids ['p1', 'p5']" in problem


def test_a_missing_time_names_the_id(tmp_path):
    frame = GOOD.assign(time=[5, None, 8, 2, 7, 1, 4, 6])
    (problem,) = check(tmp_path, frame).problems
    assert "missing values (ids ['p1'])" in problem


def test_a_single_group_is_refused_naming_the_key(tmp_path):
    (problem,) = check(tmp_path, GOOD.assign(group="a")).problems
    assert "datasets.mine.columns.group" in problem and "['a']" in problem


def test_a_missing_file_names_the_path_key(tmp_path):
    config = {"rrr_survival": {"datasets": ["mine"]},
              "datasets": {"mine": {**SPEC, "path": "nowhere.csv"}}}
    (problem,) = check_cohort_tables(config, workflow_dir=ROOT,
                                     working_dir=tmp_path).problems
    assert "datasets.mine.path" in problem and "'nowhere.csv' not found" in problem


def test_a_missing_column_names_the_columns_key(tmp_path):
    (problem,) = check(tmp_path, GOOD.drop(columns="status")).problems
    assert "datasets.mine.columns" in problem and "['status']" in problem


def test_an_absent_configured_group_is_a_warning_not_a_change_of_k(tmp_path):
    result = check(tmp_path, GOOD, groups=["a", "b", "c", "placebo"])
    assert result.problems == []
    (warning,) = result.warnings
    assert "'placebo'" in warning and "k = 4" in warning


def test_a_real_cohort_without_a_horizon_is_warned_of(tmp_path):
    result = check(tmp_path, GOOD, horizon=0)
    assert any("datasets.mine.horizon" in w for w in result.warnings)
    synthetic = check(tmp_path, GOOD, horizon=0, data_origin="simulation")
    assert synthetic.warnings == []


def test_a_missing_horizon_warning_says_the_release_is_not_private(tmp_path):
    (warning,) = check(tmp_path, GOOD, horizon=0).warnings
    assert "true_epsilon = inf" in warning and "planned end of follow-up" in warning


@pytest.mark.parametrize(("horizon", "words"), [
    # median follow-up 4.5 of times 1..8: a horizon of 3 clips 5 of 8 patients
    (3, ["3 lies below the median follow-up 4.5", "clips 62% of the patients"]),
    # the largest follow-up is 8: 17 is more than twice it
    (17, ["17 is more than 2 times the largest follow-up 8", "most of grid LNTE's bins"]),
])
def test_a_horizon_at_odds_with_the_follow_up_is_warned_of_with_numbers(tmp_path, horizon,
                                                                        words):
    result = check(tmp_path, GOOD, horizon=horizon)
    assert result.problems == []
    (warning,) = result.warnings
    assert warning.startswith("datasets.mine.horizon:") and "cohort.csv" in warning
    for text in words:
        assert text in warning, warning
    # just inside both limits: no warning
    assert check(tmp_path, GOOD, horizon=4.5).warnings == []
    assert check(tmp_path, GOOD, horizon=16).warnings == []


def test_times_implausible_for_their_unit_are_warned_of_with_numbers(tmp_path):
    days = GOOD.assign(time=GOOD["time"] * 250)  # up to 2,000: days, not months
    (warning,) = check(tmp_path, days, time_unit="months", horizon=2000).warnings
    assert warning.startswith("datasets.mine.time_unit:") and "cohort.csv" in warning
    assert "2000 months = 167 years" in warning and "datasets.mine.time_divisor" in warning
    # the same times in days, or with the unit's divisor, are plausible
    assert check(tmp_path, days, time_unit="days", horizon=2000).warnings == []
    assert check(tmp_path, days, time_unit="Months", time_divisor=30, horizon=70).warnings == []
    # an unknown unit is not judged
    assert check(tmp_path, days, time_unit="visits", horizon=2000).warnings == []


def test_a_bundled_cohort_is_read_from_the_workflow(tmp_path):
    config = {"rrr_survival": {"datasets": ["kidney"]},
              "datasets": {"kidney": {"source": "bundled", "path": "resources/kidney/kidney.csv",
                                      "columns": {"id": "id", "time": "time",
                                                  "status": "status", "group": "disease"},
                                      "rows_per_person": 2, "horizon": 20,
                                      "groups": ["AN", "GN", "Other", "PKD"]}}}
    result = check_cohort_tables(config, workflow_dir=ROOT, working_dir=tmp_path)
    assert result.problems == []


def test_the_job_refuses_a_single_group_too(tmp_path):
    GOOD.assign(group="b").to_csv(tmp_path / "cohort.csv", index=False)
    spec = CohortSpec.from_config("mine", SPEC)
    with pytest.raises(ValueError, match="datasets.mine.columns.group"):
        build_cohort(spec, inputs={"table": str(tmp_path / "cohort.csv")}, seed=1)


def test_the_job_logs_the_columns_it_ignores(tmp_path):
    GOOD.to_csv(tmp_path / "cohort.csv", index=False)
    built = build_cohort(CohortSpec.from_config("mine", SPEC),
                         inputs={"table": str(tmp_path / "cohort.csv")}, seed=1)
    assert built.summary["ignored_columns"] == ["age"]
    assert "ignored_columns" not in built.frame.attrs


def test_a_run_with_bad_data_stops_before_any_job(tmp_path):
    GOOD.assign(time=[5, -3, 8, 2, 7, 1, 4, 6]).to_csv(tmp_path / "cohort.csv", index=False)
    overlay = {"studies": ["rrr_survival"], "rrr_survival": {"datasets": ["mine"]},
               "datasets": {"mine": SPEC}}
    (tmp_path / "overlay.yaml").write_text(yaml.safe_dump(overlay))
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "--cores", "1",
         "--configfile", "overlay.yaml"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    assert "cohort data not usable (nothing was run)" in proc.stderr
    assert "ids ['p1']" in proc.stderr
    assert not (tmp_path / "results").exists()


def test_dropping_missing_groups_narrows_the_privacy_unit_every_row_states():
    """missing_groups: drop releases only patients whose group is recorded, a private
    field: the unit every table and sidecar states says so (issue 39)."""
    from dprepro.studies.rrr_survival.plan import releases

    dropped = CohortSpec.from_config("mine", {**SPEC, "missing_groups": "drop"})
    assert dropped.privacy_unit == "patient with a recorded group"
    assert CohortSpec.from_config("mine", SPEC).privacy_unit == "patient"
    config = {"rrr_survival": {"datasets": ["mine"], "epsilons": [1], "calibration": "exact",
                               "lnte_grid_bins": 20},
              "datasets": {"mine": {**SPEC, "missing_groups": "drop",
                                    "privacy_unit": "participant"}}}
    units = {r["privacy_unit"] for r in releases(config, mechanisms=("original", "rrr"))}
    assert units == {"participant with a recorded group"}
