"""Aggregate the rrr_survival releases into one table (its builder named by the rule)."""

from dprepro import rrr_outputs, rrr_study, step

log = step.start(snakemake, "rrr_tables")
p = snakemake.params
table, records = rrr_outputs.TABLES[p.table](snakemake.input, **p.options)
step.write_csv(table, snakemake.output.table)
log.info("wrote %s (%d rows)", snakemake.output.table, len(table))
step.write_sidecars(snakemake, __file__, [snakemake.output.table], config=dict(p.items()),
                    privacy=rrr_study.table_privacy(records),
                    data_origin=",".join(sorted({r["data_origin"] for r in p.options["releases"]})))
