"""Fit every pipeline's selected candidate of one representation on public data (every seed)
and map the private lines through it.

A candidate that two pipelines select (the same spec) is fitted once: its fits
are seeded by the representation's stream alone, so both files hold the same rows.
"""

import json

import pandas as pd

from dprepro.runtime import step
from dprepro.runtime.io import write_parquet
from dprepro.runtime.seeds import seed_record
from dprepro.studies.repr_transfer import common as repr_common
from dprepro.studies.repr_transfer import fitting as repr_fitting
from dprepro.studies.repr_transfer import privacy as repr_privacy

log = step.start(snakemake, "repr_fit")
p = step.job_params(snakemake)
rep = snakemake.wildcards.representation
table = pd.read_csv(snakemake.input.hyperparameters)
public = pd.read_parquet(snakemake.input.public_expression)
private = pd.read_parquet(snakemake.input.private_expression)
line_local = pd.read_parquet(snakemake.input.private_expression_line_local)
# fit/<rep>; the VAE control vae_svae_dim shares the joint model's stream (only λ differs)
stream = repr_common.fit_stream(rep)
labels = None
if rep in repr_common.SUPERVISED:
    # the joint model's auxiliary target: the public samples' lineage, every lineage the
    # private cancer-type cases evaluate unlabelled (configuration only, as the search's rule)
    labels = repr_fitting.final_fit_labels(
        pd.read_parquet(snakemake.input.public_lineage)["lineage"], p.unlabelled, log=log)
vae_options = None
if repr_common.fitted_as(rep) in repr_common.VAE_MODELS:
    vae_options = {**repr_fitting.vae_training_options(
        p.vae, job_cores=snakemake.threads, log=log), "log_every": 10}
# the other representations' records keep their keys (no empty unlabelled list)
config = {name: value for name, value in p.items()
          if name != "pipelines" and not (name == "unlabelled" and not value)}
if p.pca:  # PCA and its control only (sklearn is imported by PCA's fits anyway)
    from dprepro.representations.pca import pca_solver

    log.info("PCA solver on public %d x %d: %s (%s)", *public.shape,
             pca_solver(p.pca["svd_solver"], public.shape), p.pca)
fitted = {}
for pipeline in p.pipelines:
    spec = repr_fitting.selected_spec(table, rep, pipeline)
    spec_key = json.dumps(spec, sort_keys=True)
    if spec_key in fitted:
        log.info("%s (%s search): %s, fitted above", rep, pipeline, spec)
    else:
        log.info("%s (%s search): %s", rep, pipeline, spec)
        # an equal-dimension control is its model's fit at another search's r (pca_vae_dim)
        fitted[spec_key] = repr_fitting.seed_representations(
            repr_common.fitted_as(rep), spec, public,
            {"private": private, "private_line_local": line_local},
            seeds=p.seeds, base_seed=p.seed, stream=stream, vae_options=vae_options, log=log,
            labels=labels, pca_options=p.pca or None)
    path = snakemake.output[pipeline]
    write_parquet(fitted[spec_key], path)
    log.info("wrote %s (%d seeds of %d public + %d private rows, r = %d)", path, p.seeds,
             len(public), len(private), spec["dim"])
    step.write_sidecars(snakemake, __file__, [path], config={**config, "spec": spec},
                        seeds=seed_record(p.seed, repr_common.STUDY, stream, p.seeds),
                        privacy=repr_privacy.INTERMEDIATES["representation"],
                        data_origin=p.data_origin,
                        extra={"wildcards": {"pipeline": pipeline, "representation": rep},
                               # the device the fits ran on (the plan's may say auto)
                               **({"device": vae_options["device"]} if vae_options else {})})
