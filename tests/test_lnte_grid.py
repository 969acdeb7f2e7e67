"""The correct LNTE baseline (Laplace on binned event and censoring counts)."""

import math

import numpy as np
import pytest

from dprepro.mechanisms.grid_lnte import GridDiscretisation, GridLNTE, step_on_grid


def _data(seed=0, n=120):
    rng = np.random.default_rng(seed)
    t = rng.exponential(10, size=n)
    c = rng.uniform(0, 30, size=n)
    return np.minimum(t, c), (t <= c).astype(int)


def _life_table(t, e, edges, horizon):
    """Cutler–Ederer life table written out person by person (the oracle)."""
    start = np.r_[0.0, edges[:-1]]
    surv, s = [], 1.0
    for lo, hi in zip(start, edges, strict=True):
        at_risk = sum(1 for ti in t if ti > lo or (lo == 0 and ti >= 0))
        inside = [(ti, ei) for ti, ei in zip(t, e, strict=True) if lo < ti <= hi
                  or (lo == 0 and ti == 0)]
        deaths = sum(ei for _, ei in inside)
        lost = sum(1 - ei for _, ei in inside)
        s *= 1 - deaths / (at_risk - lost / 2)
        surv.append(s)
    return np.array(surv)


def test_without_noise_it_is_the_actuarial_life_table():
    """No noise: S at each bin end equals the Cutler–Ederer life table of the bins."""
    t, e = _data()
    horizon = float(t.max())
    edges, survival = GridDiscretisation(bins=10).release(t, e, horizon=horizon,
                                                          rng=np.random.default_rng(1))
    np.testing.assert_allclose(survival[0], _life_table(t, e, edges, horizon), rtol=1e-9)
    # a huge ε gives the same curve up to the (tiny) noise
    _, noisy = GridLNTE(epsilon=1e12, bins=10).release(t, e, horizon=horizon,
                                                      rng=np.random.default_rng(1))
    np.testing.assert_allclose(noisy[0], survival[0], rtol=1e-6)


def test_follow_up_past_the_horizon_is_clipped_there():
    """Persons followed past H are at risk in every bin and never an event or a censoring."""
    t, e = _data(4)
    horizon = float(np.quantile(t, 0.6))
    edges, survival = GridDiscretisation(bins=8).release(t, e, horizon=horizon,
                                                         rng=np.random.default_rng(0))
    clipped_t = np.where(t > horizon, horizon + 1.0, t)
    np.testing.assert_allclose(survival[0], _life_table(clipped_t, e, edges, horizon),
                               rtol=1e-9)


def test_no_noise_record_is_not_private():
    record = GridDiscretisation(bins=20, rows_per_person=2, horizon=20).privacy_record(
        privacy_unit="patient")
    assert record.mechanism == "lnte_grid_no_noise" and not record.release
    assert "not private" in record.note and "horizon 20" in record.note


def test_a_horizon_from_the_data_is_no_finite_epsilon_in_columns_and_sidecar():
    """Issue 39: the grid of a release without a public horizon ends at the largest
    follow-up time and publishes it, so its columns and its sidecar both say ε = ∞."""
    from dprepro.studies.rrr_survival.releases import PRIVACY_COLUMNS, release_record

    data = release_record("lnte_grid", epsilon=2.0, labels=["a", "b"],
                          calibration="grid=20,rows=1", privacy_unit="patient")
    columns = data.columns(PRIVACY_COLUMNS)
    assert math.isinf(columns["true_epsilon"]) and columns["epsilon"] == 2.0
    assert columns["privacy_note"].startswith("NOT DIFFERENTIALLY PRIVATE")
    sidecar = data.provenance()
    assert sidecar["release"] is False and sidecar["true_epsilon"] == "inf"
    public = release_record("lnte_grid", epsilon=2.0, labels=["a", "b"],
                            calibration="grid=20,rows=1,horizon=30", privacy_unit="patient")
    assert public.release and public.true_epsilon == 2.0
    assert "horizon 30 from the configuration" in public.note


def test_noisy_curves_are_monotone_within_unit_interval_and_stop_when_empty():
    t, e = _data(2, 40)
    _, survival = GridLNTE(epsilon=0.3, bins=15).release(
        t, e, horizon=float(t.max()), rng=np.random.default_rng(3), draws=500)
    finite = np.where(np.isnan(survival), -1.0, survival)
    assert ((survival >= 0) | np.isnan(survival)).all() and (np.nan_to_num(survival) <= 1).all()
    steps = np.diff(np.where(np.isnan(survival), np.nan, survival), axis=1)
    assert (np.nan_to_num(steps, nan=0.0) <= 1e-12).all()
    # once undefined, undefined to the end
    undefined = finite < 0
    assert (np.maximum.accumulate(undefined, axis=1) == undefined).all()


def test_privacy_record_states_epsilon_per_person_and_sensitivity():
    record = GridLNTE(epsilon=2.0, bins=20, rows_per_person=2, horizon=25).privacy_record(
        privacy_unit="patient")
    assert record.mechanism == "lnte_grid" and record.stated == record.true_epsilon == 2.0
    assert "Laplace(1)" in record.note and "sensitivity 2 per patient" in record.note
    assert record.extra == {"calibration": "grid=20,rows=2,horizon=25"}


@pytest.mark.parametrize("bad", [{"epsilon": 0}, {"epsilon": 1, "bins": 1},
                                 {"epsilon": 1, "rows_per_person": 0}])
def test_bad_parameters_raise(bad):
    with pytest.raises(ValueError):
        GridLNTE(**bad)


def test_step_on_grid_reads_steps():
    edges = np.array([1.0, 2.0, 3.0])
    surv = np.array([[0.9, 0.8, 0.7]])
    np.testing.assert_allclose(step_on_grid(edges, surv, [0, 0.5, 1, 2.5, 3, 9]),
                               [[1, 1, 0.9, 0.8, 0.7, 0.7]])


@pytest.mark.parametrize("noise", [True, False])
def test_stored_grid_curves_name_only_the_public_bin_ends(noise):
    import pandas as pd

    from dprepro.studies.rrr_survival.aggregate import sup_distances
    from dprepro.studies.rrr_survival.analysis import analyse_lnte_grid

    rng = np.random.default_rng(7)
    n = 60
    cohort = pd.DataFrame({"time": np.round(rng.exponential(5.0, n), 3) + 0.0123,
                           "event": rng.integers(0, 2, n), "group": np.repeat(["a", "b"], n // 2)})
    cohort.loc[0, "event"] = 1
    mechanism = (GridLNTE(epsilon=1.0, bins=8, horizon=20.0) if noise
                 else GridDiscretisation(bins=8, horizon=20.0))
    out = analyse_lnte_grid(cohort, labels=["a", "b"], mechanism=mechanism, draws=3,
                            rng=np.random.default_rng(1) if noise else None,
                            grid=np.unique(np.r_[0.0, cohort["time"]]))
    stored = set(out["curves"]["t"])
    public = set(np.r_[0.0, np.linspace(0.0, 20.0, 9)[1:]])
    # no follow-up time of the cohort is published through the stored curve's times
    assert stored == public
    assert not stored & set(cohort["time"])
    # the sup-distance still reads the step function exactly at the original's jumps:
    # compare with a brute-force sup on a fine grid over each group's follow-up
    original = []
    for g in ["a", "b"]:
        rows = cohort[cohort["group"] == g].sort_values("time")
        t = np.unique(rows["time"])
        s, surv = 1.0, []
        for u in t:
            at_risk = (rows["time"] >= u).sum()
            s *= 1 - ((rows["time"] == u) & (rows["event"] == 1)).sum() / at_risk
            surv.append(s)
        original.append(pd.DataFrame({"group": g, "t": np.r_[0.0, t], "survival": [1.0, *surv]}))
    original = pd.concat(original, ignore_index=True)
    got = sup_distances(out["curves"], original, min_at_risk=None)
    for g in ["a", "b"]:
        o = original[original["group"] == g]
        fine = np.unique(np.r_[o["t"], np.linspace(0, o["t"].max(), 4001)])
        o_at = step_on_grid(o["t"].to_numpy(), o["survival"].to_numpy()[None, :], fine)[0]
        for d in range(3):
            r = out["curves"][(out["curves"]["group"] == g) & (out["curves"]["draw"] == d)]
            r_at = step_on_grid(r["t"].to_numpy(), r["survival"].to_numpy()[None, :], fine)[0]
            ok = np.isfinite(r_at)
            want = np.max(np.abs(r_at - o_at)[ok])
            row = got[(got["group"] == g) & (got["draw"] == d)]
            assert row["distance"].iloc[0] == pytest.approx(want, abs=1e-12)


def test_isotonic_fit_equals_pool_adjacent_violators():
    """The closed min-max form gives scipy's PAVA solution, both directions."""
    from scipy.optimize import isotonic_regression

    from dprepro.mechanisms.grid_lnte import isotonic_fit

    rng = np.random.default_rng(11)
    walks = rng.laplace(size=(300, 22)).cumsum(axis=1)
    for increasing in (True, False):
        fit = isotonic_fit(walks, increasing=increasing)
        oracle = np.array([isotonic_regression(w, increasing=increasing).x for w in walks])
        np.testing.assert_allclose(fit, oracle, atol=1e-10)
    # a monotone row is returned exactly
    row = np.array([9.0, 7.0, 7.0, 2.0, 0.0])
    assert (isotonic_fit(row, increasing=False) == row).all()


def _larynx_like():
    """13 persons, all exits before 4.3 on a horizon of 11: bins 8-19 are empty."""
    t = np.array([0.1, 0.3, 0.4, 0.8, 0.8, 1.0, 1.5, 2.0, 2.3, 2.9, 3.6, 3.8, 4.3])
    e = np.array([1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0])
    return t, e


def _cells(t, e, bins, horizon):
    edges = np.linspace(0.0, horizon, bins + 1)[1:]
    which = np.searchsorted(edges, t, side="left")
    d = np.bincount(which, weights=e, minlength=bins + 1).astype(float)
    c = np.bincount(which, weights=1.0 - e, minlength=bins + 1).astype(float)
    return edges, which, d, c


def test_consistent_counts_are_monotone_and_exact_without_noise():
    from dprepro.mechanisms.grid_lnte import consistent_counts

    t, e = _data(5, 80)
    _, _, d, c = _cells(t, e, 12, float(t.max()))
    at_risk, events, censored = consistent_counts(d[None, :], c[None, :])
    # no noise: the exact at-risk counts, events and censorings of each bin
    want_risk = np.cumsum((d + c)[::-1])[::-1][:-1]
    assert (at_risk[0] == want_risk).all() and (events[0] == d[:-1]).all()
    assert (censored[0] == c[:-1]).all()
    noise = np.random.default_rng(4).laplace(0.0, 2.0, size=(2, 400, 13))
    at_risk, events, censored = consistent_counts(d + noise[0], c + noise[1])
    assert (np.diff(at_risk, axis=1) <= 0).all() and (at_risk >= 0).all()
    assert (events >= 0).all() and (censored >= -1e-12).all()
    exits = at_risk - np.c_[at_risk[:, 1:], np.zeros(len(at_risk))]
    # the last bin's exits also hold the cell "alive at the horizon"; the others add up
    np.testing.assert_allclose((events + censored)[:, :-1], exits[:, :-1], atol=1e-9)


def test_uncapped_events_and_a_higher_stop_are_the_measured_alternatives():
    """cap_events=False keeps the fitted event increments (never fewer than the capped
    ones, equal where they fit the exits; censorings cut at 0); without noise both are the
    exact counts. A higher min_at_risk stops each curve no later, and equals it before."""
    from dprepro.mechanisms.grid_lnte import actuarial_survival, consistent_counts

    t, e = _data(6, 60)
    _, _, d, c = _cells(t, e, 10, float(t.max()))
    exact = [consistent_counts(d[None, :], c[None, :], cap_events=cap) for cap in (True, False)]
    for a, b in zip(*exact, strict=True):
        np.testing.assert_array_equal(a, b)
    noise = np.random.default_rng(5).laplace(0.0, 2.0, size=(2, 300, 11))
    capped = consistent_counts(d + noise[0], c + noise[1])
    free = consistent_counts(d + noise[0], c + noise[1], cap_events=False)
    np.testing.assert_array_equal(free[0], capped[0])
    assert (free[1] >= capped[1]).all() and (free[2] >= 0).all()
    fits = capped[2] > 1e-12  # bins whose cap did not bind: exits left as censorings
    np.testing.assert_array_equal(free[1][fits], capped[1][fits])
    low, high = actuarial_survival(*capped), actuarial_survival(*capped, min_at_risk=6.0)
    assert (np.isnan(low) <= np.isnan(high)).all()
    both = ~np.isnan(high)
    np.testing.assert_array_equal(low[both], high[both])


def test_empty_bins_get_no_phantom_events_and_the_at_risk_is_not_inflated():
    """Past the last follow-up, clipping each noisy cell at 0 adds on average Δ/(2ε)
    events per empty bin (6 events over larynx stage IV's 12 empty bins at ε = 1) and
    inflates the number at risk by the phantom censorings; the monotone fit must not."""
    from dprepro.mechanisms.grid_lnte import consistent_counts

    t, e = _larynx_like()
    bins, horizon, draws = 20, 11.0, 4000
    _, which, d, c = _cells(t, e, bins, horizon)
    empty = np.arange(bins) > which.max()
    noise = np.random.default_rng(8).laplace(0.0, 1.0, size=(2, draws, bins + 1))
    at_risk, events, _ = consistent_counts(d + noise[0], c + noise[1])
    phantom = events[:, empty].sum(axis=1)
    clipped = empty.sum() * 0.5  # E max(L, 0) = scale / 2 per cell
    se = phantom.std() / np.sqrt(draws)
    assert phantom.mean() + 6 * se < clipped / 3
    start = at_risk[:, 0]
    assert abs(start.mean() - len(t)) + 6 * start.std() / np.sqrt(draws) < 2.0
    # the released curve: after the last patient it mostly stops (at-risk < 1)
    _, survival = GridLNTE(epsilon=1.0, bins=bins, horizon=horizon).release(
        t, e, horizon=horizon, rng=np.random.default_rng(9), draws=draws)
    assert np.isnan(survival[:, -1]).mean() > 0.7


def test_grid_median_is_not_reached_where_km_is_not_and_censored_when_empty():
    """Group a: one event among 10 persons, so KM stays at 0.9 ("not reached"); the
    no-noise grid curve stops where its at-risk empties, above 0.5: "not reached"
    too (inf), never undefined. A noisy draw undefined from the first bin end
    (nobody released at risk) has a median censored at that bin end (NaN)."""
    import pandas as pd

    from dprepro.studies.rrr_survival.analysis import analyse_lnte_grid

    cohort = pd.DataFrame({"time": np.r_[np.arange(1.0, 11.0), np.arange(1.0, 11.0)],
                           "event": np.r_[1, [0] * 9, [1] * 10],
                           "group": np.repeat(["a", "b"], 10)})
    out = analyse_lnte_grid(cohort, labels=["a", "b"],
                            mechanism=GridDiscretisation(bins=4, horizon=16.0), draws=1,
                            rng=None, grid=None)
    medians = out["medians"].set_index("group")
    curve_a = out["curves"].query("group == 'a'")["survival"].to_numpy()
    assert np.isnan(curve_a[-1]) and np.nanmin(curve_a) > 0.5   # stops above 0.5
    assert medians.loc["a", "median"] == np.inf and np.isnan(medians.loc["a", "censored_at"])
    assert medians.loc["b", "median"] == 8.0                     # first bin end with S <= 0.5

    class Empty(GridLNTE):
        def release(self, durations, events, *, horizon, rng, draws=1, noise=True):
            edges = np.linspace(0.0, horizon, self.bins + 1)[1:]
            return edges, np.full((draws, self.bins), np.nan)

    out = analyse_lnte_grid(cohort, labels=["a", "b"],
                            mechanism=Empty(epsilon=1.0, bins=4, horizon=16.0), draws=2,
                            rng=np.random.default_rng(0), grid=None)
    assert out["medians"]["median"].isna().all()
    assert (out["medians"]["censored_at"] == 4.0).all()


@pytest.mark.parametrize("rows_per_person", [1, 2])
def test_replacing_one_label_costs_twice_the_add_remove_epsilon(rows_per_person):
    """RRR's guarantee holds when one patient's group label is replaced; under that
    relation grid LNTE's histograms move by twice the add/remove L1 sensitivity, so the
    claim at equal true ε pairs RRR at ε with grid LNTE at stated ε/2."""
    from dprepro.mechanisms.grid_lnte import grid_counts, label_replacement_epsilon

    t, e = _data(seed=3, n=60)
    t, e = np.repeat(t, rows_per_person), np.repeat(e, rows_per_person)
    group = np.repeat(np.arange(60) % 2, rows_per_person)
    moved = group.copy()
    moved[:rows_per_person] = 1 - moved[:rows_per_person]   # patient 0 changes group

    def histograms(g):
        return np.concatenate([np.concatenate(grid_counts(t[g == k], e[g == k], horizon=25,
                                                          bins=8)[1:]) for k in (0, 1)])

    l1 = np.abs(histograms(group) - histograms(moved)).sum()
    mechanism = GridLNTE(epsilon=1.5, bins=8, rows_per_person=rows_per_person, horizon=25)
    # the Laplace mechanism's worst-case privacy loss is L1 / scale
    assert l1 / mechanism.scale == pytest.approx(label_replacement_epsilon(1.5)) == 3.0
    record = mechanism.privacy_record(privacy_unit="patient")
    assert label_replacement_epsilon(record.true_epsilon) == 2 * record.true_epsilon
    assert label_replacement_epsilon(math.inf) == math.inf
