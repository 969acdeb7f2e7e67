"""Figure helpers shared by every study: atomic, timestamp-free PDF and PNG output, footers.

Kept apart from :mod:`dprepro.plots` (the ldp_indicators figures, which import
the simulation code) so a figure job imports matplotlib and nothing heavier.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.layout_engine import PlaceHolderLayoutEngine  # noqa: E402
from matplotlib.transforms import Bbox  # noqa: E402

from .io import atomic_path  # noqa: E402

__all__ = ["Part", "save_figure", "footer", "wrapped_footer"]

#: Margin around the tight bounding box, inches (matplotlib's ``savefig.pad_inches``).
PAD_INCHES = 0.1


@dataclass
class Part:
    """Part of a figure saved as a file of its own, drawn by the same figure.

    Only ``show`` (axes, texts; made visible for the save, hidden again after)
    is drawn, every other axes and figure text is hidden, and the file is
    cropped to what is shown. ``show=None`` saves the figure as it stands.
    ``close`` closes the figure after the save (the last part). Saving the
    panels of a composite this way draws one panel per file instead of
    building, laying out and drawing a new figure for each.
    """

    figure: Figure
    show: list | None = None
    close: bool = False


def save_figure(fig, paths, *, dpi: int = 150) -> None:
    """Save a figure (or a :class:`Part` of one) to every path, format from the suffix,
    atomically, without timestamps, cropped to the tight bounding box of what is drawn;
    then close the figure (a :class:`Part`: only if its ``close`` says so).

    ``savefig(bbox_inches="tight")`` draws the figure twice per file (once to
    measure, once to write). Here the figure is drawn once with Agg at ``dpi``,
    the tight box is measured on that drawing, a PNG is the crop of the very
    pixels drawn, and a PDF is drawn once more into the same box: two draws for
    a PDF and a PNG instead of four, for the same picture.
    """
    part = fig if isinstance(fig, Part) else Part(fig, close=True)
    fig = part.figure
    hidden = []
    if part.show is not None:
        keep = {id(a) for a in part.show}
        for artist in [*fig.axes, *fig.texts]:
            if id(artist) not in keep and artist.get_visible():
                artist.set_visible(False)
                hidden.append(artist)
        shown = [a for a in part.show if not a.get_visible()]
        for artist in shown:
            artist.set_visible(True)
    if isinstance(fig.get_layout_engine(), PlaceHolderLayoutEngine):
        # what tight_layout() leaves behind: it lays nothing out, but makes every savefig
        # walk the whole figure once more before drawing it (the layout is already done)
        fig.set_layout_engine(None)
    try:
        fig.set_dpi(dpi)
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        if part.show is None:
            box = fig.get_tightbbox(renderer)
        else:
            top = [a for a in part.show if a.axes is None or a in fig.axes]
            box = Bbox.union([a.get_tightbbox(renderer) for a in top]).transformed(
                fig.dpi_scale_trans.inverted())
        width, height = fig.get_size_inches()
        # what is drawn lies on the canvas (the margin may not: a footer at the bottom edge
        # puts the padded box below it, where there is only background, which the crop
        # fills in; before, every figure with a footer was drawn again by savefig)
        inside = box.x0 >= 0 and box.y0 >= 0 and box.x1 <= width and box.y1 <= height
        box = box.padded(PAD_INCHES)
        for path in paths:
            suffix = Path(path).suffix.lstrip(".")
            with atomic_path(path) as tmp:
                if suffix == "png" and inside:
                    _png_crop(fig, tmp, box, dpi)
                else:
                    metadata = {"CreationDate": None} if suffix == "pdf" else {"Software": None}
                    fig.savefig(tmp, format=suffix, dpi=dpi, metadata=metadata,
                                bbox_inches=box)
    finally:
        if part.show is not None:
            for artist in hidden:
                artist.set_visible(True)
            for artist in shown:
                artist.set_visible(False)
        if part.close:
            plt.close(fig)


def _png_crop(fig, path, box, dpi: int) -> None:
    """Write the part ``box`` (inches, origin bottom left) of the Agg drawing as a PNG."""
    from matplotlib.colors import to_rgba
    from PIL import Image

    pixels = np.asarray(fig.canvas.buffer_rgba())
    rows, cols = pixels.shape[:2]
    left, right = int(round(box.x0 * dpi)), int(round(box.x1 * dpi))
    top, bottom = rows - int(round(box.y1 * dpi)), rows - int(round(box.y0 * dpi))
    # the margin outside the canvas is background: the figure's face colour, as savefig
    # draws it there
    face = np.round(np.asarray(to_rgba(fig.get_facecolor())) * 255).astype(np.uint8)
    crop = np.empty((bottom - top, right - left, 4), dtype=np.uint8)
    crop[...] = face
    y0, y1, x0, x1 = max(top, 0), min(bottom, rows), max(left, 0), min(right, cols)
    crop[y0 - top:y1 - top, x0 - left:x1 - left] = pixels[y0:y1, x0:x1]
    Image.fromarray(crop).save(path, format="png", dpi=(dpi, dpi))


def footer(fig, text: str) -> None:
    """A grey line of text at the figure's bottom left (what data, which privacy)."""
    fig.text(0.01, 0.005, text, fontsize=7, color="0.35", ha="left", va="bottom")


def wrapped_footer(fig, text: str) -> None:
    """:func:`footer` wrapped to the figure's width (a long line would widen the saved file)."""
    width = max(60, int(fig.get_figwidth() * 17))
    footer(fig, textwrap.fill(text, width))
