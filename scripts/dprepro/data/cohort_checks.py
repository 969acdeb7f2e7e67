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

Beyond what the table itself must hold (the job's own checks: columns, values,
spellings), the rows are checked as every caller checks them
(:mod:`dprepro.data.cohort_content`): two groups with patients, one group per id, at most
``rows_per_person`` rows per id, at least one event, enough events for the Cox
models every cohort of the study is fitted with, and covariates those models can
estimate (not constant, not a linear function of the group).

Every problem names the key ``datasets.<name>.<key>``, the file and the fix.
Warnings are what a run may go on with but a user must hear of: a configured
group that no patient has (it stays a label of every release: the label set is
public, see :func:`dprepro.data.cohort_spec.group_order`), a group whose patients
are all censored, a real cohort whose grid LNTE horizon would be taken from the
data (its release then has no finite ε), and follow-up times at odds with the
time unit or the horizon (:func:`follow_up_warnings`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dprepro.data.cohort_content import (
    analysis_size_problems,
    cohort_frame_problems,
    cohort_frame_warnings,
    covariate_design_problems,
)
from dprepro.data.cohort_spec import (
    CohortSpec,
    cohort_config_problems,
    read_cohort_csv,
    tidy_cohort,
)

__all__ = ["CohortTableCheck", "check_cohort_tables", "cohort_table_path", "follow_up_warnings"]

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


def _missing_file_problem(key: str, spec: CohortSpec, path: Path,
                          working_dir: str | Path) -> str:
    where = "inside the workflow" if spec.source == "bundled" else (
        "" if Path(spec.path).is_absolute()
        else f"relative to {os.path.abspath(working_dir)}")
    if path.is_dir():
        place = f" ({where})" if where else ""
        return (f"config key '{key}.path': {spec.path!r}{place} is a directory, not a file; "
                "give the path of the cohort's CSV file itself")
    expanded = os.path.expandvars(os.path.expanduser(spec.path))
    shell = (f" (the path is read as written: no shell expands '~' or '$' in a configuration "
             f"file; write it out, e.g. {expanded!r})" if expanded != spec.path else "")
    return (f"config key '{key}.path': file {spec.path!r} not found {where}".rstrip()
            + shell + "; give the cohort's CSV, absolute or relative to the directory "
            "snakemake runs in")


def _table_problems(name: str, spec: CohortSpec, path: Path,
                    working_dir: str | Path) -> tuple[list[str], list[str]]:
    key = f"datasets.{name}"
    if not path.is_file():
        return [_missing_file_problem(key, spec, path, working_dir)], []
    try:
        raw = read_cohort_csv(path, spec)
        frame = tidy_cohort(raw, spec, source=str(path))
    except (ValueError, FileNotFoundError) as error:
        # a message that already names its key (covariates) is not prefixed twice
        text = str(error)
        return [text if text.startswith("config key '") else f"config key '{key}': {text}"], []
    problems = cohort_frame_problems(frame, spec, source=str(path))
    # the analyses' needs only once the data themselves are sound
    problems = (problems
                or analysis_size_problems(frame, name=name, groups=spec.groups,
                                          source=str(path))
                or covariate_design_problems(frame, name=name, source=str(path)))
    if problems:
        return problems[:1], []
    return [], (cohort_frame_warnings(frame, spec, source=str(path))
                + follow_up_warnings(name, spec, frame["time"].to_numpy(float), path))


#: Length of one time unit in years (singular and plural spellings, any case).
UNIT_YEARS = {"day": 1 / 365.25, "week": 7 / 365.25, "month": 1 / 12, "year": 1.0}
#: Follow-up longer than this many years is implausible for a human cohort.
MAX_PLAUSIBLE_YEARS = 50.0
#: A horizon beyond this multiple of the largest follow-up leaves most bins empty.
FAR_HORIZON = 2.0


def follow_up_warnings(name: str, spec: CohortSpec, times, path) -> list[str]:
    """Warnings about the cohort's follow-up times against its time unit and horizon.

    Each names ``datasets.<name>.<key>``, the file and the fix, with the numbers: a
    largest follow-up beyond :data:`MAX_PLAUSIBLE_YEARS` years in ``time_unit`` (days
    labelled months: 1,800 "months"), a grid LNTE ``horizon`` below the median
    follow-up (most patients clipped there) or beyond :data:`FAR_HORIZON` times the
    largest (most bins hold no one). They read the private times, so they go to
    the user's terminal only, never into a release.
    """
    times = np.asarray(times, dtype=float)
    times = times[np.isfinite(times)]
    if times.size == 0:
        return []
    key, unit = f"datasets.{name}", spec.time_unit.strip().lower()
    longest, median = float(times.max()), float(np.median(times))
    out = []
    years = UNIT_YEARS.get(unit.rstrip("s"))
    if years is not None and longest * years > MAX_PLAUSIBLE_YEARS:
        out.append(f"{key}.time_unit: the largest follow-up in {path} is {longest:g} {unit} "
                   f"= {longest * years:.0f} years, implausible for a cohort of people; are "
                   f"the times in another unit? Set {key}.time_unit to it, or "
                   f"{key}.time_divisor to convert (now {spec.time_divisor:g})")
    if spec.horizon and spec.horizon < median:
        share = float((times > spec.horizon).mean())
        out.append(f"{key}.horizon: {spec.horizon:g} lies below the median follow-up "
                   f"{median:g} of {path}: grid LNTE clips {share:.0%} of the patients there; "
                   "set the study's planned end of follow-up, in the cohort's time unit")
    elif spec.horizon and spec.horizon > FAR_HORIZON * longest:
        # a table under a shipped cohort's name keeps that cohort's divisor (kidney: 30)
        divided = (f" (after dividing the table's times by {key}.time_divisor = "
                   f"{spec.time_divisor:g}; set it to 1 if they are in {unit or 'that unit'} "
                   "already)" if spec.time_divisor != 1 else "")
        out.append(f"{key}.horizon: {spec.horizon:g} is more than {FAR_HORIZON:g} times the "
                   f"largest follow-up {longest:g} of {path}{divided}: most of grid LNTE's "
                   "bins hold no one; is it in the cohort's time unit? Set the study's planned "
                   "end of follow-up")
    return out


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
                "largest follow-up time, which depends on the private data: its rows print "
                "true_epsilon = inf (not a DP release); set a public horizon, e.g. the "
                "study's planned end of follow-up")
        if spec.source not in CHECKED_SOURCES:
            continue
        problems, warnings = _table_problems(
            name, spec, cohort_table_path(raw_spec, workflow_dir, working_dir), working_dir)
        check.problems += problems
        check.warnings += warnings
    return check
