"""The papers' privacy statements as claims rows, from the privacy audit's table."""

from dprepro.audit.claims import privacy_claims
from dprepro.claims.table import CLAIMS_PRIVACY
from dprepro.runtime import step
from dprepro.runtime.io import read_table, write_csv

log = step.start(snakemake, "audit_claims_table")
table = privacy_claims(read_table(snakemake.input.audit))
for row in table.itertuples(index=False):
    log.info("%s: [%.3g, %.3g] %s -> %s", row.claim_id, row.ci_lower, row.ci_upper,
             row.criterion, row.verdict)
write_csv(table, snakemake.output.table)
step.write_sidecars(snakemake, __file__, [snakemake.output.table],
                    config={"audit_table": snakemake.input.audit},
                    privacy=CLAIMS_PRIVACY, data_origin="simulation")
