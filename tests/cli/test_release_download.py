"""`medheb download release` against a local stand-in of the Hugging Face Hub (tests/hubserver.py, HF_ENDPOINT),
run as a user runs it: a subprocess, in a folder without the checkout's config.yaml. The default takes the task
files and Train_Data only; --subset adds a subset's images; a second run fetches nothing; a file already in
DATA_BASEDIR is never replaced; a partial file or a release folder linked out of DATA_BASEDIR, a path that
climbs out, a gated repository, a corrupt download, offline mode and an unreachable Hub each stop with what to
do, and nothing is written where it does not belong."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import hubserver
import numpy as np
import pytest
import yaml
from hubserver import Site, serve
from PIL import Image

from conftest import REPO
from preprocess.cli import main

SAMPLE = "MEDHEB/MedHEB-Bench_Sample"  # the config's default release_repo, the public reviewer sample


def _png(value: int) -> bytes:
    out = io.BytesIO()
    Image.fromarray(np.full((4, 4), value, np.uint8)).save(out, format="PNG")
    return out.getvalue()


def _records(*paths: str) -> bytes:
    return json.dumps([{"image": p, "question": "Grade?", "answer": "0"} for p in paths]).encode()


TASKS = {  # the task files of three groups, as the release names them
    "2D_Task/APTOS/APTOS_test.json": _records("0a1b.png"),
    "2D_Task/APTOS/APTOS_i2i_test.json": _records("0a1b.png", "1c2d.png"),
    "2D_Task/BloodMNIST/BloodMNIST_test.json": _records("basophil/0.png"),
    "3D_Task/CT_RATE/CT_RATE_test.json": _records("valid_1_a_1/0.png"),
    "Text_Task/PubMedQA/PubMedQA_test.json": json.dumps([{"question": "q", "answer": "yes"}]).encode(),
}
TRAIN = {
    "Train_Data/2D_Task/APTOS/APTOS_train.jsonl": b'{"images": ["2D_Images/APTOS/train_images/9z.png"]}\n',
    "Train_Data/2D_Task/BloodMNIST/BloodMNIST_train.jsonl": b'{"images": ["2D_Images/BloodMNIST/x.png"]}\n',
}
APTOS_IMAGES = {
    "2D_Images/APTOS/train_images/0a1b.png": _png(10),
    "2D_Images/APTOS/train_images/1c2d.png": _png(20),
    "2D_Images/APTOS/train_images/9z.png": _png(30),
}
OTHER_IMAGES = {
    "2D_Images/BloodMNIST/output_images/test/basophil/0.png": _png(40),
    "3D_Images/CT_RATE/LICENSE_NOTICE.md": b"# CT_RATE: images not included\n",  # a restricted subset's folder
}
RELEASE = {**TASKS, **TRAIN, **APTOS_IMAGES, **OTHER_IMAGES, "README.md": b"# the card\n", ".gitattributes": b""}


@pytest.fixture
def hub(tmp_path, monkeypatch):
    """The release served as the Hub's dataset SAMPLE, its PNGs as LFS files (the listing gives their SHA-256,
    as the Hub does for binary files)."""
    monkeypatch.setattr(hubserver, "LFS_SUFFIXES", (*hubserver.LFS_SUFFIXES, ".png"))
    site = Site(repos={SAMPLE: dict(RELEASE)})
    with serve(site) as url:
        yield site, url


@pytest.fixture
def data(tmp_path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    return folder


def _run(tmp_path, url: str, *args: str, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "HF_TOKEN", "TRANSFORMERS_OFFLINE")}
    environ |= {"PYTHONPATH": str(REPO), "HF_ENDPOINT": url, "HF_HUB_DISABLE_XET": "1"}
    environ |= {"HF_HOME": str(tmp_path / "hf-home"), **env}  # no token or cache of the machine's user
    command = [sys.executable, "-m", "preprocess", "download", "release", "--data-basedir", "data", *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, env=environ, timeout=120)


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _fetched(site: Site) -> list[str]:
    return sorted(name.removeprefix(f"{SAMPLE}/") for name, _ in site.gets)


def test_the_default_takes_the_task_files_and_train_data_only(hub, data, tmp_path):
    site, url = hub
    done = _run(tmp_path, url)
    assert done.returncode == 0, done.stderr
    assert _tree(data) == {**TASKS, **TRAIN}  # no image, no card, no partial file left
    assert _fetched(site) == sorted({**TASKS, **TRAIN})
    size = sum(map(len, {**TASKS, **TRAIN}.values()))
    assert f"7 files fetched ({size} bytes), 0 already there, 0 kept with other bytes" in done.stdout
    assert "Traceback" not in done.stderr


def test_a_subset_brings_its_images_and_a_second_run_fetches_nothing(hub, data, tmp_path):
    site, url = hub
    done = _run(tmp_path, url, "--subset", "APTOS")
    assert done.returncode == 0, done.stderr
    aptos = {k: v for k, v in {**TASKS, **TRAIN}.items() if "/APTOS/" in k}
    assert sorted(aptos) == [  # its task folder, its Train_Data file, its image folder; nothing of the others
        "2D_Task/APTOS/APTOS_i2i_test.json",
        "2D_Task/APTOS/APTOS_test.json",
        "Train_Data/2D_Task/APTOS/APTOS_train.jsonl",
    ]
    assert _tree(data) == {**aptos, **APTOS_IMAGES}
    gets = len(site.gets)
    again = _run(tmp_path, url, "--subset", "2D_Task/APTOS")
    assert again.returncode == 0, again.stderr
    assert len(site.gets) == gets and _tree(data) == {**aptos, **APTOS_IMAGES}
    assert "0 files fetched (0 bytes), 6 already there, 0 kept with other bytes" in again.stdout


def test_include_patterns_and_subsets_add_up(hub, data, tmp_path):
    _, url = hub
    done = _run(tmp_path, url, "--include", "*_Task/**", "--include", "Train_Data/**", "--subset", "CT_RATE")
    assert done.returncode == 0, done.stderr
    notice = "3D_Images/CT_RATE/LICENSE_NOTICE.md"  # all a restricted subset's image folder holds
    assert _tree(data) == {**TASKS, **TRAIN, notice: OTHER_IMAGES[notice]}
    only = _run(tmp_path, url, "--include", "2D_Images/BloodMNIST/")  # a folder, as allow_patterns reads it
    assert only.returncode == 0, only.stderr
    assert (data / "2D_Images/BloodMNIST/output_images/test/basophil/0.png").read_bytes() == _png(40)
    assert "1 files fetched" in only.stdout


def test_a_file_already_there_with_other_bytes_is_kept_and_named(hub, data, tmp_path):
    site, url = hub
    mine = data / "2D_Images/APTOS/train_images/1c2d.png"
    mine.parent.mkdir(parents=True)
    mine.write_bytes(_png(21))  # same size, another pixel value: this pipeline's rebuild, say
    longer = data / "2D_Task/APTOS/APTOS_test.json"
    longer.parent.mkdir(parents=True)
    longer.write_bytes(b"[]  ")
    same = data / "2D_Images/APTOS/train_images/0a1b.png"
    same.write_bytes(_png(10))
    done = _run(tmp_path, url, "--subset", "APTOS")
    assert done.returncode == 1
    assert mine.read_bytes() == _png(21) and longer.read_bytes() == b"[]  " and same.read_bytes() == _png(10)
    size = len(_png(20))
    assert f"  2D_Images/APTOS/train_images/1c2d.png: {size} bytes here and in the release, other bytes" in done.stdout
    released = len(TASKS["2D_Task/APTOS/APTOS_test.json"])
    assert f"  2D_Task/APTOS/APTOS_test.json: 4 bytes here, {released} in the release\n" in done.stdout
    assert "3 files fetched" in done.stdout and "1 already there, 2 kept with other bytes" in done.stdout
    assert "2 files already in" in done.stderr and "never overwrites a file there" in done.stderr
    assert "0a1b.png" not in " ".join(_fetched(site)) and "1c2d.png" not in " ".join(_fetched(site))
    assert (data / "2D_Images/APTOS/train_images/9z.png").read_bytes() == _png(30)  # the rest is fetched


def test_a_link_at_a_release_name_is_kept_and_nothing_is_written_through_it(hub, data, tmp_path):
    _, url = hub
    outside = tmp_path / "mine.png"
    outside.write_bytes(b"not the release's")
    link = data / "2D_Images/APTOS/train_images/9z.png"
    link.parent.mkdir(parents=True)
    link.symlink_to(outside)
    done = _run(tmp_path, url, "--subset", "APTOS")
    assert done.returncode == 1
    assert f"  2D_Images/APTOS/train_images/9z.png: a link to {outside}, not a file" in done.stdout
    assert link.is_symlink() and outside.read_bytes() == b"not the release's"
    assert "5 files fetched" in done.stdout and "1 kept with other bytes" in done.stdout


def test_a_partial_file_linked_out_of_data_basedir_is_refused(hub, data, tmp_path):
    _, url = hub
    outside = tmp_path / "outside.json"
    outside.write_bytes(b"mine")
    (data / "2D_Task" / "APTOS").mkdir(parents=True)
    part = data / "2D_Task" / "APTOS" / ".APTOS_test.json.medheb-download.part"  # the download's own name
    part.symlink_to(outside)
    done = _run(tmp_path, url)
    assert done.returncode == 2
    assert f"{part} is a symbolic link to {outside}" in done.stderr and f"rm {part}" in done.stderr
    assert "unexpected" not in done.stderr and "Traceback" not in done.stderr
    assert outside.read_bytes() == b"mine" and part.is_symlink()  # nothing written through it, left as it was
    assert not (data / "2D_Task" / "APTOS" / "APTOS_test.json").exists()


def test_a_release_folder_linked_out_of_data_basedir_is_refused_before_any_download(hub, data, tmp_path):
    site, url = hub
    outside = tmp_path / "raw-copy"
    outside.mkdir()
    (data / "2D_Images").mkdir()
    (data / "2D_Images/APTOS").symlink_to(outside)
    done = _run(tmp_path, url, "--subset", "APTOS")
    assert done.returncode == 2
    assert f"{data / '2D_Images/APTOS'} is a link to {outside}, outside DATA_BASEDIR" in done.stderr
    assert list(outside.iterdir()) == [] and site.gets == [] and _tree(data) == {}


def test_a_listed_path_that_climbs_out_is_refused(hub, data, tmp_path):
    site, url = hub
    site.repos[SAMPLE]["Text_Task/../../escaped.json"] = b"[]"
    done = _run(tmp_path, url)
    assert done.returncode == 2
    assert "Text_Task/../../escaped.json" in done.stderr and "climbs out" in done.stderr
    assert not (tmp_path / "escaped.json").exists() and site.gets == [] and _tree(data) == {}


def test_a_gated_release_says_to_sign_in_and_accept_its_conditions(hub, data, tmp_path):
    site, url = hub
    site.gated.add(SAMPLE)
    done = _run(tmp_path, url)
    assert done.returncode == 2
    assert f"{SAMPLE}/2D_Task/APTOS/APTOS_i2i_test.json: HTTP 401, access refused. Sign in" in done.stderr
    assert f"accept the conditions on https://huggingface.co/datasets/{SAMPLE}" in done.stderr
    assert "Traceback" not in done.stderr and _tree(data) == {}
    assert [p for p in data.rglob("*") if not p.is_dir()] == []  # no partial file (its folder may stay)


def test_a_corrupt_download_is_not_placed(hub, data, tmp_path):
    site, url = hub
    site.corrupt.update({"2D_Task/APTOS/APTOS_test.json", "2D_Images/APTOS/train_images/0a1b.png"})
    done = _run(tmp_path, url, "--subset", "APTOS")
    assert done.returncode == 2
    assert f"downloaded {SAMPLE}/2D_Images/APTOS/train_images/0a1b.png has hash" in done.stderr
    assert "nothing was placed" in done.stderr
    assert not (data / "2D_Images/APTOS/train_images/0a1b.png").exists()
    assert not list(data.rglob("*.part"))
    site.corrupt.discard("2D_Images/APTOS/train_images/0a1b.png")  # the LFS file (SHA-256) above, a blob id here
    done = _run(tmp_path, url, "--subset", "APTOS")
    assert done.returncode == 2 and f"downloaded {SAMPLE}/2D_Task/APTOS/APTOS_test.json has hash" in done.stderr
    assert not (data / "2D_Task/APTOS/APTOS_test.json").exists()
    assert (data / "2D_Images/APTOS/train_images/0a1b.png").read_bytes() == _png(10)


def test_offline_mode_and_an_unreachable_hub_say_what_to_do(data, tmp_path):
    with serve(Site()) as url:  # a port that was served and is closed now
        pass
    offline = _run(tmp_path, url, HF_HUB_OFFLINE="1")
    assert offline.returncode == 2
    assert f"{SAMPLE}: Hugging Face's offline mode is on" in offline.stderr and "unset it" in offline.stderr
    down = _run(tmp_path, url)
    assert down.returncode == 2 and f"{SAMPLE}: cannot reach the Hub" in down.stderr
    for done in (offline, down):
        assert "unexpected" not in done.stderr and "Traceback" not in done.stderr
    assert list(data.iterdir()) == []


def test_the_repository_comes_from_the_config_or_repo(hub, data, tmp_path):
    site, url = hub
    site.repos["someone/MedHEB-Bench"] = {"Text_Task/MedMCQA/MedMCQA_test.json": b"[1]"}
    site.repos["someone/other"] = {"Text_Task/MedMCQA/MedMCQA_test.json": b"[2]"}
    config = tmp_path / "my.yaml"
    config.write_text(yaml.safe_dump({"data_basedir": "data", "release_repo": "someone/MedHEB-Bench"}))
    done = _run(tmp_path, url, "--config", str(config))
    assert done.returncode == 0, done.stderr
    assert _tree(data) == {"Text_Task/MedMCQA/MedMCQA_test.json": b"[1]"}
    (data / "Text_Task/MedMCQA/MedMCQA_test.json").unlink()
    done = _run(tmp_path, url, "--config", str(config), "--repo", "someone/other", "--revision", "main")
    assert done.returncode == 0, done.stderr
    assert _tree(data) == {"Text_Task/MedMCQA/MedMCQA_test.json": b"[2]"}
    bad = _run(tmp_path, url, "--repo", "https://huggingface.co/datasets/x")
    assert bad.returncode == 2 and "release_repo" in bad.stderr and "Traceback" not in bad.stderr


def test_a_selection_that_matches_nothing_is_named(hub, data, tmp_path):
    site, url = hub
    done = _run(tmp_path, url, "--include", "4D_Task/**")
    assert done.returncode == 2 and f"{SAMPLE} (commit {hubserver.COMMIT}) has no file that 4D_Task/** selects" in (
        done.stderr
    )
    assert site.gets == [] and list(data.iterdir()) == []


def test_release_options_belong_to_release_alone(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["download", "--help"])
    assert "Without --include or --subset: the task files" in " ".join(capsys.readouterr().out.split())
    assert main(["download", "release", "medmnist", "--data-basedir", str(tmp_path)]) == 2
    assert "`release` is downloaded by itself" in capsys.readouterr().err
    assert main(["download", "medmnist", "--include", "*.json", "--data-basedir", str(tmp_path)]) == 2
    assert "--include: options of `medheb download release` only" in capsys.readouterr().err


def test_hub_hashes_are_those_the_hub_lists(tmp_path):
    """The check a present file passes: git's blob id of a small file, the SHA-256 of an LFS one (by hand)."""
    from types import SimpleNamespace

    from preprocess.rawdata.fetch import hub_hashes

    path = tmp_path / "f"
    path.write_bytes(b"hello\n")
    blob = SimpleNamespace(lfs=None, blob_id="ce013625030ba8dba906f756967f9e9ca394464a")  # `git hash-object`
    assert hub_hashes(path, blob) == (blob.blob_id, blob.blob_id)
    lfs = SimpleNamespace(lfs=SimpleNamespace(sha256=hashlib.sha256(b"hello\n").hexdigest()), blob_id="x")
    assert hub_hashes(path, lfs)[1] == "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
