"""ldp_indicators mse_<variant>.csv: integrated MSE for every value of one variant."""

from dprepro.runtime import step
from dprepro.runtime.io import write_csv
from dprepro.studies.ldp_indicators.tables import privacy_records, variant_release

log = step.start(snakemake, "ldp_variant_table")
p = step.job_params(snakemake)
tables = variant_release(p.settings, snakemake.input.estimates, x=p.x, column=p.column)
for key, frame in tables.items():
    write_csv(frame, snakemake.output[key])
    log.info("wrote %s (%d rows)", snakemake.output[key], len(frame))
step.write_sidecars(snakemake, __file__, [snakemake.output[k] for k in tables],
                    config={"x": p.x, "column": p.column, "settings": p.settings},
                    privacy=privacy_records(p.settings), data_origin="simulation")
