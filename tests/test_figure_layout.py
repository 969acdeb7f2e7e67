"""Figures fit for a paper: Figure 2's shared scales, clipped values marked, one y label a
row, its numbers-at-risk table under panel (a), text of at least 9 pt; mechanisms named in
words on every legend; the privacy audit's rows told apart by their ε or α."""

import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import yaml
from matplotlib.text import Text

from dprepro.audit import figure as audit_figure
from dprepro.config.schema import fill_defaults, load_schema
from dprepro.mechanisms.identity import IDENTITIES, mechanism_name
from dprepro.studies.ldp_indicators import figures as ldp_figures
from dprepro.studies.ldp_indicators.simulation import estimators
from dprepro.studies.rrr_survival import figure2_parts, panel_scale
from dprepro.studies.rrr_survival import figures as rrr_figures

ROOT = Path(__file__).resolve().parents[1]
EPSILONS = [1.0, 2.0, 3.0]
#: a raw identifier (``randomized_response``, ``lnte_grid``) or a bracketed one, outside
#: mathtext (``$\hat F_n$`` is a symbol, not an identifier)
_RAW = re.compile(r"[A-Za-z]+_[A-Za-z]|\[|\]")


class _IDENTIFIER:  # noqa: N801 - read like the pattern it wraps
    @staticmethod
    def search(text: str):
        return _RAW.search(re.sub(r"\$[^$]*\$", "", text))


def _default_dpi() -> int:
    """The quick default's dpi, its schema default filled in."""
    with open(ROOT / "config" / "config.yaml") as handle:
        config = yaml.safe_load(handle)
    schema = load_schema(ROOT / "workflow" / "schemas" / "config.schema.yaml")
    return int(fill_defaults(config, schema)["figures"]["dpi"])


def _curves() -> pd.DataFrame:
    """A small Figure 2 table: three groups; debiased RRR above 1 and below 0 at ε = 1; grid
    LNTE at ε = 1 ending at t = 9 where the others run to 20."""
    rows = []
    t = np.arange(0.0, 21.0)

    def add(mechanism, epsilon, group, times, survival, **extra):
        for ti, si in zip(times, survival, strict=True):
            rows.append({"dataset": "d", "data_origin": "real", "mechanism": mechanism,
                         "epsilon": epsilon, "true_epsilon": np.nan if epsilon is None
                         else epsilon + 1.0, "calibration": "paper", "group": group,
                         "t": ti, "survival": si, **extra})

    groups = {"low": 0.05, "mid": 0.1, "high_risk": 0.2}
    for g, rate in groups.items():
        survival = np.exp(-rate * t)
        for i, (ti, si) in enumerate(zip(t, survival, strict=True)):
            add("original", None, g, [ti], [si], at_risk=int(40 * si) + 1,
                censored=int(i % 4 == 0))
        for mechanism in ("rrr", "rrr_debiased", "lnte", "lnte_grid"):
            for eps in EPSILONS:
                values = np.exp(-rate * t * (1 + 0.1 * eps))
                times = t
                if mechanism == "rrr_debiased" and eps == 1.0 and g == "mid":
                    values = values.copy()
                    values[2], values[15] = 1.3, -0.2
                if mechanism == "lnte_grid" and eps == 1.0:
                    times, values = t[:10], values[:10]
                add(mechanism, eps, g, times, values)
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def figure2():
    fig, parts = rrr_figures.rrr_figure2(_curves(), dataset="d", epsilons=EPSILONS,
                                         title="toy", endpoint="time to toy event",
                                         panels=True)
    yield fig, parts
    for part in {id(p.strip): p.strip for p in parts.values()}.values():
        plt.close(part)
    plt.close(fig)


def _panels(fig):
    """Figure 2's panels by row (top first), left to right: the axes with a lettered title."""
    panels = [ax for ax in fig.axes if re.match(r"\([a-z]\) ", ax.get_title())]
    rows = {}
    for ax in panels:
        rows.setdefault(round(ax.get_position().y0, 3), []).append(ax)
    return [sorted(row, key=lambda ax: ax.get_position().x0)
            for _, row in sorted(rows.items(), reverse=True)]


def _at_risk_axes(fig):
    return next(ax for ax in fig.axes if "at risk" in ax.get_title())


def test_figure2_rows_share_one_y_range_and_every_panel_one_time_range(figure2):
    """Grid LNTE's panel at ε = 1 spanned 0-9 months against 0-20, and each panel had its
    own y range: now every panel of a row has the row's y limits (here [0, 1] with a margin in
    every row) and every panel the same time range, whatever its own curves span."""
    fig, _ = figure2
    rows = _panels(fig)
    assert [len(row) for row in rows] == [4, 3, 3, 3]  # (a) + RRR, debiased RRR, LNTE, grid
    for row in rows:
        assert len({ax.get_ylim() for ax in row}) == 1
    assert {row[0].get_ylim() for row in rows} == {panel_scale.y_limits()}
    limits = {ax.get_xlim() for row in rows for ax in row}
    assert len(limits) == 1
    low, high = limits.pop()
    assert low < 0 and high > 20
    grid = next(ax for row in rows for ax in row if ax.get_title().startswith("(k) Grid LNTE"))
    assert grid.get_xlim() == rows[0][0].get_xlim()


def test_figure2_marks_values_cut_at_the_edge_with_their_value(figure2):
    """Debiased RRR's 1.3 and -0.2 lie outside the row's range: each is cut at the edge and
    marked there (▲ above, ▼ below) with its value; a panel within the range has no mark."""
    fig, _ = figure2
    debiased = next(ax for ax in fig.axes if ax.get_title().startswith("(e) Debiased RRR ε = 1"))
    texts = {t.get_text() for t in debiased.texts}
    assert {"1.30", "-0.20"} <= texts
    markers = {line.get_marker() for line in debiased.get_lines()}
    assert {"^", "v"} <= markers
    calm = next(ax for ax in fig.axes if ax.get_title().startswith("(f) Debiased RRR ε = 2"))
    assert not calm.texts and not {"^", "v"} & {line.get_marker() for line in calm.get_lines()}


def test_figure2_has_one_y_label_a_row_on_its_first_panel(figure2):
    fig, _ = figure2
    for row in _panels(fig):
        labels = [ax.get_ylabel() for ax in row]
        assert labels[0] == "event-free probability\n(time to toy event)"
        assert all(label == "" for label in labels[1:])
    assert sum(bool(ax.get_ylabel()) for ax in fig.axes) == 4  # one per row


def test_figure2_numbers_at_risk_sit_directly_under_panel_a_on_its_x_axis(figure2):
    """The table was a panel of its own a row below (a), its columns under a header of
    times; it now sits right under (a)'s time label, as wide as (a), on (a)'s x axis."""
    fig, parts = figure2
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    panel_a = _panels(fig)[0][0]
    risk = _at_risk_axes(fig)
    assert risk.get_title() == "numbers at risk (original)"
    assert risk.get_shared_x_axes().joined(risk, panel_a)
    assert risk.get_xlim() == panel_a.get_xlim()
    a, r = panel_a.get_position(), risk.get_position()
    assert a.x0 == pytest.approx(r.x0) and a.x1 == pytest.approx(r.x1)
    # under everything drawn with (a), and less than half an inch below it (title included)
    a_bottom = panel_a.get_tightbbox(renderer).y0
    r_top = risk.get_tightbbox(renderer).y1
    assert r_top <= a_bottom + 1
    assert (a_bottom - r_top) / fig.dpi < 0.5
    # no other panel lies between them: the table is the next thing under (a)
    assert not any(ax.get_position().x0 < a.x1 and r.y1 < ax.get_position().y0 < a.y0
                   for ax in fig.axes if ax not in (panel_a, risk))
    # a row of times, then a count per group, under each of (a)'s visible ticks, at the
    # tick's x in (a)'s data; each row named on the left
    low, high = panel_a.get_xlim()
    ticks = [t for t in panel_a.get_xticks() if low <= t <= high]
    rows = {}
    for t in risk.texts:
        rows.setdefault(round(t.get_position()[1], 6), []).append(t)
    assert len(rows) == 1 + 3
    top, *groups = [rows[y] for y in sorted(rows, reverse=True)]
    assert [t.get_text() for t in top] == ["months", *(f"{tick:g}" for tick in ticks)]
    assert [row[0].get_text() for row in groups] == ["low", "mid", "high_risk"]
    counts = [t for row in groups for t in row[1:]]
    assert all(t.get_text().isdigit() for t in counts)
    assert len(counts) == 3 * len(ticks)
    assert sorted({t.get_position()[0] for t in counts}) == ticks
    to_pixels = panel_a.transData.transform
    for t in counts + top[1:]:
        centre = t.get_window_extent(renderer).intervalx.mean()
        assert centre == pytest.approx(to_pixels((t.get_position()[0], 0))[0], abs=1.5)
    # the original's own file crops (a) with its table
    assert parts["original"].axes == [panel_a, risk]


def _texts(fig):
    """Every visible, non-empty text drawn in ``fig``."""
    return [t for t in fig.findobj(Text)
            if t.get_visible() and t.get_text().strip() and (t.get_alpha() is None
                                                             or t.get_alpha() > 0)]


def test_figure2_text_is_at_least_9_pt_at_the_default_dpi(figure2):
    """Text was 6-8 pt (about 8-11 px at 100 dpi); every text of Figure 2 and of its panels'
    strips is now at least 9 pt, at least 12.5 px tall at the workflow's default dpi."""
    fig, parts = figure2
    dpi = _default_dpi()
    strips = {id(p.strip): p.strip for p in parts.values()}.values()
    for figure in (fig, *strips):
        figure.set_dpi(dpi)
        figure.canvas.draw()
        renderer = figure.canvas.get_renderer()
        texts = _texts(figure)
        assert texts
        small = [(t.get_text(), t.get_fontsize()) for t in texts if t.get_fontsize() < 9]
        assert not small
        # drawn at this dpi, every text is at least a line of 9 pt tall (in pixels)
        heights = [t.get_window_extent(renderer).height for t in texts]
        assert min(heights) >= 9 * dpi / 72 * 0.95


def _legend_texts(fig):
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]
    return [t.get_text() for legend in legends for t in legend.get_texts()]


def test_figure2_legends_and_titles_name_mechanisms_in_words(figure2):
    fig, parts = figure2
    titles = [ax.get_title() for row in _panels(fig) for ax in row]
    assert any(t.startswith("(k) Grid LNTE") for t in titles)
    assert any(t.startswith("(e) Debiased RRR") for t in titles)
    for title in titles:
        assert not _IDENTIFIER.search(title.replace("high_risk", "")), title
    strips = {id(p.strip): p.strip for p in parts.values()}.values()
    for figure in (fig, *strips):
        assert not any(_IDENTIFIER.search(t) for t in _legend_texts(figure)
                       if t != "high_risk")  # a group's own name is the data's


def _mse(mechanisms=("laplace_indicators", "randomized_response")):
    rows = []
    for censoring in ("25", "50"):
        for alpha in (0.5, 1.0):
            for t in np.linspace(0.1, 1.5, 5):
                for name in estimators("cdf"):
                    private = name == estimators("cdf")[0]
                    for mechanism in (mechanisms if private else ("none",)):
                        rows.append({"censoring": censoring, "estimator": name,
                                     "mechanism": mechanism, "alpha": alpha if private
                                     else np.nan, "t": t, "mse": 0.01 * t / alpha,
                                     "mse_se": 0.001, "x": 0.5, "n": 300, "n_reps": 20})
    return pd.DataFrame(rows)


def test_ldp_figure1_legend_names_each_mechanism_in_words():
    """Figure 1's legend printed ``[randomized_response]``; now each private curve names its
    mechanism in words, Laplace's too (it was the unmarked one)."""
    fig = ldp_figures.ldp_figure1(_mse(), alphas=[0.5, 1.0], log_scale=True)
    texts = _legend_texts(fig)
    assert texts and not any(_IDENTIFIER.search(t) for t in texts), texts
    assert any(t.endswith(", Randomized response") for t in texts)
    assert any(t.endswith(", Laplace indicators") for t in texts)
    plt.close(fig)


def test_ldp_mse_vs_n_legend_names_mechanism_and_alpha_without_brackets():
    rows, rates = [], []
    for mechanism in ("laplace_indicators", "randomized_response"):
        for alpha in (0.5, 1.0):
            for n in (100, 200, 400):
                rows.append({"mechanism": mechanism, "alpha": alpha,
                             "estimator": estimators("cdf")[0], "n": n, "imse": 1 / n,
                             "imse_se": 0.1 / n, "censoring": "25", "n_reps": 10})
            rates.append({"estimator": estimators("cdf")[0], "mechanism": mechanism,
                          "alpha": alpha, "slope": -0.9, "slope_ci_lower": -1.1,
                          "slope_ci_upper": -0.7})
    fig = ldp_figures.ldp_mse_vs_n(pd.DataFrame(rows), pd.DataFrame(rates))
    texts = _legend_texts(fig)
    assert len(texts) == 4 and not any(_IDENTIFIER.search(t) for t in texts), texts
    assert any("Laplace indicators (α = 0.5)" in t for t in texts)
    assert any("Randomized response (α = 1)" in t for t in texts)
    plt.close(fig)


def test_rrr_utility_legend_names_mechanisms_and_calibrations_in_words():
    rows = []
    for mechanism, calibration, finite in [("rrr", "paper", True), ("rrr", "exact", True),
                                           ("rrr_debiased", "paper", True),
                                           ("lnte", "", False), ("lnte_grid", "g", True)]:
        for eps in (1.0, 2.0):
            rows.append({"dataset": "d", "data_origin": "real", "mechanism": mechanism,
                         "epsilon": eps, "calibration": calibration,
                         "true_epsilon": eps if finite else np.inf,
                         "sup_distance_mean": 0.1 / eps, "support_min_at_risk": 5})
    fig = rrr_figures.rrr_utility(pd.DataFrame(rows))
    texts = _legend_texts(fig)
    assert not any(_IDENTIFIER.search(t) for t in texts), texts
    assert "Revised randomized response (RRR), paper calibration" in texts
    assert {"Debiased RRR", "Grid LNTE"} <= set(texts)
    plt.close(fig)


def _audit():
    rows = [("laplace_indicators", "scale 1/alpha", "published", a, a) for a in (0.2, 0.3, 0.4)]
    rows += [("laplace_indicators", "scale 1.66667", "control", 0.3, 0.6)]
    rows += [("rrr", "calibration=paper, k=5", "published", e, e + np.log(4)) for e in (1, 2)]
    rows += [("randomized_response", "as run", "published", 0.2, 0.2)]
    rows += [("objective_perturbation", "cms11, gamma_scale=0.4", "control", 1.0, np.nan)]
    return pd.DataFrame([{"mechanism": m, "variant": v, "role": r, "claimed_epsilon": c,
                          "true_epsilon": t, "empirical_epsilon_lower_bound": 0.9 * c,
                          "level": 1e-9, "verdict": "consistent"} for m, v, r, c, t in rows])


def test_audit_rows_are_told_apart_by_their_epsilon_or_alpha():
    """Three rows read "laplace_indicators: scale 1/alpha [published]": each row now names
    its mechanism in words and its claimed α (the local mechanisms on indicators) or ε."""
    fig = audit_figure.privacy_audit(_audit())
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == 8 and len(set(labels)) == 8
    assert all(("ε = " in label) != ("α = " in label) for label in labels)
    assert "Laplace indicators, scale 1/α, α = 0.2 (published)" in labels
    assert "Revised randomized response (RRR), calibration = paper, k = 5, ε = 2 (published)" \
        in labels
    assert "Randomized response, as run, α = 0.2 (published)" in labels
    assert not any(_IDENTIFIER.search(label) for label in labels), labels
    assert min(t.get_fontsize() for t in ax.get_yticklabels()) >= 9
    assert not any(_IDENTIFIER.search(t) for t in _legend_texts(fig))
    plt.close(fig)


def test_mechanism_names_are_words():
    assert mechanism_name("randomized_response") == "Randomized response"
    assert mechanism_name("rrr") == "Revised randomized response (RRR)"
    assert mechanism_name("rrr", short=True) == "RRR"
    assert mechanism_name("lnte_grid") == "Grid LNTE"
    assert mechanism_name("laplace_indicators_scale0.25") == \
        "Laplace indicators (noise scale × 0.25)"
    assert mechanism_name("some_new_mechanism") == "Some new mechanism"
    for entry in IDENTITIES.values():
        words = entry.display_name + entry.short_name
        assert "_" not in words and "[" not in words, entry.name


def _key_axes(fig):
    """The key under panel (a): the axes whose legend is the groups' (title "group") and
    that is not a lettered panel."""
    return [ax for ax in fig.axes if ax.get_legend() is not None
            and ax.get_legend().get_title().get_text() == "group"
            and not re.match(r"\([a-z]\) ", ax.get_title())]


def test_figure2_key_fills_the_column_under_panel_a(figure2):
    """The column under panel (a) was empty below its at-risk table: it now holds the key,
    the groups' legend (no longer over (a)'s curves) and how to read the panels, within
    the column and between the table and the bottom row; the original's own file keeps
    the legend in its strip."""
    fig, parts = figure2
    fig.canvas.draw()
    (key,) = _key_axes(fig)
    panel_a, risk = _panels(fig)[0][0], _at_risk_axes(fig)
    assert panel_a.get_legend() is None
    assert [t.get_text() for t in key.get_legend().get_texts()] == ["low", "mid", "high_risk"]
    notes = " ".join(t.get_text() for t in key.texts).replace("\n", " ")
    assert "a group left with no curve is named in its panel" in notes
    assert "marked ▲ (above) or ▼ (below)" in notes
    k, a, r = key.get_position(), panel_a.get_position(), risk.get_position()
    bottom_row = _panels(fig)[-1]
    assert k.x1 <= a.x1 + 1e-9 and k.y1 <= r.y0 and k.y0 == pytest.approx(
        bottom_row[0].get_position().y0)
    # everything the key draws lies inside its box (nothing runs into the panels)
    renderer = fig.canvas.get_renderer()
    box = key.get_window_extent(renderer)
    for artist in [key.get_legend(), *key.texts]:
        extent = artist.get_window_extent(renderer)
        assert extent.x1 <= box.x1 + 1 and extent.y0 >= box.y0 - 1, artist
    strip = parts["original"].strip
    assert [t.get_text() for legend in strip.legends for t in legend.get_texts()] == [
        "low", "mid", "high_risk"]


def test_figure2_without_room_under_a_keeps_the_legend_in_a_and_the_notes_below():
    """Two rows of panels leave too little room under (a) for the key: the legend stays in
    (a) and the notes go to the footer, so nothing is cut or overlaps."""
    curves = _curves()
    curves = curves[curves["mechanism"].isin(["original", "rrr", "lnte"])]
    fig = rrr_figures.rrr_figure2(curves, dataset="d", epsilons=EPSILONS, title="toy")
    assert _key_axes(fig) == []
    assert _panels(fig)[0][0].get_legend() is not None
    footer = fig.get_supxlabel().replace("\n", " ")
    assert "a group left with no curve is named in its panel" in footer
    plt.close(fig)


def test_figure2_names_a_group_whose_released_curve_draws_nothing():
    """Kidney's grid LNTE at ε = 1 drew no PKD curve (its noisy count at risk fell below 1
    after t = 0) and nothing said so: such a group is now named in its panel, with the
    time from which its curve is undefined; a curve that stops later is drawn as it is."""
    curves = _curves()
    vanished = ((curves["mechanism"] == "lnte_grid") & (curves["epsilon"] == 2.0)
                & (curves["group"] == "mid") & (curves["t"] > 0))
    curves.loc[vanished, "survival"] = np.nan
    fig = rrr_figures.rrr_figure2(curves, dataset="d", epsilons=EPSILONS, title="toy")
    notes = {ax.get_title().split(")")[0] + ")": [t.get_text() for t in ax.texts]
             for row in _panels(fig) for ax in row}
    assert notes["(l)"] == ["mid: no curve (undefined from t = 1)"]
    # grid LNTE at ε = 1 stops at t = 9 but is drawn: no note
    assert not any("no curve" in text for panel, texts in notes.items() if panel != "(l)"
                   for text in texts)
    plt.close(fig)


def test_not_drawn_finds_the_groups_with_fewer_than_two_defined_points():
    rows = pd.DataFrame({
        "group": ["a"] * 3 + ["b"] * 3 + ["c"] * 3,
        "t": [0.0, 1.0, 2.0] * 3,
        "survival": [1.0, np.nan, np.nan, np.nan, np.nan, np.nan, 1.0, 0.5, np.nan]})
    assert figure2_parts.not_drawn(rows, ["a", "b", "c", "d"]) == {"a": 1.0, "b": None,
                                                                   "d": None}


def test_audit_figure_prints_the_transpose_the_confidence_and_every_marker_whole():
    """The audit figure printed ``X^T y``, "level 1e-09" and cut the marker of a bound of 0
    at its left edge; its legend covered the last rows."""
    table = pd.concat([_audit(), pd.DataFrame([{
        "mechanism": "ssp", "variant": "X^T y + Laplace", "role": "published",
        "claimed_epsilon": 0.5, "true_epsilon": 0.5, "empirical_epsilon_lower_bound": 0.0,
        "level": 1e-9, "verdict": "consistent"}])], ignore_index=True)
    fig = audit_figure.privacy_audit(table)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert any("Xᵀy + Laplace" in label for label in labels)
    assert not any("^T" in label for label in labels)
    texts = [t.get_text().replace("\n", " ") for t in fig.texts]
    assert any("confidence 1 − 10⁻⁹" in t for t in texts) and not any("1e-09" in t for t in texts)
    assert audit_figure.confidence_text(0.05) == "0.95"
    # a marker at 0 lies wholly inside the axes: the axis starts left of 0
    fig.canvas.draw()
    left = ax.transData.transform((0, 0))[0] - ax.get_window_extent().x0
    assert left >= 4  # points of a default marker's radius, at the figure's dpi (≥ 72)
    assert ax.get_legend() is None and fig.legends
    plt.close(fig)
