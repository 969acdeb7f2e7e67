"""The output tables of ``rrr_survival``: one library function per table file.

Each function takes the rule's inputs (release files) and options and returns
``(table, records)``: the table and the privacy records of its releases, each
rebuilt from the mechanism object (:func:`dprepro.studies.rrr_survival.releases.release_record`);
one that computes something other rules read as well returns a third item,
``{output name: frame}``, written as Parquet to the rule's output of that name.
The step script ``scripts/rrr_tables.py`` only looks the function up in
:data:`TABLES` by the table's name.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dprepro.runtime.io import read_table
from dprepro.runtime.privacy_record import PrivacyRecord
from dprepro.studies.rrr_survival.aggregate import (
    SUPPORT_MIN_AT_RISK,
    band_table,
    curve_table,
    logrank_table,
    median_table,
    rejection_table,
    sup_distances,
    utility_table,
)
from dprepro.studies.rrr_survival.releases import PRIVACY_COLUMNS, release_record, table_privacy

#: Group label columns, read as text from CSV (a group called 0 stays "0").
GROUP_COLUMNS = ("group", "group_a", "group_b")

__all__ = ["DISTANCE_KEYS", "GROUP_COLUMNS", "TABLES", "distances_by_release", "km_bands",
           "km_curves", "logrank_rejection_rate", "median_survival", "pairwise_logrank_table",
           "records_of_releases", "sidecar_privacy", "utility"]


def _key(release) -> tuple:
    return (release["dataset"], release["mechanism"], release["epsilon"],
            release.get("calibration", ""))


def _load(paths, releases) -> dict:
    return {_key(r): read_table(path, text_columns=GROUP_COLUMNS)
            for r, path in zip(releases, paths, strict=True)}


def _load_draw0(paths, releases) -> dict:
    """Draw 0 of every release's curves: Parquet's row filter skips the other draws' rows
    (most of each file), the rows kept and their order are those of the whole file."""
    return {_key(r): read_table(path, filters=[("draw", "==", 0)])
            for r, path in zip(releases, paths, strict=True)}


def _infos(releases, medians: dict) -> dict:
    """Dataset, origin, group order and privacy record of every release.

    The group order of a dataset is the original's where the table reads it,
    else the releases' (the bands table reads released data only).
    """
    labels = {}
    for r in sorted(releases, key=lambda r: r["mechanism"] != "original"):
        labels.setdefault(r["dataset"], list(dict.fromkeys(medians[_key(r)]["group"])))
    infos = {}
    for r in releases:
        record = release_record(r["mechanism"], epsilon=r["epsilon"], labels=labels[r["dataset"]],
                                calibration=r["calibration"],
                                privacy_unit=r.get("privacy_unit", "patient"))
        infos[_key(r)] = {"dataset": r["dataset"], "data_origin": r["data_origin"],
                          "labels": labels[r["dataset"]], "record": record,
                          "privacy": record.columns(PRIVACY_COLUMNS)}
    return infos


def records_of_releases(releases, medians_paths) -> list[PrivacyRecord]:
    """The privacy records of ``releases`` (group alphabets read from their medians files)."""
    infos = _infos(releases, _load(medians_paths, releases))
    return [i["record"] for i in infos.values()]


def _original(frames: dict, dataset: str) -> pd.DataFrame:
    return frames[(dataset, "original", None, "")]


def median_survival(inputs, *, releases, **_) -> tuple[pd.DataFrame, list]:
    """``median_survival.csv`` (:func:`median_table`) from the releases' medians files."""
    medians = _load(inputs["medians"], releases)
    infos = _infos(releases, medians)
    return (median_table((infos[k], f) for k, f in medians.items()),
            [i["record"] for i in infos.values()])


def pairwise_logrank_table(inputs, *, releases, logrank_releases, **_):
    """``pairwise_logrank.csv`` (:func:`logrank_table`)."""
    infos = _infos(releases, _load(inputs["medians"], releases))
    logrank = _load(inputs["logrank"], logrank_releases)
    return (logrank_table((infos[k], f) for k, f in logrank.items()),
            [i["record"] for i in infos.values()])


def logrank_rejection_rate(inputs, *, releases, logrank_releases, significance, **_):
    """``logrank_rejection_rate.csv`` (:func:`rejection_table`)."""
    infos = _infos(releases, _load(inputs["medians"], releases))
    logrank = _load(inputs["logrank"], logrank_releases)
    table = rejection_table(((infos[k], f, _original(logrank, k[0])) for k, f in logrank.items()
                             if k[1] != "original"), significance=significance)
    return table, [i["record"] for i in infos.values()]


def _private_keys(curves: dict) -> list:
    return [k for k in curves if k[1] != "original"]


#: Key columns of the sup-distance table (:func:`utility`), one row per release, draw, group.
DISTANCE_KEYS = ("dataset", "mechanism", "epsilon", "calibration")


def utility(inputs, *, releases, **_):
    """``utility.csv`` (:func:`utility_table`), and the per-draw sup-distances behind it.

    Returns ``(table, records, {"distances": frame})``: the frame holds
    :func:`~dprepro.studies.rrr_survival.aggregate.sup_distances` of every private release
    (key columns :data:`DISTANCE_KEYS`), so the claims read the scores
    instead of reading every curve file and computing them again
    (:func:`distances_by_release`).
    """
    medians = _load(inputs["medians"], releases)
    infos = _infos(releases, medians)
    curves = _load(inputs["curves"], releases)
    scores = {k: sup_distances(curves[k], _original(curves, k[0]),
                               min_at_risk=SUPPORT_MIN_AT_RISK) for k in _private_keys(curves)}
    table = utility_table((infos[k], curves[k], medians[k], _original(curves, k[0]),
                           _original(medians, k[0]), scores[k]) for k in scores)
    # no ε (the noise-free grid reference): NaN, read back as None
    distances = pd.concat([frame.assign(dataset=k[0], mechanism=k[1],
                                        epsilon=np.nan if k[2] is None else float(k[2]),
                                        calibration=k[3])
                           for k, frame in scores.items()], ignore_index=True)
    distances = distances[[*DISTANCE_KEYS, *(c for c in distances if c not in DISTANCE_KEYS)]]
    return table, [i["record"] for i in infos.values()], {"distances": distances}


def distances_by_release(path) -> dict:
    """The sup-distance table written with ``utility.csv`` (:func:`utility`), split by
    release key ``(dataset, mechanism, epsilon, calibration)`` as :func:`sup_distances`
    returned it (same rows, order and values)."""
    table = read_table(path)
    frames = {}
    for key, frame in table.groupby(list(DISTANCE_KEYS), sort=False, dropna=False):
        dataset, mechanism, epsilon, calibration = key
        epsilon = None if pd.isna(epsilon) else float(epsilon)
        frames[(dataset, mechanism, epsilon, calibration)] = (
            frame.drop(columns=list(DISTANCE_KEYS)).reset_index(drop=True))
    return frames


def km_bands(inputs, *, releases, band_level, **_):
    """``km_bands.csv`` (:func:`band_table`), from privatised releases only.

    Its quantiles are taken over many draws of each mechanism, so the table is a
    non-private reference (:func:`sidecar_privacy`), not a release.
    """
    infos = _infos(releases, _load(inputs["medians"], releases))
    curves = _load(inputs["curves"], releases)
    table = band_table(((infos[k], curves[k]) for k in _private_keys(curves)), level=band_level)
    return table, [i["record"] for i in infos.values()]


def km_curves(inputs, *, releases, **_):
    """``km_curves.csv`` (:func:`curve_table`): draw 0 of every release, the data of Figure 2."""
    infos = _infos(releases, _load(inputs["medians"], releases))
    curves = _load_draw0(inputs["curves"], releases)
    return (curve_table((infos[k], f) for k, f in curves.items()),
            [i["record"] for i in infos.values()])


#: Tables summarising many independent draws of each mechanism (not a single release).
OVER_DRAWS = frozenset({"km_bands"})


def sidecar_privacy(name: str, records, *, draws: int | None = None, **_) -> dict:
    """The sidecar ``privacy`` entry of table ``name`` (:func:`table_privacy`).

    A table in :data:`OVER_DRAWS` summarises ``draws`` draws of each
    mechanism, so it is a reference whose note states the composed budget.
    """
    return table_privacy(records, draws=draws if name in OVER_DRAWS else None)


#: Table file stem -> the function that builds it from the rule's inputs.
#: Each returns ``(table, records)``: the table and the privacy records of its releases
#: (and, :func:`utility`, ``{output name: frame}`` of further outputs).
TABLES = {
    "median_survival": median_survival,
    "pairwise_logrank": pairwise_logrank_table,
    "logrank_rejection_rate": logrank_rejection_rate,
    "utility": utility,
    "km_bands": km_bands,
    "km_curves": km_curves,
}
