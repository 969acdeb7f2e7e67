"""Cohorts of the rrr_survival study: kidney loader and the synthetic IPSS-R stand-in."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dprepro.data.cohorts import IPSSR_GROUPS, IPSSR_PUBLISHED, load_kidney, synthetic_ipssr_cohort
from dprepro.survival.kaplan_meier import kaplan_meier
from dprepro.survival.median import km_median

KIDNEY = Path(__file__).resolve().parents[1] / "resources" / "kidney" / "kidney.csv"
# Validation-only copy of the study authors' table (never committed; see its README).
MDS_IWG = Path("/work/shared/data/mds-iwg-2022-authors/ipssr_os.csv")


def test_kidney_loads_76_rows_in_4_groups():
    k = load_kidney(KIDNEY)
    assert list(k.columns) == ["group", "time", "event"]
    assert len(k) == 76
    assert sorted(k.group.unique()) == ["AN", "GN", "Other", "PKD"]
    raw = pd.read_csv(KIDNEY)
    np.testing.assert_array_equal(k.time, raw.time / 30)
    assert k.event.sum() == raw.status.sum()
    assert k.attrs["synthetic"] is False
    assert load_kidney(KIDNEY, time_divisor=1.0).time.max() == raw.time.max()


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda d: d.drop(columns="status"), r"missing column.*'status'"),
        (lambda d: d.drop(columns="disease"), r"missing column.*'disease'"),
        (
            lambda d: d.assign(time=d.time.astype(object).where(d.index != 3, "abc")),
            "'time'.*numeric",
        ),
        (lambda d: d.assign(time=d.time.where(d.index != 3, -5)), "'time'.*>= 0"),
        (
            lambda d: d.assign(time=d.time.astype(float).where(d.index != 3, np.nan)),
            "'time'.*missing",
        ),
        (lambda d: d.assign(status=d.status.where(d.index != 3, 2)), "'event'.*0 or 1"),
        (lambda d: d.assign(disease=d.disease.where(d.index != 3, None)), "'group'.*missing"),
    ],
)
def test_bad_kidney_files_raise_naming_file_and_column(tmp_path, edit, match):
    bad = tmp_path / "broken_kidney.csv"
    edit(pd.read_csv(KIDNEY)).to_csv(bad, index=False)
    with pytest.raises(ValueError, match=match) as info:
        load_kidney(bad)
    assert "broken_kidney.csv" in str(info.value)


def test_bad_time_divisor():
    with pytest.raises(ValueError, match="time_divisor"):
        load_kidney(KIDNEY, time_divisor=0)
    with pytest.raises(TypeError, match="time_divisor"):
        load_kidney(KIDNEY, time_divisor="30")


@pytest.fixture(scope="module")
def synthetic():
    return synthetic_ipssr_cohort(np.random.default_rng(2024))


def test_synthetic_cohort_sizes_and_censoring(synthetic):
    assert synthetic.attrs["synthetic"] is True
    assert list(synthetic.columns) == ["group", "time", "event"]
    sizes = synthetic.group.value_counts().to_dict()
    assert sizes == IPSSR_PUBLISHED["size"]
    assert list(pd.unique(synthetic.group)) == list(IPSSR_GROUPS)
    assert 0.44 <= 1 - synthetic.event.mean() <= 0.52
    assert (synthetic.time > 0).all()


def test_synthetic_cohort_km_medians_near_published(synthetic):
    for group, part in synthetic.groupby("group"):
        median = km_median(kaplan_meier(part.time, part.event)).median
        published = IPSSR_PUBLISHED["median_months"][group]
        assert abs(median / published - 1) < 0.15, (group, median, published)


def test_synthetic_cohort_is_deterministic_and_validated():
    a = synthetic_ipssr_cohort(np.random.default_rng(1))
    b = synthetic_ipssr_cohort(np.random.default_rng(1))
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(synthetic_ipssr_cohort(np.random.default_rng(2)))
    with pytest.raises(TypeError, match="rng"):
        synthetic_ipssr_cohort(1)
    with pytest.raises(ValueError, match="censored_fraction"):
        synthetic_ipssr_cohort(np.random.default_rng(0), censored_fraction=1.2)
    with pytest.raises(ValueError, match="same groups"):
        synthetic_ipssr_cohort(np.random.default_rng(0), sizes={"A": 10}, medians={"B": 1.0})


def test_synthetic_censoring_calibration_hits_the_target_on_average():
    # Over many cohorts the censored share centres on the target (the solver works).
    shares = [
        1 - synthetic_ipssr_cohort(np.random.default_rng(s), stratified=False).event.mean()
        for s in range(20)
    ]
    # sd of one share ~ 0.0095; the mean of 20 has sd ~ 0.002.
    assert abs(np.mean(shares) - 0.48) < 0.01


@pytest.mark.skipif(
    not MDS_IWG.exists(),
    reason=f"validation table {MDS_IWG} (study authors' data, not redistributable) not present",
)
def test_km_medians_of_the_real_ipssr_table_match_its_readme():
    table = pd.read_csv(MDS_IWG)
    readme = {"Very-High": 10.95, "High": 17.46, "Int": 34.72, "Low": 59.84, "Very-Low": 87.45}
    assert set(table.IPSSR.unique()) == set(readme)
    for group, part in table.groupby("IPSSR"):
        median = km_median(kaplan_meier(part.OS_MONTHS, part.OS_STATUS)).median
        assert median == pytest.approx(readme[group], abs=0.01), group


def test_generated_and_downloaded_cohorts_are_loaded_first():
    """The default configuration's IPSS-R stand-in (synthetic; cBioPortal in paper mode) gets
    the higher scheduling priority, the bundled and package tables the lower."""
    import yaml

    from dprepro.config.schema import fill_defaults, load_schema
    from dprepro.studies.rrr_survival import plan

    root = Path(__file__).resolve().parents[1]
    for name, first in (("config.yaml", {"ipssr"}), ("paper.yaml", {"ipssr"})):
        # the cohorts a run of this file sees, the schema's default entries included
        config = fill_defaults(yaml.safe_load((root / "config" / name).read_text()),
                               load_schema(root / "workflow" / "schemas" / "config.schema.yaml"))
        datasets = {d: spec for d, spec in config["datasets"].items() if "source" in spec}
        high = {d for d in datasets if plan.cohort_priority({"datasets": datasets}, d)}
        assert first <= high and high <= {d for d, s in datasets.items()
                                          if s["source"] in ("synthetic", "cbioportal", "url")}
        assert "kidney" not in high
