"""config/README.md rendering: every key once, types and defaults read from the schema."""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from dprepro.config.reference import REGENERATE, main, render_config_readme, schema_keys

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


def row(text, key):
    lines = [line for line in text.splitlines() if line.startswith(f"| `{key}` |")]
    assert len(lines) == 1, f"{key}: {lines}"
    return [cell.strip() for cell in lines[0].strip("|").split(" | ")]


def test_schema_keys_walks_nested_objects_and_list_items():
    keys = [key for key, _ in schema_keys(TOY)]
    assert keys == ["seed", "small", "small.level", "small.label", "study", "study.alphas",
                    "study.kind", "study.settings", "study.settings[].rate"]


def test_every_key_has_one_row_with_type_default_and_meaning():
    text = render_config_readme(TOY)
    assert row(text, "seed") == ["`seed`", "integer 0 … 10", "`3`", "Base seed."]
    assert row(text, "small.level")[1:3] == ["number in (0, 0.5)", "`0.1`"]
    assert row(text, "study.alphas")[1:3] == ["list of numbers > 0, at least 2, distinct",
                                              "`[0.2, 1.0]`"]
    assert row(text, "study.kind")[1] == "`paper` \\| `exact`"
    assert row(text, "study.settings[].rate")[1:3] == ["3 numbers ≥ 0", ""]
    # objects have no default cell; the section object itself is its first row
    assert row(text, "study")[2] == ""


def test_strings_yaml_would_misread_are_quoted_and_cells_are_escaped():
    label = row(render_config_readme(TOY), "small.label")
    assert label[2] == '`"25"`'  # a bare 25 would be read back as an integer
    assert label[3] == "A label over two lines \\| with a pipe."


def test_small_objects_stay_in_the_top_table_and_large_ones_get_a_titled_section():
    text = render_config_readme(TOY)
    top = text.split("## Top level", 1)[1].split("\n## ", 1)[0]
    assert "`small.level`" in top and "`study.kind`" not in top
    section = text.split("## `study` — the toy study", 1)[1]
    assert "`study.kind`" in section and "`small.level`" not in section


def test_shipped_values_that_differ_from_the_default_are_shown():
    text = render_config_readme(TOY, {"embedded": {"seed": 7, "study": {"kind": "paper"}},
                                      "paper": {"seed": 9}})
    assert row(text, "seed")[2] == "`3` (embedded: `7`; paper: `9`)"
    assert row(text, "study.kind")[2] == "`paper`"  # equal to the default: nothing added


def test_an_overlay_restoring_the_default_is_shown_after_a_config_that_differs():
    # full.yaml over the embedded config: its seed 3 is the default, but the reader must
    # see that it undoes embedded's 7; a key only the overlay repeats stays quiet
    text = render_config_readme(TOY, {"embedded": {"seed": 7}, "full": {"seed": 3,
                                                                       "study": {"kind": "paper"}},
                                      "paper": {}})
    assert row(text, "seed")[2] == "`3` (embedded: `7`; full: `3`)"
    assert row(text, "study.kind")[2] == "`paper`"


def test_a_key_without_description_is_refused_by_name():
    schema = {"properties": {"a": {"type": "object", "properties": {
        "b": {"type": "integer", "default": 1}}, "description": "A."}}}
    with pytest.raises(ValueError, match=r"\['a.b'\]"):
        render_config_readme(schema)


def test_rendering_is_deterministic_and_says_how_to_regenerate():
    first, second = render_config_readme(TOY), render_config_readme(TOY)
    assert first == second and first.endswith("\n") and not first.endswith("\n\n")
    assert REGENERATE in first


def test_check_flags_a_stale_readme(tmp_path, capsys):
    schema_path = tmp_path / "schema.yaml"
    schema_path.write_text(yaml.safe_dump(TOY, allow_unicode=True, sort_keys=False))
    empty = tmp_path / "empty.yaml"
    empty.write_text("{}\n")
    readme = tmp_path / "README.md"
    readme.write_text(render_config_readme(TOY, {"embedded": {}, "paper": {}}))
    args = ["--schema", str(schema_path), "--embedded", str(empty), "--full", str(empty),
            "--paper", str(empty)]
    assert main([*args, "--check", str(readme)]) == 0
    readme.write_text(readme.read_text().replace("Base seed.", "Old text."))
    assert main([*args, "--check", str(readme)]) == 1
    assert REGENERATE in capsys.readouterr().err


def test_module_command_prints_the_committed_readme():
    proc = subprocess.run([sys.executable, "-m", "dprepro.config.reference"], cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT / "scripts"), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=60, check=True)
    assert proc.stdout == (ROOT / "config" / "README.md").read_text()
