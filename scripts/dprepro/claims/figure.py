"""The claims figure: every reproduced value with its interval against the paper's criterion,
coloured by verdict.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from dprepro.figures.style import wrapped_footer

__all__ = ["claims_figure"]


def _criterion_label(text: str) -> str:
    """A criterion as the claims figure prints it, a minimum of units in short."""
    from dprepro.claims.table import Criterion

    crit = Criterion.parse(text)
    if crit.min_units is None:
        return text
    return f"{text.split(';', 1)[0].strip()} (≥ {crit.min_units} units)"


def claims_figure(claims: pd.DataFrame):
    """One row per claim: the reproduced value and its interval against the criterion.

    Each row has its own x-scale (claims measure different things): the row's
    values, interval and finite criterion bounds are mapped onto [0, 1] and
    its scale is printed at both ends. The set of values for which the claim
    is true is shaded, the point and interval are coloured by verdict. One
    axes for every row (hundreds of claims draw in a second, not a minute).
    """
    from matplotlib.collections import PolyCollection

    from dprepro.claims.table import Criterion

    claims = claims.reset_index(drop=True)
    rows = max(1, len(claims))
    height = 0.24 * rows + 1.0
    fig, ax = plt.subplots(figsize=(9.5, height))
    boxes, colors, lines, points = [], [], [], []
    for i, row in enumerate(claims.itertuples()):
        crit = Criterion.parse(row.criterion)
        values = [row.reproduced_value, row.ci_lower, row.ci_upper]
        values += [v for v in (crit.lower, crit.upper) if np.isfinite(v)]
        low, high = min(values), max(values)
        pad = 0.15 * (high - low) if high > low else 0.5 * max(abs(high), 1e-3)
        low, high = low - pad, high + pad

        def unit(v, low=low, high=high):
            return float(np.clip((v - low) / (high - low), 0.0, 1.0))

        y = rows - 1 - i
        left, right = unit(max(crit.lower, low)), unit(min(crit.upper, high))
        if right > left:
            boxes.append([(left, y - 0.38), (right, y - 0.38), (right, y + 0.38),
                          (left, y + 0.38)])
        colors.append(_VERDICT_COLORS[row.verdict])
        lines.append((y, unit(row.ci_lower), unit(row.ci_upper)))
        points.append((unit(row.reproduced_value), y))
        ax.text(-0.005, y, f"{low:.3g}", ha="right", va="center", fontsize=5, color="0.4")
        ax.text(1.005, y, f"{high:.3g}", ha="left", va="center", fontsize=5, color="0.4")
        ax.text(1.09, y, row.verdict, ha="left", va="center", fontsize=6, color=colors[-1])
    if len(claims):
        ax.add_collection(PolyCollection(boxes, facecolors="0.88", edgecolors="none"))
        ys, lefts, rights = np.array(lines).T
        ax.hlines(ys, lefts, rights, colors=colors, lw=2.5)
        xs, ys = np.array(points).T
        ax.scatter(xs, ys, c=colors, s=14, zorder=3)
        ax.set_yticks(np.arange(rows)[::-1],
                      [f"{r.claim_id}: {_criterion_label(r.criterion)}"
                       for r in claims.itertuples()], fontsize=6)
    else:
        ax.text(0.5, 0.5, "no claims tables among the configured studies", ha="center",
                va="center")
        ax.set_yticks([])
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.7, rows - 0.3)
    ax.set_xticks([])
    ax.tick_params(axis="y", length=0, pad=30)  # room for the scale ends
    for side in ("top", "right", "bottom", "left"):
        ax.spines[side].set_visible(False)
    wrapped_footer(fig, "Dot: reproduced value; bar: confidence interval; shaded: values "
                         "for which the claim is true (criterion); each row on its own scale "
                         "(its ends printed). Verdict: holds / fails / inconclusive; (≥ n "
                         "units): inconclusive on fewer than n independent units.")
    fig.subplots_adjust(left=0.45, right=0.86, top=1 - 0.3 / height, bottom=0.6 / height)
    return fig


_VERDICT_COLORS = {"holds": "#2ca02c", "fails": "#d62728", "inconclusive": "#ff7f0e"}

