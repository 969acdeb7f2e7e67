"""Cohort keys of the Cox analysis (``rrr_survival.cox``): covariates and simulation.

``datasets.<name>.covariates`` names numeric, non-private columns that the cohort
table keeps for adjusted Cox models; ``datasets.<name>.simulation`` describes a
``source: simulation`` cohort drawn from a proportional-hazards model with known
hazard ratios (:func:`dprepro.data.cohorts.simulated_cox_cohort`). Their checks name
the configuration key, as every cohort check does
(:func:`dprepro.data.cohort_spec.cohort_config_problems`).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from dprepro.data.cohort_content import CORE_COLUMNS
from dprepro.data.cohorts import decimal_comma_hint, locate

__all__ = ["SIMULATION_DEFAULTS", "cohort_option_problems", "covariate_columns",
           "simulation_settings"]


def cohort_option_problems(key: str, spec: Mapping, columns) -> list[str]:
    """Problems of ``covariates`` and ``simulation`` in the cohort entry ``key``."""
    problems = []
    source = spec.get("source", "file")
    covariates = spec.get("covariates") or []
    if not isinstance(covariates, list | tuple) or not all(
            isinstance(c, str) and c for c in covariates):
        problems.append(f"config key '{key}.covariates': got {covariates!r}, expected a list "
                        "of column names")
    elif len(set(covariates)) != len(covariates) or set(covariates) & set(
            (columns or {}).values() if isinstance(columns, Mapping) else ()):
        problems.append(f"config key '{key}.covariates': got {list(covariates)}; each column "
                        "once, and none of the id, time, status or group columns")
    elif set(covariates) & set(CORE_COLUMNS):
        # the cohort table's own columns: a covariate of that name would overwrite one
        clash = sorted(set(covariates) & set(CORE_COLUMNS))
        problems.append(f"config key '{key}.covariates': {clash} are names of the cohort "
                        f"table's own columns {list(CORE_COLUMNS)}; rename that column of "
                        "your table (e.g. 'event' -> 'event_count') and list the new name")
    if covariates and source in ("synthetic", "cbioportal", "simulation"):
        problems.append(f"config key '{key}.covariates': source {source!r} has no covariate "
                        "columns (covariates are read from file, bundled, url and package "
                        "tables)")
    problems += _simulation_problems(key, spec)
    return problems


#: Defaults of ``datasets.<name>.simulation`` (source ``simulation``).
SIMULATION_DEFAULTS = {"n": 300, "hazard_ratios": [], "baseline_rate": 0.1,
                       "censoring_rate": 0.05, "follow_up": 0, "stream": ""}


def simulation_settings(options: Mapping) -> dict:
    """``datasets.<name>.simulation`` with its defaults filled in."""
    return {**SIMULATION_DEFAULTS, **dict(options or {})}


def _simulation_problems(key: str, spec: Mapping) -> list[str]:
    sim = spec.get("simulation") or {}
    if spec.get("source") != "simulation":
        # the schema fills the defaults into every cohort: only other values are an error
        changed = simulation_settings(sim) != SIMULATION_DEFAULTS
        return [f"config key '{key}.simulation': set, but source is "
                f"{spec.get('source', 'file')!r}; it describes a source: simulation cohort"
                ] if changed else []
    sim = simulation_settings(sim)
    groups = list(spec.get("groups") or [])
    ratios = list(sim["hazard_ratios"] or [])
    problems = []
    if len(ratios) != len(groups) or not all(
            isinstance(h, int | float) and not isinstance(h, bool) and h > 0 for h in ratios):
        problems.append(f"config key '{key}.simulation.hazard_ratios': got {ratios}, expected "
                        f"one number > 0 per configured group {groups} (the first 1)")
    elif ratios[0] != 1:
        problems.append(f"config key '{key}.simulation.hazard_ratios': the first group's "
                        f"ratio is the reference and must be 1, got {ratios[0]}")
    n = sim["n"]
    if isinstance(n, bool) or not isinstance(n, int) or n < 2 * max(len(groups), 1):
        problems.append(f"config key '{key}.simulation.n': got {n!r}, expected an integer of "
                        "at least 2 patients per group")
    return problems


def covariate_columns(frame: pd.DataFrame, *, name: str, covariates, source: str,
                      ids=None) -> pd.DataFrame:
    """The declared covariates as floats; a missing, non-numeric or incomplete column
    raises naming ``datasets.<name>.covariates`` and the rows' ``ids`` (else their row
    numbers, :func:`dprepro.data.cohorts.locate`)."""
    key = f"datasets.{name}.covariates"
    missing = [c for c in covariates if c not in frame.columns]
    if missing:
        raise ValueError(f"config key '{key}': column(s) {missing} not in {source} (have "
                         f"{[str(c) for c in frame.columns]})")
    out = {}
    for column in covariates:
        values = pd.to_numeric(frame[column], errors="coerce")
        bad = values.isna() & frame[column].notna()
        if bad.any():
            found = sorted(set(frame[column][bad].astype(str)))[:5]
            words = all(any(ch.isalpha() for ch in v) for v in found)
            hint = decimal_comma_hint(found) or (
                "; a column of categories enters the Cox model as 0/1 indicator columns: "
                "add one per category but a reference one to the table and list those"
                if words else "")
            raise ValueError(f"config key '{key}': column {column!r} of {source} is not "
                             f"numeric (values {found}, {locate(bad, ids)}){hint}")
        if values.isna().any():
            raise ValueError(f"config key '{key}': column {column!r} of {source} has "
                             f"missing values ({locate(values.isna(), ids)}); the Cox models "
                             "need every value: fill them in, or remove those rows")
        infinite = ~np.isfinite(values.to_numpy(float))
        if infinite.any():
            raise ValueError(f"config key '{key}': column {column!r} of {source} has "
                             f"infinite values ({locate(infinite, ids)}); the Cox models "
                             "need finite numbers: fix those values, or remove those rows")
        out[column] = values.astype(float)
    return pd.DataFrame(out, index=frame.index)
