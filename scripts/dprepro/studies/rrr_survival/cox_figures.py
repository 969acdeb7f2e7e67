"""Figures of the Cox analysis (:mod:`dprepro.studies.rrr_survival.cox`) from ``cox.csv`` only:
a forest plot per cohort and bias and coverage against ε."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

__all__ = ["ESTIMATOR_STYLE", "bias_coverage_figure", "forest_figure"]

#: Label, colour and marker of each estimator.
ESTIMATOR_STYLE = {
    "original": ("original (non-private)", "black", "s"),
    "naive": ("naive (released labels)", "#7f7f7f", "o"),
    "mc_simex": ("MC-SIMEX", "#1f77b4", "D"),
    "corrected_score": ("corrected score", "#d62728", "^"),
}
_ORIGIN = {"synthetic": "SYNTHETIC stand-in (not the real cohort)",
           "simulation": "SIMULATED data (no real patient; true hazard ratios known)",
           "real": "the real cohort"}


def _footer(fig, text: str) -> None:
    fig.text(0.01, 0.005, text, ha="left", va="bottom", fontsize=7, color="0.35", wrap=True)


def forest_figure(table: pd.DataFrame, dataset: str, *, calibration: str, title: str = ""):
    """Hazard ratios with 95 % intervals (draw 0) of every estimator, one panel per ε.

    The original fit is drawn in every panel; a simulation cohort's true hazard
    ratios are marked ×. Only the rows of ``calibration`` (the study's first).
    """
    rows = table[table["dataset"] == dataset]
    original = rows[rows["estimator"] == "original"]
    terms = list(dict.fromkeys(original["term"]))
    private = rows[(rows["mechanism"] == "rrr") & (rows["calibration"] == calibration)]
    epsilons = sorted(private["epsilon"].unique())
    estimators = [e for e in ESTIMATOR_STYLE if e == "original" or e in set(private["estimator"])]
    fig, axes = plt.subplots(1, max(len(epsilons), 1), figsize=(3.2 * max(len(epsilons), 1) + 1.5,
                                                             0.55 * len(terms) * len(estimators)
                                                             / 2 + 1.8),
                             sharey=True, squeeze=False)
    offsets = np.linspace(-0.3, 0.3, len(estimators))
    values = pd.concat([rows["ci_lower"], rows["ci_upper"], rows["log_hr"]]).to_numpy(float)
    values = values[np.isfinite(values)]
    span = (np.exp(values.min() - 0.2), np.exp(values.max() + 0.2)) if values.size else None
    for ax, eps in zip(axes[0], epsilons or [None], strict=False):
        for off, est in zip(offsets, estimators, strict=True):
            part = original if est == "original" else private[
                (private["estimator"] == est) & (private["epsilon"] == eps)]
            part = part.set_index("term").reindex(terms)
            y = np.arange(len(terms)) + off
            label, color, marker = ESTIMATOR_STYLE[est]
            lo, hi = np.exp(part["ci_lower"]), np.exp(part["ci_upper"])
            ax.errorbar(np.exp(part["log_hr"]), y, xerr=[np.exp(part["log_hr"]) - lo,
                                                         hi - np.exp(part["log_hr"])],
                        fmt=marker, color=color, ms=4, lw=1, capsize=2, label=label)
        truth = original.set_index("term").reindex(terms)["true_log_hr"]
        if np.isfinite(truth).any():
            ax.plot(np.exp(truth), np.arange(len(terms)), "x", color="green", ms=7,
                    label="true hazard ratio")
        ax.axvline(1.0, color="0.6", lw=0.8, ls="--")
        ax.set_xscale("log")
        if span:
            ax.set_xlim(*span)
        ax.set_xlabel("hazard ratio (95% CI, draw 0)", fontsize=9)
        if eps is not None:
            true_eps = private.loc[private["epsilon"] == eps, "true_epsilon"].iloc[0]
            ax.set_title(f"RRR ε = {eps:g} (true ε = {true_eps:.2f})", fontsize=9)
        ax.grid(alpha=0.3, axis="x")
    axes[0][0].set_yticks(np.arange(len(terms)), terms, fontsize=9)
    axes[0][0].invert_yaxis()
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.955),
               ncol=min(len(labels), 5), fontsize=8, frameon=False)
    origin = rows["data_origin"].iloc[0]
    fig.suptitle(f"Cox model of {title or dataset} on its group, RRR {calibration} calibration",
                 fontsize=10, y=0.995)
    fig.tight_layout(rect=(0, 0.06, 1, 0.9))
    adjusted = [t for t in terms if " vs " not in t]
    _footer(fig, f"Data: {_ORIGIN.get(origin, origin)}. Reference group: "
            f"{terms[0].split(' vs ')[-1]}"
            + (f"; adjusted for {', '.join(adjusted)}" if adjusted else "")
            + ". Every private fit is post-processing of the RRR label release (same ε).")
    return fig


def _relative(part: pd.DataFrame, column: str) -> float:
    """Sum over group terms of ``column`` signed as the reference log HR, over the sum of
    |reference| (the bias as a share of the effect)."""
    part = part[part["term"].str.contains(" vs ", regex=False)]
    ref = part["original_log_hr"]
    ok = np.isfinite(ref) & np.isfinite(part[column])
    if not ok.any() or not np.abs(ref[ok]).sum():
        return np.nan
    return float((np.sign(ref[ok]) * part.loc[ok, column]).sum() / np.abs(ref[ok]).sum())


def bias_coverage_figure(table: pd.DataFrame, *, titles: dict | None = None):
    """Relative bias (top) and mean coverage over group terms (bottom) against the true ε,
    one column per cohort, one line per estimator and calibration (open markers: the
    second calibration)."""
    titles = titles or {}
    private = table[table["mechanism"] == "rrr"]
    datasets = list(dict.fromkeys(private["dataset"]))
    calibrations = list(dict.fromkeys(private["calibration"]))
    fig, axes = plt.subplots(2, max(len(datasets), 1), figsize=(3.0 * max(len(datasets), 1) + 1,
                                                                5.6), squeeze=False,
                             sharex=False)
    for col, dataset in enumerate(datasets):
        rows = private[private["dataset"] == dataset]
        for est in [e for e in ESTIMATOR_STYLE if e in set(rows["estimator"])]:
            label, color, marker = ESTIMATOR_STYLE[est]
            for i, cal in enumerate(calibrations):
                part = rows[(rows["estimator"] == est) & (rows["calibration"] == cal)]
                keys = sorted(part["epsilon"].unique())
                x = [part.loc[part["epsilon"] == e, "true_epsilon"].iloc[0] for e in keys]
                bias = [_relative(part[part["epsilon"] == e], "bias") for e in keys]
                cover = [part.loc[(part["epsilon"] == e)
                                  & part["term"].str.contains(" vs ", regex=False),
                                  "coverage"].mean() for e in keys]
                style = {"color": color, "marker": marker, "ms": 5, "lw": 1.2,
                         "mfc": color if i == 0 else "white",
                         "ls": "-" if i == 0 else ":",
                         "label": f"{label}, {cal}"}
                axes[0][col].plot(x, bias, **style)
                axes[1][col].plot(x, cover, **style)
        axes[0][col].axhline(0, color="0.5", lw=0.8)
        axes[1][col].axhline(0.95, color="0.5", lw=0.8, ls="--")
        axes[1][col].set_ylim(-0.02, 1.02)
        axes[0][col].set_title(titles.get(dataset, dataset), fontsize=9)
        axes[1][col].set_xlabel("true ε", fontsize=9)
        for ax in axes[:, col]:
            ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("relative bias\n(share of the original effect)", fontsize=9)
    axes[1][0].set_ylabel("coverage of the original\nlog HR (95% intervals)", fontsize=9)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=3, fontsize=7, frameon=False)
    fig.tight_layout(rect=(0, 0.05, 1, 0.88))
    _footer(fig, "Mean over the draws; bias and coverage against the fit on the true labels "
            "(the corrected score's: events after τ censored, as it is). A draw without a fit "
            "covers nothing. Every private fit is post-processing of the RRR release.")
    return fig
