"""Hostile registry folders and command-line numbers (issue 53, cases 6-9 and 14), through the command a user
types: an extra registry folder whose files hold the wrong types or a YAML "billion laughs", a huge file in an
extra folder, `--cores 0`, a subset name of a million characters. Each ends with exit 2 and a short message
naming the file or the option and what to give instead; none with a traceback or "unexpected"."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO, demo_values
from preprocess.errors import RegistryError
from preprocess.registry.loader import EXTRA_REGISTRY_ENV, check_schema, load_registry

BASE_ENV = {k: v for k, v in os.environ.items() if k != EXTRA_REGISTRY_ENV} | {"PYTHONPATH": str(REPO)}


def _cli(*args, cwd: Path, extra: Path | None = None, memory: int | None = None) -> subprocess.CompletedProcess:
    """The CLI in `cwd` (no config.yaml there), with `extra` as the extra registry folder and at most `memory`
    bytes of address space (a command that would take gigabytes stops with MemoryError, soon)."""
    env = BASE_ENV | ({EXTRA_REGISTRY_ENV: str(extra)} if extra else {})
    limit = None if memory is None else (lambda: resource.setrlimit(resource.RLIMIT_AS, (memory, memory)))
    command = [sys.executable, "-m", "preprocess", *map(str, args)]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, preexec_fn=limit)


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


# --- case 6: an extra folder's files of the wrong type ----------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "sources.yaml",
            "sources: [1, 2]\n",
            "sources.yaml: 'sources' is a list; it must be a mapping of source ids, each to its entry "
            "(name: ..., homepage: ..., files: ...) (preprocess/datasets/README.md)",
        ),
        (
            "subsets.yaml",
            "subsets: {a: 1}\n",
            "subsets.yaml: 'subsets' is a mapping; it must be a list of subset entries, each a mapping "
            "(- group: ..., folder: ..., tasks: ...) (preprocess/datasets/README.md)",
        ),
        ("subsets.yaml", "subsets: [1]\n", "subsets.yaml: entry 1 of 'subsets' is a number; 'subsets' must be a list"),
        ("sources.yaml", "sources: {x: 5}\n", "sources.yaml: source 'x' of 'sources' is a number; 'sources' must be"),
        (
            "sources.yaml",
            "[1, 2]\n",
            "sources.yaml holds a list at its top, where a mapping of keys (key: value) belongs",
        ),
        ("sources.yaml", "sources: {x: {name: 5}}\n", "sources.yaml does not match registry.schema.yaml:\n"),
    ],
)
@pytest.mark.parametrize("command", [("list",), ("info", "APTOS")])
def test_an_extra_folder_file_of_the_wrong_type_is_named(tmp_path, name, text, message, command):
    folder = _folder(tmp_path, name, text)
    stderr = _refused(_cli(*command, cwd=tmp_path, extra=folder))
    assert f"error: {folder / name}" in stderr
    assert message in stderr


def test_a_schema_error_of_an_extra_folder_names_its_file_and_its_place(tmp_path):
    folder = _folder(tmp_path, "sources.yaml", "sources: {x: {name: 5}}\n")
    stderr = _refused(_cli("list", cwd=tmp_path, extra=folder))
    assert stderr.startswith(f"error: {folder / 'sources.yaml'} does not match registry.schema.yaml:\n")
    assert "  at sources/x/name: 5 is not of type 'string'" in stderr


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"sources": [1]}, "'sources' is a list; it must be a mapping like {aptos2019: {files: [...]}}"),
        (
            {"subsets": ["2D_Task/APTOS"]},
            "'subsets' is a list; it must be a mapping like {2D_Task/APTOS: {fingerprint:",
        ),
        ({"sources": {"aptos2019": 5}}, "only 'files' can be overridden (source 'aptos2019')"),
    ],
)
def test_an_override_file_of_the_wrong_type_is_named(tmp_path, document, message):
    path = tmp_path / "overrides.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    with pytest.raises(RegistryError) as raised:
        load_registry(path, extras=False)
    assert str(raised.value).startswith(f"{path}: ") and message in str(raised.value)


# --- case 7: a "billion laughs" -----------------------------------------------------------------------------


def _laughs(levels: int) -> str:
    """YAML of `levels` lists of nine aliases of the one before: 9**levels strings under `name`."""
    lines = ['l0: &l0 "lol"']
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, levels + 1)]
    return "\n".join([*lines, f"sources: {{laughs: {{name: *l{levels}}}}}", ""])


@pytest.mark.parametrize("levels", [8, 9])
def test_a_billion_laughs_in_an_extra_folder_is_refused_naming_the_file(tmp_path, levels):
    folder = _folder(tmp_path, "sources.yaml", _laughs(levels))
    stderr = _refused(_cli("list", cwd=tmp_path, extra=folder, memory=1 << 30))
    assert stderr == (
        f"error: cannot read registry file {folder / 'sources.yaml'}: its aliases (*name) repeat more than "
        '1,000,000 values and characters (aliases of aliases: a "billion laughs"); write the repeated values out, '
        "or repeat less\n"
    )


def test_an_alias_inside_the_value_it_names_is_refused(tmp_path):
    folder = _folder(tmp_path, "sources.yaml", "sources: &s {x: *s}\n")
    stderr = _refused(_cli("list", cwd=tmp_path, extra=folder))
    assert f"{folder / 'sources.yaml'}: an alias (*name) inside the value it names, at line 1" in stderr


def test_the_shipped_registry_with_its_anchors_loads():
    labels = load_registry(extras=False).subset("2D_Task/OrganCMNIST").conversions[0].params["labels"]
    assert len(labels) == 11  # medmnist's subsets.yaml gives them as an alias of an anchor


class _NoWholeRepr(list):
    def __repr__(self) -> str:
        raise AssertionError("the whole value's repr was built")


def test_a_schema_message_quotes_a_huge_value_by_its_start():
    level = ["lol"] * 9
    for _ in range(8):  # 9**9 strings, shared: cheap to make, not to quote
        level = [level] * 9
    document = {"sources": {"laughs": {"name": _NoWholeRepr(level)}}}
    with pytest.raises(RegistryError) as raised:
        check_schema(document, "registry.schema.yaml", "a test document")
    line = next(line for line in str(raised.value).splitlines() if "sources/laughs/name" in line)
    assert line.startswith("  at sources/laughs/name: [[[[[[[[['lol', 'lol', ")
    assert "'lol', ... of 9], ... of 9]" in line and len(line) <= len("  at sources/laughs/name: ") + 300


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
