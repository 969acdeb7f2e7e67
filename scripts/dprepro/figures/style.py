"""Figure helpers shared by every study: atomic, timestamp-free PDF and PNG output, footers.

Kept apart from :mod:`dprepro.studies.ldp_indicators.figures` (the ldp_indicators figures, which
import
the simulation code) so a figure job imports matplotlib and nothing heavier.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.layout_engine import PlaceHolderLayoutEngine
from matplotlib.transforms import Bbox

from dprepro.runtime.io import atomic_path

__all__ = ["Part", "save_figure", "footer", "layout_with_footer", "legend_and_footer",
           "wrapped_footer"]

#: zlib level of every PNG written, not Pillow's 6: half the CPU of encoding (Figure 2
#: writes 84 PNGs) for ~9 % more bytes; the pixels are the same.
PNG_COMPRESS_LEVEL = 1
#: Margin around the tight bounding box, inches (matplotlib's ``savefig.pad_inches``).
PAD_INCHES = 0.1


@dataclass
class Part:
    """A panel of a composite figure, saved as a PNG of its own from the composite's drawing.

    The file is the crop of the figure's own Agg drawing around ``axes`` (the
    union of their tight boxes, ``pad`` inches around it), with ``strip`` (a
    small figure: the panel's legend and note) stacked under it, left-aligned.
    The composite is drawn once however many panels it has; each strip once
    however many panels share it. ``axes=None`` saves the whole figure
    (PDF and PNG). ``close`` closes the figure after the save (the last part).
    """

    figure: Figure
    axes: list | None = None
    strip: Figure | None = None
    close: bool = False
    #: around the panel's tight box, inches: less than half of tight_layout's space
    #: between panels (1.08 font sizes), so no neighbour's tick label reaches the crop
    pad: float = 0.05


def save_figure(fig, paths, *, dpi: int = 200) -> None:
    """Save a figure (or a :class:`Part` of one) to every path, format from the suffix,
    atomically, without timestamps, cropped to the tight bounding box of what is drawn;
    then close the figure (a :class:`Part`: only if its ``close`` says so).

    ``savefig(bbox_inches="tight")`` draws the figure twice per file (once to
    measure, once to write). Here the figure is drawn once with Agg at ``dpi``,
    the tight box is measured on that drawing, a PNG is the crop of the very
    pixels drawn, and a PDF is drawn once more into the same box: two draws for
    a PDF and a PNG instead of four, for the same picture. The panels of a
    composite (:class:`Part`) are crops of that same drawing.
    """
    part = fig if isinstance(fig, Part) else Part(fig, close=True)
    fig = part.figure
    try:
        if part.axes is not None:
            _save_part(part, paths, dpi)
            return
        if isinstance(fig.get_layout_engine(), PlaceHolderLayoutEngine):
            # what tight_layout() leaves behind: it lays nothing out, but makes every
            # savefig walk the whole figure once more before drawing it (the layout is done)
            fig.set_layout_engine(None)
        pixels, renderer = _drawing(fig, dpi, fresh=True)
        box = fig.get_tightbbox(renderer)
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
                    _write_png(_crop_pixels(fig, pixels, box, dpi), tmp, dpi)
                else:
                    metadata = {"CreationDate": None} if suffix == "pdf" else {"Software": None}
                    extra = ({"pil_kwargs": {"compress_level": PNG_COMPRESS_LEVEL}}
                             if suffix == "png" else {})
                    # zlib level 1, not matplotlib's 6: IPSS-R's band figure PDF 1.05 ->
                    # 0.78 CPU-s and Figure 2's 0.93 -> 0.81, for 18-42 % more bytes
                    with matplotlib.rc_context({"pdf.compression": 1}):
                        fig.savefig(tmp, format=suffix, dpi=dpi, metadata=metadata,
                                    bbox_inches=box, **extra)
    finally:
        if part.close:
            plt.close(fig)


def _drawing(fig, dpi: int, *, fresh: bool = False):
    """The figure's Agg drawing at ``dpi`` (RGBA pixels) and its renderer.

    Drawn once per dpi and kept on the figure: the parts of a composite are
    crops of the drawing its whole file was made from, so nothing may change
    the figure between saving it and saving its parts. (``stale`` cannot tell:
    measuring a tight box, or saving a PDF, marks a figure stale unchanged.)
    ``fresh`` draws it anew (saving a whole figure always does).
    """
    kept = getattr(fig, "_dprepro_drawing", None)
    if fresh or kept is None or kept[0] != dpi:
        fig.set_dpi(dpi)
        fig.canvas.draw()
        kept = (dpi, np.array(fig.canvas.buffer_rgba()))
        fig._dprepro_drawing = kept
    return kept[1], fig.canvas.get_renderer()


def _face(fig) -> np.ndarray:
    from matplotlib.colors import to_rgba

    return np.round(np.asarray(to_rgba(fig.get_facecolor())) * 255).astype(np.uint8)


def _crop_pixels(fig, pixels, box, dpi: int) -> np.ndarray:
    """The part ``box`` (inches, origin bottom left) of the drawing ``pixels``; the
    margin outside the canvas is the figure's face colour, as savefig draws it there."""
    rows, cols = pixels.shape[:2]
    left, right = int(round(box.x0 * dpi)), int(round(box.x1 * dpi))
    top, bottom = rows - int(round(box.y1 * dpi)), rows - int(round(box.y0 * dpi))
    crop = np.empty((bottom - top, right - left, 4), dtype=np.uint8)
    crop[...] = _face(fig)
    y0, y1, x0, x1 = max(top, 0), min(bottom, rows), max(left, 0), min(right, cols)
    crop[y0 - top:y1 - top, x0 - left:x1 - left] = pixels[y0:y1, x0:x1]
    return crop


def _write_png(pixels, path, dpi: int) -> None:
    from PIL import Image

    Image.fromarray(pixels).save(path, format="png", dpi=(dpi, dpi),
                                 compress_level=PNG_COMPRESS_LEVEL)


def _tight_pixels(fig, dpi: int) -> np.ndarray:
    """The whole figure's drawing cropped to its padded tight box (kept per dpi)."""
    kept = getattr(fig, "_dprepro_tight", None)
    if kept is None or kept[0] != dpi:
        pixels, renderer = _drawing(fig, dpi)
        kept = (dpi, _crop_pixels(fig, pixels, fig.get_tightbbox(renderer).padded(PAD_INCHES),
                                  dpi))
        fig._dprepro_tight = kept
    return kept[1]


def _stack_left(images, face) -> np.ndarray:
    """Images one under the other, left-aligned, the narrower padded with ``face``."""
    out = np.empty((sum(image.shape[0] for image in images),
                    max(image.shape[1] for image in images), 4), dtype=np.uint8)
    out[...] = face
    row = 0
    for image in images:
        out[row:row + image.shape[0], :image.shape[1]] = image
        row += image.shape[0]
    return out


def _save_part(part: Part, paths, dpi: int) -> None:
    """One panel of a composite: its crop of the composite's drawing over its strip."""
    wrong = [str(p) for p in paths if Path(p).suffix != ".png"]
    if wrong:
        raise ValueError(f"a panel of a figure is saved as PNG only, not {wrong}")
    fig = part.figure
    pixels, renderer = _drawing(fig, dpi)
    box = Bbox.union([ax.get_tightbbox(renderer) for ax in part.axes]).transformed(
        fig.dpi_scale_trans.inverted()).padded(part.pad)
    images = [_crop_pixels(fig, pixels, box, dpi)]
    if part.strip is not None:
        images.append(_tight_pixels(part.strip, dpi))
    image = _stack_left(images, _face(fig))
    for path in paths:
        with atomic_path(path) as tmp:
            _write_png(image, tmp, dpi)


def footer(fig, text: str, *, fontsize: float = 7) -> None:
    """A grey line of text at the figure's bottom left (what data, which privacy)."""
    fig.text(0.01, 0.005, text, fontsize=fontsize, color="0.35", ha="left", va="bottom")


def wrapped_footer(fig, text: str, *, fontsize: float = 7) -> None:
    """:func:`footer` wrapped to the figure's width (a long line would widen the saved file)."""
    footer(fig, _wrapped(fig, text, fontsize), fontsize=fontsize)


def _wrapped(fig, text: str, fontsize: float = 7) -> str:
    # about 17 characters of 7 pt text an inch, fewer of larger text
    return textwrap.fill(text, max(60, int(fig.get_figwidth() * 17 * 7 / fontsize)))


def legend_and_footer(fig, text: str, handles=(), labels=(), *, ncol: int = 4) -> None:
    """:func:`wrapped_footer` at the bottom, a figure legend just above it, then the layout.

    The footer is wrapped to the figure's width (one long line made the saved
    file wider than the figure, and the crop of the drawing could not be used,
    so the file was drawn again), and the room below the panels is what the
    footer's lines and the legend's rows take, not a fixed share of the height.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    text : str
        The footer (what data, which privacy), wrapped here.
    handles, labels : sequence, optional
        The figure legend's entries (none: no legend).
    ncol : int
        Most legend columns; fewer where the labels would not fit the width.
    """
    wrapped = _wrapped(fig, text)
    height = fig.get_figheight()
    # a 7 pt line is 1.25 x 7 pt high; a legend row about 1.5 x 7 pt, plus its padding
    bottom = (0.04 + (wrapped.count("\n") + 1) * 1.25 * 7 / 72) / height
    if len(labels):
        # as many columns as fit the width (a label of 7 pt text is ~0.6 x 7 pt a
        # character, plus its handle and the spacing)
        widest = max(len(str(label)) for label in labels) * 0.6 * 7 / 72 + 0.6
        ncol = max(1, min(len(labels), ncol, int(0.95 * fig.get_figwidth() // widest)))
        fig.legend(handles, labels, fontsize=7, loc="lower center", ncol=ncol,
                   bbox_to_anchor=(0.5, bottom), frameon=False)
        rows = -(-len(labels) // ncol)
        bottom += (rows * 1.5 * 7 / 72 + 0.1) / height
    footer(fig, wrapped)
    # a small left margin: tick labels measured at the figure's dpi come out a little
    # wider when drawn at the file's
    fig.tight_layout(rect=(0.01, bottom, 1, 1))


def layout_with_footer(fig, text: str, *, fontsize: float = 7) -> None:
    """:func:`wrapped_footer` as the figure's supxlabel, then ``fig.tight_layout()``.

    tight_layout reserves the footer's own height (as it does the suptitle's)
    in one measuring pass; given a ``rect`` for the footer instead, it measures
    every panel twice (Figure 2's IPSS-R layout 0.54 -> 0.27 CPU-s), and the
    share of the height reserved was a guess.
    """
    fig.supxlabel(_wrapped(fig, text, fontsize), x=0.01, y=0.005, ha="left", va="bottom",
                  fontsize=fontsize, color="0.35")
    fig.tight_layout()
