"""The privacy audit's figure: each mechanism's empirical lower bound on ε against its claim."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from dprepro.figures.style import (
    legend_and_footer,
)

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
    legend_and_footer(fig, f"Clopper–Pearson lower confidence bounds at level {level:g} on "
                           "worst-case neighbouring inputs (synthetic); control rows are "
                           "deliberately mis-scaled.")
    return fig

