"""The library code a step script runs, as one digest: reruns that follow code changes.

Snakemake reruns a job when its script file changes, but not when a library
module that the script imports changes. Each rule therefore carries, as a
``params`` entry, the digest of every library module its script can reach
through ``dprepro`` imports (top-level and inside functions, followed
transitively, with the ``__init__.py`` of every package on the way). An edit
to one of those files changes the parameter and Snakemake's ``params`` rerun
trigger plans the job again; an edit elsewhere in the library leaves it alone.

The digest is of the files' bytes, so a comment-only or docstring-only edit in
a reached module reruns the job too (cheap to explain, never misses a change).
Reading is static (:mod:`ast`): nothing is imported, so the DAG is built
without numpy, torch or the library itself.
"""

from __future__ import annotations

import ast
import hashlib
from functools import cache
from pathlib import Path

__all__ = ["library_digest", "library_modules", "module_checksums", "rules_digest",
           "script_library_digest", "scripts_library_code"]

PACKAGE = "dprepro"


def _module_file(library_root: Path, dotted: str) -> Path | None:
    """The file of module ``dotted`` (``dprepro.x.y``) under ``library_root``, if any."""
    parts = dotted.split(".")[1:]
    base = library_root.joinpath(*parts) if parts else library_root
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return None


def _packages_on_the_way(dotted: str) -> list[str]:
    parts = dotted.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


@cache
def _imported_modules(path: Path, library_root: Path) -> tuple[str, ...]:
    """Every ``dprepro`` module that ``path`` imports, anywhere in the file."""
    tree = ast.parse(path.read_bytes(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            # `from dprepro.pkg import mod` imports a module; `import name` a name
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        for name in names:
            if name == PACKAGE or name.startswith(PACKAGE + "."):
                for candidate in [*_packages_on_the_way(name), name]:
                    if _module_file(library_root, candidate) is not None:
                        found.add(candidate)
    return tuple(sorted(found))


def library_modules(script: str | Path, library_root: str | Path) -> list[Path]:
    """Library files that ``script`` can run, found by following its imports.

    Parameters
    ----------
    script : path-like
        A step script (or any Python file) importing ``dprepro``.
    library_root : path-like
        The ``dprepro`` package folder.

    Returns
    -------
    list of Path
        Sorted, each file once (its package ``__init__.py`` files included).
    """
    root = Path(library_root).resolve()
    seen: set[str] = set()
    stack = list(_imported_modules(Path(script).resolve(), root))
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        stack.extend(_imported_modules(_module_file(root, name), root))
    return sorted({_module_file(root, name) for name in seen})


def library_digest(files, library_root: str | Path) -> str:
    """sha256 over each file's path (relative to the library's parent) and bytes."""
    root = Path(library_root).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(Path(f).resolve() for f in files):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def module_checksums(script: str | Path, library_root: str | Path) -> dict[str, str]:
    """sha256 of each library file ``script`` reaches, by its path from the library's parent
    (``dprepro/survival/kaplan_meier.py``): what a sidecar records so that a later check
    can name the module that changed."""
    root = Path(library_root).resolve().parent
    return {path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in library_modules(script, library_root)}


def rules_digest(workflow_root: str | Path) -> str:
    """sha256 over the ``Snakefile`` and ``workflow/rules/*.smk`` of a checkout (their names
    and bytes): the rules that turn the configuration into each job's parameters."""
    root = Path(workflow_root)
    digest = hashlib.sha256()
    for path in [root / "Snakefile", *sorted((root / "workflow" / "rules").glob("*.smk"))]:
        if path.is_file():
            digest.update(path.relative_to(root).as_posix().encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def script_library_digest(script: str | Path, library_root: str | Path) -> str:
    """The digest of the library code ``script`` runs (a rule's ``library_code`` param)."""
    return library_digest(library_modules(script, library_root), library_root)


def scripts_library_code(scripts_dir: str | Path):
    """``library_code(script)`` for the step scripts of ``scripts_dir`` (library in
    ``scripts_dir/dprepro``): what the rules call to fill ``params.library_code``."""
    scripts = Path(scripts_dir)

    def library_code(script: str) -> str:
        return script_library_digest(scripts / script, scripts / PACKAGE)

    return library_code


def main(argv: list[str] | None = None) -> int:
    """``python -m dprepro.runtime.code_version SCRIPT...``: each script's library files and
    digest (run from the repository root), to see what an edit will rerun."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m dprepro.runtime.code_version",
                                     description=main.__doc__)
    parser.add_argument("scripts", nargs="+", help="step scripts, e.g. scripts/rrr_plot.py")
    parser.add_argument("--library", default=str(Path(__file__).resolve().parents[1]),
                        help="the dprepro package folder (default: this one)")
    args = parser.parse_args(argv)
    root = Path(args.library).resolve()
    for script in args.scripts:
        print(f"{script}: {script_library_digest(script, root)}")
        for path in library_modules(script, root):
            print(f"  {path.relative_to(root.parent).as_posix()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
