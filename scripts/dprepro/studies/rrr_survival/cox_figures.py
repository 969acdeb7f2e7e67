"""Figures of the Cox analysis (:mod:`dprepro.studies.rrr_survival.cox`) from ``cox.csv`` only:
a forest plot per cohort and bias and coverage against ε."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

__all__ = ["ESTIMATOR_STYLE", "MIN_CONVERGED", "bias_coverage_figure", "forest_figure"]

#: Label, colour and marker of each estimator.
ESTIMATOR_STYLE = {
    "original": ("original (non-private)", "black", "s"),
    "original_tau": ("original, events ≤ τ (corrected score's reference)", "#8c564b", "P"),
    "naive": ("naive (released labels)", "#7f7f7f", "o"),
    "mc_simex": ("MC-SIMEX (quadratic)", "#1f77b4", "D"),
    "mc_simex_loglinear": ("MC-SIMEX (loglinear, sensitivity)", "#17becf", "v"),
    "corrected_score": ("corrected score", "#d62728", "^"),
}
#: Convergence share below which a point of the bias and coverage figure is drawn hollow.
MIN_CONVERGED = 0.8
_ORIGIN = {"synthetic": "SYNTHETIC stand-in (not the real cohort)",
           "simulation": "SIMULATED data (no real patient)",
           "real": "the real cohort"}


def data_text(origin: str, truth) -> str:
    """What a Cox figure's data are, and whether true hazard ratios are known: only where
    the table gives them (``true_log_hr`` finite), never from the origin alone."""
    text = _ORIGIN.get(origin, origin)
    known = np.isfinite(np.asarray(truth, dtype=float)).any()
    return text + ("; true hazard ratios known (marked ×)" if known
                   else "; true hazard ratios not known")


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
    estimators = [e for e in ESTIMATOR_STYLE if e == "original" or e in set(private["estimator"])
                  or (e == "original_tau" and e in set(rows["estimator"]))]
    fig, axes = plt.subplots(1, max(len(epsilons), 1), figsize=(3.2 * max(len(epsilons), 1) + 1.5,
                                                             0.55 * len(terms) * len(estimators)
                                                             / 2 + 1.8),
                             sharey=True, squeeze=False)
    offsets = np.linspace(-0.3, 0.3, len(estimators))
    values = pd.concat([rows["ci_lower"], rows["ci_upper"], rows["log_hr"]]).to_numpy(float)
    # an interval of a barely converged fit can run to |log HR| in the hundreds (exp()
    # overflows): the axis stops at hazard ratios of e^±6 (~400), wider intervals run off it
    values = np.clip(values[np.isfinite(values)], -6.0, 6.0)
    span = (np.exp(values.min() - 0.2), np.exp(values.max() + 0.2)) if values.size else None
    for ax, eps in zip(axes[0], epsilons or [None], strict=False):
        for off, est in zip(offsets, estimators, strict=True):
            part = rows[rows["estimator"] == est] if est in ("original", "original_tau") \
                else private[(private["estimator"] == est) & (private["epsilon"] == eps)]
            part = part.set_index("term").reindex(terms)
            y = np.arange(len(terms)) + off
            label, color, marker = ESTIMATOR_STYLE[est]
            # arrays, not Series: matplotlib's float() of a one-element Series is deprecated
            # ends past the axis (|log HR| > 50) are drawn at e^±50: off the plot either way
            lo, hi, hr = (np.exp(np.clip(part[c].to_numpy(float), -50, 50))
                          for c in ("ci_lower", "ci_upper", "log_hr"))
            ax.errorbar(hr, y, xerr=[hr - lo, hi - hr],
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
            ax.set_title(f"RRR stated ε = {eps:g} (true ε = {true_eps:.2f})", fontsize=9)
        ax.grid(alpha=0.3, axis="x")
    axes[0][0].set_yticks(np.arange(len(terms)), terms, fontsize=9)
    axes[0][0].invert_yaxis()
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.955),
               ncol=min(len(labels), 4), fontsize=8, frameon=False)
    origin = rows["data_origin"].iloc[0]
    fig.suptitle(f"Cox model of {title or dataset} on its group, RRR {calibration} calibration",
                 fontsize=10, y=0.995)
    fig.tight_layout(rect=(0, 0.06, 1, 0.9))
    adjusted = [t for t in terms if " vs " not in t]
    _footer(fig, f"Data: {data_text(origin, original['true_log_hr'])}. Reference group: "
            f"{terms[0].split(' vs ')[-1]}"
            + (f"; adjusted for {', '.join(adjusted)}" if adjusted else "")
            + ". Private fits: draw 0 only. original: all events (Efron ties); original_tau: "
            "events after τ censored, Breslow (the corrected score's reference). Every private "
            "fit is post-processing of the RRR label release: ε-LDP for the group label only; "
            "times, events and covariates are released unprotected (assumed public).")
    return fig


def _signed_bias(part: pd.DataFrame) -> float:
    """Mean over group terms of the bias signed as the reference log HR, in log-HR units
    (< 0: towards 0). Absolute, not relative: a relative bias is unstable near a null
    effect."""
    part = part[part["term"].str.contains(" vs ", regex=False)]
    ref = part["original_log_hr"]
    ok = np.isfinite(ref) & np.isfinite(part["bias"]) & (ref != 0)
    if not ok.any():
        return np.nan
    return float((np.sign(ref[ok]) * part.loc[ok, "bias"]).mean())


def bias_coverage_figure(table: pd.DataFrame, *, titles: dict | None = None):
    """Signed bias in log-HR units (top), mean coverage over group terms (middle) and the
    share of draws with a fit (bottom) against the true ε, one column per cohort, one line
    per estimator and calibration (dotted: the second). Points whose convergence share is
    below :data:`MIN_CONVERGED` are hollow: their bias and coverage are conditional on a
    fit, and fits fail where the estimate would be extreme."""
    titles = titles or {}
    private = table[table["mechanism"] == "rrr"]
    datasets = list(dict.fromkeys(private["dataset"]))
    calibrations = list(dict.fromkeys(private["calibration"]))
    fig, axes = plt.subplots(3, max(len(datasets), 1), figsize=(3.0 * max(len(datasets), 1) + 1,
                                                                7.6), squeeze=False,
                             sharex=False, gridspec_kw={"height_ratios": [1, 1, 0.6]})
    for col, dataset in enumerate(datasets):
        rows = private[private["dataset"] == dataset]
        for est in [e for e in ESTIMATOR_STYLE if e in set(rows["estimator"])]:
            label, color, marker = ESTIMATOR_STYLE[est]
            for i, cal in enumerate(calibrations):
                part = rows[(rows["estimator"] == est) & (rows["calibration"] == cal)]
                keys = sorted(part["epsilon"].unique())
                if not keys:
                    continue
                groups = part["term"].str.contains(" vs ", regex=False)
                x = np.array([part.loc[part["epsilon"] == e, "true_epsilon"].iloc[0]
                              for e in keys])
                bias = np.array([_signed_bias(part[part["epsilon"] == e]) for e in keys])
                cover = np.array([part.loc[(part["epsilon"] == e) & groups, "coverage"].mean()
                                  for e in keys])
                conv = np.array([part.loc[(part["epsilon"] == e) & groups, "converged"].min()
                                 for e in keys])
                low = conv < MIN_CONVERGED
                line = {"color": color, "lw": 1.2, "ls": "-" if i == 0 else ":"}
                for ax, y in ((axes[0][col], bias), (axes[1][col], cover),
                              (axes[2][col], conv)):
                    ax.plot(x, y, **line)
                    ax.plot(x[~low], y[~low], marker, color=color, ms=5, ls="none")
                    ax.plot(x[low], y[low], marker, color=color, ms=5, ls="none", mfc="white")
                axes[0][col].plot([], [], marker=marker, ms=5, label=f"{label}, {cal}", **line)
        axes[0][col].axhline(0, color="0.5", lw=0.8)
        axes[1][col].axhline(0.95, color="0.5", lw=0.8, ls="--")
        axes[1][col].set_ylim(-0.02, 1.02)
        axes[1][col].text(0.98, 0.04, "own-fit coverage:\nexpected > 0.95",
                          transform=axes[1][col].transAxes, ha="right", va="bottom",
                          fontsize=6.5, color="0.3")
        axes[2][col].axhline(MIN_CONVERGED, color="0.5", lw=0.8, ls="--")
        axes[2][col].set_ylim(-0.02, 1.05)
        axes[0][col].set_title(titles.get(dataset, dataset), fontsize=9)
        axes[2][col].set_xlabel("true ε", fontsize=9)
        for ax in axes[:, col]:
            ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("bias (log HR, signed;\n< 0: towards 0)", fontsize=9)
    axes[1][0].set_ylabel("coverage of the original\nlog HR (95% intervals)", fontsize=9)
    axes[2][0].set_ylabel("share of draws\nwith a fit", fontsize=9)
    handles, labels = axes[0][0].get_legend_handles_labels()
    ncol = 3 if len(datasets) > 1 else 2
    fig.legend(handles, labels, loc="upper center", ncol=ncol, fontsize=7, frameon=False)
    top = 1 - 0.022 * (-(-len(labels) // ncol) + 1)
    fig.tight_layout(rect=(0, 0.1 if len(datasets) > 1 else 0.16, 1, top))
    _footer(fig, "Mean over the draws with a fit; bias and coverage against the fit on the "
            "true labels (the corrected score's: events after τ censored, as it is). A draw "
            "without a fit covers nothing. Hollow: fewer than "
            f"{MIN_CONVERGED:.0%} of the draws have a fit (lowest over group terms): bias and "
            "coverage conditional on a fit, not firm. The draws vary only the privacy noise, "
            "so coverage of the cohort's own fit is expected above 0.95 (not a test of "
            "nominal coverage). Every private fit is post-processing of the RRR release "
            "(ε-LDP for the group label only).")
    return fig
