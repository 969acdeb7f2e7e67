"""config/README.md: one short line per key with type, default and the shipped runs' values,
the privacy levels first, and links into docs/configuration.md for the long explanations."""

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from dprepro.config.reference import (
    DOCS_LINK,
    MAX_DESCRIPTION,
    PRIVACY_KEYS,
    REGENERATE,
    documented_keys,
    is_privacy_key,
    load_inputs,
    main,
    overlay,
    render_config_readme,
    schema_keys,
)

ROOT = Path(__file__).resolve().parents[1]

TOY = {
    "type": "object",
    "properties": {
        "seed": {"type": "integer", "minimum": 0, "maximum": 10, "default": 3,
                 "description": "Base seed."},
        "small": {
            "type": "object", "default": {}, "description": "Two keys only.",
            "properties": {
                "level": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 0.5,
                          "default": 0.1, "description": "A level."},
                "label": {"type": "string", "pattern": "^[0-9]+$", "default": "25",
                          "description": "A label\n  over two lines | with a pipe."},
            },
        },
        "study": {
            "type": "object", "title": "the toy study", "default": {},
            "description": "Three keys: a section of its own.",
            "properties": {
                "alphas": {"type": "array", "items": {"type": "number", "exclusiveMinimum": 0},
                           "minItems": 2, "uniqueItems": True, "default": [0.2, 1.0],
                           "description": "Levels."},
                "kind": {"type": "string", "enum": ["paper", "exact"], "default": "paper",
                         "description": "Which calibration."},
                "settings": {
                    "type": "array", "default": [], "description": "Settings.",
                    "items": {"type": "object", "properties": {
                        "rate": {"type": "array", "items": {"type": "number", "minimum": 0},
                                 "minItems": 3, "maxItems": 3, "description": "Three rates."},
                    }},
                },
            },
        },
    },
}
TOY_PRIVACY = {"study.alphas": ("toy Laplace", "toy levels")}
TOY_DOCS = """\
# Toy docs

## shared

### `seed`

How the seed is used, at length.

## study

```
### `not.a.key` (inside a code block: ignored)
```

### `study.kind`, `study.alphas`

Both explained here.
"""


def render(configs=None, docs="", privacy=None, schema=TOY, related=None):
    return render_config_readme(schema, configs, docs,
                                privacy=TOY_PRIVACY if privacy is None else privacy,
                                related={} if related is None else related)


def row(text, key, after=None):
    """The cells of ``key``'s one line in the key tables (after the heading ``after``)."""
    if after is not None:
        text = text.split(after, 1)[1]
    text = text.split("## Reading this file", 1)[-1]
    lines = [line for line in text.splitlines() if line.startswith(f"| `{key}` |")]
    assert len(lines) == 1, f"{key}: {lines}"
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", lines[0].strip("|"))]


def privacy_section(text):
    return text.split("## Privacy parameters: where ε and α are set", 1)[1].split("\n## ", 1)[0]


# ---------------------------------------------------------------- the generator, on a toy


def test_schema_keys_walks_nested_objects_and_list_items():
    keys = [key for key, _ in schema_keys(TOY)]
    assert keys == ["seed", "small", "small.level", "small.label", "study", "study.alphas",
                    "study.kind", "study.settings", "study.settings[].rate"]


def test_every_key_has_one_row_with_type_default_and_meaning():
    text = render()
    assert row(text, "seed") == ["`seed`", "integer 0 … 10", "`3`", "Base seed."]
    assert row(text, "small.level")[1:3] == ["number in (0, 0.5)", "`0.1`"]
    assert row(text, "study.alphas")[1:3] == ["list of numbers > 0, at least 2, distinct",
                                              "`[0.2, 1.0]`"]
    assert row(text, "study.kind")[1] == "`paper` \\| `exact`"
    assert row(text, "study.settings[].rate")[1:3] == ["3 numbers ≥ 0", ""]
    # objects have no default cell; the section object itself is its first row
    assert row(text, "study")[2] == ""


def test_strings_yaml_would_misread_are_quoted_and_cells_are_escaped():
    label = row(render(), "small.label")
    assert label[2] == '`"25"`'  # a bare 25 would be read back as an integer
    assert label[3] == "A label over two lines \\| with a pipe."


def test_small_objects_stay_in_the_top_table_and_large_ones_get_a_titled_section():
    text = render()
    top = text.split("## Top level", 1)[1].split("\n## ", 1)[0]
    assert "`small.level`" in top and "`study.kind`" not in top
    section = text.split("## `study` — the toy study", 1)[1]
    assert "`study.kind`" in section and "`small.level`" not in section
    # the section list links each heading's anchor
    assert "[`study`](#study--the-toy-study)" in text and "[Top level](#top-level)" in text


def test_value_columns_show_the_base_value_or_a_dash_and_the_overlays_or_same():
    configs = {"quick": {"seed": 7, "study": {"kind": "paper"}},
               "full": {"seed": 3, "study": {"kind": "paper"}},
               "paper": {"small": {"level": 0.2}}}
    text = render(configs)
    assert row(text, "seed")[:1] + row(text, "seed")[2:6] == ["`seed`", "`3`", "`7`", "`3`",
                                                             "same"]
    # an overlay repeating the base's value reads "same"; a key no file sets reads "—"
    assert row(text, "study.kind")[3:6] == ["`paper`", "same", "same"]
    assert row(text, "small.level")[3:6] == ["—", "same", "`0.2`"]
    # objects and list items carry no values
    assert row(text, "study")[3:6] == ["", "", ""]
    assert row(text, "study.settings[].rate")[3:6] == ["", "", ""]


def test_a_long_value_equal_to_the_default_is_not_written_twice():
    schema = {"properties": {"genes": {
        "type": "array", "items": {"type": "string"}, "description": "Genes.",
        "default": [f"GENE{i:04d}" for i in range(10)]}}}
    text = render({"quick": {"genes": [f"GENE{i:04d}" for i in range(10)]},
                   "paper": {"genes": ["TP53"]}}, schema=schema, privacy={})
    cells = row(text, "genes")
    assert cells[2].startswith("`[GENE0000") and cells[3:5] == ["default", "`[TP53]`"]


def test_overlay_merges_mappings_key_by_key_and_replaces_lists():
    base = {"a": {"x": 1, "y": [1, 2]}, "b": 2}
    assert overlay(base, {"a": {"y": [3]}, "c": 4}) == {"a": {"x": 1, "y": [3]}, "b": 2, "c": 4}
    assert base == {"a": {"x": 1, "y": [1, 2]}, "b": 2}


@pytest.mark.parametrize(("path", "expected"), [
    ("ldp_indicators.alphas", True), ("ldp_indicators.alpha_grid", True),
    ("repr_transfer.drug.epsilon", True), ("repr_transfer.cancer_type.epsilons", True),
    ("audit.claimed_epsilon", True), ("x.alpha", True),
    ("repr_transfer.cancer_type.l2", False), ("audit.level", False),
    ("ldp_indicators.alphabet", False), ("study.epsilonic", False),
])
def test_privacy_keys_are_found_by_their_own_name(path, expected):
    assert is_privacy_key(path) is expected


def test_privacy_levels_come_first_with_mechanism_and_meaning():
    text = render({"quick": {"study": {"alphas": [0.5, 2.0]}}, "full": {}})
    assert text.index("## Privacy parameters") < text.index("## Reading this file") < text.index(
        "## Top level")
    lines = [line for line in privacy_section(text).splitlines() if line.startswith("| `")]
    assert lines == ["| `study.alphas` | `[0.5, 2.0]` | same | toy Laplace | toy levels |"]


def test_a_privacy_key_without_an_entry_or_a_stale_entry_is_refused():
    with pytest.raises(ValueError, match=r"missing from PRIVACY_KEYS: \['study.alphas'\]"):
        render(privacy={"seed": ("m", "x")})
    with pytest.raises(ValueError, match=r"not in the schema: \['study.gone'\]"):
        render(privacy={**TOY_PRIVACY, "study.gone": ("m", "x")})


def test_a_key_without_description_is_refused_by_name():
    schema = {"properties": {"a": {"type": "object", "properties": {
        "b": {"type": "integer", "default": 1}}, "description": "A."}}}
    with pytest.raises(ValueError, match=r"\['a.b'\]"):
        render(schema=schema, privacy={})


def test_a_description_over_the_limit_is_refused_by_name():
    schema = {"properties": {"a": {"type": "integer", "default": 1,
                                   "description": "word " * (MAX_DESCRIPTION // 5 + 1)}}}
    with pytest.raises(ValueError, match=r"over 200 characters.*\['a'\]"):
        render(schema=schema, privacy={})


def test_documented_keys_link_to_their_section_of_the_docs():
    assert documented_keys(TOY_DOCS) == {"seed": "shared", "study.kind": "study",
                                         "study.alphas": "study"}
    text = render(docs=TOY_DOCS)
    assert row(text, "seed")[3] == f"Base seed. [more]({DOCS_LINK}#shared)"
    assert row(text, "study.kind")[3].endswith(f"[more]({DOCS_LINK}#study)")
    assert "[more]" not in row(text, "small.level")[3]


def test_docs_for_an_unknown_key_or_twice_for_one_are_refused():
    with pytest.raises(ValueError, match=r"not in the schema: \['study.gone'\]"):
        render(docs=TOY_DOCS + "\n### `study.gone`\n\nText.\n")
    with pytest.raises(ValueError, match="documented twice"):
        render(docs=TOY_DOCS + "\n### `seed`\n\nAgain.\n")


def test_rendering_is_deterministic_and_says_how_to_regenerate():
    first, second = render(docs=TOY_DOCS), render(docs=TOY_DOCS)
    assert first == second and first.endswith("\n") and not first.endswith("\n\n")
    assert REGENERATE in first


def test_check_flags_a_stale_readme(tmp_path, capsys, monkeypatch):
    import dprepro.config.reference as reference

    schema_path = tmp_path / "schema.yaml"
    schema_path.write_text(yaml.safe_dump(TOY, allow_unicode=True, sort_keys=False))
    empty = tmp_path / "empty.yaml"
    empty.write_text("{}\n")
    docs = tmp_path / "docs.md"
    docs.write_text(TOY_DOCS)
    args = ["--schema", str(schema_path), "--quick", str(empty), "--full", str(empty),
            "--paper", str(empty), "--docs", str(docs)]
    with pytest.raises(ValueError, match="missing from PRIVACY_KEYS"):
        main(args)  # the shipped PRIVACY_KEYS do not list the toy's alphas
    monkeypatch.setattr(reference, "PRIVACY_KEYS", TOY_PRIVACY)
    monkeypatch.setattr(reference, "RELATED_PRIVACY_KEYS", {})
    readme = tmp_path / "README.md"
    readme.write_text(render({"quick": {}, "full": {}, "paper": {}}, TOY_DOCS))
    assert main([*args, "--check", str(readme)]) == 0
    readme.write_text(readme.read_text().replace("Base seed.", "Old text."))
    assert main([*args, "--check", str(readme)]) == 1
    assert REGENERATE in capsys.readouterr().err


# ---------------------------------------------------------------- the committed files


SCHEMA, CONFIGS, DOCS = load_inputs(ROOT)
README = (ROOT / "config" / "README.md").read_text(encoding="utf-8")
LINK = re.compile(r" \[more\]\(([^)#]+)#([^)]+)\)$")


def readme_rows():
    """(key, cells) of every line of the key tables (the privacy table excluded)."""
    in_key_table = False
    for line in README.splitlines():
        if line.startswith("| key | type | default |"):
            in_key_table = True
        elif not line.startswith("|"):
            in_key_table = False
        elif in_key_table and line.startswith("| `"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip("|"))]
            yield cells[0].strip("`"), cells


def all_schema_keys():
    keys = dict(schema_keys(SCHEMA))
    for target in SCHEMA.get("$defs", {}).values():
        keys["datasets.<name>"] = target
        keys.update(schema_keys(target, "datasets.<name>"))
    return keys


def test_module_command_prints_the_committed_readme():
    proc = subprocess.run([sys.executable, "-m", "dprepro.config.reference"], cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT / "scripts"), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=60, check=True)
    assert proc.stdout == README


def test_every_key_has_exactly_one_line():
    counts = {}
    for key, _ in readme_rows():
        counts[key] = counts.get(key, 0) + 1
    assert set(counts) == set(all_schema_keys())
    assert {key for key, n in counts.items() if n != 1} == set()


def test_every_description_is_short():
    too_long = {}
    for key, cells in readme_rows():
        description = LINK.sub("", cells[-1])
        if len(description) > MAX_DESCRIPTION:
            too_long[key] = len(description)
    assert too_long == {}
    for key, spec in all_schema_keys().items():  # and in the schema itself
        assert len(" ".join(spec["description"].split())) <= MAX_DESCRIPTION, key


def test_every_epsilon_and_alpha_key_is_in_the_privacy_table():
    # found independently of the generator: any key whose own name is or ends in
    # epsilon(s)/alpha(s), or starts with alpha_/epsilon_
    pattern = re.compile(r"^(.*_)?(epsilon|alpha)s?(_.*)?$")
    expected = {key for key in all_schema_keys() if pattern.match(key.rsplit(".", 1)[-1])}
    assert {"ldp_indicators.alphas", "rrr_survival.epsilons", "repr_transfer.drug.epsilons",
            "repr_transfer.selection.epsilon"} <= expected
    listed = re.findall(r"^\| `([^`]+)` \|", privacy_section(README), flags=re.M)
    assert set(listed) == expected and len(listed) == len(expected)
    assert set(PRIVACY_KEYS) == expected
    for line in privacy_section(README).splitlines():
        if line.startswith("| `"):
            mechanism, meaning = [c.strip() for c in line.strip("|").split(" | ")][-2:]
            assert mechanism and meaning and len(meaning) <= MAX_DESCRIPTION, line


MISSING = object()


def shown(cell, default):
    """The value a quick/full/paper cell shows (``default`` for "default")."""
    if cell == "default":
        return default
    assert cell.startswith("`") and cell.endswith("`"), cell
    return yaml.safe_load(cell.strip("`"))


@pytest.mark.parametrize("key", ["rrr_survival.epsilons", "rrr_survival.datasets",
                                 "rrr_survival.draws", "ldp_indicators.noise_draws",
                                 "audit.draws_scale", "figures.dpi",
                                 "repr_transfer.cancer_type.epsilons",
                                 "repr_transfer.vae.max_epochs", "repr_transfer.seeds",
                                 "repr_transfer.public_source"])
def test_quick_full_and_paper_values_are_those_of_the_yaml_files(key):
    from snakemake.utils import update_config

    def read(name):
        return yaml.safe_load((ROOT / "config" / name).read_text())

    def value(config):
        for part in key.split("."):
            if not isinstance(config, dict) or part not in config:
                return MISSING
            config = config[part]
        return config

    quick = read("config.yaml")
    runs = {}
    for label, name in (("full", "full.yaml"), ("paper", "paper.yaml")):
        merged = read("config.yaml")
        update_config(merged, read(name))  # as the workflow lays the overlay over the default
        runs[label] = merged
    default = all_schema_keys()[key]["default"]
    (cells,) = [cells for k, cells in readme_rows() if k == key]
    quick_cell, full_cell, paper_cell = cells[3:6]
    if value(quick) is MISSING:
        assert quick_cell == "—"
    else:
        assert shown(quick_cell, default) == value(quick)
    for label, cell in (("full", full_cell), ("paper", paper_cell)):
        expected = value(runs[label])
        expected = default if expected is MISSING else expected
        if cell == "same":
            assert expected == (default if value(quick) is MISSING else value(quick)), label
        else:
            assert shown(cell, default) == expected, label
    # the privacy table shows the same values as the key's line
    if key in PRIVACY_KEYS:
        line = next(line for line in privacy_section(README).splitlines()
                    if line.startswith(f"| `{key}` |"))
        assert [c.strip() for c in line.strip("|").split(" | ")][1:4] == cells[3:6]


def test_the_full_run_differs_from_the_quick_default_where_full_yaml_says():
    (cells,) = [cells for k, cells in readme_rows() if k == "rrr_survival.epsilons"]
    # the default, left out of config.yaml (its one home is the schema), kept by both runs
    assert cells[2:6] == ["`[1, 2, 3]`", "—", "same", "same"]
    (cells,) = [cells for k, cells in readme_rows() if k == "rrr_survival.draws"]
    assert cells[3:5] == ["`40`", "`100`"]


def github_anchors(markdown):
    anchors, fenced = set(), False
    for line in markdown.splitlines():
        fenced ^= line.startswith("```")
        match = None if fenced else re.match(r"#{1,6} (.*)", line)
        if match:
            text = match.group(1).strip().lower().replace("`", "")
            anchors.add(re.sub(r"[^\w\- ]", "", text).replace(" ", "-"))
    return anchors


def test_every_docs_link_points_to_an_existing_section_holding_the_key():
    docs_text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    anchors = github_anchors(docs_text)
    assert {"shared", "ldp_indicators", "rrr_survival", "repr_transfer"} <= anchors
    sections = {}
    for part in re.split(r"^## ", docs_text, flags=re.M)[1:]:
        name, _, body = part.partition("\n")
        sections[name.strip()] = body
    links = 0
    for key, cells in readme_rows():
        match = LINK.search(cells[-1])
        if match:
            links += 1
            target, anchor = match.groups()
            assert (ROOT / "config" / target).resolve() == ROOT / "docs" / "configuration.md"
            assert anchor in anchors, (key, anchor)
            headings = re.findall(r"^### (.*)$", sections[anchor], flags=re.M)
            assert any(f"`{key}`" in heading for heading in headings), (key, anchor)
    assert links >= 30
    # and every documented key is a schema key, linked from its line
    linked = {key for key, cells in readme_rows() if LINK.search(cells[-1])}
    assert set(documented_keys(docs_text)) == linked
    assert linked <= set(all_schema_keys())


def test_the_readme_section_list_links_its_own_headings():
    links = re.findall(r"\]\(#([^)]+)\)", README)
    assert links and set(links) <= github_anchors(README)
