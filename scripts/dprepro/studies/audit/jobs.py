"""The privacy audit's job plan: what ``privacy_audit_table`` reads besides its short params.

``workflow/rules/audit.smk`` writes ``params: **AUDIT.job_params("privacy_audit_table")``
(the plan's digest, :mod:`dprepro.runtime.job_plan`); the step rebuilds the plan.
"""

from __future__ import annotations

from collections.abc import Mapping

from dprepro.runtime.job_plan import plan_digest

__all__ = ["StudyPlan"]


class StudyPlan:
    """The audit's job plan under one configuration.

    Parameters
    ----------
    config : mapping
        The run's configuration (schema defaults filled in).
    """

    def __init__(self, config: Mapping):
        self.config = config

    def job_params(self, rule: str, **short) -> dict:
        """A rule's ``params``: ``plan_sha256`` (a function of the job's wildcards) and
        ``short``."""

        def plan_sha256(wildcards) -> str:
            return plan_digest(self.params(rule, dict(wildcards.items())))

        return {"plan_sha256": plan_sha256, **short}

    def params(self, rule: str, wildcards: Mapping | None = None) -> dict:
        """The plan of ``privacy_audit_table``: the root seed, the audit's settings and the
        RRR releases the run makes (``[k, ε, calibration]``, none without rrr_survival):
        each gets an audit row, and so a privacy claim, where the shipped rows do not cover
        it.

        Raises
        ------
        KeyError
            For another rule (the audit's others have no plan).
        """
        if rule != "privacy_audit_table":
            raise KeyError(f"rule {rule!r} of the audit has no job plan")
        from dprepro.studies.rrr_survival.plan import privacy_settings

        audit = self.config["audit"]
        return {"seed": self.config["seed"], "draws_scale": audit["draws_scale"],
                "learner_draws_scale": audit["learner_draws_scale"], "level": audit["level"],
                "rrr_settings": (privacy_settings(self.config)
                                 if "rrr_survival" in self.config["studies"] else [])}
