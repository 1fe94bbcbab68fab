"""`medheb download` and `allow_download` against local servers only (tests/hubserver.py): a Zenodo-style file
server through pooch, and the Hugging Face Hub's routes through huggingface_hub (HF_ENDPOINT). Only needed
files are fetched, hashes are checked, a dropped transfer resumes, a bad hash places nothing, a gated dataset's
401 names the page to accept, and a second run fetches nothing."""

from __future__ import annotations

import hashlib

import pytest
import yaml
from hubserver import Site, serve

from conftest import demo_config_file
from preprocess.checks.fetch import fetch_url
from preprocess.checks.rawcheck import check_all
from preprocess.cli import main
from preprocess.errors import RawDataError
from preprocess.registry.config import settings_from_dict
from preprocess.registry.loader import load_registry

PAYLOAD = bytes(range(256)) * 4096  # 1 MiB
MD5 = hashlib.md5(PAYLOAD).hexdigest()


def test_a_dropped_transfer_resumes_on_the_next_run(tmp_path):
    site = Site(files={"bloodmnist.npz": PAYLOAD}, drop_after={"bloodmnist.npz": 300_000})
    target = tmp_path / "MedMNIST" / "bloodmnist.npz"
    part = target.with_name("bloodmnist.npz.part")
    with serve(site) as url:
        with pytest.raises(RawDataError, match=r"stopped .* run again to resume after \d+ bytes") as stopped:
            fetch_url(f"{url}/bloodmnist.npz", target, MD5, retries=0, timeout=5)
        kept = part.stat().st_size
        assert not target.exists() and 0 < kept <= 300_000 and f"after {kept} bytes" in str(stopped.value)
        assert part.read_bytes() == PAYLOAD[:kept]
        assert fetch_url(f"{url}/bloodmnist.npz", target, MD5, retries=0, timeout=5)
    assert target.read_bytes() == PAYLOAD
    assert site.gets == [("bloodmnist.npz", None), ("bloodmnist.npz", f"bytes={kept}-")]
    assert sorted(p.name for p in target.parent.iterdir()) == ["bloodmnist.npz"]


def test_a_retry_within_one_run_resumes_too(tmp_path):
    site = Site(files={"x.npz": PAYLOAD}, drop_after={"x.npz": 500_000})
    target = tmp_path / "x.npz"
    with serve(site) as url:
        fetch_url(f"{url}/x.npz", target, MD5, retries=1, timeout=5)
    assert target.read_bytes() == PAYLOAD and len(site.gets) == 2 and site.gets[1][1].startswith("bytes=")


def test_a_wrong_md5_is_refused_and_nothing_is_placed(tmp_path):
    target = tmp_path / "MedMNIST" / "bloodmnist.npz"
    refused = pytest.raises(RawDataError, match=r"does not have md5 0{32}.*nothing was placed")
    with serve(Site(files={"x": PAYLOAD})) as url, refused:
        fetch_url(f"{url}/x", target, "0" * 32, retries=0, timeout=5)
    assert list(target.parent.iterdir()) == []


def _medmnist_overrides(tmp_path, url: str) -> str:
    """MedMNIST with two files served here (paths without the size suffix)."""
    files = [{"id": f.id, "path": list(f.paths)} for f in load_registry().source("medmnist").files]
    served = {
        flag: {"id": flag, "path": f"{flag}.npz", "md5": MD5, "url": f"{url}/{flag}.npz"}
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


def test_hub_download_fetches_only_the_needed_files_verified_and_once(hub, demo, tmp_path, capsys, monkeypatch):
    site, files = hub
    config, target = _empty_raw_config(demo, tmp_path)
    # a dropped transfer: huggingface_hub resumes from its last whole chunk (10 MiB upstream; 1 KiB here, for
    # the demo's small volumes)
    monkeypatch.setattr("huggingface_hub.constants.DOWNLOAD_CHUNK_SIZE", 1024)
    site.drop_after[f"{CT_RATE}/{NEEDED[1]}"] = 5000
    assert main(["download", "ct_rate", "--config", str(config)]) == 0, capsys.readouterr().err
    fetched = sorted({name.removeprefix(f"{CT_RATE}/") for name, _ in site.gets})
    assert fetched == NEEDED and len(files) > len(NEEDED)  # the _2 reconstructions and the train split stay
    asked = [ranges for name, ranges in site.gets if name == f"{CT_RATE}/{NEEDED[1]}"]
    assert asked == [None, "bytes=4096-"]
    held = {p.relative_to(target).as_posix(): p.read_bytes() for p in target.rglob("*") if p.is_file()}
    assert held == {name: files[name] for name in NEEDED}  # nothing else: the staging folder is gone
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
    from preprocess.checks.fetch import commands

    registry = load_registry()
    assert commands(registry.source("vindr_cxr"), "/r", "v.txt", "my.yaml") == [
        "medheb need vindr_cxr --urls --config my.yaml > v.txt",
        "wget -N -c -x -nH --cut-dirs=3 --user <your PhysioNet user> --ask-password -i v.txt -P '/r/vindr-cxr'",
    ]
    (competition,) = commands(registry.source("aptos2019"), "/r", "a.txt")
    assert competition.startswith("kaggle competitions download -c aptos2019-blindness-detection -p '/r/")
    (dataset,) = commands(registry.source("brain_tumor_mri"), "/r", "b.txt")
    assert dataset.startswith("kaggle datasets download -d masoudnickparvar/brain-tumor-mri-dataset -p '/r/")
