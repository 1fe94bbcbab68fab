"""The tests' own layout (docs/tests.md, issue 40): every test file in a layer folder, none over 600 lines, and
each file name used once (pytest's default import mode imports a test file by its name alone)."""

from __future__ import annotations

import collections

from conftest import REPO

TESTS = REPO / "tests"
LAYERS = ("unit", "cli", "datasets", "workflow", "project")
UNIT_PACKAGES = (
    "formats",
    "registry",
    "release",
    "volumes",
    "convert",
    "rawdata",
    "verify",
    "readiness",
    "sizing",
    "reports",
    "demo",
)


def _test_files() -> list:
    return sorted(TESTS.rglob("test_*.py"))


def test_every_test_file_sits_in_a_layer_folder():
    misplaced = []
    for path in _test_files():
        parts = path.relative_to(TESTS).parts
        if parts[0] == "unit":
            placed = len(parts) == 3 and parts[1] in UNIT_PACKAGES
        else:
            placed = len(parts) == 2 and parts[0] in LAYERS
        if not placed:
            misplaced.append(str(path.relative_to(REPO)))
    assert misplaced == [], f"move these into tests/{{{','.join(LAYERS)}}}/ (unit: unit/<package>/): {misplaced}"
    assert len(_test_files()) > 50  # the walk found the suite


def test_no_test_file_is_over_600_lines():
    long = {str(p.relative_to(REPO)): n for p in _test_files() if (n := len(p.read_text().splitlines())) > 600}
    assert long == {}, f"split these by subject: {long}"


def test_each_test_file_name_is_used_once():
    names = collections.Counter(p.name for p in _test_files())
    assert [name for name, count in names.items() if count > 1] == []
