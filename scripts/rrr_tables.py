"""Aggregate the rrr_survival releases into one table (its builder named by the rule)."""

from dprepro.runtime import step
from dprepro.runtime.io import write_csv, write_parquet
from dprepro.studies.rrr_survival import outputs as rrr_outputs

log = step.start(snakemake, "rrr_tables")
p = step.job_params(snakemake)
table, records, *more = rrr_outputs.TABLES[p.table](snakemake.input, **p.options)
write_csv(table, snakemake.output.table)
log.info("wrote %s (%d rows)", snakemake.output.table, len(table))
# what the builder computed for other rules too (the utility table's sup-distances)
extra = more[0] if more else {}
for name, frame in extra.items():
    write_parquet(frame, snakemake.output[name])
step.write_sidecars(snakemake, __file__,
                    [snakemake.output.table, *(snakemake.output[name] for name in extra)],
                    config=dict(p.items()),
                    privacy=rrr_outputs.sidecar_privacy(p.table, records, **p.options),
                    data_origin=",".join(sorted({r["data_origin"] for r in p.options["releases"]})))
