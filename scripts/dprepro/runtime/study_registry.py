"""Each study's manifest (:class:`StudySpec`), declared once, and the registry that finds them.

A study of the workflow (``ldp_indicators``, ``rrr_survival``, ``repr_transfer``, the privacy
``audit``) is declared once, as data, in its package's ``__init__.py``::

    # dprepro/studies/<name>/__init__.py
    from dprepro.runtime.study_registry import ReportTable, StudySpec

    SPEC = StudySpec(name="<name>", config_key="<name>", rule_prefixes=("<prefix>_",), ...)

Everything that used to keep its own list of studies reads the manifests instead
(:func:`registered_studies`): the configuration sections a sidecar records
(:mod:`dprepro.runtime.run_config`), the claims catalogue
(:func:`dprepro.claims.catalogue.declared_claims`), the privacy keys of the configuration
reference (:mod:`dprepro.config.reference`), the report's tables
(:mod:`dprepro.figures.report_tables`), the privacy boundary of the rules
(:func:`privacy_boundary`) and the check that the schema's ``studies`` list names every study
(:func:`dprepro.config.schema.check_studies_registered`). A new study is its package (with
its manifest), its ``workflow/rules/<name>.smk``, its configuration and schema sections, an
``include:`` in the ``Snakefile`` and its name in the schema's ``studies`` list.

**Why the registry lives in the lowest layer and finds the manifests by name.** Every job
writes its sidecars through :func:`dprepro.runtime.step.write_sidecars`, which records the
configuration sections of the job's study; that needs every study's routing. Were the list
of studies a module the jobs import, its edit (a study added) would change the code digest
of every job (:mod:`dprepro.runtime.code_version`) and rerun them all. So this module knows
no study: it lists the subpackages of ``dprepro.studies`` and imports each one's
``__init__.py`` when first asked (:mod:`importlib`, outside the code digests), and a manifest
imports nothing but this module (``tests/test_layout.py``), so loading them runs no study
code and makes no import cycle. A study's own jobs still rerun when its manifest changes:
their scripts import the study's modules, and the code digest includes the ``__init__.py``
of every package on the way.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import MappingProxyType

__all__ = ["BOUNDARY_CLASSES", "ReportTable", "StudySpec", "privacy_boundary",
           "registered_studies", "study_of_rule", "study_spec"]

#: The package whose subpackages are the studies (one manifest each).
STUDIES_PACKAGE = "dprepro.studies"

#: The classes of the privacy boundary, by what a rule's outputs hold (docs/design.md §7).
BOUNDARY_CLASSES = ("sensitive", "privatization", "release", "reference", "public",
                    "simulation", "target")

#: Rule-name prefixes the workflow keeps for itself (the merged claims, report tables).
RESERVED_PREFIXES = ("claims", "report_tables", "run_manifest", "verify", "all")


@dataclass(frozen=True)
class ReportTable:
    """One table the report shows as a table (:mod:`dprepro.figures.report_tables`).

    Parameters
    ----------
    csv : str
        The CSV a rule writes (relative to the run's directory).
    study : str
        The study it belongs to (the report's category), or ``"claims"``.
    title, caption : str
        The page's title and the sentence above the table.
    """

    csv: str
    study: str
    title: str
    caption: str

    @property
    def category(self) -> str:
        return "claims" if self.study == "claims" else self.study

    @property
    def subcategory(self) -> str:
        return "all claims" if self.study == "claims" else "tables"


def _frozen(mapping: Mapping, what: str, study: str) -> Mapping:
    if not isinstance(mapping, Mapping):
        raise TypeError(f"study {study!r}: {what} must be a mapping, got {mapping!r}")
    return MappingProxyType(dict(mapping))


def _strings(value, what: str, study: str) -> tuple[str, ...]:
    if isinstance(value, str) or not all(isinstance(v, str) and v for v in value):
        raise TypeError(f"study {study!r}: {what} must be a tuple of non-empty strings, "
                        f"got {value!r}")
    return tuple(value)


@dataclass(frozen=True)
class StudySpec:
    """A study's manifest: what the workflow's shared places need to know of it.

    Parameters
    ----------
    name : str
        The study's name: its folder ``dprepro/studies/<name>/``, its value in the
        configuration's ``studies`` list, its ``results/<name>/`` folder and its target rule.
    config_key : str
        Its section of the configuration (and of the schema).
    rule_prefixes : tuple of str
        Every rule of the study starts with one of these (``"rrr_"``, ``"cohort_"``);
        no prefix of one study starts another's. A job's sidecar records the configuration
        sections of the study its rule's name routes it to (:mod:`dprepro.runtime.run_config`).
    claim_prefix : str, optional
        The first part of its claim ids (``"ldp"``: ``ldp.biases_similar...``); ``None`` for
        a study without claims of its own (the audit's privacy statements carry the prefix
        of the study whose mechanism they test).
    claims_modules : tuple of str
        The modules whose import declares the claims it computes
        (:data:`dprepro.claims.registry.CLAIMS`), read by the claims catalogue and the merged
        claims table.
    privacy_keys : mapping of str to (str, str)
        Every key of its configuration section that sets a privacy level: (mechanism it
        calibrates, what the level means), for the configuration reference.
    related_privacy_keys : mapping of str to str
        Keys that set no level but change what one guarantees (key -> why).
    report_tables : mapping of str to ReportTable
        The tables the report shows as tables (name -> table).
    privacy_boundary : mapping of str to tuple of str
        Its rules by class of :data:`BOUNDARY_CLASSES` (docs/design.md §7).
    datasets_key : str, optional
        The key of its section that lists the ``datasets`` entries it reads (``rrr_survival``:
        ``datasets``). A job of one cohort (wildcard ``dataset``) then records that cohort's
        entry and the section without this list, so adding a cohort makes no other
        cohort's files look stale.
    extra_datasets_keys : tuple of str
        Dotted keys of its section listing more entries it reads (``cox.extra_datasets``).
    fixed_datasets : tuple of str
        ``datasets`` entries it always reads (``repr_transfer``: ``gdsc``, ``depmap``,
        ``tcga``), recorded where the configuration has them.
    source_rules : tuple of str
        Rules that read a cohort's source only: they record its ``datasets`` entry, not the
        study's section (no study setting changes them).
    reference_rules, release_keys : tuple of str
        Rules of non-private references, which record the study's section without the
        ``release_keys`` (the settings of the private releases only).
    """

    name: str
    config_key: str
    rule_prefixes: tuple[str, ...]
    claim_prefix: str | None = None
    claims_modules: tuple[str, ...] = ()
    privacy_keys: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    related_privacy_keys: Mapping[str, str] = field(default_factory=dict)
    report_tables: Mapping[str, ReportTable] = field(default_factory=dict)
    privacy_boundary: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    datasets_key: str | None = None
    extra_datasets_keys: tuple[str, ...] = ()
    fixed_datasets: tuple[str, ...] = ()
    source_rules: tuple[str, ...] = ()
    reference_rules: tuple[str, ...] = ()
    release_keys: tuple[str, ...] = ()

    def __post_init__(self):
        name = self.name
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"a study's name must be a Python identifier (its package's "
                             f"name), got {name!r}")
        if not isinstance(self.config_key, str) or not self.config_key:
            raise ValueError(f"study {name!r}: config_key must be a non-empty string")
        set_ = object.__setattr__
        for what in ("rule_prefixes", "claims_modules", "extra_datasets_keys", "fixed_datasets",
                     "source_rules", "reference_rules", "release_keys"):
            set_(self, what, _strings(getattr(self, what), what, name))
        if not self.rule_prefixes:
            raise ValueError(f"study {name!r}: rule_prefixes names none")
        reserved = [p for p in self.rule_prefixes
                    if any(p.startswith(r) or r.startswith(p) for r in RESERVED_PREFIXES)]
        if reserved:
            raise ValueError(f"study {name!r}: rule prefixes {reserved} clash with the "
                             f"workflow's own rules {RESERVED_PREFIXES}")
        if self.claim_prefix is not None and not (self.claim_prefix.isidentifier()
                                                  and self.claims_modules):
            raise ValueError(f"study {name!r}: claim_prefix {self.claim_prefix!r} needs to be "
                             "an identifier, and claims_modules to declare its claims")
        for what in ("privacy_keys", "related_privacy_keys", "report_tables"):
            set_(self, what, _frozen(getattr(self, what), what, name))
        outside = [k for k in [*self.privacy_keys, *self.related_privacy_keys]
                   if not k.startswith(self.config_key + ".")]
        if outside:
            raise ValueError(f"study {name!r}: privacy keys {outside} are not keys of its "
                             f"section {self.config_key!r}")
        wrong = [k for k, t in self.report_tables.items()
                 if not isinstance(t, ReportTable) or t.study != name]
        if wrong:
            raise ValueError(f"study {name!r}: report tables {wrong} must be ReportTable "
                             f"entries of study {name!r}")
        boundary = _frozen(self.privacy_boundary, "privacy_boundary", name)
        unknown = sorted(set(boundary) - set(BOUNDARY_CLASSES))
        if unknown:
            raise ValueError(f"study {name!r}: privacy boundary classes {unknown} are not "
                             f"among {BOUNDARY_CLASSES}")
        set_(self, "privacy_boundary", MappingProxyType(
            {c: _strings(rules, f"privacy_boundary[{c!r}]", name)
             for c, rules in boundary.items()}))
        rules = [r for rules in self.privacy_boundary.values() for r in rules]
        twice = sorted({r for r in rules if rules.count(r) > 1})
        if twice:
            raise ValueError(f"study {name!r}: rules {twice} are in more than one privacy "
                             "boundary class")
        if self.datasets_key is not None and self.fixed_datasets:
            raise ValueError(f"study {name!r}: a study lists its datasets (datasets_key) or "
                             "reads fixed ones (fixed_datasets), not both")

    def owns_rule(self, rule: str) -> bool:
        """Whether ``rule`` (a rule's name) is one of this study's."""
        return rule.startswith(self.rule_prefixes)

    @property
    def rules(self) -> tuple[str, ...]:
        """The rules its privacy boundary classifies, in class order."""
        return tuple(r for c in BOUNDARY_CLASSES for r in self.privacy_boundary.get(c, ()))


def _load(package: str, name: str) -> StudySpec:
    module = importlib.import_module(f"{package}.{name}")
    spec = getattr(module, "SPEC", None)
    where = getattr(module, "__file__", f"{package}.{name}")
    if not isinstance(spec, StudySpec):
        raise TypeError(f"{where}: a study package declares its manifest as "
                        f"SPEC = StudySpec(...) (dprepro.runtime.study_registry), got {spec!r}")
    if spec.name != name:
        raise ValueError(f"{where}: the manifest's name {spec.name!r} is not its folder's "
                         f"{name!r}")
    return spec


def _check(specs: Iterable[StudySpec]) -> None:
    """Refuse two studies whose rule prefixes, config keys or rules overlap."""
    specs = list(specs)
    for i, a in enumerate(specs):
        for b in specs[i + 1:]:
            clash = [(p, q) for p in a.rule_prefixes for q in b.rule_prefixes
                     if p.startswith(q) or q.startswith(p)]
            if clash:
                raise ValueError(f"studies {a.name!r} and {b.name!r} have overlapping rule "
                                 f"prefixes {clash}: a rule's name must name one study")
            if a.config_key == b.config_key:
                raise ValueError(f"studies {a.name!r} and {b.name!r} share the configuration "
                                 f"section {a.config_key!r}")
            both = sorted(set(a.rules) & set(b.rules))
            if both:
                raise ValueError(f"studies {a.name!r} and {b.name!r} both classify rules "
                                 f"{both}")


@cache
def _discover(package: str, path: tuple[str, ...]) -> tuple[StudySpec, ...]:
    names = sorted(m.name for m in pkgutil.iter_modules(list(path)) if m.ispkg)
    specs = tuple(_load(package, name) for name in names)
    _check(specs)
    return specs


def registered_studies() -> tuple[StudySpec, ...]:
    """Every study's manifest, by name: the subpackages of ``dprepro.studies``.

    The manifests are found when first asked for (and again when the package's ``__path__``
    changes, as a test that adds a study does).

    Raises
    ------
    TypeError, ValueError
        A study package without ``SPEC = StudySpec(...)``, a manifest named unlike its
        folder, or two studies whose rule prefixes, configuration sections or classified
        rules overlap.
    """
    package = importlib.import_module(STUDIES_PACKAGE)
    return _discover(STUDIES_PACKAGE, tuple(package.__path__))


def study_spec(name: str) -> StudySpec:
    """The manifest of study ``name``; ``KeyError`` naming the known studies otherwise."""
    for spec in registered_studies():
        if spec.name == name:
            return spec
    known = [s.name for s in registered_studies()]
    raise KeyError(f"no study {name!r}: the studies are {known} (each a package "
                   f"dprepro/studies/<name>/ declaring SPEC = StudySpec(...))")


def study_of_rule(rule: str) -> StudySpec | None:
    """The study whose rule prefixes name ``rule``, or ``None`` (the workflow's own rules)."""
    for spec in registered_studies():
        if spec.owns_rule(rule):
            return spec
    return None


def privacy_boundary(path: str | Path) -> dict[str, list[str]]:
    """The privacy boundary of every rule: the workflow's own (the YAML file at ``path``,
    ``workflow/privacy_boundary.yaml``) and each study's (its manifest).

    Returns
    -------
    dict
        Class of :data:`BOUNDARY_CLASSES` -> rules (the file's first, then each study's).

    Raises
    ------
    ValueError
        An unknown class, or a rule classified twice (naming both places).
    """
    import yaml  # only the tests and the rules' checks read the boundary, not every job

    own = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    unknown = sorted(set(own) - set(BOUNDARY_CLASSES))
    if unknown:
        raise ValueError(f"{path}: unknown privacy boundary classes {unknown}; expected "
                         f"{BOUNDARY_CLASSES}")
    merged = {c: list(own.get(c) or []) for c in BOUNDARY_CLASSES}
    where = {rule: str(path) for rules in merged.values() for rule in rules}
    for spec in registered_studies():
        for cls, rules in spec.privacy_boundary.items():
            for rule in rules:
                if rule in where:
                    raise ValueError(f"rule {rule!r} is classified twice: in {where[rule]} "
                                     f"and in study {spec.name!r}'s manifest")
                where[rule] = f"study {spec.name!r}'s manifest"
                merged[cls].append(rule)
    return merged
