r"""Shared parsing helpers of the expression readers (GDSC, DepMap, TCGA).

Streaming of large delimited (optionally zipped) matrices, column resolution,
numeric conversion with clear errors naming file, column and value, and the
file-format constants. Split out of :mod:`dprepro.data.expression` (which
re-exports the public names) so that the per-source readers
(:mod:`dprepro.data.gdsc`, :mod:`dprepro.data.depmap`) share them without an import cycle.
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import gzip
import re
import zipfile
import zlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO

import numpy as np
import pandas as pd

__all__ = ["DEPMAP_META_COLUMNS", "GDSC_CELL_LINE_COLUMNS", "GDSC_DOSE_RESPONSE_COLUMNS",
           "GDSC_EXPRESSION_MEMBER", "ExpressionDataError"]

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
# --------------------------------------------------------------------------- #
# DepMap
# --------------------------------------------------------------------------- #
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
