"""The edges a newcomer hit (issue 29), each through the command a user types: commands given their own tree,
clear failures for missing paths and config mistakes, file modes under a umask, lock files that go with their
job, and the package metadata. (The benchmark scripts from a fresh checkout: tests/project/test_benchmark_scripts.py;
the summaries of a real build of the demo: tests/workflow/test_demo_build_summaries.py.)"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from conftest import REPO, demo_values

ENV = {**os.environ, "PYTHONPATH": str(REPO)}
SNAKEMAKE = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile")]


def _cli(*args: str, cwd: Path, umask: int | None = None) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "preprocess", *args]
    set_umask = None if umask is None else (lambda: os.umask(umask))
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=ENV, preexec_fn=set_umask)


def _last_line(text: str) -> str:
    return text.strip().splitlines()[-1]


def _checkout_without_demo(tmp_path: Path) -> Path:
    """A folder like a fresh checkout: the shipped config.yaml (which builds the demo), no demo written."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    shutil.copy(REPO / "config.yaml", checkout / "config.yaml")
    return checkout


def test_validate_of_an_own_tree_inside_a_checkout_does_not_need_the_demo(tmp_path, demo):
    checkout = _checkout_without_demo(tmp_path)
    tree = demo / "DATA_BASEDIR"  # task files only: nothing built yet
    done = _cli("validate", str(tree), cwd=checkout)
    assert "is not written yet" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stderr  # the text subsets validate; the others are listed as not built
    assert "not built (image root absent): " in done.stdout
    assert re.fullmatch(r"valid: (\d+) of \1 task files resolve every path", _last_line(done.stdout))
    assert sorted(p.name for p in checkout.iterdir()) == ["config.yaml"]  # no results/ written here
    done = _cli("status", str(tree), cwd=checkout)
    assert "is not written yet" not in done.stderr and done.returncode == 0, done.stderr
    assert sorted(p.name for p in checkout.iterdir()) == ["config.yaml"]


def test_links_into_the_raw_root_name_the_missing_option_and_nothing_is_written_to_the_cwd(tmp_path, demo):
    config = tmp_path / "build.yaml"
    config.write_text(yaml.safe_dump(demo_values(demo)))
    built = _cli("convert", "MIMIC-CXR-T", "--config", str(config), "--results", str(tmp_path / "r"), cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    elsewhere = tmp_path / "elsewhere"  # outside any checkout: no config.yaml, so no raw root
    elsewhere.mkdir()
    tree = str(demo / "DATA_BASEDIR")
    done = _cli("status", tree, cwd=elsewhere)
    row = next(line for line in done.stdout.splitlines() if line.startswith("2D_Task/MIMIC-CXR-T "))
    assert "failed" in row and "give --raw-root DIR (or a --config with raw_root)" in row
    done = _cli("validate", tree, "--subset", "MIMIC-CXR-T", cwd=elsewhere)
    assert done.returncode == 1
    assert "unsafe" in done.stdout
    assert "point into the raw root: give it with --raw-root DIR, or a --config that sets raw_root" in done.stdout
    assert _last_line(done.stdout).startswith("NOT valid: 3 of 3 task files have paths that do not resolve")
    done = _cli("validate", tree, "--subset", "MIMIC-CXR-T", "--raw-root", str(demo / "raw"), cwd=elsewhere)
    assert done.returncode == 0 and _last_line(done.stdout) == "valid: 3 of 3 task files resolve every path"
    assert list(elsewhere.iterdir()) == []  # read-only commands: no ./results/cache


def test_check_of_a_missing_data_basedir_fails(tmp_path, demo):
    done = _cli("check", "--raw-root", str(demo / "raw"), "--data-basedir", "NO_SUCH_DIR", cwd=tmp_path)
    assert done.returncode == 2
    assert f"DATA_BASEDIR {tmp_path / 'NO_SUCH_DIR'} does not exist" in done.stderr


def test_slice_of_a_missing_file_says_it_does_not_exist(tmp_path):
    done = _cli("slice", "NO_SUCH_FILE.nii.gz", "out", cwd=tmp_path)
    assert done.returncode == 2
    assert (
        done.stderr
        == "error: NO_SUCH_FILE.nii.gz does not exist: give the path of a .nii, .nii.gz, .nrrd or .npy file\n"
    )


def test_list_and_info_options_have_help_text(tmp_path):
    listed = _cli("list", "--help", cwd=tmp_path)
    assert listed.returncode == 0 and re.search(r"--json\s+one object per subset", listed.stdout)
    info = _cli("info", "--help", cwd=tmp_path)
    assert info.returncode == 0 and re.search(r"name\s+a subset \(e\.g\. 2D_Task/APTOS", info.stdout)
    assert re.search(r"--json\s+the registry's record of it as JSON", info.stdout)


@pytest.mark.workflow
@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("on_bad_input=maybe", "at on_bad_input: 'maybe' is not one of ['fail', 'skip']"),
        ("subset=all", "unknown key in the configuration: 'subset' (did you mean subsets?)"),
    ],
)
def test_a_config_mistake_in_snakemake_is_its_message_alone(tmp_path, setting, message):
    shutil.copy(REPO / "config.yaml", tmp_path / "config.yaml")
    done = subprocess.run(
        [*SNAKEMAKE, "--directory", str(tmp_path), "-n", "--config", setting],
        capture_output=True,
        text=True,
    )
    shown = done.stdout + done.stderr  # Snakemake logs to stdout when it is not a terminal
    assert done.returncode != 0
    assert message in shown
    assert "Failed validating" not in shown and "description" not in shown  # not the schema
    # no file, line or traceback line of the Snakefile: they say nothing about the user's config
    assert 'File "' not in shown and "Snakefile" not in shown and "WorkflowError" not in shown, shown
    snakemakes_own = ("Config file config.yaml is extended", "Using workflow specific profile")  # its info lines
    ours = [line for line in shown.splitlines() if not line.startswith(snakemakes_own)]
    assert ours[0].startswith("Error: ") and len(ours) <= 2, shown


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600)])
def test_written_files_follow_the_umask(tmp_path, demo, umask, mode):
    config = tmp_path / "build.yaml"
    config.write_text(yaml.safe_dump(demo_values(demo)))
    results = tmp_path / "r"
    done = _cli("convert", "BloodMNIST", "--config", str(config), "--results", str(results), cwd=tmp_path, umask=umask)
    assert done.returncode == 0, done.stderr
    image = next((demo / "DATA_BASEDIR" / "2D_Images" / "BloodMNIST").rglob("*.png"))  # encoded here, not linked
    manifest = next(results.rglob("*.tsv"))
    done = _cli("eval-config", str(demo / "DATA_BASEDIR"), "--out", str(tmp_path / "eval"), cwd=tmp_path, umask=umask)
    assert done.returncode == 0, done.stderr
    written = [image, manifest, *sorted((tmp_path / "eval").iterdir())]
    assert {path.name: oct(path.stat().st_mode & 0o777) for path in written} == {
        path.name: oct(mode) for path in written
    }


def test_a_finished_job_leaves_no_lock_and_a_held_lock_still_refuses_a_second_writer(tmp_path, demo):
    config = tmp_path / "build.yaml"
    config.write_text(yaml.safe_dump(demo_values(demo)))
    locks = demo / "DATA_BASEDIR" / ".medheb-locks"
    done = _cli("convert", "APTOS", "--config", str(config), "--results", str(tmp_path / "r"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert not locks.exists()
    locks.mkdir()
    lock = locks / "2D_Task__APTOS__image_folder.0-of-1.lock"
    with open(lock, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # a run building the same shard
        done = _cli("convert", "APTOS", "--config", str(config), "--results", str(tmp_path / "r"), cwd=tmp_path)
        assert done.returncode == 2
        assert "another run is building 2D_Task/APTOS/image_folder" in done.stderr
        assert lock.exists()  # the refused run leaves the other run's lock alone


def test_the_package_metadata_builds_without_a_licence_warning(tmp_path):
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["license"] == "MIT"  # the SPDX string of PEP 639
    assert "setuptools>=77" in project["build-system"]["requires"][0]  # the first to read it
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, tmp_path / name)
    shutil.copytree(REPO / "preprocess", tmp_path / "preprocess", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "meta").mkdir()
    snippet = "from setuptools import build_meta; print(build_meta.prepare_metadata_for_build_wheel('meta'))"
    done = subprocess.run([sys.executable, "-W", "always", "-c", snippet], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "License-Expression: MIT" in next((tmp_path / "meta").glob("*/METADATA")).read_text()
    assert "Warning" not in done.stderr, done.stderr
