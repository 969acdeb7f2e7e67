"""Configuration checks with messages that name the key and what was expected.

Snakemake's ``validate`` fills in the schema's defaults; its error for a bad
value is jsonschema's raw report.  :func:`check_config` runs first on the same
schema and turns every violation into one line such as::

    config key 'ldp_indicators.alphas[0]': got 0, expected a number > 0

plus the cross-key rules a JSON schema cannot express.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from pathlib import Path

import jsonschema
import yaml

from dprepro.runtime.study_registry import registered_studies

__all__ = ["ConfigError", "load_schema", "check_config", "check_and_fill", "fill_defaults",
           "key_path", "repeated_defaults", "check_studies_registered"]


class ConfigError(ValueError):
    """Invalid configuration; the message lists every problem found."""


# libyaml's loader when PyYAML was built with it: the schema is ~55 kB, which the pure-Python
# loader takes ~0.35 s to parse, on every workflow start (dry runs included).
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_schema(path: str | Path) -> dict:
    """The configuration schema (YAML) at ``path``, as a dict."""
    with open(path, encoding="utf-8") as handle:
        return yaml.load(handle, Loader=_YAML_LOADER)


def key_path(parts) -> str:
    """A configuration key as a reader writes it: ``("datasets", "kidney", "groups", 0)`` ->
    ``datasets.kidney.groups[0]``; no parts -> ``<top level>``."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "<top level>"


def _describe(error: jsonschema.ValidationError) -> str:
    where = key_path(error.absolute_path)
    value = error.instance
    kind, bound = error.validator, error.validator_value
    description = error.schema.get("description", "") if isinstance(error.schema, Mapping) else ""
    hint = f" ({description.strip()})" if description else ""
    if kind == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        unknown = sorted(set(value) - set(allowed)) if isinstance(value, Mapping) else []
        return (f"config key '{where}': unknown key(s) {unknown}; "
                f"allowed keys are {allowed}")
    if kind == "type":
        return (f"config key '{where}': got {value!r} of type {type(value).__name__}, "
                f"expected {bound}{hint}{_yaml_boolean_hint(value, bound)}")
    comparisons = {"exclusiveMinimum": ">", "minimum": ">=", "exclusiveMaximum": "<",
                   "maximum": "<="}
    if kind in comparisons:
        return (f"config key '{where}': got {value!r}, "
                f"expected a number {comparisons[kind]} {bound}{hint}")
    if kind == "enum":
        return f"config key '{where}': got {value!r}, expected one of {bound}{hint}"
    if kind == "pattern":
        return (f"config key '{where}': got {value!r}, which is not of the expected "
                f"form{hint} (pattern {bound!r})")
    if kind == "required":
        return f"config key '{where}': {error.message}"
    return f"config key '{where}': {error.message}{hint}"


def _yaml_boolean_hint(value, expected) -> str:
    """Why a boolean stands where text was expected: YAML reads the bare words yes/no,
    on/off, y/n and true/false as booleans, so ``event_values: [yes]`` holds ``True``."""
    kinds = [expected] if isinstance(expected, str) else list(expected)
    if not isinstance(value, bool) or "boolean" in kinds or "string" not in kinds:
        return ""
    return ("; YAML reads the bare words yes/no, on/off and true/false as booleans: quote "
            "the value as the table writes it (e.g. 'yes', 'no')")


def _semantic_problems(config: Mapping) -> list[str]:
    problems = []
    ldp = config.get("ldp_indicators", {}) or {}
    grid = ldp.get("t_grid", {}) or {}
    if "start" in grid and "stop" in grid and grid["stop"] <= grid["start"]:
        problems.append(f"config key 'ldp_indicators.t_grid.stop': got {grid['stop']}, "
                        f"expected a time greater than t_grid.start = {grid['start']}")
    labels = [c.get("label") for c in ldp.get("censoring", []) or []]
    if len(labels) != len(set(labels)):
        problems.append(
            f"config key 'ldp_indicators.censoring': labels must be unique, got {labels}")
    for i, setting in enumerate(ldp.get("censoring", []) or []):
        for name in ("lambda_t", "lambda_c"):
            vector = setting.get(name) or [1]
            if vector[0] <= 0:
                problems.append(f"config key 'ldp_indicators.censoring[{i}].{name}[0]': "
                                f"got {vector[0]}, expected > 0 "
                                "(the constant term of a hazard rate)")
    from dprepro.mechanisms.registry import check_mechanism_names

    if "mechanisms" in ldp:
        problems += check_mechanism_names(ldp["mechanisms"])
    if "mechanisms" in (ldp.get("convergence") or {}):
        problems += check_mechanism_names(ldp["convergence"]["mechanisms"],
                                          "ldp_indicators.convergence.mechanisms")
    if "mechanism" in (ldp.get("variants") or {}):
        problems += check_mechanism_names([ldp["variants"]["mechanism"]],
                                          "ldp_indicators.variants.mechanism")
    conv = ldp.get("convergence", {}) or {}
    if labels and "censoring" in conv and conv["censoring"] not in labels:
        problems.append(f"config key 'ldp_indicators.convergence.censoring': got "
                        f"{conv['censoring']!r}, expected one of the censoring labels {labels}")
    selection = (config.get("repr_transfer", {}) or {}).get("selection", {}) or {}
    if "pair_folds" in selection:
        n_pairs = len(selection.get("pair_list") or []) or selection.get("pairs", 0)
        if n_pairs and selection["pair_folds"] > n_pairs:
            problems.append(f"config key 'repr_transfer.selection.pair_folds': got "
                            f"{selection['pair_folds']}, expected at most the {n_pairs} "
                            "validation pair(s) (each pair fold scores at least one pair)")
    datasets = config.get("datasets", {}) or {}
    for name, spec in datasets.items():
        if isinstance(spec, Mapping) and spec.get("source") == "file" and not spec.get("path"):
            problems.append(f"config key 'datasets.{name}.path': source is 'file', "
                            f"so a path to the CSV is required")
    return problems


def _schema_problems(config: Mapping, schema: Mapping) -> list[str]:
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: list(map(str, e.absolute_path)))
    return [_describe(e) for e in errors]


#: What a cohort's table looks like: a shipped cohort's defaults of these keys describe
#: its own table, never another one given under its name.
_TABLE_LAYOUT_KEYS = ("columns", "time_divisor", "time_unit", "rows_per_person", "groups",
                      "event_values", "censored_values")


def own_table_under_shipped_name(config: Mapping, schema: Mapping) -> list[str]:
    """Problems of a cohort that gives its own table under a shipped cohort's name.

    A shipped cohort (``datasets.kidney``, ``datasets.ipssr``) has schema defaults that
    describe its table (kidney's times are days divided by ``time_divisor`` 30, two rows
    per patient, four diseases). A table of the user's under that name (another
    ``path``, a ``url`` or a ``package``) would silently take them; every such key the
    configuration does not set is listed, with its inherited value. Read before the
    defaults are filled in: afterwards a default and a set value look the same.
    """
    datasets = schema.get("properties", {}).get("datasets", {})
    shipped = datasets.get("properties") or {}
    generic = _resolve(datasets.get("additionalProperties") or {}, schema).get("properties", {})
    problems = []
    for name, entry in (config.get("datasets") or {}).items():
        props = _resolve(shipped.get(name) or {}, schema).get("properties") or {}
        if not props or not isinstance(entry, Mapping):
            continue
        default = {key: _effective_default(spec, schema) for key, spec in props.items()}
        where = [f"{key} {entry[key]!r}" for key in ("path", "url", "package")
                 if entry.get(key) not in (None, "", default.get(key))]
        if not where:
            continue
        inherited = [f"{key} = {default[key]!r}" for key in _TABLE_LAYOUT_KEYS
                     if key in props and key not in entry
                     and default[key] != _effective_default(generic.get(key) or {}, schema)]
        if inherited:
            problems.append(
                f"datasets.{name}: your own table ({', '.join(where)}) under the shipped "
                f"cohort name {name!r} would take {name}'s layout: {'; '.join(inherited)}; set "
                f"these keys under datasets.{name} to describe your table (the same values if "
                f"it is laid out like {name}'s), or give your cohort a name of its own")
    return problems


def _effective_default(spec: Mapping, schema: Mapping):
    """A key's default as a run sees it: an object's default with its properties' own."""
    spec = _resolve(spec, schema)
    default = spec.get("default")
    if isinstance(default, Mapping) and spec.get("properties"):
        inner = {key: _effective_default(sub, schema) for key, sub in spec["properties"].items()
                 if "default" in _resolve(sub, schema)}
        return {**inner, **default}
    return default


def _raise(problems: list[str]) -> None:
    if problems:
        raise ConfigError("invalid configuration:\n  - " + "\n  - ".join(problems))


def check_config(config: Mapping, schema: Mapping) -> None:
    """Raise :class:`ConfigError` listing every schema and cross-key violation.

    The cross-key rules read the configuration as a run sees it, the schema's defaults
    filled in (on a copy; ``config`` is left as it is): ``config/config.yaml`` sets only
    the keys whose values differ from the defaults.
    """
    problems = _schema_problems(config, schema) or own_table_under_shipped_name(config, schema)
    if not problems:
        problems = _semantic_problems(fill_defaults(copy.deepcopy(config), schema))
    _raise(problems)


def check_and_fill(config: dict, schema: Mapping) -> dict:
    """:func:`check_config`, then :func:`fill_defaults`, in one pass; return ``config``.

    What the workflow runs at its start: the defaults are filled in once, in place,
    between the schema check and the cross-key rules. On a :class:`ConfigError` from
    the cross-key rules ``config`` has its defaults filled in already.
    """
    _raise(_schema_problems(config, schema) or own_table_under_shipped_name(config, schema))
    fill_defaults(config, schema)
    _raise(_semantic_problems(config))
    return config


def check_studies_registered(schema: Mapping) -> None:
    """Raise :class:`ConfigError` unless the schema's ``studies`` list names exactly the
    studies that have a manifest (:func:`dprepro.runtime.study_registry.registered_studies`),
    each with its configuration section.

    The workflow runs it at its start: a study whose package is there but that the schema
    does not list could never be chosen, and a listed one without a manifest has no rules.
    """
    studies = (schema.get("properties") or {}).get("studies") or {}
    listed = list((studies.get("items") or {}).get("enum") or [])
    specs = registered_studies()
    problems = [f"study {spec.name!r} has a manifest (dprepro/studies/{spec.name}/__init__.py) "
                "but is not in the configuration's `studies` choices: add it to the schema's "
                "`studies` list (workflow/schemas/config.schema.yaml: properties.studies, its "
                "`enum` and, to build it by default, its `default`)"
                for spec in specs if spec.name not in listed]
    problems += [f"the schema's `studies` list names {name!r}, which has no manifest: add "
                 f"dprepro/studies/{name}/__init__.py declaring SPEC = StudySpec(...), or "
                 "remove it from the list"
                 for name in listed if name not in {spec.name for spec in specs}]
    problems += [f"study {spec.name!r}: its configuration section {spec.config_key!r} is not "
                 "in the schema's properties"
                 for spec in specs if spec.config_key not in (schema.get("properties") or {})]
    _raise(problems)


def _with_defaults(validator_class):
    """``validator_class`` whose ``properties`` check first sets each missing key's default.

    The extension recipe of the jsonschema FAQ, which ``snakemake.utils.validate`` also uses;
    a default is deep-copied so that filling the config never changes the schema.
    """
    check_properties = validator_class.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for name, subschema in properties.items():
                if isinstance(subschema, Mapping) and "default" in subschema:
                    instance.setdefault(name, copy.deepcopy(subschema["default"]))
        yield from check_properties(validator, properties, instance, schema)

    return jsonschema.validators.extend(validator_class, {"properties": set_defaults})


def fill_defaults(config: dict, schema: Mapping) -> dict:
    """Fill in, in place, every key the schema gives a default for; return ``config``.

    The same result as ``snakemake.utils.validate(config, schema_path)`` (tests compare
    both on the shipped configurations) without its second parse of the schema file by a
    pure-Python YAML loader, which costs ~0.4 s of every workflow start.  Run
    :func:`check_config` first: its messages name the key; this raises jsonschema's own
    ``ValidationError`` only for a config that check_config let through.
    """
    _with_defaults(jsonschema.Draft202012Validator)(schema).validate(config)
    return config


def _resolve(spec: Mapping, schema: Mapping) -> Mapping:
    """``spec``, or the definition its local ``$ref`` (``#/$defs/...``) names."""
    ref = spec.get("$ref") if isinstance(spec, Mapping) else None
    if not ref:
        return spec if isinstance(spec, Mapping) else {}
    node = schema
    for part in ref.removeprefix("#/").split("/"):
        node = node[part]
    return node


def _child_spec(spec: Mapping, key, schema: Mapping) -> Mapping:
    """The schema of ``key`` inside a value of schema ``spec`` (a list index: its items)."""
    spec = _resolve(spec, schema)
    if isinstance(key, int):
        return _resolve(spec.get("items") or {}, schema)
    properties = spec.get("properties") or {}
    if key in properties:
        return _resolve(properties[key], schema)
    return _resolve(spec.get("additionalProperties") or {}, schema)


def repeated_defaults(config: Mapping, schema: Mapping) -> list[str]:
    """The keys of ``config`` whose value is what the schema would fill in without them.

    A key is listed when leaving it out gives the same configuration once the defaults
    are filled in: its value equals its default, the defaults inside both filled in (so
    ``{start: 0.015}`` repeats a default ``{}`` whose ``start`` defaults to 0.015). Values
    compare as their JSON text (``1`` is not ``1.0``; mapping order aside). A key the
    schema requires is never listed, nor one inside a listed key.
    """
    filled = fill_defaults(copy.deepcopy(dict(config)), schema)
    root_validator = _with_defaults(jsonschema.Draft202012Validator)(schema)

    def text(value) -> str:
        return json.dumps(value, sort_keys=True)

    def filled_default(spec: Mapping):
        value = copy.deepcopy(spec["default"])
        root_validator.evolve(schema=spec).validate(value)
        return value

    found = []

    def walk(raw, full, spec, path):
        keys = range(len(raw)) if isinstance(raw, list) else list(raw)
        required = _resolve(spec, schema).get("required") or ()
        for key in keys:
            child = _child_spec(spec, key, schema)
            if (not isinstance(key, int) and key not in required and "default" in child
                    and text(full[key]) == text(filled_default(child))):
                found.append(key_path([*path, key]))
            elif isinstance(raw[key], Mapping | list):
                walk(raw[key], full[key], child, [*path, key])

    walk(config, filled, schema, [])
    return found
