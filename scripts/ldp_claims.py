"""ldp_indicators tables/claims.csv: every claim of the paper's results section, with its CI."""

from dprepro.runtime import step
from dprepro.runtime.io import write_csv
from dprepro.studies.ldp_indicators.claims import error_set, ldp_claims
from dprepro.studies.ldp_indicators.tables import privacy_records, read_results

log = step.start(snakemake, "ldp_claims")
p = step.job_params(snakemake)
errors = error_set(read_results(p.settings, snakemake.input.estimates), x=p.x)
claims = ldp_claims(errors, censorings=p.censorings, alphas=p.alphas, mechanisms=p.mechanisms,
                    seed=p.seed, near_ratio=p.claims["near_ratio"],
                    bias_tolerance=p.claims["bias_tolerance"],
                    hazard_bias_tolerance=p.claims["hazard_bias_tolerance"],
                    phat_tolerance=p.claims["phat_tolerance"], grid_alphas=p.grid_alphas,
                    resamples=p.claims["resamples"], level=p.claims["level"],
                    variants=p.variants, x=p.x, noise_draws=p.noise_draws, n=p.n)
for row in claims.itertuples():
    log.info("%-50s %-12s %.4g [%.4g, %.4g] (%s)", row.claim_id, row.verdict,
             row.reproduced_value, row.ci_lower, row.ci_upper, row.criterion)
write_csv(claims, snakemake.output.table)
step.write_sidecars(snakemake, __file__, [snakemake.output.table],
                    config={k: v for k, v in p.items() if k != "settings"},
                    privacy=privacy_records(p.settings), data_origin="simulation")
