"""Aggregation of the ``ldp_indicators`` replicate estimates into tidy tables.

Every table states its privacy parameters: ``mechanism`` and ``alpha`` are the
columns of the :class:`~dprepro.runtime.privacy_record.PrivacyRecord` of the mechanism that
ran (:mod:`dprepro.mechanisms.registry`; ``laplace_indicators`` is α-LDP,
Z = δ + Laplace(1/α)) for the private estimator, and ``none`` with an empty
``alpha`` for the non-private references. The same records go to the
provenance sidecars (:func:`privacy_records`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from dprepro.mechanisms.registry import (
    MECHANISMS,
    REFERENCE,
    by_release_name,
    draw_records,
    get_mechanism,
    joint_records,
    records_of,
    row_record,
)
from dprepro.studies.ldp_indicators.simulation import (
    ESTIMATORS,
    error_standard_errors,
    error_summary,
    estimators,
    heavy_tail_summary,
    replicate_moments,
    split_alphas,
    truth,
)

__all__ = [
    "RELEASES",
    "MECHANISM",
    "PRIVACY_COLUMNS",
    "mse_table",
    "integrated_mse",
    "convergence_rates",
    "privacy_records",
    "table_privacy_records",
    "read_results",
    "mse_release",
    "alpha_grid_release",
    "convergence_release",
    "hazard_release",
    "clip_release",
    "imse_standard_errors",
    "variance_floor",
    "floor_release",
    "variant_release",
]

#: The paper's mechanism (its rows are the ones the paper's claims are about).
MECHANISM = get_mechanism("laplace").release_name

#: Privacy columns of every ldp table, in their order in the tables.
PRIVACY_COLUMNS = ["alpha", "mechanism"]


def _setting_mechanism(setting: Mapping):
    # settings written before the registry had no mechanism: the paper's Laplace
    return get_mechanism(setting.get("mechanism", "laplace"))


def _setting_rows(frame: pd.DataFrame, setting: Mapping, x: float, target: str = "cdf"
                  ) -> list[pd.DataFrame]:
    rows = []
    names = estimators(target)
    for name, group in frame.groupby("estimator", sort=False):
        if name not in names:
            continue
        t, mean, within = replicate_moments(group)
        true = truth(t, target=target, x=x, lambda_t=setting["lambda_t"])
        summary = error_summary(mean, true, within)
        standard_errors = error_standard_errors(mean, true, within)
        record = (_setting_mechanism(setting).privacy_record(setting["alpha"])
                  if ESTIMATORS[name]["private"] else REFERENCE)
        rows.append(pd.DataFrame({
            "censoring": setting["censoring"],
            "n": setting["n"],
            "x": x,
            **record.columns(order=PRIVACY_COLUMNS),
            "estimator": name,
            "t": t,
            "truth": true,
            **summary,
            "censored_fraction": group["censored_fraction"].iloc[0::len(t)].mean(),
            **standard_errors,
            # noise draws per sample (1 for the non-private estimators)
            "noise_draws": int(group["draws"].max()) if "draws" in group else 1,
        }))
    return rows


def mse_table(results: Iterable[tuple[Mapping, pd.DataFrame]], *, x: float,
              target: str = "cdf") -> pd.DataFrame:
    """MSE, bias and variance (and their Monte Carlo SEs) per (censoring, n, α, estimator, t).

    ``target`` selects the estimators of F(t | x) (``"cdf"``) or of the
    cumulative hazard Λ(t | x) (``"hazard"``, the conditional Nelson–Aalen
    estimators). The SE columns (``mse_se``, ``bias_se``, ``variance_se``,
    :func:`~dprepro.studies.ldp_indicators.simulation.error_standard_errors`) come last.

    ``results`` yields ``(setting, replicate_frame)`` pairs, ``setting`` with
    keys censoring, n, alpha, lambda_t and mechanism (a registry name,
    default ``"laplace"``).  The non-private estimators do not depend on α or
    on the mechanism (their data streams are shared), so they are kept once
    per (censoring, n); a mismatch between jobs raises, since it would mean
    the jobs did not see the same samples.  Rows are ordered by censoring, n,
    estimator, mechanism (registry order), α and t.
    """
    private_rows, reference_rows = [], {}
    for setting, frame in results:
        for part in _setting_rows(frame, setting, setting.get("x", x), target):
            if part["mechanism"].iloc[0] != REFERENCE.mechanism:
                private_rows.append(part)
                continue
            key = (setting["censoring"], setting["n"], part["estimator"].iloc[0])
            if key in reference_rows:
                if not np.array_equal(reference_rows[key]["mse"].to_numpy(),
                                      part["mse"].to_numpy(), equal_nan=True):
                    raise ValueError(f"non-private estimates differ between α jobs for {key}: "
                                     "the jobs did not simulate the same samples")
            else:
                reference_rows[key] = part
    if not private_rows and not reference_rows:
        raise ValueError(f"no replicate results of {target} estimators to aggregate")
    table = pd.concat([*private_rows, *reference_rows.values()], ignore_index=True)
    order = {name: i for i, name in enumerate(ESTIMATORS)}
    table["_order"] = table["estimator"].map(order)
    table["_censoring"] = table["censoring"].astype(int)
    releases = {m.release_name: i for i, m in enumerate(MECHANISMS.values())}
    table["_mechanism"] = table["mechanism"].map(releases).fillna(-1)
    table = table.sort_values(["_censoring", "n", "_order", "_mechanism", "alpha", "t"],
                              na_position="first")
    return table.drop(columns=["_order", "_censoring", "_mechanism"]).reset_index(drop=True)


def integrated_mse(mse: pd.DataFrame) -> pd.DataFrame:
    """Mean of the MSE over the (evenly spaced) time grid: ∫ MSE(t) dt / (t_max − t_min)."""
    keys = ["censoring", "n", "alpha", "mechanism", "estimator"]
    grouped = mse.groupby(keys, dropna=False, sort=False)
    out = grouped.agg(imse=("mse", "mean"), ibias2=("bias", lambda b: float(np.mean(b**2))),
                      ivariance=("variance", "mean"), n_reps=("n_reps", "first"),
                      censored_fraction=("censored_fraction", "first"),
                      **({"noise_draws": ("noise_draws", "first")}
                         if "noise_draws" in mse else {}))
    return out.reset_index()


def imse_standard_errors(results: Iterable[tuple[Mapping, pd.DataFrame]], *, x: float,
                         target: str = "cdf") -> pd.DataFrame:
    r"""Monte Carlo SE of each integrated MSE: :math:`s(\mathrm{ISE}_r)/\sqrt R`.

    :math:`\mathrm{ISE}_r = \frac1T\sum_t (E^{(r)}(t) - F(t))^2` is replicate
    :math:`r`'s integrated squared error (IMSE is its mean over replicates).
    Keys as :func:`integrated_mse`; references once per (censoring, n).
    """
    rows = {}
    names = estimators(target)
    for setting, frame in results:
        for name, group in frame.groupby("estimator", sort=False):
            if name not in names:
                continue
            private = ESTIMATORS[name]["private"]
            record = (_setting_mechanism(setting).privacy_record(setting["alpha"])
                      if private else REFERENCE)
            key = (setting["censoring"], setting["n"], *record.columns(PRIVACY_COLUMNS).values(),
                   name)
            if key in rows:
                continue
            t, mean, within = replicate_moments(group)
            true = truth(t, target=target, x=setting.get("x", x), lambda_t=setting["lambda_t"])
            # a replicate's ISE averaged over its noise draws
            ise = ((mean - true) ** 2 + within).mean(axis=1)
            rows[key] = ise.std(ddof=1) / np.sqrt(len(ise))
    keys = ["censoring", "n", *PRIVACY_COLUMNS, "estimator"]
    return pd.DataFrame([dict(zip(keys, k, strict=True), imse_se=v) for k, v in rows.items()])


def convergence_rates(imse: pd.DataFrame, *, level: float = 0.95) -> pd.DataFrame:
    r"""Least-squares slope of log(IMSE) on log(n) per estimator and α.

    A slope of −γ means IMSE ∝ n^(−γ); privacy slows the rate when the private
    estimator's slope is flatter than the non-private ones. With an
    ``imse_se`` column (independent samples per n), the slope's SE follows
    from the delta method, :math:`\mathrm{Var}\log\mathrm{IMSE}_i \approx
    (\mathrm{se}_i/\mathrm{IMSE}_i)^2`, and the OLS weights
    :math:`c_i = (u_i - \bar u)/\sum_j (u_j - \bar u)^2`, :math:`u = \log n`:
    :math:`\mathrm{SE}^2 = \sum_i c_i^2 \mathrm{Var}\log\mathrm{IMSE}_i`. The
    lack of fit of the line, :math:`\chi^2 = \sum_i r_i^2 / \mathrm{Var}\log
    \mathrm{IMSE}_i` (residuals :math:`r_i`) on :math:`k - 2` df, inflates the SE
    by :math:`\sqrt{\chi^2/\mathrm{df}}` when :math:`\chi^2 > \mathrm{df}`
    (McCullagh & Nelder 1989, §4.5, overdispersion); the interval is slope ± z SE
    at ``level`` (columns ``slope_se``, ``slope_ci_lower``, ``slope_ci_upper``,
    ``lack_of_fit_chi2``, ``lack_of_fit_df``, ``se_inflation``). The slope is
    descriptive: with a fixed bandwidth rule it is not the minimax rate.
    """
    # scipy.special's normal quantile, scipy.stats.norm.isf's numbers without importing
    # scipy.stats (about 0.7 CPU-s of a table job)
    from scipy.special import ndtri

    z = -ndtri((1 - level) / 2)
    rows = []
    for (censoring, alpha, mechanism, name), group in imse.groupby(
            ["censoring", "alpha", "mechanism", "estimator"], dropna=False, sort=False):
        group = group.sort_values("n")
        log_n = np.log(group["n"].to_numpy(float))
        log_imse = np.log(group["imse"].to_numpy(float))
        slope, intercept = np.polyfit(log_n, log_imse, 1)
        row = {"censoring": censoring, "alpha": alpha, "mechanism": mechanism,
               "estimator": name, "slope": slope, "intercept": intercept,
               "n_min": int(group["n"].min()), "n_max": int(group["n"].max()),
               "points": len(group)}
        if "imse_se" in group:
            weights = (log_n - log_n.mean()) / ((log_n - log_n.mean()) ** 2).sum()
            var_log = (group["imse_se"].to_numpy(float) / group["imse"].to_numpy(float)) ** 2
            se = float(np.sqrt((weights**2 * var_log).sum()))
            # lack of fit: a straight line need not describe log IMSE; when the
            # residuals exceed their Monte Carlo noise the SE is inflated by
            # sqrt(chi2/df) (quasi-likelihood overdispersion)
            residuals = log_imse - (intercept + slope * log_n)
            chi2 = float((residuals**2 / var_log).sum())
            df = len(group) - 2
            inflation = float(np.sqrt(chi2 / df)) if df > 0 and chi2 > df else 1.0
            se *= inflation
            row |= {"slope_se": se, "slope_ci_lower": slope - z * se,
                    "slope_ci_upper": slope + z * se, "lack_of_fit_chi2": chi2,
                    "lack_of_fit_df": df, "se_inflation": inflation}
        rows.append(row)
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- releases


def privacy_records(settings: Iterable[Mapping]) -> list:
    """Privacy records of a table built from ``settings``: one per (mechanism, α), + references.

    Built from the registered mechanism objects that ran, so the sidecar states
    what the table's ``mechanism``/``alpha`` columns state.
    """
    pairs, draws = [], 1
    for setting in settings:
        pair = (setting.get("mechanism", "laplace"), float(setting["alpha"]))
        draws = max(draws, int(setting.get("noise_draws", 1)))
        if pair not in pairs:
            pairs.append(pair)
    return records_of(pairs, noise_draws=draws)


def table_privacy_records(table: pd.DataFrame) -> list:
    """Privacy records of every distinct (``mechanism``, ``alpha``) in a released table."""
    records, pairs = [], []
    for row in table[PRIVACY_COLUMNS].drop_duplicates().to_dict("records"):
        record = row_record(row)
        if record not in records:
            records.append(record)
        if row["mechanism"] != REFERENCE.mechanism:
            pairs.append((by_release_name(row["mechanism"]), float(row["alpha"])))
    # several α of one noise stream are jointly not private, M draws of one δ are
    # jointly Mα-LDP: say so in the sidecar
    joint = joint_records(pairs)
    if "noise_draws" in table:
        private = table[table["mechanism"] != REFERENCE.mechanism]
        draws = int(private["noise_draws"].max()) if len(private) else 1
        joint += draw_records(pairs, noise_draws=draws)
    if REFERENCE in records:
        records.remove(REFERENCE)
        return [*records, *joint, REFERENCE]
    return [*records, *joint]


def read_results(settings: Iterable[Mapping], paths: Iterable) -> Iterable:
    """``(setting, replicate frame of its α)`` pairs, lazily.

    ``paths[i]`` is the replicate file of ``settings[i]``; a file holds every α
    of one (mechanism, censoring, n) (:meth:`SimulationSet.to_frame`), so it
    is read once and split by α.
    """
    settings, paths = list(settings), list(paths)
    needed = {}
    for setting, path in zip(settings, paths, strict=True):
        needed.setdefault(path, set()).add(float(setting["alpha"]))
    cache = {}
    for setting, path in zip(settings, paths, strict=True):
        if path not in cache:
            cache.clear()  # settings come grouped by file: keep one file in memory
            # only the α this table needs (a file holds every α of its design)
            cache[path] = split_alphas(pd.read_parquet(path), alphas=needed[path])
        yield setting, cache[path][float(setting["alpha"])]


def mse_release(settings, paths, *, x: float) -> dict[str, pd.DataFrame]:
    """``mse.csv``: MSE, bias and variance per (censoring, α, mechanism, estimator, t)."""
    return {"table": mse_table(read_results(settings, paths), x=x)}


def alpha_grid_release(settings, paths, *, x: float) -> dict[str, pd.DataFrame]:
    """``mse_alpha_grid.csv``: integrated MSE (and its SE, ``imse_se``) on the fine α grid."""
    return {"table": _imse_with_se(read_results(settings, paths), x=x)}


def _imse_with_se(results, *, x: float, target: str = "cdf") -> pd.DataFrame:
    """:func:`integrated_mse` with :func:`imse_standard_errors` merged, in one pass.

    The replicate frames are read once and not kept (a grid of many α would not
    fit in memory twice).
    """
    keys = ["censoring", "n", *PRIVACY_COLUMNS, "estimator"]
    errors = []

    def tapped():
        for setting, frame in results:
            errors.append(imse_standard_errors([(setting, frame)], x=x, target=target))
            yield setting, frame

    imse = integrated_mse(mse_table(tapped(), x=x, target=target))
    standard_errors = pd.concat(errors, ignore_index=True).drop_duplicates(keys)
    return imse.merge(standard_errors, how="left", on=keys)


def convergence_release(settings, paths, *, x: float) -> dict[str, pd.DataFrame]:
    """``mse_vs_n.csv`` and ``convergence_rates.csv``: integrated MSE (and SE) against n, slopes.

    Both the estimators of F(t | x) and the cumulative-hazard estimators (Λ̂_n, Λ̌_n,
    Λ_n, the quantity of the paper's rate theory).

    ``imse_se`` (:func:`imse_standard_errors`) gives each slope its interval.
    """
    imse = pd.concat([_imse_with_se(read_results(settings, paths), x=x, target=target)
                      for target in ("cdf", "hazard")], ignore_index=True)
    return {"table": imse, "rates": convergence_rates(imse)}


def hazard_release(settings, paths, *, x: float) -> dict[str, pd.DataFrame]:
    """``hazard_mse.csv``: MSE of the conditional Nelson–Aalen estimators of Λ(t | x)."""
    return {"table": mse_table(read_results(settings, paths), x=x, target="hazard")}


def variance_floor(mse: pd.DataFrame, hazard: pd.DataFrame, censoring: Iterable[Mapping]
                   ) -> pd.DataFrame:
    r"""The variance floor of the private estimators beside their measured variance.

    Any presmoother that is a weighted average :math:`\hat p_i = \sum_k v_{ik} Z_k`
    (weights summing to 1) puts the noise of the released indicators into the
    conditional Nelson–Aalen estimator linearly:
    :math:`\hat\Lambda(t) - \Lambda_\delta(t) = \sum_k c_k \mu_k` with
    :math:`\sum_k c_k = \sum_{Y_i \le t} W_i / \sum_j W_j 1\{Y_j \ge Y_i\}
    \approx H_Y(t \mid x)`, the cumulative hazard of :math:`Y` at :math:`x`.
    With :math:`n` independent noises of variance :math:`\sigma^2(\alpha)`,
    Cauchy–Schwarz gives :math:`\sum_k c_k^2 \ge (\sum_k c_k)^2 / n`, so

    .. math::
        \operatorname{Var}_{\text{noise}} \hat\Lambda(t) \ge
            \frac{\sigma^2(\alpha)\, H_Y(t \mid x)^2}{n}, \qquad
        \operatorname{Var}_{\text{noise}} \hat F(t) \gtrsim S(t \mid x)^2
            \frac{\sigma^2(\alpha)\, H_Y(t \mid x)^2}{n}

    (linearised; :math:`\sigma^2 = 2/\alpha^2` for Laplace(1/α),
    :math:`e^\alpha/(e^\alpha-1)^2` for de-biased randomized response;
    :math:`H_Y(t \mid x) = (r_T(x) + r_C(x))\, t` for the exponential design).
    Both are averaged over the time grid, like the integrated MSE.

    Parameters
    ----------
    mse, hazard : DataFrame
        ``mse.csv`` (F) and ``hazard_mse.csv`` (Λ) of the same settings.
    censoring : list of mappings
        The configuration's censoring settings (label, lambda_t, lambda_c).
    """
    from dprepro.studies.ldp_indicators.simulation import hazard_rate

    specs = {str(c["label"]): c for c in censoring}
    rows = []
    private = mse[mse["mechanism"] != REFERENCE.mechanism]
    for (label, n, x, alpha, mechanism), group in private.groupby(
            ["censoring", "n", "x", "alpha", "mechanism"], sort=False):
        spec = specs[str(label)]
        entry = row_record({"mechanism": mechanism, "alpha": alpha})
        mech = by_release_name(mechanism)
        if mech.noise_variance is None:
            continue
        t = group["t"].to_numpy(float)
        r_t, r_c = hazard_rate(spec["lambda_t"], x), hazard_rate(spec["lambda_c"], x)
        sigma2 = float(mech.noise_variance(alpha))
        floor_hazard = sigma2 * ((r_t + r_c) * t) ** 2 / n
        floor_cdf = np.exp(-2 * r_t * t) * floor_hazard
        haz = hazard[(hazard["censoring"] == label) & (hazard["mechanism"] == mechanism)
                     & np.isclose(hazard["alpha"], alpha)]
        rows.append({"censoring": label, "n": n, "x": x,
                     **entry.columns(order=PRIVACY_COLUMNS), "noise_variance": sigma2,
                     "floor_ivariance_cdf": floor_cdf.mean(),
                     "ivariance_cdf": group["variance"].mean(), "imse_cdf": group["mse"].mean(),
                     "ratio_cdf": group["variance"].mean() / floor_cdf.mean(),
                     "floor_ivariance_cumhaz": floor_hazard.mean(),
                     "ivariance_cumhaz": haz["variance"].mean(),
                     "ratio_cumhaz": haz["variance"].mean() / floor_hazard.mean()})
    return pd.DataFrame(rows)


def _draw_counts(frame: pd.DataFrame) -> dict[str, int]:
    """Total draws, non-finite draws and draws outside [0, 1] of one estimator's rows."""
    if "draws" not in frame:  # a file of one draw per replicate
        values = frame["estimate"].to_numpy()
        return {"draws": len(values), "nonfinite_draws": int((~np.isfinite(values)).sum()),
                "outside_unit_draws": int(((values < 0) | (values > 1)).sum())}
    return {key: int(frame[key].sum())
            for key in ("draws", "nonfinite_draws", "outside_unit_draws")}


#: Robust columns of ``mse_clip.csv``
#: (:func:`dprepro.studies.ldp_indicators.simulation.heavy_tail_summary`).
_TAIL_COLUMNS = {"median_ise_ratio": "median_ise_ratio",
                 "share_unclipped_worse": "share_worse",
                 "top_sample_share_unclipped": "top_share"}


def clip_release(settings, paths, *, x: float) -> dict[str, pd.DataFrame]:
    r"""``mse_clip.csv``: the private F̂_n with p̂ clipped to [0, 1] (the headline) and not.

    One row per (censoring, n, α, mechanism): ``imse_clipped`` / ``imse_unclipped``
    with their Monte Carlo SEs (:math:`s(\mathrm{ISE}_r)/\sqrt R`), their ratio,
    ``outside_unit``, the share of unclipped estimates F̂(t) outside [0, 1] over
    replicates and t, and ``nonfinite``, the share that is not finite: with a
    negative p̂ at the last observation of the window the product-limit factor
    :math:`0^{\hat p}` is infinite, so the unclipped estimator is undefined
    there. The unclipped IMSE averages the squared errors where it is finite
    (each replicate's ISE over its finite t). Both come from the same
    replicates (paired).
    """
    keys = ["censoring", "n", *PRIVACY_COLUMNS]
    rows = []
    for setting, frame in read_results(settings, paths):
        ise = {}
        for name in ("private_beran", "private_beran_unclipped"):
            chosen = frame[frame["estimator"] == name]
            if chosen.empty:
                raise ValueError(f"no {name} estimates for {setting}: the replicates were run "
                                 "with clip_phat false (nothing to compare)")
            t, mean, within = replicate_moments(chosen)
            true = truth(t, target="cdf", x=setting.get("x", x), lambda_t=setting["lambda_t"])
            # over the finite draws; a (replicate, t) with none is left out
            squared = np.where(np.isfinite(mean), (mean - true) ** 2 + within, np.nan)
            ise[name] = np.nanmean(squared, axis=1)
            counts = _draw_counts(chosen)
        record = _setting_mechanism(setting).privacy_record(setting["alpha"])
        clipped, raw = ise["private_beran"], ise["private_beran_unclipped"]
        tail = heavy_tail_summary(raw, clipped)
        reps = len(clipped)
        rows.append({"censoring": setting["censoring"], "n": setting["n"],
                     **record.columns(order=PRIVACY_COLUMNS),
                     "imse_clipped": clipped.mean(),
                     "imse_clipped_se": clipped.std(ddof=1) / np.sqrt(reps),
                     "imse_unclipped": raw.mean(),
                     "imse_unclipped_se": raw.std(ddof=1) / np.sqrt(reps),
                     "ratio_unclipped_to_clipped": raw.mean() / clipped.mean(),
                     **{column: tail[key] for column, key in _TAIL_COLUMNS.items()},
                     "outside_unit": counts["outside_unit_draws"] / counts["draws"],
                     "nonfinite": counts["nonfinite_draws"] / counts["draws"],
                     "n_reps": reps})
    return {"table": pd.DataFrame(rows, columns=[*keys, "imse_clipped", "imse_clipped_se",
                                                 "imse_unclipped", "imse_unclipped_se",
                                                 "ratio_unclipped_to_clipped",
                                                 *_TAIL_COLUMNS, "outside_unit",
                                                 "nonfinite", "n_reps"])}


#: The tables that aggregate replicate files only, by the name the workflow's rules use
#: (``params.table``): one library function per output, one step script for all.
RELEASES = {
    "mse": mse_release,
    "alpha_grid": alpha_grid_release,
    "convergence": convergence_release,
    "hazard": hazard_release,
    "clip": clip_release,
}


def floor_release(mse, hazard, *, censoring) -> dict[str, pd.DataFrame]:
    """``variance_floor.csv``: :func:`variance_floor` of the Figure 1 settings."""
    return {"table": variance_floor(mse, hazard, censoring)}


#: Privacy columns of the variant tables: also the true ε and the note, since a
#: rescaled variant is not α-LDP.
VARIANT_PRIVACY_COLUMNS = ["alpha", "mechanism", "true_epsilon", "privacy_note"]


def _scaled_imse(mse: pd.DataFrame, settings, *, x: float) -> np.ndarray:
    r"""IMSE of the normalised error: :math:`\frac1T\sum_t \mathrm{MSE}(t)/(F(1-F))(t \mid x)`.

    The statistic of the ``ldp.no_dependence_on_x`` claims (errors divided by
    :math:`\sqrt{F(1-F)}`, so that an ISE is comparable across x where F
    differs), in :func:`integrated_mse`'s row order; F from each censoring
    level's ``lambda_t`` in ``settings``.
    """
    lambda_t = {str(s["censoring"]): s["lambda_t"] for s in settings}
    true = np.empty(len(mse))
    for censoring, rows in mse.groupby(mse["censoring"].astype(str), sort=False).indices.items():
        true[rows] = truth(mse["t"].to_numpy(dtype=float)[rows], target="cdf", x=x,
                           lambda_t=lambda_t[censoring])
    scaled = mse.assign(_scaled=mse["mse"].to_numpy() / (true * (1.0 - true)))
    keys = ["censoring", "n", "alpha", "mechanism", "estimator"]
    return scaled.groupby(keys, dropna=False, sort=False)["_scaled"].mean().to_numpy()


def variant_release(settings, paths, *, x: float, column: str) -> dict[str, pd.DataFrame]:
    """``mse_<variant>.csv``: integrated MSE for each value of a variant ``column``.

    ``column`` is a key of every setting (``"x"``, ``"noise_scale"``,
    ``"phat_at"``); each value's settings are aggregated on their own (their
    references differ, e.g. with x) and the tables stacked with ``column`` in
    front. The true ε and the privacy note of every row come from the
    mechanism objects (a rescaled variant is labelled not α-LDP).
    """
    settings, paths = list(settings), list(paths)
    values = list(dict.fromkeys(s[column] for s in settings))
    frames = []
    for value in values:
        chosen = [(s, p) for s, p in zip(settings, paths, strict=True) if s[column] == value]
        mse = mse_table(read_results(*zip(*chosen, strict=True)), x=x)
        imse = integrated_mse(mse)
        if column == "x":
            imse.insert(imse.columns.get_loc("imse") + 1, "imse_scaled",
                        _scaled_imse(mse, [s for s, _ in chosen], x=float(value)))
        imse.insert(0, column, value)
        frames.append(imse)
    table = pd.concat(frames, ignore_index=True)
    records = [row_record(row) for row in table[PRIVACY_COLUMNS].to_dict("records")]
    for name in VARIANT_PRIVACY_COLUMNS[2:]:
        table[name] = [record.columns(order=VARIANT_PRIVACY_COLUMNS)[name] for record in records]
    return {"table": table}
