"""The benchmark scripts from a fresh checkout (issue 29): the timing helper writes its marker in a fresh clone,
a failing benchmark command shows its own error, the MedMNIST benchmark without medmnist says what to install,
and the wait for a quiet disk is bounded with its cost printed beside the figures."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import REPO

ENV = {**os.environ, "PYTHONPATH": str(REPO)}


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
