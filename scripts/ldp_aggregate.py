"""Aggregate ldp_indicators replicate estimates into MSE tables."""

import pandas as pd

from dprepro import step
from dprepro.ldp_tables import convergence_rates, integrated_mse, mse_table

log = step.start(snakemake, "ldp_aggregate")
p = snakemake.params
paths = list(snakemake.input.estimates)
results = (
    (setting, pd.read_parquet(path))
    for setting, path in zip(p.settings, paths, strict=True)
)
table = mse_table(results, x=p.x)
if p.kind == "mse":
    tables = {"table": table}
elif p.kind == "alpha_grid":
    tables = {"table": integrated_mse(table)}
elif p.kind == "convergence":
    imse = integrated_mse(table)
    tables = {"table": imse, "rates": convergence_rates(imse)}
else:
    raise ValueError(f"unknown aggregation kind {p.kind!r}")
for key, frame in tables.items():
    step.write_csv(frame, snakemake.output[key])
    log.info("wrote %s (%d rows)", snakemake.output[key], len(frame))
step.write_sidecars(
    snakemake, __file__, [snakemake.output[k] for k in tables],
    config={"kind": p.kind, "x": p.x, "settings": p.settings},
    privacy={"release": True, "mechanism": "laplace_indicators (alpha column), none (references)",
             "alphas": sorted({s["alpha"] for s in p.settings})},
    data_origin="simulation",
)
