"""SSP clipping weights (w_x, w_y) for every drug-task method at one stated ε.

Chosen on synthetic data only (the authors' ``diffpri.omega``), so no privacy
is spent; what they need from the private side is the training-set size and
the feature dimension of each method.
"""

from pathlib import Path

import pandas as pd

from dprepro import repr_study, step

log = step.start(snakemake, "repr_clipping")
p = snakemake.params
epsilon = float(snakemake.wildcards.eps)
hyper = pd.read_csv(snakemake.input.hyperparameters)
response = pd.read_parquet(snakemake.input.private_response)
n = int(response.notna().any(axis=1).sum()) - int(p.test_size)
settings = []
for method in p.methods:
    if method in repr_study.REPRESENTATIONS:
        dim = int(hyper.loc[(hyper["representation"] == method) & hyper["selected"], "dim"].iloc[0])
        settings.append((dim, epsilon))
    elif method == "fixed_genes":
        settings.append((len(p.baselines["fixed_genes"]), epsilon))
    else:  # half of ε for the selection, half for the learner
        settings.append((int(p.baselines["feature_selection"]["n_genes"]), epsilon / 2))
table = repr_study.clipping_weight_table(n, settings, base_seed=p.seed)
for row in table.itertuples(index=False):
    log.info("n=%d d=%d epsilon=%g: w_x=%g w_y=%g", row.n, row.d, row.epsilon, row.w_x, row.w_y)
step.write_csv(table, snakemake.output.table)
step.write_sidecars(snakemake, __file__, [snakemake.output.table], config=dict(p.items()),
                    seeds={"stream": "drug/clipping/n<n>/d<d>/eps<epsilon>", "base_seed": p.seed},
                    privacy={"release": False, "note": "chosen on synthetic data; uses only the "
                             "number of private training lines"},
                    data_origin=p.data_origin)
log.info("wrote %s", Path(snakemake.output.table).name)
