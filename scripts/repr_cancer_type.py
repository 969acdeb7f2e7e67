"""repr_transfer cancer-type pairs: every method, seed and ε (DP logistic regression)."""

import time
from pathlib import Path

import pandas as pd

from dprepro.runtime import step
from dprepro.runtime.io import write_parquet
from dprepro.studies.repr_transfer import baselines as repr_baselines
from dprepro.studies.repr_transfer import cancer_type as repr_cancer_type
from dprepro.studies.repr_transfer import fitting as repr_fitting
from dprepro.studies.repr_transfer import privacy as repr_privacy

log = step.start(snakemake, "repr_cancer_type")
p = step.job_params(snakemake)
inp = snakemake.input
settings = p.settings
spec = repr_privacy.pipeline(snakemake.wildcards.pipeline)
lineage = pd.read_parquet(inp.private_lineage)["lineage"]
epsilons = repr_privacy.experiment_epsilons(settings)
cases = repr_cancer_type.cancer_type_cases(lineage, n_lineages=settings["lineages"],
                                     min_count=settings["folds"], cases=settings["cases"])
automatic = repr_privacy.automatic_cases(settings)
log.info("pipeline %s: %d cases %s%s, epsilons %s, %d seeds", spec.name, len(cases), cases,
         " (chosen from the private lineage counts: no finite epsilon)" if automatic else "",
         epsilons, p.seeds)
genes = {}
if "public_expression" in inp.keys():
    mapped = {"global": inp.private_expression, "line_local": inp.private_expression_line_local}
    genes = {"public_expression": pd.read_parquet(inp.public_expression),
             "private_expression": pd.read_parquet(mapped[spec.mapping])}
representations = {Path(path).stem: pd.read_parquet(path) for path in inp.representations}
results = []
for method in p.methods:
    features = repr_baselines.method_features(method, seeds=p.seeds, samples=lineage.index,
                                          representations=representations,
                                          baselines=p.baselines,
                                          private_set=spec.private_set,
                                          public_parts=spec.public_selection, base_seed=p.seed,
                                          **genes)
    start = time.perf_counter()
    rows = repr_cancer_type.cancer_type_experiment(
        features.private, lineage, cases, epsilons=epsilons, folds=settings["folds"],
        l2=settings["l2"], variant=spec.cancer_variant or settings["variant"], base_seed=p.seed,
        stream=f"cancer_type/{repr_fitting.noise_stream(method, representations)}",
        scales=features.scales,
        selection=features.selection,
        mapping=spec.mapping, automatic_cases=automatic)
    rows.insert(0, "representation", method)
    rows.insert(1, "pipeline", spec.name)
    results.append(rows)
    log.info("%s: %d rows in %.1f s", method, len(rows), time.perf_counter() - start)
rows = pd.concat(results, ignore_index=True)
path = snakemake.output.rows
write_parquet(rows, path)
log.info("wrote %s (%d rows)", path, len(rows))
streams = {"noise": "cancer_type/<method>/<case>/eps<epsilon>, replicate = seed "
                    "(the same draws for both pipelines; pca_vae_dim draws pca's where its r "
                    "is PCA's own, being then PCA itself)",
           "folds": "cancer_type/folds/<case>", "base_seed": p.seed, "seeds": p.seeds,
           "derivation": "numpy.random.SeedSequence([base, crc32('repr_transfer'), "
                         "crc32(step), replicate])"}
step.write_sidecars(
    snakemake, __file__, [path], config=dict(p.items()), seeds=streams,
    privacy=repr_privacy.distinct(repr_privacy.table_records(rows, kind="cancer_type",
                                                             settings=settings)),
    data_origin=p.data_origin)
