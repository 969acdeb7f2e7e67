"""Small UCSC Xena files in the real layouts (toil TPM matrix, probemap, phenotype).

* ``tcga_RSEM_gene_tpm.gz``: gzip TSV, header ``sample`` + sample ids, one row per
  versioned Ensembl id, values log2(TPM + 0.001) with 4 decimals as Xena writes them;
* ``gencode.v23.annotation.gene.probemap``: TSV ``id gene chrom chromStart chromEnd strand``;
* ``TCGA_phenotype_denseDataOnlyDownload.tsv.gz``: gzip TSV ``sample samples
  sample_type_id sample_type _primary_disease`` (lower-case disease names, empty for
  some normal samples).
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np

DISEASES = {
    "BRCA": "breast invasive carcinoma",
    "LUAD": "lung adenocarcinoma",
    "SKCM": "skin cutaneous melanoma",
    "COAD": "colon adenocarcinoma",
    "READ": "rectum adenocarcinoma",
}


def write_xena(folder: Path, symbols: list[str], *, per_type: int = 4, seed: int = 0,
               extra_ids: int = 3, diseases: dict | None = None) -> dict:
    """Write the three files; return their paths, the TPM values and the sample types.

    Every symbol gets one Ensembl id; the first symbol a second id (summed by the
    reader); ``extra_ids`` ids are not in the probemap. One sample per type has no
    phenotype row and one normal sample an empty disease. ``diseases``: TCGA
    abbreviation -> Xena disease name of the types written (default :data:`DISEASES`).
    """
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    diseases = DISEASES if diseases is None else diseases
    types = {}
    for k, abbr in enumerate(diseases):
        for i in range(per_type):
            types[f"TCGA-{k:02d}-{i:04d}-01"] = abbr
    samples = [*types, "TCGA-ZZ-0000-11", "TCGA-ZZ-0001-01"]  # normal; no phenotype row
    ids = {f"ENSG{j:011d}.{1 + j % 3}": s for j, s in enumerate(symbols)}
    ids[f"ENSG{len(symbols):011d}.1"] = symbols[0]
    rows = list(ids) + [f"ENSG{90_000 + j:011d}.1" for j in range(extra_ids)]
    tpm = {gene: rng.gamma(2.0, 20.0, len(samples)) for gene in rows}
    log2 = {gene: np.round(np.log2(v + 0.001), 4) for gene, v in tpm.items()}
    matrix = folder / "tcga_RSEM_gene_tpm.gz"
    with gzip.open(matrix, "wt") as handle:
        handle.write("sample\t" + "\t".join(samples) + "\n")
        for gene in rows:
            handle.write(gene + "\t" + "\t".join(f"{v:.4f}" for v in log2[gene]) + "\n")
    probemap = folder / "gencode.v23.annotation.gene.probemap"
    probemap.write_text("id\tgene\tchrom\tchromStart\tchromEnd\tstrand\n" + "".join(
        f"{gene}\t{symbol}\tchr1\t{10 * j}\t{10 * j + 5}\t+\n"
        for j, (gene, symbol) in enumerate(ids.items())))
    phenotype = folder / "TCGA_phenotype_denseDataOnlyDownload.tsv.gz"
    with gzip.open(phenotype, "wt") as handle:
        handle.write("sample\tsamples\tsample_type_id\tsample_type\t_primary_disease\n")
        for sample, abbr in types.items():
            handle.write(f"{sample}\t{sample[:12]}\t1\tPrimary Tumor\t{diseases[abbr]}\n")
        handle.write("TCGA-ZZ-0000-11\tTCGA-ZZ-0000\t11\tSolid Tissue Normal\t\n")
    return {"expression": matrix, "probemap": probemap, "phenotype": phenotype,
            "log2": log2, "ids": ids, "samples": samples, "types": types}
