"""Merge the claims tables of the configured studies into results/claims.csv."""

import json

from dprepro.claims.catalogue import declared_claims
from dprepro.claims.table import CLAIMS_PRIVACY, merge_claims
from dprepro.runtime import step
from dprepro.runtime.io import read_table, write_csv

log = step.start(snakemake, "claims_table")
tables = [read_table(path) for path in snakemake.input.tables]
merged = merge_claims(tables)
# every row is a declared claim (docs/claims.md lists the declarations)
declared_claims().check_declared(merged["claim_id"])
for verdict, count in merged["verdict"].value_counts().items():
    log.info("%-12s %d claims", verdict, count)
# the merged table's data origin is that of the study tables, as their sidecars say
origins = set()
for path in snakemake.input.tables:
    with open(f"{path}.prov.json", encoding="utf-8") as handle:
        origins |= set(json.load(handle)["data_origin"].split(","))
write_csv(merged, snakemake.output.table)
step.write_sidecars(snakemake, __file__, [snakemake.output.table],
                    config={"tables": list(snakemake.input.tables)}, privacy=CLAIMS_PRIVACY,
                    data_origin=",".join(sorted(origins)) or "simulation")
log.info("wrote %s (%d claims from %d tables)", snakemake.output.table, len(merged),
         len(tables))
