"""`medheb download` and `allow_download` against local servers only (tests/hubserver.py): a Zenodo-style file
server through pooch, and the Hugging Face Hub's routes through huggingface_hub (HF_ENDPOINT). Only needed
files are fetched, hashes are checked, a dropped transfer resumes, a bad hash places nothing, a gated dataset's
401 names the page to accept, and a second run fetches nothing."""

from __future__ import annotations

import hashlib
import os
import time

import pytest
import yaml
from hubserver import TRICKLE, Site, serve

from conftest import demo_config_file
from preprocess.cli import main
from preprocess.errors import RawDataError, UnsafePathError
from preprocess.rawdata.fetch import fetch_url, limits
from preprocess.rawdata.partfile import open_part, part_of
from preprocess.rawdata.rawcheck import check_all
from preprocess.registry.config import settings_from_dict
from preprocess.registry.loader import load_registry

PAYLOAD = bytes(range(256)) * 4096  # 1 MiB
MD5 = hashlib.md5(PAYLOAD).hexdigest()


def test_a_dropped_transfer_resumes_on_the_next_run(tmp_path):
    site = Site(files={"bloodmnist.npz": PAYLOAD}, drop_after={"bloodmnist.npz": 300_000})
    target = tmp_path / "MedMNIST" / "bloodmnist.npz"
    part = part_of(target)  # .bloodmnist.npz.medheb-download.part
    with serve(site) as url:
        with pytest.raises(RawDataError, match=r"stopped .* run again to resume after \d+ bytes") as stopped:
            fetch_url(f"{url}/bloodmnist.npz", target, MD5, limits(retries=0, timeout=5))
        kept = part.stat().st_size
        assert not target.exists() and 0 < kept <= 300_000 and f"after {kept} bytes" in str(stopped.value)
        assert part.read_bytes() == PAYLOAD[:kept]
        assert fetch_url(f"{url}/bloodmnist.npz", target, MD5, limits(retries=0, timeout=5))
    assert target.read_bytes() == PAYLOAD
    assert site.gets == [("bloodmnist.npz", None), ("bloodmnist.npz", f"bytes={kept}-")]
    assert sorted(p.name for p in target.parent.iterdir()) == ["bloodmnist.npz"]


def test_a_retry_within_one_run_resumes_too(tmp_path):
    site = Site(files={"x.npz": PAYLOAD}, drop_after={"x.npz": 500_000})
    target = tmp_path / "x.npz"
    with serve(site) as url:
        fetch_url(f"{url}/x.npz", target, MD5, limits(retries=1, timeout=5))
    assert target.read_bytes() == PAYLOAD and len(site.gets) == 2 and site.gets[1][1].startswith("bytes=")


def test_a_wrong_md5_is_refused_and_nothing_is_placed(tmp_path):
    target = tmp_path / "MedMNIST" / "bloodmnist.npz"
    refused = pytest.raises(RawDataError, match=r"does not have md5 0{32}.*nothing was placed")
    with serve(Site(files={"x": PAYLOAD})) as url, refused:
        fetch_url(f"{url}/x", target, "0" * 32, limits(retries=0, timeout=5))
    assert list(target.parent.iterdir()) == []


# --- nothing is written through a link (issue 39 item 1) -----------------------------------------------------


def _download_config(tmp_path, url: str, **values) -> tuple[str, object]:
    """A config whose BloodMNIST file is served at `url`, with an empty raw root; (config, the raw folder)."""
    config = tmp_path / "c.yaml"
    values = {
        "raw_root": str(tmp_path / "raw"),
        "data_basedir": str(tmp_path / "data"),
        "subsets": ["2D_Task/BloodMNIST"],
        "registry_overrides": _medmnist_overrides(tmp_path, url),
        **values,
    }
    config.write_text(yaml.safe_dump(values))
    (tmp_path / "raw" / "MedMNIST").mkdir(parents=True, exist_ok=True)
    (tmp_path / "data").mkdir(exist_ok=True)
    return str(config), tmp_path / "raw" / "MedMNIST"


def _plant(kind: str, part, outside) -> None:
    """`part` made a link to the outside file (soft or hard), a FIFO or a folder."""
    if kind == "symlink":
        part.symlink_to(outside)
    elif kind == "hard link":
        os.link(outside, part)
    elif kind == "fifo":
        os.mkfifo(part)
    else:
        part.mkdir()


@pytest.mark.parametrize(
    ("kind", "said"),
    [
        ("symlink", "is a symbolic link to "),
        ("hard link", "is a file with 2 names (hard links)"),
        ("fifo", "is a FIFO (named pipe)"),
        ("folder", "is a folder"),
    ],
)
def test_a_part_file_that_is_a_link_or_no_regular_file_is_refused_and_named(tmp_path, capsys, kind, said):
    outside = tmp_path / "elsewhere.bin"
    outside.write_bytes(b"mine")
    site = Site(files={"bloodmnist.npz": PAYLOAD})
    with serve(site) as url:
        config, folder = _download_config(tmp_path, url)
        part = part_of(folder / "bloodmnist.npz")
        _plant(kind, part, outside)
        assert main(["download", "medmnist", "--config", config]) == 2
    err = capsys.readouterr().err
    assert f"error: {part} {said}" in err and f"Delete it (rm {part}" in err and "unexpected" not in err
    assert outside.read_bytes() == b"mine" and site.gets == []  # refused before anything was asked for
    assert not (folder / "bloodmnist.npz").exists()
    assert part.is_symlink() if kind == "symlink" else os.path.lexists(part)  # what the user made stays


def test_a_target_name_that_is_a_link_is_never_replaced(tmp_path, capsys):
    outside = tmp_path / "elsewhere" / "x.npz"  # a dangling link: no file there yet
    site = Site(files={"bloodmnist.npz": PAYLOAD})
    with serve(site) as url:
        config, folder = _download_config(tmp_path, url)
        (folder / "bloodmnist.npz").symlink_to(outside)
        assert main(["download", "medmnist", "--config", config]) == 2
    err = capsys.readouterr().err
    assert f"{folder / 'bloodmnist.npz'} is a symbolic link to {outside}: nothing is written through a link" in err
    assert (folder / "bloodmnist.npz").is_symlink() and not outside.parent.exists() and site.gets == []


def test_a_folder_link_below_the_source_folder_is_refused_before_any_byte(tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    root = tmp_path / "raw" / "Source"
    root.mkdir(parents=True)
    (root / "sub").symlink_to(outside)
    with serve(Site(files={"x.npz": PAYLOAD})) as url, pytest.raises(UnsafePathError) as refused:
        fetch_url(f"{url}/x.npz", root / "sub" / "x.npz", MD5, limits(timeout=5), root=root)
    assert str(refused.value).startswith(f"{root / 'sub'} is a symbolic link to {outside}: nothing is written")
    assert list(outside.iterdir()) == []


def test_a_source_folder_that_is_a_link_is_where_the_source_lives(tmp_path, capsys):
    elsewhere = tmp_path / "disk2" / "medmnist"
    elsewhere.mkdir(parents=True)
    with serve(Site(files={"bloodmnist.npz": PAYLOAD})) as url:
        config, folder = _download_config(tmp_path, url)
        folder.rmdir()
        folder.symlink_to(elsewhere)  # the configuration saying where this download lives, as raw_root does
        assert main(["download", "medmnist", "--config", config]) == 0, capsys.readouterr().err
    assert (elsewhere / "bloodmnist.npz").read_bytes() == PAYLOAD
    assert sorted(p.name for p in elsewhere.iterdir()) == ["bloodmnist.npz"]


def test_the_final_name_is_never_taken_over_a_link_or_a_file_that_appeared(tmp_path):
    """The race the look before a download cannot close: the name taken while the bytes came."""
    from preprocess.formats.fsutil import place_new

    root = tmp_path / "Source"
    root.mkdir()
    part, target, outside = root / "x.npz.part", root / "x.npz", tmp_path / "outside.npz"
    part.write_bytes(PAYLOAD[:10])
    target.symlink_to(outside)
    with pytest.raises(UnsafePathError, match=rf"^{target} is a symbolic link to {outside}: nothing is written"):
        place_new(part, target, root)
    target.unlink()
    target.write_bytes(b"theirs")
    with pytest.raises(UnsafePathError, match=rf"^{target} appeared while it was downloaded: it is kept as it is"):
        place_new(part, target, root)
    assert target.read_bytes() == b"theirs" and part.read_bytes() == PAYLOAD[:10] and not outside.exists()


# --- every stream has a bound (issue 39 item 7) -------------------------------------------------------------


def test_an_endless_body_stops_at_the_size_bound_and_leaves_nothing(tmp_path):
    site = Site(files={"x.npz": b""}, endless={"x.npz"})
    target = tmp_path / "Source" / "x.npz"
    refused = pytest.raises(RawDataError, match=r"holds more than 4194304 bytes \(more came\).*download_max_bytes")
    started = time.monotonic()
    with serve(site) as url, refused:
        fetch_url(f"{url}/x.npz", target, MD5, limits(max_bytes=4 << 20, timeout=5, retries=0))
    assert time.monotonic() - started < 10
    assert list(target.parent.iterdir()) == []  # no .part, no temporary file


def test_an_endless_body_stops_at_the_deadline_too(tmp_path):
    site = Site(files={"x.npz": b""}, endless={"x.npz"})
    target = tmp_path / "Source" / "x.npz"
    started = time.monotonic()
    with serve(site) as url, pytest.raises(RawDataError, match=r"did not finish within download_deadline, 2 s"):
        fetch_url(f"{url}/x.npz", target, MD5, limits(deadline=2, timeout=5, retries=0))
    assert 2 <= time.monotonic() - started < 8
    part = part_of(target)
    kept = sorted(p.name for p in target.parent.iterdir())  # the first bytes the server sent, and their record
    assert kept == [".x.npz.medheb-download.claim", ".x.npz.medheb-download.part"]
    assert 0 < part.stat().st_size <= limits().max_bytes and set(part.read_bytes()) == {0}


def test_a_trickle_stops_at_the_deadline_the_user_can_raise_and_the_part_resumes(tmp_path, capsys):
    site = Site(files={"bloodmnist.npz": PAYLOAD}, trickle={"bloodmnist.npz"})
    with serve(site) as url:
        config, folder = _download_config(tmp_path, url, download_deadline=3)
        started = time.monotonic()
        assert main(["download", "medmnist", "--config", config]) == 2
        took = time.monotonic() - started
        err = capsys.readouterr().err
        part = part_of(folder / "bloodmnist.npz")
        assert 3 <= took < 3 + 2 * TRICKLE + 2, took
        kept = part.stat().st_size
        assert f"did not finish within download_deadline, 3 s for one file: {kept} bytes came, kept in {part}" in err
        assert "raise download_deadline in the config (seconds per file)" in err and "unexpected" not in err
        assert 1 <= kept <= 3 and part.read_bytes() == PAYLOAD[:kept]
        site.trickle.clear()
        assert main(["download", "medmnist", "--config", config]) == 0
    assert site.gets[-1] == ("bloodmnist.npz", f"bytes={kept}-")
    assert sorted(p.name for p in folder.iterdir()) == ["bloodmnist.npz"]
    assert (folder / "bloodmnist.npz").read_bytes() == PAYLOAD


def test_an_npz_stops_at_the_most_its_registry_counts_allow_and_a_true_copy_passes(tmp_path, capsys):
    """The registry's sizes where known: an .npz entry's counts and shapes bound its download far below
    download_max_bytes (64 GiB): 5 RGB images of 224 px (the default variant), uint8, and 5 labels of at most
    8 bytes; 1% for deflate; 6 arrays of a 10,012-byte .npy header and a 1 KiB zip entry; 1 MiB to spare."""
    npz = {"dims": 2, "channels": 3, "labels": 1, "counts": {"train": 2, "val": 1, "test": 2}}
    arrays = 5 * 224 * 224 * 3 + 5 * 8
    most = arrays + arrays // 100 + 6 * (10_012 + 1024) + (1 << 20)  # 1,874,998 bytes
    site = Site(files={"bloodmnist.npz": b""}, endless={"bloodmnist.npz"})
    with serve(site) as url:
        config, folder = _download_config(tmp_path, url)
        _medmnist_overrides(tmp_path, url, npz)  # the same file, now with the npz entry
        assert main(["download", "medmnist", "--config", config]) == 2
    err = capsys.readouterr().err
    said = f"{url}/bloodmnist.npz holds more than {most} bytes (more came), the most it may have (its arrays as "
    assert said + "the registry counts them): what came is not the file, and nothing of it was kept" in err
    assert "Check source_variants" in err and "unexpected" not in err and list(folder.iterdir()) == []
    with serve(Site(files={"bloodmnist.npz": PAYLOAD})) as url:  # 1 MiB: within the bound
        config, folder = _download_config(tmp_path, url)
        _medmnist_overrides(tmp_path, url, npz)
        assert main(["download", "medmnist", "--config", config]) == 0, capsys.readouterr().err
    assert (folder / "bloodmnist.npz").read_bytes() == PAYLOAD


def test_a_part_larger_than_the_file_can_be_is_started_over(tmp_path):
    target = tmp_path / "Source" / "x.npz"
    target.parent.mkdir()
    site = Site(files={"x.npz": PAYLOAD[:1000]})
    with serve(site) as url:
        with open_part(part_of(target), target.parent, f"{url}/x.npz", target) as leftover:  # one of ours
            leftover.write(b"\xff" * 2000)
        assert fetch_url(f"{url}/x.npz", target, hashlib.md5(PAYLOAD[:1000]).hexdigest(), limits(max_bytes=1500))
    assert target.read_bytes() == PAYLOAD[:1000] and site.gets == [("x.npz", None)]


def _medmnist_overrides(tmp_path, url: str, npz: dict | None = None) -> str:
    """MedMNIST with two files served here (paths without the size suffix; `npz`: their registry description)."""
    files = [{"id": f.id, "path": list(f.paths)} for f in load_registry().source("medmnist").files]
    served = {
        flag: {
            "id": flag,
            "path": f"{flag}.npz",
            "md5": MD5,
            "url": f"{url}/{flag}.npz",
            **({"npz": npz} if npz else {}),
        }
        for flag in ("bloodmnist", "chestmnist")
    }
    overrides = tmp_path / "overrides.yaml"
    overrides.write_text(yaml.safe_dump({"sources": {"medmnist": {"files": [served.get(f["id"], f) for f in files]}}}))
    return str(overrides)


def test_check_downloads_only_when_allowed(tmp_path):
    site = Site(files={"bloodmnist.npz": PAYLOAD, "chestmnist.npz": PAYLOAD})
    with serve(site) as url:
        values = {
            "raw_root": str(tmp_path / "raw"),
            "data_basedir": str(tmp_path / "data"),
            "subsets": "all",
            "registry_overrides": _medmnist_overrides(tmp_path, url),
        }
        settings = settings_from_dict(values)
        assert check_all(settings.registry(), settings, ["medmnist"], None)["medmnist"].status == "missing"
        assert site.gets == []
        settings = settings_from_dict({**values, "allow_download": True})
        check = check_all(settings.registry(), settings, ["medmnist"], None)["medmnist"]
    assert check.file_ok("bloodmnist") and not check.file_ok("pathmnist")  # no URL given for that one here
    assert (tmp_path / "raw" / "MedMNIST" / "bloodmnist.npz").read_bytes() == PAYLOAD


def test_check_with_allow_download_refuses_a_linked_part_file_too(tmp_path):
    outside = tmp_path / "elsewhere.bin"
    outside.write_bytes(b"mine")
    site = Site(files={"bloodmnist.npz": PAYLOAD, "chestmnist.npz": PAYLOAD})
    with serve(site) as url:
        values = {
            "raw_root": str(tmp_path / "raw"),
            "data_basedir": str(tmp_path / "data"),
            "registry_overrides": _medmnist_overrides(tmp_path, url),
            "allow_download": True,
        }
        part = part_of(tmp_path / "raw" / "MedMNIST" / "bloodmnist.npz")
        part.parent.mkdir(parents=True)
        part.symlink_to(outside)
        settings = settings_from_dict(values)
        with pytest.raises(UnsafePathError, match=rf"^{part} is a symbolic link to {outside}: nothing is written"):
            check_all(settings.registry(), settings, ["medmnist"], None)
    assert outside.read_bytes() == b"mine" and part.is_symlink() and ("bloodmnist.npz", None) not in site.gets


def test_download_fetches_only_the_needed_zenodo_files_once(tmp_path, capsys):
    site = Site(files={"bloodmnist.npz": PAYLOAD, "chestmnist.npz": PAYLOAD})
    with serve(site) as url:
        config = tmp_path / "c.yaml"
        config.write_text(
            yaml.safe_dump(
                {
                    "raw_root": str(tmp_path / "raw"),
                    "data_basedir": str(tmp_path / "data"),
                    "subsets": ["2D_Task/BloodMNIST"],
                    "registry_overrides": _medmnist_overrides(tmp_path, url),
                }
            )
        )
        (tmp_path / "raw").mkdir()
        (tmp_path / "data").mkdir()
        assert main(["download", "medmnist", "--config", str(config)]) == 0
        assert site.gets == [("bloodmnist.npz", None)]  # BloodMNIST reads bloodmnist.npz alone
        assert main(["download", "medmnist", "--config", str(config)]) == 0
        assert site.gets == [("bloodmnist.npz", None)]  # the second run fetched nothing
    assert "  medmnist: 1 of 1 needed files present\n" in capsys.readouterr().out
    assert sorted(p.name for p in (tmp_path / "raw" / "MedMNIST").iterdir()) == ["bloodmnist.npz"]


# --- Hugging Face ------------------------------------------------------------------------------------------

CT_RATE = "ibrahimhamamci/CT-RATE"


@pytest.fixture(autouse=True)
def online(monkeypatch):
    """Offline mode off for these tests: huggingface_hub reads HF_HUB_OFFLINE once, at its import, and a test that
    loads the demo's task files with `datasets` (offline) may have imported it first in this process."""
    import huggingface_hub.constants

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)


@pytest.fixture
def hub(demo, monkeypatch):
    """The demo's CT-RATE folder served as the Hub's dataset (every file of it, needed or not)."""
    raw = demo / "raw" / "CT-RATE"
    files = {p.relative_to(raw).as_posix(): p.read_bytes() for p in sorted(raw.rglob("*")) if p.is_file()}
    site = Site(repos={CT_RATE: files})
    with serve(site) as url:
        monkeypatch.setenv("HF_ENDPOINT", url)
        monkeypatch.delenv("HF_TOKEN", raising=False)
        monkeypatch.setenv("HF_HUB_DISABLE_XET", "1")
        yield site, files


def _empty_raw_config(demo, tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    return demo_config_file(demo, tmp_path / "c.yaml", raw_root=str(raw)), raw / "CT-RATE"


NEEDED = [  # splits: test: the volumes whose slices the demo's CT-RATE task files name, and the metadata
    "dataset/metadata/validation_metadata.csv",
    "dataset/valid_fixed/valid_1/valid_1_a/valid_1_a_1.nii.gz",
    "dataset/valid_fixed/valid_2/valid_2_a/valid_2_a_1.nii.gz",
    "dataset/valid_fixed/valid_2/valid_2_b/valid_2_b_1.nii.gz",
]


def test_hub_download_fetches_only_the_needed_files_verified_and_once(hub, demo, tmp_path, capsys):
    site, files = hub
    config, target = _empty_raw_config(demo, tmp_path)
    # a dropped transfer resumes from the last byte that came: they are written as they arrive
    site.drop_after[f"{CT_RATE}/{NEEDED[1]}"] = 5000
    assert main(["download", "ct_rate", "--config", str(config)]) == 0, capsys.readouterr().err
    fetched = sorted({name.removeprefix(f"{CT_RATE}/") for name, _ in site.gets})
    assert fetched == NEEDED and len(files) > len(NEEDED)  # the _2 reconstructions and the train split stay
    asked = [ranges for name, ranges in site.gets if name == f"{CT_RATE}/{NEEDED[1]}"]
    assert asked == [None, "bytes=5000-"]
    held = {p.relative_to(target).as_posix(): p.read_bytes() for p in target.rglob("*") if p.is_file()}
    assert held == {name: files[name] for name in NEEDED}  # nothing else: no .part is left
    gets = len(site.gets)
    assert main(["download", "ct_rate", "--config", str(config)]) == 0
    assert len(site.gets) == gets  # a second run fetches nothing
    out = capsys.readouterr().out
    assert "  ct_rate: 4 of 4 needed files present\n" in out
    needed, whole = sum(len(files[n]) for n in NEEDED), sum(map(len, files.values()))
    assert f"{CT_RATE}: 4 needed files, {needed} bytes, of the dataset's {len(files)} files, {whole} bytes" in out


def test_hub_file_with_another_hash_is_refused_and_nothing_placed(hub, demo, tmp_path, capsys):
    site, _ = hub
    site.corrupt.add(NEEDED[2])
    config, target = _empty_raw_config(demo, tmp_path)
    assert main(["download", "ct_rate", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert f"downloaded {CT_RATE}/{NEEDED[2]} has hash" in err and "nothing was placed" in err
    assert not (target / NEEDED[2]).exists()
    assert not list(target.rglob("*valid_2_a_1.nii.gz"))  # not even in the staging folder


def test_a_gated_dataset_says_which_conditions_to_accept(hub, demo, tmp_path, capsys):
    site, _ = hub
    site.gated.add(CT_RATE)
    config, target = _empty_raw_config(demo, tmp_path)
    assert main(["download", "ct_rate", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert "HTTP 401" in err and f"accept the conditions on https://huggingface.co/datasets/{CT_RATE}" in err
    assert not target.exists() or not any(p.is_file() for p in target.rglob("*"))


def test_offline_mode_is_named_with_what_to_do(demo, tmp_path, capsys, monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    config, _ = _empty_raw_config(demo, tmp_path)
    assert main(["download", "ct_rate", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert f"{CT_RATE}: Hugging Face's offline mode is on" in err and "unset it" in err and "make room" not in err


def test_an_unreachable_hub_is_one_line(demo, tmp_path, capsys, monkeypatch):
    with serve(Site()) as url:  # a port that was served and is closed now
        pass
    monkeypatch.setenv("HF_ENDPOINT", url)
    config, _ = _empty_raw_config(demo, tmp_path)
    assert main(["download", "ct_rate", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert f"{CT_RATE}: cannot reach the Hub" in err and "run again" in err and "unexpected" not in err


def test_credentialed_sites_get_the_commands_to_run(tmp_path):
    from preprocess.rawdata.fetch import commands

    registry = load_registry()
    assert commands(registry.source("vindr_cxr"), "/r", "v.txt", "my.yaml") == [
        "medheb need vindr_cxr --urls --config my.yaml > v.txt",
        "wget -N -c -x -nH --cut-dirs=3 --user <your PhysioNet user> --ask-password -i v.txt -P '/r/vindr-cxr'",
    ]
    (competition,) = commands(registry.source("aptos2019"), "/r", "a.txt")
    assert competition.startswith("kaggle competitions download -c aptos2019-blindness-detection -p '/r/")
    (dataset,) = commands(registry.source("brain_tumor_mri"), "/r", "b.txt")
    assert dataset.startswith("kaggle datasets download -d masoudnickparvar/brain-tumor-mri-dataset -p '/r/")


# --- the Hub's files: never through a link, never more than listed (issue 39 items 7, 8) -------------------


def _outside_folder(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    return outside


def test_a_folder_link_on_the_way_to_a_hub_file_is_refused_before_anything_is_fetched(hub, demo, tmp_path, capsys):
    site, _ = hub
    outside = _outside_folder(tmp_path)
    config, target = _empty_raw_config(demo, tmp_path)
    target.mkdir()
    (target / "dataset").symlink_to(outside)
    assert main(["download", "ct_rate", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert f"error: {target / 'dataset'} is a symbolic link to {outside}: nothing is written through a link" in err
    assert "Delete it" in err and "unexpected" not in err
    assert site.gets == [] and sorted(p.name for p in outside.iterdir()) == ["keep.txt"]


def test_a_staging_folder_left_as_a_link_is_never_written_through(hub, demo, tmp_path, capsys):
    """Earlier versions staged Hub files in <raw>/<source>/.medheb-download/: one that is a link out of the raw
    root is not used (nothing is staged: each file comes into its own .part) and stays as it is."""
    _, files = hub
    outside = _outside_folder(tmp_path)
    config, target = _empty_raw_config(demo, tmp_path)
    target.mkdir()
    (target / ".medheb-download").symlink_to(outside)
    assert main(["download", "ct_rate", "--config", str(config)]) == 0, capsys.readouterr().err
    assert sorted(p.name for p in outside.iterdir()) == ["keep.txt"]
    assert (target / ".medheb-download").is_symlink()
    held = {p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file() and not p.is_symlink()}
    assert held == set(NEEDED) and all((target / n).read_bytes() == files[n] for n in NEEDED)


def test_a_hub_file_longer_than_listed_is_refused_and_nothing_kept(hub, demo, tmp_path, capsys):
    site, files = hub
    site.longer.add(NEEDED[2])
    config, target = _empty_raw_config(demo, tmp_path)
    assert main(["download", "ct_rate", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    size = len(files[NEEDED[2]])
    said = f"{CT_RATE}/{NEEDED[2]} holds more than {size} bytes (it announces {size + 1024}), the most it may have"
    assert said in err and "(the size the Hub lists)" in err and "nothing of it was kept" in err
    assert not list(target.rglob("valid_2_a_1.nii.gz*"))


def test_a_trickling_hub_file_stops_at_the_deadline(hub, demo, tmp_path, capsys):
    site, _ = hub
    site.trickle.add(f"{CT_RATE}/{NEEDED[0]}")
    raw = tmp_path / "raw"
    raw.mkdir()
    config = demo_config_file(demo, tmp_path / "c.yaml", raw_root=str(raw), download_deadline=2)
    started = time.monotonic()
    assert main(["download", "ct_rate", "--config", str(config)]) == 2
    assert time.monotonic() - started < 2 + 2 * TRICKLE + 3
    err = capsys.readouterr().err
    assert f"download of {CT_RATE}/{NEEDED[0]} did not finish within download_deadline, 2 s" in err
    part = part_of(raw / "CT-RATE" / NEEDED[0])
    assert f"kept in {part}" in err and 1 <= part.stat().st_size <= 2


def test_a_cut_hub_file_is_replaced_by_name_never_written_through(hub, demo, tmp_path, capsys):
    _, files = hub
    outside = tmp_path / "outside.csv"
    outside.write_bytes(b"cut")
    config, target = _empty_raw_config(demo, tmp_path)
    (target / NEEDED[0]).parent.mkdir(parents=True)
    os.link(outside, target / NEEDED[0])  # a hard link: writing into the name would change the outside file
    assert main(["download", "ct_rate", "--config", str(config)]) == 0, capsys.readouterr().err
    assert f"{NEEDED[0]}: 3 bytes there, the Hub lists {len(files[NEEDED[0]])}: fetching it again" in (
        capsys.readouterr().out
    )
    assert (target / NEEDED[0]).read_bytes() == files[NEEDED[0]] and outside.read_bytes() == b"cut"
