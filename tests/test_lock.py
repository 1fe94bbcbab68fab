"""The lock file is the environment the tests and the demo run in: every dependency of pyproject.toml (and of
its dev extra) is pinned there to one version inside the declared range, with hashes, and `make` installs it."""

from __future__ import annotations

import re
import tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from conftest import REPO

PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)")


def _locked() -> dict[str, tuple[str, int]]:
    """name -> (version, number of hashes) of every pin in requirements.lock."""
    pins: dict[str, tuple[str, int]] = {}
    name = None
    for line in (REPO / "requirements.lock").read_text(encoding="utf-8").splitlines():
        match = PIN.match(line)
        if match:
            name = canonicalize_name(match.group(1))
            pins[name] = (match.group(2), 0)
        elif name and line.strip().startswith("--hash=sha256:"):
            version, hashes = pins[name]
            pins[name] = (version, hashes + 1)
    return pins


def test_every_declared_dependency_is_pinned_inside_its_range_with_hashes():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = [Requirement(text) for text in project["dependencies"] + project["optional-dependencies"]["dev"]]
    locked = _locked()
    for requirement in declared:
        name = canonicalize_name(requirement.name)
        assert name in locked, f"{requirement.name} is declared in pyproject.toml but not in requirements.lock"
        version, hashes = locked[name]
        assert requirement.specifier.contains(version, prereleases=True), f"{name}=={version} is outside {requirement}"
        assert hashes > 0, f"{name} has no hash in requirements.lock"
    assert all(hashes > 0 for _, hashes in locked.values())


def test_the_makefile_installs_the_lock_and_the_package_without_resolving_again():
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert "--require-hashes -r requirements.lock" in makefile
    assert "--no-deps -e ." in makefile
