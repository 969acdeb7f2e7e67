"""The claims figures: a one-page summary of the verdicts, and the claims one by one.

:func:`claims_summary_figure` counts the verdicts per study, by where a claim comes
from (the paper or beyond it) and what its data are (real, synthetic, simulation): the
page a reader sees first. :func:`claims_figure` draws claims one per row, the
reproduced value and its interval against the criterion, coloured by verdict;
:func:`claims_pages` splits a table into pages of at most ``rows_per_page`` claims, one
study at a time, for the paged detail PDF.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from dprepro.figures.style import wrapped_footer

__all__ = ["VERDICT_ORDER", "claims_figure", "claims_pages", "claims_summary_figure"]

#: Verdicts in the order the figures stack and list them.
VERDICT_ORDER = ("holds", "fails", "inconclusive", "untestable")


def _criterion_label(text: str) -> str:
    """A criterion as the claims figure prints it, a minimum of units in short."""
    from dprepro.claims.table import Criterion

    crit = Criterion.parse(text)
    if crit.min_units is None:
        return text
    return f"{text.split(';', 1)[0].strip()} (≥ {crit.min_units} units)"


def claims_figure(claims: pd.DataFrame, *, title: str = ""):
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
        # infinite ends (a privacy loss with no finite bound) sit at the row's edge; a row
        # without a number (an untestable statement) shows its criterion and verdict only
        values = [v for v in (row.reproduced_value, row.ci_lower, row.ci_upper, crit.lower,
                              crit.upper) if np.isfinite(v)]
        if not values:
            values = [0.0]
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
        if np.isnan(row.ci_lower) or np.isnan(row.ci_upper):
            lines.append((y, np.nan, np.nan))
            points.append((np.nan, y))
        else:
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
                         "(its ends printed). Verdict: holds / fails / inconclusive / "
                         "untestable; (≥ n units): untestable on fewer than n independent "
                         "units.")
    if title:
        fig.suptitle(title, fontsize=10, y=1 - 0.05 / height)
    fig.subplots_adjust(left=0.45, right=0.86, top=1 - 0.3 / height, bottom=0.6 / height)
    return fig


_VERDICT_COLORS = {"holds": "#2ca02c", "fails": "#d62728", "inconclusive": "#ff7f0e",
                   "untestable": "#8c8c8c"}


def claims_pages(claims: pd.DataFrame, *, rows_per_page: int = 40):
    """``(title, rows)`` of every page: each study's claims in chunks of ``rows_per_page``."""
    if rows_per_page < 1:
        raise ValueError(f"rows_per_page must be >= 1, got {rows_per_page}")
    pages = []
    for study, rows in claims.groupby("study", sort=False):
        chunks = max(1, -(-len(rows) // rows_per_page))
        for i in range(chunks):
            part = rows.iloc[i * rows_per_page:(i + 1) * rows_per_page]
            pages.append((f"{study}: claims {i * rows_per_page + 1}–"
                          f"{i * rows_per_page + len(part)} of {len(rows)}", part))
    return pages


def claims_summary_figure(claims: pd.DataFrame):
    """Verdict counts per study, by claim origin and data origin: one page.

    One horizontal bar per (study, claim origin, data origin) present, split by verdict
    (:data:`VERDICT_ORDER`), each segment labelled with its count.
    """
    keys = ["study", "claim_origin", "data_origin"]
    counts = (claims.assign(data_origin=claims["data_origin"].fillna("").replace("", "n/a"))
              .groupby(keys + ["verdict"], sort=False).size().unstack("verdict", fill_value=0)
              .reindex(columns=list(VERDICT_ORDER), fill_value=0))
    bars = len(counts)
    height = 0.42 * max(bars, 1) + 1.6
    fig, ax = plt.subplots(figsize=(8.5, height))
    if bars == 0:
        ax.text(0.5, 0.5, "no claims tables among the configured studies", ha="center",
                va="center", fontsize=10)
        ax.set_axis_off()
        return fig
    y = np.arange(bars)[::-1]
    left = np.zeros(bars)
    for verdict in VERDICT_ORDER:
        width = counts[verdict].to_numpy(float)
        ax.barh(y, width, left=left, color=_VERDICT_COLORS[verdict], label=verdict,
                height=0.7)
        for yi, li, wi in zip(y, left, width, strict=True):
            if wi > 0:
                ax.text(li + wi / 2, yi, f"{int(wi)}", ha="center", va="center", fontsize=9,
                        color="white" if verdict != "inconclusive" else "black")
        left += width
    labels = [f"{study} · {'paper' if origin == 'paper' else 'beyond the paper'} · {data}"
              for study, origin, data in counts.index]
    ax.set_yticks(y, labels, fontsize=9)
    ax.set_xlabel("claims", fontsize=10)
    ax.tick_params(axis="x", labelsize=9)
    ax.legend(ncols=4, loc="lower center", bbox_to_anchor=(0.5, 1.0), fontsize=9,
              frameon=False)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    total = counts.to_numpy().sum()
    wrapped_footer(fig, f"{total} claims. Study · where the claim comes from (the paper's "
                        "statement or the project's own) · what its data are. holds: the "
                        "whole interval meets the criterion; fails: none of it does; "
                        "inconclusive: it straddles the criterion or the row calls its "
                        "interval unreliable; untestable: the configured data cannot decide "
                        "it (reason in the row's note). Claims one by one: claims_detail.pdf "
                        "and claims.csv.", fontsize=9)
    fig.subplots_adjust(left=0.42, right=0.97, top=1 - 0.45 / height, bottom=1.1 / height)
    return fig

