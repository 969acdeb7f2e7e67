"""The rrr_survival study's plan: its releases, their file layout and cohort inputs.

The workflow's rule files call these functions (pure functions of the config
mapping; no snakemake import), so the rules show only rules and the study's
layout is written once: which releases exist, where each one's files live,
what a cohort is built from.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from dprepro.data.cohort_spec import CohortSpec
from dprepro.mechanisms.identity import identities, mechanism_name
from dprepro.runtime.run_folder import launch_relative

__all__ = [
    "MECHANISMS",
    "NO_EPSILON",
    "RELEASE_ROOT",
    "calibration_of",
    "rrr_calibrations",
    "cbioportal_base",
    "cbioportal_raw",
    "cbioportal_studies",
    "cohort_inputs",
    "cohort_priority",
    "cohort_report_flags",
    "cohort_params",
    "cohort_specs",
    "cox_releases",
    "cox_specs",
    "privacy_settings",
    "release_files",
    "release_name",
    "releases",
    "release_words",
    "report_labels",
]

RELEASE_ROOT = "results/rrr_survival/releases"


def cohort_specs(config: Mapping) -> dict[str, CohortSpec]:
    """The study's cohorts, validated (names from ``rrr_survival.datasets``)."""
    return {d: CohortSpec.from_config(d, config["datasets"][d])
            for d in config["rrr_survival"]["datasets"]}


def cox_specs(config: Mapping) -> dict[str, CohortSpec]:
    """The Cox analysis' cohorts: the study's, then ``rrr_survival.cox.extra_datasets``."""
    rrr = config["rrr_survival"]
    names = dict.fromkeys([*rrr["datasets"], *(rrr.get("cox") or {}).get("extra_datasets", [])])
    return {d: CohortSpec.from_config(d, config["datasets"][d]) for d in names}


def cox_releases(config: Mapping) -> list[list]:
    """``[ε, calibration]`` of every RRR release the Cox models are fitted to."""
    return [[float(e), c] for c in rrr_calibrations(config)
            for e in config["rrr_survival"]["epsilons"]]


def privacy_settings(config: Mapping) -> list[list]:
    """``[k, ε, calibration]`` of every RRR release the run makes, sorted, no repeats.

    One per label count k (a cohort's configured groups), configured ε and calibration,
    over the study's cohorts and the Cox analysis' extra ones (whose fits use RRR
    releases too): the privacy audit audits each, and the claims state each guarantee
    (``rrr.privacy.rrr.*``).
    """
    ks = sorted({len(spec.groups) for spec in cox_specs(config).values()})
    return [[k, float(e), c] for k in ks for e in sorted(set(config["rrr_survival"]["epsilons"]))
            for c in rrr_calibrations(config)]


def cohort_params(spec: CohortSpec) -> dict:
    """Title, time unit, origin and group order of a cohort (figures and analyses)."""
    return {"title": spec.display_title, "time_unit": spec.axis_unit,
            "data_origin": spec.origin, "groups": list(spec.groups),
            "ordered": spec.ordered_groups, "endpoint": spec.endpoint,
            "rows_per_person": spec.rows_per_person}


#: Mechanisms of the study, in table and figure order (their registry entries' order).
MECHANISMS = tuple(entry.name for entry in identities("rrr_survival"))
#: Mechanisms run once per cohort, with no ε (non-private references).
NO_EPSILON = tuple(entry.name for entry in identities("rrr_survival", private=False))


def rrr_calibrations(config: Mapping) -> list[str]:
    """RRR's ε↔p rules run: ``calibration`` first, then ``extra_calibrations`` (no repeats)."""
    rrr = config["rrr_survival"]
    return list(dict.fromkeys([rrr["calibration"], *rrr.get("extra_calibrations", [])]))


def calibration_of(config: Mapping, mechanism: str, spec: CohortSpec) -> str:
    """The ``calibration`` text of a release: RRR's ε↔p rule, the grid of lnte_grid."""
    rrr = config["rrr_survival"]
    if mechanism in ("rrr", "rrr_debiased"):
        return rrr["calibration"]
    if mechanism in ("lnte_grid", "lnte_grid_no_noise"):
        bins = spec.lnte_grid_bins or int(rrr["lnte_grid_bins"])
        text = f"grid={bins},rows={spec.rows_per_person}"
        if not spec.horizon:
            return text
        text = f"{text},horizon={spec.horizon:g}"
        # a horizon read off the cohort's own follow-up: the text says so, and the mechanism
        # it rebuilds prints no finite ε
        return f"{text},horizon_source=data" if spec.horizon_source == "data" else text
    return ""


def releases(config: Mapping, mechanisms=MECHANISMS) -> list[dict]:
    """Every release of the study: dataset × mechanism × ε (one original per dataset)."""
    rrr = config["rrr_survival"]
    specs = cohort_specs(config)
    out = []
    for dataset in rrr["datasets"]:
        for mechanism in mechanisms:
            epsilons = [None] if mechanism in NO_EPSILON else rrr["epsilons"]
            calibrations = (rrr_calibrations(config) if mechanism in ("rrr", "rrr_debiased")
                            else [calibration_of(config, mechanism, specs[dataset])])
            for calibration in calibrations:
                for eps in epsilons:
                    out.append({"dataset": dataset, "mechanism": mechanism,
                                "epsilon": None if eps is None else float(eps),
                                "calibration": calibration,
                                "data_origin": specs[dataset].origin,
                                "privacy_unit": specs[dataset].privacy_unit})
    return out


def release_name(release: Mapping) -> str:
    """``original``, ``rrr_eps1``, ``rrr_exact_eps1``, ``lnte_eps2``: release folders and panels.

    RRR releases with a calibration other than the paper's carry it in the name.
    """
    if release["mechanism"] in NO_EPSILON:
        return release["mechanism"]
    mechanism = release["mechanism"]
    if mechanism in ("rrr", "rrr_debiased") and release.get("calibration", "paper") != "paper":
        mechanism = f"{mechanism}_{release['calibration']}"
    return f"{mechanism}_eps{float(release['epsilon']):g}"


def release_files(releases_: list[Mapping], name: str) -> list[str]:
    return [f"{RELEASE_ROOT}/{r['dataset']}/{release_name(r)}/{name}" for r in releases_]


def cbioportal_studies(config: Mapping) -> dict[str, list[str]]:
    """cBioPortal study id -> the cohorts read from it."""
    out: dict[str, list[str]] = {}
    for name, spec in config["datasets"].items():
        if isinstance(spec, Mapping) and spec.get("source") == "cbioportal":
            out.setdefault(spec["study_id"], []).append(name)
    return out


def cbioportal_raw(study: str, kind: str) -> str:
    return f"results/data/raw/cbioportal/{study}_{kind}.json"


def cbioportal_base(config: Mapping, study: str) -> str:
    """The one base URL of the cohorts read from ``study``."""
    bases = {config["datasets"][d]["cbioportal_url"] for d in cbioportal_studies(config)[study]}
    if len(bases) != 1:
        raise ValueError(f"cohorts of cBioPortal study {study} name different cbioportal_url "
                         f"values {sorted(bases)}; use one")
    return bases.pop()


def cohort_priority(config: Mapping, dataset: str) -> int:
    """Scheduling priority of a cohort's loading job: 1 for a generated or downloaded
    cohort (the paper's IPSS-R, ~3,000 patients in either mode, whose release job is the
    study's longest), 0 for bundled, local-file and package tables. Only the order of the
    jobs depends on it, never a result."""
    return int(config["datasets"][dataset]["source"] in ("synthetic", "cbioportal", "url"))


def cohort_inputs(config: Mapping, dataset: str, workflow_dir: str | Path,
                  working_dir: str | Path = ".",
                  launch_dir: str | Path | None = None) -> dict[str, str]:
    """What a cohort is built from, by its configured source.

    A bundled table is named relative to ``working_dir`` (the run's directory), so a
    run folder copied with its checkout stays up to date: an absolute path would
    change with the copy and Snakemake would plan the cohort's jobs again. A relative
    ``file`` path means ``launch_dir``, the directory snakemake was started in (or its
    ``--directory``), also for a run kept in ``runs/<run_name>``.
    """
    if dataset not in config["datasets"]:
        raise ValueError(f"no entry datasets.{dataset} in the configuration")
    spec = config["datasets"][dataset]
    source = spec["source"]
    if source == "bundled":
        path = os.path.relpath(Path(workflow_dir) / spec["path"], working_dir)
        return {"table": path, "checksum": f"{path}.sha256"}
    if source == "file":
        launch = working_dir if launch_dir is None else launch_dir
        return {"table": launch_relative(spec["path"], launch, working_dir)}
    if source == "url":
        return {"table": f"results/data/raw/cohorts/{dataset}.csv"}
    if source == "cbioportal":
        return {"patient": cbioportal_raw(spec["study_id"], "patient"),
                "sample": cbioportal_raw(spec["study_id"], "sample")}
    return {}


#: The study's figures as the report names them, by file-name prefix.
REPORT_FIGURES = {"figure2": "Figure 2", "km_bands": "KM bands over draws",
                  "utility": "utility against ε", "cox_forest": "Cox forest plot",
                  "cox_bias_coverage": "Cox bias and coverage"}


def release_words(name: str) -> str:
    """``rrr_exact_eps1`` → "RRR (exact calibration), ε = 1": a release folder name in words."""
    if name in NO_EPSILON:
        return mechanism_name(name, short=True)
    stem, _, epsilon = name.rpartition("_eps")
    for mechanism in sorted(MECHANISMS, key=len, reverse=True):
        if stem == mechanism or stem.startswith(f"{mechanism}_"):
            calibration = stem[len(mechanism) + 1:]
            words = mechanism_name(mechanism, short=True)
            if calibration:
                words += f" ({calibration} calibration)"
            return f"{words}, ε = {epsilon}"
    return name.replace("_", " ")


def report_labels(path: str, dataset: str = "") -> dict[str, str]:
    """The report's labels of one figure file: which figure, which panel, which format.

    ``figure2_kidney_rrr_eps1.png`` → figure "Figure 2", panel "RRR, ε = 1", format
    "PNG"; a composite (``figure2_kidney.pdf``) is panel "all panels".
    """
    stem, _, extension = Path(path).name.rpartition(".")
    for prefix, title in sorted(REPORT_FIGURES.items(), key=lambda item: -len(item[0])):
        head = f"{prefix}_{dataset}" if dataset else prefix
        if stem == head or stem.startswith(f"{head}_"):
            rest = stem[len(head) + 1:]
            return {"figure": title, "panel": release_words(rest) if rest else "all panels",
                    "format": extension.upper()}
    return {"figure": stem.replace("_", " "), "panel": "all panels",
            "format": extension.upper()}


def cohort_report_flags(path: str, cohorts: Mapping[str, CohortSpec],
                        category: str = "rrr_survival") -> dict:
    """The report's ``category``, ``subcategory`` and ``labels`` of a cohort's figure file.

    ``path`` is a pattern with ``{dataset}`` (a rule of one cohort per job) and possibly
    other wildcards (``{ext}``); ``category`` is the study's report section. The
    subcategory (the cohort's title: every figure and table page of the cohort sits there)
    and the labels (:func:`report_labels`) are functions of the job's wildcards, as
    Snakemake's ``report()`` takes them.
    """
    return {"category": category,
            "subcategory": lambda wildcards: cohorts[wildcards.dataset].display_title,
            "labels": lambda wildcards: report_labels(
                path.format(**_wildcard_values(wildcards)), wildcards.dataset)}


def _wildcard_values(wildcards) -> dict:
    """A job's wildcards as a mapping: Snakemake's (``items()``) or a namespace's."""
    return dict(wildcards.items()) if hasattr(wildcards, "items") else dict(vars(wildcards))
