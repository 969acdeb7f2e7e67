"""The library as a package: each subpackage's public names, loaded on first use, and the
dependencies it declares to pip (pyproject.toml) against the pins of requirements.txt."""

from __future__ import annotations

import ast
import importlib
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from dprepro.runtime.exports import lazy_exports

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "scripts" / "dprepro"
#: The subpackages with public names (a study's package is the workflow's, not an API).
PACKAGES = sorted(p.name for p in LIB.iterdir()
                  if (p / "__init__.py").is_file() and p.name != "studies")


def _module_all(path: Path) -> list[str] | None:
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
                getattr(target, "id", None) == "__all__" for target in node.targets):
            return list(ast.literal_eval(node.value))
    return None


def _defined(path: Path) -> set[str]:
    """Names a module binds at its top level."""
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def _run(code: str, cwd: Path) -> str:
    """``code`` in a fresh interpreter importing this checkout's library."""
    env = {**os.environ, "PYTHONPATH": str(LIB.parent)}
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("package", PACKAGES)
def test_a_subpackage_exports_the_public_names_of_its_modules(package):
    """Every name in a module's ``__all__`` is importable from the package (but one that is
    also a module's name: the import system binds that name to the module), as the very
    object the module defines; a module without ``__all__`` (argument checks) may export
    some of its functions and classes."""
    pkg = importlib.import_module(f"dprepro.{package}")
    modules = {p.stem: p for p in (LIB / package).glob("*.py") if p.stem != "__init__"}
    exported = set(pkg.__all__)
    assert pkg.__all__ == sorted(exported)
    assert not exported & set(modules), "a public name that is also a module's name"
    home = {}
    for stem, path in modules.items():
        names = _module_all(path)
        if names is not None:
            missing = set(names) - set(modules) - exported
            assert not missing, f"dprepro.{package}.{stem} names {sorted(missing)} in __all__"
            home |= {name: stem for name in names}
    for name in exported - set(home):
        (stem,) = [stem for stem, path in modules.items()
                   if _module_all(path) is None and name in _defined(path)]
        assert not name.startswith("_")
        home[name] = stem
    for name in sorted(exported):
        module = importlib.import_module(f"dprepro.{package}.{home[name]}")
        assert getattr(pkg, name) is getattr(module, name), f"dprepro.{package}.{name}"
    assert exported <= set(dir(pkg))
    with pytest.raises(AttributeError, match=f"'dprepro.{package}' has no attribute 'nothing'"):
        pkg.nothing  # noqa: B018


def test_the_top_level_package_lists_every_subpackage_and_the_version():
    import dprepro

    top = {name for name in dprepro.__all__ if name != "__version__"}
    assert top == {p.name for p in LIB.iterdir() if (p / "__init__.py").is_file()}
    assert re.fullmatch(r"\d+\.\d+\.\d+", dprepro.__version__)
    assert dprepro.survival is importlib.import_module("dprepro.survival")


def test_importing_the_packages_imports_no_module_until_a_name_is_asked_for(tmp_path):
    """``import dprepro`` and every subpackage load none of their modules (nor numpy); a name
    loads its own module and what that imports, not its siblings: the Beran estimator loads
    no Cox code and no torch."""
    out = _run(
        "import sys, dprepro\n"
        f"for name in {PACKAGES!r}: getattr(dprepro, name)\n"
        "print(sorted(m for m in sys.modules if m.startswith('dprepro')), 'numpy' in sys.modules)\n"
        "from dprepro.survival import beran_cdf\n"
        "print('dprepro.survival.conditional' in sys.modules,"
        " 'dprepro.survival.cox_misclassification' in sys.modules, 'torch' in sys.modules)\n",
        tmp_path)
    loaded, beran = out.splitlines()
    expected = sorted(["dprepro", "dprepro.runtime.exports",
                       *(f"dprepro.{name}" for name in PACKAGES)])
    assert loaded == f"{expected} False"
    assert beran == "True False False"


def test_lazy_exports_refuse_a_name_listed_twice_or_shadowed_by_a_module():
    with pytest.raises(ValueError, match="'f' is exported by both 'a' and 'b'"):
        lazy_exports("pkg", {"a": ["f"], "b": ["f"]})
    with pytest.raises(ValueError, match="'a' is both a public name and a module"):
        lazy_exports("pkg", {"a": ["g"], "b": ["a"]})


# ------------------------------------------------------------------- dependencies

#: Import names whose distribution has another name; PIL comes with matplotlib.
DISTRIBUTION = {"sklearn": "scikit-learn", "yaml": "pyyaml", "PIL": "matplotlib"}


def _pins(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            name, version = line.split("==")
            pins[re.sub(r"\[.*\]", "", name).lower()] = version
    return pins


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _declared() -> list[Requirement]:
    project = _project()
    return [Requirement(line) for line in
            [*project["dependencies"], *sum(project["optional-dependencies"].values(), [])]]


def test_each_declared_dependency_admits_the_pinned_version():
    """pip resolves the package's ranges; the workflow runs requirements.txt's pins: each pin
    lies in its range, so the package is tested with versions it admits."""
    pins = _pins(ROOT / "requirements.txt")
    for requirement in _declared():
        name = requirement.name.lower()
        assert name in pins, f"{requirement} is not pinned in requirements.txt"
        assert requirement.specifier.contains(pins[name]), f"{requirement} excludes {pins[name]}"


def test_every_third_party_import_of_the_library_is_declared():
    declared = {requirement.name.lower() for requirement in _declared()}
    core = {Requirement(line).name.lower() for line in _project()["dependencies"]}
    imported = {}
    for path in sorted(LIB.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in ("dprepro", "__future__"):
                    imported.setdefault(DISTRIBUTION.get(top, top).lower(), path.name)
    missing = {name: where for name, where in imported.items() if name not in declared}
    assert not missing, f"imported but not declared in pyproject.toml: {missing}"
    # the extras hold what only the VAEs and the repr study need
    assert {"torch", "optuna", "openpyxl"} & core == set()
    assert {"numpy", "scipy", "pandas"} <= core


# ------------------------------------------------------------------- beside the workflow


@pytest.mark.workflow
def test_a_workflow_job_runs_the_checkouts_library_beside_an_installed_copy(tmp_path):
    """Snakemake puts a job's script folder after site-packages on its sys.path; with a copy of
    dprepro installed (here one that says it is version 9.9.9), the job still runs the
    checkout's library (workflow/rules/common.smk), or stops (dprepro.runtime.step)."""
    import json

    import dprepro
    from helpers.install import install_copy

    site = install_copy(tmp_path / "install", version="9.9.9")
    work = tmp_path / "run"
    target = "results/data/cohorts/kidney.parquet"
    done = subprocess.run(
        [sys.executable, "-m", "snakemake", "--snakefile", str(ROOT / "Snakefile"),
         "--configfile", str(ROOT / "config" / "config.yaml"), "--cores", "1",
         "--directory", str(work), target],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(site)}, capture_output=True,
        text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    sidecar = json.loads((work / f"{target}.prov.json").read_text())
    assert sidecar["dprepro"]["version"] == dprepro.__version__ != "9.9.9"
