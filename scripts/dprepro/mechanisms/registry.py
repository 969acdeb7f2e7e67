r"""Registry of the local mechanisms on failure indicators of ``ldp_indicators``.

A mechanism on the failure indicator :math:`\delta \in \{0, 1\}` is one
function ``f(delta, *, alpha, rng) -> released`` registered with
:func:`register` (or the decorator :func:`indicator_mechanism`); the registry entry
(:class:`IndicatorMechanism`) then knows everything the workflow needs:

* how to privatise δ (the function itself: keyword-only ``alpha``, an
  explicit :class:`numpy.random.Generator`);
* how to turn the released values into the input of the presmoother
  (:meth:`IndicatorMechanism.presmoother_input`, e.g. de-biasing so that
  :math:`E[\text{input} \mid \delta] = \delta`);
* its privacy statement (:meth:`IndicatorMechanism.privacy_record`), which
  feeds the tables' ``mechanism``/``alpha`` columns, the provenance sidecars
  and the privacy audit;
* the name of its random stream (:meth:`IndicatorMechanism.noise_step`).

**Common random numbers are a simulation device, never a release design.**
Both registered mechanisms use one noise stream for every α (one standard
Laplace draw per indicator scaled by 1/α; one uniform per indicator for
randomized response), so comparisons across α are paired. Each α is α-LDP on
its own; two α from one stream together are **not private** (ε = ∞): for
Laplace :math:`\alpha_1 Z_1 - \alpha_2 Z_2 = (\alpha_1 - \alpha_2)\delta`, and for
randomized response with shared uniforms :math:`Z_1 \ne Z_2` reveals δ. A
file holding several α of one stream says so in its provenance
(:func:`joint_records`: ``true_epsilon`` ``inf`` over those α).

**One entry per mechanism.** An :class:`IndicatorMechanism` here is all the workflow
knows of a mechanism on δ: registering it also registers its identity
(:attr:`IndicatorMechanism.identity`, a :class:`~dprepro.mechanisms.identity.MechanismIdentity`:
study, privacy unit, legend words, audited, where its guarantee is stated), which the
tables, figures, the privacy audit and its claims (:mod:`dprepro.audit.claims`) read.

**Adding a mechanism on δ** (the README's recipe, which ``tests/test_recipes.py`` runs as
written): append the mechanism to this module, e.g.

.. code-block:: python

    @indicator_mechanism("my_mechanism", description="(α/2)-LDP on δ: Z = δ + Laplace(0, 2/α)",
                         true_epsilon=lambda alpha: alpha / 2,  # the LDP level as run (default α)
                         noise_variance=lambda alpha: 8 / alpha**2)  # Var(Z | δ): variance floor
    def my_indicators(delta, *, alpha, rng):  # the released values, drawn from rng only
        return delta + rng.laplace(0.0, 2.0 / alpha, size=np.shape(delta))

(or ``register(IndicatorMechanism(name=..., function=..., description=..., ...))``), then
list its name under ``ldp_indicators.mechanisms`` in the configuration and regenerate
``docs/claims.md`` (``PYTHONPATH=scripts python -m dprepro.claims.catalogue >
docs/claims.md``: its privacy statement is a claim). Replicate files carry the name as
the ``{mechanism}`` wildcard; the tables, figures, claims and the privacy audit
(:func:`dprepro.audit.suite.run_all_audits` audits every registered mechanism, listed
or not) pick it up. Register it here, at import: :mod:`dprepro.audit.claims` declares
the privacy claims of the entries registered when it is imported.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from dprepro.mechanisms.identity import (
    BEYOND,
    MechanismIdentity,
    register_identity,
    unregister_identity,
)
from dprepro.mechanisms.indicator_draws import (
    debias_randomized_response,
    laplace_indicators,
    randomized_response_indicators,
)
from dprepro.runtime.privacy_record import PrivacyRecord, non_private

__all__ = [
    "IndicatorMechanism",
    "MECHANISMS",
    "PRIVACY_UNIT",
    "REFERENCE",
    "by_release_name",
    "check_mechanism_names",
    "get_mechanism",
    "indicator_mechanism",
    "joint_records",
    "draw_records",
    "records_of",
    "register",
    "rescaled",
    "row_record",
    "unregister",
]

#: Whose data one neighbouring change touches in the simulation.
PRIVACY_UNIT = "individual"

#: The record of the non-private references F̌_n and F_n (``mechanism`` ``none``,
#: empty ``alpha`` in the tables).
REFERENCE = non_private("non-private reference (uses the true δ)", mechanism="none",
                        parameter="alpha", privacy_unit=PRIVACY_UNIT)

_NAME_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789_.")


def _identity(released, *, alpha):
    return released


def _exact(alpha: float) -> float:
    return float(alpha)


@dataclass(frozen=True)
class IndicatorMechanism:
    """One registered mechanism on the failure indicators.

    Parameters
    ----------
    name : str
        Configuration key and ``{mechanism}`` wildcard (lower case, digits, ``_``).
    function : callable
        ``function(delta, *, alpha, rng) -> numpy.ndarray``, the mechanism.
    description : str
        One line a reader needs, e.g. ``"Z = δ + Laplace(1/α)"``; it is the
        privacy note of every release.
    release_name : str
        Value of the tables' ``mechanism`` column (default ``name``).
    debias : callable
        ``debias(released, *, alpha) -> presmoother input`` (default identity),
        so that the presmoother sees an unbiased proxy of δ.
    true_epsilon : callable
        ``alpha -> true ε`` of the mechanism as run (default: exactly α).
    stream : str
        Template of the noise stream name (formatted with ``mechanism``,
        ``censoring``, ``n``, ``alpha``); a template without ``{alpha}`` gives
        common random numbers across α.
    audit_variant : callable
        ``(claimed, run_alpha) -> str``, the ``variant`` text of its audit rows.
    audit_note : str
        ``note`` of its audit rows (default: the neighbours and ``description``).
    noise_variance : callable, optional
        ``alpha -> Var(presmoother input | δ)``, the per-indicator noise
        variance (for the variance floor of the study); ``None`` if unknown.
    stream_name : str
        ``{mechanism}`` in ``stream`` (default ``name``; a rescaled variant
        keeps its base mechanism's streams: common random numbers).
    display_name : str
        Words of its legends and audit rows (default: ``release_name`` in words).
    source : str
        Where its guarantee is stated, the source of its privacy claim (default: the
        project's own mechanism, "beyond the paper: ...").
    """

    name: str
    function: Callable[..., np.ndarray]
    description: str
    release_name: str = ""
    debias: Callable[..., np.ndarray] = _identity
    true_epsilon: Callable[[float], float] = _exact
    stream: str = "privatize/{mechanism}/cens{censoring}/n{n}/alpha{alpha}"
    audit_variant: Callable[[float, float], str] | None = None
    audit_note: str = ""
    noise_variance: Callable[[float], float] | None = None
    stream_name: str = ""
    display_name: str = ""
    source: str = ""

    def __post_init__(self):
        if not self.name or set(self.name) - _NAME_CHARS:
            raise ValueError(f"mechanism name {self.name!r} must be lower-case letters, digits "
                             "and '_' (it is a file-name wildcard)")
        if not callable(self.function):
            raise TypeError(f"mechanism {self.name!r}: function must be callable")
        if not self.release_name:
            object.__setattr__(self, "release_name", self.name)
        if not self.stream_name:
            object.__setattr__(self, "stream_name", self.name)
        if not self.audit_note:
            object.__setattr__(self, "audit_note",
                               f"neighbours: delta = 1 vs delta = 0; {self.description}")
        if not self.source:
            object.__setattr__(self, "source", f"{BEYOND}: the project's mechanism on δ "
                                               f"{self.name!r} (dprepro.mechanisms.registry)")

    @property
    def identity(self) -> MechanismIdentity:
        """Its entry among every study's mechanisms: an α-LDP mechanism of
        ``ldp_indicators`` on the individual's δ, audited by the privacy audit."""
        return MechanismIdentity(name=self.release_name, study="ldp_indicators",
                                 display_name=self.display_name, privacy_unit=PRIVACY_UNIT,
                                 local=True, audited=True, source=self.source)

    def privatize(self, delta, *, alpha: float, rng: np.random.Generator) -> np.ndarray:
        """The released values for indicators ``delta``."""
        return self.function(delta, alpha=alpha, rng=rng)

    def presmoother_input(self, released, *, alpha: float) -> np.ndarray:
        """What the presmoother regresses on (X, Y): de-biased released values."""
        return self.debias(released, alpha=alpha)

    def privacy_record(self, alpha: float, *, release: bool = True) -> PrivacyRecord:
        """The privacy statement of a release at level ``alpha``."""
        alpha = float(alpha)
        return PrivacyRecord(mechanism=self.release_name, release=release, parameter="alpha",
                             stated=alpha, true_epsilon=float(self.true_epsilon(alpha)),
                             privacy_unit=PRIVACY_UNIT, note=self.description)

    @property
    def common_random_numbers(self) -> bool:
        """Whether every α draws from one stream (its template has no ``{alpha}``)."""
        return "{alpha}" not in self.stream

    def noise_step(self, *, censoring: str, n: int, alpha) -> str:
        """Name of the noise stream of one setting.

        ``alpha`` is written as in the workflow's file names (``f"{alpha:g}"``:
        0.2 -> "0.2", 2.0 -> "2"); a string is used as is.
        """
        text = alpha if isinstance(alpha, str) else f"{float(alpha):g}"
        return self.stream.format(mechanism=self.stream_name, censoring=censoring, n=int(n),
                                  alpha=text)

    def variant(self, claimed: float, run_alpha: float) -> str:
        """``variant`` text of an audit row that runs at ``run_alpha`` and claims ``claimed``."""
        if self.audit_variant is not None:
            return self.audit_variant(claimed, run_alpha)
        if math.isclose(claimed, run_alpha):
            return "as run"
        return f"run at alpha {run_alpha:.6g}"


#: Registered mechanisms by name, in registration order.
MECHANISMS: dict[str, IndicatorMechanism] = {}


def register(mechanism: IndicatorMechanism) -> IndicatorMechanism:
    """Add ``mechanism`` to :data:`MECHANISMS` (names and release names must be new)."""
    if not isinstance(mechanism, IndicatorMechanism):
        raise TypeError(f"expected an IndicatorMechanism, got {type(mechanism).__name__}")
    if mechanism.name in MECHANISMS:
        raise ValueError(f"mechanism {mechanism.name!r} is already registered")
    if "." in mechanism.name or _split_scale(mechanism.name)[0] is not None:
        raise ValueError(f"mechanism name {mechanism.name!r}: '.' and '{_SCALE}<c>' are "
                         "reserved for rescaled variants")
    if mechanism.release_name in {m.release_name for m in MECHANISMS.values()} | {"none"}:
        raise ValueError(f"release name {mechanism.release_name!r} is already taken")
    register_identity(mechanism.identity, alias=mechanism.name)
    MECHANISMS[mechanism.name] = mechanism
    return mechanism


def unregister(name: str) -> None:
    """Remove a mechanism (tests register toy mechanisms and remove them again)."""
    unregister_identity(MECHANISMS.pop(name).release_name)


def indicator_mechanism(name: str, *, description: str, **options):
    """Decorator: register ``function(delta, *, alpha, rng)`` as mechanism ``name``.

    ``options`` are the other fields of :class:`IndicatorMechanism`
    (``release_name``, ``debias``, ``true_epsilon``, ``stream``,
    ``audit_variant``). The function is returned unchanged.
    """

    def decorate(function):
        register(IndicatorMechanism(name=name, function=function, description=description,
                                    **options))
        return function

    return decorate


_SCALE = "_scale"


def rescaled(mechanism: IndicatorMechanism, scale: float) -> IndicatorMechanism:
    r"""``mechanism`` with its noise scale multiplied by ``scale`` (a sensitivity variant).

    Runs the mechanism at :math:`\alpha / c` while the tables keep the stated
    :math:`\alpha`, so for :math:`c < 1` it is **not** α-LDP (true ε = α/c),
    which its privacy record says. For Laplace this is
    :math:`Z = \delta + \mathrm{Laplace}(c/\alpha)`. It draws from its base
    mechanism's streams (common random numbers across c). Named
    ``<name>_scale<c>`` (e.g. ``laplace_scale0.25``); not registered, so not
    audited as a mechanism of its own.
    """
    scale = float(scale)
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"noise scale must be finite and > 0, got {scale}")
    base_variance = mechanism.noise_variance
    return IndicatorMechanism(
        name=f"{mechanism.name}{_SCALE}{scale:g}",
        function=lambda delta, *, alpha, rng: mechanism.function(delta, alpha=alpha / scale,
                                                                 rng=rng),
        description=(f"NOT α-LDP: {mechanism.name} with noise scale × {scale:g} (run at α/"
                     f"{scale:g}, so ε = α/{scale:g}); sensitivity analysis, not a release"),
        release_name=f"{mechanism.release_name}{_SCALE}{scale:g}",
        debias=lambda released, *, alpha: mechanism.debias(released, alpha=alpha / scale),
        true_epsilon=lambda alpha: mechanism.true_epsilon(alpha / scale),
        stream=mechanism.stream,
        stream_name=mechanism.stream_name,
        noise_variance=(None if base_variance is None
                        else (lambda alpha: base_variance(alpha / scale))),
    )


def _split_scale(name: str):
    base, _, scale = name.rpartition(_SCALE)
    try:
        return base, float(scale)
    except ValueError:
        return None, None


def get_mechanism(name: str) -> IndicatorMechanism:
    """The registered mechanism ``name`` (or ``<name>_scale<c>``, :func:`rescaled`).

    ``KeyError`` naming the registered ones otherwise.
    """
    if name in MECHANISMS:
        return MECHANISMS[name]
    base, scale = _split_scale(name)
    if base in MECHANISMS:
        return rescaled(MECHANISMS[base], scale)
    raise KeyError(f"unknown indicator mechanism {name!r}; registered: {list(MECHANISMS)}")


def by_release_name(release_name: str) -> IndicatorMechanism:
    """The mechanism whose tables' ``mechanism`` column reads ``release_name``."""
    for mechanism in MECHANISMS.values():
        if mechanism.release_name == release_name:
            return mechanism
    base, scale = _split_scale(release_name)
    if base is not None:
        for mechanism in MECHANISMS.values():
            if mechanism.release_name == base:
                return rescaled(mechanism, scale)
    raise KeyError(f"no registered indicator mechanism is released as {release_name!r}")


def check_mechanism_names(names: Iterable[str], key: str = "ldp_indicators.mechanisms"
                          ) -> list[str]:
    """Problems (one line each) with the configured mechanism names; empty when all known."""
    names = list(names)
    problems = []
    unknown = [n for n in names if n not in MECHANISMS]
    if unknown:
        problems.append(f"config key '{key}': unknown mechanism(s) {unknown}; registered "
                        f"mechanisms are {list(MECHANISMS)} (dprepro.mechanisms.registry)")
    if len(set(names)) != len(names):
        problems.append(f"config key '{key}': names must be unique, got {names}")
    return problems


def joint_records(pairs: Iterable[tuple[IndicatorMechanism, float]]) -> list[PrivacyRecord]:
    r"""The joint guarantee of several α drawn from one noise stream: none (ε = ∞).

    With common random numbers the releases at two levels reveal δ exactly
    (Laplace: :math:`\alpha_1 Z_1 - \alpha_2 Z_2 = (\alpha_1 - \alpha_2)\delta`;
    randomized response with shared uniforms: :math:`Z_1 \ne Z_2` happens only
    when δ is kept at one level and flipped at the other, and then δ is the
    value kept at the larger α). Each α alone stays α-LDP
    (:meth:`IndicatorMechanism.privacy_record`); this record states what a file
    holding several of them delivers *together*.

    Parameters
    ----------
    pairs : iterable of (IndicatorMechanism, float)
        The (mechanism, α) releases of one file.

    Returns
    -------
    list of PrivacyRecord
        One record per noise stream with two or more distinct (mechanism, α)
        (``stated`` nan, ``true_epsilon`` inf, ``extra["joint_over"]`` the
        releases it covers); empty when no stream is shared.
    """
    streams: dict[tuple[str, str], list[tuple[IndicatorMechanism, float]]] = {}
    for mechanism, alpha in pairs:
        if not mechanism.common_random_numbers:
            continue
        group = streams.setdefault((mechanism.stream_name, mechanism.stream), [])
        if (mechanism.release_name, float(alpha)) not in [(m.release_name, a) for m, a in group]:
            group.append((mechanism, float(alpha)))
    records = []
    for group in streams.values():
        if len(group) < 2:
            continue
        over = ", ".join(f"{m.release_name} alpha={a:g}" for m, a in group)
        records.append(PrivacyRecord(
            mechanism=group[0][0].release_name, release=True, parameter="alpha",
            true_epsilon=math.inf, privacy_unit=PRIVACY_UNIT,
            note=("joint over the α in this file: ε = ∞ (common random numbers: two α of one "
                  "noise stream reveal δ); each α alone is α-LDP; a simulation device for "
                  "paired comparisons, never a release design"),
            extra={"joint_over": over}))
    return records


def draw_records(pairs: Iterable[tuple[IndicatorMechanism, float]], *, noise_draws: int
                 ) -> list[PrivacyRecord]:
    r"""The joint guarantee of ``noise_draws`` independent releases of each δ at one α.

    Independent draws compose: M releases of one indicator at level α are
    :math:`M\alpha`-LDP together, and no better for these mechanisms (all M
    Laplace values far on one side, or all M responses equal, give a likelihood
    ratio of :math:`e^{M\alpha}`). The simulation's M draws are a Monte Carlo
    device for the noise part of the error, never a release design. Empty for
    one draw.
    """
    if not isinstance(noise_draws, int | np.integer) or noise_draws < 1:
        raise ValueError(f"noise_draws must be an integer >= 1, got {noise_draws!r}")
    if noise_draws == 1:
        return []
    return [PrivacyRecord(
        mechanism=m.release_name, release=True, parameter="alpha", stated=float(alpha),
        true_epsilon=noise_draws * float(m.true_epsilon(alpha)), privacy_unit=PRIVACY_UNIT,
        note=(f"joint over the {noise_draws} independent noise draws of each δ at this α: "
              f"{noise_draws}α-LDP (composition; each draw alone is α-LDP); a Monte Carlo "
              "device, never a release design"),
        extra={"noise_draws": int(noise_draws)}) for m, alpha in pairs]


def records_of(pairs: Iterable[tuple[str, float]], *, references: bool = True,
               noise_draws: int = 1) -> list[PrivacyRecord]:
    """Privacy records of a file holding ``(mechanism name, α)`` releases (+ references).

    One record per release, then the joint records of the releases that share a
    noise stream (:func:`joint_records`), then, with several noise draws per
    sample, the joint record of each release's draws (:func:`draw_records`),
    then the reference.
    """
    pairs = [(get_mechanism(name), float(alpha)) for name, alpha in pairs]
    records = [m.privacy_record(alpha) for m, alpha in pairs]
    records += joint_records(pairs)
    records += draw_records(pairs, noise_draws=noise_draws)
    return [*records, REFERENCE] if references else records


def row_record(row: Mapping) -> PrivacyRecord:
    """The record a table row's ``mechanism``/``alpha`` columns must equal."""
    if row["mechanism"] == REFERENCE.mechanism:
        return REFERENCE
    return by_release_name(row["mechanism"]).privacy_record(row["alpha"])


# --------------------------------------------------------------------------- mechanisms

register_identity(MechanismIdentity(name=REFERENCE.mechanism, study="ldp_indicators",
                                    display_name="Non-private", private=False))

register(IndicatorMechanism(
    name="laplace",
    function=laplace_indicators,
    description="α-LDP on δ: Z = δ + Laplace(0, 1/α), used as is (E[Z | δ] = δ)",
    display_name="Laplace indicators",
    source="paper §1 (last paragraph) and §5 (Z_k = δ_k + μ_k, Laplace μ_k of parameter α; "
           "scale 1/α is our reading); protects δ only",
    # the historic value of the mechanism column and of the audit rows, kept so
    # that every table stays comparable with earlier runs
    release_name="laplace_indicators",
    # no {alpha}: the same standard Laplace draws at every α, scaled by 1/α
    # (common random numbers), so comparisons across α are paired
    stream="privatize/{mechanism}/cens{censoring}/n{n}",
    audit_variant=lambda claimed, run: ("scale 1/alpha" if math.isclose(1.0 / run, 1.0 / claimed)
                                        else f"scale {1.0 / run:.6g}"),
    audit_note="neighbours: delta = 1 vs delta = 0; true epsilon = 1/scale",
    noise_variance=lambda alpha: 2.0 / alpha**2,
))

register(IndicatorMechanism(
    name="randomized_response",
    function=randomized_response_indicators,
    description=("α-LDP on δ: binary randomized response (δ kept with probability "
                 "e^α/(1+e^α)), de-biased before presmoothing"),
    debias=debias_randomized_response,
    source="beyond the paper: the project's second α-LDP mechanism on δ",
    # no {alpha}: the same uniforms at every α (common random numbers), so
    # comparisons across α are paired
    stream="privatize/{mechanism}/cens{censoring}/n{n}",
    noise_variance=lambda alpha: math.exp(alpha) / math.expm1(alpha) ** 2,
))
