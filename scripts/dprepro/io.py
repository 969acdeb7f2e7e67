"""Atomic file output.

A job killed half-way must never leave a file that looks finished, so every
writer goes to a temporary file in the destination's directory and is moved
into place with :func:`os.replace` (atomic on POSIX within one file system).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pandas as pd

__all__ = ["atomic_path", "write_csv", "write_json", "write_parquet", "read_table", "sha256_of"]

CSV_FLOAT_FORMAT = "%.12g"


@contextlib.contextmanager
def atomic_path(dest: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path next to ``dest``; move it onto ``dest`` on success.

    On any exception the temporary file is removed and ``dest`` is untouched.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    # a job killed with SIGKILL cannot clean up; its leftovers go on the next write
    for stale in dest.parent.glob(f".{dest.name}.*.part"):
        stale.unlink(missing_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.replace(tmp_path, dest)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def write_csv(frame: pd.DataFrame, dest: str | os.PathLike) -> None:
    """Write a tidy table deterministically (fixed float format, no index, LF)."""
    with atomic_path(dest) as tmp:
        frame.to_csv(tmp, index=False, float_format=CSV_FLOAT_FORMAT, lineterminator="\n")


def write_parquet(frame: pd.DataFrame, dest: str | os.PathLike, *, index: bool = False) -> None:
    """Write a Parquet table atomically (pyarrow; ``index`` keeps the frame's index)."""
    with atomic_path(dest) as tmp:
        frame.to_parquet(tmp, engine="pyarrow", index=index)


def write_json(obj, dest: str | os.PathLike) -> None:
    with atomic_path(dest) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")


def read_table(path: str | os.PathLike, *, text_columns=()) -> pd.DataFrame:
    """Read a CSV or Parquet table by its suffix, naming the file on failure.

    ``text_columns`` present in a CSV are read as text (labels such as ``0``,
    ``01`` stay what they were, as Parquet keeps them).
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"table {path} does not exist")
    try:
        if path.suffix == ".parquet":
            return pd.read_parquet(path)
        return pd.read_csv(path, dtype={c: str for c in text_columns} or None)
    except ValueError as exc:  # pandas' and pyarrow's parse errors do not say which file
        raise ValueError(f"cannot read table {path}: {exc}") from exc


def sha256_of(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()
