"""Paper scale: wall time and peak memory of the paper-mode repr_transfer steps at real sizes.

Run from the repository root (about 5-10 minutes on 2 cores; ~3 GB free in --dir):

    nice -n 10 python benchmarks/bench_paper_scale.py [--dir /tmp] [--out FILE.csv]

Each row of the output is one step of a rule (the library call its step script makes) run
in a fresh interpreter, as Snakemake runs a rule: ``wall_s`` counts the start-up, imports,
reading the inputs and the work; ``peak_rss_mb`` is that process's high-water mark
(``VmHWM``), imports and inputs included. The input sizes are the real ones:

* GDSC basal expression 17,737 genes x 1,018 lines (``Cell_line_RMA_proc_basalExp.txt``
  zipped, the real layout) -> ``gdsc_preprocess``;
* DepMap expression 1,700 models x 19,000 genes (the real CSV layout) -> ``depmap_preprocess``;
* TCGA toil TPM 10,535 samples x 60,498 gene rows (gzip TSV, the real layout; the GDSC
  array's 17,737 symbols kept) -> ``tcga_preprocess``, through the generator of
  ``bench_tcga_memory.py`` (``TCGA_ROWS`` < 60,498 extrapolates the time linearly in the
  rows, but then fewer symbols are kept and the peak is too small);
* the public matrix of paper mode, 10,535 TCGA samples x 17,737 genes, and the private
  1,018 lines -> ``repr_fit`` (PCA: scikit-learn's exact SVD, what ``fit_representation``
  runs; the VAE: CPU time of one epoch at the largest width the paper's search reaches
  with 1 hidden layer at r = 20, measured on a slice of the rows and extrapolated to the
  8,428 training rows of one epoch; a full training is max_epochs = 2000 with patience 10,
  so the table gives the epoch time, not a training time);
* the DP learners at the private size: objective-perturbation logistic regression on
  1,018 x 20 (``repr_cancer_type``), SSP linear regression on 1,018 x 20 (``repr_drug``),
  and DP feature selection from 2,000 candidate genes (``dp_feature_selection``, run by
  both): ``wall_s`` is the process, ``per_fit_s`` one fit, averaged over ``FITS`` fits.

``method`` says which of measured / extrapolated each row is. The SLURM resources of the
paper-mode rules (``mem_mb``, ``runtime``) are checked against this table by
tests/test_paper_scale.py: declared memory >= 1.5 x the recorded peak and, for rows whose
``covers`` is ``mem+runtime``, declared runtime >= 2 x ``wall_s`` x ``repeats`` (how often
the rule runs the step in paper mode). VAE epochs and single learner fits are not a job's
time: those rows cover memory only.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path(__file__).resolve().parent
GDSC_GENES, GDSC_LINES = 17_737, 1_018
DEPMAP_MODELS, DEPMAP_GENES = 1_700, 19_000
TCGA_SAMPLES, TCGA_ROWS_REAL = 10_535, 60_498
TCGA_ROWS = TCGA_ROWS_REAL  # fewer rows keep fewer symbols: the peak would be too small
PUBLIC, PRIVATE, GENES = TCGA_SAMPLES, GDSC_LINES, GDSC_GENES
VAE_DIM, VAE_WIDTH, VAE_ROWS = 20, 64 * 20, 1_280  # 20 batches of 64 timed
PCA_SAMPLES = [500, 1_000, 2_000]
FITS = 20
PAPER_DRUGS = 265  # the paper's GDSC drugs (IC50_v17)
GENES_CANDIDATES = 2_000  # paper.yaml: feature_selection.candidate_genes
STAGES = ["gdsc", "depmap", "tcga", "pca", "vae", "learners", "drug"]
RULE_ORDER = ["gdsc_preprocess", "depmap_preprocess", "tcga_preprocess", "repr_fit",
              "repr_cancer_type", "repr_drug"]
FIELDS = ["rule", "step", "input", "method", "wall_s", "cpu_s", "peak_rss_mb", "per_fit_s",
          "repeats", "covers", "wildcards", "note"]

PRELUDE = r"""
import json, resource, sys, time
T0 = time.perf_counter()
sys.path.insert(0, {scripts!r})
def peak_mb():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
def done(**extra):
    use = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({{"wall_s": time.perf_counter() - T0, "cpu_s": use.ru_utime + use.ru_stime,
                      "peak_rss_mb": peak_mb(), **extra}}))
"""

CHILDREN = {
    "gdsc": r"""
from dprepro.data.expression import write_parquet_atomic
from dprepro.data.gdsc import read_gdsc_expression
frame = read_gdsc_expression(sys.argv[1])
write_parquet_atomic(frame, sys.argv[2])
done(shape=list(frame.shape))
""",
    "depmap": r"""
from dprepro.data.depmap import read_depmap_expression
from dprepro.data.expression import write_parquet_atomic
frame = read_depmap_expression(sys.argv[1])
write_parquet_atomic(frame, sys.argv[2])
done(shape=list(frame.shape))
""",
    "tcga": r"""
from dprepro.data.expression import tcga_tables, write_parquet_atomic
class Inputs(dict):
    __getattr__ = dict.__getitem__
folder = sys.argv[1]
frames = tcga_tables(Inputs(expression=folder + "/tcga_RSEM_gene_tpm.gz",
                            probemap=folder + "/probemap.tsv",
                            phenotype=folder + "/phenotype.tsv.gz",
                            genes=folder + "/gdsc_genes.parquet"))
for name, frame in frames.items():
    write_parquet_atomic(frame, f"{{folder}}/out_{{name}}.parquet")
done(shape=list(frames["expression"].shape))
""",
    "pca": r"""
import numpy as np, pandas as pd
from dprepro.studies.repr_transfer import fitting
m, n, n_private = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
public = pd.DataFrame(rng.normal(5.0, 2.0, size=(m, n)))
private = pd.DataFrame(rng.normal(5.0, 2.0, size=(n_private, n)))
t, u = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
model = fitting.fit_representation("pca", {{"dim": 20}}, public, rng=rng)
model.transform(public), model.transform(private)
v = resource.getrusage(resource.RUSAGE_SELF)
done(fit_s=time.perf_counter() - t, fit_cpu_s=v.ru_utime + v.ru_stime - u.ru_utime - u.ru_stime,
     shape=list(public.shape))
""",
    "vae": r"""
import numpy as np, pandas as pd
from dprepro.studies.repr_transfer import fitting
fitting.configure_torch(1, "cpu")
public = pd.DataFrame(np.random.default_rng(0).normal(5.0, 2.0, size=(int(sys.argv[1]),
                                                                      int(sys.argv[2]))))
rows = int(sys.argv[3])
spec = {{"dim": int(sys.argv[4]), "learning_rate": 1e-3, "hidden_layers": 1,
         "width_multiplier": int(sys.argv[5]) // int(sys.argv[4])}}
t = time.perf_counter()
# one epoch over `rows` rows (validation_fraction 0.2: 0.8 rows trained), the whole public
# matrix resident as in the rule
fitting.fit_representation("vae", spec, public.iloc[:rows], rng=np.random.default_rng(0),
                              vae_options={{"max_epochs": 1, "patience": 10, "batch_size": 64,
                                            "validation_fraction": 0.2, "device": "cpu"}})
done(epoch_s=time.perf_counter() - t, shape=list(public.shape))
""",
    "learners": r"""
import numpy as np
from dprepro.learners.feature_selection import dp_select_features
from dprepro.learners.linear_regression import SSPLinearRegression
from dprepro.learners.logistic_regression import DPLogisticRegression
kind, fits = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(0)
n, d = {private}, 20
X = rng.normal(size=(n, d))
t = time.perf_counter()
for _ in range(fits):
    if kind == "logistic":
        y = (X[:, 0] + rng.normal(size=n) > 0).astype(int)
        DPLogisticRegression(1.0, rng=rng).fit(X, y)
    elif kind == "ssp":
        y = X[:, 0] + rng.normal(size=n)
        SSPLinearRegression(1.0, clip_x=1.0, clip_y=1.0, rng=rng).fit(X, y)
    else:
        Xc = rng.normal(size=(n, 2000))
        y = Xc[:, 0] + rng.normal(size=n)
        dp_select_features(Xc, y, 10, epsilon=1.0, rng=rng)
done(per_fit_s=(time.perf_counter() - t) / fits)
""",
    "drug": r"""
import numpy as np, yaml
from dprepro.studies.repr_transfer import baselines, drug
from dprepro.studies.repr_transfer.privacy import experiment_epsilons, pipeline
from dprepro.data.synthetic_expression import synthetic_public_private
name, n_private, n_drugs, paper = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
cfg = yaml.safe_load(open(paper))["repr_transfer"]
settings, fs = cfg["drug"], cfg["feature_selection"]
spec = pipeline(name)
# latent structure like the default's stand-in; 18 % of responses missing (GDSC v17)
data = synthetic_public_private(np.random.default_rng(0), n_public=2000, n_private=n_private,
                                n_genes=fs["candidate_genes"], n_drugs=n_drugs,
                                missing_fraction=0.18)
response = data["private_response"]
samples = response.index
features = baselines.method_features(
    "dp_feature_selection", seeds=cfg["seeds"], samples=samples, representations={{}},
    baselines={{"feature_selection": fs}}, private_set=spec.private_set,
    public_parts=spec.public_selection, base_seed=0,
    public_expression=data["public_expression"], private_expression=data["private_expression"])
splits = drug.drug_splits(response, splits=settings["splits"],
                                test_size=settings["test_size"],
                                rng=np.random.default_rng(1))
t = time.perf_counter()
rows = drug.drug_experiment(
    features.private, response, [str(d) for d in response.columns],
    epsilons=experiment_epsilons(settings), splits=splits, ridge=settings["ridge"],
    base_seed=0, stream="drug/bench", clipping_weights=lambda n, d, e: (0.5, 0.5),
    selection=features.selection, xx_noise=spec.xx_noise, mapping=spec.mapping,
    **drug.public_centring(spec, features, settings))
done(per_fit_s=(time.perf_counter() - t) / n_drugs, rows=len(rows),
     n_parts=sorted(set(int(k) for k in rows["n_parts"].dropna())))
""",
}


def load(name: str):
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def child(name: str, *args) -> dict:
    code = PRELUDE.format(scripts=str(ROOT / "scripts")) + CHILDREN[name].format(
        private=PRIVATE)
    out = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True,
                         text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{name} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(tmp: Path, rng: np.random.Generator, stages, log) -> list[dict]:
    rows = []

    def add(rule, step, size, method, result, note="", *, repeats=1, covers="mem+runtime",
            wildcards=""):
        row = {"rule": rule, "step": step, "input": size, "method": method,
               "wall_s": round(result["wall_s"], 1), "cpu_s": round(result["cpu_s"], 1),
               "peak_rss_mb": round(result["peak_rss_mb"]),
               "per_fit_s": (round(result["per_fit_s"], 4) if "per_fit_s" in result else ""),
               "repeats": repeats, "covers": covers, "wildcards": wildcards, "note": note}
        rows.append(row)
        log(row)

    expr = load("bench_expression_memory")
    if "gdsc" in stages:
        gdsc_txt = tmp / "Cell_line_RMA_proc_basalExp.txt"
        expr.write_gdsc(gdsc_txt, GDSC_GENES, rng)
        gdsc_zip = tmp / "Cell_line_RMA_proc_basalExp.txt.zip"
        with zipfile.ZipFile(gdsc_zip, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
            zf.write(gdsc_txt, gdsc_txt.name)
        gdsc_txt.unlink()
        add("gdsc_preprocess", "read_gdsc_expression + Parquet",
            f"{GDSC_GENES} x {GDSC_LINES}", "measured",
            child("gdsc", gdsc_zip, tmp / "gdsc.parquet"))
        gdsc_zip.unlink()

    if "depmap" in stages:
        expr.DEPMAP_GENES = DEPMAP_GENES
        depmap_csv = tmp / "OmicsExpressionProteinCodingGenesTPMLogp1.csv"
        expr.write_depmap(depmap_csv, DEPMAP_MODELS, rng)
        add("depmap_preprocess", "read_depmap_expression + Parquet",
            f"{DEPMAP_MODELS} x {DEPMAP_GENES}", "measured",
            child("depmap", depmap_csv, tmp / "depmap.parquet"))
        depmap_csv.unlink()

    if "tcga" in stages:
        tcga = load("bench_tcga_memory")
        folder = tmp / "tcga"
        folder.mkdir()
        tcga.write_files(folder, TCGA_ROWS, GDSC_GENES, rng)
        result = child("tcga", folder)
        for key in ("wall_s", "cpu_s"):
            result[key] *= TCGA_ROWS_REAL / TCGA_ROWS
        add("tcga_preprocess", "tcga_tables + Parquet",
            f"{TCGA_SAMPLES} x {TCGA_ROWS_REAL} rows", "peak measured; time extrapolated",
            result, f"{TCGA_ROWS} of {TCGA_ROWS_REAL} gene rows read (all 17,737 kept); "
                    f"time x {TCGA_ROWS_REAL / TCGA_ROWS:.1f}")
        shutil.rmtree(folder)

    if "pca" in stages:
        # the exact SVD of m x n (m < n): time ~ m^2 n, memory ~ a + b m + c m^2 (the data,
        # its centred copy, V^T: m x n; U and LAPACK's workspace: m x m); three sizes fix
        # the memory polynomial, the largest two the time exponent
        sizes = PCA_SAMPLES
        runs = [child("pca", m, GENES, PRIVATE) for m in sizes]
        peak = np.polyfit(sizes, [r["peak_rss_mb"] for r in runs], 2)
        slope = (np.log(runs[-1]["fit_cpu_s"] / runs[-2]["fit_cpu_s"])
                 / np.log(sizes[-1] / sizes[-2]))
        slope = max(slope, 2.0)  # never below the SVD's m^2 n
        factor = (PUBLIC / sizes[-1]) ** slope
        last = runs[-1]  # the process's start-up and data as measured, the fit scaled
        result = {"wall_s": last["wall_s"] + last["fit_s"] * (factor - 1),
                  "cpu_s": last["cpu_s"] + last["fit_cpu_s"] * (factor - 1),
                  "peak_rss_mb": float(np.polyval(peak, PUBLIC))}
        paper = yaml.safe_load((ROOT / "config" / "paper.yaml").read_text())["repr_transfer"]
        # one job fits every pipeline's candidate at every seed
        fits = paper["seeds"] * len(paper.get("pipelines", ["as_published", "corrected"]))
        add("repr_fit", "PCA r = 20 (exact SVD) + transform", f"{PUBLIC} x {GENES}",
            "extrapolated", result,
            f"measured on {', '.join(map(str, sizes))} x {GENES} (peaks "
            f"{', '.join(str(round(r['peak_rss_mb'])) for r in runs)} MB; CPU "
            f"{', '.join(str(round(r['fit_cpu_s'], 1)) for r in runs)} s a fit): peak "
            f"quadratic in the samples, fit time x (m ratio)^{slope:.2f}; one fit, the rule "
            f"fits one per seed and pipeline (repeats)", repeats=fits,
            wildcards="representation=pca")

    if "vae" in stages:
        result = child("vae", PUBLIC, GENES, VAE_ROWS, VAE_DIM, VAE_WIDTH)
        result["per_fit_s"] = result["epoch_s"] * PUBLIC / VAE_ROWS
        add("repr_fit", f"VAE epoch, r = {VAE_DIM}, 1 hidden layer of {VAE_WIDTH}, CPU 1 thread",
            f"{PUBLIC} x {GENES}", "peak measured; epoch time extrapolated", result,
            f"per_fit_s = one epoch over the {PUBLIC} rows (timed on {VAE_ROWS}); a training "
            f"is up to 2,000 epochs (patience 10)", covers="mem", wildcards="representation=vae")

    if "learners" in stages:
        for rule, kind, step, fits in (
                ("repr_cancer_type", "logistic", "DPLogisticRegression fit, 1,018 x 20", FITS),
                ("repr_drug", "ssp", "SSPLinearRegression fit, 1,018 x 20", FITS),
                ("repr_cancer_type", "select", "dp_select_features, 1,018 x 2,000 candidates",
                 3)):
            width = 2000 if kind == "select" else 20
            add(rule, step, f"{PRIVATE} x {width}", "measured", child("learners", kind, fits),
                f"{fits} fits in one process", covers="mem")
    if "drug" in stages:
        # a whole repr_drug job is its chunk's drugs x splits x methods; DP feature
        # selection's Lasso votes (once per drug and split, shared by the seeds and the ε)
        # are nearly all of it: timed here per drug on 2 drugs of the real shape, then
        # scaled to the drugs of the largest chunk (the job's other methods are SSP fits of
        # d <= 20, ~0.6 ms each: ~12 s a job)
        drug = yaml.safe_load((ROOT / "config" / "paper.yaml").read_text())[
            "repr_transfer"]["drug"]
        per_chunk = -(-PAPER_DRUGS // int(drug["chunks"]))
        for name in ("as_published", "corrected"):
            result = child("drug", name, PRIVATE, 2, ROOT / "config" / "paper.yaml")
            unit = result["per_fit_s"]
            # the process (start-up, data, one drug) as measured, the other drugs scaled
            scaled = {"wall_s": result["wall_s"] + unit * (per_chunk - 2),
                      "cpu_s": result["cpu_s"] + unit * (per_chunk - 2),
                      "peak_rss_mb": result["peak_rss_mb"], "per_fit_s": unit}
            add("repr_drug", f"drug_experiment, dp_feature_selection ({name})",
                f"{PRIVATE} x {GENES_CANDIDATES} candidates, {drug['splits']} splits",
                "peak measured; time extrapolated", scaled,
                f"per_fit_s = one drug (its {drug['splits']} splits' Lasso votes, k = "
                f"{'/'.join(map(str, result['n_parts'])) or 'the authors'}, and the SSP fits "
                f"of every seed and ε), timed on 2 drugs; wall_s = the process with "
                f"{per_chunk} drugs, the largest chunk of {PAPER_DRUGS} drugs in "
                f"{drug['chunks']} chunks", wildcards=f"pipeline={name}")
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default=None, help="scratch folder (default: $TMPDIR)")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "paper_scale.csv"))
    parser.add_argument("--only", default=",".join(STAGES),
                        help=f"comma-separated stages to run, of {STAGES}; the rows of the "
                             "others are kept from --out")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="fraction of every size, for a quick check of the script only")
    args = parser.parse_args(argv)
    if args.scale != 1.0:
        global GDSC_GENES, DEPMAP_MODELS, TCGA_ROWS, PUBLIC, GENES, VAE_ROWS, PCA_SAMPLES
        GDSC_GENES, DEPMAP_MODELS, PUBLIC, GENES = (
            max(50, int(v * args.scale)) for v in (GDSC_GENES, DEPMAP_MODELS, PUBLIC, GENES))
        TCGA_ROWS, VAE_ROWS = max(100, int(TCGA_ROWS * args.scale)), 128
        PCA_SAMPLES = [40, 60, 80]
    started = time.perf_counter()
    stages = args.only.split(",")
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="bench_paper_") as tmp:
        rows = run(Path(tmp), np.random.default_rng(2024), stages,
                   lambda row: print(json.dumps(row), flush=True))
    if Path(args.out).exists():  # keep the rows of the stages not run
        with open(args.out, newline="") as fh:
            new = {(r["rule"], r["step"]) for r in rows}
            rows = [r for r in csv.DictReader(fh) if (r["rule"], r["step"]) not in new] + rows
        order = {rule: i for i, rule in enumerate(RULE_ORDER)}
        rows.sort(key=lambda r: order.get(r["rule"], len(order)))
    with open(args.out, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {args.out} ({len(rows)} rows) in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
