"""Values the rules hand to their jobs: canonical mappings and numbers in file names.

Snakemake compares a job's ``params`` as written, so the same configuration keys in
another order would rerun the job; and a number in a file name must have one spelling.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = ["COMPARED_TYPES", "DERIVING_ARGUMENTS", "EvaluatedParams", "NamedValues",
           "as_recorded", "canonical", "compared_text", "evaluated_params", "number_text"]


def canonical(value):
    """``value`` with every mapping's keys sorted, recursively (lists keep their order).

    >>> canonical({"b": 1, "a": [{"d": 2, "c": 3}]})
    {'a': [{'c': 3, 'd': 2}], 'b': 1}
    """
    if isinstance(value, dict):
        return {key: canonical(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [canonical(item) for item in value]
    return value


def number_text(value) -> str:
    """The canonical text of a number in file names (``0.2`` -> ``'0.2'``, ``2.0`` -> ``'2'``)."""
    return f"{float(value):g}"


def as_recorded(value):
    """``value`` as a sidecar's JSON holds it: keys sorted, tuples as lists, anything JSON
    has no type for as its ``str`` (what :func:`dprepro.runtime.io.write_json` writes)."""
    return json.loads(json.dumps(canonical(value), sort_keys=True, default=str))


class NamedValues(Mapping):
    """A read-only mapping also read by attribute, as Snakemake's ``params`` and
    ``wildcards`` are: ``v.name``, ``v["name"]``, ``v.items()``, ``v.get("name")``."""

    #: What a missing name is called in the ``AttributeError``.
    missing = "no value named"

    def __init__(self, values: Mapping):
        self._values = dict(values)

    def __getitem__(self, key):
        return self._values[key]

    def __iter__(self):
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __getattr__(self, name):
        try:
            return self.__dict__["_values"][name]
        except KeyError:
            raise AttributeError(f"{self.missing} {name!r}") from None


class _Wildcards(NamedValues):
    missing = "this job has no wildcard"


#: The types whose ``repr`` Snakemake compares to decide a rerun (its persistence's
#: ``_serialize_param_builtin``); a param of any other type it does not compare.
COMPARED_TYPES = (int, float, bool, str, complex, range, list, tuple, dict, set, frozenset,
                  bytes, bytearray)
#: The arguments that make a params function *derived* (from the job's files or resources):
#: Snakemake leaves such params out of its comparison.
DERIVING_ARGUMENTS = frozenset({"input", "output", "threads", "resources"})


def compared_text(value) -> str | None:
    """The text Snakemake compares for a param's value (``repr``), or None for a value it
    does not compare (a type outside :data:`COMPARED_TYPES`). ``300`` and ``300.0``,
    ``(1, 2)`` and ``[1, 2]``, or two orders of a dict's keys, differ here as they do for
    Snakemake, though a sidecar's JSON reads them alike."""
    return repr(value) if value is None or isinstance(value, COMPARED_TYPES) else None


@dataclass(frozen=True)
class EvaluatedParams:
    """A rule's params for one job, as :func:`evaluated_params` gives them.

    Attributes
    ----------
    values : dict
        Each compared param's value as a sidecar's JSON holds it (:func:`as_recorded`):
        what a message shows.
    texts : dict
        Each compared param's :func:`compared_text` (None: not compared).
    derived : frozenset
        Names of params functions of the job's input, output, threads or resources, which
        Snakemake does not compare (and verify cannot evaluate from the rules alone).
    """

    values: dict
    texts: dict
    derived: frozenset


# a wildcard as Snakemake reads one: {name} or {name,constraint}, the constraint allowed
# one level of braces ({n,a{3,5}}); the lookahead and back-reference keep it atomic
_WILDCARD = re.compile(r"\{(?=(\s*(?P<name>[.\w]+)(\s*,\s*([^{}]+|\{\d+(,\d+)?\})*)?\s*))\1\}")


def _with_wildcards(pattern: str, wildcards: Mapping) -> str:
    """``pattern`` with each ``{name}`` (or ``{name,regex}``) replaced by the wildcard's value,
    as Snakemake's ``apply_wildcards`` fills a params string."""
    return _WILDCARD.sub(lambda m: str(wildcards[m.group("name")]), pattern)


def evaluated_params(items: Iterable[tuple[str, object]], wildcards: Mapping
                     ) -> EvaluatedParams:
    """A rule's ``params`` for one job, as Snakemake evaluates and compares them.

    Parameters
    ----------
    items : iterable of (name, value)
        The rule's named params as written (a Snakemake rule's ``params.items()``).
    wildcards : mapping
        The job's wildcards (a sidecar's ``wildcards``).

    Returns
    -------
    EvaluatedParams
        As Snakemake's ``Rule.expand_params`` makes them: a string, or each string of a
        list, with the wildcards filled in; a function called with the wildcards (first
        argument); a function that also takes ``input``, ``output``, ``threads`` or
        ``resources`` left out (derived).

    Raises
    ------
    KeyError
        A wildcard a param names that the job does not have.
    """
    job = _Wildcards(wildcards)
    values, texts, derived = {}, {}, set()
    for name, value in items:
        if callable(value):
            if DERIVING_ARGUMENTS & set(inspect.signature(value).parameters):
                derived.add(name)
                continue
            value = value(job)
        elif isinstance(value, str):
            value = _with_wildcards(value, job)
        elif isinstance(value, list):
            value = [_with_wildcards(v, job) if isinstance(v, str) else v for v in value]
        values[name], texts[name] = value, compared_text(value)
    return EvaluatedParams(as_recorded(values), texts, frozenset(derived))
