"""Cox fits of one cohort on every RRR release (per draw), with the original as reference."""

from dprepro.data.cohort_content import require_analysable
from dprepro.runtime import step
from dprepro.runtime.io import read_table, write_parquet
from dprepro.runtime.seeds import seed_record
from dprepro.studies.rrr_survival import cox as rrr_cox
from dprepro.studies.rrr_survival import releases as rrr_releases

log = step.start(snakemake, "rrr_cox")
p = step.job_params(snakemake)
dataset = snakemake.wildcards.dataset
cohort = read_table(snakemake.input.cohort, text_columns=("id", "group"))
require_analysable(cohort, name=dataset, groups=p.groups, source=snakemake.input.cohort)
fits = rrr_cox.cox_fits(cohort, dataset=dataset, labels=p.groups, releases=p.releases,
                        draws=p.draws, seed=p.seed, covariates=p.covariates,
                        estimators=p.estimators, simex_replicates=p.simex_replicates,
                        lambdas=p.lambdas, tau_at_risk=p.tau_at_risk, clustered=p.clustered,
                        privacy_unit=p.privacy_unit, data_origin=p.data_origin)
write_parquet(fits, snakemake.output.fits)
log.info("%s: %d fits, converged share by estimator %s", dataset, len(fits),
         fits.groupby("estimator")["converged"].mean().round(3).to_dict())
# selection effects: draws with an estimate but no positive variance, MC-SIMEX replicates
# left out of the means (bias and coverage are conditional on a fit)
log.info("%s: share of draws with no positive variance %s; MC-SIMEX replicates dropped %s",
         dataset, fits.groupby("estimator")["no_variance"].mean().round(3).to_dict(),
         fits.groupby("estimator")["replicates_dropped"].mean().round(3).to_dict())
records = [rrr_releases.release_record("rrr", epsilon=e, labels=p.groups, calibration=c,
                                       privacy_unit=p.privacy_unit) for e, c in p.releases]
records.append(rrr_releases.release_record("original", epsilon=None, labels=p.groups,
                                           calibration="", privacy_unit=p.privacy_unit))
seeds = {f"{c}/eps{e:g}": seed_record(p.seed, "rrr_survival",
                                      rrr_cox.release_stream(dataset, c, e), p.draws)
         for e, c in p.releases}
step.write_sidecars(snakemake, __file__, [snakemake.output.fits], config=dict(p.items()),
                    seeds=seeds, data_origin=p.data_origin,
                    privacy=rrr_releases.table_privacy(records, compares_with_original=True))
