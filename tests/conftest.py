"""Shared fixtures: a fresh copy of the embedded demo per test (written once per session)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from preprocess.demo import write_demo
from preprocess.registry.config import settings_from_dict
from preprocess.registry.loader import EXTRA_REGISTRY_ENV

REPO = Path(__file__).resolve().parents[1]


def _extra_entries(name: str) -> list:
    """The entries of `name`.yaml of each MEDHEB_EXTRA_REGISTRY folder, read as plain YAML, not by the loader."""
    found = []
    for folder in filter(None, os.environ.get(EXTRA_REGISTRY_ENV, "").split(os.pathsep)):
        path = Path(folder) / f"{name}.yaml"
        if path.exists():
            found.extend(yaml.safe_load(path.read_text(encoding="utf-8")).get(name) or [])
    return found


def added_subsets() -> dict[str, list[str]]:
    """group/folder -> task files of the subsets an extra registry folder adds (none in a plain run; the
    suite's run with tests/data/new_subset has one). Tests that hold the registry to the benchmark's reference
    files allow these, and only these, beyond the reference."""
    return {f"{s['group']}/{s['folder']}": [t["file"] for t in s["tasks"]] for s in _extra_entries("subsets")}


def added_sources() -> set[str]:
    """The source ids an extra registry folder adds."""
    return set(_extra_entries("sources"))


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory) -> Path:
    return write_demo(tmp_path_factory.mktemp("template") / "demo")


@pytest.fixture
def demo(tmp_path, demo_template) -> Path:
    """A private copy of the demo: raw/, DATA_BASEDIR/, registry-overrides.yaml."""
    target = tmp_path / "demo"
    shutil.copytree(demo_template, target, symlinks=True)
    return target


def demo_values(demo: Path, **overrides) -> dict:
    """Config values that point at a demo copy (its raw root, DATA_BASEDIR and registry overrides)."""
    values = {
        "raw_root": str(demo / "raw"),
        "data_basedir": str(demo / "DATA_BASEDIR"),
        "registry_overrides": str(demo / "registry-overrides.yaml"),
        "subsets": "all",
    }
    values.update(overrides)
    return values


def demo_settings(demo: Path, **overrides):
    return settings_from_dict(demo_values(demo, **overrides))


def demo_config_file(demo: Path, path: Path, **overrides) -> Path:
    """Write the demo's config values (JSON is YAML) to `path` for the CLI's --config."""
    path.write_text(json.dumps(demo_values(demo, **overrides)))
    return path


@pytest.fixture
def settings(demo):
    return demo_settings(demo)


@pytest.fixture
def outside_checkout(tmp_path, monkeypatch):
    """Run in a folder without the checkout's config.yaml (which builds the demo), as a user's own would."""
    monkeypatch.chdir(tmp_path)


def without_checksums(demo: Path, source: str) -> None:
    """After a test rewrites a raw file, the demo's recorded MD5s of that source no longer hold."""
    path = demo / "registry-overrides.yaml"
    overrides = yaml.safe_load(path.read_text())
    for spec in overrides["sources"][source]["files"]:
        spec.pop("md5", None)
    path.write_text(yaml.safe_dump(overrides))
