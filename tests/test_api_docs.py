"""The API reference (docs/api): Sphinx builds it from the numpydoc docstrings, offline, with
every warning an error, and it documents every public function and class of each subpackage."""

from __future__ import annotations

import importlib
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "scripts" / "dprepro"
DOCS = ROOT / "docs" / "api"
#: The subpackages with public names (a study's package is the workflow's, not an API).
PACKAGES = sorted(p.name for p in LIB.iterdir()
                  if (p / "__init__.py").is_file() and p.name != "studies")


def test_each_subpackage_has_a_page_with_each_of_its_modules():
    index = (DOCS / "index.rst").read_text()
    for package in PACKAGES:
        assert re.search(rf"^   {package}$", index, re.M), f"index.rst lists no {package}"
        page = (DOCS / f"{package}.rst").read_text()
        assert re.search(rf"^\.\. automodule:: dprepro\.{package}\n   :members:$", page, re.M)
        for module in sorted((LIB / package).glob("*.py")):
            if module.stem != "__init__":
                assert f".. automodule:: dprepro.{package}.{module.stem}\n" in page, \
                    f"docs/api/{package}.rst does not show dprepro.{package}.{module.stem}"


def test_the_api_reference_builds_without_a_warning_and_shows_every_public_name(tmp_path):
    # no proxy answers: a build that fetched anything (an inventory, an image) would warn
    dead = "http://127.0.0.1:9"
    env = {**os.environ, "http_proxy": dead, "https_proxy": dead, "HTTP_PROXY": dead,
           "HTTPS_PROXY": dead, "no_proxy": "", "NO_PROXY": ""}
    out = tmp_path / "html"
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-E", "-q", "-b", "html",
         "-d", str(tmp_path / "doctrees"), str(DOCS), str(out)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    assert done.stderr == "", done.stderr[-4000:]
    for package in PACKAGES:
        shown = set(re.findall(r'id="(dprepro\.[\w.]+)"',
                               (out / f"{package}.html").read_text(encoding="utf-8")))
        module = importlib.import_module(f"dprepro.{package}")
        missing = [name for name in module.__all__
                   if (inspect.isfunction(getattr(module, name))
                       or inspect.isclass(getattr(module, name)))
                   and f"dprepro.{package}.{name}" not in shown]
        assert missing == [], f"docs/api/{package}.rst shows no {missing}"
