"""Draw results/claims.csv: one row per claim, interval against criterion, by verdict."""

import json

from dprepro.claims import figure as claims_figure
from dprepro.claims.table import CLAIMS_PRIVACY
from dprepro.figures import style
from dprepro.runtime import step
from dprepro.runtime.io import read_table

log = step.start(snakemake, "claims_figure")
with open(f"{snakemake.input.table}.prov.json", encoding="utf-8") as handle:
    origin = json.load(handle)["data_origin"]
outputs = [snakemake.output.pdf, snakemake.output.png]
style.save_figure(claims_figure.claims_figure(read_table(snakemake.input.table)), outputs,
                  dpi=snakemake.params.dpi)
step.write_sidecars(snakemake, __file__, outputs, config=dict(snakemake.params.items()),
                    privacy=CLAIMS_PRIVACY, data_origin=origin)
log.info("wrote %s", ", ".join(outputs))
