"""Aggregate the repr_transfer experiments: contract table and mean ± SE summary."""

import pandas as pd

from dprepro import repr_study, step

log = step.start(snakemake, "repr_tables")
p = snakemake.params
frames = [pd.read_parquet(path) for path in snakemake.input.rows]
if p.kind == "cancer_type":
    cases = list(dict.fromkeys(c for f in frames for c in f["case"]))
    table = repr_study.cancer_type_table(frames, data_origin=p.data_origin, cases=cases)
    summary = repr_study.cancer_summary(table)
elif p.kind == "drug":
    table = repr_study.drug_table([f for f in frames if len(f)], data_origin=p.data_origin)
    summary = repr_study.drug_summary(table)
else:
    raise ValueError(f"unknown table kind {p.kind!r}")
out = snakemake.output
step.write_csv(table, out.table)
step.write_csv(summary, out.summary)
log.info("wrote %s (%d rows) and %s (%d rows)", out.table, len(table), out.summary,
         len(summary))
step.write_sidecars(
    snakemake, __file__, [out.table, out.summary], config=dict(p.items()),
    privacy={"release": False,
             "note": "DP results (finite epsilon) beside non-private references "
                     "(mechanism non_private, empty epsilon)",
             "mechanisms": sorted(set(table["mechanism"])),
             "epsilons": sorted(set(table["epsilon"].dropna())),
             "true_epsilon": "column true_epsilon: inf where no finite epsilon is proven for "
                             "the computation as run (see privacy_note)"},
    data_origin=p.data_origin)
