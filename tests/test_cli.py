"""The command line: list, info, convert errors."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import demo_config_file
from preprocess.cli import main


def test_list_shows_56_subsets(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "56 subsets, 107 task files, 39 sources" in out
    assert main(["list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 56
    kvasir = next(r for r in rows if r["subset"] == "2D_Task/Kvasir")
    assert kvasir == {
        "subset": "2D_Task/Kvasir",
        "kind": "image_folder+image_folder",  # the test images by rule, the train images by the release's records
        "sources": "kvasir_v2",
        "access": "open",
        "image_root": "2D_Images/kvasir-dataset/datasets/test/",
        "tasks": 3,
    }


def test_module_entry_point_runs():
    done = subprocess.run(
        [sys.executable, "-m", "preprocess", "list", "--json"], capture_output=True, text=True, check=True
    )
    assert len(json.loads(done.stdout)) == 56


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


def test_docs_subset_table_matches_the_registry(capsys):
    from conftest import REPO

    assert main(["list", "--markdown"]) == 0
    table = capsys.readouterr().out.strip()
    assert table in (REPO / "docs" / "conversions" / "subsets.md").read_text(encoding="utf-8")


def test_docs_naming_table_matches_the_registry(capsys):
    from conftest import REPO

    assert main(["list", "--naming"]) == 0
    table = capsys.readouterr().out.strip()
    page = (REPO / "docs" / "conversions" / "subsets.md").read_text(encoding="utf-8")
    block = page.split("<!-- naming table: python -m preprocess list --naming -->\n")[1]
    assert block.split("\n<!-- end of naming table -->")[0] == table
    assert "| 2D_Task/BloodMNIST | npz_unpack_2d | split_dir `output_images/{split}`; folder `{label}`; name" in table
