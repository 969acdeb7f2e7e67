"""Generic figure helpers (dprepro.studies.ldp_indicators.figures): atomic, timestamp-free PDF and
PNG output.
"""

from pathlib import Path

import matplotlib.pyplot as plt
import pytest

from dprepro.claims import figure as plots_figure
from dprepro.figures import style as plots_style
from dprepro.studies.ldp_indicators import figures as plots_figures


def figure():
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([0, 1, 2], [1, 0.5, 0.2], label="curve")
    ax.set_title("α = 0.2")
    return fig


def test_save_figure_writes_pdf_and_png_and_closes_the_figure(tmp_path):
    fig = figure()
    paths = [tmp_path / "f.pdf", tmp_path / "f.png"]
    plots_style.save_figure(fig, paths, dpi=72)
    assert paths[0].read_bytes()[:5] == b"%PDF-"
    assert paths[1].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not plt.fignum_exists(fig.number)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.pdf", "f.png"]


def test_same_figure_gives_the_same_bytes(tmp_path):
    for name in ("one", "two"):
        plots_style.save_figure(figure(), [tmp_path / f"{name}.pdf", tmp_path / f"{name}.png"],
                          dpi=72)
    pdf = (tmp_path / "one.pdf").read_bytes()
    assert b"CreationDate" not in pdf
    assert pdf == (tmp_path / "two.pdf").read_bytes()
    assert (tmp_path / "one.png").read_bytes() == (tmp_path / "two.png").read_bytes()


def test_dpi_sets_the_png_size(tmp_path):
    plots_style.save_figure(figure(), [tmp_path / "low.png"], dpi=50)
    plots_style.save_figure(figure(), [tmp_path / "high.png"], dpi=100)

    def width(path):  # PNG IHDR: width is the big-endian int at bytes 16..20
        return int.from_bytes(path.read_bytes()[16:20], "big")
    assert 1.8 < width(tmp_path / "high.png") / width(tmp_path / "low.png") < 2.2


@pytest.mark.parametrize("configfile", ["config.yaml", "full.yaml", "paper.yaml"])
def test_every_shipped_run_writes_pngs_of_at_least_200_dpi(configfile, tmp_path):
    """The report's PNGs were 100 dpi: every shipped configuration (its schema defaults
    filled in) now draws them at 200 dpi or more, and a PNG says so in its own header
    (pHYs) and has the pixels for it."""
    import yaml
    from PIL import Image

    from dprepro.config.schema import fill_defaults, load_schema

    root = Path(__file__).resolve().parents[1]
    config = yaml.safe_load((root / "config" / "config.yaml").read_text())
    if configfile != "config.yaml":
        config.update({key: {**config.get(key, {}), **value} if isinstance(value, dict)
                       else value for key, value in
                       yaml.safe_load((root / "config" / configfile).read_text()).items()})
    schema = load_schema(root / "workflow" / "schemas" / "config.schema.yaml")
    dpi = fill_defaults(config, schema)["figures"]["dpi"]
    assert dpi >= 200
    fig = figure()
    inches = fig.get_size_inches()
    plots_style.save_figure(fig, [tmp_path / "f.png"], dpi=dpi)
    with Image.open(tmp_path / "f.png") as image:
        assert image.info["dpi"] == pytest.approx((dpi, dpi), abs=0.01)
        # the tight crop of a 3 x 2 in figure: most of its area, at that density
        assert 0.8 * inches[0] * dpi < image.size[0] <= inches[0] * dpi + 2 * dpi * 0.1 + 1
        assert 0.8 * inches[1] * dpi < image.size[1] <= inches[1] * dpi + 2 * dpi * 0.1 + 1


def test_a_failing_save_leaves_no_partial_file(tmp_path, monkeypatch):
    fig = figure()
    original = fig.savefig

    def dies_half_way(path, **kwargs):
        original(path, **kwargs)
        raise MemoryError("killed while rendering")

    monkeypatch.setattr(fig, "savefig", dies_half_way)
    with pytest.raises(MemoryError):
        plots_style.save_figure(fig, [tmp_path / "f.pdf"])
    assert list(tmp_path.iterdir()) == []
    plt.close(fig)


def test_figure_paths_are_the_pdf_then_the_png_output():
    outputs = {"png": "x.png", "pdf": "x.pdf", "prov": "x.pdf.prov.json"}
    assert plots_figures.figure_paths(outputs) == ["x.pdf", "x.png"]


def test_claims_figure_draws_one_row_per_claim_on_its_own_scale():
    import numpy as np
    import pandas as pd

    claims = pd.DataFrame({
        "claim_id": ["a.ratio", "b.diff", "c.small"],
        "claim": ["the ratio is near one", "the difference is positive", "tiny"],
        "criterion": ["within [0.667, 1.5]", "> 0; at least 5 independent units", "<= 0.01"],
        "reproduced_value": [1.2, -3.0, 0.002],
        "ci_lower": [1.1, -5.0, 0.001],
        "ci_upper": [1.3, -1.0, 0.004],
        "verdict": ["holds", "fails", "holds"],
    })
    fig = plots_figure.claims_figure(claims)
    ax = fig.axes[0]
    texts = [t.get_text() for t in ax.texts]
    # the claim's text, then its id and criterion (a minimum of units in short)
    assert texts[:2] == ["the ratio is near one", "a.ratio · within [0.667, 1.5]"]
    assert "b.diff · > 0 (≥ 5 units)" in texts
    points = ax.collections[-1].get_offsets()
    # every row is mapped onto [0, 1], first claim at the top
    assert np.all((points[:, 0] > 0) & (points[:, 0] < 1))
    assert list(points[:, 1]) == [2, 1, 0]
    colors = ax.collections[-1].get_facecolors()
    assert np.allclose(colors[0], colors[2]) and not np.allclose(colors[0], colors[1])
    # the interval of the failing claim lies outside its shaded criterion (> 0)
    lines = ax.collections[-2].get_segments()
    shaded = ax.collections[0].get_paths()
    assert len(lines) == 3 and len(shaded) == 3
    assert lines[1][:, 0].max() < shaded[1].vertices[:, 0].min()
    assert shaded[0].vertices[:, 0].min() < lines[0][:, 0].min()  # holds: inside
    assert "fails" in texts and texts.count("holds") == 2
    plt.close(fig)


def test_the_claims_detail_page_is_readable_at_print_size():
    """Issue 38: about 6 pt text, rows labelled by id only, value labels running into the
    verdicts ("0.000802holds"), bare arrowheads at ±∞. A page is A4, no text under 8 pt,
    the claim's text on every row, no two labels overlapping, and ∞ written out."""
    import numpy as np
    import pandas as pd

    n = 18
    claims = pd.DataFrame({
        "claim_id": [f"rrr.claim_{i}.a_long_cohort_name.eps1.exact" for i in range(n)],
        "claim": ["RRR curves are closer to the original than LNTE's at equal true ε "
                  "(RRR exact calibration vs grid LNTE, both ε-DP), a long statement"] * n,
        "criterion": ["<= 0.000802", ">= 0.5", "<= 1", "within [-0.1, 0.1]"] * 4 + ["> 0"] * 2,
        "reproduced_value": [0.0008021] * 4 + [0.9] * 4 + [np.inf] * 4 + [-0.2857] * 6,
        "ci_lower": [0.00071] * 4 + [0.61] * 4 + [0.9] * 4 + [-0.454] * 6,
        "ci_upper": [0.000899] * 4 + [1.0] * 4 + [np.inf] * 4 + [-0.118] * 6,
        "verdict": ["inconclusive", "holds", "fails", "untestable"] * 4 + ["fails"] * 2,
    })
    fig = plots_figure.claims_figure(claims, title="rrr_survival: claims 1–18 of 18")
    assert tuple(np.round(fig.get_size_inches(), 2)) == plots_figure.PAGE
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    texts = [t for t in [*fig.texts, *fig.axes[0].texts] if t.get_text()]
    assert min(t.get_fontsize() for t in texts) >= plots_figure.FONT >= 8
    words = [t.get_text() for t in texts]
    assert sum("RRR curves are closer" in w for w in words) == n
    assert sum(w.startswith("rrr.claim_") for w in words) == n
    # the ends of an interval at +∞ are written out, beside an arrowhead
    assert words.count("∞") == 4
    assert sum(line.get_marker() == ">" for line in fig.axes[0].lines) == 4
    boxes = [t.get_window_extent(renderer) for t in texts]
    page = fig.bbox
    for i, a in enumerate(boxes):
        assert page.contains(a.x0, a.y0) and page.contains(a.x1, a.y1), words[i]
        for j in range(i):
            assert not a.overlaps(boxes[j]), (words[i], words[j])
    plt.close(fig)


def test_legend_and_footer_keep_everything_on_the_canvas():
    """A long footer and long legend labels are wrapped / stacked inside the figure, so the
    saved PNG is the crop of the one drawing (an overhang made savefig draw it again)."""
    from dprepro.figures.style import _drawing, legend_and_footer

    fig, axes = plt.subplots(1, 2, figsize=(8.4, 3.4))
    for k in range(5):
        axes[0].plot([0, 1], [k, k + 1], label=f"estimator {k} with a long descriptive label "
                                                 f"[mechanism_{k}]")
    handles, labels = axes[0].get_legend_handles_labels()
    legend_and_footer(fig, "A footer that states the data, the privacy and the sample sizes, "
                           "long enough to run past the canvas if it were one line. " * 3,
                      handles, labels)
    _, renderer = _drawing(fig, 150, fresh=True)
    box = fig.get_tightbbox(renderer)
    width, height = fig.get_size_inches()
    assert box.x0 >= 0 and box.y0 >= 0 and box.x1 <= width and box.y1 <= height, box
    # the legend sits above the footer and below the panels
    legend = fig.legends[0].get_window_extent(renderer).transformed(
        fig.dpi_scale_trans.inverted())
    footer = fig.texts[-1].get_window_extent(renderer).transformed(
        fig.dpi_scale_trans.inverted())
    panels = axes[0].get_tightbbox(renderer).transformed(fig.dpi_scale_trans.inverted())
    assert footer.y1 <= legend.y0 and legend.y1 <= panels.y0 + 0.05
    plt.close(fig)


def test_claims_summary_counts_verdicts_by_study_claim_origin_and_data_origin():
    import numpy as np
    import pandas as pd

    claims = pd.DataFrame({
        "study": ["ldp"] * 4 + ["rrr"] * 3,
        "claim_origin": ["paper", "paper", "beyond", "paper", "paper", "paper", "beyond"],
        "data_origin": ["simulation"] * 4 + ["real", "synthetic", "real"],
        "verdict": ["holds", "fails", "untestable", "holds", "inconclusive", "holds",
                    "holds"],
    })
    fig = plots_figure.claims_summary_figure(claims)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["ldp · paper · simulation", "ldp · beyond the paper · simulation",
                      "rrr · paper · real", "rrr · paper · synthetic",
                      "rrr · beyond the paper · real"]
    # the widths of each bar's segments add up to its claims, per verdict
    widths = {}
    for patch in ax.patches:
        y = round(patch.get_y() + patch.get_height() / 2)
        widths.setdefault(y, []).append(patch.get_width())
    totals = [sum(widths[y]) for y in sorted(widths, reverse=True)]
    assert totals == [3, 1, 1, 1, 1]
    counts = [t.get_text() for t in ax.texts]
    assert counts.count("2") == 1  # ldp · paper · simulation: two hold
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["holds", "fails", "inconclusive", "untestable"]
    assert np.isclose(ax.get_xlim()[0], 0)


def test_claims_pages_split_each_study_into_pages_of_at_most_n_rows():
    import pandas as pd

    claims = pd.DataFrame({"study": ["a"] * 5 + ["b"] * 2, "claim_id": list("abcdefg")})
    pages = plots_figure.claims_pages(claims, rows_per_page=2)
    assert [title for title, _ in pages] == [
        "a: claims 1–2 of 5", "a: claims 3–4 of 5", "a: claims 5–5 of 5", "b: claims 1–2 of 2"]
    assert [list(rows["claim_id"]) for _, rows in pages] == [["a", "b"], ["c", "d"], ["e"],
                                                              ["f", "g"]]
