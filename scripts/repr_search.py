"""Seeded optuna searches of one representation, one per pipeline (public data only).

The pipelines' searches share their fits (:func:`dprepro.studies.repr_transfer.search.search`,
``fit_cache``): a candidate proposed by both is fitted once.
"""

import pandas as pd

from dprepro.runtime import step
from dprepro.runtime.io import write_csv
from dprepro.studies.repr_transfer import common as repr_common
from dprepro.studies.repr_transfer import fitting as repr_fitting
from dprepro.studies.repr_transfer import privacy as repr_privacy
from dprepro.studies.repr_transfer import search as repr_search

log = step.start(snakemake, "repr_search")
p = step.job_params(snakemake)
rep = snakemake.wildcards.representation
public = pd.read_parquet(snakemake.input.expression)
lineage = pd.read_parquet(snakemake.input.lineage)["lineage"]
vae_options, device = None, ""
if rep in repr_common.VAE_MODELS:
    vae_options = {**repr_fitting.vae_training_options(
        p.vae, job_cores=snakemake.threads, log=log), "log_every": 10}
    device = vae_options["device"]
if p.pca:  # PCA and its control only (sklearn is imported by PCA's fits anyway)
    from dprepro.representations.pca import pca_solver

    log.info("PCA solver on public %d x %d: %s (%s)", *public.shape,
             pca_solver(p.pca["svd_solver"], public.shape), p.pca)
fits = {}
for pipeline in p.pipelines:
    objective = p.objectives[pipeline]
    log.info("%s, pipeline %s: %d trials on public %d x %d (%s), objective %s", rep, pipeline,
             p.trials, *public.shape, p.data_origin, objective)
    table = repr_search.search(rep, public, lineage, trials=p.trials, space=p.space,
                               objective=objective, base_seed=p.seed, vae_options=vae_options,
                               log=log, fit_cache=fits, trial_seconds=p.trial_seconds,
                               pca_options=p.pca or None)
    table.insert(0, "pipeline", pipeline)
    table = table.assign(folds=objective["folds"], epsilon=float(objective["epsilon"]),
                         variant=objective["variant"], device=device,
                         data_origin=p.data_origin)
    out = snakemake.output[pipeline]
    write_csv(table, out)
    config = {key: value for key, value in p.items() if key not in ("objectives", "pipelines")}
    step.write_sidecars(snakemake, __file__, [out], config={**config, "objective": objective},
                        seeds={**repr_search.SEEDS, "base_seed": p.seed},
                        privacy=repr_privacy.INTERMEDIATES["candidate"],
                        data_origin=p.data_origin, extra={"pipeline": pipeline})
log.info("%d fits and mappings cached for %d searches", len(fits), len(p.pipelines))
