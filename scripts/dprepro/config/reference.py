"""``config/README.md``, rendered from the configuration schema.

The schema (``workflow/schemas/config.schema.yaml``) is the one source of every
key's type, range, default and meaning; this module turns it into the reader's
reference so the two cannot drift apart (``tests/test_config.py`` fails when
the committed file differs from the rendering). Regenerate with::

    PYTHONPATH=scripts python -m dprepro.config.reference > config/README.md

A top-level key whose object has at least :data:`SECTION_MIN_KEYS` keys gets a
section of its own, titled by its ``title``; the other top-level keys share the
"Top level" table. Where a shipped configuration sets a value other than the
schema's default, the default column says so.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import yaml

__all__ = ["SECTION_MIN_KEYS", "render_config_readme", "schema_keys", "main"]

#: Objects with this many keys or more get a section of their own.
SECTION_MIN_KEYS = 3

REGENERATE = "PYTHONPATH=scripts python -m dprepro.config.reference > config/README.md"

_HEADER = """\
<!-- Generated from workflow/schemas/config.schema.yaml; do not edit by hand.
     Regenerate: {regenerate} -->
# Configuration

Three ready configurations:

| file | mode | network |
|---|---|---|
{embedded_rows}
{paper_row}

Every key is checked against `workflow/schemas/config.schema.yaml` before any
job runs. A bad value stops the workflow with one line per problem that names
the key and what was expected, e.g.

```
config key 'ldp_indicators.alphas[0]': got 0, expected a number > 0 (Local privacy levels ...)
config key 'ldp_indicators': unknown key(s) ['bandwith_multiplier']; allowed keys are [...]
```

Keys left out take the **default** below (the schema's). Where a shipped
configuration sets another value, the default column gives it too
(*embedded*: `config/config.yaml`, *full*: `config/full.yaml` over it, *paper*:
`config/paper.yaml`). Override
single keys on the command line with `--config seed=7` or with a YAML of your
own after `--configfile`.

This file is generated from the schema's descriptions, so the schema is the
one place to document a key.
"""

_EMBEDDED_ROWS = (
    "| `config/config.yaml` | **embedded default**, used by plain `snakemake --cores all`: "
    "every figure and table of the three papers at quick Monte Carlo sizes (about 1.5 minutes "
    "on two cores) | none |\n"
    "| `config/full.yaml` | **full embedded run**, `snakemake --cores all --configfile "
    "config/full.yaml`: an overlay of the embedded default that restores the full sizes and "
    "adds the beyond-the-paper cohorts (about 3-4 minutes) | none |")
_PAPER_ROW = ("| `config/paper.yaml` | **paper mode**, `snakemake --cores all --configfile "
              "config/paper.yaml` | cBioPortal, GDSC (Sanger), TCGA (UCSC Xena; or DepMap from "
              "figshare with `repr_transfer.public_source: depmap`) |")

_PLURAL = {"integer": "integers", "number": "numbers", "string": "strings",
           "boolean": "booleans", "object": "objects"}


def schema_keys(schema: Mapping, path: str = "") -> Iterator[tuple[str, Mapping]]:
    """Every key of ``schema`` as ``(dotted path, spec)``, depth first.

    Items of a list of objects appear as ``list[].key``.
    """
    for key, spec in (schema.get("properties") or {}).items():
        where = f"{path}.{key}" if path else key
        yield where, spec
        yield from schema_keys(spec, where)
        items = spec.get("items")
        if isinstance(items, Mapping) and items.get("properties"):
            yield from schema_keys(items, where + "[]")


def _number(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


def _value_text(value) -> str:
    """A default as a reader would write it in YAML (flow style)."""
    if value is None:
        return "null"
    if isinstance(value, bool | int | float):
        return _number(value)
    if isinstance(value, str):
        # quote what YAML would not read back as this string ("25", "", "true")
        return value if value and yaml.safe_load(value) == value else f'"{value}"'
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {_value_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_value_text(v) for v in value) + "]"
    return str(value)


def _bounds(spec: Mapping) -> str:
    low = ("≥", spec["minimum"]) if "minimum" in spec else (
        (">", spec["exclusiveMinimum"]) if "exclusiveMinimum" in spec else None)
    high = ("≤", spec["maximum"]) if "maximum" in spec else (
        ("<", spec["exclusiveMaximum"]) if "exclusiveMaximum" in spec else None)
    if low and high:
        if spec.get("type") == "integer" and low[0] == "≥" and high[0] == "≤":
            return f" {_number(low[1])} … {_number(high[1])}"
        left = "[" if low[0] == "≥" else "("
        right = "]" if high[0] == "≤" else ")"
        return f" in {left}{_number(low[1])}, {_number(high[1])}{right}"
    if low:
        return f" {low[0]} {_number(low[1])}"
    if high:
        return f" {high[0]} {_number(high[1])}"
    return ""


def _type_text(spec: Mapping) -> str:
    """Type and range of a key in a few words (``number in (0, 1]``, ``list of …``)."""
    if "enum" in spec:
        return " \\| ".join(f"`{_value_text(v)}`" for v in spec["enum"])
    kind = spec.get("type", "any")
    if isinstance(kind, list):
        return " or ".join(_type_text({**spec, "type": k}) for k in kind)
    if kind in ("integer", "number"):
        return kind + _bounds(spec)
    if kind == "string":
        if "pattern" in spec:
            return f"string matching `{spec['pattern']}`"
        return "non-empty string" if spec.get("minLength", 0) > 0 else "string"
    if kind == "array":
        items = spec.get("items") if isinstance(spec.get("items"), Mapping) else {}
        if "enum" in items:
            inner = "any of " + ", ".join(f"`{_value_text(v)}`" for v in items["enum"])
        elif isinstance(items.get("type"), list):
            inner = " or ".join(_PLURAL.get(k, k) for k in items["type"])
        elif items.get("type") == "array":
            inner = "lists of " + _type_text(items).removeprefix("list of ")
        else:
            words = _type_text(items).split(" ")
            # pluralise the type word: "non-empty string" -> "non-empty strings"
            at = next((i for i, w in enumerate(words) if w in _PLURAL), None)
            if at is not None:
                words[at] = _PLURAL[words[at]]
            inner = " ".join(words)
        lo, hi = spec.get("minItems"), spec.get("maxItems")
        if lo is not None and lo == hi:
            text = f"{lo} {inner}"
        else:
            text = f"list of {inner}"
            if lo and lo > 1:
                text += f", at least {lo}"
        return text + (", distinct" if spec.get("uniqueItems") else "")
    return kind


def _lookup(config: Mapping | None, path: str):
    node = config
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return _MISSING
        node = node[part]
    return node


_MISSING = object()


def _default_text(path: str, spec: Mapping, configs: Mapping[str, Mapping]) -> str:
    if spec.get("type") == "object" or "[]" in path:
        return ""
    text = f"`{_value_text(spec['default'])}`" if "default" in spec else ""
    others = []
    # once one configuration differs from the default, a later one that sets the key shows
    # its value even when it is the default: an overlay (full over embedded) restoring it
    differs = False
    for label, config in configs.items():
        value = _lookup(config, path)
        if value is _MISSING:
            continue
        if value != spec.get("default") or differs:
            others.append(f"{label}: `{_value_text(value)}`")
            differs = differs or value != spec.get("default")
    if others:
        text += f" ({'; '.join(others)})"
    return text


def _cell(text: str) -> str:
    text = re.sub(r"\s+", " ", str(text)).strip()
    return re.sub(r"(?<!\\)\|", r"\\|", text)


def _table(rows: list[tuple[str, Mapping]], configs: Mapping[str, Mapping]) -> list[str]:
    lines = ["| key | type | default | meaning |", "|---|---|---|---|"]
    for path, spec in rows:
        cells = [f"`{path}`", _type_text(spec), _default_text(path, spec, configs),
                 spec.get("description", "")]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return lines


def render_config_readme(schema: Mapping, configs: Mapping[str, Mapping] | None = None) -> str:
    """Render the configuration reference (Markdown) from a JSON schema.

    Parameters
    ----------
    schema : mapping
        The configuration schema (JSON Schema as loaded from YAML); every key
        needs a ``description``.
    configs : mapping of label to configuration, optional
        Shipped configurations in order (e.g. ``{"embedded": ..., "full": ...,
        "paper": ...}``); a value that differs from the schema's default is shown
        beside it, and so is a later configuration's value for a key where an
        earlier one differs (an overlay that restores the default).

    Returns
    -------
    str
        The Markdown text, ending in a newline; the same inputs give the same
        bytes.
    """
    configs = dict(configs or {})
    missing = [path for path, spec in schema_keys(schema) if not spec.get("description")]
    if missing:
        raise ValueError(f"schema keys without a description: {missing}")
    out = [_HEADER.format(regenerate=REGENERATE, embedded_rows=_EMBEDDED_ROWS,
                          paper_row=_PAPER_ROW).rstrip("\n"), ""]
    top, sections = [], []
    for key, spec in (schema.get("properties") or {}).items():
        rows = [(key, spec), *schema_keys(spec, key)]
        if len(spec.get("properties") or {}) >= SECTION_MIN_KEYS:
            sections.append((key, spec, rows))
        else:
            top.extend(rows)
    if top:
        out += ["## Top level", "", *_table(top, configs), ""]
    for key, spec, rows in sections:
        title = f" — {spec['title']}" if spec.get("title") else ""
        out += [f"## `{key}`{title}", "", *_table(rows, configs), ""]
    # keys of a user-named entry (e.g. any cohort under datasets) live in $defs,
    # referenced from additionalProperties
    for key, spec in (schema.get("properties") or {}).items():
        ref = (spec.get("additionalProperties") or {}) if isinstance(
            spec.get("additionalProperties"), Mapping) else {}
        name = str(ref.get("$ref", "")).removeprefix("#/$defs/")
        target = (schema.get("$defs") or {}).get(name)
        if not target:
            continue
        where = f"{key}.<name>"
        rows = [(where, target), *schema_keys(target, where)]
        out += [f"## `{where}` — any other entry under `{key}`", "",
                target.get("description", ""), "", *_table(rows, {}), ""]
    return "\n".join(out).rstrip("\n") + "\n"


def _repo_root() -> Path:
    return Path(__file__).resolve().parents[3]


def main(argv: list[str] | None = None) -> int:
    """Command line: print (or ``--check``) the rendering of the repository's schema."""
    root = _repo_root()
    parser = argparse.ArgumentParser(prog="python -m dprepro.config.reference",
                                     description="Render config/README.md from the schema.")
    parser.add_argument("--schema", type=Path,
                        default=root / "workflow" / "schemas" / "config.schema.yaml")
    parser.add_argument("--embedded", type=Path, default=root / "config" / "config.yaml")
    parser.add_argument("--full", type=Path, default=root / "config" / "full.yaml")
    parser.add_argument("--paper", type=Path, default=root / "config" / "paper.yaml")
    parser.add_argument("--check", type=Path, metavar="README",
                        help="exit 1 if this file differs from the rendering")
    args = parser.parse_args(argv)
    schema = yaml.safe_load(args.schema.read_text(encoding="utf-8"))
    configs = {label: yaml.safe_load(path.read_text(encoding="utf-8"))
               for label, path in (("embedded", args.embedded), ("full", args.full),
                                   ("paper", args.paper))}
    text = render_config_readme(schema, configs)
    if args.check is not None:
        if args.check.read_text(encoding="utf-8") != text:
            print(f"{args.check} is out of date; regenerate it with: {REGENERATE}",
                  file=sys.stderr)
            return 1
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
