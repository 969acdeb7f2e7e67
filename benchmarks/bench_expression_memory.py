"""Peak memory and time of the expression parsers on files of the real size.

Run from the repository root:

    python benchmarks/bench_expression_memory.py [--dir /tmp] [--scale 1.0] [--naive]

Writes, in a temporary folder that is removed afterwards, synthetic files in
the real formats and sizes:

* GDSC ``Cell_line_RMA_proc_basalExp.txt``: 17,737 rows (a few without a
  symbol, a few duplicated symbols) x (GENE_SYMBOLS, GENE_title, 1,018
  DATA.<COSMIC_ID> columns), tab-separated, ~290 MB; and the same zipped;
* DepMap ``OmicsExpressionProteinCodingGenesTPMLogp1.csv``: 1,500 models x
  19,000 "SYMBOL (ENTREZ)" columns, ~510 MB;

then parses each in a fresh subprocess and reports its wall time and peak
resident memory (``VmHWM`` of that process, ``ru_maxrss`` where /proc is
absent; the interpreter with numpy, pandas and the library imported is
reported as the baseline). The target is
a peak of at most 4 GB per file; the script exits 1 if one exceeds it. The
``harmonise`` row parses both files in one process and quantile-maps GDSC
onto DepMap over the ~17,000 shared genes (:func:`harmonise_genes`, which
imports torch through ``dprepro.representations.pca``); its time is the mapping's.
``--naive`` also times a plain ``pandas.read_csv`` of the same files, for
comparison. ``--scale`` shrinks the row counts for a quick check. Needs about
1 GB free in ``--dir``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
LIMIT_MB = 4096
GDSC_GENES, GDSC_LINES = 17_737, 1_018
DEPMAP_MODELS, DEPMAP_GENES = 1_500, 19_000
CHUNK = 500

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {scripts!r})
import numpy as np, pandas as pd
from dprepro.data import expression as ed
from dprepro.data import depmap
from dprepro.data import gdsc
def peak_kb():
    # VmHWM: this process's own high-water mark. ru_maxrss is kept across
    # exec on Linux, so it can report the parent's size at fork instead.
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
base = peak_kb()
kind, path = sys.argv[1], sys.argv[2]
t = time.perf_counter()
if kind == "gdsc":
    frame = gdsc.read_gdsc_expression(path)
elif kind == "depmap":
    frame = depmap.read_depmap_expression(path)
elif kind == "harmonise":
    gdsc_path, depmap_path = path.split("|")
    private = gdsc.read_gdsc_expression(gdsc_path)
    public = depmap.read_depmap_expression(depmap_path)
    t = time.perf_counter()
    frame, _ = ed.harmonise_genes(private, public, min_shared=1)
elif kind == "naive-gdsc":
    frame = pd.read_csv(path, sep="\t")
elif kind == "naive-depmap":
    frame = pd.read_csv(path, index_col=0)
wall = time.perf_counter() - t
peak = peak_kb()
print(json.dumps({{"shape": list(frame.shape), "wall_s": wall, "peak_mb": peak / 1024,
                   "baseline_mb": base / 1024, "result_mb": frame.memory_usage().sum() / 2**20}}))
"""


def write_gdsc(path: Path, n_genes: int, rng: np.random.Generator) -> None:
    cosmic = 683_000 + np.sort(rng.choice(1_000_000, size=GDSC_LINES, replace=False))
    fmt = "\t".join(["%.13f"] * GDSC_LINES) + "\n"
    with open(path, "w", encoding="latin-1") as fh:
        fh.write("\t".join(["GENE_SYMBOLS", "GENE_title", *(f"DATA.{c}" for c in cosmic)]) + "\n")
        for start in range(0, n_genes, CHUNK):
            stop = min(start + CHUNK, n_genes)
            block = rng.normal(7.0, 2.0, size=(stop - start, GDSC_LINES)).clip(2.0, 14.0)
            lines = []
            for i, row in zip(range(start, stop), block, strict=True):
                # every 60th row lacks a symbol; every 97th repeats the previous one
                sym = "" if i % 60 == 59 else f"GENE{i - (i % 97 == 96)}"
                title = f"{sym or 'no symbol'} family member [Source:HGNC Symbol;Acc:{i}]"
                lines.append(f"{sym}\t{title}\t" + fmt % tuple(row))
            fh.write("".join(lines))


def write_depmap(path: Path, n_models: int, rng: np.random.Generator) -> None:
    fmt = ",".join(["%.15f"] * DEPMAP_GENES) + "\n"
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(",".join(["", *(f"GENE{j} ({j + 1})" for j in range(DEPMAP_GENES))]) + "\n")
        for start in range(0, n_models, CHUNK // 4):
            stop = min(start + CHUNK // 4, n_models)
            block = np.log2(1.0 + rng.gamma(0.5, 30.0, size=(stop - start, DEPMAP_GENES)))
            fh.write(
                "".join(
                    f"ACH-{i:06d}," + fmt % tuple(row)
                    for i, row in zip(range(start, stop), block, strict=True)
                )
            )


def measure(kind: str, path: Path) -> dict:
    code = CHILD.format(scripts=str(ROOT / "scripts"))
    out = subprocess.run(
        [sys.executable, "-c", code, kind, str(path)], capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        raise RuntimeError(f"{kind} on {path} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default=None, help="where to write the files (default: $TMPDIR)")
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the real row counts")
    parser.add_argument("--naive", action="store_true", help="also time plain pandas.read_csv")
    args = parser.parse_args(argv)
    n_genes = max(10, int(GDSC_GENES * args.scale))
    n_models = max(10, int(DEPMAP_MODELS * args.scale))
    rng = np.random.default_rng(2019)
    failed = False
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="bench_expr_") as tmp:
        tmp = Path(tmp)
        free_gb = shutil.disk_usage(tmp).free / 2**30
        need_gb = 1.1 * args.scale
        if free_gb < need_gb:
            print(f"need ~{need_gb:.1f} GB free in {tmp}, have {free_gb:.1f} GB", file=sys.stderr)
            return 2
        files = {}
        t = time.perf_counter()
        gdsc = tmp / "Cell_line_RMA_proc_basalExp.txt"
        write_gdsc(gdsc, n_genes, rng)
        files["gdsc txt"] = ("gdsc", gdsc, time.perf_counter() - t)
        t = time.perf_counter()
        gzip_path = tmp / "Cell_line_RMA_proc_basalExp.txt.zip"
        with zipfile.ZipFile(gzip_path, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
            zf.write(gdsc, gdsc.name)
        files["gdsc zip"] = ("gdsc", gzip_path, time.perf_counter() - t)
        t = time.perf_counter()
        depmap = tmp / "OmicsExpressionProteinCodingGenesTPMLogp1.csv"
        write_depmap(depmap, n_models, rng)
        files["depmap csv"] = ("depmap", depmap, time.perf_counter() - t)

        print(f"python {sys.version.split()[0]}; numpy {np.__version__}; limit {LIMIT_MB} MB")
        header = (
            f"{'file':<12} {'size MB':>8} {'gen s':>6} {'parse s':>8} {'peak MB':>8} "
            f"{'baseline MB':>11} {'result MB':>9}  shape"
        )
        print(header)
        runs = [(name, kind, path, gen) for name, (kind, path, gen) in files.items()]
        # both parses and then the quantile mapping; time is the mapping's only
        runs.append(("harmonise", "harmonise", f"{gdsc}|{depmap}", 0.0))
        if args.naive:
            runs += [
                ("naive txt", "naive-gdsc", gdsc, 0.0),
                ("naive csv", "naive-depmap", depmap, 0.0),
            ]
        for name, kind, path, gen in runs:
            r = measure(kind, path)
            size = path.stat().st_size / 2**20 if isinstance(path, Path) else float("nan")
            print(
                f"{name:<12} {size:8.0f} {gen:6.1f} {r['wall_s']:8.1f} {r['peak_mb']:8.0f} "
                f"{r['baseline_mb']:11.0f} {r['result_mb']:9.0f}  {tuple(r['shape'])}",
                flush=True,
            )
            if not kind.startswith("naive") and r["peak_mb"] > LIMIT_MB:
                print(f"  FAIL: peak {r['peak_mb']:.0f} MB > {LIMIT_MB} MB", file=sys.stderr)
                failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
