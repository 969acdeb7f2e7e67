"""The rrr_survival releases: each mechanism at its calibration, and the privacy columns of the
tables built on them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace

import pandas as pd

from dprepro.mechanisms.identity import identities
from dprepro.runtime.privacy_record import PrivacyRecord, non_private, provenance_of

__all__ = [
    "ORIGINAL",
    "PRIVACY_COLUMNS",
    "TABLE_PRIVACY_COLUMNS",
    "epsilon_scope",
    "scoped_columns",
    "privacy_columns",
    "release_mechanism",
    "release_record",
    "records_from_tables",
    "table_privacy",
]

#: The record of the non-private reference (the original data).
ORIGINAL = non_private("non-private reference", mechanism="original",
                       extra={"calibration": ""})



#: Bootstrap resamples of the debiased-RRR median interval (draw 0).
DEBIASED_RESAMPLES = 200


def release_mechanism(mechanism: str, *, epsilon: float | None, labels, calibration: str):
    """The mechanism object of one release (``None`` for the original data).

    Parameters
    ----------
    mechanism : {"original", "rrr", "lnte"}
    epsilon : float or None
        Stated ε (``None`` for the original).
    labels : sequence
        The cohort's groups in display order (RRR's output alphabet).
    calibration : str
        RRR's ε↔p calibration (ignored by LNTE).
    """
    if mechanism == "original":
        return None
    built = {entry.name: entry.build for entry in identities("rrr_survival")
             if entry.build is not None}
    if mechanism not in built:
        raise ValueError(f"unknown mechanism {mechanism!r}; expected original or one of "
                         f"{sorted(built)} (dprepro.mechanisms.registry)")
    return built[mechanism](None if epsilon is None else float(epsilon), tuple(labels),
                            calibration)


#: Privacy columns of every rrr_survival table, in order.
PRIVACY_COLUMNS = ["mechanism", "epsilon", "calibration", "true_epsilon", "privacy_unit",
                   "privacy_note"]
#: The same with ``epsilon_scope`` after ``true_epsilon``: the columns of a table row,
#: which may summarise many draws (:func:`epsilon_scope`).
TABLE_PRIVACY_COLUMNS = [*PRIVACY_COLUMNS[:4], "epsilon_scope", *PRIVACY_COLUMNS[4:]]


def epsilon_scope(true_epsilon: float, draws: int) -> str:
    r"""What a table row's ``true_epsilon`` covers: one draw, or a summary of many.

    A row built from ``draws`` > 1 independent draws of a mechanism on the same
    persons (the over-draws medians, rejection rates, utility, bands) is no release:
    publishing it would spend :math:`N \cdot \varepsilon` (basic composition; and a
    majority vote over N RRR draws recovers each label), while ``true_epsilon``
    states one draw's. This column says which a row is, so no row's ε is read as
    more than it covers.
    """
    if math.isnan(true_epsilon):
        return "non-private reference"
    if draws <= 1:
        return "one draw"
    return (f"summary of {draws} independent draws: {draws} × true_epsilon together "
            "(not a release)")


def scoped_columns(privacy: Mapping, draws: int) -> dict:
    """A row's :data:`PRIVACY_COLUMNS` and its ``epsilon_scope``, in table order."""
    scope = epsilon_scope(float(privacy["true_epsilon"]), int(draws))
    return {key: scope if key == "epsilon_scope" else privacy[key]
            for key in TABLE_PRIVACY_COLUMNS}


def release_record(mechanism: str, *, epsilon: float | None, labels, calibration: str,
                   privacy_unit: str = "patient") -> PrivacyRecord:
    """The privacy record of one release, stated by the mechanism object that ran it.

    ``privacy_unit`` is the cohort's person (one RRR draw per person); the
    original's record names it too, as the unit its rows are compared on.
    """
    obj = release_mechanism(mechanism, epsilon=epsilon, labels=labels, calibration=calibration)
    if obj is None:
        return replace(ORIGINAL, privacy_unit=privacy_unit)
    return obj.privacy_record(privacy_unit=privacy_unit)


def privacy_columns(mechanism: str, epsilon: float | None, k: int, calibration: str,
                    privacy_unit: str = "patient") -> dict:
    """The privacy columns every table row carries (:data:`PRIVACY_COLUMNS`).

    ``k`` stands for the number of groups; the RRR record depends on the
    labels only through k.
    """
    labels = tuple(range(int(k))) if mechanism in ("rrr", "rrr_debiased") else ()
    return release_record(mechanism, epsilon=epsilon, labels=labels, calibration=calibration,
                          privacy_unit=privacy_unit).columns(PRIVACY_COLUMNS)


def records_from_tables(tables) -> list[PrivacyRecord]:
    """The privacy records of the releases in tables, rebuilt from the mechanism objects.

    Each distinct (dataset, mechanism, epsilon, calibration) of a table with
    the study's columns gives one record; the groups of a dataset (RRR's
    alphabet) are those the table lists for it. What a table's privacy
    columns must equal.
    """
    records = []
    for table in tables:
        for _, rows in table.groupby("dataset", sort=False):
            labels = list(dict.fromkeys(rows["group"])) if "group" in rows else list(
                dict.fromkeys(pd.concat([rows["group_a"], rows["group_b"]])))
            keys = rows[["mechanism", "epsilon", "calibration"]].drop_duplicates()
            for mechanism, epsilon, calibration in keys.itertuples(index=False):
                unit = rows["privacy_unit"].iloc[0] if "privacy_unit" in rows else "patient"
                record = release_record(
                    mechanism, epsilon=None if pd.isna(epsilon) else float(epsilon),
                    labels=labels, calibration="" if pd.isna(calibration) else calibration,
                    privacy_unit=unit)
                if record not in records:
                    records.append(record)
    return records


def table_privacy(records, *, compares_with_original: bool = False,
                  job_reads_original: bool = False, draws: int | None = None) -> dict:
    """Sidecar ``privacy`` entry of a table or figure mixing releases.

    It is a release only if every row is privatised, nothing is compared
    with the original data and each row comes from one draw of its mechanism.
    One row of the original (or a statistic against it,
    ``compares_with_original``: utility, figures drawn over the original
    curves) makes it a non-private reference. So does a summary over
    ``draws`` > 1 independent draws of each mechanism (the bands): each draw
    spends the mechanism's ε on the same persons, so publishing N of them
    composes to N·ε (and a majority vote over N RRR draws recovers each
    label); the rows' ``true_epsilon`` stays the single-draw value, which the
    note says. ``job_reads_original``: the file was made by a job that also reads
    the original data (a reference rule of the privacy boundary, such as a figure
    rule whose composite draws the original): not a release either, and the note
    says why, without claiming that this file shows the original.
    """
    records = list(records)
    entry = provenance_of(records)
    over_draws = draws is not None and draws > 1
    release = (all(r.release for r in records) and not compares_with_original
               and not over_draws and not job_reads_original)
    if release:
        note = "built from privatised releases only"
    elif compares_with_original:
        note = "non-private reference: holds or compares with the original data"
        if any(r.mechanism == "original" for r in records):
            note += " (mechanism = original)"
    elif job_reads_original and all(r.release for r in records):
        note = ("not flagged as a release: drawn by a job that also reads the original data "
                "(a reference rule of the privacy boundary); the file draws the privatised "
                "release(s) in records")
    else:
        note = "non-private reference"
    if over_draws:
        note += (f"; quantiles over {draws} independent draws of each mechanism: a summary for "
                 f"the reader, not a release; publishing it would compose to {draws}·ε "
                 "(true_epsilon columns state the single-draw value)")
    return {"release": release, "note": note, "records": entry["records"]}
