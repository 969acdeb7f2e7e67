"""Study audit: the privacy audit of every mechanism (empirical lower bounds on ε).

Its code is :mod:`dprepro.audit` (a lower layer: the audit reads every study's mechanisms,
and no study package may import another); this package holds only its manifest
(:class:`dprepro.runtime.study_registry.StudySpec`), as every study's does. Its privacy
statements are claims of the study whose mechanism they test (``rrr.privacy.*``), so it
has no claim prefix of its own.
"""

from dprepro.runtime.study_registry import ReportTable, StudySpec

SPEC = StudySpec(
    name="audit",
    config_key="audit",
    rule_prefixes=("privacy_audit",),
    claims_modules=("dprepro.audit.claims",),
    report_tables={
        "audit": ReportTable(
            "results/audit/privacy_audit.csv", "audit", "Privacy audit",
            "One row per mechanism and stated ε or α: the empirical lower bound on ε beside "
            "the claimed and the true ε."),
    },
    privacy_boundary={
        "simulation": ("privacy_audit_table", "privacy_audit_figure", "audit_claims_table"),
        "target": ("audit",),
    },
)
