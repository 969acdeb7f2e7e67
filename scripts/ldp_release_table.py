"""An ldp_indicators table aggregated from replicate files; the rule names its builder."""

from dprepro.runtime import step
from dprepro.runtime.io import write_csv
from dprepro.studies.ldp_indicators.tables import RELEASES, privacy_records

log = step.start(snakemake, f"ldp_{snakemake.params.table}_table")
p = step.job_params(snakemake)
tables = RELEASES[p.table](p.settings, snakemake.input.estimates, x=p.x)
for key, frame in tables.items():
    write_csv(frame, snakemake.output[key])
    log.info("wrote %s (%d rows)", snakemake.output[key], len(frame))
step.write_sidecars(snakemake, __file__, [snakemake.output[k] for k in tables],
                    config={"x": p.x, "settings": p.settings},
                    privacy=privacy_records(p.settings), data_origin="simulation")
