"""ldp_indicators variance_floor.csv: the noise-variance floor beside the measured variance."""

from dprepro.runtime import step
from dprepro.runtime.io import read_table, write_csv
from dprepro.studies.ldp_indicators.tables import floor_release, table_privacy_records

log = step.start(snakemake, "ldp_floor_table")
p = step.job_params(snakemake)
mse = read_table(snakemake.input.mse)
tables = floor_release(mse, read_table(snakemake.input.hazard),
                       censoring=p.censoring)
for row in tables["table"].itertuples():
    log.info("censoring %s %s alpha=%g: variance of F̂ %.3g x the floor", row.censoring,
             row.mechanism, row.alpha, row.ratio_cdf)
write_csv(tables["table"], snakemake.output.table)
step.write_sidecars(snakemake, __file__, [snakemake.output.table],
                    config=dict(p.items()),
                    privacy=table_privacy_records(mse), data_origin="simulation")
