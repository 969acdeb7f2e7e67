"""The configured groups are the public label set of every release of a cohort.

A randomized-response release randomises each label over a domain fixed before the
data are seen; a configured group no patient has must not shrink it (k, the keep
probability and the true ε would depend on the private data), and a cohort whose
label set is not configured is refused before any job runs.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dprepro.audit.release_audits import audit_rrr
from dprepro.data.cohort_spec import absent_groups, cohort_config_problems, group_order
from dprepro.mechanisms.rrr import rrr_keep_probability, rrr_true_epsilon
from dprepro.studies.rrr_survival.aggregate import NO_PATIENTS, median_table
from dprepro.studies.rrr_survival.analysis import run_release
from dprepro.studies.rrr_survival.releases import PRIVACY_COLUMNS

GROUPS = ["control", "low dose", "high dose", "placebo"]


@pytest.fixture(scope="module")
def trial():
    """Three arms with patients; the configured fourth (placebo) has none."""
    rng = np.random.default_rng(11)
    n = 240
    group = rng.choice(GROUPS[:3], n)
    time = rng.exponential(20.0, n).round(2) + 0.01
    return pd.DataFrame({"id": [f"p{i}" for i in range(n)], "group": group, "time": time,
                         "event": (rng.random(n) < 0.7).astype(int)})


def test_the_label_set_is_the_configured_one_present_or_not(trial):
    assert group_order(trial["group"], GROUPS) == GROUPS
    assert absent_groups(trial["group"], GROUPS) == ["placebo"]
    with pytest.raises(ValueError, match=r"\['high dose'\] are not among"):
        group_order(trial["group"], ["control", "low dose", "placebo"])


@pytest.mark.parametrize("calibration", ["paper", "exact"])
def test_an_absent_configured_group_keeps_k_and_the_true_epsilon(trial, calibration):
    _, record, _ = run_release(trial, dataset="trial", mechanism="rrr", epsilon=1.0,
                               calibration=calibration, labels=GROUPS, draws=3, seed=5)
    p = rrr_keep_probability(1.0, 4, calibration=calibration)
    assert record.true_epsilon == pytest.approx(rrr_true_epsilon(p, 4), abs=1e-12)
    if calibration == "paper":  # the paper's calibration is truly ε + ln(k − 1)
        assert record.true_epsilon == pytest.approx(1.0 + math.log(3), abs=1e-12)
    # the privacy audit states the same level for k = 4
    audit = audit_rrr(epsilon=1.0, k=4, calibration=calibration, draws=1000,
                      rng=np.random.default_rng(0))
    assert audit.true_epsilon == pytest.approx(record.true_epsilon, abs=1e-12)
    # the keep probability is that of k = 4, not of the 3 groups present
    assert f"p = {p:.4f}, k = 4;" in record.note
    assert rrr_keep_probability(1.0, 3, calibration=calibration) != pytest.approx(p)


def test_released_labels_range_over_the_whole_domain(trial):
    """At ε = 0.5 some patients are released as placebo: the absent label is in the domain."""
    results, _, _ = run_release(trial, dataset="trial", mechanism="rrr", epsilon=0.5,
                                calibration="exact", labels=GROUPS, draws=2, seed=3)
    medians = results["medians"]
    assert set(medians["group"]) == set(GROUPS)
    placebo = medians[medians["group"] == "placebo"]["median"].to_numpy(float)
    assert np.isfinite(placebo).any() or np.isinf(placebo).any()  # a curve of released members


def test_the_absent_group_is_reported_with_no_median(trial):
    results, record, _ = run_release(trial, dataset="trial", mechanism="original",
                                     epsilon=None, calibration="", labels=GROUPS, seed=1)
    info = {"dataset": "trial", "data_origin": "real", "labels": GROUPS,
            "privacy": record.columns(PRIVACY_COLUMNS)}
    table = median_table([(info, results["medians"].assign(censored_at=np.nan))])
    placebo = table[table["group"] == "placebo"]
    assert len(placebo) == 1 and placebo["median_status"].iloc[0] == NO_PATIENTS
    assert np.isnan(placebo["median"].iloc[0])
    assert (table[table["group"] != "placebo"]["median_status"] != NO_PATIENTS).all()


def test_a_cohort_without_configured_groups_is_refused_naming_the_key():
    config = {"rrr_survival": {"datasets": ["mine"]},
              "datasets": {"mine": {"source": "file", "path": "mine.csv"}}}
    problems = cohort_config_problems(config)
    assert any(p.startswith("config key 'datasets.mine.groups': not set") for p in problems)
    config["datasets"]["mine"]["groups"] = ["a", "b"]
    assert not any("groups" in p for p in cohort_config_problems(config))


@pytest.mark.workflow
def test_the_workflow_refuses_a_cohort_without_groups_before_any_job(tmp_path):
    from pathlib import Path

    import yaml

    root = Path(__file__).resolve().parents[1]
    overlay = tmp_path / "mine.yaml"
    (tmp_path / "mine.csv").write_text("id,time,status,group\n1,2,1,a\n2,3,0,b\n")
    overlay.write_text(yaml.safe_dump({
        "rrr_survival": {"datasets": ["mine"]},
        "datasets": {"mine": {"source": "file", "path": "mine.csv",
                              "columns": {"id": "id", "time": "time", "status": "status",
                                          "group": "group"}}}}))
    from helpers import snakerun

    proc = snakerun.run(["-n", "--snakefile", str(root / "Snakefile"), "--configfile",
                         str(root / "config" / "config.yaml"), str(overlay), "--directory",
                         str(tmp_path)], cwd=Path.cwd(), timeout=300)
    assert proc.returncode != 0
    assert "config key 'datasets.mine.groups': not set" in proc.stdout + proc.stderr
    assert not (tmp_path / "results").exists()  # no job ran


def test_a_users_cohort_says_what_its_data_are():
    """A simulated CSV is not real data: ``data_origin`` is what figures and provenance say."""
    from dprepro.data.cohort_spec import CohortSpec

    spec = {"source": "file", "path": "x.csv", "groups": ["a", "b"]}
    assert CohortSpec.from_config("mine", spec).origin == "real"
    assert CohortSpec.from_config("mine", {**spec, "data_origin": "simulation"}).origin == \
        "simulation"
    problems = cohort_config_problems({"rrr_survival": {"datasets": ["mine"]},
                                       "datasets": {"mine": {**spec, "data_origin": "fake"}}})
    assert any(p.startswith("config key 'datasets.mine.data_origin': got 'fake'")
               for p in problems)
