"""The package as pip installs it, from a copy of its sources (the build leaves nothing in the
checkout): what tests/test_tutorial.py runs the tutorial against, and what
tests/test_package.py puts beside a workflow job."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def install_copy(base: Path, *, version: str | None = None) -> Path:
    """``pip install --no-deps --target base/site`` of a copy of the package's sources.

    ``version`` replaces ``dprepro.__version__`` in the copy, to tell it from the checkout.
    Without the network where this setuptools builds a wheel itself (70.1+), else in pip's
    isolated build environment. Returns the ``site`` folder.
    """
    import setuptools
    from packaging.version import Version

    source = base / "source"
    (source / "scripts").mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "scripts" / "dprepro", source / "scripts" / "dprepro",
                    ignore=shutil.ignore_patterns("__pycache__"))
    if version is not None:
        init = source / "scripts" / "dprepro" / "__init__.py"
        text, count = re.subn(r'^__version__ = ".*"$', f'__version__ = "{version}"',
                              init.read_text(), flags=re.M)
        assert count == 1, init
        init.write_text(text)
    offline = (["--no-build-isolation"]
               if Version(setuptools.__version__) >= Version("70.1") else [])
    site = base / "site"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-input", "--quiet",
         "--disable-pip-version-check", *offline, "--target", str(site), str(source)],
        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return site
