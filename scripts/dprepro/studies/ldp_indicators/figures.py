"""The ldp_indicators figures, built only from aggregated tables (one figure per rule).

Every figure carries a footer saying what data it shows (real, synthetic
stand-in or simulation) and its privacy parameters, so a PNG separated from
the report still says what it is. The shared style is
:mod:`dprepro.figures.style`; the other studies, the audit and the claims have their own
figure modules.
"""

from __future__ import annotations

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from dprepro.figures.style import legend_and_footer
from dprepro.mechanisms.identity import mechanism_name
from dprepro.studies.ldp_indicators.simulation import ESTIMATORS, estimators

__all__ = ["LDP_FIGURES", "ldp_figure1", "ldp_mse_vs_alpha", "ldp_mse_vs_n"]


_STYLE = {
    "private_beran": {"color": "#d62728", "linestyle": "-"},
    "generalized_beran": {"color": "#1f77b4", "linestyle": "--"},
    "beran": {"color": "#2ca02c", "linestyle": ":"},
    "private_nelson_aalen": {"color": "#d62728", "linestyle": "-"},
    "generalized_nelson_aalen": {"color": "#1f77b4", "linestyle": "--"},
    "nelson_aalen": {"color": "#2ca02c", "linestyle": ":"},
}


# mathtext symbols: combining accents (F̂, Λ̌) render alike in most fonts, and
# mathtext's \check is drawn beside the letter in DejaVu, so the check is an \overset
_TEX = {
    "private_beran": (r"$\hat F_n$", r"private ($\hat p$ from the released values)"),
    "generalized_beran": (r"$\overset{\vee}{F}_n$", r"generalized Beran ($\hat p$ from $\delta$)"),
    "beran": (r"$F_n$", "Beran"),
    "private_nelson_aalen": (r"$\hat\Lambda_n$",
                             r"private Nelson–Aalen ($\hat p$ from the released values)"),
    "generalized_nelson_aalen": (r"$\overset{\vee}{\Lambda}_n$",
                                 r"Nelson–Aalen with $\hat p$ from $\delta$"),
    "nelson_aalen": (r"$\Lambda_n$", "Nelson–Aalen"),
}


def _label(name: str) -> str:
    symbol, text = _TEX.get(name, (ESTIMATORS[name]["symbol"], ESTIMATORS[name]["label"]))
    return f"{symbol} {text}"


# Private curves of mechanisms other than the paper's Laplace: same estimator,
# other colours, so the paper's figure looks as before with Laplace alone.
_MECHANISM_COLORS = ["#9467bd", "#ff7f0e", "#8c564b", "#e377c2"]


def _private_curves(rows: pd.DataFrame, estimator: str = "private_beran"):
    """(label, style, rows) of a private estimator, one per mechanism in table order.

    Every label names its mechanism in words (``Laplace indicators``, ``Randomized
    response``), never by its identifier.
    """
    private = rows[rows["estimator"] == estimator]
    mechanisms = list(dict.fromkeys(private["mechanism"]))
    for i, mechanism in enumerate(mechanisms):
        style = dict(_STYLE[estimator])
        if mechanism != "laplace_indicators":
            style["color"] = _MECHANISM_COLORS[(i - 1) % len(_MECHANISM_COLORS)]
        label = f"{_label(estimator)}, {mechanism_name(mechanism)}"
        yield label, style, private[private["mechanism"] == mechanism]






def _mse_curve(ax, part, label, style, value="mse", signed=False):
    """A curve and, where the table has its Monte Carlo SE, a ±2 SE band.

    The band is cut at 0 unless the quantity is ``signed`` (a bias).
    """
    part = part.sort_values("t")
    ax.plot(part["t"], part[value], label=label, **style)
    if f"{value}_se" in part:
        se = part[f"{value}_se"].to_numpy(float)
        lower = part[value].to_numpy(float) - 2 * se
        if not signed:
            lower = np.maximum(lower, 0.0)
        ax.fill_between(part["t"], lower, part[value] + 2 * se, color=style["color"],
                        alpha=0.18, lw=0)


def ldp_figure1(mse: pd.DataFrame, *, alphas, log_scale: bool = False, target: str = "cdf"):
    """Figure 1 of the paper: MSE(t) per censoring level (rows) and α (columns).

    Every curve has a pointwise ±2 Monte Carlo SE band (``mse_se``); the
    legend sits below the panels so it covers no curve. ``target="hazard"``
    draws the same figure for the conditional Nelson–Aalen estimators.
    """
    censorings = sorted(mse["censoring"].astype(str).unique(), key=int)
    alphas = sorted(alphas)
    names = estimators(target)
    mse = mse[mse["estimator"].isin(names)].assign(censoring=mse["censoring"].astype(str))
    x = float(mse["x"].iloc[0])
    quantity = f"F(t | x = {x:g})" if target == "cdf" else f"Λ(t | x = {x:g})"
    fig, axes = plt.subplots(len(censorings), len(alphas), figsize=(3.6 * len(alphas),
                             2.9 * len(censorings) + 0.6), sharex=True, sharey="row",
                             squeeze=False)
    for i, censoring in enumerate(censorings):
        rows = mse[mse["censoring"] == censoring]
        for j, alpha in enumerate(alphas):
            ax = axes[i, j]
            for label, style, part in _private_curves(rows, names[0]):
                _mse_curve(ax, part[np.isclose(part["alpha"], alpha)], label, style)
            for name in names:
                if not ESTIMATORS[name]["private"]:
                    _mse_curve(ax, rows[rows["estimator"] == name], _label(name), _STYLE[name])
            ax.set_title(f"{censoring}% censoring, α = {alpha:g}", fontsize=9)
            if log_scale:
                ax.set_yscale("log")
            if i == len(censorings) - 1:
                ax.set_xlabel("t")
            if j == 0:
                ax.set_ylabel(f"MSE of {quantity}", fontsize=8)
            ax.grid(alpha=0.3)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    n = int(mse["n"].iloc[0])
    legend_and_footer(
        fig, f"Simulation (no real data): {_samples(mse, f'of n = {n}')}; x = {x:g}; bands "
             "±2 Monte Carlo SE. Private curves α-LDP, their mechanism named in the legend "
             "(Laplace indicators: Z = δ + Laplace(1/α)); the others are non-private "
             "references.", handles, labels)
    return fig


def _samples(table: pd.DataFrame, size: str) -> str:
    """'N = R samples <size>', with the noise draws per sample when there are several."""
    text = f"N = {int(table['n_reps'].iloc[0])} samples {size}"
    draws = int(table["noise_draws"].max()) if "noise_draws" in table else 1
    if draws > 1:
        text += (f", each with {draws} noise draws (a Monte Carlo device: the {draws} "
                 f"draws of one person are jointly {draws}α-LDP)")
    return text


def ldp_mse_vs_alpha(imse: pd.DataFrame):
    """Integrated MSE of the private estimator over a fine α grid, references as lines."""
    censorings = sorted(imse["censoring"].astype(str).unique(), key=int)
    imse = imse.assign(censoring=imse["censoring"].astype(str))
    fig, axes = plt.subplots(1, len(censorings), figsize=(4.2 * len(censorings), 3.4),
                             sharey=True, squeeze=False)
    for ax, censoring in zip(axes[0], censorings, strict=True):
        rows = imse[imse["censoring"] == censoring]
        for label, style, private in _private_curves(rows):
            private = private.sort_values("alpha")
            ax.plot(private["alpha"], private["imse"], marker="o", label=label, **style)
            if "imse_se" in private:
                se = 2 * private["imse_se"]
                ax.fill_between(private["alpha"], np.maximum(private["imse"] - se, 1e-12),
                                private["imse"] + se, color=style["color"], alpha=0.18, lw=0)
        for name in ("generalized_beran", "beran"):
            ref = rows[rows["estimator"] == name]
            if len(ref):
                value = ref["imse"].iloc[0]
                ax.axhline(value, label=_label(name), **_STYLE[name])
                if "imse_se" in ref:
                    se = 2 * ref["imse_se"].iloc[0]
                    ax.axhspan(value - se, value + se, color=_STYLE[name]["color"], alpha=0.15,
                               lw=0)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("α (local privacy level)")
        ax.set_title(f"{censoring}% censoring", fontsize=9)
        ax.grid(alpha=0.3, which="both")
    axes[0, 0].set_ylabel("integrated MSE")
    # below the panels: inside the axes it covered the small-α points of a panel
    handles, labels = axes[0, 0].get_legend_handles_labels()
    legend_and_footer(
        fig, "Simulation (no real data); $\\hat{F}_n$ is α-LDP, its mechanism named in the "
             "legend (Laplace indicators: Laplace on δ, scale 1/α); bands ±2 Monte Carlo SE; "
             f"{_samples(imse, 'of n = ' + str(int(imse['n'].iloc[0])))}.", handles, labels)
    return fig


def ldp_mse_vs_n(imse: pd.DataFrame, rates: pd.DataFrame):
    """Log–log integrated MSE against n with fitted slopes in the legend.

    One panel for the estimators of F(t | x), one for the cumulative hazard
    (when the table has them). Slopes are descriptive (fixed bandwidth rule);
    their intervals are inflated by the lack of fit.
    """
    targets = [t for t in ("cdf", "hazard") if imse["estimator"].isin(estimators(t)).any()]
    fig, axes = plt.subplots(len(targets), 1, figsize=(8.8, 3.8 * len(targets)),
                             squeeze=False)
    for ax, target in zip(axes[:, 0], targets, strict=True):
        _mse_vs_n_panel(ax, imse[imse["estimator"].isin(estimators(target))], rates, target)
    censoring = imse["censoring"].iloc[0]
    legend_and_footer(fig, f"Simulation (no real data), {censoring}% censoring; "
                           f"{_samples(imse, 'per n')}; bars ±2 SE; slopes with "
                           "95% intervals (SE inflated by the lack of fit); private curves "
                           "α-LDP.")
    return fig


def _mse_vs_n_panel(ax, imse, rates, target):
    palette = plt.get_cmap("Reds")
    private_alphas = sorted(imse.loc[imse["mechanism"] != "none", "alpha"].unique())
    mechanisms = list(dict.fromkeys(imse.loc[imse["mechanism"] != "none", "mechanism"]))
    markers = ["o", "s", "^", "D"]
    for (mechanism, alpha, name), group in imse.groupby(["mechanism", "alpha", "estimator"],
                                                        dropna=False, sort=False):
        group = group.sort_values("n")
        rate = rates[(rates["estimator"] == name) & (rates["mechanism"] == mechanism)
                     & ((rates["alpha"] == alpha) | (rates["alpha"].isna() & pd.isna(alpha)))]
        slope = rate["slope"].iloc[0] if len(rate) else np.nan
        slope_text = f"slope {slope:.2f}"
        if len(rate) and "slope_ci_lower" in rate:
            slope_text += (f", 95% CI {rate['slope_ci_lower'].iloc[0]:.2f} to "
                           f"{rate['slope_ci_upper'].iloc[0]:.2f}")
        style = dict(_STYLE[name], marker="o")
        label = _label(name)
        if ESTIMATORS[name]["private"]:
            shade = 0.45 + 0.5 * private_alphas.index(alpha) / max(1, len(private_alphas) - 1)
            style["color"] = palette(shade)
            index = mechanisms.index(mechanism)
            style["marker"] = markers[index % len(markers)]
            label += f", {mechanism_name(mechanism)} (α = {alpha:g})"
        ax.plot(group["n"], group["imse"], label=f"{label} ({slope_text})", **style)
        if "imse_se" in group:
            ax.errorbar(group["n"], group["imse"], yerr=2 * group["imse_se"], fmt="none",
                        ecolor=style["color"], elinewidth=0.8, capsize=2)
    ax.set_xscale("log")
    ax.set_yscale("log")
    # one label per simulated n, no log-axis minor labels printed over them
    sizes = sorted(imse["n"].unique())
    ax.xaxis.set_major_locator(matplotlib.ticker.FixedLocator(sizes))
    ax.xaxis.set_major_formatter(matplotlib.ticker.FixedFormatter([f"{n:g}" for n in sizes]))
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.set_xlabel("sample size n")
    ax.set_ylabel("integrated MSE of " + ("F(t | x)" if target == "cdf" else "Λ(t | x)"))
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False)


def ldp_nelson_aalen(mse: pd.DataFrame, *, alphas, log_scale: bool = False):
    """Figure 1 for the cumulative hazard: MSE of Λ̂_n, Λ̌_n and Λ_n against t."""
    return ldp_figure1(mse, alphas=alphas, log_scale=log_scale, target="hazard")


def ldp_bias_variance(mse: pd.DataFrame, *, alphas):
    """Signed bias and variance of F(t | x) against t with ±2 SE bands (linear axes).

    Rows: censoring levels; columns: the bias panel and the variance panel of
    each α. The MSE decomposes as bias² + variance
    (:func:`dprepro.studies.ldp_indicators.simulation.error_summary`); this shows which part makes
    the private estimator's MSE large, and whether a bias is distinguishable
    from zero (its band, ``bias_se``).
    """
    censorings = sorted(mse["censoring"].astype(str).unique(), key=int)
    alphas = sorted(alphas)
    names = estimators("cdf")
    mse = mse[mse["estimator"].isin(names)].assign(censoring=mse["censoring"].astype(str))
    fig, axes = plt.subplots(len(censorings), 2 * len(alphas),
                             figsize=(2.9 * 2 * len(alphas), 2.8 * len(censorings) + 0.6),
                             sharex=True, squeeze=False)
    for i, censoring in enumerate(censorings):
        rows = mse[mse["censoring"] == censoring]
        for j, alpha in enumerate(alphas):
            for k, (column, title) in enumerate((("bias", "bias"), ("variance", "variance"))):
                ax = axes[i, 2 * j + k]
                for label, style, part in _private_curves(rows):
                    _mse_curve(ax, part[np.isclose(part["alpha"], alpha)], label, style,
                               value=column, signed=column == "bias")
                for name in names:
                    if not ESTIMATORS[name]["private"]:
                        _mse_curve(ax, rows[rows["estimator"] == name], _label(name),
                                   _STYLE[name], value=column, signed=column == "bias")
                if column == "bias":
                    ax.axhline(0.0, color="0.5", lw=0.6)
                ax.set_title(f"{title}, {censoring}%, α = {alpha:g}", fontsize=8)
                ax.tick_params(labelsize=7)
                ax.grid(alpha=0.3)
                if i == len(censorings) - 1:
                    ax.set_xlabel("t", fontsize=8)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    size = f"of n = {int(mse['n'].iloc[0])}"
    legend_and_footer(
        fig, f"Simulation (no real data): {_samples(mse, size)}; signed bias and variance of "
             "F(t | x), bands ±2 Monte Carlo SE; MSE = bias² + variance.", handles, labels)
    return fig


#: Figure name (the ``{figure}`` wildcard) -> function of its tables and options.
LDP_FIGURES = {
    "figure1": ldp_figure1,
    "mse_vs_alpha": ldp_mse_vs_alpha,
    "mse_vs_n": ldp_mse_vs_n,
    "nelson_aalen": ldp_nelson_aalen,
    "bias_variance": ldp_bias_variance,
}


def figure_paths(outputs) -> list[os.PathLike]:
    return [outputs[k] for k in ("pdf", "png")]

