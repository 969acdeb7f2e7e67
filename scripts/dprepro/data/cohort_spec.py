r"""Cohorts of the ``rrr_survival`` study, described by configuration.

A cohort is a named entry under ``datasets`` in the configuration
(:class:`CohortSpec`): where the table comes from (``source``: a synthetic
IPSS-R stand-in, a file bundled with the workflow, a local file, a URL,
cBioPortal, or a dataset shipped by an installed package), which columns hold
the id, time, status and group (``columns``, or one-hot ``group_indicators``),
which status values mean an event, the time unit, the group order and the
display title. :func:`build_cohort` turns a spec and its input files into the
tidy frame every analysis reads: ``id`` (str), ``group`` (str), ``time``
(float, in ``time_unit``), ``event`` (int, 1 = event, 0 = censored). Nothing
in the study's code branches on a cohort's name.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from dprepro.data.cohort_content import cohort_frame_problems, single_group_message
from dprepro.data.cohort_labels import (
    canonical_groups,
    event_indicator,
    group_spelling_problems,
    label_key,
    respelled_counts,
    status_spelling_problems,
)
from dprepro.data.cohort_options import (
    cohort_option_problems,
    covariate_columns,
    simulation_settings,
)
from dprepro.data.cohorts import (
    check_survival_frame,
    locate,
    read_csv_checked,
    simulated_cox_cohort,
    synthetic_ipssr_cohort,
)
from dprepro.runtime.io import sha256_of
from dprepro.runtime.seeds import seed_record, seed_sequence

__all__ = [
    "SOURCES",
    "CohortBuild",
    "CohortSpec",
    "build_cohort",
    "canonical_groups",
    "cohort_config_problems",
    "group_order",
    "privacy_unit_of",
    "read_cohort_csv",
    "absent_groups",
    "single_group_message",
    "tidy_cohort",
]

#: Where a cohort's table can come from.
SOURCES = ("synthetic", "bundled", "file", "url", "cbioportal", "package", "simulation")
_COLUMN_ROLES = ("id", "time", "status", "group")
#: What a cohort's data may be (``""``: by its source, see :attr:`CohortSpec.origin`).
DATA_ORIGINS = ("", "real", "synthetic", "simulation")

_SPEC_DEFAULTS = {
    "source": "file", "path": "", "url": "", "sha256": "", "package": "",
    "columns": {"id": "id", "time": "time", "status": "status", "group": "group"},
    "event_values": [1], "censored_values": [0], "time_divisor": 1, "time_unit": "",
    "title": "", "groups": [], "group_aliases": {},
    "cbioportal_url": "https://www.cbioportal.org", "study_id": "", "privacy_unit": "patient",
    "group_indicators": {}, "group_baseline": "", "missing_groups": "error",
    "rows_per_person": 1, "ordered_groups": False, "horizon": 0, "horizon_source": "design",
    "lnte_grid_bins": 0,
    "endpoint": "", "data_origin": "", "covariates": [], "simulation": {},
    "cbioportal": {
        "attributes": {"group": "IPSSR", "time": "OS_MONTHS", "status": "OS_STATUS"},
        "types": {"group": "SAMPLE", "time": "PATIENT", "status": "PATIENT"},
        "missing_values": ["", "NA", "N/A", "NAN", "NULL", "NONE", "UNKNOWN", "[NOT AVAILABLE]",
                           "[UNKNOWN]", "[NOT APPLICABLE]", "[NOT EVALUATED]", "[DISCREPANCY]"],
    },
}


@dataclass(frozen=True)
class CohortSpec:
    """One cohort as the configuration describes it (``datasets.<name>``).

    Attributes
    ----------
    name : str
        The key under ``datasets`` (also the file name of the cohort).
    source : str
        One of :data:`SOURCES`.
    path, url, sha256, package : str
        Where the table is: a path (``file``; ``bundled``: inside the
        workflow, with ``<path>.sha256`` next to it), a URL with an optional
        checksum (``url``), or ``module:function`` of an installed package
        returning a DataFrame (``package``, e.g.
        ``lifelines.datasets:load_larynx``).
    columns : mapping
        Column of the table holding each role ``id``, ``time``, ``status``,
        ``group`` (``id: ""`` = one row per person, numbered).
    event_values, censored_values : tuple
        Status values meaning event and censored, matched as text, as numbers, or
        else by the groups' spelling rule (case, spaces and punctuation aside; each
        such row logged, :mod:`dprepro.data.cohort_labels`); any other value is an
        error.
    time_divisor : float
        Times are divided by it (e.g. 30: days to the paper's "months").
    time_unit, title : str
        Axis unit and display title (default: "time" and the name).
    groups : tuple
        Display order of the groups and, when given, the only groups allowed.
    group_aliases : mapping
        Other spellings of the groups (``{"VH": "Very High"}``); spellings
        differing only in case, spaces or punctuation match without one.
    cbioportal_url, study_id : str
        cBioPortal instance and study (``cbioportal``).
    privacy_unit : str
        Who one ``id`` is (``patient``): RRR releases each id's group once,
        and every table states its guarantee per this unit ("... with a
        recorded group" under ``missing_groups: drop``, :func:`privacy_unit_of`).
    cbioportal : mapping
        ``attributes`` and ``types`` (PATIENT/SAMPLE) of group, time and
        status, and ``missing_values`` (source ``cbioportal``).
    group_indicators, group_baseline
        A group given as one-hot columns (``{Stage_II: II, ...}``) instead of
        ``columns.group``: a row's group is the label of its indicator equal
        to 1, ``group_baseline`` when all are 0.
    missing_groups : {"error", "drop"}
        What a row without a group does: stop the job, or be dropped (counted
        in the log and the summary).
    rows_per_person : int
        Public bound on the rows of one id: the L1 sensitivity of count
        releases (:class:`dprepro.mechanisms.grid_lnte.GridLNTE`); checked on the data.
    ordered_groups : bool
        Whether the groups are ordinal (risk scores, stages): figures use a
        sequential palette then, a qualitative one otherwise.
    horizon : float
        Public end of grid LNTE's time grid, in ``time_unit`` (0: the
        largest follow-up time, which is data-dependent and says so).
    horizon_source : {"design", "data"}
        Whether ``horizon`` was fixed before the data were seen (``design``)
        or chosen after seeing them (``data``: grid LNTE then has no finite ε).
    lnte_grid_bins : int
        Bins of grid LNTE's time grid for this cohort (0: the study-wide
        ``rrr_survival.lnte_grid_bins``).
    endpoint : str
        What the time measures (``overall survival``, ``recurrence-free
        survival``, ``time to infection recurrence``): figure axes and titles.
    covariates : tuple
        Numeric, non-private columns kept in the cohort table (in this order) for the
        adjusted Cox models; none by default (the table is then id, group, time, event).
    simulation : mapping
        ``n``, ``hazard_ratios``, ``baseline_rate``, ``censoring_rate``, ``follow_up``
        and ``stream`` of a ``simulation`` source (:func:`simulation_settings`).
    """

    name: str
    source: str
    path: str = ""
    url: str = ""
    sha256: str = ""
    package: str = ""
    columns: Mapping = field(default_factory=dict)
    event_values: tuple = (1,)
    censored_values: tuple = (0,)
    time_divisor: float = 1.0
    time_unit: str = ""
    title: str = ""
    groups: tuple = ()
    group_aliases: Mapping = field(default_factory=dict)
    cbioportal_url: str = "https://www.cbioportal.org"
    study_id: str = ""
    privacy_unit: str = "patient"
    cbioportal: Mapping = field(default_factory=dict)
    group_indicators: Mapping = field(default_factory=dict)
    group_baseline: str = ""
    missing_groups: str = "error"
    rows_per_person: int = 1
    ordered_groups: bool = False
    horizon: float = 0.0
    horizon_source: str = "design"
    lnte_grid_bins: int = 0
    endpoint: str = ""
    data_origin: str = ""
    covariates: tuple = ()
    simulation: Mapping = field(default_factory=dict)

    @classmethod
    def from_config(cls, name: str, spec: Mapping) -> CohortSpec:
        """Build from ``datasets.<name>`` (missing keys take the schema's defaults).

        Raises
        ------
        ValueError
            Listing every problem of :func:`cohort_config_problems`.
        """
        problems = _spec_problems(name, spec)
        if problems:
            raise ValueError("invalid cohort configuration:\n  - " + "\n  - ".join(problems))
        merged = {**_SPEC_DEFAULTS, **dict(spec)}
        columns = {**_SPEC_DEFAULTS["columns"], **dict(merged["columns"] or {})}
        return cls(name=name, source=merged["source"], path=str(merged["path"]),
                   url=str(merged["url"]), sha256=str(merged["sha256"]),
                   package=str(merged["package"]), columns=columns,
                   event_values=tuple(merged["event_values"]),
                   censored_values=tuple(merged["censored_values"]),
                   time_divisor=float(merged["time_divisor"]),
                   time_unit=str(merged["time_unit"]), title=str(merged["title"]),
                   groups=tuple(str(g) for g in merged["groups"]),
                   group_aliases={str(k): str(v) for k, v in merged["group_aliases"].items()},
                   cbioportal_url=str(merged["cbioportal_url"]),
                   study_id=str(merged["study_id"]),
                   privacy_unit=privacy_unit_of(merged),
                   cbioportal=_cbioportal_options(merged["cbioportal"]),
                   group_indicators={str(k): str(v)
                                     for k, v in dict(merged["group_indicators"]).items()},
                   group_baseline=str(merged["group_baseline"]),
                   missing_groups=str(merged["missing_groups"]),
                   rows_per_person=int(merged["rows_per_person"]),
                   ordered_groups=bool(merged["ordered_groups"]),
                   horizon=float(merged["horizon"]),
                   horizon_source=str(merged["horizon_source"]),
                   lnte_grid_bins=int(merged["lnte_grid_bins"]),
                   endpoint=str(merged["endpoint"]),
                   data_origin=str(merged["data_origin"]),
                   covariates=tuple(str(c) for c in merged["covariates"] or ()),
                   simulation=simulation_settings(merged["simulation"] or {}))

    @property
    def display_title(self) -> str:
        return self.title or self.name

    @property
    def axis_unit(self) -> str:
        return self.time_unit or "time units"

    @property
    def origin(self) -> str:
        """What the cohort's data are, as figures, captions and provenance say it:
        ``data_origin`` when configured (a user's simulated CSV is not real data), else
        ``synthetic`` for the generated stand-in and ``real`` for every table of records."""
        if self.data_origin:
            return self.data_origin
        return {"synthetic": "synthetic", "simulation": "simulation"}.get(self.source, "real")

    @property
    def true_log_hazard_ratios(self) -> dict:
        """Group -> true log hazard ratio against the first group (``simulation`` source
        only; empty otherwise)."""
        if self.source != "simulation":
            return {}
        return {g: float(np.log(h)) for g, h in zip(self.groups,
                                                    self.simulation["hazard_ratios"],
                                                    strict=True)}



def _cbioportal_options(options: Mapping) -> dict:
    defaults = _SPEC_DEFAULTS["cbioportal"]
    options = dict(options or {})
    return {"attributes": {**defaults["attributes"], **dict(options.get("attributes") or {})},
            "types": {**defaults["types"], **dict(options.get("types") or {})},
            "missing_values": list(options.get("missing_values", defaults["missing_values"]))}


def _spec_problems(name: str, spec) -> list[str]:
    key = f"datasets.{name}"
    if not isinstance(spec, Mapping):
        return [f"config key '{key}': expected a mapping with at least 'source', got {spec!r}"]
    problems = []
    source = spec.get("source", _SPEC_DEFAULTS["source"])
    if source not in SOURCES:
        problems.append(f"config key '{key}.source': got {source!r}, expected one of "
                        f"{list(SOURCES)}")
    needs = {"file": "path", "bundled": "path", "url": "url", "package": "package",
             "cbioportal": "study_id"}
    if source in needs and not spec.get(needs[source]):
        problems.append(f"config key '{key}.{needs[source]}': source is {source!r}, so "
                        f"{needs[source]} is required")
    if source == "package" and spec.get("package") and ":" not in str(spec["package"]):
        problems.append(f"config key '{key}.package': got {spec['package']!r}, expected "
                        "'module:function' (e.g. lifelines.datasets:load_larynx)")
    columns = spec.get("columns") or {}
    if not isinstance(columns, Mapping):
        problems.append(f"config key '{key}.columns': expected a mapping of id, time, status, "
                        f"group to column names, got {columns!r}")
    else:
        unknown = sorted(set(columns) - set(_COLUMN_ROLES))
        if unknown:
            problems.append(f"config key '{key}.columns': unknown role(s) {unknown}; allowed "
                            f"are {list(_COLUMN_ROLES)}")
        for role in ("time", "status", "group"):
            if role in columns and not columns[role]:
                problems.append(f"config key '{key}.columns.{role}': must name a column")
    event = set(spec.get("event_values", _SPEC_DEFAULTS["event_values"]))
    censored = set(spec.get("censored_values", _SPEC_DEFAULTS["censored_values"]))
    if event & censored:
        problems.append(f"config key '{key}.event_values': values {sorted(event & censored)} "
                        "also appear in censored_values")
    groups = list(spec.get("groups") or [])
    if len(groups) != len(set(map(str, groups))):
        problems.append(f"config key '{key}.groups': groups must be distinct, got {groups}")
    aliases = spec.get("group_aliases") or {}
    if groups and isinstance(aliases, Mapping):
        bad = sorted({str(v) for v in aliases.values()} - set(map(str, groups)))
        if bad:
            problems.append(f"config key '{key}.group_aliases': targets {bad} are not among "
                            f"groups {groups}")
    problems += group_spelling_problems(key, groups, aliases)
    problems += status_spelling_problems(
        key, spec.get("event_values", _SPEC_DEFAULTS["event_values"]),
        spec.get("censored_values", _SPEC_DEFAULTS["censored_values"]))
    if spec.get("data_origin", "") not in DATA_ORIGINS:
        problems.append(f"config key '{key}.data_origin': got {spec['data_origin']!r}, "
                        f"expected one of {list(DATA_ORIGINS)} ('' = real, or synthetic "
                        "for source synthetic)")
    problems += cohort_option_problems(key, spec, columns)
    if spec.get("missing_groups", "error") not in ("error", "drop"):
        problems.append(f"config key '{key}.missing_groups': got {spec['missing_groups']!r}, "
                        "expected 'error' or 'drop'")
    indicators = spec.get("group_indicators") or {}
    if indicators and not spec.get("group_baseline"):
        problems.append(f"config key '{key}.group_baseline': group_indicators are set, so the "
                        "label of rows with every indicator 0 is required")
    horizon = spec.get("horizon", 0)
    if isinstance(horizon, bool) or not isinstance(horizon, int | float) or horizon < 0:
        problems.append(f"config key '{key}.horizon': got {horizon!r}, expected a number >= 0 "
                        "(0: the largest follow-up time)")
    if spec.get("horizon_source", "design") not in ("design", "data"):
        problems.append(f"config key '{key}.horizon_source': got {spec['horizon_source']!r}, "
                        "expected 'design' (fixed before the data were seen) or 'data' "
                        "(chosen after seeing them: grid LNTE then has no finite ε)")
    bins = spec.get("lnte_grid_bins", 0)
    if (isinstance(bins, bool) or not isinstance(bins, int) or bins < 0 or bins == 1
            or bins > 10000):
        problems.append(f"config key '{key}.lnte_grid_bins': got {bins!r}, expected 0 (the "
                        "study's rrr_survival.lnte_grid_bins) or an integer 2 ... 10000")
    divisor = spec.get("time_divisor", 1)
    if isinstance(divisor, bool) or not isinstance(divisor, int | float) or not divisor > 0:
        problems.append(f"config key '{key}.time_divisor': got {divisor!r}, expected a "
                        "number > 0")
    return problems


def cohort_config_problems(config: Mapping, study: str = "rrr_survival") -> list[str]:
    """Every problem of the cohorts a study names, one line each naming the key.

    Checked before any job runs: each name in ``<study>.datasets`` (and in
    ``<study>.cox.extra_datasets``, the cohorts only the Cox analysis reads) must be
    an entry under ``datasets`` whose spec is complete for its source.
    """
    section = config.get(study) or {}
    extra = list((section.get("cox") or {}).get("extra_datasets") or [])
    keys = [f"{study}.datasets[{i}]" for i in range(len(section.get("datasets") or []))]
    keys += [f"{study}.cox.extra_datasets[{i}]" for i in range(len(extra))]
    names = list(section.get("datasets") or []) + extra
    datasets = config.get("datasets") or {}
    problems = []
    for key, name in zip(keys, names, strict=True):
        if name not in datasets:
            problems.append(f"config key '{key}': {name!r} has no entry under "
                            f"'datasets' (have {sorted(datasets)}); add datasets.{name} with "
                            "its source and columns")
            continue
        problems += _spec_problems(name, datasets[name])
        spec = datasets[name]
        if isinstance(spec, Mapping) and not spec.get("groups"):
            problems.append(
                f"config key 'datasets.{name}.groups': not set, but the cohort is in "
                f"'{key.split('[')[0]}'; randomized response draws each label from a public "
                "set fixed in advance (its size k sets the true ε), so list every group a "
                "patient may have, present in the data or not (e.g. groups: [control, "
                "treated]); the list is also the order of the tables and figures")
    return problems


def privacy_unit_of(spec: Mapping) -> str:
    """Whom a cohort's releases protect: ``privacy_unit``, narrowed under ``missing_groups: drop``.

    Dropping the rows without a group makes whether a person is released at all
    depend on a private field (their group being recorded), which no release's ε
    covers: the unit every table and sidecar states is then "<unit> with a recorded
    group", so the columns say it, not only the documentation.
    """
    unit = str(spec.get("privacy_unit", "patient"))
    return f"{unit} with a recorded group" if spec.get("missing_groups") == "drop" else unit


def group_order(values, groups=()) -> list[str]:
    """The label set of a cohort's releases: the configured ``groups``, present or not.

    A randomized-response release randomises each label over a domain that must be
    public and fixed before the data are seen: taking it from the data would make the
    number of labels k, the keep probability and the true ε depend on the private
    data, and a released label set without a group would reveal that no patient had
    it. So with configured ``groups`` every one of them is a label, in the configured
    order, whether or not a patient has it (an absent group is released with a zero
    true count). Without configured groups (allowed outside the private study, e.g.
    to look at a table) the groups present are returned, sorted.

    Raises
    ------
    ValueError
        A value is none of the configured groups (the cohort builder maps spellings
        and aliases first, so this means a group the configuration does not list).
    """
    present = set(pd.Series(values, dtype=object).astype(str))
    if groups:
        extra = sorted(present - set(groups))
        if extra:
            raise ValueError(f"groups {extra} are not among the configured groups "
                             f"{list(groups)}")
        return list(groups)
    return sorted(present)


def absent_groups(values, groups=()) -> list[str]:
    """Configured groups that no row of ``values`` has (reported, never dropped)."""
    present = set(pd.Series(values, dtype=object).astype(str))
    return [g for g in groups if g not in present]


def _group_column(frame: pd.DataFrame, spec: CohortSpec, source: str) -> pd.Series:
    """The raw group of each row: ``columns.group`` or the one-hot ``group_indicators``."""
    if spec.group_indicators:
        missing = [c for c in spec.group_indicators if c not in frame.columns]
        if missing:
            raise ValueError(f"{source}: missing indicator column(s) {missing}; set "
                             f"datasets.{spec.name}.group_indicators")
        onehot = frame[list(spec.group_indicators)].apply(pd.to_numeric, errors="coerce")
        if not onehot.isin([0, 1]).all().all() or (onehot.sum(axis=1) > 1).any():
            raise ValueError(f"{source}: group_indicators {list(spec.group_indicators)} must be "
                             "0/1 with at most one 1 per row")
        labels = np.asarray(list(spec.group_indicators.values()), dtype=object)
        picked = np.where(onehot.sum(axis=1) == 0, spec.group_baseline,
                          labels[onehot.to_numpy().argmax(axis=1)])
        return pd.Series(picked, index=frame.index, dtype=object)
    group = frame[spec.columns["group"]]
    numeric = pd.to_numeric(group, errors="coerce")
    if group.notna().any() and numeric[group.notna()].notna().all() and (
            numeric.dropna() == numeric.dropna().round()).all():
        # integer codes read as floats because of a missing value (R's ph.ecog): 1.0 -> "1"
        return numeric.map(lambda v: None if pd.isna(v) else str(int(v))).astype(object)
    return group


def tidy_cohort(frame: pd.DataFrame, spec: CohortSpec, *, source: str) -> pd.DataFrame:
    """``id, group, time, event`` from a table through the spec's column map.

    Times are divided by ``time_divisor``; group spellings are mapped to the
    configured groups (:func:`canonical_groups`); integer group codes stay
    integers (``1``, not ``1.0``); rows without a group stop the job or are
    dropped (``missing_groups``, counted in ``attrs["dropped_missing_group"]``);
    other missing or invalid values raise naming ``source`` and the column.
    """
    roles = {role: spec.columns.get(role, "") for role in _COLUMN_ROLES}
    if spec.group_indicators:
        roles["group"] = ""
    needed = [c for c in roles.values() if c]
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise ValueError(f"{source}: missing column(s) {missing} (have "
                         f"{[str(c) for c in frame.columns]}); set datasets.{spec.name}.columns "
                         "to the table's names for id, time, status and group")
    if frame.empty:
        raise ValueError(f"{source}: no rows")
    if roles["id"] and frame[roles["id"]].isna().any():
        # else each blank reads as the id "nan", one person with many rows and groups
        raise ValueError(f"{source}: column {roles['id']!r} (datasets.{spec.name}.columns.id)"
                         f" has missing values ({locate(frame[roles['id']].isna())}); every "
                         "row needs its person's id: fill them in, or set columns.id to \"\" "
                         "when each row is a different person")
    group = _group_column(frame, spec, source)
    dropped = 0
    if spec.missing_groups == "drop" and group.isna().any():
        keep = group.notna().to_numpy()
        dropped = int((~keep).sum())
        frame, group = frame[keep], group[keep]
    ids = (frame[roles["id"]].astype(str).to_numpy() if roles["id"]
           else np.arange(1, len(frame) + 1).astype(str))
    # messages name the rows by id, or by row number where the table has no id column
    named = ids if roles["id"] else None
    status = frame[roles["status"]]
    if status.isna().any():
        raise ValueError(f"{source}: column {roles['status']!r} has missing values "
                         f"({locate(status.isna(), named)})")
    event, respelled = event_indicator(status, event_values=spec.event_values,
                                       censored_values=spec.censored_values, name=spec.name,
                                       column=roles["status"], source=source)
    tidy = check_survival_frame(pd.DataFrame({"group": group.to_numpy(),
                                              "time": frame[roles["time"]].to_numpy(),
                                              "event": event}), source=source,
                                ids=named, columns=roles)
    tidy["time"] = tidy["time"] / spec.time_divisor
    raw = tidy["group"].astype(str)
    tidy["group"] = canonical_groups(tidy["group"], groups=spec.groups,
                                     aliases=spec.group_aliases, source=source,
                                     key=f"datasets.{spec.name}.groups")
    # rows a configured alias moved into another group (e.g. lung ECOG 3 into "2+"), and
    # rows whose label or status was another spelling of a configured one: logged
    moved = raw.map(label_key) != tidy["group"].astype(str).map(label_key)
    merged = (raw[moved] + " -> " + tidy["group"][moved].astype(str)).value_counts()
    respelled = {**{f"group {k}": v for k, v in respelled_counts(
        raw[~moved], tidy["group"][~moved]).items()},
        **{f"status {k}": v for k, v in respelled.items()}}
    out = tidy.assign(id=ids)[["id", "group", "time", "event"]]
    if spec.covariates:
        # the declared covariates follow the four columns (none: the table is unchanged)
        values = covariate_columns(frame, name=spec.name, covariates=spec.covariates,
                                   source=source, ids=named)
        for column in spec.covariates:
            out[column] = values[column].to_numpy()
    out.attrs["dropped_missing_group"] = dropped
    out.attrs["merged_groups"] = {str(k): int(v) for k, v in merged.sort_index().items()}
    out.attrs["respelled"] = respelled
    used = set(needed) | set(spec.group_indicators) | set(spec.covariates)
    out.attrs["ignored_columns"] = [str(c) for c in frame.columns if c not in used]
    return out


def _package_table(spec: CohortSpec) -> tuple[pd.DataFrame, dict]:
    module_name, _, attribute = spec.package.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ValueError(f"config key 'datasets.{spec.name}.package': cannot import "
                         f"{module_name!r} ({error})") from None
    if not hasattr(module, attribute):
        raise ValueError(f"config key 'datasets.{spec.name}.package': {module_name} has no "
                         f"{attribute!r}")
    value = getattr(module, attribute)
    frame = value() if callable(value) else value
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"config key 'datasets.{spec.name}.package': {spec.package} gave a "
                         f"{type(frame).__name__}, expected a pandas DataFrame")
    top = module_name.split(".")[0]
    try:
        version = importlib.metadata.version(top)
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    return frame, {"package": spec.package, "version": version}


def _bundled_table(inputs: Mapping, spec: CohortSpec) -> pd.DataFrame:
    path, checksum = inputs["table"], inputs["checksum"]
    expected = open(checksum, encoding="utf-8").read().split()[0]
    got = sha256_of(path)
    if got != expected:
        raise ValueError(f"{path}: sha256 {got} does not match {checksum} ({expected}); the "
                         "bundled file was changed")
    return read_cohort_csv(path, spec)


def read_cohort_csv(path, spec: CohortSpec) -> pd.DataFrame:
    """A cohort's CSV as :func:`read_csv_checked` reads it, its id column as written."""
    return read_csv_checked(path, required=(), id_column=None,
                            text_columns=(spec.columns["id"],))


@dataclass(frozen=True)
class CohortBuild:
    """A built cohort: the tidy frame, its origin, seeds (synthetic) and a summary."""

    frame: pd.DataFrame
    origin: str
    seeds: dict | None
    summary: dict


def build_cohort(spec: CohortSpec, *, inputs: Mapping, seed: int) -> CohortBuild:
    """The tidy cohort of a spec from its input files.

    Parameters
    ----------
    spec : CohortSpec
    inputs : mapping
        The rule's inputs: ``table`` (+ ``checksum`` for bundled) for table
        sources, ``patient`` and ``sample`` (raw JSON) for cBioPortal, none
        for synthetic and package sources.
    seed : int
        Base seed; the synthetic stand-in draws from stream ``cohort/<name>``.

    Returns
    -------
    CohortBuild
        ``frame`` has ``id, group, time, event``; ``summary`` holds the row,
        id and group counts the log reports.
    """
    # where the rows came from, as every message names it
    seeds, summary, source = None, {}, spec.source
    if spec.source == "synthetic":
        stream = f"cohort/{spec.name}"
        rng = np.random.default_rng(seed_sequence(seed, "rrr_survival", stream, 0))
        raw = synthetic_ipssr_cohort(rng)
        seeds = seed_record(seed, "rrr_survival", stream, 1)
        frame = tidy_cohort(raw.rename(columns={"event": "status"}),
                            _with_columns(spec, id="", status="status"), source="synthetic")
    elif spec.source == "simulation":
        sim = spec.simulation
        stream = sim["stream"] or f"cohort/{spec.name}"
        rng = np.random.default_rng(seed_sequence(seed, "rrr_survival", stream, 0))
        raw = simulated_cox_cohort(rng, n=sim["n"], groups=spec.groups,
                                   hazard_ratios=sim["hazard_ratios"],
                                   baseline_rate=float(sim["baseline_rate"]),
                                   censoring_rate=float(sim["censoring_rate"]),
                                   follow_up=float(sim["follow_up"]))
        seeds = seed_record(seed, "rrr_survival", stream, 1)
        summary = {"simulation": dict(sim)}
        frame = tidy_cohort(raw.rename(columns={"event": "status"}),
                            _with_columns(spec, id="", status="status"), source="simulation")
    elif spec.source == "cbioportal":
        import json

        from dprepro.data.cbioportal import clinical_long_to_wide, ipssr_survival_table

        patients = json.loads(open(inputs["patient"], encoding="utf-8").read())
        samples = json.loads(open(inputs["sample"], encoding="utf-8").read())
        options = spec.cbioportal
        attributes, types = options["attributes"], options["types"]
        raw, summary = ipssr_survival_table(
            clinical_long_to_wide(patients, "patientId"),
            clinical_long_to_wide(samples, "sampleId"),
            group_attribute=attributes["group"], time_attribute=attributes["time"],
            status_attribute=attributes["status"], group_type=types["group"],
            time_type=types["time"], status_type=types["status"],
            missing_values=options["missing_values"])
        source = inputs["sample"]
        frame = tidy_cohort(raw.rename(columns={"event": "status"}),
                            _with_columns(spec, id="patient_id", status="status"),
                            source=source)
    else:
        if spec.source == "package":
            raw, summary = _package_table(spec)
            source = spec.package
        elif spec.source == "bundled":
            raw, source = _bundled_table(inputs, spec), inputs["table"]
        else:
            raw, source = read_cohort_csv(inputs["table"], spec), inputs["table"]
        frame = tidy_cohort(raw, spec, source=source)
    # the columns the spec leaves unused and the respelled values are logged, not kept
    # (nor stored in the Parquet's metadata)
    ignored = list(frame.attrs.pop("ignored_columns", []))
    respelled = dict(frame.attrs.pop("respelled", {}))
    problems = cohort_frame_problems(frame, spec, source=source)
    if problems:
        raise ValueError(problems[0])
    per_id = frame.groupby("id").size()
    summary = {**summary,
               "dropped_missing_group": int(frame.attrs.get("dropped_missing_group", 0)),
               "merged_groups": dict(frame.attrs.get("merged_groups", {})),
               "respelled": respelled,
               "ignored_columns": ignored,
               "privacy_unit": spec.privacy_unit, "rows": int(len(frame)),
               "ids": int(frame["id"].nunique()), "max_rows_per_id": int(per_id.max()),
               "groups": {str(k): int(v) for k, v in frame.groupby("group").size().items()},
               "censored_fraction": float(1 - frame["event"].mean())}
    return CohortBuild(frame=frame, origin=spec.origin, seeds=seeds, summary=summary)


def _with_columns(spec: CohortSpec, **roles) -> CohortSpec:
    """The spec with the column map of a table the library built itself."""
    return replace(spec, columns={"time": "time", "group": "group", **roles},
                   event_values=(1,), censored_values=(0,), time_divisor=1.0, covariates=())
