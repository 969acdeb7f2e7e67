"""Generic figure helpers (dprepro.plots): atomic, timestamp-free PDF and PNG output."""

import matplotlib.pyplot as plt
import pytest

from dprepro import plots


def figure():
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([0, 1, 2], [1, 0.5, 0.2], label="curve")
    ax.set_title("α = 0.2")
    return fig


def test_save_figure_writes_pdf_and_png_and_closes_the_figure(tmp_path):
    fig = figure()
    paths = [tmp_path / "f.pdf", tmp_path / "f.png"]
    plots.save_figure(fig, paths, dpi=72)
    assert paths[0].read_bytes()[:5] == b"%PDF-"
    assert paths[1].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not plt.fignum_exists(fig.number)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.pdf", "f.png"]


def test_same_figure_gives_the_same_bytes(tmp_path):
    for name in ("one", "two"):
        plots.save_figure(figure(), [tmp_path / f"{name}.pdf", tmp_path / f"{name}.png"],
                          dpi=72)
    pdf = (tmp_path / "one.pdf").read_bytes()
    assert b"CreationDate" not in pdf
    assert pdf == (tmp_path / "two.pdf").read_bytes()
    assert (tmp_path / "one.png").read_bytes() == (tmp_path / "two.png").read_bytes()


def test_dpi_sets_the_png_size(tmp_path):
    plots.save_figure(figure(), [tmp_path / "low.png"], dpi=50)
    plots.save_figure(figure(), [tmp_path / "high.png"], dpi=100)

    def width(path):  # PNG IHDR: width is the big-endian int at bytes 16..20
        return int.from_bytes(path.read_bytes()[16:20], "big")
    assert 1.8 < width(tmp_path / "high.png") / width(tmp_path / "low.png") < 2.2


def test_a_failing_save_leaves_no_partial_file(tmp_path, monkeypatch):
    fig = figure()
    original = fig.savefig

    def dies_half_way(path, **kwargs):
        original(path, **kwargs)
        raise MemoryError("killed while rendering")

    monkeypatch.setattr(fig, "savefig", dies_half_way)
    with pytest.raises(MemoryError):
        plots.save_figure(fig, [tmp_path / "f.pdf"])
    assert list(tmp_path.iterdir()) == []
    plt.close(fig)


def test_figure_paths_are_the_pdf_then_the_png_output():
    outputs = {"png": "x.png", "pdf": "x.pdf", "prov": "x.pdf.prov.json"}
    assert plots.figure_paths(outputs) == ["x.pdf", "x.png"]
