"""The library's shape: subpackages by concept, imports that point down, no cycles.

The graph is read from the source (every ``dprepro`` import, also those inside
functions), so a lazy import cannot hide a cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "scripts" / "dprepro"

#: Layers of subpackages, lowest first: a package may import its own modules and those of
#: lower layers only (the layout of docs/design.md §1).
LAYERS = [
    ["runtime"],
    ["survival", "learners", "representations", "figures"],
    ["mechanisms", "data", "claims"],
    ["audit", "config"],
    ["studies"],
]
LAYER = {package: level for level, packages in enumerate(LAYERS) for package in packages}


def _module_name(path: Path) -> str:
    parts = path.relative_to(LIB.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    base = LIB.parent.joinpath(*name.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: relative import (the library uses absolute ones)"
            if node.module and node.module.startswith("dprepro."):
                found.add(node.module)
                found |= {f"{node.module}.{a.name}" for a in node.names
                          if _is_module(f"{node.module}.{a.name}")}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("dprepro.")}
    return found


MODULES = {_module_name(p): p for p in sorted(LIB.rglob("*.py"))}
GRAPH = {name: _imports(path) - {name} for name, path in MODULES.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_among_library_modules():
    assert _cycles(GRAPH) == []


def test_every_module_sits_in_a_known_subpackage():
    top = {name.split(".")[1] for name in MODULES if name != "dprepro"}
    assert top == set(LAYER), "a new subpackage needs its layer in LAYERS (and design.md §1)"
    flat = [name for name in MODULES
            if name.count(".") == 1 and not (LIB / name.split(".")[1]).is_dir()]
    assert flat == [], "library modules live in subpackages"


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_imports_point_down(module):
    if module == "dprepro":
        return
    package = module.split(".")[1]
    for target in GRAPH[module]:
        other = target.split(".")[1]
        if other == package:
            continue
        assert LAYER[other] < LAYER[package], f"{module} imports {target}: up or sideways"


def test_studies_do_not_import_each_other():
    for module, targets in GRAPH.items():
        parts = module.split(".")
        if len(parts) < 3 or parts[1] != "studies":
            continue
        for target in targets:
            t = target.split(".")
            if t[1] == "studies" and len(t) > 2:
                assert t[2] == parts[2], f"{module} imports {target}"


def test_library_never_imports_snakemake():
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(n.split(".")[0] == "snakemake" for n in names), name


def test_no_module_grows_past_the_size_a_reader_takes_in():
    """One concept per module: about 600 lines (the five above 600 are under 670)."""
    sizes = {name: len(path.read_text().splitlines()) for name, path in MODULES.items()}
    assert {name: n for name, n in sizes.items() if n > 700} == {}


#: A function's code past this many lines is more than a reader holds in their head.
MAX_FUNCTION_LINES = 80

#: The library's longer functions, each with the reason it stays long (remove an entry when
#: its function is split: test_long_function_allowlist_is_current says which).
LONG_FUNCTIONS = {
    "dprepro.runtime.verify.verify_run":
        "split pending: runtime/verify.py under concurrent change",
    "dprepro.studies.repr_transfer.search.search":
        "split pending: studies/repr_transfer/search.py under concurrent change",
    "dprepro.studies.rrr_survival.figures.rrr_utility":
        "split pending: studies/rrr_survival/figures.py under concurrent change",
}


def _function_lengths(source: str, module: str) -> dict[str, int]:
    """Lines of each function's body after its docstring (code, comments and blank lines),
    by qualified name ``module.Class.method``; a nested function counts in its parent's
    body too, and on its own as ``module.parent.inner``.

    The docstring is left out: it is what the reader reads instead of holding the code in
    their head, and a numpydoc docstring with formula and reference is rightly long.
    """
    lengths = {}

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                body = child.body
                first = body[0]
                if (len(body) > 1 and isinstance(first, ast.Expr)
                        and isinstance(first.value, ast.Constant)
                        and isinstance(first.value.value, str)):
                    body = body[1:]
                lengths[f"{prefix}.{child.name}"] = child.end_lineno - body[0].lineno + 1
                visit(child, f"{prefix}.{child.name}")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}.{child.name}")
            else:
                visit(child, prefix)

    visit(ast.parse(source), module)
    return lengths


FUNCTION_LENGTHS = {name: n for module, path in MODULES.items()
                    for name, n in _function_lengths(path.read_text(), module).items()}


def test_function_lengths_count_the_code_after_the_docstring():
    source = (
        "def f(x):\n"
        '    """Doc\n\n    more doc.\n    """\n'
        "    y = x\n"
        "\n"
        "    # why\n"
        "    return y\n"
        "class C:\n"
        "    def m(self):\n"
        "        if True:\n"
        "            def inner():\n"
        "                return 1\n"
        "        return 2\n"
        "def g():\n"
        '    """Only a docstring."""\n'
    )
    assert _function_lengths(source, "mod") == {"mod.f": 4, "mod.C.m": 4,
                                                "mod.C.m.inner": 1, "mod.g": 1}


def test_no_function_grows_past_what_a_reader_holds_in_their_head():
    """About 80 lines of code per function (docs/design.md), unless LONG_FUNCTIONS says why."""
    long = {name: n for name, n in FUNCTION_LENGTHS.items() if n > MAX_FUNCTION_LINES}
    assert sorted(set(long) - set(LONG_FUNCTIONS)) == [], long


def test_long_function_allowlist_is_current():
    """Each entry names a library function still over the limit, with a reason."""
    stale = {name for name in LONG_FUNCTIONS
             if FUNCTION_LENGTHS.get(name, 0) <= MAX_FUNCTION_LINES}
    assert stale == set(), "split or gone: remove from LONG_FUNCTIONS"
    assert all(reason.strip() for reason in LONG_FUNCTIONS.values())


def test_study_scripts_import_only_their_own_study():
    """A step script is named like its rule, so its study is the one whose manifest's rule
    prefixes its name has; the workflow's own scripts (claims, report) import no study."""
    from dprepro.runtime.study_registry import study_of_rule

    checked = 0
    for script in sorted((ROOT / "scripts").glob("*.py")):
        spec = study_of_rule(script.stem)
        for target in _imports(script):
            t = target.split(".")
            if t[1] == "studies" and len(t) > 2:
                assert spec is not None and t[2] == spec.name, f"{script.name} imports {target}"
                checked += 1
    assert checked > 20


def test_a_study_packages_init_is_its_manifest_only():
    """``dprepro/studies/<name>/__init__.py`` imports nothing but the manifest's classes: the
    registry imports every manifest (dprepro.runtime.study_registry), which then runs no
    study code and cannot close an import cycle through the lowest layer."""
    for init in sorted((LIB / "studies").glob("*/__init__.py")):
        assert _imports(init) <= {"dprepro.runtime.study_registry"}, init
        names = {n.id for node in ast.parse(init.read_text()).body
                 if isinstance(node, ast.Assign) for n in node.targets}
        assert "SPEC" in names, f"{init}: declare SPEC = StudySpec(...)"


def test_every_scripted_rule_carries_its_library_code():
    """A rule whose script imports the library reruns on library edits only through
    ``params.library_code`` (dprepro.runtime.code_version)."""
    import re

    missing = []
    for smk in sorted((ROOT / "workflow" / "rules").glob("*.smk")):
        text = smk.read_text()
        blocks = re.split(r"(?m)^(?=(?:rule|checkpoint) \w+:)", text)
        for block in blocks[1:]:
            name = re.match(r"(?:rule|checkpoint) (\w+):", block).group(1)
            script = re.search(r'script:\s*\n\s*"[^"]*scripts/(\w+\.py)"', block)
            if script and f'library_code=library_code("{script.group(1)}")' not in block:
                missing.append(f"{smk.name}: {name}")
    assert missing == []


def test_the_library_and_the_scripts_import_names_from_their_modules():
    """A subpackage's public names load lazily (dprepro.runtime.exports), through no import
    statement: a name imported through its package would hide its module from the code
    digests that decide reruns (dprepro.runtime.code_version). Modules, and the names the
    top-level package defines itself (``__version__``), may be imported through a package."""
    through = []
    for path in [*MODULES.values(), *sorted((ROOT / "scripts").glob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.ImportFrom) and node.module
                    and node.module.startswith("dprepro.")
                    and (LIB.parent.joinpath(*node.module.split(".")) / "__init__.py").is_file()):
                through += [f"{path.relative_to(ROOT)}: from {node.module} import {alias.name}"
                            for alias in node.names
                            if not _is_module(f"{node.module}.{alias.name}")]
    assert through == []
