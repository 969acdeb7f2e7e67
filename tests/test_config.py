"""Bad configuration fails before any job runs, naming the key and what was expected."""

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from dprepro.config.reference import REGENERATE, load_inputs, render_config_readme, schema_keys
from dprepro.config.schema import (
    ConfigError,
    check_and_fill,
    check_config,
    fill_defaults,
    load_schema,
    repeated_defaults,
)

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = load_schema(ROOT / "workflow" / "schemas" / "config.schema.yaml")
DEFAULT = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())


@pytest.mark.parametrize("name", ["config.yaml", "full.yaml", "paper.yaml"])
def test_shipped_configs_are_valid(name):
    check_config(yaml.safe_load((ROOT / "config" / name).read_text()), SCHEMA)


def with_change(path, value):
    config = copy.deepcopy(DEFAULT)
    node = config
    for key in path[:-1]:
        node = node.setdefault(key, {}) if isinstance(key, str) else node[key]
    node[path[-1]] = value
    return config


BAD = [
    pytest.param(with_change(["ldp_indicators", "bandwith_multiplier"], 5),
                 r"'ldp_indicators'.*unknown key\(s\) \['bandwith_multiplier'\]", id="unknown-key"),
    pytest.param(with_change(["colour"], "red"), r"unknown key\(s\) \['colour'\]",
                 id="unknown-top-level-key"),
    pytest.param(with_change(["ldp_indicators", "alphas"], [0.2, 0]),
                 r"'ldp_indicators.alphas\[1\]': got 0, expected a number > 0", id="alpha-zero"),
    pytest.param(with_change(["ldp_indicators", "alphas"], [-0.3]),
                 r"'ldp_indicators.alphas\[0\]': got -0.3, expected a number > 0",
                 id="alpha-negative"),
    pytest.param(with_change(["rrr_survival", "epsilons"], [1, 0]),
                 r"'rrr_survival.epsilons\[1\]': got 0, expected a number > 0", id="epsilon-zero"),
    pytest.param(with_change(["rrr_survival", "epsilons"], [-1.0]),
                 r"'rrr_survival.epsilons\[0\]': got -1.0, expected a number > 0",
                 id="epsilon-negative"),
    pytest.param(with_change(["rrr_survival", "draws"], 0),
                 r"'rrr_survival.draws': got 0, expected a number >= 1", id="draws"),
    pytest.param(with_change(["ldp_indicators", "replicates"], 0),
                 r"'ldp_indicators.replicates': got 0, expected a number >= 1", id="replicates"),
    pytest.param(with_change(["ldp_indicators", "convergence", "replicates"], 1),
                 r"'ldp_indicators.convergence.replicates': got 1, expected a number >= 2",
                 id="convergence-replicates"),
    pytest.param(with_change(["datasets", "ipssr", "source"], "cbioportl"),
                 r"'datasets.ipssr.source': got 'cbioportl', expected one of "
                 r"\['synthetic', 'bundled', 'file', 'url', 'cbioportal', 'package'\]",
                 id="dataset-source"),
    pytest.param(with_change(["datasets", "ipssr", "cbioportal_url"], "www.cbioportal.org"),
                 r"'datasets.ipssr.cbioportal_url': got 'www.cbioportal.org', which is not of "
                 r"the expected form \(Base URL", id="url-no-scheme"),
    pytest.param(with_change(["datasets", "ipssr", "cbioportal_url"], "https://bad host/"),
                 r"'datasets.ipssr.cbioportal_url'", id="url-space"),
    pytest.param(with_change(["ldp_indicators", "n"], "500"),
                 r"'ldp_indicators.n': got '500' of type str, expected integer", id="wrong-type"),
    pytest.param(with_change(["seed"], 1.5), r"'seed': got 1.5 of type float, expected integer",
                 id="seed-float"),
    pytest.param(with_change(["ldp_indicators", "clip_phat"], "yes"),
                 r"'ldp_indicators.clip_phat'.*expected boolean", id="bool-type"),
    pytest.param(with_change(["ldp_indicators", "t_grid", "stop"], 0.01),
                 r"'ldp_indicators.t_grid.stop': got 0.01, expected a time greater than",
                 id="grid-order"),
    pytest.param(with_change(["ldp_indicators", "convergence", "censoring"], "75"),
                 r"'ldp_indicators.convergence.censoring': got '75', expected one of the "
                 r"censoring labels", id="unknown-censoring-label"),
    pytest.param(with_change(["datasets", "mine"], {"source": "file", "path": "m.csv",
                                                    "event_values": [True]}),
                 r"'datasets.mine.event_values\[0\]': got True of type bool, expected "
                 r"\['integer', 'string'\]; YAML reads the bare words yes/no.*quote",
                 id="yaml-yes-is-a-boolean"),
    pytest.param(with_change(["datasets", "mine"], {"source": "file"}),
                 r"'datasets.mine.path': source is 'file'", id="file-needs-path"),
    pytest.param(with_change(["datasets", "kidney"], {"source": "file", "path": ""}),
                 r"'datasets.kidney.path': source is 'file'", id="file-needs-path-set-empty"),
]


@pytest.mark.parametrize(("config", "message"), BAD)
def test_bad_config_names_the_key(config, message):
    with pytest.raises(ConfigError, match=message):
        check_config(config, SCHEMA)


def test_a_table_of_ones_own_under_a_shipped_name_does_not_take_its_layout(tmp_path):
    """A user's table given as datasets.kidney would have been divided by kidney's
    time_divisor 30 and read with its four diseases and two rows per patient, silently."""
    kidney = {**DEFAULT["datasets"]["kidney"], "source": "file", "path": "my_cohort.csv"}
    config = with_change(["datasets", "kidney"], kidney)
    with pytest.raises(ConfigError) as caught:
        check_and_fill(copy.deepcopy(config), SCHEMA)
    message = str(caught.value)
    assert "datasets.kidney: your own table (path 'my_cohort.csv')" in message
    for inherited in ("time_divisor = 30", "rows_per_person = 2", "time_unit = 'months'",
                      "groups = ['AN', 'GN', 'Other', 'PKD']", "'group': 'disease'"):
        assert inherited in message, inherited
    # described in full, the same name is the user's to use (also with kidney's own values)
    kidney.update(columns={"id": "id", "time": "time", "status": "status", "group": "disease"},
                  time_divisor=30, time_unit="months", rows_per_person=2,
                  groups=["AN", "GN", "Other", "PKD"])
    filled = check_and_fill(with_change(["datasets", "kidney"], kidney), SCHEMA)
    assert filled["datasets"]["kidney"]["path"] == "my_cohort.csv"
    # the shipped table itself, and a cohort of one's own name, are not affected
    check_and_fill(copy.deepcopy(DEFAULT), SCHEMA)
    check_and_fill(with_change(["datasets", "mine"], {"source": "file", "path": "m.csv"}),
                   SCHEMA)


def test_the_yaml_boolean_hint_is_for_text_keys_only():
    """`event_values: [yes]` reads True, and the message says why; a boolean key given text
    (clip_phat: "yes") gets no such hint: there the boolean is what was expected."""
    config = yaml.safe_load("datasets: {mine: {source: file, path: m.csv, "
                            "event_values: [yes], censored_values: [no]}}")
    assert config["datasets"]["mine"]["event_values"] == [True]
    with pytest.raises(ConfigError) as info:
        check_config({**copy.deepcopy(DEFAULT), **config}, SCHEMA)
    lines = [line for line in str(info.value).splitlines() if "datasets.mine" in line]
    assert len(lines) == 2 and all("YAML reads the bare words" in line for line in lines)
    with pytest.raises(ConfigError) as info:
        check_config(with_change(["ldp_indicators", "clip_phat"], "yes"), SCHEMA)
    assert "YAML reads" not in str(info.value)


def test_every_schema_key_has_type_default_and_description():
    def walk(node, path):
        for key, spec in node.get("properties", {}).items():
            where = f"{path}.{key}" if path else key
            assert "type" in spec, where
            assert "description" in spec, where
            if path.count("[]") == 0:  # items of lists get their defaults from the list
                assert "default" in spec, where
            if spec["type"] in ("integer", "number"):
                assert any(k in spec for k in ("minimum", "exclusiveMinimum")), where
            walk(spec, where)
            if spec.get("type") == "array" and isinstance(spec.get("items"), dict):
                walk(spec["items"], where + "[]")
    walk(SCHEMA, "")


def test_config_readme_is_the_rendering_of_the_schema():
    """config/README.md is generated from the schema, so every key is documented once."""
    schema, configs, docs = load_inputs(ROOT)
    assert schema == SCHEMA
    expected = render_config_readme(SCHEMA, configs, docs)
    readme = (ROOT / "config" / "README.md").read_text()
    assert readme == expected, (
        f"config/README.md is out of date with the schema; regenerate it with:\n  {REGENERATE}")
    missing = [key for key, _ in schema_keys(SCHEMA) if f"| `{key}` |" not in readme]
    assert not missing, f"config/README.md lacks {missing}"


def test_snakemake_stops_before_any_job_with_named_key(tmp_path):
    bad = with_change(["ldp_indicators", "alphas"], [0.0])
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(bad))
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "1", "--configfile",
         str(tmp_path / "bad.yaml"), "--directory", str(tmp_path), "--snakefile",
         str(ROOT / "Snakefile")],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "config key 'ldp_indicators.alphas[0]': got 0.0, expected a number > 0" in proc.stderr
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize("name", ["config/config.yaml", "config/full.yaml", "config/paper.yaml",
                                  "tests/data/small_config.yaml", "<empty>"])
def test_fill_defaults_gives_what_snakemake_validate_gives(name):
    """The workflow fills defaults with fill_defaults (one libyaml parse of the schema) instead
    of snakemake.utils.validate: both must give the same configuration."""
    from snakemake.utils import validate

    path = ROOT / name
    config = yaml.safe_load(path.read_text()) if path.exists() else {}
    ours, theirs = copy.deepcopy(config), copy.deepcopy(config)
    fill_defaults(ours, SCHEMA)
    validate(theirs, str(ROOT / "workflow" / "schemas" / "config.schema.yaml"))
    assert ours == theirs
    assert ours != config  # something was filled in (every config here omits some keys)
    # the filled config shares no object with the schema: changing it leaves the defaults
    before = copy.deepcopy(SCHEMA)
    filled = fill_defaults({}, SCHEMA)
    for section in filled.values():
        if isinstance(section, dict):
            section.clear()
    assert SCHEMA == before


# --------------------------------------------------------------------------- one home
def test_config_yaml_repeats_no_schema_default():
    """Each default lives in the schema only: config/config.yaml sets a key only where the
    quick run's value differs from the schema's default (else leave the key out)."""
    assert repeated_defaults(DEFAULT, SCHEMA) == []


def _keys(config, path=()):
    for key, value in config.items():
        yield (*path, key)
        if isinstance(value, dict):
            yield from _keys(value, (*path, key))


def test_repeated_defaults_are_the_keys_whose_removal_changes_nothing():
    """Oracle: a key repeats its default exactly when the configuration without it is the
    same once the defaults are filled in (the first such key on each path)."""
    config = {
        "seed": 20240915,  # the default
        "figures": {"dpi": 200},  # the whole section is its default {} filled in
        "audit": {"draws_scale": 0.5, "level": 1.0e-9},
        "ldp_indicators": {"n": 500, "x": 0.25, "t_grid": {"start": 0.015, "stop": 2.0},
                           "convergence": {"replicates": 50}},
        "repr_transfer": {"selection": {"epsilon": 1.0}},  # 1.0 is not the default 1
        "datasets": {
            "kidney": {"source": "bundled", "horizon": 20},
            "mine": {"source": "file", "path": "x.csv",  # source is required: kept
                     "columns": {"id": "", "time": "time"}, "simulation": {"n": 300}},
        },
    }
    filled = json.dumps(fill_defaults(copy.deepcopy(config), SCHEMA), sort_keys=True)

    def without(path):
        trimmed = copy.deepcopy(config)
        node = trimmed
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]
        try:
            return json.dumps(fill_defaults(trimmed, SCHEMA), sort_keys=True)
        except Exception:  # noqa: BLE001 (a required key: the configuration is invalid)
            return None

    same = [path for path in _keys(config) if without(path) == filled]
    oracle = [".".join(p) for p in same if not any(q == p[:len(q)] for q in same if q != p)]
    found = repeated_defaults(config, SCHEMA)
    assert found == oracle
    assert found == ["seed", "figures", "audit.level", "ldp_indicators.n",
                     "ldp_indicators.t_grid.start", "datasets.kidney.source",
                     "datasets.mine.columns.time", "datasets.mine.simulation"]

@pytest.mark.parametrize(("change", "message"), [
    # the censoring labels are the schema's default ones ("25", "50")
    ({"ldp_indicators": {"convergence": {"censoring": "75"}}},
     r"'ldp_indicators.convergence.censoring': got '75', expected one of the censoring labels"),
    # the default t_grid.start is 0.015
    ({"ldp_indicators": {"t_grid": {"stop": 0.01}}}, r"'ldp_indicators.t_grid.stop': got 0.01"),
    # the default is 2 validation pairs
    ({"repr_transfer": {"selection": {"pair_folds": 3}}},
     r"'repr_transfer.selection.pair_folds': got 3, expected at most the 2 validation pair"),
])
def test_cross_key_rules_read_the_defaults_a_file_leaves_out(change, message):
    with pytest.raises(ConfigError, match=message):
        check_config(change, SCHEMA)
    with pytest.raises(ConfigError, match=message):
        check_and_fill(copy.deepcopy(change), SCHEMA)


@pytest.mark.parametrize("name", ["config.yaml", "full.yaml", "paper.yaml"])
def test_check_and_fill_is_check_config_then_fill_defaults(name):
    from snakemake.utils import update_config

    config = copy.deepcopy(DEFAULT)
    if name != "config.yaml":
        update_config(config, yaml.safe_load((ROOT / "config" / name).read_text()))
    expected = copy.deepcopy(config)
    check_config(expected, SCHEMA)
    fill_defaults(expected, SCHEMA)
    assert check_and_fill(config, SCHEMA) is config
    assert config == expected
    with pytest.raises(ConfigError, match=r"'seed': got 1.5"):
        check_and_fill({"seed": 1.5}, SCHEMA)
