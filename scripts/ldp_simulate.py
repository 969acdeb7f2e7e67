"""Simulate one (mechanism, censoring, n, α) setting of the ldp_indicators study and estimate."""

from dprepro import step
from dprepro.ldp_mechanisms import REFERENCE, get_mechanism
from dprepro.ldp_simulation import censoring_probability, simulate_and_estimate
from dprepro.seeds import seed_record, seed_sequence

log = step.start(snakemake, "ldp_simulate")
p = snakemake.params
w = snakemake.wildcards
n, alpha = int(w.n), float(w.alpha)
mechanism = get_mechanism(w.mechanism)
data_step = f"simulate/cens{w.censoring}/n{n}"
noise_step = mechanism.noise_step(censoring=w.censoring, n=n, alpha=w.alpha)
log.info("setting mechanism=%s censoring=%s%% n=%d alpha=%g replicates=%d "
         "(expected censoring %.3f)", mechanism.name, w.censoring, n, alpha, p.replicates,
         censoring_probability(p.setting["lambda_t"], p.setting["lambda_c"]))
result = simulate_and_estimate(
    data_seed=seed_sequence(p.seed, "ldp_indicators", data_step, 0),
    noise_seed=seed_sequence(p.seed, "ldp_indicators", noise_step, 0),
    replicates=p.replicates, n=n, lambda_t=p.setting["lambda_t"],
    lambda_c=p.setting["lambda_c"], alpha=alpha, x=p.x,
    bandwidth_multiplier=p.bandwidth_multiplier, t=p.t, clip_phat=p.clip_phat,
    mechanism=mechanism,
)
log.info("mean bandwidth h = %.4f, observed censoring %.3f",
         result.bandwidth.mean(), result.censored_fraction.mean())
frame = result.to_frame()
out = snakemake.output.estimates
step.write_parquet(frame, out)
step.write_sidecars(
    snakemake, __file__, [out],
    config=dict(p.items()),
    seeds={"data": seed_record(p.seed, "ldp_indicators", data_step, p.replicates),
           "noise": seed_record(p.seed, "ldp_indicators", noise_step, p.replicates)},
    # private_beran rows are the α-LDP release; the other estimators use the true δ
    privacy=[mechanism.privacy_record(alpha), REFERENCE],
    data_origin="simulation",
)
log.info("wrote %d rows to %s", len(frame), out)
