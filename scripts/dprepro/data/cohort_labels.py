"""How a cohort table's group labels and status codes are read: one spelling rule for both.

A value of the table matches a configured value (a group, a group alias, an event or
censored status) when it is the same text, or — for status codes — the same number,
or else when both agree after lower-casing and dropping everything but letters and
digits (:func:`label_key`: ``"Very-Low"``, ``"VERY LOW "`` → ``Very Low``; ``"Dead "`` →
``dead``). Every row read through that last rule is counted and logged (``respelled``
in a cohort's summary), so a merge is never silent; two configured values that the
rule cannot tell apart (``HER2+`` and ``HER2-``) are a configuration error
(:func:`spelling_collisions`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

__all__ = ["canonical_groups", "event_indicator", "group_spelling_problems", "label_key",
           "respelled_counts", "spelling_collisions", "status_spelling_problems"]


def label_key(value) -> str:
    """``value`` lower-cased with everything but letters and digits dropped."""
    return "".join(ch for ch in str(value).lower() if ch.isalnum())


def spelling_collisions(values: Iterable) -> list[list[str]]:
    """Sets of distinct ``values`` that :func:`label_key` makes the same (each sorted)."""
    by_key: dict[str, set[str]] = {}
    for value in values:
        by_key.setdefault(label_key(value), set()).add(str(value))
    return [sorted(same) for same in by_key.values() if len(same) > 1]


def respelled_counts(raw, read) -> dict[str, int]:
    """``{"<raw> -> <read>": rows}`` for every row whose text ``raw`` was read as another
    text ``read`` (sorted by the pair)."""
    raw = pd.Series(raw, dtype=object).astype(str).reset_index(drop=True)
    read = pd.Series(read, dtype=object).astype(str).reset_index(drop=True)
    changed = raw != read
    counts = (raw[changed] + " -> " + read[changed]).value_counts().sort_index()
    return {str(k): int(v) for k, v in counts.items()}


def canonical_groups(values, *, groups, aliases=None, source: str, key: str = "groups"):
    """Map the spellings of the configured groups to their configured names.

    A value matches a group (or an alias, ``aliases`` mapping spelling →
    group) when both agree after :func:`label_key` (``Very-Low``, ``VERY LOW`` →
    ``Very Low``). Without configured ``groups`` the values are returned as text
    unchanged.

    Raises
    ------
    ValueError
        A value matches no group; the message names the source, the config
        key and the values found.
    """
    values = pd.Series(values, dtype=object).astype(str)
    if not groups:
        return values.to_numpy(object)
    table = {label_key(g): g for g in groups}
    table.update({label_key(a): g for a, g in (aliases or {}).items()})
    mapped = values.map(lambda v: table.get(label_key(v)))
    if mapped.isna().any():
        bad = sorted(set(values[mapped.isna()]))[:10]
        raise ValueError(f"{source}: groups {bad} match none of {key} = {list(groups)} "
                         "(nor group_aliases); add them to the config or fix the table")
    return mapped.to_numpy(object)


_EVENT_WORDS = ("dead", "death", "died", "deceased", "event", "relapse", "recurrence",
                "progression", "yes", "true", "1")
_CENSORED_WORDS = ("alive", "living", "censored", "censor", "no", "false", "0")


def _status_suggestion(values) -> str:
    """A config line that would read ``values`` as event/censored codes, when it can tell."""
    def guess(words):
        return [v for v in values if any(w == str(v).strip().lower() or
                                         str(v).strip().lower().startswith(w) for w in words)]
    event, censored = guess(_EVENT_WORDS), guess(_CENSORED_WORDS)
    if event and censored and not set(event) & set(censored):
        return f"event_values: {event} and censored_values: {censored}"
    if {_number_text(v) for v in values} == {"1", "2"}:
        # R's Surv() and survival's data sets code the status 1 = censored, 2 = dead
        return ("event_values: [2] and censored_values: [1] if the table uses R's coding "
                "(survival::Surv: 1 = censored, 2 = dead)")
    return "event_values: [<event codes>] and censored_values: [<censored codes>]"


def _number_text(value) -> str:
    """``value`` as an integer's text when it is a whole number (``"2.0"`` -> ``"2"``)."""
    number = pd.to_numeric(pd.Series([str(value)]), errors="coerce").iloc[0]
    return str(int(number)) if pd.notna(number) and float(number).is_integer() else str(value)


def _exact(status: pd.Series, values) -> pd.Series:
    """Rows whose text is one of ``values``, or whose number is one of the numeric ones."""
    text = {str(v) for v in values}
    numbers = {float(v) for v in values if not isinstance(v, bool)
               and isinstance(v, int | float)}
    as_number = pd.to_numeric(status, errors="coerce")
    return status.astype(str).isin(text) | as_number.isin(numbers)


def event_indicator(status: pd.Series, *, event_values, censored_values, name: str,
                    column: str, source: str) -> tuple[np.ndarray, dict[str, int]]:
    """1 where ``status`` is an event value, 0 where censored; anything else raises.

    A value matches as text or number first; a value matching neither is compared by
    :func:`label_key` (the groups' rule), and those rows are returned as counts
    ``{"<value> -> <configured value>": rows}`` for the log.

    Raises
    ------
    ValueError
        A value is neither an event nor a censored value under either rule; the message
        names ``datasets.<name>.event_values``, the values found and a suggestion.
    """
    event, censored = _exact(status, event_values), _exact(status, censored_values)
    rest = ~(event | censored)
    respelled: dict[str, int] = {}
    if rest.any():
        keys = status[rest].astype(str).map(label_key)
        targets: dict[str, str] = {}
        for values, flag in ((event_values, "event"), (censored_values, "censored")):
            for value in values:
                targets.setdefault(label_key(value), (str(value), flag))
        read = keys.map(lambda k: targets.get(k, (None, None))[0])
        kind = keys.map(lambda k: targets.get(k, (None, None))[1])
        event[rest] = (kind == "event").to_numpy()
        censored[rest] = (kind == "censored").to_numpy()
        known = read.notna()
        respelled = respelled_counts(status[rest][known], read[known])
    bad = ~(event | censored)
    if bad.any():
        found = sorted(set(status.astype(str)))
        raise ValueError(
            f"{source}: column {column!r} has values "
            f"{sorted(set(status[bad].astype(str)))[:5]} that are neither event_values "
            f"{list(event_values)} nor censored_values {list(censored_values)}; "
            f"set datasets.{name}.event_values and .censored_values to the table's "
            f"codes (values found: {found[:10]}), e.g. {_status_suggestion(found[:10])}")
    return event.to_numpy(int), respelled


def group_spelling_problems(key: str, groups, aliases) -> list[str]:
    """Configured groups and aliases that the spelling rule cannot tell apart."""
    problems = []
    if not isinstance(aliases, Mapping):
        aliases = {}
    for same in spelling_collisions([*map(str, groups), *map(str, aliases)]):
        # an alias may respell its own group ("VL" of "Very Low" is not a clash)
        targets = {str(aliases.get(v, v)) for v in same}
        if len(targets) > 1:
            problems.append(f"config key '{key}.groups': {same} are one spelling once case, "
                            "spaces and punctuation are dropped (how the table's labels are "
                            "matched), but name different groups; rename one of them")
    return problems


def status_spelling_problems(key: str, event_values, censored_values) -> list[str]:
    """An event and a censored value that the spelling rule cannot tell apart."""
    events = {label_key(v) for v in event_values if not _is_number(v)}
    clash = sorted({str(v) for v in censored_values
                    if not _is_number(v) and label_key(v) in events})
    if not clash:
        return []
    return [f"config key '{key}.censored_values': {clash} match event_values "
            f"{list(event_values)} once case, spaces and punctuation are dropped (how the "
            "table's status values are matched); give codes that differ in letters or digits"]


def _is_number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
