"""Downloads against a real HTTP server on 127.0.0.1 (offline, fast)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from dprepro.data.download import (
    ChecksumError,
    DownloadError,
    DownloadRecord,
    download,
    fetch_json,
    sha256_file,
    write_bytes_atomic,
    write_json_atomic,
)
from helpers.httpserver import Response, closed_port_url, serve

BODY = b"id,time,status\n" + b"".join(b"%d,%d,1\n" % (i, 10 * i) for i in range(500))
BODY_SHA = hashlib.sha256(BODY).hexdigest()


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    # A proxy from the environment would intercept requests to 127.0.0.1.
    for var in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)


class Sleeps:
    """Records the delays instead of sleeping."""

    def __init__(self):
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".part-" in p.name)


def test_success_with_checksum(tmp_path):
    seen = []
    with serve({"/data.csv": BODY}) as srv:
        rec = download(
            srv.url("/data.csv"),
            tmp_path / "sub" / "data.csv",
            sha256=BODY_SHA,
            progress=lambda n, total: seen.append((n, total)),
            sleep=Sleeps(),
        )
    dest = tmp_path / "sub" / "data.csv"
    assert isinstance(rec, DownloadRecord)
    assert dest.read_bytes() == BODY
    assert rec.sha256 == BODY_SHA == sha256_file(dest)
    assert rec.bytes == len(BODY)
    assert rec.attempts == 1
    assert rec.path == str(dest)
    assert rec.retrieved_at.endswith("Z")
    assert seen[-1] == (len(BODY), len(BODY))
    assert leftovers(dest.parent) == []
    assert json.loads(json.dumps(rec.to_dict()))["sha256"] == BODY_SHA


def test_checksum_is_case_insensitive(tmp_path):
    with serve({"/d": BODY}) as srv:
        rec = download(srv.url("/d"), tmp_path / "d", sha256=BODY_SHA.upper(), sleep=Sleeps())
    assert rec.sha256 == BODY_SHA


def test_server_error_twice_then_success(tmp_path):
    sleeps = Sleeps()
    routes = {"/d": [Response(status=500), Response(status=503), Response(body=BODY)]}
    with serve(routes) as srv:
        rec = download(srv.url("/d"), tmp_path / "d", sha256=BODY_SHA, backoff=0.5, sleep=sleeps)
        assert srv.count("/d") == 3
    assert rec.attempts == 3
    assert (tmp_path / "d").read_bytes() == BODY
    # exponential backoff: 0.5, then 1.0
    assert sleeps.calls == [0.5, 1.0]
    assert leftovers(tmp_path) == []


def test_429_retry_after_is_honoured(tmp_path):
    sleeps = Sleeps()
    routes = {"/d": [Response(status=429, headers={"Retry-After": "7"}), Response(body=BODY)]}
    with serve(routes) as srv:
        rec = download(srv.url("/d"), tmp_path / "d", backoff=1.0, sleep=sleeps)
    assert rec.attempts == 2
    assert sleeps.calls == [7.0]


@pytest.mark.parametrize("status", [404, 403])
def test_client_error_is_not_retried(tmp_path, status):
    sleeps = Sleeps()
    routes = {"/gone": Response(status=status, body=b'{"message": "Study xyz is not found"}')}
    with serve(routes) as srv:
        with pytest.raises(DownloadError) as info:
            download(
                srv.url("/gone"),
                tmp_path / "d",
                retries=4,
                sleep=sleeps,
                offline_hint="place the file at data/d",
            )
        assert srv.count("/gone") == 1
    err = info.value
    assert err.status == status
    assert err.attempts == 1
    msg = str(err)
    assert srv.url("/gone") in msg
    assert f"HTTP {status}" in msg
    assert "not retried" in msg
    assert "Study xyz is not found" in msg  # the server's explanation is quoted
    assert "place the file at data/d" in msg
    assert sleeps.calls == []
    assert not (tmp_path / "d").exists()
    assert leftovers(tmp_path) == []


def test_truncated_body_is_retried(tmp_path):
    routes = {"/d": [Response(body=BODY, truncate_to=100), Response(body=BODY)]}
    with serve(routes) as srv:
        rec = download(srv.url("/d"), tmp_path / "d", sleep=Sleeps())
    assert rec.attempts == 2
    assert (tmp_path / "d").read_bytes() == BODY


def test_always_truncated_fails_and_leaves_nothing(tmp_path):
    sleeps = Sleeps()
    with serve({"/d": Response(body=BODY, truncate_to=100)}) as srv:
        with pytest.raises(DownloadError) as info:
            download(srv.url("/d"), tmp_path / "d", retries=2, sleep=sleeps)
        assert srv.count("/d") == 3
    msg = str(info.value)
    assert "truncated" in msg and "3 attempts" in msg
    assert info.value.attempts == 3
    assert len(sleeps.calls) == 2
    assert list(tmp_path.iterdir()) == []


def test_checksum_mismatch_raises_and_keeps_good_file(tmp_path):
    dest = tmp_path / "d"
    dest.write_bytes(b"previous good content")
    corrupt = BODY.replace(b"10,1", b"11,1")
    got = hashlib.sha256(corrupt).hexdigest()
    sleeps = Sleeps()
    with serve({"/d": corrupt}) as srv:
        with pytest.raises(ChecksumError) as info:
            download(srv.url("/d"), dest, sha256=BODY_SHA, retries=1, sleep=sleeps)
        assert srv.count("/d") == 2  # a mismatch is retried once here, then raised
    err = info.value
    assert err.expected == BODY_SHA and err.got == got
    msg = str(err)
    assert srv.url("/d") in msg and BODY_SHA in msg and got in msg
    assert dest.read_bytes() == b"previous good content"
    assert leftovers(tmp_path) == []


def test_checksum_mismatch_does_not_create_dest(tmp_path):
    with serve({"/d": b"other bytes"}) as srv:
        with pytest.raises(ChecksumError):
            download(srv.url("/d"), tmp_path / "d", sha256=BODY_SHA, retries=0, sleep=Sleeps())
    assert list(tmp_path.iterdir()) == []


def test_checksum_mismatch_then_good_copy(tmp_path):
    routes = {"/d": [b"stale copy from a cache", BODY]}
    with serve(routes) as srv:
        rec = download(srv.url("/d"), tmp_path / "d", sha256=BODY_SHA, sleep=Sleeps())
    assert rec.attempts == 2 and rec.sha256 == BODY_SHA


def test_unreachable_host_gives_offline_hint(tmp_path):
    url = closed_port_url("/study.json")
    sleeps = Sleeps()
    hint = "use config/config.yaml (embedded default) or place the file at data/raw/x.json"
    with pytest.raises(DownloadError) as info:
        download(url, tmp_path / "x.json", retries=2, sleep=sleeps, offline_hint=hint)
    msg = str(info.value)
    assert url in msg
    assert "could not reach" in msg
    assert "Connection" in msg or "refused" in msg.lower()  # the cause is named
    assert hint in msg
    assert info.value.attempts == 3 and len(sleeps.calls) == 2
    assert list(tmp_path.iterdir()) == []


def test_timeout_is_retried(tmp_path):
    routes = {"/slow": [Response(body=BODY, delay=1.0), Response(body=BODY)]}
    with serve(routes) as srv:
        rec = download(srv.url("/slow"), tmp_path / "d", timeout=0.2, sleep=Sleeps())
    assert rec.attempts == 2


def test_backoff_is_capped(tmp_path):
    sleeps = Sleeps()
    with serve({"/d": Response(status=500)}) as srv:
        with pytest.raises(DownloadError):
            download(srv.url("/d"), tmp_path / "d", retries=9, backoff=1.0, sleep=sleeps)
    assert sleeps.calls[:4] == [1.0, 2.0, 4.0, 8.0]
    assert max(sleeps.calls) == 60.0


def test_file_url_and_local_path(tmp_path):
    src = tmp_path / "src dir" / "kidney.csv"
    src.parent.mkdir()
    src.write_bytes(BODY)
    seen = []
    rec = download(
        src.as_uri(),
        tmp_path / "out" / "a.csv",
        sha256=BODY_SHA,
        progress=lambda n, t: seen.append(t),
    )
    assert rec.sha256 == BODY_SHA and rec.attempts == 1
    assert (tmp_path / "out" / "a.csv").read_bytes() == BODY
    assert seen[-1] == len(BODY)
    rec2 = download(str(src), tmp_path / "out" / "b.csv")
    assert rec2.sha256 == BODY_SHA
    rec3 = download(src, tmp_path / "out" / "c.csv")  # a Path object works too
    assert rec3.bytes == len(BODY)
    assert leftovers(tmp_path / "out") == []


def test_local_checksum_mismatch_and_missing_file(tmp_path):
    src = tmp_path / "a.csv"
    src.write_bytes(b"not the expected content")
    with pytest.raises(ChecksumError):
        download(str(src), tmp_path / "b.csv", sha256=BODY_SHA)
    assert not (tmp_path / "b.csv").exists()
    with pytest.raises(DownloadError, match="does not exist") as info:
        download(str(tmp_path / "missing.csv"), tmp_path / "c.csv", offline_hint="HINT-XYZ")
    assert "HINT-XYZ" in str(info.value)
    assert leftovers(tmp_path) == []


def test_fetch_json_retries_invalid_json(tmp_path):
    doc = [{"a": 1}, {"b": "x"}]
    raw = json.dumps(doc).encode()
    # Content-Length matches the cut body, so only JSON parsing can notice.
    routes = {"/j": [raw[:-5], b"<html>maintenance</html>", raw]}
    sleeps = Sleeps()
    with serve(routes) as srv:
        parsed, body = fetch_json(srv.url("/j"), sleep=sleeps)
        assert srv.requests[0].headers.get("Accept") == "application/json"
    assert parsed == doc and body == raw
    assert len(sleeps.calls) == 2


def test_fetch_json_gives_up(tmp_path):
    with serve({"/j": b'{"truncated": '}) as srv:
        with pytest.raises(DownloadError, match="not valid JSON"):
            fetch_json(srv.url("/j"), retries=1, sleep=Sleeps())


def test_fetch_json_truncated_transfer_and_5xx(tmp_path):
    raw = b'{"ok": true}'
    routes = {"/j": [Response(status=502), Response(body=raw, truncate_to=3), raw]}
    with serve(routes) as srv:
        parsed, _ = fetch_json(srv.url("/j"), sleep=Sleeps())
        assert srv.count("/j") == 3
    assert parsed == {"ok": True}


def test_fetch_json_local_file(tmp_path):
    p = tmp_path / "x.json"
    p.write_text('{"k": [1, 2]}')
    assert fetch_json(str(p))[0] == {"k": [1, 2]}
    assert fetch_json(p.as_uri())[0] == {"k": [1, 2]}


def test_write_json_atomic(tmp_path):
    path = tmp_path / "a" / "m.json"
    write_json_atomic({"b": 1, "a": [1, "é"]}, path)
    text = path.read_text(encoding="utf-8")
    assert json.loads(text) == {"a": [1, "é"], "b": 1}
    assert text.endswith("\n") and text.index('"a"') < text.index('"b"')  # stable bytes
    first = path.read_bytes()
    write_json_atomic({"a": [1, "é"], "b": 1}, path)
    assert path.read_bytes() == first
    # A non-serialisable object fails before the existing file is touched.
    with pytest.raises(TypeError):
        write_json_atomic({"x": object()}, path)
    assert path.read_bytes() == first
    assert leftovers(path.parent) == []


def test_write_bytes_atomic_replaces(tmp_path):
    path = tmp_path / "f.bin"
    write_bytes_atomic(b"one", path)
    write_bytes_atomic(b"two", path)
    assert path.read_bytes() == b"two"
    assert os.listdir(tmp_path) == ["f.bin"]


def test_invalid_arguments(tmp_path):
    with pytest.raises(ValueError):
        download("http://127.0.0.1:9/x", tmp_path / "x", retries=-1)
