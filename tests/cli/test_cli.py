"""The command line: list, info, convert errors."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

from conftest import DEMO_LEFT_OUT, REPO, demo_config_file
from preprocess.cli import main
from preprocess.registry.loader import EXTRA_REGISTRY_ENV, load_registry


@pytest.mark.registry_wide
def test_list_shows_every_subset(capsys):
    registry = load_registry()  # held to the benchmark's layout tree by tests/unit/registry/test_registry.py
    tasks = sum(len(s.tasks) for s in registry.subsets)
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert f"{len(registry.subsets)} subsets, {tasks} task files, {len(registry.sources)} sources" in out
    assert main(["list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [row["subset"] for row in rows] == [s.key for s in registry.subsets]
    assert sum(row["tasks"] for row in rows) == tasks
    kvasir = next(r for r in rows if r["subset"] == "2D_Task/Kvasir")
    assert kvasir == {
        "subset": "2D_Task/Kvasir",
        "kind": "image_folder+image_folder",  # the test images by rule, the train images by the release's records
        "sources": "kvasir_v2",
        "access": "open",
        "image_root": "2D_Images/kvasir-dataset/datasets/test/",
        "tasks": 3,
    }


@pytest.mark.registry_wide
def test_module_entry_point_runs():
    done = subprocess.run(
        [sys.executable, "-m", "preprocess", "list", "--json"], capture_output=True, text=True, check=True
    )
    assert len(json.loads(done.stdout)) == len(load_registry().subsets)


def test_info_on_a_source_prints_instructions(capsys):
    assert main(["info", "vindr_cxr"]) == 0
    out = capsys.readouterr().out
    assert "access: credential-gated" in out
    assert "used by: 2D_Task/VindrCXR" in out
    assert "1. Sign in to PhysioNet" in out


def test_info_on_an_ambiguous_name_fails_clearly(capsys):
    assert main(["info", "ChexpertPlus"]) == 2
    assert "ambiguous: it matches 2D_Task/ChexpertPlus, Text_Task/ChexpertPlus" in capsys.readouterr().err


def test_convert_one_subset_outside_snakemake(demo, tmp_path, capsys):
    code = main(
        [
            "convert",
            "ISIC-2019",
            "--raw-root",
            str(demo / "raw"),
            "--data-basedir",
            str(demo / "DATA_BASEDIR"),
            "--config",
            str(_config(demo, tmp_path)),
            "--results",
            str(tmp_path / "results"),
        ]
    )
    assert code == 0
    assert "manifest:" in capsys.readouterr().out
    root = demo / "DATA_BASEDIR" / "2D_Images" / "ISIC-2019" / "test" / "ISIC_2019_Test_Input"
    assert sorted(p.name for p in root.iterdir()) == ["ISIC_0034321.jpg", "ISIC_0034322.jpg", "ISIC_0034323.jpg"]


def test_bad_shard_and_unknown_subset(demo, tmp_path, capsys):
    config = str(_config(demo, tmp_path))
    assert main(["convert", "APTOS", "--config", config, "--shard", "3/2"]) == 2
    assert "--shard takes I/N" in capsys.readouterr().err
    assert main(["convert", "APTO", "--config", config]) == 2
    assert "unknown subset 'APTO' (did you mean APTOS" in capsys.readouterr().err


def _config(demo, tmp_path):
    return demo_config_file(demo, tmp_path / "config.yaml")


# The documentation describes the registry as this package ships it: these read it without the additions of
# an extra registry folder (the suite's run with tests/data/new_subset has one).


def test_docs_subset_table_matches_the_registry(capsys, monkeypatch):
    monkeypatch.delenv(EXTRA_REGISTRY_ENV, raising=False)
    assert main(["list", "--markdown"]) == 0
    table = capsys.readouterr().out.strip()
    page = (REPO / "docs" / "conversions" / "subsets.md").read_text(encoding="utf-8")
    block = page.split("<!-- generated: subsets -->\n")[1]
    assert block.split("\n<!-- end: subsets -->")[0] == table


def test_docs_naming_table_matches_the_registry(capsys, monkeypatch):
    monkeypatch.delenv(EXTRA_REGISTRY_ENV, raising=False)
    assert main(["list", "--naming"]) == 0
    table = capsys.readouterr().out.strip()
    page = (REPO / "docs" / "conversions" / "subsets.md").read_text(encoding="utf-8")
    block = page.split("<!-- generated: naming -->\n")[1]
    assert block.split("\n<!-- end: naming -->")[0] == table
    assert "| 2D_Task/BloodMNIST | npz_unpack_2d | split_dir `output_images/{split}`; folder `{label}`; name" in table


def _tables_script():
    spec = importlib.util.spec_from_file_location("doc_tables", REPO / "docs" / "tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_docs_figures_and_tables_are_what_the_shipped_registry_gives():
    done = subprocess.run(
        [sys.executable, str(REPO / "docs" / "tables.py"), "--check"], capture_output=True, text=True, cwd=REPO
    )
    assert done.returncode == 0, done.stderr
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    figures = ("subsets", "task-files", "release-shipped", "demo-built", "demo-from-release", "demo-not-built")
    for name in figures:  # the README's figures are marked
        assert f"<!-- count: {name} -->" in readme, name


def test_a_hand_edited_figure_or_table_row_is_caught():
    tables = _tables_script()
    counts, generated = tables.facts()
    shipped = load_registry(extras=False)
    assert counts["subsets"] == str(len(shipped.subsets)) and counts["sources"] == str(len(shipped.sources))
    text = [subset for subset in shipped.subsets if subset.is_text]
    assert counts["demo-built"] == str(len(shipped.subsets) - len(text) - len(DEMO_LEFT_OUT))
    assert counts["release-shipped"] == "46"  # the card: every subset but the ten it may not redistribute
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert tables.fill(readme, counts, generated) == readme
    marked = f"<!-- count: subsets -->{counts['subsets']}<!-- /count -->"
    edited = readme.replace(marked, "<!-- count: subsets -->55<!-- /count -->", 1)
    assert edited != readme and tables.fill(edited, counts, generated) == readme
    page = (REPO / "docs" / "conversions" / "subsets.md").read_text(encoding="utf-8")
    row = next(line for line in page.splitlines() if line.startswith("| 2D_Task/APTOS | image_folder | aptos2019 |"))
    assert tables.fill(page.replace(row + "\n", "", 1), counts, generated) == page  # a row deleted by hand
    with pytest.raises(ValueError, match="no generated figure 'subset'"):
        tables.fill("<!-- count: subset -->1<!-- /count -->", counts, generated)
