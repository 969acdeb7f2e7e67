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
TCGA (UCSC Xena ``tcga_RSEM_gene_tpm``), read by :mod:`dprepro.data.tcga`.

:func:`harmonise_genes` intersects the gene symbols and maps the private matrix
onto the public value distribution (:func:`dprepro.representations.quantile.quantile_map`).
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

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from dprepro.runtime.io import write_parquet

__all__ = [
    "PREPROCESSORS",
    "PUBLIC_SOURCES",
    "harmonise_genes",
    "read_parquet_matrix",
    "read_public_expression",
    "write_parquet_atomic",
]

# the per-source readers and the shared helpers live in their own modules (split by
# concept); importing them here keeps every caller of dprepro.data.expression working
from dprepro.data import tcga
from dprepro.data.depmap import (
    depmap_tables,
    read_depmap_expression,
)
from dprepro.data.expression_io import (
    _INT_COLUMNS_ATTR,
    ExpressionDataError,
    _collapse,
    _list_some,
)
from dprepro.data.gdsc import (
    gdsc_tables,
)

# --------------------------------------------------------------------------- #
# public sources, harmonisation, cache
# --------------------------------------------------------------------------- #
#: Readers of public expression data, by configuration name. Each takes a
#: path and returns a float32 samples x gene-symbols DataFrame.
PUBLIC_SOURCES: dict[str, Callable[..., pd.DataFrame]] = {
    "depmap": read_depmap_expression,
    "tcga": tcga.read_tcga_xena_expression,
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
    genes by :func:`dprepro.representations.quantile.quantile_map` (global quantile
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
    from dprepro.representations.quantile import quantile_map

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




def tcga_tables(inputs, *, cancer_type_column: str = "_primary_disease") -> dict[str, pd.DataFrame]:
    """The TCGA caches from the raw Xena files (``inputs.expression``, ``probemap``,
    ``phenotype``), keeping only the symbols of the GDSC expression cache
    ``inputs.genes`` (its column names: the array's public gene list) when given;
    see :func:`dprepro.data.tcga.tcga_tables`."""
    import pyarrow.parquet as pq

    genes = None
    if "genes" in inputs.keys():
        schema = pq.read_schema(inputs.genes)
        index = {c for c in (schema.pandas_metadata or {}).get("index_columns", [])
                 if isinstance(c, str)}
        genes = [c for c in schema.names if c not in index]
    return tcga.tcga_tables(inputs, cancer_type_column=cancer_type_column, genes=genes)


#: The cache builder of each raw source (one function per preprocessing output set).
PREPROCESSORS = {"gdsc": gdsc_tables, "depmap": depmap_tables, "tcga": tcga_tables}
