"""``config/README.md``, rendered from the configuration schema and the shipped configurations.

The schema (``workflow/schemas/config.schema.yaml``) gives every key's type, range, default
and a short description; ``config/config.yaml`` (the quick default), ``config/full.yaml`` and
``config/paper.yaml`` (overlays laid key by key over it) give the values the shipped runs use;
``docs/configuration.md`` holds the longer explanations, one ``### `key``` heading per key
under a section per study. This module turns them into the reader's reference, one line per
key, so none of them can drift from it (``tests/test_config.py`` fails when the committed file
differs from the rendering). Regenerate with::

    PYTHONPATH=scripts python -m dprepro.config.reference > config/README.md

The privacy parameters (every key named like ``epsilon``, ``epsilons``, ``alpha``, ``alphas``
or ``alpha_grid``, see :func:`is_privacy_key`) come first, in a table of their own with the
mechanism each one calibrates (:data:`PRIVACY_KEYS`). A top-level key whose object has at
least :data:`SECTION_MIN_KEYS` keys gets a section of its own, titled by its ``title``; the
other top-level keys share the "Top level" table.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import yaml

from dprepro.runtime.study_registry import registered_studies

__all__ = ["SECTION_MIN_KEYS", "MAX_DESCRIPTION", "LONG_VALUE", "DOCS_LINK", "PRIVACY_KEYS",
           "RELATED_PRIVACY_KEYS", "is_privacy_key", "overlay", "documented_keys", "slug",
           "render_config_readme", "schema_keys", "load_inputs", "main"]

#: Objects with this many keys or more get a section of their own.
SECTION_MIN_KEYS = 3

#: Longest ``description`` a schema key may have; longer explanations belong in the docs.
MAX_DESCRIPTION = 200

#: A shipped value equal to the default is shown as "default" when longer than this.
LONG_VALUE = 40

#: Where a key's line links for its longer explanation (relative to ``config/``).
DOCS_LINK = "../docs/configuration.md"

REGENERATE = "PYTHONPATH=scripts python -m dprepro.config.reference > config/README.md"

#: Every privacy-level key of the schema: (mechanism it calibrates, what the level means),
#: as each study's manifest lists its own (``StudySpec.privacy_keys``); rendered study by
#: study in the order of the schema's sections.
PRIVACY_KEYS: dict[str, tuple[str, str]] = {
    key: value for spec in registered_studies() for key, value in spec.privacy_keys.items()}

#: Keys that set no level but change what a level guarantees (``StudySpec.related_privacy_keys``).
RELATED_PRIVACY_KEYS: dict[str, str] = {
    key: why for spec in registered_studies() for key, why in spec.related_privacy_keys.items()}

_FILES = (
    "| `config/config.yaml` | **quick** default, plain `snakemake --cores all`: every figure and "
    "table of the three papers at small Monte Carlo sizes (about 70 s on two cores) | "
    "none |\n"
    "| `config/full.yaml` | **full** run, `--configfile config/full.yaml`: an overlay of the "
    "quick default with the full sizes and the beyond-the-paper cohorts (about 3 min on 2 cores) | "
    "none |\n"
    "| `config/paper.yaml` | **paper** mode, `--configfile config/paper.yaml`: real data, the "
    "papers' sizes | cBioPortal, GDSC (Sanger), TCGA (UCSC Xena; or DepMap from figshare with "
    "`repr_transfer.public_source: depmap`) |")

_PRIVACY_NAME = re.compile(r"(^|_)(epsilon|alpha)s?($|_)")


def is_privacy_key(path: str) -> bool:
    """Whether a key's own name (last part of ``path``) names a privacy level ε or α."""
    return bool(_PRIVACY_NAME.search(re.split(r"[.\]]", path)[-1]))


_HEADER = """\
<!-- Generated from workflow/schemas/config.schema.yaml, the shipped configurations and
     docs/configuration.md; do not edit by hand. Regenerate: {regenerate} -->
# Configuration reference

One line per key: its type, its default and the value each shipped run uses. Longer
explanations are in [docs/configuration.md]({docs}) (the *more* links).
"""

_PRIVACY_INTRO = """\
## Privacy parameters: where ε and α are set

Every privacy level the configuration sets. The local mechanisms and RRR/LNTE state theirs per
person (per `privacy_unit`); the repr_transfer learners per released model, with no
composition across models (see `repr_transfer.pipelines`).
"""

_PRIVACY_OUTRO = """\
The privacy audit (`audit`) sets no level of its own: it checks every mechanism at fixed
levels (the papers' α and ε) and `audit.level` is only the confidence of its bounds.
"""

_READING = """\
## Reading this file

| file | run | network |
|---|---|---|
{files}

Columns: **default** is the schema's, used for a key no file sets; **quick** is the value in
`config/config.yaml`, which sets only the values that differ from the defaults (— = not set
there, so the default); **full** and **paper** are the values of those runs, whose files are
laid key by key over `config/config.yaml` (same = the quick run's value, because the overlay
leaves the key alone or repeats that value; default = the default column's value, written out
once where it is long).

Every key is checked before any job runs; a bad value stops the workflow with one line per
problem that names the key and what was expected, e.g.

```
config key 'ldp_indicators.alphas[0]': got 0, expected a number > 0 (...)
config key 'ldp_indicators': unknown key(s) ['bandwith_multiplier']; allowed keys are [...]
```

Override single keys with `--config seed=7`, or with a YAML of your own after `--configfile`.
To document a key, edit its `description` in the schema (at most {max_description} characters)
and, for more, its entry in `docs/configuration.md`.
"""

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



_MISSING = object()


def _lookup(config: Mapping | None, path: str):
    node = config
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return _MISSING
        node = node[part]
    return node


def overlay(base: Mapping, over: Mapping) -> dict:
    """``over`` laid key by key over ``base``, as Snakemake merges configuration files.

    Mappings merge recursively; any other value of ``over`` (lists included) replaces
    the base's.
    """
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = overlay(merged[key], value)
        else:
            merged[key] = value
    return merged


def slug(heading: str) -> str:
    """The anchor a Markdown heading gets on GitHub (lower case, punctuation dropped)."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def documented_keys(docs: str) -> dict[str, str]:
    """Keys with a longer explanation in ``docs`` (docs/configuration.md): key -> anchor.

    A level-3 heading (``###``) documents every key written in backticks in it; the anchor
    is that of the level-2 section (``##``) it is in.
    """
    found: dict[str, str] = {}
    section = None
    fenced = False
    for line in docs.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if fenced:
            continue
        if line.startswith("## "):
            section = slug(line[3:])
        elif line.startswith("### ") and section is not None:
            for key in re.findall(r"`([^`]+)`", line):
                if key in found:
                    raise ValueError(f"docs: key {key!r} documented twice")
                found[key] = section
    return found


def _has_value(path: str, spec: Mapping) -> bool:
    # a structured object is described by its rows; a list item's keys vary per item
    return "[]" not in path and not (spec.get("type") == "object" and "properties" in spec)


def _value_cells(path: str, spec: Mapping, configs: Mapping[str, Mapping]) -> list[str]:
    """One cell per configuration: the base's value or "—" where it does not set the key;
    an overlay's value, or "same" where the run keeps the base's (the overlay leaves the key
    alone or repeats its value, or the default where the base leaves the key out)."""
    if not _has_value(path, spec):
        return ["" for _ in configs]

    def shown(value) -> str:
        text = _value_text(value)
        if len(text) > LONG_VALUE and "default" in spec and _same(value, spec["default"]):
            return "default"
        return f"`{text}`"

    cells = []
    base = _MISSING
    for i, config in enumerate(configs.values()):
        value = _lookup(config, path)
        if i == 0:
            cells.append("—" if value is _MISSING else shown(value))
            # a key the base leaves out has its default in the base's run
            base = spec.get("default", _MISSING) if value is _MISSING else value
        elif value is _MISSING or _same(value, base):
            cells.append("same")
        else:
            cells.append(shown(value))
    return cells


def _same(value, other) -> bool:
    """Equal and written alike (``1`` and ``1.0`` are shown apart)."""
    return _value_text(value) == _value_text(other) if other is not _MISSING else False


def _default_cell(path: str, spec: Mapping) -> str:
    if not _has_value(path, spec) or "default" not in spec:
        return ""
    return f"`{_value_text(spec['default'])}`"


def _cell(text: str) -> str:
    text = re.sub(r"\s+", " ", str(text)).strip()
    return re.sub(r"(?<!\\)\|", r"\\|", text)


def _meaning(path: str, spec: Mapping, docs: Mapping[str, str]) -> str:
    text = re.sub(r"\s+", " ", spec.get("description", "")).strip()
    if path in docs:
        text += f" [more]({DOCS_LINK}#{docs[path]})"
    return text


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def _table(rows: list[tuple[str, Mapping]], configs: Mapping[str, Mapping],
           docs: Mapping[str, str]) -> list[str]:
    head = ["key", "type", "default", *configs, "meaning"]
    lines = [_row(head), "|" + "---|" * len(head)]
    for path, spec in rows:
        lines.append(_row([f"`{path}`", _type_text(spec), _default_cell(path, spec),
                           *_value_cells(path, spec, configs), _meaning(path, spec, docs)]))
    return lines


def _privacy_table(keys: dict[str, Mapping], configs: Mapping[str, Mapping],
                   privacy: Mapping[str, tuple[str, str]]) -> list[str]:
    head = ["key", *configs, "mechanism", "meaning"]
    lines = [_row(head), "|" + "---|" * len(head)]
    for path, (mechanism, meaning) in privacy.items():
        lines.append(_row([f"`{path}`", *_value_cells(path, keys[path], configs),
                           mechanism, meaning]))
    return lines


def _check(schema: Mapping, keys: dict[str, Mapping], docs: Mapping[str, str],
           privacy: Mapping[str, tuple[str, str]], related: Mapping[str, str]) -> None:
    cohort_keys = {path for target in (schema.get("$defs") or {}).values()
                   for path, _ in schema_keys(target, "datasets.<name>")}
    everything = {**keys, **dict.fromkeys(cohort_keys, {})}
    problems = []
    missing = [path for path, spec in keys.items() if not spec.get("description")]
    if missing:
        problems.append(f"schema keys without a description: {missing}")
    too_long = [path for path, spec in keys.items()
                if len(re.sub(r"\s+", " ", spec.get("description", "")).strip())
                > MAX_DESCRIPTION]
    if too_long:
        problems.append(f"descriptions over {MAX_DESCRIPTION} characters (move the rest to "
                        f"docs/configuration.md): {too_long}")
    unlisted = [path for path in keys if is_privacy_key(path) and path not in privacy]
    if unlisted:
        problems.append(f"privacy keys missing from PRIVACY_KEYS: {unlisted}")
    stale = [path for path in [*privacy, *related] if path not in keys]
    if stale:
        problems.append(f"PRIVACY_KEYS / RELATED_PRIVACY_KEYS name keys not in the schema: "
                        f"{stale}")
    unknown = [path for path in docs if path not in everything]
    if unknown:
        problems.append(f"docs/configuration.md documents keys not in the schema: {unknown}")
    if problems:
        raise ValueError("; ".join(problems))


def render_config_readme(schema: Mapping, configs: Mapping[str, Mapping] | None = None,
                         docs: str = "", privacy: Mapping[str, tuple[str, str]] | None = None,
                         related: Mapping[str, str] | None = None) -> str:
    """Render the configuration reference (Markdown) from a JSON schema.

    Parameters
    ----------
    schema : mapping
        The configuration schema (JSON Schema as loaded from YAML); every key needs a
        ``description`` of at most :data:`MAX_DESCRIPTION` characters.
    configs : mapping of label to configuration, optional
        The shipped configuration files as read, in column order (e.g. ``{"quick": ...,
        "full": ..., "paper": ...}``): the first is the base, each later one an overlay
        laid over it. Each gets a column: the base's value or "—" where it does not set
        the key; an overlay's value, or "same" where its run keeps the base's value.
    docs : str, optional
        The text of docs/configuration.md; a key with a level-3 heading there gets a
        *more* link to its section (:func:`documented_keys`).
    privacy, related : mapping, optional
        The privacy-level keys (key -> (mechanism, meaning)) and the keys that change what
        a level guarantees (key -> why); default :data:`PRIVACY_KEYS` and
        :data:`RELATED_PRIVACY_KEYS`. Every key :func:`is_privacy_key` names must be in
        ``privacy``.

    Returns
    -------
    str
        The Markdown text, ending in a newline; the same inputs give the same bytes.

    Raises
    ------
    ValueError
        A key without a description or with a longer one, a privacy key missing from
        ``privacy``, or a listed or documented key the schema does not have.
    """
    configs = dict(configs or {})
    privacy = PRIVACY_KEYS if privacy is None else privacy
    related = RELATED_PRIVACY_KEYS if related is None else related
    keys = dict(schema_keys(schema))
    anchors = documented_keys(docs)
    _check(schema, keys, anchors, privacy, related)
    # the studies in the order of their schema sections (the manifests come by name)
    sections = list(schema.get("properties") or {})

    def by_section(mapping: Mapping) -> dict:
        return dict(sorted(mapping.items(), key=lambda item: sections.index(
            item[0].split(".")[0]) if item[0].split(".")[0] in sections else len(sections)))

    privacy, related = by_section(privacy), by_section(related)

    out = [_HEADER.format(regenerate=REGENERATE, docs=DOCS_LINK)]
    if privacy:
        out += [_PRIVACY_INTRO, *_privacy_table(keys, configs, privacy), "",
                _PRIVACY_OUTRO]
        if related:
            out += ["Keys that set no level but change what one guarantees:", ""]
            out += [f"- `{path}`: {why}" for path, why in related.items()]
        out.append("")
    out.append(_READING.format(files=_FILES, max_description=MAX_DESCRIPTION))

    # (link text, heading, rows, extra lines) of each section, in order
    top, sections = [], []
    for key, spec in (schema.get("properties") or {}).items():
        rows = [(key, spec), *schema_keys(spec, key)]
        if len(spec.get("properties") or {}) >= SECTION_MIN_KEYS:
            title = f" — {spec['title']}" if spec.get("title") else ""
            sections.append((f"`{key}`", f"`{key}`{title}", _table(rows, configs, anchors), []))
        else:
            top.extend(rows)
    if top:
        sections.insert(0, ("Top level", "Top level", _table(top, configs, anchors), []))
    # keys of a user-named entry (e.g. any cohort under datasets) live in $defs,
    # referenced from additionalProperties
    for key, spec in (schema.get("properties") or {}).items():
        ref = spec.get("additionalProperties")
        name = str(ref.get("$ref", "")).removeprefix("#/$defs/") if isinstance(
            ref, Mapping) else ""
        target = (schema.get("$defs") or {}).get(name)
        if not target:
            continue
        where = f"{key}.<name>"
        extra = [_cell(target.get("description", "")), ""]
        defined = []
        for label, config in configs.items():
            entries = _lookup(config, key)
            names = [entry for entry in (entries if isinstance(entries, Mapping) else {})
                     if entry not in (spec.get("properties") or {})]
            if names:
                defined.append(f"{label}: " + ", ".join(f"`{entry}`" for entry in names))
        if defined:
            extra += ["Entries of this kind in the shipped configurations (their values are in "
                      f"the files): {'; '.join(defined)}.", ""]
        sections.append((f"`{where}`", f"`{where}` — any other entry under `{key}`",
                         _table([(where, target), *schema_keys(target, where)], {}, anchors),
                         extra))

    out += ["Sections: " + " · ".join(f"[{link}](#{slug(heading)})"
                                      for link, heading, _, _ in sections), ""]
    for _, heading, table, extra in sections:
        out += [f"## {heading}", "", *extra, *table, ""]
    return "\n".join(out).rstrip("\n") + "\n"


def _repo_root() -> Path:
    return Path(__file__).resolve().parents[3]


def load_inputs(root: Path | None = None, schema: Path | None = None,
                quick: Path | None = None, full: Path | None = None,
                paper: Path | None = None, docs: Path | None = None):
    """The repository's schema, shipped configurations and docs text, as the README uses them.

    Returns ``(schema, configs, docs)``, ready for :func:`render_config_readme`.
    """
    root = _repo_root() if root is None else root
    schema = schema or root / "workflow" / "schemas" / "config.schema.yaml"
    paths = {"quick": quick or root / "config" / "config.yaml",
             "full": full or root / "config" / "full.yaml",
             "paper": paper or root / "config" / "paper.yaml"}
    docs = docs or root / "docs" / "configuration.md"
    configs = {label: yaml.safe_load(path.read_text(encoding="utf-8")) or {}
               for label, path in paths.items()}
    return (yaml.safe_load(schema.read_text(encoding="utf-8")), configs,
            docs.read_text(encoding="utf-8") if docs.exists() else "")


def main(argv: list[str] | None = None) -> int:
    """Command line: print (or ``--check``) the rendering of the repository's schema."""
    parser = argparse.ArgumentParser(prog="python -m dprepro.config.reference",
                                     description="Render config/README.md from the schema.")
    parser.add_argument("--schema", type=Path)
    parser.add_argument("--quick", type=Path, help="default: config/config.yaml")
    parser.add_argument("--full", type=Path, help="default: config/full.yaml")
    parser.add_argument("--paper", type=Path, help="default: config/paper.yaml")
    parser.add_argument("--docs", type=Path, help="default: docs/configuration.md")
    parser.add_argument("--check", type=Path, metavar="README",
                        help="exit 1 if this file differs from the rendering")
    args = parser.parse_args(argv)
    schema, configs, docs = load_inputs(schema=args.schema, quick=args.quick, full=args.full,
                                        paper=args.paper, docs=args.docs)
    text = render_config_readme(schema, configs, docs)
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
