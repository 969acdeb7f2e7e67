"""README quick start, CI and environments stay in step; the README stays short, its links
resolve, and it names every privacy parameter of the schema."""

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def quick_start_lines():
    section = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```(?:bash|sh)?\n(.*?)```", section, re.S).group(1)
    return [line for line in block.splitlines() if line.strip() and not line.startswith("#")]


def test_quick_start_is_exactly_two_command_lines():
    lines = quick_start_lines()
    assert len(lines) == 2
    assert lines[0].endswith("snakemake --cores all")
    assert "pytest" in lines[1]


def test_ci_runs_the_readme_test_command_verbatim():
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert quick_start_lines()[1] in [line.strip() for line in ci]


def requirement_pins(path):
    pins = {}
    for line in (ROOT / path).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith(("-r", "-e")):
            continue
        name, version = line.split("==")
        pins[re.sub(r"\[.*\]", "", name).lower()] = version
    return pins


def test_requirements_are_exact_pins():
    for path in ("requirements.txt", "requirements-cluster.txt", "requirements-docs.txt",
                 "requirements-test.txt"):
        for line in (ROOT / path).read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if line and not line.startswith("-r") and line != "-e .":
                assert re.fullmatch(r"[A-Za-z0-9_.\-\[\]]+==[0-9][A-Za-z0-9.+]*", line), line


def test_the_test_requirements_install_the_docs_pins_and_the_package_itself():
    """What CI installs (.ci/run: the README's test line): the API reference's Sphinx, and the
    library as pip installs it (editable), so a broken package build fails CI."""
    lines = [line.split("#", 1)[0].strip()
             for line in (ROOT / "requirements-test.txt").read_text().splitlines()]
    assert "-r requirements-docs.txt" in lines
    assert "-e ." in lines


def test_conda_envs_agree_with_requirements():
    pins = requirement_pins("requirements.txt")
    for env in sorted((ROOT / "envs").glob("*.yaml")):
        spec = yaml.safe_load(env.read_text())
        for dep in spec["dependencies"]:
            if isinstance(dep, dict):
                for pip_line in dep["pip"]:
                    name, version = pip_line.split("==")
                    assert pins[name.lower()] == version, f"{env.name}: {pip_line}"
                continue
            name, _, version = dep.partition("=")
            if name in ("python", "pip"):
                if name == "python":
                    assert version == "3.11", env.name
                continue
            assert name in pins, f"{env.name}: {name} is not pinned in requirements.txt"
            assert pins[name] == version, (
                f"{env.name}: {name}={version} but requirements.txt pins {pins[name]}")


def rule_blocks():
    for smk in sorted((ROOT / "workflow" / "rules").glob("*.smk")):
        text = smk.read_text()
        for match in re.finditer(r"^rule (\w+):\n((?:[ \t]+.*\n|\n)*)", text, re.M):
            yield smk.name, match.group(1), match.group(2)


def test_every_step_rule_has_conda_log_and_resources():
    blocks = list(rule_blocks())
    assert len(blocks) >= 8
    for smk, name, body in blocks:
        if "script:" not in body and "shell:" not in body and "run:" not in body:
            assert "localrule: True" in body, f"{smk}:{name} is a target rule and must be local"
            continue
        for directive in ("conda:", "log:", "threads:", "resources:"):
            assert directive in body, f"{smk}:{name} lacks {directive}"
        env = re.search(r'conda:\s*\n\s*"([^"]+)"', body).group(1)
        assert (ROOT / "workflow" / "rules" / env).resolve().exists(), f"{name}: {env}"


def test_targets_page_lists_every_figure_and_table_target():
    targets = (ROOT / "docs" / "targets.md").read_text()
    for smk, name, body in rule_blocks():
        if "figures/" in body or "tables/" in body:
            assert f"`{name}`" in targets, f"docs/targets.md does not list {name} ({smk})"


def test_readme_stays_short():
    lines = README.count("\n")
    assert lines < 250, f"README.md has {lines} lines; move detail to a page under docs/"


def test_every_relative_link_of_the_readme_exists():
    links = [target for target in re.findall(r"\]\(([^)\s]+)\)", README)
             if "://" not in target and not target.startswith("#")]
    assert any(link.startswith("docs/") for link in links)
    for link in links:
        path = link.split("#", 1)[0]
        assert (ROOT / path).exists(), f"README.md links to {link}, which does not exist"


def privacy_parameter_keys(node, path=()):
    """Dotted schema keys of the privacy parameters (epsilon, alphas, alpha_grid, ...)."""
    for name, spec in node.get("properties", {}).items():
        key = (*path, name)
        if re.fullmatch(r"(\w+_)?(epsilon|alpha)s?(_\w+)?", name):
            yield ".".join(key)
        if isinstance(spec, dict):
            yield from privacy_parameter_keys(spec, key)


def test_readme_names_every_privacy_parameter_of_the_schema():
    schema = yaml.safe_load((ROOT / "workflow" / "schemas" / "config.schema.yaml").read_text())
    keys = sorted(set(privacy_parameter_keys(schema)))
    assert {"ldp_indicators.alphas", "rrr_survival.epsilons",
            "repr_transfer.drug.epsilons"} <= set(keys), keys
    missing = [key for key in keys if f"`{key}`" not in README]
    assert not missing, f"README.md does not name the privacy parameter(s) {missing}"
