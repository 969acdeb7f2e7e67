"""Aggregate the repr_transfer experiments: contract table and mean ± SE summary."""

import pandas as pd

from dprepro.runtime import step
from dprepro.runtime.io import write_csv
from dprepro.studies.repr_transfer import privacy as repr_privacy
from dprepro.studies.repr_transfer import tables as repr_tables

log = step.start(snakemake, "repr_tables")
p = step.job_params(snakemake)
frames = [pd.read_parquet(path) for path in snakemake.input.rows]
table, summary = repr_tables.TABLES[p.kind](frames, data_origin=p.data_origin)
out = snakemake.output
write_csv(table, out.table)
write_csv(summary, out.summary)
log.info("wrote %s (%d rows) and %s (%d rows)", out.table, len(table), out.summary,
         len(summary))
records = repr_privacy.table_records(table, kind=p.kind, settings=p.settings)
step.write_sidecars(snakemake, __file__, [out.table, out.summary], config=dict(p.items()),
                    privacy=repr_privacy.distinct(records), data_origin=p.data_origin)
