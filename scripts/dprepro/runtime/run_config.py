"""The part of the configuration an output was made under, as a sidecar records it.

A sidecar's ``config`` holds the parameters its job ran with; ``run_config`` holds the
configuration *sections* those parameters come from (the study's own section, the
cohorts it reads, the root seed and the figure settings): provenance, for a reader of the
sidecar. (``snakemake verify`` compares the job's params, not these sections,
:mod:`dprepro.runtime.verify`: a key of the section the job does not read changes
nothing it made.) The study is chosen by the rule's name: every rule of a
study starts with one of the prefixes its manifest declares
(:class:`dprepro.runtime.study_registry.StudySpec`: ``ldp_``; ``rrr_``, ``cbioportal_``,
``cohort_``; ...), and the manifest says which sections its rules read.
"""

from __future__ import annotations

from collections.abc import Mapping

from dprepro.runtime.study_registry import StudySpec, study_of_rule

__all__ = ["flatten", "run_config_subset", "study_sections"]


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
        The job's wildcards: a job of one cohort (``dataset``) of a study that lists
        its cohorts records that cohort's ``datasets`` entry only, and not the study's
        list of cohorts, so adding a cohort to a run does not make the others' files
        look stale.

    Returns
    -------
    dict
        ``seed`` and, for a study's rule, its section and the ``datasets`` entries it
        reads (:func:`study_sections`); for the merged claims, ``studies``. Figures add
        ``figures``.
    """
    rule = rule or ""
    out: dict = {"seed": config.get("seed")}
    spec = study_of_rule(rule)
    if spec is not None:
        out.update(study_sections(spec, config, rule, (wildcards or {}).get("dataset")))
    elif rule.startswith("claims"):
        out["studies"] = config.get("studies")
    if rule.endswith(("figure", "figure2", "km_bands", "utility")) or "plot" in rule:
        out["figures"] = config.get("figures")
    return out


def _listed(section: Mapping, dotted: str) -> list:
    """The list at key ``dotted`` (``cox.extra_datasets``) of ``section``; none: empty."""
    value = section
    for part in dotted.split("."):
        value = (value or {}).get(part) if isinstance(value or {}, Mapping) else None
    return list(value or [])


def study_sections(spec: StudySpec, config: Mapping, rule: str,
                   dataset: str | None = None) -> dict:
    """The sections a rule of study ``spec`` records, as its manifest declares them.

    The study's section (without its list of cohorts for a job of one cohort, without
    its release settings for a reference rule, none for a rule that reads a cohort's
    source only), then the ``datasets`` entries it reads: those its section lists (a job
    of one cohort: that one), or its fixed ones that the configuration has.
    """
    key = spec.config_key
    out: dict = {}
    section = config.get(key)
    if spec.datasets_key is not None:
        section = section or {}
    own = section
    if spec.datasets_key is not None and dataset:
        own = {k: v for k, v in section.items() if k != spec.datasets_key}
    if rule in spec.source_rules:
        pass  # a cohort is its datasets entry: no study setting changes it
    elif rule in spec.reference_rules:
        out[key] = {k: v for k, v in (own or {}).items() if k not in spec.release_keys}
    else:
        out[key] = own
    datasets = config.get("datasets") or {}
    if spec.datasets_key is not None:
        names = [dataset] if dataset else [
            *_listed(section, spec.datasets_key),
            *(name for dotted in spec.extra_datasets_keys for name in _listed(section, dotted))]
        out["datasets"] = {name: datasets.get(name) for name in dict.fromkeys(names)}
    elif spec.fixed_datasets:
        out["datasets"] = {name: datasets.get(name) for name in spec.fixed_datasets
                           if name in datasets}
    return out


def flatten(value, prefix: str = "") -> dict[str, object]:
    """``{"a": {"b": 1}}`` -> ``{"a.b": 1}``; lists and scalars are leaves."""
    if isinstance(value, Mapping):
        out: dict[str, object] = {}
        for key, item in value.items():
            out.update(flatten(item, f"{prefix}{key}."))
        return out if out or not prefix else {prefix[:-1]: {}}
    return {prefix[:-1]: value}
