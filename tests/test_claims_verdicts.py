"""Claims tables (dprepro.claims.table): criteria, verdicts at the boundaries, bootstrap intervals.
"""

import math

import numpy as np
import pandas as pd
import pytest

from dprepro.claims.table import (
    CLAIM_COLUMNS,
    Criterion,
    bootstrap_interval,
    claim_row,
    claims_frame,
    merge_claims,
    verdict,
)


@pytest.mark.parametrize(("text", "inside", "outside"), [
    ("< 1", [0.999, -5], [1, 1.001]),
    ("<= 1", [1, 0.5], [1.0001]),
    ("> 0", [1e-12, 3], [0, -1]),
    (">= 0.8", [0.8, 2], [0.7999]),
    ("within [0.67, 1.5]", [0.67, 1, 1.5], [0.6699, 1.5001]),
    ("  <=  5e-2 ", [0.05], [0.0501]),
    ("< inf", [1e300], [math.inf]),
])
def test_criteria_contain_exactly_their_values(text, inside, outside):
    crit = Criterion.parse(text)
    assert all(crit.contains(v) for v in inside)
    assert not any(crit.contains(v) for v in outside)


@pytest.mark.parametrize("text", ["== 1", "< ", "within [2, 1]", "within [1, 1]", "between 1 2",
                                  "<1 and >0"])
def test_unknown_criteria_are_refused_naming_them(text):
    with pytest.raises(ValueError, match="criterion"):
        Criterion.parse(text)


def test_a_criterion_must_be_text():
    with pytest.raises(TypeError):
        Criterion.parse(1.0)


@pytest.mark.parametrize(("criterion", "lower", "upper", "expected"), [
    ("< 1", 0.5, 0.9, "holds"),
    ("< 1", 0.5, 1.0, "inconclusive"),   # the upper end touches the open boundary
    ("< 1", 1.0, 1.2, "fails"),          # all of [1, 1.2] violates "< 1"
    ("<= 1", 0.9, 1.0, "holds"),
    ("<= 1", 1.0, 1.2, "inconclusive"),  # 1 itself satisfies "<= 1"
    ("<= 1", 1.01, 1.2, "fails"),
    ("> 0", -1.0, 0.0, "fails"),
    ("> 0", 0.0, 1.0, "inconclusive"),
    (">= 0", 0.0, 1.0, "holds"),
    (">= 0", -1.0, -0.5, "fails"),
    ("within [0.67, 1.5]", 0.7, 1.4, "holds"),
    ("within [0.67, 1.5]", 0.67, 1.5, "holds"),
    ("within [0.67, 1.5]", 0.5, 0.8, "inconclusive"),
    ("within [0.67, 1.5]", 0.5, 2.0, "inconclusive"),
    ("within [0.67, 1.5]", 1.6, 2.0, "fails"),
    ("within [0.67, 1.5]", 0.1, 0.5, "fails"),
    ("within [0.67, 1.5]", 1.5, 1.5, "holds"),
])
def test_verdicts(criterion, lower, upper, expected):
    assert verdict(lower, upper, criterion) == expected
    assert verdict(lower, upper, Criterion.parse(criterion)) == expected


def test_fewer_independent_units_than_the_minimum_make_a_claim_untestable():
    crit = Criterion.parse("> 0; at least 5 independent units")
    assert (crit.lower, crit.upper, crit.min_units) == (0.0, math.inf, 5)
    assert crit.contains(0.1) and not crit.contains(0.0)
    assert verdict(0.1, 0.2, crit, units=5) == "holds"
    assert verdict(-0.2, -0.1, crit, units=7) == "fails"
    assert verdict(0.1, 0.2, crit, units=4) == "untestable"
    assert verdict(-0.2, -0.1, "within [-1, -0.5]; at least 2 independent units",
                   units=1) == "untestable"
    with pytest.raises(ValueError, match="needs the number of independent units"):
        verdict(0.1, 0.2, crit)
    # without the suffix the count is not needed and changes nothing
    assert verdict(0.1, 0.2, "> 0", units=1) == "holds"
    with pytest.raises(ValueError, match="optionally followed by '; at least N"):
        Criterion.parse("> 0; at least five independent units")
    with pytest.raises(ValueError, match="more than one minimum"):
        Criterion.parse("> 0; at least 5 independent units; at least 3 independent units")
    for units in (math.nan, 4.9, -1, True):
        with pytest.raises(ValueError, match="units must be a count"):
            verdict(0.1, 0.2, crit, units=units)


def test_verdict_refuses_nan_and_reversed_intervals():
    with pytest.raises(ValueError, match="NaN"):
        verdict(math.nan, 1.0, "< 2")
    with pytest.raises(ValueError, match="exceeds"):
        verdict(2.0, 1.0, "< 2")


def test_bootstrap_is_paired_over_replicates():
    # b = 2a in every replicate: a paired resample keeps mean(b)/mean(a) at exactly 2,
    # resampling a and b separately would not
    a = np.random.default_rng(3).exponential(size=50)
    estimate, lower, upper = bootstrap_interval(lambda x, y: y.mean() / x.mean(), [a, 2 * a],
                                                rng=np.random.default_rng(4), resamples=200)
    assert estimate == pytest.approx(2.0) and lower == pytest.approx(2.0)
    assert upper == pytest.approx(2.0)


def test_bootstrap_is_reproducible_from_the_generator():
    x = np.random.default_rng(5).normal(size=40)
    first = bootstrap_interval(np.mean, [x], rng=np.random.default_rng(6), resamples=300)
    again = bootstrap_interval(np.mean, [x], rng=np.random.default_rng(6), resamples=300)
    other = bootstrap_interval(np.mean, [x], rng=np.random.default_rng(7), resamples=300)
    assert first == again and first != other
    assert first[0] == pytest.approx(x.mean())


def test_batched_bootstrap_gives_the_numbers_of_one_call_per_resample():
    """batched=True calls the statistic once on all resamples: the interval must be exactly
    (bit for bit) that of one call per resample with the same generator."""
    draws = np.random.default_rng(8)
    a, b = draws.exponential(size=(2, 137))  # odd length: pairwise sums with a remainder
    b[5] = np.nan  # a NaN propagates the same way in both

    def ratio(x, y):
        return np.mean(x, axis=-1) / np.mean(y, axis=-1)

    for samples in ([a, b], [a, a[::-1].copy()]):
        one_by_one = bootstrap_interval(ratio, samples, rng=np.random.default_rng(9))
        batched = bootstrap_interval(ratio, samples, rng=np.random.default_rng(9),
                                     batched=True)
        np.testing.assert_array_equal(batched, one_by_one)
    with pytest.raises(ValueError, match="one per resample"):
        bootstrap_interval(lambda x: np.mean(x), [a], rng=np.random.default_rng(9),
                           batched=True)


def test_bootstrap_interval_of_a_mean_has_its_normal_width_and_coverage():
    rng = np.random.default_rng(20240915)
    # width: the 95 % interval of a mean of n = 400 N(0, 1) draws is about 2·1.96/√400
    x = rng.normal(size=400)
    _, lower, upper = bootstrap_interval(np.mean, [x], rng=rng, resamples=2000)
    assert 0.17 < upper - lower < 0.23
    # coverage over 200 independent data sets of n = 60 (percentile bootstrap ≈ 0.93):
    # for a true coverage in [0.92, 0.95] the count leaves 165..199 with probability
    # < 4e-5 (and the seed is fixed); an interval of ±1 SE (coverage 0.68) lands far below
    covered = 0
    for _ in range(200):
        sample = rng.normal(loc=1.0, size=60)
        _, lower, upper = bootstrap_interval(np.mean, [sample], rng=rng, resamples=200)
        covered += lower <= 1.0 <= upper
    assert 165 <= covered <= 199


def test_bootstrap_interval_narrows_with_a_lower_level():
    x = np.random.default_rng(8).normal(size=100)
    _, lo95, hi95 = bootstrap_interval(np.mean, [x], rng=np.random.default_rng(9))
    _, lo50, hi50 = bootstrap_interval(np.mean, [x], rng=np.random.default_rng(9), level=0.5)
    assert lo95 < lo50 < hi50 < hi95


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"rng": np.random.RandomState(0)}, TypeError, "Generator"),
    ({"level": 1.0}, ValueError, "level"),
    ({"level": 0.0}, ValueError, "level"),
    ({"resamples": 50}, ValueError, "resamples"),
])
def test_bootstrap_refuses_bad_arguments(kwargs, error, message):
    arguments = {"rng": np.random.default_rng(0), **kwargs}
    with pytest.raises(error, match=message):
        bootstrap_interval(np.mean, [np.ones(10)], **arguments)


def test_bootstrap_refuses_unpaired_samples():
    with pytest.raises(ValueError, match=r"same number of replicates.*\[9, 10\]"):
        bootstrap_interval(lambda a, b: 0.0, [np.ones(10), np.ones(9)],
                           rng=np.random.default_rng(0))


def row(claim_id, study="ldp_indicators", **changes):
    fields = {"study": study, "claim_id": claim_id, "claim": "F̌ below F", "source": "Fig. 1",
              "statistic": "IMSE ratio", "reproduced_value": 0.8, "ci_lower": 0.7,
              "ci_upper": 0.9, "ci_method": "percentile bootstrap over the simulated samples",
              "criterion": "< 1", "privacy_unit": "individual"}
    return claim_row(**{**fields, **changes})


def test_claim_row_computes_its_verdict_and_checks_the_id_prefix():
    assert row("ldp.bias_similar")["verdict"] == "holds"
    assert row("ldp.x", ci_upper=1.1)["verdict"] == "inconclusive"
    assert row("ldp.x", ci_lower=1.0, ci_upper=1.1)["verdict"] == "fails"
    with pytest.raises(ValueError, match="prefix 'ldp'"):
        row("rrr.median_preserved")
    for method in ("", "  ", None):
        with pytest.raises(ValueError, match="ci_method of claim 'ldp.x' must name how"):
            row("ldp.x", ci_method=method)
        with pytest.raises(ValueError, match="privacy_unit of claim 'ldp.x' must name whom"):
            row("ldp.x", privacy_unit=method)
    assert row("ldp.x")["privacy_unit"] == "individual"


def test_claims_frame_has_the_contract_columns_and_unique_ids():
    frame = claims_frame([row("ldp.a"), row("ldp.b")])
    assert list(frame.columns) == CLAIM_COLUMNS
    assert list(frame["claim_id"]) == ["ldp.a", "ldp.b"]
    with pytest.raises(ValueError, match=r"duplicate claim ids \['ldp.a'\]"):
        claims_frame([row("ldp.a"), row("ldp.b"), row("ldp.a")])
    with pytest.raises(ValueError, match="unknown verdicts"):
        claims_frame([{**row("ldp.a"), "verdict": "maybe"}])


def test_merge_claims_keeps_study_order_and_rejects_clashing_ids():
    ldp = claims_frame([row("ldp.a")])
    rrr = claims_frame([row("rrr.a", study="rrr_survival")])
    merged = merge_claims([rrr, ldp])
    assert list(merged["study"]) == ["rrr_survival", "ldp_indicators"]
    with pytest.raises(ValueError, match="duplicate"):
        merge_claims([ldp, ldp])
    assert isinstance(merged, pd.DataFrame)


def test_newcombe_difference_matches_the_published_example():
    from dprepro.claims.table import newcombe_difference

    # Newcombe (1998), Statistics in Medicine 17:873, Table II, example (a): 56/70 - 48/80,
    # method 10 (hybrid score): 0.2000, 0.0524 to 0.3339
    d, lower, upper = newcombe_difference(56, 70, 48, 80)
    assert d == pytest.approx(0.2)
    assert (round(lower, 4), round(upper, 4)) == (0.0524, 0.3339)
    # a difference at the boundary stays inside [-1, 1]
    assert newcombe_difference(10, 10, 0, 10)[2] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="proportion 2"):
        newcombe_difference(1, 2, 3, 2)


def _row(**changes):
    from dprepro.claims.table import claim_row

    base = {"study": "rrr_survival", "claim_id": "rrr.x", "claim": "c", "source": "Table 2",
            "statistic": "s", "reproduced_value": 0.012, "ci_lower": 0.007,
            "ci_upper": 0.018, "ci_method": "bootstrap", "criterion": "<= 0.01",
            "privacy_unit": "patient"}
    return claim_row(**{**base, **changes})


def test_claim_rows_state_origin_and_the_verdicts_at_half_and_twice_our_tolerance():
    row = _row(data_origin="real")
    assert (row["claim_origin"], row["source"], row["data_origin"]) == ("paper", "Table 2",
                                                                         "real")
    assert row["verdict_half_tolerance"] == row["verdict_double_tolerance"] == ""
    row = _row(criterion_at=lambda t: f"<= {t:g}", tolerance=0.01)
    assert row["criterion"] == "<= 0.01" and row["verdict"] == "inconclusive"
    assert row["verdict_half_tolerance"] == "fails"
    assert row["verdict_double_tolerance"] == "holds"
    beyond = _row(claim_origin="beyond")
    assert beyond["source"] == "beyond the paper (Table 2)"
    assert _row(source="beyond the paper: ours")["claim_origin"] == "beyond"
    with pytest.raises(ValueError, match="data_origin"):
        _row(data_origin="made up")
    with pytest.raises(ValueError, match="claim_origin"):
        _row(claim_origin="elsewhere")


def test_an_unreliable_interval_gives_no_firm_verdict_and_untestable_states_why():
    firm = _row(ci_lower=0.001, ci_upper=0.002)
    assert firm["verdict"] == "holds"
    assert (firm["reliable"], firm["reliability_reason"]) == (True, "")
    soft = _row(ci_lower=0.001, ci_upper=0.002, reliable=False,
                reliability_reason="mean over a selected subset", note="mean-based")
    assert soft["verdict"] == "inconclusive"
    assert (soft["reliable"], soft["reliability_reason"]) == (False,
                                                              "mean over a selected subset")
    assert soft["note"] == "mean-based"
    never = _row(untestable="true by construction")
    assert never["verdict"] == "untestable"
    assert never["note"] == "untestable: true by construction"


def test_an_unreliable_row_must_say_why_and_a_reliable_one_has_no_reason():
    with pytest.raises(ValueError, match="reliability_reason"):
        _row(reliable=False)
    with pytest.raises(ValueError, match="reliability_reason"):
        _row(reliable=False, reliability_reason="  ")
    with pytest.raises(ValueError, match="reliable=True"):
        _row(reliability_reason="why?")
    with pytest.raises(TypeError, match="bool"):
        _row(reliable="no")


def _cox_bias_row(**changes):
    # rrr.cox_corrected_unbiased.ipssr.eps1.exact on main at 40d2f7a: bias interval
    # [-0.454, -0.118] against +-0.1, 57.5 % of the corrected fits converged
    return _row(claim_id="rrr.cox_corrected_unbiased.ipssr.eps1.exact",
                reproduced_value=-0.286, ci_lower=-0.454, ci_upper=-0.118,
                criterion_at=lambda t: f"within [{-t:g}, {t:g}]", tolerance=0.1, **changes)


def test_no_tolerance_verdict_is_firmer_than_the_verdict_of_an_unreliable_row():
    firm = _cox_bias_row()
    # the interval alone: outside +-0.1 and +-0.05, straddling +-0.2
    assert (firm["verdict"], firm["verdict_half_tolerance"],
            firm["verdict_double_tolerance"]) == ("fails", "fails", "inconclusive")
    row = _cox_bias_row(reliable=False, reliability_reason="23 of 40 fits converged (57.5%)")
    # on main the half-tolerance verdict said "fails" beside an inconclusive verdict
    assert (row["verdict"], row["verdict_half_tolerance"],
            row["verdict_double_tolerance"]) == ("inconclusive",) * 3
    assert row["reliable"] is False and "57.5%" in row["reliability_reason"]
    # the same rule for tolerance verdicts a study computes itself (a share recounted)
    counted = _cox_bias_row(reliable=False, reliability_reason="few fits",
                            tolerance_verdicts={"verdict_half_tolerance": "fails",
                                                "verdict_double_tolerance": "holds"})
    assert (counted["verdict_half_tolerance"],
            counted["verdict_double_tolerance"]) == ("inconclusive", "inconclusive")
    with pytest.raises(ValueError, match="tolerance_verdicts"):
        _cox_bias_row(tolerance_verdicts={"verdict": "holds"})
    # an untestable row has no tolerance verdicts, whatever the study computed
    never = _cox_bias_row(untestable="one cohort", tolerance_verdicts={
        "verdict_half_tolerance": "fails"})
    assert never["verdict_half_tolerance"] == never["verdict_double_tolerance"] == ""


_ORDER = {"fails": 0, "inconclusive": 1, "holds": 2}


@pytest.mark.parametrize("reliable", [True, False])
@pytest.mark.parametrize(("lower", "upper"), [(-0.454, -0.118), (-0.12, 0.03), (-0.04, 0.04),
                                              (-0.3, 0.3), (0.06, 0.08), (0.5, 0.9)])
def test_verdicts_never_contradict_each_other_across_tolerances(lower, upper, reliable):
    """A looser tolerance never gives a worse verdict than a stricter one, and a row
    whose verdict is inconclusive because it is unreliable has no firm tolerance verdict."""
    reason = {} if reliable else {"reliable": False, "reliability_reason": "selected draws"}
    row = _row(ci_lower=lower, ci_upper=upper, reproduced_value=(lower + upper) / 2,
               criterion_at=lambda t: f"within [{-t:g}, {t:g}]", tolerance=0.1, **reason)
    half, mid, double = (row[c] for c in ("verdict_half_tolerance", "verdict",
                                          "verdict_double_tolerance"))
    assert _ORDER[half] <= _ORDER[mid] <= _ORDER[double]
    if not reliable:
        assert {half, mid, double} == {"inconclusive"}


def test_a_claims_table_refuses_an_unknown_data_origin():
    from dprepro.claims.table import claims_frame

    row = _row(data_origin="real")
    assert claims_frame([row])["data_origin"].tolist() == ["real"]
    with pytest.raises(ValueError, match="unknown data origins"):
        claims_frame([{**row, "data_origin": "{'claim_origin': 'beyond'}"}])


def test_the_merged_table_recounts_the_claims_a_note_says_are_uncorrected():
    """Issue 38: every ldp note said "143 claims" where results/claims.csv has 149 ldp
    rows (the privacy statements come from the audit's job)."""
    from dprepro.claims.table import family_note

    testing = f"95% interval per claim, {family_note(2)}"
    ldp = claims_frame([row("ldp.a", note=f"x; {testing}"), row("ldp.b", note=testing)])
    assert ldp["note"].str.endswith("correction across the 2 claims of this table").all()
    privacy = claims_frame([row(f"ldp.privacy.{i}") for i in range(3)])
    rrr = claims_frame([row("rrr.a", study="rrr_survival", note="mine")])
    merged = merge_claims([ldp, rrr, privacy])
    counted = "across the 5 claims of ldp_indicators in results/claims.csv"
    assert merged.loc[0, "note"] == f"x; 95% interval per claim, no family-wise " \
                                     f"(multiple-testing) correction {counted}"
    assert merged.loc[1, "note"].endswith(counted)
    assert merged.loc[2, "note"] == "mine"
    # merging again counts the same
    assert merge_claims([merged])["note"].tolist() == merged["note"].tolist()
