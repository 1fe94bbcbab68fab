"""Whole-workflow behaviour: partial rebuilds, planning at full scale, and runs that are interrupted."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
import yaml

from conftest import REPO, ctrl_c_as_from_a_terminal, demo_with_raw_of, job_pids
from preprocess.registry.loader import load_registry

SNAKEMAKE = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile")]


def _workdir(path: Path, demo_template: Path, raw_of: set[str] | None = None, **config) -> Path:
    """A workdir with the shipped config.yaml (changed by `config`) and a copy of the demo (its raw root holding
    only the downloads of the sources `raw_of` when given)."""
    path.mkdir(parents=True, exist_ok=True)
    values = yaml.safe_load((REPO / "config.yaml").read_text())
    values.update(config)
    (path / "config.yaml").write_text(yaml.safe_dump(values))
    if values.get("demo") and raw_of is not None:
        demo_with_raw_of(path / "demo", demo_template, raw_of)
    elif values.get("demo"):
        subprocess.run(["cp", "-a", str(demo_template), str(path / "demo")], check=True)
    return path


def _run(workdir: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([*SNAKEMAKE, "--directory", str(workdir), *args], capture_output=True, text=True)
    if check:
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    return done


def _state(base: Path) -> dict[str, tuple]:
    """(sha256, mtime) of every file, and link targets, under a folder."""
    found = {}
    for path in sorted(base.rglob("*")):
        if path.is_symlink():
            found[str(path.relative_to(base))] = ("link", os.readlink(path))
        elif path.is_file():
            found[str(path.relative_to(base))] = (
                hashlib.sha256(path.read_bytes()).hexdigest(),
                path.stat().st_mtime_ns,
            )
    return found


@pytest.mark.workflow
def test_a_one_subset_rebuild_touches_only_that_subset_and_updates_its_rows_of_the_summaries(tmp_path, demo_template):
    # MedMNIST's 2D and 3D subsets, APTOS's image folder and the MIMIC-CXR link farms: the others not built
    sources = {"medmnist", "aptos2019", "mimic_cxr_jpg", "chest_imagenome"}
    workdir = _workdir(tmp_path / "w", demo_template, raw_of=sources)
    _run(workdir, "--cores", "2")
    images, results = workdir / "demo" / "DATA_BASEDIR" / "2D_Images", workdir / "results"
    files = ["validation/summary.json", "validation/summary.txt", "check/sources.tsv", "not-built.md"]
    before, summaries = _state(images), {name: (results / name).read_text(encoding="utf-8") for name in files}
    lost = images / "BloodMNIST" / "output_images" / "test" / "basophil" / "test_000000.png"
    lost.unlink()  # the subset needs rebuilding (in real life: its raw data was fixed)
    started = time.perf_counter()
    rebuild = ["--config", "subsets=['2D_Task/BloodMNIST']", "--forcerun", "convert"]  # as the README says
    done = _run(workdir, "--cores", "2", *rebuild)
    print(f"partial rebuild of BloodMNIST: {time.perf_counter() - started:.1f} s")
    assert lost.exists() and "Job stats" in done.stdout + done.stderr
    after = _state(images)
    others = {k: v for k, v in before.items() if not k.startswith("BloodMNIST/")}
    assert {"APTOS", "ChestImagrome", "OrganAMNIST"} <= {k.split("/")[0] for k in others}
    assert {k: v for k, v in after.items() if not k.startswith("BloodMNIST/")} == others  # bytes and mtimes
    assert {k: v[0] for k, v in after.items()} == {k: v[0] for k, v in before.items()}
    # the run-wide summaries: this run's subset updated in them, the other rows kept, the same verdicts
    now = {name: (results / name).read_text(encoding="utf-8") for name in files}
    old, new = json.loads(summaries.pop("validation/summary.json")), json.loads(now.pop("validation/summary.json"))
    assert new["config"]["subsets"] == ["2D_Task/BloodMNIST"]
    assert {k: v for k, v in new.items() if k != "config"} == {k: v for k, v in old.items() if k != "config"}
    assert {row["subset"] for row in new["files"]} > {"2D_Task/BloodMNIST"}
    assert all(row["ok"] == row["paths"] for row in new["files"])
    assert now == summaries  # summary.txt, sources.tsv (every source a row), not-built.md
    dashboard = (results / "report" / "dashboard.html").read_text(encoding="utf-8")
    assert f'data-count="built">{old["front"]["built"]}</b>' in dashboard and old["front"]["built"] > 1


def _full_inventory(raw: Path, overrides: Path) -> int:
    """Empty files that satisfy every source's file list, with 3,000 CT-RATE volumes; returns files made."""
    registry = load_registry(variants=None)
    made, sources = 0, {}
    for source in registry.sources.values():
        base = raw / source.raw_dir
        files = []
        for spec in source.files:
            if spec.split == "train":  # listed, not made: the default (splits: test) plan does not check them
                where = {"glob": spec.glob, "min_count": spec.min_count} if spec.glob else {"path": list(spec.paths)}
                files.append({"id": spec.id, **where, "split": "train"})
                continue
            if spec.glob:
                count = 3000 if source.id == "ct_rate" else spec.min_count
                for n in range(count):
                    relative = spec.glob.replace("**/", "").replace("[0-9]", str(n % 10)).replace("[pj][np]g", "png")
                    relative = relative.replace("*", f"x{n}", 1).replace("*", "x")
                    target = base / relative
                    if "." not in target.name:  # a glob of folders (MIMIC-CXR's p10 .. p19)
                        target.mkdir(parents=True, exist_ok=True)
                    else:
                        target.parent.mkdir(parents=True, exist_ok=True)
                        target.touch()
                    made += 1
                files.append({"id": spec.id, "glob": spec.glob, "min_count": spec.min_count})
            else:
                target = base / spec.paths[0]
                target.parent.mkdir(parents=True, exist_ok=True)
                if target.suffix == ".zip":  # the check reads a zip's member list (a bomb is refused unread)
                    zipfile.ZipFile(target, "w").close()
                else:
                    target.touch()
                made += 1
                files.append({"id": spec.id, "path": list(spec.paths)})
        sources[source.id] = {"files": files}  # no MD5s and no npz checks: the files are empty
    overrides.write_text(yaml.safe_dump({"sources": sources}))
    return made


@pytest.mark.workflow
def test_full_scale_plan_stays_in_the_hundreds_of_jobs(tmp_path, demo_template):
    raw = tmp_path / "raw"
    made = _full_inventory(raw, tmp_path / "overrides.yaml")
    # the release folder a user points data_basedir at: its task JSONs and Train_Data (the record-driven
    # subsets take their names from them), no image yet
    shutil.copytree(demo_template / "DATA_BASEDIR", tmp_path / "data")
    workdir = _workdir(
        tmp_path / "w",
        demo_template,
        demo=None,
        raw_root=str(raw),
        data_basedir=str(tmp_path / "data"),
        registry_overrides=str(tmp_path / "overrides.yaml"),
        verify_checksums=False,
        shards={},
    )
    _run(workdir, "--cores", "2", "--until", "plan")  # the checks run for real over the inventory
    plan = json.loads((workdir / "results" / "plan.json").read_text())
    skipped = {p["subset"]: p["problems"][:2] for p in plan if p["action"] == "skip"}
    assert skipped == {}  # every subset is buildable at full scale
    started = time.perf_counter()
    done = _run(workdir, "-n", "--quiet", "rules")
    seconds = time.perf_counter() - started
    total = int(next(line.split()[-1] for line in done.stdout.splitlines() if line.startswith("total")))
    print(f"{made} raw files, {total} jobs planned in {seconds:.1f} s")
    assert 200 <= total <= 400


def _tree(workdir: Path) -> dict[str, str]:
    """The built DATA_BASEDIR by content, link targets relative to the workdir."""
    return _strip_workdir({k: v[0] for k, v in _state(workdir / "demo" / "DATA_BASEDIR").items()}, workdir)


def _strip_workdir(tree: dict, workdir: Path) -> dict:
    return {
        k: (v if not isinstance(v, str) or not v.startswith("/") else os.path.relpath(v, workdir))
        for k, v in tree.items()
    }


def test_sigint_and_a_killed_job_resume_to_identical_outputs(tmp_path, demo_template, built_demo):
    reference = _tree(built_demo.workdir)  # the uninterrupted build of the same config

    interrupted = _workdir(tmp_path / "interrupted", demo_template)
    with ctrl_c_as_from_a_terminal():
        process = subprocess.Popen(
            [*SNAKEMAKE, "--directory", str(interrupted), "--cores", "2"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    _wait_for_a_job(interrupted)
    _kill_one_job(interrupted)  # SIGKILL of a running job: Snakemake marks it failed
    time.sleep(2)
    process.send_signal(signal.SIGINT)  # then the user presses Ctrl-C
    process.wait(timeout=120)
    assert process.returncode != 0
    _run(interrupted, "--cores", "2")
    resumed = _tree(interrupted)
    assert resumed == reference
    assert not [p for p in (interrupted / "demo" / "DATA_BASEDIR").rglob("*.part")]  # no half files left


def _wait_for_a_job(workdir: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not job_pids(workdir):
        time.sleep(0.05)


def _kill_one_job(workdir: Path) -> None:
    for pid in job_pids(workdir)[:1]:
        with contextlib.suppress(ProcessLookupError):  # it may have finished meanwhile
            os.kill(pid, signal.SIGKILL)
