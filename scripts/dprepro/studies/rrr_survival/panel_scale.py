"""Figure 2's common scales: one y range for every panel of a row (values outside it clipped
and marked), one time range for every panel, and the numbers-at-risk table placed directly
under the panel whose x axis it continues.

Kept apart from :mod:`dprepro.studies.rrr_survival.figures` (the figures themselves) so that
module stays a size a reader takes in; these helpers know matplotlib and nothing of a study.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import numpy as np
import pandas as pd
from matplotlib.transforms import blended_transform_factory

__all__ = ["FONT", "SURVIVAL_RANGE", "mark_clipped", "place_below", "time_limits", "y_limits"]

#: Font sizes of Figure 2, points: none under 9 (at 100 dpi a 9 pt letter is 12.5 px high,
#: readable in print and on screen; 7 pt was not).
FONT = {"text": 9, "title": 9.5, "suptitle": 11}
#: The y range of every row of Figure 2: a survival probability, with a margin.
SURVIVAL_RANGE = (0.0, 1.0)
_MARGIN = 0.04


def y_limits() -> tuple[float, float]:
    """Figure 2's y limits: :data:`SURVIVAL_RANGE` with its margin."""
    low, high = SURVIVAL_RANGE
    return low - _MARGIN, high + _MARGIN


def time_limits(times) -> tuple[float, float]:
    """The x limits every Figure 2 panel shares: all the times drawn, with a 2 % margin
    (grid LNTE's curves at ε = 1 ended at 9 months, and its panel spanned 0-9 against 0-20)."""
    t = pd.to_numeric(pd.Series(times), errors="coerce").to_numpy(float)
    t = t[np.isfinite(t)]
    if not len(t):
        return 0.0, 1.0
    low, high = float(t.min()), float(t.max())
    pad = 0.02 * (high - low) if high > low else 0.5
    return low - pad, high + pad


def mark_clipped(
    ax, rows: pd.DataFrame, groups, colors, *, column: str = "survival"
) -> list[tuple[str, float]]:
    """Mark the values of each group's curve outside the axes' y limits.

    The curve itself is cut at the axes' edge; a triangle at that edge (▲ above, ▼
    below), in the group's colour, sits at the time of the group's most extreme value
    outside, labelled with that value, so nothing leaves the panel unseen. Labels at one
    edge are stacked inwards, one line apart. Returns the ``(group, value)`` marked.
    """
    low, high = ax.get_ylim()
    at_edge = blended_transform_factory(ax.transData, ax.transAxes)
    marked = []
    stacked = {"above": 0, "below": 0}
    for group in groups:
        part = rows[rows["group"] == group]
        t = pd.to_numeric(part["t"], errors="coerce").to_numpy(float)
        y = pd.to_numeric(part[column], errors="coerce").to_numpy(float)
        ok = np.isfinite(t) & np.isfinite(y)
        t, y = t[ok], y[ok]
        for side, outside, pick, edge, marker, va in (
            ("above", y > high, np.argmax, 1.0, "^", "top"),
            ("below", y < low, np.argmin, 0.0, "v", "bottom"),
        ):
            if not outside.any():
                continue
            i = int(pick(np.where(outside, y, high if side == "above" else low)))
            ax.plot(
                [t[i]],
                [edge],
                marker=marker,
                ms=7,
                color=colors[group],
                markeredgecolor="white",
                markeredgewidth=0.6,
                ls="none",
                transform=at_edge,
                clip_on=False,
                zorder=4,
            )
            offset = 11 * stacked[side] + 2
            ax.annotate(
                f"{y[i]:.2f}",
                (t[i], edge),
                xycoords=at_edge,
                textcoords="offset points",
                xytext=(5, -offset if side == "above" else offset),
                fontsize=FONT["text"],
                color=colors[group],
                ha="left",
                va=va,
                annotation_clip=False,
                zorder=5,
                bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.85},
            )
            stacked[side] += 1
            marked.append((group, float(y[i])))
    return marked


def place_below(ax, reference, *, height: float, gap: float = 0.04) -> None:
    """Put ``ax`` directly under ``reference`` (after the figure's layout): as wide as it,
    ``height`` inches tall, its top (with its title) ``gap`` inches under everything
    drawn with ``reference`` (its tick labels and x label), and sharing its x axis."""
    fig = reference.figure
    renderer = fig.canvas.get_renderer()
    to_figure = fig.transFigure.inverted()
    below = to_figure.transform((0, reference.get_tightbbox(renderer).y0))[1]
    title = ax.title.get_fontsize() * 1.2 / 72 + 4 / 72 if ax.get_title() else 0.0
    tall = fig.get_figheight()
    box = reference.get_position()
    top = below - (gap + title) / tall
    ax.set_position([box.x0, top - height / tall, box.width, height / tall])
    ax.sharex(reference)
