"""Check the ldp_indicators paper's claims on the produced MSE table."""

from dprepro import step
from dprepro.io import read_table
from dprepro.ldp_tables import paper_findings, table_privacy_records

log = step.start(snakemake, "ldp_findings")
mse = read_table(snakemake.input.mse)
findings = paper_findings(mse, near_ratio=snakemake.params.near_ratio)
for row in findings.itertuples():
    log.info("%-60s %-6s %s = %.4g (%s)", row.claim, "holds" if row.holds else "FAILS",
             row.statistic, row.value, row.criterion)
step.write_csv(findings, snakemake.output.table)
step.write_sidecars(snakemake, __file__, [snakemake.output.table],
                    config={"near_ratio": snakemake.params.near_ratio},
                    privacy=table_privacy_records(mse), data_origin="simulation")
