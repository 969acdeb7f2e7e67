"""rrr_survival figures: print-readable palette, utility grid, sidecar records, fast saving."""

import numpy as np
import pandas as pd
import pytest

from dprepro.figures.style import save_figure
from dprepro.studies.rrr_survival import figures as plots_rrr
from dprepro.studies.rrr_survival.releases import records_from_tables


def _contrast_with_white(rgba) -> float:
    """WCAG contrast ratio of a colour against white (1 = invisible, 21 = black)."""
    c = np.asarray(rgba[:3], dtype=float)
    c = np.where(c <= 0.03928, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    luminance = 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]
    return 1.05 / (luminance + 0.05)


@pytest.mark.parametrize("k", [2, 3, 4, 5, 8])
def test_ordered_palette_has_no_pale_colour(k):
    """Every group colour stands out from white paper (3:1, WCAG's bar for graphics);
    viridis' end (the former palette's last colour, a pale lime) does not."""
    colors = plots_rrr._group_colors([f"g{i}" for i in range(k)], ordered=True)
    assert len(set(colors.values())) == k
    assert min(_contrast_with_white(c) for c in colors.values()) >= 3.0
    import matplotlib.colors as mcolors

    # unordered groups (kidney, veteran) too: tab10's orange, pink, olive and cyan were not
    unordered = plots_rrr._group_colors([f"g{i}" for i in range(k)], ordered=False)
    assert len(set(unordered.values())) == k
    assert min(_contrast_with_white(mcolors.to_rgba(c)) for c in unordered.values()) >= 3.0
    import matplotlib.pyplot as plt
    assert _contrast_with_white(plt.get_cmap("viridis")(0.85)) < 3.0


@pytest.mark.parametrize("k", [3, 4, 5])
def test_ordered_palettes_first_two_colours_are_distinct(k):
    """Larynx I and II (plasma 0 and 0.2: navy, indigo) were hard to tell apart: the
    first two colours now differ by at least 30 in CIE76 ΔE (L*a*b*), and by half as
    much again as with the former equal spacing."""
    colors = list(plots_rrr._group_colors([f"g{i}" for i in range(k)], ordered=True).values())
    first, second = (_lab(c) for c in colors[:2])
    import matplotlib.pyplot as plt

    plasma = plt.get_cmap("plasma")
    old = np.linalg.norm(_lab(plasma(0.0)) - _lab(plasma(0.6 / (k - 1))))
    assert np.linalg.norm(first - second) > max(30, 1.5 * old)


@pytest.mark.parametrize("k", [2, 3, 4, 5, 6, 8])
def test_ordered_palette_neighbours_are_equally_and_far_apart(k):
    """Referee 5: IPSS-R's High and Very High were the closest pair (ΔE 21 against 31-32).
    Neighbours now differ by as much as the palette allows, all about equally: at least
    30 for up to five groups (IPSS-R's), within 10 % of each other."""
    colors = list(plots_rrr._group_colors([f"g{i}" for i in range(k)], ordered=True).values())
    gaps = [np.linalg.norm(_lab(a) - _lab(b)) for a, b in zip(colors, colors[1:], strict=False)]
    assert max(gaps) <= 1.1 * min(gaps)
    if k <= 5:
        assert min(gaps) >= 30
    # the library's L*a*b* is the test's (the standard formulas, written twice)
    np.testing.assert_allclose(plots_rrr._cielab(np.array([c[:3] for c in colors])),
                               np.array([_lab(c) for c in colors]), atol=1e-9)


def test_no_group_gets_no_colour():
    assert plots_rrr._group_colors([], ordered=True) == {}
    assert plots_rrr._group_colors([], ordered=False) == {}


def _lab(rgba) -> np.ndarray:
    """CIE L*a*b* (D65) of an sRGB colour (the standard formulas)."""
    c = np.asarray(rgba[:3], dtype=float)
    c = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722],
                    [0.0193, 0.1192, 0.9505]]) @ c / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def _utility(datasets):
    rows = []
    for d in datasets:
        for mechanism, eps in [("rrr", 1.0), ("rrr", 2.0), ("lnte_grid", 1.0), ("lnte_grid", 2.0)]:
            rows.append({"dataset": d, "data_origin": "real", "mechanism": mechanism,
                         "epsilon": eps, "calibration": "paper" if mechanism == "rrr" else "g",
                         "true_epsilon": eps + 0.5, "sup_distance_mean": 0.1 / eps,
                         "support_min_at_risk": 5})
    return pd.DataFrame(rows)


def test_utility_figure_is_a_grid_not_one_row():
    import matplotlib.pyplot as plt

    fig = plots_rrr.rrr_utility(_utility([f"d{i}" for i in range(6)]))
    drawn = [ax for ax in fig.axes if ax.axison]
    assert len(drawn) == 6
    columns = {round(ax.get_position().x0, 3) for ax in drawn}
    rows = {round(ax.get_position().y0, 3) for ax in drawn}
    assert len(columns) == 3 and len(rows) == 2
    width, height = fig.get_size_inches()
    assert width / height < 2.5  # one row of six was 7.7 : 1
    plt.close(fig)


def test_utility_figure_has_one_legend_below_the_panels_and_one_colour_per_series():
    """Referee 6: a legend in each panel covered points. One legend under the grid now; a
    series keeps its colour in every panel, also in a panel that lacks an earlier series
    or names its grid differently (grid LNTE's calibration is each cohort's own grid)."""
    import matplotlib.pyplot as plt

    table = _utility([f"d{i}" for i in range(4)])
    table.loc[(table["dataset"] == "d1") & (table["mechanism"] == "rrr"), "mechanism"] = "drop"
    table = table[table["mechanism"] != "drop"]
    # two RRR calibrations, listed in opposite orders in d2 and d3: each keeps its colour
    exact = table[(table["mechanism"] == "rrr") & table["dataset"].isin(["d2", "d3"])]
    exact = exact.assign(calibration="exact", true_epsilon=exact["epsilon"])
    d3 = table["dataset"] == "d3"
    table = pd.concat([table[~d3], exact[exact["dataset"] == "d3"], table[d3],
                       exact[exact["dataset"] == "d2"]], ignore_index=True)
    grid = table["mechanism"] == "lnte_grid"
    table.loc[grid, "calibration"] = "grid=" + table.loc[grid, "dataset"]
    table["undefined_share_mean"] = 0.25
    fig = plots_rrr.rrr_utility(table)
    fig.canvas.draw()
    panels = [ax for ax in fig.axes if ax.axison]
    assert len(panels) == 4 and all(ax.get_legend() is None for ax in panels)
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    assert len(legends) == 1
    texts = [t.get_text() for t in legends[0].get_texts()]
    assert len(texts) == len(set(texts)) == 3  # two RRR calibrations, grid LNTE: once each
    renderer = fig.canvas.get_renderer()
    top = legends[0].get_window_extent(renderer).y1
    assert all(top < ax.get_window_extent(renderer).y0 for ax in panels)
    colour = {}
    for ax in panels:
        for line in ax.get_lines():
            colour.setdefault(line.get_label(), set()).add(line.get_color())
    assert all(len(c) == 1 for c in colour.values()) and len(colour) == 3
    assert len({c for cs in colour.values() for c in cs}) == 3
    import matplotlib.colors as mcolors

    # every series colour (and so its share labels) reads on white paper (3:1)
    palette = plots_rrr._QUALITATIVE_COLOURS
    assert min(_contrast_with_white(mcolors.to_rgba(c)) for c in palette) >= 3
    drawn = {c for name, cs in colour.items() if "grid LNTE" not in name for c in cs}
    assert drawn <= set(plots_rrr._QUALITATIVE_COLOURS)
    # the share labels: readable size, on a white box, in their series' colour
    shares = [t for ax in panels for t in ax.texts if t.get_text() == "25%"]
    # two series at two ε a panel (d1 one, d2 and d3 three)
    assert len(shares) == (2 + 1 + 3 + 3) * 2
    assert all(t.get_fontsize() >= 6 and t.get_bbox_patch().get_facecolor()[:3] == (1, 1, 1)
               for t in shares)
    plt.close(fig)


def _curves():
    rows = []
    for mechanism, eps, calibration in [("original", np.nan, ""), ("rrr", 1.0, "paper"),
                                        ("rrr", 1.0, "exact"), ("rrr_debiased", 1.0, "paper"),
                                        ("rrr_debiased", 1.0, "exact"),
                                        ("lnte_grid", 1.0, "grid=20,rows=1")]:
        for group in ("a", "b"):
            rows.append({"dataset": "d", "data_origin": "real", "mechanism": mechanism,
                         "epsilon": eps, "calibration": calibration, "privacy_unit": "patient",
                         "group": group, "t": 0.0, "survival": 1.0})
    return pd.DataFrame(rows)


def test_figure2_sidecar_records_are_those_the_figure_draws(tmp_path):
    """Figure 2 shows the first RRR calibration only: its sidecar lists no exact record."""
    path = tmp_path / "km_curves.csv"
    _curves().assign(privacy_note="x").to_csv(path, index=False)
    tables = plots_rrr.read_figure_tables({"curves": path})
    assert "privacy_note" not in tables["curves"]
    records = records_from_tables(plots_rrr.shown_rows("figure2", tables, "d"))
    calibrations = {(r.mechanism, r.extra.get("calibration")) for r in records}
    assert ("rrr", "paper") in calibrations and ("rrr_debiased", "paper") in calibrations
    assert not any(c == "exact" for _, c in calibrations)
    # the table itself holds both (the utility figure, which draws every row, lists both)
    every = records_from_tables([pd.read_csv(path)])
    assert any(r.extra.get("calibration") == "exact" for r in every)


def test_figure2_panel_sidecars_list_only_their_own_release(tmp_path):
    """A single-panel file states the privacy of the release it draws, not the 14 of the
    composite; neither lists lnte_grid_no_noise, which no panel draws."""
    path = tmp_path / "km_curves.csv"
    frame = _curves()
    extra = frame[frame["mechanism"] == "original"].assign(mechanism="lnte_grid_no_noise",
                                                            calibration="grid=20,rows=1")
    pd.concat([frame, extra]).to_csv(path, index=False)
    tables = plots_rrr.read_figure_tables({"curves": path})
    composite = plots_rrr.shown_rows("figure2", tables, "d", stem="figure2_d")[0]
    assert "lnte_grid_no_noise" not in set(composite["mechanism"])
    panel = plots_rrr.shown_rows("figure2", tables, "d", stem="figure2_d_rrr_eps1")[0]
    assert set(panel["mechanism"]) == {"rrr"} and set(panel["epsilon"]) == {1.0}
    original = plots_rrr.shown_rows("figure2", tables, "d", stem="figure2_d_original")[0]
    assert set(original["mechanism"]) == {"original"}


def test_panel_sidecar_note_says_why_a_private_panel_is_not_a_release():
    """Referee 5: a Figure 2 panel of one private release said it "holds or compares with
    the original data". It is still no release (its job reads the original curves), and
    now says so; a file that draws the original keeps the original's note."""
    from dprepro.studies.rrr_survival.releases import table_privacy

    frame = _curves()
    private = records_from_tables([frame[frame["mechanism"] == "rrr"]])
    with_original = records_from_tables([frame[frame["mechanism"].isin(["original", "rrr"])]])
    panel = table_privacy(private, compares_with_original=False, job_reads_original=True)
    assert panel["release"] is False
    assert panel["note"].startswith("not flagged as a release: drawn by a job that also "
                                    "reads the original data")
    assert "holds or compares" not in panel["note"]
    assert {r["mechanism"] for r in panel["records"]} == {"rrr"}
    composite = table_privacy(with_original, compares_with_original=True,
                              job_reads_original=True)
    assert composite["release"] is False and "holds or compares" in composite["note"]
    assert table_privacy(private)["release"] is True
    bands = table_privacy(private, job_reads_original=True, draws=100)
    assert bands["release"] is False and "compose to 100·ε" in bands["note"]


def test_saved_png_is_the_tight_crop_matplotlib_would_write(tmp_path):
    """One Agg drawing, cropped, gives the picture ``savefig(bbox_inches="tight")`` gives."""
    import matplotlib.pyplot as plt
    from PIL import Image

    def figure():
        fig, ax = plt.subplots(figsize=(4, 3))
        ax.step([0, 1, 2], [1, 0.6, 0.3], where="post")
        ax.set_title("(a) original")
        fig.text(0.01, 0.005, "footer " * 12, fontsize=7)
        return fig

    save_figure(figure(), [tmp_path / "fast.pdf", tmp_path / "fast.png"], dpi=100)
    reference = figure()
    reference.savefig(tmp_path / "tight.png", dpi=100, bbox_inches="tight")
    plt.close(reference)
    fast = np.asarray(Image.open(tmp_path / "fast.png").convert("RGB"), dtype=float)
    tight = np.asarray(Image.open(tmp_path / "tight.png").convert("RGB"), dtype=float)
    assert abs(fast.shape[0] - tight.shape[0]) <= 1 and abs(fast.shape[1] - tight.shape[1]) <= 1
    h, w = min(fast.shape[0], tight.shape[0]), min(fast.shape[1], tight.shape[1])
    # the same drawing up to a one-pixel shift of the crop
    assert np.mean(np.abs(fast[:h, :w] - tight[:h, :w]) > 64) < 0.05
    assert (tmp_path / "fast.pdf").read_bytes()[:5] == b"%PDF-"


def test_a_panel_part_is_the_crop_of_the_composite_drawing_over_its_strip(tmp_path):
    """A panel file holds the very pixels of its panel in the composite's file (one drawing
    for all), its strip stacked under it; the composite is drawn once, not once per panel."""
    import matplotlib.pyplot as plt
    from PIL import Image

    from dprepro.figures.style import Part

    fig, axes = plt.subplots(2, 2, figsize=(6, 5))
    for i, ax in enumerate(axes.ravel()):
        ax.plot([0, 1], [i, i + 1])
        ax.set_title(f"panel {i}")
    fig.tight_layout()
    strip = plt.figure(figsize=(3, 0.4))
    strip.text(0.01, 0.1, "the panel's own note", fontsize=9)
    draws = []
    fig.canvas.mpl_connect("draw_event", lambda event: draws.append(event))
    save_figure(Part(fig), [tmp_path / "all.png"], dpi=50)
    save_figure(Part(fig, [axes[1, 1]], strip=strip), [tmp_path / "one.png"], dpi=50)
    save_figure(Part(fig, [axes[1, 1]]), [tmp_path / "bare.png"], dpi=50)
    assert len(draws) == 1 and plt.fignum_exists(fig.number)
    save_figure(strip, [tmp_path / "strip.png"], dpi=50)
    whole, one, bare, alone = (np.asarray(Image.open(tmp_path / f"{name}.png"))
                               for name in ("all", "one", "bare", "strip"))
    assert bare.shape[1] < 0.6 * whole.shape[1] and bare.shape[0] < 0.75 * whole.shape[0]
    # the panel's pixels appear in the composite's file exactly (the crop of one drawing),
    # in its lower right quarter
    corner = bare[:40, :40]
    hits = [(y, x) for y in range(whole.shape[0] - 39) for x in range(whole.shape[1] - 39)
            if np.array_equal(whole[y:y + 40, x:x + 40], corner)]
    assert hits and hits[0][0] > whole.shape[0] / 3 and hits[0][1] > whole.shape[1] / 3
    # the file is the panel with the strip (drawn alone, tightly cropped) stacked under it
    assert one.shape[0] == bare.shape[0] + alone.shape[0]
    assert np.array_equal(one[:bare.shape[0], :bare.shape[1]], bare)
    assert np.array_equal(one[bare.shape[0]:, :alone.shape[1]], alone)
    with pytest.raises(ValueError, match="PNG only"):
        save_figure(Part(fig, [axes[0, 1]]), [tmp_path / "one.pdf"], dpi=50)
    save_figure(Part(fig, [axes[0, 0]], close=True), [tmp_path / "last.png"], dpi=50)
    assert not plt.fignum_exists(fig.number)
    plt.close(strip)


def test_share_labels_sit_beside_their_points_apart_and_inside_the_axes():
    """Two series with nearly equal scores at one ε, and one at the axes' top: every label is
    right of its own point, no two overlap, and none leaves the axes (referee 5, must-fix 1)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([1, 2], [0.300, 0.2], marker="o")
    ax.plot([1, 2], [0.302, 0.1], marker="^")
    ax.plot([1, 2], [0.5, 0.05], marker="s")
    ax.set_ylim(0, 0.5)
    ax.margins(x=0.08)
    shares = [(1, 0.300, "15%", "C0"), (1, 0.302, "1%", "C1"), (1, 0.5, "31%", "C2"),
              (2, 0.2, "4%", "C0")]
    plots_rrr._share_labels(ax, shares)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    labels = [t for t in ax.texts if t.get_text().endswith("%")]
    assert len(labels) == 4
    boxes = {t.get_text(): t.get_window_extent(renderer) for t in labels}
    inside = ax.get_window_extent(renderer)
    for text, box in boxes.items():
        assert inside.y0 <= box.y0 and box.y1 <= inside.y1, text
    at_one = [boxes[t] for t in ("15%", "1%", "31%")]
    for i, a in enumerate(at_one):
        for b in at_one[i + 1:]:
            assert not a.overlaps(b)
    # each label starts right of its own point, at most a few points away horizontally
    to_pixels = ax.transData
    for x, y, text, _ in shares:
        px = to_pixels.transform((x, y))[0]
        assert 0 < boxes[text].x0 - px < 10
    plt.close(fig)


def test_legends_read_row_by_row():
    """Matplotlib fills a legend column by column ("I III IV / II" for four groups in three
    columns); the rrr legends are reordered so the drawn rows read I II III / IV."""
    import matplotlib.pyplot as plt

    from dprepro.studies.rrr_survival.figures import _row_major

    fig = plt.figure()
    for n, ncol in ((4, 3), (5, 3), (6, 3), (2, 3), (7, 2), (1, 1)):
        labels = [f"g{i}" for i in range(n)]
        handles = [plt.Line2D([], [], color=f"C{i % 10}") for i in range(n)]
        legend = fig.legend(*_row_major(handles, labels, ncol), ncol=ncol)
        fig.canvas.draw()
        texts = legend.get_texts()
        positions = [t.get_window_extent() for t in texts]
        # sort the drawn labels top to bottom, then left to right: the original order
        drawn = sorted(zip(positions, (t.get_text() for t in texts), strict=True),
                       key=lambda p: (-round(p[0].y0), p[0].x0))
        assert [label for _, label in drawn] == labels, (n, ncol)
        legend.remove()
    plt.close(fig)
