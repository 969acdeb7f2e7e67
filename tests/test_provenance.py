"""Provenance records: inputs hashed, no timestamps, git state (dprepro.runtime.provenance)."""

import hashlib
import json
import subprocess
import time

import pytest

import dprepro
from dprepro.runtime.provenance import (
    git_commit,
    package_versions,
    provenance_record,
    write_provenance,
)


@pytest.fixture
def files(tmp_path):
    script = tmp_path / "step.py"
    script.write_text("print('step')\n")
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_bytes(b"x\n1\n")
    b.write_bytes(b"x\n2\n")
    return script, a, b


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_inputs_script_and_arguments_are_recorded(files, tmp_path):
    script, a, b = files
    record = provenance_record(output=tmp_path / "out.csv", script=script,
                               inputs={"second": b, "first": a}, config={"n": 5},
                               seeds={"base_seed": 1}, privacy={"release": False},
                               data_origin="simulation", extra={"rule": "r"})
    assert record["inputs"] == {"first": {"path": str(a), "sha256": digest(a)},
                                "second": {"path": str(b), "sha256": digest(b)}}
    assert list(record["inputs"]) == ["first", "second"]  # sorted: stable bytes
    assert record["script"] == {"path": str(script), "sha256": digest(script)}
    assert record["config"] == {"n": 5} and record["seeds"] == {"base_seed": 1}
    assert record["privacy"] == {"release": False} and record["data_origin"] == "simulation"
    assert record["rule"] == "r"
    assert record["dprepro"]["version"] == dprepro.__version__


def test_unnamed_inputs_are_keyed_by_path_and_a_change_changes_the_hash(files, tmp_path):
    script, a, b = files
    before = provenance_record(output="o", script=script, inputs=[a, b])
    assert set(before["inputs"]) == {str(a), str(b)}
    a.write_bytes(b"x\n3\n")
    after = provenance_record(output="o", script=script, inputs=[a, b])
    assert after["inputs"][str(a)]["sha256"] != before["inputs"][str(a)]["sha256"]
    assert after["inputs"][str(b)] == before["inputs"][str(b)]


def test_records_have_no_timestamps(files):
    script, a, _ = files
    first = provenance_record(output="o", script=script, inputs=[a])
    time.sleep(1.1)  # a clock-based field would now differ
    second = provenance_record(output="o", script=script, inputs=[a])
    assert first == second
    assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)


def test_write_provenance_writes_the_record_next_to_the_output(files, tmp_path):
    script, a, _ = files
    output = tmp_path / "table.csv"
    sidecar = write_provenance(output, script=script, inputs={"a": a})
    assert sidecar == tmp_path / "table.csv.prov.json"
    assert json.loads(sidecar.read_text()) == json.loads(json.dumps(
        provenance_record(output=output, script=script, inputs={"a": a})))


def test_package_versions_reports_missing_packages_as_none():
    versions = package_versions(["numpy", "surely-not-installed-package-xyz"])
    assert versions["numpy"].split(".")[0].isdigit()
    assert versions["surely-not-installed-package-xyz"] is None


def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def test_git_commit_is_head_and_flags_tracked_changes(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "tracked.txt").write_text("one\n")
    git(repo, "add", "tracked.txt")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "c")
    head = git(repo, "rev-parse", "HEAD")
    git_commit.cache_clear()
    assert git_commit(str(repo)) == head
    (repo / "untracked.txt").write_text("new\n")  # untracked files do not count
    git_commit.cache_clear()
    assert git_commit(str(repo)) == head
    (repo / "tracked.txt").write_text("two\n")
    git_commit.cache_clear()
    assert git_commit(str(repo)) == f"{head}-dirty"
    git_commit.cache_clear()


def test_git_commit_outside_a_checkout_is_none(tmp_path):
    git_commit.cache_clear()
    assert git_commit(str(tmp_path)) is None
    git_commit.cache_clear()


def test_input_hashes_are_cached_per_file_version_not_per_path(tmp_path):
    """A job writing many sidecars hashes each unchanged input once; a file rewritten in
    between (other content, other size or time) is hashed anew, never served stale."""
    import hashlib
    import os

    from dprepro.runtime import provenance

    path = tmp_path / "input.csv"
    path.write_text("a,b\n1,2\n")
    first = provenance._input_sha256(path)
    assert first == hashlib.sha256(b"a,b\n1,2\n").hexdigest()
    hits = provenance._sha256_of_version.cache_info().hits
    assert provenance._input_sha256(path) == first
    assert provenance._sha256_of_version.cache_info().hits == hits + 1
    # same size, same second: a forced new mtime still changes the key
    path.write_text("a,b\n3,4\n")
    stat = os.stat(path)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))
    assert provenance._input_sha256(path) == hashlib.sha256(b"a,b\n3,4\n").hexdigest()
