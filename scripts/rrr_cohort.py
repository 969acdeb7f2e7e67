"""Build one cohort of the rrr_survival study as a tidy group/time/event table."""

import json

import numpy as np

from dprepro import step
from dprepro.cbioportal import clinical_long_to_wide, ipssr_survival_table
from dprepro.cohorts import (
    canonical_ipssr_groups,
    check_survival_frame,
    load_kidney,
    read_csv_checked,
    synthetic_ipssr_cohort,
)
from dprepro.io import sha256_of
from dprepro.seeds import seed_record, seed_sequence

log = step.start(snakemake, "rrr_cohort")
p = snakemake.params
dataset, source = snakemake.wildcards.dataset, p.spec["source"]
seeds = None
if dataset == "kidney":
    path = snakemake.input.table
    if source == "bundled":
        expected = open(snakemake.input.checksum).read().split()[0]
        got = sha256_of(path)
        if got != expected:
            raise ValueError(f"{path}: sha256 {got} does not match {snakemake.input.checksum} "
                             f"({expected}); the bundled file was changed")
    cohort = load_kidney(path, time_divisor=float(p.spec["time_divisor"]))
    origin = "real"
elif source == "synthetic":
    rng = np.random.default_rng(seed_sequence(p.seed, "rrr_survival", "cohort/ipssr", 0))
    cohort = synthetic_ipssr_cohort(rng)
    seeds = seed_record(p.seed, "rrr_survival", "cohort/ipssr", 1)
    origin = "synthetic"
elif source == "cbioportal":
    patients = json.loads(open(snakemake.input.patient, encoding="utf-8").read())
    samples = json.loads(open(snakemake.input.sample, encoding="utf-8").read())
    table, summary = ipssr_survival_table(clinical_long_to_wide(patients, "patientId"),
                                          clinical_long_to_wide(samples, "sampleId"))
    log.info("cBioPortal cohort summary: %s", summary)
    table["group"] = canonical_ipssr_groups(table["group"], source=snakemake.input.sample)
    cohort = check_survival_frame(table, source=snakemake.input.sample)
    origin = "real"
else:  # file
    cohort = check_survival_frame(read_csv_checked(snakemake.input.table),
                                  source=snakemake.input.table)
    if dataset == "ipssr":
        cohort["group"] = canonical_ipssr_groups(cohort["group"], source=snakemake.input.table)
    origin = "real"
counts = cohort.groupby("group").size().to_dict()
log.info("%s (%s, %s): %d rows, groups %s, %.1f%% censored", dataset, source, origin,
         len(cohort), counts, 100 * (1 - cohort["event"].mean()))
out = snakemake.output.cohort
step.write_parquet(cohort.assign(data_origin=origin), out)
step.write_sidecars(snakemake, __file__, [out], config={"dataset": dataset, **p.spec},
                    seeds=seeds, privacy={"release": False, "note": "raw cohort (sensitive)"},
                    data_origin=origin)
