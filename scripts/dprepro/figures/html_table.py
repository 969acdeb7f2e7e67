"""A results table as one self-contained HTML page: sortable, filterable, offline.

Snakemake's report shows an HTML result inline but offers a CSV only as a download,
so the tables a reader should see in the report (the claims, each study's headline
tables) are rendered here: every column sortable by a click on its header (numbers
as numbers), a filter box matching any cell, and a drop-down per column with few
distinct values (a study, a verdict, a dataset). No external script or style sheet:
the page works from a report opened without a network. The same table gives the
same bytes (numbers printed with a fixed number of significant digits).
"""

from __future__ import annotations

import base64
import html
import math
import re
from collections.abc import Sequence

import pandas as pd

__all__ = ["html_table", "format_cell"]

#: Columns with at most this many distinct values get a drop-down filter.
MAX_CHOICES = 12

_SCRIPT = """
<script>
(function () {
  const table = document.getElementById("t");
  const body = table.tBodies[0];
  const rows = Array.from(body.rows);
  const text = document.getElementById("q");
  const selects = Array.from(document.querySelectorAll("select[data-col]"));
  function apply() {
    const q = text.value.toLowerCase();
    let shown = 0;
    for (const row of rows) {
      let ok = !q || row.textContent.toLowerCase().includes(q);
      for (const s of selects) {
        if (ok && s.value && row.cells[+s.dataset.col].textContent !== s.value) ok = false;
      }
      row.style.display = ok ? "" : "none";
      if (ok) shown += 1;
    }
    document.getElementById("n").textContent = shown + " of " + rows.length + " rows";
  }
  text.addEventListener("input", apply);
  selects.forEach(s => s.addEventListener("change", apply));
  Array.from(table.tHead.rows[0].cells).forEach((th, col) => {
    th.addEventListener("click", () => {
      const up = th.dataset.dir !== "up";
      th.dataset.dir = up ? "up" : "down";
      const key = r => r.cells[col].dataset.v ?? r.cells[col].textContent;
      rows.sort((a, b) => {
        const x = key(a), y = key(b);
        const nx = parseFloat(x), ny = parseFloat(y);
        const c = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
        return up ? c : -c;
      });
      rows.forEach(r => body.appendChild(r));
    });
  });
  apply();
})();
</script>
"""

_STYLE = """
<style>
body { font-family: sans-serif; font-size: 12px; margin: 0.5em; }
table { border-collapse: collapse; width: 100%; }
th { cursor: pointer; background: #eee; position: sticky; top: 0; text-align: left; }
th, td { border: 1px solid #ccc; padding: 2px 4px; vertical-align: top;
         overflow-wrap: anywhere; }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr:nth-child(even) td { background: #fafafa; }
.holds { color: #1a7f37; } .fails { color: #c62828; } .inconclusive { color: #9a6700; }
.untestable { color: #666; }
.holds, .fails, .inconclusive, .untestable { font-weight: bold; white-space: nowrap; }
</style>
"""


def format_cell(value, digits: int = 4) -> tuple[str, str | None]:
    """The text of a cell and, for numbers, the value to sort by.

    Floats are printed with ``digits`` significant digits; missing values are empty.
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "", None
    if isinstance(value, bool):
        return str(value), None
    if isinstance(value, int):
        return str(value), str(value)
    if isinstance(value, float):
        if math.isinf(value):
            return ("∞" if value > 0 else "−∞"), ("1e308" if value > 0 else "-1e308")
        return f"{value:.{digits}g}", repr(value)
    return str(value), None


def _breakable(text: str) -> str:
    """``text`` escaped, with a line-break opportunity after each ``.``, ``_``, ``/`` and
    ``,``: an identifier (``rrr.privacy.rrr.calibration_paper_k_5.eps1``) then wraps inside
    a narrow column instead of widening the table past the page."""
    return re.sub(r"([._/,])(?=\S)", r"\1<wbr>", html.escape(text))


def _download(download: tuple[str, bytes] | None, shown: int, total: int) -> str:
    """The link to the whole CSV (embedded: the report is one offline file) and what of it
    the page shows."""
    if download is None:
        return ""
    name, data = download
    uri = "data:text/csv;charset=utf-8;base64," + base64.b64encode(data).decode("ascii")
    what = (f"shows {shown} of its {total} columns" if shown < total
            else f"shows all its {total} columns")
    return (f'<p>This page {what}; every column and row: <a download="{html.escape(name)}" '
            f'href="{uri}">{html.escape(name)}</a> (CSV).</p>\n')


def html_table(frame: pd.DataFrame, *, title: str, caption: str = "",
               columns: Sequence[str] | None = None, digits: int = 4,
               download: tuple[str, bytes] | None = None) -> str:
    """One HTML page showing ``frame``.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table, as its CSV holds it.
    title : str
        Heading of the page.
    caption : str
        A sentence under the heading: what a row is, where the CSV is.
    columns : sequence of str, optional
        Columns to show, in order (default: all).
    digits : int
        Significant digits of floating-point cells.
    download : (str, bytes), optional
        A file name and the bytes of the whole CSV: the page links to it (embedded), and
        says how many of its columns it shows.

    Returns
    -------
    str
        The page; ``verdict`` cells carry their verdict as a class (coloured).
    """
    total = len(frame.columns)
    if columns is not None:
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise ValueError(f"columns {missing} are not in the table (have "
                             f"{list(frame.columns)})")
        frame = frame[list(columns)]
    names = [str(c) for c in frame.columns]
    head = "".join(f"<th>{html.escape(name)}</th>" for name in names)
    choices = []
    for i, name in enumerate(names):
        values = sorted({format_cell(v, digits)[0] for v in frame.iloc[:, i]} - {""})
        if 1 < len(values) <= MAX_CHOICES and not pd.api.types.is_float_dtype(frame.iloc[:, i]):
            options = "".join(f'<option value="{html.escape(v)}">{html.escape(v)}</option>'
                              for v in values)
            choices.append(f'<label>{html.escape(name)} <select data-col="{i}">'
                           f'<option value="">all</option>{options}</select></label>')
    body = []
    for row in frame.itertuples(index=False, name=None):
        cells = []
        for name, value in zip(names, row, strict=True):
            text, sort = format_cell(value, digits)
            attrs = ""
            if sort is not None:
                attrs += f' class="n" data-v="{html.escape(sort)}"'
            elif name == "verdict" and text:
                attrs += f' class="{html.escape(text)}"'
            shown = html.escape(text) if sort is not None else _breakable(text)
            cells.append(f"<td{attrs}>{shown}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
        f"<title>{html.escape(title)}</title>{_STYLE}</head><body>\n"
        f"<h2>{html.escape(title)}</h2>\n<p>{html.escape(caption)}</p>\n"
        + _download(download, len(names), total)
        + '<p><input id="q" type="search" placeholder="filter rows" size="40"> '
        + " ".join(choices) + ' <span id="n"></span></p>\n'
        f'<table id="t"><thead><tr>{head}</tr></thead><tbody>\n'
        + "\n".join(body) + "\n</tbody></table>\n" + _SCRIPT + "</body></html>\n"
    )
