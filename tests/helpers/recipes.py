"""The recipes of the README and docs/ as written, for the tests that run them.

A recipe's code (a fenced block, or an inline ``snakemake …`` command) is read from its
section of the Markdown page at test time, so a test breaks when the page changes and
no longer works. Shell lines run as written in the run's folder; a ``snakemake`` line
runs as written too, with three test-only changes (:func:`snakemake_command`): the
test's interpreter runs Snakemake, the small test configuration (and any trims) goes
*under* the recipe's ``--configfile`` files, and the targets the recipe affects replace
the default target ``all``.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: What a run of the workflow needs from a checkout, plus the pages recipes write.
CHECKOUT = ("Snakefile", "workflow", "scripts", "config", "envs", "profiles", "resources",
            "docs", "README.md", "pyproject.toml")
TIMEOUT = 900  # s


def section(page: str, heading: str) -> str:
    """The text of the section of ``page`` (a path under the repository) whose heading
    line contains ``heading``, up to the next heading of the same or a higher level.

    ``AssertionError`` naming the page when no heading matches (the recipe was renamed).
    """
    lines = (ROOT / page).read_text().splitlines(keepends=True)
    fenced = False
    start = level = None
    for i, line in enumerate(lines):
        if line.startswith("```"):
            fenced = not fenced
        match = None if fenced else re.match(r"(#+) ", line)
        if match is None:
            continue
        if start is not None and len(match.group(1)) <= level:
            return "".join(lines[start:i])
        if start is None and heading in line:
            start, level = i, len(match.group(1))
    assert start is not None, f"{page} has no heading containing {heading!r}"
    return "".join(lines[start:])


def paragraph(page: str, opening: str) -> str:
    """The paragraph of ``page`` that starts with ``opening`` and the code blocks that
    follow it up to the next bold-led paragraph or heading (docs/development.md's
    recipes are paragraphs led by ``**Name.**``)."""
    text = (ROOT / page).read_text()
    start = text.find(opening)
    assert start >= 0, f"{page} has no paragraph starting {opening!r}"
    rest = text[start + len(opening):]
    end = re.search(r"^(\*\*|#)", rest, re.M)
    return opening + (rest if end is None else rest[:end.start()])


def code_blocks(text: str, language: str | None = None) -> list[str]:
    """The fenced code blocks of ``text`` (of ``language`` only, when given)."""
    blocks = re.findall(r"^```(\w*)\n(.*?)^```", text, re.M | re.S)
    return [code for lang, code in blocks if language is None or lang == language]


def inline_commands(text: str, program: str = "snakemake") -> list[str]:
    """The inline code spans of ``text`` that are ``program`` commands (whitespace and
    line breaks inside a span read as one space)."""
    spans = re.findall(r"(?<!`)`([^`]+)`(?!`)", text)
    return [" ".join(span.split()) for span in spans if span.split()[0] == program]


def checkout_copy(folder: Path) -> Path:
    """A scratch copy of the checkout (what a run reads, the docs and the README)."""
    folder.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", ".snakemake", "results", "runs")
    for name in CHECKOUT:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, folder / name, ignore=ignore, symlinks=True)
        else:
            shutil.copy2(source, folder / name)
    return folder


def environment() -> dict[str, str]:
    """The environment of a recipe's shell lines: ``python`` and ``snakemake`` are the
    test's interpreter and its Snakemake."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def snakemake_command(line: str, *, under: list[Path] = (), targets: list[str] = (),
                      snakefile: Path | None = None) -> list[str]:
    """The ``snakemake`` command ``line`` of a recipe, as the test runs it.

    ``under``: configuration files laid under the recipe's own ``--configfile`` files
    (the small test configuration: the recipe's overlay then changes it as it would
    change ``config/config.yaml``); ``targets`` replace the default target (inserted
    before the options, since ``--configfile`` and ``--config`` take several values);
    ``snakefile``: run that workflow (a config-only recipe run in a folder of its own).
    """
    words = shlex.split(line)
    assert words[0] == "snakemake", line
    options = words[1:]
    if under:
        if "--configfile" in options:
            at = options.index("--configfile") + 1
            options[at:at] = [str(path) for path in under]
        else:
            options += ["--configfile", *map(str, under)]
    program = [sys.executable, "-m", "snakemake"]
    if snakefile is not None:
        program += ["--snakefile", str(snakefile)]
    return [*program, *targets, *options]


def run(command: list[str] | str, work: Path, *, shell: bool = False
        ) -> subprocess.CompletedProcess:
    """Run ``command`` in ``work``; ``AssertionError`` with its output when it fails."""
    proc = subprocess.run(command, cwd=work, capture_output=True, text=True,
                          timeout=TIMEOUT, env=environment(), shell=shell,
                          executable="/bin/bash" if shell else None)
    if proc.returncode != 0:
        shown = command if isinstance(command, str) else " ".join(command)
        raise AssertionError(f"{shown} failed in {work} (rc {proc.returncode}):\n"
                             f"{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}")
    return proc


def run_shell_block(block: str, work: Path, **snakemake) -> list[subprocess.CompletedProcess]:
    """Run a recipe's shell block in ``work``: its lines other than ``snakemake`` commands
    as one bash script (``set -euo pipefail``), then each ``snakemake`` line through
    :func:`snakemake_command` (``snakemake`` keyword arguments)."""
    lines = block.splitlines()
    commands = [line for line in lines if line.startswith("snakemake ")]
    script = "\n".join(line for line in lines if not line.startswith("snakemake "))
    done = []
    if script.strip():
        done.append(run("set -euo pipefail\n" + script, work, shell=True))
    done += [run(snakemake_command(line, **snakemake), work) for line in commands]
    return done


def planned_jobs(output: str) -> dict[str, int]:
    """The 'Job stats' table of a Snakemake run or dry run: rule -> jobs (no ``total``)."""
    counts = {}
    block = output.split("Job stats:", 1)[1] if "Job stats:" in output else ""
    for line in block.splitlines()[3:]:
        match = re.match(r"^(\S+)\s+(\d+)$", line.strip())
        if not match:
            break
        counts[match.group(1)] = int(match.group(2))
    counts.pop("total", None)
    return counts
