"""Every mechanism's identity: the one entry that every table, figure, claim and audit reads.

A :class:`MechanismIdentity` says which study runs a mechanism, whom it protects
(privacy unit), whether it is local, what a legend and a panel title call it, whether
the privacy audit audits it (its privacy statement is then a claim,
:mod:`dprepro.audit.claims`), where its guarantee is stated and, for a release of
``rrr_survival``, how to build it. Nothing else keeps a copy: the rrr plan's release
list, its figures' order, the audit's claims and every legend are read from here.

Where the entries are made:

* a mechanism on the failure indicator (``ldp_indicators``): its
  :class:`~dprepro.mechanisms.registry.IndicatorMechanism` in
  :mod:`dprepro.mechanisms.registry`, which registers the identity with the mechanism
  (the README's "add a mechanism" recipe; import that module before looking one up);
* the fixed mechanisms of ``rrr_survival`` and ``repr_transfer`` and the non-private
  references: at the end of this module. They live here, not in the registry, so that
  adding a mechanism on δ (an edit of ``registry.py``) reruns the ``ldp_indicators``
  jobs and the audit only: a step script reruns when a module it imports changes
  (``params.library_code``), and the rrr scripts read these entries.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["BEYOND", "IDENTITIES", "MechanismIdentity", "identities", "identity",
           "mechanism_name", "register_identity", "unregister_identity", "words"]


def words(name: str) -> str:
    """``randomized_response`` -> "Randomized response": an identifier as a legend reads it."""
    text = name.replace("_", " ").strip()
    return text[:1].upper() + text[1:]


#: How the source of the project's own mechanism starts (the claims' rule, dprepro.claims).
BEYOND = "beyond the paper"


@dataclass(frozen=True)
class MechanismIdentity:
    """Who a mechanism is: what every table, figure, claim and audit row says about it.

    Parameters
    ----------
    name : str
        The tables' and the audit's ``mechanism`` value.
    study : str
        The study that runs it (``ldp_indicators``, ``rrr_survival``, ``repr_transfer``).
    display_name : str
        Words of a legend or a row label (default: ``name`` in words).
    short_name : str
        Words of a panel title in a study that defines the full name elsewhere
        (default ``display_name``).
    privacy_unit : str
        Whose data one neighbouring change touches (``""`` for a non-private reference).
    local : bool
        Local DP (each person randomises their own value) rather than central DP.
    private : bool
        ``False`` for the non-private references (no ε; ``original``, ``none``).
    audited : bool
        Whether the privacy audit (:func:`dprepro.audit.suite.run_all_audits`) has rows
        of it; its privacy statement is then a claim (:mod:`dprepro.audit.claims`).
    source : str
        Where its privacy guarantee is stated: the paper's section, or text starting with
        "beyond the paper" for the project's own mechanism (the claim's origin follows).
    proof : str
        The published proof its guarantee rests on where no analytic ε is computed.
    build : callable, optional
        ``build(epsilon, labels, calibration) -> mechanism object`` of a release of
        ``rrr_survival`` (:func:`dprepro.studies.rrr_survival.releases.release_mechanism`).
    """

    name: str
    study: str
    display_name: str = ""
    short_name: str = ""
    privacy_unit: str = ""
    local: bool = False
    private: bool = True
    audited: bool = False
    source: str = ""
    proof: str = ""
    build: Callable | None = None

    def __post_init__(self):
        if not self.display_name:
            object.__setattr__(self, "display_name", words(self.name))
        if not self.short_name:
            object.__setattr__(self, "short_name", self.display_name)
        if self.audited and not self.source:
            raise ValueError(f"mechanism {self.name!r} is audited: give the source of its "
                             "privacy guarantee (the paper's section, or 'beyond the paper: ...')")

    @property
    def origin(self) -> str:
        """``paper`` where a paper states its guarantee, ``beyond`` for the project's own."""
        return "beyond" if self.source.lower().startswith(BEYOND) else "paper"

    @property
    def statement(self) -> str:
        """How its privacy claim names it: ``name`` with spaces (``laplace indicators``)."""
        return self.name.replace("_", " ")


#: Every mechanism (and non-private reference) by its tables' name, in registration order.
IDENTITIES: dict[str, MechanismIdentity] = {}


#: Other names of an entry: an indicator mechanism's configuration key -> its tables' name.
_ALIASES: dict[str, str] = {}


def register_identity(entry: MechanismIdentity, *, alias: str = "") -> MechanismIdentity:
    """Add ``entry`` to :data:`IDENTITIES` (its name must be new); ``alias`` is another name
    :func:`identity` knows it by (an indicator mechanism's configuration key)."""
    if not isinstance(entry, MechanismIdentity):
        raise TypeError(f"expected a MechanismIdentity, got {type(entry).__name__}")
    taken = {entry.name, alias} & (set(IDENTITIES) | set(_ALIASES))
    if taken:
        raise ValueError(f"mechanism name(s) {sorted(taken)} already taken")
    IDENTITIES[entry.name] = entry
    if alias and alias != entry.name:
        _ALIASES[alias] = entry.name
    return entry


def unregister_identity(name: str) -> None:
    """Remove the entry ``name`` and its alias (tests register toy mechanisms)."""
    IDENTITIES.pop(name)
    for alias in [a for a, target in _ALIASES.items() if target == name]:
        del _ALIASES[alias]


def identity(name: str) -> MechanismIdentity:
    """The entry of the mechanism the tables call ``name``; an indicator mechanism may also
    be named by its configuration key. ``KeyError`` naming the known ones otherwise."""
    entry = IDENTITIES.get(_ALIASES.get(name, name))
    if entry is None:
        raise KeyError(f"mechanism {name!r} has no entry (dprepro.mechanisms.registry for a "
                       f"mechanism on δ, dprepro.mechanisms.identity otherwise); known: "
                       f"{list(IDENTITIES)}")
    return entry


def identities(study: str | None = None, *, private: bool | None = None,
               audited: bool | None = None) -> list[MechanismIdentity]:
    """The entries of ``study`` (every study when ``None``), in registration order,
    restricted to private ones or references (``private``) and to audited ones."""
    return [e for e in IDENTITIES.values()
            if (study is None or e.study == study)
            and (private is None or e.private == private)
            and (audited is None or e.audited == audited)]


def mechanism_name(identifier: str, *, short: bool = False) -> str:
    """The words for a mechanism identifier (its entry's ``display_name``/``short_name``).

    A rescaled variant ``<name>_scale<c>`` (a deliberately mis-scaled control) reads
    "<words> (noise scale × c)"; an identifier without entry (a composed repr pipeline)
    its words, the underscores as spaces and the first letter capitalised, so no legend
    prints a raw identifier.
    """
    identifier = str(identifier)

    def named(name):
        entry = identity(name)
        return entry.short_name if short else entry.display_name

    base, _, scale = identifier.rpartition("_scale")
    for name, suffix in ((identifier, ""), (base, f" (noise scale × {scale})")):
        try:
            return named(name) + suffix
        except KeyError:
            continue
    return words(identifier)


# ------------------------------------------- the mechanisms of rrr_survival and repr_transfer
# rrr_survival's releases, in table and figure order (the references have no ε)


def _rrr(epsilon, labels, calibration):
    from dprepro.mechanisms.rrr import RevisedRandomizedResponse

    return RevisedRandomizedResponse(epsilon=epsilon, categories=labels, calibration=calibration)


def _rrr_debiased(epsilon, labels, calibration):
    from dprepro.mechanisms.debiased_rrr import DebiasedRRR

    return DebiasedRRR(_rrr(epsilon, labels, calibration))


def _lnte(epsilon, labels, calibration):
    from dprepro.mechanisms.lnte import LNTE

    return LNTE(epsilon=epsilon)


def _lnte_grid(epsilon, labels, calibration):
    from dprepro.mechanisms.grid_lnte import GridLNTE, grid_calibration

    return GridLNTE(epsilon=epsilon, **grid_calibration(calibration))


def _lnte_grid_no_noise(epsilon, labels, calibration):
    from dprepro.mechanisms.grid_lnte import GridDiscretisation, grid_calibration

    return GridDiscretisation(**grid_calibration(calibration))


_RRR_PAPER = "De Faveri et al. (SEBD 2024)"
for _entry in (
    MechanismIdentity(name="original", study="rrr_survival", display_name="Original (non-private)",
                      short_name="Original", privacy_unit="patient", private=False),
    MechanismIdentity(
        name="rrr", study="rrr_survival", display_name="Revised randomized response (RRR)",
        short_name="RRR", privacy_unit="patient", local=True, audited=True, build=_rrr,
        source=f"{_RRR_PAPER}, §4, the expression for ε(p, k) preceding Equation 3 (RRR's "
               "ε-DP property; the denominator (1 − p)(1 − 1/k))"),
    MechanismIdentity(name="rrr_debiased", study="rrr_survival", display_name="Debiased RRR",
                      privacy_unit="patient", local=True, build=_rrr_debiased),
    MechanismIdentity(
        name="lnte", study="rrr_survival", display_name="LNTE", privacy_unit="patient",
        audited=True, build=_lnte,
        source=f"{_RRR_PAPER}, Section 2 (LNTE of Gondara & Wang 2020, 'ensuring DP')"),
    MechanismIdentity(
        name="lnte_grid", study="rrr_survival", display_name="Grid LNTE", privacy_unit="patient",
        audited=True, build=_lnte_grid,
        source="beyond the paper: the project's LNTE on a public grid (configured horizon), "
               "Laplace noise on disjoint event and censoring counts"),
    MechanismIdentity(name="lnte_grid_no_noise", study="rrr_survival",
                      display_name="Grid LNTE without noise", privacy_unit="patient",
                      private=False, build=_lnte_grid_no_noise),
    # repr_transfer's DP learners, as the privacy audit names them
    MechanismIdentity(
        name="objective_perturbation", study="repr_transfer", privacy_unit="cell line",
        audited=True,
        source="Niinimäki et al. (2019), Section 3 (DP logistic regression by objective "
               "perturbation)",
        proof="Chaudhuri, Monteleoni & Sarwate (2011), Theorem 6, under its premises (bias "
              "penalised, exact minimiser)"),
    MechanismIdentity(
        name="ssp", study="repr_transfer", display_name="Sufficient statistics perturbation "
        "(SSP)", short_name="SSP", privacy_unit="cell line", audited=True,
        source="Niinimäki et al. (2019), Section 3 (DP linear regression by sufficient "
               "statistics perturbation)"),
    MechanismIdentity(
        name="subsample_and_aggregate", study="repr_transfer",
        display_name="DP feature selection", short_name="DP feature selection",
        privacy_unit="cell line", audited=True,
        source="beyond the paper: the corrected pipeline's subsample-and-aggregate selection "
               "(Kifer, Smith & Thakurta 2012) with public, hashed parts"),
    MechanismIdentity(name="non_private", study="repr_transfer", display_name="Non-private",
                      privacy_unit="cell line", private=False),
):
    register_identity(_entry)
