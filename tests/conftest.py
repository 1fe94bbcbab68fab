"""Shared fixtures: a fresh copy of the embedded demo per test (written once per session), and the demo built
once per session by the workflow for the tests that only read a complete build."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from preprocess.demo import write_demo
from preprocess.registry.config import settings_from_dict
from preprocess.registry.loader import EXTRA_REGISTRY_ENV, load_registry

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"  # the fixtures copied from the reference, and the added subset
# The subsets the demo leaves unbuilt on purpose, with the reason its build gives: the MedMNIST flags it writes no
# npz for, and USData, whose images only their authors give out. Written out by hand: the dataset folders'
# DEMO_LEFT_OUT declarations must agree (tests/datasets/test_demo_release_images.py).
DEMO_LEFT_OUT = {
    "2D_Task/DermaMNIST": "raw incomplete",
    "2D_Task/OCTMNIST": "raw incomplete",
    "2D_Task/OrganCMNIST": "raw incomplete",
    "2D_Task/OrganSMNIST": "raw incomplete",
    "2D_Task/PathMNIST": "raw incomplete",
    "2D_Task/TissueMNIST": "raw incomplete",
    "2D_Task/USData": "raw missing",
    "3D_Task/NoduleMNIST": "raw incomplete",
    "3D_Task/SynapseMNIST": "raw incomplete",
}


def pytest_collection_modifyitems(items):
    """A test that reads the demo built by the workflow (the built_demo fixture, directly or through another
    fixture) is a workflow test, like those marked by hand that run Snakemake themselves: `make test-fast`
    leaves them all out.

    On a pytest-xdist worker, the tests that share a fixture their file makes for the module or the session (a
    full-size raw root, real-size fakes, a release demo: 10-20 s each to make) come first: `make test-fast`
    deals out whole files (`--dist loadfile`, in this order), so each such fixture is made once, on one worker,
    and the longest files start first instead of ending the run (docs/tests.md)."""
    for item in items:
        if "built_demo" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.workflow)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items.sort(key=lambda item: not _shares_a_fixture_of_its_file(item))  # stable: the rest keep their order


def _shares_a_fixture_of_its_file(item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    module = item.nodeid.split("::")[0]
    definitions = info.name2fixturedefs.values() if info else ()
    return any(d.scope in ("module", "session") and d.baseid == module for defs in definitions for d in defs)


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


@dataclass(frozen=True)
class BuiltDemo:
    workdir: Path  # config.yaml (the shipped one), demo/, results/, logs/
    build: subprocess.CompletedProcess  # what `snakemake --cores 2` printed
    raw_before: dict  # path -> (size, mtime_ns) of everything under the raw root, before the build
    raw_after: dict
    raw_protection: str  # how the raw root was kept read-only during the build


def raw_state(raw: Path) -> dict:
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in raw.rglob("*")}


@pytest.fixture(scope="session")
def built_demo(tmp_path_factory, demo_template) -> BuiltDemo:
    """The demo built by the workflow as `make demo` builds it (the shipped config.yaml), with its raw root
    read-only. Tests that only read a complete build share this one; a test that changes a build makes its own."""
    workdir = tmp_path_factory.mktemp("built")
    shutil.copy(REPO / "config.yaml", workdir / "config.yaml")
    shutil.copytree(demo_template, workdir / "demo", symlinks=True)
    raw = workdir / "demo" / "raw"
    before = raw_state(raw)
    subprocess.run(["chmod", "-R", "a-w", str(raw)], check=True)
    # chmod does not stop root: where possible, also mount the raw root read-only in a private namespace.
    mount = f'mount --bind {raw} {raw} && mount -o remount,ro,bind {raw} && exec "$@"'
    wrapper = ["unshare", "-m", "sh", "-c", mount, "sh"]
    can_mount = subprocess.run([*wrapper, "true"], capture_output=True).returncode == 0
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(workdir)]
    try:
        done = subprocess.run(
            [*(wrapper if can_mount else []), *command, "--cores", "2"], capture_output=True, text=True
        )
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(raw)], check=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    protection = "mounted read-only" if can_mount else "chmod a-w (no mount namespace here)"
    return BuiltDemo(workdir, done, before, raw_state(raw), protection)


def demo_with_raw_of(target: Path, demo_template: Path, sources: set[str]) -> Path:
    """A copy of the demo whose raw root holds only the downloads of `sources`: the workflow plans every other
    subset "raw missing" and builds a few subsets in seconds, for a test that changes a build."""
    shutil.copytree(demo_template, target, symlinks=True)
    registry = load_registry()
    keep = {registry.sources[source].raw_dir for source in sources}
    for folder in (target / "raw").iterdir():
        if folder.name not in keep:
            shutil.rmtree(folder)
    return target


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


def job_pids(workdir: Path) -> list[int]:
    """The running jobs (rule scripts) of a Snakemake run in `workdir`."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().decode(errors="replace")
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if "step.py" in command and cwd == str(workdir):
            pids.append(int(entry.name))
    return pids


@contextlib.contextmanager
def ctrl_c_as_from_a_terminal():
    """A child started now takes Ctrl-C as one started from a terminal does. A shell's background job (the
    suite run as `nohup make test &`) starts with SIGINT ignored, and exec keeps an ignored signal ignored:
    Python would then never raise KeyboardInterrupt in the job. A Python-level handler here is reset by exec."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def report_front_page(report_html: str) -> str:
    """The report's first page: its workflow description, a JSON string in the report's script."""
    marker = "var workflow_desc = "
    assert marker in report_html, "no workflow description in the report"
    return json.JSONDecoder().raw_decode(report_html, report_html.index(marker) + len(marker))[0]


def front_page_counts(front: str) -> dict[str, int]:
    """The counts the report's first page shows (data-count attributes)."""
    return {key: int(value) for key, value in re.findall(r'data-count="(\w+)">(\d+)<', front)}


@pytest.fixture
def registry_copy(tmp_path, monkeypatch):
    """A copy of the registry's YAML files (registry/kinds.yaml, registry/train.yaml and the dataset folders) that
    the loader reads instead; edit(name, change) rewrites one, named as in the package: "registry/kinds.yaml",
    "datasets/ct_rate/subsets.yaml"."""
    from preprocess.registry import loader as registry_module

    package = tmp_path / "preprocess"
    (package / "registry").mkdir(parents=True)
    for name in ("kinds.yaml", "train.yaml"):
        shutil.copy(registry_module.REGISTRY_DIR / name, package / "registry" / name)
    shutil.copytree(registry_module.DATASETS_DIR, package / "datasets")
    monkeypatch.setattr(registry_module, "REGISTRY_DIR", package / "registry")
    monkeypatch.setattr(registry_module, "DATASETS_DIR", package / "datasets")
    registry_module.load_kinds.cache_clear()

    def edit(name: str, change) -> None:
        document = yaml.safe_load((package / name).read_text(encoding="utf-8"))
        change(document)
        (package / name).write_text(yaml.safe_dump(document))

    yield edit
    registry_module.load_kinds.cache_clear()  # the next test reads the shipped kinds.yaml again
