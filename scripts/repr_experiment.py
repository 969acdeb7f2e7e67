"""repr_transfer experiments, every method, seed and ε: cancer-type pairs or drug sensitivity."""

import math
import time
from pathlib import Path

import numpy as np
import pandas as pd

from dprepro import repr_study, step

log = step.start(snakemake, "repr_experiment")
p = snakemake.params
w = snakemake.wildcards
inp = snakemake.input
settings = p.settings
lineage = pd.read_parquet(inp.private_lineage)["lineage"]
response = pd.read_parquet(inp.private_response)
samples = lineage.index
epsilons = sorted({float(e) for e in settings["epsilons"]} | {float(settings["epsilon"])})
epsilons.append(math.inf)
if p.kind == "cancer_type":
    cases = repr_study.cancer_type_cases(lineage, n_lineages=settings["lineages"],
                                         min_count=settings["folds"], cases=settings["cases"])
    log.info("%d cases %s, epsilons %s, %d seeds", len(cases), cases, epsilons, p.seeds)
elif p.kind == "drug":
    drugs = [str(d) for d in response.columns]
    if settings["max_drugs"]:
        drugs = drugs[: settings["max_drugs"]]
    chunk = drugs[int(w.chunk):: settings["chunks"]]
    splits = repr_study.drug_splits(response.loc[samples], splits=settings["splits"],
                                    test_size=settings["test_size"],
                                    rng=repr_study.stream_rng(p.seed, "drug/splits"))
    log.info("%d drugs in chunk %s of %d, %d splits, epsilons %s, %d seeds", len(chunk),
             w.chunk, settings["chunks"], len(splits), epsilons, p.seeds)
    clipping = repr_study.clipping_lookup([pd.read_csv(path) for path in inp.clipping])
else:
    raise ValueError(f"unknown experiment kind {p.kind!r}")
if "public_expression" in inp.keys():
    public_expr = pd.read_parquet(inp.public_expression)
    private_expr = pd.read_parquet(inp.private_expression).loc[samples]
representations = {}
for path in inp.representations:
    frame = pd.read_parquet(path)
    representations[Path(path).stem] = frame


def features(method):
    """Private features per seed, public row-norm scales and the feature selection."""
    if method in repr_study.REPRESENTATIONS:
        frame = representations[method]
        cols = [c for c in frame.columns if c.startswith("z")]
        private, scales = {}, {}
        for seed in range(p.seeds):
            rows = frame[frame["seed"] == seed]
            private_rows = rows[rows["set"] == "private"].set_index("sample")
            private[seed] = private_rows.loc[samples, cols].to_numpy(float)
            scales[seed] = repr_study.mean_row_norm(rows.loc[rows["set"] == "public", cols])
        return private, scales, None
    if method == "fixed_genes":
        genes = p.baselines["fixed_genes"]
    else:
        fs = p.baselines["feature_selection"]
        genes = repr_study.variable_genes(public_expr, fs["candidate_genes"])
    public_c, private_c = repr_study.centred_genes(public_expr, private_expr, genes)
    private = {seed: private_c for seed in range(p.seeds)}
    scales = {seed: repr_study.mean_row_norm(public_c) for seed in range(p.seeds)}
    selection = None
    if method == "dp_feature_selection":
        selection = repr_study.FeatureSelection(
            n_select=fs["n_genes"], public=public_c, sparsity=fs["sparsity"],
            lasso_max_iter=fs["lasso_max_iter"])
    log.info("%s: %d candidate genes", method, len(genes))
    return private, scales, selection


results = []
for method in p.methods:
    private, scales, selection = features(method)
    start = time.perf_counter()
    if p.kind == "cancer_type":
        rows = repr_study.cancer_type_experiment(
            private, lineage, cases, epsilons=epsilons, folds=settings["folds"],
            l2=settings["l2"], variant=settings["variant"], base_seed=p.seed,
            stream=f"cancer_type/{method}", scales=scales, selection=selection)
    else:
        rows = repr_study.drug_experiment(
            private, response.loc[samples], chunk, epsilons=epsilons, splits=splits,
            ridge=settings["ridge"], base_seed=p.seed, stream=f"drug/{method}",
            clipping_weights=clipping, selection=selection)
    rows.insert(0, "representation", method)
    results.append(rows)
    log.info("%s: %d rows in %.1f s", method, len(rows), time.perf_counter() - start)
rows = pd.concat(results, ignore_index=True)
path = snakemake.output.rows
step.write_parquet(rows, path)
log.info("wrote %s (%d rows)", path, len(rows))
streams = {"noise": f"{p.kind}/<method>/<case or drug>/eps<epsilon>, replicate = seed",
           "folds" if p.kind == "cancer_type" else "splits":
               "cancer_type/folds/<case>" if p.kind == "cancer_type" else "drug/splits",
           "base_seed": p.seed, "seeds": p.seeds,
           "derivation": "numpy.random.SeedSequence([base, crc32('repr_transfer'), "
                         "crc32(step), replicate])"}
step.write_sidecars(
    snakemake, __file__, [path], config=dict(p.items()), seeds=streams,
    privacy={"release": False,
             "note": "DP results (finite epsilon) and non-private references (epsilon = inf); "
                     "columns mechanism, epsilon and true_epsilon say which is which",
             "epsilons": [e for e in epsilons if np.isfinite(e)]},
    data_origin=p.data_origin)
