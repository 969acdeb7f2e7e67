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
import re
from functools import cache
from pathlib import Path

__all__ = ["library_digest", "library_modules", "module_checksums", "script_library_digest",
           "scripts_library_code"]

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


class _LibraryReading:
    """One reading of the library under ``library_root``: each module's file and each
    file's sha256 looked up once however many scripts reach them.

    A workflow start fills the ``library_code`` parameter of some sixty rules whose
    scripts reach mostly the same modules: read afresh for each rule, that was 0.235
    CPU-s of every start (each dry run, each cluster job's ``snakemake``); one reading for
    all of them, 0.105.
    """

    def __init__(self, library_root: str | Path):
        self.root = Path(library_root).resolve()
        self._files: dict[str, Path | None] = {}
        self._sha256: dict[Path, bytes] = {}

    def module_file(self, dotted: str) -> Path | None:
        if dotted not in self._files:
            self._files[dotted] = _module_file(self.root, dotted)
        return self._files[dotted]

    def modules(self, script: str | Path) -> list[Path]:
        seen: set[str] = set()
        stack = self._reached(Path(script).resolve())
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            stack.extend(self._reached(self.module_file(name)))
        return sorted({self.module_file(name) for name in seen})

    def _reached(self, path: Path) -> list[str]:
        """The library modules ``path`` imports (names with a file under the root)."""
        return [name for name in _imported_modules(path) if self.module_file(name) is not None]

    def sha256(self, path: Path) -> bytes:
        if path not in self._sha256:
            self._sha256[path] = hashlib.sha256(path.read_bytes()).digest()
        return self._sha256[path]

    def digest(self, files) -> str:
        parent = self.root.parent
        digest = hashlib.sha256()
        for path in sorted(Path(f).resolve() for f in files):
            digest.update(path.relative_to(parent).as_posix().encode() + b"\0")
            digest.update(self.sha256(path))
        return digest.hexdigest()

    def script_digest(self, script: str | Path) -> str:
        """The digest of the library files ``script`` reaches (its ``library_code``)."""
        return self.digest(self.modules(script))


def _packages_on_the_way(dotted: str) -> list[str]:
    parts = dotted.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


#: an import statement that names ``dprepro``, at the start of a line (continuations and a
#: parenthesised name list included); the text searched has its triple-quoted strings
#: blanked, so a docstring's example is not an import
_IMPORT_STATEMENT = re.compile(
    r"^[ \t]*(?:from[ \t]+dprepro[\w.]*[ \t]+import[ \t]+(?:\([^)]*\)|(?:[^\n\\]|\\\n)*)"
    r"|import[ \t]+(?:[^\n\\]|\\\n)*\bdprepro\b(?:[^\n\\]|\\\n)*)", re.M)
_TRIPLE_QUOTED = re.compile(r"(\"\"\"|\'\'\')(?:\\.|(?!\1).)*?\1", re.S)


def _import_nodes(text: str):
    """The import statements of ``text`` that name ``dprepro``, parsed one by one.

    Parsing only these statements, not the whole file (:func:`ast.parse`), is what a job
    start and a DAG build can afford: every job's sidecars and every workflow start read
    the import graph (about 6x faster, the same modules; tests/test_code_version.py checks
    it against a whole-file parse of every module of the library).
    """
    code = _TRIPLE_QUOTED.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    for match in _IMPORT_STATEMENT.finditer(code):
        try:
            tree = ast.parse(match.group(0).strip())
        except SyntaxError:  # a line inside a string that looks like an import
            continue
        yield from (node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom)))


@cache
def _imported_modules(path: Path) -> tuple[str, ...]:
    """Every ``dprepro`` name that ``path`` imports as a module or from one, anywhere in the
    file, with the packages on the way (``from dprepro.a import b``: ``dprepro``,
    ``dprepro.a`` and ``dprepro.a.b``, a module or a name; :class:`_LibraryReading` keeps
    those with a file)."""
    found: set[str] = set()
    for node in _import_nodes(path.read_text()):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif node.level == 0 and node.module:
            # `from dprepro.pkg import mod` imports a module; `import name` a name
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        for name in names:
            if name == PACKAGE or name.startswith(PACKAGE + "."):
                found.update([*_packages_on_the_way(name), name])
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
    return _LibraryReading(library_root).modules(script)


def library_digest(files, library_root: str | Path) -> str:
    """sha256 over each file's path (relative to the library's parent) and bytes."""
    return _LibraryReading(library_root).digest(files)


def module_checksums(script: str | Path, library_root: str | Path) -> dict[str, str]:
    """sha256 of each library file ``script`` reaches, by its path from the library's parent
    (``dprepro/survival/kaplan_meier.py``): what a sidecar records so that a later check
    can name the module that changed."""
    reading = _LibraryReading(library_root)
    return {path.relative_to(reading.root.parent).as_posix(): reading.sha256(path).hex()
            for path in reading.modules(script)}


def script_library_digest(script: str | Path, library_root: str | Path) -> str:
    """The digest of the library code ``script`` runs (a rule's ``library_code`` param)."""
    return _LibraryReading(library_root).script_digest(script)


def scripts_library_code(scripts_dir: str | Path):
    """``library_code(script)`` for the step scripts of ``scripts_dir`` (library in
    ``scripts_dir/dprepro``): what the rules call to fill ``params.library_code``.

    The library is read once for all the calls (a workflow start: the files do not change
    while the rules are defined), and each script's digest computed once however many
    rules run it.
    """
    scripts = Path(scripts_dir)
    reading = _LibraryReading(scripts / PACKAGE)

    @cache
    def library_code(script: str) -> str:
        return reading.script_digest(scripts / script)

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
