"""SSP clipping weights (w_x, w_y) for every drug-task method and stated ε of each pipeline.

Chosen on synthetic data only (the authors' ``diffpri.omega``), so no privacy
is spent; what they need from the private side is the training-set size and
the feature dimension of each method. One job for every pipeline; within a
pipeline a (d, ε_learner) shared by two methods or two stated ε is computed once.
"""

from pathlib import Path

import pandas as pd

from dprepro.runtime import step
from dprepro.runtime.io import write_csv
from dprepro.studies.repr_transfer import drug as repr_drug
from dprepro.studies.repr_transfer import privacy as repr_privacy

log = step.start(snakemake, "repr_clipping")
p = step.job_params(snakemake)
hyper = pd.read_csv(snakemake.input.hyperparameters)
response = pd.read_parquet(snakemake.input.private_response)
n = int(response.notna().any(axis=1).sum()) - int(p.test_size)
config = {key: value for key, value in p.items() if key != "pipelines"}
for pipeline in p.pipelines:
    spec = repr_privacy.pipeline(pipeline)
    settings = [s for eps in p.epsilons
                for s in repr_drug.clipping_settings(p.methods, epsilon=float(eps),
                                                      hyperparameters=hyper,
                                                      baselines=p.baselines,
                                                      extra_dim=spec.extra_dim,
                                                      pipeline=spec.name)]
    table = repr_drug.clipping_weight_table(n, settings, base_seed=p.seed,
                                             xx_noise=spec.xx_noise,
                                             n_datasets=int(p.clipping_datasets),
                                             n_noise=int(p.clipping_noise_draws))
    for row in table.itertuples(index=False):
        log.info("%s n=%d d=%d epsilon=%g: w_x=%g w_y=%g", spec.name, row.n, row.d,
                 row.epsilon, row.w_x, row.w_y)
    path = snakemake.output[pipeline]
    write_csv(table, path)
    step.write_sidecars(snakemake, __file__, [path], config=config,
                        seeds={"stream": "drug/clipping/n<n>/d<d>/eps<epsilon>[/laplace]",
                               "base_seed": p.seed},
                        privacy=repr_privacy.INTERMEDIATES["clipping"],
                        data_origin=p.data_origin, extra={"wildcards": {"pipeline": pipeline}})
    log.info("wrote %s (%d settings)", Path(path).name, len(table))
