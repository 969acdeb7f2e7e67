"""Several independent noise draws per simulated sample (``ldp_indicators.noise_draws``).

The oracles here are direct computations on the raw (replicate, draw, t)
estimates: the pooled MSE over every (replicate, draw) pair, and a replicate
with all its draws as the resampling unit.
"""

import math

import numpy as np
import pandas as pd
import pytest

from dprepro.claims.table import bootstrap_counts
from dprepro.mechanisms.registry import draw_records, get_mechanism, records_of
from dprepro.runtime.seeds import seed_sequence
from dprepro.studies.ldp_indicators.claims import ErrorSet
from dprepro.studies.ldp_indicators.simulation import (
    SimulationResult,
    draw_moments,
    error_standard_errors,
    error_summary,
    heavy_tail_summary,
    replicate_moments,
    simulate_alphas,
)
from dprepro.studies.ldp_indicators.tables import clip_release, mse_table
from dprepro.survival.conditional import (
    beran_cdf,
    conditional_estimator_sets,
    conditional_nelson_aalen,
)

THIRD = [1 / 3] * 3
T_GRID = np.linspace(0.05, 1.2, 12)


def raw_draws(seed=0, replicates=40, draws=6, steps=5):
    """(R, M, T) estimates whose replicates differ (a sample effect) and draws too (noise)."""
    rng = np.random.default_rng(seed)
    sample = rng.normal(0.0, 0.05, size=(replicates, 1, steps))
    noise = rng.standard_t(3, size=(replicates, draws, steps)) * 0.1
    return 0.4 + sample + noise


def test_draw_moments_are_the_mean_and_variance_over_draws():
    values = raw_draws()
    moments = draw_moments(values)
    np.testing.assert_allclose(moments["estimate"], values.mean(axis=1), rtol=1e-13)
    np.testing.assert_allclose(moments["draw_variance"], values.var(axis=1), rtol=1e-12)
    assert (moments["draws"] == 6).all() and (moments["nonfinite_draws"] == 0).all()
    assert (moments["outside_unit_draws"] == ((values < 0) | (values > 1)).sum(axis=1)).all()


def test_draw_moments_leave_out_infinite_draws_and_count_them():
    values = raw_draws(draws=4)
    values[0, 1, 2] = np.inf
    values[1, :, 3] = -np.inf
    moments = draw_moments(values)
    kept = np.delete(values[0, :, 2], 1)
    assert moments["estimate"][0, 2] == pytest.approx(kept.mean(), rel=1e-13)
    assert moments["draw_variance"][0, 2] == pytest.approx(kept.var(), rel=1e-12)
    assert moments["nonfinite_draws"][0, 2] == 1 and moments["outside_unit_draws"][0, 2] >= 1
    assert np.isnan(moments["estimate"][1, 3]) and moments["nonfinite_draws"][1, 3] == 4


def test_one_draw_passes_the_estimate_through_bit_for_bit():
    values = raw_draws(draws=1)[:, 0, :]
    values[3, 1] = np.inf
    moments = draw_moments(values)
    finite = np.isfinite(values)
    assert np.array_equal(moments["estimate"][finite], values[finite])
    assert np.isnan(moments["estimate"][3, 1])
    assert (moments["draw_variance"][finite] == 0).all()


def test_error_summary_pools_every_replicate_and_draw():
    values, truth = raw_draws(), np.full(5, 0.41)
    moments = draw_moments(values)
    summary = error_summary(moments["estimate"], truth, moments["draw_variance"])
    flat = values.reshape(-1, values.shape[2])  # every (replicate, draw) as one estimate
    np.testing.assert_allclose(summary["mse"], ((flat - truth) ** 2).mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(summary["bias"], flat.mean(axis=0) - truth, rtol=1e-12)
    np.testing.assert_allclose(summary["variance"], flat.var(axis=0), rtol=1e-12)


def test_standard_errors_treat_a_replicate_and_its_draws_as_one_unit():
    values, truth = raw_draws(), np.full(5, 0.41)
    moments = draw_moments(values)
    se = error_standard_errors(moments["estimate"], truth, moments["draw_variance"])
    replicates = values.shape[0]
    per_replicate_mse = ((values - truth) ** 2).mean(axis=1)
    np.testing.assert_allclose(se["mse_se"], per_replicate_mse.std(axis=0, ddof=1)
                               / math.sqrt(replicates), rtol=1e-12)
    np.testing.assert_allclose(se["bias_se"], values.mean(axis=1).std(axis=0, ddof=1)
                               / math.sqrt(replicates), rtol=1e-12)
    # the draws of a replicate share its sample: treating the R·M draws as
    # independent would understate the SE
    flat = values.reshape(-1, values.shape[2])
    naive = flat.std(axis=0, ddof=1) / math.sqrt(flat.shape[0])
    assert (se["bias_se"] > naive).all()


def test_bootstrap_weights_resample_replicates_with_all_their_draws():
    values, truth = raw_draws(), np.full(5, 0.41)
    moments = draw_moments(values)
    errors = moments["estimate"] - truth
    key = ("25", "laplace", 0.3, "private_beran")
    error_set = ErrorSet({key: errors}, {key: errors**2 + moments["draw_variance"]})
    counts = bootstrap_counts(values.shape[0], rng=np.random.default_rng(5), resamples=100)
    stats = error_set.moments(counts / values.shape[0])
    for b, row in list(enumerate(counts))[:5]:
        picked = np.repeat(np.arange(values.shape[0]), row.astype(int))
        resample = values[picked].reshape(-1, values.shape[2]) - truth  # all their draws
        assert stats.imse(key)[b] == pytest.approx((resample**2).mean(), rel=1e-12)
        assert stats.ibias(key)[b] == pytest.approx(resample.mean(), rel=1e-12)
        assert stats.ivar(key)[b] == pytest.approx(resample.var(axis=0).mean(), rel=1e-10)


def test_squared_errors_need_their_errors():
    with pytest.raises(ValueError, match="squared errors without errors"):
        ErrorSet({("a",): np.zeros((3, 2))}, {("b",): np.zeros((3, 2))})


@pytest.mark.parametrize("target, single", [("cdf", beran_cdf),
                                            ("hazard", conditional_nelson_aalen)])
def test_estimator_sets_equal_the_single_estimator_bit_for_bit(target, single):
    rng = np.random.default_rng(3)
    times = rng.exponential(size=(6, 40))
    times[2, 5] = times[2, 9]  # a tie: that row is sorted per array, events first
    covariates = rng.uniform(size=(6, 40))
    sets = [rng.uniform(-0.2, 1.0, size=(6, 40)) for _ in range(3)]
    sets.append((rng.uniform(size=(6, 40)) < 0.6).astype(float))
    h = np.full(6, 0.3)
    together = conditional_estimator_sets(times, sets, covariates, x=0.5, h=h, t=T_GRID,
                                          target=target)
    for values, result in zip(sets, together, strict=True):
        alone = single(times, values, covariates, x=0.5, h=h, t=T_GRID)
        assert np.array_equal(alone, result, equal_nan=True)
    with pytest.raises(ValueError, match="target"):
        conditional_estimator_sets(times, sets, covariates, x=0.5, h=h, t=T_GRID, target="pdf")


def draw_seeds(alpha, draws):
    return [seed_sequence(7, "ldp_indicators", "noise" if m == 0 else f"noise/draw{m}", 0)
            for m in range(draws)]


def simulate(noise_seeds, extra_alphas=(0.4,)):
    return simulate_alphas(data_seed=seed_sequence(7, "ldp_indicators", "data", 0),
                           noise_seeds=noise_seeds, replicates=30, n=120, lambda_t=[1, 1, 1],
                           lambda_c=THIRD, x=0.5, bandwidth_multiplier=5, t=T_GRID,
                           hazard=True, extra_alphas=list(extra_alphas))


def test_each_draw_is_the_one_draw_run_with_its_seed_on_the_same_samples():
    seeds = draw_seeds(0.4, 3)
    together = simulate({0.4: seeds, 2.0: seeds})
    for m, seed in enumerate(seeds):
        alone = simulate({0.4: seed, 2.0: seed})
        for name, values in together.private[0.4].items():
            # p̂ is one matrix product over the draws: equal up to summation order
            np.testing.assert_allclose(values[:, m], alone.private[0.4][name], rtol=0,
                                       atol=1e-12, err_msg=name)
        assert np.array_equal(together.references["beran"], alone.references["beran"])
    # independent draws: different numbers for the same sample
    assert not np.allclose(together.private[0.4]["private_beran"][:, 0],
                           together.private[0.4]["private_beran"][:, 1])


def test_the_replicate_file_keeps_the_first_draw_as_the_one_draw_run_gives_it():
    """``first_draw``: one release per sample whatever the number of draws (the per-release
    claims read it), equal to the one-draw run's estimate, infinite values kept."""
    seeds = draw_seeds(0.4, 3)
    many = simulate({0.4: seeds}).result(0.4).to_frame()
    one = simulate({0.4: seeds[0]}).result(0.4).to_frame()
    for name in ("private_beran", "private_beran_unclipped"):
        a = many.loc[many["estimator"] == name, "first_draw"].to_numpy()
        b = one.loc[one["estimator"] == name, "first_draw"].to_numpy()
        finite = np.isfinite(b)
        assert np.array_equal(np.isfinite(a), finite) and np.isinf(a[~finite]).all() == \
            np.isinf(b[~finite]).all()
        # p̂ is one matrix product over the draws: equal up to summation order
        np.testing.assert_allclose(a[finite], b[finite], rtol=0, atol=1e-12)
        # one draw: the frame's estimate is that draw where it is finite
        estimate = one.loc[one["estimator"] == name, "estimate"].to_numpy()
        assert np.array_equal(estimate[finite], b[finite])
    # the claims read one release per sample of both estimators from the file
    from dprepro.studies.ldp_indicators.claims import error_set

    setting = {"censoring": "25", "n": 120, "alpha": 0.4, "lambda_t": [1, 1, 1],
               "lambda_c": THIRD, "mechanism": "laplace"}
    errors = error_set([(setting, many)], x=0.5)
    assert {key[3] for key in errors._first_ise} == {"private_beran",
                                                      "private_beran_unclipped"}


def test_the_replicate_file_stores_draw_means_and_variances_that_the_tables_pool():
    seeds = draw_seeds(0.4, 4)
    result = simulate({0.4: seeds}).result(0.4)
    frame = result.to_frame()
    raw = result.estimates["private_beran"]  # (R, M, T)
    rows = frame[frame["estimator"] == "private_beran"]
    t, mean, within = replicate_moments(rows)
    np.testing.assert_allclose(mean, raw.mean(axis=1), rtol=1e-13)
    np.testing.assert_allclose(within, raw.var(axis=1), rtol=1e-10, atol=1e-18)
    setting = {"censoring": "25", "n": 120, "alpha": 0.4, "lambda_t": [1, 1, 1],
               "mechanism": "laplace"}
    table = mse_table([(setting, frame)], x=0.5)
    private = table[table["estimator"] == "private_beran"]
    truth = private["truth"].to_numpy()
    flat = raw.transpose(1, 0, 2).reshape(-1, raw.shape[2])
    np.testing.assert_allclose(private["mse"], ((flat - truth) ** 2).mean(axis=0), rtol=1e-10)
    assert (private["n_reps"] == raw.shape[0]).all()


def test_clip_table_shares_are_over_every_draw(tmp_path):
    seeds = draw_seeds(0.2, 3)
    simulation = simulate({0.2: seeds}, extra_alphas=[0.2])
    path = tmp_path / "replicates.parquet"
    simulation.to_frame().to_parquet(path)
    result = simulation.result(0.2)
    setting = {"censoring": "25", "n": 120, "alpha": 0.2, "lambda_t": [1, 1, 1],
               "mechanism": "laplace"}
    row = clip_release([setting], [path], x=0.5)["table"].iloc[0]
    raw = result.estimates["private_beran_unclipped"]
    assert row["outside_unit"] == pytest.approx(((raw < 0) | (raw > 1)).mean(), rel=1e-12)
    assert row["nonfinite"] == pytest.approx((~np.isfinite(raw)).mean(), rel=1e-12)


def test_a_file_of_m_draws_states_their_joint_guarantee():
    laplace = get_mechanism("laplace")
    assert draw_records([(laplace, 0.3)], noise_draws=1) == []
    [record] = draw_records([(laplace, 0.3)], noise_draws=10)
    assert record.true_epsilon == pytest.approx(3.0) and record.stated == 0.3
    assert record.extra["noise_draws"] == 10
    records = records_of([("laplace", 0.3)], noise_draws=10)
    assert [r.true_epsilon for r in records if r.extra.get("noise_draws")] == [pytest.approx(3.0)]
    with pytest.raises(ValueError, match="noise_draws"):
        draw_records([(laplace, 0.3)], noise_draws=0)


def test_m_draws_on_one_sample_are_jointly_m_alpha_private_and_no_better():
    """Composition is tight: M Laplace draws of one δ reach the likelihood ratio e^{Mα}."""
    alpha, draws = 0.5, 4
    mechanism = get_mechanism("laplace")
    z_one = np.full(draws, 10.0)  # every draw far above both δ: each ratio is e^α
    density = lambda z, delta: np.exp(-alpha * np.abs(z - delta)).prod()  # noqa: E731
    ratio = density(z_one, 1.0) / density(z_one, 0.0)
    [record] = draw_records([(mechanism, alpha)], noise_draws=draws)
    assert math.log(ratio) == pytest.approx(record.true_epsilon, rel=1e-12)


def test_one_draw_frame_keeps_the_historic_columns_and_values():
    rng = np.random.default_rng(1)
    estimates = {"private_beran": rng.uniform(size=(4, 3)), "beran": rng.uniform(size=(4, 3))}
    result = SimulationResult(t=np.array([0.1, 0.2, 0.3]), estimates=estimates,
                              bandwidth=np.full(4, 0.2), censored_fraction=np.full(4, 0.25))
    frame = result.to_frame()
    for name, values in estimates.items():
        rows = frame[frame["estimator"] == name]
        assert np.array_equal(rows["estimate"].to_numpy(), values.ravel())
        assert (rows["draw_variance"] == 0).all() and (rows["draws"] == 1).all()
    assert isinstance(frame, pd.DataFrame)



def test_phat_error_where_observed_weights_t_by_the_density_of_y_at_x():
    rng = np.random.default_rng(11)
    t = np.linspace(0.015, 1.5, 8)
    estimates = 0.75 + rng.normal(0, 0.2, size=(5, t.size))
    frame = pd.DataFrame({"estimator": "private_phat", "replicate": np.repeat(np.arange(5), 8),
                          "t": np.tile(t, 5), "estimate": estimates.ravel()})
    setting = {"censoring": "25", "alpha": 0.4, "mechanism": "laplace", "lambda_t": [1, 1, 1],
               "lambda_c": THIRD}
    from dprepro.studies.ldp_indicators.claims import error_set

    errors = error_set([(setting, frame)], x=0.5)
    key = ("25", "laplace", 0.4, "private_phat")
    mu = 1.75 * (1 + 1 / 3)  # λ_T(0.5) + λ_C(0.5)
    weight = mu * np.exp(-mu * t)
    direct = ((estimates - 0.75) ** 2 * weight).sum(axis=1) / weight.sum()
    uniform = errors.moments(np.full((1, 5), 0.2))
    assert uniform.imse(key[:3] + ("private_phat/observed",))[0] == pytest.approx(direct.mean())
    assert uniform.imse(key)[0] == pytest.approx(((estimates - 0.75) ** 2).mean())


def test_heavy_tail_summary_is_robust_to_one_sample_that_dominates_the_mean():
    rng = np.random.default_rng(2)
    reference = rng.exponential(1.0, size=300)
    light = reference * 1.2
    summary = heavy_tail_summary(light, reference)
    assert summary["median_ise_ratio"] == pytest.approx(1.2)
    assert summary["share_worse"] == 1.0
    assert summary["top_share"] == pytest.approx(light.max() / light.sum())
    heavy = light.copy()
    heavy[7] = 50 * heavy.sum()  # one sample near the pole holds 98 % of the total
    summary = heavy_tail_summary(heavy, reference)
    assert summary["top_share"] > 0.9 and heavy.mean() / reference.mean() > 10
    assert summary["median_ise_ratio"] == pytest.approx(1.2, rel=0.02)  # the median barely moves


def test_replicate_moments_of_rows_in_any_order_are_the_pivot_of_the_rows():
    """Rows as written (replicate by replicate, times ascending) are read by a reshape;
    shuffled rows, a missing row or a repeated time go through pandas' pivot. All give
    the pivot's (replicate × t) arrays, which every table and claim reads."""
    seeds = draw_seeds(0.4, 3)
    frame = simulate({0.4: seeds}).result(0.4).to_frame()
    rows = frame[frame["estimator"] == "private_beran"].reset_index(drop=True)

    def pivoted(frame):
        mean = frame.pivot(index="replicate", columns="t", values="estimate")
        within = frame.pivot(index="replicate", columns="t", values="draw_variance")
        return mean.columns.to_numpy(float), mean.to_numpy(), within.to_numpy()

    for variant in (rows, rows.sample(frac=1.0, random_state=1), rows.drop(index=5),
                    rows.iloc[::-1]):
        got, want = replicate_moments(variant), pivoted(variant)
        for a, b in zip(got, want, strict=True):
            np.testing.assert_array_equal(a, b)
    # a time repeated within a replicate is no grid: pandas refuses it as before
    repeated = rows.copy()
    repeated.loc[1, "t"] = repeated.loc[0, "t"]
    with pytest.raises(ValueError):
        replicate_moments(repeated)
