import os
import sys
from pathlib import Path

# The library lives next to the step scripts; the rules import it for the config
# check, each study's plan (paths, params, job sizes) and the code digests (layers
# point down: Snakefile -> rules -> scripts -> dprepro).
sys.path.insert(0, str(Path(workflow.basedir) / "scripts"))
import yaml
from snakemake.utils import update_config

from dprepro.config.overlays import embedded_default_to_lay_under  # noqa: E402
from dprepro.config.schema import (  # noqa: E402
    check_and_fill,
    check_studies_registered,
    load_schema,
)
from dprepro.runtime.scheduler_timers import cancel_scheduler_timers  # noqa: E402
from dprepro.runtime.run_folder import (  # noqa: E402
    remove_outputs,
    run_directory,
    stale_outputs,
    write_stale_list,
)
from dprepro.runtime.code_version import scripts_library_code  # noqa: E402
from dprepro.runtime.params import canonical  # noqa: E402
from dprepro.runtime.job_plan import plan_digest  # noqa: E402
from dprepro.runtime.provenance import sidecar_path as prov  # noqa: E402
from dprepro.runtime.step import (  # noqa: E402
    compile_library_for_jobs,
    scripts_first_for_jobs,
)
from dprepro.figures.report_layout import INTRODUCTION, report_sections  # noqa: E402
from dprepro.runtime.study_registry import registered_studies  # noqa: E402

scripts_first_for_jobs(Path(workflow.basedir) / "scripts")
compile_library_for_jobs(Path(workflow.basedir) / "scripts")

SCHEMA = Path(workflow.basedir) / "workflow" / "schemas" / "config.schema.yaml"


# A shipped overlay (full, paper) always lies over the embedded default, also with
# --directory elsewhere (dprepro.config.overlays says why).
EMBEDDED_DEFAULT = embedded_default_to_lay_under(
    workflow.configfiles, Path(workflow.basedir) / "config"
)
if EMBEDDED_DEFAULT is not None:
    _loaded = dict(config)
    config.clear()
    config.update(yaml.safe_load(EMBEDDED_DEFAULT.read_text()))
    update_config(config, _loaded)

# Our check first: one line per problem naming the key; then the schema's
# defaults are filled in, as snakemake.utils.validate would (same result, tested)
# but from the schema parsed once by libyaml: validate re-reads the file with a
# pure-Python YAML loader, ~0.4 s of every start, dry runs included. The cross-key
# rules come last, on the filled configuration (config.yaml sets only what differs).
SCHEMA_SPEC = load_schema(SCHEMA)
# every study with a manifest (scripts/dprepro/studies/<name>/) is a choice of `studies`
check_studies_registered(SCHEMA_SPEC)
check_and_fill(config, SCHEMA_SPEC)

# A named run lives in runs/<run_name>/ (results, logs, Snakemake's records), apart from
# every other configuration's; relative cohort paths still mean the launch directory. The
# Snakefile moves there after every check (a refused run leaves no folder).
LAUNCH_DIR = os.getcwd()
RUN_DIRECTORY = run_directory(config)
if RUN_DIRECTORY and workflow.overwrite_workdir is not None:
    print(
        f"dprepro: warning: run_name {config['run_name']!r} ignored: --directory chose "
        "the run's folder",
        file=sys.stderr,
    )


onsuccess:
    cancel_scheduler_timers()
    # after a complete run, what an earlier configuration left in results/ is listed
    # (and removed with remove_stale_outputs); a run of chosen targets lists nothing
    if any(rule.name == "all" for rule in workflow.dag.targetrules):
        stale = stale_outputs(f for job in workflow.dag.jobs for f in job.output)
        if stale and config["remove_stale_outputs"]:
            print(
                f"dprepro: removed {remove_outputs(stale)} files of earlier configurations"
            )
            stale = []
        listed = write_stale_list(stale)
        if listed:
            print(
                f"dprepro: {len(stale)} files under results/ come from an earlier "
                f"configuration and are not part of this one: listed in {listed}; remove "
                "them with --config remove_stale_outputs=True (or give each configuration "
                "its own run_name)"
            )
    where = os.path.relpath(os.getcwd(), LAUNCH_DIR)
    folder = "results/" if where == "." else f"{where}/results/"
    print(
        f"dprepro: outputs are under {folder} (tables, figures, claims.csv); "
        "`snakemake --report results/report.html` builds the report there and "
        "`snakemake verify --cores 1` checks every file against its sidecar (both with this "
        "run's --configfile and --config options)."
    )


onerror:
    cancel_scheduler_timers()


# Every rule with a script carries params.library_code = library_code("<script>.py"): the
# digest of the library modules the script reaches, so an edit to them reruns the job.
library_code = scripts_library_code(Path(workflow.basedir) / "scripts")


STUDY_TARGETS = {}
# The report's numbered sections (dprepro.figures.report_layout), by study: a section per
# configured study, then the privacy audit and the claims (after the introduction).
# (a study not configured keeps its name: its rules run in no report)
REPORT_SECTIONS = {
    **{spec.name: spec.name for spec in registered_studies()},
    **report_sections(config["studies"]),
}
# Each study's .smk adds its claims table(s) here; workflow/rules/claims.smk
# merges those of the configured studies into results/claims.csv.
STUDY_CLAIMS = {}


# Scheduling order on a few cores. The repr_transfer chain (data -> searches -> fits
# -> experiments -> claims) is the run's critical path: started after the other
# studies' jobs it ends the run alone on one core, so it goes before them (the rrr
# jobs' own priorities, 40-60, order that study's critical path). The merged claims
# table and figure come last in the DAG: once ready they go before the figures left.
# The other tables and their simulations go before the figures (priority 0, but
# rrr_figure2 and rrr_km_bands, the rrr study's longest jobs, at 50 and 40): the
# figures have no dependants, so they fill the cores at the end.
REPR_CHAIN_PRIORITY = 70
CLAIMS_PRIORITY = 80
TABLE_PRIORITY = 20
