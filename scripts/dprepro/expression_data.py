"""Raw inputs of the ``repr_transfer`` study (paper mode): parsers and harmonisation.

Private data (GDSC; its terms forbid redistribution, so these files are
downloaded, never bundled):

* :func:`read_gdsc_expression` -- ``Cell_line_RMA_proc_basalExp.txt`` (RMA log2
  basal expression), plain or inside its ``.zip``: tab-separated, columns
  ``GENE_SYMBOLS``, ``GENE_title``, then one ``DATA.<COSMIC_ID>`` per cell line
  (17,737 rows x 1,020 columns). Some rows have no symbol (dropped); some
  symbols occur on several rows, and a few COSMIC ids head two columns (public
  analyses of the file report ``DATA.1503362``, ``DATA.1330983``,
  ``DATA.909976`` and ``DATA.905954``, which pandas renames ``...1``).
* :func:`read_gdsc_dose_response` -- ``GDSC{1,2}_fitted_dose_response_*.xlsx``
  or its ``.csv`` twin (one row per cell line x drug: ``DATASET``,
  ``NLME_RESULT_ID``, ``NLME_CURVE_ID``, ``COSMIC_ID``, ``CELL_LINE_NAME``,
  ``SANGER_MODEL_ID``, ``TCGA_DESC``, ``DRUG_ID``, ``DRUG_NAME``,
  ``PUTATIVE_TARGET``, ``PATHWAY_NAME``, ``COMPANY_ID``, ``WEBRELEASE``,
  ``MIN_CONC``, ``MAX_CONC``, ``LN_IC50``, ``AUC``, ``RMSE``, ``Z_SCORE``),
  made into a COSMIC_ID x DRUG_ID matrix of ``LN_IC50``.
* :func:`read_gdsc_cell_lines` -- ``Cell_Lines_Details.xlsx`` (sheet
  ``Cell line details``; 13 columns whose headers contain line breaks:
  ``Sample Name``, ``COSMIC identifier``, ``Whole Exome Sequencing (WES)``,
  ``Copy Number Alterations (CNA)``, ``Gene Expression``, ``Methylation``,
  ``Drug\\nResponse``, ``GDSC\\nTissue descriptor 1``,
  ``GDSC\\nTissue\\ndescriptor 2``, ``Cancer Type\\n(matching TCGA label)``,
  ``Microsatellite \\ninstability Status (MSI)``, ``Screen Medium``,
  ``Growth Properties``; rows without a COSMIC id, such as a totals row at the
  bottom of the sheet, are dropped).

Public data (DepMap, CC BY 4.0):

* :func:`read_depmap_expression` -- ``OmicsExpressionProteinCodingGenesTPMLogp1.csv``
  (log2(TPM+1); ~1,500 rows x ~19,000 ``"SYMBOL (ENTREZ)"`` columns; the
  first, unnamed column holds ``ACH-xxxxxx`` model ids). Releases from 2025 on
  (``OmicsExpressionTPMLogp1HumanProteinCodingGenes.csv``) have one row per
  profile with leading columns ``ProfileID``, ``is_default_entry``, ``ModelID``;
  both layouts are read.
* :func:`read_depmap_models` -- ``Model.csv`` (``ModelID``, ``OncotreeLineage``,
  ``COSMICID``, ``SangerModelID``, ...).

The public source is pluggable through :data:`PUBLIC_SOURCES`; the paper used
TCGA (UCSC Xena ``tcga_RSEM_gene_tpm``), read by :mod:`dprepro.tcga_data`.

:func:`harmonise_genes` intersects the gene symbols and maps the private matrix
onto the public value distribution (:func:`dprepro.representations.quantile_map`).
:func:`write_parquet_atomic` caches a parsed matrix as Parquet.

The large matrices are parsed in bounded memory: the header is read on its
own, then pandas' C parser streams the rows in chunks, each chunk's numbers
are turned into ``float32`` at once, and only those blocks are kept, so the
peak is a small multiple of the ``float32`` result (about 350 MB for the GDSC
file and 450 MB for the DepMap one, interpreter included; see
``benchmarks/bench_expression_memory.py``). A ``.zip`` is read by streaming
its member, never extracted to disk. Per-column ``dtype``/``na_values``
mappings and ``usecols`` are deliberately not used: the former cost a
per-column overhead in every chunk (3-4x slower on 19,000 columns), the
latter makes pandas silently drop the surplus fields of a ragged row.

Column names were checked against public descriptions of the files: the
DepMap 25Q3 README (Model.csv fields; "Columns are ProfileID,
is_default_entry, ModelID and then a column per gene" for the 2025
expression files), and public code and logs reading GDSC release 8.x files
(the 19 dose-response columns; Cell_Lines_Details.xlsx with shape (1002, 13)
and the headers above; the duplicated ``DATA.<id>`` columns).

Every error is an :class:`ExpressionDataError` naming the file and the column
or value at fault, and listing the columns found when a required one is missing.
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import gzip
import re
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

from dprepro.io import write_parquet

__all__ = [
    "DEPMAP_META_COLUMNS",
    "GDSC_CELL_LINE_COLUMNS",
    "GDSC_DOSE_RESPONSE_COLUMNS",
    "GDSC_EXPRESSION_MEMBER",
    "PREPROCESSORS",
    "PUBLIC_SOURCES",
    "ExpressionDataError",
    "depmap_tables",
    "gdsc_tables",
    "harmonise_genes",
    "read_depmap_expression",
    "read_depmap_models",
    "read_gdsc_cell_lines",
    "read_gdsc_dose_response",
    "read_gdsc_expression",
    "read_gdsc_ic50_matrix",
    "read_gdsc_sanger_ids",
    "read_parquet_matrix",
    "read_public_expression",
    "read_tcga_xena_expression",
    "write_parquet_atomic",
]

GDSC_EXPRESSION_MEMBER = "Cell_line_RMA_proc_basalExp.txt"

GDSC_DOSE_RESPONSE_COLUMNS = (
    "DATASET",
    "NLME_RESULT_ID",
    "NLME_CURVE_ID",
    "COSMIC_ID",
    "CELL_LINE_NAME",
    "SANGER_MODEL_ID",
    "TCGA_DESC",
    "DRUG_ID",
    "DRUG_NAME",
    "PUTATIVE_TARGET",
    "PATHWAY_NAME",
    "COMPANY_ID",
    "WEBRELEASE",
    "MIN_CONC",
    "MAX_CONC",
    "LN_IC50",
    "AUC",
    "RMSE",
    "Z_SCORE",
)

# Cell_Lines_Details.xlsx headers with runs of whitespace (including the line
# breaks of the spreadsheet) collapsed to one space -> output column. The
# first five are required.
GDSC_CELL_LINE_COLUMNS = {
    "COSMIC identifier": "COSMIC_ID",
    "Sample Name": "CELL_LINE_NAME",
    "GDSC Tissue descriptor 1": "GDSC_TISSUE_1",
    "GDSC Tissue descriptor 2": "GDSC_TISSUE_2",
    "Cancer Type (matching TCGA label)": "TCGA_LABEL",
    "Microsatellite instability Status (MSI)": "MSI",
    "Screen Medium": "SCREEN_MEDIUM",
    "Growth Properties": "GROWTH_PROPERTIES",
    "Whole Exome Sequencing (WES)": "HAS_WES",
    "Copy Number Alterations (CNA)": "HAS_CNA",
    "Gene Expression": "HAS_EXPRESSION",
    "Methylation": "HAS_METHYLATION",
    "Drug Response": "HAS_DRUG_RESPONSE",
}
_CELL_LINE_REQUIRED = tuple(list(GDSC_CELL_LINE_COLUMNS)[:5])
_CELL_LINE_SHEET = "Cell line details"

# Non-gene columns of DepMap expression matrices (24Q4 and later layouts).
DEPMAP_META_COLUMNS = frozenset(
    {
        "ProfileID",
        "is_default_entry",
        "ModelID",
        "SequencingID",
        "IsDefaultEntryForModel",
        "ModelConditionID",
        "IsDefaultEntryForMC",
    }
)
_DEPMAP_DEFAULT_FLAGS = ("is_default_entry", "IsDefaultEntryForModel")
_UNNAMED = re.compile(r"^(?:|Unnamed: 0)$")
_ENTREZ_SUFFIX = re.compile(r"\s*\([^()]*\)\s*$")
_GDSC_DATA_COLUMN = re.compile(r"^DATA\.(\d+)(?:\.\d+)?$")

# Model.csv: output column -> accepted source names, first match wins
# (DepMap's older sample_info.csv used DepMap_ID, lineage, Sanger_Model_ID).
_MODEL_COLUMNS = {
    "ModelID": ("ModelID", "DepMap_ID"),
    "lineage": ("OncotreeLineage", "lineage", "Lineage"),
    "COSMICID": ("COSMICID", "COSMIC_ID"),
    "SangerModelID": ("SangerModelID", "Sanger_Model_ID"),
}
_MODEL_OPTIONAL = (
    "CellLineName",
    "StrippedCellLineName",
    "OncotreePrimaryDisease",
    "OncotreeSubtype",
    "OncotreeCode",
)

_NUMERIC_NA = sorted(
    {"", "#N/A", "#N/A N/A", "#NA", "-NaN", "-nan", "<NA>", "N/A", "NA", "NULL", "NaN", "n/a"}
    | {"nan", "null", "None"}
)
_NUMERIC_NA_SET = frozenset(_NUMERIC_NA)
_DUPLICATE_POLICIES = ("mean", "error")
_TRUE = frozenset({"true", "yes", "y", "t", "1", "1.0"})
_FALSE = frozenset({"false", "no", "n", "f", "0", "0.0", ""})
_INT_COLUMNS_ATTR = "dprepro_int_columns"


class ExpressionDataError(ValueError):
    """A raw input file is malformed or does not have the expected layout.

    Attributes
    ----------
    path : str or None
        The file at fault, when there is one.
    """

    def __init__(self, message: str, *, path: str | Path | None = None):
        super().__init__(message)
        self.path = None if path is None else str(path)


# --------------------------------------------------------------------------- #
# streaming helpers
# --------------------------------------------------------------------------- #
def _check_policy(duplicates: str) -> None:
    if duplicates not in _DUPLICATE_POLICIES:
        raise ValueError(f"duplicates must be one of {_DUPLICATE_POLICIES}, got {duplicates!r}")


def _is_zip(path: Path) -> bool:
    if path.suffix.lower() == ".zip":
        return True
    with open(path, "rb") as fh:
        return fh.read(4) == b"PK\x03\x04"


def _pick_member(zf: zipfile.ZipFile, path: Path, member_hint: str | None) -> str:
    names = [n for n in zf.namelist() if not n.endswith("/") and not n.startswith("__MACOSX/")]
    if member_hint is not None:
        hits = [n for n in names if n.rsplit("/", 1)[-1] == member_hint]
        if len(hits) == 1:
            return hits[0]
    if len(names) == 1:
        return names[0]
    raise ExpressionDataError(
        f"{path}: cannot tell which member of the zip archive to read"
        + (f" (expected one named {member_hint!r})" if member_hint else "")
        + f"; members: {names}",
        path=path,
    )


@contextlib.contextmanager
def _open_stream(path: Path, member_hint: str | None = None) -> Iterator[IO[bytes]]:
    """Open ``path`` (plain, ``.gz`` or ``.zip``) as a binary stream, decompressing on the fly.

    Decompression failures inside the ``with`` block (a corrupt or truncated
    archive) become :class:`ExpressionDataError`.
    """
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist")
    hint = "the download is corrupt or truncated; delete the file and download it again"
    if _is_zip(path):
        try:
            zf = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            raise ExpressionDataError(
                f"{path} is not a readable zip archive ({exc}); {hint}", path=path
            ) from exc
        with zf:
            member = _pick_member(zf, path, member_hint)
            try:
                with zf.open(member) as fh:
                    yield fh
            except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as exc:
                raise ExpressionDataError(
                    f"{path}: reading member {member!r} failed ({type(exc).__name__}: {exc}); "
                    f"{hint}",
                    path=path,
                ) from exc
    elif path.suffix.lower() == ".gz":
        try:
            with gzip.open(path, "rb") as fh:
                yield fh
        except (gzip.BadGzipFile, zlib.error, EOFError) as exc:
            raise ExpressionDataError(
                f"{path}: gzip stream is corrupt ({exc}); {hint}", path=path
            ) from exc
    else:
        with open(path, "rb") as fh:
            yield fh


def _read_header(path: Path, sep: str, member_hint: str | None, encoding: str) -> list[str]:
    with _open_stream(path, member_hint) as fh:
        line = fh.readline()
    if line.startswith(codecs.BOM_UTF8):
        line = line[len(codecs.BOM_UTF8) :]
    text = line.decode(encoding, errors="replace").rstrip("\r\n")
    if not text.strip():
        raise ExpressionDataError(f"{path} is empty (no header line)", path=path)
    return next(csv.reader([text], delimiter=sep))


def _describe_columns(columns: Sequence[str], limit: int = 30) -> str:
    shown = [repr(c) for c in columns[:limit]]
    more = f", ... ({len(columns)} in all)" if len(columns) > limit else ""
    return "[" + ", ".join(shown) + more + "]"


def _missing_columns_error(path, missing: Sequence[str], found: Sequence[str], what: str = ""):
    return ExpressionDataError(
        f"{path}: required column{'s' if len(missing) != 1 else ''} "
        f"{', '.join(repr(m) for m in missing)} not found{what}; "
        f"columns found: {_describe_columns(list(found))}",
        path=path,
    )


def _stream_chunks(
    path: Path,
    *,
    header: Sequence[str],
    sep: str,
    member_hint: str | None,
    encoding: str,
    chunksize: int,
    quoting: int = csv.QUOTE_MINIMAL,
) -> Iterator[pd.DataFrame]:
    """Yield DataFrame chunks of a delimited file, columns labelled by position.

    Every field is parsed (no ``usecols``: with it pandas silently drops the
    surplus fields of a ragged row) with NA detection off and no ``dtype``
    mapping: both cost a per-column overhead in every chunk that makes a
    19,000-column file several times slower. Numeric columns come out as
    float64/int64 when clean; :func:`_numeric_block` handles the rest.
    """
    with _open_stream(path, member_hint) as fh:
        reader = pd.read_csv(
            fh,
            sep=sep,
            header=None,
            names=list(range(len(header))),
            skiprows=1,
            na_filter=False,
            engine="c",
            encoding=encoding,
            quoting=quoting,
            index_col=False,
            chunksize=chunksize,
        )
        with reader:
            yield from reader


def _numeric_block(
    path: Path,
    chunk: pd.DataFrame,
    header: Sequence[str],
    numeric_pos: Sequence[int],
    row_label: Callable[[pd.Series], str] | None,
) -> np.ndarray:
    """The numeric columns of a chunk as float32; NA tokens become NaN, other text is an error."""
    block = chunk[list(numeric_pos)]
    odd = [p for p, dt in zip(numeric_pos, block.dtypes, strict=True) if dt.kind not in "fiu"]
    if not odd:
        return block.to_numpy(dtype=np.float32)
    block = block.copy()
    for p in odd:
        text = block[p].astype(str).str.strip()
        is_na = text.isin(_NUMERIC_NA_SET)
        num = pd.to_numeric(text.mask(is_na), errors="coerce")
        bad = num.isna() & ~is_na
        if bad.any():
            row = bad.idxmax()
            where = f" ({row_label(chunk.loc[row])})" if row_label is not None else ""
            raise ExpressionDataError(
                f"{path}: column {header[p]!r} must be numeric but has {text.loc[row]!r} on "
                f"line {int(row) + 2}{where}",
                path=path,
            )
        block[p] = num.astype(np.float64)
    return block.to_numpy(dtype=np.float32)


def _stream_matrix(
    path: Path,
    *,
    header: Sequence[str],
    sep: str,
    member_hint: str | None,
    encoding: str,
    text_pos: Sequence[int],
    numeric_pos: Sequence[int],
    chunksize: int,
    quoting: int = csv.QUOTE_MINIMAL,
    keep_rows: Callable[[pd.DataFrame], np.ndarray] | None = None,
    row_label: Callable[[pd.Series], str] | None = None,
) -> tuple[dict[int, np.ndarray], np.ndarray]:
    """Stream a delimited matrix into (text columns as str, float32 values), chunk by chunk."""
    texts: dict[int, list[np.ndarray]] = {p: [] for p in text_pos}
    blocks: list[np.ndarray] = []
    chunks = _stream_chunks(
        path,
        header=header,
        sep=sep,
        member_hint=member_hint,
        encoding=encoding,
        chunksize=chunksize,
        quoting=quoting,
    )
    try:
        for chunk in chunks:
            for p in text_pos:
                if chunk[p].dtype != object:
                    chunk[p] = chunk[p].astype(str)
            if keep_rows is not None:
                chunk = chunk.loc[keep_rows(chunk)]
            for p in text_pos:
                texts[p].append(chunk[p].to_numpy(dtype=object))
            blocks.append(_numeric_block(path, chunk, header, numeric_pos, row_label))
            del chunk
    except pd.errors.ParserError as exc:
        raise ExpressionDataError(
            f"{path}: malformed table ({exc}); every row must have the "
            f"{len(header)} fields of the header",
            path=path,
        ) from exc
    except UnicodeDecodeError as exc:
        raise ExpressionDataError(f"{path}: not {encoding} text ({exc})", path=path) from exc
    finally:
        chunks.close()
    values = (
        np.concatenate(blocks, axis=0)
        if blocks
        else np.empty((0, len(numeric_pos)), dtype=np.float32)
    )
    del blocks
    text = {p: (np.concatenate(v) if v else np.empty(0, dtype=object)) for p, v in texts.items()}
    return text, values


def _collapse(values: np.ndarray, labels: Sequence, axis: int) -> tuple[np.ndarray, list]:
    """Average the slices of ``values`` along ``axis`` that share a label (first-seen order)."""
    codes, uniques = pd.factorize(pd.Index(labels), sort=False)
    if len(uniques) == len(codes):
        return values, list(uniques)
    counts = np.bincount(codes, minlength=len(uniques))
    first = np.unique(codes, return_index=True)[1]
    out = np.take(values, first, axis=axis).astype(np.float32, copy=True)
    for c in np.flatnonzero(counts > 1):
        members = np.flatnonzero(codes == c)
        mean = np.take(values, members, axis=axis).mean(axis=axis, dtype=np.float64)
        if axis == 0:
            out[c, :] = mean
        else:
            out[:, c] = mean
    return out, list(uniques)


def _duplicated(labels: Sequence) -> list:
    index = pd.Index(labels)
    return list(index[index.duplicated()].unique())


def _list_some(items: Sequence, limit: int = 20) -> str:
    shown = ", ".join(repr(x) for x in list(items)[:limit])
    return shown + (f", ... ({len(items)} in all)" if len(items) > limit else "")


def _check_finite(path: Path, values: np.ndarray, rows: Sequence, cols: Sequence, what: str):
    finite = np.isfinite(values)
    if finite.all():
        return
    bad = np.argwhere(~finite)
    i, j = bad[0]
    raise ExpressionDataError(
        f"{path}: {len(bad)} missing or non-finite value(s); first at {what} "
        f"{rows[i]!r}, column {cols[j]!r} (value {values[i, j]!r}). Pass "
        "allow_missing=True to keep them as NaN",
        path=path,
    )


# --------------------------------------------------------------------------- #
# GDSC basal expression
# --------------------------------------------------------------------------- #
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


# --------------------------------------------------------------------------- #
# DepMap
# --------------------------------------------------------------------------- #
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
    flag_pos = header.index(flag) if flag is not None else None
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
    ids = pd.Series(text[id_pos], dtype=object).str.strip()
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


def _resolve(path, found: Sequence[str], candidates: dict[str, tuple[str, ...]]):
    resolved, missing = {}, []
    for out, names in candidates.items():
        hit = next((n for n in names if n in found), None)
        if hit is None:
            missing.append(out)
        resolved[out] = hit
    if missing:
        expected = "; ".join(
            f"{out}: one of {', '.join(repr(n) for n in candidates[out])}" for out in missing
        )
        raise ExpressionDataError(
            f"{path}: required column(s) missing ({expected}); columns found: "
            f"{_describe_columns(list(found))}",
            path=path,
        )
    return resolved


def _to_int(path, column: str, series: pd.Series, *, nullable: bool) -> pd.Series:
    raw = series.astype("string").str.strip()
    raw = raw.mask(raw == "")
    num = pd.to_numeric(raw, errors="coerce")
    bad = raw.notna() & (num.isna() | (num % 1 != 0))
    if bad.any():
        i = bad.to_numpy().nonzero()[0][0]
        raise ExpressionDataError(
            f"{path}: column {column!r} must hold integer ids but has {raw.iloc[i]!r} "
            f"(row {i + 1} of the data)",
            path=path,
        )
    if not nullable and num.isna().any():
        i = num.isna().to_numpy().nonzero()[0][0]
        raise ExpressionDataError(
            f"{path}: column {column!r} is empty in data row {i + 1}", path=path
        )
    return num.astype("Int64")


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


# --------------------------------------------------------------------------- #
# GDSC dose response and cell-line details
# --------------------------------------------------------------------------- #
def _is_excel(path: Path) -> bool:
    return path.suffix.lower() in (".xlsx", ".xlsm")


def _require_openpyxl(path: Path) -> None:
    try:
        import openpyxl  # noqa: F401
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            f"reading {path} needs openpyxl (pip install openpyxl==3.1.5), or use the .csv "
            "twin of the file"
        ) from exc


def _read_table_columns(path: Path, wanted: Callable[[str], bool], **excel_kw) -> tuple:
    """Read a CSV or XLSX keeping the columns ``wanted`` accepts; also return all headers."""
    seen: list[str] = []

    def usecols(name) -> bool:
        seen.append(str(name))
        return wanted(str(name))

    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist")
    try:
        if _is_excel(path):
            _require_openpyxl(path)
            frame = pd.read_excel(
                path, engine="openpyxl", usecols=usecols, dtype=object, **excel_kw
            )
        else:
            frame = pd.read_csv(
                path, usecols=usecols, dtype=str, keep_default_na=False, na_values=_NUMERIC_NA
            )
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise ExpressionDataError(f"{path}: not a readable table ({exc})", path=path) from exc
    except (zipfile.BadZipFile, KeyError, OSError) as exc:
        raise ExpressionDataError(
            f"{path}: not a readable .xlsx workbook ({type(exc).__name__}: {exc})", path=path
        ) from exc
    return frame, list(dict.fromkeys(seen))


def _to_float(path, column: str, series: pd.Series) -> pd.Series:
    raw = series.astype("string").str.strip()
    raw = raw.mask(raw.isin(_NUMERIC_NA))
    num = pd.to_numeric(raw, errors="coerce")
    bad = raw.notna() & num.isna()
    if bad.any():
        i = int(bad.to_numpy().nonzero()[0][0])
        raise ExpressionDataError(
            f"{path}: column {column!r} must be numeric but has {raw.iloc[i]!r} (data row {i + 1})",
            path=path,
        )
    return num.astype(np.float64)


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


# --------------------------------------------------------------------------- #
# public sources, harmonisation, cache
# --------------------------------------------------------------------------- #
def read_tcga_xena_expression(path: str | Path, **kwargs) -> pd.DataFrame:
    """The paper's public source, TCGA (UCSC Xena ``tcga_RSEM_gene_tpm``).

    Streams the genes x samples matrix into samples x symbols (float32,
    log2(TPM + 0.001)); see :func:`dprepro.tcga_data.read_tcga_xena_expression`
    (``probemap`` is required, ``samples`` and ``genes`` bound the memory).
    """
    from .tcga_data import read_tcga_xena_expression as read

    return read(path, **kwargs)


#: Readers of public expression data, by configuration name. Each takes a
#: path and returns a float32 samples x gene-symbols DataFrame.
PUBLIC_SOURCES: dict[str, Callable[..., pd.DataFrame]] = {
    "depmap": read_depmap_expression,
    "tcga": read_tcga_xena_expression,
}


def read_public_expression(source: str, path: str | Path, **kwargs) -> pd.DataFrame:
    """Read public expression data with the reader registered for ``source``."""
    try:
        reader = PUBLIC_SOURCES[source]
    except KeyError:
        raise ValueError(
            f"unknown public expression source {source!r}; known: {sorted(PUBLIC_SOURCES)}"
        ) from None
    return reader(path, **kwargs)


def _upper_columns(frame: pd.DataFrame) -> pd.DataFrame:
    symbols = [str(c).strip().upper() for c in frame.columns]
    values, uniques = _collapse(frame.to_numpy(dtype=np.float32), symbols, axis=1)
    return pd.DataFrame(values, index=frame.index, columns=pd.Index(uniques, name="gene"))


def harmonise_genes(
    private: pd.DataFrame,
    public: pd.DataFrame,
    *,
    min_shared: int = 1000,
    private_name: str | None = None,
    public_name: str | None = None,
    local: bool = False,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Restrict both matrices to shared genes and quantile-map private onto public.

    Gene symbols are compared exactly after stripping and upper-casing (HGNC
    writes ``C1orf112``, some sources ``C1ORF112``); symbols that coincide
    after upper-casing within one matrix are averaged. The private matrix is
    then mapped onto the pooled public value distribution over the shared
    genes by :func:`dprepro.representations.quantile_map` (global quantile
    mapping, as in the paper; ``local=True``: each line mapped by its own
    ranks, so no line's values depend on another private line).

    Parameters
    ----------
    private, public : DataFrame
        Samples x gene symbols (e.g. :func:`read_gdsc_expression`,
        :func:`read_depmap_expression`), finite values.
    min_shared : int
        Fewest shared genes accepted.
    private_name, public_name : str, optional
        Names for messages; default ``attrs["source"]`` of each frame.

    Returns
    -------
    (private_mapped, public_shared) : tuple of DataFrame
        float32, same sample indexes as the inputs, columns the shared
        symbols (upper case, sorted).

    Raises
    ------
    ExpressionDataError
        Fewer than ``min_shared`` shared genes (both gene counts and examples
        are named), non-finite values in the shared genes.
    """
    pname = private_name or private.attrs.get("source", "private data")
    qname = public_name or public.attrs.get("source", "public data")
    priv, pub = _upper_columns(private), _upper_columns(public)
    shared = sorted(set(priv.columns) & set(pub.columns))
    if len(shared) < min_shared:
        raise ExpressionDataError(
            f"only {len(shared)} gene symbols shared between private {pname} "
            f"({priv.shape[1]} genes, e.g. {_list_some(list(priv.columns), 5)}) and public "
            f"{qname} ({pub.shape[1]} genes, e.g. {_list_some(list(pub.columns), 5)}); "
            f"need at least {min_shared}. Are both indexed by gene symbols (not Ensembl or "
            "Entrez ids)?"
        )
    priv, pub = priv.loc[:, shared], pub.loc[:, shared]
    for name, frame in ((pname, priv), (qname, pub)):
        finite = np.isfinite(frame.to_numpy())
        if not finite.all():
            cols = frame.columns[~finite.all(axis=0)]
            raise ExpressionDataError(
                f"{name}: non-finite values in shared gene(s) {_list_some(list(cols))}; "
                "impute or drop them before quantile mapping"
            )
    # Imported here: representations pulls in torch and scikit-learn, which
    # the data-only environment does not need for parsing.
    from dprepro.representations import quantile_map

    mapped = quantile_map(priv, pub, local=local).astype(np.float32)
    mapped.index, mapped.columns = priv.index, pd.Index(shared, name="gene")
    for frame, src in ((mapped, pname), (pub, qname)):
        frame.attrs = {"source": str(src)}
    mapped.attrs["quantile_mapped_onto"] = str(qname)
    return mapped, pub


def write_parquet_atomic(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write ``frame`` (index included) as Parquet, atomically (temp file + rename).

    Parquet needs string column labels: integer labels (e.g. the ``DRUG_ID``
    columns of :func:`read_gdsc_dose_response`) are written as strings and
    restored by :func:`read_parquet_matrix`. dtypes (float32) and
    ``frame.attrs`` round-trip.
    """
    path = Path(path)
    out = frame
    int_columns = pd.api.types.is_integer_dtype(frame.columns.dtype)
    if int_columns:
        out = frame.copy(deep=False)
        out.columns = pd.Index([str(c) for c in frame.columns], name=frame.columns.name)
    elif not all(isinstance(c, str) for c in frame.columns):
        raise TypeError(f"write_parquet_atomic: column labels must be strings or integers ({path})")
    out.attrs = {**frame.attrs, _INT_COLUMNS_ATTR: bool(int_columns)}
    write_parquet(out, path, index=True)
    return path


def read_parquet_matrix(path: str | Path) -> pd.DataFrame:
    """Read a matrix written by :func:`write_parquet_atomic` (integer labels restored)."""
    frame = pd.read_parquet(path, engine="pyarrow")
    if frame.attrs.pop(_INT_COLUMNS_ATTR, False):
        frame.columns = pd.Index(frame.columns.astype(np.int64), name=frame.columns.name)
    return frame


_IC50_COLUMN = re.compile(r"^Drug_(\d+)_IC50$")


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
    if response.lower().endswith(".xlsx"):
        dose_response = read_gdsc_dose_response(response)
    else:
        with _open_maybe_gzip(response) as handle:
            ic50 = "Drug_" in handle.readline()
        dose_response = (read_gdsc_ic50_matrix(response) if ic50
                         else read_gdsc_dose_response(response))
    cell_lines = read_gdsc_cell_lines(inputs.cell_lines)
    if dose_response.attrs.get("value") is not None:  # a release workbook: it has model ids
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


def depmap_tables(inputs) -> dict[str, pd.DataFrame]:
    """The DepMap caches from the raw files (``inputs.expression``, ``models``)."""
    return {"expression": read_depmap_expression(inputs.expression),
            "models": read_depmap_models(inputs.models)}


def tcga_tables(inputs, *, cancer_type_column: str = "_primary_disease") -> dict[str, pd.DataFrame]:
    """The TCGA caches from the raw Xena files (``inputs.expression``, ``probemap``,
    ``phenotype``), keeping only the symbols of the GDSC expression cache
    ``inputs.genes`` (its column names: the array's public gene list) when given;
    see :func:`dprepro.tcga_data.tcga_tables`."""
    import pyarrow.parquet as pq

    from .tcga_data import tcga_tables as tables

    genes = None
    if "genes" in inputs.keys():
        schema = pq.read_schema(inputs.genes)
        index = {c for c in (schema.pandas_metadata or {}).get("index_columns", [])
                 if isinstance(c, str)}
        genes = [c for c in schema.names if c not in index]
    return tables(inputs, cancer_type_column=cancer_type_column, genes=genes)


#: The cache builder of each raw source (one function per preprocessing output set).
PREPROCESSORS = {"gdsc": gdsc_tables, "depmap": depmap_tables, "tcga": tcga_tables}
