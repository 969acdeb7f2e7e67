"""cBioPortal clinical data: download, long-to-wide, IPSS-R survival table.

The ``rrr_survival`` study uses the IPSS-R cohort of cBioPortal study
``mds_iwg_2022`` (data licence ODbL 1.0). Its REST endpoint

``{base}/api/studies/{study}/clinical-data?clinicalDataType=PATIENT|SAMPLE&projection=DETAILED``

returns a JSON list in *long* format, one object per (entity, attribute)::

    {"uniqueSampleKey": "...", "uniquePatientKey": "...",
     "sampleId": "S-1", "patientId": "P-1", "studyId": "mds_iwg_2022",
     "clinicalAttributeId": "IPSSR", "value": "Low",
     "clinicalAttribute": {"clinicalAttributeId": "IPSSR", "displayName": "...",
                           "description": "...", "datatype": "STRING",
                           "patientAttribute": false, "priority": "1",
                           "studyId": "mds_iwg_2022"}}

PATIENT records carry no ``sampleId``/``uniqueSampleKey``; values are always
strings (``"OS_MONTHS": "12.5"``); an empty value is usually absent rather
than ``"NA"``; ``clinicalAttribute`` appears only with ``projection=DETAILED``.
The default page size of the API (10,000,000 records) covers a whole study,
so no paging is needed.

The survival table uses the sample attribute ``IPSSR`` (category), the
patient attributes ``OS_MONTHS`` and ``OS_STATUS`` (``"0:LIVING"`` /
``"1:DECEASED"``). These names are module constants and function
parameters so that the configuration can follow a renamed attribute.
"""

from __future__ import annotations

import dataclasses
import difflib
import logging
import math
import re
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from dprepro.data.download import (
    DownloadRecord,
    _fetch_json_record,
    _utc_now,
    write_bytes_atomic,
    write_json_atomic,
)
from dprepro.data.download import sha256_file as _sha256_file

__all__ = [
    "DATA_TYPES",
    "DEFAULT_BASE",
    "GROUP_ATTRIBUTE",
    "LICENCE",
    "STATUS_ATTRIBUTE",
    "STUDY_ID",
    "TIME_ATTRIBUTE",
    "ClinicalDownload",
    "clinical_data_url",
    "clinical_long_to_wide",
    "fetch_clinical",
    "ipssr_survival_table",
    "parse_os_status",
    "raw_filename",
]

log = logging.getLogger(__name__)

DEFAULT_BASE = "https://www.cbioportal.org"
STUDY_ID = "mds_iwg_2022"
LICENCE = "ODbL 1.0 (Open Database License), cBioPortal"
DATA_TYPES = ("PATIENT", "SAMPLE")

GROUP_ATTRIBUTE = "IPSSR"
TIME_ATTRIBUTE = "OS_MONTHS"
STATUS_ATTRIBUTE = "OS_STATUS"

PATIENT_ID = "patientId"
SAMPLE_ID = "sampleId"
ATTRIBUTE_ID = "clinicalAttributeId"
VALUE = "value"

# Spellings of "no value" seen in cBioPortal study files; the importer drops
# most of them, but a mirror or an older import may still serve them.
MISSING_VALUES = frozenset(
    {
        "",
        "NA",
        "N/A",
        "NAN",
        "NULL",
        "NONE",
        "[NOT AVAILABLE]",
        "[UNKNOWN]",
        "[NOT APPLICABLE]",
        "[NOT EVALUATED]",
        "[DISCREPANCY]",
    }
)

# cBioPortal requires survival status values of the form "<0|1>:<label>".
_STATUS_RE = re.compile(r"^\s*([01])\s*:")


# --------------------------------------------------------------------------
# download
# --------------------------------------------------------------------------


def clinical_data_url(base: str, study_id: str, data_type: str) -> str:
    """Build the clinical-data endpoint URL of a cBioPortal instance.

    Parameters
    ----------
    base : str
        Portal root, e.g. ``https://www.cbioportal.org`` (a mirror or private
        instance may add a path). A trailing slash is removed.
    study_id : str
        cBioPortal study identifier, e.g. ``mds_iwg_2022``.
    data_type : {"PATIENT", "SAMPLE"}
        Clinical data level (case-insensitive).

    Returns
    -------
    str
        ``{base}/api/studies/{study}/clinical-data?clinicalDataType=...&projection=DETAILED``.

    Raises
    ------
    ValueError
        ``base`` is not an http(s) URL, ends in ``/api``, or ``study_id`` /
        ``data_type`` is invalid.
    """
    if not isinstance(base, str):
        raise ValueError(f"cBioPortal base must be a string URL, got {base!r}")
    root = base.strip().rstrip("/")
    parts = urllib.parse.urlsplit(root)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(
            f"cBioPortal base must be an http(s) URL such as {DEFAULT_BASE}, got {base!r}"
        )
    if parts.query or parts.fragment:
        raise ValueError(f"cBioPortal base must not contain a query or fragment: {base!r}")
    if parts.path.endswith("/api"):
        # The API path is appended here; a base ending in /api would give /api/api.
        raise ValueError(
            f"cBioPortal base should be the portal root without '/api': "
            f"use {root[: -len('/api')]!r} instead of {base!r}"
        )
    if not isinstance(study_id, str) or not study_id.strip():
        raise ValueError(f"study_id must be a non-empty string, got {study_id!r}")
    kind = str(data_type).upper()
    if kind not in DATA_TYPES:
        raise ValueError(f"data_type must be one of {DATA_TYPES}, got {data_type!r}")
    study = urllib.parse.quote(study_id.strip(), safe="")
    query = urllib.parse.urlencode({"clinicalDataType": kind, "projection": "DETAILED"})
    return f"{root}/api/studies/{study}/clinical-data?{query}"


@dataclasses.dataclass(frozen=True)
class ClinicalDownload:
    """Result of :func:`fetch_clinical`.

    Attributes
    ----------
    patient_records, sample_records : list of dict
        Parsed long-format records, as returned by the API.
    records : dict
        ``{"PATIENT": DownloadRecord, "SAMPLE": DownloadRecord}``.
    manifest : dict
        The content written to ``raw_dir/manifest.json``.
    manifest_path : str
        Where the manifest was written.
    """

    patient_records: list[dict[str, Any]]
    sample_records: list[dict[str, Any]]
    records: dict[str, DownloadRecord]
    manifest: dict[str, Any]
    manifest_path: str


def raw_filename(study_id: str, data_type: str) -> str:
    """Name of the raw JSON file kept for one clinical data level."""
    return f"{study_id}_{data_type.lower()}.json"


def fetch_clinical(
    base: str,
    study_id: str,
    raw_dir: str | Path,
    *,
    manifest_name: str = "manifest.json",
    retries: int = 4,
    backoff: float = 1.0,
    timeout: float = 120,
    sleep: Callable[[float], None] = time.sleep,
    opener: urllib.request.OpenerDirector | None = None,
    offline_hint: str | None = None,
) -> ClinicalDownload:
    """Download the PATIENT and SAMPLE clinical data of a study.

    The exact bytes received are kept as ``raw_dir/{study}_patient.json`` and
    ``raw_dir/{study}_sample.json`` (written atomically), and a manifest with
    URL, sha256, size and retrieval time of each is written atomically to
    ``raw_dir/<manifest_name>``.

    Parameters
    ----------
    base : str
        Portal root URL (see :func:`clinical_data_url`).
    study_id : str
        cBioPortal study identifier.
    raw_dir : path-like
        Folder for the raw downloads and the manifest (created if needed).
    manifest_name : str, default "manifest.json"
        File name of the manifest inside ``raw_dir`` (one per study when
        several studies share the folder).
    retries, backoff, timeout, sleep, opener, offline_hint
        Passed to :func:`dprepro.data.download.fetch_json`; truncated or invalid
        JSON is retried like any transient failure.

    Returns
    -------
    ClinicalDownload
        Records, download records and manifest.

    Raises
    ------
    dprepro.data.download.DownloadError
        The portal could not be reached or refused the request (e.g. unknown
        study: HTTP 404).
    ValueError
        The response is JSON but not a list of clinical-data objects.
    """
    raw_dir = Path(raw_dir)
    raw_dir.mkdir(parents=True, exist_ok=True)
    parsed: dict[str, list[dict[str, Any]]] = {}
    records: dict[str, DownloadRecord] = {}
    files: dict[str, dict[str, Any]] = {}
    fetched: dict[str, tuple[str, Any, bytes, int, str]] = {}
    # Fetch and validate both levels before writing anything, so a failure on
    # the second request never leaves a half-updated raw folder behind.
    for kind in DATA_TYPES:
        url = clinical_data_url(base, study_id, kind)
        data, raw, attempts = _fetch_json_record(
            url,
            retries=retries,
            backoff=backoff,
            timeout=timeout,
            sleep=sleep,
            opener=opener,
            offline_hint=offline_hint,
        )
        _check_records(data, kind, url)
        fetched[kind] = (url, data, raw, attempts, _utc_now())
    for kind, (url, data, raw, attempts, retrieved_at) in fetched.items():
        dest = raw_dir / raw_filename(study_id, kind)
        write_bytes_atomic(raw, dest)
        rec = DownloadRecord(
            url=url,
            path=str(dest),
            sha256=_sha256_file(dest),
            bytes=len(raw),
            attempts=attempts,
            retrieved_at=retrieved_at,
        )
        parsed[kind] = data
        records[kind] = rec
        files[kind] = {
            "file": dest.name,
            "url": url,
            "sha256": rec.sha256,
            "bytes": rec.bytes,
            "retrieved_at": rec.retrieved_at,
            "attempts": rec.attempts,
            "n_records": len(data),
        }
    manifest = {
        "source": "cBioPortal",
        "base": base.strip().rstrip("/"),
        "study_id": study_id,
        "licence": LICENCE,
        "files": files,
    }
    manifest_path = write_json_atomic(manifest, raw_dir / manifest_name)
    return ClinicalDownload(
        patient_records=parsed["PATIENT"],
        sample_records=parsed["SAMPLE"],
        records=records,
        manifest=manifest,
        manifest_path=str(manifest_path),
    )


def _check_records(data: Any, kind: str, source: str) -> None:
    if not isinstance(data, list):
        hint = ""
        if isinstance(data, dict) and "message" in data:
            hint = f" (server message: {data['message']!r})"
        raise ValueError(
            f"{kind} clinical data from {source} is a JSON {type(data).__name__}, expected a "
            f"list of clinical-data objects{hint}"
        )


# --------------------------------------------------------------------------
# long -> wide
# --------------------------------------------------------------------------


def clinical_long_to_wide(records: Sequence[dict[str, Any]], id_field: str) -> pd.DataFrame:
    """Pivot long-format clinical records into one row per entity.

    Parameters
    ----------
    records : sequence of dict
        cBioPortal clinical-data objects with at least ``id_field``,
        ``clinicalAttributeId`` and ``value``.
    id_field : {"patientId", "sampleId"}
        The entity identifier: ``patientId`` for PATIENT data, ``sampleId``
        for SAMPLE data.

    Returns
    -------
    pandas.DataFrame
        Column ``id_field`` first, then ``patientId`` when pivoting samples
        (the sample-to-patient link), then one column per attribute, sorted by
        name; values stay strings (missing: NaN); rows sorted by ``id_field``.

    Raises
    ------
    ValueError
        ``records`` is not a list of objects, an object lacks a required key
        (the message names it and the record), a sample maps to two patients,
        or one entity has two different values for an attribute.
    """
    if isinstance(records, (str, bytes, dict)) or not isinstance(records, Iterable):
        raise ValueError(
            f"clinical records must be a list of objects, got {type(records).__name__}"
        )
    records = list(records)
    if not records:
        raise ValueError("no clinical records to pivot (empty list)")
    required = [id_field, ATTRIBUTE_ID, VALUE]
    link = PATIENT_ID if id_field != PATIENT_ID else None
    for i, rec in enumerate(records):
        if not isinstance(rec, dict):
            raise ValueError(
                f"clinical record {i} is a {type(rec).__name__}, expected a JSON object"
            )
        for key in required:
            if key not in rec:
                raise ValueError(
                    f"clinical record {i} lacks key {key!r} (keys present: "
                    f"{sorted(rec)}); is this cBioPortal clinical-data JSON"
                    f"{' at SAMPLE level' if id_field == SAMPLE_ID else ''}?"
                )
    cols = required + ([link] if link and any(link in r for r in records) else [])
    df = pd.DataFrame.from_records([{k: r.get(k) for k in cols} for r in records], columns=cols)
    df[id_field] = df[id_field].astype(str)

    dup = df.duplicated([id_field, ATTRIBUTE_ID], keep=False)
    if dup.any():
        clash = df[dup].groupby([id_field, ATTRIBUTE_ID])[VALUE].nunique(dropna=False)
        clash = clash[clash > 1]
        if not clash.empty:
            (ent, attr), _ = next(iter(clash.items()))
            raise ValueError(
                f"{id_field} {ent!r} has several different values for {attr!r}; "
                "the clinical data are ambiguous"
            )
    df = df.drop_duplicates([id_field, ATTRIBUTE_ID])

    wide = df.pivot(index=id_field, columns=ATTRIBUTE_ID, values=VALUE)
    wide = wide.reindex(columns=sorted(wide.columns))
    wide.columns.name = None
    if len(cols) == 4:
        links = df[[id_field, link]].dropna().drop_duplicates()
        bad = links[links.duplicated(id_field, keep=False)]
        if not bad.empty:
            ent = bad[id_field].iloc[0]
            raise ValueError(
                f"{id_field} {ent!r} is linked to several {link} values: "
                f"{sorted(bad.loc[bad[id_field] == ent, link])}"
            )
        wide.insert(0, link, links.set_index(id_field)[link].reindex(wide.index))
    wide = wide.sort_index().reset_index()
    return wide


# --------------------------------------------------------------------------
# survival table
# --------------------------------------------------------------------------


def _is_missing(value: Any, missing: Iterable[str] = MISSING_VALUES) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return str(value).strip().upper() in {str(m).strip().upper() for m in missing}


def parse_os_status(value: Any, missing: Iterable[str] = MISSING_VALUES) -> int | None:
    """Convert a cBioPortal survival status to an event indicator.

    Parameters
    ----------
    value : object
        ``"1:DECEASED"`` (or any ``"1:..."``) -> 1, ``"0:LIVING"`` (any
        ``"0:..."``) -> 0; a missing value -> None.

    Returns
    -------
    int or None

    Raises
    ------
    ValueError
        For a non-missing value without the ``0:``/``1:`` prefix that
        cBioPortal requires for status attributes.
    """
    if _is_missing(value, missing):
        return None
    m = _STATUS_RE.match(str(value))
    if m is None:
        raise ValueError(
            f"unrecognised survival status {value!r}: expected '0:LIVING' / '1:DECEASED' "
            "(cBioPortal's '<0|1>:<label>' coding)"
        )
    return int(m.group(1))


def _locate_attribute(name: str, level: str, tables: dict[str, pd.DataFrame],
                      parameter: str) -> str:
    """The level (PATIENT or SAMPLE) that holds ``name``: the configured one, else the other.

    Falling back is logged; an attribute in neither raises with similar names.
    """
    other = "SAMPLE" if level == "PATIENT" else "PATIENT"
    if name in tables[level].columns:
        return level
    if name in tables[other].columns:
        log.warning("clinical attribute %r is not in the %s data but in the %s data; using %s "
                    "(set its clinical type to %s in the configuration to silence this)",
                    name, level, other, other, other)
        return other
    present = sorted({str(c) for t in tables.values() for c in t.columns
                      if c not in (PATIENT_ID, SAMPLE_ID)})
    close = difflib.get_close_matches(name, present, n=5, cutoff=0.6)
    # Also list attributes sharing the name as a substring (IPSSR -> IPSSR_SCORE).
    close += [c for c in present if name.upper() in c.upper() and c not in close]
    msg = f"clinical attribute {name!r} not found in the {level} clinical data (nor in {other})"
    if close:
        msg += f"; similar attributes present: {', '.join(close[:8])}"
    else:
        msg += f"; attributes present: {', '.join(present[:30])}"
    msg += (f". If the attribute was renamed upstream, set its new name ({parameter}; the "
            "workflow reads it from datasets.<name>.cbioportal.attributes).")
    raise ValueError(msg)


def _per_patient(name: str, level: str, tables: dict[str, pd.DataFrame],
                 missing) -> tuple[pd.Series, dict[str, Any]]:
    """One value of ``name`` per patient (None = missing), and what the sample rule did.

    PATIENT level: the patient's value. SAMPLE level: the value of the
    patient's first sample by ``sampleId`` (sorted as text) that has one; a
    deterministic rule, so the same download gives the same cohort.
    Patients whose samples disagree are counted and logged.
    """
    frame = tables[level]
    if level == "PATIENT":
        p = frame[[PATIENT_ID, name]]
        p = p[~p[PATIENT_ID].map(lambda v: _is_missing(v, missing))]
        values = p.set_index(PATIENT_ID)[name].map(
            lambda v: None if _is_missing(v, missing) else str(v).strip())
        return values, {}
    s = frame[[PATIENT_ID, SAMPLE_ID, name]].copy()
    s = s[~s[PATIENT_ID].map(lambda v: _is_missing(v, missing))]
    s["_value"] = s[name].map(lambda v: None if _is_missing(v, missing) else str(v).strip())
    s = s.sort_values([PATIENT_ID, SAMPLE_ID], kind="mergesort")
    per_patient = s.groupby(PATIENT_ID, sort=True)
    n_multi = int((per_patient.size() > 1).sum())
    n_values = per_patient["_value"].nunique(dropna=True)
    conflicting = sorted(n_values[n_values > 1].index.astype(str))
    if conflicting:
        log.warning("%d patient(s) have samples with different %s values; using the first "
                    "sample by sampleId: %s", len(conflicting), name,
                    ", ".join(conflicting[:10]))
    values = s.dropna(subset=["_value"]).groupby(PATIENT_ID, sort=True)["_value"].first()
    seen = pd.Series(None, index=pd.Index(sorted(set(s[PATIENT_ID])), name=PATIENT_ID),
                     dtype=object)
    seen.loc[values.index] = values
    return seen, {"n_samples": int(len(s)), "n_patients_multiple_samples": n_multi,
                  "conflicting": conflicting}


def _table_summary(attributes: dict, used: dict, table: pd.DataFrame,
                   sample_wide: pd.DataFrame, kept: pd.DataFrame, dropped: dict,
                   group_info: dict) -> dict[str, Any]:
    """The summary of :func:`ipssr_survival_table` (``dropped``: its masks of the patients
    lacking the group, the time or the status, or with a negative time)."""
    miss_group, miss_time = dropped["group"], dropped["time"]
    neg_time, miss_status = dropped["negative_time"], dropped["status"]
    n_dropped = int((miss_group | miss_time | neg_time | miss_status).sum())
    summary: dict[str, Any] = {
        "attributes": attributes,
        "clinical_types": used,
        "n_patients": int(len(table)),
        "n_samples": int(len(sample_wide)),
        "n_kept": int(len(kept)),
        "n_dropped": n_dropped,
        # Reasons overlap: a patient missing both group and time counts in both.
        "n_dropped_missing_group": int(miss_group.sum()),
        "n_dropped_missing_time": int(miss_time.sum()),
        "n_dropped_negative_time": int(neg_time.sum()),
        "n_dropped_missing_status": int(miss_status.sum()),
        "n_patients_multiple_samples": int(group_info.get("n_patients_multiple_samples", 0)),
        "n_patients_conflicting_group": len(group_info.get("conflicting", [])),
        "conflicting_group_patients": group_info.get("conflicting", []),
        "sample_rule": "first sample by sampleId with a value",
        "n_events": int(kept["event"].sum()),
        "censored_fraction": (float(1 - kept["event"].mean()) if len(kept) else None),
        "group_counts": {
            str(k): int(v) for k, v in kept["group"].value_counts().sort_index().items()
        },
    }
    return summary


def _check_wide_tables(patient_wide: pd.DataFrame, sample_wide: pd.DataFrame,
                       types: dict[str, str]) -> None:
    """ValueError for a wide table without its id columns or a clinical type other than
    PATIENT/SAMPLE (``types``: attribute kind -> type)."""
    for frame, col, level in (
        (patient_wide, PATIENT_ID, "PATIENT"),
        (sample_wide, SAMPLE_ID, "SAMPLE"),
        (sample_wide, PATIENT_ID, "SAMPLE"),
    ):
        if col not in frame.columns:
            raise ValueError(
                f"the {level} table has no {col!r} column; pivot it with "
                "clinical_long_to_wide first"
            )
    for kind, level in types.items():
        if level not in DATA_TYPES:
            raise ValueError(f"{kind}_type must be one of {DATA_TYPES}, got {level!r}")


def ipssr_survival_table(
    patient_wide: pd.DataFrame,
    sample_wide: pd.DataFrame,
    *,
    group_attribute: str = GROUP_ATTRIBUTE,
    time_attribute: str = TIME_ATTRIBUTE,
    status_attribute: str = STATUS_ATTRIBUTE,
    group_type: str = "SAMPLE",
    time_type: str = "PATIENT",
    status_type: str = "PATIENT",
    missing_values: Iterable[str] = MISSING_VALUES,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Reduce wide clinical tables to one survival row per patient.

    Each of group, time and status is read from its configured clinical
    type (``*_type``: PATIENT or SAMPLE; defaults: the IPSS-R category is a
    sample attribute, survival patient attributes); an attribute missing
    there but present at the other level is used from there and the switch
    is logged. A sample-level attribute takes the value of the patient's
    first sample by ``sampleId`` that has one (deterministic); patients whose
    samples disagree are counted (``n_patients_conflicting_group``) and
    logged. Values in ``missing_values`` (case-insensitive, e.g. ``NA``,
    ``Unknown``, empty) count as missing.

    Patients lacking the group, the time or the status are dropped; each
    rule's count is in the summary and in the log (reasons overlap); a
    negative time is treated as invalid and dropped likewise.

    Parameters
    ----------
    patient_wide, sample_wide : pandas.DataFrame
        Outputs of ``clinical_long_to_wide(records, "patientId" / "sampleId")``;
        the sample table must have a ``patientId`` column.
    group_attribute, time_attribute, status_attribute : str
        Attribute ids (defaults ``IPSSR``, ``OS_MONTHS``, ``OS_STATUS``).
    group_type, time_type, status_type : {"PATIENT", "SAMPLE"}
        Where each attribute is looked for first.
    missing_values : iterable of str
        Spellings of "no value".

    Returns
    -------
    table : pandas.DataFrame
        Columns ``patient_id`` (str), ``group`` (str), ``time`` (float, unit
        of ``time_attribute``), ``event`` (int, 1 = death); sorted by
        ``patient_id``.
    summary : dict
        JSON-serialisable counts: patients seen, kept, dropped (total and per
        rule), patients with several samples / conflicting groups, events,
        censored fraction, patients per group, and the attributes and
        clinical types used.

    Raises
    ------
    ValueError
        An attribute is in neither table (the message lists similar
        attributes), an id column is missing, a type is not PATIENT/SAMPLE,
        or a status value does not follow the ``0:``/``1:`` coding.
    """
    _check_wide_tables(patient_wide, sample_wide,
                       {"group": group_type, "time": time_type, "status": status_type})
    missing_values = tuple(missing_values)
    tables = {"PATIENT": patient_wide, "SAMPLE": sample_wide}
    used = {
        "group": _locate_attribute(group_attribute, group_type, tables, "group_attribute"),
        "time": _locate_attribute(time_attribute, time_type, tables, "time_attribute"),
        "status": _locate_attribute(status_attribute, status_type, tables, "status_attribute"),
    }
    groups, group_info = _per_patient(group_attribute, used["group"], tables, missing_values)
    time_raw, _ = _per_patient(time_attribute, used["time"], tables, missing_values)
    status_raw, _ = _per_patient(status_attribute, used["status"], tables, missing_values)
    times = pd.to_numeric(time_raw, errors="coerce")
    unparsable = time_raw.notna() & times.isna()
    if unparsable.any():
        bad = sorted(set(map(str, time_raw[unparsable])))[:5]
        raise ValueError(f"{time_attribute} has non-numeric values: {bad}")
    events = status_raw.map(lambda v: parse_os_status(v, missing_values))

    # ---- join on every patient seen in either table (outer), to count drops
    ids = sorted(set(map(str, patient_wide[PATIENT_ID].dropna()))
                 | set(map(str, sample_wide[PATIENT_ID].dropna()))
                 - {str(v) for v in list(patient_wide[PATIENT_ID]) + list(sample_wide[PATIENT_ID])
                    if _is_missing(v, missing_values)})
    idx = pd.Index(ids, name=PATIENT_ID)
    table = pd.DataFrame(
        {
            "patient_id": ids,
            "group": groups.reindex(idx).to_numpy(dtype=object),
            "time": times.reindex(idx).to_numpy(dtype=float),
            "event": events.reindex(idx).to_numpy(dtype=object),
        }
    )
    miss_group = table["group"].isna()
    miss_time = table["time"].isna()
    neg_time = table["time"] < 0
    miss_status = table["event"].isna()
    drop = miss_group | miss_time | neg_time | miss_status
    kept = table[~drop].copy()
    kept["event"] = kept["event"].astype(int)
    kept["group"] = kept["group"].astype(str)
    kept = kept.sort_values("patient_id", kind="mergesort").reset_index(drop=True)
    log.info("kept %d of %d patients; dropped %d lacking %s (%s), %d lacking %s (%s), "
             "%d with a negative time, %d lacking %s (%s)", len(kept), len(table),
             int(miss_group.sum()), group_attribute, used["group"], int(miss_time.sum()),
             time_attribute, used["time"], int(neg_time.sum()), int(miss_status.sum()),
             status_attribute, used["status"])

    attributes = {"group": group_attribute, "time": time_attribute, "status": status_attribute}
    counts = {"group": miss_group, "time": miss_time, "negative_time": neg_time,
              "status": miss_status}
    summary = _table_summary(attributes, used, table, sample_wide, kept, counts, group_info)
    return kept[["patient_id", "group", "time", "event"]], summary
