"""Every option that names a file a command writes (`--out`, `--report`, `--manifest`, `--report-dir`, slice's
OUT) goes through one check before anything is written (rawroot.require_output): a release task JSON or a built
image of DATA_BASEDIR is never replaced, a link is never written through or over, a folder or FIFO is no file;
a new name, and a file of the results folder, are fine. (The raw root's case: tests/cli/test_raw_root_sealed.py.)"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from conftest import demo_config_file
from digests import tree_digests
from preprocess.cli import main
from preprocess.formats.pngio import encode_png

TASK_JSON = "2D_Task/APTOS/APTOS_test.json"
BUILT_PNG = "2D_Images/APTOS/test_images/000c1434d8d7.png"


@pytest.fixture
def tree(demo, tmp_path):
    """The demo with one image built by hand at a built image's place, and its config (results apart)."""
    data = demo / "DATA_BASEDIR"
    png = data / BUILT_PNG
    png.parent.mkdir(parents=True, exist_ok=True)
    png.write_bytes(encode_png(np.full((4, 4), 7, np.uint8)))
    (tmp_path / "results").mkdir()
    return demo, data, demo_config_file(demo, tmp_path / "c.yaml"), tmp_path / "results"


# command line, with {out} for the file the option names; each writes one file
FILE_OPTIONS = {
    "convert --manifest": ["convert", "2D_Task/APTOS", "--manifest", "{out}"],
    "validate --report": ["validate", "{data}", "--subset", "2D_Task/APTOS", "--report", "{out}"],
    "attest --out": ["attest", "{data}", "--out", "{out}"],
    "attest --compare --out": ["attest", "{data}", "--compare", "{data}/none.tsv", "--out", "{out}"],
    "register --out": ["register", "aptos2019", "--out", "{out}"],
}


def _run(argv: list[str], tree, out: Path) -> int:
    _, data, config, results = tree
    argv = [a.format(out=out, data=data) for a in argv]
    return main([*argv, "--config", str(config), "--results", str(results)])


@pytest.mark.parametrize("command", FILE_OPTIONS)
@pytest.mark.parametrize("existing", [TASK_JSON, BUILT_PNG])
def test_an_option_naming_a_release_or_built_file_is_refused_and_the_file_kept(tree, capsys, command, existing):
    demo, data, _, _ = tree
    before = tree_digests(demo)
    assert _run(FILE_OPTIONS[command], tree, data / existing) == 2
    err = capsys.readouterr().err
    option = FILE_OPTIONS[command][-2]
    assert err.startswith(f"error: {option} {data / existing} is an existing file of DATA_BASEDIR {data}")
    assert "never replaces a file it did not write" in err and "Pass a new file name, or one in the results" in err
    assert "unexpected" not in err and tree_digests(demo) == before


@pytest.mark.parametrize("command", FILE_OPTIONS)
def test_an_option_naming_a_link_is_refused_and_its_target_untouched(tree, tmp_path, capsys, command):
    demo = tree[0]
    outside = tmp_path / "outside.txt"
    outside.write_text("mine")
    link = tmp_path / "out.link"
    link.symlink_to(outside)
    before = tree_digests(demo)
    assert _run(FILE_OPTIONS[command], tree, link) == 2
    err = capsys.readouterr().err
    option = FILE_OPTIONS[command][-2]
    assert err.startswith(f"error: {option} {link} is a symbolic link to {outside}: the pipeline writes nothing")
    assert f"pass the place itself ({outside}) or another name" in err
    assert link.is_symlink() and outside.read_text() == "mine" and tree_digests(demo) == before


@pytest.mark.parametrize("command", FILE_OPTIONS)
def test_an_option_naming_a_fifo_or_a_folder_is_no_file(tree, tmp_path, capsys, command):
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    assert _run(FILE_OPTIONS[command], tree, fifo) == 2  # at once: nothing opens it
    assert f"{fifo} is a FIFO (named pipe), not a file; pass a new file name" in capsys.readouterr().err
    assert _run(FILE_OPTIONS[command], tree, tmp_path) == 2
    assert f"{tmp_path} is a folder, not a file" in capsys.readouterr().err


def test_a_new_name_in_data_basedir_and_a_results_file_are_written(tree, capsys):
    _, data, _, results = tree
    argv = FILE_OPTIONS["validate --report"]
    assert _run(argv, tree, data / "report.json") == 1  # 1: APTOS is not built; the report is written
    assert '"subsets"' in (data / "report.json").read_text()
    again = results / "report.json"
    again.write_text("an earlier report")
    assert _run(argv, tree, again) == 1
    assert '"subsets"' in again.read_text()  # replaced: the user named it, outside the release's files
    assert "error" not in capsys.readouterr().err


# --- options naming a folder: the folder and each file written into it ------------------------------------

FOLDER_OPTIONS = {
    "eval-config --out": (["eval-config", "{data}", "--out", "{out}"], "2D_Task.yaml"),
    "check --report-dir": (["check", "--source", "aptos2019", "--report-dir", "{out}"], "aptos2019.json"),
}


@pytest.mark.parametrize("command", FOLDER_OPTIONS)
def test_a_folder_option_refuses_a_link_the_folder_or_a_file_in_it(tree, tmp_path, capsys, command):
    demo, data, _, _ = tree
    argv, name = FOLDER_OPTIONS[command]
    option = argv[-2]
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / name).write_text("mine")
    folder_link = tmp_path / "linked"
    folder_link.symlink_to(outside)
    assert _run(argv, tree, folder_link) == 2
    assert f"error: {option} {folder_link} is a symbolic link to {outside}" in capsys.readouterr().err
    real = tmp_path / "real"
    real.mkdir()
    (real / name).symlink_to(outside / name)
    assert _run(argv, tree, real) == 2
    assert f"error: {option} {real / name} is a symbolic link to {outside / name}" in capsys.readouterr().err
    planted = data / "2D_Task" / name  # a file of DATA_BASEDIR where the folder's file would go
    planted.write_text("release")
    before = tree_digests(demo)
    assert _run(argv, tree, data / "2D_Task") == 2
    assert f"error: {option} {planted} is an existing file of DATA_BASEDIR" in capsys.readouterr().err
    assert (outside / name).read_text() == "mine" and tree_digests(demo) == before
    assert _run(argv, tree, tmp_path / "fresh") in (0, 1)  # a new folder is fine (check: 1 when not present)
    assert (tmp_path / "fresh" / name).is_file()


def test_slice_refuses_a_link_among_its_pngs(tmp_path, capsys):
    import nibabel as nib

    volume = tmp_path / "v.nii.gz"
    nib.save(nib.Nifti1Image(np.arange(4 * 4 * 3, dtype=np.int16).reshape(4, 4, 3), np.eye(4)), volume)
    out = tmp_path / "slices"
    assert main(["slice", str(volume), str(out), "--count", "2"]) == 0
    first = sorted(out.iterdir())[0]
    first.unlink()
    secret = tmp_path / "secret.txt"
    secret.write_text("mine")
    first.symlink_to(secret)
    assert main(["slice", str(volume), str(out), "--count", "2"]) == 2
    assert f"error: OUT {first} is a symbolic link to {secret}" in capsys.readouterr().err
    assert secret.read_text() == "mine"


def test_slice_names_a_fifo_or_a_folder_given_as_its_volume_and_never_waits(tmp_path, capsys):
    """The input's neighbour of the output checks: a FIFO as FILE was called 'does not exist'."""
    fifo = tmp_path / "v.nii.gz"
    os.mkfifo(fifo)
    assert main(["slice", str(fifo), str(tmp_path / "out")]) == 2  # at once: nothing opens it
    said = ": give the path of a .nii, .nii.gz, .nrrd or .npy file\n"
    assert capsys.readouterr().err == f"error: {fifo} is a FIFO (named pipe), not a volume file{said}"
    assert main(["slice", str(tmp_path), str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == f"error: {tmp_path} is a folder, not a volume file{said}"
    assert not (tmp_path / "out").exists()
