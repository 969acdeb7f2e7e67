"""Values the rules hand to their jobs: canonical mappings and numbers in file names.

Snakemake compares a job's ``params`` as written, so the same configuration keys in
another order would rerun the job; and a number in a file name must have one spelling.
"""

from __future__ import annotations

__all__ = ["canonical", "number_text"]


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
