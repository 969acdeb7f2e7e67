"""Cox regression on the RRR-released group (dprepro.studies.rrr_survival.cox)."""

import numpy as np
import pandas as pd
import pytest

from dprepro.claims.registry import CLAIMS
from dprepro.data.cohort_checks import check_cohort_tables
from dprepro.data.cohort_spec import (
    CohortSpec,
    build_cohort,
    cohort_config_problems,
    tidy_cohort,
)
from dprepro.runtime.seeds import seed_sequence
from dprepro.studies.rrr_survival.analysis import run_release
from dprepro.studies.rrr_survival.claims import cox_claims
from dprepro.studies.rrr_survival.cox import (
    TABLE_COLUMNS,
    cox_fits,
    cox_table,
    patients_needed,
    release_stream,
)
from dprepro.survival.cox import fit_cox_batch, treatment_dummies
from dprepro.survival.kaplan_meier import km_batch

GROUPS = ["A", "B", "C"]
SIM = {"source": "simulation", "groups": GROUPS,
       "simulation": {"n": 150, "hazard_ratios": [1, 1.5, 2.5]}}


def simulated(n=150, seed=5, name="sim"):
    spec = CohortSpec.from_config(name, {**SIM, "simulation": {**SIM["simulation"], "n": n}})
    return spec, build_cohort(spec, inputs={}, seed=seed).frame


def fits(cohort, releases=((2.0, "paper"),), draws=6, seed=3, **kw):
    return cox_fits(cohort, dataset="sim", labels=GROUPS, releases=list(releases), draws=draws,
                    seed=seed, simex_replicates=3, lambdas=(0, 1, 2), **kw)


def test_at_a_large_epsilon_the_released_labels_are_the_true_ones():
    """p -> 1: naive = original; the corrected score equals its non-private reference."""
    _, cohort = simulated()
    out = fits(cohort, releases=[(25.0, "paper")], draws=3)
    original = out[out["estimator"] == "original"].set_index("term")["log_hr"]
    for estimator, reference in (("naive", "original"), ("corrected_score", "original_tau")):
        ref = out[out["estimator"] == reference].set_index("term")["log_hr"]
        part = out[out["estimator"] == estimator]
        assert part["converged"].all()
        np.testing.assert_allclose(part["log_hr"], ref.loc[part["term"]], rtol=1e-7)
    # and naive is not original at a small ε (attenuated on average)
    low = fits(cohort, releases=[(0.5, "exact")], draws=8)
    naive = low[low["estimator"] == "naive"].groupby("term")["log_hr"].mean()
    assert (naive.abs() < original.loc[naive.index].abs()).all()


def test_the_table_has_the_contract_columns_and_privacy_statement():
    _, cohort = simulated()
    table = cox_table(fits(cohort), {"sim": {"B vs A": np.log(1.5), "C vs A": np.log(2.5)}})
    required = ["dataset", "mechanism", "epsilon", "calibration", "estimator", "term",
                "data_origin", "true_epsilon", "privacy_unit", "privacy_note", "log_hr",
                "log_hr_mean", "log_hr_sd", "se_mean", "coverage", "bias", "draws",
                "true_log_hr", "coverage_true", "bias_true"]
    assert set(required) <= set(table.columns) and list(table.columns) == TABLE_COLUMNS
    keys = ["dataset", "mechanism", "epsilon", "calibration", "estimator", "term"]
    assert not table.duplicated(keys).any()
    private = table[table["mechanism"] == "rrr"]
    assert set(private["estimator"]) == {"naive", "mc_simex", "mc_simex_loglinear",
                                         "corrected_score"}
    assert private["privacy_note"].str.contains("post-processing").all()
    # every row summarises all draws of its release: N × ε together, never one draw's ε
    draws = int(private["draws"].iloc[0])
    assert draws > 1 and (private["epsilon_scope"] == f"summary of {draws} independent "
                          f"draws: {draws} × true_epsilon together (not a release)").all()
    assert (table.loc[table["mechanism"] == "original", "epsilon_scope"]
            == "non-private reference").all()
    # the guarantee's scope: the group label only
    assert private["privacy_note"].str.contains(
        "ε-LDP for the group label only; times, events and covariates are released "
        "unprotected (assumed public in the threat model)", regex=False).all()
    # persons needed only for the corrected score (MC-SIMEX: biased, too-small SE before)
    assert table.loc[table["estimator"] != "corrected_score", "patients_needed"].isna().all()
    assert ((table["no_variance"] >= 0) & (table["replicates_dropped"] >= 0)).all()
    # RRR paper calibration, k = 3: true ε = ε + ln 2
    np.testing.assert_allclose(private["true_epsilon"], 2 + np.log(2))
    assert table.loc[table["mechanism"] == "original", "epsilon"].isna().all()


def test_coverage_and_bias_by_hand():
    base = {"dataset": "d", "mechanism": "rrr", "epsilon": 1.0, "calibration": "paper",
            "term": "B vs A", "data_origin": "simulation", "true_epsilon": 1.0,
            "privacy_unit": "patient", "privacy_note": "", "persons": 10}
    original = {**base, "mechanism": "original", "epsilon": np.nan, "calibration": "",
                "estimator": "original", "draw": 0, "log_hr": 1.0, "se": 0.2,
                "ci_lower": 0.6, "ci_upper": 1.4, "converged": True}
    # four draws: intervals covering 1.0 twice, one draw without a fit
    draws = [(0.5, 0.7, 0.2), (0.9, 0.5, 1.3), (1.5, 1.1, 1.9), (np.nan, np.nan, np.nan)]
    rows = [original] + [{**base, "estimator": "naive", "draw": i, "log_hr": est, "se": 0.1,
                          "ci_lower": lo, "ci_upper": hi, "converged": np.isfinite(est)}
                         for i, (est, lo, hi) in enumerate(draws)]
    # draw 0's interval [0.7, 0.2] is nonsense on purpose: it must not count as covering
    table = cox_table(pd.DataFrame(rows), {"d": {"B vs A": 1.2}}).set_index("estimator")
    naive = table.loc["naive"]
    assert naive["coverage"] == pytest.approx(1 / 4)  # only draw 1 covers 1.0
    assert naive["coverage_true"] == pytest.approx(2 / 4)  # draws 1 and 2 cover 1.2
    mean = (0.5 + 0.9 + 1.5) / 3
    assert naive["log_hr_mean"] == pytest.approx(mean)
    assert naive["bias"] == pytest.approx(mean - 1.0)
    assert naive["bias_true"] == pytest.approx(mean - 1.2)
    assert naive["log_hr_sd"] == pytest.approx(np.std([0.5, 0.9, 1.5], ddof=1))
    assert naive["converged"] == pytest.approx(3 / 4) and naive["draws"] == 4
    assert naive["log_hr"] == 0.5  # draw 0
    # persons needed: N ((1.96 + 0.84) se / |beta|)^2, only where the original is significant
    need = patients_needed(1.0, 0.2, 0.1, 10)
    assert need == np.ceil(10 * ((1.959964 + 0.841621) * 0.1) ** 2)
    assert np.isnan(patients_needed(0.3, 0.2, 0.1, 10))


def test_the_simulated_cohort_recovers_its_hazard_ratios():
    """n = 6000, three arms: the non-private fit is within 4 SE of the true log HR for each
    arm (a fixed seed; for a correct generator each check fails with probability 6e-5)
    and its mean over 20 seeds is within 4 SE / sqrt(20); a generator off by a factor
    1.2 in one hazard ratio (0.18 in log HR, ~4.8 SE of the mean) would fail."""
    truth = np.log([1.5, 2.5])
    estimates = []
    for seed in range(20):
        spec, cohort = simulated(n=6000, seed=seed)
        codes = pd.Categorical(cohort["group"], categories=GROUPS).codes.astype(int)
        fit = fit_cox_batch(cohort["time"], cohort["event"], treatment_dummies(codes, 3)[None])
        assert np.all(np.abs(fit.coef[0] - truth) < 4 * fit.se[0])
        estimates.append(fit.coef[0])
    se = fit.se[0]
    assert np.all(np.abs(np.mean(estimates, axis=0) - truth) < 4 * se / np.sqrt(20))
    assert spec.true_log_hazard_ratios == pytest.approx({"A": 0.0, "B": truth[0], "C": truth[1]})
    assert spec.origin == "simulation"
    assert 0.2 < 1 - cohort["event"].mean() < 0.5  # censoring happens


def test_released_labels_are_those_of_the_study_release():
    """Draw d of the Cox fits uses draw d of the RRR release (same stream): the KM
    medians of the regenerated labels equal the release's own."""
    _, cohort = simulated()
    results, _, seeds = run_release(cohort, dataset="sim", mechanism="rrr", epsilon=1.0,
                                    calibration="exact", labels=GROUPS, draws=5, seed=11)
    assert seeds["step"] == release_stream("sim", "exact", 1.0)
    from dprepro.mechanisms.rrr import RevisedRandomizedResponse
    from dprepro.studies.rrr_survival.analysis import release_labels

    mech = RevisedRandomizedResponse(epsilon=1.0, categories=GROUPS, calibration="exact")
    rng = np.random.default_rng(seed_sequence(11, "rrr_survival", seeds["step"], 0))
    labels = release_labels(cohort, mech, rng=rng, draws=5)
    ours = km_batch(cohort["time"].to_numpy(), cohort["event"].to_numpy(), labels,
                    labels=GROUPS).median()
    theirs = results["medians"].pivot(index="draw", columns="group", values="median")[GROUPS]
    np.testing.assert_allclose(ours[1:], theirs.to_numpy()[1:])
    # and the Cox module reads that stream: its naive draw 1 is the fit of those labels
    out = fits(cohort, releases=[(1.0, "exact")], draws=5, seed=11)
    naive = out[(out["estimator"] == "naive") & (out["draw"] == 1)]["log_hr"].to_numpy()
    codes = mech.encode(labels[1])
    direct = fit_cox_batch(cohort["time"], cohort["event"], treatment_dummies(codes, 3)[None])
    np.testing.assert_allclose(naive, direct.coef[0], rtol=1e-10)


def test_mc_simex_simulates_per_person_on_a_cohort_with_two_rows_per_person(monkeypatch):
    """Persons with two rows (as kidney's): the MC-SIMEX fits get each row's person, so
    a person's rows share the simulated label as they share the released one; the
    table's rows are those of that call, not of per-row drawing."""
    from dprepro.studies.rrr_survival import cox as rrr_cox
    from dprepro.survival import cox_misclassification

    _, cohort = simulated(n=80)
    twice = pd.concat([cohort, cohort.assign(time=cohort["time"] * 1.5)], ignore_index=True)
    seen = []
    real = cox_misclassification.mc_simex_cox_draws

    def spy(*args, **kwargs):
        seen.append((args, kwargs, kwargs["rng"].bit_generator.state))
        return real(*args, **kwargs)

    monkeypatch.setattr(rrr_cox, "mc_simex_cox_draws", spy)
    out = fits(twice, releases=[(1.0, "exact")], draws=3, estimators=("mc_simex",),
               clustered=True)
    (args, kwargs, state), = seen
    persons = np.asarray(kwargs["persons"])
    np.testing.assert_array_equal(persons[:80], persons[80:])  # a person's rows: one unit
    assert len(np.unique(persons)) == 80
    table = out[out["estimator"] == "mc_simex"].pivot(index="draw", columns="term",
                                                      values="log_hr").to_numpy()

    def again(**change):
        rng = np.random.default_rng()
        rng.bit_generator.state = state
        res = real(*args, **{**kwargs, "rng": rng, **change})
        return np.array([r.estimate for r in res])

    np.testing.assert_array_equal(table, again())
    assert np.max(np.abs(table - again(persons=None))) > 1e-3  # per row: other draws


def test_same_seed_same_frame_and_another_seed_another():
    _, cohort = simulated()
    a, b = fits(cohort, seed=9), fits(cohort, seed=9)
    pd.testing.assert_frame_equal(a, b)
    c = fits(cohort, seed=10)
    private = a["mechanism"] == "rrr"
    assert not np.allclose(a.loc[private, "log_hr"], c.loc[private, "log_hr"], equal_nan=True)


def test_covariates_enter_the_model_and_the_table():
    _, cohort = simulated(n=300)
    rng = np.random.default_rng(0)
    cohort = cohort.assign(age=rng.normal(60, 10, len(cohort)))
    out = fits(cohort, covariates=("age",))
    assert set(out["term"]) == {"B vs A", "C vs A", "age"}
    # an uninformative covariate: its log HR is near 0 in the original fit
    age = out[(out["estimator"] == "original") & (out["term"] == "age")].iloc[0]
    assert abs(age["log_hr"]) < 4 * age["se"]


def test_covariate_problems_name_the_key(tmp_path):
    frame = pd.DataFrame({"id": ["1", "2", "3", "4"], "time": [1.0, 2, 3, 4],
                          "status": [1, 0, 1, 1], "group": ["a", "b", "a", "b"],
                          "age": ["50", "x", "60", "70"], "bmi": [20, None, 22, 23]})
    spec = CohortSpec.from_config("toy", {"source": "file", "path": "t.csv",
                                          "groups": ["a", "b"], "covariates": ["weight"]})
    with pytest.raises(ValueError, match=r"datasets\.toy\.covariates.*weight"):
        tidy_cohort(frame, spec, source="t.csv")
    for column, why in (("age", "not numeric"), ("bmi", "missing values")):
        spec = CohortSpec.from_config("toy", {"source": "file", "path": "t.csv",
                                              "groups": ["a", "b"], "covariates": [column]})
        with pytest.raises(ValueError, match=rf"datasets\.toy\.covariates.*{column}.*{why}"):
            tidy_cohort(frame, spec, source="t.csv")
    # without covariates the table is exactly id, group, time, event (cohort files unchanged)
    plain = tidy_cohort(frame, CohortSpec.from_config("toy", {"source": "file", "path": "t",
                                                              "groups": ["a", "b"]}), source="t")
    assert list(plain.columns) == ["id", "group", "time", "event"]
    ok = tidy_cohort(frame.assign(age=[50, 55, 60, 70]), CohortSpec.from_config(
        "toy", {"source": "file", "path": "t", "groups": ["a", "b"], "covariates": ["age"]}),
        source="t")
    assert list(ok.columns) == ["id", "group", "time", "event", "age"]
    # configuration: a source without covariate columns, and the check before any job
    config = {"rrr_survival": {"datasets": ["ipssr", "toy"]},
              "datasets": {"ipssr": {"source": "synthetic", "groups": ["x", "y"],
                                     "covariates": ["age"]},
                           "toy": {"source": "file", "path": "t.csv", "groups": ["a", "b"],
                                   "covariates": ["weight"]}}}
    assert any("datasets.ipssr.covariates" in p for p in cohort_config_problems(config))
    frame.drop(columns=["bmi"]).to_csv(tmp_path / "t.csv", index=False)
    config["datasets"]["ipssr"].pop("covariates")
    check = check_cohort_tables(config, workflow_dir=tmp_path, working_dir=tmp_path)
    assert any("datasets.toy.covariates" in p and "weight" in p for p in check.problems)


def test_simulation_problems_name_the_key():
    config = {"rrr_survival": {"datasets": ["s"], "cox": {"extra_datasets": ["t"]}},
              "datasets": {"s": {"source": "simulation", "groups": ["a", "b"],
                                 "simulation": {"n": 100, "hazard_ratios": [2, 1]}},
                           "t": {"source": "simulation", "groups": ["a", "b"],
                                 "simulation": {"n": 100, "hazard_ratios": [1]}}}}
    problems = cohort_config_problems(config)
    assert any("datasets.s.simulation.hazard_ratios" in p and "must be 1" in p
               for p in problems)
    assert any("datasets.t.simulation.hazard_ratios" in p for p in problems)
    config["rrr_survival"]["cox"]["extra_datasets"] = ["missing"]
    assert any("rrr_survival.cox.extra_datasets[0]" in p
               for p in cohort_config_problems(config))


def test_cox_claims_rows_and_verdicts():
    spec, cohort = simulated(n=600)
    out = fits(cohort, releases=[(1.0, "paper"), (3.0, "paper"), (1.0, "exact")], draws=12)
    truth = {"sim": {f"{g} vs A": v for g, v in spec.true_log_hazard_ratios.items() if g != "A"}}
    table = cox_table(out, truth)
    frame = pd.DataFrame(cox_claims(table, out, calibration="paper"))
    # every row maps to its declaration (the exact calibration's to the `.{calibration}` one)
    for claim_id, source in zip(frame["claim_id"], frame["source"], strict=True):
        declaration = CLAIMS.match(claim_id)
        assert declaration.id.endswith("{calibration}") == claim_id.endswith(".exact")
        assert (declaration.origin, declaration.source) == ("beyond", source)
    rows = frame.set_index("claim_id")
    ids = set(rows.index)
    for e in ("1", "3"):
        assert f"rrr.cox_naive_attenuated.sim.eps{e}" in ids
        assert f"rrr.cox_corrected_coverage.sim.eps{e}" in ids
    # the exact calibration (true ε = stated ε) has its own rows
    assert "rrr.cox_naive_attenuated.sim.eps1.exact" in ids
    assert "rrr.cox_corrected_coverage.sim.eps1.exact" in ids
    attenuation = rows.loc["rrr.cox_naive_attenuated.sim.eps1"]
    assert attenuation["verdict"] == "holds" and attenuation["reproduced_value"] < 0.9
    assert rows["source"].str.contains("Conclusions").all()
    assert rows["note"].str.contains("beyond the paper").all()
    # stated and true ε in every claim; the privacy scope and convergence share in every note
    assert rows["claim"].str.contains(r"stated ε \d+ \(true ε \d\.\d{3}\)").all()
    assert rows.loc["rrr.cox_naive_attenuated.sim.eps1", "claim"].find("true ε 1.693") > 0
    assert rows.loc["rrr.cox_naive_attenuated.sim.eps1.exact", "claim"].find(
        "true ε 1.000") > 0
    assert rows["note"].str.contains("ε-LDP for the group label only").all()
    assert rows["note"].str.contains("convergence share").all()
    # one simulated cohort cannot test bias or coverage against the truth
    for name in ("cox_corrected_unbiased", "cox_corrected_coverage"):
        part = rows[rows.index.str.startswith(f"rrr.{name}.")]
        assert len(part) and (part["verdict"] == "untestable").all()
        assert part["note"].str.contains("replicated-cohort simulation").all()
        assert np.isfinite(part["reproduced_value"]).all()  # the number is kept
    # decidable under its own assumption (the observed effect is the true one): the
    # persons needed against the cohort's 600, the interval the Monte Carlo error only
    need = rows[rows.index.str.startswith("rrr.cox_patients_needed.")]
    assert len(need) and (need["criterion"] == "<= 600").all()
    assert need["note"].str.contains("decided under the statement's own assumption").all()
    corrected = table[(table["estimator"] == "corrected_score")
                      & table["term"].str.contains(" vs ")].dropna(subset=["patients_needed"])
    for claim_id, row in need.iterrows():
        e, calibration = float(claim_id.split(".eps")[1].split(".")[0]), (
            "exact" if claim_id.endswith(".exact") else "paper")
        mine = corrected[(corrected["epsilon"] == e) & (corrected["calibration"] == calibration)]
        worst = float(mine["patients_needed"].max())
        assert row["reproduced_value"] == worst
        # far from the cohort's size the Monte Carlo error cannot matter: a firm verdict
        if worst < 300:
            assert row["verdict"] == "holds", claim_id
        elif worst > 1200:
            assert row["verdict"] == "fails", claim_id
        else:
            assert row["verdict"] != "untestable", claim_id


def test_cox_claims_on_a_real_cohort_and_at_low_convergence():
    """Against the original fit: coverage untestable (privacy noise only, the SE also
    covers sampling variance); the absolute bias in log-HR units gets a verdict with
    half and double tolerance; below 80 % convergence the verdict is not firm."""
    _, cohort = simulated(n=600)
    out = fits(cohort, releases=[(2.0, "paper")], draws=12)
    rows = pd.DataFrame(cox_claims(cox_table(out), out, calibration="paper"))
    rows = rows.set_index("claim_id")
    bias = rows.loc["rrr.cox_corrected_unbiased.sim.eps2"]
    assert bias["criterion"] == "within [-0.1, 0.1]"
    assert bias["verdict"] in ("holds", "fails", "inconclusive")
    assert bias["verdict_half_tolerance"] and bias["verdict_double_tolerance"]
    assert "log-HR units" in bias["statistic"]
    coverage = rows.loc["rrr.cox_corrected_coverage.sim.eps2"]
    assert coverage["verdict"] == "untestable" and np.isfinite(coverage["reproduced_value"])
    assert "far above 0.95" in coverage["note"]
    # half the corrected fits fail: a firm verdict becomes inconclusive
    failed = (out["estimator"] == "corrected_score") & (out["draw"] % 2 == 0)
    low = out.assign(converged=out["converged"] & ~failed)
    rows = pd.DataFrame(cox_claims(cox_table(low), low, calibration="paper"))
    bias = rows.set_index("claim_id").loc["rrr.cox_corrected_unbiased.sim.eps2"]
    assert bias["verdict"] == "inconclusive"
    assert "convergence share 0.50, below 0.8: verdict not firm" in bias["note"]
    # reliability is a column of its own, and no tolerance verdict is firmer than the verdict
    assert not bias["reliable"] and "6 of 12" in bias["reliability_reason"]
    assert "50.0%" in bias["reliability_reason"]
    assert (bias["verdict_half_tolerance"], bias["verdict_double_tolerance"]) == (
        "inconclusive", "inconclusive")


def test_the_forest_plot_keeps_a_finite_axis_when_an_interval_runs_off():
    """A barely converged fit's interval can reach |log HR| in the thousands (exp overflows);
    the plot must still draw, with the axis capped near hazard ratios of e^±6."""
    import matplotlib.pyplot as plt

    from dprepro.studies.rrr_survival.cox_figures import forest_figure

    base = {"dataset": "d", "term": "B vs A", "true_log_hr": np.nan, "true_epsilon": 2.1,
            "data_origin": "simulation"}
    table = pd.DataFrame([
        {**base, "mechanism": "original", "epsilon": np.nan, "calibration": np.nan,
         "estimator": "original", "log_hr": 0.5, "ci_lower": 0.1, "ci_upper": 0.9},
        {**base, "mechanism": "rrr", "epsilon": 1.0, "calibration": "paper",
         "estimator": "corrected_score", "log_hr": 0.7, "ci_lower": -9524.0,
         "ci_upper": 9524.0},
    ])
    fig = forest_figure(table, "d", calibration="paper")
    low, high = fig.axes[0].get_xlim()
    assert np.isfinite(low) and np.isfinite(high) and high <= np.exp(6.2) * 1.0001
    plt.close(fig)


def test_the_forest_footnote_says_true_hazard_ratios_are_known_only_where_they_are():
    """Issue 40: the footnote said "true hazard ratios known" for every simulation-origin
    cohort, even one whose true_log_hr column is empty."""
    from dprepro.studies.rrr_survival.cox_figures import data_text

    assert data_text("simulation", [np.log(1.5), np.nan]).endswith(
        "true hazard ratios known (marked ×)")
    for origin in ("simulation", "real", "synthetic"):
        assert data_text(origin, [np.nan, np.nan]).endswith("true hazard ratios not known")
        assert data_text(origin, []).endswith("true hazard ratios not known")
    assert data_text("real", [np.nan]).startswith("the real cohort")
