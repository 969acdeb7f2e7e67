"""The part of the configuration an output was made under, as a sidecar records it.

A sidecar's ``config`` holds the parameters its job ran with; ``run_config`` holds the
configuration *sections* those parameters come from (the study's own section, the
cohorts it reads, the root seed and the figure settings), so that a received results
folder can be checked key by key against the configuration at hand
(:mod:`dprepro.runtime.verify`). The section is chosen by the rule's name: every rule
of a study starts with the study's prefix (``ldp_``, ``rrr_``, ``repr_``).
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["flatten", "run_config_subset"]

#: Datasets entries of the repr_transfer study (the rrr_survival study reads those it lists).
REPR_DATASETS = ("gdsc", "depmap", "tcga")
#: Rules that read a cohort's source only: they record its ``datasets`` entry, not the study
#: section (a change of ε does not rerun them, so it must not make them look stale).
COHORT_RULES = ("rrr_cohort", "cohort_download", "cbioportal_download")
#: Rules of the non-private references, which no release setting reaches.
REFERENCE_RULES = ("rrr_original",)
#: The settings of the private releases only.
RELEASE_KEYS = ("epsilons", "calibration", "extra_calibrations")


def run_config_subset(config: Mapping, rule: str | None,
                      wildcards: Mapping | None = None) -> dict:
    """The configuration sections that can change what ``rule`` makes.

    Parameters
    ----------
    config : mapping
        The whole configuration of the run (schema defaults filled in), or a
        sidecar's recorded subset (narrowed again the same way).
    rule : str or None
        The rule's name; an unknown rule gets the root seed only.
    wildcards : mapping, optional
        The job's wildcards: an rrr job of one cohort (``dataset``) records that
        cohort's ``datasets`` entry only, and not the study's list of cohorts, so
        adding a cohort to a run does not make the others' files look stale.

    Returns
    -------
    dict
        ``seed`` and, by rule: ``ldp_indicators``; ``rrr_survival`` with the
        ``datasets`` it lists; ``repr_transfer`` with ``datasets.gdsc/depmap/tcga``;
        ``audit``; or (the merged claims) ``studies``. Figures add ``figures``.
    """
    rule = rule or ""
    out: dict = {"seed": config.get("seed")}
    datasets = config.get("datasets") or {}
    dataset = (wildcards or {}).get("dataset")
    if rule.startswith("ldp_"):
        out["ldp_indicators"] = config.get("ldp_indicators")
    elif rule.startswith(("rrr_", "cbioportal_", "cohort_")):
        study = config.get("rrr_survival") or {}
        own = {k: v for k, v in study.items() if k != "datasets"} if dataset else study
        if rule in COHORT_RULES:
            pass  # a cohort is its datasets entry: no study setting changes it
        elif rule in REFERENCE_RULES:
            out["rrr_survival"] = {k: v for k, v in own.items() if k not in RELEASE_KEYS}
        else:
            out["rrr_survival"] = own
        # with the cohorts only the Cox analysis reads (rrr_survival.cox.extra_datasets)
        names = [*study.get("datasets", []), *(study.get("cox") or {}).get("extra_datasets", [])]
        if dataset:
            names = [dataset]
        out["datasets"] = {name: datasets.get(name) for name in dict.fromkeys(names)}
    elif rule.startswith(("repr_", "gdsc_", "depmap_", "tcga_")):
        out["repr_transfer"] = config.get("repr_transfer")
        out["datasets"] = {name: datasets.get(name) for name in REPR_DATASETS
                           if name in datasets}
    elif rule.startswith("privacy_audit"):
        out["audit"] = config.get("audit")
    elif rule.startswith("claims"):
        out["studies"] = config.get("studies")
    if rule.endswith(("figure", "figure2", "km_bands", "utility")) or "plot" in rule:
        out["figures"] = config.get("figures")
    return out


def flatten(value, prefix: str = "") -> dict[str, object]:
    """``{"a": {"b": 1}}`` -> ``{"a.b": 1}``; lists and scalars are leaves."""
    if isinstance(value, Mapping):
        out: dict[str, object] = {}
        for key, item in value.items():
            out.update(flatten(item, f"{prefix}{key}."))
        return out if out or not prefix else {prefix[:-1]: {}}
    return {prefix[:-1]: value}
