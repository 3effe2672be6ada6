"""requirements.lock, which the image installs from, keeps up with pyproject.toml: each
dependency pinned to a version its range admits, each pin with the hashes of its files."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
REGENERATE = "regenerate requirements.lock (docs/operations.md#the-image)"


def pins() -> dict[str, tuple[str, int]]:
    """Each locked package: (version, how many hashes)."""
    text = (ROOT / "requirements.lock").read_text()
    found: dict[str, tuple[str, int]] = {}
    for block in re.split(r"\n(?=[A-Za-z0-9])", text):
        pin = re.match(r"([A-Za-z0-9._-]+)==(\S+)", block)
        if pin:
            found[canonicalize_name(pin.group(1))] = (pin.group(2), block.count("--hash=sha256:"))
    return found


def test_every_dependency_is_locked_within_its_range_with_hashes() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    locked = pins()
    assert locked and all(hashes for _, hashes in locked.values()), REGENERATE
    for line in project["dependencies"]:
        requirement = Requirement(line)
        name = canonicalize_name(requirement.name)
        assert name in locked, f"{name} is not in requirements.lock: {REGENERATE}"
        version, _ = locked[name]
        assert requirement.specifier.contains(version), f"{name}=={version}: {REGENERATE}"


def test_the_dockerfile_installs_the_lock_and_nothing_else() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    installs = re.findall(r"pip install ([^\n\\&]+)", dockerfile)
    assert installs == ["--no-deps --require-hashes -r requirements.lock "], installs
    assert "npm ci" in dockerfile and "npm install" not in dockerfile
