"""dprepro.runtime.code_version: the library files a step script runs, and their digest."""

from __future__ import annotations

from pathlib import Path

import pytest

from dprepro.runtime.code_version import library_modules, script_library_digest

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "scripts" / "dprepro"


@pytest.fixture
def tree(tmp_path):
    """A small library: the script reaches a (top level), b (inside a function of a), c (b's
    package __init__ and module), never d."""
    lib = tmp_path / "dprepro"
    (lib / "pkg").mkdir(parents=True)
    (lib / "__init__.py").write_text("")
    (lib / "pkg" / "__init__.py").write_text('"""pkg."""\n')
    (lib / "a.py").write_text("def f():\n    from dprepro.pkg import b\n    return b.g()\n")
    (lib / "pkg" / "b.py").write_text("from dprepro.pkg.c import h\n\ndef g():\n    return h()\n")
    (lib / "pkg" / "c.py").write_text("def h():\n    return 1\n")
    (lib / "d.py").write_text("import dprepro.a\n")
    script = tmp_path / "step.py"
    script.write_text("import numpy\nfrom dprepro.a import f\n")
    return script, lib


def _names(files, lib):
    return sorted(p.relative_to(lib.resolve()).as_posix() for p in files)


def test_imports_are_followed_through_functions_and_packages(tree):
    script, lib = tree
    assert _names(library_modules(script, lib), lib) == [
        "__init__.py", "a.py", "pkg/__init__.py", "pkg/b.py", "pkg/c.py"]


def test_the_digest_follows_reached_files_only(tree):
    script, lib = tree
    before = script_library_digest(script, lib)
    (lib / "d.py").write_text("import dprepro.a\nX = 2\n")
    assert script_library_digest(script, lib) == before
    (lib / "pkg" / "c.py").write_text("def h():\n    return 2\n")
    assert script_library_digest(script, lib) != before


def test_the_digest_does_not_depend_on_where_the_checkout_lies(tree, tmp_path):
    import shutil

    script, lib = tree
    moved = tmp_path / "elsewhere"
    shutil.copytree(tmp_path, moved, ignore=shutil.ignore_patterns("elsewhere"))
    assert script_library_digest(moved / "step.py", moved / "dprepro") == \
        script_library_digest(script, lib)


def test_one_workflow_start_reads_the_library_once_for_every_rule(tree):
    """scripts_library_code (what the rules call at a workflow start) gives each step
    script the digest script_library_digest gives it alone; within one start each file is
    read once (an edit made meanwhile is seen by the next start)."""
    from dprepro.runtime.code_version import scripts_library_code

    library_code = scripts_library_code(ROOT / "scripts")
    scripts = sorted((ROOT / "scripts").glob("*.py"))
    assert len(scripts) > 30
    for script in scripts:
        assert library_code(script.name) == script_library_digest(script, LIB), script
    script, lib = tree
    start = scripts_library_code(script.parent)
    before = start("step.py")
    (lib / "pkg" / "c.py").write_text("def h():\n    return 2\n")
    assert start("step.py") == before
    after = scripts_library_code(script.parent)("step.py")
    assert after == script_library_digest(script, lib) != before


def test_the_real_scripts_reach_what_they_run():
    """The survival kernels are reached by the ldp and rrr steps, never by repr_transfer's."""
    def reached(script):
        return _names(library_modules(ROOT / "scripts" / script, LIB), LIB)

    assert "survival/conditional.py" in reached("ldp_simulate.py")
    assert "survival/kaplan_meier.py" in reached("rrr_analyse.py")
    assert "mechanisms/registry.py" in reached("privacy_audit.py")
    for script in sorted((ROOT / "scripts").glob("repr_*.py")):
        assert not any(n.startswith("survival/") for n in reached(script.name)), script.name
    assert not any(n.startswith("studies/repr_transfer") for n in reached("rrr_tables.py"))


def _whole_file_imports(path: Path) -> set[str]:
    """The ``dprepro`` names every import statement of ``path`` names, from a parse of the
    whole file: what the statement-by-statement reading must find."""
    import ast

    names = set()
    for node in ast.walk(ast.parse(path.read_bytes())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.update([node.module, *(f"{node.module}.{a.name}" for a in node.names)])
    return {n for n in names if n == "dprepro" or n.startswith("dprepro.")}


def test_reading_import_statements_alone_finds_what_a_whole_file_parse_finds():
    """Every module of the library and every step script (what jobs and rules read): the
    same dprepro modules as a parse of the whole file, docstrings that show imports
    (study_registry's) and continued lines included."""
    from dprepro.runtime.code_version import _import_nodes, _imported_modules

    files = sorted((ROOT / "scripts").rglob("*.py"))
    assert len(files) > 150
    for path in files:
        expected = set()
        for name in _whole_file_imports(path):
            parts = name.split(".")
            expected.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
        found = set(_imported_modules.__wrapped__(path.resolve()))
        assert {n for n in found if _is_module(n)} == {n for n in expected if _is_module(n)}, path
    text = ('"""Use it as\n\n    from dprepro.fake import x\n"""\n'
            "from dprepro.a import \\\n    f\nimport os, dprepro.b  # dprepro\n"
            "from dprepro.c import (\n    g,  # the g\n    h)\n")
    found = {alias.name if node.__class__.__name__ == "Import" else node.module
             for node in _import_nodes(text) for alias in node.names}
    assert found == {"dprepro.a", "os", "dprepro.b", "dprepro.c"}


def _is_module(dotted: str) -> bool:
    parts = dotted.split(".")[1:]
    base = LIB.joinpath(*parts) if parts else LIB
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()
