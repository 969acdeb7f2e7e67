"""Simulate the (censoring, n) settings of one ldp_indicators design and mechanism, and
estimate at every α of the design; one replicate file per setting."""

from dprepro.mechanisms.registry import get_mechanism, records_of
from dprepro.runtime import step
from dprepro.runtime.io import write_parquet
from dprepro.runtime.seeds import seed_record, seed_sequence
from dprepro.studies.ldp_indicators.simulation import censoring_probability, simulate_alphas

log = step.start(snakemake, "ldp_simulate")
p = step.job_params(snakemake)
mechanism = get_mechanism(snakemake.wildcards.mechanism)
common = {key: value for key, value in p.items() if key not in ("settings", "design")}
# private rows are the α-LDP releases (jointly not private when the α share a noise
# stream: records_of adds that record); the other estimators use the true δ
privacy = records_of([(mechanism.name, a) for a in p.alphas], noise_draws=p.noise_draws)
for spec in p.settings:
    censoring, n, setting = spec["censoring"], int(spec["n"]), spec["setting"]
    data_step = f"simulate/cens{censoring}/n{n}"
    # the noise stream of each α, named as the α appears in file names ("0.2", "2"); a
    # mechanism with common random numbers gives every α the same stream
    noise_steps = {a: mechanism.noise_step(censoring=censoring, n=n, alpha=a)
                   for a in p.alphas}
    # draw m > 0 of a stream is its own stream: draw 0 is the one-draw run's
    draw_steps = {a: [s if m == 0 else f"{s}/draw{m}" for m in range(p.noise_draws)]
                  for a, s in noise_steps.items()}
    log.info("setting mechanism=%s censoring=%s%% n=%d alphas=%s replicates=%d noise "
             "draws=%d (expected censoring %.3f)", mechanism.name, censoring, n, p.alphas,
             p.replicates, p.noise_draws,
             censoring_probability(setting["lambda_t"], setting["lambda_c"]))
    result = simulate_alphas(
        data_seed=seed_sequence(p.seed, "ldp_indicators", data_step, 0),
        noise_seeds={a: [seed_sequence(p.seed, "ldp_indicators", s, 0) for s in steps]
                     for a, steps in draw_steps.items()},
        replicates=p.replicates, n=n, lambda_t=setting["lambda_t"],
        lambda_c=setting["lambda_c"], x=p.x, bandwidth_multiplier=p.bandwidth_multiplier,
        t=p.t, clip_phat=p.clip_phat, mechanism=mechanism, hazard=True,
        phat_at_x=p.phat_at_x, extra_alphas=p.extra_alphas,
    )
    log.info("mean bandwidth h = %.4f, observed censoring %.3f",
             result.bandwidth.mean(), result.censored_fraction.mean())
    frame = result.to_frame()
    out = snakemake.output[spec["output"]]
    write_parquet(frame, out)
    step.write_sidecars(
        snakemake, __file__, [out],
        config={**common, "censoring": censoring, "n": n, "setting": setting},
        seeds={"data": seed_record(p.seed, "ldp_indicators", data_step, p.replicates),
               "noise": {f"{a:g}" + ("" if m == 0 else f"/draw{m}"):
                         seed_record(p.seed, "ldp_indicators", s, p.replicates)
                         for a, steps in draw_steps.items() for m, s in enumerate(steps)}},
        privacy=privacy, data_origin="simulation",
        # the setting's file as one job per setting would have named it
        extra={"wildcards": {"design": p.design, "mechanism": snakemake.wildcards.mechanism,
                             "censoring": str(censoring), "n": str(n)}},
    )
    log.info("wrote %d rows to %s", len(frame), out)
