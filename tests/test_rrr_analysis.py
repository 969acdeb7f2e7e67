"""The rrr_survival analyses and tables against lifelines and the mechanisms' theory."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from lifelines import KaplanMeierFitter
from lifelines.statistics import pairwise_logrank_test
from lifelines.utils import median_survival_times

from dprepro.data.cohorts import load_kidney, synthetic_ipssr_cohort
from dprepro.mechanisms.rrr import RevisedRandomizedResponse
from dprepro.runtime.seeds import seed_sequence
from dprepro.studies.rrr_survival.aggregate import (
    band_table,
    logrank_table,
    median_table,
    rejection_table,
    utility_table,
)
from dprepro.studies.rrr_survival.analysis import (
    analyse_lnte,
    analyse_original,
    analyse_rrr,
    time_grid,
)
from dprepro.studies.rrr_survival.releases import privacy_columns

KIDNEY = Path(__file__).resolve().parents[1] / "resources" / "kidney" / "kidney.csv"


@pytest.fixture(scope="module")
def kidney():
    return load_kidney(KIDNEY, time_divisor=30)


def labels_of(cohort):
    return sorted(set(cohort["group"]))


def lifelines_median(times, events):
    kmf = KaplanMeierFitter().fit(times, events)
    ci = median_survival_times(kmf.confidence_interval_)
    return kmf.median_survival_time_, float(ci.iloc[0, 0]), float(ci.iloc[0, 1])


def test_original_medians_and_logrank_equal_lifelines(kidney):
    labels = labels_of(kidney)
    result = analyse_original(kidney, labels=labels, grid=time_grid(kidney["time"], 50))
    medians = result["medians"].set_index("group")
    for label in labels:
        part = kidney[kidney["group"] == label]
        expected = lifelines_median(part["time"], part["event"])
        assert tuple(medians.loc[label, ["median", "ci_lower", "ci_upper"]]) == pytest.approx(
            expected)
    ref = pairwise_logrank_test(kidney["time"], kidney["group"], kidney["event"]).summary
    for row in result["logrank"].itertuples():
        key = (row.group_a, row.group_b) if (row.group_a, row.group_b) in ref.index else (
            row.group_b, row.group_a)
        assert row.statistic == pytest.approx(ref.loc[key, "test_statistic"], rel=1e-9)
        assert row.p_value == pytest.approx(ref.loc[key, "p"], rel=1e-9)


def test_rrr_draw_zero_is_lifelines_on_the_released_labels(kidney):
    labels = labels_of(kidney)
    seed = seed_sequence(1, "rrr_survival", "test", 0)
    result = analyse_rrr(kidney, labels=labels, epsilon=1.0, calibration="paper", draws=4,
                         rng=np.random.default_rng(seed), grid=time_grid(kidney["time"], 40))
    # the same stream, replayed, gives the labels the analysis saw
    mechanism = RevisedRandomizedResponse(epsilon=1.0, categories=labels)
    released = mechanism.privatize(kidney["group"].to_numpy(object),
                                   rng=np.random.default_rng(seed), draws=4)
    first = result["medians"][result["medians"]["draw"] == 0].set_index("group")
    for label in labels:
        mask = released[0] == label
        expected = lifelines_median(kidney["time"][mask], kidney["event"][mask])
        assert tuple(first.loc[label, ["median", "ci_lower", "ci_upper"]]) == pytest.approx(
            expected)
    draw3 = result["logrank"][result["logrank"]["draw"] == 3]
    ref = pairwise_logrank_test(kidney["time"], released[3], kidney["event"]).summary
    for row in draw3.itertuples():
        key = (row.group_a, row.group_b) if (row.group_a, row.group_b) in ref.index else (
            row.group_b, row.group_a)
        assert row.p_value == pytest.approx(ref.loc[key, "p"], rel=1e-8)


def test_lnte_at_huge_epsilon_shows_the_published_flaw(kidney):
    # ε → ∞ removes the noise; LNTE as published still differs from KM (first event skipped)
    labels = labels_of(kidney)
    grid = time_grid(kidney["time"], 60)
    lnte = analyse_lnte(kidney, labels=labels, epsilon=1e12, draws=2,
                        rng=np.random.default_rng(0), grid=grid)["curves"]
    original = analyse_original(kidney, labels=labels, grid=grid)["curves"]
    merged = lnte[lnte["draw"] == 0].merge(original, on=["group", "t"], suffixes=("", "_km"))
    gap = (merged["survival"] - merged["survival_km"]).abs().max()
    assert gap > 0.05


def test_privacy_columns_report_true_epsilon():
    cols = privacy_columns("rrr", 1.0, 5, "paper")
    assert cols["true_epsilon"] == pytest.approx(1 + np.log(4))
    assert privacy_columns("rrr", 1.0, 5, "exact")["true_epsilon"] == pytest.approx(1.0)
    assert np.isinf(privacy_columns("lnte", 2.0, 5, "")["true_epsilon"])
    # debiasing is post-processing of the same RRR release: the same guarantee
    debiased = privacy_columns("rrr_debiased", 1.0, 5, "paper")
    assert debiased["mechanism"] == "rrr_debiased"
    assert debiased["true_epsilon"] == pytest.approx(cols["true_epsilon"])
    assert np.isnan(privacy_columns("original", None, 5, "")["epsilon"])
    with pytest.raises(ValueError, match="unknown mechanism"):
        privacy_columns("laplace", 1.0, 5, "")


def test_tables_have_the_contract_columns_and_rates(kidney):
    labels = labels_of(kidney)
    grid = time_grid(kidney["time"], 40)
    original = analyse_original(kidney, labels=labels, grid=grid)
    release = analyse_rrr(kidney, labels=labels, epsilon=3.0, calibration="exact", draws=20,
                          rng=np.random.default_rng(5), grid=grid)

    def info(mechanism, eps, calibration=""):
        return {"dataset": "kidney", "data_origin": "real", "labels": labels,
                "privacy": privacy_columns(mechanism, eps, len(labels), calibration)}
    o, r = info("original", None), info("rrr", 3.0, "exact")
    medians = median_table([(o, original["medians"]), (r, release["medians"])])
    for column in ["dataset", "mechanism", "epsilon", "group", "median", "ci_lower", "ci_upper",
                   "draws", "true_epsilon"]:
        assert column in medians
    assert set(medians.loc[medians["mechanism"] == "rrr", "draws"]) == {1, 20}
    logrank = logrank_table([(o, original["logrank"]), (r, release["logrank"])])
    assert {"group_a", "group_b", "statistic", "p_value"} <= set(logrank.columns)
    rates = rejection_table([(r, release["logrank"], original["logrank"])], significance=0.05)
    for row in rates.itertuples():
        pair = release["logrank"][(release["logrank"]["group_a"] == row.group_a)
                                  & (release["logrank"]["group_b"] == row.group_b)]
        assert row.rejection_rate == pytest.approx((pair["p_value"] < 0.05).mean())
        assert row.repetitions == 20
    utility = utility_table([(r, release["curves"], release["medians"], original["curves"],
                              original["medians"])])
    assert (utility["sup_distance_mean"] >= 0).all() and (utility["sup_distance_mean"] <= 1).all()
    bands = band_table([(r, release["curves"])], level=0.9)
    ok = bands.dropna(subset=["lower", "upper"])
    assert (ok["lower"] <= ok["middle"]).all() and (ok["middle"] <= ok["upper"]).all()


def test_utility_is_zero_for_an_identical_release(kidney):
    labels = labels_of(kidney)
    grid = time_grid(kidney["time"], 40)
    original = analyse_original(kidney, labels=labels, grid=grid)
    info = {"dataset": "kidney", "data_origin": "real", "labels": labels,
            "privacy": privacy_columns("rrr", 1.0, len(labels), "paper")}
    table = utility_table([(info, original["curves"], original["medians"], original["curves"],
                            original["medians"])])
    assert (table["sup_distance_mean"] == 0).all()
    assert (table["median_abs_error"].fillna(0) == 0).all()


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        (pd.DataFrame({"group": ["a", "b"], "time": [1.0, 2.0]}), "lacks columns"),
        (pd.DataFrame({"group": ["a", "c"], "time": [1.0, 2.0], "event": [1, 0]}),
         r"groups \['c'\] not among"),
        (pd.DataFrame({"group": ["a", "a"], "time": [1.0, 2.0], "event": [1, 0]}),
         r"two groups with patients; only \['a'\]"),
    ],
)
def test_bad_cohorts_are_rejected(frame, message):
    with pytest.raises(ValueError, match=message):
        analyse_original(frame, labels=["a", "b"], grid=np.linspace(0, 2, 5))


def test_a_single_group_cannot_be_compared():
    frame = pd.DataFrame({"group": ["a", "a"], "time": [1.0, 2.0], "event": [1, 0]})
    with pytest.raises(ValueError, match="at least two groups"):
        analyse_original(frame, labels=["a"], grid=np.linspace(0, 2, 5))


def test_quantiles_over_draws_keep_not_reached_as_inf():
    from dprepro.studies.rrr_survival.analysis import quantile_inf

    values = [1.0, 2.0, 3.0, np.inf, np.inf]
    assert quantile_inf(values, 0.5) == 3.0      # exactly the 3rd order statistic
    assert quantile_inf(values, 0.6) == np.inf   # between 3 and inf
    assert quantile_inf(values, 0.9) == np.inf   # between inf and inf
    with np.errstate(invalid="ignore"):
        assert np.isnan(np.quantile(values, 0.9))  # numpy's NaN, the failure guarded against
        assert np.isnan(np.quantile(values, 0.5))
    assert quantile_inf([np.inf] * 4, 0.025) == np.inf
    finite = np.random.default_rng(1).exponential(size=37)
    for q in (0.025, 0.5, 0.975):
        assert quantile_inf(finite, q) == np.quantile(finite, q)


def test_kidney_plateaus_are_flagged_with_r_midpoints(kidney):
    """AN and PKD are exactly 0.5 over an interval: lifelines and R's medians differ there."""
    labels = labels_of(kidney)
    medians = analyse_original(kidney, labels=labels, grid=time_grid(kidney["time"], 20))[
        "medians"].set_index("group")
    assert medians["plateau"].to_dict() == {"AN": True, "GN": False, "Other": False,
                                           "PKD": True}
    for label in labels:
        part = kidney[kidney["group"] == label]
        kmf = KaplanMeierFitter().fit(part["time"], part["event"])
        s = kmf.survival_function_.iloc[:, 0]
        at_half = s.index[np.isclose(s.to_numpy(), 0.5, atol=1e-12, rtol=0)]
        if medians.loc[label, "plateau"]:
            # R: midpoint of the plateau [first time at 0.5, next drop)
            nxt = s.index[s.index > at_half[-1]][0]
            assert medians.loc[label, "median_r"] == pytest.approx((at_half[0] + nxt) / 2)
        else:
            assert medians.loc[label, "median_r"] == medians.loc[label, "median"]


def test_sup_distance_is_exact_at_the_union_of_jump_times():
    """Two step functions with jumps a 200-point grid would miss: the sup over the union
    of their jump times equals a brute-force sup on a very fine grid; an undefined
    stretch of the released curve is reported as its share of the follow-up, apart
    from the distance (whole follow-up: ``min_at_risk=None``)."""
    from dprepro.studies.rrr_survival.aggregate import sup_distances

    original = pd.DataFrame({"draw": 0, "group": "a", "t": [0.0, 1.0, 1.001, 4.0],
                             "survival": [1.0, 0.9, 0.2, 0.1]})
    released = pd.DataFrame({"draw": [0, 0, 0, 1, 1, 1], "group": "a",
                             "t": [0.0, 1.0005, 3.0] * 2,
                             "survival": [1.0, 0.8, 0.5, 1.0, 0.85, np.nan]})
    out = sup_distances(released, original, min_at_risk=None).set_index("draw")

    def step(t, s, at):
        idx = np.searchsorted(t, at, side="right") - 1
        return np.asarray(s)[idx]

    fine = np.linspace(0, 4.0, 4_000_001)
    o = step(original["t"].to_numpy(), original["survival"].to_numpy(), fine)
    r = step(np.array([0.0, 1.0005, 3.0]), [1.0, 0.8, 0.5], fine)
    assert out.loc[0, "distance"] == pytest.approx(np.abs(r - o).max(), abs=1e-12)
    assert out.loc[0, "distance"] == pytest.approx(0.6)      # on [1.001, 3): |0.8 − 0.2|
    assert out.loc[0, "undefined_share"] == 0.0
    # draw 1 is undefined from t = 3 on: a quarter of the original's follow-up [0, 4]
    assert out.loc[1, "undefined_share"] == pytest.approx(0.25)
    assert out.loc[1, "distance"] == pytest.approx(0.65)


def test_utility_is_scored_on_the_common_support_of_five_at_risk():
    """The score stops at the original's last time with at least 5 at risk, the same
    for every mechanism: a curve that stops in the thin tail (a KM curve of
    released labels) is neither penalised nor credited there; one that is
    undefined inside the support has that share reported in its own column."""
    from dprepro.studies.rrr_survival.aggregate import SUPPORT_MIN_AT_RISK, sup_distances

    assert SUPPORT_MIN_AT_RISK == 5
    original = pd.DataFrame({"draw": 0, "group": "a", "t": [0.0, 1.0, 2.0, 3.0, 4.0],
                             "survival": [1.0, 0.9, 0.8, 0.5, 0.0],
                             "at_risk": [20, 20, 8, 5, 2]})
    # draw 0 stops at 3.5 (in the tail); draw 1 stops at 2 (inside the support [0, 3])
    released = pd.DataFrame({"draw": [0] * 4 + [1] * 4, "group": "a",
                             "t": [0.0, 1.0, 2.0, 3.5] * 2,
                             "survival": [1.0, 0.85, 0.85, np.nan,
                                          1.0, 0.85, np.nan, np.nan]})
    out = sup_distances(released, original).set_index("draw")
    assert (out["support_end"] == 3.0).all()
    # draw 0: on [0, 3] the sup is |0.85 − 0.5| at t = 3, fully defined there
    assert out.loc[0, "distance"] == pytest.approx(0.35)
    assert out.loc[0, "undefined_share"] == 0.0
    # draw 1: undefined on [2, 3], a third of the support; distance on [0, 2): 0.05
    assert out.loc[1, "undefined_share"] == pytest.approx(1 / 3)
    assert out.loc[1, "distance"] == pytest.approx(0.05)


def test_a_curve_defined_on_less_than_half_the_support_scores_the_worst_distance():
    """A release undefined from its first step (a grid LNTE draw whose fitted at-risk
    is < 1 at the start) said nothing about the support: it scored 0 when the sup
    was taken only where defined; now it scores 1. Undefined on exactly half of the
    support it is still scored where defined."""
    from dprepro.studies.rrr_survival.aggregate import sup_distances

    original = pd.DataFrame({"draw": 0, "group": "a", "t": [0.0, 1.0, 2.0, 3.0, 4.0],
                             "survival": [1.0, 0.9, 0.8, 0.5, 0.0],
                             "at_risk": [20, 20, 8, 5, 2]})
    released = pd.DataFrame({"draw": [0] * 3 + [1] * 3 + [2] * 3, "group": "a",
                             "t": [0.0, 0.5, 1.5] * 3,
                             "survival": [1.0, np.nan, np.nan,    # undefined from 0.5
                                          1.0, 0.95, np.nan,      # undefined on [1.5, 3]
                                          1.0, 0.9, 0.6]})
    out = sup_distances(released, original).set_index("draw")
    assert out.loc[0, "undefined_share"] == pytest.approx(5 / 6)
    assert out.loc[0, "distance"] == 1.0 and out.loc[0, "scored_worst"]
    assert out.loc[1, "undefined_share"] == pytest.approx(0.5)
    assert out.loc[1, "distance"] == pytest.approx(0.05) and not out.loc[1, "scored_worst"]
    assert out.loc[2, "distance"] == pytest.approx(0.3) and not out.loc[2, "scored_worst"]


def test_median_status_reached_not_reached_or_censored():
    """Median status: reached, not reached (inf), censored at the curve's stop (NaN)."""
    frame = pd.DataFrame({"draw": [0, 0, 0, 1, 1, 1], "group": ["a", "b", "c"] * 2,
                          "median": [2.0, np.inf, np.nan, 3.0, np.nan, 1.0],
                          "ci_lower": np.nan, "ci_upper": np.nan, "median_r": np.nan,
                          "plateau": False, "ci_method": "x",
                          "censored_at": [np.nan, np.nan, 1.5, np.nan, 2.5, np.nan]})
    from dprepro.studies.rrr_survival.releases import privacy_columns

    info = {"dataset": "d", "data_origin": "real", "labels": ["a", "b", "c"],
            "privacy": privacy_columns("rrr", 1.0, 3, "exact")}
    table = median_table([(info, frame)]).set_index(["group", "statistic"])
    # each row says what its ε covers: one draw, or a summary of both (2ε together)
    assert (table.xs("single_draw", level="statistic")["epsilon_scope"] == "one draw").all()
    assert (table.xs("over_draws", level="statistic")["epsilon_scope"]
            == "summary of 2 independent draws: 2 × true_epsilon together (not a release)"
            ).all()
    assert (table["true_epsilon"] == 1.0).all()
    assert table.loc[("a", "single_draw"), "median_status"] == "reached"
    assert table.loc[("b", "single_draw"), "median_status"] == "not reached"
    assert table.loc[("c", "single_draw"), "median_status"] == "censored >= 1.5"
    assert table.loc[("c", "single_draw"), "censored_at"] == 1.5
    assert table.loc[("b", "over_draws"), "not_reached"] == 0.5
    assert table.loc[("b", "over_draws"), "censored"] == 0.5
    assert table.loc[("c", "over_draws"), "not_reached"] == 0.0
    # a NaN median without its censoring time is refused
    frame.loc[2, "censored_at"] = np.nan
    with pytest.raises(ValueError, match="censored_at"):
        median_table([(info, frame)])


def test_quantiles_over_draws_count_censored_draws_as_at_least_their_stop():
    """Censored draws are never dropped: a quantile that falls among them is censored
    (NaN, its lower bound in censored_at), never the finite quantile of the rest.
    Dropping them (the former rule) gave median 2.5 here."""
    medians = [1.0, 2.0, 3.0, 4.0, np.nan, np.nan, np.nan, np.nan]
    censored_at = [np.nan] * 4 + [3.5, 5.0, 6.0, 7.0]
    frame = pd.DataFrame({"draw": np.arange(8), "group": "a", "median": medians,
                          "ci_lower": np.nan, "ci_upper": np.nan, "median_r": np.nan,
                          "plateau": False, "ci_method": "x", "censored_at": censored_at})
    from dprepro.studies.rrr_survival.releases import privacy_columns

    info = {"dataset": "d", "data_origin": "real", "labels": ["a"],
            "privacy": privacy_columns("original", None, 1, "")}
    row = median_table([(info, frame)]).set_index("statistic").loc["over_draws"]
    # sorted lower bounds 1 2 3 3.5 4 5 6 7: the median lies between 3.5 and 4 (a censored
    # draw at 3.5 is one of the two order statistics): censored, >= 3.75
    assert np.isnan(row["median"]) and row["censored_at"] == pytest.approx(3.75)
    assert row["median_status"] == "over draws: censored >= 3.75"
    assert row["ci_lower"] == pytest.approx(1.175)   # lower bound, censored at their stops
    assert row["ci_upper"] == np.inf                 # upper bound, censored as inf
    assert row["censored"] == 0.5 and row["not_reached"] == 0.0
    # few censored draws, all above the quantiles' order statistics: exact values
    frame["median"] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, np.nan]
    frame["censored_at"] = [np.nan] * 7 + [7.5]
    row = median_table([(info, frame)]).set_index("statistic").loc["over_draws"]
    assert row["median"] == 4.5 and np.isnan(row["censored_at"])
    assert row["median_status"] == "over draws: reached"
    # every draw not reached: inf, not NaN
    frame["median"] = np.inf
    frame["censored_at"] = np.nan
    row = median_table([(info, frame)]).set_index("statistic").loc["over_draws"]
    assert row["median"] == np.inf and row["median_status"] == "over draws: not reached"
    assert row["epsilon_scope"] == "non-private reference"


def test_censored_quantile_bounds():
    from dprepro.studies.rrr_survival.analysis import censored_quantile

    assert censored_quantile([1.0, 2.0, np.nan], [np.nan, np.nan, 5.0], 0.5) == (2.0, 2.0)
    low, high = censored_quantile([1.0, np.nan, np.nan], [np.nan, 2.0, 3.0], 0.5)
    assert (low, high) == (2.0, np.inf)
    with pytest.raises(ValueError, match="censored_at"):
        censored_quantile([1.0, np.nan], [np.nan, np.nan], 0.5)


def test_single_draw_bootstrap_interval_needs_a_median_and_95_percent_of_resamples():
    from dprepro.studies.rrr_survival.analysis import _bootstrap_interval

    boot = np.r_[np.linspace(1, 10, 95), [np.nan] * 5]
    at = np.r_[[np.nan] * 95, [20.0] * 5]
    lower, upper, method = _bootstrap_interval(5.0, boot, at)
    assert lower == pytest.approx(np.quantile(np.r_[np.linspace(1, 10, 95), [20.0] * 5],
                                              0.025))
    assert upper == np.inf and "5 censored" in method
    # 94 % defined: no interval, and the method says why
    boot[94] = np.nan
    at[94] = 20.0
    lower, upper, method = _bootstrap_interval(5.0, boot, at)
    assert np.isnan(lower) and np.isnan(upper) and "only 94 of 100" in method
    # the point median itself censored: no interval whatever the resamples
    lower, upper, method = _bootstrap_interval(np.nan, np.linspace(1, 10, 100),
                                               np.full(100, np.nan))
    assert np.isnan(lower) and np.isnan(upper) and "censored" in method


def test_bands_over_many_draws_are_not_a_release():
    from dprepro.studies.rrr_survival.outputs import sidecar_privacy

    record = RevisedRandomizedResponse(epsilon=1.0, categories=range(3)).privacy_record(
        privacy_unit="patient")
    # one draw of privatised data only: a release
    assert sidecar_privacy("km_curves", [record], draws=100)["release"] is True
    # quantiles over 100 draws of the same persons compose to 100·ε: a reference
    bands = sidecar_privacy("km_bands", [record], draws=100)
    assert bands["release"] is False
    assert "100 independent draws" in bands["note"] and "100·ε" in bands["note"]
    # the per-record single-draw ε stays stated (the note says it is single-draw)
    assert bands["records"][0]["true_epsilon"] == pytest.approx(1 + np.log(2))


def test_permuted_label_reference_is_seeded_and_has_both_tests(kidney):
    from dprepro.studies.rrr_survival.analysis import permuted_logrank

    labels = labels_of(kidney)
    rng = np.random.default_rng(5)
    out = permuted_logrank(kidney, labels=labels, draws=40, rng=rng)
    assert sorted(out["draw"].unique()) == list(range(40))
    assert {"p_value", "robust_p_value"} <= set(out.columns)
    # the same seed gives the same reference
    again = permuted_logrank(kidney, labels=labels, draws=40, rng=np.random.default_rng(5))
    pd.testing.assert_frame_equal(out, again)


def _claims_of(tmp_path, cohort, labels, rrr_logrank):
    """rrr_claims on one cohort: the original, and an RRR release whose log-rank file is given."""
    from dprepro.studies.rrr_survival.analysis import run_release
    from dprepro.studies.rrr_survival.claims import rrr_claims

    releases = [{"dataset": "toy", "mechanism": "original", "epsilon": None, "calibration": "",
                 "data_origin": "synthetic"},
                {"dataset": "toy", "mechanism": "rrr", "epsilon": 1.0, "calibration": "paper",
                 "data_origin": "synthetic"}]
    inputs = {"medians": [], "curves": [], "logrank": [], "permuted": []}
    for r in releases:
        results, _, _ = run_release(cohort, dataset="toy", mechanism=r["mechanism"],
                                    epsilon=r["epsilon"], calibration=r["calibration"],
                                    labels=labels, draws=200, seed=3)
        folder = tmp_path / r["mechanism"]
        folder.mkdir()
        results["curves"].to_parquet(folder / "curves.parquet")
        results["medians"].to_csv(folder / "medians.csv", index=False)
        logrank = rrr_logrank if r["mechanism"] == "rrr" else results["logrank"]
        logrank.to_csv(folder / "logrank.csv", index=False)
        inputs["medians"].append(folder / "medians.csv")
        inputs["curves"].append(folder / "curves.parquet")
        inputs["logrank"].append(folder / "logrank.csv")
        if r["mechanism"] == "original":
            results["logrank_permuted"].to_csv(folder / "permuted.csv", index=False)
            inputs["permuted"].append(folder / "permuted.csv")
    claims = rrr_claims(inputs, releases=releases, logrank_releases=releases,
                        significance=0.05, rng=np.random.default_rng(0))
    return claims.set_index("claim_id").loc["rrr.no_conclusion_change.toy.eps1"]


def test_claims_from_the_utility_jobs_distances_equal_claims_from_the_curves(tmp_path, kidney):
    """The claims job reads the sup-distances the utility table's job wrote instead of
    every curve file: the claims must be exactly those computed from the curves."""
    from dprepro.runtime.io import write_parquet
    from dprepro.studies.rrr_survival.claims import rrr_claims
    from dprepro.studies.rrr_survival.outputs import utility

    labels = labels_of(kidney)
    releases = [{"dataset": "kidney", "mechanism": "original", "epsilon": None,
                 "calibration": "", "data_origin": "real"}]
    releases += [{"dataset": "kidney", "mechanism": m, "epsilon": e, "calibration": c,
                  "data_origin": "real"}
                 for m, c in (("rrr", "paper"), ("rrr_debiased", "paper"), ("lnte", ""),
                              ("lnte_grid", "grid=10,rows=2")) for e in (1.0, 3.0)]
    # no ε: its key reads back from the distance table as None
    releases.append({"dataset": "kidney", "mechanism": "lnte_grid_no_noise", "epsilon": None,
                     "calibration": "grid=10,rows=2", "data_origin": "real"})
    inputs = write_releases(kidney, releases, labels, tmp_path, draws=20, seed=4)
    logrank_releases = [r for r in releases if r["mechanism"] in ("original", "rrr")]
    _, _, extra = utility(inputs, releases=releases)
    write_parquet(extra["distances"], tmp_path / "distances.parquet")
    from_file = {**inputs, "distances": tmp_path / "distances.parquet"}
    del from_file["curves"]

    def claims(files):
        return rrr_claims(files, releases=releases, logrank_releases=logrank_releases,
                          significance=0.05, rng=np.random.default_rng(0))

    expected = claims(inputs)
    assert {"rrr.debiased_beats_rrr.kidney.eps1", "rrr.approaches_original.kidney.eps1-3"} & set(
        expected["claim_id"])
    pd.testing.assert_frame_equal(claims(from_file), expected)


def test_no_conclusion_change_cannot_hold_for_labels_independent_of_the_outcome(tmp_path):
    """Groups with the same survival: the original rejects nothing, and a 'release'
    whose labels are independent of the outcome (labels permuted, another seed) agrees
    with it in most draws (about 0.95^3). It must not pass: its share does not beat
    the permuted-label reference."""
    from dprepro.studies.rrr_survival.analysis import permuted_logrank

    cohort = synthetic_ipssr_cohort(np.random.default_rng(8), sizes={"a": 60, "b": 60, "c": 60},
                                    medians={"a": 12.0, "b": 12.0, "c": 12.0})
    labels = ["a", "b", "c"]
    null = permuted_logrank(cohort, labels=labels, draws=200, rng=np.random.default_rng(99))
    row = _claims_of(tmp_path, cohort, labels, null)
    # the release agrees in most draws (the old majority rule would pass it), but no more
    # than permuted labels do: the interval is on the difference from that reference
    assert "RRR share" in row["note"]
    share = float(row["note"].split("RRR share ")[1].split(" ")[0])
    assert share >= 0.5
    assert row["statistic"].endswith("minus the same share for permuted labels")
    assert row["ci_lower"] < 0 < row["ci_upper"] or row["ci_upper"] <= 0
    assert row["verdict"] != "holds" and row["criterion"] == "> 0"
    assert "rejects no pair" in row["note"] and "permuted-label" in row["note"]


@pytest.mark.parametrize(("rows", "title"), [(1, "numbers at risk (original)"),
                                             (2, "rows at risk (original; 2 per patient)")])
def test_at_risk_table_says_rows_when_patients_have_several(rows, title):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from dprepro.studies.rrr_survival.figure2_parts import at_risk_table

    fig, (ref, ax) = plt.subplots(2)
    ref.plot([0, 10], [1, 0])
    frame = pd.DataFrame({"group": "a", "t": [0.0, 5.0, 10.0], "at_risk": [8, 4, 2]})
    at_risk_table(ax, frame, ["a"], {"a": "k"}, ref, rows)
    assert ax.get_title() == title
    plt.close(fig)


@pytest.mark.parametrize("regular", [True, False])
def test_band_quantiles_equal_pandas_groupby_quantile_bit_for_bit(regular):
    """The bands' numpy quantiles are pandas' rule exactly (the table's bytes rely on it),
    with NaN left out, on the regular (draws × keys) layout and on shuffled rows."""
    from dprepro.studies.rrr_survival.aggregate import _group_quantiles

    rng = np.random.default_rng(3)
    draws, keys = 37, 50
    values = rng.uniform(size=draws * keys)
    values[rng.uniform(size=values.size) < 0.2] = np.nan
    codes = np.tile(np.arange(keys), draws)
    values[codes == 11] = np.nan  # a key with no value at all
    if not regular:
        order = rng.permutation(values.size)
        codes, values = codes[order], values[order]
    got = _group_quantiles(codes, values, keys, (0.05, 0.5, 0.95))
    grouped = pd.Series(values).groupby(codes)
    for q, column in zip((0.05, 0.5, 0.95), got[:3], strict=True):
        want = grouped.quantile(q).reindex(range(keys)).to_numpy()
        assert np.array_equal(column, want, equal_nan=True)
    assert (got[3] == grouped.count().reindex(range(keys)).to_numpy()).all()


def test_debiased_claim_rows_at_every_calibration_leave_the_published_rows_unchanged(
        tmp_path, kidney):
    """debiased_beats_rrr has a row per configured calibration (exact: equal true ε);
    adding the exact releases changes none of the paper calibration's rows (their
    bootstrap draws come from the same stream as before)."""
    from dprepro.studies.rrr_survival.claims import rrr_claims

    labels = labels_of(kidney)

    def claims_for(calibrations):
        releases = [{"dataset": "kidney", "mechanism": "original", "epsilon": None,
                     "calibration": "", "data_origin": "real"}]
        releases += [{"dataset": "kidney", "mechanism": m, "epsilon": e, "calibration": c,
                      "data_origin": "real"}
                     for c in calibrations for m in ("rrr", "rrr_debiased") for e in (1.0, 3.0)]
        inputs = write_releases(kidney, releases, labels, tmp_path / "-".join(calibrations),
                                draws=30, seed=3)
        logrank_releases = [r for r in releases if r["mechanism"] in ("original", "rrr")]
        return rrr_claims(inputs, releases=releases, logrank_releases=logrank_releases,
                          significance=0.05, rng=np.random.default_rng(0)).set_index("claim_id")

    paper = claims_for(["paper"])
    both = claims_for(["paper", "exact"])
    for e in ("eps1", "eps3"):
        assert f"rrr.debiased_beats_rrr_exact.kidney.{e}" in both.index
        assert f"rrr.debiased_beats_rrr_exact.kidney.{e}" not in paper.index
        assert "exact calibration" in both.loc[f"rrr.debiased_beats_rrr_exact.kidney.{e}",
                                               "claim"]
    pd.testing.assert_frame_equal(paper, both.loc[paper.index])


def test_a_curve_outside_the_unit_interval_is_scored_clipped_so_no_distance_exceeds_one():
    """Debiased RRR's curve can leave [0, 1] (inverted counts): scored as is, a wild but
    defined draw scored up to 13 and a mostly undefined one (worst value 1) better than
    it (referee 4). Scored clipped to [0, 1], every distance is at most 1."""
    from dprepro.studies.rrr_survival.aggregate import sup_distances

    original = pd.DataFrame({"draw": 0, "group": "a", "t": [0.0, 1.0, 2.0, 3.0],
                             "survival": [1.0, 0.8, 0.6, 0.3], "at_risk": [20, 15, 10, 6]})
    released = pd.DataFrame({"draw": [0] * 3 + [1] * 3, "group": "a",
                             "t": [0.0, 1.0, 2.5] * 2,
                             "survival": [1.0, 9.5, 0.7,      # above 1: clipped to 1
                                          1.0, 0.7, -2.0]})   # below 0: clipped to 0
    out = sup_distances(released, original).set_index("draw")
    # draw 0: clipped curve 1 on [1, 2.5): |1 − 0.6| at t = 2, then |0.7 − 0.3| = 0.4
    assert out.loc[0, "distance"] == pytest.approx(0.4)
    # draw 1: clipped to 0 from 2.5 against the original 0.6 at 2.5 → 0.6
    assert out.loc[1, "distance"] == pytest.approx(0.6)
    assert (out["distance"] <= 1.0).all()


def test_utility_counts_censored_medians_apart_from_reached_and_not_reached():
    """A censored draw (NaN median: the curve stopped above 0.5 before the group's last
    time) is left out of the median error and counted in its own column (referee 4)."""
    original_curves = pd.DataFrame({"draw": 0, "group": "a", "t": [0.0, 1.0, 2.0, 3.0],
                                    "survival": [1.0, 0.8, 0.4, 0.2],
                                    "at_risk": [20, 15, 10, 6]})
    original_medians = pd.DataFrame({"group": ["a"], "median": [2.0]})
    curves = pd.DataFrame({"draw": [0, 0, 1, 1, 2, 2, 3, 3], "group": "a",
                           "t": [0.0, 2.0] * 4, "survival": [1.0, 0.4] * 4})
    medians = pd.DataFrame({"draw": [0, 1, 2, 3], "group": "a",
                            "median": [2.5, np.nan, np.inf, np.nan]})
    info = {"dataset": "toy", "data_origin": "synthetic", "labels": ["a"],
            "privacy": privacy_columns("rrr", 1.0, 2, "paper")}
    row = utility_table([(info, curves, medians, original_curves, original_medians)]).iloc[0]
    assert row["censored"] == 0.5 and row["not_reached"] == 0.25
    assert row["median_abs_error"] == 0.5  # the one reached median, |2.5 − 2|


def write_releases(kidney, releases, labels, folder, *, draws, seed) -> dict[str, list]:
    """Run each release on kidney and write its files as the workflow does; the input
    lists of the table builders (medians, curves, logrank, permuted)."""
    from dprepro.studies.rrr_survival.analysis import run_release

    inputs = {"medians": [], "curves": [], "logrank": [], "permuted": []}
    for i, r in enumerate(releases):
        results, _, _ = run_release(kidney, dataset="kidney", mechanism=r["mechanism"],
                                    epsilon=r["epsilon"], calibration=r["calibration"],
                                    labels=labels, draws=draws, seed=seed)
        out = folder / str(i)
        out.mkdir(parents=True)
        results["curves"].to_parquet(out / "curves.parquet")
        results["medians"].to_csv(out / "medians.csv", index=False)
        inputs["medians"].append(out / "medians.csv")
        inputs["curves"].append(out / "curves.parquet")
        if "logrank" in results:
            results["logrank"].to_csv(out / "logrank.csv", index=False)
            inputs["logrank"].append(out / "logrank.csv")
        if r["mechanism"] == "original":
            results["logrank_permuted"].to_csv(out / "permuted.csv", index=False)
            inputs["permuted"].append(out / "permuted.csv")
    return inputs


def test_printed_median_is_reproduced_when_it_is_one_of_the_curves_medians():
    """On a KM plateau at exactly 0.5 every time is a median (lifelines and R report
    different ones): the claim holds when the printed value lies on the plateau, to its
    two printed decimals, and fails when it lies off it."""
    from dprepro.studies.rrr_survival.claims import _original_rows

    medians = pd.DataFrame({
        "group": ["AN", "GN", "PKD", "Other"],
        # AN: plateau [1.4333, 1.7667], printed 1.77 (its end, rounded); PKD: [2.6, 5.0667],
        # printed 2.60 (its start); GN: no plateau, printed 1.00; Other: 4.75, printed 4.70
        "median": [1.4333, 1.0, 5.0667, 4.75],
        "median_r": [1.6, 1.0, 3.83335, 4.75],
        "plateau": [True, False, True, False],
    })
    logrank = pd.DataFrame({"p_value": [0.3], "robust_p_value": [0.4]})
    rows = {r["claim_id"].rsplit(".", 1)[1]: r
            for r in _original_rows("kidney", medians, logrank, "real", "patient")
            if "original_median" in r["claim_id"]}
    assert rows["AN"]["verdict"] == "holds"
    assert rows["AN"]["reproduced_value"] == pytest.approx(1.77 - 1.7667)
    assert rows["PKD"]["verdict"] == "holds" and rows["PKD"]["reproduced_value"] == 0.0
    assert rows["GN"]["verdict"] == "holds"
    assert rows["Other"]["verdict"] == "fails"
    assert rows["Other"]["reproduced_value"] == pytest.approx(0.05)
    assert "every time in it is a median" in rows["AN"]["note"]


def test_medians_preserved_states_the_verdicts_at_half_and_twice_its_tolerance():
    from dprepro.studies.rrr_survival.claims import _with_tolerance_verdicts

    # 40 draws: errors 0.2 in 30 of them (within 0.25 and 0.5, not within 0.125)
    errors = np.r_[np.full(30, 0.2), np.full(10, 0.4)]
    row = _with_tolerance_verdicts({"criterion": ">= 0.5"}, errors, 0.25)
    assert row["verdict_half_tolerance"] == "fails"     # 0 of 40 within 0.125
    assert row["verdict_double_tolerance"] == "holds"   # 40 of 40 within 0.5


def assert_rows_follow_their_declarations(rows):
    """Every row maps to one declaration, with its origin and source unless the row applies
    the paper's statement beyond the paper's setting (then its source says so), a kidney
    row of a Figure-2 statement cites footnote 2 (Figure 2 omits the kidney curves), or a
    beyond declaration's row adds the cohort to its source."""
    from dprepro.claims.registry import CLAIMS
    from dprepro.claims.table import BEYOND
    from dprepro.studies.rrr_survival.claim_helpers import KIDNEY_FOOTNOTE, SOURCE

    assert len(rows)
    for row in rows.to_dict("records"):
        declaration = CLAIMS.match(row["claim_id"])
        assert declaration.study == row["study"] == "rrr_survival"
        if declaration.origin == "paper" and row["claim_origin"] == "beyond":
            assert row["source"].startswith(BEYOND), row["claim_id"]
        elif declaration.origin == "paper" and ".kidney" in row["claim_id"] \
                and "Figure 2" in declaration.source:
            assert row["claim_origin"] == "paper", row["claim_id"]
            assert row["source"].startswith(SOURCE) and KIDNEY_FOOTNOTE in row["source"]
            assert "Figure 2" not in row["source"], row["claim_id"]
        else:
            assert row["claim_origin"] == declaration.origin, row["claim_id"]
            assert row["source"].startswith(declaration.source), row["claim_id"]


def test_every_claims_row_maps_to_a_declaration_with_its_origin_and_source(tmp_path, kidney):
    from dprepro.claims.registry import CLAIMS
    from dprepro.studies.rrr_survival.claims import rrr_claims

    labels = labels_of(kidney)
    releases = [{"dataset": "kidney", "mechanism": "original", "epsilon": None,
                 "calibration": "", "data_origin": "real"}]
    releases += [{"dataset": "kidney", "mechanism": m, "epsilon": e, "calibration": c,
                  "data_origin": "real"}
                 for m, c in (("rrr", "paper"), ("rrr_debiased", "paper"), ("lnte", ""),
                              ("rrr", "exact"), ("rrr_debiased", "exact"),
                              ("lnte_grid", "grid=10,rows=2")) for e in (1.0, 3.0)]
    inputs = write_releases(kidney, releases, labels, tmp_path, draws=20, seed=4)
    curve_releases = [r for r in releases if r["mechanism"] in ("original", "lnte")
                      or (r["mechanism"] == "rrr" and r["calibration"] == "paper")]
    inputs["group_curves"] = [path for r, path in zip(releases, inputs["curves"], strict=True)
                              if r in curve_releases]
    claims = rrr_claims(inputs, releases=releases,
                        logrank_releases=[r for r in releases
                                          if r["mechanism"] in ("original", "rrr")],
                        significance=0.05, rng=np.random.default_rng(0),
                        curve_releases=curve_releases)
    assert_rows_follow_their_declarations(claims)
    # every declaration of the main claims has a row on this configuration
    # (the cross-cohort one needs IPSS-R beside kidney: its own test)
    main = {d.id for d in CLAIMS.declarations("rrr_survival", group="")
            if ".cox_" not in d.id and "low_cardinality" not in d.id}
    assert main == {CLAIMS.match(i).id for i in claims["claim_id"]}
    # beyond the paper's setting: Table 1 states no conclusion change at ε = 3 only
    rows = claims.set_index("claim_id")
    row = rows.loc["rrr.no_conclusion_change.kidney.eps1"]
    assert row["claim_origin"] == "beyond" and "ε = 3 only" in row["source"]
    # Figure 2 shows IPSS-R only: the kidney rows of its statements cite footnote 2
    for claim_id in ("rrr.distinctions_less_pronounced.kidney.eps1",
                     "rrr.approaches_original.kidney", "rrr.more_accurate_than_lnte.kidney.eps1"):
        assert "footnote 2" in rows.loc[claim_id, "source"], claim_id
        assert rows.loc[claim_id, "claim_origin"] == "paper", claim_id
    assert "RRR only" in rows.loc["rrr.distinctions_less_pronounced.kidney.eps1", "note"]
    # the comparison at equal true ε is ours: declared and reported beyond the paper
    true_eps = rows.loc["rrr.more_accurate_than_lnte_true_eps.kidney.eps1"]
    assert CLAIMS.match(true_eps.name).origin == "beyond" == true_eps["claim_origin"]
    assert true_eps["source"].startswith("beyond the paper: ours")
    # this grid LNTE has no public horizon (its grid ends at the largest follow-up): its
    # true ε is ∞, so "both ε-DP" is false and the comparison untestable, never decided
    assert true_eps["verdict"] == "untestable", true_eps["note"]
    assert "grid LNTE's true ε is inf" in true_eps["note"]
    assert "datasets.kidney.horizon" in true_eps["note"]


def test_the_equal_true_epsilon_claim_is_decided_with_a_public_horizon(tmp_path, kidney):
    from dprepro.studies.rrr_survival.claims import rrr_claims

    labels = labels_of(kidney)
    releases = [{"dataset": "kidney", "mechanism": m, "epsilon": e, "calibration": c,
                 "data_origin": "real"}
                for m, e, c in (("original", None, ""), ("rrr", 1.0, "paper"),
                                ("rrr", 1.0, "exact"), ("rrr", 2.0, "exact"),
                                ("lnte_grid", 1.0, "grid=10,rows=2,horizon=20"))]
    inputs = write_releases(kidney, releases, labels, tmp_path, draws=20, seed=4)
    claims = rrr_claims(inputs, releases=releases,
                        logrank_releases=[r for r in releases
                                          if r["mechanism"] in ("original", "rrr")],
                        significance=0.05, rng=np.random.default_rng(0)).set_index("claim_id")
    # one neighbour relation (a label replaced): RRR at ε = 2 meets grid LNTE at stated 1,
    # which is 1-DP under add/remove and 2-DP when a label moves between groups
    row = claims.loc["rrr.more_accurate_than_lnte_true_eps.kidney.eps2"]
    assert row["verdict"] in ("holds", "fails", "inconclusive"), row["note"]
    assert "stated ε 2, true ε 2.000" in row["note"]
    assert "against lnte_grid at stated ε 1 (true ε 1.000)" in row["note"]
    # RRR at ε = 1 would need grid LNTE at stated 0.5, which this run lacks: no verdict
    # from a pair whose guarantees differ by a factor of two
    row = claims.loc["rrr.more_accurate_than_lnte_true_eps.kidney.eps1"]
    assert row["verdict"] == "untestable"
    assert "add 0.5 to rrr_survival.epsilons" in row["note"]


def test_sources_name_the_cohorts_the_paper_analysed():
    """Tables 1-2 report kidney only, Figure 2 shows IPSS-R only (kidney: footnote 2); the
    paper's statements elsewhere are beyond it, and only a cohort it never used is one it
    "did not analyse"."""
    from dprepro.studies.rrr_survival.claim_helpers import (
        KIDNEY_FOOTNOTE,
        SOURCE,
        paper_or_beyond,
    )

    table = "§5, Table 2 and its discussion"
    figure = "§5, Figure 2 and its discussion"
    assert paper_or_beyond("kidney", table) == f"{SOURCE}, {table}"
    assert paper_or_beyond("ipssr", table) == (
        f"beyond the paper (the statement of {table}, on a cohort Table 2 does not report)")
    assert paper_or_beyond("gbsg2", table).endswith("on a cohort the paper did not analyse)")
    assert paper_or_beyond("ipssr", figure, KIDNEY_FOOTNOTE) == f"{SOURCE}, {figure}"
    assert paper_or_beyond("kidney", figure, KIDNEY_FOOTNOTE) == f"{SOURCE}, {KIDNEY_FOOTNOTE}"
    assert "did not analyse" in paper_or_beyond("veteran", figure, KIDNEY_FOOTNOTE)


def test_a_claim_on_an_empty_or_degenerate_release_is_untestable_never_holds(tmp_path, kidney):
    """Issue 40: a horizon in the wrong unit (0.5 on data in months) leaves grid LNTE's
    release a sliver of the support; RRR then "wins" every draw and the claim held. A
    claim on an empty or degenerate release is untestable, naming the release and the key."""
    from dprepro.runtime.io import write_parquet
    from dprepro.studies.rrr_survival.claims import rrr_claims
    from dprepro.studies.rrr_survival.outputs import utility

    labels = labels_of(kidney)

    def claims_with(grid: str, drop_lnte: bool = False):
        releases = [{"dataset": "kidney", "mechanism": "original", "epsilon": None,
                     "calibration": "", "data_origin": "real"}]
        releases += [{"dataset": "kidney", "mechanism": m, "epsilon": e, "calibration": c,
                      "data_origin": "real"}
                     for m, e, c in (("rrr", 1.0, "paper"), ("lnte", 1.0, ""),
                                     ("rrr", 1.0, "exact"), ("lnte_grid", 1.0, grid),
                                     ("lnte_grid", 0.5, grid))]
        folder = tmp_path / f"{grid}-{drop_lnte}"
        inputs = write_releases(kidney, releases, labels, folder, draws=20, seed=4)
        _, _, extra = utility(inputs, releases=releases)
        distances = extra["distances"]
        if drop_lnte:
            # a release with no curve on the common support: every distance undefined
            distances = distances.assign(distance=distances["distance"].where(
                distances["mechanism"] != "lnte"))
        write_parquet(distances, folder / "distances.parquet")
        files = {k: v for k, v in inputs.items() if k != "curves"}
        files["distances"] = folder / "distances.parquet"
        return rrr_claims(files, releases=releases,
                          logrank_releases=[r for r in releases
                                            if r["mechanism"] in ("original", "rrr")],
                          significance=0.05, rng=np.random.default_rng(0)).set_index("claim_id")

    true_eps = "rrr.more_accurate_than_lnte_true_eps.kidney.eps1"
    sane = claims_with("grid=10,rows=2,horizon=20")
    assert sane.loc[true_eps, "verdict"] != "untestable"
    sliver = claims_with("grid=10,rows=2,horizon=0.5")
    row = sliver.loc[true_eps]
    # the same interval as a comparison with a proper release would give a verdict ...
    assert row["ci_lower"] > 0.5
    # ... but the release says nothing past 0.5 months: untestable, with the reason
    assert row["verdict"] == "untestable"
    assert "degenerate" in row["note"] and "horizon 0.5" in row["note"]
    assert "datasets.kidney.horizon" in row["note"]
    assert row["verdict_half_tolerance"] == row["verdict_double_tolerance"] == ""
    # rows not on that release keep their verdicts and numbers
    other = "rrr.more_accurate_than_lnte.kidney.eps1"
    pd.testing.assert_series_equal(sliver.loc[other], sane.loc[other])
    empty = claims_with("grid=10,rows=2,horizon=20", drop_lnte=True)
    for claim_id in (other, "rrr.lnte_levels_off.kidney.eps1",
                     "rrr.medians_more_accurate_than_lnte.kidney.eps1"):
        assert empty.loc[claim_id, "verdict"] == "untestable", claim_id
        assert "lnte ε = 1 release is empty" in empty.loc[claim_id, "note"], claim_id
    assert np.isnan(empty.loc[other, "reproduced_value"])
