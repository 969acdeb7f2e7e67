"""Every bundled file in resources/ matches its sha256 sidecar and the README."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

RESOURCES = Path(__file__).resolve().parent.parent / "resources"
# Documentation and checksum files describe the data; they are not data.
NOT_DATA = {".md", ".sha256"}


def _data_files() -> list[Path]:
    return sorted(p for p in RESOURCES.rglob("*") if p.is_file() and p.suffix not in NOT_DATA)


def _sidecars() -> list[Path]:
    return sorted(RESOURCES.rglob("*.sha256"))


def _parse_sidecar(path: Path) -> dict[str, str]:
    """Parse ``sha256sum`` output: ``<hex>  <name>`` (``*<name>`` in binary mode)."""
    entries = {}
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        digest, name = line.split(maxsplit=1)
        entries[name.lstrip("*")] = digest.lower()
    return entries


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_resources_are_bundled():
    assert (RESOURCES / "kidney" / "kidney.csv").is_file()
    assert (RESOURCES / "kidney" / "LICENSE.md").is_file()


@pytest.mark.parametrize("data", _data_files(), ids=lambda p: str(p.relative_to(RESOURCES)))
def test_every_bundled_file_has_a_matching_sidecar(data):
    sidecar = data.with_name(data.name + ".sha256")
    assert sidecar.is_file(), f"{data} has no {sidecar.name}; create it with sha256sum"
    entries = _parse_sidecar(sidecar)
    assert data.name in entries, f"{sidecar} does not list {data.name}"
    assert _sha256(data) == entries[data.name], f"{data} does not match {sidecar}"


@pytest.mark.parametrize("sidecar", _sidecars(), ids=lambda p: str(p.relative_to(RESOURCES)))
def test_every_sidecar_points_at_a_file(sidecar):
    for name, digest in _parse_sidecar(sidecar).items():
        target = sidecar.parent / name
        assert target.is_file(), f"{sidecar} lists {name}, which is missing"
        assert _sha256(target) == digest


def test_readme_lists_every_bundled_file_with_its_sha256():
    readme = (RESOURCES / "README.md").read_text(encoding="utf-8")
    for data in _data_files():
        rel = data.relative_to(RESOURCES).as_posix()
        assert rel in readme, f"resources/README.md does not list {rel}"
        assert _sha256(data) in readme, f"resources/README.md has a stale sha256 for {rel}"


def test_kidney_matches_the_shared_export_checksum():
    # sha256 published with the R export (Debian 12, survival 3.5-3): the copy
    # must be byte-identical, line endings included.
    expected = "ea7019ede18cac330d4205147b66939890559a81292d4f1ba904f5b3cd5a15eb"
    assert _sha256(RESOURCES / "kidney" / "kidney.csv") == expected
