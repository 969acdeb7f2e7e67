"""Analyse one release of the rrr_survival study: original data, RRR draws or LNTE draws."""

import pandas as pd

from dprepro import step
from dprepro.cohort_spec import group_order
from dprepro.rrr_study import run_release

log = step.start(snakemake, "rrr_analyse")
p = snakemake.params
cohort = pd.read_parquet(snakemake.input.cohort)
labels = group_order(cohort["group"], p.groups)
results, record, seeds = run_release(
    cohort, dataset=snakemake.wildcards.dataset, mechanism=p.mechanism,
    epsilon=p.get("epsilon"), calibration=p.calibration, labels=labels,
    grid_points=p.grid_points, draws=p.draws, seed=p.seed, privacy_unit=p.privacy_unit)
log.info("%s %s: %d groups %s, %d draws", snakemake.wildcards.dataset, p.mechanism, len(labels),
         labels, results["medians"]["draw"].nunique())
outputs = []
for key, frame in results.items():
    path = snakemake.output[key]
    (step.write_parquet if path.endswith(".parquet") else step.write_csv)(frame, path)
    outputs.append(path)
step.write_sidecars(snakemake, __file__, outputs, config=dict(p.items()), seeds=seeds,
                    privacy=record, data_origin=cohort["data_origin"].iloc[0])
