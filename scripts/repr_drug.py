"""repr_transfer drug sensitivity, one chunk of drugs: every method, seed and ε (SSP)."""

import time
from pathlib import Path

import pandas as pd

from dprepro.runtime import step
from dprepro.runtime.io import write_parquet
from dprepro.studies.repr_transfer import baselines as repr_baselines
from dprepro.studies.repr_transfer import common as repr_common
from dprepro.studies.repr_transfer import drug as repr_drug
from dprepro.studies.repr_transfer import fitting as repr_fitting
from dprepro.studies.repr_transfer import privacy as repr_privacy

log = step.start(snakemake, "repr_drug")
p = step.job_params(snakemake)
inp = snakemake.input
settings = p.settings
spec = repr_privacy.pipeline(snakemake.wildcards.pipeline)
chunk_no = int(snakemake.wildcards.chunk)
lineage = pd.read_parquet(inp.private_lineage)["lineage"]
samples = lineage.index
response = pd.read_parquet(inp.private_response).loc[samples]
epsilons = repr_privacy.experiment_epsilons(settings)
# the configured drugs (or every column of the response table), before any response is read
drugs = repr_drug.drug_list(response.columns, drugs=settings["drugs"],
                            max_drugs=settings["max_drugs"])
automatic = repr_privacy.automatic_drugs(p.privacy_settings)
chunk = drugs[chunk_no:: settings["chunks"]]
splits = repr_drug.drug_splits(response, splits=settings["splits"],
                                test_size=settings["test_size"],
                                rng=repr_common.stream_rng(p.seed, "drug/splits"))
log.info("pipeline %s: %d drugs in chunk %d of %d%s, %d splits, epsilons %s, %d seeds",
         spec.name, len(chunk), chunk_no, settings["chunks"],
         " (read off the private dose-response table: no finite epsilon)" if automatic else "",
         len(splits), epsilons, p.seeds)
clipping = repr_drug.clipping_lookup([pd.read_csv(inp.clipping)])
genes = {}
if "public_expression" in inp.keys():
    mapped = {"global": inp.private_expression, "line_local": inp.private_expression_line_local}
    genes = {"public_expression": pd.read_parquet(inp.public_expression),
             "private_expression": pd.read_parquet(mapped[spec.mapping])}
representations = {Path(path).stem: pd.read_parquet(path) for path in inp.representations}
results = []
for method in p.methods:
    features = repr_baselines.method_features(method, seeds=p.seeds, samples=samples,
                                          representations=representations,
                                          baselines=p.baselines,
                                          private_set=spec.private_set,
                                          public_parts=spec.public_selection, base_seed=p.seed,
                                          **genes)
    start = time.perf_counter()
    rows = repr_drug.drug_experiment(
        features.private, response, chunk, epsilons=epsilons, splits=splits,
        ridge=settings["ridge"], base_seed=p.seed,
        stream=f"drug/{repr_fitting.noise_stream(method, representations)}",
        clipping_weights=clipping, selection=features.selection, xx_noise=spec.xx_noise,
        mapping=spec.mapping, automatic_drugs=automatic,
        **repr_drug.public_centring(spec, features, settings))
    rows.insert(0, "representation", method)
    rows.insert(1, "pipeline", spec.name)
    results.append(rows)
    log.info("%s: %d rows in %.1f s", method, len(rows), time.perf_counter() - start)
rows = pd.concat(results, ignore_index=True)
path = snakemake.output.rows
write_parquet(rows, path)
log.info("wrote %s (%d rows)", path, len(rows))
streams = {"noise": "drug/<method>/<drug>/eps<epsilon>, replicate = seed (the same "
                    "draws for both pipelines; pca_vae_dim draws pca's where its r is "
                    "PCA's own, being then PCA itself)",
           "splits": "drug/splits", "base_seed": p.seed, "seeds": p.seeds,
           "derivation": "numpy.random.SeedSequence([base, crc32('repr_transfer'), "
                         "crc32(step), replicate])"}
records = (repr_privacy.table_records(rows, kind="drug", settings=p.privacy_settings)
           if len(rows) else [])
step.write_sidecars(snakemake, __file__, [path], config=dict(p.items()), seeds=streams,
                    privacy=repr_privacy.distinct(records), data_origin=p.data_origin)
