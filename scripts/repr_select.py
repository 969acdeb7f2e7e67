"""Pick the best trial of each (pipeline, representation) search on the public objective."""

import pandas as pd

from dprepro.runtime import step
from dprepro.runtime.io import write_csv
from dprepro.studies.repr_transfer import fitting as repr_fitting
from dprepro.studies.repr_transfer import privacy as repr_privacy

log = step.start(snakemake, "repr_select")
p = step.job_params(snakemake)
candidates = pd.concat([pd.read_csv(path) for path in snakemake.input.candidates],
                       ignore_index=True)
table = repr_fitting.select_hyperparameters(candidates)
for _, row in table[table["selected"]].iterrows():
    log.info("%s, pipeline %s: selected %s (r = %d, DP accuracy %.4f)", row["representation"],
             row["pipeline"], row["candidate"], row["dim"], row["score"])
write_csv(table, snakemake.output.table)
step.write_sidecars(snakemake, __file__, [snakemake.output.table], config=dict(p.items()),
                    privacy=repr_privacy.INTERMEDIATES["selection"],
                    data_origin=p.data_origin)
