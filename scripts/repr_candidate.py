"""Fit one hyperparameter candidate on public data and score it on the public auxiliary task."""

import numpy as np
import pandas as pd

from dprepro import repr_privacy, repr_study, step
from dprepro.seeds import seed_record, seed_sequence

log = step.start(snakemake, "repr_candidate")
p = snakemake.params
w = snakemake.wildcards
public = pd.read_parquet(snakemake.input.expression)
lineage = pd.read_parquet(snakemake.input.lineage)["lineage"].reindex(public.index)
stream = f"candidate/{w.representation}/{w.candidate}"
rng = np.random.default_rng(seed_sequence(p.seed, repr_study.STUDY, stream, 0))
vae_options, device = None, ""
if w.representation == "vae":
    device = repr_study.configure_torch(snakemake.threads, p.vae["device"])
    vae_options = {**p.vae, "device": device, "log_every": 10}
log.info("%s candidate %s on public %d x %d (%s)", w.representation, p.spec, *public.shape,
         p.data_origin)
model = repr_study.fit_representation(w.representation, p.spec, public, rng=rng,
                                      vae_options=vae_options)
score = repr_study.auxiliary_score(
    model.transform(public), lineage, folds=p.folds,
    random_state=repr_study.stream_int(p.seed, "selection/folds"))
log.info("auxiliary CV accuracy %.4f ± %.4f (%d samples, %d lineages)", score["score"],
         score["score_se"], score["n_samples"], score["n_classes"])
row = {"representation": w.representation, "candidate": w.candidate, "dim": p.spec["dim"],
       "learning_rate": p.spec.get("learning_rate", np.nan),
       "hidden_layers": p.spec.get("hidden_layers", np.nan),
       "width_multiplier": p.spec.get("width_multiplier", np.nan),
       "hidden_width": (p.spec["width_multiplier"] * p.spec["dim"]
                        if "width_multiplier" in p.spec else np.nan),
       **score, "folds": p.folds,
       "epochs": getattr(model, "n_epochs_", np.nan),
       "best_epoch": getattr(model, "best_epoch_", np.nan),
       "device": device, "data_origin": p.data_origin}
step.write_csv(pd.DataFrame([row]), snakemake.output.candidate)
step.write_sidecars(snakemake, __file__, [snakemake.output.candidate], config=dict(p.items()),
                    seeds=seed_record(p.seed, repr_study.STUDY, stream, 1),
                    privacy=repr_privacy.INTERMEDIATES["candidate"],
                    data_origin=p.data_origin)
