# ---- the run's configuration, and verify: check results/ against every sidecar ----

from dprepro.runtime.verify import current_params  # noqa: E402

RUN_MANIFEST = "results/run_manifest.json"


# Every configuration value is a parameter, so any change of the configuration reruns
# this job: a run after a change always ends in the onsuccess hook, which lists (or, with
# remove_stale_outputs, removes) what earlier configurations left in results/. It waits on
# every other target, so a run that fails leaves the manifest of the last complete run.
rule run_manifest:
    input:
        done=[p for s in config["studies"] for p in STUDY_TARGETS[s]]
        + CLAIMS_TARGETS
        + REPORT_TABLE_TARGETS,
    output:
        manifest=RUN_MANIFEST,
        prov=prov(RUN_MANIFEST),
    log:
        "results/logs/run_manifest/run_manifest.log",
    localrule: True
    conda:
        "../../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        library_code=library_code("run_manifest.py"),
        run_name=config["run_name"],
        # a digest, not the configuration itself: Snakemake prints a changed param's old and
        # new values in the job's reason (the whole configuration twice)
        configuration_sha256=plan_digest(config),
    script:
        "../../scripts/run_manifest.py"


rule verify:
    log:
        "results/logs/verify/verify.log",
    localrule: True
    conda:
        "../../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        library_code=library_code("verify_results.py"),
        # every output the `all` target names: each must be there with its sidecar
        expected=[p for s in config["studies"] for p in STUDY_TARGETS[s]]
        + CLAIMS_TARGETS
        + REPORT_TABLE_TARGETS
        + [RUN_MANIFEST],
        # the params each job recorded under results/ gets from its rule now (verify
        # compares them with those it was made with, as Snakemake does to decide a rerun)
        params_now=lambda wildcards: current_params(
            ".",
            lambda rule: (
                workflow.get_rule(rule).params.items()
                if workflow.is_rule(rule)
                else None
            ),
        ),
    script:
        "../../scripts/verify_results.py"
