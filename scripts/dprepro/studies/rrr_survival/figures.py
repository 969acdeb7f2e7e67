"""rrr_survival figures (Figure 2 and its panels, confidence bands, utility) from the
aggregated tables; each carries a footer naming its data origin and releases."""

from __future__ import annotations

import functools
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from dprepro.figures.style import Part, layout_with_footer
from dprepro.mechanisms.identity import identities, mechanism_name
from dprepro.studies.rrr_survival import figure2_parts, panel_scale


def _ylabel(endpoint: str) -> str:
    """Y axis label naming the endpoint (``survival probability`` without one)."""
    return f"event-free probability\n({endpoint})" if endpoint else "survival probability"


def _origin_text(origin: str) -> str:
    return {"synthetic": "SYNTHETIC stand-in calibrated to published facts (not the real cohort)",
            "simulation": "SIMULATED data (no real patient)",
            "real": "the real cohort"}.get(origin, origin)


def _panel_title(row) -> str:
    if row["mechanism"] == "original":
        return "original (non-private)"
    true = row["true_epsilon"]
    true_text = "no finite ε" if not np.isfinite(true) else f"true ε = {true:.2f}"
    name = mechanism_name(row["mechanism"], short=True)
    return f"{name} ε = {row['epsilon']:g} ({true_text})"


#: Private mechanisms of rrr_survival in display order (those present in a table are drawn).
_RRR_MECHANISMS = tuple(entry.name for entry in identities("rrr_survival", private=True))


def _private_mechanisms(table: pd.DataFrame) -> list[str]:
    present = set(table["mechanism"])
    return [m for m in _RRR_MECHANISMS if m in present]


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


#: The ordered palette: plasma from navy through magenta to orange, up to where its
#: colours still stand out from white paper (3:1 contrast, WCAG's bar for graphics;
#: plasma's and viridis' pale yellow and lime ends do not).
_ORDERED_CMAP = "plasma"
_ORDERED_SPAN = 0.64
#: The qualitative palette (unordered groups, the utility figure's series): matplotlib's
#: tab10 with its four pale entries (orange, pink, olive, cyan: 2.0-2.7:1 against white)
#: darkened to at least 3:1, as curves and the small labels printed in them must read.
_QUALITATIVE_COLOURS = ("#1f77b4", "#d95f02", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                        "#e7298a", "#5f5f5f", "#7f7f00", "#0e7c8a")


def _group_colors(groups, ordered: bool = True):
    """Ordered groups: :func:`_ordered_positions` of plasma (navy to orange, no pale
    end); unordered: :data:`_QUALITATIVE_COLOURS`."""
    if not ordered:
        return {g: _QUALITATIVE_COLOURS[i % len(_QUALITATIVE_COLOURS)]
                for i, g in enumerate(groups)}
    groups = list(groups)
    if not groups:
        return {}
    cmap = plt.get_cmap(_ORDERED_CMAP)
    return {g: cmap(float(x)) for g, x in zip(groups, _ordered_positions(len(groups)),
                                                strict=True)}


@functools.cache
def _ordered_positions(k: int) -> tuple[float, ...]:
    """``k`` positions in [0, span] of the ordered palette whose neighbouring colours
    differ as much as they can: the largest least CIE76 ΔE between neighbours.

    Equal steps along the colormap left neighbours at very different distances (its
    dark end changes little: larynx I and II), and steps spread by a power (the former
    palette) the other end: IPSS-R's High and Very High were ΔE 21 apart against 31-32
    for the others; now all four gaps are 30-31. Here a bisection finds the largest gap for
    which, from the first colour, each next one at least that far from its predecessor
    (the first such point of a fine grid) still fits k colours into the span.
    """
    if k <= 1:
        return (0.0,)
    grid = np.linspace(0.0, _ORDERED_SPAN, 1025)
    lab = _cielab(plt.get_cmap(_ORDERED_CMAP)(grid)[:, :3])

    def walk(gap):
        chosen = [0]
        for _ in range(k - 1):
            far = np.flatnonzero(np.linalg.norm(lab[chosen[-1]:] - lab[chosen[-1]], axis=1)
                                 >= gap)
            if far.size == 0:
                return None
            chosen.append(chosen[-1] + int(far[0]))
        return chosen

    low, high = 0.0, float(np.linalg.norm(lab - lab[0], axis=1).max())
    best = walk(low)
    for _ in range(40):
        middle = (low + high) / 2
        found = walk(middle)
        if found is None:
            high = middle
        else:
            low, best = middle, found
    return tuple(float(grid[i]) for i in best)


def _cielab(rgb) -> np.ndarray:
    """CIE L*a*b* (D65) of sRGB colours, rows of ``rgb`` in [0, 1] (the standard formulas)."""
    c = np.asarray(rgb, dtype=float)
    c = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    xyz = c @ np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722],
                        [0.0193, 0.1192, 0.9505]]).T / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.stack([116 * f[:, 1] - 16, 500 * (f[:, 0] - f[:, 1]),
                     200 * (f[:, 1] - f[:, 2])], axis=1)


def _censoring_ticks(ax, rows, groups, colors) -> None:
    """Vertical ticks on the original curves at censoring times (``censored`` > 0)."""
    if "censored" not in rows:
        return
    for group in groups:
        part = rows[(rows["group"] == group) & (pd.to_numeric(rows["censored"],
                                                               errors="coerce") > 0)]
        ax.plot(part["t"], part["survival"], ls="none", marker="|", ms=5, color=colors[group])


#: How to read Figure 2, under the groups' legend in the column below panel (a) (in the
#: footer where that column has no room for it).
_FIGURE2_NOTES = (
    "RRR privatises the group label (paper's ε↔p); debiased RRR inverts the public "
    "transition matrix on the same release; LNTE adds Laplace(1/ε) to the KM counts as the "
    "paper's authors coded it; grid LNTE adds Laplace noise to binned event and censoring "
    "counts (ε-DP with a public horizon). Every panel has the same time range and the y "
    "range [0, 1]; a value outside it is cut at the edge and marked ▲ (above) or ▼ (below) "
    "with its value. A curve stops where its release leaves it undefined (grid LNTE: a "
    "noisy count at risk below 1); a group left with no curve is named in its panel. "
    "Ticks |: censorings; the table under (a): the times, then the numbers at risk.")
#: Height of a row of Figure 2's panels and width of a column, inches.
_ROW, _COLUMN = 3.0, 3.7


def rrr_figure2(curves: pd.DataFrame, *, dataset: str, epsilons, title: str = "",
                time_unit: str = "months", ordered: bool = True, endpoint: str = "",
                rows_per_person: int = 1, panels: bool = False):
    """Figure 2: (a) original KM per group, RRR at each ε, LNTE at each ε (draw 0).

    Panel letters run down the layout: (a) original, then RRR at each ε in
    the configured order, then LNTE at each ε; the single-panel files are
    named by release instead of letter. Every panel has the same time range,
    and every row the y range [0, 1] (:mod:`panel_scale`): a value outside it is
    cut at the edge and marked with a triangle and its value; a group whose curve
    draws nothing is named in its panel. The y label is written once a row (its
    first panel), the time label under the bottom row and panel (a), whose
    numbers-at-risk table (a row of times, a row per group) sits directly under
    it on its x axis; the column under it holds the key: the groups' legend and
    how to read the panels (where it has no room: the legend in (a), the notes in
    the footer). No text is under 9 pt. With ``panels=True`` returns ``(figure,
    {release name: Part})``: each panel is the crop of the composite's drawing
    around its axes (the original's with its numbers-at-risk table), over its
    mechanism's strip: the groups' legend, the axes' names, the mechanism's
    caveats and the data note. The caller closes the strips (``part.strip``)
    after saving.
    """
    size = panel_scale.FONT["text"]
    rows = curves[curves["dataset"] == dataset]
    groups = list(dict.fromkeys(rows.loc[rows["mechanism"] == "original", "group"]))
    colors = _group_colors(groups, ordered)
    mechanisms = _private_mechanisms(rows)
    nrows, cols = max(2, len(mechanisms)), 1 + len(epsilons)
    fig, axes = plt.subplots(nrows, cols, figsize=(_COLUMN * cols, _ROW * nrows + 0.9),
                             squeeze=False)
    layout = [(0, 0, "original", None)]
    for r, mechanism in enumerate(mechanisms):
        layout += [(r, 1 + i, mechanism, float(e)) for i, e in enumerate(epsilons)]
    for r in range(1, nrows):
        fig.delaxes(axes[r, 0])
    origin = rows["data_origin"].iloc[0]
    _figure2_panels(axes, layout, [_select(rows, dataset, m, e) for _, _, m, e in layout],
                    groups, colors, ylabel=_ylabel(endpoint), time_unit=time_unit)
    handles, names = axes[0, 0].get_legend_handles_labels()
    original = _select(rows, dataset, "original", None)
    table = "at_risk" in original and bool(groups)
    risk_height = figure2_parts.at_risk_height(groups) if table else 0.0
    # the column under (a): the rows below it, less (a)'s axis labels and the table
    in_key = figure2_parts.key_fits(groups, _FIGURE2_NOTES, 0.9 * _COLUMN,
                                    (nrows - 1) * _ROW - risk_height - 0.8)
    if not in_key:
        axes[0, 0].legend(handles, names, fontsize=size, title="group", title_fontsize=size)
    if table:
        # room on the canvas for the at-risk table's row names, laid out with panel (a):
        # the widest name, invisible, where the names will be (a panel's file is a crop
        # of the canvas, which lacked what lay left of it)
        axes[0, 0].text(0, 0.5, max([*map(str, groups), time_unit or "time"], key=len),
                        fontsize=size, alpha=0, ha="right", va="center",
                        transform=figure2_parts.names_left_of(axes[0, 0].transAxes, original,
                                                              fig))
    fig.suptitle(f"{title or dataset} — Kaplan–Meier curves ({endpoint or 'survival'})",
                 fontsize=panel_scale.FONT["suptitle"])
    layout_with_footer(fig, f"Data: {_origin_text(origin)}. One draw per mechanism (draw 0)."
                       + ("" if in_key else " " + _FIGURE2_NOTES), fontsize=size)
    # after the layout: directly under panel (a)'s tick labels and time label
    risk = fig.add_axes([0, 0, 1, 1])
    figure2_parts.at_risk_table(risk, original, groups, colors, axes[0, 0], rows_per_person,
                                time_unit)
    panel_scale.place_below(risk, axes[0, 0], height=risk_height)
    if in_key:
        top = risk.get_position().y0 - 0.15 / fig.get_figheight()
        figure2_parts.draw_key(fig, (0.01, axes[nrows - 1, 1].get_position().y0,
                                     axes[0, 0].get_position().x1, top),
                               handles, names, _FIGURE2_NOTES)
    if not panels:
        return fig
    note = f"{title or dataset}; data: {_origin_text(origin)}"
    return fig, _figure2_panel_parts(fig, axes, risk, layout, note, handles, names,
                                     legend_in_panel=not in_key, time_unit=time_unit,
                                     ylabel=_ylabel(endpoint))


def _figure2_panels(axes, layout, shown, groups, colors, *, ylabel: str,
                    time_unit: str) -> None:
    """Draw Figure 2's lettered panels: ``layout`` (row, column, mechanism, ε) and the rows
    of the curves table each shows, on one time range and the rows' y range."""
    size = panel_scale.FONT["text"]
    nrows = axes.shape[0]
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    xlim = panel_scale.time_limits(pd.concat([p["t"] for p in shown]))
    first = {}  # row -> its first panel, which carries the row's y label
    for (r, c, mechanism, _), part in zip(layout, shown, strict=True):
        ax = axes[r, c]
        if r in first:
            ax.sharey(first[r])
        else:
            first[r] = ax
            ax.set_ylabel(ylabel, fontsize=size)
        if ax is not axes[0, 0]:
            ax.sharex(axes[0, 0])
        _draw_curves(ax, part, groups, colors)
        ax.set_xlim(*xlim)
        ax.set_ylim(*panel_scale.y_limits())
        panel_scale.mark_clipped(ax, part, groups, colors)
        figure2_parts.mark_not_drawn(ax, part, groups, colors)
        if mechanism == "original":
            _censoring_ticks(ax, part, groups, colors)
        ax.set_title(f"({next(letters)}) {_panel_title(part.iloc[0])}",
                     fontsize=panel_scale.FONT["title"])
        if r == nrows - 1 or mechanism == "original":
            ax.set_xlabel(f"time ({time_unit})", fontsize=size)
        ax.tick_params(labelsize=size)


def _figure2_panel_parts(fig, axes, risk, layout, note, handles, names, *,
                         legend_in_panel: bool, time_unit: str, ylabel: str) -> dict:
    """Each Figure 2 panel as a :class:`Part` of the composite, over its mechanism's strip:
    the groups' legend (the original's only where (a) has none inside), the axes, the data
    note and what the composite says of that mechanism."""
    scales = (f"x: time ({time_unit}); y: {ylabel.replace(chr(10), ' ')}, range [0, 1], "
              "values outside marked ▲/▼.")
    mechanisms = list(dict.fromkeys(m for _, _, m, _ in layout))
    strips = {mechanism: _panel_strip(
                  " ".join(filter(None, [_PANEL_NOTES.get(mechanism, ""), scales, note])),
                  [] if mechanism == "original" and legend_in_panel else handles,
                  [] if mechanism == "original" and legend_in_panel else names)
              for mechanism in mechanisms}
    # the original's file shows its numbers-at-risk table too
    return {_release_name(mechanism, epsilon): Part(
                fig, [axes[r, c], risk] if mechanism == "original" else [axes[r, c]],
                strip=strips[mechanism])
            for r, c, mechanism, epsilon in layout}


#: What a single-panel file of each mechanism says under it (the composite's footer, in part).
_PANEL_NOTES = {
    "rrr": "RRR: the group label privatised (the paper's ε↔p); one draw (draw 0).",
    "rrr_debiased": "Debiased RRR: the public transition matrix inverted on the same release; "
                    "not clipped to [0, 1] (own y range); one draw (draw 0).",
    "lnte": "LNTE as the paper's authors coded it: Laplace(1/ε) on the KM counts, no finite "
            "ε; one draw (draw 0).",
    "lnte_grid": "Grid LNTE: Laplace noise on binned event and censoring counts (ε-DP with a "
                 "public horizon, else no finite ε); one draw (draw 0).",
}


#: Width of a single-panel file's strip, inches: about one panel of the composite.
_STRIP_WIDTH = 3.7


def _row_major(handles, labels, ncol: int) -> tuple[list, list]:
    """Handles and labels reordered so that a legend of ``ncol`` columns reads row by row.

    Matplotlib fills a legend column by column, the first ``n % ncol`` columns one
    entry longer: four groups in three columns read "I III IV / II". The entries are
    placed row by row into those columns' slots and handed over column by column.
    """
    n = len(labels)
    ncol = max(1, min(int(ncol), n)) if n else 1
    rows, longer = divmod(n, ncol)
    heights = [rows + 1] * longer + [rows] * (ncol - longer)
    slots = [[None] * h for h in heights]
    entries = iter(range(n))
    for r in range(max(heights, default=0)):
        for c in range(ncol):
            if r < heights[c]:
                slots[c][r] = next(entries)
    order = [i for column in slots for i in column]
    return [handles[i] for i in order], [labels[i] for i in order]


def _panel_strip(note: str, handles, names):
    """A single-panel file's strip: the groups' legend (if any) over the panel's data
    note, drawn once as a figure of its own and stacked under each panel's crop
    (Figure 2's text size, :data:`panel_scale.FONT`)."""
    size = panel_scale.FONT["text"]
    # about 17 characters of 7 pt text an inch, fewer of larger text
    note = textwrap.fill(note, int(_STRIP_WIDTH * 17 * 7 / size))
    lines = note.count("\n") + 1
    ncol = min(3, max(1, len(names)))
    legend_rows = -(-len(names) // ncol) if names else 0
    strip = plt.figure(figsize=(_STRIP_WIDTH, 0.05 + 0.24 * legend_rows
                                + 1.25 * size / 72 * lines))
    if names:
        handles, names = _row_major(list(handles), list(names), ncol)
        strip.legend(handles, names, loc="upper left", ncol=ncol, fontsize=size,
                     frameon=False, bbox_to_anchor=(0, 1), borderaxespad=0.1,
                     handlelength=1.5, columnspacing=1.0)
    strip.text(0.01, 0.02, note, fontsize=size, color="0.35", ha="left", va="bottom")
    return strip


def _release_name(mechanism: str, epsilon) -> str:
    return "original" if epsilon is None else f"{mechanism}_eps{float(epsilon):g}"


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
    layout_with_footer(fig, f"Data: {_origin_text(rows['data_origin'].iloc[0])}. Each panel has "
                 "its own "
                 "y range, widened to show band values outside [0, 1]. Bands are quantiles "
                 "over many independent draws of each mechanism: a summary for the reader, not "
                 "a release (publishing them would compose the budget over the draws; the ε "
                 "in the titles is one draw's).")
    return fig


def rrr_utility(utility: pd.DataFrame, *, titles=None):
    """Mean sup-distance to the original KM curve against ε, per dataset and mechanism.

    ``titles`` maps a dataset to its display title (default: its name). One legend for
    the whole grid sits under the panels (a legend inside each panel covered points),
    so every series keeps one colour in every panel: the colours follow the order in
    which the series first appear over all datasets, not each panel's own.
    """
    titles = dict(titles or {})
    datasets = list(dict.fromkeys(utility["dataset"]))
    # a grid of at most three panels a row: one row of six is unreadable in print
    ncols = min(3, len(datasets))
    nrows = -(-len(datasets) // ncols)
    # at least 8 in wide: one cohort's panel alone left no room for the legend and footer
    width = max(4.4 * ncols, 8.0)
    fig = plt.figure(figsize=(width, 3.5 * nrows))
    grid = fig.add_gridspec(nrows + 1, ncols, height_ratios=[3.5] * nrows + [0.5])
    axes = np.array([[fig.add_subplot(grid[r, c]) for c in range(ncols)] for r in range(nrows)])
    for ax in axes.ravel()[len(datasets):]:
        ax.axis("off")
    styles = {"rrr": {"marker": "o"}, "rrr_debiased": {"marker": "^", "ls": "-."},
              "lnte": {"marker": "s", "ls": "--"}, "lnte_grid": {"marker": "D", "ls": ":"}}
    # (mechanism, calibration) -> colour, in order of first appearance; grid LNTE's
    # calibration names each cohort's own grid, yet it is one series
    colours: dict = {}
    key: dict = {}  # legend label -> handle, in order of first appearance
    calibration_order = {
        mechanism: list(dict.fromkeys(part["calibration"].fillna("")))
        for mechanism, part in utility.groupby("mechanism", sort=False)}
    labelled = []
    for ax, dataset in zip(axes.ravel(), datasets, strict=False):
        rows = utility[utility["dataset"] == dataset]
        shares = []  # (x, y, text, colour): the share of the support a release leaves undefined
        for mechanism in _private_mechanisms(rows):
            mine = rows[rows["mechanism"] == mechanism]
            calibrations = list(dict.fromkeys(mine["calibration"].fillna("")))
            # a mechanism's calibrations ranked over all cohorts, so a series has one label and
            # one marker style in every panel (grid LNTE's "calibration" is each cohort's grid)
            ranked = [] if mechanism == "lnte_grid" else calibration_order[mechanism]
            for calibration in calibrations:
                n = ranked.index(calibration) if calibration in ranked else 0
                part = mine[mine["calibration"].fillna("") == calibration]
                # equal privacy on the x axis: the true ε where one holds, else the stated one
                finite = np.isfinite(part["true_epsilon"]).all()
                x = "true_epsilon" if finite else "epsilon"
                mean = part.groupby(x)["sup_distance_mean"].mean()
                undefined = (part.groupby(x)["undefined_share_mean"].mean()
                             if "undefined_share_mean" in part
                             else pd.Series(np.nan, index=mean.index))
                label = mechanism_name(mechanism) + ("" if finite else " (at stated ε; no "
                                                                       "finite true ε)")
                if len(ranked) > 1:
                    label += f", {calibration} calibration"
                style = dict(styles[mechanism])
                if n:
                    # open markers over the filled ones: a filled marker at nearly the same
                    # point hid them (larynx, ε = 2: 0.22 against 0.23)
                    style.update(mfc="white", zorder=3)
                series = (mechanism, "" if mechanism == "lnte_grid" else calibration)
                colour = colours.setdefault(
                    series, _QUALITATIVE_COLOURS[len(colours) % len(_QUALITATIVE_COLOURS)])
                line, = ax.plot(mean.index, mean.to_numpy(), label=label, color=colour, **style)
                key.setdefault(label, line)
                shares += [(xv, yv, f"{u:.0%}", colour)
                           for xv, yv, u in zip(mean.index, mean.to_numpy(),
                                                undefined.to_numpy(), strict=True)
                           if np.isfinite(u) and u >= 0.005]
        floor = rows[rows["mechanism"] == "lnte_grid_no_noise"]
        if len(floor):
            # grid LNTE on the exact counts: its binning error alone, the floor of grid LNTE
            label = "Grid LNTE without noise (binning floor)"
            line = ax.axhline(float(floor["sup_distance_mean"].mean()), color="grey", lw=0.8,
                              ls=(0, (1, 2)), label=label)
            key.setdefault(label, line)
        # wrapped to the panel's width: a long cohort title (GBSG2's) ran past the canvas
        ax.set_title(textwrap.fill(f"{titles.get(dataset, dataset)} "
                                   f"({rows['data_origin'].iloc[0]})", 60), fontsize=9)
        ax.set_xlabel("true ε (per patient)")
        ax.set_ylabel("mean sup-distance\nto the original KM", fontsize=9)
        ax.set_ylim(bottom=0)
        ax.margins(x=0.08)
        ax.grid(alpha=0.3)
        labelled.append((ax, shares))
    # the legend's row: as tall as its entries need, as many to a line as fit the width
    # (a 7 pt label is ~0.6 x 7 pt a character, plus its handle), three at most
    widest = max((len(label) for label in key), default=1) * 0.6 * 7 / 72 + 0.7
    per_line = max(1, min(3, len(key), int(0.95 * width // widest)))
    legend_lines = -(-len(key) // per_line)
    legend_height = 0.05 + 0.16 * legend_lines
    grid.set_height_ratios([3.5] * nrows + [legend_height])
    fig.set_size_inches(width, 3.5 * nrows + legend_height)
    below = fig.add_subplot(grid[nrows, :])
    below.axis("off")
    if key:
        below.legend(*_row_major(list(key.values()), list(key), per_line),
                     loc="upper center", ncol=per_line, fontsize=7, frameon=False)
    layout_with_footer(fig, "Averaged over groups and draws; sup over the union of jump times on "
                 "the common support (original at-risk >= "
                 f"{int(utility['support_min_at_risk'].iloc[0])}) where the released curve is "
                 "defined, of the released curve clipped to [0, 1] (worst value 1, also for a "
                 "draw undefined on more than half of it), the "
                 "score of utility.csv and claims.csv; small numbers: mean share of the "
                 "support where the release is undefined (utility.csv). Dotted grey: grid "
                 "LNTE on the exact counts, the binning floor. x: true ε — RRR with the "
                 "paper's calibration is ε + ln(k−1), with the exact one ε (open markers); "
                 "LNTE as published has none and is drawn at its stated ε.")
    # after the layout: the labels' offsets are in points of the laid-out axes
    for ax, shares in labelled:
        _share_labels(ax, shares)
    return fig


#: Font size of the share labels, points, and the least vertical distance between two
#: labels at one ε (each on a white box, so a line passing under a label does not cross it).
_SHARE_SIZE = 6.5
_SHARE_GAP = 9.0


def _share_labels(ax, shares) -> None:
    """Each share label right of its own point, inside the axes; labels at one ε that
    would overlap are moved apart vertically (in order of their points' heights), each
    keeping its series' colour, so every label reads beside the point it belongs to."""
    if not shares:
        return
    to_points = ax.transData + ax.figure.dpi_scale_trans.inverted()
    by_x: dict = {}
    for x, y, text, colour in shares:
        by_x.setdefault(x, []).append((y, text, colour))
    def height(x, y):  # of a data point above the figure's bottom, points
        return to_points.transform((x, y))[1] * 72

    low, high = ax.get_ylim()
    for x, labels in by_x.items():
        bottom, top = height(x, low) + _SHARE_GAP / 2, height(x, high) - _SHARE_GAP / 2
        labels.sort(key=lambda label: label[0])
        previous = None
        for y, text, colour in labels:
            point = height(x, y)
            at = point if previous is None else max(point, previous + _SHARE_GAP)
            previous = at
            ax.annotate(text, (x, y), textcoords="offset points",
                        xytext=(4, min(max(at, bottom), top) - point), fontsize=_SHARE_SIZE,
                        color=colour, va="center", ha="left", annotation_clip=False,
                        bbox={"boxstyle": "round,pad=0.12", "fc": "white", "ec": "none",
                              "alpha": 0.85})


def _published_calibration(table: pd.DataFrame) -> pd.DataFrame:
    """Rows of RRR's first configured calibration (the paper's) and of every other mechanism.

    Figure 2 and the bands show one RRR calibration; the utility figure shows all.
    """
    rrr = table["mechanism"].isin(["rrr", "rrr_debiased"])
    if not rrr.any():
        return table
    first = table.loc[rrr, "calibration"].iloc[0]
    return table[~rrr | (table["calibration"] == first)]


def read_figure_tables(inputs) -> dict[str, pd.DataFrame]:
    """The aggregated tables of a figure rule's ``inputs`` (name -> path), by name.

    Figure 2 and the bands show one RRR calibration (:func:`_published_calibration`)
    of ``curves`` and ``bands``; ``utility`` keeps all. The long text column
    ``privacy_note`` is not read: no figure draws it, and the sidecars rebuild
    the records from the mechanism objects.
    """
    tables = {}
    for name, path in dict(inputs.items()).items():
        header = pd.read_csv(path, nrows=0).columns
        frame = pd.read_csv(path, dtype={"group": str},
                            usecols=[c for c in header if c != "privacy_note"])
        tables[name] = frame if name == "utility" else _published_calibration(frame)
    return tables


def shown_rows(figure: str, tables, dataset: str | None,
               stem: str | None = None) -> list[pd.DataFrame]:
    """The rows of ``tables`` that ``figure`` of ``dataset`` draws (``None``: every dataset).

    The figure's sidecar states the privacy of these rows only: Figure 2 shows
    the curves of one RRR calibration and the private mechanisms' draws
    (not ``lnte_grid_no_noise``), each single-panel file (``stem``
    ``figure2_<d>_<release>``) only its own release; the bands figure its
    bands over the original curves; the utility figure every release.
    """
    def of(frame):
        return frame if dataset is None else frame[frame["dataset"] == dataset]

    if figure == "figure2":
        curves = of(tables["curves"])
        curves = curves[curves["mechanism"].isin(["original", *_RRR_MECHANISMS])]
        release = (stem or "").removeprefix(f"figure2_{dataset}").lstrip("_")
        if not release:
            return [curves]
        # a release name per distinct (mechanism, ε), not per row (a million rows)
        keys = curves[["mechanism", "epsilon"]].drop_duplicates()
        shown = np.zeros(len(curves), dtype=bool)
        for mechanism, epsilon in keys.itertuples(index=False):
            if _release_name(mechanism, None if mechanism == "original" else epsilon) == release:
                eps = curves["epsilon"]
                same = eps.isna() if pd.isna(epsilon) else eps == epsilon
                shown |= ((curves["mechanism"] == mechanism) & same).to_numpy()
        return [curves[shown]]
    if figure == "km_bands":
        curves = of(tables["curves"])
        return [of(tables["bands"]), curves[curves["mechanism"] == "original"]]
    return [of(tables["utility"])]


def rrr_figure2_figures(tables, *, datasets, epsilons, cohorts, **_):
    """Figure 2 of every cohort: yields ``(dataset, stem, figure)``, ``figure2_<d>`` then its
    panels ``figure2_<d>_<release>`` (one at a time, so each is saved and closed before the
    next)."""
    curves = tables["curves"]
    for dataset in datasets:
        cohort = {"title": cohorts[dataset]["title"], "time_unit": cohorts[dataset]["time_unit"],
                  "ordered": cohorts[dataset].get("ordered", True),
                  "endpoint": cohorts[dataset].get("endpoint", "")}
        fig, panels = rrr_figure2(
            curves, dataset=dataset, epsilons=epsilons,
            rows_per_person=cohorts[dataset].get("rows_per_person", 1), panels=True,
            **cohort)
        # the composite, then each panel cropped from its drawing (no new figures)
        yield dataset, f"figure2_{dataset}", Part(fig)
        for name, part in panels.items():
            yield dataset, f"figure2_{dataset}_{name}", part
        for strip in {id(part.strip): part.strip for part in panels.values()}.values():
            plt.close(strip)
        plt.close(fig)


def rrr_band_figures(tables, *, datasets, epsilons, cohorts, **_):
    """Yields ``(dataset, km_bands_<d>, figure)`` for every cohort."""
    for d in datasets:
        yield d, f"km_bands_{d}", rrr_bands(tables["bands"], tables["curves"], dataset=d,
                                            epsilons=epsilons, title=cohorts[d]["title"],
                                            time_unit=cohorts[d]["time_unit"],
                                            ordered=cohorts[d].get("ordered", True),
                                            endpoint=cohorts[d].get("endpoint", ""))


def rrr_utility_figures(tables, *, cohorts, **_):
    """Yields ``(None, "utility", figure)``: one panel per cohort (``None``: every dataset)."""
    yield None, "utility", rrr_utility(tables["utility"],
                                       titles={d: c["title"] for d, c in cohorts.items()})


#: Figure rule of rrr_survival -> the function that draws its files from
#: :func:`read_figure_tables`, yielding ``(dataset, stem, figure)``.
RRR_FIGURES = {"figure2": rrr_figure2_figures, "km_bands": rrr_band_figures,
               "utility": rrr_utility_figures}
