"""The public or the private tables of repr_transfer: synthetic pair, or GDSC + DepMap."""

import numpy as np

from dprepro import repr_study, step
from dprepro.expression_data import read_parquet_matrix
from dprepro.seeds import seed_record, seed_sequence

log = step.start(snakemake, "repr_data")
p = snakemake.params
inp = snakemake.input
seeds = None
if p.origin == "synthetic":
    stream = "data/synthetic"
    data = repr_study.synthetic_data(
        np.random.default_rng(seed_sequence(p.seed, repr_study.STUDY, stream, 0)), p.settings,
        private=p.kind == "private")
    seeds = seed_record(p.seed, repr_study.STUDY, stream, 1)
else:
    private = p.kind == "private"
    data = repr_study.real_data(
        read_parquet_matrix(inp.gdsc_expression), read_parquet_matrix(inp.depmap_expression),
        read_parquet_matrix(inp.depmap_models),
        min_shared_genes=p.settings["min_shared_genes"],
        exclude_private_lines=p.settings["exclude_private_lines"],
        lineage_column=p.settings["lineage_column"],
        gdsc_cell_lines=read_parquet_matrix(inp.gdsc_cell_lines) if private else None,
        gdsc_dose_response=read_parquet_matrix(inp.gdsc_dose_response) if private else None)
names = [n for n in ("expression", "lineage", "response") if n in snakemake.output.keys()]
written = []
for name in names:
    frame = data[f"{p.kind}_{name}"]
    path = snakemake.output[name]
    step.write_parquet(frame, path, index=True)
    written.append(path)
    log.info("%s %s (%s): %d x %d", p.kind, name, p.origin, *frame.shape)
lineage = data[f"{p.kind}_lineage"]["lineage"]
log.info("%s lineages: %s", p.kind, lineage.value_counts(dropna=False).to_dict())
privacy = ({"release": False, "note": "raw private data (sensitive): private expression, "
            "lineages and drug responses"} if p.kind == "private" else
           {"release": False, "note": "public data: no privacy needed"})
step.write_sidecars(snakemake, __file__, written, config=dict(p.items()), seeds=seeds,
                    privacy=privacy, data_origin=p.origin)
