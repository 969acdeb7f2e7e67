"""Build one cohort of the rrr_survival study as a tidy id/group/time/event table."""

from dprepro.data.cohort_spec import CohortSpec, absent_groups, build_cohort
from dprepro.runtime import step
from dprepro.runtime.io import write_parquet
from dprepro.runtime.privacy_record import non_private

log = step.start(snakemake, "rrr_cohort")
p = snakemake.params
spec = CohortSpec.from_config(snakemake.wildcards.dataset, p.spec)
built = build_cohort(spec, inputs=dict(snakemake.input.items()), seed=p.seed)
log.info("%s (%s, %s): %s", spec.name, spec.source, built.origin, built.summary)
if built.summary.get("ignored_columns"):
    log.info("%s: columns not used by the study (ignored): %s", spec.name,
             built.summary["ignored_columns"])
for group in absent_groups(built.frame["group"], spec.groups):
    log.warning("%s: configured group %r has no patient; its releases hold a zero true "
                "count (the label set is the configured one, k = %d)", spec.name, group,
                len(spec.groups))
out = snakemake.output.cohort
write_parquet(built.frame.assign(data_origin=built.origin), out)
step.write_sidecars(snakemake, __file__, [out], config={"dataset": spec.name, **p.spec},
                    seeds=built.seeds, privacy=non_private("raw cohort (sensitive)"),
                    data_origin=built.origin, extra={"cohort": built.summary})
