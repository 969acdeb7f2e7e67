"""Paper scale: CPU time and peak memory of the paper-mode repr_transfer steps at real sizes,
and paper mode's total.

Run from the repository root (about 15-20 CPU-minutes; ~5 GB of memory, ~3 GB free in --dir):

    nice -n 10 python benchmarks/bench_paper_scale.py [--dir /tmp] [--out FILE.csv]
        [--only STAGE,...]
    python benchmarks/bench_paper_scale.py --vae-device cuda   # on a GPU node

``--vae-device`` times only the VAE epoch, on that torch device, and prints it (what the
runtime of the VAE jobs on GPU nodes is sized from: docs/cluster.md); it writes no table.

Each row of the output is one step of a rule (the library call its step script makes) run
in a fresh interpreter, as Snakemake runs a rule: ``wall_s`` and ``cpu_s`` count the
start-up, imports, making the inputs and the work; ``peak_rss_mb`` is that process's
high-water mark (``VmHWM``), imports and inputs included. The learning steps run on one
BLAS thread in every library (the rules' ``threads: 1``; scipy's own OpenBLAS is loaded
before the limit, which reaches only loaded libraries). The input sizes are the real ones:

* GDSC basal expression 17,737 genes x 1,018 lines (``Cell_line_RMA_proc_basalExp.txt``
  zipped, the real layout) -> ``gdsc_preprocess``;
* DepMap expression 1,700 models x 19,000 genes (the real CSV layout) -> ``depmap_preprocess``;
* TCGA toil TPM 10,535 samples x 60,498 gene rows (gzip TSV, the real layout; the GDSC
  array's 17,737 symbols kept) -> ``tcga_preprocess``, through the generator of
  ``bench_tcga_memory.py`` (``TCGA_ROWS`` < 60,498 extrapolates the time linearly in the
  rows, but then fewer symbols are kept and the peak is too small);
* the public matrix of paper mode, 10,535 TCGA samples x 17,737 genes, and the private
  1,018 lines -> ``repr_fit`` (PCA: paper mode's randomized solver, measured; its accuracy
  against the exact SVD is benchmarks/bench_randomized_pca.py's; the VAE: wall time of one
  epoch at the largest width the paper's search reaches with 1 hidden layer at r = 20, on
  one thread and on two (``vae.threads``), three runs of each, measured on a slice of the
  rows (half the difference between a 3-epoch and a 1-epoch fit, the fit's set-up apart)
  and extrapolated to the whole public matrix; the row is the slowest one-thread run; a
  full training is max_epochs = 2000 with patience 10, so the table gives the epoch time,
  not a training time);
* ``repr_search``: one trial's score (DP logistic regression on the 16 validation pairs of
  TCGA's mean size, 10-fold CV, r = 20; one of the 5 noise draws timed), for each
  pipeline's objective-perturbation variant;
* ``repr_clipping_weights``: one (d, ε) of the SSP clipping search (20 x 20 x 20 x 20) at
  the training size, for each noise law;
* ``repr_cancer_type`` and ``repr_drug``: whole jobs of each pipeline, every method (DP
  feature selection with paper.yaml's Lasso solver, and a representation method at
  r = 20 standing for the other 7), the public and private expression held at the real
  size (the drugs of the largest chunk, scaled from 2 drugs; the cancer-type cases,
  scaled from 2 of 6);
* the DP learners at the private size: objective-perturbation logistic regression on
  1,018 x 20 (``repr_cancer_type``), SSP linear regression on 1,018 x 20 (``repr_drug``),
  and DP feature selection from 2,000 candidate genes (``dp_feature_selection``, run by
  both): ``wall_s`` is the process, ``per_fit_s`` one fit, averaged over ``FITS`` fits.

``method`` says which of measured / extrapolated each row is. The SLURM resources of the
paper-mode rules (``mem_mb``, ``runtime``) are checked against this table by
tests/test_paper_scale.py: declared memory >= 1.5 x the recorded peak and, for rows whose
``covers`` is ``mem+runtime``, declared runtime >= 2 x ``cpu_s`` x ``repeats`` (how often
the rule runs the step in paper mode). VAE epochs and single learner fits are not a job's
time: those rows cover memory only. The script ends with paper mode's CPU-hours per rule
and in total and its wall time on 16-core nodes (benchmarks/paper_mode_cost.py).
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
VAE_RUNS = 3  # one- and two-thread children, alternated
FITS = 20
PAPER_DRUGS = 265  # the paper's GDSC drugs (IC50_v17)
GENES_CANDIDATES = 2_000  # paper.yaml: feature_selection.candidate_genes
STAGES = ["gdsc", "depmap", "tcga", "pca", "vae", "learners", "search", "clipping", "cancer",
          "drug"]
RULE_ORDER = ["gdsc_preprocess", "depmap_preprocess", "tcga_preprocess", "repr_search",
              "repr_fit", "repr_fit_vae", "repr_clipping_weights", "repr_cancer_type",
              "repr_drug"]
EXACT_SVD_CPU_S = 2_561  # one exact-SVD fit at the real size (this table before randomized PCA)
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
def load_blas():
    # scipy's and scikit-learn's BLAS and LAPACK loaded before threadpool_limits(1), which
    # limits only the libraries already loaded
    import scipy.linalg, scipy.optimize, sklearn.decomposition, sklearn.linear_model
def job_inputs(name, paper, *, n_lineages):
    # a repr_cancer_type / repr_drug job's inputs at the real sizes (paper.yaml's settings):
    # the work runs on the stand-in generator's lines (their latent structure drives the
    # responses and lineages, on which a Lasso's path depends) with the paper's candidate
    # count; the job also holds the public (10,535 x 17,737) and private expression as
    # DataFrames and finds the candidates by public variance, as the real job does
    import numpy as np, pandas as pd, yaml
    from dprepro.data.synthetic_expression import synthetic_public_private
    from dprepro.studies.repr_transfer import baselines
    from dprepro.studies.repr_transfer.privacy import pipeline
    cfg = yaml.safe_load(open(paper))["repr_transfer"]
    fs = cfg["feature_selection"]
    rng = np.random.default_rng(0)
    ballast = {{"public": pd.DataFrame(rng.normal(5.0, 2.0, size=({public}, {genes}))),
                "private": pd.DataFrame(rng.normal(5.0, 2.0, size=({private}, {genes})))}}
    baselines.variable_genes(ballast["public"], fs["candidate_genes"])
    spec = pipeline(name)
    # 18 % of the responses missing, as in GDSC v17
    data = synthetic_public_private(rng, n_public=2000, n_private={private},
                                    n_genes=fs["candidate_genes"], n_drugs=2,
                                    n_lineages=n_lineages, missing_fraction=0.18)
    features = baselines.method_features(
        "dp_feature_selection", seeds=cfg["seeds"], samples=data["private_response"].index,
        representations={{}}, baselines={{"feature_selection": fs}},
        private_set=spec.private_set, public_parts=spec.public_selection, base_seed=0,
        public_expression=data["public_expression"],
        private_expression=data["private_expression"])
    return cfg, spec, data, features, ballast
def representation(features, data, seeds, dim=20):
    # a representation method's features: r = 20 (the largest searched), every seed
    import dataclasses, numpy as np
    rng = np.random.default_rng(5)
    n_pub, n_priv = len(data["public_expression"]), len(data["private_response"])
    pub = {{s: rng.normal(size=(n_pub, dim)) for s in range(seeds)}}
    return dataclasses.replace(
        features, private={{s: rng.normal(size=(n_priv, dim)) for s in range(seeds)}},
        public=pub, scales={{s: float(np.mean(np.linalg.norm(pub[s], axis=1)))
                            for s in range(seeds)}}, selection=None, genes=[])
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
load_blas()
import numpy as np, pandas as pd
from threadpoolctl import threadpool_limits
from dprepro.studies.repr_transfer import fitting
m, n, n_private = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
options = json.loads(sys.argv[4])
rng = np.random.default_rng(0)
public = pd.DataFrame(rng.normal(5.0, 2.0, size=(m, n)))
private = pd.DataFrame(rng.normal(5.0, 2.0, size=(n_private, n)))
with threadpool_limits(1):  # the rules' threads: 1
    t, u = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
    model = fitting.fit_representation("pca", {{"dim": 20}}, public, rng=rng,
                                       pca_options=options)
    model.transform(public), model.transform(private)
    v = resource.getrusage(resource.RUSAGE_SELF)
done(fit_s=time.perf_counter() - t, fit_cpu_s=v.ru_utime + v.ru_stime - u.ru_utime - u.ru_stime,
     shape=list(public.shape), solver=model.svd_solver)
""",
    "vae": r"""
import numpy as np, pandas as pd
from dprepro.studies.repr_transfer import fitting
device = fitting.configure_torch(int(sys.argv[6]), sys.argv[7])
public = pd.DataFrame(np.random.default_rng(0).normal(5.0, 2.0, size=(int(sys.argv[1]),
                                                                      int(sys.argv[2]))))
rows = int(sys.argv[3])
spec = {{"dim": int(sys.argv[4]), "learning_rate": 1e-3, "hidden_layers": 1,
         "width_multiplier": int(sys.argv[5]) // int(sys.argv[4])}}
# fits of 1 and of 3 epochs over `rows` rows (validation_fraction 0.2: 0.8 rows trained),
# the whole public matrix resident as in the rule, after an untimed one (the process's
# first fit also pays torch's and the memory's warm-up): half their difference is an epoch
# (its batches and its validation pass) without the fit's set-up (scaling, the first loss)
seconds = []
for epochs in (1, 1, 3):
    t = time.perf_counter()
    fitting.fit_representation("vae", spec, public.iloc[:rows], rng=np.random.default_rng(0),
                               vae_options={{"max_epochs": epochs, "patience": 10,
                                             "batch_size": 64, "validation_fraction": 0.2,
                                             "device": device}})
    seconds.append(time.perf_counter() - t)
epoch = (seconds[2] - seconds[1]) / 2
done(epoch_s=epoch, setup_s=seconds[1] - epoch, shape=list(public.shape), device=device)
""",
    "learners": r"""
import numpy as np
from threadpoolctl import threadpool_limits
load_blas()
threadpool_limits(1)
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
load_blas()
import numpy as np
from threadpoolctl import threadpool_limits
from dprepro.studies.repr_transfer import drug
from dprepro.studies.repr_transfer.privacy import experiment_epsilons
name, n_drugs, paper = sys.argv[1], int(sys.argv[2]), sys.argv[3]
cfg, spec, data, features, ballast = job_inputs(name, paper, n_lineages=8)
settings = cfg["drug"]
response = data["private_response"]
splits = drug.drug_splits(response, splits=settings["splits"], test_size=settings["test_size"],
                          rng=np.random.default_rng(1))
drugs = [str(d) for d in response.columns]
def one(private, selection, centring):
    t = time.process_time()
    rows = drug.drug_experiment(
        private, response, drugs, epsilons=experiment_epsilons(settings), splits=splits,
        ridge=settings["ridge"], base_seed=0, stream="drug/bench",
        clipping_weights=lambda n, d, e: (0.5, 0.5), selection=selection,
        xx_noise=spec.xx_noise, mapping=spec.mapping, automatic_drugs=False, **centring)
    return (time.process_time() - t) / n_drugs, rows
with threadpool_limits(1):
    fs_unit, rows = one(features.private, features.selection,
                        drug.public_centring(spec, features, settings))
    z = representation(features, data, cfg["seeds"])
    repr_unit, _ = one(z.private, None, drug.public_centring(spec, z, settings))
done(per_fit_s=fs_unit + 7 * repr_unit, fs_s=fs_unit, repr_s=repr_unit, rows=len(rows),
     n_parts=sorted(set(int(k) for k in rows["n_parts"].dropna())))
""",
    "cancer": r"""
load_blas()
import numpy as np
from threadpoolctl import threadpool_limits
from dprepro.studies.repr_transfer import cancer_type
from dprepro.studies.repr_transfer.privacy import experiment_epsilons
name, paper, timed = sys.argv[1], sys.argv[2], int(sys.argv[3])
# ~57 lines a lineage: GDSC's BRCA, COREAD, LUAD and SKCM have 50-70 lines each
cfg, spec, data, features, ballast = job_inputs(name, paper, n_lineages=18)
settings = cfg["cancer_type"]
lineage = data["private_lineage"]
cases = cancer_type.cancer_type_cases(lineage, n_lineages=4, min_count=settings["folds"])
cases, scale = cases[:timed], len(cfg["cancer_type"]["cases"]) / timed
variant = spec.cancer_variant or settings["variant"]
def one(feats, selection):
    t = time.process_time()
    rows = cancer_type.cancer_type_experiment(
        feats.private, lineage, cases, epsilons=experiment_epsilons(settings),
        folds=settings["folds"], l2=settings["l2"], variant=variant, base_seed=0,
        stream="cancer_type/bench", scales=feats.scales, selection=selection,
        mapping=spec.mapping, automatic_cases=True)
    return time.process_time() - t, rows
with threadpool_limits(1):
    fs_s, rows = one(features, features.selection)
    repr_s, _ = one(representation(features, data, cfg["seeds"]), None)
done(per_fit_s=scale * (fs_s + 7 * repr_s), fs_s=scale * fs_s, repr_s=scale * repr_s,
     timed_s=fs_s + repr_s, rows=len(rows), case_lines=sorted(set(int(n) for n in rows["n_lines"])))
""",
    "search": r"""
load_blas()
import numpy as np
from threadpoolctl import threadpool_limits
from dprepro.studies.repr_transfer.search import dp_pair_score
variant, pairs, per, dim, folds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), 20, 10
rng = np.random.default_rng(0)
names = [f"L{{i:02d}}" for i in range(2 * pairs)]
labels = np.repeat(names, per)
Z = rng.normal(size=(len(labels), dim)) + np.repeat(rng.normal(size=(2 * pairs, dim)), per, 0)
t = time.process_time()
with threadpool_limits(1):
    dp_pair_score(Z, Z, labels, list(zip(names[::2], names[1::2])), epsilon=1.0, folds=folds,
                  variant=variant, l2=0.1, base_seed=0, stream="bench", noise_draws=1)
done(per_fit_s=time.process_time() - t)
""",
    "clipping": r"""
load_blas()
from threadpoolctl import threadpool_limits
from dprepro.studies.repr_transfer.drug import clipping_weight_table
n, xx_noise, settings = int(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
t = time.process_time()
with threadpool_limits(1):
    clipping_weight_table(n, [tuple(s) for s in settings], base_seed=0, xx_noise=xx_noise,
                          n_datasets=20, n_noise=20)
done(per_fit_s=(time.process_time() - t) / len(settings))
""",
}


def load(name: str):
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def child(name: str, *args) -> dict:
    code = PRELUDE.format(scripts=str(ROOT / "scripts"), public=PUBLIC, private=PRIVATE,
                          genes=GENES) + CHILDREN[name].format(private=PRIVATE)
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

    paper = yaml.safe_load((ROOT / "config" / "paper.yaml").read_text())["repr_transfer"]
    pipelines = len(paper.get("pipelines", ["as_published", "corrected"]))
    if "pca" in stages:
        # paper mode's solver at the real size, measured; one job fits each pipeline's
        # selected r once (its mapping serves every seed), the search one r_max per pair fold
        options = {**paper.get("pca", {}), "svd_solver": "randomized"}
        result = child("pca", PUBLIC, GENES, PRIVATE, json.dumps(options))
        result["per_fit_s"] = result["fit_cpu_s"]
        add("repr_fit", f"PCA r = 20 (randomized, p = {options.get('oversamples')}, "
            f"q = {options.get('power_iterations')}) + transform", f"{PUBLIC} x {GENES}",
            "measured", result,
            f"one fit on one BLAS thread: {result['fit_cpu_s']:.1f} CPU-s (the exact SVD: "
            f"~{EXACT_SVD_CPU_S:,} CPU-s, extrapolated from 500-2,000 samples); repeats = one "
            "fit per pipeline's selected r", repeats=pipelines,
            wildcards="representation=pca")

    if "vae" in stages:
        # one thread (what the limits assume) and two (what vae.threads gains per thread),
        # alternated VAE_RUNS times (the machine's speed drifts); the epoch is wall time:
        # with two threads its CPU time is the same or more. The row is the slowest
        # one-thread run (what the SLURM limits must cover) and the highest peak.
        runs = [(child("vae", PUBLIC, GENES, VAE_ROWS, VAE_DIM, VAE_WIDTH, 1, "cpu"),
                 child("vae", PUBLIC, GENES, VAE_ROWS, VAE_DIM, VAE_WIDTH, 2, "cpu"))
                for _ in range(VAE_RUNS)]
        ones = sorted(one["epoch_s"] for one, _ in runs)
        twos = sorted(two["epoch_s"] for _, two in runs)
        result = max((one for one, _ in runs), key=lambda one: one["epoch_s"])
        result["peak_rss_mb"] = max(r["peak_rss_mb"] for run in runs for r in run)
        result["per_fit_s"] = result["epoch_s"] * PUBLIC / VAE_ROWS
        speedups = sorted(one["epoch_s"] / two["epoch_s"] for one, two in runs)

        def epochs(values):
            return ", ".join(f"{v * PUBLIC / VAE_ROWS:.1f}" for v in values)

        add("repr_fit_vae",
            f"VAE epoch, r = {VAE_DIM}, 1 hidden layer of {VAE_WIDTH}, CPU 1 thread",
            f"{PUBLIC} x {GENES}", "peak measured; epoch time extrapolated", result,
            f"per_fit_s = one epoch over the {PUBLIC} rows, the slowest of {VAE_RUNS} runs "
            f"({epochs(ones)} s; timed on {VAE_ROWS} rows: half the difference between a "
            f"3-epoch and a 1-epoch fit, the fit's set-up apart); with 2 threads "
            f"(vae.threads) {epochs(twos)} s, {speedups[0]:.2f}-{speedups[-1]:.2f} x faster; "
            f"peak the highest of the {2 * VAE_RUNS} processes; a training is up to 2,000 "
            f"epochs (patience 10)", covers="mem", wildcards="representation=vae")

    if "learners" in stages:
        for rule, kind, step, fits in (
                ("repr_cancer_type", "logistic", "DPLogisticRegression fit, 1,018 x 20", FITS),
                ("repr_drug", "ssp", "SSPLinearRegression fit, 1,018 x 20", FITS),
                ("repr_cancer_type", "select", "dp_select_features, 1,018 x 2,000 candidates",
                 3)):
            width = 2000 if kind == "select" else 20
            add(rule, step, f"{PRIVATE} x {width}", "measured", child("learners", kind, fits),
                f"{fits} fits in one process", covers="mem")
    learning_stages(stages, paper, add)
    return rows


def learning_stages(stages, paper: dict, add) -> None:
    """The repr_search score, the clipping search and the whole cancer-type and drug jobs."""
    if "search" in stages:
        # one trial's score: DP logistic regression on the 16 validation pairs, 10-fold CV,
        # r = 20 (the largest); TCGA's 10,535 samples over 33 types: ~319 a type
        per_type = PUBLIC // 33
        for variant in ("paper", "cms11"):
            result = child("search", variant, paper["selection"]["pairs"], per_type)
            draws = int(paper["selection"]["noise_draws"])
            result["per_fit_s"] *= draws
            add("repr_search", f"one trial's score, {paper['selection']['pairs']} pairs, "
                f"variant {variant}", f"{2 * per_type} x 20 a pair",
                "1 of the noise draws timed, x draws", result,
                f"per_fit_s = one trial (16 pairs x {paper['selection']['folds']} folds x "
                f"{draws} noise draws; one draw timed); pairs of 2 x {per_type} samples "
                f"(TCGA's {PUBLIC} over 33 types)", covers="mem")
    if "clipping" in stages:
        # a (d, ε_learner) of the SSP clipping search at the training size, 20 x 20
        n_train = PRIVATE - int(paper["drug"]["test_size"])
        for xx_noise in ("wishart", "laplace"):
            result = child("clipping", n_train, xx_noise, json.dumps([[21, 0.5], [11, 1.0]]))
            add("repr_clipping_weights", f"one (d, ε) of the clipping search ({xx_noise})",
                f"n = {n_train}, d = 21 and 11", "measured", result,
                "per_fit_s = one setting (20 x 20 grid x 20 data sets x 20 noise draws)",
                covers="mem")
    if "cancer" in stages:
        cases = len(paper["cancer_type"]["cases"])
        for name in ("as_published", "corrected"):
            result = child("cancer", name, ROOT / "config" / "paper.yaml", 2)
            # the process as measured (2 cases of 2 methods), the rest of the job scaled
            extra = result["per_fit_s"] - result["timed_s"]
            job = {**result, "cpu_s": result["cpu_s"] + extra,
                   "wall_s": result["wall_s"] + extra}
            add("repr_cancer_type", f"cancer_type_experiment, every method ({name})",
                f"{cases} cases of ~{'/'.join(map(str, result['case_lines']))} lines, 2,000 "
                "candidates", "peak measured; time extrapolated", job,
                f"DP feature selection ({result['fs_s']:.1f} CPU-s) and one representation "
                f"method at r = 20 ({result['repr_s']:.1f}) timed on 2 of the {cases} cases "
                "and scaled; a job runs 7 such methods (6 representations and controls, the "
                "fixed genes) and the selection; the public and private expression held at "
                "the real size", wildcards=f"pipeline={name}")
    if "drug" in stages:
        # a whole repr_drug job is its chunk's drugs x splits x methods: DP feature
        # selection's Lasso votes (once per drug and split, shared by the seeds and the ε)
        # and the SSP fits of 7 other methods (r <= 20), timed per drug on 2 drugs of the
        # real shape, then scaled to the drugs of the largest chunk
        drug = paper["drug"]
        per_chunk = -(-PAPER_DRUGS // int(drug["chunks"]))
        for name in ("as_published", "corrected"):
            result = child("drug", name, 2, ROOT / "config" / "paper.yaml")
            unit = result["per_fit_s"]
            # the process (start-up, data, two drugs of two methods) as measured, the rest
            # of the chunk scaled
            done_s = 2 * (result["fs_s"] + result["repr_s"])
            scaled = {"wall_s": result["wall_s"] + unit * per_chunk - done_s,
                      "cpu_s": result["cpu_s"] + unit * per_chunk - done_s,
                      "peak_rss_mb": result["peak_rss_mb"], "per_fit_s": unit}
            add("repr_drug", f"drug_experiment, every method ({name})",
                f"{PRIVATE} x {GENES_CANDIDATES} candidates, {drug['splits']} splits",
                "peak measured; time extrapolated", scaled,
                f"per_fit_s = one drug: DP feature selection ({result['fs_s']:.2f} CPU-s: "
                f"{drug['splits']} splits' Lasso votes, k = "
                f"{'/'.join(map(str, result['n_parts']))}, "
                f"{paper['feature_selection'].get('lasso_solver', 'lars')}, "
                f"and its SSP fits) + 7 methods' SSP fits ({result['repr_s']:.2f} each), "
                f"timed on 2 drugs; wall_s = the process with {per_chunk} drugs, the largest "
                f"chunk of {PAPER_DRUGS} drugs in {drug['chunks']} chunks; the public and "
                "private expression held at the real size", wildcards=f"pipeline={name}")


def device_epoch(device: str) -> str:
    """The paper-scale VAE epoch (1 hidden layer of VAE_WIDTH, r = VAE_DIM) on ``device``:
    VAE_RUNS runs, each timed as the table's CPU rows are, the slowest last."""
    runs = [child("vae", PUBLIC, GENES, VAE_ROWS, VAE_DIM, VAE_WIDTH, 1, device)
            for _ in range(VAE_RUNS)]
    epochs = sorted(run["epoch_s"] * PUBLIC / VAE_ROWS for run in runs)
    used = runs[0]["device"]
    return (f"VAE epoch over {PUBLIC} x {GENES}, r = {VAE_DIM}, 1 hidden layer of {VAE_WIDTH}, "
            f"on {used} ({VAE_RUNS} run{'s' * (VAE_RUNS != 1)}): "
            + ", ".join(f"{e:.3g} s" for e in epochs))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default=None, help="scratch folder (default: $TMPDIR)")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "paper_scale.csv"))
    parser.add_argument("--only", default=",".join(STAGES),
                        help=f"comma-separated stages to run, of {STAGES}; the rows of the "
                             "others are kept from --out")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="fraction of every size, for a quick check of the script only")
    parser.add_argument("--vae-device", default=None,
                        help="time the VAE epoch on this torch device instead (e.g. cuda on a "
                             "GPU node; cpu for a check of the script) and print it; writes "
                             "no table")
    args = parser.parse_args(argv)
    if args.scale != 1.0:
        global GDSC_GENES, DEPMAP_MODELS, TCGA_ROWS, PUBLIC, GENES, VAE_ROWS, VAE_RUNS
        GDSC_GENES, DEPMAP_MODELS, PUBLIC, GENES = (
            max(50, int(v * args.scale)) for v in (GDSC_GENES, DEPMAP_MODELS, PUBLIC, GENES))
        TCGA_ROWS, VAE_ROWS, VAE_RUNS = max(100, int(TCGA_ROWS * args.scale)), 128, 1
    if args.vae_device is not None:
        print(device_epoch(args.vae_device))
        return 0
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
    cost = load("paper_mode_cost")
    paper = yaml.safe_load((ROOT / "config" / "paper.yaml").read_text())["repr_transfer"]
    try:
        print(cost.report([{k: str(v) for k, v in r.items()} for r in rows], paper))
    except KeyError as missing:  # a stage never run: no total yet
        print(f"no paper-mode total: {missing}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
