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

__all__ = ["FONT", "PAGE", "VERDICT_ORDER", "claims_figure", "claims_pages",
           "claims_summary_figure"]

#: Verdicts in the order the figures stack and list them.
VERDICT_ORDER = ("holds", "fails", "inconclusive", "untestable")


def _criterion_label(text: str) -> str:
    """A criterion as the claims figure prints it, a minimum of units in short."""
    from dprepro.claims.table import Criterion

    crit = Criterion.parse(text)
    if crit.min_units is None:
        return text
    return f"{text.split(';', 1)[0].strip()} (≥ {crit.min_units} units)"


#: A page of the detail PDF: A4 portrait, in inches, and the height of one claim's row.
PAGE = (8.27, 11.69)
ROW_INCHES = 0.5
#: The smallest text on a page (points): readable printed.
FONT = 8
#: Figure x (0-1) of the columns: claim text, the scale's left end, the strip, its right
#: end, the verdict; the ends have a column of their own so no label meets another.
_TEXT, _LOW, _STRIP, _HIGH, _VERDICT = 0.03, 0.575, (0.585, 0.795), 0.805, 0.885
#: Characters of claim text per line at FONT (the text column is about 3.9 inches).
_WRAP = 66


def _claim_lines(text: str, lines: int = 2) -> str:
    """A claim's text in at most ``lines`` lines of :data:`_WRAP` characters (… if cut)."""
    import textwrap

    wrapped = textwrap.wrap(str(text), _WRAP) or [""]
    if len(wrapped) > lines:
        wrapped = wrapped[:lines]
        wrapped[-1] = wrapped[-1][:_WRAP - 1].rstrip() + "…"
    return "\n".join(wrapped)


def _row_scale(row, crit) -> tuple[float, float]:
    """The ends of a row's own scale: its finite values and criterion bounds, padded."""
    values = [v for v in (row.reproduced_value, row.ci_lower, row.ci_upper, crit.lower,
                          crit.upper) if np.isfinite(v)] or [0.0]
    low, high = min(values), max(values)
    pad = 0.15 * (high - low) if high > low else 0.5 * max(abs(high), 1e-3)
    return low - pad, high + pad


def _end_text(value: float, bound: float) -> str:
    """A scale end as printed: the number, or ∞ where the interval runs off to it."""
    if np.isinf(bound):
        return "∞" if bound > 0 else "−∞"
    return f"{value:.3g}"


def claims_figure(claims: pd.DataFrame, *, title: str = ""):
    """One row per claim: its text, the reproduced value and interval against the criterion.

    A page is A4 portrait at print size (no text below :data:`FONT` points): per row the
    claim's statement (two lines at most), its id and criterion; then the row's own
    scale (claims measure different things: the row's values, interval and finite
    criterion bounds mapped onto the strip), its two ends printed in columns of their
    own, and the verdict in the last column, so that no two labels meet. The set of values
    for which the claim is true is shaded; point and interval are coloured by verdict; an
    interval end at ±∞ is drawn to the strip's edge with an arrowhead and its scale end
    printed ∞. One axes for every row (hundreds of claims draw in a second).
    """
    from matplotlib.collections import PolyCollection
    from matplotlib.transforms import blended_transform_factory

    from dprepro.claims.table import Criterion

    claims = claims.reset_index(drop=True)
    rows = max(1, len(claims))
    # A4 when the rows fit on it (the detail PDF's pages), taller for a longer table
    height = max(PAGE[1], ROW_INCHES * rows + 2.2)
    fig = plt.figure(figsize=(PAGE[0], height))
    top, bottom = 1 - 0.75 / height, 1 - (0.75 + ROW_INCHES * rows) / height
    ax = fig.add_axes((_STRIP[0], bottom, _STRIP[1] - _STRIP[0], top - bottom))
    at = blended_transform_factory(fig.transFigure, ax.transData)
    boxes, colors, lines, points, arrows = [], [], [], [], []
    for i, row in enumerate(claims.itertuples()):
        crit = Criterion.parse(row.criterion)
        low, high = _row_scale(row, crit)

        def unit(v, low=low, high=high):
            return float(np.clip((v - low) / (high - low), 0.0, 1.0))

        y = rows - 1 - i
        left, right = unit(max(crit.lower, low)), unit(min(crit.upper, high))
        if right > left:
            boxes.append([(left, y - 0.3), (right, y - 0.3), (right, y + 0.3), (left, y + 0.3)])
        color = _VERDICT_COLORS[row.verdict]
        colors.append(color)
        if np.isnan(row.ci_lower) or np.isnan(row.ci_upper):
            lines.append((y, np.nan, np.nan))
            points.append((np.nan, y))
            ax.text(0.5, y, "no number", ha="center", va="center", fontsize=FONT,
                    color="0.45")
        else:
            lines.append((y, unit(row.ci_lower), unit(row.ci_upper)))
            points.append((unit(row.reproduced_value), y))
            arrows += [(0.0, y, "<", color)] if np.isneginf(row.ci_lower) else []
            arrows += [(1.0, y, ">", color)] if np.isposinf(row.ci_upper) else []
        text = getattr(row, "claim", "") or ""
        ax.text(_TEXT, y - 0.02, _claim_lines(text) if text else row.claim_id,
                transform=at, ha="left", va="bottom", fontsize=FONT, linespacing=1.05)
        ax.text(_TEXT, y - 0.1, f"{row.claim_id} · {_criterion_label(row.criterion)}"
                if text else _criterion_label(row.criterion), transform=at, ha="left",
                va="top", fontsize=FONT, color="0.4")
        ax.text(_LOW, y, _end_text(low, row.ci_lower), transform=at, ha="right",
                va="center", fontsize=FONT, color="0.4")
        ax.text(_HIGH, y, _end_text(high, row.ci_upper), transform=at, ha="left",
                va="center", fontsize=FONT, color="0.4")
        ax.text(_VERDICT, y, row.verdict, transform=at, ha="left", va="center",
                fontsize=FONT, color=color, fontweight="bold")
    if len(claims):
        ax.add_collection(PolyCollection(boxes, facecolors="0.88", edgecolors="none"))
        ys, lefts, rights = np.array(lines).T
        ax.hlines(ys, lefts, rights, colors=colors, lw=2.5)
        for x, y, marker, color in arrows:
            ax.plot([x], [y], marker=marker, color=color, ms=7, clip_on=False)
        xs, ys = np.array(points).T
        ax.scatter(xs, ys, c=colors, s=16, zorder=3)
    else:
        ax.text(0.5, 0.5, "no claims tables among the configured studies", ha="center",
                va="center", fontsize=FONT + 2)
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.5, rows - 0.5)
    ax.set_xticks([])
    ax.set_yticks([])
    for side in ("top", "right", "bottom", "left"):
        ax.spines[side].set_visible(False)
    wrapped_footer(fig, "Each row: the claim, its id and criterion; its own scale (the "
                        "numbers at both ends; ∞ and an arrowhead where the interval has no "
                        "end); dot: reproduced value; bar: confidence interval; shaded: "
                        "values for which the claim is true. Verdict: holds / fails / "
                        "inconclusive / untestable; (≥ n units): untestable on fewer than "
                        "n independent units. Every number and note: results/claims.csv.",
                   fontsize=FONT)
    if title:
        fig.suptitle(title, fontsize=FONT + 3, y=1 - 0.3 / height)
    return fig


_VERDICT_COLORS = {"holds": "#2ca02c", "fails": "#d62728", "inconclusive": "#ff7f0e",
                   "untestable": "#8c8c8c"}


def claims_pages(claims: pd.DataFrame, *, rows_per_page: int = 18):
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

