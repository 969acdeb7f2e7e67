"""Analyse one release of the rrr_survival study: original data, RRR draws or LNTE draws."""

import numpy as np
import pandas as pd

from dprepro import step
from dprepro.cohorts import IPSSR_GROUPS
from dprepro.rrr_study import analyse_lnte, analyse_original, analyse_rrr, time_grid
from dprepro.seeds import seed_record, seed_sequence

log = step.start(snakemake, "rrr_analyse")
p = snakemake.params
w = snakemake.wildcards
cohort = pd.read_parquet(snakemake.input.cohort)
origin = cohort["data_origin"].iloc[0]
present = set(cohort["group"])
labels = [g for g in IPSSR_GROUPS if g in present] if w.dataset == "ipssr" else sorted(present)
grid = time_grid(cohort["time"], p.grid_points)
seeds = None
if p.mechanism == "original":
    results = analyse_original(cohort, labels=labels, grid=grid)
    privacy = {"release": False, "mechanism": "original"}
else:
    epsilon = float(w.epsilon)
    stream = f"{p.mechanism}/{w.dataset}/{p.calibration}/eps{w.epsilon}"
    rng = np.random.default_rng(seed_sequence(p.seed, "rrr_survival", stream, 0))
    seeds = seed_record(p.seed, "rrr_survival", stream, p.draws)
    if p.mechanism == "rrr":
        results = analyse_rrr(cohort, labels=labels, epsilon=epsilon, calibration=p.calibration,
                              draws=p.draws, rng=rng, grid=grid)
    else:
        results = analyse_lnte(cohort, labels=labels, epsilon=epsilon, draws=p.draws, rng=rng,
                               grid=grid)
    privacy = {"release": True, "mechanism": p.mechanism, "epsilon": epsilon,
               "calibration": p.calibration if p.mechanism == "rrr" else "as published"}
log.info("%s %s: %d groups %s, %d draws", w.dataset, p.mechanism, len(labels), labels,
         results["medians"]["draw"].nunique())
outputs = []
for key, frame in results.items():
    path = snakemake.output[key]
    if path.endswith(".parquet"):
        step.write_parquet(frame, path)
    else:
        step.write_csv(frame, path)
    outputs.append(path)
step.write_sidecars(snakemake, __file__, outputs, config=dict(p.items()), seeds=seeds,
                    privacy=privacy, data_origin=origin)
