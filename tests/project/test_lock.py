"""The lock file is the environment the tests and the demo run in: every dependency of pyproject.toml (and of
its dev extra) is pinned there to one version inside the declared range, with hashes, and `make` installs it.
The conda environment of the workflow's jobs (workflow/envs/preprocess.yaml) and the users' one at the top
(environment.yml) hold the same versions."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from conftest import REPO
from preprocess.demo import write_demo

PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)")
CONDA_ENV = REPO / "workflow" / "envs" / "preprocess.yaml"
CONDA_PIN = re.compile(r"^([a-z0-9][a-z0-9._-]*)=([^=\s*<>!]+)(?:=(\S+))?$")  # name=version[=build]
PIP_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^=\s*<>!;@]+)$")
# The conda-forge name of each runtime dependency whose PyPI name differs there (any other is the same on both),
# read from the package name in its conda-forge feedstock's recipe.
CONDA_FORGE_NAMES = {"isal": "python-isal", "opencv-python-headless": "py-opencv"}
# Run where Snakemake is started, never imported by a job: not in the jobs' environment.
NOT_IN_JOBS = {"snakemake", "snakemake-executor-plugin-slurm"}


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


# --- the conda environment of the jobs ---------------------------------------------------------------------


def _conda_env(path: Path = CONDA_ENV) -> tuple[list[str], dict[str, str], dict[str, str], list[str]]:
    """(channels, conda-forge name -> pinned version, PyPI name -> pinned version, pip's other lines) of a conda
    environment file; every entry but python and pip must be an exact pin."""
    environment = yaml.safe_load(path.read_text(encoding="utf-8"))
    conda: dict[str, str] = {}
    pip: dict[str, str] = {}
    other: list[str] = []
    for entry in environment["dependencies"]:
        if isinstance(entry, dict):
            assert list(entry) == ["pip"], f"unexpected subsection {list(entry)}"
            for line in entry["pip"]:
                match = PIP_PIN.match(line)
                if match:
                    pip[canonicalize_name(match.group(1))] = match.group(2)
                else:
                    other.append(line)
        elif entry.startswith("python=") or entry == "pip":
            conda[entry.split("=")[0]] = entry.partition("=")[2]
        else:
            match = CONDA_PIN.match(entry)
            assert match, f"{entry!r} is not an exact conda pin `name=version`"
            conda[match.group(1)] = match.group(2)
    return environment["channels"], conda, pip, other


def _runtime() -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return {canonicalize_name(Requirement(text).name) for text in project["dependencies"]}


def _pinned_at_the_lock(path: Path) -> tuple[dict[str, str], list[str]]:
    """Every pin of the environment file `path` (PyPI name -> version) after checking its channels, its Python
    and each pin against requirements.lock; and pip's lines that are not pins."""
    locked = _locked()
    channels, conda, pip, other = _conda_env(path)
    assert channels == ["conda-forge", "nodefaults"]
    lock_python = re.search(r"--python-version (\S+)", (REPO / "Makefile").read_text(encoding="utf-8")).group(1)
    assert conda.pop("python") == f"{lock_python}.*", "the environment's Python is not the one the lock is for"
    assert conda.pop("pip") == "", "pip installs the pip: subsection; its own version is not part of the lock"
    pypi_names = {conda_name: name for name, conda_name in CONDA_FORGE_NAMES.items()}
    from_conda = {canonicalize_name(pypi_names.get(name, name)): version for name, version in conda.items()}
    assert not from_conda.keys() & pip.keys(), "a package is both in conda's list and in pip's"
    pinned = from_conda | pip
    for name, version in sorted(pinned.items()):
        assert name in locked, f"{path.name}: {name} is in the environment but not in requirements.lock"
        assert version == locked[name][0], f"{path.name}: {name} is {version}; requirements.lock has {locked[name][0]}"
    return pinned, other


def test_the_conda_environment_holds_the_lock_versions_of_every_runtime_dependency():
    pinned, other = _pinned_at_the_lock(CONDA_ENV)
    for name in sorted(_runtime() - NOT_IN_JOBS):
        where = f"{CONDA_FORGE_NAMES.get(name, name)} (conda-forge) or {name} (pip:)"
        assert name in pinned, f"{name} is a runtime dependency in pyproject.toml but the environment lacks it: {where}"
    assert not pinned.keys() & NOT_IN_JOBS, "Snakemake runs outside the jobs' environment"
    # Snakemake copies the file elsewhere to create the environment, so nothing in it may name this checkout:
    # only exact pins, no `-e .`, path or URL, and the package itself is not among them
    assert other == []
    assert "medheb-preprocess" not in pinned


def test_the_users_conda_environment_at_the_top_holds_the_lock_versions_snakemake_and_the_package():
    """environment.yml (the design card's top level, `conda env create -f environment.yml`): every runtime
    dependency at the lock's version, Snakemake and its SLURM plugin among them, and the package from the checkout;
    the jobs' file is the same with those three left out."""
    user = REPO / "environment.yml"
    pinned, other = _pinned_at_the_lock(user)
    assert sorted(set(_runtime()) - pinned.keys()) == [], "runtime dependencies missing from environment.yml"
    assert other == ["-e ."], "the package itself, editable from the checkout that environment.yml is at the top of"
    assert yaml.safe_load(user.read_text(encoding="utf-8"))["name"] == "medheb-preprocess"
    _, user_conda, user_pip, _ = _conda_env(user)
    _, jobs_conda, jobs_pip, _ = _conda_env(CONDA_ENV)
    assert user_conda == jobs_conda, "the two files take a package from conda-forge alike"
    assert {name: version for name, version in user_pip.items() if name not in NOT_IN_JOBS} == jobs_pip
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "conda env create -f environment.yml" in readme


def test_every_rule_runs_in_that_environment():
    count = 0
    for rules in sorted((REPO / "workflow" / "rules").glob("*.smk")):
        text = rules.read_text(encoding="utf-8")
        names = re.findall(r"^(?:rule|checkpoint) (\w+):", text, re.MULTILINE)
        envs = re.findall(r"^    conda:\n        \"(.+)\",?$", text, re.MULTILINE)
        assert len(envs) == len(names), f"{rules.name}: {len(names)} rules, {len(envs)} conda directives"
        assert all((rules.parent / env).resolve() == CONDA_ENV for env in envs), f"{rules.name}: {envs}"
        count += len(names)
    assert count > 0


@pytest.mark.skipif(
    os.environ.get("MEDHEB_CONDA") != "1" or shutil.which("conda") is None,
    reason="needs conda and the conda-forge channel: set MEDHEB_CONDA=1 (make conda-test)",
)
def test_the_demo_built_with_use_conda_holds_the_committed_pixels(tmp_path):
    """`snakemake --use-conda --cores 2` on the demo: every job in the environment, the same pixels as the fixture
    (tests/data/demo-fingerprints.tsv, written by a build in the lock's environment)."""
    workdir = tmp_path / "work"
    workdir.mkdir()
    (workdir / "config.yaml").write_text((REPO / "config.yaml").read_text(encoding="utf-8"))
    write_demo(workdir / "demo")  # as `make demo` does before it runs Snakemake
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(workdir)]
    prefix = tmp_path / "conda"
    done = subprocess.run(
        [*command, "--cores", "2", "--use-conda", "--conda-prefix", str(prefix)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    created = sorted(prefix.glob("*.yaml"))  # Snakemake keeps a copy of the file beside each environment
    assert [path.read_bytes() for path in created] == [CONDA_ENV.read_bytes()]
    fixture = REPO / "tests" / "data" / "demo-fingerprints.tsv"
    compared = subprocess.run(
        [sys.executable, "-m", "preprocess", "attest", "--compare", str(fixture), "results/fingerprints.tsv"],
        cwd=workdir, capture_output=True, text=True,
    )  # fmt: skip
    assert compared.returncode == 0, compared.stdout[-3000:] + compared.stderr[-2000:]
    assert "the trees hold the same pixels" in compared.stdout


def test_the_reference_tools_take_torch_from_the_cpu_wheel_index():
    """tests/requirements-reference.txt (make .venv/.reference): PyPI's Linux torch is the CUDA build (several GB);
    PyTorch's CPU index is added to PyPI, not put in its place (the other packages are PyPI's)."""
    lines = [line.strip() for line in (REPO / "tests" / "requirements-reference.txt").read_text().splitlines()]
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in lines
    assert not any(line.startswith(("--index-url", "-i ", "--no-index")) for line in lines)
    assert any(re.fullmatch(r"torch==[0-9.]+", line) for line in lines)  # matches the index's `+cpu` build
