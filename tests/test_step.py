"""Shared start-up of the step scripts (dprepro.runtime.step) with a stand-in snakemake object."""

import hashlib
import json
import logging
import math
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from dprepro.runtime import step
from dprepro.runtime.job_plan import JobParams
from dprepro.runtime.privacy_record import PrivacyRecord, non_private, provenance_of

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("given", "name"), [
    # the copy Snakemake runs
    ("/work/x/.snakemake/scripts/tmpa1b2c3d4.ldp_aggregate.py", "ldp_aggregate.py"),
    ("/anywhere/scripts/rrr_tables.py", "rrr_tables.py"),
    # a script whose own name starts with "tmp" but is no copy keeps its name
    ("/anywhere/scripts/tmp_tool.py", "tmp_tool.py"),
])
def test_script_path_points_at_the_committed_script(given, name):
    assert step.script_path(given) == ROOT / "scripts" / name


def fake_smk(tmp_path):
    one, two, three = (tmp_path / f"in{i}.csv" for i in range(3))
    for i, path in enumerate((one, two, three)):
        path.write_text(f"x\n{i}\n")
    return SimpleNamespace(
        input={"table": str(one), "parts": [str(two), str(three)]},
        wildcards={"dataset": "kidney", "epsilon": "1"},
        rule="rrr_release",
        params=JobParams({"library_code": "c0de", "dpi": 50, "shape": (1, 2)}),
        log=[str(tmp_path / "logs" / "job.log")],
        threads=1,
    )


def sidecar(path):
    return json.loads(Path(f"{path}.prov.json").read_text())


def test_write_sidecars_names_inputs_and_converts_a_privacy_record(tmp_path):
    smk = fake_smk(tmp_path)
    record = PrivacyRecord(mechanism="rrr", release=True, stated=1.0,
                           true_epsilon=1.0 + math.log(4), privacy_unit="patient",
                           note="paper calibration", extra={"calibration": "paper"})
    outputs = [tmp_path / "medians.csv", tmp_path / "curves.parquet"]
    file = str(tmp_path / ".snakemake" / "scripts" / "tmpzz99.rrr_analyse.py")
    step.write_sidecars(smk, file, outputs, config={"draws": 3}, data_origin="real",
                        extra={"note": "x"}, privacy=record)
    for output in outputs:
        prov = sidecar(output)
        assert prov["output"] == str(output)
        assert set(prov["inputs"]) == {"table", "parts[0]", "parts[1]"}
        assert prov["inputs"]["parts[1]"]["path"] == smk.input["parts"][1]
        committed = ROOT / "scripts" / "rrr_analyse.py"
        # named as the workflow names it, not by the producer's directory
        assert prov["script"] == {"path": "scripts/rrr_analyse.py",
                                  "sha256": hashlib.sha256(committed.read_bytes()).hexdigest()}
        assert prov["privacy"] == record.provenance()
        assert prov["privacy"]["release"] is True
        assert prov["rule"] == "rrr_release"
        assert prov["library_code"] == "c0de"  # the rule's digest of the library it ran
        assert prov["wildcards"] == {"dataset": "kidney", "epsilon": "1"}
        assert prov["note"] == "x" and prov["config"] == {"draws": 3}
        # the rule's params as Snakemake compares them (what `snakemake verify` compares);
        # no plan without a plan_sha256
        assert prov["params"] == {"dpi": 50, "library_code": "c0de", "shape": [1, 2]}
        # and as Snakemake compares them: a tuple is not a list there
        assert prov["params_text"] == {"dpi": "50", "library_code": "'c0de'",
                                       "shape": "(1, 2)"}
        assert "plan" not in prov


def test_write_sidecars_records_the_plan_of_a_rule_with_one_once_per_job(tmp_path, monkeypatch):
    smk = fake_smk(tmp_path)
    smk.rule, smk.config = "rrr_plan_probe", {"seed": 1}
    smk.params = JobParams({"library_code": "c0de", "plan_sha256": "ab12"})
    built = []
    monkeypatch.setattr(step, "plan_of_job", lambda config, rule, wildcards: built.append(
        (config, rule, wildcards)) or {"releases": ({"epsilon": 1},), "draws": 3})
    for name in ("a.csv", "b.csv"):  # a job that writes its files in two calls
        step.write_sidecars(smk, "scripts/rrr_tables.py", [tmp_path / name])
        prov = sidecar(tmp_path / name)
        assert prov["plan"] == {"draws": 3, "releases": [{"epsilon": 1}]}
        assert prov["params"] == {"library_code": "c0de", "plan_sha256": "ab12"}
    assert built == [({"seed": 1}, "rrr_plan_probe", {"dataset": "kidney", "epsilon": "1"})]


def test_write_sidecars_merges_a_list_of_records(tmp_path):
    smk = fake_smk(tmp_path)
    records = [non_private("original"), PrivacyRecord(mechanism="lnte", release=True,
                                                      stated=2.0, true_epsilon=math.inf)]
    step.write_sidecars(smk, "scripts/rrr_tables.py", [tmp_path / "t.csv"], privacy=records)
    prov = sidecar(tmp_path / "t.csv")
    assert prov["privacy"] == json.loads(json.dumps(provenance_of(records)))
    assert prov["privacy"]["release"] is True
    assert [r["mechanism"] for r in prov["privacy"]["records"]] == ["non_private", "lnte"]
    assert prov["privacy"]["records"][1]["true_epsilon"] == "inf"


def test_start_pins_the_threads_of_blas_libraries_loaded_after_it(tmp_path):
    """threadpool_limits reaches the loaded libraries only; scipy's own OpenBLAS loads later
    (lazily, with the step's imports) and must start with the rule's threads too."""
    code = f"""
import json, sys, types
sys.path.insert(0, {str(Path(step.__file__).resolve().parents[2])!r})
import numpy
from dprepro.runtime import step
smk = types.SimpleNamespace(threads=1, log=[{str(tmp_path / "job.log")!r}])
step.start(smk, "probe")
import scipy.linalg, scipy.optimize
from threadpoolctl import threadpool_info
print(json.dumps([(i["internal_api"], i["num_threads"]) for i in threadpool_info()]))
"""
    env = {k: v for k, v in os.environ.items() if k not in step.THREAD_VARIABLES}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True)
    pools = json.loads(out.stdout.strip().splitlines()[-1])
    # numpy's and scipy's OpenBLAS (two libraries) both at one thread
    assert sum(api == "openblas" for api, _ in pools) >= 2, pools
    assert all(n == 1 for _, n in pools), pools


def test_start_logs_to_the_rule_log_pins_threads_and_logs_uncaught_errors(tmp_path,
                                                                         monkeypatch):
    limits = []
    monkeypatch.setattr(step, "threadpool_limits", limits.append)
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # restored after the test
    for variable in step.THREAD_VARIABLES:  # restored after the test
        monkeypatch.setenv(variable, "unset")
    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    smk = fake_smk(tmp_path)
    smk.threads = 3
    try:
        logger = step.start(smk, "rrr_release")
        logger.info("hello from the job")
        try:
            raise KeyError("no column 'time'")
        except KeyError:
            sys.excepthook(*sys.exc_info())
        for handler in root.handlers:
            handler.flush()
    finally:
        for handler in root.handlers:
            if handler not in saved_handlers:
                handler.close()
        root.handlers[:] = saved_handlers
        root.setLevel(saved_level)
        logging.captureWarnings(False)
    assert limits == [3]
    assert all(os.environ[variable] == "3" for variable in step.THREAD_VARIABLES)
    text = Path(smk.log[0]).read_text()
    assert "hello from the job" in text
    # the job of one cohort (wildcard dataset) names the cohort and its configuration key
    assert "rrr_release failed for cohort 'kidney' (config key datasets.kidney): KeyError" in text
    assert "no column 'time'" in text



def test_a_step_refuses_a_library_other_than_the_one_beside_its_script(tmp_path):
    """A job that imported an installed copy of dprepro (site-packages precedes the script's
    folder on a Snakemake job's sys.path) stops before writing anything under another code
    digest than the one its sidecars would record."""
    (tmp_path / "log").mkdir()
    smk = SimpleNamespace(log=[str(tmp_path / "log" / "job.log")], threads=1,
                          scriptdir=str(tmp_path / "clone" / "scripts"))
    with pytest.raises(RuntimeError, match=r"imported dprepro from .*not the library beside"):
        step.start(smk, "rrr_cohort")
    assert not (tmp_path / "log" / "job.log").exists()
    # the workflow's own scripts folder, however it is spelled, passes
    step._check_library(SimpleNamespace(scriptdir=str(ROOT / "scripts" / ".." / "scripts")))

_FAKE_STEP = '''
import atexit, sys, tempfile, weakref
from types import SimpleNamespace
from pathlib import Path
from dprepro.runtime import step

work = Path(sys.argv[1])
log = step.start(SimpleNamespace(log=[str(work / "job.log")], threads=1), "fake_step")
# an exit function registered after start() and one before it (weakref's finaliser hook)
temporary = tempfile.TemporaryDirectory(dir=work)
(Path(temporary.name) / "scratch").write_text("x")
atexit.register(lambda: (work / "exit_function_ran").write_text("yes"))


class Teardown:
    def __del__(self):
        (work / "teardown_ran").write_text("yes")


keep = Teardown()
log.info("last line of the step")
if sys.argv[2] == "fail":
    raise RuntimeError("the step failed")
'''


@pytest.mark.parametrize("outcome", ["succeed", "fail"])
def test_a_step_job_exits_without_teardown_only_after_success(tmp_path, outcome):
    """A Snakemake script job (run as .snakemake/scripts/tmpXXXX.<name>.py) that succeeds
    runs every exit function, flushes its log and leaves with status 0 without freeing its
    objects; one that fails keeps the normal teardown and status 1."""
    import subprocess

    copy = tmp_path / ".snakemake" / "scripts" / "tmpa1b2c3d4.fake_step.py"
    copy.parent.mkdir(parents=True)
    copy.write_text(_FAKE_STEP)
    proc = subprocess.run([sys.executable, str(copy), str(tmp_path), outcome],
                          capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(ROOT / "scripts"), "PATH": "/usr/bin:/bin"})
    text = (tmp_path / "job.log").read_text()
    assert "last line of the step" in text
    assert (tmp_path / "exit_function_ran").read_text() == "yes"
    # the temporary directory's finaliser (weakref's exit hook) removed it
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("tmp")] == []
    if outcome == "succeed":
        assert proc.returncode == 0, proc.stderr
        assert not (tmp_path / "teardown_ran").exists()  # objects were not freed one by one
    else:
        assert proc.returncode == 1
        assert "RuntimeError: the step failed" in text
        assert (tmp_path / "teardown_ran").exists()


def test_start_in_another_process_registers_no_early_exit(tmp_path):
    """A test (or any caller that is not Snakemake's script copy) keeps its own exit path."""
    import atexit

    before = atexit._ncallbacks()
    step.start(SimpleNamespace(log=[str(tmp_path / "job.log")], threads=1), "not_a_job")
    assert atexit._ncallbacks() == before


def test_the_library_is_compiled_once_for_jobs_that_may_not_write_bytecode(tmp_path):
    """After compile_library_for_jobs, an interpreter under PYTHONDONTWRITEBYTECODE finds
    current bytecode for every library module it imports (it compiles none from source);
    an edited module is compiled again at the next call; a folder that cannot be written is
    left as it is."""
    import shutil
    import stat

    scripts = tmp_path / "scripts"
    shutil.copytree(Path(step.__file__).parents[2] / "dprepro", scripts / "dprepro",
                    ignore=shutil.ignore_patterns("__pycache__"))
    assert step.compile_library_for_jobs(scripts)
    probe = ("import importlib.machinery as m, sys\n"
             "compiled = []\n"
             "original = m.SourceFileLoader.source_to_code\n"
             "def count(self, data, path, *a, **k):\n"
             "    compiled.append(path)\n"
             "    return original(self, data, path, *a, **k)\n"
             "m.SourceFileLoader.source_to_code = count\n"
             "import dprepro.runtime.step, dprepro.survival.kaplan_meier\n"
             "print(sum(p.startswith(sys.argv[1]) for p in compiled), "
             "sum(n.startswith('dprepro') for n in sys.modules))\n")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(scripts)}

    def library_compiled() -> tuple[int, int]:
        out = subprocess.run([sys.executable, "-c", probe, str(scripts)], env=env,
                             capture_output=True, text=True, check=True, cwd=tmp_path)
        return tuple(map(int, out.stdout.split()))

    compiled, imported = library_compiled()
    assert imported > 10 and compiled == 0
    module = scripts / "dprepro" / "survival" / "kaplan_meier.py"
    module.write_text(module.read_text() + "\n# edited\n")
    assert library_compiled()[0] == 1  # stale bytecode: compiled (not written) by the job
    assert step.compile_library_for_jobs(scripts)
    assert library_compiled()[0] == 0
    if os.geteuid() != 0:  # root writes anyway
        module.write_text(module.read_text() + "# again\n")
        shutil.rmtree(module.parent / "__pycache__")
        module.parent.chmod(stat.S_IRUSR | stat.S_IXUSR)
        try:
            assert step.compile_library_for_jobs(scripts) is False
        finally:
            module.parent.chmod(stat.S_IRWXU)
