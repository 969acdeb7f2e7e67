import os
import sys
from pathlib import Path

# The library lives next to the step scripts; the workflow imports it for
# config checks only (layers point down: Snakefile -> rules -> scripts -> dprepro).
sys.path.insert(0, str(Path(workflow.basedir) / "scripts"))

from dprepro.config.schema import check_config, fill_defaults, load_schema  # noqa: E402
from dprepro.runtime.code_version import script_library_digest  # noqa: E402
from dprepro.runtime.params import canonical  # noqa: E402
from dprepro.runtime.provenance import sidecar_path as prov  # noqa: E402

SCHEMA = Path(workflow.basedir) / "workflow" / "schemas" / "config.schema.yaml"


def lay_shipped_overlays_over_the_embedded_default(config):
    """config/full.yaml and config/paper.yaml are read over config/config.yaml.

    Snakemake reads the Snakefile's ``configfile`` relative to the working directory
    and skips it silently when ``--configfile`` is given, so a run with ``--directory``
    elsewhere would lay a shipped overlay over the schema's defaults alone (the full
    run without its cohorts' definitions). Here the embedded file goes underneath
    whenever a shipped overlay was given without it, as in a run from the checkout.
    """
    from snakemake.utils import update_config
    import yaml

    shipped = Path(workflow.basedir) / "config"
    embedded = (shipped / "config.yaml").resolve()
    loaded = {Path(f).resolve() for f in workflow.configfiles}
    overlays = {(shipped / name).resolve() for name in ("full.yaml", "paper.yaml")}
    if loaded & overlays and embedded not in loaded:
        base = yaml.safe_load(embedded.read_text())
        update_config(base, config)
        config.clear()
        config.update(base)


lay_shipped_overlays_over_the_embedded_default(config)

# Our check first: one line per problem naming the key; then the schema's
# defaults are filled in, as snakemake.utils.validate would (same result, tested)
# but from the schema parsed once by libyaml: validate re-reads the file with a
# pure-Python YAML loader, ~0.4 s of every start, dry runs included.
SCHEMA_SPEC = load_schema(SCHEMA)
check_config(config, SCHEMA_SPEC)
fill_defaults(config, SCHEMA_SPEC)


def cancel_rate_limiter_timers():
    """Stop the job-rate limiter's pending re-scheduling timers once the run is over.

    Snakemake's scheduler starts a timer of one rate-limiter timespan after every
    scheduling pass that leaves jobs waiting, and each timer's pass starts another
    (snakemake/snakemake PR #3744), so passes multiply with finished jobs; each pass
    stats every input of every waiting job (the rrr tables wait on 120-240 files).
    profiles/default therefore sets a long timespan, and its last timers, which are
    not daemon threads, would keep the finished process alive that long: they are
    cancelled here. Only timers started by Snakemake's job scheduler are touched.
    """
    import threading

    for thread in threading.enumerate():
        code = getattr(getattr(thread, "function", None), "__code__", None)
        if isinstance(thread, threading.Timer) and code is not None:
            if Path(code.co_filename).name == "job_scheduler.py":
                thread.cancel()


onsuccess:
    cancel_rate_limiter_timers()


onerror:
    cancel_rate_limiter_timers()


def library_code(script):
    """Digest of the library modules ``scripts/<script>`` imports (directly or not).

    Every rule with a script carries it as ``params.library_code``, so an edit to
    library code the script runs reruns the job (docs/design.md §1).
    """
    scripts = Path(workflow.basedir) / "scripts"
    return script_library_digest(scripts / script, scripts / "dprepro")


STUDY_TARGETS = {}
# Each study's .smk adds its claims table(s) here; workflow/rules/claims.smk
# merges those of the configured studies into results/claims.csv.
STUDY_CLAIMS = {}


def study_targets(studies):
    return [path for study in studies for path in STUDY_TARGETS[study]]


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
