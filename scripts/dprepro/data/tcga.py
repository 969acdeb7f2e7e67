r"""The paper's public source: TCGA pan-cancer expression from UCSC Xena (toil RSEM TPM).

Files (Xena hubs, as used by Niinimäki et al. 2019):

* ``tcga_RSEM_gene_tpm.gz`` (toil hub) -- gzip TSV, **genes x samples**: a
  header ``sample<TAB>TCGA-..-....-01<TAB>...`` then one row per Ensembl gene
  id (``ENSG00000242268.2``) with :math:`\log_2(\mathrm{TPM} + 0.001)` per
  sample; ~60,000 genes x ~10,500 samples, ~8 GB uncompressed;
* ``probeMap/gencode.v23.annotation.gene.probemap`` -- TSV ``id``, ``gene``,
  ``chrom``, ``chromStart``, ``chromEnd``, ``strand`` (Ensembl id -> symbol);
* ``TCGA_phenotype_denseDataOnlyDownload.tsv.gz`` (pan-cancer atlas hub) --
  TSV with ``sample`` and ``_primary_disease`` (the cancer type), among others.

:func:`read_tcga_xena_expression` streams the gzip line by line and keeps only
the requested samples and the genes that map to the requested symbols, so the
peak memory is the kept float32 block (symbols x samples) plus one line. As
the authors did, the values of Ensembl ids sharing a symbol are summed on the
TPM scale (:math:`2^x - 0.001`) and logged again.
"""

from __future__ import annotations

import gzip
import warnings
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from dprepro.data.expression_io import ExpressionDataError
from dprepro.runtime.privacy_record import non_private

__all__ = [
    "TCGA_STUDY_OF_DISEASE",
    "holdout_labels",
    "read_tcga_phenotype",
    "read_tcga_probemap",
    "read_tcga_xena_expression",
    "tcga_tables",
]

#: Offset of Xena's log2(TPM + 0.001) transform.
TPM_OFFSET = 0.001

#: Xena's ``_primary_disease`` (lower-case TCGA study names) -> TCGA study
#: abbreviation, the vocabulary of GDSC's ``TCGA_LABEL``; so public and private
#: cancer types share names and a case's types can be held out of the public set.
TCGA_STUDY_OF_DISEASE = {
    "acute myeloid leukemia": "LAML",
    "adrenocortical cancer": "ACC",
    "bladder urothelial carcinoma": "BLCA",
    "brain lower grade glioma": "LGG",
    "breast invasive carcinoma": "BRCA",
    "cervical & endocervical cancer": "CESC",
    "cholangiocarcinoma": "CHOL",
    "colon adenocarcinoma": "COAD",
    "diffuse large b-cell lymphoma": "DLBC",
    "esophageal carcinoma": "ESCA",
    "glioblastoma multiforme": "GBM",
    "head & neck squamous cell carcinoma": "HNSC",
    "kidney chromophobe": "KICH",
    "kidney clear cell carcinoma": "KIRC",
    "kidney papillary cell carcinoma": "KIRP",
    "liver hepatocellular carcinoma": "LIHC",
    "lung adenocarcinoma": "LUAD",
    "lung squamous cell carcinoma": "LUSC",
    "mesothelioma": "MESO",
    "ovarian serous cystadenocarcinoma": "OV",
    "pancreatic adenocarcinoma": "PAAD",
    "pheochromocytoma & paraganglioma": "PCPG",
    "prostate adenocarcinoma": "PRAD",
    "rectum adenocarcinoma": "READ",
    "sarcoma": "SARC",
    "skin cutaneous melanoma": "SKCM",
    "stomach adenocarcinoma": "STAD",
    "testicular germ cell tumor": "TGCT",
    "thymoma": "THYM",
    "thyroid carcinoma": "THCA",
    "uterine carcinosarcoma": "UCS",
    "uterine corpus endometrioid carcinoma": "UCEC",
    "uveal melanoma": "UVM",
}

#: Privacy record of the TCGA caches (open-access public data, no mechanism).
PRIVACY = non_private("public data (TCGA via UCSC Xena, open access)", mechanism="none")

#: GDSC labels that pool TCGA studies (GDSC's colorectal lines are one label).
GDSC_POOLED_LABELS = {"COREAD": ("COAD", "READ")}


def _is_gzip(path: Path) -> bool:
    # by content, not name: a download may be stored under any name
    with open(path, "rb") as handle:
        return handle.read(2) == b"\x1f\x8b"


def _compression(path: Path) -> str | None:
    return "gzip" if _is_gzip(path) else None


def _open_text(path: Path):
    gz = _is_gzip(path)
    return gzip.open(path, "rt", encoding="utf-8") if gz else open(path, encoding="utf-8")


def _parse_values(path: Path, lineno: int, gene_id: str, text: str, n: int) -> np.ndarray:
    """The ``n`` tab-separated values of one matrix line as float64.

    ``np.fromstring`` parses the text in C (several times faster than a list of
    Python strings, same correctly rounded doubles); a short or malformed line
    falls back to the split, which names the problem.
    """
    try:
        with warnings.catch_warnings():
            # numpy warns, or raises in newer versions, on text it cannot read to its end
            warnings.simplefilter("ignore", DeprecationWarning)
            values = np.fromstring(text, dtype=np.float64, sep="\t")
        if values.size == n:
            return values
    except ValueError:
        pass
    fields = text.split("\t")
    if len(fields) != n:
        raise ExpressionDataError(f"{path}, line {lineno}: {len(fields)} values for {n} samples",
                                  path=path)
    try:
        return np.asarray(fields, dtype=np.float64)
    except ValueError:
        raise ExpressionDataError(f"{path}, line {lineno}: non-numeric value for gene "
                                  f"{gene_id!r}", path=path) from None


def read_tcga_probemap(path: str | Path) -> dict[str, str]:
    """Ensembl gene id (with version) -> upper-case gene symbol, from a Xena probemap."""
    path = Path(path)
    frame = pd.read_csv(path, sep="\t", usecols=lambda c: c in ("id", "gene"), dtype=str,
                        compression=_compression(path))
    if list(frame.columns) != ["id", "gene"] and set(frame.columns) != {"id", "gene"}:
        raise ExpressionDataError(f"{path}: a probemap needs columns 'id' and 'gene'; found "
                                  f"{list(frame.columns)}", path=path)
    frame = frame.dropna()
    return dict(zip(frame["id"].str.strip(), frame["gene"].str.strip().str.upper(), strict=True))


def read_tcga_phenotype(path: str | Path, *, column: str = "_primary_disease",
                        abbreviate: bool = False) -> pd.Series:
    """Cancer type per TCGA sample (``sample`` -> ``column``), missing values dropped.

    With ``abbreviate`` the Xena disease names are replaced by TCGA study
    abbreviations (:data:`TCGA_STUDY_OF_DISEASE`, case-insensitive; a value
    that already is an abbreviation is kept), so they match GDSC's
    ``TCGA_LABEL``; an unknown name raises, naming it.
    """
    path = Path(path)
    frame = pd.read_csv(path, sep="\t", dtype=str, usecols=lambda c: c in ("sample", column),
                        compression=_compression(path))
    for name in ("sample", column):
        if name not in frame.columns:
            raise ExpressionDataError(f"{path}: no column {name!r}; found "
                                      f"{list(frame.columns)[:12]}", path=path)
    out = frame.set_index("sample")[column].dropna().str.strip()
    out = out[out != ""]
    if abbreviate:
        known = set(TCGA_STUDY_OF_DISEASE.values())
        mapped = out.map(lambda v: v if v in known else TCGA_STUDY_OF_DISEASE.get(v.lower()))
        unknown = sorted(set(out[mapped.isna()]))
        if unknown:
            raise ExpressionDataError(
                f"{path}: column {column!r} has cancer types that are not TCGA studies: "
                f"{unknown[:10]}; expected Xena's _primary_disease names or TCGA abbreviations",
                path=path)
        out = mapped
    out.index.name = "sample"
    return out.rename("lineage")


def read_tcga_xena_expression(path: str | Path, *, probemap: str | Path | dict,
                              samples: Iterable[str] | None = None,
                              genes: Iterable[str] | None = None) -> pd.DataFrame:
    """Stream the toil TPM matrix into samples x symbols, float32, log2(TPM + 0.001).

    Parameters
    ----------
    path : path-like
        ``tcga_RSEM_gene_tpm.gz`` (gzip or plain TSV, genes x samples).
    probemap : path-like or dict
        Ensembl id -> symbol (:func:`read_tcga_probemap`).
    samples : iterable of str, optional
        Keep only these sample columns (e.g. those with a phenotype); default all.
    genes : iterable of str, optional
        Keep only these symbols (upper case; e.g. the private set's genes);
        default every mapped symbol.

    Raises
    ------
    ExpressionDataError
        Bad header, a row of the wrong length or a non-numeric value (file
        and line named), or nothing left after the filters.
    """
    path = Path(path)
    ids = probemap if isinstance(probemap, dict) else read_tcga_probemap(probemap)
    wanted = None if genes is None else {str(g).strip().upper() for g in genes}
    # one float32 row per candidate symbol, allocated up front (zeros from calloc:
    # rows of symbols absent from the file never become resident); the peak is this
    # block plus one line, with no per-gene arrays to fragment the heap
    candidates = sorted({s for s in ids.values() if wanted is None or s in wanted})
    position = {s: k for k, s in enumerate(candidates)}
    with _open_text(path) as handle:
        header = handle.readline().rstrip("\n").split("\t")
        if len(header) < 2 or header[0].strip().lower() not in ("sample", "gene", "id"):
            raise ExpressionDataError(f"{path}: expected a header 'sample<TAB><sample ids>', got "
                                      f"{header[:3]}", path=path)
        names = header[1:]
        keep_set = None if samples is None else set(samples)
        cols = np.array([i for i, s in enumerate(names) if keep_set is None or s in keep_set])
        if cols.size == 0:
            raise ExpressionDataError(f"{path}: none of the requested samples is in the matrix",
                                      path=path)
        block = np.zeros((len(candidates), cols.size), dtype=np.float32)
        seen = np.zeros(len(candidates), dtype=bool)
        for lineno, line in enumerate(handle, start=2):
            gene_id, _, rest = line.rstrip("\n").partition("\t")
            k = position.get(ids.get(gene_id.strip(), ""))
            if k is None:
                continue
            values = _parse_values(path, lineno, gene_id, rest, len(names))[cols]
            # sums of ids sharing a symbol on the TPM scale, in float32 as stored
            block[k] += (np.exp2(values) - TPM_OFFSET).astype(np.float32)
            seen[k] = True
    if not seen.any():
        raise ExpressionDataError(f"{path}: no gene row maps to a requested symbol", path=path)
    kept = np.flatnonzero(seen)
    if kept.size < len(candidates):  # compact in place: a slice, not a copy
        for new, old in enumerate(kept):
            block[new] = block[old]
        block = block[:kept.size]
    symbols = [candidates[k] for k in kept]
    np.maximum(block, 0.0, out=block)
    block += np.float32(TPM_OFFSET)
    np.log2(block, out=block)
    # block.T is the column-major layout pandas stores a float frame in: no copy
    out = pd.DataFrame(block.T, index=pd.Index([names[i] for i in cols], name="sample"),
                       columns=pd.Index(symbols, name="gene"), copy=False)
    out.attrs = {"source": str(path), "genes_kept": len(symbols)}
    return out


def holdout_labels(cases) -> list[str]:
    """TCGA study labels of the private cancer types of every case, to drop from TCGA.

    GDSC's pooled ``COREAD`` stands for ``COAD`` and ``READ``
    (:data:`GDSC_POOLED_LABELS`); other labels are kept as they are.
    """
    out: set[str] = set()
    for pair in cases:
        for label in pair:
            out.update(GDSC_POOLED_LABELS.get(str(label), (str(label),)))
    return sorted(out)


def tcga_tables(inputs, *, cancer_type_column: str = "_primary_disease",
                genes: Iterable[str] | None = None) -> dict[str, pd.DataFrame]:
    """The TCGA caches: ``expression`` (samples x symbols) and ``lineage`` (TCGA study).

    Every sample with a cancer type is kept -- Xena's phenotype gives one to the
    solid-tissue-normal samples (``-11``) of a study too, and they stay, labelled
    with their study (an assumption: the paper does not say it dropped them) --
    and only the symbols in ``genes``
    (the private array's gene list, public annotation), which bounds the memory
    to that block: about 17,000 symbols x 10,500 samples x 4 bytes = 0.7 GB.
    """
    lineage = read_tcga_phenotype(inputs.phenotype, column=cancer_type_column, abbreviate=True)
    expression = read_tcga_xena_expression(inputs.expression, probemap=inputs.probemap,
                                           samples=lineage.index, genes=genes)
    frame = lineage.reindex(expression.index).to_frame("lineage")
    frame.index.name = "sample"
    return {"expression": expression, "lineage": frame}
