r"""What a cohort's rows must hold: the checks of a tidy cohort shared by every caller.

A tidy cohort (``id, group, time, event`` and the declared covariates,
:func:`dprepro.data.cohort_spec.tidy_cohort`) is checked in three places with the same
messages: before any job for tables on disk (:mod:`dprepro.data.cohort_checks`), by the
cohort's job for downloaded, generated and package tables
(:func:`dprepro.data.cohort_spec.build_cohort`), and by the analysis jobs that read it.
Each message names the key ``datasets.<name>.<key>``, the file and the fix.

* :func:`cohort_frame_problems`: faults of the data whatever is run on them — every
  patient in one group, an id whose rows name different groups, more rows per id than
  ``rows_per_person``, no event at all.
* :func:`analysis_size_problems`: too few events for the analyses ``rrr_survival`` runs
  on every cohort. The Cox models (:mod:`dprepro.studies.rrr_survival.cox`) fit
  :math:`k - 1` group coefficients plus one per covariate, and need at least
  :data:`EVENTS_PER_COEFFICIENT` events per coefficient,

  .. math:: E \ge 10\,(k - 1 + p),

  the rule of thumb of [Ped95]_ (fewer events per coefficient bias the estimates
  and their confidence intervals). Every event is at most one patient, so the
  bound holds for patients too.
* :func:`covariate_design_problems`: covariates the Cox models cannot estimate — one
  with the same value for everyone (the baseline hazard absorbs it), or one that is a
  linear function of the group and the covariates before it (a dose column restating
  the arm): the model's information matrix is singular and every fit of the cohort is
  undefined.
* :func:`cohort_frame_warnings`: what a run may go on with but a user must hear of.

References
----------
.. [Ped95] P. Peduzzi, J. Concato, A. R. Feinstein, T. R. Holford (1995). Importance
   of events per independent variable in proportional hazards regression analysis.
   II. Accuracy and precision of regression estimates. J. Clin. Epidemiol. 48,
   1503–1510.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = [
    "COLLINEAR_TOLERANCE",
    "CORE_COLUMNS",
    "EVENTS_PER_COEFFICIENT",
    "analysis_size_problems",
    "require_analysable",
    "cohort_frame_problems",
    "cohort_frame_warnings",
    "covariate_design_problems",
    "covariates_of",
    "single_group_message",
]

#: Events per Cox coefficient a cohort needs at least ([Ped95]_).
EVENTS_PER_COEFFICIENT = 10
#: Columns of a cohort table that are not covariates (``data_origin``: added by its job).
CORE_COLUMNS = ("id", "group", "time", "event", "data_origin")
#: A covariate is a linear function of the group and the covariates before it when what
#: is left of it after regressing it on them has a norm below this share of its spread.
COLLINEAR_TOLERANCE = 1e-8


def single_group_message(spec, present) -> str:
    """The error of a cohort whose patients are all in one group (or none)."""
    return (f"config key 'datasets.{spec.name}.columns.group': every patient of cohort "
            f"{spec.name!r} is in group(s) {list(present)}; the study compares groups, so at "
            "least two must have patients: check the group column (or group_indicators) and "
            "the groups the table holds")


def _in(source: str) -> str:
    return f" of {source}" if source else ""


def cohort_frame_problems(frame: pd.DataFrame, spec, *, source: str = "") -> list[str]:
    """Faults of a tidy cohort's data, whatever analysis reads it.

    Parameters
    ----------
    frame : pandas.DataFrame
        ``id, group, time, event`` (as :func:`dprepro.data.cohort_spec.tidy_cohort`
        returns it).
    spec : CohortSpec
        The cohort's configuration (``name``, ``rows_per_person``, ``columns``).
    source : str
        The file or package it was read from, named in every message.

    Returns
    -------
    list of str
        At most one problem per kind, in the order: one group only, an id in several
        groups, more rows per id than ``rows_per_person``, every row censored.
    """
    key, where = f"datasets.{spec.name}", _in(source)
    present = sorted(set(frame["group"].astype(str)))
    if len(present) < 2:
        return [single_group_message(spec, present)]
    problems = []
    groups_per_id = frame.groupby("id")["group"].nunique()
    split = groups_per_id[groups_per_id > 1]
    if len(split):
        first = split.index[0]
        both = sorted(set(frame.loc[frame["id"] == first, "group"].astype(str)))
        problems.append(
            f"config key '{key}.columns.group': {len(split)} id(s){where} have rows in "
            f"different groups, e.g. id {first!r} in {both}"
            + (f" (ids {split.index[:5].tolist()})" if len(split) > 1 else "") + "; "
            "each person has one group (randomized response releases it once per "
            f"{spec.privacy_unit}): fix the group or id column of those rows")
    per_id = frame.groupby("id").size()
    if int(per_id.max()) > spec.rows_per_person:
        problems.append(
            f"config key '{key}.rows_per_person': id {per_id.idxmax()!r}{where} has "
            f"{int(per_id.max())} rows but rows_per_person is {spec.rows_per_person}; raise "
            "it (it bounds the sensitivity of count releases) or fix the ids")
    if not (frame["event"] == 1).any():
        problems.append(
            f"config key '{key}.event_values': every row{where} is censored (no event): "
            "survival curves stay at 1 and log-rank tests and Cox models are undefined; if "
            "some status values mean an event, list them in event_values "
            f"(now {list(spec.event_values)}), else the cohort cannot be analysed")
    return problems


def covariates_of(frame: pd.DataFrame) -> list[str]:
    """The covariate columns of a cohort table: every column but :data:`CORE_COLUMNS`."""
    return [str(c) for c in frame.columns if c not in CORE_COLUMNS]


def analysis_size_problems(frame: pd.DataFrame, *, name: str, groups,
                           source: str = "") -> list[str]:
    r"""Too few events for the Cox models ``rrr_survival`` fits on every cohort.

    ``E`` events (rows with ``event == 1``) must reach
    :math:`\text{EVENTS\_PER\_COEFFICIENT} \cdot (k - 1 + p)`, with ``k`` the
    configured groups (the label set of every release; the groups present when none
    is configured) and ``p`` the covariates the table holds (:func:`covariates_of`)
    (Peduzzi et al. 1995, see the module docstring).

    Returns
    -------
    list of str
        One problem naming ``datasets.<name>.groups``, the counts, the threshold and the
        fixes; empty when the cohort is large enough.
    """
    k = len(groups) if len(groups) else frame["group"].nunique()
    covariates = covariates_of(frame)
    coefficients = max(k - 1, 1) + len(covariates)
    needed = EVENTS_PER_COEFFICIENT * coefficients
    events = int((frame["event"] == 1).sum())
    if events >= needed:
        return []
    patients = int(frame["id"].nunique()) if "id" in frame else len(frame)
    return [
        f"config key 'datasets.{name}.groups': cohort {name!r}{_in(source)} has {events} "
        f"events among {patients} patients, too few for the Cox models fitted on every "
        f"rrr_survival cohort: k - 1 = {k - 1} group coefficient(s) + {len(covariates)} "
        f"covariate(s) need at least {EVENTS_PER_COEFFICIENT} events each "
        f"(dprepro.data.cohort_content.EVENTS_PER_COEFFICIENT, Peduzzi et al. 1995), "
        f"{needed} in all; bring a larger cohort, merge groups (group_aliases; fewer "
        "groups, fewer coefficients) or drop covariates, or take the cohort out of "
        "rrr_survival.datasets"]


def covariate_design_problems(frame: pd.DataFrame, *, name: str, source: str = "") -> list[str]:
    r"""Covariates the Cox models of ``rrr_survival`` cannot estimate.

    A covariate with one value for every row is absorbed by the baseline hazard; one
    that is a linear function of the group indicators (of the groups present) and the
    covariates listed before it, within :data:`COLLINEAR_TOLERANCE` of its spread, cannot
    be told apart from them. Either makes the information matrix singular, so every fit
    of the cohort, the non-private reference included, would be undefined (NaN).

    Returns
    -------
    list of str
        At most one problem, naming ``datasets.<name>.covariates``, the column and the fix.
    """
    covariates = covariates_of(frame)
    key = f"config key 'datasets.{name}.covariates'"
    for column in covariates:
        values = frame[column].to_numpy(float)
        if values.size and np.ptp(values) == 0:
            return [f"{key}: column {column!r}{_in(source)} has the value {values[0]:g} for "
                    "every row: the Cox model's baseline hazard absorbs a constant, so its "
                    f"coefficient is undefined; take {column!r} out of the list"]
    groups = frame["group"].astype(str).to_numpy()
    present = sorted(set(groups))
    basis = [np.ones(len(frame))] + [(groups == g).astype(float) for g in present[1:]]
    for i, column in enumerate(covariates):
        values = frame[column].to_numpy(float)
        # the group alone first, so the message names only what the column restates
        for used, what in ((len(present), "the group"),
                           (len(basis), f"the group and the covariates {covariates[:i]}")):
            if _spanned(values, basis[:used]):
                return [f"{key}: column {column!r}{_in(source)} is a linear function of "
                        f"{what} (e.g. a dose column that restates the arm), so the Cox "
                        "model cannot tell their effects apart and every fit is undefined; "
                        f"take {column!r} out of the list"]
        basis.append(values)
    return []


def _spanned(values: np.ndarray, basis: list) -> bool:
    """Whether ``values`` is a linear combination of the columns ``basis``, to within
    :data:`COLLINEAR_TOLERANCE` of its spread."""
    design = np.column_stack(basis)
    fitted = design @ np.linalg.lstsq(design, values, rcond=None)[0]
    return bool(np.linalg.norm(values - fitted)
                <= COLLINEAR_TOLERANCE * np.linalg.norm(values - values.mean()))


def require_analysable(frame: pd.DataFrame, *, name: str, groups, source: str = "") -> None:
    """Raise ``ValueError`` with the first of :func:`analysis_size_problems` and
    :func:`covariate_design_problems`: an analysis job's own check of a cohort no check
    before the run could read (downloaded, generated or package tables)."""
    problems = (analysis_size_problems(frame, name=name, groups=groups, source=source)
                or covariate_design_problems(frame, name=name, source=source))
    if problems:
        raise ValueError(problems[0])


def cohort_frame_warnings(frame: pd.DataFrame, spec, *, source: str = "") -> list[str]:
    """What a run goes on with but a user must hear of: a configured group no patient has
    (it stays a label of every release: the label set is public, see
    :func:`dprepro.data.cohort_spec.group_order`), and a group whose patients are all
    censored (its median is not reached and its hazard ratio has no finite estimate)."""
    where = f" in {source}" if source else ""
    present = set(frame["group"].astype(str))
    warnings = [f"datasets.{spec.name}.groups: configured group {group!r} has no patient"
                f"{where}; it stays one of the k = {len(spec.groups)} labels every release "
                "randomises over (the label set is public), with a zero true count"
                for group in spec.groups if group not in present]
    events = frame.groupby(frame["group"].astype(str))["event"].sum()
    warnings += [f"datasets.{spec.name}.groups: every patient of group {group!r}{where} is "
                 "censored: its median is not reached and its hazard ratio has no finite "
                 "estimate (tables say so); merge it with another group (group_aliases) if "
                 "that is not what you meant"
                 for group in [*spec.groups, *sorted(present - set(spec.groups))]
                 if group in present and events.get(group, 0) == 0]
    return warnings
