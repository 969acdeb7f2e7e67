"""Figures built only from aggregated tables (one figure per rule).

Every figure carries a footer saying what data it shows (real, synthetic
stand-in or simulation) and its privacy parameters, so a PNG separated from
the report still says what it is.
"""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from .io import atomic_path  # noqa: E402
from .ldp_simulation import ESTIMATORS  # noqa: E402

__all__ = ["save_figure", "ldp_figure1", "ldp_mse_vs_alpha", "ldp_mse_vs_n"]

_STYLE = {
    "private_beran": {"color": "#d62728", "linestyle": "-"},
    "generalized_beran": {"color": "#1f77b4", "linestyle": "--"},
    "beran": {"color": "#2ca02c", "linestyle": ":"},
}


def _label(name: str) -> str:
    info = ESTIMATORS[name]
    return f"{info['symbol']} {info['label']}"


def save_figure(fig, paths, *, dpi: int = 150) -> None:
    """Save to every path (format from the suffix), atomically, without timestamps."""
    for path in paths:
        suffix = Path(path).suffix.lstrip(".")
        metadata = {"CreationDate": None} if suffix == "pdf" else {"Software": None}
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=suffix, dpi=dpi, metadata=metadata, bbox_inches="tight")
    plt.close(fig)


def _footer(fig, text: str) -> None:
    fig.text(0.01, 0.005, text, fontsize=7, color="0.35", ha="left", va="bottom")


def ldp_figure1(mse: pd.DataFrame, *, alphas, log_scale: bool = False):
    """Figure 1 of the paper: MSE(t) per censoring level (rows) and α (columns)."""
    censorings = sorted(mse["censoring"].astype(str).unique(), key=int)
    alphas = sorted(alphas)
    fig, axes = plt.subplots(len(censorings), len(alphas), figsize=(3.6 * len(alphas),
                             2.9 * len(censorings)), sharex=True, sharey="row", squeeze=False)
    mse = mse.assign(censoring=mse["censoring"].astype(str))
    for i, censoring in enumerate(censorings):
        rows = mse[mse["censoring"] == censoring]
        for j, alpha in enumerate(alphas):
            ax = axes[i, j]
            for name in ESTIMATORS:
                part = rows[rows["estimator"] == name]
                if ESTIMATORS[name]["private"]:
                    part = part[np.isclose(part["alpha"], alpha)]
                ax.plot(part["t"], part["mse"], label=_label(name), **_STYLE[name])
            ax.set_title(f"{censoring}% censoring, α = {alpha:g}", fontsize=9)
            if log_scale:
                ax.set_yscale("log")
            if i == len(censorings) - 1:
                ax.set_xlabel("t")
            if j == 0:
                ax.set_ylabel("MSE of F(t | x)")
            ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=7, loc="upper left")
    n = int(mse["n"].iloc[0])
    reps = int(mse["n_reps"].iloc[0])
    x = float(mse["x"].iloc[0])
    _footer(fig, f"Simulation (no real data): N = {reps} samples of n = {n}, x = {x:g}; "
                 "F̂_n is α-LDP (Z = δ + Laplace(1/α)); F̌_n and F_n are non-private references.")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig


def ldp_mse_vs_alpha(imse: pd.DataFrame):
    """Integrated MSE of the private estimator over a fine α grid, references as lines."""
    censorings = sorted(imse["censoring"].astype(str).unique(), key=int)
    imse = imse.assign(censoring=imse["censoring"].astype(str))
    fig, axes = plt.subplots(1, len(censorings), figsize=(4.2 * len(censorings), 3.4),
                             sharey=True, squeeze=False)
    for ax, censoring in zip(axes[0], censorings, strict=True):
        rows = imse[imse["censoring"] == censoring]
        private = rows[rows["estimator"] == "private_beran"].sort_values("alpha")
        ax.plot(private["alpha"], private["imse"], marker="o", label=_label("private_beran"),
                **_STYLE["private_beran"])
        for name in ("generalized_beran", "beran"):
            value = rows.loc[rows["estimator"] == name, "imse"]
            if len(value):
                ax.axhline(value.iloc[0], label=_label(name), **_STYLE[name])
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("α (local privacy level)")
        ax.set_title(f"{censoring}% censoring", fontsize=9)
        ax.grid(alpha=0.3, which="both")
    axes[0, 0].set_ylabel("integrated MSE")
    axes[0, 0].legend(fontsize=7)
    _footer(fig, "Simulation (no real data); F̂_n is α-LDP (Laplace on δ, scale 1/α); "
                 f"N = {int(imse['n_reps'].iloc[0])} samples of n = {int(imse['n'].iloc[0])}.")
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return fig


def ldp_mse_vs_n(imse: pd.DataFrame, rates: pd.DataFrame):
    """Log–log integrated MSE against n with fitted slopes in the legend."""
    fig, ax = plt.subplots(figsize=(5.2, 3.8))
    palette = plt.get_cmap("Reds")
    private_alphas = sorted(imse.loc[imse["mechanism"] != "none", "alpha"].unique())
    for (alpha, name), group in imse.groupby(["alpha", "estimator"], dropna=False, sort=False):
        group = group.sort_values("n")
        rate = rates[(rates["estimator"] == name)
                     & ((rates["alpha"] == alpha) | (rates["alpha"].isna() & pd.isna(alpha)))]
        slope = rate["slope"].iloc[0] if len(rate) else np.nan
        style = dict(_STYLE[name])
        label = _label(name)
        if ESTIMATORS[name]["private"]:
            shade = 0.45 + 0.5 * private_alphas.index(alpha) / max(1, len(private_alphas) - 1)
            style["color"] = palette(shade)
            label += f", α = {alpha:g}"
        ax.plot(group["n"], group["imse"], marker="o", label=f"{label} (slope {slope:.2f})",
                **style)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("sample size n")
    ax.set_ylabel("integrated MSE")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)
    censoring = imse["censoring"].iloc[0]
    _footer(fig, f"Simulation (no real data), {censoring}% censoring; "
                 f"N = {int(imse['n_reps'].iloc[0])} samples per n; private curves α-LDP.")
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return fig


def figure_paths(outputs) -> list[os.PathLike]:
    return [outputs[k] for k in ("pdf", "png")]
