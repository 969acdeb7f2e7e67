"""Values the rules hand to their jobs: canonical mappings and numbers in file names.

Snakemake compares a job's ``params`` as written, so the same configuration keys in
another order would rerun the job; and a number in a file name must have one spelling.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterable, Mapping

__all__ = ["as_recorded", "canonical", "evaluated_params", "number_text"]


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


class _Wildcards(Mapping):
    """A job's wildcards as a params function reads them: ``wc.dataset``, ``wc.items()``."""

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
            raise AttributeError(f"no wildcard {name!r}") from None


def evaluated_params(items: Iterable[tuple[str, object]], wildcards: Mapping, *,
                     rule: str = "") -> dict:
    """A rule's ``params`` for one job, as the job's sidecar records them.

    Parameters
    ----------
    items : iterable of (name, value)
        The rule's named params as written (a Snakemake rule's ``params.items()``): a value,
        or a function of the job's wildcards (called here, as Snakemake calls it).
    wildcards : mapping
        The job's wildcards (a sidecar's ``wildcards``).
    rule : str
        The rule's name, for the error message.

    Returns
    -------
    dict
        Each name's value, :func:`as_recorded`: equal to the sidecar's ``params`` exactly
        when Snakemake would give the job the params it was made with.

    Raises
    ------
    TypeError
        A params function that asks for more than the wildcards (input, output, threads,
        resources): its value depends on Snakemake's job, not only on the rules.
    """
    job = _Wildcards(wildcards)
    values = {}
    for name, value in items:
        if callable(value):
            arguments = list(inspect.signature(value).parameters)
            if len(arguments) != 1:
                raise TypeError(f"rule {rule}: params.{name} is a function of {arguments}; a "
                                "params function here takes the wildcards only")
            value = value(job)
        values[name] = value
    return as_recorded(values)
