"""Build one cohort of the rrr_survival study as a tidy id/group/time/event table."""

from dprepro.data.cohort_content import cohort_frame_warnings
from dprepro.data.cohort_spec import CohortSpec, build_cohort
from dprepro.runtime import step
from dprepro.runtime.io import write_parquet
from dprepro.runtime.privacy_record import non_private

log = step.start(snakemake, "rrr_cohort")
p = step.job_params(snakemake)
spec = CohortSpec.from_config(snakemake.wildcards.dataset, p.spec)
built = build_cohort(spec, inputs=dict(snakemake.input.items()), seed=p.seed)
log.info("%s (%s, %s): %s", spec.name, spec.source, built.origin, built.summary)
if built.summary.get("ignored_columns"):
    log.info("%s: columns not used by the study (ignored): %s", spec.name,
             built.summary["ignored_columns"])
if built.summary.get("respelled"):
    # one spelling rule for group labels and status codes: each merge is told, not silent
    log.info("%s: table values read as another spelling of a configured one (rows): %s",
             spec.name, built.summary["respelled"])
for warning in cohort_frame_warnings(built.frame, spec):
    log.warning("%s", warning)
out = snakemake.output.cohort
write_parquet(built.frame.assign(data_origin=built.origin), out)
step.write_sidecars(snakemake, __file__, [out], config={"dataset": spec.name, **p.spec},
                    seeds=built.seeds, privacy=non_private("raw cohort (sensitive)"),
                    data_origin=built.origin, extra={"cohort": built.summary})
