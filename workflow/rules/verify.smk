# ---- verify: check results/ against every sidecar (output, inputs, script, library, config) ----


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
        + CLAIMS_TARGETS,
    script:
        "../../scripts/verify_results.py"
