r"""Cox regression on the RRR-privatised group (beyond the paper; its Conclusions' future work).

For every cohort and every RRR release (calibration × ε, the study's ``draws``
draws) the Cox proportional-hazards model of the follow-up time on the group
(treatment coding, reference = the cohort's first configured group), optionally
adjusted for the cohort's non-private ``covariates``, is fitted by four
estimators (:data:`ESTIMATORS`):

``original``
    the true labels (a non-private reference; cluster-robust by person where a
    person has several rows, as R's ``coxph(..., cluster = id)``);
``naive``
    the released labels as if they were true (attenuated towards 0);
``mc_simex``
    MC-SIMEX with the release's public matrix Π
    (:func:`dprepro.survival.cox_misclassification.mc_simex_cox_draws`, all draws of a
    release in one batch), quadratic extrapolant; its simulated misclassification is
    drawn per person, as the release randomises (a person's rows share it); its
    standard error adds the Monte Carlo variance of the finite replicates to the
    jackknife variance;
``mc_simex_loglinear``
    the same replicates extrapolated loglinearly (a sensitivity check of the
    extrapolant, at no further fitting cost: :data:`SENSITIVITY`);
``corrected_score``
    the Zucker–Spiegelman corrected score with Π
    (:func:`~dprepro.survival.corrected_score.corrected_score_cox_draws`), restricted to
    event times up to τ, where ``tau_at_risk`` of the rows are still at risk (the
    follow-up times are public in RRR's threat model, so τ is too); Breslow's ties.
    Its non-private counterpart ``original_tau`` (the true labels, Breslow, events
    after τ censored: what the corrected score gives with Π = I) is the reference its
    bias and coverage are measured against, so they measure the privacy correction,
    not the cut at τ (consistent for the same log HR under proportional hazards).

Π = p·I + (1 − p)/k·J with the keep probability p of the release's
:class:`~dprepro.mechanisms.rrr.RevisedRandomizedResponse` object. The released labels are
those of the study's RRR releases: the same stream
``rrr/<dataset>/<calibration>/eps<ε>`` (:func:`release_stream`) and the same draw
(:func:`~dprepro.studies.rrr_survival.analysis.release_labels`), so draw d here is draw d of
``rrr_<calibration>_eps<ε>``. Each fit is post-processing of that ε-LDP label release
(Π is public), so it has the release's guarantee for the group label, at no
further privacy cost. The guarantee covers **the group label only**: times, events and
covariates are released unprotected (assumed public in RRR's threat model); MC-SIMEX's simulated
misclassification draws from its own stream ``cox/mc_simex/<dataset>/<calibration>/eps<ε>``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dprepro.mechanisms.rrr import RevisedRandomizedResponse
from dprepro.runtime.seeds import seed_sequence
from dprepro.studies.rrr_survival.analysis import person_units, release_labels
from dprepro.studies.rrr_survival.releases import PRIVACY_COLUMNS, epsilon_scope, release_record
from dprepro.survival.corrected_score import corrected_score_cox_draws
from dprepro.survival.cox import fit_cox_batch, treatment_dummies
from dprepro.survival.cox_misclassification import mc_simex_cox_draws
from dprepro.survival.inputs import normal_quantile

__all__ = ["DRAW_COLUMNS", "ESTIMATORS", "LABEL_ONLY", "SENSITIVITY", "TABLE_COLUMNS",
           "corrected_tau", "cox_fits", "cox_table", "main_term", "patients_needed",
           "release_stream", "term_names"]

#: The estimators, in table order.
ESTIMATORS = ("original", "naive", "mc_simex", "corrected_score")
#: Sensitivity checks fitted with an estimator (from its fits, at no further cost).
SENSITIVITY = {"mc_simex_loglinear": "mc_simex"}
#: The non-private reference of each estimator (:func:`cox_table`'s ``original_log_hr``).
REFERENCE = {"naive": "original", "mc_simex": "original", "mc_simex_loglinear": "original",
             "corrected_score": "original_tau", "original": "original",
             "original_tau": "original_tau"}
#: Columns of the per-draw table (``cox_draws.parquet``).
DRAW_COLUMNS = ["dataset", "mechanism", "epsilon", "calibration", "estimator", "term", "draw",
                "log_hr", "se", "ci_lower", "ci_upper", "converged", "no_variance",
                "replicates_dropped", "data_origin", "true_epsilon", "privacy_unit",
                "privacy_note", "persons"]
#: Columns of ``cox.csv`` (one row per dataset, mechanism, ε, calibration, estimator, term).
TABLE_COLUMNS = ["dataset", "mechanism", "epsilon", "calibration", "estimator", "term",
                 "data_origin", "true_epsilon", "epsilon_scope", "privacy_unit", "log_hr",
                 "se", "ci_lower", "ci_upper", "log_hr_mean", "log_hr_sd", "se_mean",
                 "original_log_hr", "original_se", "coverage", "bias", "bias_se", "converged",
                 "draws", "persons", "patients_needed", "true_log_hr", "coverage_true",
                 "bias_true", "no_variance", "replicates_dropped", "privacy_note"]
#: What the privacy guarantee of every private Cox row covers (referee: its scope).
LABEL_ONLY = ("ε-LDP for the group label only; times, events and covariates are released "
              "unprotected (assumed public in the threat model)")
POST_PROCESSING = ("; Cox model ({estimator}) of the released labels with the public Π: "
                   "post-processing of this ε-LDP label release, no further privacy cost; "
                   + LABEL_ONLY)
Z95 = float(normal_quantile(0.975))
#: Power of the sample-size rule (:func:`patients_needed`).
POWER = 0.8


def term_names(labels, covariates=()) -> list[str]:
    """``"<group> vs <first group>"`` for each group after the first, then the covariates."""
    return [f"{g} vs {labels[0]}" for g in labels[1:]] + list(covariates)


def release_stream(dataset: str, calibration: str, epsilon: float) -> str:
    """The noise stream of the RRR release (:func:`~dprepro.studies.rrr_survival.analysis.
    run_release`'s): the Cox fits read the very labels that release drew."""
    return f"rrr/{dataset}/{calibration}/eps{float(epsilon):g}"


def corrected_tau(times, at_risk: float) -> float | None:
    """Last event time the corrected score uses: where ``at_risk`` of the rows are still
    at risk (0: every event time). A function of the follow-up times only."""
    if not at_risk:
        return None
    t = np.sort(np.asarray(times, dtype=float))[::-1]
    return float(t[min(int(at_risk * len(t)), len(t) - 1)])


def _rows(est, se, terms, *, draw0: int = 0, dropped=0.0) -> dict:
    """Per-draw rows; a draw is ``converged`` with an estimate and a positive variance
    (``no_variance``: an estimate whose variance is not positive, e.g. MC-SIMEX's
    extrapolated variance; such draws are left out of the means like failed fits).
    ``dropped``: share of MC-SIMEX replicates left out of the draw's means."""
    est = np.atleast_2d(np.asarray(est, dtype=float))
    se = np.atleast_2d(np.asarray(se, dtype=float))
    draws, p = est.shape
    converged = np.isfinite(est) & np.isfinite(se)
    dropped = np.broadcast_to(np.asarray(dropped, dtype=float).reshape(-1, 1), (draws, p))
    return {"term": np.tile(np.asarray(terms, dtype=object), draws),
            "draw": np.repeat(np.arange(draw0, draw0 + draws), p),
            "log_hr": est.ravel(), "se": se.ravel(),
            "ci_lower": (est - Z95 * se).ravel(), "ci_upper": (est + Z95 * se).ravel(),
            "converged": converged.ravel(),
            "no_variance": (np.isfinite(est) & ~np.isfinite(se)).ravel(),
            "replicates_dropped": dropped.ravel()}


def _original(times, events, codes, k, cov, cluster, terms, ties="efron") -> dict:
    """The fit on the true labels; a configured group no person has gets NaN (its dummy is
    all zero, so the design is singular otherwise)."""
    X = treatment_dummies(codes, k, cov)
    keep = np.flatnonzero(np.any(X != 0, axis=0) | (np.arange(X.shape[1]) >= k - 1))
    fit = fit_cox_batch(times, events, X[None][:, :, keep], cluster=cluster, ties=ties)
    est, se = np.full(X.shape[1], np.nan), np.full(X.shape[1], np.nan)
    est[keep], se[keep] = fit.coef[0], fit.se[0]
    return _rows(est, se, terms)


def cox_fits(cohort: pd.DataFrame, *, dataset: str, labels, releases, draws: int, seed: int,
             covariates=(), estimators=ESTIMATORS, simex_replicates: int = 20,
             lambdas=(0.0, 1.0, 2.0), tau_at_risk: float = 0.1, clustered: bool = False,
             privacy_unit: str = "patient", data_origin: str = "real") -> pd.DataFrame:
    """Per-draw Cox fits of one cohort (:data:`DRAW_COLUMNS`), see the module notes.

    Parameters
    ----------
    cohort : DataFrame
        ``id, group, time, event`` and the ``covariates`` columns.
    labels : sequence
        The configured groups (RRR's public label set; the first is the reference).
    releases : sequence of (epsilon, calibration)
        RRR releases to fit; each draws ``draws`` label vectors from its own stream.
    seed : int
        The configuration's base seed.
    estimators : sequence
        A subset of :data:`ESTIMATORS` (``original`` is always fitted: the reference;
        with ``corrected_score`` also ``original_tau``, its reference).
    clustered : bool
        Persons have several rows: robust variances by person (original, naive,
        MC-SIMEX; the corrected score's sandwich is per person always).
    """
    labels = list(labels)
    unknown = sorted(set(estimators) - set(ESTIMATORS))
    if unknown:
        raise ValueError(f"unknown Cox estimators {unknown}; expected some of {ESTIMATORS}")
    times = cohort["time"].to_numpy(float)
    events = cohort["event"].to_numpy(int)
    cov = cohort[list(covariates)].to_numpy(float) if covariates else None
    persons, first = person_units(cohort)
    cluster = persons if clustered else None
    terms = term_names(labels, covariates)
    k = len(labels)
    true = RevisedRandomizedResponse(epsilon=1.0, categories=labels).encode(cohort["group"])
    tau = corrected_tau(times, tau_at_risk)
    reference = release_record("original", epsilon=None, labels=labels, calibration="",
                               privacy_unit=privacy_unit).columns(PRIVACY_COLUMNS[3:])
    frames = [pd.DataFrame(_original(times, events, true, k, cov, cluster, terms)).assign(
        mechanism="original", epsilon=np.nan, calibration="", estimator="original",
        **reference)]
    if "corrected_score" in estimators:
        cut = events if tau is None else np.where(times <= tau, events, 0)
        frames.append(pd.DataFrame(_original(times, cut, true, k, cov, persons, terms,
                                             ties="breslow")).assign(
            mechanism="original", epsilon=np.nan, calibration="", estimator="original_tau",
            **{**reference, "privacy_note": reference["privacy_note"] + (
                "; the corrected score's reference: Breslow ties, events after "
                f"tau = {tau if tau is not None else np.inf:.6g} censored")}))
    for epsilon, calibration in releases:
        mech = RevisedRandomizedResponse(epsilon=epsilon, categories=labels,
                                         calibration=calibration)
        rng = np.random.default_rng(seed_sequence(
            seed, "rrr_survival", release_stream(dataset, calibration, epsilon), 0))
        released = mech.encode(release_labels(cohort, mech, rng=rng, draws=draws))
        pi = mech.transition_matrix()
        record = release_record("rrr", epsilon=epsilon, labels=labels, calibration=calibration,
                                privacy_unit=privacy_unit).columns(PRIVACY_COLUMNS[3:])
        fits = {}
        if "naive" in estimators:
            batch = fit_cox_batch(times, events, treatment_dummies(released, k, cov),
                                  cluster=cluster)
            fits["naive"] = _rows(batch.coef, batch.se, terms)
        if "mc_simex" in estimators:
            simex_rng = np.random.default_rng(seed_sequence(
                seed, "rrr_survival",
                f"cox/mc_simex/{dataset}/{calibration}/eps{float(epsilon):g}", 0))
            out = mc_simex_cox_draws(times, events, released, pi, rng=simex_rng,
                                     persons=persons, covariates=cov, lambdas=lambdas,
                                     n_replicates=simex_replicates, cluster=cluster)
            dropped = [1 - o.n_converged[o.lambdas > 0].sum()
                       / (simex_replicates * np.sum(o.lambdas > 0)) for o in out]
            fits["mc_simex"] = _rows([o.estimate for o in out], [o.se for o in out], terms,
                                     dropped=dropped)
            loglinear = [o.extrapolated("loglinear") for o in out]
            fits["mc_simex_loglinear"] = _rows([o.estimate for o in loglinear],
                                               [o.se for o in loglinear], terms,
                                               dropped=dropped)
        if "corrected_score" in estimators:
            out = corrected_score_cox_draws(times, events, released, pi, covariates=cov,
                                            cluster=persons, tau=tau)
            fits["corrected_score"] = _rows([o.estimate for o in out], [o.se for o in out],
                                            terms)
        for estimator, rows in fits.items():
            note = record["privacy_note"] + POST_PROCESSING.format(estimator=estimator)
            frames.append(pd.DataFrame(rows).assign(
                mechanism="rrr", epsilon=float(epsilon), calibration=calibration,
                estimator=estimator, **{**record, "privacy_note": note}))
    out = pd.concat(frames, ignore_index=True)
    out = out.assign(dataset=dataset, data_origin=data_origin, persons=len(first))
    return out[DRAW_COLUMNS]


def patients_needed(original, original_se, se_mean, persons, power: float = POWER):
    r"""Persons a cohort needs for the private fit to keep the original's conclusion: a
    projection conditional on the observed effect (no test; see below).

    With the private estimator centred at the original log HR :math:`\hat\beta` and
    its standard error scaling as :math:`1/\sqrt n` (:math:`s_n = s\sqrt{N/n}`, ``s``
    the mean SE over draws at the cohort's ``persons`` :math:`N`), a two-sided test at
    5 % rejects with the original's sign with probability ``power`` when
    :math:`n \ge N\,((z_{0.975} + z_{power})\,s/|\hat\beta|)^2`. NaN where the
    original itself is not significant at 5 % (no conclusion to keep).

    It treats the observed :math:`|\hat\beta|` as the true effect (an overestimate of
    an effect selected for significance makes ``n`` too small, an underestimate too
    large), and for the corrected score the reference is ``original_tau``, whose
    SE is larger than the full original's; only the Monte Carlo error of the mean SE
    is in any interval around it. The claim (``rrr.cox_patients_needed``) is therefore
    decided under that assumption only, and says so.
    """
    original, original_se = np.asarray(original, float), np.asarray(original_se, float)
    z = Z95 + float(normal_quantile(power))
    with np.errstate(divide="ignore", invalid="ignore"):
        n = persons * (z * np.asarray(se_mean, float) / np.abs(original)) ** 2
        significant = np.abs(original / original_se) > Z95
    return np.where(significant, np.ceil(n), np.nan)


def cox_table(draws: pd.DataFrame, true_log_hr: dict | None = None) -> pd.DataFrame:
    """``cox.csv`` from the per-draw fits (:data:`TABLE_COLUMNS`).

    ``coverage``: share of all draws whose 95 % interval covers the original fit's
    log HR (``original_log_hr``: :data:`REFERENCE`, the fit the estimator gives on the true
    labels; a draw without a fit covers nothing); ``bias``: mean over the converged
    draws minus the original's log HR, ``bias_se`` its Monte Carlo SE; ``converged``:
    share of draws with a fit (and a positive variance; ``no_variance``: share with an
    estimate but no positive variance; ``replicates_dropped``: mean share of MC-SIMEX
    replicates left out of the means; both are selections: fits fail where the estimate
    would be extreme, so bias and coverage are conditional on a fit).
    ``patients_needed``: the corrected score's only (MC-SIMEX's estimate is biased
    and is not used for it). ``true_log_hr`` (dataset -> term -> value, simulation
    cohorts) adds ``coverage_true`` and ``bias_true`` against the true log HR.
    """
    true_log_hr = true_log_hr or {}
    keys = ["dataset", "mechanism", "epsilon", "calibration", "estimator", "term"]
    original = draws[draws["mechanism"] == "original"].set_index(["dataset", "estimator",
                                                                   "term"])
    rows = []
    for key, part in draws.groupby(keys, sort=False, dropna=False):
        row = dict(zip(keys, key, strict=True))
        first = part.iloc[0]
        ok = part[part["converged"]]
        ref = original.loc[(row["dataset"], REFERENCE[row["estimator"]], row["term"])]
        truth = true_log_hr.get(row["dataset"], {}).get(row["term"], np.nan)
        sd = float(ok["log_hr"].std(ddof=1)) if len(ok) > 1 else np.nan
        mean = float(ok["log_hr"].mean()) if len(ok) else np.nan

        def covers(value, part=part):
            hit = (part["ci_lower"] <= value) & (value <= part["ci_upper"])
            return float(hit.mean()) if np.isfinite(value) else np.nan
        private = row["estimator"] == "corrected_score"
        row.update({
            "data_origin": first["data_origin"], "true_epsilon": first["true_epsilon"],
            # a row over every draw: log_hr etc. are draw 0's, the means and coverage all's
            "epsilon_scope": epsilon_scope(float(first["true_epsilon"]), len(part)),
            "privacy_unit": first["privacy_unit"], "log_hr": first["log_hr"],
            "se": first["se"], "ci_lower": first["ci_lower"], "ci_upper": first["ci_upper"],
            "log_hr_mean": mean, "log_hr_sd": sd, "se_mean": float(ok["se"].mean()),
            "original_log_hr": ref["log_hr"], "original_se": ref["se"],
            "coverage": covers(ref["log_hr"]) if row["mechanism"] != "original" else np.nan,
            "bias": mean - ref["log_hr"], "bias_se": sd / np.sqrt(len(ok)),
            "converged": len(ok) / len(part), "draws": len(part),
            "persons": int(first["persons"]),
            "patients_needed": float(patients_needed(ref["log_hr"], ref["se"],
                                                     ok["se"].mean(), first["persons"]))
            if private else np.nan,
            "true_log_hr": truth, "coverage_true": covers(truth), "bias_true": mean - truth,
            "no_variance": float(part["no_variance"].mean()) if "no_variance" in part
            else 0.0,
            "replicates_dropped": float(part["replicates_dropped"].mean())
            if "replicates_dropped" in part else 0.0,
            "privacy_note": first["privacy_note"]})
        rows.append(row)
    return pd.DataFrame(rows, columns=TABLE_COLUMNS)


def main_term(table: pd.DataFrame, dataset: str) -> tuple[str, float, float]:
    """The original fit's group term with the largest |log HR| (its main contrast), the
    log HR and its SE."""
    rows = table[(table["dataset"] == dataset) & (table["estimator"] == "original")
                 & table["term"].str.contains(" vs ", regex=False)]
    rows = rows[np.isfinite(rows["log_hr"])]
    best = rows.loc[rows["log_hr"].abs().idxmax()]
    return best["term"], float(best["log_hr"]), float(best["se"])
