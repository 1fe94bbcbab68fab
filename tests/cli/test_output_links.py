"""A folder inside DATA_BASEDIR that is a symbolic link out of it (into the raw root, or to any other folder)
carries no write of `convert` with it, for every kind of output: images (PathVQA's parquet_records,
BloodMNIST's npz unpacking), a volume's slice folder (CT-RATE), hard links (Kvasir's train split, M3D). The
job stops with a one-line error naming the link, and the bytes outside DATA_BASEDIR are unchanged. `validate`
calls no image under such a link valid (issue 36, item 2)."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import demo_values
from preprocess import cli

OUTSIDE = None  # a link to a folder outside both DATA_BASEDIR and the raw root

CASES = [
    # (subset, the link under DATA_BASEDIR, its target: a folder of the raw root or OUTSIDE, config values)
    ("2D_Task/PathVQA", "2D_Images/PathVQA/test_images/liver", "path-vqa", {}),  # the case
    ("2D_Task/PathVQA", "2D_Images/PathVQA/test_images/liver", OUTSIDE, {}),
    ("2D_Task/BloodMNIST", "2D_Images/BloodMNIST", "MedMNIST", {}),  # a subset's whole image root
    ("3D_Task/CT_RATE", "3D_Images/CT_RATE/valid_fixed_sliced/valid_1_a", "CT-RATE", {}),  # one volume's slices
    ("3D_Task/CT_RATE", "3D_Images/CT_RATE/valid_fixed_sliced", OUTSIDE, {}),
    ("2D_Task/Kvasir", "2D_Images/kvasir-dataset/datasets/train/polyps", "kvasir-dataset", {"splits": "all"}),
    ("2D_Task/Kvasir", "2D_Images/kvasir-dataset/datasets/test", OUTSIDE, {}),
    ("3D_Task/M3D", "3D_Images/M3D", OUTSIDE, {}),  # hard links of whole volume files
]


def _bytes_state(folder: Path, skip: tuple[Path, ...]) -> dict:
    """Every entry under folder but the skipped ones, links not followed: a file by its bytes' digest and
    mode, a link by its target."""
    found = {}
    for root, folders, names in os.walk(folder):
        folders[:] = [name for name in folders if Path(root, name) not in skip]
        for name in folders + names:
            path = Path(root, name)
            if path.is_symlink():
                found[str(path)] = ("link", os.readlink(path))
            elif path.is_file():
                found[str(path)] = ("file", hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mode)
            else:
                found[str(path)] = ("folder", path.stat().st_mode)
    return found


def _config(tmp: Path, demo: Path, **values) -> Path:
    config = tmp / "config.json"
    config.write_text(json.dumps({**demo_values(demo), "verify_checksums": False, **values}))
    return config


def _cli(*argv: str) -> tuple[int, str]:
    """cli.main's exit code and everything it printed."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = cli.main(list(argv))
    return code, out.getvalue()


@pytest.mark.parametrize(("subset", "relative", "target", "values"), CASES, ids=lambda v: str(v))
def test_convert_writes_nothing_through_a_folder_link_out_of_data_basedir(
    tmp_path, demo_template, subset, relative, target, values
):
    demo = tmp_path / "demo"
    shutil.copytree(demo_template, demo, symlinks=True)
    data = demo / "DATA_BASEDIR"
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "someone's.png").write_bytes(b"not the pipeline's")
    pointed = outside if target is OUTSIDE else demo / "raw" / target
    link = data / relative
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(pointed, target_is_directory=True)
    config, results = _config(tmp_path, demo, **values), tmp_path / "results"
    skip = (data, results)
    before = _bytes_state(tmp_path, skip)

    code, text = _cli("convert", subset, "--config", str(config), "--results", str(results))

    assert _bytes_state(tmp_path, skip) == before, "something outside DATA_BASEDIR and results changed"
    assert code == 2, text
    assert "Traceback" not in text, text
    errors = [line for line in text.splitlines() if line.startswith("error:")]
    assert errors == [text.rstrip("\n").splitlines()[-1]], text  # one error line, the last one
    assert errors[0].startswith(f"error: {link} is a link to {pointed}, outside DATA_BASEDIR "), errors[0]
    assert link.is_symlink() and os.readlink(link) == str(pointed)  # the user's link is left as it is


def test_validate_calls_no_image_under_a_link_into_the_raw_root_valid(tmp_path, demo_template):
    """A subset's image folder that is a link into the raw root (where an earlier run wrote its images) fails
    validation: every image path under it is unsafe, the link named."""
    demo = tmp_path / "demo"
    shutil.copytree(demo_template, demo, symlinks=True)
    data, raw = demo / "DATA_BASEDIR", demo / "raw"
    config, results = _config(tmp_path, demo), tmp_path / "results"
    code, text = _cli("convert", "2D_Task/BloodMNIST", "--config", str(config), "--results", str(results))
    assert code == 0, text
    moved = raw / "MedMNIST" / "built-BloodMNIST"  # the images as the unguarded writer put them: in the raw root
    shutil.move(data / "2D_Images" / "BloodMNIST", moved)
    (data / "2D_Images" / "BloodMNIST").symlink_to(moved, target_is_directory=True)
    code, text = _cli(
        "validate", str(data), "--config", str(config), "--results", str(results), "--subset", "2D_Task/BloodMNIST"
    )
    assert code != 0, text
    assert "Traceback" not in text, text
    assert "NOT valid" in text, text
    assert f"unsafe: 'basophil/test_000000.png' {data / '2D_Images' / 'BloodMNIST'} is a link" in text, text
    assert f"{data / '2D_Images' / 'BloodMNIST'} is a link to {moved}, outside DATA_BASEDIR" in text, text
