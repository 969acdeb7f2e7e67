"""A job's plan: the long parameters a step reads, kept out of the rule's ``params``.

A rule's ``params`` are what Snakemake prints for every job (its log, the report's "JOB
PARAMETERS") and what it compares to decide a rerun. A study's release list or a whole
configuration section there made both unreadable (the log of a rerun printed the
configuration twice). So a rule's ``params`` hold its short values and ``plan_sha256``,
a digest of the job's *plan* (:func:`plan_digest`); the step rebuilds the plan itself
from the run's configuration and its wildcards (:func:`plan_of_job`) and checks that it
is the one the rule digested (:func:`merged_params`). A changed plan still reruns the
job: its digest is a parameter.

Each study's plan lives in ``dprepro.studies.<study>.jobs`` (a class ``StudyPlan`` of
the configuration, with ``params(rule, wildcards)``). The module is found by the rule's
study (:func:`dprepro.runtime.study_registry.study_of_rule`) and imported by name, so it
is not part of any step's code digest (:mod:`dprepro.runtime.code_version`): an edit to
it reruns the jobs whose plan it changes, through ``plan_sha256``, and no others. The
sidecars record the plan itself, which ``snakemake verify`` rebuilds to name the keys of a
changed plan (:mod:`dprepro.runtime.verify`).
"""

from __future__ import annotations

import hashlib
import importlib
import json
from collections.abc import Mapping

from dprepro.runtime.params import NamedValues, canonical
from dprepro.runtime.study_registry import study_of_rule

__all__ = ["DIGEST_LENGTH", "JobParams", "JobPlans", "plan_of_job", "merged_params",
           "plan_digest", "plan_module_name"]

#: Hex digits of ``plan_sha256`` kept in the params: short enough to read, long enough
#: that two plans of a run never share one (64 bits).
DIGEST_LENGTH = 16


def plan_digest(plan: Mapping) -> str:
    """The first :data:`DIGEST_LENGTH` hex digits of the sha256 of ``plan``'s canonical JSON.

    Keys are sorted at every level and tuples read as lists, so the same plan written in
    another order has the same digest; any changed value (a release, an ε) changes it.
    """
    text = json.dumps(canonical(_plain(plan)), sort_keys=True, default=str,
                      separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:DIGEST_LENGTH]


def _plain(value):
    """``value`` with mappings as dicts and tuples as lists (what :func:`canonical` sorts)."""
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


class JobPlans:
    """What every study's ``StudyPlan`` shares: each job's plan, computed once, and the
    ``params`` a rule gives Snakemake for it.

    A study implements ``_plan(rule, wildcards)`` (raising ``KeyError`` for a rule with
    no plan); this class caches it per (rule, wildcards) and digests it.
    """

    def job_params(self, rule: str, **short) -> dict:
        """A rule's ``params``: ``plan_sha256`` and ``short`` (values shown as they are).

        The digest is a function of the job's wildcards, as Snakemake's ``params`` take
        them: a changed plan reruns the job.
        """

        def plan_sha256(wildcards) -> str:
            return plan_digest(self.params(rule, dict(wildcards.items())))

        return {"plan_sha256": plan_sha256, **short}

    def params(self, rule: str, wildcards: Mapping | None = None) -> dict:
        """The plan of one job of ``rule`` (what its step reads besides the rule's params).

        Raises
        ------
        KeyError
            For a rule of the study that has no plan.
        """
        wildcards = dict(wildcards or {})
        key = (rule, tuple(sorted(wildcards.items())))
        plans = self.__dict__.setdefault("_plans", {})
        if key not in plans:
            plans[key] = self._plan(rule, wildcards)
        return plans[key]

    def _plan(self, rule: str, wildcards: dict) -> dict:
        raise NotImplementedError


def plan_module_name(rule: str) -> str:
    """``dprepro.studies.<study>.jobs``: the plan module of the study ``rule`` belongs to.

    Raises
    ------
    ValueError
        When no study's manifest claims the rule's name.
    """
    spec = study_of_rule(rule)
    if spec is None:
        raise ValueError(f"rule {rule!r} belongs to no study: it has no job plan")
    return f"dprepro.studies.{spec.name}.jobs"


def plan_of_job(config: Mapping, rule: str, wildcards: Mapping | None = None) -> dict:
    """The plan of one job of ``rule``: what its step reads besides the rule's short params.

    Parameters
    ----------
    config : mapping
        The run's configuration (schema defaults filled in), as the rules see it.
    rule : str
        The rule's name.
    wildcards : mapping, optional
        The job's wildcards (``{"dataset": "kidney"}``).

    Returns
    -------
    dict
    """
    module = importlib.import_module(plan_module_name(rule))
    return module.StudyPlan(config).params(rule, dict(wildcards or {}))


class JobParams(NamedValues):
    """A job's parameters, read as Snakemake's ``params`` are: ``p.name``, ``p["name"]``,
    ``p.items()``, ``p.get("name")``."""

    missing = "this job has no parameter"


def merged_params(params: Mapping, config: Mapping, rule: str,
                  wildcards: Mapping | None = None) -> JobParams:
    """The rule's ``params`` and, when they carry ``plan_sha256``, the job's plan.

    Parameters
    ----------
    params : mapping
        The job's ``params`` as Snakemake gives them.
    config, rule, wildcards
        As for :func:`plan_of_job`.

    Returns
    -------
    JobParams
        The plan's entries, then the rule's params (which win on a shared name).

    Raises
    ------
    RuntimeError
        When the plan rebuilt here is not the one the rule digested (the step would
        otherwise run with parameters other than those Snakemake planned it with).
    """
    params = dict(params)
    recorded = params.get("plan_sha256")
    if recorded is None:
        return JobParams(params)
    plan = plan_of_job(config, rule, wildcards)
    if plan_digest(plan) != recorded:
        raise RuntimeError(
            f"rule {rule} (wildcards {dict(wildcards or {})}): the plan rebuilt from the "
            f"configuration has digest {plan_digest(plan)}, the rule's params.plan_sha256 is "
            f"{recorded}: the step and the rules read the configuration differently")
    return JobParams({**plan, **params})
