"""The public or the private tables of repr_transfer: synthetic pair, or GDSC + DepMap."""

from dprepro import repr_privacy, repr_study, step

log = step.start(snakemake, "repr_data")
p = snakemake.params
data, seeds = repr_study.study_data(p.origin, p.kind, snakemake.input, settings=p.settings,
                                    seed=p.seed)
names = [n for n in ("expression", "expression_line_local", "lineage", "response")
         if n in snakemake.output.keys()]
written = []
for name in names:
    frame = data[f"{p.kind}_{name}"]
    path = snakemake.output[name]
    step.write_parquet(frame, path, index=True)
    written.append(path)
    log.info("%s %s (%s): %d x %d", p.kind, name, p.origin, *frame.shape)
lineage = data[f"{p.kind}_lineage"]["lineage"]
log.info("%s lineages: %s", p.kind, lineage.value_counts(dropna=False).to_dict())
step.write_sidecars(snakemake, __file__, written, config=dict(p.items()), seeds=seeds,
                    privacy=repr_privacy.INTERMEDIATES[f"{p.kind}_data"], data_origin=p.origin)
