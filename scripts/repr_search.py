"""Seeded optuna search of one representation for one pipeline (public data only)."""

import pandas as pd

from dprepro import repr_privacy, repr_search, repr_study, step

log = step.start(snakemake, "repr_search")
p = snakemake.params
rep = snakemake.wildcards.representation
pipeline = snakemake.wildcards.pipeline
public = pd.read_parquet(snakemake.input.expression)
lineage = pd.read_parquet(snakemake.input.lineage)["lineage"]
vae_options, device = None, ""
if rep == "vae":
    device = repr_study.configure_torch(snakemake.threads, p.vae["device"])
    vae_options = {**p.vae, "device": device, "log_every": 10}
log.info("%s, pipeline %s: %d trials on public %d x %d (%s), objective %s", rep, pipeline,
         p.trials, *public.shape, p.data_origin, p.objective)
table = repr_search.search(rep, public, lineage, trials=p.trials, space=p.space,
                           objective=p.objective, base_seed=p.seed, vae_options=vae_options,
                           log=log)
table.insert(0, "pipeline", pipeline)
table = table.assign(folds=p.objective["folds"], epsilon=float(p.objective["epsilon"]),
                     variant=p.objective["variant"], device=device, data_origin=p.data_origin)
step.write_csv(table, snakemake.output.trials)
step.write_sidecars(snakemake, __file__, [snakemake.output.trials], config=dict(p.items()),
                    seeds={**repr_search.SEEDS, "base_seed": p.seed},
                    privacy=repr_privacy.INTERMEDIATES["candidate"], data_origin=p.data_origin)
