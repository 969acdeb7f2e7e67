"""ldp_indicators hazard_mse.csv: MSE of the conditional Nelson–Aalen estimators of Λ(t | x)."""

from dprepro import step
from dprepro.ldp_tables import hazard_release, privacy_records

log = step.start(snakemake, "ldp_hazard_table")
p = snakemake.params
tables = hazard_release(p.settings, snakemake.input.estimates, x=p.x)
for key, frame in tables.items():
    step.write_csv(frame, snakemake.output[key])
    log.info("wrote %s (%d rows)", snakemake.output[key], len(frame))
step.write_sidecars(snakemake, __file__, [snakemake.output[k] for k in tables],
                    config={"x": p.x, "settings": p.settings},
                    privacy=privacy_records(p.settings), data_origin="simulation")
