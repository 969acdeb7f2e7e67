"""The repr_transfer claims table (both pipelines), intervals over representation seeds."""

import pandas as pd

from dprepro.runtime import step
from dprepro.runtime.io import read_table, write_csv
from dprepro.studies.repr_transfer import claims as repr_claims
from dprepro.studies.repr_transfer import privacy as repr_privacy

log = step.start(snakemake, "repr_claims")
p = step.job_params(snakemake)
cancer = read_table(snakemake.input.cancer_type)
drug = read_table(snakemake.input.drug)
# the per-split rows: the drug claims resample splits shared by all drugs
columns = ["drug", "split", "seed", "epsilon", "representation", "pipeline", "spearman"]
frames = [pd.read_parquet(path) for path in snakemake.input.drug_rows]
frames = [f.loc[:, columns] for f in frames if len(f)]  # a chunk may hold no drug
splits = pd.concat(frames, ignore_index=True) if frames else None
# the learned representations: the rows of the paper's public/private assumption
representations = {tuple(key): read_table(path) for key, path in
                   zip(p.representation_keys, snakemake.input.representations, strict=True)}
table = repr_claims.repr_claims(cancer, drug, cancer_epsilon=p.epsilons["cancer_type"],
                                drug_epsilon=p.epsilons["drug"], pipelines=p.pipelines,
                                base_seed=p.seed,
                                vae_learning_rates=p.vae_learning_rates,
                                drug_splits=splits, data_origin=p.data_origin,
                                representations=representations)
for row in table.itertuples(index=False):
    log.info("%s: %s [%.3g, %.3g] %s -> %s", row.claim_id, row.statistic, row.ci_lower,
             row.ci_upper, row.criterion, row.verdict)
write_csv(table, snakemake.output.table)
records = (repr_privacy.table_records(cancer, kind="cancer_type", settings=p.cancer_settings)
           + repr_privacy.table_records(drug, kind="drug", settings=p.drug_settings))
step.write_sidecars(snakemake, __file__, [snakemake.output.table], config=dict(p.items()),
                    seeds={"stream": "claims/<pipeline>/<task>[/equal_dim|/r_effect]",
                           "base_seed": p.seed},
                    privacy=repr_privacy.distinct(records), data_origin=p.data_origin)
