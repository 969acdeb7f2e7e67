"""Check a results folder against its sidecars: which code, inputs and configuration made each file.

Every table and figure has a provenance sidecar ``<file>.prov.json``
(:mod:`dprepro.runtime.provenance`). :func:`verify_run` reads each one under
``results/`` and checks, for the file it describes:

* **output**: the file is there and its sha256 is the one recorded when it was written;
* **inputs**: each input is there (relative to the run's directory, or as given) and its
  sha256 is the recorded one;
* **script**: ``scripts/<name>.py`` of the checkout has the recorded sha256;
* **library code**: the digest of the library modules that script reaches
  (:mod:`dprepro.runtime.code_version`) is the recorded ``library_code``;
* **configuration** (when one is given): every key of the sections the file was made
  under (:mod:`dprepro.runtime.run_config`) has the value of the configuration at hand.

A mismatch names the file, what differs and how. Checksums of a file read by many
sidecars are computed once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from dprepro.runtime.code_version import script_library_digest
from dprepro.runtime.io import sha256_of
from dprepro.runtime.run_config import flatten, run_config_subset

__all__ = ["Mismatch", "VerifyReport", "verify_run"]

SIDECAR_SUFFIX = ".prov.json"


@dataclass(frozen=True)
class Mismatch:
    """One difference between a file's sidecar and what is at hand."""

    file: str
    what: str  # output, input, script, library_code, config, sidecar
    detail: str

    def __str__(self) -> str:
        return f"{self.file}: {self.what}: {self.detail}"


@dataclass
class VerifyReport:
    """What :func:`verify_run` found: the files checked and every mismatch."""

    files: list[str] = field(default_factory=list)
    mismatches: list[Mismatch] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.mismatches

    def lines(self) -> list[str]:
        """One line per file (``ok`` or its mismatches), then a summary."""
        bad: dict[str, list[Mismatch]] = {}
        for m in self.mismatches:
            bad.setdefault(m.file, []).append(m)
        out = []
        for name in self.files:
            if name in bad:
                out += [f"MISMATCH {m}" for m in bad[name]]
            else:
                out.append(f"ok       {name}")
        out.append(f"{len(self.files)} files checked, {len(bad)} with mismatches "
                   f"({len(self.mismatches)} in all)")
        return out


class _Checksums:
    """sha256 of each path once per verification (inputs are shared by many sidecars)."""

    def __init__(self):
        self._known: dict[Path, str | None] = {}

    def __call__(self, path: Path) -> str | None:
        path = path.resolve()
        if path not in self._known:
            self._known[path] = sha256_of(path) if path.is_file() else None
        return self._known[path]


def _located(path: str, run_dir: Path) -> Path:
    p = Path(path)
    return p if p.is_absolute() else run_dir / p


def _config_mismatches(name: str, recorded: Mapping, config: Mapping, rule: str | None):
    current = flatten(run_config_subset(config, rule))
    made = flatten(recorded)
    for key in sorted(set(made) | set(current)):
        if key not in current:
            yield Mismatch(name, "config", f"{key} = {made[key]!r} when made; not set now")
        elif key not in made:
            yield Mismatch(name, "config", f"{key} not set when made; {current[key]!r} now")
        elif made[key] != current[key]:
            yield Mismatch(name, "config", f"{key} = {made[key]!r} when made; "
                                           f"{current[key]!r} now")


def verify_run(run_dir: str | Path, *, workflow_root: str | Path,
               config: Mapping | None = None) -> VerifyReport:
    """Check every sidecar under ``run_dir/results`` (see the module docstring).

    Parameters
    ----------
    run_dir : path-like
        The directory the run was made in (where ``results/`` is).
    workflow_root : path-like
        The checkout whose ``scripts/`` (and library) the files should come from.
    config : mapping, optional
        The configuration to compare with (schema defaults filled in); None skips
        the configuration check.

    Returns
    -------
    VerifyReport
    """
    run_dir, root = Path(run_dir), Path(workflow_root)
    library = root / "scripts" / "dprepro"
    checksum = _Checksums()
    digests: dict[str, str] = {}
    report = VerifyReport()
    for sidecar in sorted((run_dir / "results").rglob(f"*{SIDECAR_SUFFIX}")):
        name = sidecar.relative_to(run_dir).as_posix()[: -len(SIDECAR_SUFFIX)]
        report.files.append(name)
        found = report.mismatches
        try:
            record = json.loads(sidecar.read_text())
        except (OSError, ValueError) as err:
            found.append(Mismatch(name, "sidecar", f"unreadable ({err})"))
            continue
        output = run_dir / name
        recorded = record.get("output_sha256")
        actual = checksum(output)
        if actual is None:
            found.append(Mismatch(name, "output", "missing"))
        elif recorded is None:
            found.append(Mismatch(name, "output", "the sidecar records no checksum"))
        elif actual != recorded:
            found.append(Mismatch(name, "output", f"sha256 {actual[:12]}… differs from the "
                                                  f"recorded {recorded[:12]}… (edited)"))
        for key, item in sorted((record.get("inputs") or {}).items()):
            path = _located(item["path"], run_dir)
            actual = checksum(path)
            if actual is None:
                found.append(Mismatch(name, "input", f"{key} ({item['path']}) missing"))
            elif actual != item["sha256"]:
                found.append(Mismatch(name, "input", f"{key} ({item['path']}) changed since"))
        script = (record.get("script") or {}).get("path", "")
        script_file = root / script
        if not script or Path(script).is_absolute() or not script_file.is_file():
            found.append(Mismatch(name, "script", f"{script!r} is not a script of "
                                                  f"{root.resolve()}"))
        else:
            if checksum(script_file) != record["script"]["sha256"]:
                found.append(Mismatch(name, "script", f"{script} differs from the one that "
                                                      "made the file"))
            code = record.get("library_code")
            if code is not None:
                if script not in digests:
                    digests[script] = script_library_digest(script_file, library)
                if digests[script] != code:
                    found.append(Mismatch(name, "library_code", f"library modules reached "
                                          f"by {script} differ from those that made the file"))
        if config is not None and "run_config" in record:
            found.extend(_config_mismatches(name, record["run_config"], config,
                                            record.get("rule")))
    return report
