"""Peak memory and time of the TCGA (UCSC Xena toil TPM) parse on a file of the real size.

Run from the repository root:

    python benchmarks/bench_tcga_memory.py [--dir /tmp] [--rows 60498] [--keep 17737]

Writes, in a temporary folder removed afterwards, ``tcga_RSEM_gene_tpm.gz`` in the real
layout -- gzip TSV, header ``sample`` + 10,535 TCGA sample ids, one row per versioned
Ensembl id, values log2(TPM + 0.001) with 4 decimals -- with ``--rows`` gene rows (the
real file has 60,498), a probemap mapping every id to a symbol (one symbol in 50 has
two ids, summed by the reader) and a phenotype table with a cancer type for every
sample. It then builds the TCGA caches as the ``tcga_preprocess`` rule does
(:func:`dprepro.data.expression.tcga_tables`: all samples with a type, only the
``--keep`` symbols of the GDSC array, 17,737 in the real file) in a fresh subprocess,
and reports its wall and CPU time (the CPU time is what a busy machine does not
distort) and peak resident memory (``VmHWM``). Target: at most 4 GB;
exits 1 above it.

The kept block, not the file, sets the peak: rows of genes outside the array are
skipped after their id is read. So a run with fewer ``--rows`` but the full ``--keep``
measures the real peak; its time extrapolates linearly in the rows (skipped rows cost
only the decompression). Needs about 3 GB free in ``--dir`` at full size.

Measured (2 shared cores, full size: 60,498 rows x 10,535 samples, 2.2 GB gzip-1, about
5 GB of text; 17,737 symbols kept): 100 s wall, 71 s CPU, peak RSS 903 MB (baseline
108 MB; the kept block 713 MB). Writing that frame to Parquet (the rule's next step)
peaks at 1.9 GB: both stay under the 4 GB target.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
LIMIT_MB = 4096
SAMPLES, ROWS, KEEP = 10_535, 60_498, 17_737
POOL = 97  # distinct row bodies, reused: rows (~80 kB) exceed gzip's 32 kB window

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {scripts!r})
import pandas as pd
from dprepro.data import expression as ed
def peak_mb():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
class Inputs(dict):
    __getattr__ = dict.__getitem__
folder = sys.argv[1]
base = peak_mb()
t = time.perf_counter()
inputs = Inputs(expression=folder + "/tcga_RSEM_gene_tpm.gz",
                probemap=folder + "/probemap.tsv", phenotype=folder + "/phenotype.tsv.gz",
                genes=folder + "/gdsc_genes.parquet")
frames = ed.tcga_tables(inputs)
wall = time.perf_counter() - t
expr = frames["expression"]
use = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({{"shape": list(expr.shape), "wall_s": wall, "cpu_s": use.ru_utime + use.ru_stime,
                   "peak_mb": peak_mb(),
                   "baseline_mb": base, "result_mb": expr.memory_usage().sum() / 2**20}}))
"""


def write_files(folder: Path, rows: int, keep: int, rng: np.random.Generator) -> dict:
    samples = [f"TCGA-{i // 10_000:02d}-{i % 10_000:04d}-01" for i in range(SAMPLES)]
    ids = [f"ENSG{j:011d}.{1 + j % 5}" for j in range(rows)]
    # one symbol in 50 has two ids; GENE<k> for the others
    symbols = [f"GENE{j - (j % 50 == 49)}" for j in range(rows)]
    t = time.perf_counter()
    bodies = []
    for _ in range(POOL):
        values = np.log2(rng.gamma(0.6, 20.0, SAMPLES) + 0.001)
        bodies.append(("\t" + "\t".join(f"{v:.4f}" for v in values) + "\n").encode())
    path = folder / "tcga_RSEM_gene_tpm.gz"
    # gzip level 1: the reader's cost does not depend on the level
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1) as gz:
        gz.write(("sample\t" + "\t".join(samples) + "\n").encode())
        for j, gene in enumerate(ids):
            gz.write(gene.encode() + bodies[j % POOL])
    written = time.perf_counter() - t
    (folder / "probemap.tsv").write_text(
        "id\tgene\tchrom\tchromStart\tchromEnd\tstrand\n"
        + "".join(f"{g}\t{s}\tchr1\t{i}\t{i + 1}\t+\n" for i, (g, s) in
                  enumerate(zip(ids, symbols, strict=True))))
    types = ["breast invasive carcinoma", "lung adenocarcinoma", "skin cutaneous melanoma"]
    with gzip.open(folder / "phenotype.tsv.gz", "wt") as fh:
        fh.write("sample\tsamples\tsample_type_id\tsample_type\t_primary_disease\n")
        for i, s in enumerate(samples):
            fh.write(f"{s}\t{s[:12]}\t1\tPrimary Tumor\t{types[i % 3]}\n")
    import pandas as pd

    sys.path.insert(0, str(ROOT / "scripts"))
    from dprepro.data.expression import write_parquet_atomic

    kept = sorted(set(symbols))[:: max(1, len(set(symbols)) // keep)][:keep]
    write_parquet_atomic(pd.DataFrame({g: [0.0] for g in kept},
                                      index=pd.Index([1], name="COSMIC_ID")),
                         folder / "gdsc_genes.parquet")
    return {"gz_bytes": path.stat().st_size, "write_s": written, "kept_symbols": len(kept)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default=None, help="where to write the files (default: $TMPDIR)")
    parser.add_argument("--rows", type=int, default=ROWS, help="gene rows in the matrix")
    parser.add_argument("--keep", type=int, default=KEEP, help="GDSC symbols kept")
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="bench_tcga_", dir=args.dir))
    try:
        info = write_files(folder, args.rows, args.keep, np.random.default_rng(2019))
        code = CHILD.format(scripts=str(ROOT / "scripts"))
        out = subprocess.run([sys.executable, "-c", code, str(folder)], capture_output=True,
                             text=True, check=False)
        if out.returncode != 0:
            raise RuntimeError(out.stderr[-3000:])
        result = {**info, "rows": args.rows, "samples": SAMPLES,
                  **json.loads(out.stdout.strip().splitlines()[-1])}
        for key in ("wall_s", "cpu_s"):
            result[f"{key}_extrapolated_to_60498_rows"] = result[key] * ROWS / args.rows
        print(json.dumps(result, indent=1))
        return int(result["peak_mb"] > LIMIT_MB)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
