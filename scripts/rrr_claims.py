"""The rrr_survival claims table: the paper's statements tested over draws."""

import numpy as np

from dprepro.runtime import step
from dprepro.runtime.io import write_csv
from dprepro.runtime.seeds import seed_record, seed_sequence
from dprepro.studies.rrr_survival import outputs as rrr_outputs
from dprepro.studies.rrr_survival import releases as rrr_releases
from dprepro.studies.rrr_survival.claims import rrr_claims

log = step.start(snakemake, "rrr_claims")
p = step.job_params(snakemake)
stream = "claims/bootstrap"
rng = np.random.default_rng(seed_sequence(p.seed, "rrr_survival", stream, 0))
table = rrr_claims(snakemake.input, releases=p.releases, logrank_releases=p.logrank_releases,
                   significance=p.significance, rng=rng, clustered=p.clustered,
                   curve_releases=p.curve_releases)
write_csv(table, snakemake.output.table)
log.info("wrote %s: %s", snakemake.output.table, table["verdict"].value_counts().to_dict())
records = rrr_outputs.records_of_releases(p.releases, snakemake.input.medians)
step.write_sidecars(snakemake, __file__, [snakemake.output.table], config=dict(p.items()),
                    seeds=seed_record(p.seed, "rrr_survival", stream, 1),
                    privacy=rrr_releases.table_privacy(records),
                    data_origin=",".join(sorted({r["data_origin"] for r in p.releases})))
