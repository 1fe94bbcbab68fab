"""Command-line numbers and names out of bounds, and a huge file in an extra registry folder (issue 53, cases
8, 9 and 14), through the command a user types: `--cores 0`, `--workers -2`, `--window 40 nan`, a subset name
of a million characters. Each ends with exit 2 and a short message naming the option or quoting the name by its
start; none with a traceback or "unexpected". The demo's fingerprint of an extra folder reads none of its files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, demo_values
from preprocess.registry.loader import EXTRA_REGISTRY_ENV

BASE_ENV = {k: v for k, v in os.environ.items() if k != EXTRA_REGISTRY_ENV} | {"PYTHONPATH": str(REPO)}


def _cli(*args, cwd: Path) -> subprocess.CompletedProcess:
    """The CLI in `cwd` (no config.yaml there), without extra registry folders."""
    command = [sys.executable, "-m", "preprocess", *map(str, args)]
    return subprocess.run(command, cwd=cwd, env=BASE_ENV, capture_output=True, text=True, timeout=300)


def _refused(done: subprocess.CompletedProcess) -> str:
    """The one error line of a command that stopped with exit 2 on purpose."""
    assert done.returncode == 2, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    assert "Traceback" not in done.stderr and "unexpected" not in done.stderr, done.stderr[-2000:]
    assert done.stdout == "", done.stdout[-2000:]  # stopped before printing anything
    return done.stderr


def _folder(tmp_path: Path, name: str, text: str) -> Path:
    folder = tmp_path / "extra"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    return folder


# --- case 8: the demo's fingerprint of an extra folder ------------------------------------------------------


def test_the_demo_fingerprint_of_an_extra_folder_reads_none_of_its_files(tmp_path, monkeypatch):
    from preprocess import demo

    folder = _folder(tmp_path, "sources.yaml", "sources: {}\n")
    big = folder / "demo" / "raw" / "huge.bin"
    big.parent.mkdir(parents=True)
    with big.open("wb") as handle:
        handle.truncate(3 << 30)  # 3 GiB, sparse: no disk taken
    monkeypatch.setenv(EXTRA_REGISTRY_ENV, str(folder))
    real_read_bytes = Path.read_bytes

    def read_bytes(path):
        assert folder not in path.parents, f"{path} was read to fingerprint it"
        return real_read_bytes(path)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    first = demo.fingerprint()
    assert demo.fingerprint() == first
    os.utime(big, ns=(1, 1))
    touched = demo.fingerprint()
    assert touched != first
    with big.open("r+b") as handle:
        handle.truncate(3 << 30 | 1)
    os.utime(big, ns=(1, 1))
    assert demo.fingerprint() not in (first, touched)  # the size alone changed
    (folder / "demo" / "raw" / "more.bin").write_bytes(b"")
    assert demo.fingerprint() != touched


# --- case 9: numbers on the command line ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("plan", "--cores", "0"), "argument --cores: 0 is less than 1: give a whole number of 1 or more"),
        (("plan", "--cores", "32", "-1"), "argument --cores: -1 is less than 1: give a whole number of 1 or more"),
        (("plan", "--cores", "many"), "argument --cores: 'many' is not a whole number"),
        (("convert", "APTOS", "--workers", "0"), "argument --workers: 0 is less than 1"),
        (("attest", "--workers", "-2"), "argument --workers: -2 is less than 1"),
        (("attest", "--limit", "-1"), "argument --limit: -1 is less than 0: give a whole number of 0 or more"),
        (("demo", "d", "--real-sizes", "--items", "0"), "argument --items: 0 is less than 1"),
        (("slice", "v.nii", "out", "--count", "0"), "argument --count: 0 is less than 1"),
        (("slice", "v.nii", "out", "--window", "40", "nan"), "argument --window: 'nan' is not a finite number"),
        (("slice", "v.nii", "out", "--percentiles", "-1", "99"), "argument --percentiles: -1 is not a percentile"),
        (("slice", "v.nii", "out", "--window", "40", "0"), "--window LEVEL WIDTH: WIDTH must be more than 0 (got 0)"),
        (("slice", "v.nii", "out", "--percentiles", "60", "40"), "LOW must be less than HIGH (got 60 and 40)"),
    ],
)
def test_a_number_out_of_range_on_the_command_line_stops_before_the_command(tmp_path, args, message):
    stderr = _refused(_cli(*args, cwd=tmp_path))
    assert message in stderr
    assert list(tmp_path.iterdir()) == []  # nothing written: no demo folder, no results


# --- case 14: a name of a million characters --------------------------------------------------------------


def test_an_unknown_subset_name_of_100k_characters_is_quoted_by_its_start(tmp_path):
    name = "A" * 100_000  # one argument may hold at most 128 KiB (MAX_ARG_STRLEN)
    (tmp_path / "raw").mkdir()
    (tmp_path / "base").mkdir()
    stderr = _refused(_cli("convert", name, "--raw-root", "raw", "--data-basedir", "base", cwd=tmp_path))
    assert stderr == (
        f"error: unknown subset {'A' * 80!r}... (100,000 characters); `python -m preprocess list` shows them all\n"
    )
    stderr = _refused(_cli("info", name, cwd=tmp_path))
    assert f"unknown subset {'A' * 80!r}... (100,000 characters)" in stderr and len(stderr) < 300


def test_a_config_subset_of_a_million_characters_is_quoted_by_its_start(tmp_path, demo):
    config = tmp_path / "config.json"
    config.write_text(json.dumps(demo_values(demo, subsets=["APTOS" + "x" * 1_000_000])), encoding="utf-8")
    stderr = _refused(_cli("plan", "--config", config, cwd=tmp_path))
    assert f"unknown subset {'APTOS' + 'x' * 75!r}... (1,000,005 characters)" in stderr
    assert len(stderr) < 300
