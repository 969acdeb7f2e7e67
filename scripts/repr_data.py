"""The public or the private tables of repr_transfer: synthetic pair, or GDSC + DepMap."""

from dprepro.runtime import step
from dprepro.runtime.io import write_csv, write_parquet
from dprepro.studies.repr_transfer import privacy as repr_privacy
from dprepro.studies.repr_transfer import study_data as repr_study_data

log = step.start(snakemake, "repr_data")
p = step.job_params(snakemake)
data, seeds = repr_study_data.study_data(p.origin, p.kind, snakemake.input, settings=p.settings,
                                    seed=p.seed)
names = [n for n in ("expression", "expression_line_local", "lineage", "response")
         if n in snakemake.output.keys()]
written = []
for name in names:
    frame = data[f"{p.kind}_{name}"]
    path = snakemake.output[name]
    write_parquet(frame, path, index=True)
    written.append(path)
    log.info("%s %s (%s): %d x %d", p.kind, name, p.origin, *frame.shape)
privacy = repr_privacy.INTERMEDIATES[f"{p.kind}_data"]
if "public_set" in snakemake.output.keys():
    table = data["public_set"]
    write_csv(table, snakemake.output.public_set)
    row = table.iloc[0]
    log.info("public set (%s): %d of %d source lines (excluded by COSMIC id %d, by Sanger model "
             "id %d, held-out cancer types %d), %d private lines", row["source"],
             row["public_lines"], row["source_lines"], row["excluded_by_cosmic_id"],
             row["excluded_by_sanger_model_id"], row["held_out_cancer_types"],
             row["private_lines"])
    if row["smaller_than_private"]:
        log.warning("the public set (%d lines) is smaller than the private set (%d lines)",
                    row["public_lines"], row["private_lines"])
    step.write_sidecars(snakemake, __file__, [snakemake.output.public_set],
                        config=dict(p.items()), seeds=seeds,
                        privacy=repr_privacy.INTERMEDIATES["public_set"], data_origin=p.origin)
lineage = data[f"{p.kind}_lineage"]["lineage"]
log.info("%s lineages: %s", p.kind, lineage.value_counts(dropna=False).to_dict())
step.write_sidecars(snakemake, __file__, written, config=dict(p.items()), seeds=seeds,
                    privacy=privacy, data_origin=p.origin)
