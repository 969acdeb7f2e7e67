"""Shared start-up for the thin step scripts under ``scripts/``.

Takes the ``snakemake`` object the scripts receive (duck-typed: this module does
not import snakemake) and gives every step the same logging, thread limits and
provenance sidecars.
"""

from __future__ import annotations

import atexit
import functools
import logging
import os
import sys
from pathlib import Path

from threadpoolctl import threadpool_limits

from dprepro.runtime.code_version import PACKAGE, module_checksums
from dprepro.runtime.job_plan import JobParams, merged_params, plan_of_job
from dprepro.runtime.params import as_recorded, compared_text
from dprepro.runtime.privacy_record import provenance_of
from dprepro.runtime.provenance import write_provenance
from dprepro.runtime.run_config import run_config_subset

__all__ = ["THREAD_VARIABLES", "compile_library_for_jobs", "job_params", "pin_threads",
           "scripts_first_for_jobs", "start", "script_path", "write_sidecars"]

#: Read by BLAS and OpenMP libraries when they load: :func:`start` sets them to the rule's
#: threads, so a library loaded after it (scipy's own OpenBLAS, which the step's imports
#: load lazily) starts with that many threads; ``threadpool_limits`` reaches only the
#: libraries already loaded.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
#: The BLAS libraries' own: :data:`THREAD_VARIABLES` less OpenMP's.
_BLAS_VARIABLES = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")

_SCRIPTS_DIR = Path(__file__).resolve().parents[2]


def script_path(file: str) -> Path:
    """The committed step script behind ``__file__``.

    Snakemake runs a copy named ``.snakemake/scripts/tmpXXXX.<name>.py``; the
    provenance must hash the committed ``scripts/<name>.py`` instead.
    """
    name = Path(file).name
    if name.startswith("tmp") and name.count(".") >= 2:
        name = name.split(".", 1)[1]
    return _SCRIPTS_DIR / name


def pin_threads(count: int, *, blas_only: bool = False) -> None:
    """Pin the loaded BLAS and OpenMP thread pools to ``count`` threads, and set
    :data:`THREAD_VARIABLES` for the libraries that load later.

    ``blas_only`` leaves OpenMP alone (a VAE job's torch pool, which
    ``torch.set_num_threads`` sets).
    """
    for variable in _BLAS_VARIABLES if blas_only else THREAD_VARIABLES:
        os.environ[variable] = str(count)
    if blas_only:
        threadpool_limits(count, user_api="blas")
    else:
        threadpool_limits(count)


def start(smk, name: str) -> logging.Logger:
    """Log to the rule's ``log`` file (and stderr) and pin BLAS/OpenMP threads.

    Pinning the thread pools to the rule's ``threads`` keeps floating-point
    reductions in the same order whatever ``--cores`` is, which is part of
    what makes tables byte-identical across runs, and keeps a job on the cores
    it declares: scipy ships its own OpenBLAS, loaded after this call, which
    would otherwise start one thread per core (its idle threads spin: a DP
    logistic-regression fit took 0.15 CPU-s instead of 0.004 on the loaded
    2-core machine, docs/performance.md). Hence both the loaded pools
    (``threadpool_limits``) and :data:`THREAD_VARIABLES` for the later ones.
    """
    _check_library(smk)
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if getattr(smk, "log", None):
        Path(smk.log[0]).parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(smk.log[0], mode="w"))
    logging.basicConfig(level=logging.INFO, handlers=handlers, force=True,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.captureWarnings(True)
    pin_threads(int(getattr(smk, "threads", 1) or 1))
    logger = logging.getLogger(name)

    failed: list = []
    context = _cohort_context(smk)

    def log_uncaught(kind, value, traceback):
        failed.append(kind)
        # the job's log must say why it failed, not only Snakemake's console, and for
        # which cohort: one fault is then found in one cohort's configuration
        logger.error("%s failed%s: %s: %s", name, context, kind.__name__, value,
                     exc_info=(kind, value, traceback))

    sys.excepthook = log_uncaught
    if _is_snakemake_script_job():
        atexit.register(_exit_without_teardown, failed)
    return logger


def job_params(smk) -> JobParams:
    """The job's parameters: the rule's ``params`` and the plan they digest.

    A rule whose ``params`` carry ``plan_sha256`` keeps its long parameters (release
    lists, cohort settings) in its study's plan; they are rebuilt here from the run's
    configuration and the job's wildcards, and checked against the digest
    (:func:`dprepro.runtime.job_plan.merged_params`). Read as ``snakemake.params`` is.
    """
    return merged_params(dict(smk.params.items()), smk.config, smk.rule,
                         dict(smk.wildcards.items()))


def _check_library(smk) -> None:
    """Refuse a step that imported a ``dprepro`` other than the one beside its script.

    Snakemake appends the script's folder to ``sys.path``, after site-packages: with a copy
    installed by ``pip install .``, the job would run that copy while its sidecars record the
    digests of the clone's code. ``workflow/rules/common.smk`` puts ``scripts/`` first on the
    jobs' ``PYTHONPATH``; this check catches any other way in.
    """
    scriptdir = getattr(smk, "scriptdir", None)
    if not scriptdir or "://" in str(scriptdir):
        return
    scripts = Path(scriptdir).resolve()
    if scripts != _SCRIPTS_DIR:
        raise RuntimeError(
            f"this step imported dprepro from {_SCRIPTS_DIR / 'dprepro'}, not the library beside "
            f"its script ({scripts / 'dprepro'}): put {scripts} first on PYTHONPATH, or install "
            f"the clone with `pip install -e .`")


def _cohort_context(smk) -> str:
    """`` for cohort 'x' (config key datasets.x)`` for a job of one cohort (wildcard
    ``dataset``), else ``""``."""
    wildcards = getattr(smk, "wildcards", None)
    dataset = dict(wildcards.items()).get("dataset") if wildcards is not None else None
    return f" for cohort {dataset!r} (config key datasets.{dataset})" if dataset else ""


def _is_snakemake_script_job() -> bool:
    """Whether this process runs a step as Snakemake's copy of it
    (``.snakemake/scripts/tmpXXXX.<name>.py``), not e.g. a test that calls :func:`start`."""
    main = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    return (main is not None and main.name.startswith("tmp")
            and main.parent.name == "scripts" and main.parent.parent.name == ".snakemake")


def _exit_without_teardown(failed: list) -> None:
    """End a step that succeeded without the interpreter's teardown.

    Freeing every module and object of a job that imported pandas, matplotlib
    or torch took 0.2-0.4 CPU-s after the script's last line, about a tenth
    of a small job. When the script ended without an exception, this runs
    every other exit function (logging's shutdown flushes and closes the log
    file; temporary-file finalisers), flushes stdout and stderr and leaves
    with status 0: what is skipped is only memory being freed. Every output
    was already written and closed (``atomic_path``). After an uncaught
    exception it does nothing, and the job ends as usual with status 1.
    """
    if failed:
        return
    atexit.unregister(_exit_without_teardown)
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


@functools.cache
def _library_modules(script: str) -> dict:
    """The checksums of the library modules ``script`` reaches, once per job: a job that
    writes its files in several calls (Figure 2: ten) hashed the same files each time
    (0.05 CPU-s a call), and none of them changes while the job runs."""
    committed = Path(script)
    return module_checksums(committed, committed.parent / PACKAGE)


_PLANS: dict = {}


def _recorded_params(smk) -> dict:
    """What a sidecar records of the job's parameters, so that ``snakemake verify`` flags
    exactly the files Snakemake would remake (:mod:`dprepro.runtime.verify`): ``params``
    (the rule's, as JSON, to show), ``params_text`` (the text Snakemake compares for each,
    :func:`dprepro.runtime.params.compared_text`) and, for a rule with a job plan, ``plan``."""
    params = getattr(smk, "params", None)
    if params is None:
        return {}
    values = dict(params.items())
    out = {"params": as_recorded(values),
           "params_text": {name: compared_text(value) for name, value in values.items()}}
    if "plan_sha256" in values:
        wildcards = dict(smk.wildcards.items())
        key = (id(smk.config), smk.rule, tuple(sorted(wildcards.items())))
        if key not in _PLANS:
            _PLANS[key] = as_recorded(plan_of_job(smk.config, smk.rule, wildcards))
        out["plan"] = _PLANS[key]
    return out


def write_sidecars(smk, file: str, outputs, *, record_inputs: bool = True, **record) -> None:
    """Write ``<output>.prov.json`` for each path in ``outputs``.

    ``record`` is passed to :func:`dprepro.runtime.provenance.provenance_record`
    (``config``, ``seeds``, ``privacy``, ``data_origin``, ``extra``); the
    script and the rule's named inputs are filled in here. ``privacy`` is a
    :class:`dprepro.runtime.privacy_record.PrivacyRecord` (or a list of them, for a table
    that mixes releases), so the sidecar states exactly what the table's
    privacy columns state. ``record_inputs=False`` records no inputs: for a job whose
    inputs only order it (the run's manifest waits on every target but reads none).
    """
    if "privacy" in record:
        record["privacy"] = provenance_of(record["privacy"])
    inputs = {}
    for key, value in (smk.input.items() if record_inputs else ()):
        values = [value] if isinstance(value, str) else list(value)
        for i, path in enumerate(values):
            inputs[key if len(values) == 1 else f"{key}[{i}]"] = path
    params = getattr(smk, "params", None)
    library_code = getattr(params, "library_code", None) if params is not None else None
    rule = getattr(smk, "rule", None)
    run_config = getattr(smk, "config", None)
    code = ({"library_code": library_code,
             "library_modules": _library_modules(str(script_path(file)))}
            if library_code else {})
    extra = {"rule": rule, "wildcards": dict(smk.wildcards.items()), **code,
             **_recorded_params(smk),
             **({"run_config": run_config_subset(run_config, rule, dict(smk.wildcards.items()))}
                if run_config else {}),
             **record.pop("extra", {})}
    for output in outputs:
        write_provenance(output, script=script_path(file), inputs=inputs, extra=extra, **record)


def compile_library_for_jobs(scripts_dir) -> bool:
    """Write the bytecode of the library in ``scripts_dir`` before any job imports it.

    Each job is a new interpreter that imports the library modules its script reaches.
    Python compiles a module's source where its bytecode (``__pycache__``) is missing or
    stale, and writes the result for the next interpreter only when bytecode writing is
    allowed: under ``PYTHONDONTWRITEBYTECODE`` (set in some containers and CI images)
    every job compiled the modules again, about 0.2 CPU-s a job (the small test
    configuration: 129 -> 112 CPU-s). Compiling is skipped for files whose bytecode is
    current (a few milliseconds a workflow start); files are written atomically, so
    concurrent starts on one checkout are safe. A checkout that cannot be written is
    left as it is (the jobs then compile, as before). Returns whether every file's
    bytecode is now current.
    """
    import compileall

    try:
        return bool(compileall.compile_dir(str(Path(scripts_dir) / PACKAGE), quiet=2))
    except OSError:
        return False


def scripts_first_for_jobs(scripts_dir) -> None:
    """Put ``scripts_dir`` first on the ``PYTHONPATH`` the workflow's jobs inherit.

    Snakemake appends a script's folder to its ``sys.path``, after site-packages: with
    a copy of dprepro installed (``pip install .``), a job would import that copy while
    its sidecars record the digests of the clone's code (:func:`start` refuses that).
    """
    import os

    os.environ["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(scripts_dir), os.environ.get("PYTHONPATH")]))
