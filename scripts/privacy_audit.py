"""Empirical privacy audit of every mechanism: lower confidence bounds on ε beside the claims."""

from dprepro.audit.suite import run_all_audits
from dprepro.runtime import step
from dprepro.runtime.io import write_csv
from dprepro.runtime.privacy_record import AUDIT_PRIVACY
from dprepro.runtime.seeds import seed_record, seed_sequence

log = step.start(snakemake, "privacy_audit")
p = step.job_params(snakemake)
# run_all_audits spawns one stream per audit from a single integer seed
rng_seed = int(seed_sequence(p.seed, "audit", "privacy_audit", 0).generate_state(1)[0])
table = run_all_audits(rng_seed=rng_seed, draws_scale=p.draws_scale, level=p.level,
                       learner_draws_scale=p.learner_draws_scale,
                       rrr_settings=p.rrr_settings)
for row in table.itertuples():
    log.info("%-28s %-34s %-10s claimed %-6.3g lower bound %-7.3g %s", row.mechanism,
             row.variant, row.role, row.claimed_epsilon, row.empirical_epsilon_lower_bound,
             row.verdict)
write_csv(table, snakemake.output.table)
step.write_sidecars(
    snakemake, __file__, [snakemake.output.table], config=dict(p.items()),
    seeds={**seed_record(p.seed, "audit", "privacy_audit", 1), "audit_seed": rng_seed},
    privacy=AUDIT_PRIVACY, data_origin="simulation",
)
