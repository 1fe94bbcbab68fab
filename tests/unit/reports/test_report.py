"""What users see: the Snakemake report with its tables and contact sheets, and the status table."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from conftest import DEMO_LEFT_OUT, REPO, demo_config_file, front_page_counts, report_front_page
from preprocess.cli import main
from preprocess.registry.loader import load_registry
from preprocess.reports.contact import grid_size


@pytest.fixture(scope="module")
def built(built_demo):
    """The session's demo build with the Snakemake report added (nothing else in it changes)."""
    workdir = built_demo.workdir
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(workdir)]
    done = subprocess.run([*command, "--report", str(workdir / "report.html")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-4000:]
    return workdir


def test_report_holds_every_table_and_a_contact_sheet_per_built_subset(built):
    html = (built / "report.html").read_text(encoding="utf-8")
    plan = json.loads((built / "results" / "plan.json").read_text())
    image_subsets = [p["subset"] for p in plan if p["action"] == "build"]
    assert len(image_subsets) >= 40
    for marker in ("1. Raw downloads", "2. Validation", "3. Contact sheets", "sources.tsv", "summary.tsv"):
        assert marker in html, marker
    for page in ("sources.html", "summary.html"):  # shown inline by the report, unlike the TSV downloads
        assert page in html, page
    for subset in image_subsets:
        group, folder = subset.split("/")
        assert f"{folder}.png" in html, subset
        sheet = built / "results" / "report" / "contact" / group / f"{folder}.png"
        with Image.open(sheet) as image:
            image.verify()
        with Image.open(sheet) as image:
            width, height = image.size
        images = _images_of(built, group, folder)
        assert (width, height) == grid_size(min(16, len(images)), 4, 128), subset
        if images:  # every tile holds an image: no blank sheet (link farms included)
            with Image.open(sheet) as image:
                tiles = np.asarray(image.convert("L"))[:128, : 128 * min(4, len(images))]
            for column in range(min(4, len(images))):
                assert (tiles[:, column * 128 : (column + 1) * 128] < 250).sum() > 100, (subset, column)


def _images_of(built, group: str, folder: str) -> set:
    """The distinct image files a subset's manifests name: files it wrote, and images under links it made."""
    found = set()
    for manifest in (built / "results" / "convert" / group / folder).glob("*.tsv"):
        for line in manifest.read_text().splitlines()[1:]:
            path, kind, _ = line.split("\t", 2)
            target = built / "demo" / "DATA_BASEDIR" / path
            if kind == "file" and path.lower().endswith((".png", ".jpg", ".jpeg")):
                found.add(target.resolve())
            elif kind == "symlink":
                found |= {p.resolve() for p in target.resolve().rglob("*") if p.suffix.lower() in (".png", ".jpg")}
    return found


def test_link_farm_sheets_show_the_linked_images_with_their_folders(built):
    from preprocess.reports.contact import caption

    sheet = built / "results" / "report" / "contact" / "2D_Task" / "MIMIC-CXR-T.png"
    with Image.open(sheet) as image:
        pixels = np.asarray(image.convert("L"))
    assert len(_images_of(built, "2D_Task", "MIMIC-CXR-T")) >= 3
    assert (pixels[:128, :384] < 250).sum() > 1000  # three tiles of radiographs, not a white sheet
    folder, name = caption("2D_Images/BloodMNIST/output_images/test/basophil/test_000000.png")
    assert folder.endswith("/basophil/") and name == "test_000000.png"  # the class folder stays readable
    folder, name = caption("p10/p10000032/s50414267/02aa804e-bde0afdd-112c0b34-7bc16630-4e384014.jpg")
    assert folder.endswith("/s50414267/") and name.startswith("02aa") and name.endswith(".jpg")


def test_sources_table_lists_every_checked_source(built):
    rows = (built / "results" / "check" / "sources.tsv").read_text().splitlines()
    assert rows[0] == "source\tstatus\taccess\tproblems\tinstructions"
    states = {row.split("\t")[0]: row.split("\t")[1] for row in rows[1:]}
    sources = load_registry().sources
    assert sorted(states) == sorted(sources) and states["aptos2019"] == "present" and states["usdata"] == "missing"
    page = (built / "results" / "check" / "sources.html").read_text()
    assert page.count("<tr>") == 1 + len(sources)
    assert '<td>usdata</td><td style="background:#fee2e2">missing</td>' in page
    assert f"{sum(v == 'present' for v in states.values())} of {len(sources)} raw downloads present" in page


def test_validation_page_has_a_row_per_task_file(built):
    rows = json.loads((built / "results" / "validation" / "summary.json").read_text())["files"]
    page = (built / "results" / "validation" / "summary.html").read_text()
    assert page.count("<tr>") == 1 + len(rows)
    assert f"{len(rows)} of {len(rows)} task files resolve every path" in page
    first = rows[0]
    assert f'<td>{first["file"]}</td><td class="n">{first["records"]}</td>' in page


@pytest.mark.registry_wide
def test_status_of_the_built_demo(built, capsys, monkeypatch):
    monkeypatch.chdir(built)  # the config's relative paths are relative to the working directory
    code = main(
        [
            "status",
            str(built / "demo" / "DATA_BASEDIR"),
            "--config",
            str(built / "config.yaml"),
            "--results",
            str(built / "results"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith(("2D_Task", "3D_Task", "Text"))}
    subsets = [s.key for s in load_registry().subsets]
    assert sorted(lines) == sorted(subsets)
    assert " built " in lines["2D_Task/APTOS"] + " "
    assert (
        "not built: raw missing" in lines["2D_Task/USData"]
        and "python -m preprocess info usdata" in lines["2D_Task/USData"]
    )
    # every subset the demo holds raw data for is built; those it leaves out on purpose are not, each with why
    for subset, reason in DEMO_LEFT_OUT.items():
        assert f"not built: {reason}" in lines[subset], lines[subset]
    # a text subset's task files are the release's own: nothing of it is built
    text = [key for key in subsets if key.startswith("Text_Task/")]
    assert all(" from the release " in lines[key] + " " for key in text)
    assert [key for key in subsets if " built " not in lines[key] + " " and key not in text] == list(DEMO_LEFT_OUT)
    built, left_out = len(subsets) - len(text) - len(DEMO_LEFT_OUT), len(DEMO_LEFT_OUT)
    assert out.strip().splitlines()[-1] == f"{built} built, {len(text)} from the release, {left_out} not built"


def test_validate_and_status_without_config_agree_with_the_build(built, monkeypatch, capsys):
    """From the workdir, as the README says: ./config.yaml is read (the MIMIC-CXR links are allowed)."""
    summary = json.loads((built / "results" / "validation" / "summary.json").read_text())
    monkeypatch.chdir(built)
    assert main(["validate", "demo/DATA_BASEDIR"]) == 0
    out = capsys.readouterr().out
    assert len(re.findall(r"  ok$", out, re.M)) == len(summary["files"]) and " FAIL" not in out
    assert main(["status", "demo/DATA_BASEDIR"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    plan = json.loads((built / "results" / "plan.json").read_text())
    built_count = sum(p["action"] == "build" for p in plan)
    released = sum(p["action"] in ("validate", "release") for p in plan)  # text subsets: the release's files
    assert last == f"{built_count} built, {released} from the release, {len(plan) - built_count - released} not built"


def test_front_page_numbers_match_the_summary(built):
    front = report_front_page((built / "report.html").read_text(encoding="utf-8"))
    plan = json.loads((built / "results" / "plan.json").read_text())
    summary = json.loads((built / "results" / "validation" / "summary.json").read_text())
    failed_subsets = {row["subset"] for row in summary["files"] if row["ok"] != row["paths"] or row["bad_records"]}
    planned = [p["subset"] for p in plan if p["action"] != "skip"]
    released = {p["subset"] for p in plan if p["action"] in ("validate", "release")}
    assert front_page_counts(front) == {
        "built": len([s for s in planned if s not in failed_subsets and s not in released]),
        "from_release": len([s for s in planned if s not in failed_subsets and s in released]),
        "not_built": len(plan) - len(planned),
        "failed": len(failed_subsets),
        "bad_items": len(summary["skipped_items"]),
    }
    ok = sum(row["ok"] == row["paths"] and not row["bad_records"] for row in summary["files"])
    assert f"{ok} of {len(summary['files'])} task files resolve" in front
    for line in summary["not_built"]:  # every subset not built, with its reason
        subset, reason = line.split(": not built: ")
        assert f"<td>{subset}</td><td>{reason}</td>" in front
    assert "Config of this build" in front and "registry_overrides: demo/registry-overrides.yaml" in front
    for path in ("results/check/sources.html", "results/validation/summary.tsv"):  # links open the tables
        assert f"app.showResultInfo('{path}')" in front


def test_status_with_one_source_removed(demo, capsys, tmp_path):
    config = demo_config_file(demo, tmp_path / "config.yaml")
    shutil.rmtree(demo / "raw" / "brain-tumor-mri-dataset")
    main(["status", str(demo / "DATA_BASEDIR"), "--config", str(config), "--results", str(tmp_path / "r")])
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith("2D_Task/Brain-Tumor-MRI"))
    assert "not built: raw missing" in line and "python -m preprocess info brain_tumor_mri" in line
    aptos = next(line for line in out.splitlines() if line.startswith("2D_Task/APTOS "))
    assert "not built" in aptos and "snakemake --cores 8" in aptos  # raw present, not converted yet


def _pixels_near(shot: np.ndarray, rgb: tuple[int, int, int], tolerance: int = 8) -> int:
    return int((np.abs(shot.astype(int) - np.array(rgb)).max(axis=-1) <= tolerance).sum())


@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Debian's chromium package (make chromium)")
def test_screenshots_show_each_view_of_the_report(built, tmp_path):
    script = [sys.executable, str(REPO / "docs" / "screenshots.py"), "--workdir", str(built), "--out", str(tmp_path)]
    subprocess.run(script, check=True, capture_output=True)
    shots = {p.stem: np.asarray(Image.open(p).convert("RGB")) for p in tmp_path.glob("*.png")}
    views = {
        "overview",
        "raw-downloads",
        "validation",
        "contact-sheet-ct-rate",
        "contact-sheet-vindr-cxr",
        "contact-sheet-mimic-cxr-t",
    }
    assert set(shots) == views
    assert all(shot.shape == (900, 1400, 3) for shot in shots.values())
    green, header_grey = (0xD1, 0xFA, 0xE5), (0xF3, 0xF4, 0xF6)  # 'present' cells, table header
    assert _pixels_near(shots["raw-downloads"], green) > 10_000  # the sources table is open, statuses tinted
    assert _pixels_near(shots["validation"], header_grey, 3) > 8_000 and _pixels_near(shots["validation"], green) == 0
    for sheet in ("contact-sheet-ct-rate", "contact-sheet-vindr-cxr"):  # images fill the main pane
        assert (shots[sheet][:, 470:].mean(axis=-1) < 100).sum() > 10_000, sheet
    assert (shots["contact-sheet-mimic-cxr-t"][:, 470:].mean(axis=-1) < 200).sum() > 2_000  # the linked images
    # the first page is the build summary: its green verdict bar and its four count cards
    assert _pixels_near(shots["overview"], green) > 15_000
