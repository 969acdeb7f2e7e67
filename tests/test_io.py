"""Atomic writers, deterministic CSV bytes, table reading and hashing (dprepro.runtime.io)."""

import hashlib
import json
import os
import stat

import numpy as np
import pandas as pd
import pytest

from dprepro.runtime.io import (
    atomic_path,
    read_table,
    sha256_of,
    write_csv,
    write_json,
    write_parquet,
)


def leftovers(directory):
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".part"))


def test_atomic_path_moves_the_file_into_place_and_leaves_nothing_else(tmp_path):
    dest = tmp_path / "sub" / "table.csv"
    with atomic_path(dest) as tmp:
        assert tmp.parent == dest.parent and tmp != dest
        tmp.write_text("done\n")
        assert not dest.exists()  # invisible until the block ends
    assert dest.read_text() == "done\n"
    assert leftovers(dest.parent) == []


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)],
                         ids=["022", "027", "077"])
def test_outputs_get_the_mode_the_umask_gives_a_new_file(tmp_path, umask, mode):
    """Not the private temporary file's 0600: on a shared file system (umask 022) a
    colleague can read the results; a private umask keeps them private."""
    frame = pd.DataFrame({"a": [1.5]})
    previous = os.umask(umask)
    try:
        write_csv(frame, tmp_path / "t.csv")
        write_parquet(frame, tmp_path / "t.parquet")
        write_json({"a": 1}, tmp_path / "t.json")
        with atomic_path(tmp_path / "f.png") as tmp:
            tmp.write_bytes(b"png")
        plain = tmp_path / "plain"
        plain.write_text("x")  # what open() gives under the same umask
    finally:
        os.umask(previous)
    for name in ("t.csv", "t.parquet", "t.json", "f.png", "plain"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == mode, name


def test_an_exception_leaves_the_old_file_untouched_and_no_partial_file(tmp_path):
    dest = tmp_path / "table.csv"
    dest.write_text("old\n")
    with pytest.raises(RuntimeError, match="boom"):
        with atomic_path(dest) as tmp:
            tmp.write_text("half written")
            raise RuntimeError("boom")
    assert dest.read_text() == "old\n"
    assert leftovers(tmp_path) == []


def test_writer_failure_leaves_no_destination(tmp_path):
    class Broken(pd.DataFrame):
        def to_csv(self, path, **kwargs):
            open(path, "w").write("a,b\n1,")  # half a row, then the job dies
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_csv(Broken({"a": [1]}), tmp_path / "t.csv")
    assert not (tmp_path / "t.csv").exists()
    assert leftovers(tmp_path) == []


def test_stale_part_files_of_the_same_output_are_removed_on_the_next_write(tmp_path):
    # what a SIGKILLed job leaves behind
    stale = tmp_path / ".table.csv.k3j2h1.part"
    other = tmp_path / ".other.csv.k3j2h1.part"
    stale.write_text("partial")
    other.write_text("partial")
    write_csv(pd.DataFrame({"a": [1]}), tmp_path / "table.csv")
    assert not stale.exists()
    assert other.exists()  # another output's leftover is not ours to remove


def test_write_csv_writes_known_bytes_twice_the_same(tmp_path):
    frame = pd.DataFrame({"name": ["a", "b", "c"], "x": [0.1 + 0.2, 1 / 3, np.nan],
                          "n": [1, 2, 3]}, index=[10, 11, 12])
    write_csv(frame, tmp_path / "one.csv")
    write_csv(frame, tmp_path / "two.csv")
    one = (tmp_path / "one.csv").read_bytes()
    # 12 significant digits hide the binary noise of 0.1 + 0.2; no index; LF; NaN empty
    assert one == b"name,x,n\na,0.3,1\nb,0.333333333333,2\nc,,3\n"
    assert (tmp_path / "two.csv").read_bytes() == one


def test_write_csv_floats_are_the_bytes_of_pandas_own_float_format(tmp_path):
    """write_csv formats each distinct float once; the bytes must be those of pandas'
    per-value path, signed zeros, NaN, infinities, float32 and repeats included."""
    rng = np.random.default_rng(3)
    values = np.r_[0.0, -0.0, np.nan, np.inf, -np.inf, 1e-300, 2.5e20, 1 / 3, 5.0,
                   rng.normal(size=200), rng.integers(0, 4, 200) / 7]
    frame = pd.DataFrame({"x": values, "y": values[::-1].astype(np.float32),
                          "label": [f"g,{i % 3}" for i in range(len(values))],
                          "n": np.arange(len(values))})
    expected = frame.to_csv(index=False, float_format="%.12g", lineterminator="\n")
    write_csv(frame, tmp_path / "t.csv")
    assert (tmp_path / "t.csv").read_text() == expected
    assert "\n-0," in expected and "\n0," in expected  # both zeros kept apart
    assert frame["x"].dtype == np.float64  # the caller's frame is left as it was


def test_write_json_is_sorted_with_trailing_newline(tmp_path):
    write_json({"b": 1, "a": {"d": 2, "c": 3}}, tmp_path / "x.json")
    text = (tmp_path / "x.json").read_text()
    assert text.endswith("}\n")
    assert list(json.loads(text)) == ["a", "b"]
    assert text.index('"c"') < text.index('"d"')


def test_read_table_reads_csv_and_parquet_by_suffix(tmp_path):
    frame = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})
    write_csv(frame, tmp_path / "t.csv")
    write_parquet(frame, tmp_path / "t.parquet")
    pd.testing.assert_frame_equal(read_table(tmp_path / "t.csv"), frame)
    pd.testing.assert_frame_equal(read_table(tmp_path / "t.parquet"), frame)


@pytest.mark.parametrize(("name", "content"), [
    ("missing.csv", None),
    ("empty.csv", b""),
    ("corrupt.parquet", b"PAR1 this is not parquet"),
    ("ragged.csv", b"a,b\n1,2\n3,4,5,6\n"),
])
def test_read_table_errors_name_the_file(tmp_path, name, content):
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    with pytest.raises((FileNotFoundError, ValueError)) as info:
        read_table(path)
    assert str(path) in str(info.value)


def test_write_parquet_round_trip_with_and_without_index(tmp_path):
    frame = pd.DataFrame({"value": [0.5, 1.5, np.inf]},
                         index=pd.Index(["r1", "r2", "r3"], name="replicate"))
    write_parquet(frame, tmp_path / "plain.parquet")
    write_parquet(frame, tmp_path / "indexed.parquet", index=True)
    plain = pd.read_parquet(tmp_path / "plain.parquet")
    assert list(plain.columns) == ["value"]
    assert isinstance(plain.index, pd.RangeIndex)
    np.testing.assert_array_equal(plain["value"], frame["value"])
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "indexed.parquet"), frame)
    assert leftovers(tmp_path) == []


def test_sha256_of_agrees_with_hashlib_and_the_standard_vector(tmp_path):
    path = tmp_path / "abc.bin"
    path.write_bytes(b"abc")
    # FIPS 180-2 test vector for "abc"
    assert sha256_of(path) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    big = tmp_path / "big.bin"
    data = np.random.default_rng(1).bytes(3 * 1024 + 7)
    big.write_bytes(data)
    # a chunk smaller than the file exercises the streaming loop
    assert sha256_of(big, chunk=1000) == hashlib.sha256(data).hexdigest()
