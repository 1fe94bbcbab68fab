"""The edges a newcomer hit (issue 29), each through the command a user types: the benchmark scripts from a
fresh checkout, commands given their own tree, a partial run's summaries, plan's estimates against a real
build of the demo, clear failures for missing paths and config mistakes, file modes under a umask, lock
files that go with their job, and the README's sample output."""

from __future__ import annotations

import collections
import csv
import fcntl
import json
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
from preprocess.demo import LEFT_OUT, RELEASE, releases

ENV = {**os.environ, "PYTHONPATH": str(REPO)}
SNAKEMAKE = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile")]


def _cli(*args: str, cwd: Path, umask: int | None = None) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "preprocess", *args]
    set_umask = None if umask is None else (lambda: os.umask(umask))
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=ENV, preexec_fn=set_umask)


def _last_line(text: str) -> str:
    return text.strip().splitlines()[-1]


# --- 1. the benchmark scripts from a fresh checkout -------------------------------------------------------


def _fresh_benchmarks(tmp_path: Path) -> Path:
    """The benchmarks/ folder as a fresh clone has it: the tracked scripts, no benchmarks/out/."""
    folder = tmp_path / "clone" / "benchmarks"
    folder.mkdir(parents=True)
    for script in (REPO / "benchmarks").glob("*.py"):
        shutil.copy(script, folder / script.name)
    return folder


def test_the_benchmarks_timing_helper_writes_its_marker_in_a_fresh_clone(tmp_path):
    folder = _fresh_benchmarks(tmp_path)
    snippet = (
        "import sys, timing\n"
        "timing.settle = lambda probe: None  # the file-creation probe: minutes on a busy machine\n"
        "with timing.fresh_folders(timing.Path(sys.argv[1])) as folders:\n"
        "    run = next(folders); run.mkdir(); (run / 'output').write_text('x')\n"
        "print('measured')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", snippet, str(tmp_path / "new" / "folder" / "outputs")],
        cwd=folder,
        capture_output=True,
        text=True,
        env=ENV,
    )
    assert done.returncode == 0 and done.stdout == "measured\n", done.stderr
    assert float((folder / "out" / ".last-deletion").read_text()) > 0  # the next benchmark waits after it
    assert list((tmp_path / "new" / "folder" / "outputs").iterdir()) == []  # the runs are deleted at the end


def test_a_failing_benchmark_command_shows_its_own_error(tmp_path):
    folder = _fresh_benchmarks(tmp_path)
    failing = [sys.executable, "-c", "import sys; sys.exit('No module named medmnist')"]
    snippet = f"import timing; timing.timed({failing!r})"
    done = subprocess.run([sys.executable, "-c", snippet], cwd=folder, capture_output=True, text=True, env=ENV)
    assert done.returncode == 1
    assert "failed (exit 1):\nNo module named medmnist" in done.stderr
    assert "CalledProcessError" not in done.stderr and "Traceback" not in done.stderr


def test_the_medmnist_benchmark_without_medmnist_says_what_to_install(tmp_path):
    folder = _fresh_benchmarks(tmp_path)
    hide = tmp_path / "hide"  # an interpreter without medmnist (as after `make demo` only)
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(
        "import sys\n"
        "class Hide:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'medmnist':\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, Hide())\n"
    )
    out = tmp_path / "new" / "folder"
    done = subprocess.run(
        [sys.executable, str(folder / "medmnist_unpack.py"), "--out", str(out), "--cases", "blood28"],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**ENV, "PYTHONPATH": f"{hide}{os.pathsep}{REPO}"},
    )
    assert done.returncode == 1
    assert f"the reference tool medmnist is not installed for {sys.executable}" in done.stderr
    assert "make .venv/.reference" in done.stderr and "tests/requirements-reference.txt" in done.stderr
    assert not out.exists()  # stopped before measuring anything


def test_the_wait_for_a_quiet_disk_is_bounded_and_its_cost_printed_beside_the_figures(monkeypatch, capsys):
    """Another process creating files all along: the benchmark waits a bounded time, then measures anyway, and
    its table carries the file-creation cost measured beside each case."""
    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))
    import medmnist_unpack
    import timing

    clock = [0.0]
    monkeypatch.setattr(timing, "file_creation_us", lambda folder: 450.0)  # a busy disk that stays busy
    monkeypatch.setattr(timing.time, "sleep", lambda seconds: clock.__setitem__(0, clock[0] + seconds))
    monkeypatch.setattr(timing.time, "monotonic", lambda: clock[0])
    assert timing.settle(Path("unused")) == 450.0
    assert clock[0] <= 120, f"waited {clock[0]:.0f} s for a disk another process keeps busy"
    assert "measuring anyway" in capsys.readouterr().err

    runs = {"medmnist save (1 core)": [2.0], "pipeline, 1 worker (1 core)": [1.0]}
    rows = medmnist_unpack.table_rows("case", 100, runs, {name: [None] for name in runs}, [450.0, 380.0])
    assert [row[-1] for row in rows] == ["450 / 380", "450 / 380"]


# --- 2. commands given their own tree ---------------------------------------------------------------------


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


# --- 5. clear failures ------------------------------------------------------------------------------------


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


# --- a built demo: plan against it, validate it, the README's sample output -------------------


@pytest.fixture
def built(built_demo) -> tuple[Path, subprocess.CompletedProcess]:
    """The demo built by the workflow, as `make demo` builds it (the session's shared build: read, never changed)."""
    return built_demo.workdir, built_demo.build


def _written_per_subset(results: Path) -> dict[str, int]:
    """Files and links each subset's manifests list (what the build wrote)."""
    counts: dict[str, int] = collections.Counter()
    for manifest in (results / "convert").glob("*/*/*.tsv"):
        subset = f"{manifest.parent.parent.name}/{manifest.parent.name}"
        with open(manifest, encoding="utf-8", newline="") as handle:
            rows = list(csv.reader(handle, dialect="excel-tab"))[1:]
        counts[subset] += sum(1 for row in rows if row[1] in ("file", "symlink"))
    return counts


BOX_KINDS = ("annotation_crop", "mask_bbox_crop")


@pytest.mark.registry_wide
def test_plan_says_what_is_buildable_and_its_counts_match_the_build_within_2x(built):
    workdir, _ = built
    done = _cli("plan", "--json", cwd=workdir)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    planned: dict[str, int] = collections.Counter()
    for row in rows:
        planned[row["subset"]] += row["files"]
    buildable = {row["subset"] for row in rows if row["buildable"]}
    written = _written_per_subset(workdir / "results")
    summary = json.loads((workdir / "results" / "validation" / "summary.json").read_text())
    not_built = {line.split(":")[0] for line in summary["not_built"]}
    assert buildable == set(written)  # exactly the subsets the build converted
    assert {row["subset"] for row in rows if not row["buildable"]} == not_built
    assert all(row["raw"].startswith("raw ") for row in rows if not row["buildable"])
    # Box-driven kinds write one file per box: costs.yaml holds the real datasets' boxes per image (24 nuclei a
    # PanNuke row, 10 regions a radiograph), the demo has one to three, so their subsets are held to the items.
    from preprocess.registry.loader import load_registry

    registry = load_registry()
    by_box = {s.key for s in registry.subsets if any(c.kind in BOX_KINDS for c in s.conversions)}
    ratios = {subset: planned[subset] / written[subset] for subset in written if subset not in by_box}
    assert all(0.5 <= ratio <= 2 for ratio in ratios.values()), {s: r for s, r in ratios.items() if not 0.5 <= r <= 2}
    items = collections.Counter()
    for row in rows:
        items[row["subset"]] += row["items"]
    assert all(items[subset] > 0 for subset in by_box & set(written))
    # PathVQA's images are the ones its release JSON names (record-driven): the plan counts those, not 0
    release = json.loads((REPO / "preprocess/demo/release/2D_Task/PathVQA/Path-VQA_test.json").read_text())
    named = {record["qry_img_path"] for record in release}
    assert written["2D_Task/PathVQA"] == len(named) == planned["2D_Task/PathVQA"]
    table = _cli("plan", cwd=workdir).stdout.splitlines()
    total = next(line.split() for line in table if line.startswith("total "))
    assert 0.5 <= int(total[2].replace(",", "")) / sum(written.values()) <= 2
    not_built_row = next(line for line in table if line.startswith("not built "))
    assert not_built_row.endswith(f"{len(not_built)} subsets not built, once downloaded")
    usdata = next(line for line in table if line.startswith("2D_Task/USData "))
    assert usdata.endswith("no: raw missing")


def test_validate_of_the_built_demo_ends_with_its_verdict(built):
    workdir, _ = built
    done = _cli("validate", "demo/DATA_BASEDIR", cwd=workdir)
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(r"valid: (\d+) of \1 task files resolve every path", _last_line(done.stdout))


@pytest.mark.registry_wide
def test_the_plain_demo_build_ends_with_its_counts(built):
    _, done = built
    printed = done.stderr.splitlines()
    # A demo build validates every release file the demo ships (task JSONs, Train_Data JSONL), an extra registry
    # folder's included; with no release images, the text subsets alone are the release's (the README's quick
    # start shows `make demo`, the release-shaped demo: tests/workflow/test_release_demo.py).
    validated = sum(len(list(release.rglob("*.json*"))) for release in releases())
    text = sum(1 for folder in (RELEASE / "Text_Task").iterdir() if folder.is_dir())
    last = [line for line in printed if "task files resolve every path" in line]
    assert last and last[-1].startswith(f"{validated} of {validated} task files resolve every path ({text} subsets")
    header = next(line for line in printed if line.startswith("task file "))
    assert header.split()[:3] == ["task", "file", "records"]
    not_built = f"{len(LEFT_OUT)} subsets not built (what to download: results/not-built.md):"
    assert not_built in printed
    assert all(f"  {key}: not built: {reason}" in printed for key, reason in LEFT_OUT.items())


def test_snakemake_dry_run_piped_into_head_as_the_readme_advises(built):
    workdir, _ = built
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "snakemake -n 2>&1 | head" in readme and "BrokenPipeError" in readme
    done = subprocess.run(
        f"{sys.executable} -m snakemake -s {REPO / 'Snakefile'} -n --forceall 2>&1 | head -3",
        shell=True,
        cwd=workdir,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0 and done.stderr == "" and "Traceback" not in done.stdout
