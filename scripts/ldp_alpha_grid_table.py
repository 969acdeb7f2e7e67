"""ldp_indicators mse_alpha_grid.csv: integrated MSE of every estimator on the fine α grid."""

from dprepro import step
from dprepro.ldp_tables import alpha_grid_release, privacy_records

log = step.start(snakemake, "ldp_alpha_grid_table")
p = snakemake.params
tables = alpha_grid_release(p.settings, snakemake.input.estimates, x=p.x)
for key, frame in tables.items():
    step.write_csv(frame, snakemake.output[key])
    log.info("wrote %s (%d rows)", snakemake.output[key], len(frame))
step.write_sidecars(snakemake, __file__, [snakemake.output[k] for k in tables],
                    config={"x": p.x, "settings": p.settings},
                    privacy=privacy_records(p.settings), data_origin="simulation")
