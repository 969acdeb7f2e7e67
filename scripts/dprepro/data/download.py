"""Robust, checksummed downloads for the workflow's data rules.

Every raw input of the paper mode (cBioPortal, GDSC, DepMap) goes through
:func:`download` or :func:`fetch_json`. They share one retry policy:

* transient failures are retried with exponential backoff: connection errors,
  timeouts, HTTP 5xx, 408 and 429, bodies shorter than their
  ``Content-Length``, and (for :func:`fetch_json`) bodies that are not valid
  JSON;
* permanent failures are raised at once: any other HTTP 4xx (404, 403, ...),
  a missing local file;
* a checksum mismatch is retried (a proxy may have served a stale copy) and
  finally raised as :class:`ChecksumError`.

A download streams into ``<dest>.part-<random>`` in the destination folder and
is moved onto ``dest`` with :func:`os.replace` only once complete and verified,
so ``dest`` is either absent, the previous good file, or the new good file;
the ``.part`` file never outlives the call. Only the standard library is used
for HTTP, so the workflow needs no extra dependency to fetch its data.

``file://`` URLs and plain local paths are accepted too, so a user without
network access can point the configuration at a copy they already have.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import email.utils
import hashlib
import http.client
import json
import os
import secrets
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from dprepro import __version__
from dprepro.runtime.io import atomic_path, sha256_of

__all__ = [
    "ChecksumError",
    "DownloadError",
    "DownloadRecord",
    "download",
    "fetch_json",
    "sha256_file",
    "write_bytes_atomic",
    "write_json_atomic",
]

CHUNK_SIZE = 1 << 20
MAX_BACKOFF_S = 60.0
MAX_RETRY_AFTER_S = 300.0
USER_AGENT = f"dprepro/{__version__} (python-urllib)"

# 408 and 429 are the client-side codes that mean "try again later"; every
# other 4xx says the request itself is wrong, so repeating it cannot help.
_RETRYABLE_4XX = frozenset({408, 429})


class DownloadError(RuntimeError):
    """A download failed for good (after any retries).

    Parameters
    ----------
    message : str
        Human-readable explanation, already naming the URL and the cause.
    url : str
        The URL (or local path) that was requested.
    status : int, optional
        The HTTP status of the last response, when there was one.
    attempts : int
        How many attempts were made.
    """

    def __init__(self, message: str, *, url: str, status: int | None = None, attempts: int = 0):
        super().__init__(message)
        self.url = url
        self.status = status
        self.attempts = attempts


class ChecksumError(DownloadError):
    """The downloaded bytes do not have the expected sha256.

    Parameters
    ----------
    url : str
        The URL that was requested.
    expected, got : str
        The expected and the observed sha256 hex digests.
    attempts : int
        How many attempts were made.
    """

    def __init__(self, url: str, expected: str, got: str, *, attempts: int = 1):
        message = (
            f"checksum mismatch for {url}: expected sha256 {expected}, got {got} "
            f"(after {attempts} attempt{'s' if attempts != 1 else ''}). The file was not "
            "written. If the upstream file changed on purpose, update the checksum in the "
            "configuration; otherwise the download is corrupt or was intercepted."
        )
        super().__init__(message, url=url, attempts=attempts)
        self.expected = expected
        self.got = got


@dataclasses.dataclass(frozen=True)
class DownloadRecord:
    """What was downloaded, for provenance sidecars and manifests.

    Attributes
    ----------
    url : str
        The URL (or local path) the bytes came from.
    path : str
        Where the file now lies.
    sha256 : str
        Hex sha256 of the file.
    bytes : int
        File size in bytes.
    attempts : int
        Number of attempts it took (1 = first try).
    retrieved_at : str
        UTC time of the successful attempt, ISO 8601 with a ``Z`` suffix.
    """

    url: str
    path: str
    sha256: str
    bytes: int
    attempts: int
    retrieved_at: str

    def to_dict(self) -> dict[str, Any]:
        """Return the record as a JSON-serialisable dict."""
        return dataclasses.asdict(self)


class _Retryable(Exception):
    """Internal: an attempt failed in a way that another attempt may fix."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        connect: bool = False,
        retry_after: float | None = None,
    ):
        super().__init__(message)
        self.status = status
        # True when no HTTP response was obtained at all (host unreachable).
        self.connect = connect
        self.retry_after = retry_after


class _ChecksumMismatch(_Retryable):
    def __init__(self, expected: str, got: str):
        super().__init__(f"sha256 {got} != expected {expected}")
        self.expected = expected
        self.got = got


# --------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------


def _utc_now() -> str:
    return _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def sha256_file(path: str | os.PathLike[str], *, chunk_size: int = CHUNK_SIZE) -> str:
    """Return the hex sha256 of a file, read in chunks.

    Parameters
    ----------
    path : path-like
        File to hash.
    chunk_size : int
        Read size in bytes; only memory use depends on it.

    Returns
    -------
    str
        Lower-case hex digest.
    """
    return sha256_of(path, chunk=chunk_size)


def _part_path(dest: Path) -> Path:
    # Same folder as dest so os.replace is a rename on one filesystem (atomic);
    # a random suffix so concurrent jobs writing the same target never collide.
    return dest.with_name(f"{dest.name}.part-{secrets.token_hex(6)}")


def write_bytes_atomic(data: bytes, path: str | os.PathLike[str]) -> Path:
    """Write ``data`` to ``path`` atomically (temp file, fsync, rename).

    Parameters
    ----------
    data : bytes
        Content to write.
    path : path-like
        Destination; parent folders are created.

    Returns
    -------
    pathlib.Path
        The destination path.
    """
    dest = Path(path)
    with atomic_path(dest) as tmp, open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    return dest


def write_json_atomic(obj: Any, path: str | os.PathLike[str], *, indent: int = 2) -> Path:
    """Serialise ``obj`` as JSON and write it atomically.

    Keys are sorted and the text ends with a newline so that the same object
    always gives byte-identical files (stable checksums, clean diffs).

    Parameters
    ----------
    obj : object
        JSON-serialisable object.
    path : path-like
        Destination; parent folders are created.
    indent : int
        Indentation passed to :func:`json.dumps`.

    Returns
    -------
    pathlib.Path
        The destination path.
    """
    # Serialise first: a non-serialisable object must fail before any file is touched.
    text = json.dumps(obj, indent=indent, sort_keys=True, ensure_ascii=False) + "\n"
    return write_bytes_atomic(text.encode("utf-8"), path)


def _is_local(url: str) -> bool:
    scheme = urllib.parse.urlsplit(url).scheme
    # A one-letter "scheme" is a Windows drive letter (C:\...), i.e. a path.
    return scheme == "" or scheme == "file" or len(scheme) == 1


def _local_path(url: str) -> Path:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise DownloadError(f"file URL with a remote host is not supported: {url}", url=url)
        return Path(urllib.request.url2pathname(parts.path))
    return Path(url).expanduser()


def _with_hint(message: str, hint: str | None) -> str:
    return f"{message}\nHint: {hint}" if hint else message


def _describe(exc: BaseException) -> str:
    if isinstance(exc, urllib.error.URLError) and not isinstance(exc, urllib.error.HTTPError):
        reason = exc.reason
        return (
            f"{type(reason).__name__}: {reason}"
            if isinstance(reason, BaseException)
            else str(reason)
        )
    return f"{type(exc).__name__}: {exc}"


def _retry_after_seconds(value: str | None) -> float | None:
    """Parse a Retry-After header (seconds or HTTP date); None if absent/invalid."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.UTC)
    return max(0.0, (when - _dt.datetime.now(_dt.UTC)).total_seconds())


def _error_body(exc: urllib.error.HTTPError, limit: int = 300) -> str:
    # Servers such as cBioPortal explain a 404 in the body ("Study x is not
    # found"); quoting its start makes the error actionable.
    try:
        raw = exc.read(limit + 1)
    except Exception:  # best effort only: the status code is what matters
        return ""
    text = raw.decode("utf-8", errors="replace").strip()
    text = " ".join(text.split())
    return text[:limit] + ("..." if len(raw) > limit else "")


def _build_request(url: str, headers: Mapping[str, str] | None) -> urllib.request.Request:
    hdrs = {"User-Agent": USER_AGENT}
    if headers:
        hdrs.update(headers)
    return urllib.request.Request(url, headers=hdrs)


def _open(url: str, *, headers, timeout, opener):
    """Open ``url``; translate failures into _Retryable or DownloadError."""
    req = _build_request(url, headers)
    try:
        if opener is None:
            return urllib.request.urlopen(req, timeout=timeout)
        return opener.open(req, timeout=timeout)
    except urllib.error.HTTPError as exc:
        status = exc.code
        detail = _error_body(exc)
        reason = f"HTTP {status} {exc.reason}" + (f" ({detail})" if detail else "")
        if status >= 500 or status in _RETRYABLE_4XX:
            header = exc.headers.get("Retry-After") if exc.headers is not None else None
            retry_after = _retry_after_seconds(header)
            raise _Retryable(reason, status=status, retry_after=retry_after) from exc
        raise DownloadError(
            f"{url}: {reason}; not retried (retrying does not fix a client error; check the URL)",
            url=url,
            status=status,
            attempts=1,
        ) from exc
    except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
        # URLError wraps refused connections, DNS failures and connect
        # timeouts; OSError covers timeouts and resets while awaiting headers.
        raise _Retryable(_describe(exc), connect=True) from exc


def _read_stream(resp, sink: Callable[[bytes], None], progress, url: str) -> int:
    """Copy the response body to ``sink``; verify Content-Length. Returns byte count."""
    expected = resp.headers.get("Content-Length")
    try:
        total = int(expected) if expected is not None else None
    except ValueError:
        total = None
    n = 0
    try:
        while True:
            chunk = resp.read(CHUNK_SIZE)
            if not chunk:
                break
            sink(chunk)
            n += len(chunk)
            if progress is not None:
                progress(n, total)
    except (http.client.HTTPException, OSError) as exc:
        raise _Retryable(f"read failed after {n} bytes: {_describe(exc)}") from exc
    # http.client quietly returns EOF when the peer closes early, so a
    # truncated body must be detected here.
    if total is not None and n != total:
        raise _Retryable(f"truncated body: got {n} of {total} bytes (Content-Length)")
    return n


def _retry_loop(url: str, attempt_fn, *, retries: int, backoff: float, sleep, offline_hint):
    """Run ``attempt_fn(attempt)`` until it succeeds or retries are exhausted."""
    if retries < 0:
        raise ValueError(f"retries must be >= 0, got {retries}")
    if backoff < 0:
        raise ValueError(f"backoff must be >= 0, got {backoff}")
    max_attempts = retries + 1
    last: _Retryable | None = None
    ever_connected = False
    for attempt in range(1, max_attempts + 1):
        try:
            return attempt_fn(attempt)
        except _Retryable as exc:
            last = exc
            ever_connected = ever_connected or not exc.connect
            if attempt == max_attempts:
                break
            delay = min(MAX_BACKOFF_S, backoff * 2 ** (attempt - 1))
            if exc.retry_after is not None:
                delay = max(delay, min(exc.retry_after, MAX_RETRY_AFTER_S))
            sleep(delay)
        except DownloadError as exc:
            # Permanent failure (e.g. 404): no retry, but still tell the user
            # how to proceed without this source.
            raise DownloadError(
                _with_hint(str(exc), offline_hint), url=exc.url, status=exc.status, attempts=attempt
            ) from exc.__cause__
    assert last is not None
    if isinstance(last, _ChecksumMismatch):
        raise ChecksumError(url, last.expected, last.got, attempts=max_attempts) from last
    plural = "s" if max_attempts != 1 else ""
    if not ever_connected:
        msg = (
            f"could not reach {url}: no response after {max_attempts} attempt{plural}; "
            f"cause: {last}. Is this machine offline, or is the host blocked (DNS, "
            "firewall, proxy)?"
        )
    else:
        msg = f"download of {url} failed after {max_attempts} attempt{plural}; last error: {last}"
    raise DownloadError(
        _with_hint(msg, offline_hint), url=url, status=last.status, attempts=max_attempts
    ) from last


# --------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------


def download(
    url: str | os.PathLike[str],
    dest: str | os.PathLike[str],
    *,
    sha256: str | None = None,
    retries: int = 4,
    backoff: float = 1.0,
    timeout: float = 60,
    progress: Callable[[int, int | None], None] | None = None,
    opener: urllib.request.OpenerDirector | None = None,
    headers: Mapping[str, str] | None = None,
    offline_hint: str | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> DownloadRecord:
    """Download ``url`` to ``dest`` atomically, with retries and checksum.

    Parameters
    ----------
    url : str or path-like
        ``http(s)://`` or ``file://`` URL, or a plain local path (copied).
    dest : path-like
        Destination file; parent folders are created. It is replaced only by a
        complete, verified file; on failure an existing ``dest`` is untouched.
    sha256 : str, optional
        Expected hex digest (case-insensitive). A mismatch is retried, then
        raised as :class:`ChecksumError`.
    retries : int
        Retries after the first attempt (``retries=4`` allows 5 attempts).
    backoff : float
        Initial delay in seconds; doubles after each failed attempt (capped at
        60 s). A ``Retry-After`` header on 429/503 lengthens it (up to 300 s).
    timeout : float
        Socket timeout in seconds, for connecting and for each read.
    progress : callable, optional
        Called as ``progress(bytes_so_far, total_or_None)`` after each chunk.
    opener : urllib.request.OpenerDirector, optional
        Opener to use instead of :func:`urllib.request.urlopen` (custom
        proxies, authentication, tests).
    headers : mapping, optional
        Extra request headers.
    offline_hint : str, optional
        Appended to the error message when the download fails for good, to
        tell the user what to do without network (e.g. use the embedded
        default configuration or place the file at a given path).
    sleep : callable
        Used to wait between attempts; tests inject a no-op.

    Returns
    -------
    DownloadRecord
        URL, final path, sha256, size, number of attempts and UTC time.

    Raises
    ------
    ChecksumError
        The bytes never matched ``sha256``.
    DownloadError
        The resource does not exist or was refused (HTTP 4xx other than
        408/429, no retry), or every attempt failed.
    """
    url = os.fspath(url)
    dest = Path(dest)
    expected = sha256.strip().lower() if sha256 else None
    dest.parent.mkdir(parents=True, exist_ok=True)

    if _is_local(url):
        return _copy_local(
            url, dest, expected=expected, progress=progress, offline_hint=offline_hint
        )

    def attempt(n: int) -> DownloadRecord:
        tmp = _part_path(dest)
        try:
            h = hashlib.sha256()
            with (
                _open(url, headers=headers, timeout=timeout, opener=opener) as resp,
                open(tmp, "xb") as fh,
            ):

                def sink(chunk: bytes) -> None:
                    h.update(chunk)
                    fh.write(chunk)

                size = _read_stream(resp, sink, progress, url)
                fh.flush()
                os.fsync(fh.fileno())
            got = h.hexdigest()
            if expected is not None and got != expected:
                raise _ChecksumMismatch(expected, got)
            os.replace(tmp, dest)
            return DownloadRecord(
                url=url, path=str(dest), sha256=got, bytes=size, attempts=n, retrieved_at=_utc_now()
            )
        finally:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()

    return _retry_loop(
        url, attempt, retries=retries, backoff=backoff, sleep=sleep, offline_hint=offline_hint
    )


def _copy_local(url: str, dest: Path, *, expected, progress, offline_hint) -> DownloadRecord:
    # Local sources are not retried: a missing or different local file will
    # not change by waiting.
    src = _local_path(url)
    if not src.is_file():
        raise DownloadError(
            _with_hint(f"local source {url} does not exist or is not a file", offline_hint),
            url=url,
            attempts=1,
        )
    # Copying even when src is dest is harmless (same bytes, atomic rename),
    # so that case needs no special branch.
    tmp = _part_path(dest)
    try:
        h = hashlib.sha256()
        total = src.stat().st_size
        n = 0
        with open(src, "rb") as fin, open(tmp, "xb") as fout:
            for chunk in iter(lambda: fin.read(CHUNK_SIZE), b""):
                h.update(chunk)
                fout.write(chunk)
                n += len(chunk)
                if progress is not None:
                    progress(n, total)
            fout.flush()
            os.fsync(fout.fileno())
        got = h.hexdigest()
        if expected is not None and got != expected:
            raise ChecksumError(url, expected, got)
        os.replace(tmp, dest)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    return DownloadRecord(
        url=url, path=str(dest), sha256=got, bytes=n, attempts=1, retrieved_at=_utc_now()
    )


def _fetch_json_record(
    url: str,
    *,
    retries: int = 4,
    backoff: float = 1.0,
    timeout: float = 60,
    sleep: Callable[[float], None] = time.sleep,
    opener: urllib.request.OpenerDirector | None = None,
    headers: Mapping[str, str] | None = None,
    offline_hint: str | None = None,
) -> tuple[Any, bytes, int]:
    """Like :func:`fetch_json` but also returns the number of attempts."""
    url = os.fspath(url)
    hdrs = {"Accept": "application/json"}
    if headers:
        hdrs.update(headers)

    if _is_local(url):
        src = _local_path(url)
        if not src.is_file():
            raise DownloadError(
                _with_hint(f"local source {url} does not exist or is not a file", offline_hint),
                url=url,
                attempts=1,
            )
        raw = src.read_bytes()
        try:
            return json.loads(raw.decode("utf-8")), raw, 1
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise DownloadError(
                f"local source {url} is not valid JSON: {exc}", url=url, attempts=1
            ) from exc

    def attempt(n: int):
        parts: list[bytes] = []
        with _open(url, headers=hdrs, timeout=timeout, opener=opener) as resp:
            _read_stream(resp, parts.append, None, url)
        raw = b"".join(parts)
        try:
            return json.loads(raw.decode("utf-8")), raw, n
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            # A body cut short without a Content-Length (chunked, proxy) or a
            # maintenance HTML page served with 200 lands here; retry both.
            snippet = " ".join(raw[:120].decode("utf-8", errors="replace").split())
            raise _Retryable(
                f"response is not valid JSON ({exc}); {len(raw)} bytes, starting {snippet!r}"
            ) from exc

    return _retry_loop(
        url, attempt, retries=retries, backoff=backoff, sleep=sleep, offline_hint=offline_hint
    )


def fetch_json(
    url: str,
    *,
    retries: int = 4,
    backoff: float = 1.0,
    timeout: float = 60,
    sleep: Callable[[float], None] = time.sleep,
    opener: urllib.request.OpenerDirector | None = None,
    headers: Mapping[str, str] | None = None,
    offline_hint: str | None = None,
) -> tuple[Any, bytes]:
    """Fetch and parse a JSON document, with the retry policy of :func:`download`.

    A body that is not valid UTF-8 JSON (typically a truncated transfer) is
    treated like any other transient failure and retried.

    Parameters
    ----------
    url : str
        ``http(s)://`` or ``file://`` URL, or a local path.
    retries, backoff, timeout, sleep, opener, headers, offline_hint
        As for :func:`download`. ``Accept: application/json`` is sent unless
        ``headers`` overrides it.

    Returns
    -------
    parsed : object
        The decoded JSON value.
    raw : bytes
        The exact bytes received, so the caller can keep (and checksum) the
        raw download.

    Raises
    ------
    DownloadError
        As for :func:`download`, including when the body never parsed.
    """
    parsed, raw, _ = _fetch_json_record(
        url,
        retries=retries,
        backoff=backoff,
        timeout=timeout,
        sleep=sleep,
        opener=opener,
        headers=headers,
        offline_hint=offline_hint,
    )
    return parsed, raw
