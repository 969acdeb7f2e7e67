r"""Readers of the DepMap files (a public side of ``repr_transfer``).

Expression (``OmicsExpressionProteinCodingGenesTPMLogp1.csv``) and ``Model.csv``;
see :mod:`dprepro.data.expression` (which re-exports them) for the formats.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from dprepro.data.expression_io import (
    _DEPMAP_DEFAULT_FLAGS,
    _ENTREZ_SUFFIX,
    _FALSE,
    _MODEL_COLUMNS,
    _MODEL_OPTIONAL,
    _TRUE,
    _UNNAMED,
    DEPMAP_META_COLUMNS,
    ExpressionDataError,
    _check_finite,
    _check_policy,
    _collapse,
    _describe_columns,
    _duplicated,
    _list_some,
    _read_header,
    _resolve,
    _stream_matrix,
    _to_int,
)

__all__ = ["depmap_tables", "read_depmap_expression", "read_depmap_models"]


def _gene_symbol(column: str) -> str:
    return _ENTREZ_SUFFIX.sub("", column).strip()


def _parse_flags(path: Path, column: str, values: np.ndarray) -> np.ndarray:
    lowered = pd.Series(values, dtype=object).fillna("").astype(str).str.strip().str.lower()
    bad = ~lowered.isin(_TRUE | _FALSE)
    if bad.any():
        raise ExpressionDataError(
            f"{path}: column {column!r} must be a yes/no flag but has "
            f"{values[int(np.flatnonzero(bad.to_numpy())[0])]!r}",
            path=path,
        )
    return lowered.isin(_TRUE).to_numpy()


def _depmap_columns(path: Path, header: list[str]) -> tuple[int, str | None, list[int], list[str]]:
    """The roles of a DepMap header's columns: ``(model-id position, default-entry flag
    column or None, gene column positions, their symbols)``; ExpressionDataError naming the
    columns found when there is no model id or no gene column, or a gene has no symbol."""
    if "ModelID" in header:
        id_pos = header.index("ModelID")
    elif _UNNAMED.match(header[0]):
        id_pos = 0
    else:
        raise ExpressionDataError(
            f"{path}: no model-id column: expected an unnamed first column of ACH-xxxxxx ids "
            f"or a 'ModelID' column; columns found: {_describe_columns(header)}",
            path=path,
        )
    flag = next((c for c in _DEPMAP_DEFAULT_FLAGS if c in header), None)
    meta = {
        p
        for p, h in enumerate(header)
        if h in DEPMAP_META_COLUMNS or p == id_pos or (p == 0 and _UNNAMED.match(h))
    }
    gene_pos = [p for p in range(len(header)) if p not in meta]
    if not gene_pos:
        raise ExpressionDataError(
            f"{path}: no gene columns; columns found: {_describe_columns(header)}", path=path
        )
    symbols = [_gene_symbol(header[p]) for p in gene_pos]
    empty = [header[p] for p, s in zip(gene_pos, symbols, strict=True) if not s]
    if empty:
        raise ExpressionDataError(
            f"{path}: gene column(s) without a symbol: {_list_some(empty)}", path=path
        )
    return id_pos, flag, gene_pos, symbols


def _model_ids(path: Path, column, flag: str | None) -> list[str]:
    """The kept rows' model ids, stripped; ExpressionDataError for an empty or a repeated one."""
    ids = pd.Series(column, dtype=object).str.strip()
    if ids.isna().any() or (ids == "").any():
        raise ExpressionDataError(f"{path}: a row has an empty model id", path=path)
    ids = list(ids)
    dup_ids = _duplicated(ids)
    if dup_ids:
        extra = (
            f" among the rows with {flag} true"
            if flag is not None
            else " (use a file with one row per model)"
        )
        raise ExpressionDataError(
            f"{path}: duplicated ModelID(s) {_list_some(sorted(dup_ids))}{extra}", path=path
        )
    return ids


def read_depmap_expression(
    path: str | Path,
    *,
    models: Iterable[str] | None = None,
    duplicates: str = "mean",
    allow_missing: bool = False,
    chunksize: int = 256,
) -> pd.DataFrame:
    """Read a DepMap expression matrix (``OmicsExpression...TPMLogp1...csv``).

    Two layouts are accepted:

    * up to 24Q4: first column unnamed (or ``ModelID``) with the ``ACH-xxxxxx``
      model ids, then one ``"SYMBOL (ENTREZ)"`` column per gene;
    * 2025 releases: one row per profile, leading columns ``ProfileID``,
      ``is_default_entry``, ``ModelID`` (also ``SequencingID``,
      ``IsDefaultEntryForModel``, ``ModelConditionID``, ``IsDefaultEntryForMC``
      are recognised as non-gene columns). Only the default entry of each model
      is kept, and rows are indexed by ``ModelID``.

    Parameters
    ----------
    path : path-like
        The CSV (``.gz`` / single-member ``.zip`` also work).
    models : iterable of str, optional
        Keep only these ModelIDs (filtered while streaming); requested models
        absent from the file are listed in ``attrs["missing_models"]``.
    duplicates : {"mean", "error"}
        For two columns with the same symbol once ``" (ENTREZ)"`` is stripped:
        average them or raise naming them.
    allow_missing : bool
        Keep empty/``NA`` cells as NaN instead of raising.
    chunksize : int
        Rows parsed at a time (memory only).

    Returns
    -------
    DataFrame
        float32, models (index ``ModelID``, file order) x gene symbols.

    Raises
    ------
    ExpressionDataError
        No model-id column (columns found listed), a duplicated ModelID among
        the kept rows, a non-numeric value (column, line, value named), missing
        values, duplicated symbols under ``duplicates="error"``.
    """
    _check_policy(duplicates)
    path = Path(path)
    header = _read_header(path, ",", None, "utf-8")
    id_pos, flag, gene_pos, symbols = _depmap_columns(path, header)
    flag_pos = header.index(flag) if flag is not None else None
    wanted = None if models is None else {str(m) for m in models}

    def keep_rows(chunk: pd.DataFrame) -> np.ndarray:
        keep = np.ones(len(chunk), dtype=bool)
        if flag_pos is not None:
            keep &= _parse_flags(path, flag, chunk[flag_pos].to_numpy(dtype=object))
        if wanted is not None:
            keep &= chunk[id_pos].isin(wanted).to_numpy()
        return keep

    text_pos = [id_pos] + ([flag_pos] if flag_pos is not None else [])
    text, values = _stream_matrix(
        path,
        header=header,
        sep=",",
        member_hint=None,
        encoding="utf-8",
        text_pos=text_pos,
        numeric_pos=gene_pos,
        chunksize=chunksize,
        keep_rows=keep_rows,
        row_label=lambda row: f"model {row[id_pos]!r}",
    )
    ids = _model_ids(path, text[id_pos], flag)
    if not allow_missing:
        _check_finite(path, values, ids, [header[p] for p in gene_pos], "model")
    dup_genes = _duplicated(symbols)
    if dup_genes and duplicates == "error":
        raise ExpressionDataError(
            f"{path}: duplicated gene symbols after stripping ' (ENTREZ)': "
            f"{_list_some(sorted(dup_genes))} (duplicates='error')",
            path=path,
        )
    values, symbols = _collapse(values, symbols, axis=1)
    frame = pd.DataFrame(
        values,
        index=pd.Index(ids, name="ModelID", dtype=object),
        columns=pd.Index(symbols, name="gene"),
        copy=False,
    )
    frame.attrs.update(
        source=str(path),
        layout="profiles" if "ModelID" in header else "models",
        duplicated_genes=sorted(dup_genes),
    )
    if wanted is not None:
        frame.attrs["missing_models"] = sorted(wanted.difference(ids))
    return frame


def read_depmap_models(path: str | Path) -> pd.DataFrame:
    """Read DepMap ``Model.csv``: model ids, lineages and cross-references.

    Parameters
    ----------
    path : path-like
        ``Model.csv`` (or the older ``sample_info.csv``).

    Returns
    -------
    DataFrame
        Columns ``ModelID``, ``lineage`` (from ``OncotreeLineage``, else
        ``lineage``/``Lineage``), ``COSMICID`` (nullable Int64),
        ``SangerModelID`` (from ``SangerModelID``/``Sanger_Model_ID``), plus
        ``CellLineName``, ``StrippedCellLineName``, ``OncotreePrimaryDisease``,
        ``OncotreeSubtype``, ``OncotreeCode`` when present; one row per model,
        file order.

    Raises
    ------
    ExpressionDataError
        A required column absent (the accepted names and the columns found are
        listed), an empty or duplicated ModelID, a non-integer COSMICID.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist")
    try:
        raw = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
        raise ExpressionDataError(f"{path}: not a readable CSV ({exc})", path=path) from exc
    cols = _resolve(path, list(raw.columns), _MODEL_COLUMNS)
    out = pd.DataFrame(
        {
            "ModelID": raw[cols["ModelID"]].str.strip(),
            "lineage": raw[cols["lineage"]],
            "COSMICID": _to_int(path, cols["COSMICID"], raw[cols["COSMICID"]], nullable=True),
            "SangerModelID": raw[cols["SangerModelID"]],
        }
    )
    for extra in _MODEL_OPTIONAL:
        if extra in raw.columns:
            out[extra] = raw[extra]
    if out["ModelID"].isna().any():
        i = int(out["ModelID"].isna().to_numpy().nonzero()[0][0])
        raise ExpressionDataError(
            f"{path}: column {cols['ModelID']!r} is empty in data row {i + 1}", path=path
        )
    dup = _duplicated(list(out["ModelID"]))
    if dup:
        raise ExpressionDataError(
            f"{path}: duplicated {cols['ModelID']!r} values: {_list_some(sorted(dup))}", path=path
        )
    out.attrs["source"] = str(path)
    return out


def depmap_tables(inputs) -> dict[str, pd.DataFrame]:
    """The DepMap caches from the raw files (``inputs.expression``, ``models``)."""
    return {"expression": read_depmap_expression(inputs.expression),
            "models": read_depmap_models(inputs.models)}
