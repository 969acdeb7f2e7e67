"""Aggregation of the ``ldp_indicators`` replicate estimates into tidy tables.

Every table states its privacy parameters: ``mechanism`` is
``laplace_indicators`` (α-LDP, Z = δ + Laplace(1/α)) for the private
estimator and ``none`` for the non-private references, whose ``alpha`` is
empty.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from .ldp_simulation import ESTIMATORS, error_summary, true_conditional_cdf

__all__ = [
    "MECHANISM",
    "mse_table",
    "integrated_mse",
    "convergence_rates",
    "paper_findings",
]

MECHANISM = "laplace_indicators"


def _setting_rows(frame: pd.DataFrame, setting: Mapping, x: float) -> list[pd.DataFrame]:
    rows = []
    truth_cache = {}
    for name, group in frame.groupby("estimator", sort=False):
        wide = group.pivot(index="replicate", columns="t", values="estimate")
        t = wide.columns.to_numpy(dtype=float)
        if "t" not in truth_cache:
            truth_cache["t"] = true_conditional_cdf(t, x=x, lambda_t=setting["lambda_t"])
        summary = error_summary(wide.to_numpy(), truth_cache["t"])
        private = ESTIMATORS[name]["private"]
        rows.append(pd.DataFrame({
            "censoring": setting["censoring"],
            "n": setting["n"],
            "x": x,
            "alpha": setting["alpha"] if private else np.nan,
            "mechanism": MECHANISM if private else "none",
            "estimator": name,
            "t": t,
            "truth": truth_cache["t"],
            **summary,
            "censored_fraction": group["censored_fraction"].iloc[0::len(t)].mean(),
        }))
    return rows


def mse_table(results: Iterable[tuple[Mapping, pd.DataFrame]], *, x: float) -> pd.DataFrame:
    """MSE, bias and variance per (censoring, n, α, estimator, t).

    ``results`` yields ``(setting, replicate_frame)`` pairs, ``setting`` with
    keys censoring, n, alpha, lambda_t.  The non-private estimators do not
    depend on α (their data streams are shared across α), so they are kept
    once per (censoring, n); a mismatch between α jobs raises, since it would
    mean the jobs did not see the same samples.
    """
    private_rows, reference_rows = [], {}
    for setting, frame in results:
        for part in _setting_rows(frame, setting, x):
            if part["mechanism"].iloc[0] == MECHANISM:
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
        raise ValueError("no replicate results to aggregate")
    table = pd.concat([*private_rows, *reference_rows.values()], ignore_index=True)
    order = {name: i for i, name in enumerate(ESTIMATORS)}
    table["_order"] = table["estimator"].map(order)
    table["_censoring"] = table["censoring"].astype(int)
    table = table.sort_values(["_censoring", "n", "_order", "alpha", "t"], na_position="first")
    return table.drop(columns=["_order", "_censoring"]).reset_index(drop=True)


def integrated_mse(mse: pd.DataFrame) -> pd.DataFrame:
    """Mean of the MSE over the (evenly spaced) time grid: ∫ MSE(t) dt / (t_max − t_min)."""
    keys = ["censoring", "n", "alpha", "mechanism", "estimator"]
    grouped = mse.groupby(keys, dropna=False, sort=False)
    out = grouped.agg(imse=("mse", "mean"), ibias2=("bias", lambda b: float(np.mean(b**2))),
                      ivariance=("variance", "mean"), n_reps=("n_reps", "first"),
                      censored_fraction=("censored_fraction", "first"))
    return out.reset_index()


def convergence_rates(imse: pd.DataFrame) -> pd.DataFrame:
    """Least-squares slope of log(IMSE) on log(n) per estimator and α.

    A slope of −γ means IMSE ∝ n^(−γ); privacy slows the rate when the private
    estimator's slope is flatter than the non-private ones.
    """
    rows = []
    for (censoring, alpha, mechanism, name), group in imse.groupby(
            ["censoring", "alpha", "mechanism", "estimator"], dropna=False, sort=False):
        group = group.sort_values("n")
        log_n = np.log(group["n"].to_numpy(float))
        log_imse = np.log(group["imse"].to_numpy(float))
        slope, intercept = np.polyfit(log_n, log_imse, 1)
        rows.append({"censoring": censoring, "alpha": alpha, "mechanism": mechanism,
                     "estimator": name, "slope": slope, "intercept": intercept,
                     "n_min": int(group["n"].min()), "n_max": int(group["n"].max()),
                     "points": len(group)})
    return pd.DataFrame(rows)


def paper_findings(mse: pd.DataFrame, *, near_ratio: float = 1.5) -> pd.DataFrame:
    """Check the paper's claims about Figure 1 on the produced numbers.

    Claims (paper §5): (1) F̌_n has smaller MSE than F_n; (2) the private
    estimator's MSE falls as α grows; (3) F̂_n is highest at the smallest α;
    (4) F̂_n is close to F̌_n at the largest α and (5) near F_n at α = 0.3;
    (6) more censoring raises every MSE.  Comparisons use the integrated MSE;
    "close"/"near" means a ratio within [1/near_ratio, near_ratio].
    """
    imse = integrated_mse(mse)
    rows = []

    def add(claim, censoring, statistic, value, criterion, holds):
        rows.append({"claim": claim, "censoring": censoring, "statistic": statistic,
                     "value": float(value), "criterion": criterion, "holds": bool(holds)})

    for censoring, group in imse.groupby("censoring", sort=False):
        ref = group[group["mechanism"] == "none"].set_index("estimator")["imse"]
        priv = group[group["mechanism"] == MECHANISM].sort_values("alpha")
        gen, beran = ref.get("generalized_beran"), ref.get("beran")
        if gen is not None and beran is not None:
            add("generalized Beran below Beran", censoring, "IMSE(F̌_n) / IMSE(F_n)",
                gen / beran, "< 1", gen < beran)
        if len(priv) >= 2:
            diffs = np.diff(priv["imse"].to_numpy())
            add("private MSE falls as α grows", censoring,
                "max consecutive IMSE change over increasing α", diffs.max(), "< 0",
                np.all(diffs < 0))
        if len(priv) and gen is not None and beran is not None:
            smallest = priv.iloc[0]
            add(f"private highest at smallest α (α = {smallest['alpha']:g})", censoring,
                "IMSE(F̂_n) / max(IMSE(F̌_n), IMSE(F_n))", smallest["imse"] / max(gen, beran),
                "> 1", smallest["imse"] > max(gen, beran))
            largest = priv.iloc[-1]
            ratio = largest["imse"] / gen
            add(f"private close to generalized Beran at largest α (α = {largest['alpha']:g})",
                censoring, "IMSE(F̂_n) / IMSE(F̌_n)", ratio,
                f"within [{1 / near_ratio:.3g}, {near_ratio:g}]",
                1 / near_ratio <= ratio <= near_ratio)
            at03 = priv[np.isclose(priv["alpha"], 0.3)]
            if len(at03):
                ratio = at03["imse"].iloc[0] / beran
                add("private near Beran at α = 0.3", censoring, "IMSE(F̂_n) / IMSE(F_n)", ratio,
                    f"within [{1 / near_ratio:.3g}, {near_ratio:g}]",
                    1 / near_ratio <= ratio <= near_ratio)
    levels = sorted(imse["censoring"].unique(), key=int)
    if len(levels) >= 2:
        low, high = levels[0], levels[-1]
        keys = ["n", "alpha", "estimator"]
        merged = imse[imse["censoring"] == low].merge(
            imse[imse["censoring"] == high], on=keys, suffixes=("_low", "_high"))
        ratios = merged["imse_high"] / merged["imse_low"]
        add(f"more censoring ({high}% vs {low}%) raises every MSE", f"{low}->{high}",
            "min over estimators and α of IMSE ratio", ratios.min(), "> 1", np.all(ratios > 1))
    return pd.DataFrame(rows)
