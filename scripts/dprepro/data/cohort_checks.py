"""A study's cohort tables checked before any job runs.

:func:`cohort_config_problems` checks what the configuration says of a cohort;
this module reads the tables that are already on disk when the workflow starts
(sources ``file`` and ``bundled``) and checks what they hold, with the same code
the cohort's job runs (:func:`dprepro.data.cohort_spec.tidy_cohort`), so a table
that would fail inside a job stops the run before the first job, and leaves
nothing behind. Downloaded and generated cohorts are checked by their job as soon
as they are parsed (the same messages). A bundled table's checksum is its job's
check (``snakemake verify`` must still run, and name the file, when a bundled table
was edited).

Every problem names the key ``datasets.<name>.<key>``, the file and the fix.
Warnings are what a run may go on with but a user must hear of: a configured
group that no patient has (it stays a label of every release: the label set is
public, see :func:`dprepro.data.cohort_spec.group_order`) and a real cohort whose
grid LNTE horizon would be taken from the data.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from dprepro.data.cohort_spec import (
    CohortSpec,
    absent_groups,
    cohort_config_problems,
    single_group_message,
    tidy_cohort,
)
from dprepro.data.cohorts import read_csv_checked

__all__ = ["CohortTableCheck", "check_cohort_tables", "cohort_table_path"]

#: Sources whose table exists before the run (checked before any job).
CHECKED_SOURCES = ("file", "bundled")


@dataclass
class CohortTableCheck:
    """What the pre-run check found: ``problems`` stop the run, ``warnings`` do not."""

    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def cohort_table_path(spec: Mapping, workflow_dir: str | Path,
                      working_dir: str | Path = ".") -> Path:
    """Where a ``file`` or ``bundled`` cohort's table is: a bundled path is inside the
    workflow, a file path is absolute or relative to the directory the run is in."""
    base = workflow_dir if spec.get("source") == "bundled" else working_dir
    return Path(base) / str(spec.get("path", ""))


def _table_problems(name: str, spec: CohortSpec, path: Path,
                    working_dir: str | Path) -> tuple[list[str], list[str]]:
    key = f"datasets.{name}"
    if not path.is_file():
        where = "inside the workflow" if spec.source == "bundled" else (
            "" if Path(spec.path).is_absolute()
            else f"relative to {os.path.abspath(working_dir)}")
        return [f"config key '{key}.path': file {spec.path!r} not found {where}".rstrip()
                + "; give the cohort's CSV, absolute or relative to the directory "
                "snakemake runs in"], []
    try:
        raw = read_csv_checked(path, required=(), id_column=None)
        frame = tidy_cohort(raw, spec, source=str(path))
    except (ValueError, FileNotFoundError) as error:
        return [f"config key '{key}': {error}"], []
    present = sorted(set(frame["group"].astype(str)))
    if len(present) < 2:
        return [single_group_message(spec, present)], []
    per_id = frame.groupby("id").size()
    if int(per_id.max()) > spec.rows_per_person:
        return [f"config key '{key}.rows_per_person': id {per_id.idxmax()!r} of {path} has "
                f"{int(per_id.max())} rows but rows_per_person is {spec.rows_per_person}; raise "
                "it (it bounds the sensitivity of count releases) or fix the ids"], []
    warnings = [f"datasets.{name}.groups: configured group {group!r} has no patient in {path}; "
                f"it stays one of the k = {len(spec.groups)} labels every release randomises "
                "over (the label set is public), with a zero true count"
                for group in absent_groups(frame["group"], spec.groups)]
    return [], warnings


def check_cohort_tables(config: Mapping, *, workflow_dir: str | Path,
                        working_dir: str | Path = ".",
                        study: str = "rrr_survival") -> CohortTableCheck:
    """Check the configured cohorts of ``study`` whose tables are on disk.

    Parameters
    ----------
    config : mapping
        The run's configuration, defaults filled in.
    workflow_dir, working_dir : path-like
        Where bundled tables and relative ``file`` paths are found.
    study : str
        The study whose ``datasets`` are checked.

    Returns
    -------
    CohortTableCheck
        One problem per unusable cohort (the first thing wrong with it: also a declared
        covariate column that is missing, non-numeric or incomplete, named
        ``datasets.<name>.covariates``) and the warnings of the usable ones; cohorts
        whose configuration is invalid are left to :func:`cohort_config_problems`.
    """
    check = CohortTableCheck()
    if cohort_config_problems(config, study):
        return check
    section = config.get(study) or {}
    names = [*(section.get("datasets") or []),
             *((section.get("cox") or {}).get("extra_datasets") or [])]
    for name in dict.fromkeys(names):
        raw_spec = config["datasets"][name]
        spec = CohortSpec.from_config(name, raw_spec)
        if spec.origin == "real" and not spec.horizon:
            check.warnings.append(
                f"datasets.{name}.horizon: not set, so grid LNTE's time grid ends at the "
                "largest follow-up time, which depends on the private data (its tables say "
                "so); set a public horizon, e.g. the study's planned end of follow-up")
        if spec.source not in CHECKED_SOURCES:
            continue
        problems, warnings = _table_problems(
            name, spec, cohort_table_path(raw_spec, workflow_dir, working_dir), working_dir)
        check.problems += problems
        check.warnings += warnings
    return check
