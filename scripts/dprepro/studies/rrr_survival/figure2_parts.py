"""Figure 2's parts around its panels: the numbers-at-risk table under panel (a) with its row
of times, the key that fills the column under it (the groups' legend and how to read the
panels), and the note in a panel naming a group whose released curve is not drawn.

Kept apart from :mod:`dprepro.studies.rrr_survival.figures` (the figures themselves) so that
module stays a size a reader takes in; these helpers know matplotlib and the curves table's
columns (``group``, ``t``, ``survival``, ``at_risk``), nothing of a mechanism.
"""

from __future__ import annotations

import textwrap

import matplotlib

matplotlib.use("Agg")
import numpy as np
import pandas as pd
from matplotlib.transforms import blended_transform_factory, offset_copy

from dprepro.studies.rrr_survival import panel_scale

__all__ = ["at_risk_height", "at_risk_table", "draw_key", "key_fits", "mark_not_drawn",
           "names_left_of", "not_drawn"]

#: Height of one line of the at-risk table and of the key's legend, in font sizes.
_LINE = 1.5
#: Average width of a character of the key's text, in font sizes (DejaVu Sans is ~0.55).
_CHAR = 0.58


def names_left_of(transform, rows, fig):
    """``transform`` moved left past the widest count centred on a tick at the axis'
    start: where the at-risk table's row names end (right-aligned at x = 0)."""
    widest = max((len(str(int(v))) for v in pd.to_numeric(rows["at_risk"], errors="coerce")
                  if np.isfinite(v)), default=1)
    return offset_copy(transform, fig=fig, x=-(0.3 * panel_scale.FONT["text"] * widest + 4),
                       units="points")


def at_risk_height(groups) -> float:
    """Height of the at-risk table in inches: its row of times and a row per group."""
    return (len(groups) + 1) * _LINE * panel_scale.FONT["text"] / 72 + 0.05


def at_risk_table(ax, rows, groups, colors, reference, rows_per_person: int = 1,
                  time_unit: str = "") -> None:
    """Numbers at risk of the original data per group under the reference panel's x ticks.

    The first row gives the times (the reference panel's ticks, named by ``time_unit``),
    then a row per group. Each count sits at its tick's x position of the reference panel
    (a transform blended from that panel's data x and this axes' y), so the columns line
    up with the curves and the tick labels above whatever the layout; Figure 2 puts this
    axes directly under that panel (:func:`panel_scale.place_below`). The counts are rows;
    with several rows per patient (kidney: two) the title says so, so they are not read as
    patients.
    """
    ax.axis("off")
    if "at_risk" not in rows:
        return
    size = panel_scale.FONT["text"]
    low, high = sorted(reference.get_xlim())
    ticks = [t for t in reference.get_xticks() if low <= t <= high]
    at_tick = blended_transform_factory(reference.transData, ax.transAxes)
    left = names_left_of(blended_transform_factory(reference.transAxes, ax.transAxes), rows,
                         ax.figure)
    ax.set_title("numbers at risk (original)" if rows_per_person == 1 else
                 f"rows at risk (original; {rows_per_person} per patient)", fontsize=size,
                 pad=2)
    lines = len(groups) + 1
    # the row of times: a reader of a printed table need not look back up to (a)'s axis
    y = 1 - 0.5 / lines
    ax.text(0.0, y, time_unit or "time", color="0.35", fontsize=size, transform=left,
            ha="right", va="center", style="italic")
    for tick in ticks:
        ax.text(tick, y, f"{tick:g}", color="0.35", fontsize=size, transform=at_tick,
                ha="center", va="center", style="italic")
    for i, group in enumerate(groups):
        part = rows[rows["group"] == group].sort_values("t")
        t = part["t"].to_numpy(float)
        n = pd.to_numeric(part["at_risk"], errors="coerce").to_numpy(float)
        y = 1 - (i + 1.5) / lines
        ax.text(0.0, y, str(group), color=colors[group], fontsize=size, transform=left,
                ha="right", va="center")
        for tick in ticks:
            idx = np.searchsorted(t, tick, side="left")
            count = str(int(n[idx])) if idx < len(t) else "0"
            ax.text(tick, y, count, fontsize=size, transform=at_tick, ha="center",
                    va="center")


def not_drawn(rows, groups) -> dict[str, float | None]:
    """The groups whose released curve draws nothing (fewer than two defined points): each
    with the first time its curve is undefined (``None``: never defined, or no rows)."""
    out = {}
    for group in groups:
        part = rows[rows["group"] == group].sort_values("t")
        t = pd.to_numeric(part["t"], errors="coerce").to_numpy(float)
        y = pd.to_numeric(part["survival"], errors="coerce").to_numpy(float)
        defined = np.isfinite(y)
        if defined.sum() >= 2:
            continue
        undefined = np.flatnonzero(~defined)
        out[group] = float(t[undefined[0]]) if defined.any() and undefined.size else None
    return out


def mark_not_drawn(ax, rows, groups, colors) -> list[str]:
    """Name, in the panel's top right corner, each group whose released curve draws
    nothing (:func:`not_drawn`), in the group's colour: a curve that vanished from a panel
    (kidney, grid LNTE at ε = 1: PKD's noisy count at risk falls below 1 after t = 0) is
    said to, not left for the reader to miss. Returns the groups named."""
    missing = not_drawn(rows, groups)
    for i, (group, start) in enumerate(missing.items()):
        words = ("no curve (undefined from the start)" if start is None
                 else f"no curve (undefined from t = {start:g})")
        ax.text(0.98, 0.97 - i * 0.075, f"{group}: {words}", transform=ax.transAxes,
                ha="right", va="top", fontsize=panel_scale.FONT["text"], color=colors[group],
                bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none",
                      "alpha": 0.85}, zorder=5)
    return list(missing)


def _wrapped(text: str, width: float) -> str:
    """``text`` wrapped to ``width`` inches of the key's font."""
    size = panel_scale.FONT["text"]
    return textwrap.fill(text, max(20, int(width * 72 / (_CHAR * size))))


def key_fits(groups, notes: str, width: float, height: float) -> bool:
    """Whether the key (the groups' legend over ``notes``) fits ``width`` × ``height`` inches."""
    size = panel_scale.FONT["text"]
    legend = (len(groups) + 1) * _LINE * size / 72 + 0.15
    text = (_wrapped(notes, width).count("\n") + 1) * 1.25 * size / 72
    return legend + text <= height


def draw_key(fig, box, handles, names, notes: str):
    """The key in ``box`` (left, bottom, right, top; figure fractions): the groups' legend
    and, under it, ``notes`` wrapped to the box's width. Returns its axes (axis off)."""
    size = panel_scale.FONT["text"]
    left, bottom, right, top = box
    ax = fig.add_axes([left, bottom, right - left, top - bottom])
    ax.axis("off")
    legend = ax.legend(handles, names, loc="upper left", bbox_to_anchor=(0, 1),
                       borderaxespad=0, fontsize=size, title="group", title_fontsize=size,
                       alignment="left", frameon=False)
    renderer = fig.canvas.get_renderer()
    below = ax.transAxes.inverted().transform(
        (0, legend.get_window_extent(renderer).y0))[1]
    width = (right - left) * fig.get_figwidth()
    ax.text(0, below - 0.1 / ((top - bottom) * fig.get_figheight()), _wrapped(notes, width),
            transform=ax.transAxes, ha="left", va="top", fontsize=size, color="0.35")
    return ax
