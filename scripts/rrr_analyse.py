"""Analyse releases of an rrr_survival cohort: its non-private references, or its private
releases.

Each release (mechanism × ε) has its own noise stream, so running them in one
job gives the same files as one job per release, with one start-up instead of many.
"""

import pandas as pd

from dprepro.data.cohort_content import require_analysable
from dprepro.data.cohort_spec import group_order
from dprepro.runtime import step
from dprepro.runtime.io import write_csv, write_parquet
from dprepro.studies.rrr_survival.analysis import run_release
from dprepro.studies.rrr_survival.plan import release_files

log = step.start(snakemake, "rrr_analyse")
p = step.job_params(snakemake)
paths = dict(zip(p.datasets, snakemake.input.cohorts, strict=True))
declared = {str(path) for path in snakemake.output}
cohorts = {}
for release in p.releases:
    dataset = release["dataset"]
    if dataset not in cohorts:
        cohort = pd.read_parquet(paths[dataset])
        require_analysable(cohort, name=dataset, groups=p.groups[dataset],
                           source=paths[dataset])
        cohorts[dataset] = cohort, group_order(cohort["group"], p.groups[dataset])
    cohort, labels = cohorts[dataset]
    results, record, seeds = run_release(
        cohort, dataset=dataset, mechanism=release["mechanism"],
        epsilon=release["epsilon"], calibration=release["calibration"], labels=labels,
        draws=p.draws, seed=p.seed,
        privacy_unit=p.privacy_unit[dataset])
    outputs = []
    for key, frame in results.items():
        suffix = "parquet" if key == "curves" else "csv"
        path = release_files([release], f"{key}.{suffix}")[0]
        if path not in declared:
            raise RuntimeError(f"{path} is not a declared output of this rule")
        (write_parquet if suffix == "parquet" else write_csv)(frame, path)
        outputs.append(path)
    log.info("%s %s ε=%s: %d groups %s, %d draws", dataset, release["mechanism"],
             release["epsilon"], len(labels), labels, results["medians"]["draw"].nunique())
    config = {**{k: v for k, v in p.items() if k not in ("groups", "privacy_unit")},
              "groups": p.groups[dataset], "privacy_unit": p.privacy_unit[dataset], **release}
    step.write_sidecars(snakemake, __file__, outputs, config=config, seeds=seeds,
                        privacy=record, data_origin=cohort["data_origin"].iloc[0])
