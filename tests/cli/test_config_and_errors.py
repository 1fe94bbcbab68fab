"""A newcomer's path: one config rule for the CLI and the workflow, a user config that replaces the shipped
demo config, script-safe command-line edges and a report built also when validation fails (the conda
environment is held equal to the lock in tests/project/test_lock.py)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
import yaml

from conftest import (
    REPO,
    ctrl_c_as_from_a_terminal,
    demo_config_file,
    demo_values,
    front_page_counts,
    report_front_page,
)
from preprocess.cli import main
from preprocess.registry.loader import load_registry

SNAKEMAKE = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile")]
INTERRUPTED = "interrupted: rerun the same command to resume"


def _cli(*args: str, cwd: Path, **kwargs) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "preprocess", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, **kwargs)


# --- the console script --------------------------------------------------------------------------------


def test_console_script_is_declared_and_installed():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["scripts"] == {"medheb": "preprocess.cli:run"}
    script = Path(sys.executable).parent / "medheb"
    done = subprocess.run([str(script), "--version"], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == f"medheb-preprocess {project['version']}"


# --- one config rule -----------------------------------------------------------------------------------


def _built_aptos(workdir: Path, demo: Path) -> Path:
    """A workdir holding the shipped config.yaml; the build itself runs on a user config (APTOS only)."""
    workdir.mkdir()
    (workdir / "config.yaml").write_text((REPO / "config.yaml").read_text(encoding="utf-8"))
    user = workdir / "user.yaml"
    user.write_text(yaml.safe_dump(demo_values(demo, subsets=["2D_Task/APTOS"])))
    done = subprocess.run(
        [*SNAKEMAKE, "--directory", str(workdir), "--cores", "2", "--configfile", str(user)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return user


@pytest.mark.registry_wide
@pytest.mark.workflow
def test_a_user_configfile_replaces_the_shipped_one(tmp_path, demo):
    workdir = tmp_path / "work"
    user = _built_aptos(workdir, demo)
    shipped = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))
    assert shipped["demo"] == "demo" and shipped["shards"]  # the keys that must not leak
    # demo: the shipped config would have generated a second demo in the workdir
    assert not (workdir / "demo").exists()
    used = json.loads((workdir / "results" / "validation" / "summary.json").read_text())["config"]
    assert used == yaml.safe_load(user.read_text())
    assert not {"demo", "shards", "progress_interval"} & set(used)
    plan = json.loads((workdir / "results" / "plan.json").read_text())
    assert [p["subset"] for p in plan] == ["2D_Task/APTOS"]
    summary = (workdir / "results" / "validation" / "summary.txt").read_text(encoding="utf-8")
    assert "subsets not built" not in summary and "Every selected subset is built." in summary  # no empty list


@pytest.mark.workflow
def test_validation_failure_still_gives_a_report_naming_the_missing_file(tmp_path, demo):
    workdir = tmp_path / "work"
    user = _built_aptos(workdir, demo)
    record = json.loads((demo / "DATA_BASEDIR" / "2D_Task" / "APTOS" / "APTOS_test.json").read_text())[0]
    image = demo / "DATA_BASEDIR" / "2D_Images" / "APTOS" / "train_images" / record["qry_img_path"]
    image.unlink()
    command = [*SNAKEMAKE, "--directory", str(workdir), "--configfile", str(user)]
    done = subprocess.run([*command, "--cores", "2", "--forcerun", "validate_subset"], capture_output=True, text=True)
    assert done.returncode != 0
    assert f"'{record['qry_img_path']}' no such file" in done.stderr
    assert "Validation failed" in done.stderr and "raw downloads" not in done.stderr.split("Validation failed")[1]
    assert "A built file deleted or changed since: `--forcerun convert` builds the missing ones again" in done.stderr
    again = subprocess.run([*command, "--cores", "2"], capture_output=True, text=True)  # no "Nothing to be done"
    assert again.returncode != 0 and "Nothing to be done" not in again.stdout + again.stderr
    report = workdir / "report.html"
    done = subprocess.run([*command, "--report", str(report)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    front = report_front_page(report.read_text(encoding="utf-8"))
    assert record["qry_img_path"] in front and "Failed: paths that do not resolve" in front
    assert front_page_counts(front) == {"built": 0, "from_release": 0, "not_built": 0, "failed": 1, "bad_items": 0}
    # the hint's advice: the convert step writes the deleted image again, and the run passes
    rebuilt = subprocess.run([*command, "--cores", "2", "--forcerun", "convert"], capture_output=True, text=True)
    assert rebuilt.returncode == 0 and image.is_file(), rebuilt.stderr[-3000:]


def test_cli_reads_config_yaml_of_the_working_directory_with_paths_relative_to_it(tmp_path, demo):
    (tmp_path / "config.yaml").write_text(
        "raw_root: demo/raw\ndata_basedir: demo/DATA_BASEDIR\nregistry_overrides: demo/registry-overrides.yaml\n"
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "c.yaml").write_text((tmp_path / "config.yaml").read_text())
    done = _cli("check", "--source", "aptos2019", "--quiet", cwd=tmp_path)
    assert done.returncode == 0 and re.search(r"aptos2019\s+present", done.stdout), done.stderr
    # --config: the same relative paths, still against the working directory (not the file's folder)
    done = _cli("check", "--source", "aptos2019", "--quiet", "--config", "elsewhere/c.yaml", cwd=tmp_path)
    assert re.search(r"aptos2019\s+present", done.stdout), done.stderr


# --- a newcomer's smaller edges (issue 36) -------------------------------------------------------------


def test_check_and_plan_stop_on_a_data_basedir_that_does_not_exist(tmp_path, demo):
    absent = tmp_path / "nowhere"
    config = demo_config_file(demo, tmp_path / "c.yaml", data_basedir=str(absent))
    for command in ("check", "plan"):
        done = _cli(command, "--config", str(config), cwd=tmp_path)
        assert done.returncode == 2, (command, done.stdout[-2000:])
        assert done.stderr == (
            f"error: DATA_BASEDIR {absent} does not exist: create it, or fix data_basedir in the config "
            "(or --data-basedir)\n"
        )


def test_a_misspelt_config_key_is_named_with_the_key_it_is_close_to(tmp_path, demo):
    values = demo_values(demo)
    values["subset"] = values.pop("subsets")
    (tmp_path / "c.yaml").write_text(json.dumps(values))
    done = _cli("check", "--config", "c.yaml", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("error: unknown key in the configuration: 'subset' (did you mean subsets?);")


def test_plan_refuses_a_misspelt_shards_key_as_a_build_does(tmp_path, demo):
    config = demo_config_file(demo, tmp_path / "c.yaml", shards={"3D_Task/CT_RATES": 2})
    done = _cli("plan", "--config", str(config), cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert "shards names unknown subset or conversion '3D_Task/CT_RATES' (did you mean 3D_Task/CT_RATE" in done.stderr


@pytest.mark.registry_wide
def test_check_lists_for_download_only_sources_a_conversion_reads(tmp_path, demo):
    """The demo has no MIMIC-CXR reports. Their only subset is a text subset, validated from its release file as
    it is: nothing to download for it. USData, which a conversion reads, is in the list."""
    users = [s for s in load_registry().subsets if "mimic_cxr_reports" in s.source_ids]
    assert [(s.key, s.is_text) for s in users] == [("Text_Task/MIMIC_f2i", True)]
    done = _cli("check", "--config", str(demo_config_file(demo, tmp_path / "c.yaml")), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert re.search(r"^mimic_cxr_reports\s+missing", done.stdout, re.MULTILINE)  # its status is still shown
    assert "## mimic_cxr_reports" not in done.stdout
    assert "## usdata: missing" in done.stdout


def test_a_second_demo_command_says_it_kept_the_folder(tmp_path, demo):
    before = {path: path.stat().st_mtime_ns for path in demo.rglob("*")}
    done = _cli("demo", str(demo), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"demo in {demo.resolve()} kept as it is") and "written to" not in done.stdout
    assert {path: path.stat().st_mtime_ns for path in demo.rglob("*")} == before


def test_the_guide_says_how_to_run_snakemake_outside_the_checkout():
    for page in ("real-data.md", "commands.md"):
        assert "-s /path/to/checkout/Snakefile" in (REPO / "docs" / "guide" / page).read_text(encoding="utf-8")


# --- script-safe edges ---------------------------------------------------------------------------------


def test_validate_on_an_empty_or_missing_folder_fails(tmp_path):
    (tmp_path / "empty").mkdir()
    done = _cli("validate", "empty", cwd=tmp_path)
    assert done.returncode == 1 and "nothing validated" in done.stderr
    done = _cli("validate", "absent", cwd=tmp_path)
    assert done.returncode == 2 and f"DATA_BASEDIR {tmp_path / 'absent'} does not exist" in done.stderr
    assert "Traceback" not in done.stderr


def test_clear_errors_for_a_missing_raw_root_and_a_basedir_that_is_not_a_folder(tmp_path, demo):
    base = str(demo / "DATA_BASEDIR")
    done = _cli("check", "--raw-root", "nowhere", "--data-basedir", base, cwd=tmp_path)
    assert done.returncode == 2 and f"raw root {tmp_path / 'nowhere'} does not exist" in done.stderr
    (tmp_path / "a-file").write_text("x")
    done = _cli("convert", "APTOS", "--raw-root", str(demo / "raw"), "--data-basedir", "a-file", cwd=tmp_path)
    assert done.returncode == 2 and "is not a directory" in done.stderr and "Traceback" not in done.stderr


def test_an_unwritable_basedir_is_named(tmp_path, demo):
    if os.geteuid() == 0:
        target = Path("/proc")  # root writes anywhere a mode allows; procfs refuses new files to anyone
    else:
        target = tmp_path / "read-only"
        target.mkdir(mode=0o555)
    done = _cli("convert", "APTOS", "--raw-root", str(demo / "raw"), "--data-basedir", str(target), cwd=tmp_path)
    assert done.returncode == 2 and f"DATA_BASEDIR {target} is not writable" in done.stderr, done.stderr


@pytest.mark.registry_wide
def test_version_and_status_json(tmp_path, demo, capsys, outside_checkout):
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0 and re.fullmatch(r"medheb-preprocess \d+\.\d+\.\d+\n", capsys.readouterr().out)
    config = str(demo_config_file(demo, tmp_path / "demo.json"))  # the demo's own counts and checksums
    code = main(["status", str(demo / "DATA_BASEDIR"), "--config", config, "--json",
                 "--results", str(tmp_path / "r")])  # fmt: skip
    data = json.loads(capsys.readouterr().out)
    subsets = [s.key for s in load_registry().subsets]
    assert code == 0 and [s["subset"] for s in data["subsets"]] == subsets
    aptos = next(s for s in data["subsets"] if s["subset"] == "2D_Task/APTOS")
    assert aptos["state"] == "not built" and aptos["paths_ok"] == 0  # raw present, nothing converted yet
    assert sum(data["counts"].values()) == len(subsets)


@pytest.mark.parametrize(
    ("name", "hints"),
    [
        ("bloodmnist", ["2D_Task/BloodMNIST (subset)", "medmnist (source"]),
        ("ct-rate", ["3D_Task/CT_RATE (subset)", "ct_rate (source)"]),
        ("VINDR-CXR", ["2D_Task/VindrCXR (subset)", "vindr_cxr (source)"]),
    ],
)
def test_names_are_suggested_whatever_their_case_and_separators(name, hints, capsys):
    assert main(["info", name]) == 2
    err = capsys.readouterr().err
    assert all(hint in err for hint in hints), err


def test_a_closed_pipe_is_not_a_traceback(tmp_path):
    command = [sys.executable, "-m", "preprocess", "list"]
    reader = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    reader.stdout.close()  # as `| head` does once it has read enough: here before the first line
    err = reader.stderr.read().decode()
    assert reader.wait() == 141 and err == ""


def _has_children(pid: int) -> bool:
    try:
        return bool(Path(f"/proc/{pid}/task/{pid}/children").read_text().split())
    except OSError:  # it has exited
        return False


def test_ctrl_c_stops_with_one_line_and_exit_130(tmp_path, demo):
    config = tmp_path / "c.yaml"
    # overwrite_existing: a run that finished before the signal came is run again, from the start
    config.write_text(yaml.safe_dump(demo_values(demo, progress_interval=0, overwrite_existing=True)))
    command = [sys.executable, "-m", "preprocess", "convert", "CT_RATE", "--config", str(config), "--workers", "2"]
    # The signal goes out once the job has said how many items it converts and forked its workers: the demo's
    # three volumes then take a fifth of a second. On a loaded machine the job may still finish first (it
    # exits 0, its work done): such a run is tried again. Any other status than 0 or 130 fails at once, and so
    # do five runs the signal never caught.
    for attempt in range(5):
        results = ["--results", str(tmp_path / f"r{attempt}")]
        with ctrl_c_as_from_a_terminal():
            job = subprocess.Popen([*command, *results], cwd=tmp_path, start_new_session=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
        seen = []
        for line in job.stdout:
            seen.append(line)
            if line.endswith(": 3 items\n"):
                waited = time.monotonic()
                while not _has_children(job.pid) and job.poll() is None and time.monotonic() - waited < 5:
                    time.sleep(0.001)
                with contextlib.suppress(ProcessLookupError):  # it finished first
                    os.killpg(job.pid, signal.SIGINT)  # the terminal sends it to the whole group, workers included
                break
        out = "".join(seen) + job.stdout.read()
        if job.wait() != 0:
            break
    assert job.returncode == 130, out
    assert INTERRUPTED in out and "Traceback" not in out and "KeyboardInterrupt" not in out


def test_ctrl_c_that_meets_a_helper_as_it_forks_prints_no_traceback(tmp_path, demo):
    """The race CI met: the terminal's SIGINT reaching a helper inside the interpreter's after-fork hooks, made
    certain here by a hook that signals every forked process there. The helper must end quietly; the job, whose
    helper stopped on Ctrl-C, stops with one line too."""
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(demo_values(demo, progress_interval=0, overwrite_existing=True)))
    signal_in_hooks = (
        "import os, signal, sys; from preprocess.cli import main; "
        "os.register_at_fork(after_in_child=lambda: os.kill(os.getpid(), signal.SIGINT)); "
        "sys.exit(main())"
    )
    command = [sys.executable, "-c", signal_in_hooks, "convert", "CT_RATE", "--config", str(config), "--workers", "2"]
    with ctrl_c_as_from_a_terminal():
        done = subprocess.run([*command, "--results", str(tmp_path / "r")], cwd=tmp_path, capture_output=True,
                              text=True, timeout=120)  # fmt: skip
    out = done.stdout + done.stderr
    assert "Exception ignored" not in out and "Traceback" not in out, out
    assert done.returncode in (0, 130), out
