"""The Cox table of rrr_survival (one row per fit and term) and its per-draw rows."""

import pandas as pd

from dprepro.runtime import step
from dprepro.runtime.io import read_table, write_csv, write_parquet
from dprepro.studies.rrr_survival import cox as rrr_cox
from dprepro.studies.rrr_survival import releases as rrr_releases

log = step.start(snakemake, "rrr_cox_table")
p = step.job_params(snakemake)
draws = pd.concat([read_table(path) for path in snakemake.input.fits], ignore_index=True)
table = rrr_cox.cox_table(draws, p.true_log_hr)
write_csv(table, snakemake.output.table)
write_parquet(draws, snakemake.output.draws)
log.info("wrote %s (%d rows) and %s (%d rows)", snakemake.output.table, len(table),
         snakemake.output.draws, len(draws))
records = [rrr_releases.release_record(
    m, epsilon=None if m == "original" else e, labels=p.groups[d],
    calibration="" if m == "original" else c, privacy_unit=p.privacy_unit[d])
    for (d, m, e, c) in table[["dataset", "mechanism", "epsilon", "calibration"]]
    .drop_duplicates().itertuples(index=False)]
step.write_sidecars(snakemake, __file__, [snakemake.output.table, snakemake.output.draws],
                    config=dict(p.items()),
                    data_origin=",".join(sorted(set(p.data_origin.values()))),
                    privacy=rrr_releases.table_privacy(records, compares_with_original=True))
