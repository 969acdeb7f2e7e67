r"""Claims as declarations: one entry per claim, shared by the three studies.

A claim is declared once, beside the code that computes its evidence, by decorating
that function with :meth:`ClaimRegistry.declare` of the shared registry :data:`CLAIMS`.
The declaration is the entry a reader (and ``docs/claims.md``) sees: the id pattern,
the statement, where it comes from (``origin`` and ``source``), the statistic, the
criterion, the independent units its interval resamples, how the interval is obtained,
the tolerance that is ours (if any) and the axes the claim expands over::

    @CLAIMS.declare(
        "ldp.generalized_below_beran.c{censoring}", study="ldp_indicators",
        statement="F̌_n outperforms the Beran estimator F_n ({censoring}% censoring)",
        origin="paper", source="paper §5, discussion of Figure 1",
        statistic="IMSE(F̌_n) / IMSE(F_n)", criterion="< 1",
        units="simulated samples", ci_method="percentile bootstrap over the simulated samples",
        over=("censoring",))
    def generalized_below_beran(context, censoring):
        ...
        return Evidence(value, lower, upper)

Adding a claim is adding one such entry: :meth:`ClaimRegistry.evaluate` runs every
declaration of a study over its axes and turns each :class:`Evidence` into a row of the
claims table (:func:`dprepro.claims.table.claim_row`: the verdict, the half- and
double-tolerance verdicts, the ``untestable`` and ``reliable`` rules). The templates
(``{censoring}``) are filled from the axis values and from :attr:`Evidence.fields`
(values only the data give, such as a cohort's true ε).

A row may apply a paper's statement beyond the setting the paper tested (a cohort it did
not analyse, an ε it does not state it at, a mechanism it does not have): the evidence
then says so (:attr:`Evidence.source` and :attr:`Evidence.claim_origin`), and the row is
``beyond`` while the declaration stays the paper's statement.

Rows come in declaration order, then axis order; with ``outer`` axes (a study whose
random streams are shared within, e.g., one pipeline and task), every declaration over
those axes runs inside one loop over them, in declaration order.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from dprepro.claims.table import BEYOND, CLAIM_ORIGINS, Tolerance, claim_row

__all__ = ["CLAIMS", "ClaimDeclaration", "ClaimRegistry", "Evidence"]

#: Row columns evidence may set after the verdict (computed by the study's own rule).
_ROW_COLUMNS = ("verdict_half_tolerance", "verdict_double_tolerance")


@dataclass(frozen=True)
class Evidence:
    """What the data say about one expansion of a declared claim.

    Parameters
    ----------
    value, ci_lower, ci_upper : float
        The statistic and its interval (NaN for an untestable claim without a number).
    note : str
        What the row's numbers need to be read (counts, references, caveats).
    units : int, optional
        Independent units behind the interval, for a criterion with a minimum.
    reliable : bool
        ``False`` when the row's own interval is unreliable (no firm verdict, at our
        tolerance or at half or twice it).
    reliability_reason : str
        Why the interval is unreliable (required with ``reliable=False``; the row's
        ``reliability_reason`` column).
    untestable : str
        Why these data cannot decide the claim (overrides the declaration's).
    paper_value : float or str
        The number the paper prints, where it prints one.
    fields : mapping
        Values for the declaration's templates that only the data give.
    criterion : str or Tolerance, optional
        The criterion when it depends on the configuration (a tolerance of ours).
    ci_method, statistic, statement : str, optional
        Overrides of the declaration's texts where the data change them (``statistic``
        and ``statement`` are templates like the declaration's: literal braces doubled).
    source, claim_origin : str, optional
        The row applies the statement beyond the paper's setting.
    privacy_unit, data_origin : str, optional
        Overrides of the study's defaults (a cohort's own unit and origin).
    columns : mapping
        Values of ``verdict_half_tolerance`` / ``verdict_double_tolerance`` computed by
        the study (a share recomputed at another tolerance); the row's reliability and
        untestable rules apply to them as to its verdict.
    level : float, optional
        The confidence level of the row's interval where it is not the study's (a
        privacy audit's lower bound at 1 − 1e-9).
    """

    value: float
    ci_lower: float
    ci_upper: float
    note: str = ""
    units: int | None = None
    reliable: bool = True
    reliability_reason: str = ""
    untestable: str = ""
    paper_value: float | str = ""
    fields: Mapping = field(default_factory=dict)
    criterion: str | Tolerance | None = None
    ci_method: str | None = None
    statistic: str | None = None
    statement: str | None = None
    source: str | None = None
    claim_origin: str | None = None
    privacy_unit: str | None = None
    data_origin: str | None = None
    columns: Mapping = field(default_factory=dict)
    level: float | None = None


@dataclass(frozen=True)
class ClaimDeclaration:
    """One declared claim: the texts a reader sees and the function giving its evidence.

    ``id``, ``statement``, ``statistic`` and ``criterion`` are templates over the axes in
    ``over`` and the evidence's fields. ``origin`` is ``paper`` (the paper's statement,
    ``source`` its section, figure or table) or ``beyond`` (the project's own; ``source``
    starts with "beyond the paper"). ``units`` names the independent units the interval
    resamples; ``tolerance`` the configuration key of a tolerance that is ours;
    ``untestable`` why no data of the design can decide it (every row then untestable).
    ``group`` names the job that computes it when that is not the study's own claims
    job (``"privacy"``: the privacy statements, from the audit). ``module`` is the
    module that declared it (filled in by :meth:`ClaimRegistry.declare`).
    """

    id: str
    study: str
    statement: str
    origin: str
    source: str
    statistic: str
    criterion: str
    units: str
    ci_method: str
    compute: Callable = field(repr=False, compare=False)
    over: tuple[str, ...] | Callable = ()
    tolerance: str = ""
    untestable: str = ""
    group: str = ""
    module: str = field(default="", compare=False)

    def __post_init__(self):
        prefix = self.study.split("_")[0] + "."
        for name in ("id", "study", "statement", "source", "statistic", "criterion", "units",
                     "ci_method"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"claim {self.id!r}: {name} must be a non-empty string, "
                                 f"got {value!r}")
        if not self.id.startswith(prefix):
            raise ValueError(f"claim {self.id!r} must start with its study's prefix {prefix!r}")
        if self.origin not in CLAIM_ORIGINS:
            raise ValueError(f"claim {self.id!r}: origin must be one of {CLAIM_ORIGINS}, "
                             f"got {self.origin!r}")
        if (self.origin == "beyond") != self.source.lower().startswith(BEYOND):
            raise ValueError(f"claim {self.id!r}: a claim of origin 'beyond' (and only one) "
                             f"has a source starting with {BEYOND!r}, got {self.source!r}")
        if not callable(self.over):
            if isinstance(self.over, str) or not all(isinstance(a, str) for a in self.over):
                raise TypeError(f"claim {self.id!r}: over must be a tuple of axis names or a "
                                f"function of the context, got {self.over!r}")
            object.__setattr__(self, "over", tuple(self.over))

    @functools.cached_property
    def pattern(self) -> re.Pattern:
        """The id pattern as a regular expression (a placeholder matches any text)."""
        parts = re.split(r"\{[^}]*\}", self.id)
        return re.compile("(.+?)".join(re.escape(part) for part in parts))

    @property
    def axes(self) -> tuple[str, ...]:
        """The axis names (empty for a declaration whose bindings come from a function)."""
        return () if callable(self.over) else self.over

    def bindings(self, context, axes: Mapping[str, Sequence]) -> Iterable[dict]:
        """Every binding of the declaration's axes (their product, in axis order)."""
        if callable(self.over):
            yield from (dict(b) for b in self.over(context))
            return
        missing = [a for a in self.over if a not in axes]
        if missing:
            raise KeyError(f"claim {self.id!r} expands over {missing}, which the study does "
                           f"not provide (axes: {sorted(axes)})")
        for values in itertools.product(*(axes[a] for a in self.over)):
            yield dict(zip(self.over, values, strict=True))

    def row(self, evidence: Evidence, binding: Mapping, *, privacy_unit: str,
            data_origin: str, level: float = 0.95) -> dict:
        """The claims-table row of ``evidence`` at ``binding``."""
        if not isinstance(evidence, Evidence):
            raise TypeError(f"claim {self.id!r}: its function must return Evidence or None, "
                            f"got {type(evidence).__name__}")
        values = {**binding, **evidence.fields}

        def fill(name: str, template: str) -> str:
            try:
                return template.format(**values)
            except (KeyError, IndexError) as error:
                raise ValueError(f"claim {self.id!r}: its {name} template {template!r} needs "
                                 f"{error}, which neither its axes {sorted(binding)} nor its "
                                 f"evidence fields {sorted(evidence.fields)} give") from None

        criterion = evidence.criterion
        if criterion is None:
            criterion = fill("criterion", self.criterion)
        untestable = evidence.untestable or self.untestable
        row = claim_row(
            study=self.study, claim_id=fill("id", self.id),
            claim=fill("statement", evidence.statement or self.statement),
            source=evidence.source or self.source,
            claim_origin=evidence.claim_origin or self.origin,
            statistic=fill("statistic", evidence.statistic or self.statistic),
            reproduced_value=evidence.value, ci_lower=evidence.ci_lower,
            ci_upper=evidence.ci_upper, ci_method=evidence.ci_method or self.ci_method,
            criterion=criterion, privacy_unit=evidence.privacy_unit or privacy_unit,
            level=level if evidence.level is None else evidence.level,
            paper_value=evidence.paper_value, note=evidence.note, units=evidence.units,
            data_origin=data_origin if evidence.data_origin is None else evidence.data_origin,
            reliable=evidence.reliable, reliability_reason=evidence.reliability_reason,
            untestable=untestable, tolerance_verdicts=self._columns(evidence))
        return row

    def _columns(self, evidence: Evidence) -> dict:
        """The tolerance verdicts the evidence computed itself (checked by name)."""
        unknown = sorted(set(evidence.columns) - set(_ROW_COLUMNS))
        if unknown:
            raise ValueError(f"claim {self.id!r}: evidence may set only {_ROW_COLUMNS}, "
                             f"got {unknown}")
        return dict(evidence.columns)


class ClaimRegistry:
    """The declared claims of every study, in declaration order (:data:`CLAIMS`)."""

    def __init__(self):
        self._declarations: dict[str, ClaimDeclaration] = {}

    def declare(self, id: str, *, study: str, statement: str, origin: str, source: str,
                statistic: str, criterion: str, units: str, ci_method: str,
                over: Sequence[str] | Callable = (), tolerance: str = "",
                untestable: str = "", group: str = "") -> Callable:
        """Decorator: declare the claim whose evidence the decorated function computes.

        The function is called as ``compute(context, **binding)`` for every binding of
        ``over`` and returns :class:`Evidence`, or ``None`` where the configured data
        have no such row (a mechanism not run, a cohort without the release). It is
        returned unchanged, so it can be tested on its own.
        """
        def register(compute: Callable) -> Callable:
            declaration = ClaimDeclaration(
                id=id, study=study, statement=statement, origin=origin, source=source,
                statistic=statistic, criterion=criterion, units=units, ci_method=ci_method,
                compute=compute, over=over if callable(over) else tuple(over),
                tolerance=tolerance, untestable=untestable, group=group,
                module=getattr(getattr(compute, "func", compute), "__module__", ""))
            if id in self._declarations:
                raise ValueError(f"claim {id!r} is declared twice")
            self._declarations[id] = declaration
            return compute
        return register

    def declarations(self, study: str | None = None, *, group: str | None = None,
                     module: str | None = None) -> list[ClaimDeclaration]:
        """The declarations of ``study``, ``group`` and the declaring ``module`` (every one
        when ``None``), in declaration order."""
        return [d for d in self._declarations.values()
                if (study is None or d.study == study) and (group is None or d.group == group)
                and (module is None or d.module == module)]

    def __getitem__(self, id: str) -> ClaimDeclaration:
        try:
            return self._declarations[id]
        except KeyError:
            raise KeyError(f"no claim declared as {id!r}") from None

    def match(self, claim_id: str) -> ClaimDeclaration:
        """The declaration whose id pattern gives ``claim_id`` (a row's declaration)."""
        found = [d for d in self._declarations.values() if d.pattern.fullmatch(claim_id)]
        if not found:
            raise KeyError(f"claim {claim_id!r} matches no declared id pattern")
        # the most specific pattern: the longest literal text
        return max(found, key=lambda d: len(re.sub(r"\{[^}]*\}", "", d.id)))

    def check_declared(self, claim_ids: Iterable[str]) -> None:
        """Raise ``ValueError`` naming every id that no declaration's pattern gives."""
        undeclared = [i for i in claim_ids
                      if not any(d.pattern.fullmatch(i) for d in self._declarations.values())]
        if undeclared:
            raise ValueError(f"{len(undeclared)} claims rows match no declaration (declare "
                             f"each claim with CLAIMS.declare): {undeclared[:10]}")

    def __contains__(self, id: str) -> bool:
        return id in self._declarations

    def __len__(self) -> int:
        return len(self._declarations)

    def evaluate(self, context, *, study: str | None = None, group: str = "",
                 module: str | None = None,
                 axes: Mapping[str, Sequence] | None = None, outer: Sequence[str] = (),
                 privacy_unit: str = "", data_origin: str = "", level: float = 0.95,
                 only: Iterable[str] | None = None) -> list[dict]:
        """Rows of every claim declared for ``study`` and ``group`` (every study when
        ``None``), :meth:`ClaimDeclaration.row` of each evidence.

        ``axes`` gives each axis's values; ``outer`` axes loop outside the declarations
        (each declaration over all of them runs once per outer binding, in declaration
        order), the others inside. ``privacy_unit`` and ``data_origin`` are the rows'
        defaults (evidence may override them). ``module`` restricts to the declarations
        of one module (a study whose claims come from two jobs' inputs), ``only`` to
        those declaration ids.
        """
        axes = dict(axes or {})
        chosen = self.declarations(study, group=group, module=module)
        if only is not None:
            wanted = set(only)
            unknown = sorted(wanted - {d.id for d in chosen})
            if unknown:
                raise KeyError(f"no claims {unknown} declared for study {study!r}")
            chosen = [d for d in chosen if d.id in wanted]
        if not chosen:
            raise ValueError(f"no claims declared for study {study!r}, group {group!r}; "
                             "import the module that declares them first")
        outer = tuple(outer)
        inside = [d for d in chosen if outer and set(outer) <= set(d.axes)]
        rows: list[dict] = []

        def run(declaration, binding):
            evidence = declaration.compute(context, **binding)
            if evidence is not None:
                rows.append(declaration.row(evidence, binding, privacy_unit=privacy_unit,
                                            data_origin=data_origin, level=level))

        if inside:
            missing = [a for a in outer if a not in axes]
            if missing:
                raise KeyError(f"outer axes {missing} not among the study's axes {sorted(axes)}")
            for values in itertools.product(*(axes[a] for a in outer)):
                fixed = dict(zip(outer, values, strict=True))
                for declaration in inside:
                    rest = {a: ([fixed[a]] if a in fixed else axes[a]) for a in declaration.axes}
                    for binding in declaration.bindings(context, rest):
                        run(declaration, binding)
        for declaration in chosen:
            if declaration in inside:
                continue
            for binding in declaration.bindings(context, axes):
                run(declaration, binding)
        return rows


#: The registry every study declares its claims in.
CLAIMS = ClaimRegistry()
