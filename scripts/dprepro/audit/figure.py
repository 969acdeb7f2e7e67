"""The privacy audit's figure: each mechanism's empirical lower bound on ε against its claim."""

from __future__ import annotations

import re

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from dprepro.figures.style import legend_and_footer
from dprepro.mechanisms.identity import mechanism_name
from dprepro.mechanisms.registry import by_release_name

# --------------------------------------------------------------------------- privacy audit


def privacy_audit(table: pd.DataFrame):
    """Claimed ε, true ε (where known) and the audit's lower bound, one row per audit.

    Each row is labelled by its mechanism in words, its variant, its claimed
    privacy level (α for the local mechanisms on indicators, ε otherwise) and
    its role (:func:`row_label`), so no two rows read alike.
    """
    table = table.reset_index(drop=True)
    labels = [row_label(r) for r in table.itertuples()]
    y = np.arange(len(table))[::-1]
    fig, ax = plt.subplots(figsize=(10.0, 0.32 * len(table) + 1.8))
    flagged = table["verdict"] == "violation"
    ax.scatter(table["claimed_epsilon"], y, marker="|", s=200, color="black", label="claimed ε")
    finite_true = np.isfinite(table["true_epsilon"])
    ax.scatter(table.loc[finite_true, "true_epsilon"], y[finite_true], marker="x", color="0.4",
               label="true ε (analytic)")
    ax.scatter(table.loc[~flagged, "empirical_epsilon_lower_bound"], y[~flagged], color="#2ca02c",
               label="lower bound ≤ claim (consistent)")
    ax.scatter(table.loc[flagged, "empirical_epsilon_lower_bound"], y[flagged], color="#d62728",
               label="lower bound > claim (violation)")
    ax.set_yticks(y, labels, fontsize=9)
    ax.set_ylim(-0.7, len(table) - 0.3)
    ax.set_xscale("symlog", linthresh=1)
    # symlog autoscaling leaves no margin: the largest marker would sit on the frame, and a
    # bound of 0 on the left one (half of it cut); a little room on either side
    shown = pd.concat([table["claimed_epsilon"], table["empirical_epsilon_lower_bound"],
                       table.loc[finite_true, "true_epsilon"]])
    right = 1.5 * float(shown.max())
    ax.set_xlim(left=-0.06, right=right)
    ticks = [t for t in (0, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000) if t <= right]
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks], fontsize=9)
    ax.set_xlabel("ε (α for the local mechanisms on indicators)", fontsize=9)
    ax.grid(alpha=0.3, axis="x")
    handles, names = ax.get_legend_handles_labels()
    level = table["level"].iloc[0]
    # the legend under the axes, not on them: inside, it covered the last rows' markers
    legend_and_footer(fig, f"Clopper–Pearson lower confidence bounds at confidence "
                           f"{confidence_text(level)} on worst-case neighbouring inputs "
                           "(synthetic); control rows are deliberately mis-scaled.",
                      handles, names, ncol=2)
    return fig



def confidence_text(level: float) -> str:
    """The confidence ``1 − level`` in words: ``1e-9`` → ``1 − 10⁻⁹``, ``0.05`` → ``0.95``.

    A significance level printed as is (``level 1e-09``) reads as the confidence itself.
    """
    exponent = np.log10(float(level))
    if np.isclose(exponent, round(exponent)) and exponent <= -3:
        return "1 − 10" + str(int(round(exponent))).translate(_SUPERSCRIPT)
    return f"{1 - float(level):g}"


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _variant_words(variant: str) -> str:
    """An audit row's variant in words: ``alpha`` → α, ``X^T y`` → Xᵀy (the transpose as
    it is printed), ``keep_probability=0.56`` → ``keep probability = 0.56``."""
    text = str(variant).replace("alpha", "α").replace("epsilon", "ε")
    text = re.sub(r"X\^T\s*", "Xᵀ", text)
    return re.sub(r"\s*=\s*", " = ", text.replace("_", " "))


def _parameter(mechanism: str) -> str:
    """``α`` for a registered indicator mechanism (α-LDP on δ), ``ε`` for any other."""
    try:
        by_release_name(mechanism)
    except KeyError:
        return "ε"
    return "α"


def row_label(row) -> str:
    """An audit row's label: the mechanism in words, its variant, the claimed ε or α and
    the row's role, e.g. ``Laplace indicators, scale 1/α, α = 0.2 (published)``."""
    symbol = _parameter(row.mechanism)
    variant = _variant_words(row.variant)
    return (f"{mechanism_name(row.mechanism)}, {variant}, {symbol} = "
            f"{float(row.claimed_epsilon):g} ({row.role})")
