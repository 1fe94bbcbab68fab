"""Image-folder arrangement and the symlink farm: names, links, idempotence, refusals."""

from __future__ import annotations

import os

import pytest

from conftest import demo_settings
from preprocess.errors import OutputConflictError, RawDataError
from preprocess.pipeline import steps


def _convert(settings, subset, results=None):
    return steps.Build(settings, results=results).convert(subset=subset)


def test_image_folder_links_every_file_with_its_name(settings, demo, tmp_path):
    written = _convert(settings, "2D_Task/APTOS", tmp_path / "results")
    root = demo / "DATA_BASEDIR" / "2D_Images" / "APTOS" / "train_images"
    raw = demo / "raw" / "aptos2019-blindness-detection" / "train_images"
    assert sorted(os.listdir(root)) == sorted(os.listdir(raw))
    for name in os.listdir(raw):
        assert os.path.samefile(root / name, raw / name)  # hard link: no second copy on disk
    assert [row[0] for row in written] == sorted(f"2D_Images/APTOS/train_images/{n}" for n in os.listdir(raw))
    manifest = (tmp_path / "results" / "convert" / "2D_Task" / "APTOS" / "image_folder.0-of-1.tsv").read_text()
    assert manifest.splitlines()[0] == "path\tkind\tdetail"
    assert len(manifest.splitlines()) == 1 + len(os.listdir(raw))


def test_class_folders_and_double_nesting(settings, demo):
    _convert(settings, "Brain-Tumor-MRI")
    root = demo / "DATA_BASEDIR" / "2D_Images" / "Brain-Tumor-MRI" / "datasets" / "Testing"
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*.jpg")) == [
        "glioma/Te-glTr_0007.jpg",
        "glioma/Te-gl_0010.jpg",
        "meningioma/Te-me_0018.jpg",
        "notumor/Te-no_0011.jpg",
        "pituitary/Te-pi_0012.jpg",
    ]
    _convert(settings, "REtinal")  # Test_Set/Test_Set/Test upstream; Training names collide and stay out
    retinal = demo / "DATA_BASEDIR" / "2D_Images" / "REtinal" / "Test_Set" / "Test"
    assert sorted(os.listdir(retinal)) == ["1.png", "2.png", "3.png"]
    assert os.path.samefile(
        retinal / "1.png", demo / "raw" / "retinal-disease-classification" / "Test_Set" / "Test_Set" / "Test" / "1.png"
    )


def test_rerun_rewrites_nothing(settings, demo):
    _convert(settings, "lc25000")
    root = demo / "DATA_BASEDIR" / "2D_Images" / "lc25000" / "lung_colon_image_set" / "Test_Set"
    before = {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in root.rglob("*.jpeg")}
    assert len(before) == 5
    _convert(settings, "lc25000")
    assert {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in root.rglob("*.jpeg")} == before


def test_existing_different_file_is_not_overwritten(settings, demo):
    target = demo / "DATA_BASEDIR" / "2D_Images" / "APTOS" / "train_images" / "6cd606dc52e9.png"
    target.parent.mkdir(parents=True)
    target.write_bytes(b"release bytes")
    _convert(settings, "APTOS")  # kept and compared (issue 41): the manifest row says how
    assert target.read_bytes() == b"release bytes"
    _convert(demo_settings(demo, overwrite_existing=True), "APTOS")
    assert target.read_bytes() != b"release bytes"


def test_existing_identical_copy_is_kept(settings, demo):
    raw = demo / "raw" / "aptos2019-blindness-detection" / "train_images" / "6cd606dc52e9.png"
    target = demo / "DATA_BASEDIR" / "2D_Images" / "APTOS" / "train_images" / "6cd606dc52e9.png"
    target.parent.mkdir(parents=True)
    target.write_bytes(raw.read_bytes())
    inode = target.stat().st_ino
    _convert(settings, "APTOS")
    assert target.stat().st_ino == inode


def test_duplicate_names_in_raw_are_refused(settings, demo):
    twin = demo / "raw" / "lc25000" / "second" / "lung_colon_image_set" / "lung_image_sets" / "lung_n"
    twin.mkdir(parents=True)
    (twin / "lungn2.jpeg").write_bytes(b"x")
    with pytest.raises(RawDataError, match=r"would both become 'lung_n/lungn2.jpeg'.*extracted twice"):
        _convert(settings, "lc25000")


def test_sharding_splits_items_deterministically(settings, demo, tmp_path):
    registry = settings.registry()
    first = steps.Build(settings, registry, results=tmp_path).convert(subset="Kvasir", shards=3)
    second = steps.Build(settings, registry, results=tmp_path).convert(subset="Kvasir", shard=1, shards=3)
    third = steps.Build(settings, registry, results=tmp_path).convert(subset="Kvasir", shard=2, shards=3)
    names = [row[0] for part in (first, second, third) for row in part]
    assert len(names) == len(set(names)) == 8
    assert [len(first), len(second), len(third)] == [3, 3, 2]


def test_missing_raw_stops_with_instructions(settings):
    with pytest.raises(RawDataError, match=r"(?s)2D_Task/USData: not built.*How to get usdata.*Google Drive link"):
        _convert(settings, "USData")


def test_symlink_farm_links_files_and_p10_to_p19(settings, demo):
    _convert(settings, "MIMIC-CXR-Report")
    root = demo / "DATA_BASEDIR" / "2D_Images" / "MIMIC-CXR-Report"
    files = demo / "raw" / "mimic-cxr-jpg" / "files"
    assert sorted(os.listdir(root)) == ["files"] + [f"p{n}" for n in range(10, 20)]
    assert os.readlink(root / "p10") == str(files.resolve() / "p10")
    assert (root / "p10" / "p10000032" / "s50414267").is_dir()
    before = {name: os.lstat(root / name).st_mtime_ns for name in os.listdir(root)}
    _convert(settings, "MIMIC-CXR-Report")  # idempotent
    assert {name: os.lstat(root / name).st_mtime_ns for name in os.listdir(root)} == before


def test_symlink_farm_reports_wrong_link_and_real_folder(settings, demo, tmp_path):
    root = demo / "DATA_BASEDIR" / "2D_Images" / "MIMIC-CXR-T"
    root.mkdir(parents=True)
    os.symlink(tmp_path, root / "p10")
    with pytest.raises(OutputConflictError, match=r"p10 is a link to .*, not to .*remove that link yourself"):
        _convert(settings, "MIMIC-CXR-T")
    os.unlink(root / "p10")
    (root / "p11").mkdir()
    (root / "p11" / "keep.txt").write_text("mine")
    with pytest.raises(OutputConflictError, match=r"p11 is a real folder .*never deletes it"):
        _convert(settings, "MIMIC-CXR-T")
    assert (root / "p11" / "keep.txt").read_text() == "mine"


def test_raw_root_is_not_written(settings, demo, tmp_path):
    def snapshot():
        return {p: (p.stat().st_mtime_ns, p.stat().st_size) for p in (demo / "raw").rglob("*")}

    before = snapshot()
    for subset in ("APTOS", "ISIC-2019", "Kvasir", "MIMIC-CXR-VQA", "2D_Task/ChexpertPlus"):
        _convert(settings, subset, tmp_path)
    assert snapshot() == before


def test_a_rerun_after_a_kill_removes_its_own_leftover_temporary_files(settings, demo, capsys):
    root = demo / "DATA_BASEDIR" / "2D_Images" / "APTOS" / "train_images"
    root.mkdir(parents=True)
    own = root / ".000c1434d8d7.png.medheb-image_folder-0of1.part"  # what a killed run of this job left
    other = root / ".0024cdab0c1e.png.medheb-image_folder-1of2.part"  # another shard's file in progress
    own.write_bytes(b"half")
    other.write_bytes(b"half")
    locks = demo / "DATA_BASEDIR" / ".medheb-locks"
    locks.mkdir()
    (locks / "2D_Task__APTOS__image_folder.0-of-1.lock").write_text("running\n")  # it did not finish
    _convert(settings, "APTOS")
    assert not own.exists() and other.exists()
    assert "removed 1 temporary files an interrupted run left" in capsys.readouterr().out
    assert not locks.exists()  # the job's lock went with it, and with the last lock their folder
