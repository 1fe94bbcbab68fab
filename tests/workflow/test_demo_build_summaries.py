"""The demo built by the workflow as `make demo` builds it (issue 29; the session's shared build, read only): plan's
estimates against it, validate's verdict, the build's closing counts, and the README's dry run piped into head."""

from __future__ import annotations

import collections
import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import DEMO_LEFT_OUT, REPO
from preprocess.demo import RELEASE, releases

ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def _cli(*args: str, cwd: Path, umask: int | None = None) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "preprocess", *args]
    set_umask = None if umask is None else (lambda: os.umask(umask))
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=ENV, preexec_fn=set_umask)


def _last_line(text: str) -> str:
    return text.strip().splitlines()[-1]


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
    rows = [row for row in json.loads(done.stdout) if row["stage"] == "convert"]  # the other stages' rows besides
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
    not_built = f"{len(DEMO_LEFT_OUT)} subsets not built (what to download: results/not-built.md):"
    assert not_built in printed
    assert all(f"  {key}: not built: {reason}" in printed for key, reason in DEMO_LEFT_OUT.items())


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
