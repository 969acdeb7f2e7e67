"""Fit one pipeline's selected representation on public data (every seed), map the private lines."""

import numpy as np
import pandas as pd

from dprepro import repr_privacy, repr_study, step
from dprepro.seeds import seed_record, seed_sequence

log = step.start(snakemake, "repr_fit")
p = snakemake.params
w = snakemake.wildcards
table = pd.read_csv(snakemake.input.hyperparameters)
spec = repr_study.selected_spec(table, w.representation, w.pipeline)
public = pd.read_parquet(snakemake.input.public_expression)
private = pd.read_parquet(snakemake.input.private_expression)
line_local = pd.read_parquet(snakemake.input.private_expression_line_local).loc[private.index]
stream = f"fit/{w.representation}"
vae_options = None
if w.representation == "vae":
    device = repr_study.configure_torch(snakemake.threads, p.vae["device"])
    vae_options = {**p.vae, "device": device, "log_every": 10}
frames = []
for seed in range(p.seeds):
    rng = np.random.default_rng(seed_sequence(p.seed, repr_study.STUDY, stream, seed))
    log.info("%s (%s search) seed %d: %s on public %d x %d", w.representation, w.pipeline, seed,
             spec, *public.shape)
    model = repr_study.fit_representation(w.representation, spec, public, rng=rng,
                                          vae_options=vae_options)
    frame = repr_study.representation_frame(
        model.transform(public), model.transform(private), public.index, private.index,
        extra_sets={"private_line_local": model.transform(line_local)})
    frames.append(frame.assign(seed=seed))
frame = pd.concat(frames, ignore_index=True)
path = snakemake.output.representation
step.write_parquet(frame, path)
log.info("wrote %s (%d seeds of %d public + %d private rows, r = %d)", path, p.seeds,
         len(public), len(private), spec["dim"])
step.write_sidecars(snakemake, __file__, [path], config={**dict(p.items()), "spec": spec},
                    seeds=seed_record(p.seed, repr_study.STUDY, stream, p.seeds),
                    privacy=repr_privacy.INTERMEDIATES["representation"],
                    data_origin=p.data_origin)
