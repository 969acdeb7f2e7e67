"""A user's cohort table is checked before any job: each problem names the key, the file
and the fix, and a run with one leaves nothing behind."""

import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from dprepro.data.cohort_checks import check_cohort_tables
from dprepro.data.cohort_spec import CohortSpec, build_cohort

ROOT = Path(__file__).resolve().parents[1]

# 48 patients in three groups, 36 events: enough for the Cox models of every study cohort
# (10 events per coefficient, dprepro.data.cohort_content)
GOOD = pd.DataFrame({"id": [f"p{i}" for i in range(48)],
                     "time": [5, 3, 8, 2, 7, 1, 4, 6] * 6,
                     "status": ["dead", "alive", "dead", "dead"] * 12,
                     "group": ["a", "b", "c"] * 16,
                     "age": [50, 60, 70, 40, 55, 65, 45, 58] * 6})


def with_times(**times):
    """GOOD with the times of some ids changed (``p1=-3``)."""
    frame = GOOD.copy()
    for pid, value in times.items():
        frame.loc[frame["id"] == pid, "time"] = value
    return frame


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
    frame = with_times(p1=-3, p5=-1)
    (problem,) = check(tmp_path, frame).problems
    assert "must be finite and >= 0" in problem and "ids ['p1', 'p5']" in problem


def test_a_missing_time_names_the_id(tmp_path):
    frame = with_times(p1=None)
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


def test_a_far_horizon_names_the_time_divisor_it_was_divided_by(tmp_path):
    """A table put under the shipped name 'kidney' keeps kidney's time_divisor of 30: months
    up to 8 become 0.27, and the warning names the divisor, which it does not otherwise."""
    (warning,) = check(tmp_path, GOOD, time_divisor=30, time_unit="months").warnings
    assert "largest follow-up 0.266667" in warning
    assert "dividing the table's times by datasets.mine.time_divisor = 30" in warning
    assert "set it to 1 if they are in months already" in warning
    (warning,) = check(tmp_path, GOOD, horizon=17).warnings
    assert "time_divisor" not in warning


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
    with_times(p1=-3).to_csv(tmp_path / "cohort.csv", index=False)
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


# ---------------------------------------------------------------- what the rows must hold


def test_an_id_in_two_groups_is_refused_naming_the_id(tmp_path):
    """Two rows per id are allowed (rows_per_person: 2), but a person has one group: RRR
    releases it once. Without rows_per_person the same table is refused for the conflict,
    not for the row count (the count is not what is wrong)."""
    frame = pd.concat([GOOD, GOOD.iloc[[1]].assign(group="c", time=9)], ignore_index=True)
    for rows in (2, 1):
        (problem,) = check(tmp_path, frame, rows_per_person=rows).problems
        assert "'datasets.mine.columns.group'" in problem and "cohort.csv" in problem
        assert "id 'p1' in ['b', 'c']" in problem
    # the same second row in the id's own group is fine with two rows per person
    same = pd.concat([GOOD, GOOD.iloc[[1]].assign(time=9)], ignore_index=True)
    assert check(tmp_path, same, rows_per_person=2).problems == []


def test_a_cohort_with_no_event_is_refused_naming_the_status_key(tmp_path):
    (problem,) = check(tmp_path, GOOD.assign(status="alive")).problems
    assert "'datasets.mine.event_values'" in problem and "cohort.csv" in problem
    assert "censored (no event)" in problem and "['dead']" in problem


def test_too_few_events_for_the_cox_models_name_the_threshold(tmp_path):
    """k groups and p covariates: 10 events per coefficient, 10 (k - 1 + p) in all. The
    bound is met exactly by 20 events with three groups, missed by 19; a declared
    covariate raises it to 30."""
    def with_events(n):
        return GOOD.assign(status=["dead"] * n + ["alive"] * (len(GOOD) - n))

    assert check(tmp_path, with_events(20)).problems == []
    (problem,) = check(tmp_path, with_events(19)).problems
    assert "'datasets.mine.groups'" in problem and "cohort.csv" in problem
    assert "19 events among 48 patients" in problem and "20 in all" in problem
    assert "EVENTS_PER_COEFFICIENT" in problem
    (problem,) = check(tmp_path, with_events(29), covariates=["age"]).problems
    assert "1 covariate(s)" in problem and "30 in all" in problem
    # the case: a cohort of five patients
    (problem,) = check(tmp_path, GOOD.head(5)).problems
    assert "4 events among 5 patients" in problem


def test_a_group_whose_patients_are_all_censored_is_warned_of(tmp_path):
    frame = GOOD.assign(status=["alive" if g == "c" else "dead" for g in GOOD["group"]])
    result = check(tmp_path, frame)
    assert result.problems == []
    (warning,) = result.warnings
    assert "group 'c'" in warning and "median is not reached" in warning


def test_the_jobs_refuse_what_the_pre_run_check_refuses(tmp_path):
    """A cohort the check before the run cannot read (downloaded, generated, a package's)
    is refused by its job with the same message, and by the analysis jobs when too small."""
    from dprepro.data.cohort_content import require_analysable

    GOOD.assign(status="alive").to_csv(tmp_path / "cohort.csv", index=False)
    with pytest.raises(ValueError, match="datasets.mine.event_values"):
        build_cohort(CohortSpec.from_config("mine", SPEC),
                     inputs={"table": str(tmp_path / "cohort.csv")}, seed=1)
    GOOD.head(5).to_csv(tmp_path / "cohort.csv", index=False)
    built = build_cohort(CohortSpec.from_config("mine", SPEC),
                         inputs={"table": str(tmp_path / "cohort.csv")}, seed=1)
    with pytest.raises(ValueError, match=r"datasets.mine.groups.*4 events among 5 patients"):
        require_analysable(built.frame.assign(data_origin="real"), name="mine",
                           groups=["a", "b", "c"], source="results/data/cohorts/mine.parquet")


def test_a_directory_for_a_path_says_so(tmp_path):
    (tmp_path / "cohort.csv").mkdir()
    config = {"rrr_survival": {"datasets": ["mine"]}, "datasets": {"mine": SPEC}}
    (problem,) = check_cohort_tables(config, workflow_dir=ROOT, working_dir=tmp_path).problems
    assert "datasets.mine.path" in problem and "is a directory, not a file" in problem
    assert "not found" not in problem


def test_a_decimal_comma_gets_a_hint(tmp_path):
    frame = GOOD.astype({"time": object, "age": object})
    frame.loc[frame["id"] == "p3", "time"] = "12,5"
    (problem,) = check(tmp_path, frame).problems
    assert "['12,5']" in problem and "decimal comma" in problem and "(12.5)" in problem
    frame = GOOD.astype({"age": object})
    frame.loc[frame["id"] == "p4", "age"] = "61,5"
    (problem,) = check(tmp_path, frame, covariates=["age"]).problems
    assert "datasets.mine.covariates" in problem and "ids ['p4']" in problem
    assert "decimal comma" in problem


def test_covariate_blanks_are_named_by_id(tmp_path):
    frame = GOOD.astype({"age": float})
    frame.loc[frame["id"].isin(["p0", "p7"]), "age"] = None
    (problem,) = check(tmp_path, frame, covariates=["age"]).problems
    assert "missing values (ids ['p0', 'p7'])" in problem


def test_group_labels_and_status_codes_follow_one_spelling_rule_logged(tmp_path):
    """'Dead ' and 'ALIVE' read as dead and alive as ' A' reads as a: both are counted in
    the summary the cohort's job logs."""
    frame = GOOD.copy()
    frame.loc[frame["id"] == "p0", ["status", "group"]] = ["Dead ", " A"]
    frame.loc[frame["id"] == "p1", "status"] = "ALIVE"
    assert check(tmp_path, frame).problems == []
    built = build_cohort(CohortSpec.from_config("mine", SPEC),
                         inputs={"table": str(tmp_path / "cohort.csv")}, seed=1)
    assert built.summary["respelled"] == {"group  A -> a": 1, "status ALIVE -> alive": 1,
                                          "status Dead  -> dead": 1}
    assert built.frame.set_index("id").loc[["p0", "p1"], "event"].tolist() == [1, 0]
    assert built.frame.set_index("id").loc["p0", "group"] == "a"
    # logged, not stored with the table (its Parquet keeps its bytes)
    assert "respelled" not in built.frame.attrs


@pytest.mark.parametrize(("spec", "message"), [
    ({"groups": ["HER2+", "HER2-"]}, r"'datasets.mine.groups': \['HER2\+', 'HER2-'\]"),
    ({"event_values": ["Dead"], "censored_values": ["dead!"]},
     r"'datasets.mine.censored_values': \['dead!'\] match event_values"),
])
def test_values_the_spelling_rule_cannot_tell_apart_are_a_config_error(spec, message):
    from dprepro.data.cohort_spec import cohort_config_problems

    problems = cohort_config_problems({"rrr_survival": {"datasets": ["mine"]},
                                       "datasets": {"mine": {**SPEC, **spec}}})
    assert any(re.search(message, p) for p in problems), problems


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


# ---------------------------------------------------------------- a new user's cohort (issue 40)


def test_blank_ids_are_named_by_row_not_as_one_person_nan(tmp_path):
    """Blank ids read as the text 'nan', one person with rows in several groups; the check
    names the blank rows and the two fixes instead."""
    frame = GOOD.astype({"id": object})
    frame.loc[[3, 7], "id"] = None
    (problem,) = check(tmp_path, frame).problems
    assert "column 'id' (datasets.mine.columns.id) has missing values" in problem
    assert "rows [4, 8], counting from 1 after the header" in problem
    assert "'nan'" not in problem and "cohort.csv" in problem


def test_the_r_status_coding_is_suggested_for_codes_1_and_2(tmp_path):
    (problem,) = check(tmp_path, GOOD.assign(status=GOOD["status"].map({"dead": 2, "alive": 1})),
                       event_values=[1], censored_values=[0]).problems
    assert "e.g. event_values: [2] and censored_values: [1] if the table uses R's coding" in (
        problem)
    # other numeric codes keep the neutral suggestion
    (problem,) = check(tmp_path, GOOD.assign(status=GOOD["status"].map({"dead": 3, "alive": 4})),
                       event_values=[1], censored_values=[0]).problems
    assert "R's coding" not in problem and "[<event codes>]" in problem


def test_a_path_with_a_tilde_says_it_is_not_expanded(tmp_path):
    config = {"rrr_survival": {"datasets": ["mine"]},
              "datasets": {"mine": {**SPEC, "path": "~/nowhere-dprepro/cohort.csv"}}}
    (problem,) = check_cohort_tables(config, workflow_dir=ROOT, working_dir=tmp_path).problems
    home = str(Path.home() / "nowhere-dprepro" / "cohort.csv")
    assert "datasets.mine.path" in problem and "no shell expands '~'" in problem
    assert repr(home) in problem


def test_a_covariate_named_like_a_cohort_column_is_a_config_error(tmp_path):
    """A covariate 'event' would overwrite the event indicator of the cohort table (every row
    then read as censored: the wrong error, or silently wrong times for 'time')."""
    from dprepro.data.cohort_spec import cohort_config_problems

    for name in ("event", "time"):
        problems = cohort_config_problems({"rrr_survival": {"datasets": ["mine"]},
                                           "datasets": {"mine": {**SPEC,
                                                                 "covariates": [name]}}})
        assert any(f"'datasets.mine.covariates': ['{name}'] are names of the cohort table's "
                   "own columns" in p for p in problems), problems
    result = check(tmp_path, GOOD.assign(event=GOOD["age"] // 10), covariates=["event"])
    assert result.problems == []  # left to the configuration check: nothing read


def test_a_constant_covariate_is_refused_before_any_fit(tmp_path):
    (problem,) = check(tmp_path, GOOD.assign(age=60), covariates=["age"]).problems
    assert problem.startswith("config key 'datasets.mine.covariates': column 'age'")
    assert "the value 60 for every row" in problem and "take 'age' out" in problem


def test_a_covariate_that_restates_the_group_is_refused(tmp_path):
    # twice GOOD (72 events): enough for two group and two covariate coefficients
    big = pd.concat([GOOD, GOOD.assign(id=GOOD["id"] + "x")], ignore_index=True)
    dose = big["group"].map({"a": 0.0, "b": 10.0, "c": 25.0})
    (problem,) = check(tmp_path, big.assign(dose=dose), covariates=["age", "dose"]).problems
    assert "column 'dose'" in problem and "is a linear function of the group (" in problem
    # a function of the group and an earlier covariate, not of the group alone
    twice = 2 * big["age"] + dose
    (problem,) = check(tmp_path, big.assign(twice=twice), covariates=["age", "twice"]).problems
    assert "linear function of the group and the covariates ['age']" in problem
    # near, not exactly, a function of the group: the Cox model can fit it
    jitter = dose + 0.01 * (big.index.to_numpy() % 5)
    assert check(tmp_path, big.assign(dose=jitter), covariates=["age", "dose"]).problems == []


def test_the_collinearity_check_agrees_with_the_rank_of_the_design(tmp_path):
    """Oracle: the problem is reported exactly when [1, group indicators, covariates] is
    rank-deficient (numpy's SVD rank), over covariates built to be or not be collinear."""
    import numpy as np

    from dprepro.data.cohort_content import covariate_design_problems

    rng = np.random.default_rng(40)
    indicator = pd.get_dummies(GOOD["group"]).to_numpy(float)
    for trial in range(30):
        x1 = rng.normal(size=len(GOOD))
        x2 = (rng.normal(size=3) @ indicator.T + (trial % 3 == 0) * rng.normal() * x1
              + (trial % 2) * rng.normal(size=len(GOOD)))
        frame = GOOD[["id", "group", "time"]].assign(event=1, x1=x1, x2=x2)
        design = np.column_stack([np.ones(len(GOOD)), indicator[:, 1:], x1, x2])
        deficient = np.linalg.matrix_rank(design) < design.shape[1]
        assert bool(covariate_design_problems(frame, name="mine")) == deficient, trial


def test_an_infinite_or_categorical_covariate_says_what_to_do(tmp_path):
    frame = GOOD.astype({"age": float})
    frame.loc[frame["id"] == "p2", "age"] = float("inf")
    (problem,) = check(tmp_path, frame, covariates=["age"]).problems
    assert "infinite values (ids ['p2'])" in problem
    (problem,) = check(tmp_path, GOOD.assign(sex=["F", "M"] * 24),
                       covariates=["age", "sex"]).problems
    # named once, with the fix for a column of categories
    assert problem.count("config key") == 1 and "0/1 indicator columns" in problem


def test_the_analysis_jobs_refuse_an_undefined_covariate_too(tmp_path):
    """A package or downloaded cohort is checked by its jobs (rrr_analyse, rrr_cox)."""
    from dprepro.data.cohort_content import require_analysable

    frame = GOOD[["id", "group", "time"]].assign(event=1, data_origin="real", age=55.0)
    with pytest.raises(ValueError, match=r"datasets.mine.covariates.*'age'.*every row"):
        require_analysable(frame, name="mine", groups=["a", "b", "c"], source="mine.parquet")
    require_analysable(frame.assign(age=GOOD["age"].astype(float)), name="mine",
                       groups=["a", "b", "c"], source="mine.parquet")


def test_ids_are_read_as_written_so_0001_and_1_are_two_patients(tmp_path):
    """Read as numbers, ids 0001 and 1 became one id: with different groups the table was
    refused for a conflict it does not have, and with the same group two patients were
    merged into one person with two rows."""
    frame = GOOD.assign(id=[f"{i:04d}" for i in range(48)])
    frame.loc[47, "id"] = "1"      # patient "0001" and patient "1": two people
    assert frame.loc[1, "group"] != frame.loc[47, "group"]
    assert check(tmp_path, frame).problems == []
    built = build_cohort(CohortSpec.from_config("mine", SPEC),
                         inputs={"table": str(tmp_path / "cohort.csv")}, seed=1)
    assert built.frame["id"].nunique() == 48
    assert {"0001", "1"} <= set(built.frame["id"])
