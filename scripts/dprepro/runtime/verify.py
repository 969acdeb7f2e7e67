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
* **params** (when the workflow's are given): the job's ``params``, as the rules give them
  now for the job's wildcards, are those it was made with, and so is its plan (the long
  parameters a ``plan_sha256`` stands for, rebuilt from the configuration at hand). These
  are what Snakemake compares to decide a rerun, so verify flags the files Snakemake
  would remake, and no others: a configuration key the job does not read, a comment in a
  rule file or a rule added for another study flags nothing;
* **upstream**: no input is itself a file that fails a check (a stale table makes the
  figures drawn from it stale too).

It also reports files the workflow expects that are absent with their sidecars, and
files under ``results/`` that no sidecar describes. Inputs under ``results/data/``
(raw data: sensitive, often not handed over) that are absent are listed as unchecked,
not as mismatches. It checks consistency, not authenticity: whoever edits a file can
edit its sidecar too.

A mismatch names the file, what differs and how. Checksums of a file read by many
sidecars are computed once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from dprepro.runtime.code_version import module_checksums, script_library_digest
from dprepro.runtime.io import sha256_of
from dprepro.runtime.job_plan import plan_of_job
from dprepro.runtime.params import EvaluatedParams, as_recorded, canonical, evaluated_params
from dprepro.runtime.provenance import git_commit
from dprepro.runtime.run_config import flatten
from dprepro.runtime.run_folder import KEPT_FILES

__all__ = ["Mismatch", "Unevaluable", "VerifyReport", "current_params", "job_key",
           "recorded_jobs", "verify_run"]

SIDECAR_SUFFIX = ".prov.json"
#: The configuration of the last complete run (rule run_manifest, written last).
MANIFEST = "results/run_manifest.json"


@dataclass(frozen=True)
class Mismatch:
    """One difference between a file's sidecar and what is at hand."""

    file: str
    what: str  # output, input, script, library_code, params, rule, upstream, sidecar
    detail: str
    #: For a params mismatch, what the summary counts it under: the param (or plan key)
    #: that differs, or ``(cannot be evaluated)``.
    key: str | None = None

    def __str__(self) -> str:
        return f"{self.file}: {self.what}: {self.detail}"


@dataclass
class VerifyReport:
    """What :func:`verify_run` found: the files checked, every mismatch, what went unchecked."""

    files: list[str] = field(default_factory=list)
    mismatches: list[Mismatch] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)
    commits: set = field(default_factory=set)
    checkout_commit: str | None = None
    #: Configuration keys where the one at hand differs from the last complete run's
    #: (``results/run_manifest.json``); None without a manifest or a configuration.
    manifest_differs: list[str] | None = None

    @property
    def ok(self) -> bool:
        return not self.mismatches

    def lines(self, *, every_file: bool = False) -> list[str]:
        """The mismatches (with ``every_file``, also one ``ok`` line per good file), then a
        summary: counts, the parameters that differ, the commits."""
        bad: dict[str, list[Mismatch]] = {}
        for m in self.mismatches:
            bad.setdefault(m.file, []).append(m)
        out = []
        for name in sorted(set(self.files) | set(bad)):
            if name in bad:
                out += [f"MISMATCH {m}" for m in bad[name]]
            elif every_file:
                out.append(f"ok       {name}")
        keys: dict[str, int] = {}
        for m in self.mismatches:
            if m.key is not None:
                keys[m.key] = keys.get(m.key, 0) + 1
        if keys:
            out.append("parameters that differ (files): " + ", ".join(
                f"{key} ({n})" for key, n in sorted(keys.items())) + self._config_hint())
        if self.unchecked:
            out.append(f"unchecked: {len(self.unchecked)} inputs under results/data/ are "
                       "absent (raw data, often not handed over; their checksums are "
                       "recorded)")
        if self.commits:
            out.append(f"made at commit {', '.join(sorted(self.commits))}; this checkout "
                       f"is {self.checkout_commit or 'not a git checkout'}")
        out.append(f"{len(self.files)} files checked, {len(bad)} with mismatches "
                   f"({len(self.mismatches)} in all)")
        return out


    def _config_hint(self) -> str:
        """Why jobs' params differ, as far as the run's manifest tells: the configuration
        at hand, or the rules and plans since the run."""
        if self.manifest_differs is None:
            return (" (verify takes the run's --configfile and --config options: give it "
                    "the same as the run)")
        if self.manifest_differs:
            shown = ", ".join(self.manifest_differs[:5]) + (
                ", ..." if len(self.manifest_differs) > 5 else "")
            return (f" (the configuration at hand differs from the last complete run's, "
                    f"{MANIFEST}, in {shown}: was one of the run's --configfile or --config "
                    "options left out? If not, no run of this configuration has completed "
                    "yet: rerun the workflow)")
        return (f" (the configuration at hand is the last complete run's, {MANIFEST}: the "
                "rules or job plans changed since these files were made, or the run that "
                "would remake them failed; rerun the workflow)")


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


def job_key(rule: str, wildcards: Mapping | None) -> tuple[str, tuple]:
    """A job's key in ``params_now`` (:func:`verify_run`): its rule and sorted wildcards."""
    return rule, tuple(sorted((str(k), str(v)) for k, v in (wildcards or {}).items()))


def recorded_jobs(run_dir: str | Path) -> set[tuple[str, tuple]]:
    """The jobs (:func:`job_key`) whose sidecars are under ``run_dir/results``: those whose
    current ``params`` :func:`verify_run` needs. Unreadable sidecars are left to it."""
    jobs = set()
    for sidecar in Path(run_dir, "results").rglob(f"*{SIDECAR_SUFFIX}"):
        try:
            record = json.loads(sidecar.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(record, dict) and record.get("rule"):
            jobs.add(job_key(record["rule"], record.get("wildcards")))
    return jobs


@dataclass(frozen=True)
class Unevaluable:
    """A recorded job whose rule's params cannot be evaluated now (``reason``): typically a
    job of another configuration, such as a cohort the configuration at hand lacks."""

    reason: str


def current_params(run_dir: str | Path, rule_params) -> dict:
    """The ``params`` each job recorded under ``run_dir/results`` gets from its rule now:
    :func:`verify_run`'s ``params_now``.

    Parameters
    ----------
    run_dir : path-like
        The run's directory.
    rule_params : callable
        ``rule_params(rule)``: the rule's named params as written (a Snakemake rule's
        ``params.items()``), or None for a rule the workflow does not have.

    Returns
    -------
    dict
        By :func:`job_key`: the job's params
        (:class:`dprepro.runtime.params.EvaluatedParams`, at its recorded wildcards); None
        for a rule the workflow does not have; :class:`Unevaluable` where evaluating them
        raised (a params function reading a cohort the configuration no longer has).
    """
    out: dict = {}
    for rule, wildcards in sorted(recorded_jobs(run_dir)):
        items = rule_params(rule)
        if items is None:
            out[(rule, wildcards)] = None
            continue
        try:
            out[(rule, wildcards)] = evaluated_params(items, dict(wildcards))
        except Exception as err:  # any params function's error, reported per file
            out[(rule, wildcards)] = Unevaluable(f"{type(err).__name__}: {err}")
    return out


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


class _Plans:
    """Each job's plan rebuilt from the configuration at hand, once per job."""

    def __init__(self, config: Mapping | None):
        self._config, self._known = config, {}

    def __call__(self, rule: str, wildcards: Mapping) -> dict | None:
        key = job_key(rule, wildcards)
        if key not in self._known:
            try:
                plan = as_recorded(plan_of_job(self._config, rule, wildcards))
            except (KeyError, TypeError, ValueError):
                plan = None  # a rule with no plan now: the digests differ, no key is named
            self._known[key] = plan
        return self._known[key]


def _params_mismatches(name: str, record: Mapping, now: EvaluatedParams,
                       plans: _Plans | None):
    """The job's params when made against those the rules give it now.

    The verdict is Snakemake's: the sorted texts of the params it compares
    (:func:`dprepro.runtime.params.compared_text`; derived params and values it does not
    compare left out, names not compared). Where they differ, each param that differs is
    named, a changed plan by the plan's keys that differ (rebuilt from the configuration at
    hand); ``library_code`` is left to its own check, which names the modules.
    """
    made_text = {k: v for k, v in (record.get("params_text") or {}).items()
                 if k not in now.derived and v is not None}
    now_text = {k: v for k, v in now.texts.items() if v is not None}
    if sorted(made_text.values()) == sorted(now_text.values()):
        return
    made_values, now_values = record["params"], now.values
    for key in sorted((set(made_text) | set(now_text)) - {"library_code"}):
        if made_text.get(key) == now_text.get(key):
            continue
        if key not in now_text:
            yield Mismatch(name, "params", f"{key} = {_shown(made_values.get(key))} when "
                                           "made; not set now", key)
        elif key not in made_text:
            yield Mismatch(name, "params", f"{key} not set when made; "
                                           f"{_shown(now_values.get(key))} now", key)
        else:
            yield from _value_mismatches(name, key, record, made_values.get(key),
                                         now_values.get(key), made_text[key], now_text[key],
                                         plans)


def _value_mismatches(name, key, record, made, now, made_text, now_text, plans):
    """One param that differs: its keys that differ (a mapping's; a plan's, for
    ``plan_sha256``), else the value as JSON shows it, else as Snakemake compares it."""
    if key == "plan_sha256" and plans is not None and isinstance(record.get("plan"), Mapping):
        plan_now = plans(record["rule"], record.get("wildcards") or {})
        if plan_now is not None:
            made, now, key = record["plan"], plan_now, "plan"
    before, after = flatten({key: made}), flatten({key: now})
    named = [k for k in sorted(set(before) | set(after)) if before.get(k) != after.get(k)]
    if not named:  # alike as JSON (300 and 300.0; a tuple and a list): Snakemake's texts
        yield Mismatch(name, "params", f"{key} = {made_text} when made; {now_text} now", key)
        return
    for k in named:
        if k not in after:
            yield Mismatch(name, "params", f"{k} = {_shown(before[k])} when made; not set now",
                           k)
        elif k not in before:
            yield Mismatch(name, "params", f"{k} not set when made; {_shown(after[k])} now", k)
        else:
            yield Mismatch(name, "params", f"{k} = {_shown(before[k])} when made; "
                                           f"{_shown(after[k])} now", k)


def _manifest_differs(path: Path, config: Mapping) -> list[str] | None:
    """The keys where ``config`` differs from the configuration the manifest at ``path``
    records (None when there is no readable manifest)."""
    try:
        recorded = json.loads(path.read_text())["configuration"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    # the form the manifest was written in (JSON of sorted keys; tuples as lists)
    current = json.loads(json.dumps(canonical(dict(config)), sort_keys=True, default=str))
    made, now = flatten(recorded), flatten(current)
    return sorted(key for key in set(made) | set(now)
                  if key not in made or key not in now or made[key] != now[key])


def verify_run(run_dir: str | Path, *, workflow_root: str | Path,
               config: Mapping | None = None, expected=(),
               params_now: Mapping | None = None) -> VerifyReport:
    """Check every sidecar under ``run_dir/results`` (see the module docstring).

    Parameters
    ----------
    run_dir : path-like
        The directory the run was made in (where ``results/`` is).
    workflow_root : path-like
        The checkout whose ``scripts/`` (and library) the files should come from.
    config : mapping, optional
        The configuration at hand (schema defaults filled in): the plans of jobs whose
        ``plan_sha256`` differs are rebuilt from it, to name the plan's keys that differ,
        and it is compared with the last complete run's (``results/run_manifest.json``)
        for the summary's hint.
    expected : iterable of str
        Outputs the workflow's targets name (paths relative to ``run_dir``): each must
        be there with its sidecar.
    params_now : mapping, optional
        For each job of :func:`recorded_jobs` (by :func:`job_key`), the ``params`` its rule
        gives it now (:func:`dprepro.runtime.params.evaluated_params`), or None where the
        workflow has no such rule. None skips the params check.

    Returns
    -------
    VerifyReport
    """
    run_dir, root = Path(run_dir), Path(workflow_root)
    library = root / "scripts" / "dprepro"
    checksum = _Checksums()
    digests: dict[str, str] = {}
    modules: dict[str, dict[str, str]] = {}
    plans = _Plans(config) if config is not None else None
    inputs_of: dict[str, set[str]] = {}
    report = VerifyReport()
    report.checkout_commit = git_commit(str(root))
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
        if (record.get("dprepro") or {}).get("git_commit"):
            report.commits.add(record["dprepro"]["git_commit"])
        inputs_of[name] = set()
        for key, item in sorted((record.get("inputs") or {}).items()):
            path = _located(item["path"], run_dir)
            inputs_of[name].add(Path(item["path"]).as_posix())
            actual = checksum(path)
            if actual is None and Path(item["path"]).as_posix().startswith("results/data/"):
                report.unchecked.append(f"{name}: {key} ({item['path']})")
            elif actual is None:
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
                    if script not in modules:
                        modules[script] = module_checksums(script_file, library)
                    made = record.get("library_modules") or {}
                    changed = sorted(k for k in set(made) | set(modules[script])
                                     if made.get(k) != modules[script].get(k))
                    which = f": {', '.join(changed)}" if made else ""
                    found.append(Mismatch(name, "library_code", f"library modules reached "
                                          f"by {script} differ from those that made the file"
                                          f"{which}"))
        rule = record.get("rule")
        if params_now is not None and rule:
            key = job_key(rule, record.get("wildcards"))
            now = params_now.get(key)
            if key not in params_now:
                found.append(Mismatch(name, "params", "not gathered when verify started (a "
                                                      "file written since?): run verify again"))
            elif now is None:
                found.append(Mismatch(name, "rule", f"this workflow has no rule {rule}"))
            elif isinstance(now, Unevaluable):
                found.append(Mismatch(name, "params", "cannot be evaluated under the "
                                      f"configuration at hand ({now.reason})",
                                      key="(cannot be evaluated)"))
            elif not isinstance(record.get("params_text"), Mapping):
                found.append(Mismatch(name, "params", "none recorded (made by an earlier "
                                                      "version of dprepro): rerun the workflow"))
            else:
                found.extend(_params_mismatches(name, record, now, plans))
    described = set(report.files)
    for path in expected:
        path = Path(path).as_posix()
        if path not in described and not (run_dir / path).is_file():
            report.mismatches.append(Mismatch(path, "output", "expected by the workflow's "
                                              "targets, absent with its sidecar"))
    for path in sorted((run_dir / "results").rglob("*")):
        rel = path.relative_to(run_dir).as_posix()
        if (path.is_file() and not rel.endswith(SIDECAR_SUFFIX) and rel not in described
                and not rel.startswith(("results/logs/", "results/benchmarks/"))
                and rel not in KEPT_FILES):
            report.mismatches.append(Mismatch(rel, "sidecar", "none: no rule of this "
                                              "workflow records having made this file"))
    if config is not None:
        report.manifest_differs = _manifest_differs(run_dir / MANIFEST, config)
    # a file whose input fails a check is stale too (its readers, transitively)
    failing = {m.file for m in report.mismatches}
    while True:
        new = {name for name, sources in inputs_of.items()
               if name not in failing and sources & failing}
        if not new:
            break
        for name in sorted(new):
            source = sorted(inputs_of[name] & failing)[0]
            report.mismatches.append(Mismatch(name, "upstream", f"its input {source} fails "
                                              "a check (this file is stale with it)"))
        failing |= new
    return report
