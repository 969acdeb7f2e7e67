"""Figures built only from aggregated tables (one figure per rule).

Every figure carries a footer saying what data it shows (real, synthetic
stand-in or simulation) and its privacy parameters, so a PNG separated from
the report still says what it is.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from .io import atomic_path, read_table  # noqa: E402
from .ldp_simulation import ESTIMATORS, estimators  # noqa: E402

__all__ = ["LDP_FIGURES", "claims_figure", "save_figure", "ldp_figure1", "ldp_mse_vs_alpha",
           "ldp_mse_vs_n"]

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
    """(label, style, rows) of a private estimator, one per mechanism in table order."""
    private = rows[rows["estimator"] == estimator]
    mechanisms = list(dict.fromkeys(private["mechanism"]))
    for i, mechanism in enumerate(mechanisms):
        style = dict(_STYLE[estimator])
        label = _label(estimator)
        if mechanism != "laplace_indicators":
            style["color"] = _MECHANISM_COLORS[(i - 1) % len(_MECHANISM_COLORS)]
            label += f" [{mechanism}]"
        yield label, style, private[private["mechanism"] == mechanism]


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


def _wrapped_footer(fig, text: str) -> None:
    """:func:`_footer` wrapped to the figure's width (a long line would widen the saved file)."""
    width = max(60, int(fig.get_figwidth() * 17))
    _footer(fig, textwrap.fill(text, width))


def _ylabel(endpoint: str) -> str:
    """Y axis label naming the endpoint (``survival probability`` without one)."""
    return f"event-free probability\n({endpoint})" if endpoint else "survival probability"


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
    fig.legend(handles, labels, fontsize=7, loc="lower center", ncol=min(len(labels), 4),
               bbox_to_anchor=(0.5, 0.035), frameon=False)
    n = int(mse["n"].iloc[0])
    reps = int(mse["n_reps"].iloc[0])
    _footer(fig, f"Simulation (no real data): N = {reps} samples of n = {n}, x = {x:g}; bands "
                 "±2 Monte Carlo SE. Private curves α-LDP (mechanism in brackets; unmarked: "
                 "Z = δ + Laplace(1/α)); the others are non-private references.")
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return fig


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
    axes[0, 0].legend(fontsize=7)
    _footer(fig, "Simulation (no real data); F̂_n is α-LDP (mechanism in brackets; unmarked: "
                 "Laplace on δ, scale 1/α); bands ±2 Monte Carlo SE; "
                 f"N = {int(imse['n_reps'].iloc[0])} samples of n = {int(imse['n'].iloc[0])}.")
    fig.tight_layout(rect=(0, 0.05, 1, 1))
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
    _footer(fig, f"Simulation (no real data), {censoring}% censoring; "
                 f"N = {int(imse['n_reps'].iloc[0])} samples per n; bars ±2 SE; slopes with "
                 "95% intervals (SE inflated by the lack of fit); private curves α-LDP.")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
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
            slope_text += (f" [{rate['slope_ci_lower'].iloc[0]:.2f}, "
                           f"{rate['slope_ci_upper'].iloc[0]:.2f}]")
        style = dict(_STYLE[name], marker="o")
        label = _label(name)
        if ESTIMATORS[name]["private"]:
            shade = 0.45 + 0.5 * private_alphas.index(alpha) / max(1, len(private_alphas) - 1)
            style["color"] = palette(shade)
            label += f", α = {alpha:g}"
            index = mechanisms.index(mechanism)
            style["marker"] = markers[index % len(markers)]
            if mechanism != "laplace_indicators":
                label += f" [{mechanism}]"
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
    (:func:`dprepro.ldp_simulation.error_summary`); this shows which part makes
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
    fig.legend(handles, labels, fontsize=7, loc="lower center", ncol=min(len(labels), 4),
               bbox_to_anchor=(0.5, 0.035), frameon=False)
    _footer(fig, f"Simulation (no real data): N = {int(mse['n_reps'].iloc[0])} samples of "
                 f"n = {int(mse['n'].iloc[0])}; signed bias and variance of F(t | x), bands "
                 "±2 Monte Carlo SE; MSE = bias² + variance.")
    fig.tight_layout(rect=(0, 0.1, 1, 1))
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


# --------------------------------------------------------------------------- rrr_survival

def _origin_text(origin: str) -> str:
    return {"synthetic": "SYNTHETIC stand-in calibrated to published facts (not the real cohort)",
            "real": "real data"}.get(origin, origin)


def _panel_title(row) -> str:
    if row["mechanism"] == "original":
        return "original (non-private)"
    true = row["true_epsilon"]
    true_text = "no finite ε" if not np.isfinite(true) else f"true ε = {true:.2f}"
    name = _MECHANISM_LABELS.get(row["mechanism"], row["mechanism"])
    return f"{name} ε = {row['epsilon']:g} ({true_text})"


#: Private mechanisms of rrr_survival in display order (those present in a table are drawn).
_RRR_MECHANISMS = ("rrr", "rrr_debiased", "lnte", "lnte_grid")
_MECHANISM_LABELS = {"rrr": "RRR", "rrr_debiased": "debiased RRR", "lnte": "LNTE",
                     "lnte_grid": "grid LNTE"}


def _private_mechanisms(table: pd.DataFrame) -> list[str]:
    present = set(table["mechanism"])
    return [m for m in _RRR_MECHANISMS if m in present]


def _release_keys(table: pd.DataFrame, dataset: str, epsilons):
    keys = [("original", None)]
    for mechanism in _private_mechanisms(table):
        keys += [(mechanism, float(e)) for e in epsilons]
    return keys


def _select(table, dataset, mechanism, epsilon):
    rows = table[(table["dataset"] == dataset) & (table["mechanism"] == mechanism)]
    if epsilon is not None:
        rows = rows[np.isclose(rows["epsilon"], epsilon)]
    return rows


def _draw_curves(ax, rows, groups, colors):
    for group in groups:
        part = rows[rows["group"] == group]
        ax.step(part["t"], part["survival"], where="post", color=colors[group], label=group,
                lw=1.2)
    _unit_ylim(ax, rows["survival"])
    ax.grid(alpha=0.3)


def _unit_ylim(ax, values, pad: float = 0.02) -> None:
    """[0, 1] with a margin, widened to show any value outside it (never cut silently)."""
    values = pd.to_numeric(pd.Series(values), errors="coerce").dropna()
    low = min(0.0, float(values.min())) if len(values) else 0.0
    high = max(1.0, float(values.max())) if len(values) else 1.0
    ax.set_ylim(low - pad, high + pad)


def _group_colors(groups, ordered: bool = True):
    """Ordered groups: viridis without its pale yellow end; unordered: a qualitative palette."""
    if not ordered:
        cmap = plt.get_cmap("tab10")
        return {g: cmap(i % 10) for i, g in enumerate(groups)}
    cmap = plt.get_cmap("viridis")
    return {g: cmap(0.85 * i / max(1, len(groups) - 1)) for i, g in enumerate(groups)}


def _censoring_ticks(ax, rows, groups, colors) -> None:
    """Vertical ticks on the original curves at censoring times (``censored`` > 0)."""
    if "censored" not in rows:
        return
    for group in groups:
        part = rows[(rows["group"] == group) & (pd.to_numeric(rows["censored"],
                                                               errors="coerce") > 0)]
        ax.plot(part["t"], part["survival"], ls="none", marker="|", ms=5, color=colors[group])


def _at_risk_table(ax, rows, groups, colors, reference) -> None:
    """Numbers at risk of the original data per group at the reference panel's x ticks."""
    ax.axis("off")
    if "at_risk" not in rows:
        return
    ticks = [t for t in reference.get_xticks()
             if reference.get_xlim()[0] <= t <= reference.get_xlim()[1]]
    ax.set_title("numbers at risk (original)", fontsize=8)
    for i, group in enumerate(groups):
        part = rows[rows["group"] == group].sort_values("t")
        t = part["t"].to_numpy(float)
        n = pd.to_numeric(part["at_risk"], errors="coerce").to_numpy(float)
        counts = []
        for tick in ticks:
            idx = np.searchsorted(t, tick, side="left")
            counts.append(str(int(n[idx])) if idx < len(t) else "0")
        y = 0.9 - i * 0.8 / max(1, len(groups))
        ax.text(0.0, y, str(group), color=colors[group], fontsize=7, transform=ax.transAxes,
                ha="left")
        for j, count in enumerate(counts):
            ax.text(0.25 + 0.75 * j / max(1, len(ticks) - 1), y, count, fontsize=7,
                    transform=ax.transAxes, ha="center")
    ax.text(0.0, 0.02, "time: " + "  ".join(f"{t:g}" for t in ticks), fontsize=6,
            transform=ax.transAxes)


def rrr_figure2(curves: pd.DataFrame, *, dataset: str, epsilons, title: str = "",
                time_unit: str = "months", ordered: bool = True, endpoint: str = ""):
    """Figure 2: (a) original KM per group, RRR at each ε, LNTE at each ε (draw 0).

    Panel letters run down the layout: (a) original, then RRR at each ε in
    the configured order, then LNTE at each ε; the single-panel files of
    :func:`rrr_figure2_panels` are named by release instead of letter.
    """
    rows = curves[curves["dataset"] == dataset]
    groups = list(dict.fromkeys(rows.loc[rows["mechanism"] == "original", "group"]))
    colors = _group_colors(groups, ordered)
    ylabel = _ylabel(endpoint)
    cols = 1 + len(epsilons)
    mechanisms = _private_mechanisms(rows)
    nrows = max(2, len(mechanisms))
    # every panel has its own axes, limits and tick labels: a shared y would let one
    # panel's range (a curve outside [0, 1]) decide the others' silently
    fig, axes = plt.subplots(nrows, cols, figsize=(3.3 * cols, 3.1 * nrows), squeeze=False)
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    layout = [(0, 0, "original", None)]
    for r, mechanism in enumerate(mechanisms):
        layout += [(r, 1 + i, mechanism, float(e)) for i, e in enumerate(epsilons)]
    for r, c, mechanism, epsilon in layout:
        part = _select(rows, dataset, mechanism, epsilon)
        ax = axes[r, c]
        _draw_curves(ax, part, groups, colors)
        if mechanism == "original":
            _censoring_ticks(ax, part, groups, colors)
        ax.set_title(f"({next(letters)}) {_panel_title(part.iloc[0])}", fontsize=8)
        ax.set_xlabel(f"time ({time_unit})", fontsize=8)
        ax.set_ylabel(ylabel, fontsize=8)
    _at_risk_table(axes[1, 0], _select(rows, dataset, "original", None), groups, colors,
                   axes[0, 0])
    for r in range(2, nrows):
        axes[r, 0].axis("off")
    handles, names = axes[0, 0].get_legend_handles_labels()
    axes[0, 0].legend(handles, names, fontsize=7, title="group", title_fontsize=7)
    origin = rows["data_origin"].iloc[0]
    fig.suptitle(f"{title or dataset} — Kaplan–Meier curves ({endpoint or 'survival'})",
                 fontsize=10)
    _wrapped_footer(fig, f"Data: {_origin_text(origin)}. One draw per mechanism (draw 0). "
                 "RRR privatises "
                 "the group label (paper's ε↔p); debiased RRR inverts the public transition "
                 "matrix on the same release; LNTE adds Laplace(1/ε) to the KM counts as the "
                 "paper's authors coded it; grid LNTE adds Laplace noise to binned event and "
                 "censoring counts (ε-DP). Each panel has its own y range, widened to show "
                 "values outside [0, 1]; ticks |: censorings; table: numbers at risk.")
    fig.tight_layout(rect=(0, 0.03, 1, 0.97))
    return fig


def _release_name(mechanism: str, epsilon) -> str:
    return "original" if epsilon is None else f"{mechanism}_eps{float(epsilon):g}"


def rrr_figure2_panels(curves: pd.DataFrame, *, dataset: str, epsilons, title: str = "",
                       time_unit: str = "months", lazy: bool = False, ordered: bool = True,
                       endpoint: str = ""):
    """The panels of :func:`rrr_figure2` as separate figures, by release name.

    Keys are ``original``, ``rrr_eps<ε>``, ``lnte_eps<ε>``, … (the release
    folders' names), in panel-letter order; each title keeps its letter. A
    dict, or with ``lazy=True`` a generator of ``(name, figure)`` pairs.
    """
    panels = _figure2_panels(curves, dataset=dataset, epsilons=epsilons, title=title,
                             time_unit=time_unit, ordered=ordered, endpoint=endpoint)
    return panels if lazy else dict(panels)


def _figure2_panels(curves, *, dataset, epsilons, title, time_unit, ordered, endpoint=""):
    rows = curves[curves["dataset"] == dataset]
    groups = list(dict.fromkeys(rows.loc[rows["mechanism"] == "original", "group"]))
    colors = _group_colors(groups, ordered)
    origin = rows["data_origin"].iloc[0]
    for letter, (mechanism, epsilon) in zip("abcdefghijklmnopqrstuvwxyz",
                                            _release_keys(rows, dataset, epsilons), strict=False):
        part = _select(rows, dataset, mechanism, epsilon)
        fig, ax = plt.subplots(figsize=(4.2, 3.4))
        _draw_curves(ax, part, groups, colors)
        if mechanism == "original":
            _censoring_ticks(ax, part, groups, colors)
        ax.set_title(f"({letter}) {_panel_title(part.iloc[0])}", fontsize=9)
        ax.set_xlabel(f"time ({time_unit})")
        ax.set_ylabel(_ylabel(endpoint))
        ax.legend(fontsize=7)
        _wrapped_footer(fig, f"{title or dataset}; data: {_origin_text(origin)}")
        fig.tight_layout(rect=(0, 0.05, 1, 1))
        yield _release_name(mechanism, epsilon), fig


def rrr_bands(bands: pd.DataFrame, curves: pd.DataFrame, *, dataset: str, epsilons,
              title: str = "", time_unit: str = "months", ordered: bool = True,
              endpoint: str = ""):
    """Pointwise bands of the released KM curves over draws, original curves dashed."""
    rows = bands[bands["dataset"] == dataset]
    original = _select(curves, dataset, "original", None)
    groups = list(dict.fromkeys(original["group"]))
    colors = _group_colors(groups, ordered)
    mechanisms = _private_mechanisms(rows)
    fig, axes = plt.subplots(len(mechanisms), len(epsilons),
                             figsize=(3.4 * len(epsilons), 3.0 * len(mechanisms)),
                             squeeze=False)
    for r, mechanism in enumerate(mechanisms):
        for c, epsilon in enumerate(epsilons):
            ax = axes[r, c]
            part = _select(rows, dataset, mechanism, float(epsilon))
            for group in groups:
                g = part[part["group"] == group]
                ax.fill_between(g["t"], g["lower"], g["upper"], step="post", alpha=0.25,
                                color=colors[group], lw=0)
                ax.step(g["t"], g["middle"], where="post", color=colors[group], lw=1)
                o = original[original["group"] == group]
                ax.step(o["t"], o["survival"], where="post", color=colors[group], lw=1,
                        ls="--", label=group)
            ax.set_title(_panel_title(part.iloc[0]), fontsize=8)
            _unit_ylim(ax, pd.concat([part["lower"], part["upper"]]), pad=0.05)
            ax.grid(alpha=0.3)
    for ax in axes.ravel():
        ax.set_xlabel(f"time ({time_unit})", fontsize=8)
        ax.set_ylabel(_ylabel(endpoint), fontsize=8)
    axes[0, 0].legend(fontsize=7, title="group", title_fontsize=7)
    level = rows["level"].iloc[0]
    fig.suptitle(f"{title or dataset} — {level:.0%} pointwise bands over "
                 "draws (solid: median, dashed: original)", fontsize=10)
    _wrapped_footer(fig, f"Data: {_origin_text(rows['data_origin'].iloc[0])}. Each panel has "
                 "its own "
                 "y range, widened to show band values outside [0, 1].")
    fig.tight_layout(rect=(0, 0.03, 1, 0.96))
    return fig


def rrr_utility(utility: pd.DataFrame, *, titles=None):
    """Mean sup-distance to the original KM curve against ε, per dataset and mechanism.

    ``titles`` maps a dataset to its display title (default: its name).
    """
    titles = dict(titles or {})
    datasets = list(dict.fromkeys(utility["dataset"]))
    fig, axes = plt.subplots(1, len(datasets), figsize=(4.4 * len(datasets), 3.5),
                             squeeze=False)
    for ax, dataset in zip(axes[0], datasets, strict=True):
        rows = utility[utility["dataset"] == dataset]
        styles = {"rrr": {"marker": "o"}, "rrr_debiased": {"marker": "^", "ls": "-."},
                  "lnte": {"marker": "s", "ls": "--"}, "lnte_grid": {"marker": "D", "ls": ":"}}
        for mechanism in _private_mechanisms(rows):
            mine = rows[rows["mechanism"] == mechanism]
            calibrations = list(dict.fromkeys(mine["calibration"].fillna("")))
            for n, calibration in enumerate(calibrations):
                part = mine[mine["calibration"].fillna("") == calibration]
                # equal privacy on the x axis: the true ε where one holds, else the stated one
                finite = np.isfinite(part["true_epsilon"]).all()
                x = "true_epsilon" if finite else "epsilon"
                mean = part.groupby(x)["sup_distance_mean"].mean()
                label = _MECHANISM_LABELS[mechanism] + ("" if finite else " (at stated ε; no "
                                                                          "finite true ε)")
                if len(calibrations) > 1:
                    label += f" [calibration {calibration}]"
                style = dict(styles[mechanism])
                if n:
                    style.update(mfc="white")
                ax.plot(mean.index, mean.to_numpy(), label=label, **style)
        ax.set_title(f"{titles.get(dataset, dataset)} "
                     f"({rows['data_origin'].iloc[0]})", fontsize=9)
        ax.set_xlabel("true ε (per patient)")
        ax.set_ylabel("mean sup |Ŝ_released − Ŝ_original|")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    _wrapped_footer(fig, "Averaged over groups and draws; sup over the union of jump times where "
                 "both "
                 "curves are defined (undefined share: utility.csv). x: true ε — RRR with the "
                 "paper's calibration is ε + ln(k−1), with the exact one ε (open markers); "
                 "LNTE as published has none and is drawn at its stated ε.")
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return fig


def _published_calibration(table: pd.DataFrame) -> pd.DataFrame:
    """Rows of RRR's first configured calibration (the paper's) and of every other mechanism.

    Figure 2 and the bands show one RRR calibration; the utility figure shows all.
    """
    rrr = table["mechanism"].isin(["rrr", "rrr_debiased"])
    if not rrr.any():
        return table
    first = table.loc[rrr, "calibration"].iloc[0]
    return table[~rrr | (table["calibration"] == first)]


def rrr_figure2_figures(inputs, *, datasets, epsilons, cohorts, **_):
    """Figure 2 of every cohort: yields ``(stem, figure)``, ``figure2_<d>`` then its panels
    ``figure2_<d>_<release>`` (one at a time, so each is saved and closed before the next)."""
    curves = _published_calibration(read_table(inputs["curves"], text_columns=("group",)))
    for dataset in datasets:
        cohort = {"title": cohorts[dataset]["title"], "time_unit": cohorts[dataset]["time_unit"],
                  "ordered": cohorts[dataset].get("ordered", True),
                  "endpoint": cohorts[dataset].get("endpoint", "")}
        yield f"figure2_{dataset}", rrr_figure2(curves, dataset=dataset, epsilons=epsilons,
                                                **cohort)
        for name, fig in rrr_figure2_panels(curves, dataset=dataset, epsilons=epsilons,
                                            lazy=True, **cohort):
            yield f"figure2_{dataset}_{name}", fig


def rrr_band_figures(inputs, *, datasets, epsilons, cohorts, **_):
    """Yields ``(km_bands_<d>, figure)`` for every cohort."""
    bands = _published_calibration(read_table(inputs["bands"], text_columns=("group",)))
    curves = _published_calibration(read_table(inputs["curves"], text_columns=("group",)))
    for d in datasets:
        yield f"km_bands_{d}", rrr_bands(bands, curves, dataset=d, epsilons=epsilons,
                                         title=cohorts[d]["title"],
                                         time_unit=cohorts[d]["time_unit"],
                                         ordered=cohorts[d].get("ordered", True),
                                         endpoint=cohorts[d].get("endpoint", ""))


def rrr_utility_figures(inputs, *, cohorts, **_):
    """Yields ``("utility", figure)``: one panel per cohort."""
    yield "utility", rrr_utility(read_table(inputs["utility"]),
                                 titles={d: c["title"] for d, c in cohorts.items()})


#: Figure rule of rrr_survival -> the function that draws its files (stem -> figure).
RRR_FIGURES = {"figure2": rrr_figure2_figures, "km_bands": rrr_band_figures,
               "utility": rrr_utility_figures}


# --------------------------------------------------------------------------- repr_transfer

_REPR_LABELS = {"pca": "PCA", "random_projection": "random projection", "vae": "VAE",
                "fixed_genes": "fixed genes", "dp_feature_selection": "DP feature selection"}
_REPR_COLORS = {"pca": "#1f77b4", "random_projection": "#ff7f0e", "vae": "#2ca02c",
                "fixed_genes": "#7f7f7f", "dp_feature_selection": "#9467bd"}


def _repr_origin_text(origin: str) -> str:
    return {"synthetic": "SYNTHETIC stand-in (not GDSC/DepMap data)",
            "real": "real data (GDSC private lines, DepMap public)"}.get(origin, origin)


def _repr_methods(frame: pd.DataFrame) -> list[str]:
    present = list(dict.fromkeys(frame["representation"]))
    return [m for m in _REPR_LABELS if m in present] + [m for m in present
                                                        if m not in _REPR_LABELS]


def _nonprivate(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[rows["mechanism"] == "non_private"]


def _at_epsilon(rows: pd.DataFrame, epsilon: float) -> pd.DataFrame:
    rows = rows[rows["mechanism"] != "non_private"]
    return rows[np.isclose(rows["epsilon"].astype(float), float(epsilon))]


def _se(values) -> np.ndarray:
    return np.nan_to_num(np.asarray(values, dtype=float))


def _variant_text(variant: str) -> str:
    return ("paper variant: no proven finite ε, see true_epsilon" if variant == "paper"
            else "CMS11 variant: pure ε-DP")


def repr_cancer_type_cases(summary: pd.DataFrame, *, epsilon: float, variant: str,
                           data_origin: str):
    """Accuracy per cancer-type case and method at one ε (filled) and non-private (open)."""
    rows = summary[summary["case"] != "all"]
    cases = list(dict.fromkeys(rows["case"]))
    methods = _repr_methods(rows)
    fig, ax = plt.subplots(figsize=(max(5.5, 1.3 * len(cases) + 2.5), 4.0))
    width = 0.8 / max(1, len(methods))
    x0 = np.arange(len(cases))
    for i, method in enumerate(methods):
        x = x0 + (i - (len(methods) - 1) / 2) * width
        color = _REPR_COLORS.get(method, "k")
        for part, style in ((_at_epsilon(rows, epsilon), {"mfc": color}),
                            (_nonprivate(rows), {"mfc": "white"})):
            part = part[part["representation"] == method].set_index("case").reindex(cases)
            ax.errorbar(x, part["accuracy_mean"], yerr=_se(part["accuracy_se"]), fmt="o",
                        color=color, ms=5, capsize=2, lw=1, **style,
                        label=_REPR_LABELS.get(method, method) if style["mfc"] != "white"
                        else None)
    ax.axhline(0.5, color="0.6", lw=0.8, ls=":")
    if "majority_accuracy" in rows.columns:
        # the majority-class baseline of each (unbalanced) pair
        majority = rows.groupby("case")["majority_accuracy"].first().reindex(cases)
        ax.hlines(majority, x0 - 0.45, x0 + 0.45, color="k", lw=1.0, ls="--",
                  label="majority class")
    ax.set_xticks(x0, cases, rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("stratified CV accuracy")
    ax.set_ylim(0.3, 1.02)
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=7, ncol=min(3, len(methods)), loc="lower right")
    n = int(rows["n_seeds"].max())
    ax.set_title(f"Cancer-type pairs: filled ε = {float(epsilon):g}, open non-private",
                 fontsize=9)
    _footer(fig, f"Data: {_repr_origin_text(data_origin)}. DP logistic regression "
                 f"(objective perturbation, {_variant_text(variant)}); mean ± SE over {n} "
                 "representation seeds.")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    return fig


def _against_epsilon(ax, rows, column, se_column):
    for method in _repr_methods(rows):
        color = _REPR_COLORS.get(method, "k")
        part = rows[(rows["representation"] == method) & (rows["mechanism"] != "non_private")]
        part = part.sort_values("epsilon")
        ax.errorbar(part["epsilon"], part[column], yerr=_se(part[se_column]), marker="o",
                    ms=4, capsize=2, lw=1.2, color=color, label=_REPR_LABELS.get(method, method))
        ref = _nonprivate(rows[rows["representation"] == method])
        if len(ref):
            ax.axhline(float(ref[column].iloc[0]), color=color, lw=0.9, ls="--")
    ax.set_xlabel("ε")
    ax.grid(alpha=0.3)


def repr_cancer_type_vs_epsilon(summary: pd.DataFrame, *, variant: str, data_origin: str):
    """Accuracy averaged over cases against ε; dashed lines are the non-private fits."""
    rows = summary[summary["case"] == "all"]
    fig, ax = plt.subplots(figsize=(5.4, 3.9))
    _against_epsilon(ax, rows, "accuracy_mean", "accuracy_se")
    ax.set_ylabel("CV accuracy, mean over cases")
    ax.legend(fontsize=7)
    n = int(rows["n_seeds"].max())
    _footer(fig, f"Data: {_repr_origin_text(data_origin)}. Dashed: non-private (ε = ∞). "
                 f"{_variant_text(variant)}; mean ± SE over {n} seeds.")
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return fig


def repr_drug_prediction(summary: pd.DataFrame, *, epsilon: float, data_origin: str):
    """Spearman's ρ and PC-index per method at one ε (filled) and non-private (open)."""
    methods = _repr_methods(summary)
    fig, axes = plt.subplots(1, 2, figsize=(max(7.0, 1.3 * len(methods) + 4), 3.9))
    x0 = np.arange(len(methods))
    for ax, (column, label, base) in zip(axes, (("spearman", "Spearman's ρ", 0.0),
                                                ("pc_index", "PC-index", 0.5)), strict=True):
        for part, offset, fill in ((_at_epsilon(summary, epsilon), -0.12, True),
                                   (_nonprivate(summary), 0.12, False)):
            part = part.set_index("representation").reindex(methods)
            for i, method in enumerate(methods):
                color = _REPR_COLORS.get(method, "k")
                ax.errorbar(x0[i] + offset, part.loc[method, f"{column}_mean"],
                            yerr=_se([part.loc[method, f"{column}_se"]]), fmt="o",
                            color=color, mfc=color if fill else "white", ms=6, capsize=2)
        ax.axhline(base, color="0.6", lw=0.8, ls=":")
        ax.set_xticks(x0, [_REPR_LABELS.get(m, m) for m in methods], rotation=20, ha="right",
                      fontsize=8)
        ax.set_ylabel(f"{label}, mean over drugs")
        ax.grid(alpha=0.3, axis="y")
    fig.suptitle(f"Drug sensitivity: filled ε = {float(epsilon):g}, open non-private",
                 fontsize=9)
    n = int(summary["n_seeds"].max())
    _footer(fig, f"Data: {_repr_origin_text(data_origin)}. SSP linear regression per drug, "
                 f"mean over splits and drugs, ± SE over {n} seeds; the stated ε covers "
                 "X'X and X'y only (see true_epsilon).")
    fig.tight_layout(rect=(0, 0.05, 1, 0.95))
    return fig


def repr_drug_vs_epsilon(summary: pd.DataFrame, *, data_origin: str):
    """Spearman's ρ and PC-index against ε (beyond the paper); dashed = non-private."""
    fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.8))
    for ax, (column, label) in zip(axes, (("spearman", "Spearman's ρ"),
                                          ("pc_index", "PC-index")), strict=True):
        _against_epsilon(ax, summary, f"{column}_mean", f"{column}_se")
        ax.set_ylabel(f"{label}, mean over drugs")
    axes[0].legend(fontsize=7)
    n = int(summary["n_seeds"].max())
    _footer(fig, f"Data: {_repr_origin_text(data_origin)}. Dashed: non-private (ε = ∞); "
                 f"mean ± SE over {n} seeds.")
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return fig


# --------------------------------------------------------------------------- privacy audit


def privacy_audit(table: pd.DataFrame):
    """Claimed ε, true ε (where known) and the audit's lower bound, one row per audit."""
    table = table.reset_index(drop=True)
    labels = [f"{r.mechanism}: {r.variant} [{r.role}]" for r in table.itertuples()]
    y = np.arange(len(table))[::-1]
    fig, ax = plt.subplots(figsize=(8.5, 0.28 * len(table) + 1.6))
    flagged = table["verdict"] == "violation"
    ax.scatter(table["claimed_epsilon"], y, marker="|", s=200, color="black", label="claimed ε")
    finite_true = np.isfinite(table["true_epsilon"])
    ax.scatter(table.loc[finite_true, "true_epsilon"], y[finite_true], marker="x", color="0.4",
               label="true ε (analytic)")
    ax.scatter(table.loc[~flagged, "empirical_epsilon_lower_bound"], y[~flagged], color="#2ca02c",
               label="lower bound ≤ claim (consistent)")
    ax.scatter(table.loc[flagged, "empirical_epsilon_lower_bound"], y[flagged], color="#d62728",
               label="lower bound > claim (violation)")
    ax.set_yticks(y, labels, fontsize=6)
    ax.set_xscale("symlog", linthresh=1)
    ax.set_xlim(left=0)
    ax.set_xlabel("ε")
    ax.grid(alpha=0.3, axis="x")
    ax.legend(fontsize=7, loc="lower right")
    level = table["level"].iloc[0]
    _footer(fig, f"Clopper–Pearson lower confidence bounds at level {level:g} on worst-case "
                 "neighbouring inputs (synthetic); control rows are deliberately mis-scaled.")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig


_VERDICT_COLORS = {"holds": "#2ca02c", "fails": "#d62728", "inconclusive": "#ff7f0e"}


def claims_figure(claims: pd.DataFrame):
    """One row per claim: the reproduced value and its interval against the criterion.

    Each row has its own x-scale (claims measure different things); the set of
    values for which the claim is true is shaded, the point and interval are
    coloured by verdict.
    """
    from .claims import Criterion

    claims = claims.reset_index(drop=True)
    rows = max(1, len(claims))
    fig, axes = plt.subplots(rows, 1, figsize=(9.5, 0.42 * rows + 1.0), squeeze=False)
    for ax, row in zip(axes[:, 0], claims.itertuples(), strict=False):
        crit = Criterion.parse(row.criterion)
        values = [row.reproduced_value, row.ci_lower, row.ci_upper]
        values += [v for v in (crit.lower, crit.upper) if np.isfinite(v)]
        low, high = min(values), max(values)
        pad = 0.15 * (high - low) if high > low else 0.5 * max(abs(high), 1e-3)
        low, high = low - pad, high + pad
        ax.axvspan(max(crit.lower, low), min(crit.upper, high), color="0.88", lw=0)
        color = _VERDICT_COLORS[row.verdict]
        ax.hlines(0, row.ci_lower, row.ci_upper, color=color, lw=2.5)
        ax.plot(row.reproduced_value, 0, "o", color=color, ms=5)
        ax.set_xlim(low, high)
        ax.set_ylim(-1, 1)
        ax.set_yticks([])
        ax.tick_params(axis="x", labelsize=6, pad=1, length=2)
        ax.text(-0.01, 0.5, f"{row.claim_id}: {row.criterion}", transform=ax.transAxes,
                ha="right", va="center", fontsize=6)
        ax.text(1.01, 0.5, row.verdict, transform=ax.transAxes, ha="left", va="center",
                fontsize=6, color=color)
    if not len(claims):
        axes[0, 0].text(0.5, 0.5, "no claims tables among the configured studies",
                        ha="center", va="center")
        axes[0, 0].set_axis_off()
    _footer(fig, "Dot: reproduced value; bar: confidence interval; shaded: values for which "
                 "the claim is true (criterion). Verdict: holds / fails / inconclusive.")
    fig.subplots_adjust(left=0.42, right=0.9, top=0.99, bottom=0.6 / (0.42 * rows + 1.0),
                        hspace=0.9)
    return fig
