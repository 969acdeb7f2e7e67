r"""Readers of the GDSC release files (the private side of ``repr_transfer``).

Basal expression (``Cell_line_RMA_proc_basalExp.txt``), fitted dose response,
cell-line details, the gdsctools IC50 matrix and the Sanger model ids; see
:mod:`dprepro.data.expression` (which re-exports them) for the formats.
"""

from __future__ import annotations

import csv
import gzip
import re
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dprepro.data.expression_io import (
    _CELL_LINE_REQUIRED,
    _CELL_LINE_SHEET,
    _GDSC_DATA_COLUMN,
    GDSC_CELL_LINE_COLUMNS,
    GDSC_EXPRESSION_MEMBER,
    ExpressionDataError,
    _check_finite,
    _check_policy,
    _collapse,
    _duplicated,
    _is_excel,
    _list_some,
    _missing_columns_error,
    _read_header,
    _read_table_columns,
    _require_openpyxl,
    _stream_matrix,
    _to_float,
    _to_int,
)

__all__ = ["gdsc_tables", "read_gdsc_cell_lines", "read_gdsc_dose_response", "read_gdsc_expression",
           "read_gdsc_ic50_matrix", "read_gdsc_sanger_ids"]

_IC50_COLUMN = re.compile(r"^Drug_(\d+)_IC50$")


def _gdsc_columns(path: Path, header: list[str]) -> tuple[int, list[int], list[int]]:
    """``(GENE_SYMBOLS position, DATA.<id> positions, their COSMIC ids)`` of a GDSC
    expression header; ExpressionDataError listing the columns when one is missing or
    unexpected."""
    if "GENE_SYMBOLS" not in header:
        raise _missing_columns_error(path, ["GENE_SYMBOLS"], header)
    sym_pos = header.index("GENE_SYMBOLS")
    data_pos, cosmic_ids, unexpected = [], [], []
    for p, name in enumerate(header):
        if p == sym_pos or name == "GENE_title":
            continue
        m = _GDSC_DATA_COLUMN.match(name)
        if m:
            data_pos.append(p)
            cosmic_ids.append(int(m.group(1)))
        else:
            unexpected.append(name)
    if not data_pos:
        raise _missing_columns_error(path, ["DATA.<COSMIC_ID>"], header)
    if unexpected:
        raise ExpressionDataError(
            f"{path}: unexpected column(s) {_list_some(unexpected)}; expected GENE_SYMBOLS, "
            "GENE_title and DATA.<COSMIC_ID> columns only",
            path=path,
        )
    return sym_pos, data_pos, cosmic_ids


def _raise_duplicates(path: Path, dup_genes, dup_lines) -> None:
    """ExpressionDataError naming the repeated gene symbols and COSMIC ids
    (``duplicates="error"``)."""
    parts = []
    if dup_genes:
        parts.append(f"duplicated gene symbols: {_list_some(sorted(dup_genes))}")
    if dup_lines:
        parts.append(f"duplicated cell lines (COSMIC ids): {_list_some(sorted(dup_lines))}")
    raise ExpressionDataError(
        f"{path}: {'; '.join(parts)} (duplicates='error'; pass duplicates='mean' to "
        "average them)",
        path=path,
    )


def read_gdsc_expression(
    path: str | Path,
    *,
    duplicates: str = "mean",
    allow_missing: bool = False,
    chunksize: int = 2048,
) -> pd.DataFrame:
    """Read GDSC basal expression (``Cell_line_RMA_proc_basalExp.txt``, plain or zipped).

    Parameters
    ----------
    path : path-like
        The tab-separated text, or a ``.zip`` holding it (the member named
        ``Cell_line_RMA_proc_basalExp.txt``, or the only member), streamed
        without extraction; ``.gz`` works too.
    duplicates : {"mean", "error"}
        What to do with a gene symbol on several rows, and with a COSMIC id
        heading several columns (the real file has both). ``"mean"`` averages
        them (arithmetic mean of the RMA log2 values, in float64, in the
        position of the first occurrence); ``"error"`` raises, naming them.
    allow_missing : bool
        Keep empty/``NA`` cells as NaN instead of raising.
    chunksize : int
        Rows parsed at a time (memory only).

    Returns
    -------
    DataFrame
        float32, cell lines (index ``COSMIC_ID``, int64, file order) x gene
        symbols (columns, first-appearance order). Rows without a symbol are
        dropped; their count is in ``attrs["rows_without_symbol"]``, the
        averaged duplicates in ``attrs["duplicated_genes"]`` and
        ``attrs["duplicated_cell_lines"]``, the file in ``attrs["source"]``.

    Raises
    ------
    ExpressionDataError
        Missing ``GENE_SYMBOLS`` or ``DATA.<id>`` columns (the columns found
        are listed), an unexpected column, a non-numeric value (column, line
        and value named), missing values, duplicates under
        ``duplicates="error"``, a corrupt archive.
    """
    _check_policy(duplicates)
    path = Path(path)
    header = _read_header(path, "\t", GDSC_EXPRESSION_MEMBER, "latin-1")
    header = [h.strip() for h in header]
    sym_pos, data_pos, cosmic_ids = _gdsc_columns(path, header)
    text, values = _stream_matrix(
        path,
        header=header,
        sep="\t",
        member_hint=GDSC_EXPRESSION_MEMBER,
        encoding="latin-1",
        text_pos=[sym_pos],
        numeric_pos=data_pos,
        chunksize=chunksize,
        quoting=csv.QUOTE_NONE,
        row_label=lambda row: f"gene {row[sym_pos]!r}",
    )
    symbols = pd.Series(text[sym_pos], dtype=object).str.strip()
    has_symbol = (symbols.notna() & (symbols != "")).to_numpy()
    n_without = int((~has_symbol).sum())
    if n_without:
        values = values[has_symbol]
        symbols = symbols[has_symbol]
    symbols = list(symbols)
    if not symbols:
        raise ExpressionDataError(f"{path}: no row has a gene symbol", path=path)
    if not allow_missing:
        _check_finite(path, values, symbols, [header[p] for p in data_pos], "gene")

    dup_genes, dup_lines = _duplicated(symbols), _duplicated(cosmic_ids)
    if duplicates == "error" and (dup_genes or dup_lines):
        _raise_duplicates(path, dup_genes, dup_lines)
    values, symbols = _collapse(values, symbols, axis=0)
    values, cosmic_ids = _collapse(values, cosmic_ids, axis=1)
    frame = pd.DataFrame(
        np.ascontiguousarray(values.T),
        index=pd.Index(np.asarray(cosmic_ids, dtype=np.int64), name="COSMIC_ID"),
        columns=pd.Index(symbols, name="gene"),
        copy=False,
    )
    frame.attrs.update(
        source=str(path),
        rows_without_symbol=n_without,
        duplicated_genes=sorted(dup_genes),
        duplicated_cell_lines=sorted(int(c) for c in dup_lines),
    )
    return frame


def read_gdsc_dose_response(
    path: str | Path, *, value: str = "LN_IC50", dataset: str | None = None
) -> pd.DataFrame:
    """Read a GDSC fitted dose-response table as a cell line x drug matrix.

    Parameters
    ----------
    path : path-like
        ``GDSC{1,2}_fitted_dose_response_*.xlsx`` (needs openpyxl) or its
        ``.csv`` twin.
    value : str
        The response column to tabulate (``LN_IC50``, natural log of the IC50
        in micromolar; ``AUC`` also works).
    dataset : str, optional
        Keep only rows whose ``DATASET`` equals this (``"GDSC1"``/``"GDSC2"``).

    Returns
    -------
    DataFrame
        float64, index ``COSMIC_ID`` (int64, sorted) x columns ``DRUG_ID``
        (int64, sorted); NaN where a pair was not screened. A (COSMIC_ID,
        DRUG_ID) pair on several rows is averaged (arithmetic mean of
        ``value``); the number of such pairs is in ``attrs["duplicated_pairs"]``.

    Raises
    ------
    ExpressionDataError
        ``COSMIC_ID``, ``DRUG_ID`` or ``value`` missing (columns found listed),
        a non-integer id or non-numeric value (column, row, value named), no
        row left.
    """
    path = Path(path)
    required = ["COSMIC_ID", "DRUG_ID", value]
    keep = set(required) | {"DATASET"}
    frame, found = _read_table_columns(path, lambda c: c.strip() in keep)
    frame.columns = [str(c).strip() for c in frame.columns]
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise _missing_columns_error(path, missing, found)
    if dataset is not None:
        if "DATASET" not in frame.columns:
            raise _missing_columns_error(path, ["DATASET"], found, " (dataset= was given)")
        frame = frame[frame["DATASET"].astype("string").str.strip() == dataset]
    if frame.empty:
        raise ExpressionDataError(
            f"{path}: no dose-response rows"
            + (f" with DATASET == {dataset!r}" if dataset is not None else ""),
            path=path,
        )
    long = pd.DataFrame(
        {
            "COSMIC_ID": _to_int(path, "COSMIC_ID", frame["COSMIC_ID"], nullable=False),
            "DRUG_ID": _to_int(path, "DRUG_ID", frame["DRUG_ID"], nullable=False),
            value: _to_float(path, value, frame[value]),
        }
    ).astype({"COSMIC_ID": np.int64, "DRUG_ID": np.int64})
    n_dup = int(long.duplicated(["COSMIC_ID", "DRUG_ID"]).sum())
    wide = long.groupby(["COSMIC_ID", "DRUG_ID"], sort=True)[value].mean().unstack("DRUG_ID")
    wide = wide.sort_index(axis=0).sort_index(axis=1).astype(np.float64)
    wide.columns = pd.Index(wide.columns.astype(np.int64), name="DRUG_ID")
    wide.index = pd.Index(wide.index.astype(np.int64), name="COSMIC_ID")
    wide.attrs.update(source=str(path), value=value, duplicated_pairs=n_dup)
    return wide


def _normalise_header(name) -> str:
    return " ".join(str(name).split())


def read_gdsc_cell_lines(path: str | Path) -> pd.DataFrame:
    """Read GDSC ``Cell_Lines_Details.xlsx`` (or a CSV export of its first sheet).

    Header whitespace (the workbook's headers contain line breaks, e.g.
    ``"GDSC\\nTissue\\ndescriptor 2"``) is collapsed before matching, so an
    export with different line breaks reads the same. The workbook's sheet
    ``Cell line details`` is read (the first sheet if there is none of that
    name). Rows without a COSMIC identifier -- the totals row at the bottom of
    the sheet -- are dropped (count in ``attrs["rows_without_cosmic_id"]``).

    Returns
    -------
    DataFrame
        Index ``COSMIC_ID`` (int64, file order); columns ``CELL_LINE_NAME``,
        ``GDSC_TISSUE_1``, ``GDSC_TISSUE_2``, ``TCGA_LABEL`` and, when present,
        ``MSI``, ``SCREEN_MEDIUM``, ``GROWTH_PROPERTIES``, ``HAS_WES``,
        ``HAS_CNA``, ``HAS_EXPRESSION``, ``HAS_METHYLATION``,
        ``HAS_DRUG_RESPONSE`` (strings as in the file).

    Raises
    ------
    ExpressionDataError
        A required column missing (columns found listed), a non-integer or
        duplicated COSMIC identifier.
    """
    path = Path(path)
    excel_kw: dict[str, Any] = {}
    if _is_excel(path) and path.exists():
        _require_openpyxl(path)
        try:
            with pd.ExcelFile(path, engine="openpyxl") as book:
                sheets = book.sheet_names
        except (zipfile.BadZipFile, KeyError, OSError) as exc:
            raise ExpressionDataError(
                f"{path}: not a readable .xlsx workbook ({type(exc).__name__}: {exc})", path=path
            ) from exc
        excel_kw["sheet_name"] = _CELL_LINE_SHEET if _CELL_LINE_SHEET in sheets else 0
    frame, found = _read_table_columns(
        path, lambda c: _normalise_header(c) in GDSC_CELL_LINE_COLUMNS, **excel_kw
    )
    frame.columns = [_normalise_header(c) for c in frame.columns]
    missing = [c for c in _CELL_LINE_REQUIRED if c not in frame.columns]
    if missing:
        raise _missing_columns_error(path, missing, found)
    frame = frame.loc[:, ~pd.Index(frame.columns).duplicated()]
    cosmic = _to_int(path, "COSMIC identifier", frame["COSMIC identifier"], nullable=True)
    has_id = cosmic.notna().to_numpy()
    out = frame.loc[has_id].rename(columns=GDSC_CELL_LINE_COLUMNS)
    out.index = pd.Index(cosmic[has_id].astype(np.int64).to_numpy(), name="COSMIC_ID")
    order = [v for v in GDSC_CELL_LINE_COLUMNS.values() if v in out.columns and v != "COSMIC_ID"]
    out = out.loc[:, order]
    out = out.astype("string").astype(object).where(out.notna(), None)
    dup = _duplicated(list(out.index))
    if dup:
        raise ExpressionDataError(
            f"{path}: duplicated COSMIC identifier(s) {_list_some(sorted(dup))}", path=path
        )
    out.attrs.update(source=str(path), rows_without_cosmic_id=int((~has_id).sum()))
    return out


def read_gdsc_ic50_matrix(path: str | Path) -> pd.DataFrame:
    """Read a gdsctools IC50 matrix (e.g. the paper's ``IC50_v17.csv.gz``) as lines x drugs.

    Layout: a ``COSMIC_ID`` column, then one ``Drug_<DRUG_ID>_IC50`` column
    per drug (natural-log IC50, as the GDSC v17 release), comma or tab
    separated, optionally gzip-compressed. Returns the matrix of
    :func:`read_gdsc_dose_response`: float64, index ``COSMIC_ID`` (int64,
    sorted) x columns ``DRUG_ID`` (int64, sorted), NaN where not screened.
    """
    path = Path(path)
    with open(path, "rb") as handle:
        head = handle.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        first = handle.readline()
    sep = "\t" if first.count("\t") > first.count(",") else ","
    frame = pd.read_csv(path, sep=sep, compression="infer")
    frame.columns = [str(c).strip() for c in frame.columns]
    if "COSMIC_ID" not in frame.columns:
        raise _missing_columns_error(path, ["COSMIC_ID"], list(frame.columns))
    drugs = {c: int(m.group(1)) for c in frame.columns if (m := _IC50_COLUMN.match(c))}
    if not drugs:
        raise ExpressionDataError(f"{path}: no 'Drug_<id>_IC50' columns; found "
                                  f"{list(frame.columns)[:8]}", path=path)
    ids = pd.to_numeric(frame["COSMIC_ID"], errors="coerce")
    if ids.isna().any() or (ids % 1 != 0).any():
        raise ExpressionDataError(f"{path}: non-integer COSMIC_ID", path=path)
    out = frame.loc[:, list(drugs)].apply(pd.to_numeric, errors="coerce").astype(float)
    out.index = pd.Index(ids.astype(np.int64), name="COSMIC_ID")
    out.columns = pd.Index([drugs[c] for c in out.columns], name="DRUG_ID", dtype=np.int64)
    out = out.sort_index().sort_index(axis=1)
    out.attrs = {"source": str(path), "layout": "gdsctools IC50 matrix"}
    return out


def gdsc_tables(inputs) -> dict[str, pd.DataFrame]:
    """The GDSC caches from the raw files (``expression``, ``dose_response``, ``cell_lines``).

    The response file is the release's fitted dose-response workbook, or a
    gdsctools IC50 matrix (``.csv.gz``/``.csv``/``.tsv`` with ``Drug_<id>_IC50``
    columns, e.g. the paper's own GDSC v17 ``IC50_v17.csv.gz``).
    """
    response = str(inputs.dose_response)
    ic50 = False
    if response.lower().endswith(".xlsx"):
        dose_response = read_gdsc_dose_response(response)
    else:
        with _open_maybe_gzip(response) as handle:
            ic50 = "Drug_" in handle.readline()
        dose_response = (read_gdsc_ic50_matrix(response) if ic50
                         else read_gdsc_dose_response(response))
    cell_lines = read_gdsc_cell_lines(inputs.cell_lines)
    if not ic50:  # a release's dose-response table names the Sanger model ids too
        sanger = read_gdsc_sanger_ids(response)
        cell_lines = cell_lines.assign(SANGER_MODEL_ID=sanger.reindex(cell_lines.index)
                                       .astype(object).where(lambda s: s.notna(), None))
    return {"expression": read_gdsc_expression(inputs.expression),
            "dose_response": dose_response,
            "cell_lines": cell_lines}


def read_gdsc_sanger_ids(path: str | Path) -> pd.Series:
    """COSMIC id -> Sanger model id (``SIDM...``) from a GDSC fitted dose-response file.

    The release's dose-response table names every line both ways; DepMap's
    ``Model.csv`` carries both too, so the public/private overlap can be
    matched on either. Empty when the file has no ``SANGER_MODEL_ID`` column.
    """
    path = Path(path)
    frame, _ = _read_table_columns(path, lambda c: c in ("COSMIC_ID", "SANGER_MODEL_ID"))
    if "SANGER_MODEL_ID" not in frame.columns or "COSMIC_ID" not in frame.columns:
        return pd.Series([], dtype=object, index=pd.Index([], dtype=np.int64, name="COSMIC_ID"))
    ids = pd.DataFrame({"COSMIC_ID": _to_int(path, "COSMIC_ID", frame["COSMIC_ID"],
                                             nullable=False).astype(np.int64),
                        "SANGER_MODEL_ID": frame["SANGER_MODEL_ID"].astype("string").str.strip()})
    ids = ids[ids["SANGER_MODEL_ID"].notna() & (ids["SANGER_MODEL_ID"] != "")]
    ids = ids.drop_duplicates("COSMIC_ID").set_index("COSMIC_ID")["SANGER_MODEL_ID"]
    return ids.astype(object).sort_index()


def _open_maybe_gzip(path: str):
    with open(path, "rb") as handle:
        gz = handle.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rt", encoding="utf-8") if gz else open(path, encoding="utf-8")
