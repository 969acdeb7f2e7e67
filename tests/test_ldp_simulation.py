"""Simulation design, seeds and aggregation of the ldp_indicators study."""

import math
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dprepro.mechanisms.registry import (
    REFERENCE,
    IndicatorMechanism,
    check_mechanism_names,
    get_mechanism,
    register,
)
from dprepro.runtime.seeds import replicate_generators, seed_sequence, stable_id
from dprepro.studies.ldp_indicators.simulation import (
    censoring_probability,
    error_summary,
    presmoother_curve,
    simulate_alphas,
    simulate_and_estimate,
    simulate_censored_regression,
    split_alphas,
    true_conditional_cdf,
    true_event_probability,
)
from dprepro.studies.ldp_indicators.tables import (
    PRIVACY_COLUMNS,
    integrated_mse,
    mse_table,
    privacy_records,
    table_privacy_records,
)

THIRD = [1 / 3] * 3


def test_stable_id_is_crc32_not_salted_hash():
    assert stable_id("ldp_indicators") == zlib.crc32(b"ldp_indicators")


def test_seed_sequence_depends_on_every_part():
    base = seed_sequence(1, "s", "step", 0).generate_state(2).tolist()
    for other in [(2, "s", "step", 0), (1, "t", "step", 0), (1, "s", "other", 0),
                  (1, "s", "step", 1)]:
        assert seed_sequence(*other).generate_state(2).tolist() != base
    a, b = replicate_generators(1, "s", "step", 2)
    assert a.random() != b.random()


@pytest.mark.parametrize(("lambda_c", "expected"), [(THIRD, 0.25), ([1, 1, 1], 0.5)])
def test_censoring_levels_match_the_design(lambda_c, expected):
    # docs/design.md §3: λ_C = λ_T/3 gives 25 %, λ_C = λ_T gives 50 % (the paper swaps them)
    assert censoring_probability([1, 1, 1], lambda_c) == pytest.approx(expected, abs=1e-12)
    _, _, delta = simulate_censored_regression(seed_sequence(5, "t", "c", 0), replicates=50,
                                               n=2000, lambda_t=[1, 1, 1], lambda_c=lambda_c)
    # 100,000 Bernoulli draws: 6 standard errors is a 1e-9 level
    assert abs((1 - delta.mean()) - expected) < 6 * np.sqrt(expected * (1 - expected) / 1e5)


def test_simulated_event_times_follow_the_model():
    from scipy import stats
    x, y, d = simulate_censored_regression(seed_sequence(6, "t", "m", 0), replicates=1,
                                           n=100_000, lambda_t=[1, 1, 1], lambda_c=[1e-9, 0, 0])
    # almost no censoring: Y*rate(X) is standard exponential
    rate = 1 + x + x**2
    assert stats.kstest((y * rate).ravel(), "expon").pvalue > 1e-9
    assert stats.kstest(x.ravel(), "uniform").pvalue > 1e-9


def test_replicate_r_does_not_depend_on_the_number_of_replicates():
    kwargs = {"n": 50, "lambda_t": [1, 1, 1], "lambda_c": THIRD}
    small = simulate_censored_regression(seed_sequence(3, "s", "x", 0), replicates=3, **kwargs)
    large = simulate_censored_regression(seed_sequence(3, "s", "x", 0), replicates=8, **kwargs)
    for a, b in zip(small, large, strict=True):
        np.testing.assert_array_equal(a, b[:3])


def run(alpha, reps=6, n=120):
    return simulate_and_estimate(
        data_seed=seed_sequence(9, "ldp", "sim", 0),
        noise_seed=seed_sequence(9, "ldp", f"noise{alpha}", 0),
        replicates=reps, n=n, lambda_t=[1, 1, 1], lambda_c=THIRD, alpha=alpha, x=0.5,
        bandwidth_multiplier=5, t=np.linspace(0.05, 1.5, 8))


def test_non_private_estimates_do_not_depend_on_alpha():
    a, b = run(0.2), run(2.0)
    for name in ("beran", "generalized_beran"):
        np.testing.assert_array_equal(a.estimates[name], b.estimates[name])
    assert not np.array_equal(a.estimates["private_beran"], b.estimates["private_beran"])


def test_error_summary_decomposes_mse():
    rng = np.random.default_rng(0)
    est = rng.normal(size=(50, 7))
    truth = np.linspace(0, 1, 7)
    s = error_summary(est, truth)
    np.testing.assert_allclose(s["mse"], s["bias"] ** 2 + s["variance"], rtol=1e-12)
    np.testing.assert_allclose(s["variance"], est.var(axis=0), rtol=1e-12)


def test_true_cdf_at_half():
    assert true_conditional_cdf(1.0, x=0.5, lambda_t=[1, 1, 1]) == pytest.approx(
        1 - np.exp(-1.75))


def results_for(alphas):
    out = []
    for alpha in alphas:
        setting = {"censoring": "25", "n": 120, "alpha": alpha, "lambda_t": [1, 1, 1]}
        out.append((setting, run(alpha).to_frame()))
    return out


def test_mse_table_contract_and_dedup():
    table = mse_table(results_for([0.3, 1.0]), x=0.5)
    for column in ["censoring", "alpha", "estimator", "t", "mse", "bias", "variance", "n_reps",
                   "mechanism"]:
        assert column in table
    ref = table[table["mechanism"] == "none"]
    assert ref["alpha"].isna().all()
    assert len(ref) == 2 * 8  # two references once each, not once per α
    priv = table[table["mechanism"] == "laplace_indicators"]
    assert sorted(priv["alpha"].unique()) == [0.3, 1.0]
    assert (table["n_reps"] == 6).all()


def test_mse_table_rejects_inconsistent_reference_jobs():
    (s1, f1), (s2, f2) = results_for([0.3, 1.0])
    f2 = f2.copy()
    f2.loc[f2["estimator"] == "beran", "estimate"] += 0.01
    with pytest.raises(ValueError, match="did not simulate the same samples"):
        mse_table([(s1, f1), (s2, f2)], x=0.5)


def test_integrated_mse_is_time_average():
    table = mse_table(results_for([0.5]), x=0.5)
    imse = integrated_mse(table)
    for row in imse.itertuples():
        rows = table[(table["estimator"] == row.estimator)]
        assert row.imse == pytest.approx(rows["mse"].mean())


# --------------------------------------------------------------------------- mechanism registry


# the `toy` fixture (a registered toy mechanism) lives in conftest.py


def mechanism_results(names, alphas, reps=6, n=120, hazard=False):
    out = []
    for name in names:
        mechanism = get_mechanism(name)
        for alpha in alphas:
            step = mechanism.noise_step(censoring="25", n=n, alpha=f"{alpha:g}")
            result = simulate_and_estimate(
                data_seed=seed_sequence(9, "ldp", "sim", 0),
                noise_seed=seed_sequence(9, "ldp", step, 0), replicates=reps, n=n,
                lambda_t=[1, 1, 1], lambda_c=THIRD, alpha=alpha, x=0.5, bandwidth_multiplier=5,
                t=np.linspace(0.05, 1.5, 8), mechanism=mechanism, hazard=hazard)
            setting = {"censoring": "25", "n": n, "alpha": alpha, "lambda_t": [1, 1, 1],
                       "mechanism": name}
            out.append((setting, result.to_frame()))
    return out


def test_laplace_uses_common_random_numbers_across_alpha():
    # one stream for every α: the noise at α is 1/α times one standard Laplace draw
    laplace = get_mechanism("laplace")
    steps = {laplace.noise_step(censoring="25", n=500, alpha=a) for a in ("0.2", "0.4", "2")}
    assert steps == {"privatize/laplace/cens25/n500"}
    assert laplace.release_name == "laplace_indicators"
    delta = np.zeros((4, 300), dtype=np.int8)
    seed = seed_sequence(1, "ldp", steps.pop(), 0)
    noise = {a: laplace.privatize(delta, alpha=a, rng=np.random.default_rng(seed))
             for a in (0.2, 0.4, 2.0)}
    standard = np.random.default_rng(seed).laplace(0.0, 1.0, size=delta.shape)
    for a, values in noise.items():
        np.testing.assert_array_equal(values, (1.0 / a) * standard)
    np.testing.assert_allclose(noise[0.2] * 0.2, noise[2.0] * 2.0, rtol=1e-15, atol=0)
    # and the simulation's private estimates at two α see those same draws: the
    # presmoother input at α is δ + standard/α (checked through the hazard, linear in it)
    base = dict(replicates=3, n=100, lambda_t=[1, 1, 1], lambda_c=THIRD, x=0.5,
                bandwidth_multiplier=5, t=np.linspace(0.1, 1, 5), hazard=True)
    noise_seed = seed_sequence(1, "ldp", "crn-noise", 0)
    # fresh data seeds: spawning children advances a SeedSequence
    both = simulate_alphas(data_seed=seed_sequence(1, "ldp", "crn", 0),
                           noise_seeds={0.5: noise_seed, 1.0: noise_seed}, **base)
    one = simulate_alphas(data_seed=seed_sequence(1, "ldp", "crn", 0),
                          noise_seeds={1.0: noise_seed}, **base)
    check = both.references["generalized_nelson_aalen"]
    np.testing.assert_allclose(both.private[0.5]["private_nelson_aalen"] - check,
                               2 * (one.private[1.0]["private_nelson_aalen"] - check),
                               rtol=1e-9, atol=1e-12)


def test_a_registered_toy_mechanism_reaches_every_table(toy):
    assert check_mechanism_names(["laplace", toy.name]) == []
    results = mechanism_results(["laplace", toy.name], [0.5, 1.0])
    table = mse_table(results, x=0.5)
    assert list(dict.fromkeys(table["mechanism"])) == ["laplace_indicators", toy.name, "none"]
    toy_rows = table[table["mechanism"] == toy.name]
    assert set(toy_rows["estimator"]) == {"private_beran"} and len(toy_rows) == 2 * 8
    # the references are kept once: the toy's jobs simulated the same samples
    assert len(table[table["mechanism"] == "none"]) == 2 * 8
    # the toy's estimates are not Laplace's (own noise stream and scale)
    laplace_rows = table[table["mechanism"] == "laplace_indicators"]
    assert not np.array_equal(toy_rows["mse"].to_numpy(), laplace_rows["mse"].to_numpy())
    imse = integrated_mse(table)
    assert set(imse["mechanism"]) == {"none", "laplace_indicators", toy.name}
    records = privacy_records([s for s, _ in results])
    assert [(r.mechanism, r.stated, r.true_epsilon) for r in records[:4]] == [
        ("laplace_indicators", 0.5, 0.5), ("laplace_indicators", 1.0, 1.0),
        (toy.name, 0.5, 0.25), (toy.name, 1.0, 0.5)]
    # then the joint records of the α sharing a stream (ε = ∞), then the reference
    assert all(math.isinf(r.true_epsilon) for r in records[4:-1])
    assert records[-1] == REFERENCE


def test_privacy_columns_are_recomputed_from_the_mechanism_objects(toy):
    table = mse_table(mechanism_results(["laplace", toy.name], [0.5, 1.0]), x=0.5)
    for row in table.to_dict("records"):
        if row["estimator"] == "private_beran":
            name = "laplace" if row["mechanism"] == "laplace_indicators" else toy.name
            expected = get_mechanism(name).privacy_record(row["alpha"])
            assert expected.parameter == "alpha" and expected.privacy_unit == "individual"
        else:
            expected = REFERENCE
        got = {k: row[k] for k in PRIVACY_COLUMNS}
        want = expected.columns(order=PRIVACY_COLUMNS)
        assert got["mechanism"] == want["mechanism"]
        assert got["alpha"] == want["alpha"] or (np.isnan(got["alpha"]) and np.isnan(want["alpha"]))
    # the records a table's rows imply are those of the settings that produced it
    records = table_privacy_records(table)
    assert {(r.mechanism, r.stated, r.true_epsilon) for r in records
            if r != REFERENCE and "joint_over" not in r.extra} == {
        ("laplace_indicators", 0.5, 0.5), ("laplace_indicators", 1.0, 1.0),
        (toy.name, 0.5, 0.25), (toy.name, 1.0, 0.5)}
    # and the α of each stream together: ε = ∞
    assert any(math.isinf(r.true_epsilon) for r in records if "joint_over" in r.extra)


def test_unknown_or_repeated_mechanism_names_are_config_errors():
    from dprepro.config.schema import ConfigError, check_config, load_schema

    root = Path(__file__).resolve().parents[1]
    schema = load_schema(root / "workflow" / "schemas" / "config.schema.yaml")
    with pytest.raises(ConfigError, match=r"'ldp_indicators.mechanisms': unknown mechanism\(s\) "
                                          r"\['gaussian'\]; registered mechanisms are \['laplace'"):
        check_config({"ldp_indicators": {"mechanisms": ["laplace", "gaussian"]}}, schema)
    with pytest.raises(ConfigError, match="mechanisms.*non-unique"):
        check_config({"ldp_indicators": {"mechanisms": ["laplace", "laplace"]}}, schema)
    def identity(delta, *, alpha, rng):
        return delta

    with pytest.raises(ValueError, match="already registered"):
        register(IndicatorMechanism(name="laplace", function=identity, description="x"))
    with pytest.raises(ValueError, match="file-name wildcard"):
        IndicatorMechanism(name="Bad-Name", function=identity, description="x")


# --------------------------------------------------------------------------- assembled estimators


@pytest.mark.parametrize("name", ["laplace", "randomized_response"])
def test_assembled_estimators_equal_the_public_functions(name):
    """simulate_alphas shares samples and kernel weights across α; each of its estimates must
    equal the public estimator called on the same inputs."""
    from dprepro.studies.ldp_indicators.simulation import simulate_alphas
    from dprepro.survival.bandwidth import dpik_rows
    from dprepro.survival.conditional import (
        beran_cdf,
        conditional_nelson_aalen,
        generalized_beran_cdf,
        presmoothed_indicators,
        private_beran_cdf,
    )

    mechanism = get_mechanism(name)
    data = seed_sequence(11, "ldp", "sim", 0)
    noise = {a: seed_sequence(11, "ldp", f"noise{a}", 0) for a in (0.3, 2.0)}
    t = np.linspace(0.05, 1.5, 9)
    result = simulate_alphas(data_seed=data, noise_seeds=noise, replicates=5, n=150,
                             lambda_t=[1, 1, 1], lambda_c=THIRD, x=0.5, bandwidth_multiplier=5,
                             t=t, mechanism=name, hazard=True)
    # a fresh SeedSequence: spawning advances the one the simulation used
    x, y, delta = simulate_censored_regression(seed_sequence(11, "ldp", "sim", 0), replicates=5,
                                               n=150, lambda_t=[1, 1, 1], lambda_c=THIRD)
    h = 5 * dpik_rows(x)
    kwargs = {"x": 0.5, "h": h, "t": t}
    np.testing.assert_allclose(result.references["beran"], beran_cdf(y, delta, x, **kwargs),
                               rtol=1e-12)
    np.testing.assert_allclose(result.references["generalized_beran"],
                               generalized_beran_cdf(y, delta, x, **kwargs), rtol=1e-12)
    phat_delta = presmoothed_indicators(y, delta, x, b=np.sqrt(h))
    np.testing.assert_allclose(result.references["nelson_aalen"],
                               conditional_nelson_aalen(y, delta, x, **kwargs), rtol=1e-12)
    np.testing.assert_allclose(result.references["generalized_nelson_aalen"],
                               conditional_nelson_aalen(y, phat_delta, x, **kwargs), rtol=1e-12)
    for alpha, seed in noise.items():
        released = mechanism.privatize(delta, alpha=alpha, rng=np.random.default_rng(seed))
        proxy = mechanism.presmoother_input(released, alpha=alpha)
        np.testing.assert_allclose(result.private[alpha]["private_beran"],
                                   private_beran_cdf(y, proxy, x, **kwargs), rtol=1e-12)
        phat = presmoothed_indicators(y, proxy, x, b=np.sqrt(h))
        np.testing.assert_allclose(result.private[alpha]["private_nelson_aalen"],
                                   conditional_nelson_aalen(y, phat, x, **kwargs), rtol=1e-12)


def test_phat_at_x_variant_changes_only_the_presmoothed_estimators():
    from dprepro.studies.ldp_indicators.simulation import simulate_alphas

    kwargs = {"data_seed": seed_sequence(12, "ldp", "sim", 0),
              "noise_seeds": {0.5: seed_sequence(12, "ldp", "noise", 0)}, "replicates": 4,
              "n": 120, "lambda_t": [1, 1, 1], "lambda_c": THIRD, "x": 0.5,
              "bandwidth_multiplier": 5, "t": np.linspace(0.05, 1.5, 8)}
    ours = simulate_alphas(**kwargs)
    kwargs["data_seed"] = seed_sequence(12, "ldp", "sim", 0)  # spawning advanced the first
    kwargs["noise_seeds"] = {0.5: seed_sequence(12, "ldp", "noise", 0)}
    variant = simulate_alphas(**kwargs, phat_at_x=True)
    np.testing.assert_array_equal(ours.references["beran"], variant.references["beran"])
    assert not np.array_equal(ours.references["generalized_beran"],
                              variant.references["generalized_beran"])
    assert not np.array_equal(ours.private[0.5]["private_beran"],
                              variant.private[0.5]["private_beran"])


def test_rescaled_laplace_shares_the_draws_and_says_it_is_not_private():
    base, scaled = get_mechanism("laplace"), get_mechanism("laplace_scale0.25")
    delta = np.zeros(1000, dtype=np.int8)
    z1 = base.privatize(delta, alpha=0.4, rng=np.random.default_rng(1))
    z4 = scaled.privatize(delta, alpha=0.4, rng=np.random.default_rng(1))
    np.testing.assert_allclose(z4, 0.25 * z1, rtol=1e-12)  # Laplace(c/α), common numbers
    assert scaled.noise_step(censoring="25", n=500, alpha=0.4) == base.noise_step(
        censoring="25", n=500, alpha=0.4)
    record = scaled.privacy_record(0.4)
    assert record.stated == 0.4 and record.true_epsilon == pytest.approx(1.6)
    assert record.note.startswith("NOT α-LDP")
    assert record.mechanism == "laplace_indicators_scale0.25"
    assert scaled.noise_variance(0.4) == pytest.approx(2 * (0.25 / 0.4) ** 2)


def test_variance_floor_matches_the_formula_and_lies_below_the_measured_variance():
    from dprepro.studies.ldp_indicators.simulation import simulate_alphas
    from dprepro.studies.ldp_indicators.tables import variance_floor

    censoring = [{"label": "50", "lambda_t": [1, 1, 1], "lambda_c": [1, 1, 1]}]
    result = simulate_alphas(
        data_seed=seed_sequence(13, "ldp", "sim", 0),
        noise_seeds={0.5: seed_sequence(13, "ldp", "noise", 0)}, replicates=100, n=300,
        lambda_t=[1, 1, 1], lambda_c=[1, 1, 1], x=0.5, bandwidth_multiplier=1,
        t=np.linspace(0.05, 0.5, 10), hazard=True)
    setting = {"censoring": "50", "n": 300, "alpha": 0.5, "lambda_t": [1, 1, 1]}
    frame = result.result(0.5).to_frame()
    mse = mse_table([(setting, frame)], x=0.5)
    hazard = mse_table([(setting, frame)], x=0.5, target="hazard")
    floor = variance_floor(mse, hazard, censoring).iloc[0]
    t = np.linspace(0.05, 0.5, 10)
    rate = 1 + 0.5 + 0.25  # <(1,1,1), (1, x, x^2)> at x = 1/2, for T and for C
    by_hand = np.mean((2 / 0.5**2) * (2 * rate * t) ** 2 / 300)
    assert floor["floor_ivariance_cumhaz"] == pytest.approx(by_hand, rel=1e-12)
    assert floor["floor_ivariance_cdf"] == pytest.approx(
        np.mean(np.exp(-2 * rate * t) * (2 / 0.5**2) * (2 * rate * t) ** 2 / 300), rel=1e-12)
    # a lower bound on the (unclipped, linear) private Nelson–Aalen variance: with a narrow
    # window (h = dpik, about 1/7 of the points) the noise is spread over fewer indicators,
    # several times the floor. (The floor is linearised: with a window covering most points
    # it is nearly attained, and at late t, when the window's risk set runs empty, it
    # overstates.)
    assert floor["ivariance_cumhaz"] > 2 * floor["floor_ivariance_cumhaz"]
    assert floor["ratio_cumhaz"] == pytest.approx(
        floor["ivariance_cumhaz"] / floor["floor_ivariance_cumhaz"])


def test_presmoother_curve_equals_the_kernel_average_by_brute_force():
    rng = np.random.default_rng(4)
    times, covariates = rng.exponential(size=(3, 80)), rng.uniform(size=(3, 80))
    values = rng.normal(size=(3, 80))
    b, t = np.array([0.2, 0.35, 0.5]), np.linspace(0.0, 4.0, 30)
    curve = presmoother_curve(times, covariates, values, x=0.4, b=b, t=t)
    for r in range(3):
        for j, tj in enumerate(t):
            near = (np.abs(covariates[r] - 0.4) <= b[r]) & (np.abs(times[r] - tj) <= b[r])
            expected = values[r][near].mean() if near.any() else np.nan
            np.testing.assert_allclose(curve[r, j], expected, rtol=1e-12, equal_nan=True)
    assert np.isnan(curve).any()  # far in the tail some windows are empty


def test_true_event_probability_is_one_minus_the_censoring_probability():
    # proportional rates: P(δ = 1 | x, t) is the same at every x and t
    for lambda_c, expected in ((THIRD, 0.75), ([1, 1, 1], 0.5)):
        p = true_event_probability(np.linspace(0, 2, 5), x=0.3, lambda_t=[1, 1, 1],
                                   lambda_c=lambda_c)
        np.testing.assert_allclose(p, expected, rtol=1e-15)
        assert 1 - censoring_probability([1, 1, 1], lambda_c) == pytest.approx(expected)


def test_private_phat_is_unbiased_for_the_true_probability():
    # E[p̂ from de-biased released values] = P(δ = 1 | x, t) = 0.75 (Laplace, RR)
    for name in ("laplace", "randomized_response"):
        result = simulate_alphas(
            data_seed=seed_sequence(2, "ldp", "phat", 0),
            noise_seeds={1.0: seed_sequence(3, "ldp", "phat", 0)},
            replicates=400, n=200, lambda_t=[1, 1, 1], lambda_c=THIRD, x=0.5,
            bandwidth_multiplier=5, t=[0.3], mechanism=name, hazard=True).result(1.0)
        phat = result.estimates["private_phat"][:, 0]
        z = (phat.mean() - 0.75) / (phat.std(ddof=1) / np.sqrt(phat.size))
        assert abs(z) < 6.1  # two-sided 1e-9
        assert phat.std() > result.estimates["generalized_phat"][:, 0].std()


def test_unclipped_estimator_equals_the_clipped_one_when_phat_stays_in_the_unit_interval():
    # α huge: Z ≈ δ, so p̂ never leaves [0, 1] and clipping changes nothing
    def run(alpha):
        return simulate_alphas(
            data_seed=seed_sequence(5, "ldp", "clip", 0),
            noise_seeds={alpha: seed_sequence(5, "ldp", "clip-noise", 0)}, replicates=4, n=150,
            lambda_t=[1, 1, 1], lambda_c=THIRD, x=0.5, bandwidth_multiplier=5,
            t=np.linspace(0.05, 1.5, 10), hazard=True).private[alpha]
    same = run(1e9)
    np.testing.assert_array_equal(same["private_beran_unclipped"], same["private_beran"])
    # at α = 0.2 p̂ leaves [0, 1] and the two differ
    differ = run(0.2)
    assert not np.array_equal(differ["private_beran_unclipped"], differ["private_beran"])


def test_clip_table_reports_both_estimators_of_the_same_replicates(tmp_path):
    from dprepro.studies.ldp_indicators.tables import clip_release
    path = tmp_path / "r.parquet"
    result = simulate_alphas(
        data_seed=seed_sequence(6, "ldp", "clip", 0),
        noise_seeds={0.2: seed_sequence(6, "ldp", "n", 0), 1e9: seed_sequence(6, "ldp", "n", 0)},
        replicates=5, n=150, lambda_t=[1, 1, 1], lambda_c=THIRD, x=0.5, bandwidth_multiplier=5,
        t=np.linspace(0.05, 1.5, 10), hazard=True)
    result.to_frame().to_parquet(path)
    settings = [{"censoring": "25", "n": 150, "alpha": a, "lambda_t": [1, 1, 1],
                 "mechanism": "laplace"} for a in (0.2, 1e9)]
    table = clip_release(settings, [path, path], x=0.5)["table"].set_index("alpha")
    truth = true_conditional_cdf(result.t, x=0.5, lambda_t=[1, 1, 1])
    for a in (0.2, 1e9):
        raw = result.private[a]["private_beran_unclipped"]
        finite = np.isfinite(raw)
        per_replicate = [((r[f] - truth[f]) ** 2).mean() for r, f in zip(raw, finite, strict=True)]
        assert table.loc[a, "imse_unclipped"] == pytest.approx(np.mean(per_replicate))
        assert table.loc[a, "outside_unit"] == pytest.approx(((raw < 0) | (raw > 1)).mean())
        assert table.loc[a, "nonfinite"] == pytest.approx((~finite).mean())
    assert table.loc[1e9, "ratio_unclipped_to_clipped"] == 1.0


def test_convergence_slope_se_is_inflated_by_the_lack_of_fit():
    from dprepro.studies.ldp_indicators.tables import convergence_rates
    n = np.array([125, 250, 500, 1000, 2000, 4000])
    straight = 2.0 * n**-1.0
    base = {"censoring": "25", "alpha": 0.4, "mechanism": "m", "estimator": "private_beran"}
    # on a straight line with 1 % relative SE the fit is perfect: no inflation
    line = pd.DataFrame({**base, "n": n, "imse": straight, "imse_se": 0.01 * straight})
    row = convergence_rates(line).iloc[0]
    assert row["slope"] == pytest.approx(-1.0) and row["se_inflation"] == 1.0
    u = np.log(n) - np.log(n).mean()
    assert row["slope_se"] == pytest.approx(0.01 * np.sqrt((u**2).sum()) / (u**2).sum())
    # a zig-zag of ±10 % around the line with the same 1 % SE: χ² ≫ df
    wiggle = straight * np.exp(0.1 * np.array([1, -1, 1, -1, 1, -1]))
    bent = pd.DataFrame({**base, "n": n, "imse": wiggle, "imse_se": 0.01 * wiggle})
    row = convergence_rates(bent).iloc[0]
    slope, intercept = np.polyfit(np.log(n), np.log(wiggle), 1)
    residuals = np.log(wiggle) - (intercept + slope * np.log(n))
    chi2 = (residuals**2).sum() / 0.01**2
    assert row["lack_of_fit_chi2"] == pytest.approx(chi2) and row["lack_of_fit_df"] == 4
    assert row["se_inflation"] == pytest.approx(np.sqrt(chi2 / 4)) and row["se_inflation"] > 5
    assert row["slope_ci_upper"] - row["slope_ci_lower"] == pytest.approx(
        2 * 1.959964 * row["slope_se"], rel=1e-5)


def test_ldp_figures_show_signed_bias_bands_and_distinct_symbols():
    import matplotlib
    matplotlib.use("Agg")
    from dprepro.studies.ldp_indicators.figures import (
        ldp_bias_variance,
        ldp_mse_vs_alpha,
        ldp_nelson_aalen,
    )
    results = mechanism_results(["laplace", "randomized_response"], [0.5, 1.0], reps=8,
                                hazard=True)
    mse = mse_table(results, x=0.5)
    fig = ldp_bias_variance(mse, alphas=[0.5, 1.0])
    bias_axes = [ax for ax in fig.axes if ax.get_title().startswith("bias")]
    assert bias_axes and all(ax.get_yscale() == "linear" for ax in fig.axes)
    # each curve has a ±2 SE band (a PolyCollection) and the bias can be negative
    assert all(len(ax.collections) >= 4 for ax in bias_axes)
    assert min(ax.get_ylim()[0] for ax in bias_axes) < 0
    hazard = mse_table(results, x=0.5, target="hazard")
    fig = ldp_nelson_aalen(hazard, alphas=[0.5, 1.0])
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    symbols = [label.split(" ")[0] for label in labels]
    assert len(set(symbols) - {symbols[0]}) == 2  # Λ̂ (two mechanisms), Λ̌, Λ differ
    assert all(label.startswith("$") for label in labels)
    assert not any("from Z" in label for label in labels)
    grid = integrated_mse(mse)
    grid["imse_se"] = 0.1 * grid["imse"]
    fig = ldp_mse_vs_alpha(grid)
    assert len(fig.axes[0].collections) >= 2 and fig.axes[0].patches  # bands and spans
    # the legend sits outside the panels (it covered the small-α points)
    assert fig.legends and all(ax.get_legend() is None for ax in fig.axes)
    fig.canvas.draw()
    legend_box = fig.legends[0].get_window_extent()
    assert all(not legend_box.overlaps(ax.get_window_extent()) for ax in fig.axes)


def test_mse_x_normalised_column_is_the_claims_statistic():
    """``imse_scaled`` of mse_x.csv: mean over t of MSE/(F(1 − F)), the statistic of the
    ldp.no_dependence_on_x claims (errors divided by sqrt(F(1 − F)) in the ErrorSet)."""
    from dprepro.studies.ldp_indicators.claims import error_set
    from dprepro.studies.ldp_indicators.tables import _scaled_imse

    results = mechanism_results(["laplace"], [0.5, 1.0])
    mse = mse_table(results, x=0.5)
    imse = integrated_mse(mse)
    scaled = _scaled_imse(mse, [s for s, _ in results], x=0.5)
    errors = error_set(results, x=0.5)
    for row, value in zip(imse.to_dict("records"), scaled, strict=True):
        private = row["mechanism"] != "none"
        key = ("25", "laplace" if private else "none", row["alpha"] if private else math.nan,
               row["estimator"] + "/scaled")
        assert value == pytest.approx(errors._ise[key].mean(), rel=1e-9), key
        # F(1 − F) < 1/4: the normalised IMSE is more than four times the raw one
        assert value > 4 * row["imse"]


def test_split_alphas_gives_each_alpha_its_rows_then_the_references():
    """Each α's frame is that α's private rows in file order, then the references, renumbered;
    α in the order the file first shows them, and ``alphas`` keeps only those asked for."""
    rng = np.random.default_rng(7)
    alpha = rng.choice([0.5, np.nan, 2.0, 1.0], size=400)
    frame = pd.DataFrame({"estimator": rng.choice(["a", "b"], size=400),
                          "estimate": rng.normal(size=400),
                          "draws": rng.integers(1, 5, size=400).astype(np.int32),
                          "alpha": alpha})
    references = frame[frame["alpha"].isna()]
    split = split_alphas(frame)
    assert list(split) == list(dict.fromkeys(alpha[~np.isnan(alpha)].tolist()))
    for value, part in split.items():
        expected = pd.concat([frame[frame["alpha"] == value], references], ignore_index=True)
        pd.testing.assert_frame_equal(part, expected)
    assert list(split_alphas(frame, alphas=[1, 0.5])) == [v for v in split if v in (1.0, 0.5)]
    pd.testing.assert_frame_equal(split_alphas(frame, alphas=[2])[2.0], split[2.0])
