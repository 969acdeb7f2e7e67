"""Fit one pipeline's selected representation on public data (every seed), map the private lines."""

import pandas as pd

from dprepro import repr_privacy, repr_study, step
from dprepro.seeds import seed_record

log = step.start(snakemake, "repr_fit")
p = snakemake.params
w = snakemake.wildcards
table = pd.read_csv(snakemake.input.hyperparameters)
spec = repr_study.selected_spec(table, w.representation, w.pipeline)
public = pd.read_parquet(snakemake.input.public_expression)
private = pd.read_parquet(snakemake.input.private_expression)
line_local = pd.read_parquet(snakemake.input.private_expression_line_local)
stream = f"fit/{w.representation}"
vae_options = None
if w.representation == "vae":
    device = repr_study.configure_torch(snakemake.threads, p.vae["device"])
    vae_options = {**p.vae, "device": device, "log_every": 10}
log.info("%s (%s search): %s", w.representation, w.pipeline, spec)
# an equal-dimension control is its model's fit at another search's r (pca_vae_dim: PCA)
frame = repr_study.seed_representations(
    repr_study.fitted_as(w.representation), spec, public,
    {"private": private, "private_line_local": line_local},
    seeds=p.seeds, base_seed=p.seed, stream=stream, vae_options=vae_options, log=log)
path = snakemake.output.representation
step.write_parquet(frame, path)
log.info("wrote %s (%d seeds of %d public + %d private rows, r = %d)", path, p.seeds,
         len(public), len(private), spec["dim"])
step.write_sidecars(snakemake, __file__, [path], config={**dict(p.items()), "spec": spec},
                    seeds=seed_record(p.seed, repr_study.STUDY, stream, p.seeds),
                    privacy=repr_privacy.INTERMEDIATES["representation"],
                    data_origin=p.data_origin)
